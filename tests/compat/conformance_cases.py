"""What the original `multi_gpu_model` test suites checked, run against the shim on 8 GPUs.

The behaviours come from Keras's `multi_gpu_test.py` (2.1.x `training_utils`, 2.2-2.3
`multi_gpu_utils`) and TensorFlow's `multi_gpu_utils_test.py`, restated in this project's
words, plus what scripts do with the same calls (wrap again, use the template alone).

Not collected by a normal run: the session there has 4 simulated GPUs. `test_conformance.py`
runs this file in a child pytest with `MULTI_GPU_COMPAT_SIMULATE_GPUS=8` and without the
session conftest; to run it by hand:

    MULTI_GPU_COMPAT_SIMULATE_GPUS=8 python -m pytest tests/compat/conformance_cases.py --noconftest
"""

from __future__ import annotations

import importlib
import sys
import warnings

import numpy as np
import pytest
import tensorflow as tf

import multi_gpu_compat as compat
from multi_gpu_compat import _stack, backend, simulation

GPUS = 8
SUBSET = [0, 2, 4]

pytestmark = pytest.mark.skipif(
    simulation.simulated_gpus() != GPUS,
    reason=f"needs {GPUS} simulated GPUs (MULTI_GPU_COMPAT_SIMULATE_GPUS={GPUS}); "
    "test_conformance.py runs this file that way",
)

LEGACY = _stack.backend() == _stack.TF_KERAS
K = backend.keras_module()


def _rows(*shapes: tuple[int, ...], seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.random(shape, dtype=np.float32) for shape in shapes]


def _sequential(hidden: int = 6, features: int = 10, outputs: int = 1, name: str | None = None):
    return K.models.Sequential(
        [K.Input((features,)), K.layers.Dense(hidden), K.layers.Dense(outputs)], name=name
    )


def _multi_io():
    input_a, input_b = K.Input((10,)), K.Input((5,))
    merged = K.layers.concatenate([K.layers.Dense(6)(input_a), K.layers.Dense(6)(input_b)])
    return K.Model([input_a, input_b], [K.layers.Dense(1)(merged), K.layers.Dense(2)(merged)])


def _changed(before: list[np.ndarray], after: list[np.ndarray]) -> bool:
    return any(not np.allclose(b, a) for b, a in zip(before, after))


def _quiet_fit(model, *args, **kwargs):
    kwargs.setdefault("verbose", 0)
    return model.fit(*args, **kwargs)


# --- Training on all GPUs, then again on a subset (both suites) -----------------------------

def test_simple_model_trains_on_eight_gpus_then_again_on_a_subset():
    x, y = _rows((64, 10), (64, 1))
    template = _sequential()
    parallel = compat.multi_gpu_model(template, gpus=GPUS)
    parallel.compile(loss="mse", optimizer="rmsprop")
    first = _quiet_fit(parallel, x, y, epochs=2, batch_size=16)
    trained = template.get_weights()

    again = compat.multi_gpu_model(template, gpus=SUBSET)
    # The new wrap took the trained variables over: it predicts what the template does.
    np.testing.assert_allclose(again.predict(x, verbose=0), template.predict(x, verbose=0), atol=1e-6)
    assert not _changed(trained, template.get_weights())
    again.compile(loss="mse", optimizer="rmsprop")
    second = _quiet_fit(again, x, y, epochs=2, batch_size=15)
    assert np.all(np.isfinite(first.history["loss"] + second.history["loss"]))
    assert _changed(trained, template.get_weights())  # training on the subset reached the template
    assert again.distribute_strategy.num_replicas_in_sync == len(SUBSET)


def test_multi_io_model_trains_on_eight_gpus_then_again_on_a_subset():
    a_x, b_x, a_y, b_y = _rows((64, 10), (64, 5), (64, 1), (64, 2))
    template = _multi_io()
    for gpus in (GPUS, SUBSET):
        parallel = compat.multi_gpu_model(template, gpus=gpus)
        parallel.compile(loss="mse", optimizer="rmsprop")
        before = template.get_weights()
        history = _quiet_fit(parallel, [a_x, b_x], [a_y, b_y], epochs=2, batch_size=16)
        assert np.all(np.isfinite(history.history["loss"]))
        assert _changed(before, template.get_weights())


