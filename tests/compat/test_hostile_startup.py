"""Start-up under hostile conditions: a venv runs the .pth line twice, threads import Keras at
once, and interpreters that skip .pth files get a documented way in and a failure that says it."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

from multi_gpu_compat import _explainer, import_hook
from compat_helpers import ROOT, SITE_PACKAGES, STARTUP_DIR, STARTUP_PTH, checkout_startup, run

NO_PTH_PATH = os.pathsep.join([str(ROOT / ".dev"), SITE_PACKAGES])  # what `-S` with PYTHONPATH sees


def _fake_stack(tmp_path: Path) -> Path:
    """Tiny stand-ins for tensorflow, keras and tf_keras (each with a `utils` package): the start-up
    finders react to their names without TensorFlow's seconds of import time."""
    for top in ("tensorflow", "keras", "tf_keras"):
        (tmp_path / top / "utils").mkdir(parents=True)
        (tmp_path / top / "__init__.py").write_text("")
        (tmp_path / top / "utils" / "__init__.py").write_text("")
    return tmp_path


def _meta_path_names(code: str = "") -> list[str]:
    done = run(code + "import sys\nprint([getattr(f, '__name__', type(f).__name__) for f in sys.meta_path])")
    return eval(done.stdout.strip().splitlines()[-1])


def test_a_venv_start_leaves_one_startup_finder():
    # site.main() and site.venv() both process the site-packages .pth files in a venv.
    assert _meta_path_names().count("_MultiGpuCompatStartup") == 1


def test_the_startup_line_run_twice_adds_one_finder():
    code = f"exec(open({str(STARTUP_PTH)!r}).read())\n" * 2
    path = os.pathsep.join([str(STARTUP_DIR), NO_PTH_PATH])
    names = eval(run(code + "import sys\nprint([getattr(f, '__name__', '') for f in sys.meta_path])",
                     args=["-S"], env={"PYTHONPATH": path}).stdout.strip())
    assert names.count("_MultiGpuCompatStartup") == 1


def test_startup_finder_reached_after_another_thread_removed_it(monkeypatch):
    # A thread that fetched the finder from sys.meta_path just before another thread removed it.
    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if not isinstance(f, import_hook._Finder)
                                           and getattr(f, "__name__", "") != "_MultiGpuCompatStartup"])
    checkout_startup().install()
    startup = next(f for f in sys.meta_path if getattr(f, "__name__", "") == "_MultiGpuCompatStartup")
    sys.meta_path.remove(startup)
    startup.find_spec("keras.utils.training_utils")  # must neither raise nor leave two hooks
    assert sum(isinstance(f, import_hook._Finder) for f in sys.meta_path) == 1


def test_threads_importing_keras_at_start_up_never_fail(tmp_path):
    stack = _fake_stack(tmp_path)
    code = textwrap.dedent("""
        import sys, threading
        sys.setswitchinterval(1e-6)
        names = ["tensorflow", "keras", "tf_keras", "keras.utils", "tensorflow.utils", "tf_keras.utils"] * 3
        barrier, errors = threading.Barrier(len(names)), []

        def probe(name):
            barrier.wait()
            try:
                __import__(name)
            except BaseException as error:
                errors.append(repr(error))

        threads = [threading.Thread(target=probe, args=(n,)) for n in names]
        for t in threads: t.start()
        for t in threads: t.join()
        from multi_gpu_compat import import_hook
        hooks = sum(isinstance(f, import_hook._Finder) for f in sys.meta_path)
        print(errors, hooks, callable(getattr(sys.modules["keras.utils"], "multi_gpu_model", None)))
    """)
    for _ in range(5):
        out = run(code, env={"PYTHONPATH": str(stack)}).stdout.strip().splitlines()[-1]
        assert out == "[] 1 True", out


# --- interpreters that skip .pth files: explicit activation, and a failure that says how -----------

def _without_pth(code: str, stack: Path | None = None):
    path = os.pathsep.join(([str(stack)] if stack else []) + [NO_PTH_PATH])
    return run(code, args=["-S"], env={"PYTHONPATH": path}, check=False)


