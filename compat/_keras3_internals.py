"""The accessors for the private Keras 3 internals the shim uses (named in `_internals`).

The shim needs parts of Keras 3 that live under `keras.src` and change between
releases (3.3 to 3.15 are tested). They are reached here and only here: where an
internal moved or appeared, it is found by feature detection; where Keras behaves
differently, what the installed release has decides. A missing internal raises
`UnsupportedVersionError` naming it and the tested range, never an ImportError from a
private module. Importing this module changes nothing in Keras: the start-up routine
(`startup.run(backend="keras3")`) calls `check_required` and `install_fixes`.

Kept here:
- `TensorFlowTrainer` (the methods the parallel model fixes) and `Functional`
  (its base class);
- `reduce_per_replica`, the trainer's module function the multi-worker fix wraps;
- a Keras variable's backing `tf.Variable` (`_value`) and its declared
  aggregation (`_aggregation`);
- a model's strategy (`_distribute_strategy`), an optimizer's strategy and slot
  index (`_distribution_strategy`, `_trainable_variables`,
  `_trainable_variables_indices`, `_var_key`);
- the methods called on models and layers: `_flatten_metrics_in_order`,
  `_assert_compile_called`, `_flatten_layers`, BatchNormalization `_moments`,
  and the optional `_maybe_symbolic_build` (Keras 3.5+), `_inputs_struct`,
  `_build_shapes_dict`;
- Keras's epoch iterator and compiled step functions, whose calling conventions
  changed in 3.8 and 3.11;
- for Keras 3.3–3.7, `TFOptimizer._backend_update_step`, which the shim wraps so
  that replicas average their gradients (see `_GRADIENTS_NEED_AVERAGING`).
"""

from __future__ import annotations

import importlib
from types import MethodType
from typing import Any

import numpy as np
import tensorflow as tf

from . import _internals, _patching, _support, _tf_internals

__all__ = [
    "Functional",
    "TensorFlowTrainer",
    "STRATEGY_FIX_METHODS",
    "pythonify_logs",
    "trainer_module",
    "missing_internals",
    "check_required",
    "install_fixes",
]


def _resolve(module_name: str, attribute: str) -> Any:
    try:
        return getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as err:
        raise _support.missing_internal("keras3", f"`{module_name}.{attribute}`", str(err)) from None


def trainer_module() -> Any:
    """Keras's TensorFlow trainer module (holds `TensorFlowTrainer`, `reduce_per_replica`)."""
    try:
        return importlib.import_module(_internals.K3_TRAINER)
    except ImportError as err:
        raise _support.missing_internal("keras3", f"`{_internals.K3_TRAINER}`", str(err)) from None


TensorFlowTrainer = _resolve(_internals.K3_TRAINER, "TensorFlowTrainer")
Functional = _resolve(_internals.K3_FUNCTIONAL, "Functional")


def missing_internals() -> list[str]:
    """The private internals this Keras lacks (empty on every tested version): the registry's."""
    return _internals.missing(_internals.KERAS3)


def check_required() -> None:
    """Raises `UnsupportedVersionError` naming every required internal this Keras lacks."""
    _internals.check(_internals.KERAS3)


# Keras 3.5+ averages the first distributed batch to learn shapes (the shim fixes it);
# earlier releases build the model without looking at a batch, so there is nothing to fix.
STRATEGY_FIX_METHODS = tuple(
    name
    for name in ("_maybe_symbolic_build", "train_on_batch", "test_on_batch", "predict_on_batch")
    if callable(getattr(TensorFlowTrainer, name, None))
)


def _get(obj: Any, name: str, default: Any = _internals._REQUIRED) -> Any:
    return _internals.get(obj, name, _internals.KERAS3, default)


def _put(obj: Any, name: str, value: Any) -> None:
    _internals.put(obj, name, _internals.KERAS3, value)


def bind_trainer_methods(model: Any, fixes: type) -> None:
    """Gives `model` the `STRATEGY_FIX_METHODS` of class `fixes`, bound to it (some are private
    trainer methods), unless the model's class overrides them itself."""
    for name in STRATEGY_FIX_METHODS:
        if getattr(type(model), name) is getattr(TensorFlowTrainer, name):
            model.__dict__[name] = MethodType(getattr(fixes, name), model)


# --- logs -------------------------------------------------------------------------


