"""The returned model: runs on all replicas, shares variables with the template, keeps the
original's layer layout, and accepts the original's arguments."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import multi_gpu_compat as compat
from compat_helpers import N_REPLICAS, data, mlp, numpy_forward, replica_values, two_in_two_out, weights_equal

BATCH = 2 * N_REPLICAS  # 2 rows per replica


def row_recorder(K, path):
    """A layer that logs (replica id, rows it received) to `path` for every call it runs."""

    class RecordRows(K.layers.Layer):
        def call(self, inputs):
            ctx = tf.distribute.get_replica_context()
            replica = ctx.replica_id_in_sync_group if ctx is not None else -1
            tf.print("rows", replica, tf.shape(inputs)[0], output_stream="file://" + path)
            return inputs

    return RecordRows(name="record_rows")


# --- every replica sees batch / N rows ---------------------------------------------------

@pytest.fixture(scope="module")
def recording(keras_module, tmp_path_factory):
    K = keras_module
    path = str(tmp_path_factory.mktemp("rows") / "rows.log")
    inp = K.Input((3,), name="rec_in")
    out = K.layers.Dense(2, name="rec_out")(row_recorder(K, path)(inp))
    template = K.Model(inp, out, name="recording_template")
    parallel = compat.multi_gpu_model(template, gpus=N_REPLICAS)
    parallel.compile(optimizer="sgd", loss="mse")
    return parallel, path


def _records(path):
    import os

    if not os.path.exists(path):
        return []
    with open(path) as f:
        lines = [line.split() for line in f if line.startswith("rows")]
    os.remove(path)
    return [(int(r), int(n)) for _, r, n in lines]


def _calls(K, legacy):
    x, y = data(2 * BATCH)  # two global batches

    def gen():
        while True:
            yield x[:BATCH], y[:BATCH]

    class Batches(K.utils.Sequence):
        def __init__(self):
            super().__init__()

        def __len__(self):
            return 2

        def __getitem__(self, i):
            return x[i * BATCH:(i + 1) * BATCH], y[i * BATCH:(i + 1) * BATCH]

    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH)
    calls = {
        "fit_numpy": (lambda p: p.fit(x, y, batch_size=BATCH, epochs=1, verbose=0, shuffle=False), 2),
        "fit_dataset": (lambda p: p.fit(ds, epochs=1, verbose=0), 2),
        "fit_generator_fn": (lambda p: p.fit(gen(), steps_per_epoch=2, epochs=1, verbose=0), 2),
        "fit_sequence": (lambda p: p.fit(Batches(), epochs=1, verbose=0), 2),
        "evaluate": (lambda p: p.evaluate(x, y, batch_size=BATCH, verbose=0), 2),
        "evaluate_dataset": (lambda p: p.evaluate(ds, verbose=0), 2),
        "predict": (lambda p: p.predict(x, batch_size=BATCH, verbose=0), 2),
        "predict_sequence": (lambda p: p.predict(Batches(), verbose=0), 2),
        "train_on_batch": (lambda p: p.train_on_batch(x[:BATCH], y[:BATCH]), 1),
        "test_on_batch": (lambda p: p.test_on_batch(x[:BATCH], y[:BATCH]), 1),
        "predict_on_batch": (lambda p: p.predict_on_batch(x[:BATCH]), 1),
    }
    if legacy:
        calls["fit_generator"] = (lambda p: p.fit_generator(gen(), steps_per_epoch=2, epochs=1, verbose=0), 2)
        calls["evaluate_generator"] = (lambda p: p.evaluate_generator(gen(), steps=2, verbose=0), 2)
        calls["predict_generator"] = (lambda p: p.predict_generator((xb for xb, _ in gen()), steps=2), 2)
    return calls


CALLS = ["fit_numpy", "fit_dataset", "fit_generator_fn", "fit_sequence", "evaluate",
         "evaluate_dataset", "predict", "predict_sequence", "train_on_batch", "test_on_batch",
         "predict_on_batch", "fit_generator", "evaluate_generator", "predict_generator"]


# One call of each family runs in the fast lane; the other input kinds with the slow tests.
FAST_CALLS = {"fit_numpy", "evaluate", "predict", "train_on_batch", "test_on_batch", "predict_on_batch"}


@pytest.mark.parametrize("call", [c if c in FAST_CALLS else pytest.param(c, marks=pytest.mark.slow) for c in CALLS])
def test_each_replica_sees_batch_over_n_rows(recording, keras_module, legacy_keras, call):
    calls = _calls(keras_module, legacy_keras)
    if call not in calls:
        pytest.skip(f"{call} exists on tf_keras only (removed in Keras 3)")
    parallel, path = recording
    _records(path)
    fn, steps = calls[call]
    fn(parallel)
    records = _records(path)
    # Every step: each of the N replicas ran once on batch/N rows.
    assert sorted(records) == sorted((r, BATCH // N_REPLICAS) for r in range(N_REPLICAS) for _ in range(steps))


# --- shared model, used by several tests below -------------------------------------------

@pytest.fixture(scope="module")
def pair(keras_module):
    template = mlp(keras_module, name="shared_template")
    parallel = compat.multi_gpu_model(template, gpus=N_REPLICAS)
    parallel.compile(optimizer=keras_module.optimizers.SGD(0.1), loss="mse")
    return template, parallel


@pytest.mark.slow  # evaluate + predict + fit; each is pinned fast by test_each_replica_sees_batch_over_n_rows
def test_results_are_numbers_and_predictions_match_template(pair):
    template, parallel = pair
    x, y = data(BATCH)
    loss = parallel.train_on_batch(x, y)
    assert np.isfinite(loss)
    assert np.isfinite(parallel.test_on_batch(x, y))
    assert np.isfinite(parallel.evaluate(x, y, batch_size=BATCH, verbose=0))
    expected = numpy_forward(template, x)
    np.testing.assert_allclose(parallel.predict(x, batch_size=BATCH, verbose=0), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(parallel.predict_on_batch(x), expected, rtol=1e-5, atol=1e-5)
    # test_on_batch is the mean loss over the whole global batch.
    np.testing.assert_allclose(parallel.test_on_batch(x, y), np.mean((expected - y) ** 2), rtol=1e-4)


def test_parallel_step_equals_single_device_step(pair, keras_module):
    """One SGD step on N replicas equals one step on one device over the same batch."""
    template, parallel = pair
    reference = mlp(keras_module, name="reference_model")
    reference.set_weights(template.get_weights())
    reference.compile(optimizer=keras_module.optimizers.SGD(0.1), loss="mse")
    x, y = data(BATCH, seed=3)
    before = template.get_weights()
    parallel.fit(x, y, batch_size=BATCH, epochs=1, verbose=0, shuffle=False)
    reference.fit(x, y, batch_size=BATCH, epochs=1, verbose=0, shuffle=False)
    assert not weights_equal(before, template.get_weights())
    assert weights_equal(reference.get_weights(), template.get_weights(), rtol=1e-4, atol=1e-6)


def test_set_weights_on_template_used_by_parallel(pair):
    template, parallel = pair
    x, _ = data(BATCH, seed=4)
    rng = np.random.default_rng(7)
    new = [rng.normal(size=w.shape).astype("float32") for w in template.get_weights()]
    template.set_weights(new)
    assert weights_equal(parallel.get_weights(), new)
    np.testing.assert_allclose(parallel.predict(x, verbose=0), numpy_forward(template, x), rtol=1e-5, atol=1e-5)
    # ... and the other way round.
    parallel.set_weights([w * 0.5 for w in new])
    assert weights_equal(template.get_weights(), [w * 0.5 for w in new])


def test_parallel_fit_trains_the_template(pair):
    template, parallel = pair
    x, y = data(3 * BATCH, seed=5)
    before = template.get_weights()
    parallel.fit(x, y, batch_size=BATCH, epochs=1, verbose=0)
    after = template.get_weights()
    assert all(not np.allclose(a, b) for a, b in zip(before, after))
    assert weights_equal(after, parallel.get_weights(), rtol=0, atol=0)
    np.testing.assert_allclose(parallel.predict(x, verbose=0), numpy_forward(template, x), rtol=1e-5, atol=1e-5)


def test_weights_identical_on_every_replica_after_fit(pair):
    template, parallel = pair
    x, y = data(BATCH, seed=6)
    parallel.fit(x, y, batch_size=BATCH, epochs=1, verbose=0)
    for variable in template.weights:
        local = replica_values(parallel.distribute_strategy, variable)
        assert len(local) == N_REPLICAS, variable.name
        for replica in local[1:]:
            np.testing.assert_array_equal(replica, local[0])


def test_layer_layout_one_output(pair):
    template, parallel = pair
    assert parallel.layers[-2] is template
    assert parallel.get_layer(template.name) is template
    assert list(parallel.output_names) == list(template.output_names)
    assert parallel.template is template


@pytest.mark.slow  # trains a second model; the one-output layout is checked fast on the shared pair
def test_layer_layout_and_dict_losses_two_outputs(keras_module):
    K = keras_module
    template = two_in_two_out(K, name="two_out_template")
    parallel = compat.multi_gpu_model(template, gpus=2)
    assert parallel.layers[-3] is template
    assert parallel.get_layer(template.name) is template
    assert list(parallel.output_names) == list(template.output_names) == ["reg", "cls"]
    parallel.compile(optimizer="sgd", loss={"reg": "mse", "cls": "categorical_crossentropy"},
                     loss_weights={"reg": 1.0, "cls": 0.5})
    rng = np.random.default_rng(0)
    xa, xb = rng.normal(size=(8, 3)).astype("float32"), rng.normal(size=(8, 2)).astype("float32")
    y_reg = rng.normal(size=(8, 1)).astype("float32")
    y_cls = np.eye(3, dtype="float32")[rng.integers(0, 3, 8)]
    _skip_if_keras_mismatches_dict_targets(K, [xa, xb], {"reg": y_reg, "cls": y_cls})
    before = template.get_weights()
    hist = parallel.fit([xa, xb], {"reg": y_reg, "cls": y_cls}, batch_size=4, epochs=1, verbose=0)
    assert np.isfinite(hist.history["loss"][-1])
    assert not weights_equal(before, template.get_weights())
    out = parallel.predict({"in_a": xa, "in_b": xb}, verbose=0)
    ref = template.predict([xa, xb], verbose=0)
    for o, r in zip(out, ref):
        np.testing.assert_allclose(o, r, rtol=1e-5, atol=1e-6)
    assert out[0].shape == (8, 1) and out[1].shape == (8, 3)


def test_template_usable_alone_afterwards(keras_module, tmp_path):
    # Its own pair: compiling the template changes what the shared parallel model reports
    # on Keras 3.3 (it adds the template's loss tracker to the parallel model's).
    template = mlp(keras_module, name="alone_template")
    compat.multi_gpu_model(template, gpus=N_REPLICAS)
    x, y = data(BATCH, seed=8)
    template.compile(optimizer="sgd", loss="mse")
    before = template.get_weights()
    template.fit(x, y, batch_size=BATCH, epochs=1, verbose=0)
    assert not weights_equal(before, template.get_weights())
    expected = numpy_forward(template, x)
    np.testing.assert_allclose(template.predict(x, verbose=0), expected, rtol=1e-5, atol=1e-5)
    path = tmp_path / ("alone.h5" if keras_module.__name__ == "tf_keras" else "alone.keras")
    template.save(path)
    loaded = keras_module.models.load_model(path, compile=False)
    assert weights_equal(loaded.get_weights(), template.get_weights(), rtol=0, atol=0)


# --- cpu_relocation / cpu_merge / cross_device_ops / strategy reuse ----------------------

@pytest.mark.parametrize("kwargs", [{"cpu_relocation": True},
                                    pytest.param({"cpu_merge": False}, marks=pytest.mark.slow),
                                    pytest.param({"cpu_merge": True, "cpu_relocation": True}, marks=pytest.mark.slow)])
def test_legacy_flags_keep_weights(keras_module, kwargs):
    template = mlp(keras_module, name="flags_template")
    x, y = data(BATCH)
    before = template.get_weights()
    expected = template.predict(x, verbose=0)
    parallel = compat.multi_gpu_model(template, 2, **kwargs)
    assert weights_equal(template.get_weights(), before, rtol=0, atol=0)
    np.testing.assert_allclose(parallel.predict(x, verbose=0), expected, rtol=1e-5, atol=1e-6)
    parallel.compile(optimizer="sgd", loss="mse")
    parallel.fit(x, y, batch_size=BATCH, epochs=1, verbose=0)
    assert not weights_equal(template.get_weights(), before)  # template still connected


def test_positional_signature(keras_module):
    # multi_gpu_model(model, gpus, cpu_merge, cpu_relocation)
    template = mlp(keras_module, name="positional_template")
    parallel = compat.multi_gpu_model(template, [0, 1], False, True)
    assert parallel.distribute_strategy.num_replicas_in_sync == 2


def test_cross_device_ops_override_is_used(keras_module):
    calls = []

    class CountingReduction(tf.distribute.ReductionToOneDevice):
        def reduce_implementation(self, *args, **kwargs):
            calls.append("reduce")
            return super().reduce_implementation(*args, **kwargs)

        def batch_reduce_implementation(self, *args, **kwargs):
            calls.append("batch_reduce")
            return super().batch_reduce_implementation(*args, **kwargs)

    ops = CountingReduction()
    template = mlp(keras_module, name="ops_template")
    parallel = compat.multi_gpu_model(template, gpus=[3, 1], cross_device_ops=ops)
    assert parallel.distribute_strategy.extended._cross_device_ops is ops
    parallel.compile(optimizer="sgd", loss="mse")
    x, y = data(BATCH)
    parallel.fit(x, y, batch_size=BATCH, epochs=1, verbose=0)
    assert calls, "the given cross_device_ops never reduced anything"
    # Same object again on the same devices: fine, same strategy.
    again = compat.multi_gpu_model(mlp(keras_module, name="ops_template2"), gpus=[3, 1], cross_device_ops=ops)
    assert again.distribute_strategy is parallel.distribute_strategy
    # A different object on the same devices: a clear error.
    with pytest.raises(ValueError, match="cross_device_ops"):
        compat.multi_gpu_model(mlp(keras_module, name="ops_template3"), gpus=[3, 1],
                               cross_device_ops=tf.distribute.ReductionToOneDevice())


def test_default_reduction_on_simulated_devices_is_reduction_to_one_device(keras_module):
    parallel = compat.multi_gpu_model(mlp(keras_module, name="default_ops_template"), gpus=[2, 0])
    assert isinstance(parallel.distribute_strategy.extended._cross_device_ops,
                      tf.distribute.ReductionToOneDevice)


def test_second_call_same_devices_reuses_strategy(keras_module):
    a = compat.multi_gpu_model(mlp(keras_module, name="reuse_a"), gpus=3)
    b = compat.multi_gpu_model(mlp(keras_module, name="reuse_b"), gpus=[0, 1, 2])
    assert a.distribute_strategy is b.distribute_strategy


def test_wrapping_same_template_twice_shares_variables(keras_module):
    template = mlp(keras_module, name="twice_template")
    first = compat.multi_gpu_model(template, gpus=2)
    second = compat.multi_gpu_model(template, gpus=2)
    assert second.get_layer(template.name) is template
    new = [np.full(w.shape, 0.25, "float32") for w in template.get_weights()]
    first.set_weights(new)
    assert weights_equal(second.get_weights(), new)


def test_template_wrapped_again_on_other_devices_moves_there(keras_module):
    template = mlp(keras_module, name="other_devices_template")
    first = compat.multi_gpu_model(template, gpus=2)
    second = compat.multi_gpu_model(template, gpus=[1, 2])
    x, _ = data()
    np.testing.assert_allclose(second.predict(x, verbose=0), numpy_forward(template, x), atol=1e-5)
    with pytest.raises(RuntimeError, match="latest `multi_gpu_model` call"):
        first.predict(x, verbose=0)


def test_template_built_under_user_strategy_clear_error(keras_module):
    strategy = tf.distribute.MirroredStrategy(["/gpu:0", "/gpu:1"])  # simulated
    with strategy.scope():
        template = mlp(keras_module, name="scoped_template")
    with pytest.raises(ValueError, match="strategy"):
        compat.multi_gpu_model(template, gpus=[0, 1])


@pytest.mark.slow  # trains a two-input model; multi-output layout and on_batch calls have fast tests
def test_on_batch_methods_multi_io_and_sample_weight(keras_module):
    K = keras_module
    template = two_in_two_out(K, name="on_batch_template")
    parallel = compat.multi_gpu_model(template, gpus=2)
    parallel.compile(optimizer="sgd", loss={"reg": "mse", "cls": "categorical_crossentropy"})
    rng = np.random.default_rng(1)
    xa, xb = rng.normal(size=(6, 3)).astype("float32"), rng.normal(size=(6, 2)).astype("float32")
    y = {"reg": rng.normal(size=(6, 1)).astype("float32"),
         "cls": np.eye(3, dtype="float32")[rng.integers(0, 3, 6)]}
    out = parallel.predict_on_batch([xa, xb])
    ref = template.predict([xa, xb], verbose=0)
    assert [o.shape for o in out] == [(6, 1), (6, 3)]
    for o, r in zip(out, ref):
        np.testing.assert_allclose(o, r, rtol=1e-5, atol=1e-6)
    _skip_if_keras_mismatches_dict_targets(K, [xa, xb], y)
    logs = parallel.test_on_batch([xa, xb], y, return_dict=True)
    assert isinstance(logs, dict) and np.isfinite(logs["loss"])
    mse = np.mean((ref[0] - y["reg"]) ** 2)
    cce = np.mean(-np.sum(y["cls"] * np.log(np.clip(ref[1], 1e-7, 1)), axis=1))
    np.testing.assert_allclose(logs["loss"], mse + cce, rtol=1e-3)
    before = template.get_weights()
    parallel.train_on_batch([xa, xb], y)
    assert not weights_equal(before, template.get_weights())


def _skip_if_keras_mismatches_dict_targets(K, x, y) -> None:
    # Keras 3.5 pairs a dict of targets with the outputs in the wrong order, even on a
    # plain single-device model: nothing the shim could change.
    probe = two_in_two_out(K, name="dict_target_probe")
    probe.compile(optimizer="sgd", loss={"reg": "mse", "cls": "categorical_crossentropy"})
    try:
        probe.test_on_batch(x, y)
    except ValueError as err:
        if "must have the same shape" in str(err):
            pytest.skip(f"Keras {K.__version__} itself mismatches dict targets and outputs")
        raise


def test_train_on_batch_sample_weight(pair):
    template, parallel = pair
    x, y = data(BATCH, seed=12)
    weights = np.zeros(BATCH, "float32")
    weights[0] = 1.0  # only the first row (on replica 0) counts
    expected = numpy_forward(template, x)
    loss = parallel.test_on_batch(x, y, sample_weight=weights)
    np.testing.assert_allclose(loss, np.mean((expected[0] - y[0]) ** 2) / BATCH, rtol=1e-4)
    before = template.get_weights()
    parallel.train_on_batch(x, y, sample_weight=np.zeros(BATCH, "float32"))
    assert weights_equal(before, template.get_weights(), rtol=0, atol=1e-7)  # zero weight: no step
