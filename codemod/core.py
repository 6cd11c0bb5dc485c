"""The per-file core: source bytes in, rewritten bytes and findings out. No file I/O here."""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass, field

import libcst as cst

from . import (
    commented_calls, exported_cells, guard_choice, loop_strategy, one_line_guards, optional_templates, orphan_banners,
    pair_returns, pruning, settled_branches, stale_prose, template_aliases, template_names, unread_counts, wide_lines,
)
from ._tree import Tree, clear_caches
from .continuations import Continuations
from .findings import Finding
from .fix_context import FixContext
from .fixers import FIXERS, STRATEGIES, imports
from .isolation import out_of_memory, too_deep
from .plan import apply_plan
from .prefilter import may_contain_site
from .python3_check import error_position, first_line, parse_python3, unparseable
from .recognise import find_sites
from .sites import SiteStatus, site_statuses

__all__ = ["TransformResult", "transform_module", "transform_module_sites", "transform_source"]


@dataclass
class TransformResult:
    """What the codemod made of one file. `failed` files are never written."""

    source: bytes
    output: bytes
    findings: list[Finding] = field(default_factory=list)
    failed: bool = False
    # Per call site: rewritten / reported / untouched, with its line (sites.py formats them).
    sites: list[SiteStatus] = field(default_factory=list)
    # The template's names the one model no longer has (`serial` -> `model`): the same object,
    # so what a notebook cell printed through it still holds.
    renamed: tuple[tuple[str, str], ...] = ()

    @property
    def changed(self) -> bool:
        return not self.failed and self.output != self.source


def transform_module(module: cst.Module, path: str = "<string>", keep: list[bool] | None = None,
                     *, strategy: str = "mirrored") -> tuple[cst.Module, list[Finding]]:
    """Runs every fixer over a parsed module; returns the new module and the findings.

    `keep` (one flag per top-level statement, see `pruning.relevant_statements`) limits the scope
    analysis to the statements that can matter; None analyses everything. `strategy`:
    "mirrored" (MirroredStrategy) or "multi-worker" (fixers/multi_worker.py)."""
    new, findings, _, _ = transform_module_sites(module, path, keep, strategy=strategy)
    return new, findings


def transform_module_sites(
    module: cst.Module, path: str = "<string>", keep: list[bool] | None = None, *, strategy: str = "mirrored",
    source: str | None = None,
) -> tuple[cst.Module, list[Finding], list[SiteStatus], tuple[tuple[str, str], ...]]:
    """`transform_module`, plus what became of each call site (sites.py) and the template names
    renamed (template_names.py); `source`, the module's text when the caller has it, saves
    resolving positions in files without findings."""
    try:
        return _transform_module_sites(module, path, keep, strategy, source)
    finally:
        clear_caches()


def _transform_module_sites(
    module: cst.Module, path: str, keep: list[bool] | None, strategy: str, source: str | None
) -> tuple[cst.Module, list[Finding], list[SiteStatus], tuple[tuple[str, str], ...]]:
    _check_strategy(strategy)
    tree = Tree(module, keep)
    sites, helpers = find_sites(tree)
    ctx = FixContext(tree, sites, helpers, path, strategy)
    for site in sites:
        if site.problem is not None:
            ctx.report(site.call, *site.problem, site=site)
    for fixer in FIXERS:
        fixer(ctx)
    if not (ctx.plan.regions or ctx.plan.nodes or ctx.plan.statements):  # nothing uses TensorFlow then
        ctx.plan.add_imports = [i for i in ctx.plan.add_imports if i[0] != "tensorflow"]
    if ctx.plan.empty:
        statuses = site_statuses(ctx, source)
        found = ctx.findings + ([] if statuses else _prose_left_by_a_migration(module, source, path))
        return module, sorted(set(found)), statuses, ()
    continued = Continuations(tree, source)
    new = apply_plan(module, ctx.plan, tree, continued)
    new = imports.finish(new, ctx.plan, tree)
    for finish in ctx.finishers:
        new = finish(new)
    new = continued.follow(new)
    new = guard_choice.fold(new)
    new = loop_strategy.hoisted(new, {region.name for region in ctx.plan.regions})
    rebound = {  # the templates whose name the wrap took
        tree.code(s.template) for s in ctx.rewritten
        if isinstance(s.template, cst.Name) and isinstance(s.target, cst.Name) and s.template.value == s.target.value
    }
    new = template_aliases.without_aliases(new, module, rebound)
    new = optional_templates.without_optional_templates(new, module, rebound)
    new, singles = pair_returns.single_returns(module, new)
    new = unread_counts.without_unread_counts(module, new)
    statuses = site_statuses(ctx, source)
    findings = list(ctx.findings)
    if pair_returns.importable(module):
        findings += [_single_return_finding(tree, single, path) for single in singles]
    renamed: tuple[tuple[str, str], ...] = ()
    if ctx.rewritten:  # prose elsewhere in the file that still describes the removed helper
        pairs = [
            (tree.code(s.template), tree.code(s.target)) for s in ctx.rewritten
            if isinstance(s.template, cst.Name) and isinstance(s.target, cst.Name)
        ]
        pairs += [pair for single in singles for pair in single.callers]  # `template = create_models(...)`
        new, renamed = template_names.plain_names(new, module, pairs)  # (its comments renamed first)
        new = commented_calls.renamed(new, pairs, renamed)  # (`# parallel.fit(x, y)` reads as the live call)
        prose = stale_prose.Prose.between(
            module.code, new.code, mechanics_gone=all(s.status == "rewritten" for s in statuses)
        )
        # (a `Returns:` section listing the pair says the one model first: the rest is then read alone)
        new = pair_returns.described(new, singles)
        new, reported = stale_prose.drop_stale(new, prose)
        new = pair_returns.described(new, singles)  # (a builder whose docstring went says what it returns)
        new = settled_branches.settled(module, new)
        findings += stale_prose.findings(source if source is not None else module.code, reported, path)
    elif not statuses:
        findings += _prose_left_by_a_migration(module, source, path)
    new = orphan_banners.without_orphan_closers(module, new)
    new = wide_lines.wrapped(module, new)
    return new, sorted(set(findings)), statuses, renamed


