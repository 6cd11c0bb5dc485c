"""A message said when the strategy holds several replicas prints their number, not the count asked for.

`try: parallel = multi_gpu_model(model, gpus=n); print('Training on %d GPUs' % n)` printed `n`
only when `n` GPUs were there (the call raised otherwise). `MirroredStrategy(...[:n])` takes the
GPUs there are, up to `n`: under `if strategy.num_replicas_in_sync > 1:` the message says
`strategy.num_replicas_in_sync`, which is the number it trains on.
"""

from __future__ import annotations

import re

import libcst as cst

from ._tree import code_of
from .strategy_expression import StrategyCode

__all__ = ["replicas_said", "sliced_count"]

_COUNT_OF_DEVICES = re.compile(r"(?<![\w.])\d+(?=\s+(?:GPUs?|gpus?|cards?|devices?|replicas?)\b)")


def sliced_count(expression: str) -> str | None:
    """The count the strategy takes at most that many GPUs of (`n` in `...("GPU")[:n]`, or
    `[:max(n, 1)]`): there may be fewer. None for any other strategy expression."""
    inputs = expression.inputs if isinstance(expression, StrategyCode) else None
    if inputs is None or inputs.gpus is None:
        return None
    count = code_of(inputs.gpus)
    return count if f'("GPU")[:{count}]' in expression or f'("GPU")[:max({count}, 1)]' in expression else None


def replicas_said(statement: cst.BaseStatement, count: str, name: str) -> cst.BaseStatement:
    """`statement` (a print or logging call) with `count` replaced by `<name>.num_replicas_in_sync`
    where it is a value the message formats: the right of `%` (alone or in a tuple), an argument
    of `.format(...)` or of a logging call after its message, an f-string's `{count}`."""
    said = statement.visit(_Formatted(count, name))
    assert isinstance(said, cst.BaseStatement)
    return said


class _Formatted(cst.CSTTransformer):
    def __init__(self, count: str, name: str) -> None:
        self.count, self.replicas = count, cst.parse_expression(f"{name}.num_replicas_in_sync")

    def _is_count(self, node: cst.BaseExpression) -> bool:
        return code_of(node) == self.count

    def leave_BinaryOperation(
        self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation
    ) -> cst.BaseExpression:
        if not isinstance(updated_node.operator, cst.Modulo) or not isinstance(updated_node.left, cst.SimpleString):
            return updated_node
        right = updated_node.right
        if self._is_count(right):
            return updated_node.with_changes(right=self.replicas)
        if isinstance(right, cst.Tuple):
            return updated_node.with_changes(right=right.with_changes(elements=[
                e.with_changes(value=self.replicas) if self._is_count(e.value) else e for e in right.elements
            ]))
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        func = updated_node.func
        formats = isinstance(func, cst.Attribute) and func.attr.value == "format" and isinstance(
            func.value, cst.SimpleString
        )
        logs = isinstance(func, cst.Attribute) and func.attr.value != "format" and updated_node.args and isinstance(
            updated_node.args[0].value, cst.SimpleString
        )
        if not (formats or logs):
            return updated_node
        first = 0 if formats else 1
        return updated_node.with_changes(args=[
            a.with_changes(value=self.replicas) if i >= first and a.keyword is None and a.star == ""
            and self._is_count(a.value) else a
            for i, a in enumerate(updated_node.args)
        ])

    def leave_SimpleString(self, original_node: cst.SimpleString, updated_node: cst.SimpleString) -> cst.BaseExpression:
        # "Using 4 GPUs" for `gpus=4` (round 62, bh15): said as the replicas there are, an f-string
        # (not in a `%` or `.format` text, which formats values of its own)
        value = updated_node.value
        # (with 2 asked for, more than one replica is 2: the text is true as it stands)
        if not self.count.isdigit() or int(self.count) <= 2 or updated_node.prefix.lower() not in ("", "u") or (
            re.search(r"[{}%\\]", value)
        ):
            return updated_node
        said = _COUNT_OF_DEVICES.sub(lambda m: "{" + code_of(self.replicas) + "}" if m[0] == self.count else m[0],
                                     value[len(updated_node.prefix):])
        if said == value[len(updated_node.prefix):] or said.count("{") != 1:
            return updated_node
        return cst.parse_expression("f" + said)

    def leave_FormattedStringExpression(
        self, original_node: cst.FormattedStringExpression, updated_node: cst.FormattedStringExpression
    ) -> cst.FormattedStringExpression:
        if self._is_count(updated_node.expression):
            return updated_node.with_changes(expression=self.replicas)
        return updated_node
