"""Differential cases: one template trained three ways, on the same data from the same seeds.

(a) "single": the model on one device; (b) "native": hand-written `tf.distribute.MirroredStrategy`
code (model built and compiled under `strategy.scope()`); (c) "shim": the template built outside
any scope, through `multi_gpu_model`, compile objects created before the call as legacy scripts do.

A case picks one value on each axis of Keras's feature space (`AXES`); the rows are generated
(`each_value_once`, `pairwise`), never hand-picked. Everything is tiny: a few dozen rows, two
epochs, Dense layers of a few units.
"""

from __future__ import annotations

import copy
import itertools
import pickle
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

import multi_gpu_compat as compat
from compat_helpers import keras3_older_than

GPUS = 2
ROWS, BATCH, EPOCHS = 16, 8, 2
SEED = 3

# The axes of the feature space and their values; the first value of each is "nothing special".
AXES: dict[str, tuple[str, ...]] = {
    # How the template is built.
    "arch": ("functional", "sequential", "subclassed", "nested_shared", "multi_io_list",
             "multi_io_dict", "masked_rnn", "stateful_rnn"),
    # What its layers carry.
    "layer": ("plain", "kernel_l2", "bias_l1", "activity_l2", "add_loss", "non_neg", "max_norm",
              "mixed_precision"),
    # Training logic the template's class brings.
    "step": ("default", "train_step", "test_step", "compute_loss"),
    # What `compile` gets (objects are created before the `multi_gpu_model` call).
    "compile": ("strings", "metric_objects", "loss_object"),
    # How `fit` is called.
    "fit": ("plain", "sample_weight", "class_weight", "validation_split", "validation_dataset",
            "early_stopping", "reduce_lr", "lr_scheduler", "checkpoint"),
    # What is done with the trained model.
    "after": ("none", "save_file", "json_weights", "clone", "deepcopy", "pickle"),
}


@dataclass(frozen=True)
class Case:
    arch: str = "functional"
    layer: str = "plain"
    step: str = "default"
    compile: str = "strings"
    fit: str = "plain"
    after: str = "none"

    @property
    def id(self) -> str:
        return "-".join(getattr(self, axis) for axis in AXES)


def each_value_once() -> list[Case]:
    """The fewest cases that use every value of every axis once (row i takes value i of each
    axis, wrapping around): the fast lane, one case per feature."""
    rows = max(len(values) for values in AXES.values())
    return [Case(**{axis: values[i % len(values)] for axis, values in AXES.items()}) for i in range(rows)]


def one_factor() -> list[Case]:
    """Every value of every axis alone on the plain case: what each feature does by itself."""
    cases = [Case()]
    for axis, values in AXES.items():
        cases += [Case(**{axis: value}) for value in values[1:]]
    return cases


def pairwise() -> list[Case]:
    """A greedy covering array: every pair of values of two axes appears in some case."""
    axes = list(AXES)
    uncovered = {
        (a, va, b, vb)
        for a, b in itertools.combinations(axes, 2)
        for va in AXES[a]
        for vb in AXES[b]
    }
    cases: list[Case] = []
    while uncovered:
        # Start from one uncovered pair, then fill the other axes greedily.
        a, va, b, vb = min(uncovered)
        chosen = {a: va, b: vb}
        for axis in axes:
            if axis not in chosen:
                chosen[axis] = max(AXES[axis], key=lambda v, a=axis: _gain(chosen, a, v, uncovered))
        uncovered -= {
            (x, chosen[x], y, chosen[y]) for x, y in itertools.combinations(axes, 2)
        }
        cases.append(Case(**chosen))
    return cases


def pairs() -> list[Case]:
    """The pairwise cases the fast lane's `each_value_once` does not already run."""
    fast = each_value_once()
    return [case for case in pairwise() if case not in fast]


def _gain(chosen: dict[str, str], axis: str, value: str, uncovered: set[tuple[str, ...]]) -> int:
    """How many uncovered pairs setting `axis` to `value` would cover."""
    trial = {**chosen, axis: value}
    present = [a for a in AXES if a in trial]  # in AXES order, as the pairs are stored
    return sum((x, trial[x], y, trial[y]) in uncovered for x, y in itertools.combinations(present, 2))


# ----------------------------------------------------------------------------------------
# Data

def _rng() -> np.random.Generator:
    return np.random.default_rng(SEED)


