"""The per-file core: source bytes in, rewritten bytes and findings out. No file I/O here."""

from __future__ import annotations

import ast
import io
import tokenize
import warnings
from dataclasses import dataclass, field

import libcst as cst

from ._tree import Tree
from .findings import Finding
from .fixers import FIXERS, FixContext, imports
from .plan import apply_plan
from .prefilter import may_contain_site
from .recognise import find_sites

__all__ = ["TransformResult", "check_python3", "transform_module", "transform_source", "unparseable"]


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
    new = apply_plan(module, ctx.plan, tree)
    new = imports.finish(new, ctx.plan, tree)
    return new, sorted(set(ctx.findings))


def transform_source(source: bytes, path: str = "<string>", *, prefilter: bool = True) -> TransformResult:
    """Rewrites one Python file's bytes. Never raises for bad input: failures become findings.

    Every file is checked to be valid Python 3 (decoding with its PEP 263 encoding, then `ast`);
    only files that may contain a site (see prefilter.py) are then parsed with libcst.
    """
    problem = check_python3(source)
    if problem is not None:
        line, col, reason, advice = problem
        return TransformResult(source, source, [unparseable(path, line, col, reason, advice)], failed=True)
    if prefilter and not may_contain_site(source):
        return TransformResult(source, source, [])
    try:
        module = cst.parse_module(source)
    except (SyntaxError, ValueError, cst.ParserSyntaxError) as error:  # valid for ast, not for libcst
        line, col = _error_position(error)
        return TransformResult(source, source, [unparseable(
            path, line, col, f"libcst cannot parse it ({_first_line(error)})",
            "Please report this with the file; migrate this file by hand meanwhile.",
        )], failed=True)
    roundtrip = module.bytes
    # libcst 1.9 drops the final line end of a CR-only file; anything else not round-tripping
    # byte for byte is refused rather than risked.
    lost_final_cr = roundtrip != source and source.endswith(b"\r") and roundtrip + b"\r" == source
    if roundtrip != source and not lost_final_cr:
        return TransformResult(source, source, [_internal(path, ValueError("libcst does not reproduce this file byte for byte"))], failed=True)
    try:
        new, findings = transform_module(module, path)
        output = new.bytes
        if lost_final_cr and not output.endswith(b"\r"):
            output += b"\r"
    except Exception as error:  # a bug in a fixer must not cost the user their file
        return TransformResult(source, source, [_internal(path, error)], failed=True)
    if output != source:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ast.parse(output)
        except (SyntaxError, ValueError) as error:
            return TransformResult(source, source, [_internal(path, error)], failed=True)
    return TransformResult(source, output, findings)


_PY2_HINTS = (
    "Missing parentheses in call to",
    "multiple exception types must be parenthesized",
    "leading zeros in decimal integer literals",
    "invalid decimal literal",
)


def check_python3(source: bytes) -> tuple[int, int, str, str] | None:
    """None for a valid Python 3 file, else (line, col, reason, what to do)."""
    if b"\0" in source:
        line = source.count(b"\n", 0, source.index(b"\0")) + 1
        return line, 1, "null bytes (a binary or UTF-16 file?)", (
            "If this is not Python source, rename it or exclude it from the paths given; "
            "if it is UTF-16, re-save it as UTF-8."
        )
    encoding, bad = "utf-8", None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        text = source.decode(encoding)
    except SyntaxError as error:  # unknown or conflicting cookie, or bad UTF-8 in the first two lines
        try:
            source.decode("utf-8-sig")
        except UnicodeDecodeError as decode_error:
            bad = decode_error
        else:
            return 1, 1, _first_line(error), "Fix the `# -*- coding: ... -*-` line, then rerun the codemod."
    except UnicodeDecodeError as decode_error:
        bad = decode_error
    if bad is not None:
        line = source.count(b"\n", 0, bad.start) + 1
        return line, 1, f"byte 0x{source[bad.start]:02x} is not valid {encoding}", (
            "Declare the file's encoding on its first or second line (`# -*- coding: latin-1 -*-`) "
            "or re-save it as UTF-8, then rerun the codemod."
        )
    try:
        with warnings.catch_warnings():  # SyntaxWarnings about the user's code are not ours to print
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError) as error:
        line, col = _error_position(error)
        reason = _first_line(error)
        if any(hint in reason for hint in _PY2_HINTS) or "print " in _line(text, line):
            advice = "This looks like Python 2: port it first (e.g. `2to3 -w FILE`), then rerun the codemod."
        else:
            advice = "Fix the syntax error (or port the file to Python 3), then rerun the codemod."
        return line, col, reason, advice
    return None


def unparseable(path: str, line: int, col: int, reason: str, advice: str, cell: int | None = None) -> Finding:
    """MGPU501, printed as `path: cannot parse as Python 3: <reason> (line L, col C); ... [MGPU501]`."""
    message = f"cannot parse as Python 3: {reason} (line {line}, col {col}); left unchanged. {advice}"
    return Finding(line, col, "MGPU501", message, path, cell)


def _line(text: str, line: int) -> str:
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else ""


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
