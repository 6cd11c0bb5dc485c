"""A kept `if` that now only announces the device count chooses the strategy in its branches.

pyimagesearch's shape, `if G <= 1: print(...); model = build()` / `else: print(...); with
tf.device("/cpu:0"): model = build(); model = multi_gpu_model(model, gpus=G)`, leaves after the
rewrite one `with strategy.scope(): model = build()` and an `if`/`else` of prints; the strategy
line above it then had to read `[:max(G, 1)]` so as not to write the condition twice. A person
chooses the strategy where the script already decides (MIGRATION.md, "House style"):

    if G <= 1:
        print("[INFO] training with 1 GPU...")
        strategy = tf.distribute.get_strategy()
    else:
        print("[INFO] training with {} GPUs...".format(G))
        strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:G])
    with strategy.scope():

Only that exact sequence is folded (strategy line, the `if`/`else` of prints right below it, the
scope right below that), and only when the condition compares the count with a number so that
it is false for one GPU and true for two, or the reverse: which branch is the multi-GPU one is
then known, and `[:G]` there selects what `[:max(G, 1)]` did. core.py runs it on the rewritten module.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence

import libcst as cst

from . import fallbacks
from ._tree import code_of
from .stale_comments import CELL_MARKER

__all__ = ["fold"]

_COMPARE: dict[type[cst.BaseCompOp], Callable[[int, int], bool]] = {
    cst.LessThan: operator.lt, cst.LessThanEqual: operator.le, cst.GreaterThan: operator.gt,
    cst.GreaterThanEqual: operator.ge, cst.Equal: operator.eq, cst.NotEqual: operator.ne,
}


def fold(module: cst.Module) -> cst.Module:
    """`module` with each such strategy line moved into the branches of the `if` below it."""
    return module.visit(_Fold())


class _Fold(cst.CSTTransformer):
    def on_visit(self, node: cst.CSTNode) -> bool:
        # statements only: an expression holds no block (and visiting them all costs a pass)
        return isinstance(node, _BLOCKS)

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        return updated.with_changes(body=_folded(updated.body))

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        body = _folded(updated.body)
        if body and body[0] is not updated.body[0] and isinstance(body[0], cst.If):
            # a block's first statement starts right below its header: the blank lines that set the
            # `if` apart from the layers built above it (which went under the scope) go too (round 64,
            # bk16)
            lines = list(body[0].leading_lines)
            while lines and lines[0].comment is None:
                lines.pop(0)
            body[0] = body[0].with_changes(leading_lines=lines)
        return updated.with_changes(body=body)


_BLOCKS = (cst.Module, cst.IndentedBlock, cst.BaseCompoundStatement, cst.Else, cst.ExceptHandler,
           cst.ExceptStarHandler, cst.Finally)


def _folded(body: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
    out = list(body)
    k = 0
    while k + 2 < len(out):
        replaced = _fold_at(out[k], out[k + 1], out[k + 2])
        if replaced is not None:
            out[k:k + 2] = [replaced]
        k += 1
    return out


def _fold_at(line: cst.BaseStatement, guard: cst.BaseStatement, scope: cst.BaseStatement) -> cst.If | None:
    parts = _strategy_line(line)
    if parts is None or not isinstance(guard, cst.If) or not isinstance(guard.orelse, cst.Else):
        return None
    name, tf, count = parts
    if not (isinstance(scope, cst.With) and len(scope.items) == 1
            and code_of(scope.items[0].item) == f"{name}.scope()"):
        return None
    branches = [guard.body, guard.orelse.body]
    if not all(isinstance(b, cst.IndentedBlock) and b.body and all(fallbacks.message(s) for s in b.body)
               for b in branches):
        return None
    multi_first = _multi_branch_first(guard.test, count)
    if multi_first is None:
        return None
    assert isinstance(line, cst.SimpleStatementLine)
    # the line's own comment paragraph (what the call was for) goes with the multi-GPU line
    own, before = _own_paragraph(line.leading_lines)
    multi = cst.parse_statement(
        f'{name} = {tf}.distribute.MirroredStrategy({tf}.config.list_logical_devices("GPU")[:{count}])\n'
    ).with_changes(leading_lines=own)
    single = cst.parse_statement(f"{name} = {tf}.distribute.get_strategy()\n")
    body = cst.ensure_type(guard.body, cst.IndentedBlock)
    other = cst.ensure_type(guard.orelse.body, cst.IndentedBlock)
    first, second = (multi, single) if multi_first else (single, multi)
    return guard.with_changes(
        leading_lines=[*before, *guard.leading_lines],
        body=body.with_changes(body=[*body.body, first]),
        orelse=guard.orelse.with_changes(body=other.with_changes(body=[*other.body, second])),
    )


def _strategy_line(statement: cst.BaseStatement) -> tuple[str, str, str] | None:
    """(name, tf, count) of
    `name = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:max(count, 1)])`
    (or `[:count]`, a count surely at least 1)."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1
            and isinstance(statement.body[0].targets[0].target, cst.Name)
            and statement.trailing_whitespace.comment is None):
        return None
    assign = statement.body[0]
    text = code_of(assign.value)
    tf = text.split(".distribute.MirroredStrategy(", 1)[0]
    head = f'{tf}.distribute.MirroredStrategy({tf}.config.list_logical_devices("GPU")[:'
    if not (text.startswith(head) and text.endswith("])")) or not tf.isidentifier():
        return None
    count = text[len(head):-2]
    if count.startswith("max(") and count.endswith(", 1)"):  # else the count is surely at least 1
        count = count[len("max("):-len(", 1)")]
    try:
        cst.parse_expression(count)
    except cst.ParserSyntaxError:
        return None
    return code_of(assign.targets[0].target), tf, count


def _multi_branch_first(test: cst.BaseExpression, count: str) -> bool | None:
    """True when `test` holds for two or more GPUs and not for one or none (`G > 1`), False for
    the reverse (`G <= 1`), None when it is anything else."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    target = test.comparisons[0]
    compare = _COMPARE.get(type(target.operator))
    left, right = test.left, target.comparator
    if compare is None:
        return None
    # no GPU must fall where one does (`[:0]` would be every GPU), more than two where two do
    counts = (0, 1, 2, 3)
    if code_of(left) == count and isinstance(right, cst.Integer):
        holds = [compare(n, int(right.value)) for n in counts]
    elif code_of(right) == count and isinstance(left, cst.Integer):
        holds = [compare(int(left.value), n) for n in counts]
    else:
        return None
    if holds == [False, False, True, True]:
        return True
    if holds == [True, True, False, False]:
        return False
    return None


def _own_paragraph(lines: Sequence[cst.EmptyLine]) -> tuple[list[cst.EmptyLine], list[cst.EmptyLine]]:
    """(the comment lines right above a statement, with no blank between; the lines before them)."""
    k = len(lines)
    while k > 0 and lines[k - 1].comment is not None:
        k -= 1
    # an exported notebook's cell marker (`# %%`, `# In[5]:`) and what is above it start the cell:
    # they stay above the `if` (round 52, an14: `# %%` went into the `else:`)
    marks = [i for i in range(k, len(lines)) if CELL_MARKER.match(lines[i].comment.value)]  # type: ignore[union-attr]
    if marks:
        k = marks[-1] + 1
    return list(lines[k:]), list(lines[:k])
