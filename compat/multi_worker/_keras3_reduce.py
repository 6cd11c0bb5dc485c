"""Keras 3 on MultiWorkerMirroredStrategy: `fit` / `evaluate` reduce scalar logs without failing.

Keras 3 reduces per-replica outputs with `strategy.reduce("MEAN", v, axis=0)`, which
fails on MWMS for the scalar losses and metrics of `fit` / `evaluate` ("Invalid
reduction dimension 0 for input with 0 dimensions"). The single-worker path
averages the replicas' values element-wise; on MWMS the cross-replica equivalent is
`reduce("MEAN", v, axis=None)`. Only strategies passed to `apply_to` get the fix;
everything else goes to Keras's own function.
"""

from __future__ import annotations

import functools
from typing import Any

from .. import _patching, _stack

# On the strategies created here and on the installed `reduce_per_replica`.
_MARK = "_compat_multi_worker"


def apply_to(strategy: Any) -> None:
    """Makes Keras 3 reduce `strategy`'s per-replica logs across workers correctly."""
    _patching.mark(strategy, _MARK)
    patch_reduce_per_replica()


def patch_reduce_per_replica() -> None:
    """Wraps Keras 3's `reduce_per_replica` (idempotent; nothing to do on Keras 2)."""
    if not _stack.keras3_installed():
        return  # tf_keras or Keras 2 only
    from .. import _keras3_internals

    trainer = _keras3_internals.trainer_module()
    original = trainer.reduce_per_replica
    if _patching.is_marked(original, _MARK):
        return

    @functools.wraps(original)
    def reduce_per_replica(values: Any, strategy: Any, reduction: str) -> Any:
        if not _patching.is_marked(strategy, _MARK) or reduction not in ("auto", "mean"):
            return original(values, strategy, reduction)
        import tensorflow as tf

        def _reduce(v: Any) -> Any:
            if not isinstance(v, (tf.distribute.DistributedValues, tf.Tensor, tf.Variable)):
                return v
            return strategy.reduce("MEAN", v, axis=None)

        return tf.nest.map_structure(_reduce, values)

    _patching.mark(reduce_per_replica, _MARK)
    trainer.reduce_per_replica = reduce_per_replica
