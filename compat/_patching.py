"""Marks on the functions the shim installs over Keras and TensorFlow ones.

A replacement is installed once: the function carries a flag attribute, and the
next installation sees it and leaves the function in place.
"""

from __future__ import annotations

from typing import Any


def mark(function: Any, flag: str) -> None:
    """Flags `function` (one the shim installed) with `flag`."""
    setattr(function, flag, True)


def is_marked(obj: Any, flag: str) -> bool:
    """Whether `obj` (a function, bound method or strategy) carries `flag`."""
    return bool(getattr(obj, flag, False))
