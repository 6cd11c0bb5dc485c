"""Keras 2's private GPU listing, `K.tensorflow_backend._get_available_gpus()`, in public TensorFlow.

Keras 2.2-2.3 had it; current Keras has no `tensorflow_backend` module (only the shim puts it
back), so migrated code must not call it: not where the script did (fixers/backend_gpus.py), and
not in a condition the rewrite copies into the strategy choice (`if <listing>: strategy = ...`).
`tf.config.list_logical_devices("GPU")` lists the same devices; where the names are read, the
old helper's names.
"""

from __future__ import annotations

import libcst as cst

from ._tree import code_of, dotted_name

__all__ = ["is_listing", "names_read", "public_listing", "with_public_listing"]


def is_listing(call: cst.CSTNode) -> bool:
    """`<anything>.tensorflow_backend._get_available_gpus()`."""
    return (
        isinstance(call, cst.Call) and not call.args
        and dotted_name(call.func).endswith("tensorflow_backend._get_available_gpus")
    )


def names_read(parent: cst.CSTNode | None, grandparent: cst.CSTNode | None) -> bool:
    """False where only the number or the presence of the devices is read: `len(<listing>)`,
    `if <listing>:`, `not <listing>`, `<listing> and ...`."""
    if isinstance(parent, cst.Arg):
        return not (isinstance(grandparent, cst.Call) and dotted_name(grandparent.func) == "len")
    if isinstance(parent, (cst.If, cst.While, cst.BooleanOperation)):
        return False
    return not (isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not))


def public_listing(tf: str, names: bool) -> str:
    devices = f'{tf}.config.list_logical_devices("GPU")'
    return f"[d.name for d in {devices}]" if names else devices


def with_public_listing(condition: str, tf: str) -> str:
    """`condition` (an `if` test) with every listing call replaced."""
    if "_get_available_gpus" not in condition:
        return condition
    try:
        node = cst.parse_expression(condition)
    except cst.ParserSyntaxError:
        return condition
    replaced = node.visit(_Replaced(tf, node))
    assert isinstance(replaced, cst.BaseExpression)
    return code_of(replaced)


class _Replaced(cst.CSTTransformer):
    def __init__(self, tf: str, root: cst.CSTNode) -> None:
        super().__init__()
        self.tf, self.root = tf, root
        self.parents: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.parents.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> cst.CSTNode:  # type: ignore[override]
        self.parents.pop()
        if not is_listing(original_node):
            return updated_node
        if original_node is self.root:
            names = False  # the whole condition: its presence is read
        else:
            parent = self.parents[-1]
            names = names_read(parent, self.parents[-2] if len(self.parents) > 1 else None)
        return cst.parse_expression(public_listing(self.tf, names))
