"""What TF_CONFIG and the environment ask for: the cluster, the strategy, the wait limit."""

from __future__ import annotations

import json
import os
from typing import Any

from .. import _settings

STRATEGY_ENV = _settings.STRATEGY
TIMEOUT_ENV = _settings.WORKER_TIMEOUT
_STRATEGY_CHOICES = ("mirrored", "multi_worker")
_DEFAULT_TIMEOUT_S = 600  # how long a worker waits for the others to start


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
    cluster = _parse_cluster(config)
    if not cluster:
        return None
    if len(cluster.get("chief", [])) > 1:
        raise _config_error('a cluster has at most one "chief" task')
    task_type, task_id = _parse_task(config, cluster)
    return ClusterInfo(cluster, task_type, task_id)


def _parse_cluster(config: dict[str, Any]) -> dict[str, list[str]]:
    """The "cluster" entry as job name -> "host:port" addresses (in place)."""
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
    return cluster


def _parse_task(config: dict[str, Any], cluster: dict[str, list[str]]) -> tuple[str, int]:
    """This process's task: its job name and index, checked against `cluster`."""
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
    return task_type, task_id


def _env_choice() -> str | None:
    raw = _settings.strategy()
    if not raw:
        return None
    if raw not in _STRATEGY_CHOICES:
        raise ValueError(
            f"{STRATEGY_ENV} must be one of {list(_STRATEGY_CHOICES)}; got "
            f"{_settings.raw(STRATEGY_ENV)!r}. Unset it to let TF_CONFIG decide."
        )
    return raw


def check_strategy_argument(strategy: Any) -> str | None:
    """The `strategy` argument of `multi_gpu_model` as a choice, or None (not given)."""
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
    """How long a worker waits for the others (`MULTI_GPU_COMPAT_WORKER_TIMEOUT`, seconds)."""
    raw = _settings.worker_timeout()
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
