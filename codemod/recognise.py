"""Which calls are `multi_gpu_model` (or a copied helper / wrapper class), by what they resolve to."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import libcst as cst

from ._tree import Tree, code_of, dotted_name, walk_same_scope

__all__ = ["MULTI_GPU_MODEL_NAMES", "Site", "Helper", "find_sites", "is_method", "local_helper_definitions"]


def _load_table(package: str) -> dict:
    """`LEGACY_MODULES` of `<package>/legacy_modules.py`, without importing `package` itself."""
    found = importlib.util.find_spec(package)  # a top-level name: found, not imported
    if found is None or not found.submodule_search_locations:
        raise ImportError(f"{package} is not installed beside the codemod (one wheel installs both); reinstall "
                          f"multi-gpu-compat. Received: no {package} package on sys.path.")
    path = Path(next(iter(found.submodule_search_locations))) / "legacy_modules.py"
    spec = importlib.util.spec_from_file_location(f"{__name__}._legacy_modules", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.LEGACY_MODULES)

# The modules scripts imported `multi_gpu_model` from: the table the shim's import hook serves
# (`multi_gpu_compat/legacy_modules.py`, data only, installed from the same wheel), so the codemod
# and the hook cannot drift apart. Loaded from its file: importing the shim's package would run
# its `__init__` (which adds the shim's import explainer) in the codemod's process.
_LEGACY_MODULES = _load_table(str(__package__).rsplit("_", 1)[0] + "_compat")
_MODULES = tuple(name for name, entry in _LEGACY_MODULES.items() if entry.get("written"))
# Only these resolve to Keras's function; a module's own `def multi_gpu_model` or
# `lib.multi_gpu_frame.multi_gpu_model` resolves elsewhere and is left alone.
MULTI_GPU_MODEL_NAMES = frozenset(f"{module}.multi_gpu_model" for module in _MODULES)
_HELPER_FUNCTIONS = frozenset({"make_parallel", "to_multi_gpu"})
_HELPER_GPU_KEYWORDS = frozenset({"gpu_count", "n_gpus", "gpus", "ngpus", "num_gpus", "gpu_num"})
_WRAPPER_NAMES = frozenset({"ModelMGPU", "MultiGPUModel", "ModelMultiGPU", "MultiGpuModel"})

Kind = Literal["function", "helper", "wrapper"]


@dataclass
class Helper:
    """A copied helper (`make_parallel`, `ModelMGPU`...) whose call sites the codemod rewrites."""

    name: str
    origin: cst.CSTNode  # the def/class, or the import alias that brings it in
    sites: list[Site] = field(default_factory=list)


@dataclass
class Site:
    """One recognised call, with the pieces the rewrite needs (or why it cannot be rewritten)."""

    call: cst.Call
    kind: Kind
    name: str
    template: cst.BaseExpression | None = None
    gpus: cst.BaseExpression | None = None
    dropped: list[str] = field(default_factory=list)
    statement: cst.SimpleStatementLine | None = None
    target: cst.BaseExpression | None = None  # the parallel model's name; None for `return`
    helper: Helper | None = None
    problem: tuple[str, str] | None = None  # (code, message) when it cannot be rewritten


def _local_wrapper_classes(tree: Tree) -> dict[str, cst.ClassDef]:
    """Classes following the `ModelMGPU` recipe: their instances ARE the parallel model.

    `__init__` passes one of its own parameters straight to `multi_gpu_model` as the template,
    and the class either subclasses a `...Model` or copies the parallel model's `__dict__`.
    A "trainer" class that merely calls `multi_gpu_model` in `__init__` is not one: its call
    is an ordinary site (`self.p = multi_gpu_model(self.m, ...)`).
    """
    found = {}
    for node in tree.all(cst.ClassDef):
        if not isinstance(node, cst.ClassDef):
            continue
        model_base = any(dotted_name(b.value).rsplit(".", 1)[-1].endswith("Model") for b in node.bases)
        for item in node.body.body:
            if not (isinstance(item, cst.FunctionDef) and item.name.value == "__init__"):
                continue
            params = {p.name.value for p in item.params.params[1:]}
            nodes = list(walk_same_scope(item.body))
            copies_dict = any(
                isinstance(n, cst.Attribute) and n.attr.value == "__dict__" for n in nodes
            )
            if not (model_base or copies_dict):
                continue
            for call in nodes:
                if not (isinstance(call, cst.Call) and tree.qualified_names(call.func) & MULTI_GPU_MODEL_NAMES):
                    continue
                first = call.args[0] if call.args and call.args[0].keyword is None else next(
                    (a for a in call.args if a.keyword is not None and a.keyword.value == "model"), None
                )
                if first is not None and isinstance(first.value, cst.Name) and first.value.value in params:
                    found[node.name.value] = node
    return found


def _classify(tree: Tree, call: cst.Call, wrappers: dict[str, cst.ClassDef]) -> tuple[Kind, str] | None:
    qnames = tree.qualified_names(call.func)
    if qnames and qnames <= MULTI_GPU_MODEL_NAMES:
        return "function", "multi_gpu_model"
    if len(qnames) != 1:
        return None
    (qname,) = qnames
    last = qname.rsplit(".", 1)[-1]
    if last in _HELPER_FUNCTIONS and not qname.startswith(("keras.", "tensorflow.")):
        return "helper", last
    if last in wrappers or (last in _WRAPPER_NAMES and "." in qname):
        return "wrapper", last
    return None


def _helper_origin(tree: Tree, call: cst.Call) -> cst.CSTNode:
    """Where the helper a call uses comes from (its def/class or import), else the call itself."""
    scope = tree.scopes.get(call)
    root = call.func
    while isinstance(root, cst.Attribute):
        root = root.value
    if scope is not None and isinstance(root, cst.Name):
        for assignment in scope[root.value]:
            node = getattr(assignment, "node", None)
            if node is not None:
                return node
    return call


def is_method(tree: Tree, node: cst.CSTNode) -> bool:
    """`node` is a `def` directly in a class body: the class's own method, not a copied helper."""
    return isinstance(node, cst.FunctionDef) and isinstance(tree.parent(tree.parent(node) or node), cst.ClassDef)


