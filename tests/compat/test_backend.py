"""Which Keras serves a model, on every supported stack; a clear error without TensorFlow."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib import metadata

import pytest

from multi_gpu_compat import _settings, _stack, backend
from child_process import child_env
from compat_helpers import ROOT, mlp

# `None` in sys.modules makes a package unimportable, as in a codemod-only install.
_WITHOUT_TENSORFLOW = (
    "import sys\nfor name in ('tensorflow', 'keras', 'tf_keras', 'h5py'):\n    sys.modules[name] = None\n"
)


def _run_without_tensorflow(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", _WITHOUT_TENSORFLOW + textwrap.dedent(code)],
        capture_output=True, text=True, cwd=ROOT, env=child_env(), timeout=120,
    )


def test_stack_names_the_installed_keras():
    major = int(metadata.version("keras").split(".")[0])
    assert _stack.keras3_installed() == (major == 3)
    expected = "tf_keras" if _settings.legacy_keras() else ("keras3" if major == 3 else "keras2")
    assert _stack.backend() == expected


def test_the_model_under_test_is_served_by_the_matching_backend(keras_module, legacy_keras):
    model = mlp(keras_module)
    assert backend.is_keras2_model(model) == legacy_keras
    assert backend.uses_keras2() == legacy_keras


def test_keras2_package_is_tf_keras_next_to_keras3_else_the_keras_package():
    expected = "keras" if not _stack.keras3_installed() and not _settings.legacy_keras() else "tf_keras"
    assert backend.keras2_package_name() == expected


def test_keras2_backend_finds_its_private_modules(legacy_keras):
    if not legacy_keras:
        pytest.skip("the Keras 2 backend serves tf_keras and Keras 2.12-2.15 only")
    from multi_gpu_compat import _internals, _keras2_internals, _tf_keras

    package = backend.keras2_package_name()
    assert _tf_keras.Functional.__module__.startswith(package + ".")
    assert _tf_keras.tf_keras.__name__ == package
    autocast = _keras2_internals.autocast_variable_module()
    assert autocast.__name__.startswith(package + ".")
    assert hasattr(autocast, "create_autocast_variable")
    assert callable(_internals.keras2_module("optimizers.legacy.optimizer_v2")._var_key)


def test_multi_gpu_model_without_tensorflow_says_what_to_install():
    done = _run_without_tensorflow("""
        from multi_gpu_compat import multi_gpu_model
        try:
            multi_gpu_model(object(), gpus=2)
        except ModuleNotFoundError as err:
            print("ERROR", err)
    """)
    assert done.returncode == 0, done.stderr
    assert "needs TensorFlow" in done.stdout and "pip install" in done.stdout
    assert "multi-gpu-compat[cpu]" in done.stdout


def test_load_legacy_model_without_tensorflow_says_what_to_install(tmp_path):
    done = _run_without_tensorflow(f"""
        import multi_gpu_compat as compat
        try:
            compat.load_legacy_model({str(tmp_path / "model.h5")!r})
        except ModuleNotFoundError as err:
            print("ERROR", err)
    """)
    assert done.returncode == 0, done.stderr
    assert "ERROR" in done.stdout and "needs TensorFlow" in done.stdout


@pytest.mark.parametrize("command", ["doctor", "unwrap"])
def test_compat_commands_without_tensorflow_say_what_to_install(command, tmp_path):
    done = _run_without_tensorflow(f"""
        from multi_gpu_compat.__main__ import main
        argv = [{command!r}, {str(tmp_path / "a.h5")!r}, {str(tmp_path / "b.keras")!r}]
        sys.exit(main(argv[:1 if {command!r} == "doctor" else 3]))
    """)
    assert done.returncode == 1
    assert f"multi-gpu-compat {command}:" in done.stderr and "needs TensorFlow" in done.stderr
    assert "Traceback" not in done.stderr
