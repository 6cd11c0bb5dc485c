"""The diff a reviewer reads, on every fixture the project has (realworld, oracle, the per-fixer pairs,
legacy scripts and notebooks): each file the codemod rewrites is checked line by line.

- every added or changed line fits in 100 columns, or in the file's own widest line (a line of the
  script moved one block deeper may exceed that by the indentation it gained);
- a strategy expression holds no nested comprehension, no `isinstance` and no conditional expression;
- no condition is written more often than the script wrote it (the strategy is chosen by the
  script's own condition, once), and never as a negated copy (`if not (...)`);
- no whitespace-only line is created.
"""

from __future__ import annotations

import ast
import difflib
import json
import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from codemod_fixtures import check_pair, check_unchanged, pairs, unchanged
from multi_gpu_codemod import transform_source
from multi_gpu_codemod.notebook import transform_notebook

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LIMIT = 100


def _corpus() -> list[Path]:
    found = []
    for path in sorted(FIXTURES.rglob("*")):
        if path.suffix not in (".py", ".ipynb") or path.name.endswith((".after.py", ".after.ipynb")):
            continue
        found.append(path)
    return found


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _cells(data: bytes) -> list[str]:
    notebook = json.loads(data)
    sources = []
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            sources.append("".join(source) if isinstance(source, list) else source)
    return sources


@cache
def _migrated(path: Path) -> tuple[list[str], list[str]] | None:
    """(the code before, the code after) as lists of units (one file, or one notebook cell each),
    or None when the codemod leaves the file as it is."""
    data = path.read_bytes()
    if path.suffix == ".ipynb":
        try:
            result = transform_notebook(data, path.name)
        except Exception:  # a hostile notebook the notebook tests cover
            return None
        if result.output is None or result.output == data:
            return None
        return _cells(data), _cells(result.output)
    result = transform_source(data, path.name)
    if result.output is None or result.output == data:
        return None
    return [_text(data)], [_text(result.output)]


def _joined_cells(cells: list[str]) -> str:
    """The cells as one module, each parsed alone (a cell with a magic or bad syntax is left out)."""
    parsed = []
    for cell in cells:
        try:
            ast.parse(cell)
        except SyntaxError:
            continue
        parsed.append(cell)
    return "\n".join(parsed)


def _width(line: str) -> int:
    return len(line.expandtabs(4))


def _indent(line: str) -> int:
    return _width(line) - _width(line.lstrip())


def _added(before: str, after: str) -> list[str]:
    old, new = before.splitlines(), after.splitlines()
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    return [line for tag, _, _, j1, j2 in matcher.get_opcodes() if tag in ("replace", "insert") for line in new[j1:j2]]


def too_wide(before: str, after: str) -> list[str]:
    """Added lines over the limit (100, or the file's widest line), a moved line's gained indentation aside."""
    old = before.splitlines()
    limit = max([LIMIT, *(_width(line) for line in old)])
    by_text: dict[str, list[str]] = {}
    for line in old:
        by_text.setdefault(line.strip(), []).append(line)
    wide = []
    for line in _added(before, after):
        if _width(line) <= limit:
            continue
        moved = [o for o in by_text.get(line.strip(), []) if _width(line) - _indent(line) + _indent(o) <= limit]
        if not moved:
            wide.append(line)
    return wide


def _strategy_calls(code: str) -> list[ast.Call]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name.endswith("Strategy"):
                calls.append(node)
    return calls


def tangled_strategies(code: str) -> list[str]:
    """Strategy calls holding a nested comprehension, an `isinstance` or a conditional expression."""
    tangled = []
    for call in _strategy_calls(code):
        for node in ast.walk(call):
            comprehension = isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp))
            nested = comprehension and (
                len(node.generators) > 1
                or any(isinstance(inner, (ast.ListComp, ast.GeneratorExp, ast.SetComp))
                       for g in node.generators for inner in ast.walk(g.iter))
            )
            named = isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance"
            if nested or named or isinstance(node, ast.IfExp):
                tangled.append(ast.unparse(call))
                break
    return tangled


def _conditions(code: str) -> Counter[str]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return Counter()
    return Counter(ast.unparse(node.test) for node in ast.walk(tree) if isinstance(node, (ast.If, ast.IfExp)))


def repeated_conditions(before: str, after: str) -> list[str]:
    """Conditions the rewrite writes more often than the script did, and negated copies it adds."""
    old, new = _conditions(before), _conditions(after)
    repeated = [test for test, count in new.items() if count > max(old.get(test, 0), 1)]  # added once is no repeat
    negated = [line.strip() for line in _added(before, after) if re.match(r"\s*(el)?if not \(", line)]
    return repeated + negated


def whitespace_only(before: str, after: str) -> list[str]:
    def count(text: str) -> int:
        return sum(1 for line in text.splitlines() if line and not line.strip())
    return [] if count(after) <= count(before) else [f"{count(before)} -> {count(after)} whitespace-only lines"]


CORPUS = _corpus()


