"""Tested version ranges, the first-use check of private internals, and doctor's support line."""

from __future__ import annotations

import importlib.util
import io
import sys
import warnings
from contextlib import redirect_stdout

import numpy as np
import pytest

import multi_gpu_compat as compat
from multi_gpu_compat import _stack, _support, doctor, notices, startup
from compat_helpers import data, mlp, replica_values, run


@pytest.fixture
def fresh_notices(monkeypatch):
    monkeypatch.setattr(notices, "_issued", set())


@pytest.fixture
def keras3_only(legacy_keras):
    if legacy_keras:
        pytest.skip("Keras 3 internals: this run serves tf_keras (TF_USE_LEGACY_KERAS=1)")


def _fake_versions(monkeypatch, keras: str | None, tensorflow: str | None) -> None:
    monkeypatch.setattr(_stack, "keras_version", lambda: keras)
    monkeypatch.setattr(_stack, "tensorflow_version", lambda: tensorflow)


def _load_fresh_copy(name: str):
    """Imports a second copy of a compat module, as a first use in a new process would."""
    module_name = f"multi_gpu_compat.{name}"
    spec = importlib.util.spec_from_file_location(
        f"{module_name}_fresh_copy", importlib.util.find_spec(module_name).origin
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "text, expected",
    [("2.16.2", (2, 16, 2)), ("2.16.0rc0", (2, 16, 0)), ("3.15.0.dev2025110303", (3, 15, 0)),
     ("2.15.0.post1", (2, 15, 0)), ("3.8", (3, 8)), ("nightly", ())],
)
def test_parse_version(text, expected):
    assert _stack.parse_version(text) == expected


def test_installed_environment_is_supported():
    status = _support.status()
    assert status.state == "supported", status.message
    assert status.tensorflow == _stack.tensorflow_version()
    assert status.keras in status.message and status.tensorflow in status.message


def test_untested_newer_version_warns_with_range_and_advice(monkeypatch, fresh_notices):
    _fake_versions(monkeypatch, keras="3.99.0", tensorflow="2.30.1")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        status = _support.check("keras3")
        _support.check("keras3")
    assert status.state == "untested newer version"
    shim = [w for w in caught if issubclass(w.category, notices.MultiGPUCompatWarning)]
    assert len(shim) == 1
    message = str(shim[0].message)
    assert "Keras 3.99.0" in message and "TensorFlow 2.30.1" in message
    assert "Keras 3.3–3.15 with TensorFlow 2.16–2.21" in message
    assert 'pip install "tensorflow==2.21.*" "keras==3.15.*"' in message
    assert "multi-gpu-compat doctor" in message


def test_newer_tensorflow_alone_is_untested(monkeypatch):
    _fake_versions(monkeypatch, keras="3.15.0", tensorflow="2.22.0")
    assert _support.status("keras3").state == "untested newer version"


def test_older_keras_3_is_untested_older(monkeypatch):
    _fake_versions(monkeypatch, keras="3.1.1", tensorflow="2.16.1")
    status = _support.status("keras3")
    assert status.state == "untested older version"
    assert "upgrade to a tested version" in status.message


def test_missing_tensorflow_says_what_to_install(monkeypatch):
    _fake_versions(monkeypatch, keras="3.15.0", tensorflow=None)
    with pytest.raises(ImportError, match=r"TensorFlow not installed.*pip install tensorflow"):
        _support.check("keras3")


def test_keras2_backend_is_tensorflow_2_12_to_2_15(monkeypatch):
    _fake_versions(monkeypatch, keras="2.15.0", tensorflow="2.15.1")
    monkeypatch.delenv("TF_USE_LEGACY_KERAS", raising=False)
    assert _stack.backend() == "keras2"
    assert _support.status().state == "supported"
    _fake_versions(monkeypatch, keras="2.11.0", tensorflow="2.11.1")
    assert _support.status().state == "untested older version"


def test_support_check_does_not_import_tensorflow():
    probe = run(
        "import sys, multi_gpu_compat._support as s\n"
        "s.status()\n"
        "print('tensorflow' in sys.modules, 'keras' in sys.modules)\n",
        env={"MULTI_GPU_COMPAT_DISABLE": "1"},
    )
    assert probe.stdout.split() == ["False", "False"]


