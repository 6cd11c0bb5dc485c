"""Import hook that makes every historical `multi_gpu_model` import path work again.

What happens when a script does `from keras.utils import multi_gpu_model`:

1. At interpreter start-up, `multi_gpu_compat.pth` (shipped in the wheel) ran
   `multi_gpu_compat_startup.install()`, which put a small finder first on `sys.meta_path`
   and imported nothing.
2. The script's first import of tensorflow, keras or tf_keras reaches that finder; it imports
   this module and calls `install()`, which puts `_Finder` first on `sys.meta_path`, and
   removes itself.
3. `_Finder` answers only for `tensorflow` and the modules of the legacy table
   (`legacy_modules.LEGACY_MODULES`, shared with the codemod). It finds the real module
   through the other finders and wraps its loader (`_PatchingLoader`): once the module has
   run, `tensorflow` gets the start-up routine (`startup.run`: simulated GPUs, multi-worker
   training, the version check), and `keras.utils` gets `multi_gpu_model` plus the legacy
   helpers and submodules the table lists. A module that no longer exists
   (`keras.utils.multi_gpu_utils`) is created (`_VirtualModule`).
4. The `from ... import` finds the attribute; calling it runs `multi_gpu.multi_gpu_model` with
   the output naming of the module's family (the table's `"output_naming"`): outputs with a
   repeated name are named as `keras.utils` (Keras 2.2.3-2.3) or `tensorflow.keras.utils`
   (tf.keras) named them.

A failure in the hook only warns: it never breaks the user's import. Set
`MULTI_GPU_COMPAT_DISABLE=1` (or `true`, `yes`, `on`) to switch it off; `0`, `false`, `no`,
`off` or an empty value leave it on. `install()` returns the finder, whose `uninstall()` takes
it off again.

Where `.pth` files are not processed (`python -S`, `pip install --target DIR` on
`PYTHONPATH`, some embedded interpreters), call `multi_gpu_compat.activate()` before the
legacy import. Without it, `import multi_gpu_compat` only makes a failing legacy import
say so (`_explainer.py`); it changes nothing in TensorFlow or Keras.
"""

from __future__ import annotations

# Only modules Python has already loaded at start-up are imported here (no importlib.abc,
# no typing): this module is loaded on the first import of tensorflow, keras or tf_keras,
# and its cost is paid by every script that imports them.
import _thread
import importlib
import importlib.machinery
import sys
import types
import warnings

from . import _hook_state, _settings
from .legacy_modules import LEGACY_MODULES
TYPE_CHECKING = False  # not `from typing import`: typing costs ~10 ms at start-up

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from importlib.abc import Loader as _Loader
    from typing import Any
else:
    _Loader = object  # importlib.abc costs start-up time; loaders need no base class

DISABLE_VAR = _settings.DISABLE

# What every legacy module holds, and how the hook serves it: one table, shared with the codemod.
_TABLE: dict[str, dict[str, Any]] = LEGACY_MODULES


def import_paths() -> list[str]:
    """The `from X import multi_gpu_model` paths the hook serves."""
    return [name for name, entry in _TABLE.items() if entry.get("served_import")]


def _multi_gpu_model(name: str) -> Callable[..., Any]:
    """`multi_gpu_model` as the legacy module `name` serves it (with its family's output naming)."""
    try:
        from .multi_gpu import served

        return served(_TABLE[name]["output_naming"])
    except Exception as err:  # never break the user's import; fail when used instead
        return _unavailable(err)


def _unavailable(failure: Exception) -> Callable[..., Any]:
    """A `multi_gpu_model` that says why the real one could not be loaded."""

    def multi_gpu_model(*args: Any, **kwargs: Any) -> Any:
        raise ImportError(
            "multi-gpu-compat could not load `multi_gpu_model`: "
            f"{type(failure).__name__}: {failure}. Reinstall the project "
            "(`pip install --force-reinstall multi-gpu-compat`) or run "
            "`multi-gpu-compat doctor` to see what is missing."
        ) from failure

    return multi_gpu_model