@pytest.mark.parametrize("path", [pytest.param(p, id=p.relative_to(FIXTURES).as_posix()) for p in CORPUS])
def test_every_rewritten_fixture_reads_like_hand_written_code(path):
    migrated = _migrated(path)
    if migrated is None:
        return  # nothing rewritten: the file's own tests say why
    befores, afters = migrated
    befores = befores + [""] * (len(afters) - len(befores))  # a notebook may gain an import cell
    problems = []
    for before, after in zip(befores, afters):
        problems += [f"over the line limit: {line!r}" for line in too_wide(before, after)]
        problems += [f"tangled strategy: {call}" for call in tangled_strategies(after)]
        problems += whitespace_only(before, after)
    # A notebook's condition may move to another cell (the strategy goes where the model is built).
    whole_before, whole_after = "\n".join(befores), "\n".join(afters)
    if len(afters) > 1:
        whole_before, whole_after = _joined_cells(befores), _joined_cells(afters)
    problems += [f"condition written twice: {test}" for test in repeated_conditions(whole_before, whole_after)]
    assert not problems, "\n".join(problems)


def test_the_corpus_is_the_whole_fixture_tree_and_most_of_it_is_rewritten():
    rewritten = [p for p in CORPUS if _migrated(p) is not None]
    assert {p.relative_to(FIXTURES).parts[0] for p in CORPUS} >= {"realworld", "oracle", "codemod", "legacy_scripts"}
    assert len(rewritten) >= 150  # the properties above are checked on real rewrites, not on no-ops


# The checks themselves, on diffs a reviewer would send back.
def test_the_checks_catch_what_a_reviewer_would_send_back():
    before = "model = build()\nif n > 1:\n    p = wrap(model, n)\nelse:\n    p = model\n"
    twice = "if n > 1:\n    s = tf.distribute.MirroredStrategy()\nelse:\n    s = None\nif n > 1:\n    p = model\n"
    assert repeated_conditions(before, twice) == ["n > 1"]
    assert repeated_conditions("if G <= 1:\n    f()\n", "if G <= 1:\n    s = 1\nelse:\n    s = 2\n") == []
    assert repeated_conditions("x = 1\n", "if not (G > 1):\n    s = 1\n")
    long = "s = tf.distribute.MirroredStrategy(" + "x" * 80 + ")\n"
    assert too_wide("a = 1\n", long) == [long.strip()]
    assert too_wide("    " + "y" * 99 + "\n", "        " + "y" * 99 + "\n") == []  # moved one block deeper
    nested = 's = tf.distribute.MirroredStrategy([f"/gpu:{i}" for g in [n] for i in range(g)])\n'
    assert tangled_strategies(nested)
    assert tangled_strategies("s = tf.distribute.MirroredStrategy(d if isinstance(d, list) else None)\n")
    assert not tangled_strategies('s = tf.distribute.MirroredStrategy([f"/gpu:{i}" for i in ids if i < n])\n')
    assert whitespace_only("if a:\n    b()\n\n    c()\n", "if a:\n    b()\n    \n    c()\n")


# Scripts written in the shapes of public 2017-2020 Keras multi-GPU code (fixtures/codemod/house_style),
# each pinned byte for byte, with the findings a reviewer gets alongside the diff.
HOUSE_STYLE_FINDINGS = {
    "cnn_gpu_count_helper.before.py": [],  # the `if` only printed: the replica count says it now
    "forward_kinematics_files.before.py": [],
    "frozen_base_flag.before.py": [],  # `if USE_GPU:` chooses the strategy, once
    "gpu_ids_flag.before.py": [],  # `gpu_ids = [int(g) for g in ...]` is a list of ids: nothing guessed
    "nuclei_unet.before.py": [],  # `# For more GPUs` goes above the strategy choice it described
    "tabbed_static_builder.before.py": [],  # both branches build the same model: written once
    # data arrays made between the model and its compile go after the scope; a section banner
    # heads the strategy line, not the scope's first statement
    "unet_stages_data_and_banners.before.py": [],
}
# A call alone in each branch of an `if` inside the guard (`if K.backend() == 'mxnet':`): reported, untouched.
HOUSE_STYLE_REPORTED = {"resnet_backend_switch.unchanged.py": ["MGPU103", "MGPU103"]}


@pytest.mark.parametrize("before", pairs("house_style"), ids=lambda p: p.name)
def test_house_style_pairs(before):
    assert check_pair(before) == HOUSE_STYLE_FINDINGS[before.name]


@pytest.mark.parametrize("path", unchanged("house_style"), ids=lambda p: p.name)
def test_house_style_scripts_left_unchanged_are_reported(path):
    assert check_unchanged(path) == HOUSE_STYLE_REPORTED[path.name]


def test_every_house_style_script_is_listed():
    assert sorted(p.name for p in pairs("house_style")) == sorted(HOUSE_STYLE_FINDINGS)
    assert sorted(p.name for p in unchanged("house_style")) == sorted(HOUSE_STYLE_REPORTED)
