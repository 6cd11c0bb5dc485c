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

from . import _devices, _internals, _parallel, backend


# A Keras 2 module by its path under the package's sources (`engine.functional` is
# `tf_keras.src.engine.functional`); every private internal used here is in `_internals`.
_private = _internals.keras2_module


# Named for the package most users have; on TF 2.12-2.15 it is `keras` (Keras 2).
tf_keras = importlib.import_module(backend.keras2_package_name())
Functional: Any = _private("engine.functional").Functional  # an untyped Keras class


def _mirror(variable: tf.Variable, strategy: Any, keep_synchronization: bool = False) -> tf.Variable:
    autocast_variable = _private("mixed_precision.autocast_variable")

    if isinstance(variable, autocast_variable.AutoCastVariable):
        # Mixed precision: mirror the float32 variable inside, then wrap it again so
        # layers keep reading it in their compute dtype.
        return autocast_variable.create_autocast_variable(
            _mirror(variable._variable, strategy, keep_synchronization)
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
        storage = getattr(container, "_storage", container)  # ListWrapper keeps a plain list
        items = enumerate(storage)
    elif isinstance(container, dict):
        storage = getattr(container, "_storage", container)  # and DictWrapper a plain dict
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
    dependencies = getattr(owner, "_self_unconditional_checkpoint_dependencies", None) or []
    for i, ref in enumerate(dependencies):
        if ref.ref is old:
            dependencies[i] = type(ref)(name=ref.name, ref=new)
            owner._self_unconditional_dependency_names[ref.name] = new


def _distribute_owned(
    owner: Any, variables: list[Any], strategy: Any, mapping: dict[int, Any], keep_synchronization: bool = False
) -> None:
    for variable in variables:
        if isinstance(variable, tf.distribute.DistributedValues):
            if variable._distribute_strategy is strategy:
                continue
            if not _devices.is_shim_strategy(variable._distribute_strategy):
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
    losses = getattr(layer, "_callable_losses", None) or []
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
        for layer in metric._flatten_layers(include_self=True, recursive=True):
            own = list(layer._trainable_weights) + list(layer._non_trainable_weights)
            _distribute_owned(layer, own, strategy, {}, keep_synchronization=True)


def _optimizer_variables(optimizer: Any) -> list[Any]:
    # `variables` is a list on tf_keras optimizers and a method on the legacy ones.
    variables = optimizer.variables
    return list(variables() if callable(variables) else variables)


def _slot_key(optimizer: Any, variable: Any) -> Any:
    if hasattr(optimizer, "_var_key"):
        return optimizer._var_key(variable)
    return _private("optimizers.legacy.optimizer_v2")._var_key(variable)


def _distribute_optimizer(optimizer: Any, strategy: Any, mapping: dict[int, Any], old_keys: dict[int, Any]) -> None:
    """Moves an optimizer and its state onto `strategy`; slots follow their model variables."""
    _distribute_owned(optimizer, _optimizer_variables(optimizer), strategy, mapping)
    if hasattr(optimizer, "_distribution_strategy"):
        optimizer._distribution_strategy = strategy
    # Slots are found by the model variable's key (`_index_dict` on tf_keras optimizers,
    # `_slots` on the legacy ones), which the swap changed.
    for table in (getattr(optimizer, "_index_dict", None), getattr(optimizer, "_slots", None)):
        if not table:
            continue
        for old_id, old_key in old_keys.items():
            if old_key in table and old_id in mapping:
                table[_slot_key(optimizer, mapping[old_id])] = table.pop(old_key)


def distribute_template(template: Any, strategy: Any) -> None:
    """Makes the template itself a distributed model that shares its variables."""
    optimizer = getattr(template, "optimizer", None)
    old_keys = (
        {id(v): _slot_key(optimizer, v) for v in template.trainable_variables}
        if optimizer is not None
        else {}
    )
    mapping: dict[int, Any] = {}
    layers = list(template._flatten_layers(include_self=True, recursive=True))
    for layer in layers:
        own = list(layer._trainable_weights) + list(layer._non_trainable_weights)
        _distribute_owned(layer, own, strategy, mapping)
    for layer in layers:
        _rebind_weight_losses(layer, mapping)
    if optimizer is not None:
        _distribute_optimizer(optimizer, strategy, mapping, old_keys)
    # Metrics move with it: a compiled template's (built if it trained already), and the
    # trackers a custom train_step updates (`self.loss_tracker = Mean()` in `__init__`).
    attached = [m for layer in layers for m in getattr(layer, "_metrics", None) or []]
    distribute_metrics([*template.metrics, *attached], strategy)
    template._distribution_strategy = strategy
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
        spec = getattr(template, "_saved_model_inputs_spec", None)
        if not isinstance(spec, tf.TensorSpec):
            raise _parallel.unknown_inputs_error(template, "tf.keras.Model")
        inputs = [tf_keras.Input(shape=tuple(spec.shape[1:]), dtype=spec.dtype)]
    return inputs, inputs if len(inputs) > 1 else inputs[0]


def replicate(template: Any, strategy: Any) -> ParallelModel:
    """Distributes `template` onto `strategy` and returns the parallel model."""
    _parallel.note_owner(template, getattr(template, "_distribution_strategy", None), strategy)
    distribute_template(template, strategy)
    return _parallel.build_parallel(template, strategy, ParallelModel, tf_keras, _template_inputs)
