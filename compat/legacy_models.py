"""Load `.h5` files saved from the parallel model that `multi_gpu_model` returned.

Such a file holds a nested graph: the template's inputs, one slicing `Lambda` per replica
and input, the template as one nested model layer, and one `Concatenate(axis=0)` per
output. Current Keras refuses the Lambdas, and `template.load_weights` fails on the layer
count. This module reads the file with h5py, finds the template in the JSON config, rebuilds
it from its own config and loads its weights from `model_weights/<template>/`. The Lambdas'
Python bytecode is never unmarshalled, let alone run.

TensorFlow and Keras are imported only inside the public functions, so that the file can be
inspected (and the `unwrap` command can reject bad files) without them.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import os
import re
import stat
import warnings
import zipfile
from typing import Any

__all__ = [
    "LegacyFileError",
    "NotMultiGPUModelError",
    "load_legacy_model",
    "load_legacy_weights",
]

_MODEL_CLASSES = ("Model", "Functional", "Sequential")
_FUNCTIONAL_CLASSES = ("Model", "Functional")
# Real Keras configs nest about 15 levels deep; far deeper, a file is corrupt or hostile
# (and would exhaust the recursion limit of every walk over the config, Keras's included).
_MAX_CONFIG_DEPTH = 200
# Errors Keras raises on a config it cannot build (besides ValueError).
_BUILD_ERRORS = (TypeError, KeyError, AttributeError, IndexError, RecursionError)


class LegacyFileError(OSError, ValueError):
    """The file is missing its HDF5 structure: not HDF5, truncated, corrupt or not Keras."""


class NotMultiGPUModelError(ValueError):
    """The file is readable but was not saved from a `multi_gpu_model` parallel model."""


@dataclasses.dataclass(frozen=True)
class _Inspection:
    """What `_inspect` learnt from a file, without TensorFlow."""

    filepath: str
    model_config: dict | None  # None for weights-only files
    replicas: tuple[int, ...]  # replica count per `multi_gpu_model` level, outermost first
    template_config: dict | None  # innermost template, as a standalone model config
    weights_group: str | None  # HDF5 path of the group holding the template's weights
    keras_version: str | None

    @property
    def is_parallel(self) -> bool:
        return bool(self.replicas)


def load_legacy_model(filepath: str | os.PathLike, *, custom_objects: dict | None = None):
    """Loads the template model from a file saved from a `multi_gpu_model` model.

    `multi_gpu_model(template, gpus)` returned a parallel model that sliced each batch
    with `Lambda` layers, ran `template` once per GPU and concatenated the results.
    `parallel.save(filepath)` (and `ModelCheckpoint` on it) wrote that whole graph to
    `filepath`. This function returns the `template` instead, with its saved weights,
    on Keras 3 and on tf_keras (`TF_USE_LEGACY_KERAS=1`). Files wrapped more than once
    (`multi_gpu_model` applied to a re-loaded parallel model) are unwrapped down to the
    innermost template. A file that holds a plain model returns that model, built the
    same way and with `model.load_weights(filepath)` (this also loads Keras 2 files with
    nested Sequential models, which Keras 3's `load_model` rejects).

    The Python bytecode that Keras stored for each `Lambda` layer is never deserialized
    or executed. If the template itself contains `Lambda` layers, loading is refused:
    re-create the template in code and use `load_legacy_weights()`.

    Example:

    ```python
    model = multi_gpu_compat.load_legacy_model("checkpoint_multi_gpu.h5")
    model.save("model.keras")
    ```

    Args:
        filepath: Path to a legacy `.h5` model file (Keras 2.2+ or tf.keras).
        custom_objects: Optional dictionary mapping names (strings) to custom classes
            or functions used by the template, as in `keras.models.load_model`.

    Returns:
        An uncompiled Keras model: the template for a multi-GPU file, the model itself
        for a plain file. The saved optimizer state belonged to the parallel model and
        is not restored; compile the model again.

    Raises:
        FileNotFoundError: if `filepath` does not exist.
        LegacyFileError: if `filepath` is not a readable Keras HDF5 file (not HDF5,
            truncated, corrupt, not a regular file, or a config nested absurdly deep).
            Subclass of both `OSError` and `ValueError`.
        ValueError: if the file holds weights only, if the template contains `Lambda`
            layers, if Keras cannot build the model from its config, or if the saved
            weights do not fit the template (checked before any weight is read).
    """
    info = _inspect(filepath)
    if info.model_config is None:
        raise ValueError(
            f"The file at filepath={info.filepath} holds weights only (it was written by "
            "`save_weights`), so there is no model to load. Build the template model in "
            "code and call `multi_gpu_compat.load_legacy_weights(template, filepath)`."
        )
    if info.template_config is None:  # a plain model, not a `multi_gpu_model` graph
        _refuse_lambdas(info.model_config, info.filepath, what="The model")
        model = _build_model(info.model_config, custom_objects, info.filepath)
        _check_declared_sizes(model, info.filepath)
        model.load_weights(info.filepath)
        return model
    _refuse_lambdas(info.template_config, info.filepath, what="The template model")
    model = _build_model(info.template_config, custom_objects, info.filepath)
    _load_template_weights(model, info)
    return model


def load_legacy_weights(template, filepath: str | os.PathLike) -> None:
    """Loads weights saved from a `multi_gpu_model` model into its template.

    `parallel.save_weights(filepath)` stored the template's weights inside the group of
    the template layer, so `template.load_weights(filepath)` fails with a layer count
    mismatch. This function loads them into `template` (a model you re-created in code,
    with the same architecture as the template passed to `multi_gpu_model`; layer names
    may differ). It accepts weights-only files and full model files, wrapped by
    `multi_gpu_model` once or several times. A plain (non-parallel) file is loaded with
    `template.load_weights(filepath)`.

    Weights are matched by position in the order Keras 2 saved them (all trainable
    weights, then all non-trainable ones), as `load_weights` did, and every shape is
    checked before anything is assigned.

    Example:

    ```python
    template = build_model()  # the model you passed to `multi_gpu_model`
    multi_gpu_compat.load_legacy_weights(template, "weights_multi_gpu.h5")
    ```

    Args:
        template: A built Keras model with the template's architecture.
        filepath: Path to a legacy `.h5` weights or model file.

    Raises:
        FileNotFoundError: if `filepath` does not exist.
        LegacyFileError: if `filepath` is not a readable Keras HDF5 file.
        ValueError: if the saved weights do not fit `template` (count or shapes).
    """
    info = _inspect(filepath)
    if info.weights_group is None or (
        info.model_config is not None and not info.is_parallel
    ):
        _check_declared_sizes(template, info.filepath)
        template.load_weights(info.filepath)
        return
    _load_template_weights(template, info)


# --- reading the file (h5py and json only) -------------------------------------------


def _inspect(filepath: str | os.PathLike) -> _Inspection:
    """Reads the structure of a legacy file. Imports neither TensorFlow nor Keras."""
    from .backend import require_tensorflow

    require_tensorflow()  # h5py comes with it
    import h5py

    path = _check_path(filepath)
    try:
        with h5py.File(path, "r") as f:
            _refuse_outside_data(f, path)
            keras_version = _attr_string(f, "keras_version")
            if "model_config" not in f.attrs:
                return _inspect_weights_only(f, path, keras_version)
            model_config = _parse_config(f.attrs["model_config"], path)
    except LegacyFileError:
        raise
    except (OSError, KeyError) as e:
        raise _unreadable(path, e) from None
    replicas, template_config, template_name = _unwrap_config(model_config)
    return _Inspection(
        filepath=path,
        model_config=model_config,
        replicas=replicas,
        template_config=template_config,
        weights_group=None if template_name is None else f"model_weights/{template_name}",
        keras_version=keras_version,
    )


def _refuse_outside_data(f: Any, path: str) -> None:
    """Refuses a file whose data would be read from elsewhere (external storage, virtual
    datasets, links to other files): h5py follows them silently, so a hostile file could copy
    any readable local file into the weights, or give all-zero weights when a source is missing."""
    import h5py

    def outside(name: str, what: str) -> LegacyFileError:
        return LegacyFileError(
            f"The file at filepath={path} stores '{name}' as {what}, so its data would be read from "
            "outside the file; such files are refused (Keras never writes them): re-save the model "
            "from a trusted copy."
        )

    def check_links(group: Any, prefix: str) -> None:
        for name in group:  # listing names follows no link
            try:
                link = group.get(name, getlink=True)
            except Exception:  # noqa: BLE001 - a link kind h5py cannot describe: not one Keras writes
                link = None
            if not isinstance(link, (h5py.HardLink, h5py.SoftLink)):
                raise outside(prefix + name, "a link to another file")

    def visit(name: str, obj: Any) -> None:  # objects reached by hard links, each once
        if isinstance(obj, h5py.Group):
            check_links(obj, f"{name}/")
        elif isinstance(obj, h5py.Dataset):
            if obj.is_virtual:
                raise outside(name, "a virtual dataset (data mapped from other files)")
            if obj.external:
                raise outside(name, f"external storage (data kept in {obj.external[0][0]!r})")

    check_links(f, "")
    f.visititems(visit)


def _check_path(filepath: str | os.PathLike) -> str:
    import h5py

    path = os.fspath(filepath)
    if not os.path.exists(path):
        raise FileNotFoundError(f"File not found: filepath={path}. Please check the path.")
    if os.path.isdir(path):
        raise LegacyFileError(
            f"filepath={path} is a directory (a SavedModel?), not a legacy `.h5` file."
        )
    # A FIFO blocks on open and a device such as /dev/zero never ends: read only files.
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise LegacyFileError(
            f"filepath={path} is not a regular file (a pipe, socket or device). Pass the "
            "path of the `.h5` file itself."
        )
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            is_keras = "config.json" in archive.namelist()
        if is_keras:
            raise LegacyFileError(
                f"The file at filepath={path} is a Keras 3 `.keras` archive, not a legacy "
                "HDF5 file: it needs no rescue. Load it with `keras.saving.load_model`."
            )
        raise LegacyFileError(f"The file at filepath={path} is a ZIP archive, not an HDF5 file.")
    if not h5py.is_hdf5(path):
        raise LegacyFileError(
            f"The file at filepath={path} is not an HDF5 file (it is empty, damaged at "
            "the start, or another format). Legacy multi-GPU models were saved as `.h5`; "
            "copy the file again from its source."
        )
    return path


def _unreadable(path: str, error: Exception) -> LegacyFileError:
    return LegacyFileError(
        f"The file at filepath={path} could not be read as HDF5: it is truncated or "
        f"corrupt ({' '.join(str(error).split())}). Copy the file again from its source."
    )


def _too_deep(path: str) -> LegacyFileError:
    return LegacyFileError(
        f"The `model_config` attribute of the file at filepath={path} is nested more than "
        f"{_MAX_CONFIG_DEPTH} levels deep, far beyond any Keras model: the file is corrupt "
        "or not a Keras model. Copy it again from its source."
    )


def _config_depth(config: Any) -> int:
    """How deeply `config` nests lists and dicts; iterative, so any depth is measured."""
    deepest, stack = 0, [(config, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            value = list(value.values())
        if isinstance(value, list):
            deepest = max(deepest, depth)
            stack.extend((item, depth + 1) for item in value)
    return deepest


def _parse_config(raw: Any, path: str) -> dict:
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
        config = json.loads(text)
    except RecursionError:
        raise _too_deep(path) from None
    except (UnicodeDecodeError, ValueError) as e:
        raise LegacyFileError(
            f"The `model_config` attribute of the file at filepath={path} is not valid "
            f"JSON ({e}): the file is corrupt. Copy it again from its source."
        ) from None
    if _config_depth(config) > _MAX_CONFIG_DEPTH:
        raise _too_deep(path)
    if not isinstance(config, dict) or "config" not in config:
        raise LegacyFileError(
            f"The `model_config` attribute of the file at filepath={path} is not a Keras "
            "model config: the file is corrupt or was not written by Keras."
        )
    return config


def _inspect_weights_only(f, path: str, keras_version: str | None) -> _Inspection:
    """A `save_weights` file: layer groups at the root, no config to read structure from."""
    if "layer_names" not in f.attrs and "layer_names0" not in f.attrs:
        raise LegacyFileError(
            f"The file at filepath={path} is HDF5 but holds no Keras model or weights "
            "(no `model_config` or `layer_names` attribute)."
        )
    weighted = [n for n in _attr_strings(f, "layer_names") if _attr_strings(f[n], "weight_names")]
    # A parallel model has exactly one layer with weights: the template. Anything else is
    # a plain weights file, which `load_weights` handles itself.
    group = weighted[0] if len(weighted) == 1 else None
    return _Inspection(path, None, (), None, group, keras_version)


def _attr_strings(obj, name: str) -> list[str]:
    """Reads a string-list attribute, including Keras's chunked `name0`, `name1`, ..."""
    if name in obj.attrs:
        values = list(obj.attrs[name])
    else:
        values, chunk = [], 0
        while f"{name}{chunk}" in obj.attrs:
            values.extend(obj.attrs[f"{name}{chunk}"])
            chunk += 1
    return [v.decode("utf8") if isinstance(v, bytes) else str(v) for v in values]


def _attr_string(obj, name: str) -> str | None:
    value = obj.attrs.get(name)
    return value.decode("utf8") if isinstance(value, bytes) else value


def _unwrap_config(model_config: dict) -> tuple[tuple[int, ...], dict | None, str | None]:
    """Peels `multi_gpu_model` levels: (replicas per level, template config, group name)."""
    replicas: list[int] = []
    config, group = model_config, None
    while (match := _match_parallel(config)) is not None:
        entry, gpus = match
        replicas.append(gpus)
        group = group or entry["name"]  # weights live in the outermost template's group
        config = {"class_name": entry["class_name"], "config": entry["config"]}
        if isinstance(config["config"], list):  # Keras 2.2.0-2.2.4 Sequential
            config["config"] = {"name": entry["name"], "layers": config["config"]}
    if not replicas:
        return (), None, None
    return tuple(replicas), config, group


def _match_parallel(config: dict) -> tuple[dict, int] | None:
    """The template layer entry and replica count if `config` is a `multi_gpu_model` graph.

    The original built exactly: input layers, `len(inputs) * gpus` Lambdas with
    `arguments={'i': i, 'parts': gpus}`, one nested model, one Concatenate(axis=0) per
    output. Only the config's structure is read; Lambda functions are never looked at.
    """
    inner = config.get("config")
    if config.get("class_name") not in _FUNCTIONAL_CLASSES or not isinstance(inner, dict):
        return None
    by_class: dict[str, list[dict]] = {}
    for layer in inner.get("layers") or []:
        by_class.setdefault(layer.get("class_name"), []).append(layer)
    templates = [layer for c in _MODEL_CLASSES for layer in by_class.get(c, [])]
    slices, merges = by_class.get("Lambda", []), by_class.get("Concatenate", [])
    expected = {"InputLayer", "Lambda", "Concatenate", *_MODEL_CLASSES}
    if len(templates) != 1 or not slices or not merges or set(by_class) - expected:
        return None
    arguments = [layer.get("config", {}).get("arguments") or {} for layer in slices]
    parts = {a.get("parts") for a in arguments}
    if any(set(a) != {"i", "parts"} for a in arguments) or len(parts) != 1:
        return None
    (gpus,) = parts
    inputs = len(inner.get("input_layers") or [])
    if not isinstance(gpus, int) or gpus < 2 or len(slices) != gpus * inputs:
        return None
    if any(layer.get("config", {}).get("axis") != 0 for layer in merges):
        return None
    if len(merges) != len(inner.get("output_layers") or []):
        return None
    return templates[0], gpus


def _declared_weights(info: _Inspection) -> list[tuple[str, tuple[int, ...]]]:
    """(name, shape) of each template weight in the file, without reading any values."""
    import h5py

    try:
        with h5py.File(info.filepath, "r") as f:
            group = f[info.weights_group]
            declared = []
            for name in _attr_strings(group, "weight_names"):
                dataset = group[name]
                if not isinstance(dataset, h5py.Dataset) or dataset.shape is None:
                    raise KeyError(f"weight {name!r} is not an array")
                declared.append((name, tuple(dataset.shape)))
            return declared
    except (OSError, KeyError) as e:
        raise _unreadable(info.filepath, e) from None


def _read_weights(info: _Inspection) -> list[tuple[str, Any]]:
    import h5py

    try:
        with h5py.File(info.filepath, "r") as f:
            group = f[info.weights_group]
            return [(name, group[name][()]) for name in _attr_strings(group, "weight_names")]
    except (OSError, KeyError) as e:
        raise _unreadable(info.filepath, e) from None


def _check_declared_sizes(model, path: str) -> None:
    """Before Keras's own `load_weights` reads a file: no array larger than the whole model.

    Keras reads every saved array before comparing shapes, so a file declaring a
    10**12-element weight would allocate terabytes first. (Larger than any one weight
    would be too strict: Keras converts some saved layouts, e.g. CuDNN biases.)
    """
    import h5py

    if not model.weights:
        return  # Keras's own `load_weights` explains how to build the model first
    total = sum(_size(tuple(v.shape)) for v in model.weights)
    found: list[tuple[str, tuple[int, ...]]] = []

    def visit(name: str, obj: Any) -> None:
        if isinstance(obj, h5py.Dataset) and obj.shape is not None:
            if not found and _size(obj.shape) > total:
                found.append((name, tuple(obj.shape)))

    try:
        with h5py.File(path, "r") as f:
            (f["model_weights"] if "model_weights" in f else f).visititems(visit)
    except (OSError, KeyError) as e:
        raise _unreadable(path, e) from None
    if found:
        name, shape = found[0]
        raise ValueError(
            f"The file at filepath={path} declares weight '{name}' with shape {shape} "
            f"({_size(shape)} values), more than the whole model '{model.name}' holds "
            f"({total} values): the file is corrupt or belongs to another model."
        )


def _size(shape: tuple[int, ...]) -> int:
    size = 1
    for dim in shape:
        size *= int(dim)
    return size


# --- building the template (TensorFlow from here on) ---------------------------------


def _keras():
    from .backend import keras_module

    return keras_module()


def _lambda_names(config: Any) -> list[str]:
    if isinstance(config, list):
        return [n for item in config for n in _lambda_names(item)]
    if not isinstance(config, dict):
        return []
    found = []
    if config.get("class_name") == "Lambda":
        inner = config.get("config")
        found.append(inner.get("name", "?") if isinstance(inner, dict) else "?")
    return found + [n for value in config.values() for n in _lambda_names(value)]


def _refuse_lambdas(config: dict, path: str, *, what: str) -> None:
    names = _lambda_names(config)
    if names:
        raise ValueError(
            f"{what} in the file at filepath={path} contains Lambda layers "
            f"({', '.join(names)}). Their stored Python bytecode is never executed here: "
            "it is unsafe to run and only works on the Python version that wrote it. "
            "Re-create the model in code and load its weights with "
            "`multi_gpu_compat.load_legacy_weights(model, filepath)`."
        )


def _normalize_config(config: Any, name: str | None = None) -> Any:
    """Keras 2.2.0-2.2.4 wrote a Sequential's config as a bare list; make it a dict."""
    if isinstance(config, list):
        return [_normalize_config(item) for item in config]
    if not isinstance(config, dict):
        return config
    out = {k: _normalize_config(v) for k, v in config.items()}
    if out.get("class_name") == "Sequential" and isinstance(out.get("config"), list):
        out["config"] = {"name": config.get("name", name), "layers": out["config"]}
    return out


def _dicts_bottom_up(config: Any) -> list[dict]:
    """Every dict nested in a JSON config, innermost first (edits to one don't affect the walk)."""
    found: list[dict] = []
    if isinstance(config, list):
        for item in config:
            found += _dicts_bottom_up(item)
    elif isinstance(config, dict):
        for value in config.values():
            found += _dicts_bottom_up(value)
        found.append(config)
    return found


def _reindex_nested_model_nodes(config: Any) -> Any:
    """Renumbers the calls of nested models for Keras 3, in place.

    Keras 2 gave a nested model a pre-existing node 0 (its own input-to-output graph), so
    configs number its calls from 1. A nested model that Keras 3 deserializes numbers
    them from 0; left alone, Keras 3 fails with "nodes failed to be resolved". The offset
    is the smallest node index the config uses for that layer (0 for deferred Sequentials).
    """
    for item in _dicts_bottom_up(config):
        _reindex_one(item)
    return config


def _reindex_one(config: dict) -> None:
    inner = config.get("config")
    if config.get("class_name") not in _FUNCTIONAL_CLASSES or not isinstance(inner, dict):
        return
    nested = {
        layer["name"] for layer in inner.get("layers") or [] if layer.get("class_name") in _MODEL_CLASSES
    }
    refs = [ref for ref in _node_refs(inner) if ref[0] in nested]
    for name in nested:
        offset = min((ref[1] for ref in refs if ref[0] == name), default=0)
        for ref in refs:
            if ref[0] == name:
                ref[1] -= offset


def _add_sequential_inputs(config: Any) -> Any:
    """Gives input-less Keras 2 Sequential configs an InputLayer, for Keras 3, in place.

    Keras 2.2.4 stored a Sequential's input as its first layer's `batch_input_shape`;
    Keras 3's legacy loader turns that into `input_shape` *with* the batch axis and
    builds a wrong, rank+1 model. An explicit InputLayer (what tf.keras wrote) does not.
    """
    for item in _dicts_bottom_up(config):
        _add_one_sequential_input(item)
    return config


def _add_one_sequential_input(config: dict) -> None:
    layers = (config.get("config") or {}).get("layers") if config.get("class_name") == "Sequential" else None
    if layers and layers[0].get("class_name") != "InputLayer":
        first = layers[0].get("config", {})
        shape = first.pop("batch_input_shape", None)
        if shape is not None:
            input_config = {"batch_input_shape": shape, "name": f"{first.get('name', 'sequential')}_input"}
            if "dtype" in first:
                input_config["dtype"] = first["dtype"]
            layers.insert(0, {"class_name": "InputLayer", "config": input_config})


def _node_refs(inner: dict) -> list[list]:
    """The mutable `[layer_name, node_index, tensor_index, ...]` references of a config."""
    refs = [ref for ref in inner.get("output_layers") or [] if isinstance(ref, list)]
    for layer in inner.get("layers") or []:
        for node in layer.get("inbound_nodes") or []:
            if isinstance(node, list):
                refs.extend(ref for ref in node if isinstance(ref, list) and len(ref) >= 3)
    return refs


def _build_model(config: dict, custom_objects: dict | None, path: str):
    """`_model_from_config`, with Keras's errors on a bad config as one clear ValueError."""
    try:
        return _model_from_config(config, custom_objects)
    except LegacyFileError:
        raise
    # ValueError too: Keras 3.3-3.4 reject a malformed shape with one, later releases with a TypeError.
    except (*_BUILD_ERRORS, ValueError) as e:
        raise ValueError(
            f"Keras could not build the model stored in the file at filepath={path} "
            f"({_build_error_detail(e)}). If it uses custom layers, load it in Python with "
            "`multi_gpu_compat.load_legacy_model(path, custom_objects={...})`; otherwise the file is "
            "corrupt or was written by an incompatible Keras."
        ) from None


def _build_error_detail(error: Exception) -> str:
    """The useful part of Keras's error: the layer class and the cause, not the config dump."""
    if isinstance(error, RecursionError):
        return "RecursionError: the model nests too deeply"
    text = " ".join(str(error).split())
    head, found, cause = text.partition("Exception encountered:")
    if found:
        layer = re.search(r"deserializing class '([^']+)'", head)
        text = (f"layer class {layer.group(1)}: " if layer else "") + cause.strip()
    return f"{type(error).__name__}: {text}"[:300]


def _model_from_config(config: dict, custom_objects: dict | None):
    from .backend import uses_keras2

    keras = _keras()
    config = _normalize_config(copy.deepcopy(config))
    if uses_keras2():
        # `optional` inputs came with tf_keras 2.17; Keras 2.12-2.15 and tf_keras 2.16 refuse the key.
        if "optional" not in inspect.signature(keras.layers.InputLayer.__init__).parameters:
            for inner in _dicts_bottom_up(config):
                if inner.get("class_name") == "InputLayer" and isinstance(inner.get("config"), dict):
                    inner["config"].pop("optional", None)
        return keras.models.model_from_config(config, custom_objects=custom_objects)
    # Keras 3's `model_from_json` only reads Keras 3 configs; its legacy deserializer
    # (the one `load_model` uses for `.h5` files) reads Keras 2 ones.
    config = _add_sequential_inputs(_reindex_nested_model_nodes(config))
    objects = dict(vars(keras.layers))
    objects.update(Model=keras.Model, Functional=keras.Model, Sequential=keras.Sequential)
    with warnings.catch_warnings():
        # Keras 2 configs carry `input_shape`; Keras 3 warns about it, users cannot act on it.
        warnings.filterwarnings("ignore", message=".*`input_shape`", category=UserWarning)
        return keras.legacy.saving.deserialize_keras_object(
            config,
            module_objects=objects,
            custom_objects=custom_objects or {},
            printable_module_name="layer",
        )


def _load_template_weights(model, info: _Inspection) -> None:
    """Checks the declared shapes against `model`, then reads and assigns the values."""
    _check_weights_fit(model, _declared_weights(info), info.filepath)
    _assign_weights(model, _read_weights(info), info.filepath)


def _check_weights_fit(model, declared: list[tuple[str, tuple[int, ...]]], path: str) -> None:
    """Count and shapes of the saved weights against Keras 2's order: trainable, then others."""
    targets = list(model.trainable_weights) + list(model.non_trainable_weights)
    fix = (
        "The model must have the architecture of the template passed to "
        "`multi_gpu_model` (same layers, same order, same shapes)."
    )
    if not targets:
        raise ValueError(
            f"Model '{model.name}' has no weights yet; build it (call it on an input or "
            "create it with `keras.Input`) before loading weights into it."
        )
    if len(targets) != len(declared):
        raise ValueError(
            f"The file at filepath={path} holds {len(declared)} template weights, but model "
            f"'{model.name}' has {len(targets)}. {fix}"
        )
    for index, (variable, (name, shape)) in enumerate(zip(targets, declared)):
        if tuple(variable.shape) != tuple(shape):
            label = getattr(variable, "path", None) or variable.name
            raise ValueError(
                f"Weight #{index} of model '{model.name}' ({label}, shape "
                f"{tuple(variable.shape)}) does not match saved weight '{name}' with shape "
                f"{tuple(shape)} in the file at filepath={path}. {fix}"
            )


def _assign_weights(model, saved: list[tuple[str, Any]], path: str) -> None:
    """Assigns `saved` in Keras 2's saving order: trainable weights, then the others."""
    _check_weights_fit(model, [(name, tuple(value.shape)) for name, value in saved], path)
    targets = list(model.trainable_weights) + list(model.non_trainable_weights)
    try:
        for variable, (_, value) in zip(targets, saved):
            variable.assign(value)
    except (TypeError, ValueError) as e:
        raise ValueError(
            f"The file at filepath={path} holds weights that cannot be assigned to model "
            f"'{model.name}' ({' '.join(str(e).split())[:300]}): the file is corrupt. "
            "Copy it again from its source."
        ) from None
