"""The codemod needs libcst alone: no TensorFlow, Keras, h5py or numpy on its path, Python 3.9+."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("tensorflow", "keras", "tf_keras", "h5py", "numpy")


def _imported_after(code: str, tmp_path: Path) -> list[str]:
    probe = (
        "import json, sys\n"
        f"{code}\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path,
                          env={"PYTHONPATH": str(ROOT / ".dev"), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_rewriting_a_script_imports_no_tensorflow_keras_h5py_or_numpy(tmp_path):
    script = tmp_path / "train.py"
    script.write_bytes((ROOT / "fixtures" / "legacy_scripts" / "keras22_cpu_template.py").read_bytes())
    code = f"from multi_gpu_codemod.cli import main\nassert main(['-j', '1', {str(script)!r}]) in (0, 1)"
    assert _imported_after(code, tmp_path) == []
    assert "MirroredStrategy" in script.read_text()


def test_every_codemod_module_imports_without_them(tmp_path):
    modules = sorted(
        ".".join(("multi_gpu_codemod",) + p.relative_to(ROOT / "codemod").with_suffix("").parts)
        .removesuffix(".__init__")
        for p in (ROOT / "codemod").rglob("*.py")
        if p.name != "__main__.py"
    )
    code = "import importlib\nfor name in %r:\n    importlib.import_module(name)" % (modules,)
    assert _imported_after(code, tmp_path) == []


@pytest.mark.parametrize("path", sorted((ROOT / "codemod").rglob("*.py")), ids=lambda p: p.name)
def test_codemod_source_is_python_3_9_syntax(path):
    # Grammar only (no `match`, no parenthesised context managers); the whole suite
    # runs on Python 3.9 in .ci/matrix for the runtime side (`X | Y` aliases, zip(strict=)).
    ast.parse(path.read_text(encoding="utf-8"), filename=str(path), feature_version=(3, 9))


def test_the_codemod_reads_the_shims_module_table_without_importing_the_shim(tmp_path):
    probe = (
        "import sys\nfrom multi_gpu_codemod import transform_source\n"
        "transform_source(b'from keras.utils import multi_gpu_model\\np = multi_gpu_model(m, gpus=2)\\n')\n"
        "from multi_gpu_codemod.recognise import MULTI_GPU_MODEL_NAMES\n"
        "assert 'keras.utils.multi_gpu_model' in MULTI_GPU_MODEL_NAMES\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'multi_gpu_compat'))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path,
                          env={"PYTHONPATH": str(ROOT / ".dev"), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"  # its `__init__` (the import explainer) never runs here
