"""Simulation mode: N logical CPU devices stand in for GPUs 0..N-1 on machines without GPUs.

Set `MULTI_GPU_COMPAT_SIMULATE_GPUS=N` in the environment (applied as soon as
TensorFlow is imported, by the start-up routine the import hook runs) or call `multi_gpu_compat.simulate_gpus(N)`
before TensorFlow initialises its devices. Then `multi_gpu_model(model, gpus=N)`
runs N replicas, and plain `tf.distribute.MirroredStrategy()` uses the N devices,
with `/gpu:i` in its `devices` mapped onto them instead of hanging.
`tf.config.list_logical_devices("GPU")` lists them as GPUs 0..N-1, so migrated code that
counts or slices the GPUs it finds sees N (physical devices stay real: memory-growth set-up
code runs on them).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from . import _hook_state, _patching, _settings

ENV_VAR = _settings.SIMULATE_GPUS

_simulated = 0
_ignored_values_reported: set[str] = set()


def simulated_gpus() -> int:
    """How many GPUs simulation mode provides in this process (0: simulation is off)."""
    return _simulated


def simulate_gpus(n: int) -> None:
    """Splits the CPU into `n` logical devices that stand in for GPUs `0..n-1`.

    Call it before TensorFlow initialises its devices (before any op, model or
    device query); afterwards TensorFlow cannot change its devices any more.

    Args:
        n: number of GPUs to simulate, an integer >= 1.

    Raises:
        ValueError: if `n` is not a positive integer, or simulation already
            runs with a different count.
        RuntimeError: if TensorFlow has already initialised its devices.
    """
    global _simulated
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(
            f"`simulate_gpus` expects a positive integer number of GPUs. Received: n={n!r}"
        )
    if _simulated == n:
        return
    if _simulated:
        raise ValueError(
            f"Simulation mode already provides {_simulated} GPUs in this process; "
            f"it cannot change to {n}. Start a new process to change the count."
        )
    from .backend import require_tensorflow

    require_tensorflow()  # says what to install, where a bare import would not
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    current = tf.config.get_logical_device_configuration(cpu)
    if current is None or len(current) != n:
        try:
            tf.config.set_logical_device_configuration(
                cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(n)]
            )
            _give_each_replica_a_thread(tf, n)
        except RuntimeError as err:
            raise RuntimeError(
                f"`multi_gpu_compat.simulate_gpus({n})` was called after TensorFlow initialised "
                "its devices, which cannot be changed any more. Call it at the top of "
                "the script, before building any model or running any op, or set "
                f"{ENV_VAR}={n} in the environment before starting Python."
            ) from err
    _simulated = n
    _patch_mirrored_strategy()
    _patch_gpu_listing()


def _give_each_replica_a_thread(tf: Any, n: int) -> None:
    """Sizes TensorFlow's inter-op pool so that N replicas on few cores cannot starve.

    Within one step the replicas wait on each other (input shards, reductions). By
    default TensorFlow runs ops on one inter-op thread per core, so 8 simulated GPUs
    on 2 cores can all be blocked waiting while the op they need has no thread left.
    A setting the user made is kept.
    """
    if tf.config.threading.get_inter_op_parallelism_threads() == 0:
        tf.config.threading.set_inter_op_parallelism_threads(max(os.cpu_count() or 1, n + 2))


def simulated_device(spec: Any) -> str:
    """Maps a device onto the simulated devices: `/gpu:i` becomes `/cpu:i`.

    `spec` is a device string or a `tf.config.LogicalDevice` (its `name` is read).
    """
    import tensorflow as tf

    spec = getattr(spec, "name", spec)
    parsed = tf.DeviceSpec.from_string(spec)
    if (parsed.device_type or "").upper() != "GPU":
        return spec
    index = parsed.device_index or 0
    if index >= _simulated:
        raise ValueError(
            f"Device {spec!r} does not exist: simulation mode provides GPUs "
            f"0..{_simulated - 1} ({ENV_VAR}={_simulated}). Use fewer GPUs or "
            "simulate more."
        )
    return parsed.replace(device_type="CPU", device_index=index).to_string()


def simulated_devices() -> list[str]:
    """The logical CPU devices standing in for GPUs 0..N-1."""
    return [f"/job:localhost/replica:0/task:0/device:CPU:{i}" for i in range(_simulated)]


def _patch_mirrored_strategy() -> None:
    # Plain `tf.distribute.MirroredStrategy` code must see the simulated GPUs too:
    # no devices means all of them, and explicit `/gpu:i` names are mapped instead
    # of hanging in `fit`. Reduction to one device is the fast choice on CPUs.
    import tensorflow as tf

    cls = tf.distribute.MirroredStrategy  # the class itself, not a subclass: patch it in place
    if _patching.is_marked(cls.__init__, "_compat_simulated"):
        return
    original_init = cls.__init__

    def __init__(self: Any, devices: Any = None, cross_device_ops: Any = None) -> None:
        import tensorflow as tf

        if _simulated:
            devices = (
                simulated_devices()
                if not devices
                else [simulated_device(d) for d in devices]
            )
            if cross_device_ops is None:
                cross_device_ops = tf.distribute.ReductionToOneDevice()
        original_init(self, devices=devices, cross_device_ops=cross_device_ops)

    _patching.mark(__init__, "_compat_simulated")
    __init__.__doc__ = original_init.__doc__
    cls.__init__ = __init__


def _patch_gpu_listing() -> None:
    # Migrated code counts and slices the GPUs it finds through the public listing
    # (`MirroredStrategy(tf.config.list_logical_devices("GPU")[:n])`, a batch size scaled by
    # `len(...)`). Listing none would run every such form on all N devices, or size the
    # batch for one, so `verify` could not tell them apart: the simulated GPUs are listed.
    import tensorflow as tf

    original = tf.config.list_logical_devices
    if _patching.is_marked(original, "_compat_simulated"):
        return

    def list_logical_devices(device_type: str | None = None) -> list[Any]:
        if (
            _simulated and isinstance(device_type, str) and device_type.upper() == "GPU"
            and not _called_from_a_library()
        ):
            return [
                tf.config.LogicalDevice(name=f"/device:GPU:{i}", device_type="GPU")
                for i in range(_simulated)
            ]
        return original(device_type)

    _patching.mark(list_logical_devices, "_compat_simulated")
    list_logical_devices.__doc__ = original.__doc__
    for namespace in (tf.config, tf.config.experimental):
        if getattr(namespace, "list_logical_devices", None) is original:
            namespace.list_logical_devices = list_logical_devices


# TensorFlow and Keras read the GPU listing to choose kernels (an LSTM picks cuDNN when
# a GPU is listed, which has no CPU kernel): they keep seeing the real devices.
_LIBRARIES = ("tensorflow", "keras", "tf_keras", "multi_gpu_compat")


def _called_from_a_library() -> bool:
    caller = sys._getframe(2).f_globals.get("__name__", "")
    return caller.partition(".")[0] in _LIBRARIES


def simulate_from_environment() -> None:
    """Applies `MULTI_GPU_COMPAT_SIMULATE_GPUS` if set; a bad value raises a clear ValueError."""
    raw = _settings.simulate_gpus()
    if not raw:
        return
    try:
        n = int(raw)
    except ValueError:
        n = -1
    if n < 1:
        raise ValueError(
            f"{ENV_VAR} must be a positive integer (the number of GPUs to simulate); "
            f"got {raw!r}. Unset it to use the real devices."
        )
    simulate_gpus(n)


def warn_if_environment_ignored() -> None:
    """Warns (once per value) when `MULTI_GPU_COMPAT_SIMULATE_GPUS` is set but not in effect.

    The variable is applied when TensorFlow is imported, by the import hook. Set later
    (e.g. `os.environ[...]` in the script), or with the hook switched off, it would
    otherwise be ignored without a word, and the script would run on the real devices.
    """
    import warnings

    raw = _settings.simulate_gpus()
    in_effect = raw.isdigit() and int(raw) == _simulated
    if not raw or in_effect or raw in _ignored_values_reported:
        return
    _ignored_values_reported.add(raw)
    if not raw.isdigit() or int(raw) < 1:
        reason = (
            "it must be a positive integer (the number of GPUs to simulate). Set it to "
            "e.g. 2 before starting Python, or unset it to use the real devices"
        )
    elif _simulated:
        reason = (
            f"this process already simulates {_simulated} GPUs and the count cannot change "
            "in a running process. Start a new process with the count you want"
        )
    elif _settings.disabled():
        reason = (
            f"{_settings.DISABLE} switches multi-gpu-compat's import hook off. Unset "
            f"{_settings.DISABLE}, or call `multi_gpu_compat.simulate_gpus({raw})` before any "
            "TensorFlow op"
        )
    elif not _hook_state.installed():
        reason = (
            "multi-gpu-compat's import hook, which applies it, is not active in this "
            "process (install the project with pip; `multi-gpu-compat doctor` tells more). "
            f"Or call `multi_gpu_compat.simulate_gpus({raw})` before any TensorFlow op"
        )
    else:
        reason = (
            "it was not set when TensorFlow started (it is read when TensorFlow is "
            "imported). Set it in the environment before starting Python, or call "
            f"`multi_gpu_compat.simulate_gpus({raw})` before any TensorFlow op"
        )
    shown = raw if raw.isdigit() else repr(raw)  # a value that is no count is quoted, as typed
    warnings.warn(f"{ENV_VAR}={shown} is ignored: {reason}.", RuntimeWarning, stacklevel=2)
