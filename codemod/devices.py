"""Statements that set which devices TensorFlow sees, and calls that only ask which GPUs exist.

The strategy line lists the GPUs, which starts CUDA: a device setting that ran before the
model's construction must still run before that line, or the user's GPU choice is ignored.
A call that only asks for the devices (`len(get_available_gpus())`) creates no variables, so a
GPU count computed with it may move above the strategy line like `n = len(ids)`.
"""

from __future__ import annotations

import weakref

import libcst as cst

from ._tree import Tree, dotted_name, findall, walk_same_scope
from .construction import makes_layers

__all__ = ["device_setting", "device_query", "creates_no_variables", "only_device_work"]

# Last attribute of the calls that change device visibility or TensorFlow's device configuration.
_SETTERS = frozenset({
    "set_visible_devices", "set_memory_growth", "set_logical_device_configuration",
    "set_virtual_device_configuration", "set_soft_device_placement", "set_session", "putenv",
    "set_inter_op_parallelism_threads", "set_intra_op_parallelism_threads",
})
# Last attribute (or name) of the calls that only list devices.
_QUERIES = frozenset({
    "list_local_devices", "list_physical_devices", "list_logical_devices", "get_visible_devices",
    "_get_available_gpus", "is_gpu_available", "is_built_with_cuda", "getenv",
})


def device_setting(statement: cst.CSTNode, tree: Tree | None = None) -> str | None:
    """What in `statement` changes the devices TensorFlow uses (`os.environ["CUDA_VISIBLE_DEVICES"]
    = ...`, `tf.config.set_visible_devices(...)`, `K.set_session(...)`, or, given `tree`, a call of
    a function of this module that does), as source; None if nothing."""
    for node in walk_same_scope(statement):
        if tree is not None and isinstance(node, cst.Call):
            definition = _module_function(tree, node.func)
            if definition is not None and _sets_devices(tree, definition):
                return f"{dotted_name(node.func)}(...)"
        if isinstance(node, (cst.AssignTarget, cst.AugAssign)):
            target = node.target
            if isinstance(target, cst.Subscript) and dotted_name(target.value).endswith("environ"):
                return cst.Module(body=[]).code_for_node(target)
        if isinstance(node, cst.Call):
            func = dotted_name(node.func)
            last = func.rsplit(".", 1)[-1]
            if last in _SETTERS or (func.endswith("environ.update") or func.endswith("environ.setdefault")):
                return f"{func}(...)"
    return None


def device_query(call: cst.Call) -> bool:
    """`tf.config.list_physical_devices("GPU")`, `device_lib.list_local_devices()`, `os.getenv(...)`."""
    return dotted_name(call.func).rsplit(".", 1)[-1] in _QUERIES


def creates_no_variables(tree: Tree, node: cst.CSTNode, depth: int = 2) -> bool:
    """Every call under `node` computes a plain value: a value call (`len`, `np.`...), a device
    query, or a function defined at this module's top level whose own calls are such calls."""
    for call in findall(node, cst.Call):
        if device_query(call) or _setter(call) or not makes_layers(cst.Expr(call.with_changes(args=()))):
            continue
        definition = _module_function(tree, call.func)
        if definition is None or depth == 0 or not _body_plain(tree, definition, depth - 1):
            return False
    return True


def _setter(call: cst.Call) -> bool:
    func = dotted_name(call.func)
    return func.rsplit(".", 1)[-1] in _SETTERS or func.endswith(("environ.update", "environ.setdefault"))


def _body_plain(tree: Tree, definition: cst.FunctionDef, depth: int) -> bool:
    for statement in definition.body.body if isinstance(definition.body, cst.IndentedBlock) else []:
        if not creates_no_variables(tree, statement, depth):
            return False
    return True


# Per parsed module: its top-level functions by name, and whether each sets devices (by name).
_FUNCTIONS: weakref.WeakKeyDictionary[Tree, dict[str, cst.FunctionDef]] = weakref.WeakKeyDictionary()
_SETS_DEVICES: weakref.WeakKeyDictionary[Tree, dict[str, bool]] = weakref.WeakKeyDictionary()


def _module_function(tree: Tree, func: cst.BaseExpression) -> cst.FunctionDef | None:
    if not isinstance(func, cst.Name):
        return None
    functions = _FUNCTIONS.get(tree)
    if functions is None:
        functions = {s.name.value: s for s in tree.module.body if isinstance(s, cst.FunctionDef)}
        _FUNCTIONS[tree] = functions
    return functions.get(func.value)


def _sets_devices(tree: Tree, definition: cst.FunctionDef) -> bool:
    known = _SETS_DEVICES.setdefault(tree, {})
    name = definition.name.value
    if name not in known:
        known[name] = device_setting(definition.body) is not None
    return known[name]


def only_device_work(tree: Tree, statement: cst.CSTNode) -> bool:
    """Every call in `statement` sets or lists devices or computes a plain value: moving it
    above the strategy line creates no variable outside the scope."""
    for call in findall(statement, cst.Call):
        last = dotted_name(call.func).rsplit(".", 1)[-1]
        if last in _SETTERS or device_query(call) or creates_no_variables(tree, cst.Expr(call.with_changes(args=()))):
            continue
        if last in {"ConfigProto", "GPUOptions", "Session", "get_default_graph"} or dotted_name(call.func).endswith(
            ("environ.update", "environ.setdefault")
        ):
            continue
        return False
    return True
