"""Multi-worker training behind `multi_gpu_model`: `tf.distribute.MultiWorkerMirroredStrategy`.

When `TF_CONFIG` describes a cluster of more than one worker (or chief) task, or
`MULTI_GPU_COMPAT_STRATEGY=multi_worker` / `multi_gpu_model(..., strategy="multi_worker")`
asks for it, `multi_gpu_model` runs on one MultiWorkerMirroredStrategy (MWMS)
spanning every worker; `gpus` keeps meaning GPUs per worker.

MWMS must configure TensorFlow's collective ops before TensorFlow initialises
its context ("Collective ops must be configured at program startup"), but a
legacy script builds its model (which initialises the context) before it calls
`multi_gpu_model`. So when the environment asks for multi-worker training, this
module (imported with `multi_gpu_compat.multi_gpu`, i.e. as soon as the script imports
`keras.utils`, `tf_keras.utils` or `multi_gpu_compat`) arranges for the strategy to be
created just before the context is first initialised, and `multi_gpu_model`
picks it up later.

Also here:
- simulation mode: MWMS ignores logical CPU devices (one replica per worker);
  the strategy is created over `MULTI_GPU_COMPAT_SIMULATE_GPUS` devices per worker.
- Keras 3 (tensorflow#72388): `fit`/`evaluate` reduce per-replica scalars with
  `strategy.reduce("MEAN", v, axis=0)`, which fails on MWMS; fixed for the
  strategies created here.
- chief-aware saving: while a template is distributed on MWMS, its `save` /
  `save_weights` follow TensorFlow's rule: every worker saves (saving reads
  synchronised variables, a collective op), non-chief workers into a temporary
  directory that is deleted afterwards; only the chief writes the real file.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import tempfile
import threading
from typing import Any

from . import simulation

__all__ = [
    "STRATEGY_ENV",
    "TIMEOUT_ENV",
    "ClusterInfo",
    "cluster_info",
    "wants_multi_worker",
    "get_strategy",
    "is_chief",
    "chief_aware_saving",
]

STRATEGY_ENV = "MULTI_GPU_COMPAT_STRATEGY"
TIMEOUT_ENV = "MULTI_GPU_COMPAT_WORKER_TIMEOUT"
_STRATEGY_CHOICES = ("mirrored", "multi_worker")
_DEFAULT_TIMEOUT_S = 600  # how long a worker waits for the others to start
_HEARTBEAT_TIMEOUT_S = 20  # a worker silent that long counts as dead

_lock = threading.RLock()
_strategy: Any = None
_creating = False
_creation_error: BaseException | None = None


class ClusterInfo:
    """What TF_CONFIG says about this process's cluster."""

    def __init__(self, cluster: dict[str, list[str]], task_type: str | None, task_id: int) -> None:
        self.cluster = cluster
        self.task_type = task_type
        self.task_id = task_id

    @property
    def num_workers(self) -> int:
        return len(self.cluster.get("chief", [])) + len(self.cluster.get("worker", []))

    @property
    def is_multi_worker(self) -> bool:
        return self.num_workers > 1 and self.task_type in ("chief", "worker")

    @property
    def is_chief(self) -> bool:
        if self.task_type == "chief":
            return True
        return self.task_type == "worker" and self.task_id == 0 and not self.cluster.get("chief")

    def __repr__(self) -> str:
        return f"ClusterInfo(task={self.task_type}:{self.task_id}, workers={self.num_workers})"


def _config_error(detail: str) -> ValueError:
    return ValueError(
        f"TF_CONFIG is malformed: {detail}. Expected JSON such as "
        '{"cluster": {"worker": ["host1:12345", "host2:12345"]}, '
        '"task": {"type": "worker", "index": 0}}, with the same "cluster" on every '
        'worker and each worker\'s own "task". Fix it, or unset TF_CONFIG to train '
        "on this machine only."
    )


