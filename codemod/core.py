"""The per-file core: source bytes in, rewritten bytes and findings out. No file I/O here."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import libcst as cst

from ._tree import Tree
from .findings import Finding
from .fixers import FIXERS, FixContext, imports
from .plan import apply_plan
from .recognise import find_sites

__all__ = ["TransformResult", "transform_module", "transform_source"]


@dataclass
class TransformResult:
    """What the codemod made of one file. `failed` files are never written."""

    source: bytes
    output: bytes
    findings: list[Finding] = field(default_factory=list)
    failed: bool = False

    @property
    def changed(self) -> bool:
        return not self.failed and self.output != self.source


def transform_module(module: cst.Module, path: str = "<string>") -> tuple[cst.Module, list[Finding]]:
    """Runs every fixer over a parsed module; returns the new module and the findings."""
    tree = Tree(module)
    sites, helpers = find_sites(tree)
    ctx = FixContext(tree, sites, helpers, path)
    for site in sites:
        if site.problem is not None:
            ctx.report(site.call, *site.problem)
    for fixer in FIXERS:
        fixer(ctx)
    if not ctx.plan.regions:  # nothing uses TensorFlow then
        ctx.plan.add_imports = [i for i in ctx.plan.add_imports if i[0] != "tensorflow"]
    if ctx.plan.empty:
        return module, sorted(set(ctx.findings))
    new = apply_plan(module, ctx.plan)
    new = imports.finish(new, ctx.plan)
    return new, sorted(set(ctx.findings))


def transform_source(source: bytes, path: str = "<string>") -> TransformResult:
    """Rewrites one Python file's bytes. Never raises for bad input: failures become findings."""
    try:
        ast.parse(source)
        module = cst.parse_module(source)
    except (SyntaxError, ValueError, cst.ParserSyntaxError) as error:
        line, col = _error_position(error)
        message = (
            f"not valid Python 3 ({_first_line(error)}); left unchanged. If this is Python 2, port it "
            "first (e.g. `python -m lib2to3` / `2to3 -w`), then rerun the codemod."
        )
        return TransformResult(source, source, [Finding(line, col, "MGPU501", message, path)], failed=True)
    try:
        new, findings = transform_module(module, path)
        output = new.bytes
    except Exception as error:  # a bug in a fixer must not cost the user their file
        return TransformResult(source, source, [_internal(path, error)], failed=True)
    if output != source:
        try:
            ast.parse(output)
        except SyntaxError as error:
            return TransformResult(source, source, [_internal(path, error)], failed=True)
    return TransformResult(source, output, findings)


def _internal(path: str, error: BaseException) -> Finding:
    return Finding(
        1, 1, "MGPU502",
        f"the rewrite failed ({type(error).__name__}: {_first_line(error)}); file left unchanged. "
        "Please report this with the file; migrate this file by hand meanwhile.",
        path,
    )


def _first_line(error: BaseException) -> str:
    text = str(getattr(error, "msg", None) or error).strip().splitlines()
    return text[0] if text else type(error).__name__


def _error_position(error: BaseException) -> tuple[int, int]:
    if isinstance(error, cst.ParserSyntaxError):
        return error.raw_line, error.raw_column + 1
    if isinstance(error, SyntaxError):
        return error.lineno or 1, (error.offset or 1)
    return 1, 1
