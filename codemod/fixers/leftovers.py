"""Reports what would still fail at run time once the rewritten sites are gone.

- a call of `multi_gpu_model` with nothing binding the name;
- a wrapper-named call (`make_parallel(m, 2)`) that only a star import of this project can bring;
- `multi_gpu_model` imported from the project's own module (a vendored copy, a package-relative
  import), called the way Keras's function is called: the copy is the user's code;
- a copied wrapper class / helper defined in this file with no call site here: it still calls
  `multi_gpu_model`, so importing this module fails without multi-gpu-compat;
- a call of an imported, wrapper-named class or function of this project (`ParallelNet(m, 2)`);
- a call whose `multi_gpu_model` is also bound otherwise (`except ImportError: multi_gpu_model = None`);
- `multi_gpu_model` used as a value, not called (value_uses.py).
"""

from __future__ import annotations

from typing import Final

import re

import libcst as cst
from libcst.metadata import BaseAssignment

from .._tree import Tree, dotted_name
from ..fix_context import FixContext
from ..value_uses import value_uses
from ..recognise import _HELPER_FUNCTIONS, _WRAPPER_NAMES, MULTI_GPU_MODEL_NAMES, local_helper_definitions

__all__ = ["CODES", "fix"]

# The finding codes this stage reports (MIGRATION.md, "Finding codes").
CODES: Final = frozenset({"MGPU107", "MGPU108", "MGPU111", "MGPU402", "MGPU403", "MGPU404"})

_NAME = "multi_gpu_model"
_KERAS_KEYWORDS = {"model", "gpus", "cpu_merge", "cpu_relocation"}
# Where copies of Keras's function live in projects: files named after it or after its Keras module.
_COPY_MODULES = {"multi_gpu_model", "multi_gpu_utils", "training_utils", "multi_gpu_model_utils"}
# Wrapper names whose calls `recognise` rewrites when imported from any module.
_RECOGNISED_ELSEWHERE = _WRAPPER_NAMES | _HELPER_FUNCTIONS
# Names of callbacks and savers that take a model and a path, never a GPU count.
_NOT_WRAPPERS = ("Checkpoint", "Callback", "Saver", "Logger", "checkpoint", "callback")
_WRAPPER_LIKE = re.compile(r"gpu|parallel", re.IGNORECASE)
_GPU_KEYWORDS = {"gpus", "gpu_count", "n_gpus", "ngpus", "num_gpus", "gpu_num"}
# Libraries whose names never hold this project's wrapper.
_LIBRARIES = {
    "keras", "tensorflow", "tf_keras", "torch", "numpy", "sklearn", "joblib", "multiprocessing",
    "concurrent", "horovod", "ray", "dask", "mxnet", "jax", "chainer", "paddle",
}


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
                f"is not imported by name in this file (only `from {star[0]} import *`, line {star[1]}, can bring "
                "it; current Keras has no such function)" if star else
                "is called here but not imported or defined in this file"
            )
            ctx.report(call, "MGPU107", (
                f"`{_NAME}` {why}: this line raises NameError. Build and compile the model under "
                f"`with tf.distribute.MirroredStrategy().scope():` and use it instead of the call's result; "
                f"or import it by name from `keras.utils` and rerun the codemod."
            ))
            continue
        if qnames & MULTI_GPU_MODEL_NAMES:
            if not qnames <= MULTI_GPU_MODEL_NAMES and isinstance(call.func, cst.Name):
                _report_other_binding(ctx, call, call.func)
            continue
        module = _vendored_module(ctx, call.func)
        if module is None:
            continue  # a local def, or another library's function of that name
        ctx.report(call, "MGPU108", (
            f"`{_NAME}` here comes from `{module}`, {_whose(module)}, not from Keras: the codemod "
            f"rewrites only Keras's function. If `{module}` is a copy of Keras's `multi_gpu_model`, build and "
            f"compile the model under `with tf.distribute.MirroredStrategy().scope():`, use the model instead "
            f"of the call's result, then delete the copy."
        ))
    used = {id(helper.origin) for helper in ctx.helpers if helper.sites}
    for name, node in local_helper_definitions(tree):
        if id(node) in used:
            continue
        if name in _RECOGNISED_ELSEWHERE:
            users = (
                f"The codemod rewrites `{name}(...)` calls in the files that import `{name}` by that name; "
                f"once none is left, delete `{name}`."
            )
        else:
            users = (
                f"The codemod reads one file at a time and does not recognise `{name}(...)` calls in the files "
                f"that import it (it reports them as MGPU111): in each, build and compile the model under "
                f"`with tf.distribute.MirroredStrategy().scope():` and use it instead of the `{name}` instance; "
                f"then delete `{name}`."
            )
        ctx.report(node, "MGPU402", (
            f"`{name}` (defined here) calls `{_NAME}`, which Keras removed: importing this module fails "
            f"without multi-gpu-compat. {users}"
        ))
    _report_imported_wrappers(ctx, site_calls)
    for use in value_uses(tree):
        ctx.report(use, "MGPU404", (
            f"`{tree.code(use)}` is used here as a value (passed, stored or tested), not called: the codemod "
            f"rewrites calls only, and this line keeps Keras's removed function, so the file fails on current "
            f"Keras without multi-gpu-compat. Where the value is called, build and compile the model under "
            f"`with tf.distribute.MirroredStrategy().scope():` and use the model instead of the result; then "
            f"remove this use{' (a test of the function is always true once migrated)' if _tested(tree, use) else ''}"
            f" and rerun."
        ))