def pythonify_logs(logs: Any) -> dict[str, Any]:
    """Flattens nested log dicts and turns scalar values into Python floats.

    Recent Keras releases return `*_on_batch` logs this way (earlier ones returned
    NumPy arrays): the shim returns floats on every release.
    """
    result: dict[str, Any] = {}
    for key, value in sorted((logs or {}).items()):
        if isinstance(value, dict):
            result.update(pythonify_logs(value))
            continue
        try:
            value = float(np.asarray(value))
        except (TypeError, ValueError):
            pass
        result[key] = value
    return result


def first_step_batch(epoch_iterator: Any) -> Any:
    """The first batch of Keras's epoch iterator (None if it has none).

    Its steps are (step, iterator) pairs from `enumerate_epoch()` before Keras 3.7,
    (step, iterator) from iterating it in 3.7–3.10, (first, last, iterator) since 3.11.
    """
    steps = epoch_iterator
    if not hasattr(steps, "__iter__") and hasattr(steps, "enumerate_epoch"):
        steps = steps.enumerate_epoch()
    for step in steps:
        return next(step[-1])
    return None


def step_input(batch: Any) -> Any:
    """What a compiled train/test function takes for one batch.

    Keras before 3.7 calls `next()` on it inside a tf.function, later releases
    iterate over it: a generator of the one batch serves both. Not `iter([batch])`:
    tf.function tells Python arguments apart by weak reference where it can, and by
    id otherwise, so a list iterator at a reused address would replay an earlier,
    traced batch.
    """

    def _one_batch() -> Any:
        yield batch

    return _one_batch()


# --- variables ----------------------------------------------------------------------

_AGGREGATIONS = {
    "none": tf.VariableAggregation.NONE,
    "sum": tf.VariableAggregation.SUM,
    "mean": tf.VariableAggregation.MEAN,
    "only_first_replica": tf.VariableAggregation.ONLY_FIRST_REPLICA,
}
_SYNCHRONIZATIONS = {
    "none": tf.VariableSynchronization.NONE,
    "on_read": tf.VariableSynchronization.ON_READ,
    "on_write": tf.VariableSynchronization.ON_WRITE,
    "auto": tf.VariableSynchronization.AUTO,
}


def set_aggregation(variable: Any, aggregation: str) -> None:
    """Changes the aggregation a Keras variable declares (it has no public setter)."""
    _put(variable, "_aggregation", aggregation)


def tf_aggregation(variable: Any) -> Any:
    """The `tf.VariableAggregation` for the variable's declared aggregation.

    Keras before 3.8 declares "mean" for every variable but creates the tf.Variable
    without it. The mirrored copy honours the declaration where TensorFlow can (it keeps
    float statistics in sync) and, like those releases, uses none for integer counters
    and seeds, which TensorFlow cannot average.
    """
    aggregation = getattr(variable, "aggregation", None) or "none"
    if aggregation == "mean" and not str(variable.dtype).startswith(("float", "bfloat", "complex")):
        aggregation = "none"
    return _AGGREGATIONS[aggregation]


def tf_synchronization(variable: Any) -> Any:
    """The `tf.VariableSynchronization` (Keras 3.9+ declares one; earlier: AUTO)."""
    return _SYNCHRONIZATIONS[getattr(variable, "synchronization", None) or "auto"]


def set_backing_variable(variable: Any, backing: Any) -> None:
    """Makes a Keras variable read and write `backing` (a tf.Variable) from now on."""
    _put(variable, "_value", backing)


# --- models and optimizers --------------------------------------------------------


def model_strategy(model: Any) -> Any:
    """The strategy a model runs its train/test/predict functions under (None: none set)."""
    return _get(model, "_distribute_strategy", None)


def set_model_strategy(model: Any, strategy: Any) -> None:
    """Makes `model` run its train/test/predict functions under `strategy`."""
    strategy._compat_served = True  # the fixes for older Keras apply under it
    _put(model, "_distribute_strategy", strategy)


def symbolic_build(model: Any, data_batch: Any) -> None:
    """Keras's own `_maybe_symbolic_build` (3.5+), which learns the model's shapes from a batch."""
    _get(TensorFlowTrainer, "_maybe_symbolic_build")(model, data_batch=data_batch)


def assert_compile_called(model: Any, method: str) -> None:
    """Keras's error for `method` called on a model that was never compiled."""
    _get(model, "_assert_compile_called")(method)


def metrics_in_order(model: Any, logs: dict[str, Any]) -> Any:
    """`*_on_batch` logs as the list Keras returns without `return_dict` (its metrics' order)."""
    return _get(model, "_flatten_metrics_in_order")(logs)