def _prose_left_by_a_migration(module: cst.Module, source: str | None, path: str) -> list[Finding]:
    """MGPU305 again on a second run over a migrated file (it builds a `MirroredStrategy`, calls no
    helper, and its prose still names one), changing nothing: what the first run reported."""
    code = module.code
    removed = stale_prose.helpers_left(code, code)
    if not removed:
        return []
    _, reported = stale_prose.drop_stale(module, stale_prose.Prose(removed, mechanics_gone=False))
    return stale_prose.findings(source if source is not None else code, reported, path)


def _single_return_finding(tree: Tree, single: pair_returns.SingleReturn, path: str) -> Finding:
    name, (first, second) = single.function.name.value, single.returned
    line, col = tree.position(single.function)
    return Finding(line, col, "MGPU406", (
        f"`{name}()` now returns one model, not the pair `({first}, {second})`: this file's calls are "
        f"updated; a file that imports `{name}` and unpacks two values needs one name, `model = {name}(...)`, "
        f"read where it read `{first}` or `{second}`."
    ), path)


def _check_strategy(strategy: str) -> None:
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, not {strategy!r}")


def transform_source(source: bytes, path: str = "<string>", *, prefilter: bool = True,
                     strategy: str = "mirrored") -> TransformResult:
    """Rewrites one Python file's bytes. Never raises for bad input: failures become findings.

    Every file is checked to be valid Python 3 (decoded as its coding cookie says, then `ast`);
    only files that may contain a site (see prefilter.py) are then parsed with libcst.
    `strategy="multi-worker"` emits MultiWorkerMirroredStrategy code (fixers/multi_worker.py).
    """
    _check_strategy(strategy)
    try:
        problem, checked = parse_python3(source)
    except (RecursionError, MemoryError) as error:  # CPython's parser gives up on very deep nesting
        if prefilter and not may_contain_site(source):
            return TransformResult(source, source, [])  # cannot hold a site: nothing to check further
        finding = too_deep(path, f"Python's parser: {type(error).__name__}")
        return TransformResult(source, source, [finding], failed=True)
    if problem is not None:
        line, col, reason, advice = problem
        return TransformResult(source, source, [unparseable(path, line, col, reason, advice)], failed=True)
    if prefilter and not may_contain_site(source):
        return TransformResult(source, source, [])
    try:
        return _rewrite(source, path, strategy, checked)
    except RecursionError:  # deep nesting: libcst's parser, code generation and visitors recurse per level
        finding = too_deep(path, "RecursionError while parsing or rewriting")
        return TransformResult(source, source, [finding], failed=True)
    except MemoryError:
        return TransformResult(source, source, [out_of_memory(path)], failed=True)


