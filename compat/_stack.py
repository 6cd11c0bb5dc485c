"""Which Keras serves legacy code in this process, and which versions are installed.

The one answer the backends, the version check (`_support`), the multi-worker fixes and
`multi-gpu-compat doctor` read:

- `tf_keras` when `TF_USE_LEGACY_KERAS` routes `tf.keras` to it;
- `keras2`, the built-in Keras 2 of TensorFlow 2.12-2.15 (the `keras` package, 2.x);
- `keras3` otherwise (TensorFlow 2.16+ with Keras 3).

Versions come from the imported module's `__version__` when there is one (so that what runs
is what is judged), else from package metadata; they are parsed with `packaging.version`
(a TensorFlow dependency). Nothing here imports TensorFlow or Keras.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from importlib import metadata

from . import _settings

KERAS3 = "keras3"
TF_KERAS = "tf_keras"
KERAS2 = "keras2"

Version = tuple[int, ...]

# Distributions that install the `tensorflow` package, most common first.
_TENSORFLOW_DISTRIBUTIONS = (
    "tensorflow",
    "tensorflow-cpu",
    "tensorflow-gpu",
    "tensorflow-intel",
    "tensorflow-macos",
    "tf-nightly",
    "tf-nightly-cpu",
)
_LEADING_RELEASE = re.compile(r"\d+(\.\d+)*")


def parse_version(text: str) -> Version:
    """The release numbers: '2.16.0rc0' -> (2, 16, 0); () when the text starts with none."""
    from packaging.version import InvalidVersion
    from packaging.version import Version as _Version

    try:
        return tuple(_Version(text).release)
    except InvalidVersion:  # e.g. a local build's "2.16.0-custom": its leading release
        leading = _LEADING_RELEASE.match(text)
        return tuple(_Version(leading.group()).release) if leading else ()


def _module_version(name: str) -> str | None:
    version = getattr(sys.modules.get(name), "__version__", None)
    return version if isinstance(version, str) else None


def _distribution_version(*names: str) -> str | None:
    for name in names:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def tensorflow_version() -> str | None:
    """The TensorFlow version, or None when it is not installed."""
    return _module_version("tensorflow") or _distribution_version(*_TENSORFLOW_DISTRIBUTIONS)


def keras_version() -> str | None:
    """The version of the `keras` package (Keras 3, or Keras 2 on TF 2.12-2.15), or None."""
    return _module_version("keras") or _distribution_version("keras", "keras-nightly")


def tf_keras_version() -> str | None:
    """The tf_keras version, or None when it is not installed."""
    return _module_version("tf_keras") or _distribution_version("tf-keras", "tf_keras")


def keras3_installed() -> bool:
    """True when the `keras` package is a Keras 3 (whichever Keras serves `tf.keras`)."""
    version = keras_version()
    return version is not None and parse_version(version)[:1] == (3,)


def backend() -> str:
    """The Keras that serves legacy code here: `KERAS3`, `TF_KERAS` or `KERAS2`."""
    if _settings.legacy_keras():
        return TF_KERAS
    keras = keras_version()
    if keras is not None:
        return KERAS2 if parse_version(keras)[:1] == (2,) else KERAS3
    tensorflow = tensorflow_version()
    if tensorflow is not None and (2, 0) <= parse_version(tensorflow)[:2] <= (2, 15):
        return KERAS2  # Keras 2 ships inside these TensorFlows: no `keras` metadata in odd builds
    return KERAS3


def package_version(name: str) -> str | None:
    """The version of the package that serves `name`'s backend (Keras 2's is TensorFlow's
    when it has no metadata of its own)."""
    if name == TF_KERAS:
        return tf_keras_version()
    if name == KERAS2:
        return keras_version() or tensorflow_version()
    return keras_version()


@dataclass(frozen=True)
class Stack:
    """The stack legacy code runs on: the backend and the versions of its packages."""

    backend: str
    tensorflow: str | None
    keras: str | None  # the serving package's version: keras 3, tf_keras or the built-in Keras 2

    def describe(self) -> str:
        """How doctor names the backend."""
        if self.backend == TF_KERAS:
            return "tf_keras (TF_USE_LEGACY_KERAS=1)"
        if self.backend == KERAS2:
            return f"built-in Keras 2 of TensorFlow {self.tensorflow or '(not installed)'}"
        return "Keras 3"


def current() -> Stack:
    """The stack of this process (read afresh: cheap, and tests fake versions)."""
    name = backend()
    return Stack(name, tensorflow_version(), package_version(name))
