"""`fit` on a cluster: callbacks that share a file system, and a note when a peer is lost."""

from __future__ import annotations

import functools
import os
import sys
from typing import Any

from .. import _patching
from ._cluster import is_chief

_MARK = "_compat_cluster_fit"

_PEER_LOST_NOTE = (
    "multi-gpu-compat: another worker of the cluster stopped or became unreachable, so "
    "this worker cannot go on. Restart every worker with the same command (a cluster "
    "manager does it for you); with keras.callbacks.BackupAndRestore in `callbacks`, "
    "training resumes from the last saved epoch."
)


def _prepare_callbacks(callbacks: Any) -> None:
    # Keras 3's BackupAndRestore creates its directory with exist_ok=False: two workers
    # doing it at once on a shared file system race. Create it up front.
    for callback in callbacks or ():
        backup_dir = getattr(callback, "backup_dir", None)
        if type(callback).__name__ == "BackupAndRestore" and isinstance(backup_dir, (str, os.PathLike)):
            os.makedirs(backup_dir, exist_ok=True)
            if getattr(callback, "delete_checkpoint", False) and not is_chief():
                # Keras 3 deletes the directory when training ends: on a shared file
                # system two workers doing so race. The chief deletes it.
                callback.delete_checkpoint = False


def cluster_aware_fit(parallel: Any) -> None:
    """Gives `parallel` an instance-level `fit` for cluster training (see `_prepare_callbacks`)."""
    current = parallel.fit
    if _patching.is_marked(current, _MARK):
        return

    @functools.wraps(current)
    def fit(*args: Any, **kwargs: Any) -> Any:
        import tensorflow as tf

        _prepare_callbacks(kwargs.get("callbacks"))
        try:
            return current(*args, **kwargs)
        except (tf.errors.UnavailableError, tf.errors.AbortedError) as err:
            if sys.version_info >= (3, 11):
                err.add_note(_PEER_LOST_NOTE)
            else:  # no exception notes before Python 3.11: say it just before the traceback
                print(_PEER_LOST_NOTE, file=sys.stderr)
            raise

    _patching.mark(fit, _MARK)
    parallel.__dict__["fit"] = fit
