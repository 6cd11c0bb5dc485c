"""Jupyter notebooks: the code cells, rewritten as one module, spliced back into the JSON text.

- All code cells are joined into one module (a strategy made in cell 2 serves cell 5), with a
  boundary statement between cells; the rewrite may add lines to any cell.
- IPython syntax (`%matplotlib inline`, `!nvidia-smi`, `x = !ls`, `obj?`, a `%%time` header) is
  masked to placeholder statements before parsing and restored afterwards. Cells whose cell
  magic runs something other than Python (`%%bash`, `%%writefile`...) are left out entirely.
- The JSON text is never re-serialised: only the `source` value of edited cells is replaced,
  written in the same shape (list of lines or one string), indentation and escaping as before.
  Outputs, metadata, key order and the trailing newline are untouched.
- A `with strategy.scope():` that the rewrite extends over a cell boundary is reopened at the
  top of the later cell (each cell must compile on its own), which is the house style there.
- A code cell the rewrite leaves without code (it held only the call) is cut out of the JSON
  text, unless a finding names a later cell (the numbers findings give would shift).
"""

from __future__ import annotations

import ast
import dataclasses
import io
import json
import keyword
import re
import tokenize
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from . import stale_prose
from .cell_scopes import (
    PLACEHOLDER_PREFIX, cell_comments_first, display_last_expression, drop_empty_reopen, drop_needless_reopen, reopen,
)
from .core import TransformResult, transform_source
from .findings import Finding
from .isolation import too_deep
from .prefilter import may_contain_site
from .sites import SiteStatus
from .python3_check import needs_newer_python, newer_python_advice, unparseable

__all__ = ["transform_notebook"]

_PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun", "debug", "python", "python3", "tensorflow_version"}
_BOUNDARY = PLACEHOLDER_PREFIX + "cell_boundary__"
_MAGIC = PLACEHOLDER_PREFIX + "magic_{}__"
_MAGIC_LINE = re.compile(r"^(?P<indent>[ \t]*)(?P<body>(?:[%!].*|\w+\s*=\s*[%!].*|[\w.]+\?{1,2}|\?{1,2}[\w.]+))$")
_RESTORE = re.compile(r"__multi_gpu_codemod_magic_(\d+)__(?:\((?P<names>[^()]*)\))?")
_BOM = b"\xef\xbb\xbf"
_BOUNDARY_LINE = re.compile(r"^(?P<indent>[ \t]*)" + _BOUNDARY + r"\((?P<cell>\d+)\)[ \t]*$")


@dataclass
class _Cell:
    index: int  # 0-based position among all cells
    span: tuple[int, int]  # of the JSON value of "source"
    raw: str  # that JSON value as written
    value: list[str] | str
    text: str  # the source joined into one string
    masked: list[str]  # masked lines (no line ends)
    magics: dict[int, str]  # placeholder id -> original body
    header: str | None  # a Python cell magic line (`%%time`), kept out of the module
    outputs: tuple[int, int] | None = None  # spans of the JSON values of "outputs"
    count: tuple[int, int] | None = None  # and of "execution_count"
    whole: tuple[int, int] | None = None  # the cell with one separating comma: what removing it cuts


