"""Device discovery as the original function saw it, and the MirroredStrategy it runs on."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from . import _tf_internals, simulation

# MirroredStrategy objects by device tuple: a second call on the same devices reuses one.
_strategies: dict[tuple[str, ...], Any] = {}
# Held while looking up or creating a strategy: threads wrapping at once must not each
# create one (a template would then belong to a strategy the next call cannot find).
_strategies_lock = threading.Lock()


def short_name(name: str) -> str:
    """'/job:localhost/replica:0/task:0/device:GPU:0' -> '/gpu:0', as Keras 2 printed device names."""
    return "/" + name.lower().split("device:")[-1]


def available_devices() -> list[str]:
    """The machine's devices in the original error message's format, e.g. ['/cpu:0', '/gpu:0']."""
    import tensorflow as tf

    simulation.warn_if_environment_ignored()
    if simulation.simulated_gpus():
        return ["/cpu:0"] + [f"/gpu:{i}" for i in range(simulation.simulated_gpus())]
    return [short_name(d.name) for d in tf.config.list_logical_devices()]


def visible_gpu_count() -> int:
    return sum(1 for d in available_devices() if d.startswith("/gpu:"))


def replica_devices(gpu_ids: Sequence[int]) -> list[str]:
    """The TensorFlow devices the replicas run on (logical CPUs in simulation mode)."""
    if simulation.simulated_gpus():
        return [simulation.simulated_device(f"/gpu:{i}") for i in gpu_ids]
    return [f"/gpu:{i}" for i in gpu_ids]


def _default_cross_device_ops(devices: list[str]) -> Any:
    import tensorflow as tf

    # On GPUs the strategy's own choice (NCCL all-reduce) is fastest. On CPU devices
    # (simulation mode) reducing to one device measured faster than the default,
    # CollectiveAllReduce: 79 against 90 ms per training step.
    if all("gpu" in d.lower() for d in devices):
        return None
    return tf.distribute.ReductionToOneDevice()


def strategy_for(devices: list[str], cross_device_ops: Any = None) -> Any:
    """The MirroredStrategy over `devices`, created once per device set (thread-safe)."""
    with _strategies_lock:
        return _strategy_for(devices, cross_device_ops)


def _strategy_for(devices: list[str], cross_device_ops: Any) -> Any:
    import tensorflow as tf

    key = tuple(devices)
    strategy = _strategies.get(key)
    if strategy is not None:
        chosen = _tf_internals.cross_device_ops(strategy)  # what the strategy was created with
        if cross_device_ops is not None and cross_device_ops is not chosen:
            raise ValueError(
                f"`multi_gpu_model` already runs a MirroredStrategy on {list(key)} with "
                f"cross_device_ops={type(chosen).__name__}; a second call on the same "
                f"devices cannot switch to {type(cross_device_ops).__name__}. Pass the "
                "same `cross_device_ops` object, or none to reuse the existing one."
            )
        return strategy
    if cross_device_ops is None:
        cross_device_ops = _default_cross_device_ops(devices)
    strategy = tf.distribute.MirroredStrategy(devices=devices, cross_device_ops=cross_device_ops)
    _strategies[key] = strategy
    return strategy


# Strategies of the user's that `multi_gpu_model` served a call on (called inside their scope).
_adopted: list[Any] = []


def is_shim_strategy(strategy: Any) -> bool:
    """True for a MirroredStrategy that `multi_gpu_model` created or served a call on
    (its variables may move)."""
    return any(ours is strategy for ours in [*_strategies.values(), *_adopted])


def enclosing_strategy() -> Any:
    """The strategy whose `scope()` the caller is in, or None outside any scope."""
    import tensorflow as tf

    if not tf.distribute.has_strategy():
        return None
    return tf.distribute.get_strategy()


def adopt_enclosing(strategy: Any, devices: list[str], gpus: Any, cross_device_ops: Any = None) -> Any:
    """Serves a call made inside `strategy.scope()` on that strategy, if it fits the request.

    Half-migrated code builds the template outside any scope and calls `multi_gpu_model`
    inside `with MirroredStrategy().scope():`; mixing two strategies would fail in
    TensorFlow, so a MirroredStrategy over the requested devices is reused instead.
    """
    import tensorflow as tf

    theirs = [short_name(d) for d in getattr(strategy.extended, "worker_devices", ())]
    wanted = [short_name(d) for d in devices]
    chosen = _tf_internals.cross_device_ops(strategy, default=None)
    fits = (
        isinstance(strategy, tf.distribute.MirroredStrategy)
        and sorted(theirs) == sorted(wanted)
        and (cross_device_ops is None or cross_device_ops is chosen)
    )
    if not fits:
        raise ValueError(
            f"`multi_gpu_model` was called inside the scope of a {type(strategy).__name__} "
            f"over {theirs}, which does not serve `gpus={gpus}` ({wanted}"
            f"{', with the cross_device_ops given' if cross_device_ops is not None else ''}). "
            "Call `multi_gpu_model` outside `strategy.scope()`, or pass `gpus` matching that "
            "strategy's devices so that it serves the call. "
            f"Received: gpus={gpus} inside {type(strategy).__name__}.scope()"
        )
    with _strategies_lock:
        if not any(s is strategy for s in _adopted):
            _adopted.append(strategy)
    return strategy


def foreign_strategy_error(variable_name: str) -> ValueError:
    """The error for a template whose variables belong to a strategy the user created."""
    return ValueError(
        f"Variable {variable_name} was created under another tf.distribute strategy; "
        "`multi_gpu_model` expects a template built outside any strategy scope. Build the "
        "template without `strategy.scope()`, or use that strategy directly instead of "
        "`multi_gpu_model`."
    )
