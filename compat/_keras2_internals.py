"""The accessors for the private Keras 2 internals the shim uses (named in `_internals`).

Keras 2 is tf_keras 2.16-2.21 (`TF_USE_LEGACY_KERAS=1`) or the built-in Keras 2.12-2.15 of
TensorFlow 2.12-2.15: one code base under two package roots (`_internals.keras2_module`).
The Keras 2 backend (`_tf_keras`) swaps a template's variables for mirrored ones, which
needs what Keras 2 keeps privately: a layer's own weight lists, its weight-regularization
losses and attached metrics, its checkpoint dependencies, the plain list or dict inside a
tracking wrapper, mixed precision's inner variable, an optimizer's slot tables and key, and
a model's strategy. They are reached here and only here; a missing required one raises
`UnsupportedVersionError` naming it. Importing this module imports neither TensorFlow nor Keras.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _internals

_STACK = _internals.KERAS2
_ABSENT = object()


def _get(obj: Any, name: str, default: Any = _internals._REQUIRED) -> Any:
    return _internals.get(obj, name, _STACK, default)


def _put(obj: Any, name: str, value: Any) -> None:
    _internals.put(obj, name, _STACK, value)


# --- classes and modules --------------------------------------------------------------


def functional_class() -> Any:
    """Keras 2's `Functional` model class (the parallel model's base)."""
    return _internals.keras2_module("engine.functional").Functional


def autocast_variable_module() -> Any:
    """Mixed precision's module: `AutoCastVariable` and `create_autocast_variable`."""
    return _internals.keras2_module("mixed_precision.autocast_variable")


def inner_variable(autocast_variable: Any) -> Any:
    """The float32 variable an `AutoCastVariable` wraps."""
    return _get(autocast_variable, "_variable")


# --- layers ---------------------------------------------------------------------------


def layers_of(model: Any, include_self: bool = True) -> list[Any]:
    """Every layer of `model`, recursively (with the model itself by default)."""
    return _internals.sublayers(model, include_self=include_self)


def own_weights(layer: Any) -> list[Any]:
    """The weights a layer created itself (not those of its sub-layers), trainable first."""
    return list(_get(layer, "_trainable_weights")) + list(_get(layer, "_non_trainable_weights"))


def weight_losses(layer: Any) -> list[Any]:
    """The layer's list of loss callables (regularizers of its weights): changed in place."""
    return _get(layer, "_callable_losses", None) or []


def attached_metrics(layer: Any) -> list[Any]:
    """Metric objects attached to a layer (`self.loss_tracker = Mean()` in a model's `__init__`)."""
    return list(_get(layer, "_metrics", None) or [])


def tracked_storage(container: Any) -> Any:
    """The plain list or dict inside a tracking `ListWrapper` / `_DictWrapper`; else `container`."""
    return _get(container, "_storage", container)


def checkpoint_dependencies(owner: Any) -> list[Any]:
    """The (name, ref) pairs `add_weight` tracked on `owner` for tf.train.Checkpoint."""
    return _get(owner, "_self_unconditional_checkpoint_dependencies", None) or []


def replace_checkpoint_dependency(owner: Any, index: int, new: Any) -> None:
    """Makes `owner`'s checkpoint dependency number `index` refer to `new` (same name)."""
    dependencies = checkpoint_dependencies(owner)
    ref = dependencies[index]
    dependencies[index] = type(ref)(name=ref.name, ref=new)
    _get(owner, "_self_unconditional_dependency_names")[ref.name] = new


# --- optimizers and models --------------------------------------------------------------


def slot_key(optimizer: Any, variable: Any) -> Any:
    """The key under which `optimizer` files `variable`'s slots (tf_keras or legacy optimizer)."""
    var_key: Callable[[Any], Any] | None = _get(optimizer, "_var_key", None)
    if var_key is None:
        var_key = _get(_internals.keras2_module("optimizers.legacy.optimizer_v2"), "_var_key")
    return var_key(variable)


def set_optimizer_strategy(optimizer: Any, strategy: Any) -> None:
    """Points an optimizer that remembers its strategy (not the legacy ones) at `strategy`."""
    if _get(optimizer, "_distribution_strategy", _ABSENT) is not _ABSENT:
        _put(optimizer, "_distribution_strategy", strategy)


def slot_tables(optimizer: Any) -> list[dict[Any, Any]]:
    """The optimizer's non-empty tables keyed by `slot_key` (`_index_dict`; `_slots` on legacy ones)."""
    return [t for t in (_get(optimizer, "_index_dict", None), _get(optimizer, "_slots", None)) if t]


def model_strategy(model: Any) -> Any:
    """The strategy a model runs under (None: none set)."""
    return _get(model, "_distribution_strategy", None)


def set_model_strategy(model: Any, strategy: Any) -> None:
    """Makes `model` run its train/test/predict functions under `strategy`."""
    _put(model, "_distribution_strategy", strategy)


def saved_inputs_spec(model: Any) -> Any:
    """The input spec a subclassed model recorded when first called (None if none)."""
    return _get(model, "_saved_model_inputs_spec", None)
