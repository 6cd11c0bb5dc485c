"""Notebooks exported with nbconvert (`# In[5]:` above each cell's code) or written in the percent
format (`# %%`): each cell keeps a scope
of its own, as in the notebook, instead of one `with strategy.scope():` indenting the markers.

A scope the rewrite extended over markers is closed at each marker and reopened in the next
cell only where that cell builds or compiles (cell_scopes.py decides, as for `.ipynb` files);
a cell the rewrite left without code (it held only the call) goes with its marker.
"""

from __future__ import annotations

import io
import re
import tokenize

from .cell_scopes import display_last_expression, drop_empty_reopen, drop_needless_reopen, reopen

__all__ = ["cells_kept", "is_export", "without_emptied_markdown"]

# nbconvert's `# In[5]:`, and the percent format's `# %%` (VS Code, Jupytext, Spyder, Kaggle)
_MARKER = re.compile(r"^(?P<indent>[ \t]*)(?:# In\[[ \d]*\]:|#[ \t]*%%(?:[ \t].*)?)[ \t]*$")


def is_export(text: str) -> bool:
    """Two or more `# In[N]:` (or `# %%`) lines at column 0: the file is a notebook saved as a script."""
    return sum(1 for line in text.splitlines() if _MARKER.match(line) and not line[0].isspace()) >= 2


def cells_kept(original: str, output: str) -> str:
    """`output` (the rewrite of `original`, an export) with its cells as cells again; `output`
    unchanged when its markers do not match the original's one for one or a cell would start
    inside something other than a `with` block."""
    newline = "\r\n" if "\r\n" in output else "\n"
    lines = output.split(newline)
    markers = [i for i, line in enumerate(lines) if _MARKER.match(line)]
    had_code = _cells_with_code(original.split(newline))
    if len(markers) != len(had_code):
        return output
    out = lines[: markers[0]] if markers else lines
    before = original.split(newline)
    originals = [i for i, line in enumerate(before) if _MARKER.match(line)] + [len(before)]
    for k, start in enumerate(markers):
        end = markers[k + 1] if k + 1 < len(markers) else len(lines)
        cell = _cell(lines, start, end, changed=lines[start:end] != before[originals[k]:originals[k + 1]])
        if cell is None:
            return output
        if had_code[k] and not any(line.strip() for line in cell[1:]):
            continue  # the cell held only the call: it goes, marker and all
        written = before[originals[k]:originals[k + 1]]
        out += _tail_at_its_code(_lead_as_written(cell, written), written)
    return newline.join(out)


def _tail_at_its_code(cell: list[str], written: list[str]) -> list[str]:
    """The comment lines that end a cell (the next markdown cell's text, as an export writes it)
    at the level of the cell's last code line: where the scope it was inside closed before them
    (its last expression displayed below it), they are not left indented (round 60, bc15); nor
    under a scope the rewrite opened in the cell, when they stood at its `with` line's level
    (round 62, bg20)."""
    code = [i for i, line in enumerate(cell[1:], 1) if line.strip() and not line.lstrip().startswith("#")]
    if not code:
        return cell
    tail = cell[code[-1] + 1:]
    was = [line for line in written[_last_code(written) + 1:] if line.strip()]
    if was and all(not _indent(line) and line.startswith("#") for line in was) and all(
        line.lstrip().startswith("#") for line in tail if line.strip()
    ):
        # the next markdown cell's text, which an export writes at column 0, stays there whatever
        # block the rewrite left last in the cell (a `for` after the new scope; round 65, bm18)
        return [*cell[:code[-1] + 1], *(line.lstrip(" \t") for line in tail)]
    # (the level of the statement the last code line ends, not of its continuation line:
    # `net = Sequential([...,` / `Dense(1)])` under a new scope; round 65, bm19)
    last = cell[_statement_start(cell, code[-1])]
    level = last[:len(last) - len(last.lstrip(" \t"))]
    opened = [i for i in code if _SCOPE_LINE.match(cell[i]) and cell[i] not in written]
    if opened and level and all(cell[i].startswith(level) for i in code if i > opened[-1]):
        scope = _indent(cell[opened[-1]])
        was = [line for line in written[_last_code(written) + 1:] if line.strip()]
        if len(scope) < len(level) and was and all(_indent(line) == scope for line in was):
            level = scope
    if not any(line.strip() for line in tail) or not all(
        not line.strip() or line.startswith(level) for line in tail
    ):
        return cell
    deeper = {line[:len(line) - len(line.lstrip(" \t"))] for line in tail if line.strip()}
    if len(deeper) != 1 or len(next(iter(deeper))) <= len(level):
        return cell
    cut = len(next(iter(deeper))) - len(level)
    return [*cell[:code[-1] + 1], *(line[cut:] if line.strip() else line for line in tail)]


