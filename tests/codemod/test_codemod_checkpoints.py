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
    from multi_gpu_codemod import transform_source
    from codemod_fixtures import ROOT

    findings = transform_source((ROOT / "checkpoints" / "callback_unwraps.unchanged.py").read_bytes()).findings
    assert [(f.line, f.code) for f in findings] == [(12, "MGPU304"), (17, "MGPU304")]
    assert "`self.model.layers[-(self.num_outputs + 1)]`" in findings[0].message
    assert "ModelCheckpoint(filepath)" in findings[0].message and "self.model" in findings[0].message


def test_helpers_that_save_what_they_unwrap_are_reported_anywhere():
    from multi_gpu_codemod import transform_source

    source = (b"import os\n\ndef save_single(parallel_model, path):\n    parallel_model.layers[-2].save(path)\n\n"
              b"def features(model):\n    return model.layers[-2].output  # a layer's output: not unwrapping\n")
    result = transform_source(source)
    (finding,) = result.findings
    assert result.output == source and (finding.line, finding.code) == (4, "MGPU304")
    assert "Save `parallel_model` itself" in finding.message


def test_a_callback_only_given_to_migrated_fits_gets_self_model_where_the_index_is_known():
    from multi_gpu_codemod import transform_source
    from codemod_fixtures import ROOT

    # check_pair pins `self.model.save(...)` where the unwrapping index is a constant; `-(self.n + 1)`
    # depends on a value the codemod does not know: left and reported.
    before = ROOT / "checkpoints" / "callback_given_to_migrated_fit.before.py"
    assert check_pair(before) == ["MGPU304"]
    assert [f.line for f in transform_source(before.read_bytes()).findings] == [17]