def test_older_parallel_model_refuses_after_a_wrap_on_other_gpus(tmp_path):
    x, y = _rows((32, 10), (32, 1))
    template = _sequential(name="rewrapped")
    first = compat.multi_gpu_model(template, gpus=GPUS)
    first.compile(loss="mse", optimizer="sgd")
    _quiet_fit(first, x, y, batch_size=16)
    same_devices = compat.multi_gpu_model(template, gpus=GPUS)
    # On the same GPUs nothing moves: both parallel models keep working.
    np.testing.assert_allclose(first.predict(x, verbose=0), same_devices.predict(x, verbose=0), atol=1e-6)

    subset = compat.multi_gpu_model(template, gpus=SUBSET)
    subset.compile(loss="mse", optimizer="sgd")
    _quiet_fit(subset, x, y, batch_size=16)
    for use in (
        lambda: first.fit(x, y, verbose=0),
        lambda: first.predict(x, verbose=0),
        lambda: first.evaluate(x, y, verbose=0),
        lambda: first.train_on_batch(x, y),
        lambda: first.compile(loss="mse", optimizer="sgd"),
    ):
        with pytest.raises(RuntimeError, match="rewrapped.*latest `multi_gpu_model` call"):
            use()
    # The newest parallel model saves the template with the weights it trained.
    path = str(tmp_path / "after_rewrap.h5")
    subset.save(path)
    loaded = K.models.load_model(path, compile=False)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), template.predict(x, verbose=0), atol=1e-6)
    assert len(loaded.layers) == len(template.layers)


# --- Device validation (both suites) -------------------------------------------------------

@pytest.mark.parametrize(
    "gpus",
    [GPUS + 2, [0, 2, 4, 6, 8], 1, [0], "available + 1"],
    ids=["ten", "id-eight", "one", "one-id", "available-plus-one"],
)
def test_invalid_device_requests_raise_value_error(gpus):
    template = _sequential()
    template.compile(loss="mse", optimizer="rmsprop")
    if gpus == "available + 1":  # TensorFlow's variant counts with the backend helper
        gpus = len(K.backend._get_available_gpus()) + 1
    with pytest.raises(ValueError, match="multi_gpu_model"):
        compat.multi_gpu_model(template, gpus=gpus)


# --- Serialization (Keras 2.2-2.3) ----------------------------------------------------------

def test_saved_parallel_model_reloads_with_the_same_predictions(tmp_path):
    x, y = _rows((40, 4), (40, 4))
    template = K.models.Sequential([K.Input((4,)), K.layers.Dense(3), K.layers.Dense(4)])
    parallel = compat.multi_gpu_model(template, gpus=2)
    parallel.compile(loss="mse", optimizer="rmsprop")
    _quiet_fit(parallel, x, y, epochs=1)
    expected = parallel.predict(x, verbose=0)
    path = str(tmp_path / "parallel.h5")
    parallel.save(path)
    K.backend.clear_session()
    reloaded = K.models.load_model(path)
    np.testing.assert_allclose(reloaded.predict(x, verbose=0), expected, atol=1e-5)


# --- Several input layers: RNN with an initial state (both suites) -------------------------

def test_rnn_with_initial_state_input_trains_on_batch():
    sequence, state = K.Input((4, 3)), K.Input((3,))
    outputs = K.layers.SimpleRNN(3, return_sequences=True)(sequence, initial_state=state)
    template = K.Model([sequence, state], outputs)
    rng = np.random.default_rng(0)
    x = [rng.normal(size=(2, 4, 3)).astype("float32"), rng.normal(size=(2, 3)).astype("float32")]
    y = rng.normal(size=(2, 4, 3)).astype("float32")
    parallel = compat.multi_gpu_model(template, gpus=2)
    parallel.compile(loss="mean_squared_error", optimizer="adam")
    before = template.get_weights()
    loss = parallel.train_on_batch(x, y)
    assert np.isfinite(loss)
    assert _changed(before, template.get_weights())


# --- Siamese network: a shared sub-model gives repeated output names ----------------------

def _siamese():
    nested = K.models.Sequential([K.Input((3,)), K.layers.Dense(8), K.layers.Dense(1)], name="nested")
    left, right = K.Input((3,)), K.Input((3,))
    score_left, score_right = nested(left), nested(right)
    total = K.layers.Add(name="add")([score_left, score_right])
    return K.Model([left, right], [total, score_left, score_right], name="siamese")


def test_siamese_output_names_deduplicate_only_the_repeated_ones():
    template = _siamese()
    parallel = compat.multi_gpu_model(template, gpus=GPUS)
    # tf_keras already names the template's outputs uniquely, and the shim keeps them.
    expected = ["add", "nested", "nested_1"] if LEGACY else ["add", "nested_1", "nested_2"]
    assert list(parallel.output_names) == expected

    left, right, target = _rows((32, 3), (32, 3), (32, 1))
    parallel.compile(optimizer="sgd", loss={name: "mse" for name in expected},
                     loss_weights={name: 1.0 for name in expected})
    history = _quiet_fit(parallel, [left, right], [target, target, target], batch_size=16)
    assert {f"{name}_loss" for name in expected} <= set(history.history)