def _statement_start(lines: list[str], index: int) -> int:
    """The first line of the statement that `lines[index]` ends (`index` itself where the lines do
    not read as Python)."""
    start, fresh = index, True
    try:
        for token in tokenize.generate_tokens(io.StringIO("\n".join(lines[:index + 1]) + "\n").readline):
            if token.type == tokenize.NEWLINE:
                fresh = True
            elif fresh and token.type not in _NO_STATEMENT:
                start, fresh = token.start[0] - 1, False
    except (tokenize.TokenError, SyntaxError):
        return index
    return start


_NO_STATEMENT = frozenset({tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER})
_SCOPE_LINE = re.compile(r"^[ \t]*with \w+\.scope\(\):[ \t]*$")


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip(" \t"))]


def _last_code(lines: list[str]) -> int:
    return max((i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")), default=0)


_MARKDOWN = re.compile(r"^#[ \t]*%%[ \t]*\[(?:markdown|md)\][ \t]*$")


def without_emptied_markdown(original: str, output: str) -> str:
    """`output` less each percent-format markdown cell whose every line the rewrite removed
    (`# %% [markdown]` over "# Regression with the `ModelMGPU` wrapper ...": round 55, at17), with
    the blank lines under its marker; a cell written empty stays. `output` unchanged when its
    markers do not match the original's one for one. (Run after `cells_kept`, which pairs the
    cells by their markers.)"""
    newline = "\r\n" if "\r\n" in output else "\n"
    lines, before = output.split(newline), original.split(newline)
    markers = [i for i, line in enumerate(lines) if _MARKER.match(line)]
    originals = [i for i, line in enumerate(before) if _MARKER.match(line)]
    if len(markers) != len(originals) or not markers:
        return output
    dropped: set[int] = set()
    for k, start in enumerate(markers):
        if not _MARKDOWN.match(lines[start]) or lines[start] != before[originals[k]]:
            continue
        end = markers[k + 1] if k + 1 < len(markers) else len(lines)
        written_end = originals[k + 1] if k + 1 < len(originals) else len(before)
        if any(line.strip() for line in lines[start + 1:end]):
            continue
        if not any(line.strip() for line in before[originals[k] + 1:written_end]):
            continue  # written empty
        if end == len(lines) and start == 0:
            continue  # the file's only cell: left as the rewrite wrote it
        dropped |= set(range(start, end))
    return newline.join(line for i, line in enumerate(lines) if i not in dropped) if dropped else output


def _lead_as_written(cell: list[str], written: list[str]) -> list[str]:
    """`cell` with no more blank lines under its marker than the original cell had (`# %%` right
    above its code; nbconvert's two): the blank lines of statements that went stay behind."""
    def lead(lines: list[str]) -> int:
        return next((i for i, line in enumerate(lines[1:]) if line.strip()), len(lines) - 1)
    extra = lead(cell) - lead(written)
    if extra <= 0 or lead(cell) == len(cell) - 1:
        return cell
    return [cell[0], *cell[1 + extra:]]


def _cells_with_code(lines: list[str]) -> list[bool]:
    found: list[bool] = []
    for line in lines:
        if _MARKER.match(line):
            found.append(False)
        elif found and line.strip() and not line.lstrip().startswith("#"):
            found[-1] = True
    return found


def _cell(lines: list[str], start: int, end: int, changed: bool) -> list[str] | None:
    """The marker and lines of one cell, reopened at column 0 when the rewrite indented it; a cell
    the rewrite changed keeps under its scope only what builds or compiles (cell_scopes.py)."""
    marker, content = lines[start], lines[start + 1:end]
    indent = len(marker) - len(marker.lstrip(" \t"))
    if not indent:
        return [marker, *(display_last_expression(content) if changed else content)]
    lead = 0
    while lead < len(content) and (not content[lead].strip() or content[lead].lstrip().startswith("#")):
        lead += 1
    # the comment lines the cell opens with stay above its reopened scope, at the cell's level
    opening = [line[indent:] if line[:indent].strip() == "" else line for line in content[:lead]]
    if any(line.strip() for line in opening):
        while opening and not opening[-1].strip():
            opening.pop()
    tail = len(content)
    while tail > lead and not content[tail - 1].strip():
        tail -= 1
    try:
        headers = reopen(lines[:start], indent)
    except ValueError:
        return None  # the cell starts inside an `if`/`def`: left as the rewrite wrote it
    body = [*headers, *content[lead:tail]]
    body = drop_needless_reopen(drop_empty_reopen(body, len(headers), indent), len(headers), indent)
    return [marker[indent:], *opening, *display_last_expression(body), *content[tail:]]
