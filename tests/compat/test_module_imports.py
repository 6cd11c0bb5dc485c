"""The shim's modules import each other without a cycle, and each one imports alone with no effect
on TensorFlow or Keras: everything the shim changes in them is done by `startup.run`."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import multi_gpu_compat
from multi_gpu_compat import _stack
from compat_helpers import run

PACKAGE = Path(multi_gpu_compat.__file__).parent
# The backends define subclasses of Keras classes: importing them imports Keras (and nothing more).
KERAS_MODULES = {"_keras3", "_keras3_internals", "_tf_keras"}


def _module_names() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return names


MODULES = _module_names()


def _imports(name: str) -> set[str]:
    """The modules of this package that `name` imports, at module level or inside functions."""
    path = PACKAGE.joinpath(*name.split(".")) if name else PACKAGE
    is_package = path.is_dir()
    source = path / "__init__.py" if is_package else path.with_suffix(".py")
    package = name if is_package else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if not isinstance(node, ast.ImportFrom) or not node.level:
            continue
        base = package.split(".") if package else []
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
        for alias in node.names:
            child = ".".join(p for p in (target, alias.name) if p)
            found.add(child if child in MODULES else target)
    return {m for m in found if m in MODULES and m != name and m != ""}


def test_modules_import_each_other_without_a_cycle():
    graph = {name: _imports(name) for name in MODULES}
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            cycle = path[path.index(name):] + [name]
            pytest.fail("import cycle: " + " -> ".join(cycle))
        if name in done:
            return
        for other in sorted(graph[name]):
            visit(other, path + [name])
        done.add(name)

    for name in MODULES:
        visit(name, [])
    assert graph["simulation"].isdisjoint({"import_hook", "multi_gpu", "doctor"})  # the low module stays low


_PROBE = """
import importlib, json, sys
before = list(sys.meta_path)
importlib.import_module({module!r})
patched = []
context = sys.modules.get("tensorflow.python.eager.context")
if context is not None and getattr(context.Context.ensure_initialized, "_compat_early_creation", False):
    patched.append("Context.ensure_initialized")
distribute = sys.modules.get("tensorflow.python.distribute.mirrored_strategy")
if distribute is not None and getattr(distribute.MirroredStrategy.__init__, "_compat_simulated", False):
    patched.append("MirroredStrategy.__init__")
optimizer = sys.modules.get("keras.src.backend.tensorflow.optimizer")
if optimizer is not None and getattr(optimizer.TFOptimizer._backend_update_step, "_compat_averaging", False):
    patched.append("TFOptimizer._backend_update_step")
trainer = sys.modules.get("keras.src.backend.tensorflow.trainer")
if trainer is not None and getattr(trainer.reduce_per_replica, "_compat_multi_worker", False):
    patched.append("reduce_per_replica")
finders = [getattr(f, "__name__", type(f).__name__) for f in sys.meta_path if f not in before]
loaded = sorted(m for m in ("tensorflow", "keras", "tf_keras") if m in sys.modules)
print("PROBE" + json.dumps({{"patched": patched, "finders": finders, "loaded": loaded}}))
"""

# What would make the old import-time side effects show: multi-worker and simulation asked for,
# the import hook off (it would run the start-up routine, legitimately, at TensorFlow's import).
_ENV = {"MULTI_GPU_COMPAT_DISABLE": "1", "MULTI_GPU_COMPAT_STRATEGY": "multi_worker",
        "MULTI_GPU_COMPAT_SIMULATE_GPUS": "2", "TF_CONFIG": None}


def _import_alone(name: str) -> dict:
    module = f"multi_gpu_compat.{name}" if name else "multi_gpu_compat"
    done = run(_PROBE.format(module=module), env=_ENV)
    return json.loads(done.stdout.split("PROBE", 1)[1])


@pytest.mark.parametrize("name", [m for m in MODULES if m not in KERAS_MODULES])
def test_each_module_imports_alone_without_tensorflow(name):
    found = _import_alone(name)
    assert found["loaded"] == [], f"importing {name} alone imported {found['loaded']}"
    assert found["patched"] == []
    # Only the package itself adds a finder: the explainer, which serves nothing (see _explainer).
    assert found["finders"] in ([], ["Explainer"])


def _serving_backend_module() -> str:
    return "_keras3" if _stack.backend() == _stack.KERAS3 else "_tf_keras"


def _keras_module_case(name: str):
    slow = name != _serving_backend_module()  # the serving backend alone stays in the fast lane
    return pytest.param(name, marks=[pytest.mark.slow] if slow else [])


@pytest.mark.parametrize("name", [_keras_module_case(m) for m in sorted(KERAS_MODULES)])
def test_each_backend_module_imports_alone_and_changes_nothing(name):
    if name == "_tf_keras" and _stack.backend() == _stack.KERAS3 and not _stack.tf_keras_version():
        pytest.skip("the Keras 2 backend needs a Keras 2 (tf_keras is not installed)")
    if name != "_tf_keras" and not _stack.keras3_installed():
        pytest.skip("the Keras 3 backend needs Keras 3")
    found = _import_alone(name)
    assert "tensorflow" in found["loaded"]
    assert found["patched"] == [], f"importing {name} alone changed {found['patched']}"
