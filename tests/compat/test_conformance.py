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


# --- Output names follow the import path the script used ------------------------------------
# Keras 2.3.1's suite (`from keras.utils import multi_gpu_model`) expects a siamese model's outputs
# as `add, nested_1, nested_2`; TensorFlow 2.x's tf.keras suite (`tensorflow.keras.utils`) expects
# `add, nested, nested_1`. Each family computed them from the names of the output layers.


class _Layer:
    def __init__(self, name: str) -> None:
        self.name = name


class _Tensor:
    def __init__(self, layer: str) -> None:
        self._keras_history = (_Layer(layer), 0, 0)


class _BuiltTemplate:
    """A template whose outputs come from these layers, and that names its outputs `own`."""

    def __init__(self, layers: list[str], own: list[str] | None = None) -> None:
        self.outputs = [_Tensor(n) for n in layers]
        self.output_names = own if own is not None else list(layers)


SIAMESE_LAYERS = ["add", "nested", "nested"]


@pytest.mark.parametrize(
    "layers,keras_names,tf_keras_names",
    [
        (SIAMESE_LAYERS, ["add", "nested_1", "nested_2"], ["add", "nested", "nested_1"]),
        (["a", "b"], ["a", "b"], ["a", "b"]),
        (["x", "y", "x", "y"], ["x_1", "y_1", "x_2", "y_2"], ["x", "y", "x_1", "y_1"]),
        # A numbered name already taken is skipped by both.
        (["a", "a", "a_1"], ["a_2", "a_3", "a_1"], ["a", "a_1", "a_1_1"]),
    ],
)
def test_each_family_names_repeated_outputs_its_way(layers, keras_names, tf_keras_names):
    template = _BuiltTemplate(layers)
    assert _parallel.output_names(template, len(layers), _parallel.KERAS_NAMING) == keras_names
    assert _parallel.output_names(template, len(layers), _parallel.TF_KERAS_NAMING) == tf_keras_names


def test_naming_reads_the_output_layers_not_the_names_keras2_already_made_unique():
    # tf_keras and Keras 2.12-2.15 name a siamese template's outputs `add, nested, nested_1`
    # themselves; a Keras 2.3 script still gets Keras 2.3's names.
    template = _BuiltTemplate(SIAMESE_LAYERS, own=["add", "nested", "nested_1"])
    assert _parallel.output_names(template, 3, _parallel.KERAS_NAMING) == ["add", "nested_1", "nested_2"]
    assert _parallel.output_names(template, 3, _parallel.TF_KERAS_NAMING) == ["add", "nested", "nested_1"]
    # A direct call keeps the template's own names (numbering only repeats).
    assert _parallel.output_names(template, 3) == ["add", "nested", "nested_1"]
    assert _parallel.output_names(_BuiltTemplate(SIAMESE_LAYERS), 3) == ["add", "nested_1", "nested_2"]


def test_every_served_module_has_its_familys_naming():
    from multi_gpu_compat import legacy_modules

    served = {name: entry for name, entry in legacy_modules.LEGACY_MODULES.items() if entry.get("serve")}
    keras_family = {n for n, e in served.items() if e["output_naming"] == _parallel.KERAS_NAMING}
    tf_family = {n for n, e in served.items() if e["output_naming"] == _parallel.TF_KERAS_NAMING}
    assert keras_family | tf_family == set(served)
    assert keras_family == {"keras.utils", "keras.utils.training_utils", "keras.utils.multi_gpu_utils",
                            "keras.api.utils"}
    assert all(n.startswith(("tensorflow.", "tf_keras.", "keras._tf_keras.", "keras.api._v")) for n in tf_family)


def test_served_function_carries_the_naming_and_reads_as_multi_gpu_model():
    import inspect
    import pickle

    from multi_gpu_compat import multi_gpu

    for naming in _parallel.OUTPUT_NAMINGS:
        served = multi_gpu.served(naming)
        assert served.func is multi_gpu.multi_gpu_model and served.keywords == {"output_naming": naming}
        assert (served.__module__, served.__qualname__) == ("multi_gpu_compat.multi_gpu", "multi_gpu_model")
        assert served.__doc__ == multi_gpu.multi_gpu_model.__doc__
        assert inspect.signature(served).parameters["output_naming"].default == naming
        assert pickle.loads(pickle.dumps(served)).keywords == {"output_naming": naming}


def test_unknown_output_naming_is_refused_before_anything_runs():
    import multi_gpu_compat as compat

    with pytest.raises(ValueError, match=r"`output_naming` must be .*Received: output_naming='keras2'"):
        compat.multi_gpu_model(object(), gpus=2, output_naming="keras2")


def _siamese(K):
    nested = K.models.Sequential([K.Input((3,)), K.layers.Dense(4), K.layers.Dense(1)], name="nested")
    left, right = K.Input((3,)), K.Input((3,))
    score_left, score_right = nested(left), nested(right)
    total = K.layers.Add(name="add")([score_left, score_right])
    return K.Model([left, right], [total, score_left, score_right], name="siamese")


IMPORT_PATHS = {  # the module a script imported `multi_gpu_model` from -> the names its suite expected
    "keras.utils": ["add", "nested_1", "nested_2"],
    "keras.utils.multi_gpu_utils": ["add", "nested_1", "nested_2"],
    "tensorflow.keras.utils": ["add", "nested", "nested_1"],
    "tensorflow.python.keras.utils.multi_gpu_utils": ["add", "nested", "nested_1"],
}


def _served(path: str):
    import importlib

    return importlib.import_module(path).multi_gpu_model


@pytest.mark.parametrize("path", IMPORT_PATHS)
def test_siamese_output_names_follow_the_import_path(path, keras_module):
    parallel = _served(path)(_siamese(keras_module), gpus=2)
    assert list(parallel.output_names) == IMPORT_PATHS[path]


def test_siamese_output_names_of_a_direct_call(keras_module, legacy_keras):
    import multi_gpu_compat as compat

    parallel = compat.multi_gpu_model(_siamese(keras_module), gpus=2)
    # Keras 3 repeats the name and the shim numbers it; Keras 2 already named them uniquely.
    expected = ["add", "nested", "nested_1"] if legacy_keras else ["add", "nested_1", "nested_2"]
    assert list(parallel.output_names) == expected


@pytest.mark.slow  # training; the names themselves are checked fast above
@pytest.mark.parametrize("path", ["keras.utils", "tensorflow.keras.utils"])
def test_siamese_trains_with_loss_dicts_keyed_by_its_suites_names(path, keras_module):
    import copy

    import numpy as np

    names = IMPORT_PATHS[path]
    parallel = _served(path)(_siamese(keras_module), gpus=2)
    parallel.compile(optimizer="sgd", loss={n: "mse" for n in names}, loss_weights={n: 1.0 for n in names})
    rng = np.random.default_rng(0)
    left, right, target = (rng.random((16, d), dtype=np.float32) for d in (3, 3, 1))
    history = parallel.fit([left, right], [target] * 3, batch_size=8, epochs=1, verbose=0)
    assert {f"{n}_loss" for n in names} <= set(history.history)
    # A copy is wrapped again the same way (same import path, same names).
    assert list(copy.deepcopy(parallel).output_names) == names
