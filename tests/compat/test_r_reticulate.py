"""R users: `multi_gpu_model()` called from R through reticulate, as R keras does.

One Rscript run (fixtures/r/multi_gpu_from_r.R) on 2 simulated GPUs drives Python the way R keras
2.x does: `keras$utils$multi_gpu_model(model = model, gpus = 2L, cpu_merge = TRUE,
cpu_relocation = FALSE)`, compile, fit, predict and `model$save()` through R objects, then
`gpus = NULL`, `c(0L, 1L)`, `2` (a double), `c(0, 1)`, and the errors for `2.5`, `1L` and `3L`
caught with tryCatch in R. One fresh Python process, without this project, reloads what R saved.

On Keras 3 the script uses `import("keras")`; under TF_USE_LEGACY_KERAS=1 (the second pass of
.ci/test) it uses `import("tensorflow")$keras`, which is tf_keras there, as R keras 2.x's `tf$keras`.

Skipped (with the reason) only where R or reticulate is missing; in CI (CI=true) that is a
failure instead: .ci/run installs them with .ci/r-setup.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

from child_process import RETICULATE_VARIABLES, child_env

ROOT = Path(__file__).resolve().parents[2]
R_SCRIPT = ROOT / "fixtures" / "r" / "multi_gpu_from_r.R"
GPUS = 2

pytestmark = pytest.mark.slow


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


@functools.lru_cache(maxsize=None)
def _r_unavailable() -> str | None:
    """Why R with reticulate cannot run here, or None when it can."""
    rscript = shutil.which("Rscript")
    if rscript is None:
        return "Rscript is not on PATH (Debian: r-base-core)"
    try:
        proc = subprocess.run(
            [rscript, "--vanilla", "-e", "library(reticulate)"],
            capture_output=True, text=True, timeout=120,
        )
    except subprocess.TimeoutExpired:
        return "`Rscript -e 'library(reticulate)'` did not finish within 120 s"
    if proc.returncode != 0:
        detail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return f"the R package reticulate is not installed (Debian: r-cran-reticulate): {detail}"
    return None


@pytest.fixture(scope="module")
def rscript() -> str:
    reason = _r_unavailable()
    if reason is not None:
        if _in_ci():
            pytest.fail(
                f"R with reticulate is required in CI but unavailable: {reason}. "
                ".ci/run should have installed it (`bash .ci/r-setup`).",
                pytrace=False,
            )
        pytest.skip(f"R/reticulate not available: {reason}; install with `bash .ci/r-setup`")
    return shutil.which("Rscript")  # type: ignore[return-value]


def _output(proc: subprocess.CompletedProcess) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout[-6000:]}\n--- stderr\n{proc.stderr[-6000:]}"


@pytest.fixture(scope="module")
def from_r(rscript, tmp_path_factory, legacy_keras):
    """Runs the R script once; returns (results, out_dir, extension)."""
    out_dir = tmp_path_factory.mktemp("from_r")
    keras_module = "tensorflow.keras" if legacy_keras else "keras"
    proc = subprocess.run(
        [rscript, "--vanilla", str(R_SCRIPT), sys.executable, str(out_dir), keras_module],
        cwd=out_dir, env=child_env({"MULTI_GPU_COMPAT_SIMULATE_GPUS": str(GPUS)}, drop=RETICULATE_VARIABLES),
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, "the R script failed:\n" + _output(proc)
    assert "R script finished" in proc.stdout, _output(proc)
    results = json.loads((out_dir / "results.json").read_text())
    return results, out_dir, ".h5" if legacy_keras else ".keras"


def test_r_uses_this_python_and_finds_multi_gpu_model(from_r, legacy_keras):
    results, _, _ = from_r
    assert Path(results["python"]) == Path(sys.executable)
    assert results["has_multi_gpu_model"] is True
    expected_module = "tf_keras." if legacy_keras else "keras."
    assert results["model_class"].startswith(expected_module), results["model_class"]


@pytest.mark.parametrize("case", ["gpus_2L", "gpus_NULL", "gpus_ids", "gpus_double",
                                  "gpus_double_ids"])
def test_r_trains_on_two_simulated_gpus(from_r, case):
    """`gpus = 2L`, `NULL`, `c(0L, 1L)`, `2` and `c(0, 1)` from R: 2 replicas, trained template."""
    facts = from_r[0][case]
    assert facts["replicas"] == GPUS
    assert [d.rsplit("/", 1)[-1] for d in facts["devices"]] == ["device:CPU:0", "device:CPU:1"]
    assert facts["loss"] and all(0 <= loss < 1e3 for loss in facts["loss"]), facts["loss"]
    # Weights are shared: training the parallel model trained the template R holds.
    assert facts["template_weight_change"] > 1e-6


def test_r_main_case_predicts_like_its_template(from_r):
    facts = from_r[0]["gpus_2L"]
    assert facts["pred_shape"] == [3, 1]
    assert facts["parallel_vs_template_pred"] < 1e-5
    assert facts["loss"][-1] < facts["loss"][0], facts["loss"]  # adam, 3 epochs, learnable target


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("error_2.5", ["TypeError", "`gpus` must be a whole number of GPUs", "`gpus=2.5`"]),
        ("error_1L", ["ValueError", "with `gpus >= 2`", "`gpus=1`"]),
        ("error_3L", ["ValueError", "`gpus=3`", "Try reducing `gpus`"]),
    ],
)
def test_r_sees_pythons_error_message(from_r, case, expected):
    message = from_r[0][case]["message"]
    assert message != "NO ERROR", f"{case}: multi_gpu_model did not raise"
    for text in expected:
        assert text in message, f"{text!r} not in the message R caught: {message!r}"


def test_saved_from_r_reloads_in_python_without_the_project(from_r, legacy_keras):
    """Both files R saved (template and parallel model) are the plain trained template: they load
    in a fresh Python without this project and predict what R predicted."""
    _, out_dir, extension = from_r
    package, load = ("tf_keras", "tf_keras.models.load_model") if legacy_keras else (
        "keras", "keras.saving.load_model")
    code = textwrap.dedent(f"""
        import importlib.util, json, sys
        assert importlib.util.find_spec("multi_gpu_compat") is None, "project importable"
        import numpy as np
        import {package}
        x = np.load("x.npy")
        expected = np.load("pred.npy")
        out = {{}}
        for name in ("template", "parallel"):
            model = {load}(name + "{extension}")
            pred = np.asarray(model.predict(x, verbose=0))
            out[name] = {{
                "name": model.name,
                "class": type(model).__name__,
                "layers": len(model.layers),
                "max_diff": float(np.max(np.abs(pred - expected))),
                "shape": list(pred.shape),
            }}
        assert not any(m == "multi_gpu_compat" or m.startswith("multi_gpu_compat.") for m in sys.modules)
        print("RESULT " + json.dumps(out))
    """)
    site_packages = sysconfig.get_paths()["purelib"]
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code],
        cwd=out_dir,
        env=child_env({"PYTHONPATH": site_packages, "MULTI_GPU_COMPAT_DISABLE": "1"}, drop=RETICULATE_VARIABLES),
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, "reloading in Python failed:\n" + _output(proc)
    line = next(line for line in proc.stdout.splitlines() if line.startswith("RESULT "))
    reloaded = json.loads(line[len("RESULT "):])
    for name, facts in reloaded.items():
        assert facts["name"] == "template", (name, facts)
        assert facts["class"] == "Sequential", (name, facts)
        assert facts["layers"] == 2, (name, facts)
        assert facts["shape"] == [3, 1], (name, facts)
        assert facts["max_diff"] < 1e-5, (name, facts)
