"""codemod/fixers/template_recovery.py: before/after pairs and left-unchanged-but-reported cases."""

import pytest

from codemod_fixtures import check_pair, pairs


@pytest.mark.parametrize("before", pairs("template_recovery"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    check_pair(before)


def test_unrecognised_layer_index_is_reported_not_rewritten():
    from codemod_fixtures import ROOT

    codes = check_pair(ROOT / "template_recovery" / "layers_minus_two.before.py")
    assert codes == ["MGPU301"]
