"""Every private internal of TensorFlow, Keras 3 and Keras 2 the shim touches, in one registry.

Private parts change between releases, so each one the shim uses is declared here, once:
where it lives, which stack needs it, and how it can be checked.

- Found without a live object (a module, class, function or method): `missing(stack)` lists
  those this installation lacks. The start-up routine checks a backend's before its first use
  (`check`: `UnsupportedVersionError` naming them, never an ImportError from a private
  module), and `multi-gpu-compat doctor` reports them.
- Set by Keras or TensorFlow on live objects (`live`, e.g. a Keras 3 variable's `_value`): only a
  live object shows them, so doctor lists them and the tests check them on live models.
- `optional`: some tested releases lack it, and the code using it checks first.

Keras 2 internals are named under the package's sources: `engine.functional` is
`tf_keras.src.engine.functional`, `keras.src.engine.functional` on Keras 2.13-2.15, and
`keras.engine.functional` on 2.12 (`keras2_module`).

The shim reaches them only through accessors: `_keras3_internals` (Keras 3), `_keras2_internals`
(tf_keras and the built-in Keras 2), `_tf_internals` (TensorFlow), and the two below that both
Keras share (`producing_layer_name`, `sublayers`). Those read and write live objects with `get`
and `put`, which accept only the attribute names declared here, so an internal the code touches
cannot be missing from doctor's list (`tests/compat/test_internals_registry.py` checks the rest
of `compat/` for private attributes of Keras or TensorFlow objects).
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from . import _stack

TENSORFLOW = "tensorflow"
KERAS3 = _stack.KERAS3
KERAS2 = "keras2"  # tf_keras and the built-in Keras 2 of TensorFlow 2.12-2.15 alike


@dataclass(frozen=True)
class Internal:
    """One private internal: `attribute` (dotted, "" for the module itself) of `module`."""

    stack: str
    module: str
    attribute: str = ""
    live: str = ""  # the kind of live object that carries it ("variable", "model"...), else ""
    optional: bool = False

    def __str__(self) -> str:
        return f"{self.module}.{self.attribute}" if self.attribute else self.module


def _declare(stack: str, module: str, *attributes: str, live: str = "", optional: bool = False) -> list[Internal]:
    return [Internal(stack, module, a, live, optional) for a in attributes or ("",)]


# Module paths the accessors use by name.
TF_CONTEXT = "tensorflow.python.eager.context"
TF_COLLECTIVE = "tensorflow.python.distribute.collective_all_reduce_strategy"
TF_MULTI_WORKER_UTIL = "tensorflow.python.distribute.multi_worker_util"
TF_COORDINATION_CONFIG = "tensorflow.core.protobuf.coordination_config_pb2"
K3_TRAINER = "keras.src.backend.tensorflow.trainer"
K3_OPTIMIZER = "keras.src.backend.tensorflow.optimizer"
K3_FUNCTIONAL = "keras.src.models.functional"
K3_LOSS = "keras.src.losses.loss"

REGISTRY: tuple[Internal, ...] = tuple(
    # --- TensorFlow: multi-worker training configures the eager context before it is
    # initialised, and gives MultiWorkerMirroredStrategy each worker's simulated devices.
    _declare(TENSORFLOW, TF_CONTEXT, "context", "Context.ensure_initialized",
             "Context.configure_coordination_service", "Context.coordination_service")
    + _declare(TENSORFLOW, TF_COLLECTIVE, "CollectiveAllReduceExtended._initialize_local_devices")
    + _declare(TENSORFLOW, TF_MULTI_WORKER_UTIL, "coordination_leader")
    # Moved here in later releases; before, reached through the collective strategy's module.
    + _declare(TENSORFLOW, TF_COORDINATION_CONFIG, optional=True)
    + _declare(TENSORFLOW, TF_CONTEXT, "Context._initialized", "Context._collective_leader",
               "Context._collective_ops_server_def", live="context")
    # A distributed value's strategy; the strategy's reduction (which devices merge).
    + _declare(TENSORFLOW, "tensorflow.python.distribute.values", "DistributedValues._distribute_strategy",
               live="variable")
    + _declare(TENSORFLOW, "tensorflow.python.distribute.mirrored_strategy",
               "MirroredExtended._cross_device_ops", live="strategy")
    # --- Keras 3 (`keras.src`, 3.3-3.15): the trainer the parallel model fixes, its reduction,
    # the functional base class, and the methods called on models, layers and optimizers.
    + _declare(KERAS3, K3_TRAINER, "TensorFlowTrainer", "TensorFlowTrainer.train_on_batch",
               "TensorFlowTrainer.test_on_batch", "TensorFlowTrainer.predict_on_batch",
               "TensorFlowTrainer._flatten_metrics_in_order", "TensorFlowTrainer._assert_compile_called",
               "reduce_per_replica")
    + _declare(KERAS3, K3_TRAINER, "TensorFlowTrainer._maybe_symbolic_build", optional=True)  # 3.5+
    + _declare(KERAS3, K3_FUNCTIONAL, "Functional")
    + _declare(KERAS3, "keras", "layers.Layer._flatten_layers", "layers.BatchNormalization._moments",
               "optimizers.Optimizer._var_key")
    # Keras 3.3-3.7 only (the gradient-averaging fix); 3.8+ scales the loss instead.
    + _declare(KERAS3, K3_OPTIMIZER, "TFOptimizer._backend_update_step", optional=True)
    + _declare(KERAS3, K3_LOSS, "scale_loss_for_distribution", optional=True)
    + _declare(KERAS3, "keras", "Variable._value", "Variable._aggregation", live="variable")
    + _declare(KERAS3, "keras", "optimizers.Optimizer._distribution_strategy",
               "optimizers.Optimizer._trainable_variables", "optimizers.Optimizer._trainable_variables_indices",
               live="optimizer")
    + _declare(KERAS3, "keras", "Model._distribute_strategy", live="model")
    + _declare(KERAS3, "keras", "Model._inputs_struct", "Model._build_shapes_dict", live="model", optional=True)
    + _declare(KERAS3, "keras", "KerasTensor._keras_history", live="tensor")
    # --- Keras 2 (tf_keras 2.16-2.21, built-in Keras 2.12-2.15): the functional base class,
    # mixed precision's variable wrapper, the legacy optimizers' slot key, and the tracking
    # lists and dicts a template's variables are swapped in.
    + _declare(KERAS2, "engine.functional", "Functional")
    + _declare(KERAS2, "engine.base_layer", "Layer._flatten_layers")
    + _declare(KERAS2, "mixed_precision.autocast_variable", "AutoCastVariable", "create_autocast_variable")
    + _declare(KERAS2, "optimizers.legacy.optimizer_v2", "_var_key")
    + _declare(KERAS2, "mixed_precision.autocast_variable", "AutoCastVariable._variable", live="variable")
    + _declare(KERAS2, "engine.base_layer", "Layer._trainable_weights", "Layer._non_trainable_weights",
               "Layer._callable_losses", "Layer._metrics", "Layer._self_unconditional_checkpoint_dependencies",
               "Layer._self_unconditional_dependency_names", live="layer")
    + _declare(KERAS2, "engine.training", "Model._distribution_strategy", live="model")
    + _declare(KERAS2, "engine.training", "Model._saved_model_inputs_spec", live="model", optional=True)
    + _declare(KERAS2, "engine.keras_tensor", "KerasTensor._keras_history", live="tensor")
    + _declare(KERAS2, "optimizers.optimizer", "Optimizer._var_key", "Optimizer._distribution_strategy",
               "Optimizer._index_dict", live="optimizer")
    + _declare(KERAS2, "optimizers.legacy.optimizer_v2", "OptimizerV2._slots", live="optimizer")
    + _declare(KERAS2, "tensorflow.python.trackable.data_structures", "ListWrapper._storage",
               "_DictWrapper._storage", live="layer")
)


def for_stack(stack: str) -> list[Internal]:
    return [i for i in REGISTRY if i.stack == stack]


def keras2_module(name: str) -> ModuleType:
    """A Keras 2 module by its path under the package's sources (see the module's docstring)."""
    from . import backend

    root = backend.keras2_package_name()
    try:
        return importlib.import_module(f"{root}.src.{name}")
    except ModuleNotFoundError as err:
        if err.name not in (f"{root}.src", f"{root}.src.{name}"):
            raise
    return importlib.import_module(f"{root}.{name}")


def _module(internal: Internal) -> ModuleType:
    if internal.stack == KERAS2 and not internal.module.startswith("tensorflow."):
        return keras2_module(internal.module)
    return importlib.import_module(internal.module)


def resolve(internal: Internal) -> Any:
    """The object `internal` names; AttributeError / ImportError when this installation lacks it."""
    value: Any = _module(internal)
    for part in internal.attribute.split(".") if internal.attribute else ():
        value = getattr(value, part)
    return value


def missing(stack: str) -> list[str]:
    """The required internals of `stack` found without a live object that this installation lacks."""
    lacking = []
    for internal in for_stack(stack):
        if internal.live or internal.optional:
            continue
        try:
            found = resolve(internal)
        except Exception:  # ImportError, AttributeError, or a private module failing to import
            found = None
        if found is None:  # a method shadowed by None is as good as gone
            lacking.append(str(internal))
    return lacking


def check(stack: str) -> None:
    """Raises `UnsupportedVersionError` naming every required internal of `stack` missing here."""
    from . import _support

    lacking = missing(stack)
    if lacking:
        backend = _stack.backend() if stack != KERAS3 else KERAS3
        raise _support.missing_internal(backend, ", ".join(f"`{name}`" for name in lacking))


# --- Reading and writing live objects' internals ----------------------------------------

_REQUIRED: Any = object()


@functools.lru_cache(maxsize=None)
def _declared_names(stack: str | None) -> frozenset[str]:
    return frozenset(
        i.attribute.rpartition(".")[2] for i in REGISTRY if stack is None or i.stack == stack
    )


def _check_declared(name: str, stack: str | None) -> None:
    if name not in _declared_names(stack):  # a bug of the shim's, found by its tests
        raise LookupError(f"`{name}` is not declared in multi_gpu_compat._internals.REGISTRY for {stack}.")


def _missing(obj: Any, name: str, stack: str | None) -> Exception:
    from . import _support

    backend = KERAS3 if stack == KERAS3 else _stack.backend()
    owner = obj.__name__ if isinstance(obj, type) else type(obj).__name__
    return _support.missing_internal(backend, f"`{owner}.{name}`")


def get(obj: Any, name: str, stack: str | None, default: Any = _REQUIRED) -> Any:
    """`obj.<name>`, a private attribute declared for `stack` (None: any stack).

    Without `default`, a missing attribute raises `UnsupportedVersionError` naming it.
    """
    _check_declared(name, stack)
    try:
        return getattr(obj, name)
    except AttributeError:
        if default is not _REQUIRED:
            return default
        raise _missing(obj, name, stack) from None


def put(obj: Any, name: str, stack: str | None, value: Any) -> None:
    """Sets `obj.<name>`, a private attribute declared for `stack` that `obj` must already have."""
    get(obj, name, stack)
    setattr(obj, name, value)


def producing_layer_name(tensor: Any) -> str | None:
    """The name of the layer that produced a symbolic Keras tensor (Keras 3 and Keras 2), or None."""
    history = get(tensor, "_keras_history", None, default=None)
    return None if history is None else str(history[0].name)


def sublayers(model: Any, include_self: bool = False) -> list[Any]:
    """Every layer inside `model`, recursively (Keras 3 and Keras 2); [] for an object without layers."""
    flatten = get(model, "_flatten_layers", None, default=None)
    return list(flatten(include_self=include_self, recursive=True)) if callable(flatten) else []
