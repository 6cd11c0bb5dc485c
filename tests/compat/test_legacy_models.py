"""Rescuing `.h5` files saved from the old `multi_gpu_model`.

The fixtures come from fixtures/legacy_models/make_legacy_models.py, which re-creates the
original nested graph with tf_keras; next to each file it stored inputs and the template's
predictions at save time. Every check here compares against those, on whichever Keras
this process runs (Keras 3, or tf_keras with TF_USE_LEGACY_KERAS=1).
"""

from __future__ import annotations

import base64
import json
import marshal
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import h5py
import numpy as np
import pytest

import multi_gpu_compat as compat
from multi_gpu_compat.backend import keras_module
from multi_gpu_compat.legacy_models import LegacyFileError
from child_process import child_env
from compat_helpers import site_packages_without_project

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "legacy_models"
MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())
MODEL_FILES = sorted(n for n, info in MANIFEST.items() if info["kind"] != "weights")
PARALLEL_FILES = sorted(n for n, info in MANIFEST.items() if info["kind"] == "parallel")
WEIGHTS_ONLY = "func_2gpu_2out_weights_only.h5"


def _reference(name: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
    data = np.load(FIXTURES / name.replace(".h5", ".npz"))
    xs = [data[f"x{i}"] for i in range(sum(k.startswith("x") for k in data.files))]
    ys = [data[f"y{i}"] for i in range(sum(k.startswith("y") for k in data.files))]
    return xs, ys


def _predict(model, xs: list[np.ndarray]) -> list[np.ndarray]:
    ys = model.predict(xs[0] if len(xs) == 1 else xs, verbose=0)
    return list(ys) if isinstance(ys, (list, tuple)) else [ys]


def _assert_predicts_reference(model, name: str) -> None:
    xs, expected = _reference(name)
    got = _predict(model, xs)
    assert len(got) == len(expected)
    for y, ref in zip(got, expected):
        np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)


@pytest.fixture(scope="module")
def loaded() -> dict:
    """Every model file, loaded once for the module."""
    return {name: compat.load_legacy_model(FIXTURES / name) for name in MODEL_FILES}


def _two_output_template(keras):
    """`_two_output_template` of the fixture script, re-written by a user: other names."""
    a = keras.Input((4,))
    b = keras.Input((3,))
    h = keras.layers.Concatenate()([a, b])
    h = keras.layers.Dense(6, activation="tanh")(h)
    h = keras.layers.BatchNormalization()(h)
    score = keras.layers.Dense(1)(h)
    label = keras.layers.Dense(3, activation="softmax")(h)
    return keras.Model([a, b], [score, label])


def test_fixtures_cover_the_issue():
    gpus = {g for info in MANIFEST.values() for g in info["gpus"]}
    assert {2, 4, 8} <= gpus
    parallel = [MANIFEST[n] for n in PARALLEL_FILES]
    assert {info["outputs"] for info in parallel} == {1, 2}
    assert {info["template"] for info in parallel} == {"sequential", "functional"}
    assert {info["layout"] for info in parallel} == {"tf.keras", "keras-2.2.4"}
    assert any(len(info["gpus"]) == 2 for info in parallel)  # nested twice
    for name in MANIFEST:
        assert (FIXTURES / name).stat().st_size < 64 * 1024


@pytest.mark.parametrize("name", MODEL_FILES)
def test_unwrapped_model_predicts_like_the_template(loaded, name):
    _assert_predicts_reference(loaded[name], name)


@pytest.mark.parametrize("name", PARALLEL_FILES)
def test_unwrapped_model_is_the_template(loaded, name):
    model = loaded[name]
    with h5py.File(FIXTURES / name) as f:
        saved = json.loads(f.attrs["model_config"])
    template_names = [layer["name"] for layer in saved["config"]["layers"] if layer["class_name"] in (
        "Model", "Functional", "Sequential")]
    # Nested files: the innermost template, below every level of Lambdas.
    assert MANIFEST[name]["outputs"] == len(model.outputs)
    assert not [layer for layer in model.layers if type(layer).__name__ == "Lambda"]
    if len(MANIFEST[name]["gpus"]) == 1:
        assert model.name == template_names[0]


