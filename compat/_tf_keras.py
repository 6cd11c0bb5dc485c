"""Keras 2 backend of the shim: distribute a template's variables and wrap it.

Serves tf_keras 2.16-2.21 (`TF_USE_LEGACY_KERAS=1`) and the built-in Keras 2.12-2.15 of
TensorFlow 2.12-2.15 (the `keras` package), the code base tf_keras forked from: the same
classes under another package root (`keras.engine` in 2.12, `keras.src.engine` from 2.13).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterable
from typing import Any

import tensorflow as tf

from . import _devices, _parallel, _tf_internals, backend
from . import _keras2_internals as _internals

# Named for the package most users have; on TF 2.12-2.15 it is `keras` (Keras 2).
tf_keras = importlib.import_module(backend.keras2_package_name())
Functional: Any = _internals.functional_class()  # an untyped Keras class


def _mirror(variable: tf.Variable, strategy: Any, keep_synchronization: bool = False) -> tf.Variable:
    autocast_variable = _internals.autocast_variable_module()

    if isinstance(variable, autocast_variable.AutoCastVariable):
        # Mixed precision: mirror the float32 variable inside, then wrap it again so
        # layers keep reading it in their compute dtype.
        return autocast_variable.create_autocast_variable(
            _mirror(_internals.inner_variable(variable), strategy, keep_synchronization)
        )
    synchronization, aggregation = variable.synchronization, variable.aggregation
    if (
        not keep_synchronization  # metrics: per-replica totals, summed when read
        and not variable.trainable
        and variable.dtype.is_floating
        and synchronization == tf.VariableSynchronization.ON_READ
    ):
        # tf_keras keeps BatchNormalization statistics per replica (ON_READ): predictions
        # would depend on the replica a row lands on. Mirrored with MEAN, every update
        # is averaged across replicas and all replicas hold the same statistics.
        synchronization, aggregation = tf.VariableSynchronization.ON_WRITE, tf.VariableAggregation.MEAN
    initial = variable.read_value()  # outside the scope: `variable` may be another strategy's
    with strategy.scope():
        # The full name is kept: tf_keras matches .h5 weights by it.
        return tf.Variable(
            initial,
            dtype=variable.dtype,
            trainable=variable.trainable,
            name=variable.name.split(":")[0],
            aggregation=aggregation,
            synchronization=synchronization,
            # tf_keras keeps `kernel_constraint` & co. on the variable: the optimizer applies it.
            constraint=getattr(variable, "constraint", None),
        )


def _replace_in(container: Any, old: Any, new: Any, depth: int = 2) -> None:
    """Replaces `old` in lists and dicts (and one level of nesting: optimizer slots)."""
    items: Iterable[tuple[Any, Any]]
    if isinstance(container, list):
        storage = _internals.tracked_storage(container)  # ListWrapper keeps a plain list
        items = enumerate(storage)
    elif isinstance(container, dict):
        storage = _internals.tracked_storage(container)  # and DictWrapper a plain dict
        items = storage.items()
    else:
        return
    for key, item in list(items):
        if item is old:
            storage[key] = new
        elif depth > 1:
            _replace_in(item, old, new, depth - 1)


def _swap(owner: Any, old: Any, new: Any) -> None:
    """Replaces `old` with `new` wherever `owner` holds it, keeping list positions."""
    for name, value in list(vars(owner).items()):
        if value is old and not name.startswith("_self_"):
            setattr(owner, name, new)  # tf_keras re-tracks it in the same position
        else:
            _replace_in(value, old, new)
    # add_weight tracked `old` as a checkpoint dependency under the weight's name, which
    # setattr does not replace: tf.train.Checkpoint (and so BackupAndRestore) would save
    # and restore the old, unused variable.
    # (_track_trackable is a no-op on tf_keras layers: `_manual_tracking` is off.)
    for i, ref in enumerate(_internals.checkpoint_dependencies(owner)):
        if ref.ref is old:
            _internals.replace_checkpoint_dependency(owner, i, new)


def _distribute_owned(
    owner: Any, variables: list[Any], strategy: Any, mapping: dict[int, Any], keep_synchronization: bool = False
) -> None:
    for variable in variables:
        if isinstance(variable, tf.distribute.DistributedValues):
            current = _tf_internals.distribute_strategy_of(variable)
            if current is strategy:
                continue
            if not _devices.is_shim_strategy(current):
                raise _devices.foreign_strategy_error(variable.name)
            # Wrapped again on other devices: the new strategy takes the variable over.
        new = mapping.get(id(variable))
        if new is None:
            new = mapping[id(variable)] = _mirror(variable, strategy, keep_synchronization)
        _swap(owner, variable, new)


def _rebind_weight_losses(layer: Any, mapping: dict[int, Any]) -> None:
    """Points a layer's weight-regularization losses at the mirrored variables.

    tf_keras computes `kernel_regularizer=l2(...)` & co. from a `functools.partial`
    holding the weight it was created for: left alone, the loss would be taken from
    the old variable (its initial value, with no gradient for the trained one).
    """
    losses = _internals.weight_losses(layer)
    for i, loss in enumerate(list(losses)):
        losses[i] = _rebound(loss, mapping)


def _rebound(function: Any, mapping: dict[int, Any]) -> Any:
    # `add_loss` wraps the regularizer's partial in a partial of its own.
    if not isinstance(function, functools.partial):
        return function
    args = [mapping.get(id(a), a) if not isinstance(a, functools.partial) else _rebound(a, mapping)
            for a in function.args]
    if all(a is b for a, b in zip(args, function.args)):
        return function
    return functools.partial(function.func, *args, **(function.keywords or {}))


def distribute_metrics(metrics: Iterable[Any], strategy: Any) -> None:
    """Mirrors the variables of metric objects created outside the strategy (before the call)."""
    metric_class = tf_keras.metrics.Metric
    for metric in metrics:
        if not isinstance(metric, metric_class):
            continue
        for layer in _internals.layers_of(metric):
            _distribute_owned(layer, _internals.own_weights(layer), strategy, {}, keep_synchronization=True)


def _optimizer_variables(optimizer: Any) -> list[Any]:
    # `variables` is a list on tf_keras optimizers and a method on the legacy ones.
    variables = optimizer.variables
    return list(variables() if callable(variables) else variables)


def _distribute_optimizer(optimizer: Any, strategy: Any, mapping: dict[int, Any], old_keys: dict[int, Any]) -> None:
    """Moves an optimizer and its state onto `strategy`; slots follow their model variables."""
    _distribute_owned(optimizer, _optimizer_variables(optimizer), strategy, mapping)
    _internals.set_optimizer_strategy(optimizer, strategy)
    # Slots are found by the model variable's key, which the swap changed.
    for table in _internals.slot_tables(optimizer):
        for old_id, old_key in old_keys.items():
            if old_key in table and old_id in mapping:
                table[_internals.slot_key(optimizer, mapping[old_id])] = table.pop(old_key)


def distribute_template(template: Any, strategy: Any) -> None:
    """Makes the template itself a distributed model that shares its variables."""
    optimizer = getattr(template, "optimizer", None)
    old_keys = (
        {id(v): _internals.slot_key(optimizer, v) for v in template.trainable_variables}
        if optimizer is not None
        else {}
    )
    mapping: dict[int, Any] = {}
    layers = _internals.layers_of(template)
    for layer in layers:
        _distribute_owned(layer, _internals.own_weights(layer), strategy, mapping)
    for layer in layers:
        _rebind_weight_losses(layer, mapping)
    if optimizer is not None:
        _distribute_optimizer(optimizer, strategy, mapping, old_keys)
    # Metrics move with it: a compiled template's (built if it trained already), and the
    # trackers a custom train_step updates (`self.loss_tracker = Mean()` in `__init__`).
    attached = [m for layer in layers for m in _internals.attached_metrics(layer)]
    distribute_metrics([*template.metrics, *attached], strategy)
    _internals.set_model_strategy(template, strategy)
    _parallel.reset_compiled_functions(template)


class ParallelModel(_parallel.ParallelMixin, Functional):
    """The model `multi_gpu_model` returns on tf_keras: the template as one layer,
    run by a MirroredStrategy, with identity layers that keep its output names."""

    _keras_model_class = tf_keras.Model

    def _distribute_optimizer(self, optimizer: Any) -> None:
        _distribute_optimizer(optimizer, self._compat_strategy, {}, {})

    def _distribute_compile_objects(self, args: Any, kwargs: Any) -> None:
        # tf_keras refuses metric objects created outside the model's strategy; scripts
        # written for `multi_gpu_model` create them before the call, under no strategy.
        # compile(optimizer, loss, metrics, loss_weights, weighted_metrics, ...)
        given = list(args[2:3]) + list(args[4:5]) + [kwargs.get("metrics"), kwargs.get("weighted_metrics")]
        distribute_metrics(tf.nest.flatten(given), self._compat_strategy)


def _template_inputs(template: Any) -> tuple[list[Any], Any]:
    """Fresh symbolic inputs like the template's (functional, or as a subclass was built),
    and the structure to call it with."""
    specs = template.inputs
    if specs:
        inputs = _parallel.fresh_inputs(tf_keras, specs)
    else:
        spec = _internals.saved_inputs_spec(template)
        if not isinstance(spec, tf.TensorSpec):
            raise _parallel.unknown_inputs_error(template, "tf.keras.Model")
        inputs = [tf_keras.Input(shape=tuple(spec.shape[1:]), dtype=spec.dtype)]
    return inputs, inputs if len(inputs) > 1 else inputs[0]


def replicate(template: Any, strategy: Any, output_naming: str | None = None) -> ParallelModel:
    """Distributes `template` onto `strategy` and returns the parallel model (its outputs
    named by `output_naming`, see `_parallel.output_names`)."""
    _parallel.note_owner(template, _internals.model_strategy(template), strategy)
    distribute_template(template, strategy)
    return _parallel.build_parallel(template, strategy, ParallelModel, tf_keras, _template_inputs, output_naming)
