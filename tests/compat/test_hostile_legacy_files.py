"""Hostile `.h5` inputs to `load_legacy_model`, `load_legacy_weights` and `multi-gpu-compat unwrap`:
huge declared weights, absurdly deep configs, configs Keras cannot build, pipes and devices. Each
gets one clear sentence; nothing is allocated, run or waited for on the file's say-so."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import h5py
import pytest

import multi_gpu_compat as compat
from multi_gpu_compat.legacy_models import LegacyFileError
from child_process import child_env
from compat_helpers import ROOT

FIXTURES = ROOT / "fixtures" / "legacy_models"
HUGE_SHAPE = (10**6, 10**6)  # 10**12 float32 values: 4 TB if anything read it


# TensorFlow's C++ start-up log lines, printed before its log level applies.
TF_LOG_LINE = re.compile(r"^([IWEF]\d{4} |WARNING: All log messages before absl::InitializeLog)")


def _unwrap(*args: str) -> subprocess.CompletedProcess[str]:
    # The timeout turns a hang on a pipe or device into a failure instead of a stuck run.
    return subprocess.run([sys.executable, "-m", "multi_gpu_compat", "unwrap", *args], cwd=ROOT,
                          env=child_env(), capture_output=True, text=True, timeout=120)


def _assert_one_line_error(result, status: int, *patterns: str) -> None:
    lines = [line for line in result.stderr.strip().splitlines() if not TF_LOG_LINE.match(line)]
    assert result.returncode == status, result.stderr[-3000:]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert lines[0].startswith("multi-gpu-compat unwrap: error: ")
    for pattern in patterns:
        assert pattern in lines[0], lines[0]


def _copy(name: str, tmp_path: Path) -> Path:
    path = tmp_path / name
    shutil.copy(FIXTURES / name, path)
    return path


def _with_huge_weight(path: Path, group: str) -> Path:
    """Replaces the first weight in `group` by a declared, never written 10**12-value array."""
    with h5py.File(path, "r+") as f:
        weights = f[group]
        name = [n.decode() if isinstance(n, bytes) else n for n in weights.attrs["weight_names"]][0]
        del weights[name]
        weights.create_dataset(name, shape=HUGE_SHAPE, dtype="float32", chunks=(1000, 1000))
    assert path.stat().st_size < 10**7  # declared, not stored
    return path


def _with_config(path: Path, text: str) -> Path:
    with h5py.File(path, "r+") as f:
        f.attrs["model_config"] = text
    return path


def _edit_template_dense(path: Path, **config) -> Path:
    with h5py.File(path, "r+") as f:
        model = json.loads(f.attrs["model_config"])
        template = next(layer for layer in model["config"]["layers"] if layer["class_name"] == "Sequential")
        dense = next(layer for layer in template["config"]["layers"] if layer["class_name"] == "Dense")
        dense["config"].update(config)
        f.attrs["model_config"] = json.dumps(model)
    return path


# --- a weight declared 10**12 values large -------------------------------------------------

def test_huge_declared_template_weight_rejected_before_reading(tmp_path):
    path = _with_huge_weight(_copy("seq_2gpu.h5", tmp_path), "model_weights/sequential")
    with pytest.raises(ValueError, match=r"shape \(1000000, 1000000\)") as excinfo:
        compat.load_legacy_model(path)
    assert "does not match" in str(excinfo.value)


def test_huge_declared_weight_in_plain_file_rejected_before_reading(tmp_path):
    path = _copy("plain_func.h5", tmp_path)
    with h5py.File(path, "r") as f:
        group = next(f"model_weights/{n}" for n in f["model_weights"]
                     if "weight_names" in f[f"model_weights/{n}"].attrs
                     and len(f[f"model_weights/{n}"].attrs["weight_names"]))
    _with_huge_weight(path, group)
    with pytest.raises(ValueError, match=r"declares weight .* \(1000000000000 values\), more than the whole model"):
        compat.load_legacy_model(path)


def test_huge_declared_weight_in_weights_file_rejected_before_reading(tmp_path):
    template = compat.load_legacy_model(FIXTURES / "func_2gpu_2out_keras224.h5")
    path = _copy("func_2gpu_2out_weights_only.h5", tmp_path)
    with h5py.File(path, "r") as f:
        group = next(n for n in f if len(f[n].attrs.get("weight_names", [])))
    _with_huge_weight(path, group)
    with pytest.raises(ValueError, match=r"shape \(1000000, 1000000\)"):
        compat.load_legacy_weights(template, path)


@pytest.mark.slow  # a TensorFlow child; test_legacy_models checks the CLI's one-line errors fast
def test_cli_huge_declared_weight_one_line(tmp_path):
    path = _with_huge_weight(_copy("seq_2gpu.h5", tmp_path), "model_weights/sequential")
    _assert_one_line_error(_unwrap(str(path), str(tmp_path / "new.keras")), 1, "(1000000, 1000000)")
    assert not (tmp_path / "new.keras").exists()


# --- configs nested absurdly deep ---------------------------------------------------------

@pytest.mark.parametrize("depth", [500, 100_000])
def test_deep_config_one_clear_error(tmp_path, depth):
    text = '{"class_name": "Functional", "config": {"layers": ' + "[" * depth + "]" * depth + "}}"
    path = _with_config(_copy("seq_2gpu.h5", tmp_path), text)
    with pytest.raises(LegacyFileError, match="nested more than 200 levels deep"):
        compat.load_legacy_model(path)


def test_cli_deep_config_one_line(tmp_path):
    text = '{"class_name": "Functional", "config": ' + '{"a": ' * 100_000 + "1" + "}" * 100_001
    path = _with_config(_copy("seq_2gpu.h5", tmp_path), text)
    _assert_one_line_error(_unwrap(str(path), str(tmp_path / "new.keras")), 1, "nested more than")


# --- configs Keras cannot build -------------------------------------------------------------

@pytest.mark.parametrize("config", [{"bogus_argument": 1}, {"units": "abc"}, {"activation": 5}])
def test_config_keras_cannot_build_one_clear_error(tmp_path, config):
    path = _edit_template_dense(_copy("seq_2gpu.h5", tmp_path), **config)
    with pytest.raises(ValueError, match="Keras could not build the model") as excinfo:
        compat.load_legacy_model(path)
    message = str(excinfo.value)
    assert "layer class Dense" in message and "custom_objects" in message
    assert "\n" not in message and len(message) < 700


@pytest.mark.slow  # a TensorFlow child; test_legacy_models checks the CLI's one-line errors fast
def test_cli_config_keras_cannot_build_one_line(tmp_path):
    path = _edit_template_dense(_copy("seq_2gpu.h5", tmp_path), bogus_argument=1)
    _assert_one_line_error(_unwrap(str(path), str(tmp_path / "new.keras")), 1,
                           "Keras could not build", "bogus_argument")


# --- pipes and devices ------------------------------------------------------------------------

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_input_refused_without_waiting(tmp_path):
    fifo = tmp_path / "model.h5"
    os.mkfifo(fifo)
    _assert_one_line_error(_unwrap(str(fifo), str(tmp_path / "new.keras")), 1, "not a regular file")
    with pytest.raises(LegacyFileError, match="not a regular file"):
        compat.load_legacy_weights(None, fifo)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero on this platform")
def test_device_input_refused_without_reading_forever(tmp_path):
    _assert_one_line_error(_unwrap("/dev/zero", str(tmp_path / "new.keras")), 1, "not a regular file")


# --- where NEW cannot be written -------------------------------------------------------------

def test_cli_new_in_missing_folder_or_a_folder_one_line(tmp_path):
    old = str(FIXTURES / "seq_2gpu.h5")
    _assert_one_line_error(_unwrap(old, str(tmp_path / "missing" / "new.keras")), 2,
                           "does not exist", "Create it first")
    folder = tmp_path / "folder.keras"
    folder.mkdir()
    _assert_one_line_error(_unwrap(old, str(folder)), 2, "is a directory")
