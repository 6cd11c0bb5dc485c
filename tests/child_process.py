"""Child processes started by the tests: one environment builder, one "runs on 2 simulated GPUs" runner.

Every test that starts Python (or R) builds the child's environment with `child_env`, so the rules
live in one place: the session's own simulated-GPU count never leaks into a child (each child
chooses its own), and TensorFlow's C++ start-up chatter stays quiet.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

SIMULATE_GPUS = "MULTI_GPU_COMPAT_SIMULATE_GPUS"

# Cleared for R children: reticulate must find this interpreter by the path the test gives it (not
# by a variable or a PYTHONPATH/PYTHONHOME of this session), with the shim on.
RETICULATE_VARIABLES = ("MULTI_GPU_COMPAT_DISABLE", "RETICULATE_PYTHON", "RETICULATE_PYTHON_ENV",
                        "PYTHONPATH", "PYTHONHOME")


def child_env(extra: Mapping[str, str | None] | None = None, *, drop: Iterable[str] = ()) -> dict[str, str]:
    """This process's environment for a child: without the session's simulated GPUs and the
    variables in `drop`, TensorFlow quiet, then `extra` applied (a `None` value removes the variable)."""
    env = {k: v for k, v in os.environ.items() if k != SIMULATE_GPUS and k not in set(drop)}
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    for key, value in (extra or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def simulated_gpus_env(gpus: int = 2, extra: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """`child_env` for a child that runs on `gpus` simulated GPUs and never sees a real one."""
    return child_env({SIMULATE_GPUS: str(gpus), "CUDA_VISIBLE_DEVICES": "", **(extra or {})})


def run_on_two_simulated_gpus(legacy_script: Path, workdir: Path):
    """Migrates `legacy_script` with the codemod and trains it on 2 simulated GPUs without the shim
    (`multi-gpu-codemod verify`'s migrated run); asserts it trained on 2 replicas to finite losses."""
    import numpy as np  # comes with TensorFlow; the codemod's own tests run without it

    from multi_gpu_codemod import verify

    report = verify.verify(legacy_script, modes=("migrated",), workdir=workdir, timeout=600)
    run = report.runs["migrated"]
    assert run.ok, run.error + "\n" + "\n".join(run.notes)
    assert run.replicas == 2, run.notes
    assert run.losses and all(np.isfinite(v).all() for v in run.losses.values()), run.losses
    return run