def test_legacy_import_without_the_hook_names_the_project_and_how(tmp_path):
    done = _without_pth("""
        import multi_gpu_compat
        try:
            from keras.utils import multi_gpu_model
        except ImportError as error:
            print(error)
    """, _fake_stack(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "multi-gpu-compat" in done.stdout and "multi_gpu_compat.activate()" in done.stdout
    assert "python -S" in done.stdout


def test_activate_serves_the_legacy_import_without_the_hook(tmp_path):
    done = _without_pth("""
        import sys
        import keras.utils  # imported before: set up by activate()
        import multi_gpu_compat
        assert multi_gpu_compat.activate() is True and multi_gpu_compat.activate() is True
        from keras.utils import multi_gpu_model
        from tf_keras.utils import multi_gpu_model as other
        from multi_gpu_compat import import_hook
        hooks = sum(isinstance(f, import_hook._Finder) for f in sys.meta_path)
        print(callable(multi_gpu_model), callable(other), hooks)
    """, _fake_stack(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "1"]


def test_importing_the_package_changes_nothing_for_keras(tmp_path):
    done = _without_pth("""
        import sys
        import multi_gpu_compat
        import keras.utils
        print(hasattr(keras.utils, "multi_gpu_model"), "tensorflow" in sys.modules)
    """, _fake_stack(tmp_path))
    assert done.stdout.split() == ["False", "False"], done.stderr


def test_activate_says_false_when_switched_off(monkeypatch):
    monkeypatch.setenv(import_hook.DISABLE_VAR, "1")
    import multi_gpu_compat

    assert multi_gpu_compat.activate() is False


def test_explainer_says_the_switch_when_disabled(monkeypatch):
    monkeypatch.setenv(import_hook.DISABLE_VAR, "1")
    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if not isinstance(f, import_hook._Finder)])
    with pytest.raises(ImportError, match="MULTI_GPU_COMPAT_DISABLE switches multi-gpu-compat off"):
        _explainer.Explainer.find_spec("keras.utils.multi_gpu_model")
    assert _explainer.Explainer.find_spec("keras.utils.something_else") is None


@pytest.mark.slow  # a TensorFlow child; the fake-stack tests above cover the promise fast
def test_activate_with_the_real_stack_under_python_dash_s():
    done = _without_pth("""
        import multi_gpu_compat
        for statement in ["from keras.utils import multi_gpu_model",
                          "from tensorflow.keras.utils import multi_gpu_model",
                          "import keras.utils.multi_gpu_utils",
                          "from tf_keras.utils import multi_gpu_model"]:
            try:
                exec(statement)
                print("served without activation:", statement)
            except ImportError as error:
                print("explained:", "multi_gpu_compat.activate()" in str(error))
        multi_gpu_compat.activate()
        from keras.utils import multi_gpu_model
        from tensorflow.keras.utils import multi_gpu_model as tf_path
        print("after:", callable(multi_gpu_model), callable(tf_path))
    """)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert lines == ["explained: True"] * 4 + ["after: True True"], done.stdout


def test_a_probe_in_another_thread_does_not_make_an_import_skip_the_hook(monkeypatch):
    import threading

    hook = import_hook.install()
    probing, release = threading.Event(), threading.Event()
    prober: list[threading.Thread] = []

    class Slow:  # a finder that takes its time, consulted while the probing thread is inside the hook
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name == "tensorflow" and threading.current_thread() in prober:
                probing.set()
                release.wait(10)
            return None

    monkeypatch.setattr(sys, "meta_path", [hook, Slow, *[f for f in sys.meta_path if f is not hook]])
    probe = threading.Thread(target=hook.find_spec, args=("tensorflow", None))
    prober.append(probe)
    probe.start()
    assert probing.wait(10)
    try:
        spec = hook.find_spec("tensorflow", None)  # this thread's lookup, meanwhile
    finally:
        release.set()
        probe.join()
    assert spec is not None and isinstance(spec.loader, import_hook._PatchingLoader)
