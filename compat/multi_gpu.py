"""`multi_gpu_model`, as Keras 2 had it, served by `tf.distribute.MirroredStrategy`."""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from . import _devices, _gpus, _internals, _parallel, backend, multi_worker, startup
from .notices import notify_once

__all__ = ["multi_gpu_model"]

_SERVED_NOTICE = (
    "`multi_gpu_model` was removed from Keras; this call is served by multi-gpu-compat "
    "on tf.distribute.MirroredStrategy over {devices}. To migrate the script for good, "
    "run `multi-gpu-codemod <path>` and see MIGRATION.md."
)


def multi_gpu_model(
    model: Any,
    gpus: Any = None,
    cpu_merge: bool = True,
    cpu_relocation: bool = False,
    *,
    cross_device_ops: Any = None,
    strategy: Any = None,
    output_naming: str | None = None,
) -> Any:
    """Replicates a model on different GPUs.

    Restores Keras 2's `keras.utils.multi_gpu_model` on top of
    `tf.distribute.MirroredStrategy`. Each global batch is split evenly across
    the replicas (e.g. `batch_size=256` on 8 GPUs: 32 samples per GPU), and
    gradients are combined across replicas at every step.

    The returned model and `model` share their variables, live, in both
    directions: after training the returned model, `model` holds the trained
    weights. Save with `model.save(fname)` or `model.save_weights(fname)` as
    before; saving the returned model writes the same single-device template.
    The template is recovered as `parallel.layers[-(n_outputs + 1)]` or
    `parallel.get_layer(model.name)`, as with the original.

    Example:

    ```python
    parallel_model = multi_gpu_model(model, gpus=2)
    parallel_model.compile(loss="categorical_crossentropy", optimizer="rmsprop")
    parallel_model.fit(x, y, epochs=20, batch_size=256)
    model.save("my_model.h5")  # the template holds the trained weights
    ```

    Args:
        model: A Keras model instance (Functional, Sequential or subclassed),
            built outside any distribution strategy scope.
        gpus: Integer >= 2, number of GPUs on which to create model replicas;
            or list of integer GPU ids. `None`, `0` or `[]` use all visible GPUs.
        cpu_merge: Accepted for compatibility. The original merged replica
            outputs on the CPU; MirroredStrategy merges nothing, so it has no
            effect.
        cpu_relocation: Accepted for compatibility. The original re-built the
            template under `/cpu:0`, which re-initialised its weights (a bug);
            here the template keeps its weights and its variables are mirrored
            on the replica devices either way.
        cross_device_ops: Keyword-only. A `tf.distribute.CrossDeviceOps`
            instance overriding the gradient reduction. Default: the
            strategy's all-reduce on GPUs, `ReductionToOneDevice` on CPU
            devices (simulation mode), the fastest correct choice for each.
        output_naming: Keyword-only. How outputs with a repeated name (a shared
            sub-model called twice) are named: `"keras"` as Keras 2.2.3-2.3 did
            (`add, nested_1, nested_2`), `"tf.keras"` as tf.keras did (`add, nested,
            nested_1`). Imported from a legacy module, the function has that module's
            naming (`from keras.utils import ...`: "keras"; `tensorflow.keras.utils`,
            `tf_keras.utils`: "tf.keras"). Default None: the template's own output names,
            a repeated one numbered from 1 (Keras 3: `add, nested_1, nested_2`; tf_keras
            names the outputs itself: `add, nested, nested_1`).

    Returns:
        A Keras model instance which can be used just like the initial `model`
        argument, but which distributes its workload on multiple GPUs.

    Raises:
        ValueError: if `gpus` asks for fewer than 2 GPUs, or for GPUs this
            machine does not have (the original messages), or repeats an id.
        TypeError: if `gpus` is neither an integer nor a list of integers.
    """
    # MirroredStrategy has no output merge to place, and mirrors the variables on
    # every replica device whatever `cpu_relocation` asks.
    del cpu_merge, cpu_relocation
    _check_output_naming(output_naming)
    backend.require_tensorflow()
    startup.run()  # done already if the import hook ran; else simulated devices, version check...
    # Created before any device query: MultiWorkerMirroredStrategy configures TensorFlow first.
    use_multi_worker = multi_worker.wants_multi_worker(strategy)
    cluster_strategy = multi_worker.get_strategy() if use_multi_worker else None
    if _gpus.is_unset(gpus):
        gpus = _devices.visible_gpu_count()
    gpu_ids = _gpus.target_gpu_ids(gpus)
    _check_devices(gpus, gpu_ids)
    _check_model(model)

    dist = _serving_strategy(gpus, gpu_ids, cluster_strategy, cross_device_ops)
    impl = _backend_for(model)
    parallel = impl.replicate(model, dist, output_naming)
    parallel.__dict__["_compat_gpus"] = list(gpu_ids)  # copies and pickles wrap again on them
    # ... with this function and naming (pickle stores both by name)
    rebuild = functools.partial(multi_gpu_model, output_naming=output_naming) if output_naming else multi_gpu_model
    parallel.__dict__["_compat_rebuild"] = rebuild
    if use_multi_worker:  # template.save(path) writes the real file on the chief only
        multi_worker.chief_aware_saving(model)
        multi_worker.cluster_aware_fit(parallel)
    try:
        caller = sys._getframe(1)
    except ValueError:  # called straight from C (reticulate, threads): no Python caller
        caller = None
    if caller is not None:
        _adopt_wrapper_instance(caller, model, impl.ParallelModel)
    return parallel