# --- the Keras 3 adapter ------------------------------------------------------------------


def test_every_registered_internal_resolves_on_the_serving_keras(keras_module, legacy_keras):
    # The registry's class-level internals for TensorFlow and the Keras in use, and its live ones on
    # live objects of the classes they are declared on (the rest are met by other kinds of objects).
    from multi_gpu_compat import _internals, _tf_internals

    stack = _internals.KERAS2 if legacy_keras else _internals.KERAS3
    assert _internals.missing(_internals.TENSORFLOW) == [] == _tf_internals.missing_internals()
    assert _internals.missing(stack) == []
    if not legacy_keras:  # the Keras 3 accessors import Keras 3's private modules
        from multi_gpu_compat import _keras3_internals

        assert _keras3_internals.missing_internals() == []
    model = mlp(keras_module, name="internals_probe")
    optimizer = keras_module.optimizers.Adam()
    if hasattr(optimizer, "build"):  # Keras 2.12's Adam is the legacy OptimizerV2 (slots made on use)
        optimizer.build(model.trainable_variables)
    live = {"variable": model.weights[0], "optimizer": optimizer, "model": model,
            "layer": model.layers[-1], "tensor": model.outputs[0]}
    checked = 0
    for internal in _internals.for_stack(stack):
        obj = live.get(internal.live)
        owner, _, name = internal.attribute.rpartition(".")
        owner = owner.rpartition(".")[2]
        if obj is None or owner not in {c.__name__ for c in type(obj).__mro__}:
            continue
        checked += 1
        assert internal.optional or hasattr(obj, name), f"a live {internal.live} has no {internal}"
    assert checked >= 5


def test_a_missing_internal_is_named_by_the_check(monkeypatch):
    import dataclasses

    from multi_gpu_compat import _internals

    gone = dataclasses.replace(_internals.for_stack(_internals.TENSORFLOW)[0], attribute="no_such_internal")
    monkeypatch.setattr(_internals, "REGISTRY", (*_internals.REGISTRY, gone))
    assert _internals.missing(_internals.TENSORFLOW) == [f"{gone.module}.no_such_internal"]
    with pytest.raises(_support.UnsupportedVersionError, match="no_such_internal"):
        _internals.check(_internals.TENSORFLOW)


def _tensorflow_without(monkeypatch, name: str = "no_such_internal"):
    """The registry with one more required TensorFlow internal, which this TensorFlow lacks."""
    import dataclasses

    from multi_gpu_compat import _internals

    declared = next(i for i in _internals.for_stack(_internals.TENSORFLOW) if not i.live and not i.optional)
    gone = dataclasses.replace(declared, attribute=name)
    monkeypatch.setattr(_internals, "REGISTRY", (*_internals.REGISTRY, gone))
    return gone


def _shim_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, notices.MultiGPUCompatWarning)]