def transform_notebook(data: bytes, path: str = "<notebook>") -> TransformResult:
    """Rewrites a notebook's code cells; findings carry `cell` (1-based) and the line in that cell."""
    problem = _notebook_problem(data, path)
    if problem is not None:
        return TransformResult(data, data, [problem], failed=True)
    if not may_contain_site(data):
        return TransformResult(data, data, [])
    try:
        text = data.decode("utf-8-sig" if data.startswith(_BOM) else "utf-8")
        cells = _code_cells(text)
    except (ValueError, UnicodeDecodeError, KeyError, TypeError, AttributeError, IndexError) as error:
        reason = f"not a readable notebook ({str(error).splitlines()[0] if str(error) else type(error).__name__})"
        return TransformResult(data, data, [unparseable(path, 1, 1, reason, _NOT_JSON)], failed=True)
    findings = _cell_syntax_errors(cells, path)
    if findings:
        return TransformResult(data, data, findings, failed=True)

    module, origin = _joined(cells)
    result = transform_source(module.encode("utf-8"), path)
    mapped = [_map(f, origin, path) for f in result.findings]
    sites = [_map_site(s, origin) for s in result.sites]
    if result.failed or not result.changed:
        if not result.failed and not sites:  # a second run reports what the first did in markdown
            mapped += _markdown_left_by_a_migration(text, module, path)
        return TransformResult(data, data, mapped, failed=result.failed, sites=sites)
    try:
        new_sources = _split(result.output.decode("utf-8"), cells)
    except ValueError as error:
        return TransformResult(data, data, [*mapped, Finding(
            1, 1, "MGPU502",
            f"the rewrite could not be split back into cells ({error}); notebook left unchanged. "
            "Please report this with the notebook; migrate it by hand meanwhile.", path,
        )], failed=True)
    # A cell whose only code was the call (or its fallback) is removed; not when a finding names a
    # later cell, whose number would then be off by one.
    prose = stale_prose.Prose.between(  # (a helper named only in markdown, round 54, ar07)
        module, result.output.decode("utf-8"), mechanics_gone=all(s.status == "rewritten" for s in sites),
        elsewhere=text,
    )
    # (a code cell the rewrite emptied no longer follows the heading above it: round 64, bl11's
    # "## Replicate on the GPUs" over the cell that only wrapped the model)
    emptied = frozenset(c.index for c in cells if c.text.strip() and not new_sources[c.index].strip())
    markdown_edits, markdown_findings = _markdown_prose(text, prose, path, emptied)
    # (findings on later cells are renumbered below; one on the cell itself keeps it, unless it only
    # says that the helper defined there was deleted)
    named = {f.cell for f in mapped if not (f.code == "MGPU401" and "was deleted" in f.message)}
    removed: list[int] = []
    out = _spliced(text, cells, new_sources, removable=lambda cell: cell.index + 1 not in named,
                   markdown=markdown_edits, removed=removed, renamed=result.renamed)
    # cell numbers as the rewritten notebook shows them, past any cell cut out
    mapped = [_shifted(f, removed) for f in [*mapped, *markdown_findings]]
    sites = [dataclasses.replace(s, cell=(s.cell or 0) - sum(i + 1 < (s.cell or 0) for i in removed))
             if s.cell else s for s in sites]
    output = (_BOM if data.startswith(_BOM) else b"") + out.encode("utf-8")
    json.loads(out)  # the splice keeps valid JSON by construction; make sure
    return TransformResult(data, output, mapped, sites=sites)


def _markdown_left_by_a_migration(text: str, code: str, path: str) -> list[Finding]:
    """MGPU305 on a second run over a migrated notebook (its code builds a `MirroredStrategy` and
    calls no helper) whose markdown still names one: what the first run reported (core.py does
    the same for a `.py` file's comments)."""
    removed = stale_prose.helpers_left(code, text)
    if not removed:
        return []
    return _markdown_prose(text, stale_prose.Prose(removed, mechanics_gone=False), path)[1]


def _cell_syntax_errors(cells: list[_Cell], path: str) -> list[Finding]:
    """MGPU501 for each cell that is not Python 3 on its own (with its magics masked)."""
    findings: list[Finding] = []
    for cell in cells:
        text = "\n".join(cell.masked) + "\n"
        try:
            ast.parse(text)
        except (SyntaxError, ValueError) as error:
            line = (error.lineno or 1) + (cell.header is not None) if isinstance(error, SyntaxError) else 1
            col = (error.offset or 1) if isinstance(error, SyntaxError) else 1
            reason = str(getattr(error, "msg", error))
            advice = "Port the cell to Python 3 (or fix it), then rerun the codemod."
            newer = needs_newer_python(text, error.lineno or 1) if isinstance(error, SyntaxError) else None
            if newer is not None:  # valid Python, only newer than the one running the codemod
                _, reason, advice = newer_python_advice(newer, reason)
            findings.append(unparseable(path, line, col, reason, advice, cell.index + 1))
    return findings


