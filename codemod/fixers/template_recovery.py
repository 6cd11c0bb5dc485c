"""Rewrites `parallel.layers[-2]` / `parallel.get_layer('model_1')` to the model itself.

With MirroredStrategy there is no wrapper model: the template is what gets trained, so
the old ways of digging it out of the parallel model now point at one of its layers.
"""

from __future__ import annotations

import re

import libcst as cst
import libcst.matchers as m

from .context import FixContext

__all__ = ["fix"]

_TEMPLATE_LAYER_NAME = re.compile(r"^model(_\d+)?$")
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
                if isinstance(index, cst.Index) and m.matches(index.value, _MINUS_TWO | _MINUS_N_PLUS_ONE):
                    ctx.plan.nodes[id(outer)] = replacement.deep_clone()
                else:
                    ctx.report(outer, "MGPU301", (
                        f"`{tree.code(outer)}` dug into the old parallel wrapper; after migration the model "
                        f"is `{template_code}` itself: use its own layers (`{template_code}.layers[...]`) or `{template_code}`."
                    ))
            elif attr == "get_layer" and isinstance(outer, cst.Call) and outer.func is parent:
                arg = outer.args[0].value if len(outer.args) == 1 else None
                if isinstance(arg, cst.SimpleString) and _TEMPLATE_LAYER_NAME.match(arg.evaluated_value):
                    ctx.plan.nodes[id(outer)] = replacement.deep_clone()
                else:
                    ctx.report(outer, "MGPU301", (
                        f"`{tree.code(outer)}` looked the template up in the old parallel wrapper; if it meant "
                        f"the template, replace it with `{template_code}`."
                    ))
            elif attr == "_smodel":  # ModelMGPU kept the template here
                ctx.plan.nodes[id(parent)] = replacement.deep_clone()
