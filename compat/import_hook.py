"""Import hook that makes every historical `multi_gpu_model` import path work again.

`multi_gpu_compat.pth` (shipped in the wheel) puts a few-line finder on
`sys.meta_path` at interpreter start-up that imports nothing; on the first
import of tensorflow, keras or tf_keras it loads this module and installs the
real finder, which watches for the modules below and, once the user's code
has imported one, adds `multi_gpu_model` to it. Set
`MULTI_GPU_COMPAT_DISABLE=1` (or `true`, `yes`, `on`) to switch it off; `0`,
`false`, `no`, `off` or an empty value leave it on.

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
TYPE_CHECKING = False  # not `from typing import`: typing costs ~10 ms at start-up

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from importlib.abc import Loader as _Loader
    from typing import Any
else:
    _Loader = object  # importlib.abc costs start-up time; loaders need no base class

DISABLE_VAR = _settings.DISABLE

# Real modules that get a `multi_gpu_model` attribute after they are imported.
PATCHED_MODULES = (
    "keras.utils",
    "tensorflow.keras.utils",
    "keras._tf_keras.keras.utils",
    "keras.api.utils",  # Keras 3.3-3.8: what `keras.utils` and `tf.compat.v1.keras.utils` are
    "keras.api._v2.keras.utils",
    "keras.api._v1.keras.utils",  # tf.compat.v1.keras.utils on TF 2.12-2.15 (Keras 2)
    "tensorflow.python.keras.utils",
    "tf_keras.utils",
    "tf_keras.api._v1.keras.utils",
    "tf_keras.api._v2.keras.utils",
)

# Modules that no longer exist (or never did here), created on demand. Other
# attribute look-ups on them are forwarded to the module named as the value.
VIRTUAL_MODULES = {
    "keras.utils.training_utils": "keras.utils",
    "keras.utils.multi_gpu_utils": "keras.utils",
    "tensorflow.python.keras.utils.multi_gpu_utils": "tensorflow.keras.utils",
    "keras.backend.tensorflow_backend": "keras.backend",
    "tensorflow._api.v1": None,
    "tensorflow._api.v1.keras": "tensorflow.keras",
    "tensorflow._api.v1.keras.utils": "tensorflow.keras.utils",
}
_VIRTUAL_PACKAGES = {"tensorflow._api.v1", "tensorflow._api.v1.keras"}


def import_paths() -> list[str]:
    """The `from X import multi_gpu_model` paths the hook serves."""
    return [
        "keras.utils",
        "keras.utils.training_utils",
        "keras.utils.multi_gpu_utils",
        "tensorflow.keras.utils",
        "tensorflow.python.keras.utils",
        "tensorflow.python.keras.utils.multi_gpu_utils",
        "tensorflow._api.v1.keras.utils",
        "tf_keras.utils",
    ]


def _multi_gpu_model() -> Callable[..., Any]:
    try:
        from .multi_gpu import multi_gpu_model
    except Exception as err:  # never break the user's import; fail when used instead
        return _unavailable(err)
    return multi_gpu_model


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


def _patch(module: types.ModuleType) -> None:
    if not hasattr(module, "multi_gpu_model"):
        module.multi_gpu_model = _multi_gpu_model()  # type: ignore[attr-defined]  # modules take any attribute


def _after_tensorflow(module: types.ModuleType) -> None:
    from . import startup

    startup.run()


_AFTER_IMPORT: dict[str, Callable[[types.ModuleType], None]] = {
    name: _patch for name in PATCHED_MODULES
}
_AFTER_IMPORT["tensorflow"] = _after_tensorflow

# The legacy module surface: Keras 2's device helpers (compat.legacy_surface) on the
# modules that had them, and the old submodules as attributes of their parents
# (`keras.utils.multi_gpu_utils` after a plain `import keras`).
_LEGACY_HELPERS = {
    "keras.utils.training_utils": ("_get_available_devices", "_normalize_device_name"),
    "keras.utils.multi_gpu_utils": ("_get_available_devices", "_normalize_device_name"),
    "tensorflow.python.keras.utils.multi_gpu_utils": ("_get_available_devices", "_normalize_device_name"),
    "keras.backend.tensorflow_backend": ("_get_available_gpus",),
    "keras.backend": ("_get_available_gpus",),
    "keras.api.backend": ("_get_available_gpus",),
    "keras.api._v1.keras.backend": ("_get_available_gpus",),  # Keras 2.12-2.15's tf.keras
    "keras.api._v2.keras.backend": ("_get_available_gpus",),
    "keras._tf_keras.keras.backend": ("_get_available_gpus",),
    "tf_keras.backend": ("_get_available_gpus",),
    "tf_keras.api._v1.keras.backend": ("_get_available_gpus",),
    "tf_keras.api._v2.keras.backend": ("_get_available_gpus",),
    # Has its own, which sees no simulated GPUs: replaced by one that does.
    "tensorflow.python.keras.backend": ("_get_available_gpus",),
}
_LEGACY_SUBMODULES = {
    "keras.utils": ("training_utils", "multi_gpu_utils"),
    "keras.api.utils": ("training_utils", "multi_gpu_utils"),
    "tensorflow.python.keras.utils": ("multi_gpu_utils",),
    "keras.backend": ("tensorflow_backend",),
    "keras.api.backend": ("tensorflow_backend",),
}
# Keras 3.3-3.8: a plain `import keras` binds `keras.utils` / `keras.backend` to these
# modules; their old submodules keep the names scripts used.
_LEGACY_PARENT_NAMES = {"keras.api.utils": "keras.utils", "keras.api.backend": "keras.backend"}


def _add_legacy_surface(module: types.ModuleType) -> None:
    helpers = _LEGACY_HELPERS.get(module.__name__, ())
    if helpers:
        from . import legacy_surface

        for name in helpers:
            setattr(module, name, getattr(legacy_surface, name))
    parent = _LEGACY_PARENT_NAMES.get(module.__name__, module.__name__)
    for child in _LEGACY_SUBMODULES.get(module.__name__, ()):
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


def _then(
    first: Callable[[types.ModuleType], None] | None, second: Callable[[types.ModuleType], None]
) -> Callable[[types.ModuleType], None]:
    if first is None:
        return second

    def both(module: types.ModuleType) -> None:
        first(module)
        second(module)

    return both


for _name in set(_LEGACY_HELPERS) | set(_LEGACY_SUBMODULES):
    if _name not in VIRTUAL_MODULES:  # virtual modules get theirs from _VirtualLoader
        _AFTER_IMPORT[_name] = _then(_AFTER_IMPORT.get(_name), _add_legacy_surface)


class _PatchingLoader(_Loader):
    """Runs the real loader, then our callback; a failing callback only warns."""

    def __init__(self, loader: Any, callback: Callable[[types.ModuleType], None]) -> None:
        self._loader = loader
        self._callback = callback

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        self._loader.exec_module(module)
        try:
            self._callback(module)
        except Exception as err:
            warnings.warn(
                f"multi-gpu-compat could not set up {module.__name__}: {err}",
                RuntimeWarning,
                stacklevel=2,
            )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


class _VirtualModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        target = VIRTUAL_MODULES.get(self.__name__)
        if target is None or name.startswith("__"):
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        return getattr(importlib.import_module(target), name)


class _VirtualLoader(_Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return _VirtualModule(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        if module.__name__ not in _VIRTUAL_PACKAGES and not module.__name__.endswith("_backend"):
            # Set, not `_patch`ed: `hasattr` would forward to the target module, which
            # may not be importable yet (served while TensorFlow itself is importing).
            module.multi_gpu_model = _multi_gpu_model()  # type: ignore[attr-defined]  # modules take any attribute
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
        callback = _AFTER_IMPORT.get(fullname)
        if callback is None and fullname not in VIRTUAL_MODULES:
            return None
        busy = self._busy()
        if fullname in busy:
            return None
        busy.add(fullname)
        try:
            spec = self._find_real(fullname, path, target)
        finally:
            busy.discard(fullname)
        if spec is None and fullname in VIRTUAL_MODULES:
            return importlib.machinery.ModuleSpec(
                fullname, _VirtualLoader(), is_package=fullname in _VIRTUAL_PACKAGES
            )
        if spec is None or spec.loader is None or callback is None:
            return spec
        spec.loader = _PatchingLoader(spec.loader, callback)
        return spec

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
    """Installs the hook (once, thread-safe) and returns it, unless `MULTI_GPU_COMPAT_DISABLE` is true-ish."""
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
    # Modules imported before the hook (rare: start-up code) are patched now.
    for name, callback in _AFTER_IMPORT.items():
        module = sys.modules.get(name)
        if module is not None:
            try:
                callback(module)
            except Exception:
                pass
    return finder