def _joined(cells: list[_Cell]) -> tuple[str, list[tuple[int, int]]]:
    """One module: the cells' masked sources, each after a boundary statement; and for each
    line of it, (cell number, line in that cell)."""
    lines: list[str] = []
    origin: list[tuple[int, int]] = []
    for cell in cells:
        lines.append(f"{_BOUNDARY}({cell.index})")
        origin.append((cell.index + 1, 0))
        for number, line in enumerate(cell.masked, start=1 + (cell.header is not None)):
            lines.append(line)
            origin.append((cell.index + 1, number))
    return "\n".join(lines) + "\n", origin


def _spliced(
    text: str, cells: list[_Cell], new_sources: dict[int, str], removable: Callable[[_Cell], bool] = lambda _: False,
    markdown: list[_Markdown] | None = None, removed: list[int] | None = None,
    renamed: Sequence[tuple[str, str]] = (),
) -> str:
    """The notebook's JSON text with the `source` value of every edited cell replaced, nothing else;
    a `removable` cell the rewrite left without code (it held only the call) is cut out whole;
    `markdown` edits markdown cells' sources (an emptied one is cut out too); `removed` receives
    the indices of the cells cut out; `renamed`, the template's names the one model took over."""
    edits = []
    cut: list[tuple[int, int]] = []
    for cell in cells:
        new_text = new_sources[cell.index]
        emptied = cell.text.strip() and not new_text.strip()
        if emptied and cell.whole is not None and removable(cell) and not any(_overlap(cell.whole, c) for c in cut):
            cut.append(cell.whole)
            edits.append((cell.whole, ""))
            if removed is not None:
                removed.append(cell.index)
            continue
        if new_text != cell.text:
            edits.append((cell.span, _encode_source(cell, new_text)))
            if cell.outputs is not None and text[slice(*cell.outputs)].strip() != "[]" and not _outputs_still_true(
                cell.text, new_text, renamed
            ):
                edits.append((cell.outputs, "[]"))
                if cell.count is not None:
                    edits.append((cell.count, "null"))
    for note in markdown or []:
        if note.whole is not None and not any(_overlap(note.whole, c) for c in cut):
            cut.append(note.whole)
            edits.append((note.whole, ""))
            if removed is not None:
                removed.append(note.index)
        else:
            edits.append((note.span, note.source))
    for (start, end), raw in sorted(edits, reverse=True):
        text = text[:start] + raw + text[end:]
    return text


def _markdown_prose(
    text: str, prose: stale_prose.Prose, path: str, emptied: frozenset[int] = frozenset()
) -> tuple[list[_Markdown], list[Finding]]:
    """Markdown cells: a removed helper named as the tool becomes the strategy, a wholly stale
    sentence goes (stale_prose.py); a line still naming something removed is reported (MGPU305)
    with its cell and line. `emptied`: the code cells the rewrite left without code."""
    edits: list[_Markdown] = []
    found: list[Finding] = []
    top = dict((k, (s, e)) for k, s, e in _object_members(text, _skip_ws(text, 0)))
    items = _array_items(text, top["cells"][0])
    for index, (start, end) in enumerate(items):
        members = {k: (vs, ve) for k, vs, ve in _object_members(text, start)}
        if "source" not in members or json.loads(text[slice(*members["cell_type"])]) != "markdown":
            continue
        raw = text[slice(*members["source"])]
        value = json.loads(raw)
        joined = "".join(value) if isinstance(value, list) else value
        if not isinstance(joined, str):
            continue
        # (the first cell's heading, before any code, is the notebook's title)
        code_follows = index + 1 < len(items) and index + 1 not in emptied and '"code"' in text[slice(*{
            k: (vs, ve) for k, vs, ve in _object_members(text, items[index + 1][0])
        }.get("cell_type", (0, 0)))]
        new, reported = stale_prose.markdown(joined, prose, title=index == 0, code_follows=code_follows)
        for number, line, name in reported:
            finding = stale_prose.findings(line, [(line, name, 0)], path)[0]
            found.append(dataclasses.replace(finding, line=number, cell=index + 1))
        if new != joined:
            cell = _Cell(index, members["source"], raw, value, joined, [], {}, None)
            whole = None
            if len(items) > 1:
                whole = (items[index - 1][1], end) if index else (start, items[1][0])
            edits.append(_Markdown(index, members["source"], _encode_source(cell, new), whole if not new else None))
    return edits, found


