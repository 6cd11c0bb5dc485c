"""A worker's replica devices: simulated GPUs for MultiWorkerMirroredStrategy, and `gpus` checked against them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from .. import simulation


def devices_per_worker() -> int | None:
    """Replica devices per worker under simulation mode; None: TensorFlow decides (its GPUs)."""
    return simulation.simulated_gpus() or None


@contextlib.contextmanager
def local_devices(count: int | None) -> Iterator[None]:
    """MWMS puts one replica on a worker's CPU, whatever its logical devices; use `count`."""
    if not count:
        yield
        return
    from .. import _tf_internals

    original = _tf_internals.local_devices_method()

    def _initialize_local_devices(self: Any, cluster_resolver: Any, worker_device: str) -> Any:
        devices, device_type = original(self, cluster_resolver, worker_device)
        if device_type != "CPU":
            return devices, device_type
        return tuple(f"{worker_device}/device:CPU:{i}" for i in range(count)), "CPU"

    _tf_internals.set_local_devices_method(_initialize_local_devices)
    try:
        yield
    finally:
        _tf_internals.set_local_devices_method(original)


def check_gpus(gpu_ids: Sequence[int], strategy: Any) -> None:
    """`gpus` means devices per worker; MWMS uses all of a worker's GPUs (or simulated GPUs)."""
    per_worker = len(strategy.extended.worker_devices)
    if sorted(gpu_ids) == list(range(per_worker)):
        return
    source = (
        f"{simulation.ENV_VAR}={simulation.simulated_gpus()}"
        if simulation.simulated_gpus()
        else "the GPUs visible to TensorFlow"
    )
    raise ValueError(
        f"Multi-worker training runs one replica on each of a worker's {per_worker} "
        f"devices ({source}), so `gpus` must be {per_worker} (or None) on every worker. "
        f"Received GPU ids {gpu_ids}. To use fewer GPUs, limit what each worker sees, "
        "e.g. CUDA_VISIBLE_DEVICES=0,1."
    )
