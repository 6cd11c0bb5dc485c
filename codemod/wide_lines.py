"""A statement a late rename pushed past the file's width is wrapped as the plan wraps what it moves.

A rename made after the plan (`model.fit(...)` read as `base_model.fit(...)`, template_names.py)
can lengthen a line already near the file's widest past it: a 116-column `fit` call became 121
columns in a file whose widest line had 116 (round 44, ba04). The plan cannot wrap it: it still
writes the template's name, which the later rename may take back. So this pass runs last, on a
line the original did not have, wider than 100 columns and than the original's widest line: a
one-line statement ending in a call there gets the shapes plan.py gives a statement moved under
the scope (layout.fitted: the arguments on a line of their own, or one per line); one no shape
fits stays as written. core.py runs it on the migrated module.

The strategy line the migration writes is held to the file's own width, 92 columns at least (up
to that a reviewer reads it as one line): `strategy = tf.distribute.MirroredStrategy(tf.config.
list_logical_devices("GPU")[:GPU_COUNT])` is 100 columns two levels in, and in a file wrapped at
79 a reviewer rewrapped it by hand (round 64: bk04, bk10, bk13, bk14). plan.py still chooses the
form; only its layout follows the file. A user's `tf.contrib.distribute` line renamed in place
with its trailing comment (contrib_strategy.py) keeps its own layout.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .layout import fitted

__all__ = ["wrapped"]

_COLUMNS = 100
_STRATEGY_COLUMNS = 92
_STRATEGY_CODE = "tf.config.list_logical_devices("  # (only the strategy lines the migration writes)


def _width(line: str) -> int:
    return len(line.expandtabs(4))


def wrapped(original: cst.Module, new: cst.Module) -> cst.Module:
    """`new` with each one-line statement on a too-wide added line wrapped, where a shape fits."""
    old_lines = original.code.splitlines()
    widest = max([0, *(_width(line) for line in old_lines)])
    kept = set(old_lines)
    lines = new.code.splitlines()
    wide = {
        k + 1: limit for k, line in enumerate(lines) if line not in kept
        for limit in [max(_STRATEGY_COLUMNS if _STRATEGY_CODE in line else _COLUMNS, widest)] if _width(line) > limit
    }
    if not wide:
        return new
    wrapper = MetadataWrapper(new)
    return wrapper.visit(_Wrap(wrapper.resolve(PositionProvider), lines, wide, new.default_indent))


class _Wrap(cst.CSTTransformer):
    def __init__(self, positions: object, lines: list[str], wide: dict[int, int], unit: str) -> None:
        super().__init__()
        self.positions, self.lines, self.wide, self.unit = positions, lines, wide, unit  # wide: line -> its limit

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine:
        where = self.positions[original_node.body[0]]  # type: ignore[index]
        if where.start.line not in self.wide or where.end.line != where.start.line:
            return updated_node
        limit = self.wide[where.start.line]
        if limit < _COLUMNS and updated_node.trailing_whitespace.comment is not None:
            return updated_node  # (a user's line renamed in place, with its comment)
        line = self.lines[where.start.line - 1]
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        return fitted(updated_node, indent, self.unit, limit)