@dataclass(frozen=True)
class _Markdown:
    """A markdown cell's new source; `whole` when it was left empty and goes whole."""

    index: int
    span: tuple[int, int]
    source: str
    whole: tuple[int, int] | None


def _overlap(one: tuple[int, int], other: tuple[int, int]) -> bool:
    return one[0] < other[1] and other[0] < one[1]


_ADDED_BY_STRATEGY = re.compile(r"^(with \w+\.scope\(\):|else:|\)|.*\.distribute\..*|.*list_logical_devices.*)$")


def _outputs_still_true(old: str, new: str, renamed: Sequence[tuple[str, str]] = ()) -> bool:
    """The cell runs the same statements as before, only under `with strategy.scope():` (the strategy
    lines and imports added, `multi_gpu_model` imports and `with tf.device(...)` removed), with the
    template under the name the one model took (`serial.evaluate(...)` -> `model.evaluate(...)`:
    the same model): what it printed or showed still holds. Any other rename (the parallel model's
    reads, now the template's), a removed call or any other edit makes its outputs stale."""
    def lines(text: str) -> list[str]:
        return [line.strip() for line in text.split("\n") if line.strip() and not line.strip().startswith("#")]

    for name, plain in renamed:
        old = re.sub(rf"(?<![\w.]){re.escape(name)}\b", plain, old)
    before, after = lines(old), lines(new)
    removed, added = list(before), []
    for line in after:
        if line in removed:
            removed.remove(line)
        else:
            added.append(line)
    if any(not (line.startswith(("import ", "from ")) or ".device(" in line) for line in removed):
        return False
    for position, line in enumerate(after):
        if line not in added:
            continue
        added.remove(line)
        following = after[position + 1] if position + 1 < len(after) else ""
        choice = line.startswith("if ") and line.endswith(":") and ".distribute." in following
        if not (line.startswith(("import ", "from ")) or choice or _ADDED_BY_STRATEGY.match(line)):
            return False
    return True


_NOT_JSON = "A .ipynb file must be notebook JSON: repair or re-save it in Jupyter, then rerun the codemod."


def _notebook_problem(data: bytes, path: str) -> Finding | None:
    """Why the notebook cannot be read (not JSON, too deep, nbformat 3, a cell without a type), or None."""
    try:
        notebook = json.loads(data.decode("utf-8-sig"))
    except (ValueError, UnicodeDecodeError) as error:
        return unparseable(path, 1, 1, f"not a readable notebook ({str(error).splitlines()[0]})", _NOT_JSON)
    except (RecursionError, MemoryError):  # valid JSON, nested deeper than the json module reads
        return too_deep(path, "JSON nesting deeper than Python's json module reads") if may_contain_site(data) else None
    if not isinstance(notebook, dict):
        return unparseable(path, 1, 1, "not a readable notebook (its top level is not a JSON object)", _NOT_JSON)
    version = notebook.get("nbformat", 4)
    if "worksheets" in notebook or (isinstance(version, int) and version < 4):
        version = version if isinstance(version, int) and version < 4 else 3
        return Finding(1, 1, "MGPU508", (
            f"nbformat {version} notebook (before Jupyter 4): not read, left unchanged. Convert it "
            "with `jupyter nbconvert --to notebook --nbformat 4 --inplace FILE` (or open and save it in Jupyter), "
            "then rerun the codemod."
        ), path)
    cells = notebook.get("cells", [])
    if not isinstance(cells, list):
        return Finding(1, 1, "MGPU508", (
            "`cells` is not a list: not a notebook Jupyter reads; left unchanged. Re-save it in Jupyter, then rerun."
        ), path)
    untyped = [number for number, cell in enumerate(cells, 1) if not isinstance(cell, dict) or "cell_type" not in cell]
    if untyped:
        listed = ", ".join(map(str, untyped[:10])) + (", ..." if len(untyped) > 10 else "")
        return Finding(1, 1, "MGPU508", (
            f"cell{'s' if len(untyped) > 1 else ''} {listed} without a `cell_type` (Jupyter refuses such a notebook): "
            'not read, left unchanged. Add `"cell_type": "code"` (or "markdown") to each, or repair it in Jupyter, '
            "then rerun the codemod."
        ), path, untyped[0])
    return None


