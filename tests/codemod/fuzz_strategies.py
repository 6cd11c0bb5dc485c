"""Hypothesis strategies and the property shared by the bounded fuzz test and benchmarks/fuzz_codemod.py."""

from __future__ import annotations

import ast
import json

import hypothesmith
from hypothesis import strategies as st

from multi_gpu_codemod import transform_source
from multi_gpu_codemod.notebook import transform_notebook
from codemod_fixtures import ROOT

FIXTURES = sorted(p.read_bytes() for p in ROOT.glob("*/*.py") if p.parent.name != "hostile")
_NOISE = [b"\r\n", b"\r", b"\t", b"\x00", b"\xe9", b"\xef\xbb\xbf", b"print ", b"    ", b"(", b":", b"#", b'"', b"\\",
          b"multi_gpu_model(", b"with tf.device('/cpu:0'):\n", b"except ValueError, e:\n", b"%matplotlib inline\n"]


@st.composite
def mutated_fixture(draw: st.DrawFn) -> bytes:
    """A fixture source with a few random byte edits, line deletions/duplications/swaps."""
    data = draw(st.sampled_from(FIXTURES))
    for _ in range(draw(st.integers(1, 4))):
        lines = data.splitlines(keepends=True) or [b""]
        kind = draw(st.sampled_from(["insert", "delete_byte", "drop_line", "dup_line", "swap", "indent"]))
        i = draw(st.integers(0, max(0, len(lines) - 1)))
        if kind == "insert":
            pos = draw(st.integers(0, len(data)))
            data = data[:pos] + draw(st.sampled_from(_NOISE) | st.binary(max_size=3)) + data[pos:]
        elif kind == "delete_byte" and data:
            pos = draw(st.integers(0, len(data) - 1))
            data = data[:pos] + data[pos + 1:]
        elif kind == "drop_line":
            data = b"".join(lines[:i] + lines[i + 1:])
        elif kind == "dup_line":
            data = b"".join(lines[:i + 1] + lines[i:])
        elif kind == "swap" and len(lines) > 1:
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
            data = b"".join(lines)
        elif kind == "indent":
            lines[i] = b"    " + lines[i]
            data = b"".join(lines)
    return data


def generated_program() -> st.SearchStrategy[bytes]:
    """hypothesmith programs, optionally with a multi_gpu_model site spliced in."""
    site = st.sampled_from([b"", b"from keras.utils import multi_gpu_model\nm = build()\np = multi_gpu_model(m, 2)\n"])
    return st.tuples(hypothesmith.from_grammar(), site).map(lambda t: t[1] + t[0].encode("utf-8", "surrogatepass"))


def check_contract(source: bytes) -> None:
    """Never raises; failed -> untouched; output parses; a second run changes nothing."""
    for prefilter in (True, False):
        result = transform_source(source, "fuzz.py", prefilter=prefilter)
        if result.failed:
            assert result.output == source and result.findings
            continue
        if result.changed:
            ast.parse(result.output)
        again = transform_source(result.output, "fuzz.py", prefilter=prefilter)
        assert again.output == result.output, "second run changed the output"


def check_notebook_contract(sources: list[bytes]) -> None:
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": s.decode("latin-1").splitlines(keepends=True)} for s in sources]
    data = (json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n").encode()
    result = transform_notebook(data, "fuzz.ipynb")
    if result.failed:
        assert result.output == data
        return
    json.loads(result.output)
    assert transform_notebook(result.output, "fuzz.ipynb").output == result.output


_REALWORLD = ROOT.parent / "realworld"
SITE_SOURCES = sorted(
    p.read_bytes() for p in [*ROOT.glob("*/*.before.py"), *_REALWORLD.glob("*/*.py")]
    if p.parent.name not in ("hostile", "multi_worker")
)



def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# Notebook cells are text: a latin-1 fixture (imports/crlf_latin1) cannot become one.
_UTF8_SITE_SOURCES = [s for s in SITE_SOURCES if _is_utf8(s)]


def _statement_starts(text: str) -> list[int]:
    """0-based line index where each top-level statement starts (decorators included)."""
    tree = ast.parse(text)
    starts = []
    for node in tree.body:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        starts.append(first - 1)
    return starts


@st.composite
def split_notebook(draw: st.DrawFn) -> tuple[bytes, list[str]]:
    """A legacy script with sites cut into notebook cells at top-level statement boundaries: often
    one statement per cell (a cell holding only the call), or random cuts, so the scope the rewrite
    opens in one cell runs on into the next ones."""
    source = draw(st.sampled_from(_UTF8_SITE_SOURCES))
    text = source.decode("utf-8")
    lines = text.splitlines(keepends=True)
    starts = _statement_starts(text)
    some = st.sets(st.sampled_from(starts[1:] or [0]), max_size=len(starts))
    cuts = starts[1:] if draw(st.booleans()) else sorted(draw(some))
    pieces, previous = [], 0
    for cut in [*cuts, len(lines)]:
        if cut > previous:
            pieces.append("".join(lines[previous:cut]).rstrip("\n"))
            previous = cut
    return source, [p for p in pieces if p.strip()]


def check_split_notebook_contract(source: bytes, pieces: list[str]) -> None:
    """Never raises; the cells each compile alone; a second run changes nothing; and a script the
    codemod rewrites is rewritten as a notebook too (the split back never fails)."""
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": p.splitlines(keepends=True)} for p in pieces]
    data = (json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n").encode()
    result = transform_notebook(data, "split.ipynb")
    script = transform_source(source, "split.py")
    if script.changed and not script.failed:
        assert not result.failed, [f.format() for f in result.findings]
    if result.failed:
        assert result.output == data
        return
    for cell in json.loads(result.output)["cells"]:
        ast.parse("".join(cell["source"]))
    assert transform_notebook(result.output, "split.ipynb").output == result.output
