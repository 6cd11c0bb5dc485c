"""Keras's removed `multi_gpu_model`, served by `tf.distribute.MirroredStrategy`.

Installed as `multi_gpu_compat` (the repository keeps it in `compat/`), so that a
user's own `compat` module can neither replace nor disable it.

`import multi_gpu_compat` is cheap: nothing here imports TensorFlow or Keras until a
public function is first used, and importing it changes neither. Where the start-up hook did
not run (`python -S`, `pip install --target` on PYTHONPATH), `multi_gpu_compat.activate()`
serves the legacy imports; until then a legacy import fails with a sentence saying so.
"""

from __future__ import annotations

if __name__ != "multi_gpu_compat":  # imported as the repository folder, beside the installed package
    raise ImportError(
        f"{__name__!r} here is the repository folder of multi-gpu-compat; the package is installed "
        "as `multi_gpu_compat` (command: `multi-gpu-compat`). Install the project (`pip install -e .`) and "
        "import `multi_gpu_compat`."
    )

import importlib
TYPE_CHECKING = False  # not `from typing import`: typing costs ~10 ms at start-up

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "activate",
    "multi_gpu_model",
    "simulate_gpus",
    "load_legacy_model",
    "load_legacy_weights",
    "MultiGPUCompatWarning",
]

# Public name -> module that defines it, imported on first attribute access
# (PEP 562) so that importing the package never pulls in TensorFlow.
_LAZY = {
    "activate": ".import_hook",
    "multi_gpu_model": ".multi_gpu",
    "simulate_gpus": ".simulation",
    "load_legacy_model": ".legacy_models",
    "load_legacy_weights": ".legacy_models",
    "MultiGPUCompatWarning": ".notices",
}


# Changes nothing in TensorFlow or Keras: only a legacy import that would fail anyway says why.
importlib.import_module("._explainer", __name__).explain_when_inactive()


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