def _map_site(site: SiteStatus, origin: list[tuple[int, int]]) -> SiteStatus:
    """A call site's line in the joined module as (cell, line in that cell), as `_map` does for findings."""
    if 1 <= site.line <= len(origin):
        cell, line = origin[site.line - 1]
        return dataclasses.replace(site, line=max(line, 1), cell=cell)
    return site


def _map(finding: Finding, origin: list[tuple[int, int]], path: str) -> Finding:
    if 1 <= finding.line <= len(origin):
        cell, line = origin[finding.line - 1]
        return Finding(max(line, 1), finding.col, finding.code, _mapped_message(finding.message, origin, cell), path,
                       cell)
    return Finding(finding.line, finding.col, finding.code, finding.message, path)


def _shifted(finding: Finding, removed: list[int]) -> Finding:
    """`finding` with its cell numbers (its own, "cell 4, line 7" in its message) past the cells cut out."""
    def number(cell: int) -> int:
        return cell - sum(i + 1 < cell for i in removed)
    if not removed or finding.cell is None:
        return finding
    message = _CELL_IN_MESSAGE.sub(lambda m: f"cell {number(int(m[1]))}, line", finding.message)
    if finding.cell - 1 in removed:  # the helper's own cell went with it
        message = message.replace("(defined here, documented)", "(defined in a code cell here, removed with it)")
    return dataclasses.replace(finding, cell=number(finding.cell), message=message)


_CELL_IN_MESSAGE = re.compile(r"\bcell (\d+), line")
_LINE_IN_MESSAGE = re.compile(r"\bline (\d+)\b")


def _mapped_message(message: str, origin: list[tuple[int, int]], cell: int) -> str:
    """A message's "line 27" (of the joined module) as the notebook shows it: "line 7" in the
    finding's own cell, "cell 4, line 7" in another."""
    def swap(match: re.Match[str]) -> str:
        number = int(match[1])
        if not 1 <= number <= len(origin):
            return match[0]
        where, line = origin[number - 1]
        return f"line {max(line, 1)}" if where == cell else f"cell {where}, line {max(line, 1)}"
    return _LINE_IN_MESSAGE.sub(swap, message)


# ---------------------------------------------------------------- JSON scanning (spans, no re-dump)

_DECODER = json.JSONDecoder()
_WS = re.compile(r"[ \t\n\r]*")


def _skip_ws(text: str, i: int) -> int:
    match = _WS.match(text, i)
    return match.end() if match else i  # the pattern matches everywhere, if only the empty string


def _object_members(text: str, i: int) -> Iterator[tuple[str, int, int]]:
    """Yields (key, value_start, value_end) of the JSON object starting at text[i] == '{'."""
    if text[i] != "{":
        raise ValueError(f"expected an object at offset {i}")
    i = _skip_ws(text, i + 1)
    if text[i] == "}":
        return
    while True:
        if text[i] != '"':
            raise ValueError(f"expected a key at offset {i}")
        key, i = _DECODER.raw_decode(text, i)
        i = _skip_ws(text, i)
        if text[i] != ":":
            raise ValueError(f"expected ':' at offset {i}")
        start = _skip_ws(text, i + 1)
        _, end = _DECODER.raw_decode(text, start)
        yield key, start, end
        i = _skip_ws(text, end)
        if text[i] == "}":
            return
        if text[i] != ",":
            raise ValueError(f"expected ',' at offset {i}")
        i = _skip_ws(text, i + 1)


def _array_items(text: str, i: int) -> list[tuple[int, int]]:
    if text[i] != "[":
        raise ValueError(f"expected an array at offset {i}")
    items: list[tuple[int, int]] = []
    i = _skip_ws(text, i + 1)
    if text[i] == "]":
        return items
    while True:
        _, end = _DECODER.raw_decode(text, i)
        items.append((i, end))
        i = _skip_ws(text, end)
        if text[i] == "]":
            return items
        if text[i] != ",":
            raise ValueError(f"expected ',' at offset {i}")
        i = _skip_ws(text, i + 1)


