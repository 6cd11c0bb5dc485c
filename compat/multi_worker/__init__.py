"""Multi-worker training behind `multi_gpu_model`: `tf.distribute.MultiWorkerMirroredStrategy`.

When `TF_CONFIG` describes a cluster of more than one worker (or chief) task, or
`MULTI_GPU_COMPAT_STRATEGY=multi_worker` / `multi_gpu_model(..., strategy="multi_worker")`
asks for it, `multi_gpu_model` runs on one MultiWorkerMirroredStrategy (MWMS)
spanning every worker; `gpus` keeps meaning GPUs per worker.

- `_cluster`: what TF_CONFIG and the environment ask for (cluster, strategy, wait limit).
- `_strategy`: the process's one MWMS, created with bounded waits; `_watchdog` ends
  a worker whose cluster does not come up in time.
- `_early_creation`: MWMS must configure TensorFlow before its context is first
  initialised, which a legacy script does (building its model) before it calls
  `multi_gpu_model`; installed by the start-up routine (`startup.run`) as soon as
  TensorFlow is imported.
- `_worker_devices`: in simulation mode, MWMS runs over `MULTI_GPU_COMPAT_SIMULATE_GPUS`
  devices per worker (it would ignore logical CPU devices); `gpus` is checked against them.
- `_keras3_reduce`: Keras 3's `fit` / `evaluate` reduce scalar logs in a way that
  fails on MWMS; fixed for the strategies created here.
- `_saving`: a template distributed on MWMS saves on every worker, and only the
  chief's file is kept.
- `_fit`: `fit` on a cluster (shared backup directories, a note when a peer is lost).
"""

from __future__ import annotations

from ._cluster import STRATEGY_ENV, TIMEOUT_ENV, cluster_info, wants_multi_worker
from ._early_creation import install_early_creation
from ._fit import cluster_aware_fit
from ._saving import chief_aware_saving
from ._strategy import get_strategy, served_notice
from ._worker_devices import check_gpus

# What `multi_gpu_model` and the start-up routine use; the rest stays in the submodules.
__all__ = [
    "STRATEGY_ENV",
    "TIMEOUT_ENV",
    "cluster_info",
    "wants_multi_worker",
    "get_strategy",
    "chief_aware_saving",
    "install_early_creation",
    "cluster_aware_fit",
    "served_notice",
    "check_gpus",
]