# Each suite imported the function its way, and expected that family's names on any backend.
@pytest.mark.parametrize("path,expected", [
    ("keras.utils", ["add", "nested_1", "nested_2"]),  # Keras 2.3.1's multi_gpu_test.py
    ("tensorflow.keras.utils", ["add", "nested", "nested_1"]),  # TensorFlow's multi_gpu_utils_test.py
])
def test_siamese_output_names_as_each_suite_imported_it(path, expected):
    parallel = importlib.import_module(path).multi_gpu_model(_siamese(), GPUS)
    assert list(parallel.output_names) == expected


@pytest.mark.skipif(LEGACY, reason="tf_keras names the outputs of a shared sub-model uniquely")
def test_plain_keras3_siamese_repeats_output_names():
    # Companion: Keras 3 itself repeats the name, so the parallel model must de-duplicate.
    assert list(_siamese().output_names) == ["add", "nested", "nested"]


# --- A nested model fed by a dataset (TensorFlow's `Input(tensor=...)` test) ---------------

def test_nested_model_trains_from_a_dataset_with_steps_per_epoch():
    # The original fed graph tensors (`Input(tensor=...)`, `target_tensors`), which TF 2
    # removed; a repeated tf.data pipeline with `steps_per_epoch` is its eager form.
    rng = np.random.default_rng(0)
    x = rng.random((16, 10)).astype("float32")
    y = K.utils.to_categorical(rng.integers(0, 10, 16), 10).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(8)
    # Inputs in [0, 1) and a softmax: with pixel values up to 255 the logits are in the hundreds,
    # the loss clips the true class's probability for every row under many initial weights (6 of
    # 12 runs on tf_keras), and a zero gradient trains nothing (flaky failures in CI).
    inner = K.models.Sequential([K.Input((10,)), K.layers.Dense(3),
                                 K.layers.Dense(10, activation="softmax")])
    outer_input = K.Input((10,))
    template = K.Model(outer_input, inner(outer_input))
    parallel = compat.multi_gpu_model(template, gpus=2)
    parallel.compile(loss="categorical_crossentropy", optimizer=K.optimizers.RMSprop(1e-4),
                     metrics=["accuracy"])
    before = inner.get_weights()
    history = _quiet_fit(parallel, dataset, epochs=1, steps_per_epoch=3)
    assert np.isfinite(history.history["loss"][0]) and "accuracy" in history.history
    assert _changed(before, inner.get_weights())


# --- cpu_merge / cpu_relocation (Keras 2.1.6+, TensorFlow) ---------------------------------

@pytest.mark.parametrize("cpu_merge,cpu_relocation", [(False, False), (True, True)])
def test_cpu_merge_and_relocation_are_accepted_and_train_the_template(cpu_merge, cpu_relocation):
    x, y = _rows((32, 10), (32, 1))
    template = _sequential()
    initial = template.get_weights()
    parallel = compat.multi_gpu_model(template, gpus=GPUS, cpu_merge=cpu_merge,
                                      cpu_relocation=cpu_relocation)
    # Relocation keeps the template's weights (the original re-initialised them).
    assert not _changed(initial, template.get_weights())
    parallel.compile(loss="mse", optimizer="sgd")
    _quiet_fit(parallel, x, y, batch_size=16)
    assert _changed(initial, template.get_weights())


# --- The template on its own after wrapping -------------------------------------------------

def test_template_compiles_and_trains_alone_after_the_parallel_model(tmp_path):
    x, y = _rows((32, 10), (32, 1), seed=3)
    template = _sequential()
    optimizer = K.optimizers.SGD(0.05)  # made before the wrap, under no strategy
    parallel = compat.multi_gpu_model(template, gpus=GPUS)
    parallel.compile(loss="mse", optimizer="rmsprop")
    _quiet_fit(parallel, x, y, batch_size=16)

    template.compile(loss="mse", optimizer=optimizer)
    single = K.models.clone_model(template)  # the same step on a plain single-device model
    single.set_weights(template.get_weights())
    single.compile(loss="mse", optimizer=K.optimizers.SGD(0.05))
    _quiet_fit(template, x, y, batch_size=16, shuffle=False)
    _quiet_fit(single, x, y, batch_size=16, shuffle=False)
    for got, want in zip(template.get_weights(), single.get_weights()):
        np.testing.assert_allclose(got, want, atol=1e-5)
    with tf.device("/cpu:0"):
        assert np.isfinite(template.evaluate(x, y, verbose=0))

    # Still shared, both ways: the parallel model runs the template's new weights ...
    np.testing.assert_allclose(parallel.predict(x, verbose=0), template.predict(x, verbose=0), atol=1e-6)
    before = template.get_weights()
    _quiet_fit(parallel, x, y, batch_size=16)
    assert _changed(before, template.get_weights())  # ... and trains them.
    # Saving the template writes the trained single-device model.
    path = str(tmp_path / "template.h5")
    template.save(path)
    loaded = K.models.load_model(path, compile=False)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), parallel.predict(x, verbose=0), atol=1e-5)


