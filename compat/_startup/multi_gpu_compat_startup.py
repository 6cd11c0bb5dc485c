"""multi-gpu-compat's interpreter start-up: `multi_gpu_compat.pth` runs `install()`.

Installed as the top-level module `multi_gpu_compat_startup` (the repository keeps it in
compat/_startup/), not inside the `multi_gpu_compat` package, whose `__init__` every
interpreter start would then pay for. It imports only `os` and `sys`, which Python has
loaded before `site` processes .pth files, and it changes nothing by being imported.

`install()` puts one finder first on `sys.meta_path`, unless one is there already (a venv
processes the .pth files twice) or the import hook itself is:

- `_MultiGpuCompatStartup`, while the shim is on: it serves nothing; on the first import of
  tensorflow, keras or tf_keras it installs the import hook
  (`multi_gpu_compat.import_hook.install()`), removes itself and hands that import to the hook.
- `_MultiGpuCompatDisabledNotice`, when `MULTI_GPU_COMPAT_DISABLE` switches the shim off but
  `MULTI_GPU_COMPAT_SIMULATE_GPUS` is set: on the first import of tensorflow it warns that
  simulation is off too, and removes itself.

Whatever goes wrong here, an import goes on as if the shim were not installed.
"""

# No `from __future__ import annotations` (it imports `__future__`): annotations are strings.
import os
import sys

TYPE_CHECKING = False  # not `from typing import`: typing costs ~10 ms at interpreter start-up

if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

# As multi_gpu_compat._settings reads them (tests/compat/test_hostile_shim.py checks both on every
# value):
# this module cannot import the package.
DISABLE = "MULTI_GPU_COMPAT_DISABLE"
SIMULATE_GPUS = "MULTI_GPU_COMPAT_SIMULATE_GPUS"
TRUE_VALUES = ("1", "true", "yes", "on")
_TOPS = ("tensorflow", "keras", "tf_keras")
_MARK = "_multi_gpu_compat_hook"  # multi_gpu_compat._hook_state.MARK: "the hook serves here"


class _MultiGpuCompatStartup:
    """Installs the import hook on the first import of tensorflow, keras or tf_keras."""

    _multi_gpu_compat_hook = True

    @classmethod
    def find_spec(
        cls, name: str, path: "Sequence[str] | None" = None, target: "ModuleType | None" = None
    ) -> "ModuleSpec | None":
        if name.partition(".")[0] not in _TOPS:
            return None
        try:
            from multi_gpu_compat import import_hook

            finder = import_hook.install()
        except Exception:  # a broken installation must not break the user's import
            finder = None
        _remove(cls)
        return None if finder is None else finder.find_spec(name, path, target)


class _MultiGpuCompatDisabledNotice:
    """Says on the first import of tensorflow that simulation is off with the shim."""

    @classmethod
    def find_spec(
        cls, name: str, path: "Sequence[str] | None" = None, target: "ModuleType | None" = None
    ) -> "ModuleSpec | None":
        if name.partition(".")[0] != "tensorflow" or not _remove(cls):
            return None
        import warnings

        n = os.environ.get(SIMULATE_GPUS, "").strip()
        warnings.warn(
            f"{SIMULATE_GPUS}={n} is ignored because {DISABLE} switches multi-gpu-compat off. "
            f"Unset {DISABLE} to simulate {n} GPUs, or call `multi_gpu_compat.simulate_gpus({n})` "
            "before any TensorFlow op.",
            RuntimeWarning,
            stacklevel=1,  # raised inside the import system: no user frame to point at
        )
        return None


def _remove(finder: object) -> bool:
    """Takes `finder` off `sys.meta_path`; False if another thread was first."""
    try:
        sys.meta_path.remove(finder)  # type: ignore[arg-type]  # a finder class, as put there
    except ValueError:
        return False
    return True


def _present() -> bool:
    return any(
        f is _MultiGpuCompatStartup or f is _MultiGpuCompatDisabledNotice or getattr(f, _MARK, False)
        for f in sys.meta_path
    )


def install() -> None:
    """Puts the start-up finder for this environment on `sys.meta_path` (once; see the docstring)."""
    if _present():
        return
    if os.environ.get(DISABLE, "").strip().lower() not in TRUE_VALUES:
        sys.meta_path.insert(0, _MultiGpuCompatStartup)
    elif os.environ.get(SIMULATE_GPUS, "").strip():
        sys.meta_path.insert(0, _MultiGpuCompatDisabledNotice)
