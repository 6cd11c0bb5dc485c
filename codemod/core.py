"""The per-file core: source bytes in, rewritten bytes and findings out. No file I/O here."""

from __future__ import annotations

import ast
import io
import os
import re
import symtable
import tokenize
import warnings
from dataclasses import dataclass, field

import libcst as cst

from ._tree import Tree, zip_equal
from .findings import Finding
from .fix_context import FixContext
from .fixers import FIXERS, STRATEGIES, imports
from .isolation import out_of_memory, too_deep
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


def transform_module(module: cst.Module, path: str = "<string>", keep: list[bool] | None = None,
                     *, strategy: str = "mirrored") -> tuple[cst.Module, list[Finding]]:
    """Runs every fixer over a parsed module; returns the new module and the findings.

    `keep` (one flag per top-level statement, see `relevant_statements`) limits the scope
    analysis to the statements that can matter; None analyses everything. `strategy`:
    "mirrored" (MirroredStrategy) or "multi-worker" (fixers/multi_worker.py)."""
    _check_strategy(strategy)
    tree = Tree(module, keep)
    sites, helpers = find_sites(tree)
    ctx = FixContext(tree, sites, helpers, path, strategy)
    for site in sites:
        if site.problem is not None:
            ctx.report(site.call, *site.problem)
    for fixer in FIXERS:
        fixer(ctx)
    if not (ctx.plan.regions or ctx.plan.nodes or ctx.plan.statements):  # nothing uses TensorFlow then
        ctx.plan.add_imports = [i for i in ctx.plan.add_imports if i[0] != "tensorflow"]
    if ctx.plan.empty:
        return module, sorted(set(ctx.findings))
    new = apply_plan(module, ctx.plan, tree)
    new = imports.finish(new, ctx.plan, tree)
    for finish in ctx.finishers:
        new = finish(new)
    return new, sorted(set(ctx.findings))


def _check_strategy(strategy: str) -> None:
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, not {strategy!r}")


def transform_source(source: bytes, path: str = "<string>", *, prefilter: bool = True,
                     strategy: str = "mirrored") -> TransformResult:
    """Rewrites one Python file's bytes. Never raises for bad input: failures become findings.

    Every file is checked to be valid Python 3 (decoding with its PEP 263 encoding, then `ast`);
    only files that may contain a site (see prefilter.py) are then parsed with libcst.
    `strategy="multi-worker"` emits MultiWorkerMirroredStrategy code (fixers/multi_worker.py).
    """
    _check_strategy(strategy)
    try:
        problem, checked = _check(source)
    except (RecursionError, MemoryError) as error:  # CPython's parser gives up on very deep nesting
        if prefilter and not may_contain_site(source):
            return TransformResult(source, source, [])  # cannot hold a site: nothing to check further
        return TransformResult(source, source, [too_deep(path, f"Python's parser: {type(error).__name__}")], failed=True)
    if problem is not None:
        line, col, reason, advice = problem
        return TransformResult(source, source, [unparseable(path, line, col, reason, advice)], failed=True)
    if prefilter and not may_contain_site(source):
        return TransformResult(source, source, [])
    try:
        return _rewrite(source, path, strategy, checked)
    except RecursionError:  # deep nesting: libcst's parser, code generation and visitors recurse per level
        return TransformResult(source, source, [too_deep(path, "RecursionError while parsing or rewriting")], failed=True)
    except MemoryError:
        return TransformResult(source, source, [out_of_memory(path)], failed=True)


def _rewrite(source: bytes, path: str, strategy: str, checked: tuple[ast.Module, str] | None) -> TransformResult:
    """transform_source on a valid Python 3 file that may hold a site: libcst's part."""
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
        # --strategy multi-worker reports saves in every function (MGPU702): it needs them all.
        reduce = checked is not None and _REDUCE and strategy == "mirrored"
        keep = relevant_statements(module, *checked) if reduce else None
        new, findings = transform_module(module, path, keep, strategy=strategy)
        output = new.bytes
        if lost_final_cr and not output.endswith(b"\r"):
            output += b"\r"
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
    return TransformResult(source, output, findings)


_PY2_HINTS = (
    "Missing parentheses in call to",
    "multiple exception types must be parenthesized",
    "leading zeros in decimal integer literals",
    "invalid decimal literal",
)
# Python 2 statements Python 3.9's parser reports as a bare "invalid syntax".
_PY2_STATEMENT = re.compile(r"\s*(print\s|exec\s|except\s+[\w.]+\s*,\s*\w+\s*:|raise\s+[\w.]+\s*,)")


def check_python3(source: bytes) -> tuple[int, int, str, str] | None:
    """None for a valid Python 3 file, else (line, col, reason, what to do)."""
    return _check(source)[0]


