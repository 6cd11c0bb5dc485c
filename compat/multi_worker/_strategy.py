"""The process's one MultiWorkerMirroredStrategy: created on first use, with bounded waits."""

from __future__ import annotations

import threading
from typing import Any

from . import _keras3_reduce
from ._cluster import TIMEOUT_ENV, ClusterInfo, cluster_info, timeout_seconds
from ._watchdog import start_watchdog, stop_watchdog
from ._worker_devices import devices_per_worker, local_devices

_HEARTBEAT_TIMEOUT_S = 20  # a worker silent that long counts as dead

_lock = threading.RLock()
_strategy: Any = None
_creating = False
_creation_error: BaseException | None = None


def _configure_coordination(info: ClusterInfo | None) -> None:
    """Sets the coordination service up as MWMS would, but with bounded waits."""
    import tensorflow as tf

    from .. import _tf_internals

    ctx = _tf_internals.eager_context()
    if info is None or not info.is_multi_worker or ctx.coordination_service is not None:
        return
    spec = tf.train.ClusterSpec(info.cluster)
    jobs = [
        _tf_internals.coordination_config_pb2().CoordinatedJob(name=job, num_tasks=spec.num_tasks(job))
        for job in ("chief", "worker")
        if job in spec.jobs
    ]
    ctx.configure_coordination_service(
        service_type="standalone",
        service_leader=_tf_internals.coordination_leader(spec),
        coordinated_jobs=jobs,
        cluster_register_timeout_in_ms=timeout_seconds() * 1000,
        heartbeat_timeout_in_ms=_HEARTBEAT_TIMEOUT_S * 1000,
    )


def _create_strategy() -> Any:
    import tensorflow as tf

    info = cluster_info()
    _configure_coordination(info)
    count = devices_per_worker()
    addresses = info.cluster if info is not None else {}
    message = (
        f"MultiWorkerMirroredStrategy could not connect the cluster {addresses} within "
        f"{timeout_seconds()} s. Start every task listed in TF_CONFIG (each with its own "
        '"task"), check that the addresses are reachable from every machine, or raise '
        f"{TIMEOUT_ENV} (seconds)."
    )
    watchdog = start_watchdog(timeout_seconds(), message) if info and info.is_multi_worker else None
    try:
        with local_devices(count):
            strategy = tf.distribute.MultiWorkerMirroredStrategy()
    except (tf.errors.DeadlineExceededError, tf.errors.UnavailableError) as err:
        raise RuntimeError(f"{message} Original error: {err}") from err
    finally:
        if watchdog is not None:
            stop_watchdog(watchdog)
    _keras3_reduce.apply_to(strategy)
    return strategy


def _context_initialized() -> bool:
    from .. import _tf_internals

    return _tf_internals.context_initialized()


def get_strategy() -> Any:
    """The process's MultiWorkerMirroredStrategy, created on first use.

    Raises:
        RuntimeError: if TensorFlow already initialised its context (ran an op,
            built a model) before the strategy could be created, with what to do.
    """
    global _strategy, _creating
    with _lock:
        if _strategy is not None:
            return _strategy
        if _creation_error is not None:
            raise _creation_error
        info = cluster_info()
        if _context_initialized() and info is not None and info.is_multi_worker:
            raise RuntimeError(
                "`multi_gpu_model` cannot start multi-worker training: TensorFlow already "
                "ran an operation in this process, and MultiWorkerMirroredStrategy must "
                "configure TensorFlow before that. multi-gpu-compat does it automatically "
                "when TF_CONFIG (or MULTI_GPU_COMPAT_STRATEGY=multi_worker) is set in the "
                "environment before Python starts and the script imports keras, tf_keras "
                "or multi_gpu_compat before building its model. Set TF_CONFIG in the environment "
                "rather than in the script, or import `multi_gpu_compat` at the top of the script."
            )
        _creating = True
        try:
            _strategy = _create_strategy()
        finally:
            _creating = False
        return _strategy


def creation_pending() -> bool:
    """True until the strategy exists, is being created, or failed to be created."""
    return not _creating and _strategy is None and _creation_error is None


def create_now() -> None:
    """Creates the strategy; a failure is kept and raised again where `multi_gpu_model` is called."""
    global _creation_error
    try:
        get_strategy()
    except BaseException as err:
        _creation_error = err
        raise


def served_notice(strategy: Any) -> str:
    """The one-time notice saying which strategy serves `multi_gpu_model` on this worker."""
    info = cluster_info()
    task = f"{info.task_type} {info.task_id}" if info is not None else "a single worker"
    return (
        "`multi_gpu_model` was removed from Keras; this call is served by multi-gpu-compat "
        f"on tf.distribute.MultiWorkerMirroredStrategy: {strategy.num_replicas_in_sync} "
        f"replicas in all, {len(strategy.extended.worker_devices)} on this worker ({task}). "
        "To migrate the script for good, run `multi-gpu-codemod <path>` and see MIGRATION.md."
    )
