"""codemod/fixers/behaviour.py: the rewrite goes ahead; calls that behave differently under the
strategy are reported where they are, with what to use instead."""

import pytest

from multi_gpu_codemod import transform_source
from codemod_fixtures import ROOT, check_pair, pairs


@pytest.mark.parametrize("before", pairs("behaviour"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    check_pair(before)


def _findings(name):
    return transform_source((ROOT / "behaviour" / name).read_bytes(), name).findings


def test_every_on_batch_call_on_the_migrated_model_is_reported_with_its_replacement():
    found = {(f.line, f.code): f.message for f in _findings("on_batch.before.py")}
    assert set(found) == {(10, "MGPU203"), (11, "MGPU203"), (12, "MGPU203")}
    assert "`parallel.train_on_batch(...)`" in found[(10, "MGPU203")]
    assert "model.fit(x, y, batch_size=len(x)" in found[(10, "MGPU203")]
    assert "model.predict(x, batch_size=len(x)" in found[(11, "MGPU203")]
    assert "`model.test_on_batch(...)`" in found[(12, "MGPU203")]  # the template is under the strategy too
    # each message describes its own method's effect, not another's
    assert "computes on the 8 samples" in found[(10, "MGPU203")] and "predict_on_batch" not in found[(10, "MGPU203")]
    assert "returns 16 rows" in found[(11, "MGPU203")]
    assert "evaluated twice" in found[(12, "MGPU203")] and "predict_on_batch" not in found[(12, "MGPU203")]


def test_session_inference_is_reported_once_per_statement_and_plain_tensor_reads_are_not():
    found = [(f.line, f.code) for f in _findings("session_inference.before.py")]
    assert found == [(8, "MGPU204"), (9, "MGPU204")]


def test_on_batch_on_a_model_the_codemod_did_not_migrate_is_not_reported():
    source = b"from keras.models import load_model\nm = load_model('a.h5')\nm.train_on_batch(x, y)\n"
    assert transform_source(source).findings == []


def test_on_batch_inside_a_helper_given_the_migrated_model_is_reported_there():
    source = (b"from keras.utils import multi_gpu_model\n\ndef step(m, x):\n    return m.predict_on_batch(x)\n\n"
              b"model = build()\nparallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n"
              b"step(parallel, x)\n"
              b"step(other, x)\n")
    (finding,) = transform_source(source).findings
    assert (finding.line, finding.code) == (4, "MGPU203") and "receives `parallel` (line 9)" in finding.message
