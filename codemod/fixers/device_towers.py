"""Reports hand-placed GPU towers (`with tf.device('/gpu:N'):` in model code), once per function.

A loop that opens `with tf.device(<gpu of the loop variable>)` each iteration runs the same code
on every GPU: hand-written data parallelism (make_parallel-style batch slicing), MGPU604. One
`/gpu:N` block for everything is plain placement (nothing reported). Blocks on distinct GPUs are
model parallelism, MGPU603: MirroredStrategy (data parallelism) is no replacement, so nothing is
rewritten. Manual placement still works on real GPUs; Keras 3 offers `keras.distribution.ModelParallel`
(layouts, on JAX). A `/cpu:0` template block, or a `/gpu:N` block that only wraps a
`multi_gpu_model` site, is not this (the strategy fixers handle those).
"""

from __future__ import annotations

from typing import Final

import re

import libcst as cst
import libcst.matchers as m

from .._tree import TF_DEVICE, walk_same_scope
from ..fix_context import FixContext

__all__ = ["CODES", "fix", "SECTION"]

# The finding codes this stage reports (MIGRATION.md, "Finding codes").
CODES: Final = frozenset({"MGPU603", "MGPU604"})

SECTION = "Hand-placed GPU towers (model parallelism)"
_GPU = re.compile(r"(^|/)(device:)?gpu(:|$)", re.IGNORECASE)


def _gpu_device_call(ctx: FixContext, statement: cst.With) -> bool:
    for item in statement.items:
        call = item.item
        if not isinstance(call, cst.Call) or not call.args:
            continue
        if not ctx.tree.qualified_names(call.func) & TF_DEVICE:
            continue
        arg = call.args[0].value
        if isinstance(arg, cst.SimpleString) and _GPU.search(str(arg.evaluated_value).strip()):
            return True
        if isinstance(arg, cst.FormattedString) and any(
            isinstance(p, cst.FormattedStringText) and _GPU.search(p.value) for p in arg.parts
        ):
            return True
        if isinstance(arg, (cst.BinaryOperation, cst.Call)) and _GPU.search(ctx.tree.code(arg).strip("'\"")):
            return True  # '/gpu:%d' % i, '/gpu:{}'.format(i)
    return False


def fix(ctx: FixContext) -> None:
    site_calls = {id(site.call) for site in ctx.sites}
    towers: dict[int, list[cst.With]] = {}
    for statement in _withs(ctx):
        if not _gpu_device_call(ctx, statement):
            continue
        calls = [n for n in walk_same_scope(statement.body) if isinstance(n, cst.Call)]
        if any(id(c) in site_calls for c in calls):
            continue  # wraps a multi_gpu_model site: the strategy fixers' business
        if not calls:
            continue  # nothing is built or run there
        if any(id(a) in ctx.plan.deleted or ctx.plan.statements.get(id(a), True) is None
               for a in ctx.tree.ancestors(statement)):
            continue  # inside a copied helper the rewrite deletes (copied_helpers)
        scope = ctx.tree.enclosing_scope_node(statement)
        towers.setdefault(id(scope), []).append(statement)
    for blocks in towers.values():
        looped = [b for b in blocks if _loop_varies_device(ctx, b)]
        if looped:
            _report_replica_loop(ctx, looped[0])
            continue
        if len({ctx.tree.code(b.items[0].item) for b in blocks}) < 2:
            continue  # one device for everything here: placement, not a split of the model
        first = blocks[0]
        lines = sorted({ctx.tree.position(b)[0] for b in blocks})
        where = f"line {lines[0]}" if len(lines) == 1 else "lines " + ", ".join(map(str, lines))
        ctx.report(first, "MGPU603", (
            f"hand-placed GPU devices ({where}) split one model across GPUs (model parallelism); left as it is: "
            "MirroredStrategy is data parallelism and does not replace it. Manual `tf.device` placement still "
            "works on real GPUs (it fails where those GPUs are missing); for Keras 3 on JAX use "
            "`keras.distribution.ModelParallel` with a `LayoutMap`; or drop the placement and train replicas "
            f"under `tf.distribute.MirroredStrategy`. See MIGRATION.md, \"{SECTION}\"."
        ))


def _withs(ctx: FixContext) -> list[cst.With]:
    found = []
    for node in ctx.tree.all_nodes():
        if isinstance(node, cst.With):
            found.append(node)
    found.sort(key=ctx.tree.order)
    return found


def _loop_varies_device(ctx: FixContext, statement: cst.With) -> bool:
    """The `with` sits in a `for` loop whose target names appear in its device expression."""
    device = statement.items[0].item
    used = {n.value for n in m.findall(device, m.Name()) if isinstance(n, cst.Name)}
    for ancestor in ctx.tree.ancestors(statement):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
        if isinstance(ancestor, cst.For):
            targets = {n.value for n in m.findall(ancestor.target, m.Name()) if isinstance(n, cst.Name)}
            if targets & used:
                return True
    return False


def _report_replica_loop(ctx: FixContext, statement: cst.With) -> None:
    line = ctx.tree.position(statement)[0]
    ctx.report(statement, "MGPU604", (
        f"the loop around line {line} opens `{ctx.tree.code(statement.items[0].item)}` once per GPU and runs "
        "the same code on each: hand-written data parallelism (batch slices on towers), what `multi_gpu_model` "
        "did; left as it is. MirroredStrategy replaces it: build and compile the model under "
        "`with tf.distribute.MirroredStrategy().scope():`, train it directly and delete this tower code "
        "(the codemod already rewrites calls of `make_parallel` / `to_multi_gpu` where they are used)."
    ))
