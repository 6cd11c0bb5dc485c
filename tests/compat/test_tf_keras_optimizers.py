"""Keras 2 specifics (tf_keras, Keras 2.12-2.15): legacy optimizers (`tf.keras.optimizers.legacy.*`) and
resumable files."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import multi_gpu_compat as compat
from multi_gpu_compat import backend
from compat_helpers import data, mlp, run_without_project

pytestmark = pytest.mark.skipif(
    not backend.uses_keras2(),
    reason="Keras 2 behaviour: Keras 3 has no legacy optimizers, and cannot reload its own "
    "compiled .h5 files, so the Keras 3 parallel model saves the template uncompiled",
)


def _legacy_optimizers():
    # Through `tf.keras`: Keras 2.12's `import keras` is its source tree, whose
    # `optimizers.legacy` package does not re-export the classes.
    return tf.keras.optimizers.legacy


def test_legacy_optimizer_on_the_parallel_model(keras_module):
    K = keras_module
    parallel = compat.multi_gpu_model(mlp(K, "legacy_sgd"), gpus=2)
    # The TF 2.0-2.10 spelling of the time: `lr` and `decay` live on the legacy class.
    parallel.compile(loss="mse", optimizer=_legacy_optimizers().SGD(lr=0.05, decay=1e-6))
    x, y = data(rows=16)
    losses = parallel.fit(x, y, batch_size=8, epochs=3, verbose=0).history["loss"]
    assert losses[-1] < losses[0]


def test_template_trained_with_a_legacy_optimizer_keeps_its_slots(keras_module):
    K = keras_module
    template = mlp(K, "legacy_adam")
    template.compile(loss="mse", optimizer=_legacy_optimizers().Adam(0.01))
    x, y = data(rows=16)
    template.fit(x, y, batch_size=8, epochs=2, verbose=0)
    kernel = template.get_layer("legacy_adam_hidden").kernel
    momentum = template.optimizer.get_slot(kernel, "m").numpy().copy()
    steps = int(template.optimizer.iterations.numpy())

    parallel = compat.multi_gpu_model(template, gpus=2)
    kernel = template.get_layer("legacy_adam_hidden").kernel
    np.testing.assert_array_equal(template.optimizer.get_slot(kernel, "m").numpy(), momentum)
    parallel.compile(loss="mse", optimizer=template.optimizer)
    parallel.fit(x, y, batch_size=8, epochs=1, verbose=0)
    assert int(template.optimizer.iterations.numpy()) == steps + 2


def test_file_saved_through_parallel_model_resumes_training(keras_module, tmp_path):
    """Keras 2.2+ `parallel.save` / ModelCheckpoint files were compiled: load_model + fit resumed."""
    K = keras_module
    parallel = compat.multi_gpu_model(mlp(K, "resume"), gpus=2)
    parallel.compile(optimizer="adam", loss="mse")
    x, y = data(rows=16)
    parallel.fit(x, y, batch_size=8, epochs=2, verbose=0)
    parallel.save(tmp_path / "ckpt.h5")
    result = run_without_project(
        f"""
        import importlib, numpy as np
        K = importlib.import_module({K.__name__!r})
        model = K.models.load_model({str(tmp_path / 'ckpt.h5')!r})
        assert model.name == "resume", model.name
        print("steps", int(model.optimizer.iterations.numpy()))
        x = np.ones((8, 3), "float32"); y = np.zeros((8, 2), "float32")
        model.fit(x, y, verbose=0)
        print("steps", int(model.optimizer.iterations.numpy()))
        """,
        cwd=tmp_path,
        env={"TF_USE_LEGACY_KERAS": "1"},
    )
    assert result.stdout.split() == ["steps", "4", "steps", "5"]
