"""What a legacy import says when the import hook is not active in this process.

`import multi_gpu_compat` puts `Explainer` last on `sys.meta_path`. It serves nothing and changes
nothing in TensorFlow or Keras: it is only asked about a module no other finder found, and for a
legacy name (`keras.utils.multi_gpu_model`, the fallback Python tries when `from keras.utils
import multi_gpu_model` finds no such attribute; `keras.utils.multi_gpu_utils`...) it raises an
ImportError naming this project and how to switch it on, instead of Keras's bare one. Cheap to
import: nothing beyond `sys` (and, when asked about a legacy name, two stdlib-only modules).
"""

from __future__ import annotations

import sys

_TOPS = ("tensorflow", "keras", "tf_keras")
_LEGACY_LEAVES = ("multi_gpu_model", "multi_gpu_utils", "training_utils")


class Explainer:
    """The finder; see the module's docstring."""

    @staticmethod
    def find_spec(fullname: str, path: object = None, target: object = None) -> None:
        top, _, rest = fullname.partition(".")
        if top not in _TOPS or not rest or fullname.rpartition(".")[2] not in _LEGACY_LEAVES:
            return None
        from . import _hook_state, _settings

        if _hook_state.installed():
            return None  # the hook answers for itself
        if _settings.disabled():
            how = f"{_settings.DISABLE} switches multi-gpu-compat off; unset it"
        else:
            how = (
                "its start-up hook did not run in this interpreter (`python -S`, `pip install --target` on "
                "PYTHONPATH, or another setup that skips .pth files); call `multi_gpu_compat.activate()` "
                "before this import"
            )
        raise ImportError(
            f"`{fullname}` comes from multi-gpu-compat, but {how}. Received: import of {fullname!r}.",
            name=fullname,
        )


def explain_when_inactive() -> None:
    """Puts the explainer last on `sys.meta_path`, once."""
    if not any(f is Explainer for f in sys.meta_path):
        sys.meta_path.append(Explainer)