def test_nested_file_unwraps_every_level(loaded):
    name = "nested_seq_4then2gpu.h5"
    info = compat.legacy_models._inspect(FIXTURES / name)
    assert info.replicas == (2, 4)
    assert type(loaded[name]).__name__ == "Sequential"


def test_plain_file_is_returned_as_it_is(loaded):
    model = loaded["plain_func.h5"]
    with h5py.File(FIXTURES / "plain_func.h5") as f:
        saved = json.loads(f.attrs["model_config"])
    assert model.name == saved["config"]["name"]
    assert [layer.name for layer in model.layers] == [layer["name"] for layer in saved["config"]["layers"]]


def test_weights_only_file_into_a_template_built_in_code():
    keras = keras_module()
    template = _two_output_template(keras)
    xs, expected = _reference(WEIGHTS_ONLY)
    before = _predict(template, xs)
    assert not np.allclose(before[1], expected[1], atol=1e-3)
    compat.load_legacy_weights(template, FIXTURES / WEIGHTS_ONLY)
    _assert_predicts_reference(template, WEIGHTS_ONLY)


def test_load_legacy_weights_reads_full_parallel_files_too():
    template = _two_output_template(keras_module())
    compat.load_legacy_weights(template, FIXTURES / "func_2gpu_2out_keras224.h5")
    _assert_predicts_reference(template, "func_2gpu_2out_keras224.h5")


def test_load_legacy_weights_checks_the_architecture():
    keras = keras_module()
    wrong = keras.Sequential([keras.Input((5,)), keras.layers.Dense(8), keras.layers.Dense(3)])
    before = [w.copy() for w in wrong.get_weights()]
    with pytest.raises(ValueError, match="architecture of the template"):
        compat.load_legacy_weights(wrong, FIXTURES / WEIGHTS_ONLY)
    for old, new in zip(before, wrong.get_weights()):
        np.testing.assert_array_equal(old, new)  # nothing assigned on failure


def test_load_legacy_model_refuses_weights_only_files():
    with pytest.raises(ValueError, match="load_legacy_weights"):
        compat.load_legacy_model(FIXTURES / WEIGHTS_ONLY)


# --- Lambda bytecode is never deserialized ------------------------------------------


@pytest.fixture
def no_bytecode(monkeypatch):
    """Makes unmarshalling or deserializing any Lambda fail loudly."""
    keras = keras_module()

    def forbidden(*args, **kwargs):
        raise AssertionError("Lambda bytecode was deserialized")

    real_loads = marshal.loads

    def loads(*args, **kwargs):
        # Python itself unmarshals the .pyc of a module imported lazily (an encoding h5py asks for).
        if sys._getframe(1).f_globals.get("__name__", "").startswith("importlib"):
            return real_loads(*args, **kwargs)
        return forbidden()

    monkeypatch.setattr(marshal, "loads", loads)
    monkeypatch.setattr(keras.layers.Lambda, "from_config", classmethod(forbidden))


@pytest.mark.parametrize("name", ["seq_2gpu_garbage_lambda.h5", "nested_seq_4then2gpu.h5",
                                  "func_8gpu.h5"])
def test_lambdas_are_never_deserialized(no_bytecode, name):
    _assert_predicts_reference(compat.load_legacy_model(FIXTURES / name), name)


def test_garbage_fixture_really_holds_garbage_bytecode():
    with h5py.File(FIXTURES / "seq_2gpu_garbage_lambda.h5") as f:
        config = json.loads(f.attrs["model_config"])
    code = next(layer for layer in config["config"]["layers"] if layer["class_name"] == "Lambda")
    with pytest.raises((ValueError, EOFError, TypeError)):
        marshal.loads(base64.b64decode(code["config"]["function"][0]))


