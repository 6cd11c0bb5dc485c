"""One run of the script: the child process that runs it (child.py) and the record it leaves (`Run`)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["MISSING_TENSORFLOW", "Run", "child_environment", "has_tensorflow", "start_run"]

# The codemod needs libcst alone; only verify, which trains the script's models, needs more.
MISSING_TENSORFLOW = (
    "verify trains the script's models and needs TensorFlow, which is not installed here "
    "(the codemod itself does not need it). Install it next to the codemod: "
    "`pip install 'multi-gpu-compat[cpu]'` (CPU), `pip install 'multi-gpu-compat[gpu]'` (NVIDIA GPUs), "
    "plus `pip install --no-deps tf-keras` for tf.keras scripts; or verify in the "
    "environment the script runs in."
)
# The folder holding this package (`multi_gpu_codemod`), whatever the child's working directory.
_PACKAGE_PARENT = Path(__file__).absolute().parents[2]
_SHIM_SWITCHES = ("MULTI_GPU_COMPAT_SIMULATE_GPUS", "MULTI_GPU_COMPAT_DISABLE")


@dataclass
class Run:
    """One subprocess run of the script."""

    mode: str
    ok: bool = False
    seconds: float = 0.0
    error: str = ""
    skipped: str = ""
    replicas: int | None = None
    losses: dict[str, list[float]] = field(default_factory=dict)
    weights: list[Any] = field(default_factory=list)
    weight_names: list[str] = field(default_factory=list)
    trainable: list[bool] = field(default_factory=list)
    predictions: dict[str, Any] = field(default_factory=dict)
    split_sensitive: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def has_tensorflow() -> bool:
    return importlib.util.find_spec("tensorflow") is not None


def child_environment(mode: str, *, gpus: int, legacy: bool, hook: bool = False) -> dict[str, str]:
    """The environment a run's child gets: this one, with the run's devices, backend and shim switches.

    ``shim`` simulates `gpus` GPUs through the shim; ``migrated`` runs with the import hook off
    (unless `hook`: the script still needs it), the child simulating the devices itself; the
    reference modes see one device. Seeds are fixed, CUDA hidden, TensorFlow's logging quiet.
    """
    env = {key: value for key, value in os.environ.items() if key not in _SHIM_SWITCHES}
    env.update(TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="", PYTHONHASHSEED="0",
               TF_USE_LEGACY_KERAS="1" if legacy else "0")
    if mode == "shim":
        env["MULTI_GPU_COMPAT_SIMULATE_GPUS"] = str(gpus)
    elif mode == "migrated" and not hook:
        env["MULTI_GPU_COMPAT_DISABLE"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(_PACKAGE_PARENT)] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def start_run(mode: str, script: Path, workdir: Path, *, gpus: int, legacy: bool, timeout: float,
              original: Path, hook: bool = False) -> Run:
    """Runs `script` in `workdir` as `mode` in a child process, and reads back what it recorded."""
    if not has_tensorflow():
        raise RuntimeError(MISSING_TENSORFLOW)
    workdir.mkdir(parents=True, exist_ok=True)
    out = workdir / ".verify"
    out.mkdir(exist_ok=True)
    result, arrays = out / "result.json", out / "arrays.npz"
    config = {"mode": mode, "gpus": gpus, "script": str(script), "original": str(original),
              "result": str(result), "arrays": str(arrays)}
    run = Run(mode)
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-m", f"{__package__}.child", "_child", json.dumps(config)],
            cwd=workdir, env=child_environment(mode, gpus=gpus, legacy=legacy, hook=hook),
            capture_output=True, text=True, timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        run.seconds = time.monotonic() - started
        run.error = f"timed out after {timeout:.0f} s"
        return run
    run.seconds = time.monotonic() - started
    (workdir / "stdout.txt").write_text(done.stdout)
    (workdir / "stderr.txt").write_text(done.stderr)
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        run.error = f"exit {done.returncode}: " + (lines[-1] if lines else "no output")
        run.notes.append(done.stderr[-3000:])
        return run
    _read_record(run, result, arrays)
    return run


def _read_record(run: Run, result: Path, arrays_file: Path) -> None:
    """Fills `run` from the files the child wrote (see child.run)."""
    import numpy as np

    data = json.loads(result.read_text())
    arrays = np.load(arrays_file)
    run.ok = True
    run.replicas = data.get("replicas")
    run.losses = data["losses"]
    run.weight_names = data.get("weight_names", [])
    run.trainable = data.get("trainable", [])
    run.weights = [arrays[f"w{i}"] for i in range(len(run.weight_names))]
    run.predictions = {name: arrays["p:" + name] for name in data["predictions"]}
    run.split_sensitive = data["split_sensitive"]
    run.notes += data["notes"]