def _rewrite(source: bytes, path: str, strategy: str, checked: tuple[ast.Module, str] | None) -> TransformResult:
    """transform_source on a valid Python 3 file that may hold a site: libcst's part, run again on the
    file with its one-line guards split when that rewrites a site reported the first time."""
    result = _rewrite_once(source, path, strategy, checked)
    lines = one_line_guards.lines_to_split(result.findings)
    if not lines or result.failed:
        return result
    module, splits = one_line_guards.split(cst.parse_module(source), lines)
    if not splits:
        return result
    split_source = module.bytes
    problem, split_checked = parse_python3(split_source)
    if problem is not None:
        return result
    retry = _rewrite_once(split_source, path, strategy, split_checked)
    if retry.failed:
        return result
    findings, sites = one_line_guards.moved_back(retry.findings, retry.sites, splits)
    rewritten = sum(s.status == "rewritten" for s in result.sites)
    if sum(s.status == "rewritten" for s in retry.sites) > rewritten:
        return TransformResult(source, retry.output, findings, sites=sites, renamed=retry.renamed)
    # Still reported once split: the file as it was, with the reason that holds after the split.
    findings, sites = one_line_guards.reasons(result.findings, result.sites, findings, sites, lines)
    return TransformResult(source, result.output, findings, sites=sites, renamed=result.renamed)


def _rewrite_once(source: bytes, path: str, strategy: str, checked: tuple[ast.Module, str] | None
                  ) -> TransformResult:
    try:
        module = cst.parse_module(source)
    except (SyntaxError, ValueError, cst.ParserSyntaxError) as error:  # valid for ast, not for libcst
        line, col = error_position(error)
        return TransformResult(source, source, [unparseable(
            path, line, col, f"libcst cannot parse it ({first_line(error)})",
            "Please report this with the file; migrate this file by hand meanwhile.",
        )], failed=True)
    roundtrip = module.bytes
    # libcst 1.9 drops the final line end of a CR-only file; anything else not round-tripping
    # byte for byte is refused rather than risked.
    lost_final_cr = roundtrip != source and source.endswith(b"\r") and roundtrip + b"\r" == source
    if roundtrip != source and not lost_final_cr:
        finding = _internal(path, ValueError("libcst does not reproduce this file byte for byte"))
        return TransformResult(source, source, [finding], failed=True)
    try:
        # --strategy multi-worker reports saves in every function (MGPU702): it needs them all.
        keep = None
        if checked is not None and pruning.ENABLED and strategy == "mirrored":
            keep = pruning.relevant_statements(module, *checked)
        text = checked[1] if checked is not None else None
        new, findings, sites, renamed = transform_module_sites(module, path, keep, strategy=strategy, source=text)
        output = new.bytes
        if lost_final_cr and not output.endswith(b"\r"):
            output += b"\r"
        # (a notebook's own cells are kept by notebook.py: its joined module may quote markers)
        if output != source and text is not None and not path.endswith(".ipynb") and exported_cells.is_export(text):
            output = _export_cells_kept(source, output)
        if output != source and text is not None:
            findings = _prose_located(findings, text, output)
    except (RecursionError, MemoryError):
        raise
    except Exception as error:  # a bug in a fixer must not cost the user their file
        return TransformResult(source, source, [_internal(path, error)], failed=True)
    if output != source:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ast.parse(output)
        except (SyntaxError, ValueError) as error:
            return TransformResult(source, source, [_internal(path, error)], failed=True)
    return TransformResult(source, output, findings, sites=sites, renamed=renamed)


def _prose_located(findings: list[Finding], text: str, output: bytes) -> list[Finding]:
    """MGPU305 findings also giving their text's line in the migrated file (UTF-8 files)."""
    try:
        written = output.decode("utf-8")
    except UnicodeDecodeError:
        return findings
    return stale_prose.located_in_output(findings, text, written)


def _export_cells_kept(source: bytes, output: bytes) -> bytes:
    """A notebook saved as a script (exported_cells.py); UTF-8 files only, others as rewritten."""
    try:
        original, rewritten = source.decode("utf-8"), output.decode("utf-8")
    except UnicodeDecodeError:
        return output
    kept = exported_cells.cells_kept(original, rewritten)
    return exported_cells.without_emptied_markdown(original, kept).encode("utf-8")


def _internal(path: str, error: BaseException) -> Finding:
    return Finding(
        1, 1, "MGPU502",
        f"the rewrite failed ({type(error).__name__}: {first_line(error)}); file left unchanged. "
        "Please report this with the file; migrate this file by hand meanwhile.",
        path,
    )