def served(output_naming: str) -> Any:
    """`multi_gpu_model` as the legacy modules of one family serve it: with their `output_naming`.

    A `functools.partial`, so that no frame is added between the script and the function (it
    reads its caller's frame, and its warnings point at the script's line); it carries the
    function's name, module and documentation, and its own signature.
    """
    _check_output_naming(output_naming)
    function = functools.partial(multi_gpu_model, output_naming=output_naming)
    signature = inspect.signature(function)
    functools.update_wrapper(function, multi_gpu_model)
    del function.__wrapped__  # type: ignore[attr-defined]  # the signature is the partial's own
    function.__signature__ = signature  # type: ignore[attr-defined]
    return function


def _check_output_naming(output_naming: Any) -> None:
    if output_naming is not None and output_naming not in _parallel.OUTPUT_NAMINGS:
        raise ValueError(
            "`output_naming` must be None, \"keras\" (Keras 2.2.3-2.3's names) or \"tf.keras\" "
            f"(tf.keras's names). Received: output_naming={output_naming!r}"
        )


def _serving_strategy(gpus: Any, gpu_ids: Sequence[int], cluster_strategy: Any, cross_device_ops: Any) -> Any:
    """The strategy this call runs on (the cluster's, the one whose scope the call is in,
    or a MirroredStrategy over `gpu_ids`).

    Says once per process which strategy serves `multi_gpu_model`. The warning points
    at the line that called `multi_gpu_model`.
    """
    if cluster_strategy is not None:
        multi_worker.check_gpus(gpu_ids, cluster_strategy)
        notice = multi_worker.served_notice(cluster_strategy)
        dist = cluster_strategy
    else:
        devices = _devices.replica_devices(gpu_ids)
        enclosing = _devices.enclosing_strategy()
        if enclosing is not None:
            dist = _devices.adopt_enclosing(enclosing, devices, _gpus.brief(gpus), cross_device_ops)
        else:
            dist = _devices.strategy_for(devices, cross_device_ops)
        notice = _SERVED_NOTICE.format(devices=[f"/gpu:{i}" for i in gpu_ids])
    notify_once("served", notice, stacklevel=4)
    return dist


def _backend_for(model: Any) -> ModuleType:
    """The module that distributes `model`: `_tf_keras` for Keras 2 models, else `_keras3`."""
    if backend.is_keras2_model(model):
        startup.run(backend="keras2")  # Keras 2's private internals resolve, before its backend is imported
        from . import _tf_keras

        return _tf_keras
    startup.run(backend="keras3")  # Keras 3's check and fixes, before its backend is imported
    from . import _keras3

    return _keras3