def _code_cells(text: str) -> list[_Cell]:
    start = _skip_ws(text, 0)
    top = dict((k, (s, e)) for k, s, e in _object_members(text, start))
    language = json.loads(text).get("metadata", {}).get("language_info", {}).get("name", "python")
    if "cells" not in top or str(language).lower() not in ("python", "python3", "ipython"):
        return []
    cells = []
    items = _array_items(text, top["cells"][0])
    for index, (s, _e) in enumerate(items):
        members = {k: (vs, ve) for k, vs, ve in _object_members(text, s)}
        kind = json.loads(text[slice(*members["cell_type"])]) if "cell_type" in members else None
        if kind != "code" or "source" not in members:
            continue
        span = members["source"]
        raw = text[span[0]:span[1]]
        value = json.loads(raw)
        joined = "".join(value) if isinstance(value, list) else value
        cell = _mask(index, span, raw, value, joined)
        if cell is not None:
            cell.outputs, cell.count = members.get("outputs"), members.get("execution_count")
            if len(items) > 1:  # the last cell of a notebook is never removed
                cell.whole = (items[index - 1][1], _e) if index else (s, items[1][0])
            cells.append(cell)
    return cells


def _open(code: str) -> bool:
    """`code` ends inside a bracket or a triple-quoted string: the next line continues it."""
    try:
        for _ in tokenize.generate_tokens(io.StringIO(code + "\n").readline):
            pass
    except tokenize.TokenError:
        return True
    except (SyntaxError, ValueError):  # (an unindent that matches nothing: no bracket open)
        return False
    return False


def _python(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def _mask(index: int, span: tuple[int, int], raw: str, value: list[str] | str, text: str) -> _Cell | None:
    lines = text.split("\n")
    header = None
    if lines and lines[0].startswith("%%"):
        name = lines[0][2:].split(None, 1)[0] if lines[0][2:].strip() else ""
        if name not in _PYTHON_CELL_MAGICS:
            return None  # %%bash, %%writefile...: not Python
        header, lines = lines[0], lines[1:]
    magics: dict[int, str] = {}
    masked: list[str] = []
    continued = False
    if _python("\n".join(lines)):
        # valid Python as written: no line of it is a magic (`      % (auc, best)` continues a
        # bracketed expression, the break-before-operator style)
        return _Cell(index, span, raw, value, text, lines, magics, header)
    for line in lines:
        continued = continued or (line[:1].isspace() and _open("\n".join(masked)))
        match = None if continued else _MAGIC_LINE.match(line.rstrip("\r"))
        if match and not line.lstrip().startswith("#"):
            number = len(magics) + 1000 * index
            magics[number] = match["body"]
            names = _magic_names(match["body"])  # read by the placeholder: renames see them
            masked.append(match["indent"] + _MAGIC.format(number) + (f"({', '.join(names)})" if names else ""))
            continued = line.rstrip().endswith("\\")
        else:
            masked.append(line)
            continued = continued and line.rstrip().endswith("\\")
    return _Cell(index, span, raw, value, text, masked, magics, header)


# ---------------------------------------------------------------- back into cells

def _split(module: str, cells: list[_Cell]) -> dict[int, str]:
    by_index = {cell.index: cell for cell in cells}
    out: dict[int, list[str]] = {}
    reopened: dict[int, tuple[int, int]] = {}  # cell -> (header lines added, indent of its code)
    current: int | None = None
    # Lines the rewrite put before the first boundary (`import tensorflow as tf` added to a
    # notebook with no imports ahead of the first cell's code) open the first code cell.
    preamble: list[str] = []
    lines = module.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines):
        match = _BOUNDARY_LINE.match(line)
        if match:
            current = int(match["cell"])
            out[current] = []
            if preamble and not match["indent"]:
                if any(line.startswith((" ", "\t")) for line in preamble):
                    raise ValueError("code before the first cell")
                while preamble and not preamble[-1].strip():  # the cell's own code follows directly
                    preamble.pop()
                out[current] += preamble
                preamble = []
            if match["indent"]:  # the rewrite pulled this cell into a block of an earlier cell
                headers = reopen(lines[:number], len(match["indent"]))
                out[current] += headers
                reopened[current] = (len(headers), len(match["indent"]))
            continue
        if current is None:
            if line.strip() or preamble:
                preamble.append(line)
            continue
        out[current].append(line)
    for index, (count, indent) in reopened.items():
        out[index] = drop_needless_reopen(drop_empty_reopen(out[index], count, indent), count, indent)
    result = {}
    for index, cell in by_index.items():
        body = out.get(index, [])
        if body != cell.masked:  # (a cell the rewrite left alone keeps its scopes as written)
            body = cell_comments_first(display_last_expression(body))
            # a cell ends on code as it did, not on the blank line above a statement that went
            while len(body) > 1 and not body[-1].strip() and cell.masked and cell.masked[-1].strip():
                body = body[:-1]
            # and starts on what follows a leading statement that went, not on the blank line after it
            while len(body) > 1 and not body[0].strip() and cell.masked and cell.masked[0].strip():
                body = body[1:]
        if cell.magics:
            body = _restore_magics(body, cell.magics)
        # A cell magic (`%%time`) whose code all went elsewhere would be an error on its own.
        if cell.header is not None and any(line.strip() for line in body):
            result[index] = "\n".join([cell.header, *body])
        else:
            result[index] = "\n".join(body)
        masked = _mask(0, (0, 0), "", "", "\n".join(body))
        try:
            ast.parse("\n".join(masked.masked if masked else body) + "\n")  # each cell compiles alone
        except SyntaxError as error:
            raise ValueError(f"cell {index + 1} would not compile on its own ({error.msg})") from None
    return result