# --- Models the shim cannot take ------------------------------------------------------------

def test_model_from_tensorflow_python_keras_gets_a_clear_type_error():
    from tensorflow.python import keras as frozen_keras

    model = frozen_keras.models.Sequential([frozen_keras.layers.Dense(1, input_shape=(3,))])
    with pytest.raises(TypeError, match=r"tensorflow\.python\.keras.*tensorflow\.keras"):
        compat.multi_gpu_model(model, gpus=2)


# --- fit on no rows --------------------------------------------------------------------------

def _fit_outcome(model, x, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            history = model.fit(x, y, verbose=0)
        except Exception as err:  # the outcome under test, whichever it is
            return ("raises", type(err).__name__)
    ran_out = any("ran out of data" in str(w.message) for w in caught)
    return ("returns", ran_out, history.history)


def test_fit_on_zero_rows_does_what_keras_does_on_one_device():
    x, y = _rows((0, 10), (0, 1))
    plain = _sequential()
    plain.compile(loss="mse", optimizer="sgd")
    parallel = compat.multi_gpu_model(_sequential(), gpus=GPUS)
    parallel.compile(loss="mse", optimizer="sgd")
    expected = _fit_outcome(plain, x, y)
    assert _fit_outcome(parallel, x, y) == expected
    if not LEGACY:
        assert expected == ("returns", True, {})  # Keras 3 warns that the input ran out


@pytest.mark.skipif(LEGACY, reason="tf_keras raises the same ValueError with or without a strategy")
def test_plain_keras3_strategy_fit_on_zero_rows_fails():
    # Companion: Keras 3 under a MirroredStrategy, without the shim, ends in StopIteration.
    x, y = _rows((0, 10), (0, 1))
    with tf.distribute.MirroredStrategy().scope():
        model = _sequential()
        model.compile(loss="mse", optimizer="sgd")
    assert _fit_outcome(model, x, y) == ("raises", "StopIteration")


# --- The legacy module surface ----------------------------------------------------------------

def test_suites_device_guard_sees_eight_gpus():
    import keras  # the guard of Keras's suite: '/gpu:7' among the normalized device names

    utils = keras.utils.multi_gpu_utils
    names = [utils._normalize_device_name(n) for n in utils._get_available_devices()]
    assert names == ["/cpu:0"] + [f"/gpu:{i}" for i in range(GPUS)]


LEGACY_UTILS = ["keras.utils.multi_gpu_utils", "keras.utils.training_utils",
                "tensorflow.python.keras.utils.multi_gpu_utils"]
BACKENDS = ["keras.backend", "keras.backend.tensorflow_backend", "tensorflow.keras.backend",
            "tensorflow.python.keras.backend", "tf_keras.backend"]


@pytest.mark.parametrize("path", LEGACY_UTILS)
def test_legacy_utils_modules_serve_the_helpers_and_the_shim(path):
    module = importlib.import_module(path)
    assert module.multi_gpu_model.func is compat.multi_gpu_model  # with the module's output naming
    devices = module._get_available_devices()
    assert [module._normalize_device_name(d) for d in devices] == (
        ["/cpu:0"] + [f"/gpu:{i}" for i in range(GPUS)]
    )
    assert module._normalize_device_name("/job:localhost/replica:0/task:0/device:GPU:3") == "/gpu:3"


@pytest.mark.parametrize("path", BACKENDS)
def test_backend_modules_count_the_gpus(path):
    if path == "tensorflow.keras.backend":
        module = tf.keras.backend
    else:
        module = importlib.import_module(path)
    gpus = module._get_available_gpus()
    assert len(gpus) == GPUS
    assert gpus[0].endswith("device:GPU:0")


def test_legacy_modules_are_attributes_after_a_plain_import():
    import keras
    from keras import backend as K2
    from tensorflow.python import keras as frozen_keras

    assert keras.utils.multi_gpu_utils is sys.modules["keras.utils.multi_gpu_utils"]
    assert keras.utils.training_utils is sys.modules["keras.utils.training_utils"]
    assert len(K2.tensorflow_backend._get_available_gpus()) == GPUS
    assert len(frozen_keras.utils.multi_gpu_utils._get_available_devices()) == GPUS + 1
