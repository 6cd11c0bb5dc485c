"""The old ways code reached the template inside a parallel model (`layers[-2]`,
`get_layer('model_1')`), and functions of the file that save what they unwrap from a parameter.

Read by the checkpoints fixer (callbacks and helpers that unwrap), strategy_scope (a site whose
parallel model reaches such a helper that other models reach too is left: MGPU122), and, for the
methods that save a model (`SAVES`), template_recovery and plan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

import libcst as cst
import libcst.matchers as m

from ._tree import Tree

__all__ = [
    "PERSIST",
    "SAVES",
    "SELF_MODEL",
    "HelperUnwrap",
    "helper_unwrapping",
    "single_output_unwrap",
    "unwraps",
    "unwraps_any",
]

# What a saved or loaded template was used for: `parallel.layers[-2].save(path)`.
PERSIST: Final = frozenset({"save", "save_weights", "load_weights", "set_weights", "get_weights", "to_json"})
SAVES: Final = frozenset({"save", "save_weights"})  # the methods that write a model to disk
SELF_MODEL: Final = cst.Attribute(value=cst.Name("self"), attr=cst.Name("model"))
_SELF_MODEL = m.Attribute(value=m.Name("self"), attr=m.Name("model"))
_WRAPPER_LAYER_NAME = re.compile(r"^model(_\d+)?$")


def unwraps(node: cst.CSTNode) -> bool:
    """`self.model.layers[-2]`, `self.model.layers[-(n + 1)]` or `self.model.get_layer('model_1')`:
    the old ways a callback reached the template inside the parallel model."""
    if isinstance(node, cst.Subscript) and m.matches(
        node, m.Subscript(value=m.Attribute(value=_SELF_MODEL, attr=m.Name("layers")))
    ):
        index = node.slice[0].slice if len(node.slice) == 1 else None
        value = index.value if isinstance(index, cst.Index) else None
        return isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus) and not (
            isinstance(value.expression, cst.Integer) and value.expression.value == "1")
    if isinstance(node, cst.Call) and m.matches(
        node, m.Call(func=m.Attribute(value=_SELF_MODEL, attr=m.Name("get_layer")))
    ):
        args = node.args
        return len(args) == 1 and isinstance(args[0].value, cst.SimpleString) and bool(
            _WRAPPER_LAYER_NAME.match(str(args[0].value.evaluated_value)))
    return False


def unwraps_any(node: cst.CSTNode) -> bool:
    """`x.layers[-2]` / `x.layers[-(n + 1)]` / `x.get_layer('model_1')` on any model expression."""
    if isinstance(node, cst.Subscript) and m.matches(node.value, m.Attribute(attr=m.Name("layers"))):
        return unwraps(node.with_changes(value=node.value.with_changes(value=SELF_MODEL)))
    if isinstance(node, cst.Call) and m.matches(node.func, m.Attribute(attr=m.Name("get_layer"))):
        return unwraps(node.with_changes(func=node.func.with_changes(value=SELF_MODEL)))
    return False


def single_output_unwrap(node: cst.CSTNode) -> bool:
    """`layers[-2]` or `get_layer('model_N')`: the template of a one-output model, as the
    template-recovery fixer reads `parallel.layers[-2]`; `-(self.num_outputs + 1)` depends on a value."""
    if isinstance(node, cst.Call):
        return True
    index = node.slice[0].slice if isinstance(node, cst.Subscript) and len(node.slice) == 1 else None
    value = index.value if isinstance(index, cst.Index) else None
    return (
        isinstance(value, cst.UnaryOperation)
        and isinstance(value.expression, cst.Integer)
        and value.expression.value == "2"
    )


@dataclass(frozen=True)
class HelperUnwrap:
    """A function of the file (not a method) saving what it unwraps from one of its parameters."""

    function: cst.FunctionDef
    parameter: str
    unwrap: cst.CSTNode  # `parallel.layers[-2]`, whose `.save(...)` follows
    # What each call of the function passes for the parameter, in source order; None when the
    # function's name is also used otherwise (handed on, stored), or a call's argument is unknown.
    given: list[cst.BaseExpression] | None


def helper_unwrapping(tree: Tree, node: cst.CSTNode) -> HelperUnwrap | None:
    """`node` is an unwrapping (see `unwraps_any`) whose result is saved or loaded, on a parameter
    of a function of this file (not a method) that nothing else in it binds."""
    parent = tree.parent(node)
    if not (unwraps_any(node) and isinstance(parent, cst.Attribute) and parent.value is node
            and parent.attr.value in PERSIST):
        return None
    unwrapped = node.value if isinstance(node, cst.Subscript) else cst.ensure_type(node, cst.Call).func
    held = cst.ensure_type(unwrapped, cst.Attribute).value
    if not isinstance(held, cst.Name):
        return None
    function = next((a for a in tree.ancestors(node) if isinstance(a, cst.FunctionDef)), None)
    block = tree.parent(function) if function is not None else None
    if function is None or block is None or isinstance(tree.parent(block), cst.ClassDef):
        return None  # (a method: `self` and its callers are another matter)
    params = [*function.params.posonly_params, *function.params.params]
    index = next((i for i, p in enumerate(params) if p.name.value == held.value), None)
    scope = tree.scopes.get(held)
    if index is None or scope is None or len(list(scope[held.value])) != 1:
        return None
    return HelperUnwrap(function, held.value, node, _given(tree, function, index, held.value))


def _given(tree: Tree, function: cst.FunctionDef, index: int, parameter: str) -> list[cst.BaseExpression] | None:
    outer = tree.scopes.get(function.name)
    uses = [a.node for b in (outer[function.name.value] if outer is not None else ()) for a in b.references]
    given: list[cst.BaseExpression] = []
    for use in sorted(uses, key=tree.order):
        call = tree.parent(use)
        if not (isinstance(call, cst.Call) and call.func is use) or any(a.star for a in call.args):
            return None  # (handed on, not called, or a starred argument: who knows what it is given)
        found = [a.value for a in call.args if a.keyword is not None and a.keyword.value == parameter]
        positional = [a for a in call.args if a.keyword is None]
        found += [positional[index].value] if index < len(positional) else []
        if len(found) != 1:
            return None
        given.append(found[0])
    return given
