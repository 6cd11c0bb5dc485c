"""Reports calls whose behaviour changes once the model runs under MirroredStrategy.

`train_on_batch` / `test_on_batch` / `predict_on_batch` on the migrated model: under a strategy
Keras 3 hands every replica the whole batch given (8 inputs predict 16 rows). Inference through
`model.output` / `model.input` and a TF1 `Session` or `K.function` runs a graph no strategy
distributes. Neither can be rewritten mechanically; both are reported with what to use instead.
"""

from __future__ import annotations

import libcst as cst

from .._tree import walk_same_scope
from .context import FixContext

__all__ = ["fix"]

_ON_BATCH = {
    "train_on_batch": "`{model}.fit(x, y, batch_size=len(x), epochs=1, verbose=0)` (one step over the whole batch)",
    "test_on_batch": "`{model}.evaluate(x, y, batch_size=len(x), verbose=0)`",
    "predict_on_batch": "`{model}.predict(x, batch_size=len(x), verbose=0)`",
}
_TENSORS = {"output", "outputs", "input", "inputs"}
_GRAPH_RUNNERS = {"run", "function"}  # `sess.run(...)`, `K.function(...)`


def fix(ctx: FixContext) -> None:
    tree = ctx.tree
    seen: set[int] = set()
    for site in ctx.rewritten:
        if site.template is None:
            continue
        template = tree.code(site.template)
        receivers = {template} | ({tree.code(site.target)} if site.target is not None else set())
        scope = tree.enclosing_scope_node(site.call)
        after = tree.order(site.call)
        body = scope.body if isinstance(scope, cst.FunctionDef) else scope
        for node in walk_same_scope(body):
            if id(node) in seen or not isinstance(node, cst.Attribute) or tree.order(node) < after:
                continue
            receiver = tree.code(node.value)
            if receiver not in receivers:
                continue
            name = node.attr.value
            parent = tree.parent(node)
            if name in _ON_BATCH and isinstance(parent, cst.Call) and parent.func is node:
                seen.add(id(node))
                advice = _ON_BATCH[name].format(model=template)
                ctx.report(parent, "MGPU203", (
                    f"`{receiver}.{name}(...)` runs on `{template}`, which is now built under MirroredStrategy; "
                    f"there Keras 3 gives every replica the whole batch passed to `{name}` (with 2 GPUs, "
                    f"`predict_on_batch` on 8 inputs returns 16 rows). Use {advice} instead."
                ))
            elif name in _TENSORS and _inside_graph_runner(tree, node):
                statement = tree.statement_of(node)
                if id(statement) in seen:
                    continue  # one finding per statement (`sess.run(m.output, {m.input: x})`)
                seen.add(id(statement))
                ctx.report(node, "MGPU204", (
                    f"`{receiver}.{name}` is evaluated through a TF1 Session / `K.function`: that graph runs on "
                    f"one device, outside MirroredStrategy. Use `{template}.predict(x)` (distributed) instead."
                ))


def _inside_graph_runner(tree, node: cst.CSTNode) -> bool:  # type: ignore[no-untyped-def]
    for ancestor in tree.ancestors(node):
        if isinstance(ancestor, cst.Call):
            func = ancestor.func
            name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
            if name in _GRAPH_RUNNERS:
                return True
        if isinstance(ancestor, cst.BaseStatement):
            return False
    return False