def cluster_info(raw: str | None = None) -> ClusterInfo | None:
    """Parses TF_CONFIG (or `raw`); None when it is unset or has no cluster.

    Raises:
        ValueError: naming what is wrong, if TF_CONFIG is not a valid cluster description.
    """
    if raw is None:
        raw = os.environ.get("TF_CONFIG", "")
    if not raw.strip():
        return None
    try:
        config = json.loads(raw)
    except json.JSONDecodeError as err:
        raise _config_error(f"not valid JSON ({err})") from None
    if not isinstance(config, dict):
        raise _config_error(f"the top level is a {type(config).__name__}, not an object")
    cluster = config.get("cluster") or {}
    if not isinstance(cluster, dict):
        raise _config_error('"cluster" must map job names to lists of "host:port" addresses')
    for job, addresses in cluster.items():
        if isinstance(addresses, dict):  # TF also accepts {index: address}
            addresses = [addresses[k] for k in sorted(addresses, key=int)]
            cluster[job] = addresses
        if not isinstance(addresses, list) or not all(
            isinstance(a, str) and ":" in a for a in addresses
        ):
            raise _config_error(f'cluster job "{job}" must be a list of "host:port" strings')
    if not cluster:
        return None
    if len(cluster.get("chief", [])) > 1:
        raise _config_error('a cluster has at most one "chief" task')
    task = config.get("task") or {}
    if not isinstance(task, dict) or "type" not in task:
        raise _config_error('"task" with this process\'s "type" and "index" is missing')
    task_type = task["type"]
    try:
        task_id = int(task.get("index", 0))
    except (TypeError, ValueError):
        raise _config_error(f'"task" index {task.get("index")!r} is not an integer') from None
    if task_type not in cluster:
        raise _config_error(f'task type "{task_type}" is not a job of "cluster" {sorted(cluster)}')
    if not 0 <= task_id < len(cluster[task_type]):
        raise _config_error(
            f'task index {task_id} is out of range: job "{task_type}" has '
            f"{len(cluster[task_type])} task(s)"
        )
    return ClusterInfo(cluster, task_type, task_id)


def _env_choice() -> str | None:
    raw = os.environ.get(STRATEGY_ENV, "").strip().lower().replace("-", "_")
    if not raw:
        return None
    if raw not in _STRATEGY_CHOICES:
        raise ValueError(
            f"{STRATEGY_ENV} must be one of {list(_STRATEGY_CHOICES)}; got "
            f"{os.environ[STRATEGY_ENV]!r}. Unset it to let TF_CONFIG decide."
        )
    return raw


def check_strategy_argument(strategy: Any) -> str | None:
    if strategy is None:
        return None
    if isinstance(strategy, str):
        choice = strategy.strip().lower().replace("-", "_")
        if choice in _STRATEGY_CHOICES:
            return choice
    raise ValueError(
        f"`strategy` must be None (decided by TF_CONFIG / {STRATEGY_ENV}), "
        f"'mirrored' (this machine only) or 'multi_worker'. Received: strategy={strategy!r}"
    )


def wants_multi_worker(strategy: Any = None) -> bool:
    """Whether `multi_gpu_model` should use MWMS: argument, then environment, then TF_CONFIG."""
    choice = check_strategy_argument(strategy) or _env_choice()
    if choice is not None:
        return choice == "multi_worker"
    info = cluster_info()
    return info is not None and info.is_multi_worker


def is_chief() -> bool:
    """True on the chief (task "chief", or worker 0 without one) or outside a cluster."""
    info = cluster_info()
    return info is None or not info.is_multi_worker or info.is_chief


def timeout_seconds() -> int:
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return _DEFAULT_TIMEOUT_S
    try:
        value = int(float(raw))
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(
            f"{TIMEOUT_ENV} must be a positive number of seconds (how long a worker "
            f"waits for the others to start); got {raw!r}."
        )
    return value


# --- creating the strategy ---------------------------------------------------------


def devices_per_worker() -> int | None:
    """Replica devices per worker under simulation mode; None: TensorFlow decides (its GPUs)."""
    return simulation.simulated_gpus() or None


@contextlib.contextmanager
def _local_devices(count: int | None):
    """MWMS puts one replica on a worker's CPU, whatever its logical devices; use `count`."""
    if not count:
        yield
        return
    from . import _tf_internals

    ext = _tf_internals.collective_extended_class()
    original = ext._initialize_local_devices

    def _initialize_local_devices(self: Any, cluster_resolver: Any, worker_device: str) -> Any:
        devices, device_type = original(self, cluster_resolver, worker_device)
        if device_type != "CPU":
            return devices, device_type
        return tuple(f"{worker_device}/device:CPU:{i}" for i in range(count)), "CPU"

    ext._initialize_local_devices = _initialize_local_devices
    try:
        yield
    finally:
        ext._initialize_local_devices = original