def _with_lambda_in_template(tmp_path: Path) -> Path:
    path = tmp_path / "lambda_template.h5"
    shutil.copyfile(FIXTURES / "seq_2gpu_garbage_lambda.h5", path)
    with h5py.File(path, "r+") as f:
        config = json.loads(f.attrs["model_config"])
        template = next(layer for layer in config["config"]["layers"] if layer["class_name"] == "Sequential")
        lam = next(layer for layer in config["config"]["layers"] if layer["class_name"] == "Lambda")
        layer = {"class_name": "Lambda", "config": dict(lam["config"], name="user_lambda")}
        template["config"]["layers"].insert(2, layer)
        f.attrs["model_config"] = json.dumps(config)
    return path


def test_template_with_lambda_is_refused(no_bytecode, tmp_path):
    path = _with_lambda_in_template(tmp_path)
    with pytest.raises(ValueError, match=r"user_lambda.*load_legacy_weights"):
        compat.load_legacy_model(path)


# --- damaged and foreign files ------------------------------------------------------


def test_missing_file():
    with pytest.raises(FileNotFoundError, match="File not found"):
        compat.load_legacy_model(FIXTURES / "no_such_model.h5")


def test_truncated_file(tmp_path):
    path = tmp_path / "truncated.h5"
    path.write_bytes((FIXTURES / "seq_2gpu.h5").read_bytes()[:4000])
    with pytest.raises(LegacyFileError, match="truncated or corrupt") as info:
        compat.load_legacy_model(path)
    assert isinstance(info.value, OSError) and isinstance(info.value, ValueError)


def test_not_hdf5(tmp_path):
    path = tmp_path / "notes.h5"
    path.write_text("these are not the weights you are looking for\n")
    with pytest.raises(LegacyFileError, match="not an HDF5 file"):
        compat.load_legacy_model(path)


def test_corrupt_model_config(tmp_path):
    path = tmp_path / "corrupt.h5"
    shutil.copyfile(FIXTURES / "seq_2gpu.h5", path)
    with h5py.File(path, "r+") as f:
        f.attrs["model_config"] = f.attrs["model_config"][:-40]
    with pytest.raises(LegacyFileError, match="not valid JSON"):
        compat.load_legacy_model(path)


def test_hdf5_that_is_not_keras(tmp_path):
    path = tmp_path / "data.h5"
    with h5py.File(path, "w") as f:
        f["x"] = np.zeros(3)
    with pytest.raises(LegacyFileError, match="no Keras model or weights"):
        compat.load_legacy_weights(None, path)


# --- the command line ---------------------------------------------------------------


def _unwrap(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "multi_gpu_compat", "unwrap", *args],
        cwd=cwd, env=child_env(), capture_output=True, text=True, timeout=300,
    )


# Run with `python -S`: this venv's `multi_gpu_compat.pth` imports compat at start-up;
# skipping site processing and adding site-packages by hand gives a shim-free interpreter.
_LOAD_WITHOUT_COMPAT = """
    import os, sys
    sys.path.append(os.environ["SITE_PACKAGES"])
    import numpy as np
    if os.environ.get("TF_USE_LEGACY_KERAS") in ("1", "true"):
        import tf_keras as keras
    else:
        import keras
    out = {}
    for ref, path in zip(sys.argv[2::2], sys.argv[3::2]):
        data = np.load(ref)
        xs = [data[k] for k in sorted(k for k in data.files if k.startswith("x"))]
        ys = keras.models.load_model(path).predict(xs[0] if len(xs) == 1 else xs, verbose=0)
        suffix = os.path.splitext(path)[1]
        for i, y in enumerate(ys if isinstance(ys, list) else [ys]):
            out[f"{suffix}_y{i}"] = y
    assert "multi_gpu_compat" not in sys.modules
    np.savez(sys.argv[1], **out)
"""


