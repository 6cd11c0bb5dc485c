"""The original `multi_gpu_model` suites' behaviours (conformance_cases.py) on 8 simulated GPUs.

The session runs on 4 simulated GPUs, which TensorFlow cannot change afterwards, so the cases
run once per backend in a child pytest with `MULTI_GPU_COMPAT_SIMULATE_GPUS=8`; each case is
reported here as its own test. Also here: what needs no 8 GPUs (the legacy helpers on real
devices, the import hook staying cheap, output-name de-duplication).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from multi_gpu_compat import _parallel
from child_process import child_env
from compat_helpers import ROOT, run

CASES = Path(__file__).with_name("conformance_cases.py")


def _case_names() -> list[str]:
    tree = ast.parse(CASES.read_text())
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]


@pytest.fixture(scope="module")
def case_results(tmp_path_factory) -> dict[str, list[tuple[str, str]]]:
    """Runs conformance_cases.py on 8 simulated GPUs: {case: [(outcome, details), ...]}."""
    report = tmp_path_factory.mktemp("conformance") / "report.xml"
    here = str(Path(__file__).parent)  # for the `conformance_exit` plugin
    pythonpath = os.pathsep.join(p for p in (str(ROOT / ".dev"), here, os.environ.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(CASES), "--noconftest", "-p", "no:cacheprovider",
         "-p", "conformance_exit", "-q", f"--junitxml={report}"],
        cwd=ROOT, capture_output=True, text=True, timeout=1800,
        env=child_env({"MULTI_GPU_COMPAT_SIMULATE_GPUS": "8", "PYTHONPATH": pythonpath}),
    )
    assert report.exists(), f"the conformance run did not report:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    results: dict[str, list[tuple[str, str]]] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        name = case.get("name", "").split("[")[0]
        problem = next((c for c in case if c.tag in ("failure", "error", "skipped")), None)
        outcome = "passed" if problem is None else problem.tag
        details = "" if problem is None else (problem.get("message") or "") + "\n" + (problem.text or "")
        results.setdefault(name, []).append((outcome, details))
    return results


@pytest.mark.slow
@pytest.mark.parametrize("case", _case_names())
def test_conformance_on_eight_gpus(case, case_results, legacy_keras):
    runs = case_results.get(case)
    assert runs, f"{case} did not run in the 8-GPU child"
    for outcome, details in runs:
        if outcome == "skipped" and "tf_keras" in details and legacy_keras:
            continue  # a Keras 3 companion, skipped on tf_keras with its reason
        if outcome == "skipped" and "tf_keras" in details and not legacy_keras:
            pytest.fail(f"{case} was skipped on Keras 3: {details}")
        assert outcome == "passed", f"{case}: {outcome}\n{details}"


@pytest.mark.slow  # a TensorFlow child; tests/compat/test_devices.py covers the device helpers fast
def test_legacy_helpers_report_the_real_devices_without_simulation():
    proc = run(
        """
        import tensorflow as tf
        import keras
        from keras import backend as K
        utils = keras.utils.multi_gpu_utils
        short = lambda names: [utils._normalize_device_name(n) for n in names]
        real = short(d.name for d in tf.config.list_logical_devices())
        assert short(utils._get_available_devices()) == real, (utils._get_available_devices(), real)
        gpus = [d for d in real if d.startswith("/gpu:")]
        assert short(K.tensorflow_backend._get_available_gpus()) == gpus
        assert short(keras.backend._get_available_gpus()) == gpus
        assert short(tf.keras.backend._get_available_gpus()) == gpus
        print(len(gpus))
        """
    )
    assert proc.stdout.strip().isdigit()


def test_import_hook_with_the_legacy_surface_stays_cheap():
    run(
        """
        import sys
        import multi_gpu_compat.import_hook, multi_gpu_compat.legacy_surface
        heavy = [m for m in ("tensorflow", "keras", "tf_keras", "numpy") if m in sys.modules]
        assert not heavy, heavy
        """
    )


class _Template:
    def __init__(self, names: list[str]) -> None:
        self.output_names = names


@pytest.mark.parametrize(
    "names,expected",
    [
        (["add", "nested", "nested"], ["add", "nested_1", "nested_2"]),
        (["a", "b"], ["a", "b"]),
        (["a", "a", "a_1"], ["a_2", "a_3", "a_1"]),
        (["x", "y", "x", "y"], ["x_1", "y_1", "x_2", "y_2"]),
    ],
)
def test_only_repeated_output_names_get_suffixes(names, expected):
    assert _parallel.output_names(_Template(names), len(names)) == expected
