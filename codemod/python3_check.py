"""Is a file valid Python 3? Decoded with its coding cookie, then parsed by `ast`; why not if not."""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
import warnings
import libcst as cst

from .findings import Finding

__all__ = ["Problem", "error_position", "first_line", "needs_newer_python", "newer_python_advice", "parse_python3",
           "unparseable"]

# (line, col, reason, what to do), the pieces of an MGPU501 finding.
Problem = tuple[int, int, str, str]

_PY2_HINTS = (
    "Missing parentheses in call to",
    "multiple exception types must be parenthesized",
    "leading zeros in decimal integer literals",
    "invalid decimal literal",
)
# An IPython line pasted into a .py file (a Colab or hand-made export): `!pip install x`, `%matplotlib inline`.
_IPYTHON_LINE = re.compile(r"\s*(?P<kind>[!%])(?P<name>%?\w*)(?P<rest>.*)$")
# Python 2 statements Python 3.9's parser reports as a bare "invalid syntax".
_PY2_STATEMENT = re.compile(r"\s*(print\s|exec\s|except\s+[\w.]+\s*,\s*\w+\s*:|raise\s+[\w.]+\s*,)")


def parse_python3(source: bytes) -> tuple[Problem | None, tuple[ast.Module, str] | None]:
    """(None, (the `ast` tree, the decoded text)) for a valid Python 3 file, else (the problem, None)."""
    text = _decode(source)
    if not isinstance(text, str):
        return text, None
    try:
        with warnings.catch_warnings():  # SyntaxWarnings about the user's code are not ours to print
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError) as error:
        return _syntax_problem(text, error), None
    return None, (tree, text)


def _decode(source: bytes) -> str | Problem:
    """The file's text, decoded as its coding cookie says (UTF-8 without one), or why it cannot be."""
    if b"\0" in source:
        line = source.count(b"\n", 0, source.index(b"\0")) + 1
        return (line, 1, "null bytes (a binary or UTF-16 file?)", (
            "If this is not Python source, rename it or exclude it from the paths given; "
            "if it is UTF-16, re-save it as UTF-8."
        ))
    encoding = "utf-8"
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        return source.decode(encoding)
    except SyntaxError as error:  # unknown or conflicting cookie, or bad UTF-8 in the first two lines
        try:
            source.decode("utf-8-sig")
        except UnicodeDecodeError as decode_error:
            bad = decode_error
        else:
            return (1, 1, first_line(error), "Fix the `# -*- coding: ... -*-` line, then rerun the codemod.")
    except UnicodeDecodeError as decode_error:
        bad = decode_error
    except LookupError:  # a codec that is not a text encoding: rot13, hex, base64...
        return (1, 1, f"the coding cookie names `{encoding}`, which is not a text encoding", (
            "Declare a text encoding (`# -*- coding: utf-8 -*-`) or decode the file first, then rerun the codemod."
        ))
    line = source.count(b"\n", 0, bad.start) + 1
    return (line, 1, f"byte 0x{source[bad.start]:02x} is not valid {encoding}", (
        "Declare the file's encoding on its first or second line (`# -*- coding: latin-1 -*-`) "
        "or re-save it as UTF-8, then rerun the codemod."
    ))


# Syntax newer than some supported Pythons: (oldest Python that parses it, what it is, the line's pattern).
_NEWER_SYNTAX = (
    ((3, 12), "a `type` statement (PEP 695)", re.compile(r"\s*type\s+\w+\s*[\[=]")),
    ((3, 12), "type parameters (PEP 695)", re.compile(r"\s*(async\s+)?(def|class)\s+\w+\s*\[")),
    ((3, 12), "an f-string that reuses its quotes, or holds a backslash or comment (PEP 701)",
     re.compile(r"""(?i).*(?<![\w])(f|rf|fr)["']""")),
    ((3, 11), "`except*` (PEP 654)", re.compile(r"\s*except\s*\*")),
    ((3, 10), "a `match` statement (PEP 634)", re.compile(r"\s*match\b.*:\s*(#.*)?$")),
    ((3, 10), "a `case` clause (PEP 634)", re.compile(r"\s*case\b.*:")),
    ((3, 10), "parenthesized context managers", re.compile(r"\s*(async\s+)?with\s*\(")),
)


