"""codemod/fixers/checkpoints.py: before/after pairs and left-unchanged-but-reported cases."""

import pytest

from codemod_fixtures import check_pair, check_unchanged, pairs, unchanged


@pytest.mark.parametrize("before", pairs("checkpoints"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    check_pair(before)


@pytest.mark.parametrize("path", unchanged("checkpoints"), ids=lambda p: p.name)
def test_unchanged_but_reported(path):
    check_unchanged(path)


def test_callbacks_unwrapping_the_parallel_model_are_reported_where_they_unwrap():
    from codemod import transform_source
    from codemod_fixtures import ROOT

    findings = transform_source((ROOT / "checkpoints" / "callback_unwraps.unchanged.py").read_bytes()).findings
    assert [(f.line, f.code) for f in findings] == [(12, "MGPU304"), (17, "MGPU304")]
    assert "`self.model.layers[-(self.num_outputs + 1)]`" in findings[0].message
    assert "ModelCheckpoint(filepath)" in findings[0].message and "self.model" in findings[0].message
