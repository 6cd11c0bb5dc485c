"""Chief-aware saving: every worker saves, only the chief's file is kept.

Saving reads synchronised variables, a collective op that needs every worker, so
each worker must save; non-chief workers write into a temporary directory that is
deleted afterwards, as TensorFlow's own multi-worker saving does.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from typing import Any

from .. import _patching
from ._cluster import is_chief

_MARK = "_compat_chief_aware"


def _temporary_path(filepath: Any) -> tuple[str, str]:
    """A path like `filepath` (same file name and suffix) in a fresh temporary directory."""
    directory = tempfile.mkdtemp(prefix="multi_gpu_compat_worker_")
    name = os.path.basename(os.fspath(filepath).rstrip("/\\")) or "model"
    return directory, os.path.join(directory, name)


def _chief_aware(method: Any) -> Any:
    @functools.wraps(method)
    def save(filepath: Any, *args: Any, **kwargs: Any) -> Any:
        if is_chief() or not isinstance(filepath, (str, os.PathLike)):
            return method(filepath, *args, **kwargs)
        directory, path = _temporary_path(filepath)
        try:
            return method(path, *args, **kwargs)
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    _patching.mark(save, _MARK)
    return save


def chief_aware_saving(template: Any) -> None:
    """Gives `template` instance-level `save` / `save_weights` that follow the chief rule.

    The user's unchanged `template.save(path)` (and `parallel.save`,
    `ModelCheckpoint`, `BackupAndRestore`, which go through the template) then
    writes the real file on the chief only.
    """
    for name in ("save", "save_weights"):
        current = getattr(template, name)
        if _patching.is_marked(current, _MARK):
            continue
        template.__dict__[name] = _chief_aware(current)
