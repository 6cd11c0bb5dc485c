"""Keras's removed `multi_gpu_model`, served by `tf.distribute.MirroredStrategy`.

`import compat` is cheap: nothing here imports TensorFlow or Keras until a
public function is first used.
"""

from __future__ import annotations

import importlib
TYPE_CHECKING = False  # not `from typing import`: typing costs ~10 ms at start-up

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "multi_gpu_model",
    "simulate_gpus",
    "load_legacy_model",
    "load_legacy_weights",
    "MultiGPUCompatWarning",
]

# Public name -> module that defines it, imported on first attribute access
# (PEP 562) so that `import compat` never pulls in TensorFlow.
_LAZY = {
    "multi_gpu_model": "compat.multi_gpu",
    "simulate_gpus": "compat.simulation",
    "load_legacy_model": "compat.legacy_models",
    "load_legacy_weights": "compat.legacy_models",
    "MultiGPUCompatWarning": "compat.notices",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'compat' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