def _configure_coordination(info: ClusterInfo | None) -> None:
    """Sets the coordination service up as MWMS would, but with bounded waits."""
    import tensorflow as tf

    from . import _tf_internals

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
    watchdog = _start_watchdog(timeout_seconds(), message) if info and info.is_multi_worker else None
    try:
        with _local_devices(count):
            strategy = tf.distribute.MultiWorkerMirroredStrategy()
    except (tf.errors.DeadlineExceededError, tf.errors.UnavailableError) as err:
        raise RuntimeError(f"{message} Original error: {err}") from err
    finally:
        if watchdog is not None:
            watchdog.stdin.close()  # connected (or failed): the watchdog exits
            watchdog.wait()
    strategy._compat_multi_worker = True  # the Keras 3 fixes below apply to it
    _patch_keras3_reduce()
    return strategy


_WATCHDOG = """
import os, select, signal, sys
pid, timeout, message = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
ready, _, _ = select.select([sys.stdin], [], [], timeout)
if not ready:
    sys.stderr.write("\\nmulti-gpu-compat: " + message + "\\n")
    sys.stderr.flush()
    os.kill(pid, signal.SIGKILL)
"""


def _start_watchdog(timeout: float, message: str) -> Any:
    """A tiny process that ends this one, with `message`, if the cluster is not up in time.

    TensorFlow waits for missing workers in C++ while holding the GIL and ignoring
    SIGTERM, so neither a Python thread nor a signal handler could report it. The
    watchdog exits as soon as its stdin closes: on success, failure, or our death.
    """
    import subprocess
    import sys

    return subprocess.Popen(
        [sys.executable, "-S", "-I", "-c", _WATCHDOG, str(os.getpid()), str(timeout), message],
        stdin=subprocess.PIPE,
    )


def _context_initialized() -> bool:
    from . import _tf_internals

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


def install_early_creation() -> bool:
    """Creates the strategy right before TensorFlow first initialises its context.

    Only when the environment asks for multi-worker training. Returns whether the hook
    was installed. Idempotent.
    """
    try:
        if not (_env_choice() == "multi_worker" or (
            _env_choice() is None and (cluster_info() or ClusterInfo({}, None, 0)).is_multi_worker
        )):
            return False
    except ValueError:
        return False  # a malformed setting is reported when `multi_gpu_model` is called
    from . import _tf_internals

    cls = _tf_internals.context_class()
    if getattr(cls.ensure_initialized, "_compat_multi_worker", False):
        return True
    original = cls.ensure_initialized

    @functools.wraps(original)
    def ensure_initialized(self: Any) -> None:
        global _creation_error
        if (
            not _tf_internals.context_initialized(self)
            and not _creating
            and _strategy is None
            and _creation_error is None
            and _tf_internals.collective_setup_pending(self)  # the script creates its own strategy
        ):
            try:
                get_strategy()
            except BaseException as err:  # report it where multi_gpu_model is called
                _creation_error = err
                raise
        return original(self)

    ensure_initialized._compat_multi_worker = True  # type: ignore[attr-defined]
    cls.ensure_initialized = ensure_initialized
    return True


def served_notice(strategy: Any) -> str:
    info = cluster_info()
    task = f"{info.task_type} {info.task_id}" if info is not None else "a single worker"
    return (
        "`multi_gpu_model` was removed from Keras; this call is served by multi-gpu-compat "
        f"on tf.distribute.MultiWorkerMirroredStrategy: {strategy.num_replicas_in_sync} "
        f"replicas in all, {len(strategy.extended.worker_devices)} on this worker ({task}). "
        "To migrate the script for good, run `multi-gpu-codemod <path>` and see MIGRATION.md."
    )


def check_gpus(gpu_ids: list[int], strategy: Any) -> None:
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


# --- Keras 3: tensorflow#72388 -------------------------------------------------------


def _keras3_installed() -> bool:
    from . import _support

    keras = _support.keras_version()
    return keras is not None and _support.parse_version(keras)[:1] == (3,)