def dataset(case: Case) -> tuple[Any, Any, Any]:
    """x, y (in the structure the architecture takes) and per-row sample weights."""
    rng = _rng()
    weights = rng.uniform(0.2, 2.0, size=(ROWS,)).astype("float32")
    if case.arch in ("multi_io_list", "multi_io_dict"):
        a = rng.normal(size=(ROWS, 3)).astype("float32")
        b = rng.normal(size=(ROWS, 2)).astype("float32")
        reg = rng.normal(size=(ROWS, 1)).astype("float32")
        cls = np.eye(2, dtype="float32")[rng.integers(0, 2, size=ROWS)]
        if case.arch == "multi_io_dict":
            return {"in_a": a, "in_b": b}, {"reg": reg, "cls": cls}, weights
        return [a, b], [reg, cls], weights
    if case.arch in ("masked_rnn", "stateful_rnn"):
        x = rng.normal(size=(ROWS, 4, 2)).astype("float32")
        x[::3, 2:] = 0.0  # padded steps, masked by the Masking layer
    else:
        x = rng.normal(size=(ROWS, 3)).astype("float32")
    y = rng.normal(size=(ROWS, 2)).astype("float32")
    return x, y, weights


# ----------------------------------------------------------------------------------------
# Templates

def _layer_options(K: Any, case: Case) -> dict[str, Any]:
    return {
        "plain": {},
        "kernel_l2": {"kernel_regularizer": K.regularizers.l2(0.05)},
        "bias_l1": {"bias_regularizer": K.regularizers.l1(0.05), "bias_initializer": "ones"},
        "activity_l2": {"activity_regularizer": K.regularizers.l2(0.05)},
        "add_loss": {},
        "non_neg": {"kernel_constraint": K.constraints.NonNeg()},
        "max_norm": {"kernel_constraint": K.constraints.MaxNorm(0.3)},
        "mixed_precision": {},
    }[case.layer]


def _activity_penalty_layer(K: Any) -> Any:
    class ActivityPenalty(K.layers.Layer):
        """Adds a loss from its input in `call` (`add_loss`), as custom layers did."""

        def call(self, inputs):
            self.add_loss(0.1 * tf.reduce_mean(tf.square(inputs)))
            return inputs

    return ActivityPenalty


def _step_mixin(K: Any, step: str) -> type:
    """A mixin with the training logic of `step`, in the shape scripts wrote it for TF 2.2+."""

    class TrainStep:
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            # A tracker of its own, created with the model (outside any scope for the shim).
            self.clipped_loss_tracker = K.metrics.Mean(name="clipped_loss")

        def train_step(self, data):
            x, y = data[0], data[1]
            sample_weight = data[2] if len(data) > 2 else None
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(x, y, y_pred, sample_weight)
            grads = tape.gradient(loss, self.trainable_variables)
            grads = [tf.clip_by_value(g, -0.05, 0.05) for g in grads]  # clipping: visible in the weights
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            self.clipped_loss_tracker.update_state(loss)
            logs = self.compute_metrics(x, y, y_pred, sample_weight)
            return {k: v for k, v in logs.items() if k != "loss"} | {"clipped_loss": self.clipped_loss_tracker.result()}

    class TestStep:
        def test_step(self, data):
            logs = super().test_step(data)
            return {k: v * 2.0 for k, v in logs.items()}  # visible in evaluate and val_ logs

    class ComputeLoss:
        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, **kwargs):
            loss = super().compute_loss(x, y, y_pred, sample_weight, **kwargs)
            penalty = tf.add_n([tf.reduce_sum(tf.abs(w)) for w in self.trainable_weights])
            return loss + 0.01 * tf.cast(penalty, loss.dtype)

    return {"train_step": TrainStep, "test_step": TestStep, "compute_loss": ComputeLoss}[step]


def _model_class(K: Any, case: Case, base: Any) -> Any:
    if case.step == "default":
        return base
    return type(f"Custom{base.__name__}", (_step_mixin(K, case.step), base), {})


