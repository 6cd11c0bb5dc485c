"""Validation of the `gpus` argument, with the original Keras error messages."""

from __future__ import annotations

import numbers
from collections import Counter
from collections.abc import Sequence
from typing import Any, SupportsInt, cast

# Longer lists are shortened in messages: `gpus=10**7` must not build a 159 MB string.
_SHOWN_IN_FULL = 16
_SHOWN_WHEN_LONG = 8
# Counts above this come back as a `range`: no machine has that many GPUs, and a list
# of 10**8 ids alone takes gigabytes before the device check can reject it.
_LISTED_COUNT_LIMIT = 65536


def _length(values: Sequence[Any]) -> int:
    try:
        return len(values)
    except OverflowError:  # range(10**100): only ranges are that long
        if not isinstance(values, range):
            raise
        return values.stop - values.start


def brief(values: Any, total: int | None = None) -> str:
    """`repr(values)` for a message; a long sequence shows its first items and how many more.

    `total` is the full length when `values` holds only the first items of a longer list.
    """
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        return repr(values)
    total = _length(values) if total is None else total
    if total <= _SHOWN_IN_FULL:
        return repr(values)
    opening, closing = ("(", ")") if isinstance(values, tuple) else ("[", "]")
    head = ", ".join(repr(v) for v in values[:_SHOWN_WHEN_LONG])
    return f"{opening}{head}, ... ({total - _SHOWN_WHEN_LONG} more){closing}"


def device_names(gpu_ids: Sequence[int]) -> str:
    """The devices `gpu_ids` need, as the original message listed them: '/cpu:0' first."""
    names = ["/cpu:0"] + [f"/gpu:{i}" for i in gpu_ids[:_SHOWN_IN_FULL]]
    return brief(names, total=_length(gpu_ids) + 1)


def _as_int(value: Any, what: str, gpus: Any) -> int:
    if type(value) is int:  # the common case first: a long id list stays fast
        return value
    # Integral floats are accepted: R (reticulate) passes `gpus = 2` as 2.0.
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"`gpus` must be an integer >= 2 or a list of GPU ids, {what} is "
            f"{value!r} of type {type(value).__name__}. Received: `gpus={brief(gpus)}`"
        )
    if isinstance(value, numbers.Integral):
        return int(value)
    if float(value).is_integer():
        return int(cast(SupportsInt, value))  # every Real converts; typeshed's Real has no __int__
    raise TypeError(
        f"`gpus` must be a whole number of GPUs or a list of integer GPU ids, "
        f"{what} is {value!r}. Received: `gpus={brief(gpus)}`"
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


def target_gpu_ids(gpus: Any) -> Sequence[int]:
    """The GPU ids a resolved `gpus` value asks for; raises like `multi_gpu_model` did.

    A list, or a `range` for counts far beyond any machine (rejected later by the
    device check, without spending memory on them).
    """
    if isinstance(gpus, (str, bytes)) or not isinstance(gpus, (Sequence, numbers.Real)):
        raise TypeError(
            "`gpus` must be an integer >= 2 (the number of GPUs) or a list of "
            f"GPU ids such as [0, 1]; got {type(gpus).__name__}. Received: `gpus={brief(gpus)}`"
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
                f"GPU ids in `gpus` must be >= 0; got {brief(negative)}. "
                f"Received: `gpus={brief(gpus)}`"
            )
        duplicates = sorted(i for i, n in Counter(ids).items() if n > 1)
        if duplicates:
            raise ValueError(
                f"Each GPU may appear only once in `gpus`; {brief(duplicates)} appear more "
                f"than once. Received: `gpus={brief(gpus)}`. Pass distinct ids, e.g. "
                f"`gpus={brief(sorted(set(ids)))}`."
            )
        return ids
    count = _as_int(gpus, "it", gpus)
    if count <= 1:
        raise ValueError(
            "For multi-gpu usage to be effective, call `multi_gpu_model` "
            "with `gpus >= 2`. Received: `gpus=%d`" % count
        )
    return list(range(count)) if count <= _LISTED_COUNT_LIMIT else range(count)
