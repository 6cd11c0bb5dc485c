"""Which ways of digging the template out of the old parallel wrapper the codemod can follow.

The old wrapper held the template as one layer: `parallel.layers[-2]` (one output),
`parallel.layers[-(n + 1)]` or `layers[-3]` with two outputs seen, `parallel.get_layer('model_1')`
(any name Keras gives a model itself, or `get_layer(model.name)`) and ModelMGPU's `._smodel` all
name it. After migration there is no wrapper, so these become the model itself
(fixers/template_recovery.py). Any other lookup (`layers[0]`, `get_layer('encoder')`) named a
layer of the wrapper the codemod cannot map to the template's own layers: its site is left and
reported (fixers/strategy_scope.py, MGPU301). Read-only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst
import libcst.matchers as m

from ._tree import Tree, dotted_name, walk_same_scope
from .fallbacks import message
from .fix_context import same_scope_targets
from .recognise import Site

__all__ = ["Lookup", "lookups"]

# The names Keras gives a model it names itself: the template, held as one layer of the wrapper.
_TEMPLATE_LAYER_NAME = re.compile(r"^(model|sequential|functional)(_\d+)?$")
# `-2` (one output) or `-(n_outputs + 1)`: the documented ways to reach the template.
_MINUS_TWO = m.UnaryOperation(operator=m.Minus(), expression=m.Integer("2"))
_MINUS_N_PLUS_ONE = m.UnaryOperation(
    operator=m.Minus(),
    expression=m.BinaryOperation(operator=m.Add(), right=m.Integer("1"))
    | m.BinaryOperation(operator=m.Add(), left=m.Integer("1")),
)

@dataclass(frozen=True)
class Lookup:
    """One lookup of a layer in the parallel model: `node` (`parallel.layers[-2]`, the
    `get_layer(...)` call, `parallel._smodel`, or a bare `parallel.layers` walked over), and
    whether it is the template (`replaced`: then `node` becomes the model itself)."""

    name: cst.Name  # the read of the parallel model it starts from
    node: cst.CSTNode
    replaced: bool


def lookups(tree: Tree, site: Site, names: Sequence[cst.Name]) -> list[Lookup]:
    """The template lookups among `names` (reads of the parallel model), in source order."""
    found: list[Lookup] = []
    for name in sorted(names, key=tree.order):
        parent = tree.parent(name)
        if not isinstance(parent, cst.Attribute) or parent.value is not name:
            continue
        outer = tree.parent(parent)
        attr = parent.attr.value
        if attr == "layers" and isinstance(outer, cst.Subscript) and outer.value is parent:
            index = outer.slice[0].slice if len(outer.slice) == 1 else None
            found.append(Lookup(name, outer, isinstance(index, cst.Index) and _template_index(tree, site, index.value)))
        elif attr == "layers" and not _only_printed(tree, parent):
            # a walk over the wrapper's layers (`for layer in parallel.layers: layer.trainable = True`)
            # met the template as one layer: setting its flag left its own layers' flags as they were
            found.append(Lookup(name, parent, False))
        elif attr == "get_layer" and isinstance(outer, cst.Call) and outer.func is parent:
            only = outer.args[0] if len(outer.args) == 1 else None
            if only is not None and only.keyword is not None and only.keyword.value == "index":
                found.append(Lookup(name, outer, _template_index(tree, site, only.value)))
                continue
            by_name = only is not None and (only.keyword is None or only.keyword.value == "name")
            arg = only.value if only is not None and by_name else None
            known = (
                isinstance(arg, cst.SimpleString) and bool(_TEMPLATE_LAYER_NAME.match(str(arg.evaluated_value)))
            ) or _is_template_name(tree, site, arg)
            found.append(Lookup(name, outer, known))
        elif attr == "_smodel":  # ModelMGPU kept the template here
            found.append(Lookup(name, parent, True))
    return found


def _only_printed(tree: Tree, layers: cst.Attribute) -> bool:
    """`print(len(parallel.layers))`, `for layer in parallel.layers: print(layer.name)`: what it
    prints changes with the migration, what trains does not."""
    statement = tree.statement_of(layers)
    if statement is None or message(statement):
        return True
    return (
        isinstance(statement, cst.For)
        and statement.iter is layers
        and statement.orelse is None
        and all(message(s) for s in cst.ensure_type(statement.body, cst.IndentedBlock).body)
    )


def _template_index(tree: Tree, site: Site, index: cst.BaseExpression) -> bool:
    """`-2`, `-(n + 1)`, or `-K` with K - 1 outputs seen: the wrapper's layer that was the template."""
    return m.matches(index, _MINUS_TWO | _MINUS_N_PLUS_ONE) or _minus(index) == _output_count(tree, site) + 1 > 1


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