def build(K: Any, case: Case) -> Any:
    """The template of `case` (call inside a scope for native code)."""
    K.utils.set_random_seed(SEED)
    opts = _layer_options(K, case)
    penalty = case.layer == "add_loss"
    Model = _model_class(K, case, K.Model)

    def dense_stack(h: Any, prefix: str = "") -> Any:
        h = K.layers.Dense(4, activation="tanh", name=f"{prefix}hidden", **opts)(h)
        if penalty:
            h = _activity_penalty_layer(K)(name=f"{prefix}penalty")(h)
        return h

    if case.arch == "functional":
        inp = K.Input((3,), name="x")
        return Model(inp, K.layers.Dense(2, name="out", **opts)(dense_stack(inp)), name="template")
    if case.arch == "sequential":
        layers = [K.Input((3,)), K.layers.Dense(4, activation="tanh", **opts)]
        if penalty:
            layers.append(_activity_penalty_layer(K)())
        layers.append(K.layers.Dense(2, **opts))
        return _model_class(K, case, K.Sequential)(layers, name="template")
    if case.arch == "subclassed":
        Penalty = _activity_penalty_layer(K)

        class Sub(Model):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                self.hidden = K.layers.Dense(4, activation="tanh", **opts)
                self.penalty = Penalty() if penalty else None
                self.out = K.layers.Dense(2, **opts)

            def call(self, inputs):
                h = self.hidden(inputs)
                return self.out(self.penalty(h) if self.penalty is not None else h)

        model = Sub(name="template")
        model(np.zeros((1, 3), "float32"))
        return model
    if case.arch == "nested_shared":
        inner_in = K.Input((3,))
        inner = K.Model(inner_in, dense_stack(inner_in, "inner_"), name="inner")
        inp = K.Input((3,), name="x")
        mixed = K.layers.Dense(3, use_bias=False, name="mix")(inp)
        shared_twice = K.layers.Add()([inner(inp), inner(mixed)])
        return Model(inp, K.layers.Dense(2, name="out", **opts)(shared_twice), name="template")
    if case.arch in ("multi_io_list", "multi_io_dict"):
        a, b = K.Input((3,), name="in_a"), K.Input((2,), name="in_b")
        h = K.layers.Concatenate()([K.layers.Dense(3, name="da", **opts)(a), K.layers.Dense(3, name="db")(b)])
        h = dense_stack(h)
        reg = K.layers.Dense(1, name="reg", **opts)(h)
        cls = K.layers.Dense(2, activation="softmax", name="cls")(h)
        if case.arch == "multi_io_dict":
            return Model({"in_a": a, "in_b": b}, {"reg": reg, "cls": cls}, name="template")
        return Model([a, b], [reg, cls], name="template")
    # Recurrent: padded sequences through Masking.
    stateful = case.arch == "stateful_rnn"
    inp = K.Input(batch_shape=(BATCH, 4, 2), name="x") if stateful else K.Input((4, 2), name="x")
    h = K.layers.Masking(0.0)(inp)
    h = K.layers.SimpleRNN(3, stateful=stateful, name="rnn", **opts)(h)
    if penalty:
        h = _activity_penalty_layer(K)()(h)
    return Model(inp, K.layers.Dense(2, name="out", **opts)(h), name="template")


# ----------------------------------------------------------------------------------------
# compile / fit arguments

def compile_args(K: Any, case: Case) -> dict[str, Any]:
    multi = case.arch in ("multi_io_list", "multi_io_dict")
    if case.compile == "strings":
        loss: Any = ["mse", "categorical_crossentropy"] if multi else "mse"
        metrics: Any = [["mae"], ["accuracy"]] if multi else ["mae"]
    elif case.compile == "metric_objects":
        loss = ["mse", "categorical_crossentropy"] if multi else "mse"
        metrics = [K.metrics.MeanAbsoluteError(name="mae_obj"), K.metrics.RootMeanSquaredError()]
        if multi:
            metrics = [[K.metrics.MeanAbsoluteError()], [K.metrics.CategoricalAccuracy()]]
    else:
        loss = [K.losses.Huber(delta=0.5), K.losses.CategoricalCrossentropy()] if multi else K.losses.Huber(delta=0.5)
        metrics = [K.metrics.MeanSquaredError(name="mse_obj")]
        if multi:
            metrics = [[K.metrics.MeanSquaredError(name="mse_obj")], []]
    if multi and case.arch == "multi_io_dict":
        loss = dict(zip(("reg", "cls"), loss))
        if isinstance(metrics[0], list):
            metrics = dict(zip(("reg", "cls"), metrics))
    return {"optimizer": K.optimizers.SGD(0.1, momentum=0.5), "loss": loss, "metrics": metrics}


