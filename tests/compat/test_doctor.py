"""`multi-gpu-compat doctor`: the report a user pastes into a bug report, line by line."""

from __future__ import annotations

import importlib.util
import os

import pytest

from multi_gpu_compat import _stack, doctor, import_hook

from compat_helpers import N_REPLICAS


def _report(capsys) -> list[str]:
    assert doctor.main([]) == 0
    return capsys.readouterr().out.splitlines()


def test_help_names_what_it_reports(capsys):
    assert doctor.main(["--help"]) == 0
    assert capsys.readouterr().out == (
        "usage: multi-gpu-compat doctor\n\nReport backend, support status, devices and the import hook's state.\n"
    )


def test_report_names_the_backend_devices_and_support(capsys):
    lines = _report(capsys)
    legacy = os.environ.get("TF_USE_LEGACY_KERAS") in ("1", "true", "True")
    tensorflow = _stack.tensorflow_version()
    keras2 = tensorflow is not None and _stack.parse_version(tensorflow)[:2] <= (2, 15)
    assert lines[0].startswith("multi-gpu-compat ") and "(python " in lines[0]
    if legacy:
        assert lines[1] == "backend: tf_keras (TF_USE_LEGACY_KERAS=1)"
    elif keras2:
        assert lines[1] == f"backend: built-in Keras 2 of TensorFlow {tensorflow}"
    else:
        assert lines[1] == "backend: Keras 3"
    assert lines[2] == f"tensorflow: {tensorflow}"
    assert lines[4].startswith("support: supported: ")
    assert lines[5] == "private internals: all resolve"
    # Then every internal, one per line: resolved, or set on live objects.
    internals = lines[6:lines.index(next(line for line in lines if line.startswith("gpus: ")))]
    assert internals and all(line.startswith("  ") for line in internals)
    assert all(line.endswith((": ok", ": absent (optional)", "(checked by the tests)")) for line in internals)
    assert any("keras" in line for line in internals) and any("tensorflow.python" in line for line in internals)
    devices = ", ".join(["/cpu:0"] + [f"/gpu:{i}" for i in range(N_REPLICAS)])
    assert f"gpus: {N_REPLICAS} simulated ({devices})" in lines  # the session's simulated GPUs


def test_active_hook_lists_every_path_it_serves(capsys, monkeypatch):
    monkeypatch.setattr(import_hook, "is_installed", lambda: True)
    lines = _report(capsys)
    start = lines.index("import hook: active")
    assert lines[start + 1] == "import paths served:"
    tf_keras = "ok" if importlib.util.find_spec("tf_keras") else "tf_keras not installed"
    assert lines[start + 2:] == [
        f"  from {p} import multi_gpu_model: {tf_keras if p.startswith('tf_keras') else 'ok'}"
        for p in import_hook.import_paths()
    ]


def test_a_path_that_fails_to_import_is_reported_not_raised(capsys, monkeypatch):
    monkeypatch.setattr(import_hook, "is_installed", lambda: True)
    monkeypatch.setattr(import_hook, "import_paths", lambda: ["json.no_such_module_for_doctor"])
    assert _report(capsys)[-1] == ("  from json.no_such_module_for_doctor import multi_gpu_model: "
                                   "fails: ModuleNotFoundError: No module named 'json.no_such_module_for_doctor'")


def test_a_package_that_is_not_installed_is_said_so_not_failed(capsys, monkeypatch):
    # e.g. `from tf_keras.utils import multi_gpu_model` where tf_keras is not installed
    monkeypatch.setattr(import_hook, "is_installed", lambda: True)
    monkeypatch.setattr(import_hook, "import_paths", lambda: ["no_such_package_for_doctor.utils"])
    assert _report(capsys)[-1] == (
        "  from no_such_package_for_doctor.utils import multi_gpu_model: no_such_package_for_doctor not installed"
    )


def test_builtin_keras2_is_named_as_such(capsys, monkeypatch):
    # TensorFlow 2.15 with its Keras 2.15: doctor said "Keras 3" here.
    monkeypatch.setattr(_stack, "keras_version", lambda: "2.15.0")
    monkeypatch.setattr(_stack, "tensorflow_version", lambda: "2.15.1")
    monkeypatch.delenv("TF_USE_LEGACY_KERAS", raising=False)
    lines = _report(capsys)
    assert lines[1] == "backend: built-in Keras 2 of TensorFlow 2.15.1"
    assert lines[4].startswith("support: supported: TensorFlow 2.15.1 with its built-in Keras 2.15.0")


@pytest.mark.parametrize("disabled,state", [(True, "disabled by MULTI_GPU_COMPAT_DISABLE"), (False, "not installed")])
def test_inactive_hook_says_why(capsys, monkeypatch, disabled, state):
    monkeypatch.setattr(import_hook, "is_installed", lambda: False)
    monkeypatch.setattr(import_hook, "disabled", lambda: disabled)
    line = _report(capsys)[-1]
    assert line.startswith(f"import hook: {state}")
    assert ("multi_gpu_compat.activate()" in line) == (not disabled)  # the way in, unless switched off
