"""Reports what would still fail at run time once the rewritten sites are gone.

- a call of `multi_gpu_model` with nothing binding the name (its import commented out);
- `multi_gpu_model` imported from the project's own module (a vendored copy, a package-relative
  import), called the way Keras's function is called: the copy is the user's code;
- a copied wrapper class / helper defined in this file with no call site here: it still calls
  `multi_gpu_model`, so importing this module fails without multi-gpu-compat.
"""

from __future__ import annotations

import libcst as cst

from .._tree import dotted_name
from ..recognise import MULTI_GPU_MODEL_NAMES, local_helper_definitions
from .context import FixContext

__all__ = ["fix"]

_NAME = "multi_gpu_model"
_KERAS_KEYWORDS = {"model", "gpus", "cpu_merge", "cpu_relocation"}
# Where copies of Keras's function live in projects: files named after it or after its Keras module.
_COPY_MODULES = {"multi_gpu_model", "multi_gpu_utils", "training_utils", "multi_gpu_model_utils"}


def fix(ctx: FixContext) -> None:
    tree = ctx.tree
    site_calls = {id(site.call) for site in ctx.sites}
    for call in tree.all(cst.Call):
        assert isinstance(call, cst.Call)
        if id(call) in site_calls or dotted_name(call.func).rsplit(".", 1)[-1] != _NAME:
            continue
        if not _keras_shaped(call):
            continue  # another library's function of that name (`ratios=...`): not ours
        qnames = tree.qualified_names(call.func)
        if isinstance(call.func, cst.Name) and _unbound(ctx, call.func):
            star = _star_import(ctx)
            why = (
                f"is not imported by name in this file (only `from {star} import *` could bring it, and "
                "current Keras has no such function)" if star else
                "is called here but not imported or defined in this file (is its import commented out?)"
            )
            ctx.report(call, "MGPU107", (
                f"`{_NAME}` {why}: this line raises NameError. Build and compile the model under "
                f"`with tf.distribute.MirroredStrategy().scope():` and use it instead of the call's result; "
                f"or import it by name from `keras.utils` and rerun the codemod."
            ))
            continue
        if qnames & MULTI_GPU_MODEL_NAMES:
            continue
        module = _vendored_module(ctx, call.func)
        if module is None:
            continue  # a local def, or another library's function of that name
        ctx.report(call, "MGPU108", (
            f"`{_NAME}` here comes from `{module}`, a module of this project, not from Keras: the codemod "
            f"rewrites only Keras's function. If `{module}` is a copy of Keras's `multi_gpu_model`, build and "
            f"compile the model under `with tf.distribute.MirroredStrategy().scope():`, use the model instead "
            f"of the call's result, then delete the copy."
        ))
    used = {id(helper.origin) for helper in ctx.helpers if helper.sites}
    for name, node in local_helper_definitions(tree):
        if id(node) in used:
            continue
        ctx.report(node, "MGPU402", (
            f"`{name}` (defined here) calls `{_NAME}`, which Keras removed: importing this module fails "
            f"without multi-gpu-compat. The codemod rewrites the `{name}(...)` calls in the files that use it; "
            f"once none is left, delete `{name}`."
        ))


def _keras_shaped(call: cst.Call) -> bool:
    positional = [a for a in call.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    return 1 <= len(positional) + ("model" in keywords) and len(positional) <= 4 and keywords <= _KERAS_KEYWORDS


def _assignments(ctx: FixContext, name: cst.Name) -> list:  # type: ignore[type-arg]
    scope = ctx.tree.scopes.get(name)
    if scope is None:
        return []
    return list(scope[name.value])


def _unbound(ctx: FixContext, name: cst.Name) -> bool:
    scope = ctx.tree.scopes.get(name)
    return scope is not None and not _assignments(ctx, name)


def _vendored_module(ctx: FixContext, func: cst.BaseExpression) -> str | None:
    """The module a copy of Keras's function is imported from: a package-relative import, or a
    module named after Keras's own (`utils/multi_gpu_model.py`, `multi_gpu_utils.py`)."""
    if not isinstance(func, cst.Name):
        return None
    for assignment in _assignments(ctx, func):
        node = getattr(assignment, "node", None)
        if isinstance(node, cst.ImportFrom):
            module = "." * len(node.relative) + (dotted_name(node.module) if node.module else "")
            if node.relative or module.rsplit(".", 1)[-1] in _COPY_MODULES:
                return module
    return None


def _star_import(ctx: FixContext) -> str | None:
    for node in ctx.tree.all(cst.ImportFrom):
        if isinstance(node, cst.ImportFrom) and isinstance(node.names, cst.ImportStar):
            return "." * len(node.relative) + (dotted_name(node.module) if node.module else "")
    return None
