"""Creating the strategy right before TensorFlow first initialises its context.

MWMS must configure TensorFlow's collective ops before TensorFlow initialises its
context ("Collective ops must be configured at program startup"), but a legacy
script builds its model (which initialises the context) before it calls
`multi_gpu_model`. So TensorFlow's `Context.ensure_initialized` is wrapped to create
the strategy first, and `multi_gpu_model` picks it up later.
"""

from __future__ import annotations

import functools
from typing import Any

from .. import _patching
from . import _strategy
from ._cluster import wants_multi_worker

_MARK = "_compat_early_creation"


def install_early_creation() -> bool:
    """Creates the strategy right before TensorFlow first initialises its context.

    Only when the environment asks for multi-worker training. Returns whether the hook
    was installed. Idempotent.
    """
    try:
        if not wants_multi_worker():
            return False
    except ValueError:
        return False  # a malformed setting is reported when `multi_gpu_model` is called
    from .. import _tf_internals

    cls = _tf_internals.context_class()
    if _patching.is_marked(cls.ensure_initialized, _MARK):
        return True
    original = cls.ensure_initialized

    @functools.wraps(original)
    def ensure_initialized(self: Any) -> None:
        if (
            not _tf_internals.context_initialized(self)
            and _strategy.creation_pending()
            and _tf_internals.collective_setup_pending(self)  # the script creates its own strategy
        ):
            _strategy.create_now()
        return original(self)

    _patching.mark(ensure_initialized, _MARK)
    cls.ensure_initialized = ensure_initialized
    return True