def _tested(tree: Tree, use: cst.CSTNode) -> bool:
    """`multi_gpu_model is not None`, `if multi_gpu_model:`, `multi_gpu_model and n > 1`: the function tested."""
    parent = tree.parent(use)
    if isinstance(parent, cst.ComparisonTarget):
        parent = tree.parent(parent)
    return isinstance(parent, (cst.Comparison, cst.BooleanOperation, cst.UnaryOperation)) or (
        isinstance(parent, (cst.If, cst.While, cst.IfExp)) and parent.test is use
    )


def _report_other_binding(ctx: FixContext, call: cst.Call, func: cst.Name) -> None:
    """`multi_gpu_model` bound by a Keras import and by something else (`except ImportError:
    multi_gpu_model = None`): which one the call reaches depends on the run, so it is not rewritten."""
    tree = ctx.tree
    nodes = [getattr(a, "node", None) for a in _assignments(ctx, func)]
    others = [n for n in nodes if isinstance(n, cst.CSTNode) and not isinstance(n, (cst.Import, cst.ImportFrom))]
    where = ", ".join(f"line {tree.position(n)[0]}" for n in others)
    ctx.report(call, "MGPU403", (
        f"`{_NAME}` here is Keras's function or the value bound to the name elsewhere ({where or 'another binding'}"
        f"), depending on the run; the codemod rewrites a call only when a Keras import is the name's only binding. "
        f"Remove the other binding (a fallback such as `{_NAME} = None`: once migrated the script needs no "
        f"`{_NAME}`) and rerun, or migrate by hand; the call is left as it is."
    ))


def _report_imported_wrappers(ctx: FixContext, site_calls: set[int]) -> None:
    """`ParallelNet(model, 2)` with `ParallelNet` imported from a module of this project: named
    like a multi-GPU wrapper and called like one (a model, then a GPU count). Whether that module
    calls `multi_gpu_model` is beyond one file: reported, never rewritten."""
    tree = ctx.tree
    for call in tree.all(cst.Call):
        assert isinstance(call, cst.Call)
        if id(call) in site_calls:
            continue
        func = call.func
        if isinstance(func, cst.Name):
            name = func.value
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            name = func.attr.value  # `helpers.ParallelNet(m, 2)`
        else:
            continue
        if isinstance(func, cst.Name) and _unbound(ctx, func) and name != _NAME:
            star = _star_import(ctx, project_only=True)
            if star is not None and (name in _RECOGNISED_ELSEWHERE or _WRAPPER_LIKE.search(name)) and _wrapper_shaped(
                call
            ):
                module, line = star
                ctx.report(call, "MGPU111", (
                    f"`{name}` is not defined or imported by name in this file; only `from {module} import *` "
                    f"(line {line}) can bring it, and it is called like a multi-GPU wrapper (a model, then "
                    f"`{tree.code(call.args[1].value) if len(call.args) > 1 else 'a GPU count'}`). The codemod "
                    f"cannot see whether it calls `{_NAME}`: import `{name}` by name and rerun, or build and compile "
                    f"`{tree.code(call.args[0].value)}` under `with tf.distribute.MirroredStrategy().scope():` and "
                    f"use it instead of the `{name}(...)` result; this call is left as it is."
                ))
            continue
        if name == _NAME or name in _RECOGNISED_ELSEWHERE:
            continue  # recognised as a site, or reported as a vendored copy (MGPU108)
        if not _WRAPPER_LIKE.search(name) or not _wrapper_shaped(call):
            continue
        found = _project_module(ctx, func if isinstance(func, cst.Name) else cst.ensure_type(func.value, cst.Name))
        if found is None:
            continue
        module = found
        count = tree.code(call.args[1].value) if len(call.args) > 1 else "a GPU count"
        ctx.report(call, "MGPU111", (
            f"`{name}` comes from `{module}`, {_whose(module)}, and is called like a multi-GPU wrapper "
            f"(a model, then `{count}`); the codemod cannot see whether it calls `{_NAME}`. If it does, build and "
            f"compile `{tree.code(call.args[0].value)}` under `with tf.distribute.MirroredStrategy().scope():` and "
            f"use it instead of the `{name}(...)` result; this call is left as it is."
        ))


