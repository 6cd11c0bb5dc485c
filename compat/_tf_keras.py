"""tf_keras (Keras 2) backend of the shim: distribute a template's variables and wrap it."""

from __future__ import annotations

from typing import Any

import tensorflow as tf
import tf_keras
from tf_keras.src.engine.functional import Functional

from compat import _devices, _parallel


def _mirror(variable: tf.Variable, strategy: Any) -> tf.Variable:
    synchronization, aggregation = variable.synchronization, variable.aggregation
    if not variable.trainable and variable.dtype.is_floating and synchronization == tf.VariableSynchronization.ON_READ:
        # tf_keras keeps BatchNormalization statistics per replica (ON_READ): predictions
        # would depend on the replica a row lands on. Mirrored with MEAN, every update
        # is averaged across replicas and all replicas hold the same statistics.
        synchronization, aggregation = tf.VariableSynchronization.ON_WRITE, tf.VariableAggregation.MEAN
    with strategy.scope():
        # The full name is kept: tf_keras matches .h5 weights by it.
        return tf.Variable(
            variable.read_value(),
            dtype=variable.dtype,
            trainable=variable.trainable,
            name=variable.name.split(":")[0],
            aggregation=aggregation,
            synchronization=synchronization,
        )


def _replace_in_lists(owner: Any, old: Any, new: Any) -> None:
    for value in list(vars(owner).values()):
        if isinstance(value, list):
            storage = getattr(value, "_storage", value)  # ListWrapper keeps a plain list
            for i, item in enumerate(storage):
                if item is old:
                    storage[i] = new


def _swap(owner: Any, old: Any, new: Any) -> None:
    """Replaces `old` with `new` wherever `owner` holds it, keeping list positions."""
    for name, value in list(vars(owner).items()):
        if value is old and not name.startswith("_self_"):
            setattr(owner, name, new)  # tf_keras re-tracks it in the same position
    _replace_in_lists(owner, old, new)


def _distribute_owned(owner: Any, variables: list[Any], strategy: Any, mapping: dict[int, Any]) -> None:
    for variable in variables:
        if isinstance(variable, tf.distribute.DistributedValues):
            if variable._distribute_strategy is strategy:
                continue
            raise _devices.foreign_strategy_error(variable.name, variable._distribute_strategy)
        new = mapping.get(id(variable))
        if new is None:
            new = mapping[id(variable)] = _mirror(variable, strategy)
        _swap(owner, variable, new)


def distribute_template(template: Any, strategy: Any) -> None:
    """Makes the template itself a distributed model that shares its variables."""
    optimizer = getattr(template, "optimizer", None)
    # Optimizer slots are found by the model variable's key, which the swap changes.
    old_keys = (
        {id(v): optimizer._var_key(v) for v in template.trainable_variables}
        if optimizer is not None and hasattr(optimizer, "_var_key")
        else {}
    )
    mapping: dict[int, Any] = {}
    for layer in template._flatten_layers(include_self=True, recursive=True):
        own = list(layer._trainable_weights) + list(layer._non_trainable_weights)
        _distribute_owned(layer, own, strategy, mapping)
    if optimizer is not None:
        _distribute_owned(optimizer, list(optimizer.variables), strategy, mapping)
        if hasattr(optimizer, "_distribution_strategy"):
            optimizer._distribution_strategy = strategy
        index = getattr(optimizer, "_index_dict", None)
        if index:
            for old_id, old_key in old_keys.items():
                if old_key in index and old_id in mapping:
                    index[optimizer._var_key(mapping[old_id])] = index.pop(old_key)
    template._distribution_strategy = strategy
    _parallel.reset_compiled_functions(template)


class ParallelModel(_parallel.ParallelMixin, Functional):
    """The model `multi_gpu_model` returns on tf_keras: the template as one layer,
    run by a MirroredStrategy, with identity layers that keep its output names."""

    def _distribute_optimizer(self, optimizer: Any) -> None:
        _distribute_owned(optimizer, list(optimizer.variables), self._compat_strategy, {})
        if hasattr(optimizer, "_distribution_strategy"):
            optimizer._distribution_strategy = self._compat_strategy


def _template_inputs(template: Any) -> list[Any]:
    """Fresh symbolic inputs like the template's (functional, or as a subclass was built)."""
    specs = template.inputs
    if specs:
        return [
            tf_keras.Input(batch_shape=tuple(t.shape), dtype=t.dtype, name=_parallel.tensor_name(t))
            for t in specs
        ]
    spec = getattr(template, "_saved_model_inputs_spec", None)
    if isinstance(spec, tf.TensorSpec):
        return [tf_keras.Input(shape=tuple(spec.shape[1:]), dtype=spec.dtype)]
    raise ValueError(
        "`multi_gpu_model` cannot tell the inputs of the subclassed model "
        f"{template.name!r}. Build it by calling it once on a batch with a single "
        "input tensor, or wrap it in a functional model: "
        "`tf.keras.Model(inputs, template(inputs))`."
    )


def build_parallel(template: Any, strategy: Any) -> ParallelModel:
    """Wraps `template` (already distributed) in a ParallelModel built under `strategy`."""
    with strategy.scope():
        inputs = _template_inputs(template)
        outputs = tf.nest.flatten(template(inputs if len(inputs) > 1 else inputs[0]))
        names = _parallel.output_names(template, len(outputs))
        outputs = [tf_keras.layers.Identity(name=n)(o) for n, o in zip(names, outputs)]
        parallel = ParallelModel(inputs, outputs if len(outputs) > 1 else outputs[0])
    parallel._init_parallel(template, strategy)
    return parallel


def replicate(template: Any, strategy: Any, relocate: bool = False) -> ParallelModel:
    """Distributes `template` onto `strategy` and returns the parallel model."""
    del relocate  # Variables are mirrored on every replica device either way.
    distribute_template(template, strategy)
    return build_parallel(template, strategy)
