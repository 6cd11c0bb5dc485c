"""Validation of the `gpus` argument, with the original Keras error messages."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any


def _as_int(value: Any, what: str, gpus: Any) -> int:
    # Integral floats are accepted: R (reticulate) passes `gpus = 2` as 2.0.
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"`gpus` must be an integer >= 2 or a list of GPU ids, {what} is "
            f"{value!r} of type {type(value).__name__}. Received: `gpus={gpus!r}`"
        )
    if isinstance(value, numbers.Integral):
        return int(value)
    if float(value).is_integer():
        return int(value)
    raise TypeError(
        f"`gpus` must be a whole number of GPUs or a list of integer GPU ids, "
        f"{what} is {value!r}. Received: `gpus={gpus!r}`"
    )


def is_unset(gpus: Any) -> bool:
    """`None`, `0` and `[]` mean "all visible GPUs", as in Keras 2.1.4 and later."""
    if gpus is None:
        return True
    if isinstance(gpus, (list, tuple)):
        return len(gpus) == 0
    if isinstance(gpus, numbers.Real) and not isinstance(gpus, bool):
        return gpus == 0
    return False


def target_gpu_ids(gpus: Any) -> list[int]:
    """The GPU ids a resolved `gpus` value asks for; raises like `multi_gpu_model` did."""
    if isinstance(gpus, (str, bytes)) or not isinstance(gpus, (Sequence, numbers.Real)):
        raise TypeError(
            "`gpus` must be an integer >= 2 (the number of GPUs) or a list of "
            f"GPU ids such as [0, 1]; got {type(gpus).__name__}. Received: `gpus={gpus!r}`"
        )
    if isinstance(gpus, Sequence):
        ids = [_as_int(g, "every GPU id", gpus) for g in gpus]
        if len(ids) <= 1:
            raise ValueError(
                "For multi-gpu usage to be effective, call `multi_gpu_model` "
                "with `len(gpus) >= 2`. Received: `gpus=%s`" % (gpus,)
            )
        negative = [i for i in ids if i < 0]
        if negative:
            raise ValueError(
                f"GPU ids in `gpus` must be >= 0; got {negative}. Received: `gpus={gpus!r}`"
            )
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(
                f"Each GPU may appear only once in `gpus`; {duplicates} appear more "
                f"than once. Received: `gpus={gpus!r}`. Pass distinct ids, e.g. "
                f"`gpus={sorted(set(ids))}`."
            )
        return ids
    count = _as_int(gpus, "it", gpus)
    if count <= 1:
        raise ValueError(
            "For multi-gpu usage to be effective, call `multi_gpu_model` "
            "with `gpus >= 2`. Received: `gpus=%d`" % count
        )
    return list(range(count))