# One output per format, from the two hardest files; one shim-free child loads both.
_CLI_CASES = {".keras": "func_4gpu_2out.h5", ".h5": "nested_seq_4then2gpu.h5"}


@pytest.mark.slow  # three children load TensorFlow; the CLI's errors and load_legacy_model stay fast
def test_cli_unwraps_to_keras_and_h5_loadable_without_compat(tmp_path):
    script = tmp_path / "load.py"
    script.write_text(textwrap.dedent(_LOAD_WITHOUT_COMPAT))
    args = []
    for suffix, name in _CLI_CASES.items():
        new = tmp_path / f"new{suffix}"
        result = _unwrap(str(FIXTURES / name), str(new))
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith(f"Wrote {new}: template ")
        args += [str(FIXTURES / name.replace(".h5", ".npz")), str(new)]
    out = tmp_path / "out.npz"
    result = subprocess.run(
        [sys.executable, "-S", str(script), str(out), *args],
        cwd=tmp_path,
        env={**child_env(), "PYTHONPATH": "", "SITE_PACKAGES": _site_packages()},
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    got = np.load(out)
    for suffix, name in _CLI_CASES.items():
        _, expected = _reference(name)
        for i, ref in enumerate(expected):
            np.testing.assert_allclose(got[f"{suffix}_y{i}"], ref, rtol=1e-5, atol=1e-6)


def _site_packages() -> str:
    return site_packages_without_project()


def _assert_one_line_error(result, status: int, pattern: str) -> None:
    assert result.returncode == status
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("multi-gpu-compat unwrap: error: ")
    assert pattern in lines[0]
    assert "Traceback" not in result.stderr


def test_cli_rejects_a_plain_model(tmp_path):
    result = _unwrap(str(FIXTURES / "plain_func.h5"), str(tmp_path / "new.keras"))
    _assert_one_line_error(result, 1, "is not a multi-GPU model")
    assert not (tmp_path / "new.keras").exists()


def test_cli_rejects_damaged_files(tmp_path):
    truncated = tmp_path / "truncated.h5"
    truncated.write_bytes((FIXTURES / "func_8gpu.h5").read_bytes()[:2000])
    _assert_one_line_error(_unwrap(str(truncated), str(tmp_path / "a.keras")), 1, "truncated")
    garbage = tmp_path / "garbage.h5"
    garbage.write_bytes(b"\x89HDF\r\n" + bytes(range(256)) * 8)
    _assert_one_line_error(_unwrap(str(garbage), str(tmp_path / "b.keras")), 1, "not an HDF5")
    _assert_one_line_error(
        _unwrap(str(tmp_path / "missing.h5"), str(tmp_path / "c.keras")), 1, "File not found"
    )
    assert not list(tmp_path.glob("*.keras"))


def test_cli_does_not_overwrite_without_force(tmp_path):
    new = tmp_path / "new.keras"
    new.write_text("keep me")
    _assert_one_line_error(_unwrap(str(FIXTURES / "seq_2gpu.h5"), str(new)), 1, "--force")
    assert new.read_text() == "keep me"


def test_cli_usage_errors(tmp_path):
    _assert_one_line_error(_unwrap(str(FIXTURES / "seq_2gpu.h5"), str(tmp_path / "new.txt")),
                           2, ".keras, .h5 or .hdf5")
    _assert_one_line_error(_unwrap(str(FIXTURES / "seq_2gpu.h5")), 2, "required")


def test_import_compat_stays_cheap():
    code = (
        "import sys, multi_gpu_compat; "
        "assert 'tensorflow' not in sys.modules and 'multi_gpu_compat.legacy_models' not in sys.modules"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=child_env(),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_backend_under_test_matches_environment(loaded):
    # CI runs this module once per Keras; the files must really load into the one the run asked for.
    asked = "tf_keras" if os.environ.get("TF_USE_LEGACY_KERAS") in ("1", "true", "True") else "keras"
    assert {type(model).__module__.split(".")[0] for model in loaded.values()} == {asked}
