"""Which Keras serves the user: Keras 3 (`keras`) or Keras 2 (`tf_keras`, or the `keras`
package of TensorFlow 2.12-2.15, the code base tf_keras forked from)."""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from types import ModuleType
from typing import Any

MISSING_TENSORFLOW = (
    "multi-gpu-compat's runtime shim needs TensorFlow, which is not installed in this "
    "environment ({python}). Install the TensorFlow your scripts use (e.g. "
    "`pip install tensorflow-cpu`), or, starting from nothing, "
    "`pip install 'multi-gpu-compat[cpu]'` (`[gpu]` for NVIDIA GPUs; add "
    "`pip install --no-deps tf-keras` for TF_USE_LEGACY_KERAS=1). The codemod "
    "(`multi-gpu-codemod`) needs no TensorFlow."
)


def require_tensorflow() -> None:
    """Raises a clear error (what to install) when TensorFlow is missing."""
    if importlib.util.find_spec("tensorflow") is None:
        raise ModuleNotFoundError(
            MISSING_TENSORFLOW.format(python=sys.executable), name="tensorflow"
        )


def uses_legacy_keras() -> bool:
    """True when `TF_USE_LEGACY_KERAS` routes `tf.keras` to tf_keras (TensorFlow's own test)."""
    return os.environ.get("TF_USE_LEGACY_KERAS") in ("true", "True", "1")


@functools.lru_cache(maxsize=None)
def keras_major_version() -> int:
    """The major version of the installed `keras` package (2 on TF 2.12-2.15, else 3)."""
    from importlib import metadata

    try:
        version = metadata.version("keras")
    except metadata.PackageNotFoundError:
        import keras  # a source build without metadata

        version = keras.__version__
    return int(version.split(".")[0])


def uses_keras2() -> bool:
    """True when `tf.keras` is a Keras 2: tf_keras, or the `keras` of TF 2.12-2.15."""
    return uses_legacy_keras() or keras_major_version() < 3


def keras2_package_name() -> str:
    """The Keras 2 package in this environment: `tf_keras`, or `keras` when it is Keras 2."""
    if uses_legacy_keras() or keras_major_version() >= 3:
        return "tf_keras"
    return "keras"


def keras_module() -> ModuleType:
    """The Keras package `tf.keras` resolves to in this process."""
    require_tensorflow()
    if uses_legacy_keras():
        import tf_keras

        return tf_keras
    import keras

    return keras


def is_keras2_model(model: Any) -> bool:
    """True for models built with a Keras 2 (tf_keras, or `keras` 2.12-2.15)."""
    for cls in type(model).__mro__:
        package = cls.__module__.split(".")[0]
        if package == "tf_keras" or (package == "keras" and keras_major_version() < 3):
            return True
    return False

