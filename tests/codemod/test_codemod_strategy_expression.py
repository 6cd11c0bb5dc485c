"""codemod/strategy_expression.py: before/after pairs and left-unchanged-but-reported cases."""

import types

import pytest

from codemod_fixtures import ROOT, check_pair, check_unchanged, pairs, strategy_devices, unchanged


@pytest.mark.parametrize("before", pairs("gpus"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    check_pair(before)


@pytest.mark.parametrize("path", unchanged("gpus"), ids=lambda p: p.name)
def test_unchanged_but_reported(path):
    check_unchanged(path)


def test_gpus_variable_may_hold_a_count_or_a_list():
    out = (ROOT / "gpus" / "gpu_ids_variable.after.py").read_text()
    (first, second) = [line for line in out.splitlines() if "MirroredStrategy(" in line]
    assert strategy_devices(first, 4, ids=[0, 1]) == ["/gpu:0", "/gpu:1"]
    assert strategy_devices(first, 2, ids=[1, 3]) == ["/gpu:1"]
    assert strategy_devices(first, 2, ids=3) == ["/gpu:0", "/gpu:1"]
    assert strategy_devices(first, 0, ids=2) is None
    # argparse `type=int` keeps the short slice form
    args = types.SimpleNamespace(gpus=1)
    assert second.endswith("[:args.gpus] or None)")
    assert strategy_devices(second, 4, args=args) == ["/gpu:0"]
