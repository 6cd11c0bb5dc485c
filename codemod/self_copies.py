"""A weight copy between two names of one model: `a.set_weights(b.get_weights())`, or
`a.save_weights(path)` then `b.load_weights(path)`. Read-only: which lines copy, given what
makes two expressions the same model (fixers/weight_copies.py removes them after the renames;
strategy_scope.py does not count them as work a kept fallback branch still does)."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ._tree import code_of, walk

__all__ = ["copies"]


def copies(
    statement: cst.BaseStatement,
    after: cst.BaseStatement | None,
    same: Callable[[cst.BaseExpression, cst.BaseExpression], bool],
) -> list[cst.BaseStatement]:
    """[statement] for `a.set_weights(b.get_weights())`, [after] (the reload) for `a.save_weights(f)`
    then `b.load_weights(f)` (the same `f`; the save also as the last statement of a loop right
    above), when `same(a, b)`; else []."""
    if isinstance(statement, (cst.For, cst.While)):
        # `for epoch in ...: fit(...); save_weights(f)` then `load_weights(f)`: the last save ran
        # last (no `break`/`continue` skips it, no `else:` runs after it)
        body = statement.body
        if (statement.orelse is None and isinstance(body, cst.IndentedBlock) and body.body
                and not any(isinstance(n, (cst.Break, cst.Continue)) for n in walk(body))):
            return [after] if after is not None and _save_then_load(body.body[-1], after, same) else []
        return []
    call = _method_call(statement)
    if call is None:
        return []
    receiver, method, args = call
    if method == "set_weights" and len(args) == 1:
        inner = args[0].value
        if (isinstance(inner, cst.Call) and not inner.args and isinstance(inner.func, cst.Attribute)
                and inner.func.attr.value == "get_weights" and same(receiver, inner.func.value)):
            return [statement]
    if _save_then_load(statement, after, same):
        assert after is not None
        return [after]  # (the save stays: the file it writes may be wanted on its own)
    return []


def _save_then_load(
    statement: cst.BaseStatement,
    after: cst.BaseStatement | None,
    same: Callable[[cst.BaseExpression, cst.BaseExpression], bool],
) -> bool:
    """`a.save_weights(f)` then `b.load_weights(f)` (the same `f`), `same(a, b)`."""
    saved = _method_call(statement)
    loaded = _method_call(after) if after is not None else None
    return (saved is not None and loaded is not None and saved[1] == "save_weights" and len(saved[2]) == 1
            and loaded[1] == "load_weights" and len(loaded[2]) == 1
            and code_of(loaded[2][0].value) == code_of(saved[2][0].value) and same(saved[0], loaded[0]))


def _method_call(
    statement: cst.BaseStatement,
) -> tuple[cst.BaseExpression, str, tuple[cst.Arg, ...]] | None:
    """(receiver, method, positional arguments) of a line holding only `receiver.method(args)`."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)):
        return None
    call = statement.body[0].value
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
        return None
    if any(arg.keyword is not None or arg.star for arg in call.args):
        return None
    return call.func.value, call.func.attr.value, tuple(call.args)
