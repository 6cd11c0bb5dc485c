"""The accessors for the private TensorFlow internals the shim uses (named in `_internals`).

Multi-worker training must configure TensorFlow's eager context before it is first
initialised and give MultiWorkerMirroredStrategy simulated devices; both need
`tensorflow.python` modules that TensorFlow does not export. They are reached here
and only here. A missing internal raises `UnsupportedVersionError` naming it, never an
ImportError from a private module; importing this module changes nothing (the version
check is the start-up routine's, `startup.run`).
"""

from __future__ import annotations

import importlib
from typing import Any

from . import _internals, _stack, _support

__all__ = [
    "eager_context",
    "context_initialized",
    "collective_extended_class",
    "coordination_config_pb2",
    "coordination_leader",
    "distribute_strategy_of",
    "cross_device_ops",
    "missing_internals",
]

# The modules the accessors below reach, by the registry's names (`_internals`).
_MODULES = {
    "context": _internals.TF_CONTEXT,
    "collective_all_reduce_strategy": _internals.TF_COLLECTIVE,
    "multi_worker_util": _internals.TF_MULTI_WORKER_UTIL,
}


def _module(key: str) -> Any:
    name = _MODULES[key]
    try:
        return importlib.import_module(name)
    except ImportError as err:
        raise _support.missing_internal(_stack.backend(), f"`{name}`", str(err)) from None


def _lookup(key: str, dotted: str) -> Any:
    value = _module(key)
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


def missing_internals() -> list[str]:
    """The private internals this TensorFlow lacks (empty on every tested version): the registry's."""
    return _internals.missing(_internals.TENSORFLOW)


def _require(key: str, dotted: str) -> Any:
    try:
        return _lookup(key, dotted)
    except AttributeError:
        raise _support.missing_internal(
            _stack.backend(), f"`{_MODULES[key]}.{dotted}`"
        ) from None


def eager_context() -> Any:
    """The process's eager `Context` object (not initialising it)."""
    return _require("context", "context")()


def context_initialized(ctx: Any = None) -> bool:
    """Whether TensorFlow has initialised its context (devices fixed, ops run)."""
    ctx = eager_context() if ctx is None else ctx
    return bool(_get(ctx, "_initialized"))


def context_class() -> Any:
    """The eager `Context` class, whose `ensure_initialized` multi-worker training wraps."""
    cls = _require("context", "Context")
    _require("context", "Context.ensure_initialized")
    return cls


def collective_setup_pending(ctx: Any) -> bool:
    """True when no collective strategy has configured the context yet."""
    return _get(ctx, "_collective_leader", None) is None and _get(ctx, "_collective_ops_server_def", None) is None


def collective_extended_class() -> Any:
    """MultiWorkerMirroredStrategy's `extended` class (picks each worker's local devices)."""
    _require("collective_all_reduce_strategy", "CollectiveAllReduceExtended._initialize_local_devices")
    return _require("collective_all_reduce_strategy", "CollectiveAllReduceExtended")


def local_devices_method() -> Any:
    """`CollectiveAllReduceExtended._initialize_local_devices(self, resolver, worker_device)`,
    which returns a worker's replica devices and their type."""
    return _get(collective_extended_class(), "_initialize_local_devices")


def set_local_devices_method(method: Any) -> None:
    """Replaces the method `local_devices_method` returns (and puts the original back)."""
    _internals.put(collective_extended_class(), "_initialize_local_devices", _internals.TENSORFLOW, method)


def coordination_config_pb2() -> Any:
    """The protobuf module describing coordinated jobs."""
    try:
        return importlib.import_module(_internals.TF_COORDINATION_CONFIG)
    except ImportError:
        return _require("collective_all_reduce_strategy", "coordination_config_pb2")


def coordination_leader(cluster_spec: Any) -> str:
    """The task that leads the coordination service, as MultiWorkerMirroredStrategy picks it."""
    return _require("multi_worker_util", "coordination_leader")(cluster_spec)


def distribute_strategy_of(value: Any) -> Any:
    """The strategy a distributed value (e.g. a MirroredVariable) belongs to."""
    return _get(value, "_distribute_strategy")


def cross_device_ops(strategy: Any, default: Any = _internals._REQUIRED) -> Any:
    """The `CrossDeviceOps` a MirroredStrategy was created with (`default` for another strategy)."""
    return _get(strategy.extended, "_cross_device_ops", default)


def _get(obj: Any, name: str, default: Any = _internals._REQUIRED) -> Any:
    return _internals.get(obj, name, _internals.TENSORFLOW, default)
