"""Which Keras serves the user: Keras 3 (`keras`) or Keras 2 (`tf_keras`)."""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any


def uses_legacy_keras() -> bool:
    """True when `TF_USE_LEGACY_KERAS` routes `tf.keras` to tf_keras (TensorFlow's own test)."""
    return os.environ.get("TF_USE_LEGACY_KERAS") in ("true", "True", "1")


def keras_module() -> ModuleType:
    """The Keras package `tf.keras` resolves to in this process."""
    if uses_legacy_keras():
        import tf_keras

        return tf_keras
    import keras

    return keras


def is_tf_keras_model(model: Any) -> bool:
    """True for models built with tf_keras, whatever the environment says."""
    return any(cls.__module__.startswith("tf_keras") for cls in type(model).__mro__)