def _after_tensorflow(module: types.ModuleType) -> None:
    from . import startup

    startup.run()


def _set_up(module: types.ModuleType) -> None:
    """What a real legacy module gets once imported: `multi_gpu_model`, then the legacy surface."""
    if _TABLE[module.__name__].get("serve") and not hasattr(module, "multi_gpu_model"):
        module.multi_gpu_model = _multi_gpu_model(module.__name__)  # type: ignore[attr-defined]  # modules take any
    _add_legacy_surface(module)


def _after_import(fullname: str) -> Callable[[types.ModuleType], None] | None:
    """What to run after the real module `fullname` is imported (None: nothing)."""
    if fullname == "tensorflow":
        return _after_tensorflow
    entry = _TABLE.get(fullname)
    if entry is None or "virtual" in entry:  # a real module of a virtual's name is left as it is
        return None
    if entry.get("serve") or entry.get("helpers") or entry.get("submodules"):
        return _set_up
    return None


def _is_virtual(fullname: str) -> bool:
    return "virtual" in _TABLE.get(fullname, {})


def _add_legacy_surface(module: types.ModuleType) -> None:
    entry = _TABLE[module.__name__]
    helpers = entry.get("helpers", ())
    if helpers:
        from . import legacy_surface

        for name in helpers:
            setattr(module, name, getattr(legacy_surface, name))
    parent = entry.get("parent", module.__name__)
    for child in entry.get("submodules", ()):
        if hasattr(module, child):
            continue
        name = f"{parent}.{child}"
        if parent == module.__name__ and hasattr(module, "__path__"):
            importlib.import_module(name)  # importing sets the parent's attribute
            continue
        # A plain module (Keras 2.12-2.15's `keras.backend`) has no submodules to find, and
        # an aliased one serves another name: create the old module directly.
        setattr(module, child, sys.modules.get(name) or _virtual_module(name))


def _virtual_module(name: str) -> types.ModuleType:
    module = _VirtualModule(name)
    _VirtualLoader().exec_module(module)
    sys.modules[name] = module
    return module


class _PatchingLoader(_Loader):
    """Runs the real loader, then our callback; a failing callback only warns.

    The module ends up with the real loader as `__loader__` and `__spec__.loader`: code that
    inspects them (pkgutil, importlib.resources, reloads) sees what it would without the hook.
    """

    def __init__(self, loader: Any, callback: Callable[[types.ModuleType], None]) -> None:
        self._loader = loader
        self._callback = callback

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        self._restore_loader(module)  # before running it: the module's own code may look
        self._loader.exec_module(module)
        try:
            self._callback(module)
        except Exception as err:
            warnings.warn(
                f"multi-gpu-compat could not set up {module.__name__}: {err}",
                RuntimeWarning,
                stacklevel=2,
            )

    def _restore_loader(self, module: types.ModuleType) -> None:
        if getattr(module, "__loader__", None) is self:
            module.__loader__ = self._loader
        spec = getattr(module, "__spec__", None)
        if spec is not None and spec.loader is self:
            spec.loader = self._loader

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


class _VirtualModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        target = _TABLE.get(self.__name__, {}).get("virtual")
        if target is None or name.startswith("__"):
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        return getattr(importlib.import_module(target), name)