def test_startup_warns_once_naming_a_missing_tensorflow_internal_and_the_fix(monkeypatch, fresh_notices):
    gone = _tensorflow_without(monkeypatch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        startup.run()  # at TensorFlow's import: never raises
        startup.run()  # at the top of multi_gpu_model
    shim = _shim_warnings(caught)
    assert len(shim) == 1, shim
    assert f"`{gone}`" in shim[0] and "multi-worker training" in shim[0]
    assert "bug in multi-gpu-compat" in shim[0]  # a tested TensorFlow: ours to fix
    assert "Received: TensorFlow " in shim[0]


def test_missing_tensorflow_internal_on_an_untested_tensorflow_says_what_to_pin(monkeypatch, fresh_notices):
    _tensorflow_without(monkeypatch)
    monkeypatch.setattr(_stack, "tensorflow_version", lambda: "2.99.0")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        startup.run()
    missing = [m for m in _shim_warnings(caught) if "no_such_internal" in m]
    pin = _support.status().tested.pin_hint()  # e.g. pip install "tensorflow==2.21.*" "keras==3.15.*"
    assert len(missing) == 1 and pin.startswith('pip install "tensorflow==') and pin in missing[0], missing


def test_multi_worker_start_up_without_its_internals_warns_instead_of_failing(monkeypatch, fresh_notices):
    from multi_gpu_compat import multi_worker

    _tensorflow_without(monkeypatch)
    installed = []
    monkeypatch.setattr(multi_worker, "install_early_creation", lambda: installed.append(True))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        startup.run()
    assert installed == [] and len(_shim_warnings(caught)) == 1


@pytest.mark.slow  # a TensorFlow child; the warning itself is checked fast above
def test_importing_tensorflow_without_an_internal_warns_and_imports():
    proc = run("""
        import dataclasses, warnings
        warnings.simplefilter("always")
        from multi_gpu_compat import _internals
        declared = next(i for i in _internals.for_stack(_internals.TENSORFLOW) if not i.live and not i.optional)
        _internals.REGISTRY = (*_internals.REGISTRY, dataclasses.replace(declared, attribute="no_such_internal"))
        import tensorflow as tf
        print("IMPORTED", tf.constant(1).numpy())
    """)
    assert "IMPORTED 1" in proc.stdout
    assert proc.stderr.count("no_such_internal") == 1, proc.stderr[-3000:]
    assert "could not set up" not in proc.stderr


def test_newer_keras_without_an_internal_gets_clear_error(keras3_only, monkeypatch, fresh_notices):
    import keras
    from keras.src.backend.tensorflow import trainer

    monkeypatch.setattr(keras, "__version__", "3.99.0")
    monkeypatch.delattr(trainer, "TensorFlowTrainer")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(_support.UnsupportedVersionError) as info:
            _load_fresh_copy("_keras3_internals")
    assert not isinstance(info.value, ImportError)
    message = str(info.value)
    assert "Keras 3.99.0" in message and "TensorFlowTrainer" in message
    assert "Tested: Keras 3.3–3.15 with TensorFlow 2.16–2.21" in message
    assert 'pip install "tensorflow==2.21.*" "keras==3.15.*"' in message


def test_tested_keras_without_an_internal_is_reported_as_our_bug(keras3_only, monkeypatch):
    from multi_gpu_compat._keras3_internals import TensorFlowTrainer

    monkeypatch.setattr(TensorFlowTrainer, "_flatten_metrics_in_order", None)  # inherited: shadow it
    with pytest.raises(_support.UnsupportedVersionError, match="_flatten_metrics_in_order.*bug in multi-gpu-compat"):
        startup.run(backend="keras3")


@pytest.mark.slow  # trains
def test_batch_logs_are_python_floats_and_replicas_stay_in_sync(keras3_only, keras_module):
    template = mlp(keras_module, name="sync_probe")
    parallel = compat.multi_gpu_model(template, gpus=4)
    parallel.compile(optimizer=keras_module.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    x, y = data(8, seed=5)
    losses = parallel.train_on_batch(x, y)
    assert all(type(v) is float for v in losses), losses
    assert set(parallel.test_on_batch(x, y, return_dict=True)) == {"loss", "mae"}
    parallel.fit(x, y, batch_size=8, epochs=1, verbose=0)
    strategy = parallel.distribute_strategy
    _assert_replicas_equal(strategy, template)
    # The template trained on its own stays in sync as well.
    template.compile(optimizer=keras_module.optimizers.SGD(0.1), loss="mse")
    template.fit(x, y, batch_size=8, epochs=1, verbose=0)
    _assert_replicas_equal(strategy, template)


def _assert_replicas_equal(strategy, model) -> None:
    for variable in model.trainable_weights:
        first, *others = replica_values(strategy, variable)
        assert all(np.array_equal(first, other) for other in others), variable.path


def test_tf_internals_error_names_what_is_missing(monkeypatch):
    from multi_gpu_compat import _tf_internals

    monkeypatch.setitem(_tf_internals._MODULES, "multi_worker_util", "tensorflow.python.no_such_module")
    with pytest.raises(_support.UnsupportedVersionError, match="no_such_module"):
        _tf_internals.coordination_leader(None)


# --- doctor ---------------------------------------------------------------------------


def _doctor_output() -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert doctor.main([]) == 0
    return out.getvalue()


def test_doctor_reports_supported_environment():
    lines = _doctor_output().splitlines()
    support = next(line for line in lines if line.startswith("support: "))
    assert support.startswith("support: supported: ")
    assert f"TensorFlow {_stack.tensorflow_version()}" in support and "(tested: " in support
    assert "private internals: all resolve" in lines


def test_doctor_reports_untested_newer_version(monkeypatch):
    _fake_versions(monkeypatch, keras="3.99.0", tensorflow="2.30.0")
    monkeypatch.delenv("TF_USE_LEGACY_KERAS", raising=False)
    output = _doctor_output()
    assert "support: untested newer version: multi-gpu-compat is tested with Keras 3.3–3.15" in output


def test_doctor_reports_missing_tensorflow(monkeypatch):
    _fake_versions(monkeypatch, keras="3.15.0", tensorflow=None)
    monkeypatch.delenv("TF_USE_LEGACY_KERAS", raising=False)
    output = _doctor_output()
    assert "support: TensorFlow not installed: `multi_gpu_model` runs on TensorFlow" in output
    assert "pip install tensorflow" in output
    assert "private internals" not in output
    assert sys.modules.get("tensorflow") is not None  # the real one stayed loaded


def test_missing_keras_package_says_what_to_install(monkeypatch):
    _fake_versions(monkeypatch, keras=None, tensorflow="2.18.1")
    assert "Keras not installed: install it next to TensorFlow 2.18.1 with pip install keras." in (
        _support.status("keras3").message
    )
    monkeypatch.setattr(_stack, "tf_keras_version", lambda: None)
    assert 'pip install "tf-keras==2.18.*"' in _support.status("tf_keras").message


# --- the version warning, on every backend ---------------------------------------------------


@pytest.mark.parametrize(
    "backend_name, legacy, keras, tf_keras, tensorflow, found",
    [
        ("keras3", None, "3.99.0", None, "2.21.0", "Keras 3.99.0 with TensorFlow 2.21.0"),
        ("tf_keras", "1", "3.15.0", "2.99.0", "2.21.0", "tf_keras 2.99.0 with TensorFlow 2.21.0"),
        ("keras2", None, "2.16.0", None, "2.16.1", "TensorFlow 2.16.1 with its built-in Keras 2.16.0"),
        ("keras2", None, "2.11.0", None, "2.11.1", "TensorFlow 2.11.1 with its built-in Keras 2.11.0"),
    ],
)
def test_startup_warns_once_on_an_untested_version_of_every_backend(
    monkeypatch, fresh_notices, backend_name, legacy, keras, tf_keras, tensorflow, found
):
    if legacy is None:
        monkeypatch.delenv("TF_USE_LEGACY_KERAS", raising=False)
    else:
        monkeypatch.setenv("TF_USE_LEGACY_KERAS", legacy)
    _fake_versions(monkeypatch, keras=keras, tensorflow=tensorflow)
    monkeypatch.setattr(_stack, "tf_keras_version", lambda: tf_keras)
    assert _stack.backend() == backend_name
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        startup.run()
        startup.run()
    shim = [str(w.message) for w in caught if issubclass(w.category, notices.MultiGPUCompatWarning)]
    assert len(shim) == 1, shim
    assert "multi-gpu-compat: untested" in shim[0] and found in shim[0]


def test_startup_on_a_tested_stack_says_nothing(fresh_notices):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        startup.run()
    assert [w for w in caught if issubclass(w.category, notices.MultiGPUCompatWarning)] == []


def test_multi_gpu_model_warns_on_an_untested_version_of_the_serving_keras(monkeypatch, fresh_notices, keras_module):
    # The serving package's own version is what is judged: keras, tf_keras, or (for the built-in
    # Keras 2, which ships with it) TensorFlow's.
    import tensorflow as tf

    serving = tf if _stack.backend() == _stack.KERAS2 else keras_module
    major = _stack.parse_version(serving.__version__)[0]
    monkeypatch.setattr(serving, "__version__", f"{major}.99.0")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compat.multi_gpu_model(mlp(keras_module, name="untested_probe"), gpus=2)
    shim = [str(w.message) for w in caught if issubclass(w.category, notices.MultiGPUCompatWarning)]
    assert any("untested newer version" in m and f"{major}.99.0" in m for m in shim), shim