def fit_args(K: Any, case: Case, workdir: Path, x: Any, y: Any, weights: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"x": x, "y": y, "batch_size": BATCH, "epochs": EPOCHS, "shuffle": False, "verbose": 0}
    if case.fit == "sample_weight":
        args["sample_weight"] = weights
    elif case.fit == "class_weight":
        args["class_weight"] = {0: 0.3, 1: 2.0}
    elif case.fit == "validation_split":
        args["validation_split"] = 0.25
    elif case.fit == "validation_dataset":
        args["validation_data"] = tf.data.Dataset.from_tensor_slices((_tuples(x), _tuples(y))).batch(BATCH)
    elif case.fit == "early_stopping":
        args["epochs"] = 4
        args["validation_data"] = (x, y)
        # min_delta so large no epoch improves: the best weights (epoch 1) come back.
        args["callbacks"] = [K.callbacks.EarlyStopping(patience=1, min_delta=10.0, restore_best_weights=True)]
    elif case.fit == "reduce_lr":
        args["epochs"] = 3
        args["callbacks"] = [K.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=0, min_delta=10.0)]
    elif case.fit == "lr_scheduler":
        args["callbacks"] = [K.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.5)]
    elif case.fit == "checkpoint":
        args["callbacks"] = [K.callbacks.ModelCheckpoint(str(workdir / f"ckpt{_suffix(K)}"), monitor="loss")]
    return args


def _tuples(structure: Any) -> Any:
    return tuple(structure) if isinstance(structure, list) else structure


def _suffix(K: Any) -> str:
    return ".h5" if K.__name__ == "tf_keras" else ".keras"


# ----------------------------------------------------------------------------------------
# The three ways

@dataclass
class Outcome:
    """What a user can observe after training; `error` names the exception if it failed."""

    error: str = ""
    weights: list[np.ndarray] = field(default_factory=list)
    history: dict[str, list[float]] = field(default_factory=dict)
    predictions: list[np.ndarray] = field(default_factory=list)
    evaluation: list[float] = field(default_factory=list)
    checkpoint: list[np.ndarray] = field(default_factory=list)
    after: list[np.ndarray] = field(default_factory=list)
    after_error: str = ""


def _flat(value: Any) -> list[np.ndarray]:
    return [np.asarray(v, dtype="float64") for v in tf.nest.flatten(value)]


def train(K: Any, case: Case, way: str) -> Outcome:
    """Trains `case` the `way` ("single", "native" or "shim") and records what it shows."""
    policy = K.mixed_precision.global_policy()
    if case.layer == "mixed_precision":
        K.mixed_precision.set_global_policy("mixed_float16")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            return _train(K, case, way, Path(tmp))
    finally:
        K.mixed_precision.set_global_policy(policy)


def _train(K: Any, case: Case, way: str, workdir: Path) -> Outcome:
    x, y, weights = dataset(case)
    outcome = Outcome()
    try:
        if way == "native":
            strategy = tf.distribute.MirroredStrategy([f"/gpu:{i}" for i in range(GPUS)])
            with strategy.scope():
                model = build(K, case)
                model.compile(**compile_args(K, case))
            runner = model
        else:
            model = build(K, case)
            args = compile_args(K, case)  # metric and loss objects exist before the call
            runner = compat.multi_gpu_model(model, gpus=GPUS) if way == "shim" else model
            runner.compile(**args)
        history = runner.fit(**fit_args(K, case, workdir, x, y, weights))
        outcome.history = {k: [float(v) for v in vs] for k, vs in history.history.items() if k != "lr"}
        outcome.weights = [np.asarray(w, dtype="float64") for w in model.get_weights()]
        outcome.predictions = _flat(runner.predict(x, batch_size=BATCH, verbose=0))
        outcome.evaluation = [float(v) for v in tf.nest.flatten(
            runner.evaluate(x, y, batch_size=BATCH, verbose=0))]
    except Exception as err:  # noqa: BLE001 - the exception type is the observation
        outcome.error = type(err).__name__
        return outcome
    # Files and copies: where Keras cannot reload a model (e.g. a custom class without a
    # config), strategy code fails too; the error type is the observation.
    if case.fit == "checkpoint":
        try:
            outcome.checkpoint = _flat(_load(K, workdir / f"ckpt{_suffix(K)}", model).predict(x, verbose=0))
        except Exception as err:  # noqa: BLE001
            outcome.after_error = f"checkpoint: {type(err).__name__}; "
    try:
        outcome.after = _after(K, case, runner, workdir, x)
    except Exception as err:  # noqa: BLE001
        outcome.after_error += type(err).__name__
    return outcome


