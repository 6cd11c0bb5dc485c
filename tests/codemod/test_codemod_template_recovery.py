"""codemod/fixers/template_recovery.py: before/after pairs and left-unchanged-but-reported cases."""

import pytest

from codemod_fixtures import check_pair, pairs
from multi_gpu_codemod import transform_source


@pytest.mark.parametrize("before", pairs("template_recovery"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    check_pair(before)


def test_unrecognised_layer_index_is_reported_not_rewritten():
    from codemod_fixtures import ROOT

    codes = check_pair(ROOT / "template_recovery" / "layers_minus_two.before.py")
    assert codes == ["MGPU301"]


def test_minus_three_is_the_template_only_when_two_outputs_are_seen():
    from multi_gpu_codemod import transform_source
    from codemod_fixtures import ROOT

    known = transform_source((ROOT / "template_recovery" / "two_outputs_minus_three.before.py").read_bytes())
    assert b'model.save("two_outputs.h5")' in known.output and known.findings == []
    unknown = transform_source((ROOT / "template_recovery" / "unknown_outputs.before.py").read_bytes())
    (finding,) = unknown.findings
    assert finding.code == "MGPU301" and "use `model`" in finding.message


@pytest.mark.parametrize("name", ["sequential", "sequential_3", "functional_1", "model"])
def test_a_name_keras_gives_a_model_itself_looked_up_in_the_wrapper_is_the_template(name):
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\nparallel = multi_gpu_model(model, gpus=2)\n"
        f"parallel.compile('adam', 'mse')\nparallel.get_layer('{name}').save_weights('w.weights.h5')\n"
    )
    result = transform_source(source.encode())
    assert "model.save_weights('w.weights.h5')" in result.output.decode()
    assert "MGPU301" not in [f.code for f in result.findings]