def _own_method_call(tree: Tree, call: cst.Call) -> bool:
    """`self.make_parallel(...)` where the enclosing class defines `make_parallel`: its own method,
    whose body (with its own `multi_gpu_model` call, a site of its own) decides what it does."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
        return False
    if func.value.value not in {"self", "cls"}:
        return False
    for ancestor in tree.ancestors(call):
        if isinstance(ancestor, cst.ClassDef):
            return any(
                isinstance(item, cst.FunctionDef) and item.name.value == func.attr.value for item in ancestor.body.body
            )
    return False


def local_helper_definitions(tree: Tree) -> list[tuple[str, cst.CSTNode]]:
    """Wrapper classes (the `ModelMGPU` recipe) and `make_parallel` / `to_multi_gpu` defs that
    call `multi_gpu_model` themselves, defined in this module."""
    wrappers = _local_wrapper_classes(tree)
    found: list[tuple[str, cst.CSTNode]] = [(name, node) for name, node in wrappers.items()]
    for node in tree.all(cst.FunctionDef):
        assert isinstance(node, cst.FunctionDef)
        if node.name.value in _HELPER_FUNCTIONS and not is_method(tree, node) and any(
            isinstance(n, cst.Call) and tree.qualified_names(n.func) & MULTI_GPU_MODEL_NAMES
            for n in walk_same_scope(node.body)
        ):
            found.append((node.name.value, node))
    return sorted(found, key=lambda item: tree.order(item[1]))


def find_sites(tree: Tree) -> tuple[list[Site], list[Helper]]:
    """Every recognised call in source order, shaped into a `Site`, plus the helpers they use."""
    wrappers = _local_wrapper_classes(tree)
    helper_defs = {
        id(node)
        for node in tree.all(cst.FunctionDef, cst.ClassDef)
        if isinstance(node, (cst.FunctionDef, cst.ClassDef))
        and (node.name.value in _HELPER_FUNCTIONS or node.name.value in wrappers)
        and not is_method(tree, node)
    }
    helpers: dict[int, Helper] = {}
    sites = []
    for node in tree.all(cst.Call):
        assert isinstance(node, cst.Call)
        kind_name = _classify(tree, node, wrappers)
        if kind_name is None or _own_method_call(tree, node):
            continue
        # The helper's own body (`ModelMGPU.__init__` calling multi_gpu_model) is the helper: left alone.
        if any(id(a) in helper_defs for a in tree.ancestors(node)):
            continue
        kind, name = kind_name
        site = Site(call=node, kind=kind, name=name)
        if kind != "function":
            origin = _helper_origin(tree, node)
            helper = helpers.setdefault(id(origin), Helper(name=name, origin=origin))
            helper.sites.append(site)
            site.helper = helper
        _shape(tree, site)
        sites.append(site)
    return sites, list(helpers.values())


def _shape(tree: Tree, site: Site) -> None:
    """Fills template / gpus / target / statement, or `problem` when the shape is not ours."""
    call = site.call
    positional = [a for a in call.args if a.keyword is None]
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    if any(a.star for a in call.args):
        site.problem = ("MGPU102", f"`{site.name}` is called with */** arguments; rewrite it by hand "
                                   "(see MIGRATION.md).")
        return
    template = positional[0] if positional else None
    template_expr = template.value if template else keywords.pop("model", None)
    if site.kind == "function":
        gpus = positional[1].value if len(positional) > 1 else keywords.pop("gpus", None)
        extra_positional = positional[2:]
        for name in ("cpu_merge", "cpu_relocation"):
            if name in keywords:
                site.dropped.append(f"{name}={tree.code(keywords.pop(name))}")
        for i, arg in enumerate(extra_positional[:2]):
            site.dropped.append(f"{('cpu_merge', 'cpu_relocation')[i]}={tree.code(arg.value)}")
        for i, arg in enumerate(extra_positional[2:], start=5):  # Keras's function takes four
            keywords[f"positional argument {i} (`{tree.code(arg.value)}`)"] = arg.value
    else:
        gpus = positional[1].value if len(positional) > 1 else None
        for key in list(keywords):
            if key in _HELPER_GPU_KEYWORDS and gpus is None:
                gpus = keywords.pop(key)
        if gpus is None:
            site.problem = (
                "MGPU102",
                f"`{site.name}` is called without a GPU count and its default is in the copied helper; "
                "pass the count, or migrate by hand (see MIGRATION.md).",
            )
            return
        for i, arg in enumerate(positional[2:], start=3):
            keywords[f"positional argument {i} (`{tree.code(arg.value)}`)"] = arg.value
    if keywords:
        site.problem = (
            "MGPU102",
            f"`{site.name}` is called with arguments the codemod does not know ({', '.join(sorted(keywords))}); "
            "migrate by hand: build and compile the model under `tf.distribute.MirroredStrategy().scope()`.",
        )
        return
    if gpus is not None and isinstance(gpus, cst.Name) and gpus.value == "None":
        gpus = None
    site.gpus = gpus
    if not isinstance(template_expr, (cst.Name, cst.Attribute)) or not _is_plain_ref(template_expr):
        site.problem = (
            "MGPU102",
            f"the model passed to `{site.name}` is not a variable or `self.` attribute; assign it to a "
            "variable first, or build and compile it under `strategy.scope()` by hand.",
        )
        return
    site.template = template_expr
    _shape_statement(tree, site)


def _is_plain_ref(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Name):
        return True
    return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)


def _conditional(tree: Tree, site: Site, parent: cst.CSTNode | None) -> str | None:
    """MGPU103's advice for `p = multi_gpu_model(m, ...) if C else m`: the `if`/`else` it means."""
    assign = tree.parent(parent) if isinstance(parent, cst.IfExp) and parent.body is site.call else None
    if not (isinstance(parent, cst.IfExp) and isinstance(assign, cst.Assign) and len(assign.targets) == 1):
        return None
    target, test, other = (code_of(assign.targets[0].target), code_of(parent.test), code_of(parent.orelse))
    return (
        f"`{site.name}(...)` is chosen by a conditional expression; write it as `if {test}:` / "
        f"`    {target} = {code_of(site.call)}` / `else:` / `    {target} = {other}` and rerun: the codemod "
        "rewrites that guard."
    )


