"""Keras 3 backend of the shim: distribute a template's variables and wrap it.

Imported by `multi_gpu_model` after `startup.run(backend="keras3")` checked Keras 3 and applied its fixes."""

from __future__ import annotations

from functools import partial
from types import MethodType
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from . import _devices, _parallel
from . import _keras3_internals as _internals
from ._internals import sublayers
from ._keras3_internals import Functional, TensorFlowTrainer, pythonify_logs


def _distribute_variable(variable: Any, strategy: Any) -> None:
    """Re-creates a Keras variable's backing tf.Variable under `strategy`, keeping its value.

    The Keras `Variable` object stays the same, so every layer, optimizer and
    saving code that holds it now reads and writes the mirrored variable.
    """
    old = variable.value
    if isinstance(old, tf.distribute.DistributedValues):
        current = _internals.distribute_strategy_of(old)
        if current is strategy:
            return
        if not _devices.is_shim_strategy(current):
            raise _devices.foreign_strategy_error(variable.path)
        # Wrapped again on other devices: the new strategy takes the variable over.
    initial = old.read_value()  # read outside the new scope: `old` may be another strategy's
    if not variable.trainable and variable.dtype.startswith("float") and variable.aggregation == "none":
        # Keras 3 creates BatchNormalization statistics with aggregation "none": each
        # replica would keep its own. MEAN keeps them identical on all replicas.
        _internals.set_aggregation(variable, "mean")
    with strategy.scope():
        _internals.set_backing_variable(variable, tf.Variable(
            initial,
            dtype=old.dtype,
            trainable=old.trainable,
            name=old.name.split(":")[0],
            aggregation=_internals.tf_aggregation(variable),
            synchronization=_internals.tf_synchronization(variable),
        ))


def distribute_variables(variables: list[Any], strategy: Any) -> None:
    for variable in variables:
        _distribute_variable(variable, strategy)


def distribute_optimizer(optimizer: Any, strategy: Any) -> None:
    """Moves an optimizer (and any state it has built) onto `strategy`."""
    inner = getattr(optimizer, "inner_optimizer", None)  # LossScaleOptimizer (mixed precision)
    if inner is not None:
        distribute_optimizer(inner, strategy)
    distribute_variables(list(optimizer.variables), strategy)
    _internals.rebind_optimizer(optimizer, strategy)


def distribute_template(template: Any, strategy: Any) -> None:
    """Makes the template itself a distributed model that shares its variables."""
    distribute_variables(list(template.variables), strategy)
    if getattr(template, "optimizer", None) is not None:
        distribute_optimizer(template.optimizer, strategy)
    # Its metrics too: a compiled template's, and trackers a custom train_step updates
    # (`self.loss_tracker = keras.metrics.Mean()` in `__init__`).
    distribute_variables(list(template.metrics_variables), strategy)
    _internals.set_model_strategy(template, strategy)
    _parallel.reset_compiled_functions(template)


def _lists_to_tuples(structure: Any) -> Any:
    # tf.data would stack a Python list of arrays into one tensor.
    if isinstance(structure, (list, tuple)):
        return tuple(_lists_to_tuples(s) for s in structure)
    if isinstance(structure, dict):
        return {k: _lists_to_tuples(v) for k, v in structure.items()}
    return structure


def _row_count(structure: Any) -> int:
    return int(np.shape(tf.nest.flatten(structure)[0])[0])


class _StrategyFixes:
    """Keras 3 fixes for a model run by a MirroredStrategy.

    Keras learns the model's shapes from the first distributed batch in a way that
    fails when a replica gets no rows, and runs `*_on_batch` without splitting the
    batch across the replicas.

    The parallel model inherits them; the template gets them bound to the instance,
    since it is a distributed model too and stays usable on its own.
    """

    def _maybe_symbolic_build(self, iterator: Any = None, data_batch: Any = None) -> None:
        # Keras averages the first distributed batch across replicas just to learn its
        # shapes; with an uneven split ([3, 3, 3, 0] rows) that fails in AddN. The first
        # replica's rows carry the same shapes.
        if iterator is not None:
            try:
                batch = _internals.first_step_batch(iterator)
            except StopIteration:
                # No data at all: build nothing, so that `fit` warns that the input
                # ran out of data and returns, as it does without a strategy.
                return
            if batch is not None:
                data_batch = tf.nest.map_structure(partial(_first_replica, self), batch)
        _internals.symbolic_build(self, data_batch)

    # Keras runs *_on_batch without distributing the batch: every replica got all rows.
    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        if class_weight is not None or (y is None and sample_weight is not None):
            return TensorFlowTrainer.train_on_batch(self, x, y, sample_weight, class_weight, return_dict)
        _internals.assert_compile_called(self, "train_on_batch")
        self.make_train_function()
        self.reset_metrics()
        logs = self.train_function(_internals.step_input(_distributed_batch(self, x, y, sample_weight)))
        return _batch_logs(self, logs, return_dict)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        if y is None and sample_weight is not None:
            return TensorFlowTrainer.test_on_batch(self, x, y, sample_weight, return_dict)
        _internals.assert_compile_called(self, "test_on_batch")
        self.make_test_function()
        self.reset_metrics()
        logs = self.test_function(_internals.step_input(_distributed_batch(self, x, y, sample_weight)))
        return _batch_logs(self, logs, return_dict)

    def predict_on_batch(self, x):
        self.make_predict_function()
        outputs = self.predict_function([_distributed_batch(self, x)])
        return tf.nest.map_structure(np.asarray, outputs)


def _first_replica(model: Any, value: Any) -> Any:
    if isinstance(value, tf.distribute.DistributedValues):
        return model.distribute_strategy.experimental_local_results(value)[0]
    return value


