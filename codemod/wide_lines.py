"""A statement a late rename pushed past the file's width is wrapped as the plan wraps what it moves.

A rename made after the plan (`model.fit(...)` read as `base_model.fit(...)`, template_names.py)
can lengthen a line already near the file's widest past it: a 116-column `fit` call became 121
columns in a file whose widest line had 116 (round 44, ba04). The plan cannot wrap it: it still
writes the template's name, which the later rename may take back. So this pass runs last, on a
line the original did not have, wider than 100 columns and than the original's widest line: a
one-line statement ending in a call there gets the shapes plan.py gives a statement moved under
the scope (layout.fitted: the arguments on a line of their own, or one per line); one no shape
fits stays as written. core.py runs it on the migrated module.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .layout import fitted

__all__ = ["wrapped"]

_COLUMNS = 100


def _width(line: str) -> int:
    return len(line.expandtabs(4))


def wrapped(original: cst.Module, new: cst.Module) -> cst.Module:
    """`new` with each one-line statement on a too-wide added line wrapped, where a shape fits."""
    old_lines = original.code.splitlines()
    limit = max([_COLUMNS, *(_width(line) for line in old_lines)])
    kept = set(old_lines)
    lines = new.code.splitlines()
    wide = {k + 1 for k, line in enumerate(lines) if _width(line) > limit and line not in kept}
    if not wide:
        return new
    wrapper = MetadataWrapper(new)
    return wrapper.visit(_Wrap(wrapper.resolve(PositionProvider), lines, wide, limit, new.default_indent))


class _Wrap(cst.CSTTransformer):
    def __init__(self, positions: object, lines: list[str], wide: set[int], limit: int, unit: str) -> None:
        super().__init__()
        self.positions, self.lines, self.wide, self.limit, self.unit = positions, lines, wide, limit, unit

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine:
        where = self.positions[original_node.body[0]]  # type: ignore[index]
        if where.start.line not in self.wide or where.end.line != where.start.line:
            return updated_node
        line = self.lines[where.start.line - 1]
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        return fitted(updated_node, indent, self.unit, self.limit)