def _adopt_wrapper_instance(caller: Any, template: Any, parallel_class: type) -> None:
    """Supports the `ModelMGPU(Model)` recipe of 2017-2018.

    Its `__init__` calls `multi_gpu_model` and copies the result's `__dict__`
    into itself without calling `Model.__init__`. That worked when every Keras
    `Model` could run a graph; today only functional models can, so the
    half-built instance also becomes a ParallelModel (its own methods, such as
    a `__getattribute__` that sends save/load to the template, come first).
    Any other caller (a plain trainer class, a fully built model subclass, a
    method other than `__init__`) keeps its class.
    """
    if not _follows_wrapper_recipe(caller):
        return
    instance = caller.f_locals.get("self")
    model_class = next(c for c in parallel_class.__mro__ if c.__name__ == "Model")
    if (
        not isinstance(instance, model_class)
        or instance is template
        or isinstance(instance, parallel_class)
        # `Model.__init__` has run: a working model that only holds a parallel copy.
        or "built" in vars(instance)
    ):
        return
    cls = type(instance)
    instance.__class__ = type(cls.__name__, (cls, parallel_class), {"__module__": cls.__module__})


def _follows_wrapper_recipe(caller: Any) -> bool:
    # The recipe's `__init__` runs `self.__dict__.update(parallel.__dict__)`.
    code = caller.f_code
    return code.co_name == "__init__" and "__dict__" in code.co_names


def _check_devices(gpus: Any, gpu_ids: Any) -> None:
    # Checked before any strategy exists: MirroredStrategy on missing GPUs hangs in fit.
    available_devices = _devices.available_devices()
    available = set(available_devices)
    # Stops at the first missing device: `gpus=10**8` costs no more than `gpus=8`.
    if "/cpu:0" in available and all(f"/gpu:{i}" in available for i in gpu_ids):
        return
    raise ValueError(
        "To call `multi_gpu_model` with `gpus=%s`, we expect the following "
        "devices to be available: %s. However this machine only has: %s. "
        "Try reducing `gpus`."
        % (_gpus.brief(gpus), _gpus.device_names(gpu_ids), _gpus.brief(available_devices))
    )


def _check_model(model: Any) -> None:
    if any(cls.__module__.startswith("tensorflow.python.keras") for cls in type(model).__mro__):
        # TensorFlow's frozen internal Keras copy: its variables cannot be mirrored.
        raise TypeError(
            "`multi_gpu_model` cannot distribute a model built with "
            "`tensorflow.python.keras`, TensorFlow's internal copy of an old Keras. Build "
            "the model with the public API instead: import from `tensorflow.keras` (or "
            "`keras`) rather than `tensorflow.python.keras`. "
            f"Received: model={getattr(model, 'name', model)!r} of type {type(model).__name__}"
        )
    # `built` first: tf_keras raises (not AttributeError) for `variables` of an unbuilt model.
    if not (hasattr(model, "built") and callable(getattr(model, "fit", None))):
        raise TypeError(
            "`multi_gpu_model` expects a Keras model instance as its first argument. "
            f"Received: model={model!r} of type {type(model).__name__}"
        )
    _check_stateless(model)
    if not model.built:
        raise ValueError(
            "`multi_gpu_model` needs a built model so that its weights exist: build "
            "it with an `Input`, an `input_shape`, or by calling it on a batch of data "
            "first. Received an unbuilt model " + repr(getattr(model, "name", model))
        )


def _check_stateless(model: Any) -> None:
    """Refuses stateful recurrent layers, whose state holds one row per sample of a fixed batch.

    Replicas each see a slice of the batch, so the state's batch size cannot match any of
    them (hand-written MirroredStrategy code fails in `fit` for the same reason).
    """
    for layer in _internals.sublayers(model):
        if getattr(layer, "stateful", False) is True:
            raise ValueError(
                f"`multi_gpu_model` cannot replicate the stateful layer {layer.name!r}: its state "
                "holds one row per sample of a fixed batch, which replicas that each see a "
                "slice of the batch cannot share. Build the template with `stateful=False`, or "
                f"train the stateful model on one device. Received: {type(layer).__name__} "
                f"{layer.name!r} with stateful=True in model {getattr(model, 'name', model)!r}"
            )
