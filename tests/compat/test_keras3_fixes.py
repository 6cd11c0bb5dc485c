"""Where plain MirroredStrategy code is broken (Keras 3 bugs, each described at its test), the shim is not.

Each fix has a shim test and a companion `test_plain_strategy_*` running the same steps on a
model built natively under `tf.distribute.MirroredStrategy()`: the companion asserts the
failure, proving the fix matters (if a Keras release fixes the bug, the companion fails and
the fix can go).
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import multi_gpu_compat as compat
from compat_helpers import N_REPLICAS, data, keras3_older_than, mlp, numpy_forward, replica_values

# Keras 3.3-3.7 average the replicas' losses without weighting them by their rows, and
# divide an empty replica's loss 0/0: with a batch that does not split evenly, the loss
# *reported* is not the global mean (NaN with an empty replica). Training is unaffected
# (the shim averages gradients); the shim leaves that reporting as the release has it.
UNWEIGHTED_REPLICA_LOSSES = keras3_older_than((3, 8))
# Validation during `fit` keeps that unweighted average until Keras 3.11 (3.9 measured).
UNWEIGHTED_VALIDATION_LOSSES = keras3_older_than((3, 11))

@pytest.fixture
def keras3_plain(legacy_keras):
    if legacy_keras:
        pytest.skip("this failure is specific to Keras 3; tf_keras runs it correctly")


def shifted_data(rows, seed=1):
    """Rows that differ a lot from replica to replica (row i shifted by i)."""
    x, y = data(rows, seed=seed)
    return x + np.arange(rows, dtype="float32")[:, None], y


def bn_model(K, name, plain):
    K.utils.set_random_seed(1)  # reproducible weights: no dead ReLU hiding the per-replica drift
    if plain:
        with tf.distribute.MirroredStrategy().scope():  # 4 simulated GPUs
            model = mlp(K, name=name, bn=True)
            model.compile(optimizer=K.optimizers.SGD(0.0), loss="mse")
        return model, model
    template = mlp(K, name=name, bn=True)
    parallel = compat.multi_gpu_model(template, gpus=N_REPLICAS)
    parallel.compile(optimizer=K.optimizers.SGD(0.0), loss="mse")
    return template, parallel


def hidden(model, x):
    w1, b1 = model.get_layer(f"{model.name}_hidden").get_weights()
    return np.maximum(x @ w1 + b1, 0)


def per_replica_predictions_of_one_row(model, x_row):
    """Predicts the same row on every replica (global batch = N rows, one per replica)."""
    rows = np.repeat(x_row[None], N_REPLICAS, axis=0)
    return model.predict(rows, batch_size=N_REPLICAS, verbose=0)


# --- BatchNormalization moving statistics --------------------------------------------------

def test_bn_statistics_synced_across_replicas_and_saved(keras_module, legacy_keras, tmp_path):
    K = keras_module
    template, parallel = bn_model(K, "bn_sync", plain=False)
    x, y = shifted_data(2 * N_REPLICAS)
    parallel.fit(x, y, batch_size=2 * N_REPLICAS, epochs=1, verbose=0, shuffle=False)
    bn = template.get_layer("bn_sync_bn")
    # One step from zero with momentum 0.99 (lr 0, so the hidden layer is fixed): the moving
    # mean is 0.01 x the mean of the whole global batch, as on one device.
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.01 * hidden(template, x).mean(axis=0),
                               rtol=1e-4, atol=1e-6)
    if not legacy_keras:  # Keras 3: mirrored, one value on every replica
        for values in (replica_values(parallel.distribute_strategy, bn.moving_mean),
                       replica_values(parallel.distribute_strategy, bn.moving_variance)):
            for v in values[1:]:
                np.testing.assert_allclose(v, values[0], rtol=1e-6)
    # Every replica predicts the same thing for the same row.
    preds = per_replica_predictions_of_one_row(parallel, x[0])
    np.testing.assert_allclose(preds, np.repeat(preds[:1], N_REPLICAS, axis=0), rtol=1e-5, atol=1e-6)
    # The saved file holds those statistics, and predicts like the parallel model.
    path = tmp_path / ("bn.h5" if legacy_keras else "bn.keras")
    template.save(path)
    loaded = K.models.load_model(path, compile=False)
    lbn = loaded.get_layer("bn_sync_bn")
    np.testing.assert_allclose(lbn.moving_mean.numpy(), bn.moving_mean.numpy(), rtol=1e-6)
    np.testing.assert_allclose(lbn.moving_variance.numpy(), bn.moving_variance.numpy(), rtol=1e-6)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), parallel.predict(x, verbose=0), rtol=1e-5, atol=1e-5)


@pytest.mark.slow  # companion: proves plain MirroredStrategy fails; the fix has a fast test
def test_plain_strategy_bn_statistics_drift_apart(keras_module):
    model, _ = bn_model(keras_module, "plain_bn_sync", plain=True)
    x, y = shifted_data(2 * N_REPLICAS)
    model.fit(x, y, batch_size=2 * N_REPLICAS, epochs=1, verbose=0, shuffle=False)
    preds = per_replica_predictions_of_one_row(model, x[0])
    assert not np.allclose(preds, np.repeat(preds[:1], N_REPLICAS, axis=0), rtol=1e-5, atol=1e-6)


# --- uneven first evaluation batch ---------------------------------------------------------

@pytest.mark.slow  # trains; the empty-replica fix has a fast test
def test_uneven_first_evaluation_batch(keras_module):
    K = keras_module
    template = mlp(K, name="uneven_eval")
    parallel = compat.multi_gpu_model(template, gpus=N_REPLICAS)
    parallel.compile(optimizer="sgd", loss="mse")
    x, y = data(9, seed=2)
    expected = numpy_forward(template, x)
    loss = parallel.evaluate(x, y, batch_size=9, verbose=0)  # split [3, 2, 2, 2]: the first call
    if UNWEIGHTED_REPLICA_LOSSES:
        assert np.isfinite(loss)
    else:
        np.testing.assert_allclose(loss, np.mean((expected - y) ** 2), rtol=1e-4)
    # Uneven validation data during fit, on a fresh model, too.
    template2 = mlp(K, name="uneven_val")
    parallel2 = compat.multi_gpu_model(template2, gpus=N_REPLICAS)
    parallel2.compile(optimizer="sgd", loss="mse")
    xt, yt = data(8, seed=3)
    hist = parallel2.fit(xt, yt, batch_size=8, epochs=1, verbose=0, validation_data=(x, y))
    val = np.mean((numpy_forward(template2, x) - y) ** 2)
    if UNWEIGHTED_VALIDATION_LOSSES:
        assert np.isfinite(hist.history["val_loss"][-1])
    else:
        np.testing.assert_allclose(hist.history["val_loss"][-1], val, rtol=1e-4)


@pytest.mark.skipif(keras3_older_than((3, 5)),
                    reason="Keras before 3.5 does not build the model from the first distributed batch")
def test_plain_strategy_uneven_first_evaluation_batch_fails(keras_module, keras3_plain):
    with tf.distribute.MirroredStrategy().scope():
        model = mlp(keras_module, name="plain_uneven_eval")
        model.compile(optimizer="sgd", loss="mse")
    x, y = data(9, seed=2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="AddN"):
        model.evaluate(x, y, batch_size=9, verbose=0)


# --- predict_on_batch ----------------------------------------------------------------------

@pytest.mark.parametrize("rows", [1, 5])
def test_predict_on_batch_one_row_per_input_row(keras_module, rows):
    template = mlp(keras_module, name=f"pob_{rows}")
    parallel = compat.multi_gpu_model(template, gpus=N_REPLICAS)
    x, _ = data(rows, seed=4)
    out = parallel.predict_on_batch(x)
    assert out.shape == (rows, 2)
    np.testing.assert_allclose(out, numpy_forward(template, x), rtol=1e-5, atol=1e-5)


def test_plain_strategy_predict_on_batch_returns_replicas_times_rows(keras_module, keras3_plain):
    with tf.distribute.MirroredStrategy().scope():
        model = mlp(keras_module, name="plain_pob")
    x, _ = data(5, seed=4)
    assert model.predict_on_batch(x).shape[0] == N_REPLICAS * 5


# --- a last batch that leaves replicas empty, with BatchNormalization ----------------------

def _all_finite(model):
    return all(np.isfinite(w).all() for w in model.get_weights())


def test_empty_replica_batch_never_nan(keras_module):
    K = keras_module
    template = mlp(K, name="empty_replica", bn=True)
    parallel = compat.multi_gpu_model(template, gpus=N_REPLICAS)
    parallel.compile(optimizer=K.optimizers.SGD(0.01), loss="mse")
    x, y = shifted_data(10)
    try:
        parallel.fit(x, y, batch_size=4, epochs=1, verbose=0, shuffle=False)  # last batch: 2 rows
        parallel.train_on_batch(x[:3], y[:3])
    except ValueError as err:  # refusing with a clear error is allowed; silent NaN is not
        assert "batch" in str(err).lower()
    assert _all_finite(template), [w for w in template.get_weights() if not np.isfinite(w).all()]
    out = parallel.predict(x[:2], batch_size=2, verbose=0)
    assert out.shape == (2, 2) and np.isfinite(out).all()


@pytest.mark.slow  # companion: proves plain MirroredStrategy fails; the fix has a fast test
@pytest.mark.skipif(keras3_older_than((3, 5)), reason="Keras before 3.5 keeps BatchNormalization statistics per "
                    "replica: the NaN stays on the empty replica")
def test_plain_strategy_empty_replica_batch_gives_nan(keras_module, keras3_plain):
    model, _ = bn_model(keras_module, "plain_empty_replica", plain=True)
    model.compile(optimizer=keras_module.optimizers.SGD(0.01), loss="mse")
    x, y = shifted_data(10)
    model.fit(x, y, batch_size=4, epochs=1, verbose=0, shuffle=False)
    assert not _all_finite(model)


@pytest.mark.slow  # trains twice; the fixes themselves have fast tests
def test_template_keeps_the_fixes_on_its_own(keras_module):
    """After wrapping, the template is a distributed model too: it must behave as well."""
    K = keras_module
    template = mlp(K, "alone", bn=True)
    template.compile(K.optimizers.SGD(0.01), "mse")
    compat.multi_gpu_model(template, gpus=N_REPLICAS)
    x, y = data(rows=9)
    assert template.predict_on_batch(x[:3]).shape == (3, 2)
    template.evaluate(x, y, batch_size=9, verbose=0)  # uneven first batch
    template.fit(x, y, batch_size=9, epochs=1, verbose=0)
    loss = template.train_on_batch(x[:6], y[:6])  # split [2, 2, 2, 0]
    assert UNWEIGHTED_REPLICA_LOSSES or np.isfinite(loss).all()
    assert _all_finite(template)


@pytest.mark.slow  # trains twice; the fixes themselves have fast tests
def test_mixed_precision_with_an_optimizer_object(keras_module, legacy_keras):
    K = keras_module
    K.mixed_precision.set_global_policy("mixed_float16")
    try:
        inp = K.Input((3,))
        template = K.Model(inp, K.layers.Dense(2, dtype="float32")(K.layers.Dense(4)(inp)))
        parallel = compat.multi_gpu_model(template, gpus=2)
        optimizer = K.optimizers.Adam(1e-3)  # made outside any scope, wrapped in loss scaling
        parallel.compile(optimizer=optimizer, loss="mse")
        x, y = data(rows=8)
        history = parallel.fit(x, y, batch_size=4, epochs=2, verbose=0)
        assert np.isfinite(history.history["loss"]).all()
    finally:
        K.mixed_precision.set_global_policy("float32")


def test_sequential_output_name_keys_loss_dicts(keras_module):
    K = keras_module
    template = K.Sequential([K.Input((3,)), K.layers.Dense(4), K.layers.Dense(2, name="out")])
    parallel = compat.multi_gpu_model(template, gpus=2)
    assert list(parallel.output_names) == ["out"]
    parallel.compile(loss={"out": "mse"}, optimizer="sgd")
    x, y = data(rows=8)
    parallel.fit(x, y, batch_size=4, verbose=0)
