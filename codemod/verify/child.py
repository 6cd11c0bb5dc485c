"""The child process of `verify`: runs one script with fixed seeds and records what it trained.

Started by runs.py as `python -m multi_gpu_codemod.verify.child _child CONFIG`. This is the one
module of the codemod that uses TensorFlow, Keras, NumPy and multi_gpu_compat; it imports them
inside `run` only, so importing the module stays as cheap as the rest of the codemod.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from .ipython_shell import Shell

__all__ = ["SPLIT_SENSITIVE", "run"]

# Layers whose training-time behaviour depends on how the batch is split across replicas.
# BatchNormalization normalises each replica's slice with that slice's statistics; Dropout
# draws its masks per replica from per-replica random streams. Neither can match a
# single-device run, so those comparisons are reported as "n/c" (not comparable), not failed.
SPLIT_SENSITIVE = ("BatchNormalization", "Dropout", "SpatialDropout", "AlphaDropout",
                   "GaussianDropout", "GaussianNoise")
# Modes where `multi_gpu_model` is replaced by a reference implementation.
_REFERENCE_MODES = ("single", "original")


def run(config: dict[str, Any]) -> None:
    """Runs `config["script"]` in the current folder as `config["mode"]` asks; writes the record.

    The record: `config["result"]` (JSON: losses, replicas, weight names, notes...) and
    `config["arrays"]` (NumPy .npz: weights `w<i>`, predictions `p:<file>`).
    """
    import random

    mode, gpus = config["mode"], config["gpus"]
    _prepare(mode, config, gpus)  # before TensorFlow is imported
    import numpy as np
    import tensorflow as tf

    keras = _keras()
    if mode in _REFERENCE_MODES:
        _rebind_imported_copies()
    random.seed(0)
    np.random.seed(0)
    tf.random.set_seed(0)
    keras.utils.set_random_seed(0)

    recorder = _FitRecorder(keras)
    before = {p.name for p in Path.cwd().iterdir()}
    shell = Shell()
    with recorder:
        _run_script(config["script"], shell)

    result: dict[str, Any] = {"losses": _losses(recorder.histories), "notes": shell.notes(), "predictions": [],
                              "split_sensitive": []}
    arrays: dict[str, Any] = {}
    if recorder.fitted:
        _record_trained_model(recorder.fitted[-1], result, arrays)
    else:
        result["notes"].append("the script never called fit")
    _record_predictions(keras, before, result, arrays)
    np.savez(config["arrays"], **arrays)
    Path(config["result"]).write_text(json.dumps(result))


def _prepare(mode: str, config: dict[str, Any], gpus: int) -> None:
    """The devices (migrated) or the reference `multi_gpu_model` (single, original) of the mode."""
    if mode == "migrated":
        # The import hook is off; only the device simulation of the project is used.
        from multi_gpu_compat import simulation

        simulation.simulate_gpus(gpus)
    if mode in _REFERENCE_MODES:
        import multi_gpu_compat.multi_gpu

        replacement = _identity if mode == "single" else _original_algorithm(config["original"], gpus)
        multi_gpu_compat.multi_gpu.multi_gpu_model = replacement  # the import hook hands out this one


def _keras() -> Any:
    """The Keras the script runs on: tf_keras under TF_USE_LEGACY_KERAS, else Keras 3."""
    if os.environ.get("TF_USE_LEGACY_KERAS", "") in ("1", "true", "True"):
        import tf_keras

        return tf_keras
    import keras

    return keras


def _rebind_imported_copies() -> None:
    """Modules that imported the shim's `multi_gpu_model` before the swap get the reference too."""
    import multi_gpu_compat.multi_gpu

    modules: list[Any] = list(sys.modules.values())
    for module in modules:
        current = getattr(module, "multi_gpu_model", None)
        if callable(current) and getattr(current, "__module__", "") == "multi_gpu_compat.multi_gpu":
            try:
                module.multi_gpu_model = multi_gpu_compat.multi_gpu.multi_gpu_model
            except (AttributeError, TypeError):
                pass


class _FitRecorder:
    """While active, wraps `Model.fit` and keeps every outermost `fit`'s model and loss history."""

    def __init__(self, keras: Any) -> None:
        self.keras = keras
        self.fitted: list[Any] = []
        self.histories: list[dict[str, list[float]]] = []
        self._depth = 0  # a fit called from inside a fit is the same training
        self._original_fit = keras.Model.fit

    def __enter__(self) -> _FitRecorder:
        recorder, original_fit = self, self._original_fit

        def fit(model: Any, *args: Any, **kwargs: Any) -> Any:
            recorder._depth += 1
            try:
                history = original_fit(model, *args, **kwargs)
            finally:
                recorder._depth -= 1
            if recorder._depth == 0:
                recorder.fitted.append(model)
                recorder.histories.append({key: [float(v) for v in values]
                                           for key, values in getattr(history, "history", {}).items()})
            return history

        self.keras.Model.fit = fit
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.keras.Model.fit = self._original_fit


def _run_script(script: str, shell: Shell) -> dict[str, Any]:
    import runpy

    sys.argv = [script]
    sys.path.insert(0, str(Path(script).parent))
    # (a notebook exported as a script calls `get_ipython()` for its magics: ipython_shell.py)
    return runpy.run_path(script, init_globals={"get_ipython": shell}, run_name="__main__")