def _check(source: bytes) -> tuple[tuple[int, int, str, str] | None, tuple[ast.Module, str] | None]:
    """check_python3's answer, plus the `ast` tree and decoded text of a valid file."""
    if b"\0" in source:
        line = source.count(b"\n", 0, source.index(b"\0")) + 1
        return (line, 1, "null bytes (a binary or UTF-16 file?)", (
            "If this is not Python source, rename it or exclude it from the paths given; "
            "if it is UTF-16, re-save it as UTF-8."
        )), None
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
            return (1, 1, _first_line(error), "Fix the `# -*- coding: ... -*-` line, then rerun the codemod."), None
    except UnicodeDecodeError as decode_error:
        bad = decode_error
    except LookupError:  # a codec that is not a text encoding: rot13, hex, base64...
        return (1, 1, f"the coding cookie names `{encoding}`, which is not a text encoding", (
            "Declare a text encoding (`# -*- coding: utf-8 -*-`) or decode the file first, then rerun the codemod."
        )), None
    if bad is not None:
        line = source.count(b"\n", 0, bad.start) + 1
        return (line, 1, f"byte 0x{source[bad.start]:02x} is not valid {encoding}", (
            "Declare the file's encoding on its first or second line (`# -*- coding: latin-1 -*-`) "
            "or re-save it as UTF-8, then rerun the codemod."
        )), None
    try:
        with warnings.catch_warnings():  # SyntaxWarnings about the user's code are not ours to print
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError) as error:
        line, col = _error_position(error)
        reason = _first_line(error)
        statement = _line(text, line)
        if any(hint in reason for hint in _PY2_HINTS) or _PY2_STATEMENT.match(statement):
            advice = "This looks like Python 2: port it first (e.g. `2to3 -w FILE`), then rerun the codemod."
            # The whole statement is Python 2; parsers differ on the column inside it.
            col = len(statement) - len(statement.lstrip()) + 1
        else:
            advice = "Fix the syntax error (or port the file to Python 3), then rerun the codemod."
        return (line, col, reason, advice), None
    return None, (tree, text)


_REDUCE = os.environ.get("MULTI_GPU_CODEMOD_FULL_SCOPES") != "1"  # "1": analyse every statement (A/B checks)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ALWAYS = frozenset({"tf", "tensorflow", "strategy", "mirrored_strategy", "distribute_strategy", "global", "nonlocal"})


def _module_level_reads(segment: str) -> set[str] | None:
    """Names a top-level def/class reads from module scope (symtable), None if it can't tell.

    Its decorators, defaults, annotations and bases are read at module level; inside it, only
    names that resolve to globals. A loop variable `x` in a function is its own local and says
    nothing about a module-level `x`.
    """
    try:
        top = symtable.symtable(segment, "<def>", "exec")
    except (SyntaxError, ValueError):
        return None
    names: set[str] = set()
    tables = [top]
    while tables:
        table = tables.pop()
        for symbol in table.get_symbols():
            if symbol.is_referenced() and (table is top or symbol.is_global()):
                names.add(symbol.get_name())
        tables.extend(table.get_children())
    return names


def relevant_statements(module: cst.Module, tree: ast.Module, text: str) -> list[bool] | None:
    """Which top-level statements the scope analysis must see (a flag per `module.body` item).

    Every statement but a def/class is kept. A def/class is kept when its text holds a
    prefilter marker, `global`/`nonlocal`, a name the codemod may choose (`tf`, `strategy`...),
    a name it reads from module scope that a kept statement binds, or when a kept statement mentions its
    name; repeated until nothing changes. A def/class left out reads no name the kept code
    binds and binds none it reads, so it cannot change any answer about the kept code; it is
    still in the module, untouched. None when the ast and libcst statements do not line up.
    """
    items: list[list[ast.stmt]] = []
    statements = iter(tree.body)
    try:
        for statement in module.body:
            count = len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
            items.append([next(statements) for _ in range(count)])
    except StopIteration:
        return None
    if next(statements, None) is not None:
        return None
    lines = text.splitlines(keepends=True)
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    keep = [not (len(group) == 1 and isinstance(group[0], defs)) for group in items]
    if all(keep):
        return None
    words: list[set[str]] = []
    for group, kept in zip_equal(items, keep):
        if kept:
            words.append(set())
            continue
        node = group[0]
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        segment = "".join(lines[first - 1:node.end_lineno])
        names = set(_IDENT.findall(segment))
        if _ALWAYS & names or may_contain_site(segment.encode("utf-8", "surrogatepass")):
            keep[len(words)] = True
        reads = _module_level_reads(segment)
        words.append(names if reads is None else reads)
    bound: set[str] = set()
    mentioned: set[str] = set()
    seen: set[int] = set()
    changed = True
    while changed:
        changed = False
        for index, (group, kept) in enumerate(zip_equal(items, keep)):
            if not kept or index in seen:
                continue
            seen.add(index)
            for node in group:
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Name):
                        mentioned.add(sub.id)
                        if isinstance(sub.ctx, (ast.Store, ast.Del)):
                            bound.add(sub.id)
                    elif isinstance(sub, ast.alias):
                        bound.add((sub.asname or sub.name).split(".")[0])
                    elif isinstance(sub, (*defs,)):
                        bound.add(sub.name)
                        mentioned.add(sub.name)
                    elif isinstance(sub, ast.Attribute):
                        mentioned.add(sub.attr)
        for index, group in enumerate(items):
            if not keep[index] and (group[0].name in mentioned or words[index] & bound):  # type: ignore[attr-defined]
                keep[index] = True
                changed = True
    return keep


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