def _restore_magics(lines: list[str], magics: dict[int, str]) -> list[str]:
    """The lines with each magic's placeholder replaced by the magic (see `_restore`)."""
    return [_RESTORE.sub(lambda m: _restore(magics[int(m[1])], m["names"]), line) for line in lines]


def _restore(magic: str, names: str | None) -> str:
    """The magic's text, with the names the rewrite renamed in its placeholder renamed in it too
    (`%time parallel.fit(x, y)` becomes `%time model.fit(x, y)` when `parallel` became `model`)."""
    if not names:
        return magic
    old, new = _magic_names(magic), [n.strip() for n in names.split(",")]
    if len(old) != len(new):
        raise ValueError("a magic's placeholder lost a name")
    for before, after in zip(old, new):
        if before != after:
            magic = re.sub(rf"(?<![.\w]){re.escape(before)}(?!\w)", after, magic)
    return magic


_STRINGS = re.compile(r"'[^']*'|\"[^\"]*\"")
_WORD = re.compile(r"(?<![.\w])[A-Za-z_]\w*")


def _magic_names(body: str) -> list[str]:
    """Python names a magic line reads: after a line magic's name (`%time parallel.fit(x)`:
    parallel, x), inside `{...}` / after `$` in a shell command, the object of `obj?`."""
    text = body.strip()
    if re.match(r"^\w+\s*=\s*[%!]", text):
        text = text.split("=", 1)[1].strip()
    if text.startswith("!"):
        rest = " ".join(a or b for a, b in re.findall(r"\{([^{}]*)\}|\$(\w+)", text))
    elif text.startswith("%"):
        rest = text.split(None, 1)[1] if len(text.split(None, 1)) > 1 else ""
    else:
        rest = text.strip("?")
    names: list[str] = []
    for word in _WORD.findall(_STRINGS.sub(" ", rest)):
        if not keyword.iskeyword(word) and word not in names:
            names.append(word)
    return names


def _encode_source(cell: _Cell, text: str) -> str:
    ascii_only = "\\u" in cell.raw and not any(ord(c) > 127 for c in cell.raw)
    dump = lambda s: json.dumps(s, ensure_ascii=ascii_only)  # noqa: E731
    if isinstance(cell.value, str):
        return dump(text)
    items = text.splitlines(keepends=True)
    if not items:
        return "[]"
    raw = cell.raw
    positions = _array_items(raw, 0)
    if not positions:
        return "[" + ", ".join(dump(i) for i in items) + "]"
    first_sep = raw[1:positions[0][0]]
    last_sep = raw[positions[-1][1]:-1]
    between = raw[positions[0][1]:positions[1][0]] if len(positions) > 1 else "," + first_sep
    return "[" + first_sep + between.join(dump(i) for i in items) + last_sep + "]"
