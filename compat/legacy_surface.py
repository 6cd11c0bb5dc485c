"""The device helpers of Keras 2's `multi_gpu_utils` and `tensorflow_backend` modules.

Scripts and test suites of 2017-2020 counted GPUs with them, e.g.
`len(K.tensorflow_backend._get_available_gpus())` or
`multi_gpu_utils._normalize_device_name(name)` for each name of
`multi_gpu_utils._get_available_devices()`. The import hook serves them on
the legacy modules; they answer with the GPUs `multi_gpu_model` would use,
so simulated GPUs count too. TensorFlow is imported on first call only.
"""

from __future__ import annotations

from . import _devices

__all__ = ["_get_available_devices", "_get_available_gpus", "_normalize_device_name"]

_FULL_NAME = "/job:localhost/replica:0/task:0/device:{kind}:{index}"


def _full_name(short: str) -> str:
    # '/gpu:3' -> '/job:localhost/replica:0/task:0/device:GPU:3', as TensorFlow names devices.
    kind, _, index = short.lstrip("/").partition(":")
    return _FULL_NAME.format(kind=kind.upper(), index=index)


def _get_available_devices() -> list[str]:
    """Full names of this machine's devices (CPU and GPUs), as Keras 2 listed them."""
    return [_full_name(d) for d in _devices.available_devices()]


def _normalize_device_name(name: str) -> str:
    """'/job:localhost/replica:0/task:0/device:GPU:0' -> '/gpu:0' (Keras 2's short form)."""
    return _devices.short_name(name)


def _get_available_gpus() -> list[str]:
    """Full names of the GPUs `multi_gpu_model` can use (simulated ones in simulation mode)."""
    return [name for name in _get_available_devices() if ":GPU:" in name]