def _distributed_batch(model: Any, x: Any, y: Any = None, sample_weight: Any = None) -> Any:
    """One batch split across the replicas, as `fit` splits each batch."""
    # Always a tuple (x,), (x, y) or (x, y, sample_weight): a bare list of inputs
    # would be read as (x, y).
    data = _lists_to_tuples(tuple(p for p in (x, y, sample_weight) if p is not None))
    rows = _row_count(data)
    if rows == 0:
        raise ValueError("Received an empty batch: pass at least one row.")
    dataset = tf.data.Dataset.from_tensor_slices(data).batch(rows)
    return next(iter(model.distribute_strategy.experimental_distribute_dataset(dataset)))


def _batch_logs(model: Any, logs: Any, return_dict: bool) -> Any:
    logs = pythonify_logs(logs)
    return logs if return_dict else _internals.metrics_in_order(model, logs)


def _bind_fixes(template: Any) -> None:
    """Gives the template the fixes, unless its class overrides those methods itself."""
    _internals.bind_trainer_methods(template, _StrategyFixes)
    template.__dict__["compile"] = MethodType(_compile_distributed_template, template)


def _compile_distributed_template(template: Any, *args: Any, **kwargs: Any) -> None:
    """`template.compile(...)` after wrapping: the template is a distributed model now.

    Its metrics and its optimizer (even one created before `multi_gpu_model`, under
    no strategy) must belong to the template's strategy, or `fit` fails with "Mixing
    different tf.distribute.Strategy objects". Training then runs on the replicas,
    with single-device results, and the variables stay shared with the parallel model.
    """
    strategy = template.distribute_strategy
    with strategy.scope():
        type(template).compile(template, *args, **kwargs)
    if getattr(template, "optimizer", None) is not None:
        distribute_optimizer(template.optimizer, strategy)


class ParallelModel(_parallel.ParallelMixin, _StrategyFixes, Functional):
    """The model `multi_gpu_model` returns on Keras 3: the template as one layer,
    run by a MirroredStrategy, with identity layers that keep its output names."""

    _carries_compile_state = False
    _keras_model_class = keras.Model

    def _distribute_optimizer(self, optimizer: Any) -> None:
        distribute_optimizer(optimizer, self._compat_strategy)

    def _distribute_compile_objects(self, args: Any, kwargs: Any) -> None:
        # Metric objects created before the call (under no strategy) would be updated by
        # every replica at once, unsynchronised: their variables are mirrored first.
        # compile(optimizer, loss, loss_weights, metrics, weighted_metrics, ...)
        given = list(args[3:5]) + [kwargs.get("metrics"), kwargs.get("weighted_metrics")]
        for metric in tf.nest.flatten(given):
            if isinstance(metric, keras.metrics.Metric):
                distribute_variables(list(metric.variables), self._compat_strategy)


def _template_inputs(template: Any) -> tuple[list[Any], Any]:
    """Fresh symbolic inputs like the template's, and the structure to call it with."""
    structure = _internals.inputs_structure(template)
    if structure is not None or hasattr(template, "inputs"):
        try:
            specs = template.inputs
        except (AttributeError, ValueError):
            specs = None
        if specs:
            inputs = _parallel.fresh_inputs(keras, specs)
            if isinstance(structure, dict):
                return inputs, tf.nest.pack_sequence_as(structure, inputs)
            return inputs, inputs if len(inputs) > 1 else inputs[0]
    # A subclassed model has no symbolic inputs: use the shape it was built with.
    shapes = _internals.build_shapes(template) or {}
    if len(shapes) == 1:
        shape = next(iter(shapes.values()))
        if isinstance(shape, (tuple, list)) and all(isinstance(d, (int, type(None))) for d in shape):
            inputs = [keras.Input(shape=tuple(shape[1:]), dtype=template.input_dtype)]
            return inputs, inputs[0]
    raise _parallel.unknown_inputs_error(template, "keras.Model", built_with=str(shapes or "no input shape"))


def _guard_empty_batches(template: Any) -> None:
    """BatchNormalization on an empty per-replica batch must not produce NaN.

    A global batch of 6 rows on 4 replicas is split [2, 2, 2, 0]; the empty
    replica's batch mean is 0/0, and averaging it into the synced moving
    statistics would turn them NaN. On an empty batch the layer now uses its
    moving statistics, so it contributes no change instead.
    """
    for layer in sublayers(template):
        if not isinstance(layer, keras.layers.BatchNormalization):
            continue
        if getattr(layer, "_compat_guarded", False):
            continue
        original = _internals.batch_moments(layer)

        def _moments(inputs: Any, mask: Any, _layer: Any = layer, _original: Any = original) -> Any:
            mean, variance = _original(inputs, mask)
            empty = tf.equal(tf.size(inputs), 0)
            moving_mean = tf.cast(_layer.moving_mean, mean.dtype)
            moving_variance = tf.cast(_layer.moving_variance, variance.dtype)
            return tf.where(empty, moving_mean, mean), tf.where(empty, moving_variance, variance)

        _internals.replace_batch_moments(layer, _moments)
        layer.__dict__["_compat_guarded"] = True


def replicate(template: Any, strategy: Any, output_naming: str | None = None) -> ParallelModel:
    """Distributes `template` onto `strategy` and returns the parallel model (its outputs
    named by `output_naming`, see `_parallel.output_names`)."""
    _parallel.note_owner(template, _internals.model_strategy(template), strategy)
    distribute_template(template, strategy)
    _bind_fixes(template)
    _guard_empty_batches(template)
    return _parallel.build_parallel(template, strategy, ParallelModel, keras, _template_inputs, output_naming)
