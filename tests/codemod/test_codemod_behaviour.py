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
    # Each message names its own method's effect and replacement (the template is under the strategy too).
    assert [f.format() for f in _findings("on_batch.before.py")] == [
        'on_batch.before.py:10:8: MGPU203 `parallel.train_on_batch(...)` runs on `model`, which is now built under'
        ' MirroredStrategy; there Keras 3 gives every replica the whole batch passed to `train_on_batch` (with 2'
        ' GPUs each step computes on the 8 samples of an 8-sample batch twice). Use `model.fit(x, y,'
        ' batch_size=len(x), epochs=1, verbose=0)` (one step over the whole batch) instead.',
        'on_batch.before.py:11:8: MGPU203 `parallel.predict_on_batch(...)` runs on `model`, which is now built under'
        ' MirroredStrategy; there Keras 3 gives every replica the whole batch passed to `predict_on_batch` (with 2'
        ' GPUs, `predict_on_batch` on 8 inputs returns 16 rows). Use `model.predict(x, batch_size=len(x),'
        ' verbose=0)` instead.',
        'on_batch.before.py:12:9: MGPU203 `model.test_on_batch(...)` runs on `model`, which is now built under'
        ' MirroredStrategy; there Keras 3 gives every replica the whole batch passed to `test_on_batch` (with 2 GPUs'
        ' the 8 samples of an 8-sample batch are evaluated twice). Use `model.evaluate(x, y, batch_size=len(x),'
        ' verbose=0)` instead.',
    ]


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
    assert [f.format() for f in transform_source(source, "table.py").findings] == [
        'table.py:4:12: MGPU203 `m.predict_on_batch(...)` receives `parallel` (line 9), which is now built under'
        ' MirroredStrategy; there Keras 3 gives every replica the whole batch passed to `predict_on_batch`. Use'
        ' `m.predict(x, batch_size=len(x), verbose=0)` instead.',
    ]
