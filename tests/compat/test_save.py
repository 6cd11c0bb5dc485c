"""Save semantics: every file written after parallel training is the plain template with the
trained weights, and loads in a fresh process where this project is not installed."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import multi_gpu_compat as compat
from multi_gpu_compat import notices
from compat_helpers import N_REPLICAS, ROOT, data, mlp, run_without_project, weights_equal

NAME = "save_template"


def model_files(legacy):
    """(file name, how it was written) for the backend's formats."""
    if legacy:
        return {"template.h5": "template.save", "template_savedmodel": "template.save",
                "template.keras": "template.save", "parallel.h5": "parallel.save",
                "ckpt.h5": "ModelCheckpoint(parallel)"}
    return {"template.keras": "template.save", "template.h5": "template.save",
            "parallel.keras": "parallel.save", "parallel.h5": "parallel.save",
            "ckpt.keras": "ModelCheckpoint(parallel)"}


def weight_files(legacy):
    if legacy:
        return {"template_weights.h5": "template.save_weights",
                "parallel_weights.h5": "parallel.save_weights",
                "ckpt_weights.h5": "ModelCheckpoint(parallel, save_weights_only)"}
    return {"template.weights.h5": "template.save_weights",
            "parallel.weights.h5": "parallel.save_weights",
            "ckpt.weights.h5": "ModelCheckpoint(parallel, save_weights_only)"}


@pytest.fixture(scope="module")
def saved(keras_module, legacy_keras, tmp_path_factory):
    """Trains through the parallel model (Dropout included; BatchNormalization saving: test_keras3_fixes.py),
    then saves every way."""
    K = keras_module
    out = tmp_path_factory.mktemp("saved")
    template = mlp(K, name=NAME, dropout=True)
    initial = template.get_weights()
    parallel = compat.multi_gpu_model(template, gpus=N_REPLICAS)
    parallel.compile(optimizer=K.optimizers.SGD(0.05), loss="mse")
    x, y = data(16, seed=11)
    ckpt_model, ckpt_weights = (
        [n for n in model_files(legacy_keras) if n.startswith("ckpt")][0],
        [n for n in weight_files(legacy_keras) if n.startswith("ckpt")][0],
    )
    callbacks = [
        K.callbacks.ModelCheckpoint(str(out / ckpt_model)),
        K.callbacks.ModelCheckpoint(str(out / ckpt_weights), save_weights_only=True),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", notices.MultiGPUCompatWarning)
        parallel.fit(x, y, batch_size=2 * N_REPLICAS, epochs=1, verbose=0, callbacks=callbacks)
        for name, how in {**model_files(legacy_keras), **weight_files(legacy_keras)}.items():
            if how.startswith("ModelCheckpoint"):
                continue
            owner, method = how.split(".")
            getattr(template if owner == "template" else parallel, method)(str(out / name))
    assert not any(np.allclose(a, b) for a, b in zip(initial, template.get_weights()))
    expected = parallel.predict(x, verbose=0)
    np.save(out / "x.npy", x)
    np.save(out / "expected.npy", expected)
    return template, parallel, out, expected


@pytest.mark.slow  # a TensorFlow child without the project
def test_saved_files_load_without_project(saved, keras_module, legacy_keras):
    template, _, out, _ = saved
    layer_names = [layer.name for layer in template.layers]
    code = f"""
        import importlib, json, os, sys
        import numpy as np
        K = importlib.import_module({keras_module.__name__!r})  # keras (3, or 2.12-2.15) or tf_keras
        out = {str(out)!r}
        sys.path.insert(0, {str(ROOT / 'tests' / 'compat')!r})
        from compat_helpers import mlp
        x = np.load(os.path.join(out, "x.npy"))
        expected = np.load(os.path.join(out, "expected.npy"))
        results = {{}}
        for name in {list(model_files(legacy_keras))!r}:
            model = K.models.load_model(os.path.join(out, name), compile=False)
            names = [layer.name for layer in model.layers]
            assert names == {layer_names!r}, (name, names)
            results[name] = float(np.abs(model.predict(x, verbose=0) - expected).max())
        for name in {list(weight_files(legacy_keras))!r}:
            model = mlp(K, name={NAME!r}, dropout=True)
            model.load_weights(os.path.join(out, name))
            results[name] = float(np.abs(model.predict(x, verbose=0) - expected).max())
        assert not any(m == "multi_gpu_compat" or m.startswith("multi_gpu_compat.") for m in sys.modules)
        print("RESULTS" + json.dumps(results))
    """
    proc = run_without_project(code, cwd=out, timeout=240)
    results = json.loads(proc.stdout.split("RESULTS", 1)[1])
    written = {**model_files(legacy_keras), **weight_files(legacy_keras)}
    assert set(results) == set(written)
    bad = {f"{name} ({written[name]})": diff for name, diff in results.items() if diff > 1e-5}
    assert not bad, f"predictions differ from the trained parallel model: {bad}"


def test_parallel_save_writes_plain_template_in_process(saved, keras_module, legacy_keras):
    template, parallel, out, expected = saved
    name = "parallel.h5" if legacy_keras else "parallel.keras"
    loaded = keras_module.models.load_model(out / name, compile=False)
    assert loaded.name == template.name
    assert len(loaded.layers) == len(template.layers)
    assert weights_equal(loaded.get_weights(), template.get_weights(), rtol=1e-6, atol=0)


def test_weights_loaded_into_template_used_by_parallel_at_once(keras_module, legacy_keras, tmp_path):
    K = keras_module
    template = mlp(K, name="load_template", bn=True)
    parallel = compat.multi_gpu_model(template, gpus=N_REPLICAS)
    other = mlp(K, name="load_template", bn=True)
    rng = np.random.default_rng(3)
    other.set_weights([rng.normal(size=w.shape).astype("float32") + (2 if "var" in v.name else 0)
                       for w, v in zip(other.get_weights(), other.weights)])
    path = tmp_path / ("other_weights.h5" if legacy_keras else "other.weights.h5")
    other.save_weights(path)
    x, _ = data(8, seed=5)
    expected = other.predict(x, verbose=0)
    template.load_weights(path)
    np.testing.assert_allclose(parallel.predict(x, verbose=0), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(parallel.predict_on_batch(x), expected, rtol=1e-5, atol=1e-5)
    # parallel.load_weights goes to the template, too.
    template.set_weights([np.zeros_like(w) for w in template.get_weights()])
    parallel.load_weights(path)
    assert weights_equal(template.get_weights(), other.get_weights())
    np.testing.assert_allclose(parallel.predict(x, verbose=0), expected, rtol=1e-5, atol=1e-5)
