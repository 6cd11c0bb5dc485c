"""Helpers shared by the runtime shim's tests (model builders, data, subprocess runners).

Kept tiny on purpose: CI has two cores; every model here has a few dozen parameters.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import tempfile
import textwrap
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
N_REPLICAS = 4  # tests/conftest.py starts the session with 4 simulated GPUs
SITE_PACKAGES = sysconfig.get_paths()["purelib"]
# This checkout's interpreter start-up: the .pth line and the module it runs (installed copies
# may be older, or another checkout's).
STARTUP_DIR = ROOT / "compat" / "_startup"
STARTUP_PTH = STARTUP_DIR / "multi_gpu_compat.pth"


def checkout_startup():
    """A fresh copy of this checkout's `multi_gpu_compat_startup` module (not put in sys.modules)."""
    import importlib.util

    path = STARTUP_DIR / "multi_gpu_compat_startup.py"
    spec = importlib.util.spec_from_file_location("multi_gpu_compat_startup", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def keras3_older_than(version: tuple[int, int]) -> bool:
    """True when this run serves Keras 3 older than `version` (behaviour that release lacks)."""
    from multi_gpu_compat import _stack

    if _stack.backend() != _stack.KERAS3:
        return False
    found = _stack.parse_version(_stack.keras_version() or "0")
    return found[:1] == (3,) and found[:2] < version


def data(rows: int = 8, features: int = 3, outputs: int = 2, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, features)).astype("float32")
    y = rng.normal(size=(rows, outputs)).astype("float32")
    return x, y


def mlp(K, name: str = "template", features: int = 3, outputs: int = 2, bn: bool = False,
        dropout: bool = False):
    """A Functional Dense model: 3 -> 4 -> (BN) -> (Dropout) -> 2."""
    inp = K.Input((features,), name=f"{name}_in")
    h = K.layers.Dense(4, activation="relu", name=f"{name}_hidden")(inp)
    if bn:
        h = K.layers.BatchNormalization(name=f"{name}_bn")(h)
    if dropout:
        h = K.layers.Dropout(0.5, name=f"{name}_drop")(h)
    out = K.layers.Dense(outputs, name=f"{name}_out")(h)
    return K.Model(inp, out, name=name)


def two_in_two_out(K, name: str = "multi"):
    a = K.Input((3,), name="in_a")
    b = K.Input((2,), name="in_b")
    h = K.layers.Concatenate()([K.layers.Dense(3, name="da")(a), K.layers.Dense(3, name="db")(b)])
    out_reg = K.layers.Dense(1, name="reg")(h)
    out_cls = K.layers.Dense(3, activation="softmax", name="cls")(h)
    return K.Model([a, b], [out_reg, out_cls], name=name)


def weights_equal(a, b, **kw) -> bool:
    if len(a) != len(b):
        return False
    return all(np.allclose(x, y, **kw) for x, y in zip(a, b))


def run(code: str, *, env: dict | None = None, cwd: Path | None = None, timeout: float = 180,
        args: list[str] | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter (with the project installed, hook active)."""
    from child_process import child_env  # here: children import this module without tests/ on their path

    proc = subprocess.run(
        [sys.executable, *(args or []), "-c", textwrap.dedent(code)],
        cwd=cwd, env=child_env(env), capture_output=True, text=True, timeout=timeout,
    )
    if check:
        assert proc.returncode == 0, f"child failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr[-4000:]}"
    return proc


def site_packages_without_project() -> str:
    """site-packages as a path entry that does not hold this project: site-packages itself
    for an editable install, else a folder of links to all its entries but the project's."""
    site = Path(SITE_PACKAGES)
    if not (site / "multi_gpu_compat").exists():
        return SITE_PACKAGES
    global _SITE_WITHOUT_PROJECT
    if _SITE_WITHOUT_PROJECT is None:
        folder = Path(tempfile.mkdtemp(prefix="site-without-project-"))
        for entry in site.iterdir():
            ours = entry.name in ("multi_gpu_compat", "multi_gpu_codemod", "multi_gpu_compat.pth",
                                  "multi_gpu_compat_startup.py")
            if not ours and not entry.name.startswith("multi_gpu_compat-"):
                (folder / entry.name).symlink_to(entry)
        _SITE_WITHOUT_PROJECT = str(folder)
    return _SITE_WITHOUT_PROJECT


_SITE_WITHOUT_PROJECT: str | None = None


def run_without_project(code: str, *, cwd: Path, env: dict | None = None, timeout: float = 180):
    """Runs `code` where this project is NOT importable: no site processing, so neither the
    editable-install .pth nor the start-up hook runs; site-packages comes only via PYTHONPATH.
    The child asserts the project is absent before running `code`."""
    guard = (
        "import sys, importlib.util\n"
        "assert importlib.util.find_spec('multi_gpu_compat') is None, 'project importable'\n"
        "assert not any(m == 'multi_gpu_compat' or m.startswith('multi_gpu_compat.') for m in sys.modules)\n"
    )
    extra = {"PYTHONPATH": site_packages_without_project(), "MULTI_GPU_COMPAT_DISABLE": "1"}
    extra.update(env or {})
    return run(guard + textwrap.dedent(code), env=extra, cwd=cwd, timeout=timeout, args=["-S"])


def backing(variable):
    """The tf.Variable (possibly a MirroredVariable) behind a Keras 3 or tf_keras variable."""
    value = getattr(variable, "value", None)
    return variable if value is None or callable(value) else value


def replica_values(strategy, variable) -> list:
    return [np.asarray(v) for v in strategy.experimental_local_results(backing(variable))]


def numpy_forward(model, x):
    """`mlp(...)` (no BN) forward pass from the model's weights, without Keras (no tracing)."""
    w1, b1, w2, b2 = model.get_weights()
    return np.maximum(x @ w1 + b1, 0) @ w2 + b2
