"""Whether two conditions can never hold together, read from comparisons with integer literals.

`if gpus > 1: ... elif gpus == 1: print('one GPU')` left with an empty first branch reads
better as `if gpus == 1: print('one GPU')`, which is the same code only when `gpus > 1` and
`gpus == 1` exclude each other. The conditions compared here call nothing (same_branches.py
checks), so one expression has one value in both.
"""

from __future__ import annotations

import math

import libcst as cst

from ._tree import code_of

__all__ = ["disjoint"]

# subject code -> (lowest, highest, values excluded). A bound is (value, open): the subject may
# be a float, so `n > 1` and `n < 2` overlap.
_Bound = tuple[float, bool]
_Range = tuple[_Bound, _Bound, frozenset[int]]
_EVERY: _Range = ((-math.inf, True), (math.inf, True), frozenset())


def disjoint(first: cst.BaseExpression, second: cst.BaseExpression) -> bool:
    """True when no value makes both `first` and `second` true (each a comparison of one
    expression with an integer, or an `and` of such); False when that is not certain."""
    a, b = _ranges(first), _ranges(second)
    if a is None or b is None:
        return False
    for subject in a.keys() & b.keys():
        low, high, excluded = _both(a[subject], b[subject])
        if low[0] > high[0] or (low[0] == high[0] and (low[1] or high[1] or low[0] in excluded)):
            return True
    return False


def _both(a: _Range, b: _Range) -> _Range:
    """The values both ranges allow."""
    low = max(a[0], b[0], key=lambda bound: (bound[0], bound[1]))  # open is the higher low
    high = min(a[1], b[1], key=lambda bound: (bound[0], not bound[1]))  # open is the lower high
    return low, high, a[2] | b[2]


def _ranges(node: cst.BaseExpression) -> dict[str, _Range] | None:
    """What `node` says of each subject it compares with an integer; None when it says nothing
    understood. A part of an `and` that is not understood only says less."""
    node = _unparenthesized(node)
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.And):
        parts = [r for r in (_ranges(node.left), _ranges(node.right)) if r is not None]
        if not parts:
            return None
        merged: dict[str, _Range] = {}
        for part in parts:
            for code, allowed in part.items():
                merged[code] = _both(merged.get(code, _EVERY), allowed)
        return merged
    if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1:
        return None
    target = node.comparisons[0]
    left: cst.BaseExpression = _unparenthesized(node.left)
    right: cst.BaseExpression = _unparenthesized(target.comparator)
    operator = type(target.operator)
    value = _integer(right)
    subject = left
    if value is None:
        value, subject = _integer(left), right
        operator = _MIRRORED.get(operator, operator)
    if value is None or _integer(subject) is not None:
        return None
    found = _range(operator, value)
    return None if found is None else {code_of(subject): found}


_MIRRORED: dict[type, type] = {
    cst.LessThan: cst.GreaterThan, cst.GreaterThan: cst.LessThan,
    cst.LessThanEqual: cst.GreaterThanEqual, cst.GreaterThanEqual: cst.LessThanEqual,
}


def _range(operator: type, value: int) -> _Range | None:
    low, high = _EVERY[0], _EVERY[1]
    if operator is cst.Equal:
        return (value, False), (value, False), frozenset()
    if operator is cst.NotEqual:
        return low, high, frozenset({value})
    if operator in (cst.GreaterThan, cst.GreaterThanEqual):
        return (value, operator is cst.GreaterThan), high, frozenset()
    if operator in (cst.LessThan, cst.LessThanEqual):
        return low, (value, operator is cst.LessThan), frozenset()
    return None


def _integer(node: cst.BaseExpression) -> int | None:
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _integer(_unparenthesized(node.expression))
        return None if inner is None else -inner
    return None


def _unparenthesized(node: cst.BaseExpression) -> cst.BaseExpression:
    return node.with_changes(lpar=[], rpar=[]) if node.lpar else node
