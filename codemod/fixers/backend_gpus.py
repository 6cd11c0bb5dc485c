"""Replaces Keras 2's private GPU listing, `K.tensorflow_backend._get_available_gpus()`, in a file
whose sites were rewritten.

Keras 2.2-2.3 had it; current Keras has no `tensorflow_backend` module, and only the shim put it
back. Once the file no longer calls `multi_gpu_model` the shim is not imported and the line would
raise AttributeError. `tf.config.list_logical_devices("GPU")` lists the same devices (the old helper
read TensorFlow's local devices); its length, all such scripts read, is the same. The backend
import the call went through (`from keras import backend as K`) goes too when nothing else reads it.
"""

from __future__ import annotations

from typing import Final

import libcst as cst

from .._tree import dotted_name
from ..fix_context import FixContext
from ..gpu_listing import is_listing, names_read, public_listing

__all__ = ["CODES", "fix"]

CODES: Final = frozenset[str]()


def fix(ctx: FixContext) -> None:
    if not ctx.rewritten:
        return
    roots: set[str] = set()
    for call in ctx.tree.all(cst.Call):
        if not is_listing(call):
            continue
        assert isinstance(call, cst.Call)
        replaced: cst.CSTNode = _identity_copy(ctx, call) or call
        parent = ctx.tree.parent(replaced)
        names = names_read(parent, ctx.tree.parent(parent) if parent is not None else None)
        ctx.plan.nodes[id(replaced)] = cst.parse_expression(public_listing(ctx.tf_name(), names))
        roots.add(dotted_name(call.func).split(".", 1)[0])
    if roots:
        ctx.plan.remove_imports.extend(_imports_binding(ctx, roots))


def _identity_copy(ctx: FixContext, call: cst.Call) -> cst.ListComp | None:
    """`[x for x in K.tensorflow_backend._get_available_gpus()]`: a plain copy of the listing,
    replaced whole (not left as `[x for x in [d.name for d in ...]]`)."""
    comp_for = ctx.tree.parent(call)
    if not (isinstance(comp_for, cst.CompFor) and comp_for.iter is call and not comp_for.ifs):
        return None
    comprehension = ctx.tree.parent(comp_for)
    if not (isinstance(comprehension, cst.ListComp) and comp_for.inner_for_in is None):
        return None
    element, target = comprehension.elt, comp_for.target
    same = isinstance(element, cst.Name) and isinstance(target, cst.Name) and element.value == target.value
    return comprehension if same and comp_for.asynchronous is None else None


def _imports_binding(ctx: FixContext, names: set[str]) -> list[tuple[str, str | None, str | None]]:
    """The import entries that bind `names` (`from keras import backend as K`, `import keras.backend
    as K`), as the imports stage takes them: it removes each only if the rewritten module no longer
    reads the name."""
    entries: list[tuple[str, str | None, str | None]] = []
    for statement in ctx.tree.all(cst.Import, cst.ImportFrom):
        if isinstance(statement, cst.ImportFrom):
            if isinstance(statement.names, cst.ImportStar) or statement.relative or statement.module is None:
                continue
            module = dotted_name(statement.module)
            for alias in statement.names:
                bound = alias.evaluated_alias or alias.evaluated_name
                if bound in names:
                    entries.append((module, alias.evaluated_name, alias.evaluated_alias))
        elif isinstance(statement, cst.Import):
            for alias in statement.names:
                if alias.evaluated_alias in names:  # `import keras` itself is left alone
                    entries.append((alias.evaluated_name, None, alias.evaluated_alias))
    return entries
