"""codemod/fixers/behaviour.py: the rewrite goes ahead; TF1-session inference, which bypasses the
strategy, is reported where it is, with what to use instead. `*_on_batch` calls on the model keep the
site from being rewritten (a precondition of fixers/strategy_scope.py, MGPU203), pinned here too."""

import pytest

from multi_gpu_codemod import transform_source
from codemod_fixtures import ROOT, check_pair, pairs


@pytest.mark.parametrize("before", pairs("behaviour"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    check_pair(before)


def _findings(name):
    return transform_source((ROOT / "behaviour" / name).read_bytes(), name).findings


def test_on_batch_calls_on_the_model_keep_the_site_and_name_every_call_with_its_replacement():
    name = "on_batch_calls.unchanged.py"
    source = (ROOT / "strategy_scope" / name).read_bytes()
    result = transform_source(source, name)
    assert result.output == source
    assert [f.format() for f in result.findings] == [
        'on_batch_calls.unchanged.py:7:12: MGPU203 `multi_gpu_model(...)` left as it is: '
        '`parallel.train_on_batch(...)` (line 10), `parallel.predict_on_batch(...)` (line 11) and '
        '`model.test_on_batch(...)` (line 12) would run on the migrated model, and under MirroredStrategy Keras 3 '
        'gives every replica the whole batch passed to `train_on_batch` (each step computes on every '
        'sample of the batch once per GPU). Replace each with its whole-batch form, e.g. `parallel.fit(x, y, '
        'batch_size=len(x), epochs=1, verbose=0)` (one step over the whole batch; it returns a History: what '
        '`train_on_batch` returned is `h.history["loss"][-1]`, and each metric is under its own name) for '
        '`train_on_batch` (for a list '
        'of inputs, `batch_size=len(x[0])`), and rerun.',
    ]
    assert [(s.line, s.status, s.codes) for s in result.sites] == [(7, "reported", ("MGPU203",))]


def test_session_inference_is_reported_once_per_statement_and_plain_tensor_reads_are_not():
    found = [(f.line, f.code) for f in _findings("session_inference.before.py")]
    assert found == [(8, "MGPU204"), (9, "MGPU204")]


def test_on_batch_on_a_model_the_codemod_did_not_migrate_is_not_reported():
    source = b"from keras.models import load_model\nm = load_model('a.h5')\nm.train_on_batch(x, y)\n"
    assert transform_source(source).findings == []


def test_on_batch_inside_a_helper_given_the_model_keeps_the_site():
    source = (b"from keras.utils import multi_gpu_model\n\ndef step(m, x):\n    return m.predict_on_batch(x)\n\n"
              b"model = build()\nparallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n"
              b"step(parallel, x)\n"
              b"step(other, x)\n")
    result = transform_source(source, "table.py")
    assert result.output == source
    assert [f.format() for f in result.findings] == [
        'table.py:7:12: MGPU203 `multi_gpu_model(...)` left as it is: `m.predict_on_batch(...)` (line 4, given the '
        'model on line 9) would run on the migrated model, and under MirroredStrategy Keras 3 gives every replica '
        'the whole batch passed to `predict_on_batch` (`predict_on_batch` returns the rows of its inputs once '
        'per GPU). Replace each with its whole-batch form, e.g. `m.predict(x, batch_size=len(x), '
        'verbose=0)` for `predict_on_batch` (for a list of inputs, `batch_size=len(x[0])`), and rerun.',
    ]