def _whose(module: str) -> str:
    """What a module outside Keras is known to be: a relative import is this project's; an absolute
    one may be an installed package too (`mrcnn.parallel_model`, round 58, az19)."""
    return "a module of this project" if module.startswith(".") else "a module of this project or another package"


def _wrapper_shaped(call: cst.Call) -> bool:
    """A model, then a GPU count: the second argument is not a path or other text
    (`ParallelModelCheckpoint(model, "weights.h5")` is a callback, not a wrapper)."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    if not positional or dotted_name(call.func).endswith(_NOT_WRAPPERS):
        return False
    if len(positional) == 2:
        return not _text_like(positional[1].value)
    return len(positional) == 1 and bool(keywords & _GPU_KEYWORDS)


def _text_like(value: cst.BaseExpression) -> bool:
    """A path or other text: a string, `"{}.h5".format(...)`, `os.path.join(...)`, `str(...)`, `a + ".h5"`.
    Text nested deeper (`len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))`) does not make a count text."""
    if isinstance(value, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
        return True
    if isinstance(value, cst.BinaryOperation):
        return _text_like(value.left) or _text_like(value.right)
    if isinstance(value, cst.Call):
        func = value.func
        if isinstance(func, cst.Name):
            return func.value == "str"
        if isinstance(func, cst.Attribute):
            return func.attr.value in {"join", "format"} or _text_like(func.value)
    return False


def _project_module(ctx: FixContext, func: cst.Name) -> str | None:
    """The module `func` is imported from (or, for `import helpers`, is) when it is not a
    library the codemod knows."""
    for assignment in _assignments(ctx, func):
        node = getattr(assignment, "node", None)
        if isinstance(node, cst.ImportFrom):
            module = "." * len(node.relative) + (dotted_name(node.module) if node.module else "")
            if node.relative or module.split(".", 1)[0] not in _LIBRARIES:
                return module
        if isinstance(node, cst.Import):
            for alias in node.names:
                module = dotted_name(alias.name)
                bound = alias.evaluated_alias if alias.asname else module.split(".", 1)[0]
                if bound == func.value and module.split(".", 1)[0] not in _LIBRARIES:
                    return module
    return None


def _keras_shaped(call: cst.Call) -> bool:
    positional = [a for a in call.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    return 1 <= len(positional) + ("model" in keywords) and len(positional) <= 4 and keywords <= _KERAS_KEYWORDS


def _assignments(ctx: FixContext, name: cst.Name) -> list[BaseAssignment]:
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


def _star_import(ctx: FixContext, project_only: bool = False) -> tuple[str, int] | None:
    """The first `from M import *` (of a module of this project with `project_only`) and its line."""
    for node in ctx.tree.all(cst.ImportFrom):
        if isinstance(node, cst.ImportFrom) and isinstance(node.names, cst.ImportStar):
            module = "." * len(node.relative) + (dotted_name(node.module) if node.module else "")
            if project_only and not node.relative and module.split(".", 1)[0] in _LIBRARIES:
                continue
            return module, ctx.tree.position(node)[0]
    return None
