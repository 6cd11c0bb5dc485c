"""The start-up hook: legacy import paths work in a fresh interpreter with nothing added
to the script; it can be switched off, never breaks an import, costs nothing at start-up, and
ships in the built wheel."""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from child_process import child_env
from compat_helpers import ROOT, SITE_PACKAGES, run
from multi_gpu_compat import legacy_modules

PATHS_CODE = """
import json, sys
results = {}
namings = {}  # the output naming each path's function carries
def naming(f):
    return getattr(f, "keywords", {}).get("output_naming")
def check(label, fn):
    try:
        results[label] = fn()
    except Exception as err:
        results[label] = f"{type(err).__name__}: {err}"

def from_import(module):
    def fn():
        ns = {}
        exec(f"from {module} import multi_gpu_model", ns)
        namings["from " + module] = naming(ns["multi_gpu_model"])
        return ns["multi_gpu_model"].__module__ + "." + ns["multi_gpu_model"].__qualname__
    return fn

def attr(expr):
    def fn():
        ns = {}
        exec(f"import tensorflow as tf, keras\\nf = {expr}\\nm = {expr.rpartition('.')[0]}", ns)
        # An attribute path reaches a module object, whose one attribute has that module's naming.
        namings[expr] = [naming(ns["f"]), ns["m"].__name__]
        return ns["f"].__module__ + "." + ns["f"].__qualname__
    return fn

for module in ["keras.utils", "keras.utils.training_utils", "keras.utils.multi_gpu_utils",
               "tensorflow.keras.utils", "tensorflow.python.keras.utils",
               "tensorflow.python.keras.utils.multi_gpu_utils", "tensorflow._api.v1.keras.utils",
               "tf_keras.utils"]:
    check("from " + module, from_import(module))
for expr in ["keras.utils.multi_gpu_model", "tf.keras.utils.multi_gpu_model",
             "tf.compat.v1.keras.utils.multi_gpu_model", "tf.compat.v2.keras.utils.multi_gpu_model"]:
    check(expr, attr(expr))

def fallback():
    try:
        from keras.utils import multi_gpu_model
    except ImportError:
        from tensorflow.keras.utils import multi_gpu_model
    return multi_gpu_model.__module__ + "." + multi_gpu_model.__qualname__
check("try/except fallback", fallback)

def use():
    # The legacy script: tf.keras model, tf.keras attribute call, 2 simulated GPUs, fit.
    import numpy as np, tensorflow as tf
    inp = tf.keras.Input((3,))
    model = tf.keras.Model(inp, tf.keras.layers.Dense(2)(inp))
    parallel = tf.keras.utils.multi_gpu_model(model, gpus=2)
    parallel.compile(optimizer="sgd", loss="mse")
    before = model.get_weights()[0].copy()
    parallel.fit(np.ones((4, 3), "float32"), np.zeros((4, 2), "float32"), batch_size=4, verbose=0)
    return [parallel.distribute_strategy.num_replicas_in_sync,
            bool((model.get_weights()[0] != before).any())]
check("use", use)
print("RESULTS" + json.dumps(results))
print("NAMINGS" + json.dumps(namings))
"""

SHIM = "multi_gpu_compat.multi_gpu.multi_gpu_model"
ALL_PATHS = ["from keras.utils", "from keras.utils.training_utils", "from keras.utils.multi_gpu_utils",
             "from tensorflow.keras.utils", "from tensorflow.python.keras.utils",
             "from tensorflow.python.keras.utils.multi_gpu_utils", "from tensorflow._api.v1.keras.utils",
             "from tf_keras.utils", "keras.utils.multi_gpu_model", "tf.keras.utils.multi_gpu_model",
             "tf.compat.v1.keras.utils.multi_gpu_model", "tf.compat.v2.keras.utils.multi_gpu_model",
             "try/except fallback"]


def _results(proc):
    return json.loads(run_output_after(proc, "RESULTS"))


