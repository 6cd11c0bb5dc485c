"""Replaces `AltModelCheckpoint(path, template)` by `ModelCheckpoint(path)`; reports set_model swaps.

AltModelCheckpoint existed only to save the template instead of the parallel model;
after migration `fit` runs on the template, so the plain Keras callback does that job.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from .._tree import Tree
from .context import FixContext

__all__ = ["fix"]

_ALT_MODULES = {
    "alt_model_checkpoint": "keras.callbacks",
    "alt_model_checkpoint.keras": "keras.callbacks",
    "alt_model_checkpoint.tensorflow": "tensorflow.keras.callbacks",
}


def fix(ctx: FixContext) -> None:
    tree = ctx.tree
    templates = {tree.code(s.template) for s in ctx.rewritten if s.template is not None}
    parallels = {tree.code(s.target) for s in ctx.rewritten if s.target is not None}
    for call in tree.all(cst.Call):
        assert isinstance(call, cst.Call)
        module = _alt_checkpoint_module(tree, call)
        if module is None:
            continue
        positional = [a for a in call.args if a.keyword is None]
        keywords = [a for a in call.args if a.keyword is not None and a.keyword.value != "alternate_model"]
        alternate = positional[1].value if len(positional) > 1 else next(
            (a.value for a in call.args if a.keyword is not None and a.keyword.value == "alternate_model"), None
        )
        if alternate is not None and tree.code(alternate) in templates | parallels and positional:
            args = [positional[0], *positional[2:], *keywords]
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            new_call = call.with_changes(func=cst.Name("ModelCheckpoint"), args=args)
            ctx.plan.nodes[id(call)] = new_call
            ctx.plan.add_imports.append((_ALT_MODULES[module], "ModelCheckpoint", None))
            for name, asname in _import_names(tree, call):
                ctx.plan.remove_imports.append((module, name, asname))
        else:
            ctx.report(call, "MGPU303", (
                "AltModelCheckpoint saves a model other than the one being fit; after migration fit the "
                "template itself and replace this with `ModelCheckpoint(filepath, ...)`."
            ))
    if ctx.sites or ctx.helpers:
        _report_set_model_swaps(ctx)


def _alt_checkpoint_module(tree: Tree, call: cst.Call) -> str | None:
    for qname in tree.qualified_names(call.func):
        module, _, name = qname.rpartition(".")
        if name == "AltModelCheckpoint" and module in _ALT_MODULES:
            return module
    return None


def _import_names(tree: Tree, call: cst.Call) -> list[tuple[str, str | None]]:
    root = call.func
    if isinstance(root, cst.Name):
        scope = tree.scopes.get(call)
        if scope is not None:
            for assignment in scope[root.value]:
                node = getattr(assignment, "node", None)
                if isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar):
                    for alias in node.names:
                        if (alias.asname.name.value if alias.asname else alias.name.value) == root.value:  # type: ignore[union-attr]
                            return [(cst.Module(body=[]).code_for_node(alias.name), root.value if alias.asname else None)]
    return []


def _report_set_model_swaps(ctx: FixContext) -> None:
    """Callbacks whose `set_model` swapped in `model.layers[-2]` now receive the template itself."""
    for function in (f for f in ctx.tree.all(cst.FunctionDef) if f.name.value == "set_model"):  # type: ignore[attr-defined]
        assert isinstance(function, cst.FunctionDef)
        for subscript in m.findall(function.body, m.Subscript(value=m.Attribute(attr=m.Name("layers")))):
            ctx.report(subscript, "MGPU302", (
                f"`{ctx.tree.code(subscript)}` in set_model unwrapped the old parallel model; after migration "
                "the callback receives the trained model itself: use it directly."
            ))
