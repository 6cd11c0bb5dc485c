"""codemod/strategy_expression.py: before/after pairs and left-unchanged-but-reported cases."""

import pytest

from codemod_fixtures import check_pair, check_unchanged, pairs, unchanged


@pytest.mark.parametrize("before", pairs("gpus"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    check_pair(before)


@pytest.mark.parametrize("path", unchanged("gpus"), ids=lambda p: p.name)
def test_unchanged_but_reported(path):
    check_unchanged(path)


def _devices(expression: str, gpus, present: int) -> list[str]:
    """Evaluates an emitted MirroredStrategy(...) argument with `present` fake GPUs."""
    import types

    arg = expression.split("MirroredStrategy(", 1)[1][:-1]
    config = types.SimpleNamespace(list_physical_devices=lambda kind: list(range(present)))
    fake_tf = types.SimpleNamespace(config=config)
    return eval(arg, {"tf": fake_tf, "ids": gpus}) or None


def test_gpus_variable_may_hold_a_count_or_a_list():
    from codemod_fixtures import ROOT

    out = (ROOT / "gpus" / "gpu_ids_variable.after.py").read_text()
    line = next(l.strip() for l in out.splitlines() if "for g in [ids]" in l)
    expression = line.split(" = ", 1)[1]
    assert _devices(expression, [0, 1], 4) == ["/gpu:0", "/gpu:1"]
    assert _devices(expression, [1, 3], 2) == ["/gpu:1"]
    assert _devices(expression, 3, 2) == ["/gpu:0", "/gpu:1"]
    assert _devices(expression, 2, 0) is None
    # argparse `type=int` and a module-level int keep the short slice form
    assert "[:args.gpus] or None" in out