class _VirtualLoader(_Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return _VirtualModule(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        if _TABLE[module.__name__].get("serve"):
            # Set without a `hasattr` test: it would forward to the target module, which
            # may not be importable yet (served while TensorFlow itself is importing).
            module.multi_gpu_model = _multi_gpu_model(module.__name__)  # type: ignore[attr-defined]  # any attribute
        _add_legacy_surface(module)


class _Finder:
    """Finds the watched modules through the other finders and wraps their loaders."""

    _multi_gpu_compat_hook = True  # _hook_state.MARK

    def __init__(self) -> None:
        # Names this thread is looking up through the other finders. Per thread: a library probing
        # `find_spec` in another thread must not make this thread's import skip the hook.
        self._local = _thread._local()

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        callback = _after_import(fullname)
        virtual = _is_virtual(fullname)
        if callback is None and not virtual:
            return None
        busy = self._busy()
        if fullname in busy:
            return None
        busy.add(fullname)
        try:
            spec = self._find_real(fullname, path, target)
        finally:
            busy.discard(fullname)
        if spec is None and virtual:
            return importlib.machinery.ModuleSpec(
                fullname, _VirtualLoader(), is_package=bool(_TABLE[fullname].get("package"))
            )
        if spec is None or spec.loader is None or callback is None:
            return spec
        spec.loader = _PatchingLoader(spec.loader, callback)
        return spec

    def uninstall(self) -> None:
        """Takes the hook off `sys.meta_path`: later imports are no longer served (modules
        already set up keep what they got). `install()` puts a new one on again."""
        with _INSTALL_LOCK:
            while self in sys.meta_path:
                sys.meta_path.remove(self)

    def _busy(self) -> set[str]:
        busy = getattr(self._local, "names", None)
        if busy is None:
            busy = self._local.names = set()
        return busy

    def _find_real(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None
    ) -> importlib.machinery.ModuleSpec | None:
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                return spec
        return None


def _installed() -> _Finder | None:
    return next((f for f in sys.meta_path if isinstance(f, _Finder)), None)


def is_installed() -> bool:
    """True when the hook serves the legacy import paths in this process."""
    return _hook_state.installed()


def disabled() -> bool:
    """True when `MULTI_GPU_COMPAT_DISABLE` asks for the hook to be off (`1`, `true`, `yes`, `on`)."""
    return _settings.disabled()


# Threads may import TensorFlow concurrently at start-up (a library probing for Keras in a
# thread): the hook is installed once, by whichever comes first. Re-entrant: installing patches
# modules already imported, which can import TensorFlow, which comes back here.
_INSTALL_LOCK = _thread.RLock()


def install() -> _Finder | None:
    """Installs the hook (once, thread-safe) and returns it, unless `MULTI_GPU_COMPAT_DISABLE` is true-ish.

    The returned finder is the handle: `install().uninstall()` takes the hook off again.
    """
    if disabled():
        return None
    finder = _installed()
    if finder is not None:
        return finder
    with _INSTALL_LOCK:
        return _install_locked()


def activate() -> bool:
    """Serves the legacy `multi_gpu_model` imports in this process, without the start-up hook.

    The `.pth` file the project installs does this at interpreter start-up; where `.pth` files
    are not processed (`python -S`, `pip install --target DIR` on `PYTHONPATH`, some
    embedded interpreters), call `multi_gpu_compat.activate()` before the legacy import:

    ```python
    import multi_gpu_compat
    multi_gpu_compat.activate()
    from keras.utils import multi_gpu_model
    ```

    Modules imported before the call are set up by it. Safe to call again, from any thread.

    Returns:
        True when the legacy imports are served; False when `MULTI_GPU_COMPAT_DISABLE`
        switches multi-gpu-compat off.
    """
    return install() is not None


def _install_locked() -> _Finder | None:
    finder = _installed()
    if finder is not None:
        return finder
    value = _settings.unclear_disable_value()
    if value is not None:
        warnings.warn(
            f"{DISABLE_VAR}={value!r} is neither true (1, true, yes, on) nor false (0, false, "
            f"no, off), so multi-gpu-compat stays on. Set {DISABLE_VAR}=1 to switch it off.",
            RuntimeWarning,
            stacklevel=2,
        )
    finder = _Finder()
    sys.meta_path.insert(0, finder)
    # Modules imported before the hook (rare: start-up code) are set up now.
    for name in ("tensorflow", *_TABLE):
        callback = _after_import(name)
        module = sys.modules.get(name)
        if callback is not None and module is not None:
            try:
                callback(module)
            except Exception:
                pass
    return finder