def _custom_objects(model: Any) -> dict[str, Any]:
    objects = {type(model).__name__: type(model)}
    for layer in model._flatten_layers(include_self=False, recursive=True):
        objects[type(layer).__name__] = type(layer)
    return objects


def _load(K: Any, path: Path, template: Any) -> Any:
    return K.models.load_model(path, custom_objects=_custom_objects(template), compile=False)


def _after(K: Any, case: Case, runner: Any, workdir: Path, x: Any) -> list[np.ndarray]:
    """Predictions of the model `case.after` makes from the trained one."""
    if case.after == "none":
        return []
    objects = _custom_objects(getattr(runner, "template", runner))
    if case.after == "save_file":
        path = workdir / f"saved{_suffix(K)}"
        runner.save(path)
        made = _load(K, path, getattr(runner, "template", runner))
    elif case.after == "json_weights":
        path = workdir / ("w.h5" if K.__name__ == "tf_keras" else "w.weights.h5")
        runner.save_weights(path)
        made = K.models.model_from_json(runner.to_json(), custom_objects=objects)
        made.load_weights(path)
    elif case.after == "clone":
        made = K.models.clone_model(runner)
        made.set_weights(runner.get_weights())
        made.compile(optimizer="sgd", loss=compile_args(K, case)["loss"])
    elif case.after == "deepcopy":
        made = copy.deepcopy(runner)
    else:
        made = pickle.loads(pickle.dumps(runner))
    return _flat(made.predict(x, batch_size=BATCH, verbose=0))


# ----------------------------------------------------------------------------------------
# Comparison

def tolerance(case: Case) -> dict[str, float]:
    if case.layer == "mixed_precision":
        return {"rtol": 2e-2, "atol": 2e-3}
    return {"rtol": 1e-4, "atol": 1e-5}


def differences(first: Outcome, second: Outcome, case: Case) -> list[str]:
    """What `second` (the shim) does differently from `first` (empty: the same model).

    Reloading and copying must work where they work for `first`; where they fail for `first`
    (e.g. Keras cannot clone a subclassed model), `second` may fail too, or serve them, provided
    the model it makes predicts like the trained one.
    """
    if first.error or second.error:
        return [] if first.error == second.error else [f"error: {first.error!r} != {second.error!r}"]
    found = []
    tol = tolerance(case)
    if sorted(first.history) != sorted(second.history):
        return [f"history keys: {sorted(first.history)} != {sorted(second.history)}"]
    first_failed = _failed_steps(first.after_error)
    second_failed = _failed_steps(second.after_error)
    if any(s and not f for f, s in zip(first_failed, second_failed)):
        found.append(f"after error: {first.after_error!r} != {second.after_error!r}")
    compared = ["weights", "predictions", "evaluation"]
    compared += [name for name, failed in zip(("checkpoint", "after"), first_failed) if not failed]
    for name in compared:
        a, b = getattr(first, name), getattr(second, name)
        if len(a) != len(b) or not all(np.allclose(u, v, **tol) for u, v in zip(a, b)):
            found.append(name)
    for name in ("checkpoint", "after"):  # files and copies hold the trained model
        made = getattr(second, name)
        if made and not all(np.allclose(u, v, **tol) for u, v in zip(made, second.predictions)):
            found.append(f"{name} predicts unlike the trained model")
    for key in first.history:
        if not np.allclose(first.history[key], second.history[key], **tol):
            found.append(f"history[{key!r}]")
    return found


def _failed_steps(after_error: str) -> tuple[bool, bool]:
    """(reloading the checkpoint failed, the `after` step failed)."""
    checkpoint, _, after = after_error.rpartition("; ")
    return bool(checkpoint), bool(after)


# Keras 3.3-3.7 sum the replicas' gradients without scaling the loss: strategy code there takes
# N-times steps, and the shim (which averages them) matches one device instead.
REFERENCE = "single" if keras3_older_than((3, 8)) else "native"


def assert_shim_matches_native(K: Any, case: Case) -> tuple[Outcome, Outcome]:
    """Train `case` through the shim and as the reference; fail when their results differ."""
    native = train(K, case, REFERENCE)
    shim = train(K, case, "shim")
    assert not differences(native, shim, case), (
        f"{case.id}: the shim trained another model than MirroredStrategy code "
        f"({differences(native, shim, case)})"
    )
    return native, shim
