"""Reports calls whose behaviour changes once the model runs under MirroredStrategy.

`train_on_batch` / `test_on_batch` / `predict_on_batch` on the migrated model: under a strategy
Keras 3 hands every replica the whole batch given (8 inputs predict 16 rows). Inference through
`model.output` / `model.input` and a TF1 `Session` or `K.function` runs a graph no strategy
distributes. Neither can be rewritten mechanically; both are reported with what to use instead.
"""

from __future__ import annotations

from typing import Final

import libcst as cst

from .._tree import Tree, walk_same_scope
from ..fix_context import FixContext
from ..recognise import Site

__all__ = ["CODES", "fix"]

# The finding codes this stage reports (MIGRATION.md, "Finding codes").
CODES: Final = frozenset({"MGPU203", "MGPU204"})

_ON_BATCH = {
    "train_on_batch": "`{model}.fit(x, y, batch_size=len(x), epochs=1, verbose=0)` (one step over the whole batch)",
    "test_on_batch": "`{model}.evaluate(x, y, batch_size=len(x), verbose=0)`",
    "predict_on_batch": "`{model}.predict(x, batch_size=len(x), verbose=0)`",
}
# What goes wrong with each, on 2 GPUs.
_EFFECT = {
    "train_on_batch": "with 2 GPUs each step computes on the 8 samples of an 8-sample batch twice",
    "test_on_batch": "with 2 GPUs the 8 samples of an 8-sample batch are evaluated twice",
    "predict_on_batch": "with 2 GPUs, `predict_on_batch` on 8 inputs returns 16 rows",
}
_TENSORS = {"output", "outputs", "input", "inputs"}
_GRAPH_RUNNERS = {"run", "function"}  # `sess.run(...)`, `K.function(...)`


def fix(ctx: FixContext) -> None:
    seen: set[int] = set()
    for site in ctx.rewritten:
        if site.template is None:
            continue
        ctx.current_site = site
        _report_site(ctx, site, seen)
    ctx.current_site = None


def _report_site(ctx: FixContext, site: Site, seen: set[int]) -> None:
    tree = ctx.tree
    assert site.template is not None
    template = tree.code(site.template)
    receivers = {template} | ({tree.code(site.target)} if site.target is not None else set())
    scope = tree.enclosing_scope_node(site.call)
    after = tree.order(site.call)
    body = scope.body if isinstance(scope, cst.FunctionDef) else scope
    _through_functions(ctx, receivers, scope, after, seen)
    nodes = _uses_after(tree, scope, body, receivers, after)
    for node in nodes:
        if id(node) in seen or not isinstance(node, cst.Attribute):
            continue
        receiver = tree.code(node.value)
        if receiver not in receivers:
            continue
        name = node.attr.value
        parent = tree.parent(node)
        if name in _ON_BATCH and isinstance(parent, cst.Call) and parent.func is node:
            seen.add(id(node))
            advice = _ON_BATCH[name].format(model=receiver if receiver.startswith("self.") else template)
            ctx.report(parent, "MGPU203", (
                f"`{receiver}.{name}(...)` runs on `{template}`, which is now built under MirroredStrategy; "
                f"there Keras 3 gives every replica the whole batch passed to `{name}` ({_EFFECT[name]}). "
                f"Use {advice} instead."
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
    tensors = _tensor_names(tree, nodes, receivers)
    for node in nodes:
        if not (isinstance(node, cst.Name) and node.value in tensors and _inside_graph_runner(tree, node)):
            continue
        statement = tree.statement_of(node)
        if id(statement) in seen or isinstance(tree.parent(node), cst.AssignTarget):
            continue
        seen.add(id(statement))
        held = tensors[node.value]
        ctx.report(node, "MGPU204", (
            f"`{node.value}` holds `{tree.code(held)}` (line {tree.position(held)[0]}) and is evaluated here "
            f"through a TF1 Session / `K.function`: that graph runs on one device, outside MirroredStrategy. "
            f"Use `{template}.predict(x)` (distributed) instead."
        ))


def _uses_after(
    tree: Tree, scope: cst.CSTNode, body: cst.CSTNode, receivers: set[str], after: int
) -> list[cst.CSTNode]:
    """The nodes after the site in its function, then, for `self.` receivers, every node of the
    class's other methods (`self.model.train_on_batch` in `step` runs on the migrated model too),
    then the reads of names that hold the model's tensors (`out = model.output`)."""
    nodes = [n for n in walk_same_scope(body) if tree.order(n) >= after]
    if any(r.startswith("self.") for r in receivers) and isinstance(scope, cst.FunctionDef):
        owner = tree.parent(tree.parent(scope) or scope)
        if isinstance(owner, cst.ClassDef):
            for method in owner.body.body:
                if isinstance(method, cst.FunctionDef) and method is not scope:
                    nodes += list(walk_same_scope(method.body))
    return nodes


def _tensor_names(tree: Tree, nodes: list[cst.CSTNode], receivers: set[str]) -> dict[str, cst.Attribute]:
    """`out = model.output`: names bound to the migrated model's tensors, with the read they hold."""
    found: dict[str, cst.Attribute] = {}
    for node in nodes:
        if (
            isinstance(node, cst.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0].target, cst.Name)
            and isinstance(node.value, (cst.Attribute, cst.Subscript))
        ):
            value = node.value.value if isinstance(node.value, cst.Subscript) else node.value
            if (
                isinstance(value, cst.Attribute)
                and value.attr.value in _TENSORS
                and tree.code(value.value) in receivers
            ):
                found[node.targets[0].target.value] = value
    return found


def _through_functions(ctx: FixContext, receivers: set[str], scope: cst.CSTNode, after: int, seen: set[int]) -> None:
    """`train_step(parallel, x, y)` with `def train_step(m, x, y): m.train_on_batch(x, y)` in this
    module: the call inside the function runs on the migrated model too."""
    tree = ctx.tree
    defs = {f.name.value: f for f in tree.all(cst.FunctionDef) if isinstance(f, cst.FunctionDef)}
    body = scope.body if isinstance(scope, cst.FunctionDef) else scope
    for node in walk_same_scope(body):
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and tree.order(node) >= after):
            continue
        function = defs.get(node.func.value)
        if function is None:
            continue
        params = [p.name.value for p in function.params.params]
        for position, arg in enumerate(node.args):
            if arg.keyword is not None or arg.star or position >= len(params) or tree.code(arg.value) not in receivers:
                continue
            for inner in walk_same_scope(function.body):
                if (
                    isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute)
                    and isinstance(inner.func.value, cst.Name) and inner.func.value.value == params[position]
                    and inner.func.attr.value in _ON_BATCH and id(inner) not in seen
                ):
                    seen.add(id(inner))
                    name = inner.func.attr.value
                    ctx.report(inner, "MGPU203", (
                        f"`{params[position]}.{name}(...)` receives `{tree.code(arg.value)}` (line "
                        f"{tree.position(node)[0]}), which is now built under MirroredStrategy; there Keras 3 gives "
                        f"every replica the whole batch passed to `{name}`. Use "
                        f"{_ON_BATCH[name].format(model=params[position])} instead."
                    ))


def _inside_graph_runner(tree: Tree, node: cst.CSTNode) -> bool:
    for ancestor in tree.ancestors(node):
        if isinstance(ancestor, cst.Call):
            func = ancestor.func
            name = (
                func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
            )
            if name in _GRAPH_RUNNERS:
                return True
        if isinstance(ancestor, cst.BaseStatement):
            return False
    return False