def inputs_structure(model: Any) -> Any:
    """The structure (list, dict...) a functional model takes its inputs in; None if unknown."""
    return _get(model, "_inputs_struct", None)


def build_shapes(model: Any) -> Any:
    """The input shapes a subclassed model was built with ({argument: shape}); None if unknown."""
    return _get(model, "_build_shapes_dict", None)


def batch_moments(layer: Any) -> Any:
    """A BatchNormalization layer's method computing a batch's mean and variance."""
    return _get(layer, "_moments")


def replace_batch_moments(layer: Any, moments: Any) -> None:
    """Gives one BatchNormalization layer its own `moments(inputs, mask)` (its class keeps Keras's)."""
    batch_moments(layer)
    layer.__dict__["_moments"] = moments


def rebind_optimizer(optimizer: Any, strategy: Any) -> None:
    """Points an optimizer (maybe built) at `strategy` after its variables were mirrored.

    Keras 3's TF optimizer remembers the strategy it was created under, and a built
    optimizer finds a variable's slots by the backing tf.Variable's id, which changed.
    """
    _put(optimizer, "_distribution_strategy", strategy)
    known = _get(optimizer, "_trainable_variables", None)
    if known:
        var_key = _get(optimizer, "_var_key")
        _put(optimizer, "_trainable_variables_indices", {var_key(v): i for i, v in enumerate(known)})


# --- Keras before 3.8: gradients under MirroredStrategy ----------------------------------
#
# Keras 3.3-3.7 do not scale each replica's loss by 1/replicas, yet sum the replicas'
# gradients: a step on N replicas moved the weights N times as far as the same step on
# one device (native MirroredStrategy code too). Keras 3.3 and 3.4 also sum them only
# inside a merge call, where there is no replica context left to reduce in, so each
# replica applied its own gradients and the replicas drifted apart. On models the shim
# distributes (the parallel model and its template), the optimizer step averages the
# replicas' gradients first, which equals the single-device step over the global batch,
# as with the original `multi_gpu_model`. Keras 3.8 scales the loss: nothing to fix.
def gradients_need_averaging() -> bool:
    return not hasattr(importlib.import_module(_internals.K3_LOSS), "scale_loss_for_distribution")


def _served_by_shim(strategy: Any) -> bool:
    return bool(getattr(strategy, "_compat_served", False))


def _update_with_averaged_gradients(
    optimizer: Any, grads: list[Any], trainable_variables: list[Any], learning_rate: Any
) -> None:
    """The optimizer step with the gradients averaged across replicas first."""
    pairs = [
        (g, v if isinstance(v, tf.Variable) else v.value)  # the backing (mirrored) tf.Variable
        for g, v in zip(grads, trainable_variables)
        if g is not None
    ]
    replica = tf.distribute.get_replica_context()
    if replica is not None and pairs:
        averaged = replica.all_reduce(tf.distribute.ReduceOp.MEAN, [g for g, _ in pairs])
        pairs = list(zip(averaged, (v for _, v in pairs)))

    def _apply(strategy: Any, pairs: list[Any], learning_rate: Any) -> None:
        for grad, variable in pairs:
            strategy.extended.update(
                variable,
                lambda var, grad, lr: optimizer.update_step(grad, var, lr),
                args=(grad, learning_rate),
                group=False,
            )

    if replica is None:
        _apply(tf.distribute.get_strategy(), pairs, learning_rate)
    else:
        replica.merge_call(_apply, args=(pairs, learning_rate))


def _install_gradient_averaging() -> None:
    optimizer_class = _resolve(_internals.K3_OPTIMIZER, "TFOptimizer")
    original = _get(optimizer_class, "_backend_update_step")
    if _patching.is_marked(original, "_compat_averaging"):
        return

    def _backend_update_step(self: Any, grads: Any, trainable_variables: Any, learning_rate: Any) -> Any:
        if not _served_by_shim(tf.distribute.get_strategy()):
            return original(self, grads, trainable_variables, learning_rate)
        return _update_with_averaged_gradients(self, grads, trainable_variables, learning_rate)

    _patching.mark(_backend_update_step, "_compat_averaging")
    _put(optimizer_class, "_backend_update_step", _backend_update_step)


def install_fixes() -> None:
    """The Keras 3 fixes that patch Keras itself (idempotent): Keras 3.3-3.7's optimizer step."""
    if gradients_need_averaging():
        _install_gradient_averaging()


def distribute_strategy_of(value: Any) -> Any:
    """The strategy a distributed tf value belongs to."""
    return _tf_internals.distribute_strategy_of(value)
