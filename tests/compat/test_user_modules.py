"""A user's own `compat` module (a common name in 2017-2019 code) never disables or replaces the
shim, and the user's `import compat` keeps getting theirs: the shim is installed as
`multi_gpu_compat`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from child_process import child_env

# The user's module records every time it runs, so a test can tell whether the shim ran it.
USER_COMPAT = """
import os
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "ran.log"), "a") as log:
    log.write("user compat ran\\n")
MINE = "the user's compat"
"""

SCRIPT = """
from tensorflow.keras.utils import multi_gpu_model
assert multi_gpu_model.__module__ == "multi_gpu_compat.multi_gpu", multi_gpu_model.__module__
import tensorflow as tf
inp = tf.keras.Input((3,))
parallel = multi_gpu_model(tf.keras.Model(inp, tf.keras.layers.Dense(2)(inp)), gpus=2)
assert parallel.distribute_strategy.num_replicas_in_sync == 2
print("SHIM-OK")
"""


def _layout(tmp_path: Path, kind: str) -> Path:
    """Writes the user's `compat` in one of its shapes beside the script; returns the script."""
    if kind == "module":
        (tmp_path / "compat.py").write_text(USER_COMPAT)
    elif kind == "package":
        (tmp_path / "compat").mkdir()
        beside = "os.path.dirname(os.path.abspath(__file__))"
        (tmp_path / "compat" / "__init__.py").write_text(USER_COMPAT.replace(beside, f"os.path.dirname({beside})"))
    elif kind == "namespace folder":
        (tmp_path / "compat").mkdir()
        (tmp_path / "compat" / "notes.txt").write_text("not a package\n")
    if kind == "script named compat.py":
        script = tmp_path / "compat.py"
        script.write_text(SCRIPT)
    else:
        script = tmp_path / "train.py"
        check = "" if kind == "namespace folder" else (
            "import compat\nassert compat.MINE == \"the user's compat\"\nprint('USER-COMPAT-OK')\n"
        )
        script.write_text(SCRIPT + check)
    return script


@pytest.mark.parametrize("kind", ["module"] + [pytest.param(k, marks=pytest.mark.slow)  # a TensorFlow child each
                                 for k in ("package", "namespace folder", "script named compat.py")])
def test_users_compat_beside_the_script_leaves_the_shim_working(tmp_path, kind):
    script = _layout(tmp_path, kind)
    proc = subprocess.run([sys.executable, script.name], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env=child_env({"MULTI_GPU_COMPAT_SIMULATE_GPUS": "2"}))
    assert "SHIM-OK" in proc.stdout, proc.stderr[-3000:]
    ran = (tmp_path / "ran.log").read_text().count("ran") if (tmp_path / "ran.log").exists() else 0
    if kind in ("module", "package"):
        # Imported once, by the script's own `import compat`; never by the shim or `import keras`.
        assert "USER-COMPAT-OK" in proc.stdout and ran == 1, (proc.stdout, ran)
    else:
        assert ran == 0


@pytest.mark.slow  # a TensorFlow child
def test_doctor_never_runs_the_users_compat(tmp_path):
    (tmp_path / "compat.py").write_text(USER_COMPAT)
    doctor = Path(sys.executable).parent / "multi-gpu-compat"
    for argv in ([sys.executable, "-m", "multi_gpu_compat", "doctor"], [str(doctor), "doctor"]):
        proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300, env=child_env())
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "import hook: active" in proc.stdout
    assert not (tmp_path / "ran.log").exists()
