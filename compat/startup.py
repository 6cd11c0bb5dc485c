"""What the shim sets up in a process, and when: the one start-up routine.

No module of the shim changes TensorFlow or Keras by being imported; everything it changes
in them is done here, by `run`, which is called

- by the import hook (`import_hook`), right after `tensorflow` is first imported, before the
  script can build a model or run an op (so simulated devices and multi-worker training can
  still configure TensorFlow);
- at the top of `multi_gpu_model`, where the hook may not have run (`python -S` with
  `multi_gpu_compat.activate()`, or the hook switched off).

Each step is idempotent, so calling `run` again costs a few environment reads and attribute
look-ups:

1. Simulated GPUs from `MULTI_GPU_COMPAT_SIMULATE_GPUS` (unless `MULTI_GPU_COMPAT_DISABLE`
   switches the shim off). A value that cannot take effect (not a number, or TensorFlow
   already initialised its devices) is not an error here: `simulation` warns, saying why.
2. TensorFlow's private internals (`_internals`, those found without a live object: all are
   multi-worker training's): one that this TensorFlow lacks gives one warning per process
   naming them and the fix, never an error here; multi-worker training then raises
   `UnsupportedVersionError` when `multi_gpu_model` is called.
3. Multi-worker early creation when `TF_CONFIG` / `MULTI_GPU_COMPAT_STRATEGY` ask for it (and
   step 2 found its internals): MultiWorkerMirroredStrategy must configure TensorFlow before
   its context is initialised.
4. The version check for the stack in use (`_stack`: Keras 3, tf_keras or the built-in
   Keras 2): an untested TensorFlow or Keras warns once per process.

`run(backend=...)`, called by `multi_gpu_model` before it distributes a model, adds the step
for that model's Keras, which imports it (the hook must not: plain TensorFlow scripts would
pay for it):

5. Keras 3 (`"keras3"`): says what to install if Keras is missing, checks that every private
   Keras 3 internal the shim uses resolves (`_internals`), and applies the Keras 3 fixes that
   are global (Keras 3.3-3.7's optimizer step, which must average the replicas' gradients on
   shim-served strategies).
   Keras 2 (`"keras2"`: tf_keras, or the built-in Keras 2): checks its private internals.
"""

from __future__ import annotations

import sys
import threading

from . import _settings

_lock = threading.RLock()  # two threads starting at once set up once


def run(*, backend: str | None = None) -> None:
    """Runs the start-up steps (see the module's docstring); safe to call again, from any thread.

    Args:
        backend: "keras3" or "keras2" before a model of that Keras is distributed; None at
            TensorFlow's import and at the top of `multi_gpu_model`.
    """
    with _lock:
        _simulated_devices()
        if _tensorflow_internals_resolve():
            _multi_worker_early_creation()
        _version_check()
        if backend == "keras3":
            _keras3_setup()
        elif backend == "keras2":
            _keras2_setup()


def _simulated_devices() -> None:
    if _settings.disabled() or not _settings.simulate_gpus():
        return
    from . import simulation

    try:
        simulation.simulate_from_environment()
    except (ValueError, RuntimeError):
        simulation.warn_if_environment_ignored()  # says why, once per value


def _tensorflow_internals_resolve() -> bool:
    """False (after warning once, naming them) when this TensorFlow lacks a private internal."""
    if "tensorflow" not in sys.modules:  # checked once TensorFlow is imported, never importing it
        return True
    from . import _internals, _stack, _support
    from .notices import notify_once

    lacking = _internals.missing(_internals.TENSORFLOW)
    if lacking:
        message = _support.missing_internals_warning(_stack.backend(), lacking, "multi-worker training")
        notify_once("internals:tensorflow", message, stacklevel=4)
    return not lacking


def _multi_worker_early_creation() -> None:
    from . import multi_worker

    multi_worker.install_early_creation()


def _version_check() -> None:
    from . import _support

    _support.warn_if_untested()


def _keras3_setup() -> None:
    from . import _stack, _support

    _support.check(_stack.KERAS3)  # before importing Keras: a missing one says what to install
    from . import _keras3_internals

    _keras3_internals.check_required()
    _keras3_internals.install_fixes()


def _keras2_setup() -> None:
    from . import _internals

    _internals.check(_internals.KERAS2)