def run_output_after(proc, marker: str) -> str:
    return proc.stdout.split(marker, 1)[1].splitlines()[0]


def test_every_legacy_import_path_in_fresh_interpreter(legacy_keras):
    proc = run(PATHS_CODE, env={"MULTI_GPU_COMPAT_SIMULATE_GPUS": "2"}, timeout=150)
    results = _results(proc)
    # TF 2.12-2.15 environments have their built-in Keras 2, and usually no tf_keras.
    paths = [p for p in ALL_PATHS if p != "from tf_keras.utils" or importlib.util.find_spec("tf_keras")]
    wrong = {p: results.get(p) for p in paths if results.get(p) != SHIM}
    assert not wrong, f"paths not served by the shim ({'tf_keras' if legacy_keras else 'keras 3'}): {wrong}"
    assert results["use"] == [2, True], results["use"]
    # Repeated output names follow the import path: Keras 2.2.3-2.3's, or tf.keras's.
    namings = json.loads(run_output_after(proc, "NAMINGS"))
    table = legacy_modules.LEGACY_MODULES
    wrong = {}
    for path, found in namings.items():
        family = "keras" if path.split()[-1].startswith("keras.") else "tf.keras"
        if isinstance(found, str):  # `from X import multi_gpu_model`: X's family
            ok = found == family
        else:  # an attribute path: the naming of the module it reached; a tf.keras path reaches a
            # Keras module only where Keras 3 makes `tf.keras.utils` / `tf.compat.v1.keras.utils` it
            found_naming, module = found
            ok = found_naming == table.get(module, {}).get("output_naming") and (
                found_naming == family or module in ("keras.utils", "keras.api.utils") and not legacy_keras
            )
        if not ok:
            wrong[path] = found
    assert not wrong, f"paths with another family's output naming: {wrong}"
    assert len(namings) >= len(paths) - 1  # every path but the fallback


@pytest.mark.slow  # a TensorFlow child; the variable's parsing is pinned fast in test_hostile_shim.py
def test_disable_env_var_turns_hook_off():
    results = _results(run(PATHS_CODE + """
import sys
assert not [m for m in sys.modules if m.split(".")[0] == "multi_gpu_compat"], "project imported although disabled"
""", env={"MULTI_GPU_COMPAT_DISABLE": "1"}, timeout=150))
    failures = ("ImportError", "ModuleNotFoundError", "AttributeError")
    served = {p: results[p] for p in ALL_PATHS if not str(results[p]).startswith(failures)}
    assert not served, f"still served with MULTI_GPU_COMPAT_DISABLE=1: {served}"
    assert results["from keras.utils"].startswith("ImportError")
    assert results["from tensorflow.keras.utils"].startswith("ImportError")


def test_disable_env_var_imports_nothing_from_project():
    proc = run("import sys; print(sorted(m for m in sys.modules if m.split('.')[0] == 'multi_gpu_compat'))",
               env={"MULTI_GPU_COMPAT_DISABLE": "1"})
    assert proc.stdout.strip() == "[]", f"project modules imported at start-up although disabled: {proc.stdout}"


def test_startup_imports_nothing_heavy():
    proc = run("""
import sys
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("tensorflow", "keras", "tf_keras", "numpy", "h5py"))
from multi_gpu_compat import import_hook
print("STARTUP" + repr((heavy, import_hook.is_installed())))
""")
    heavy, installed = eval(proc.stdout.split("STARTUP", 1)[1])
    assert installed, "the .pth start-up hook did not install the import hook"
    assert heavy == [], f"imported at start-up: {heavy}"


