"""codemod/fixers/fallbacks.py: before/after pairs and left-unchanged-but-reported cases."""

import ast

import pytest

from codemod_fixtures import ROOT, check_pair, check_unchanged, pairs, unchanged


@pytest.mark.parametrize("before", pairs("fallbacks"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    check_pair(before)


@pytest.mark.parametrize("path", unchanged("fallbacks"), ids=lambda p: p.name)
def test_unchanged_but_reported(path):
    check_unchanged(path)


def test_kept_structure_keeps_user_statements_and_reports_the_fallback():
    before = ROOT / "fallbacks" / "kept_structure.before.py"
    codes = check_pair(before)
    after = before.with_name("kept_structure.after.py").read_text()
    assert 'logging.info("using %d GPUs", n_gpus)' in after
    assert 'print("parallel")  # keep me' in after
    assert "except ValueError:" in after
    assert codes.count("MGPU106") == 1  # the try/except with another branch; the bare `if` needs no review


def test_if_else_guard_keeps_both_prints():
    after = (ROOT / "fallbacks" / "if_else_guard.after.py").read_text()
    assert 'print("[INFO] training with {} GPUs...".format(G))' in after
    assert 'print("[INFO] training with 1 GPU...")' in after


def _plain_calls(source: bytes) -> list[str]:
    """Call statements on a plain function or `logging`/`logger` (print, notify...), unparsed: renames never touch them."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            func = node.value.func
            plain = isinstance(func, ast.Name) or (
                isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in {"logging", "logger"}
            )
            if plain and "multi_gpu_model" not in ast.unparse(node):
                found.append(ast.unparse(node))
    return found


@pytest.mark.parametrize("before", sorted(ROOT.glob("*/*.before.py")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_user_statement_is_dropped(before):
    """Fallbacks (and every other rewrite) never drop a print/logging/other call statement."""
    after = before.with_name(before.name.replace(".before.py", ".after.py")).read_bytes()
    kept = _plain_calls(after)
    lost = [s for s in _plain_calls(before.read_bytes()) if s not in kept]
    assert not lost, f"statements dropped: {lost}"
