"""The Keras the user's code gets, as modules and models: Keras 3 (`keras`) or Keras 2
(`tf_keras`, or the `keras` package of TensorFlow 2.12-2.15, the code base tf_keras forked
from). Which one serves is `_stack`'s answer."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType
from typing import Any

from . import _stack

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


def uses_keras2() -> bool:
    """True when `tf.keras` is a Keras 2: tf_keras, or the `keras` of TF 2.12-2.15."""
    return _stack.backend() in (_stack.TF_KERAS, _stack.KERAS2)


def keras2_package_name() -> str:
    """The Keras 2 package in this environment: `tf_keras`, or `keras` when it is Keras 2."""
    return "keras" if _stack.backend() == _stack.KERAS2 else "tf_keras"


def keras_module() -> ModuleType:
    """The Keras package `tf.keras` resolves to in this process."""
    require_tensorflow()
    if _stack.backend() == _stack.TF_KERAS:
        import tf_keras

        return tf_keras
    import keras

    return keras


def is_keras2_model(model: Any) -> bool:
    """True for models built with a Keras 2 (tf_keras, or `keras` 2.12-2.15)."""
    keras_is_2 = not _stack.keras3_installed()
    for cls in type(model).__mro__:
        package = cls.__module__.split(".")[0]
        if package == "tf_keras" or (package == "keras" and keras_is_2):
            return True
    return False