@pytest.mark.slow  # TensorFlow children
def test_hook_failure_never_breaks_an_import(tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "multi_gpu.py").write_text("raise RuntimeError('simulated broken installation')\n")
    code = f"""
import multi_gpu_compat as compat
compat.__path__.insert(0, {str(broken)!r})  # compat.multi_gpu now fails on import
import keras
from keras.utils import multi_gpu_model, to_categorical   # the import itself works
assert to_categorical([0, 1], 2).shape == (2, 2)           # the module is intact
import tensorflow as tf
from tensorflow.keras.utils import multi_gpu_model as tf_mgm
inp = keras.Input((3,))
try:
    multi_gpu_model(keras.Model(inp, keras.layers.Dense(2)(inp)), gpus=2)
except ImportError as err:
    assert "simulated broken installation" in str(err) and "doctor" in str(err), err
else:
    raise AssertionError("broken shim did not surface on use")
print("BROKEN-OK")
"""
    assert "BROKEN-OK" in run(code, timeout=120).stdout
    # A module that cannot be imported at all (None in sys.modules) behaves the same.
    code2 = """
import sys
sys.modules["multi_gpu_compat.multi_gpu"] = None
import tensorflow as tf
from tensorflow.keras.utils import multi_gpu_model
try:
    multi_gpu_model(None, gpus=2)
except ImportError as err:
    assert "could not load" in str(err), err
else:
    raise AssertionError("no error on use")
print("NONE-OK")
"""
    assert "NONE-OK" in run(code2, timeout=120).stdout


OTHER_CODEMOD = "# another distribution's top-level `codemod` package\n"


