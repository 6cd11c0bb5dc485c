"""The legacy scripts in fixtures/legacy_scripts run unchanged and save loadable templates."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from child_process import child_env, simulated_gpus_env

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

SCRIPTS = FIXTURES / "legacy_scripts"

# script -> the model files it saves (each must reload without the shim)
KERAS3_SCRIPTS = {
    "keras21_training_utils.py": ["model.h5"],
    "keras22_cpu_template.py": ["my_model.h5"],
    "model_mgpu_class.py": ["mgpu_model.h5"],
    "try_except_fallback.py": ["model.h5"],
    "template_checkpoint_callback.py": [
        "template_epoch02.h5",
        "parallel_checkpoint.h5",
    ],
}
# tf.keras scripts of the TF 2.0 era run on tf_keras (TF_USE_LEGACY_KERAS=1).
TF_KERAS_SCRIPTS = {"tf_keras_attribute_call.py": ["model.h5"]}


def _run_script(script: str, tmp_path: Path, legacy: bool) -> None:
    shutil.copy(SCRIPTS / script, tmp_path / script)
    env = simulated_gpus_env(2, {"TF_USE_LEGACY_KERAS": "1" if legacy else "0"})
    result = subprocess.run(
        [sys.executable, script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    # The shim served the call on 2 replicas (its one-time notice says so).
    assert "MirroredStrategy over ['/gpu:0', '/gpu:1']" in result.stderr


def _check_saved(model_file: str, tmp_path: Path, legacy: bool) -> str:
    env = child_env({"MULTI_GPU_COMPAT_DISABLE": "1", "TF_USE_LEGACY_KERAS": "1" if legacy else "0"})
    result = subprocess.run(
        [sys.executable, str(SCRIPTS / "check_saved_model.py"), model_file, str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    return result.stdout


def _scripts_for_backend(legacy: bool) -> dict[str, list[str]]:
    return TF_KERAS_SCRIPTS if legacy else KERAS3_SCRIPTS


@pytest.mark.slow
@pytest.mark.parametrize(
    "script", sorted(KERAS3_SCRIPTS) + sorted(TF_KERAS_SCRIPTS)
)
def test_legacy_script_runs_unchanged_and_saves_the_template(
    script: str, tmp_path: Path, legacy_keras: bool
) -> None:
    files = _scripts_for_backend(legacy_keras).get(script)
    if files is None:
        pytest.skip(f"{script} is written for the {'Keras 3' if legacy_keras else 'tf_keras'} run")
    _run_script(script, tmp_path, legacy_keras)
    for model_file in files:
        report = _check_saved(model_file, tmp_path, legacy_keras)
        assert "nested models: none" in report