def _patch_keras3_reduce() -> None:
    """Keras 3 reduces per-replica outputs with `reduce("MEAN", v, axis=0)` on MWMS.

    That fails for the scalar losses and metrics of `fit` / `evaluate` ("Invalid
    reduction dimension 0 for input with 0 dimensions"). The single-worker path
    averages the replicas' values element-wise; on MWMS the cross-replica
    equivalent is `reduce("MEAN", v, axis=None)`. Only strategies created here
    get the fix; everything else goes to Keras's own function.
    """
    if not _keras3_installed():
        return  # tf_keras or Keras 2 only
    from . import _keras3_internals

    trainer = _keras3_internals.trainer_module()
    original = trainer.reduce_per_replica
    if getattr(original, "_compat_multi_worker", False):
        return

    @functools.wraps(original)
    def reduce_per_replica(values: Any, strategy: Any, reduction: str) -> Any:
        if not getattr(strategy, "_compat_multi_worker", False) or reduction not in ("auto", "mean"):
            return original(values, strategy, reduction)
        import tensorflow as tf

        def _reduce(v: Any) -> Any:
            if not isinstance(v, (tf.distribute.DistributedValues, tf.Tensor, tf.Variable)):
                return v
            return strategy.reduce("MEAN", v, axis=None)

        return tf.nest.map_structure(_reduce, values)

    reduce_per_replica._compat_multi_worker = True  # type: ignore[attr-defined]
    trainer.reduce_per_replica = reduce_per_replica


# --- chief-aware saving --------------------------------------------------------------


def _temporary_path(filepath: Any) -> tuple[str, str]:
    """A path like `filepath` (same file name and suffix) in a fresh temporary directory."""
    directory = tempfile.mkdtemp(prefix="multi_gpu_compat_worker_")
    name = os.path.basename(os.fspath(filepath).rstrip("/\\")) or "model"
    return directory, os.path.join(directory, name)


def _chief_aware(method: Any) -> Any:
    @functools.wraps(method)
    def save(filepath: Any, *args: Any, **kwargs: Any) -> Any:
        if is_chief() or not isinstance(filepath, (str, os.PathLike)):
            return method(filepath, *args, **kwargs)
        # Every worker must save (it reads synchronised variables, which needs them
        # all), but only the chief's file is kept.
        directory, path = _temporary_path(filepath)
        try:
            return method(path, *args, **kwargs)
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    save._compat_chief_aware = True  # type: ignore[attr-defined]
    return save


def chief_aware_saving(template: Any) -> None:
    """Gives `template` instance-level `save` / `save_weights` that follow the chief rule.

    The user's unchanged `template.save(path)` (and `parallel.save`,
    `ModelCheckpoint`, `BackupAndRestore`, which go through the template) then
    writes the real file on the chief only.
    """
    for name in ("save", "save_weights"):
        current = getattr(template, name)
        if getattr(current, "_compat_chief_aware", False):
            continue
        template.__dict__[name] = _chief_aware(current)


# --- fit on a cluster ------------------------------------------------------------------

_PEER_LOST_NOTE = (
    "multi-gpu-compat: another worker of the cluster stopped or became unreachable, so "
    "this worker cannot go on. Restart every worker with the same command (a cluster "
    "manager does it for you); with keras.callbacks.BackupAndRestore in `callbacks`, "
    "training resumes from the last saved epoch."
)


def _prepare_callbacks(callbacks: Any) -> None:
    # Keras 3's BackupAndRestore creates its directory with exist_ok=False: two workers
    # doing it at once on a shared file system race. Create it up front.
    for callback in callbacks or ():
        backup_dir = getattr(callback, "backup_dir", None)
        if type(callback).__name__ == "BackupAndRestore" and isinstance(backup_dir, (str, os.PathLike)):
            os.makedirs(backup_dir, exist_ok=True)
            if getattr(callback, "delete_checkpoint", False) and not is_chief():
                # Keras 3 deletes the directory when training ends: on a shared file
                # system two workers doing so race. The chief deletes it.
                callback.delete_checkpoint = False


def cluster_aware_fit(parallel: Any) -> None:
    """Gives `parallel` an instance-level `fit` for cluster training (see `_prepare_callbacks`)."""
    current = parallel.fit
    if getattr(current, "_compat_multi_worker", False):
        return

    @functools.wraps(current)
    def fit(*args: Any, **kwargs: Any) -> Any:
        import tensorflow as tf

        _prepare_callbacks(kwargs.get("callbacks"))
        try:
            return current(*args, **kwargs)
        except (tf.errors.UnavailableError, tf.errors.AbortedError) as err:
            err.add_note(_PEER_LOST_NOTE)
            raise

    fit._compat_multi_worker = True  # type: ignore[attr-defined]
    parallel.__dict__["fit"] = fit
