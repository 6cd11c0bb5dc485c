"""The shim's one-time notices, issued through the `warnings` module."""

from __future__ import annotations

import warnings


class MultiGPUCompatWarning(UserWarning):
    """Raised (as a warning) when legacy multi-GPU code is served by this shim.

    Silence it the usual way, e.g.
    `warnings.filterwarnings("ignore", category=multi_gpu_compat.MultiGPUCompatWarning)`
    or `python -W ignore::UserWarning`.
    """


_issued: set[str] = set()


def notify_once(key: str, message: str, stacklevel: int = 3) -> None:
    """Warn with `message` the first time `key` is seen in this process."""
    if key in _issued:
        return
    _issued.add(key)
    warnings.warn(message, MultiGPUCompatWarning, stacklevel=stacklevel)
