"""One concise notice per process through `warnings`, silenceable the usual way."""

from __future__ import annotations

import warnings

import pytest

import multi_gpu_compat as compat
from multi_gpu_compat import notices
from compat_helpers import mlp, run


@pytest.fixture
def fresh_notices(monkeypatch):
    monkeypatch.setattr(notices, "_issued", set())


def _shim_warnings(caught):
    return [w for w in caught if issubclass(w.category, notices.MultiGPUCompatWarning)]


def test_served_notice_once_pointing_at_caller(keras_module, fresh_notices):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parallel = compat.multi_gpu_model(mlp(keras_module, name="notice_a"), gpus=2)
        compat.multi_gpu_model(mlp(keras_module, name="notice_b"), gpus=3)
    shim = _shim_warnings(caught)
    assert len(shim) == 1, [str(w.message) for w in shim]
    message = str(shim[0].message)
    assert "multi_gpu_model" in message and "MIGRATION.md" in message and "codemod" in message
    assert shim[0].filename == __file__  # points at the user's line, not into the shim
    assert issubclass(notices.MultiGPUCompatWarning, UserWarning)
    assert parallel is not None


def test_save_notice_once(keras_module, legacy_keras, fresh_notices, tmp_path):
    parallel = compat.multi_gpu_model(mlp(keras_module, name="notice_save"), gpus=2)
    ext = ".h5" if legacy_keras else ".keras"
    wext = ".h5" if legacy_keras else ".weights.h5"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parallel.save(tmp_path / f"a{ext}")
        parallel.save(tmp_path / f"b{ext}")
        parallel.save_weights(tmp_path / f"c{wext}")
    shim = _shim_warnings(caught)
    assert len(shim) == 1, [str(w.message) for w in shim]
    assert "template" in str(shim[0].message)


@pytest.mark.parametrize("category", [notices.MultiGPUCompatWarning, UserWarning])
def test_notice_silenced_by_warning_filter(keras_module, fresh_notices, category, tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=category)
        parallel = compat.multi_gpu_model(mlp(keras_module, name="notice_silent"), gpus=2)
        parallel.save_weights(tmp_path / ("w.h5" if keras_module.__name__ == "tf_keras" else "w.weights.h5"))
    assert _shim_warnings(caught) == []


def test_warning_class_exported_as_documented():
    # notices.py documents `warnings.filterwarnings("ignore", category=compat.MultiGPUCompatWarning)`.
    assert compat.MultiGPUCompatWarning is notices.MultiGPUCompatWarning


@pytest.mark.slow  # a TensorFlow child
def test_one_notice_per_process_with_default_filters():
    proc = run("""
import tensorflow as tf
from keras.utils import multi_gpu_model
def build():
    inp = tf.keras.Input((3,))
    return tf.keras.Model(inp, tf.keras.layers.Dense(2)(inp))
a = multi_gpu_model(build(), gpus=2)
b = tf.keras.utils.multi_gpu_model(build(), gpus=2)
c = multi_gpu_model(build())
print("NOTICE-OK")
""", env={"MULTI_GPU_COMPAT_SIMULATE_GPUS": "2"}, timeout=120)
    assert "NOTICE-OK" in proc.stdout
    assert proc.stderr.count("MultiGPUCompatWarning") == 1, proc.stderr[-3000:]
    assert "<string>:7: MultiGPUCompatWarning" in proc.stderr  # the script's own line