def _shape_statement(tree: Tree, site: Site) -> None:
    parent = tree.parent(site.call)
    statement = tree.parent(parent) if parent is not None else None
    where = (
        f"`{site.name}(...)` is used inside a larger expression or statement; assign its result to a "
        "variable on its own line, or build and compile the model under `strategy.scope()` by hand."
    )
    if isinstance(parent, cst.Return) and parent.value is site.call:
        site.target = None
    elif (
        isinstance(parent, (cst.Assign, cst.AnnAssign))
        and parent.value is site.call
        and (not isinstance(parent, cst.Assign) or len(parent.targets) == 1)
    ):
        target = parent.targets[0].target if isinstance(parent, cst.Assign) else parent.target
        if not _is_plain_ref(target):
            site.problem = ("MGPU103", where)
            return
        site.target = target
    else:
        site.problem = ("MGPU103", _conditional(tree, site, parent) or where)
        return
    if isinstance(statement, cst.SimpleStatementSuite) and isinstance(tree.parent(statement), (cst.If, cst.Else)):
        site.problem = (
            "MGPU103",
            f"`{site.name}(...)` is on the line of its `if`/`else`; put it on its own line in that block "
            "(`if ...:` then, indented, the assignment) and rerun: the codemod rewrites that guard.",
        )
        return
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        site.problem = (
            "MGPU103",
            f"`{site.name}(...)` shares its line with other statements; put it on its own line and rerun.",
        )
        return
    if not isinstance(tree.parent(statement), (cst.Module, cst.IndentedBlock)):
        site.problem = ("MGPU103", where)
        return
    site.statement = statement
