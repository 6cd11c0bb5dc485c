"""`multi-gpu-compat doctor`: what the shim sees in this environment, and whether it is active."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import warnings
from importlib import metadata
from types import ModuleType
from typing import Any

from . import _settings, _stack, _support, backend, import_hook, simulation


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def _serves(path: str) -> str:
    top = path.partition(".")[0]
    try:
        if importlib.util.find_spec(top) is None:
            return f"{top} not installed"
    except (ImportError, ValueError):
        return f"{top} not installed"
    try:
        module = importlib.import_module(path)
        return "ok" if callable(getattr(module, "multi_gpu_model", None)) else "missing"
    except Exception as err:  # report, never crash the doctor
        return f"fails: {type(err).__name__}: {err}"


def _internals_report(backend_name: str) -> list[str]:
    """Whether every private Keras / TensorFlow internal the shim uses resolves here, and the list."""
    from . import _internals

    stacks = [_internals.TENSORFLOW, _internals.KERAS3 if backend_name == _stack.KERAS3 else _internals.KERAS2]
    missing: list[str] = []
    listed: list[str] = []
    try:
        with warnings.catch_warnings():  # the support line already says "untested"
            warnings.simplefilter("ignore")
            for stack in stacks:
                missing += _internals.missing(stack)
                listed += [f"  {_internal_line(_internals, i)}" for i in _internals.for_stack(stack)]
    except Exception as err:  # report, never crash the doctor
        return [f"private internals: fail: {err}"]
    summary = "missing " + ", ".join(missing) if missing else "all resolve"
    return [f"private internals: {summary}", *listed]


def _internal_line(registry: ModuleType, internal: Any) -> str:
    if internal.live:
        return f"{internal}: on live {internal.live} objects (checked by the tests)"
    try:
        found = registry.resolve(internal)
    except (ImportError, AttributeError):
        found = None
    state = "ok" if found is not None else ("absent (optional)" if internal.optional else "MISSING")
    return f"{internal}: {state}"


_USAGE = "usage: multi-gpu-compat doctor"


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        print(f"{_USAGE}\n\nReport backend, support status, devices and the import hook's state.")
        return 0
    if argv:
        print(f"{_USAGE}\nmulti-gpu-compat doctor: error: it takes no arguments. Received: {' '.join(argv)!r}",
              file=sys.stderr)
        return 2
    try:
        backend.require_tensorflow()
    except ModuleNotFoundError as err:
        print(f"multi-gpu-compat doctor: {err}", file=sys.stderr)
        return 1
    hook_active = import_hook.is_installed()
    disabled = import_hook.disabled()
    stack = _stack.current()
    lines = [
        f"multi-gpu-compat {_version('multi-gpu-compat')} (python {sys.version.split()[0]})",
        f"backend: {stack.describe()}",
        f"tensorflow: {stack.tensorflow or 'not installed'}",
        f"keras: {_version('keras')}, tf_keras: {_version('tf-keras')}",
    ]
    status = _support.status(stack.backend)
    lines.append(f"support: {status.message}")
    if status.state != "not installed":
        lines += _internals_report(status.backend)
    try:
        from . import _devices

        simulation.simulate_from_environment()
        gpus = _devices.visible_gpu_count()
        kind = "simulated" if simulation.simulated_gpus() else "visible"
        lines.append(f"gpus: {gpus} {kind} ({', '.join(_devices.available_devices())})")
    except Exception as err:
        lines.append(f"gpus: cannot list devices: {err}")
    state = "active" if hook_active else ("disabled by " + _settings.DISABLE if disabled else (
        "not installed (this interpreter skipped the .pth start-up file: `python -S`, `pip install --target`; "
        "call `multi_gpu_compat.activate()` in the script)"))
    lines.append(f"import hook: {state}")
    if hook_active:
        lines.append("import paths served:")
        lines += [f"  from {p} import multi_gpu_model: {_serves(p)}" for p in import_hook.import_paths()]
    print("\n".join(lines))
    return 0
