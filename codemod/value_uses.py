"""`multi_gpu_model` used as a value rather than called: passed (`partial(multi_gpu_model, gpus=2)`),
stored (`wrap = multi_gpu_model if G > 1 else identity`) or tested (`if multi_gpu_model is not None`).

The codemod rewrites calls only. A file that keeps such a use still needs Keras's removed function
after its calls are rewritten (its import stays, and fails on current Keras), so no site in it is
rewritten (MGPU120) and each use is reported (MGPU404).
"""

from __future__ import annotations

import libcst as cst

from ._tree import Tree
from .recognise import MULTI_GPU_MODEL_NAMES

__all__ = ["value_uses"]

_NAME = "multi_gpu_model"


def value_uses(tree: Tree) -> list[cst.CSTNode]:
    """Every read of Keras's `multi_gpu_model` (by name, alias or `module.multi_gpu_model`) that is
    not the callee of a call, in source order."""
    aliases = _aliases(tree)
    found: list[cst.CSTNode] = []
    for node in tree.all_nodes():
        if isinstance(node, cst.Name):
            parent = tree.parent(node)
            if node.value not in aliases or (isinstance(parent, cst.Attribute) and parent.attr is node):
                continue
        elif not (isinstance(node, cst.Attribute) and node.attr.value == _NAME):
            continue
        if _not_a_value_read(tree, node) or not tree.qualified_names(node) & MULTI_GPU_MODEL_NAMES:
            continue
        found.append(node)
    return sorted(found, key=tree.order)


def _aliases(tree: Tree) -> set[str]:
    """The names Keras's function may be read by here: its own, and the `as` names of its imports."""
    names = {_NAME}
    for statement in tree.all(cst.ImportFrom):
        assert isinstance(statement, cst.ImportFrom)
        if not isinstance(statement.names, cst.ImportStar):
            names |= {a.evaluated_alias for a in statement.names if a.evaluated_name == _NAME and a.evaluated_alias}
    return names


def _not_a_value_read(tree: Tree, node: cst.CSTNode) -> bool:
    """The callee of a call, a name being bound or deleted, or part of an import."""
    parent = tree.parent(node)
    if isinstance(parent, cst.Call) and parent.func is node:
        return True
    if isinstance(parent, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.Del)) and getattr(
        parent, "target", None
    ) is node:
        return True
    if isinstance(parent, cst.Arg) and parent.keyword is node:
        return True  # `f(multi_gpu_model=True)`: a keyword's name, not the function
    if isinstance(parent, (cst.NameItem, cst.Param, cst.FunctionDef, cst.ClassDef)):
        return True  # `global multi_gpu_model`, a parameter or a definition of that name
    if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value == _NAME:
        return True  # the `keras.utils` of `keras.utils.multi_gpu_model`: the attribute is the read
    return any(isinstance(a, (cst.Import, cst.ImportFrom)) for a in tree.ancestors(node))