def needs_newer_python(text: str, line: int) -> tuple[tuple[int, int], str] | None:
    """(the Python version it needs, what) when the failing line uses syntax newer than this Python,
    and libcst (whose parser knows the newer grammar) reads the file."""
    statement = _line(text, line)
    found = next(((version, what) for version, what, pattern in _NEWER_SYNTAX
                  if sys.version_info < version and pattern.match(statement)), None)
    if found is None:
        return None
    try:
        cst.parse_module(text)
    except Exception:  # noqa: BLE001 - any parser failure: then it is not (only) newer syntax
        return None
    return found


def newer_python_advice(newer: tuple[tuple[int, int], str], reason: str) -> tuple[str, str, str]:
    """(version, reason, advice) for syntax this Python is too old to parse: the code needs no fix."""
    (major, minor), what = newer
    here = ".".join(map(str, sys.version_info[:2]))
    version = f"{major}.{minor}"
    reason = f"{what} needs Python {version} to parse, and this is Python {here} ({reason})"
    advice = (f"The file itself needs no fix: run the codemod with Python {version} or newer "
              f"(e.g. `python{version} -m multi_gpu_codemod FILE`).")
    return version, reason, advice


def _syntax_problem(text: str, error: SyntaxError | ValueError) -> Problem:
    """Where `ast` stopped, and the advice: port it first when it looks like Python 2, run a newer
    Python when it uses syntax this one does not know."""
    line, col = error_position(error)
    reason = first_line(error)
    statement = _line(text, line)
    newer = needs_newer_python(text, line)
    if newer is not None:
        _, reason, advice = newer_python_advice(newer, reason)
        return line, col, reason, advice
    magic = _IPYTHON_LINE.match(statement)
    if magic:
        # (round 50, al15: a Colab export's raw `!nvidia-smi`; the old advice said "port to Python 3")
        shell, name, rest = magic["kind"] == "!", magic["name"], magic["rest"].strip()
        if shell:
            written = f"get_ipython().system({(name + magic['rest']).strip()!r})"
        elif name.startswith("%"):  # a cell magic: nbconvert wraps the whole cell in a call
            written = f"get_ipython().run_cell_magic({name[1:]!r}, {rest!r}, <the cell>)"
        else:
            written = f"get_ipython().run_line_magic({name!r}, {rest!r})"
        advice = (f"Line {line} is an IPython {'shell command' if shell else 'magic'} from a notebook, not Python: "
                  f"write it as `{written}` (as nbconvert does) or comment it out, then rerun the codemod.")
        col = len(statement) - len(statement.lstrip()) + 1
    elif any(hint in reason for hint in _PY2_HINTS) or _PY2_STATEMENT.match(statement):
        advice = "This looks like Python 2: port it first (e.g. `2to3 -w FILE`), then rerun the codemod."
        # The whole statement is Python 2; parsers differ on the column inside it.
        col = len(statement) - len(statement.lstrip()) + 1
    else:
        advice = "Fix the syntax error (or port the file to Python 3), then rerun the codemod."
    return line, col, reason, advice


def unparseable(path: str, line: int, col: int, reason: str, advice: str, cell: int | None = None) -> Finding:
    """MGPU501, printed as `path: cannot parse as Python 3: <reason> (line L, col C); ... [MGPU501]`."""
    message = f"cannot parse as Python 3: {reason} (line {line}, col {col}); left unchanged. {advice}"
    return Finding(line, col, "MGPU501", message, path, cell)


def _line(text: str, line: int) -> str:
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else ""


def first_line(error: BaseException) -> str:
    """The error's message, first line only (the class name when it has none)."""
    text = str(getattr(error, "msg", None) or error).strip().splitlines()
    return text[0] if text else type(error).__name__


def error_position(error: BaseException) -> tuple[int, int]:
    """(line, col), both 1-based, of a parser's error; (1, 1) when it gives none."""
    if isinstance(error, cst.ParserSyntaxError):
        return error.raw_line, error.raw_column + 1
    if isinstance(error, SyntaxError):
        return error.lineno or 1, (error.offset or 1)
    return 1, 1
