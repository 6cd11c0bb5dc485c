"""Reports inference that bypasses MirroredStrategy once the model is migrated.

Inference through `model.output` / `model.input` and a TF1 `Session` or `K.function` runs a
graph no strategy distributes; it cannot be rewritten mechanically and is reported with what to
use instead. (`*_on_batch` calls, which would train or predict wrongly, keep the site from being
rewritten at all: fixers/strategy_scope.py, MGPU203.)
"""

from __future__ import annotations

from typing import Final

import libcst as cst

from .._tree import Tree
from ..batch_calls import uses_after
from ..fix_context import FixContext
from ..recognise import Site

__all__ = ["CODES", "fix"]

# The finding codes this stage reports (MIGRATION.md, "Finding codes").
CODES: Final = frozenset({"MGPU204"})

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
    nodes = uses_after(tree, scope, body, receivers, after)
    for node in nodes:
        if id(node) in seen or not isinstance(node, cst.Attribute):
            continue
        receiver = tree.code(node.value)
        if receiver not in receivers:
            continue
        name = node.attr.value
        if name in _TENSORS and _inside_graph_runner(tree, node):
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