def _losses(histories: list[dict[str, list[float]]]) -> dict[str, list[float]]:
    """Every loss series of every fit, named `loss` (one fit) or `fit<i>:loss` (several)."""
    losses = {}
    for i, history in enumerate(histories):
        for key, values in history.items():
            if "loss" in key:
                losses[key if len(histories) == 1 else f"fit{i + 1}:{key}"] = values
    return losses


def _record_trained_model(model: Any, result: dict[str, Any], arrays: dict[str, Any]) -> None:
    """The last trained model's replica count, and its template's weights and sensitive layers."""
    import numpy as np

    template = _template_of(model)
    strategy = getattr(model, "distribute_strategy", None)
    result["replicas"] = int(getattr(strategy, "num_replicas_in_sync", 1) or 1)
    variables = list(template.weights)
    result["weight_names"] = [getattr(v, "path", None) or v.name for v in variables]
    result["trainable"] = [bool(v.trainable) for v in variables]
    for i, v in enumerate(variables):
        arrays[f"w{i}"] = np.asarray(v.numpy())
    result["split_sensitive"] = sorted(_split_sensitive(template))


def _record_predictions(keras: Any, before: set[str], result: dict[str, Any], arrays: dict[str, Any]) -> None:
    """The `predictions.npy` the script wrote, and every model file it saved, reloaded and run on
    its `x_test.npy`."""
    import numpy as np

    x_test = Path("x_test.npy")
    x = np.load(x_test) if x_test.exists() else None
    if Path("predictions.npy").exists():
        arrays["p:predictions.npy"] = np.load("predictions.npy")
        result["predictions"].append("predictions.npy")
    new_files = sorted(p for p in Path.cwd().iterdir() if p.name not in before)
    for path in new_files:
        if path.suffix not in (".h5", ".keras") or path.name.endswith(".weights.h5"):
            continue
        try:
            loaded = keras.models.load_model(str(path), compile=False)
        except Exception as error:  # weights-only files and the like
            result["notes"].append(f"{path.name}: not a loadable model ({type(error).__name__})")
            continue
        if x is None:
            continue
        y = loaded.predict(x, verbose=0)
        for j, part in enumerate(y if isinstance(y, (list, tuple)) else [y]):
            key = f"{path.name}" + (f"[{j}]" if isinstance(y, (list, tuple)) else "")
            arrays["p:" + key] = np.asarray(part)
            result["predictions"].append(key)


def _identity(model: Any, *args: Any, **kwargs: Any) -> Any:
    """The single-device reference: `multi_gpu_model` returns the template itself.

    A `ModelMGPU(Model)` wrapper copies the result's `__dict__` into a half-built instance;
    make that instance a model of the template's class so that it can train.
    """
    caller = sys._getframe(1)
    instance = caller.f_locals.get("self")
    # (a trainer class of the script's own, `self.parallel = multi_gpu_model(self.model, 2)`, is no
    # wrapper: only a subclass of Keras's `Model` is)
    if instance is None or instance is model or _keras_model_class(type(instance)) is None:
        return model
    # A functional model over the template's own layers (weights shared, live), whose
    # `__dict__` the wrapper copies; the instance becomes a model of that class too.
    functional = _keras_model_class(type(model))
    wrapper = functional(model.inputs, model.outputs) if functional and hasattr(model, "inputs") else model
    cls = type(instance)
    if not isinstance(instance, type(wrapper)):
        instance.__class__ = type(cls.__name__, (cls, type(wrapper)), {"__module__": cls.__module__})
    wrapper.__dict__["_verify_template"] = model
    return wrapper


def _keras_model_class(cls: type) -> Any:
    """Keras's own `Model` among the bases of `cls` (a `Sequential` template's too), or None."""
    return next((c for c in cls.__mro__ if c.__name__ == "Model"
                 and c.__module__.split(".")[0] in ("keras", "tf_keras", "tensorflow")), None)


def _original_algorithm(reference: str, default_gpus: int) -> Any:
    """`multi_gpu_model` as the ORIGINAL Lambda-slicing algorithm, from its re-implementation."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_make_legacy_models", Path(reference))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def multi_gpu_model(model: Any, gpus: Any = None, cpu_merge: bool = True, cpu_relocation: bool = False,
                        *, output_naming: str | None = None) -> Any:
        # devices are not part of the re-implementation; it names outputs as the original did
        # (the shim's legacy modules pass the naming of their import path)
        del cpu_merge, cpu_relocation, output_naming
        count = len(gpus) if isinstance(gpus, (list, tuple)) else int(gpus or default_gpus)
        parallel = module._multi_gpu_model(model, count)
        parallel.__dict__["_verify_template"] = model
        return parallel

    return multi_gpu_model


def _template_of(model: Any) -> Any:
    for name in ("_verify_template", "_compat_template", "_smodel"):
        found = model.__dict__.get(name)
        if found is not None and found is not model:
            return found
    return model


def _split_sensitive(model: Any) -> set[str]:
    found: set[str] = set()
    seen: set[int] = set()

    def walk(layer: Any) -> None:
        if id(layer) in seen:
            return
        seen.add(id(layer))
        for klass in type(layer).__mro__:
            if klass.__name__ in SPLIT_SENSITIVE:
                found.add("BatchNormalization" if "Batch" in klass.__name__ else "Dropout")
        for sub in getattr(layer, "layers", []) or []:
            walk(sub)

    walk(model)
    return found


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "_child":
        sys.exit("multi_gpu_codemod.verify.child is the child process of `multi-gpu-codemod verify`; "
                 "run `multi-gpu-codemod verify SCRIPT` instead.")
    run(json.loads(sys.argv[2]))
