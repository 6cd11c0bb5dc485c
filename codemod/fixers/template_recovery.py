"""Rewrites the template looked up in the parallel model (`layers[-2]`, `get_layer(...)`) to the model itself.

`get_layer('model_1')`, `get_layer('sequential')` and `get_layer(model.name)` (the template not
bound again since) name the template: the wrapper held it as a layer under its own name.

`parallel.layers[-3]` is the template too when the template is seen built with two outputs
(`Model(inp, [a, b])`): the wrapper ended with one merge layer per output.

With MirroredStrategy there is no wrapper model: the template is what gets trained, so
the old ways of digging it out of the parallel model now point at one of its layers.
"""

from __future__ import annotations

from typing import Final

import re

import libcst as cst
import libcst.matchers as m

from .._tree import Tree, dotted_name, walk_same_scope
from ..fix_context import FixContext, same_scope_targets
from ..recognise import Site

__all__ = ["CODES", "fix"]

# The finding codes this stage reports (MIGRATION.md, "Finding codes").
CODES: Final = frozenset({"MGPU301"})

# The names Keras gives a model it names itself: the template, held as one layer of the wrapper.
_TEMPLATE_LAYER_NAME = re.compile(r"^(model|sequential|functional)(_\d+)?$")
# `-2` (one output) or `-(n_outputs + 1)`: the documented ways to reach the template.
_MINUS_TWO = m.UnaryOperation(operator=m.Minus(), expression=m.Integer("2"))
_MINUS_N_PLUS_ONE = m.UnaryOperation(
    operator=m.Minus(),
    expression=m.BinaryOperation(operator=m.Add(), right=m.Integer("1"))
    | m.BinaryOperation(operator=m.Add(), left=m.Integer("1")),
)


def fix(ctx: FixContext) -> None:
    tree = ctx.tree
    for site in ctx.rewritten:
        template_code = tree.code(site.template) if site.template is not None else "the template"
        for name in ctx.references.get(id(site), []):
            replacement = ctx.plan.nodes.get(id(name), name)
            parent = tree.parent(name)
            if not isinstance(parent, cst.Attribute) or parent.value is not name:
                continue
            outer = tree.parent(parent)
            attr = parent.attr.value
            if attr == "layers" and isinstance(outer, cst.Subscript) and outer.value is parent:
                index = outer.slice[0].slice if len(outer.slice) == 1 else None
                if isinstance(index, cst.Index) and (
                    m.matches(index.value, _MINUS_TWO | _MINUS_N_PLUS_ONE)
                    or _minus(index.value) == _output_count(tree, site) + 1 > 1
                ):
                    ctx.plan.nodes[id(outer)] = replacement.deep_clone()
                else:
                    ctx.report(outer, "MGPU301", (
                        f"`{tree.code(outer)}` dug into the old parallel wrapper (which ended with one merge layer "
                        f"per output, so `layers[-(outputs + 1)]` was the template); the codemod could not match "
                        f"this index to `{template_code}`'s outputs. After migration the trained model is "
                        f"`{template_code}` itself: if this meant the template, use `{template_code}`; otherwise "
                        f"index `{template_code}.layers` directly."
                    ))
            elif attr == "get_layer" and isinstance(outer, cst.Call) and outer.func is parent:
                arg = outer.args[0].value if len(outer.args) == 1 else None
                if (
                    isinstance(arg, cst.SimpleString) and _TEMPLATE_LAYER_NAME.match(str(arg.evaluated_value))
                ) or _is_template_name(tree, site, arg):
                    ctx.plan.nodes[id(outer)] = replacement.deep_clone()
                else:
                    ctx.report(outer, "MGPU301", (
                        f"`{tree.code(outer)}` looked the template up in the old parallel wrapper; if it meant "
                        f"the template, replace it with `{template_code}`."
                    ))
            elif attr == "_smodel":  # ModelMGPU kept the template here
                ctx.plan.nodes[id(parent)] = replacement.deep_clone()


def _is_template_name(tree: Tree, site: Site, arg: cst.BaseExpression | None) -> bool:
    """`template.name`, with the template not bound again after the site: the wrapper held the
    template as its layer of that name."""
    if site.template is None or not (isinstance(arg, cst.Attribute) and arg.attr.value == "name"):
        return False
    template = tree.code(site.template)
    if tree.code(arg.value) != template:
        return False
    scope = tree.enclosing_scope_node(site.call)
    after = tree.order(site.call)
    return not any(
        tree.code(t) == template and tree.order(t) > after for t in same_scope_targets(tree, scope)
    )


def _minus(node: cst.BaseExpression) -> int | None:
    """K for the literal `-K`."""
    if (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and isinstance(node.expression, cst.Integer)
    ):
        return int(node.expression.value)
    return None


def _output_count(tree: Tree, site: Site) -> int:
    """How many outputs the template is built with, when its `Model(inputs, [o1, o2])` call
    (the last one assigned to it before the site, same scope) lists them; else -1 (unknown)."""
    if site.template is None:
        return -1
    template = tree.code(site.template)
    found = -1
    scope = tree.enclosing_scope_node(site.call)
    for node in walk_same_scope(scope.body if isinstance(scope, cst.FunctionDef) else scope):
        if not (isinstance(node, cst.Assign) and tree.order(node) < tree.order(site.call)):
            continue
        if not any(tree.code(t.target) == template for t in node.targets):
            continue
        found = -1
        call = node.value
        if isinstance(call, cst.Call) and dotted_name(call.func).rsplit(".", 1)[-1] == "Model":
            positional = [a.value for a in call.args if a.keyword is None]
            keyword = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
            outputs = positional[1] if len(positional) > 1 else keyword.get("outputs", keyword.get("output"))
            if isinstance(outputs, (cst.List, cst.Tuple)) and not any(
                isinstance(e, cst.StarredElement) for e in outputs.elements
            ):
                found = len(outputs.elements)
    return found