@pytest.mark.slow
def test_built_wheel_ships_working_startup_hook(tmp_path):
    wheels = tmp_path / "wheels"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(wheels)],
        capture_output=True, text=True, timeout=300, env=child_env(),
    )
    assert build.returncode == 0, build.stderr[-3000:]
    [wheel] = list(wheels.glob("multi_gpu_compat-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "multi_gpu_compat.pth" in names, "the .pth must be at the top level of the wheel"
    assert "multi_gpu_compat/import_hook.py" in names and "multi_gpu_compat/multi_gpu.py" in names
    assert "multi_gpu_codemod/cli.py" in names
    # Only our own names: installing never overwrites another distribution's files (PyPI's
    # `codemod` installs a top-level `codemod` package; `compat` is a common module name).
    tops = {name.split("/", 1)[0] for name in names}
    assert tops == {"multi_gpu_compat", "multi_gpu_codemod", "multi_gpu_compat.pth",
                    "multi_gpu_compat_startup.py", "multi_gpu_compat-0.1.0.dist-info"}, tops
    # A fresh venv that sees the dependencies (TensorFlow, Keras) but not this checkout.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=180)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "codemod").mkdir()  # what PyPI's `codemod` distribution installs
    (site / "codemod" / "__init__.py").write_text(OTHER_CODEMOD)
    (site / "deps.pth").write_text(SITE_PACKAGES + "\n")  # dependencies only: their .pth files are not run
    py = venv / "bin" / "python"
    install = subprocess.run(
        [str(py), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)],
        capture_output=True, text=True, timeout=300, env=child_env(),
    )
    assert install.returncode == 0, install.stderr[-3000:]
    assert (site / "multi_gpu_compat.pth").exists()
    assert (site / "codemod" / "__init__.py").read_text() == OTHER_CODEMOD, "another distribution's file changed"
    for script in ("multi-gpu-compat", "multi-gpu-codemod"):
        help_ = subprocess.run([str(venv / "bin" / script), "--help"], capture_output=True, text=True,
                               cwd=tmp_path, timeout=120, env=child_env())
        assert help_.returncode == 0 and help_.stdout.startswith("usage: multi-gpu-"), help_.stderr[-2000:]
    check = """
import sys, multi_gpu_compat
assert multi_gpu_compat.__file__.startswith(sys.argv[1]), multi_gpu_compat.__file__
from keras.utils import multi_gpu_model
import tensorflow as tf
inp = tf.keras.Input((3,))
parallel = tf.keras.utils.multi_gpu_model(tf.keras.Model(inp, tf.keras.layers.Dense(2)(inp)), gpus=2)
assert parallel.distribute_strategy.num_replicas_in_sync == 2
print("WHEEL-OK")
"""
    proc = subprocess.run([str(py), "-c", check, str(site)], capture_output=True, text=True, cwd=tmp_path,
                          timeout=150, env=child_env({"MULTI_GPU_COMPAT_SIMULATE_GPUS": "2"}))
    assert "WHEEL-OK" in proc.stdout, proc.stderr[-3000:]
    # pip uninstall: the hook vanishes with the project.
    subprocess.run([str(py), "-m", "pip", "uninstall", "-y", "-q", "multi-gpu-compat"], check=True,
                   timeout=120, capture_output=True, env=child_env())
    assert not (site / "multi_gpu_compat.pth").exists()
    gone = subprocess.run([str(py), "-c", "from keras.utils import multi_gpu_model"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120, env=child_env())
    assert gone.returncode != 0 and "ImportError" in gone.stderr


def test_editable_install_uses_checkout():
    proc = run("import multi_gpu_compat as compat; print('FILE' + compat.__file__)", cwd=Path("/"))
    assert Path(proc.stdout.split("FILE", 1)[1].strip()).resolve().parent == ROOT / "compat"


# --- one table, a handle that uninstalls, loaders as the real import left them -------------------

def _fake_stack(tmp_path: Path) -> Path:
    """Tiny stand-ins for tensorflow, keras and tf_keras (each with a `utils` package)."""
    for top in ("tensorflow", "keras", "tf_keras"):
        (tmp_path / top / "utils").mkdir(parents=True)
        (tmp_path / top / "__init__.py").write_text("")
        (tmp_path / top / "utils" / "__init__.py").write_text("")
    return tmp_path


def test_uninstall_handle_stops_serving_and_loaders_are_restored(tmp_path):
    done = run("""
        import json, sys
        from multi_gpu_compat import import_hook
        hook = import_hook.install()
        import keras.utils
        found = {"served": hasattr(keras.utils, "multi_gpu_model"),
                 "loader": type(keras.utils.__loader__).__name__,
                 "spec_loader": type(keras.utils.__spec__.loader).__name__}
        hook.uninstall()
        found["installed_after_uninstall"] = import_hook.is_installed()
        import tf_keras.utils
        found["served_after_uninstall"] = hasattr(tf_keras.utils, "multi_gpu_model")
        found["kept"] = hasattr(keras.utils, "multi_gpu_model")  # set up before: keeps it
        again = import_hook.install()
        import tensorflow.utils
        found["new_handle"] = again is not hook and import_hook.is_installed()
        print("HOOK" + json.dumps(found))
    """, env={"PYTHONPATH": str(_fake_stack(tmp_path))})
    found = json.loads(done.stdout.split("HOOK", 1)[1])
    assert found == {"served": True, "loader": "SourceFileLoader", "spec_loader": "SourceFileLoader",
                     "installed_after_uninstall": False, "served_after_uninstall": False, "kept": True,
                     "new_handle": True}, found


def test_one_table_serves_the_hook_doctor_and_the_codemod():
    from multi_gpu_codemod.recognise import MULTI_GPU_MODEL_NAMES
    from multi_gpu_compat import import_hook, legacy_modules

    table = legacy_modules.LEGACY_MODULES
    served = import_hook.import_paths()
    assert "keras.utils" in served and "tf_keras.utils" in served
    # Every import the hook serves is one the codemod rewrites, and the hook can serve it.
    assert {f"{p}.multi_gpu_model" for p in served} <= MULTI_GPU_MODEL_NAMES
    assert all(table[p].get("serve") for p in served)
    assert MULTI_GPU_MODEL_NAMES == {f"{m}.multi_gpu_model" for m, e in table.items() if e.get("written")}
    # Data only: the codemod reads it on Python 3.9 with libcst alone.
    source = Path(legacy_modules.__file__).read_text()
    tree = ast.parse(source, feature_version=(3, 9))
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
