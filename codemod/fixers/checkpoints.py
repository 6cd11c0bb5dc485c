"""Replaces `AltModelCheckpoint(path, template)` by `ModelCheckpoint(path)`; reports callbacks that
unwrap the old parallel model (in `set_model`, or `self.model.layers[-2].save(...)` in any method).

AltModelCheckpoint existed only to save the template instead of the parallel model;
after migration `fit` runs on the template, so the plain Keras callback does that job.
"""

from __future__ import annotations

from typing import Final

import libcst as cst
import libcst.matchers as m

from .._tree import Tree, code_of, walk_same_scope
from ..fix_context import FixContext
from ..unwrapping import (
    PERSIST,
    SELF_MODEL,
    HelperUnwrap,
    helper_unwrapping,
    single_output_unwrap,
    unwraps,
    unwraps_any,
)

__all__ = ["CODES", "fix"]

# The finding codes this stage reports (MIGRATION.md, "Finding codes").
CODES: Final = frozenset({"MGPU302", "MGPU303", "MGPU304", "MGPU306"})

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
            saved = f"`{tree.code(alternate)}`" if alternate is not None else "an alternate model it is not given here"
            ctx.report(call, "MGPU303", (
                f"this AltModelCheckpoint saves {saved}, which is neither the template nor the parallel model of a "
                "site the codemod migrated in this file; `fit` the model to save under the strategy and replace this "
                "call with `ModelCheckpoint(filepath, ...)` passed to that `fit`."
            ))
    if ctx.sites or ctx.helpers:
        _report_set_model_swaps(ctx)
    _report_callback_unwrapping(ctx)
    _report_parallel_weight_loads(ctx)


def _report_parallel_weight_loads(ctx: FixContext) -> None:
    """`parallel.load_weights(path)` after the call read a file the parallel model wrote, laid out as
    the wrapper (its inputs, slices, the template as one layer, the merge): migrated, the model
    that loads it is the template, whose layout differs (round 50, al18). The rewrite stands (new
    files are written by the model itself); the file already on disk needs converting once."""
    tree = ctx.tree
    for site in ctx.rewritten:
        if site.target is None or site.statement is None:
            continue
        parallel, after = tree.code(site.target), tree.position(site.statement)[0]
        scope = tree.enclosing_scope_node(site.statement)
        for call in tree.all(cst.Call):
            assert isinstance(call, cst.Call)
            if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "load_weights"
                    and tree.code(call.func.value) == parallel and tree.position(call)[0] > after
                    and tree.enclosing_scope_node(call) is scope and call.args):
                continue
            path = tree.code(call.args[0].value)
            ctx.report(call, "MGPU306", (
                f"`{parallel}.load_weights({path})` reads weights the parallel model wrote before the migration; "
                "the migrated model has the template's layout, so that file no longer loads into it. Convert it "
                f"once: `multi_gpu_compat.load_legacy_weights(model, {path})` (multi-gpu-compat), then "
                "`model.save_weights(...)` to a new file, and load that here; weights saved after the migration "
                "load as they are."
            ))


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
                        if (alias.evaluated_alias if alias.asname else alias.evaluated_name) == root.value:
                            return [(code_of(alias.name), root.value if alias.asname else None)]
    return []


def _report_set_model_swaps(ctx: FixContext) -> None:
    """Callbacks whose `set_model` swapped in `model.layers[-2]` now receive the template itself."""
    for function in ctx.tree.all(cst.FunctionDef):
        assert isinstance(function, cst.FunctionDef)
        if function.name.value != "set_model":
            continue
        # one finding for the method: its `isinstance(model.layers[-2], Model)` test and the swap
        # under it are one thing to change (round 53, ao10: reported on both lines)
        found = m.findall(function.body, m.Subscript(value=m.Attribute(attr=m.Name("layers"))))
        # the swap, where it is one
        assigned = {id(a.value) for a in m.findall(function.body, m.Assign()) if isinstance(a, cst.Assign)}
        for subscript in sorted(found, key=lambda node: id(node) not in assigned)[:1]:
            ctx.report(subscript, "MGPU302", (
                f"`{ctx.tree.code(subscript)}` in set_model unwrapped the old parallel model; after migration "
                "the callback receives the trained model itself: use it directly (store `model` as it "
                "is, or use the base callback itself where the swap was all the subclass added)."
            ))


def _report_helper_unwrapping(ctx: FixContext, done: set[int]) -> None:
    """Anywhere else: saving/loading `x.layers[-2]` is the old unwrapping by what it does (a plain
    model's second-to-last layer has no `save`). Occurrences on a migrated parallel model were
    rewritten or reported by the template-recovery fixer already."""
    tree = ctx.tree
    reported = {(f.line, f.col) for f in ctx.findings}
    for node in tree.all_nodes():
        if id(node) in done or id(node) in ctx.plan.nodes or not unwraps_any(node):
            continue
        parent = tree.parent(node)
        if not (isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in PERSIST):
            continue
        if tree.position(node) in reported:
            continue
        code = tree.code(node)
        unwrapped = node.value if isinstance(node, cst.Subscript) else cst.ensure_type(node, cst.Call).func
        held = cst.ensure_type(unwrapped, cst.Attribute).value
        helper = helper_unwrapping(tree, node)
        if helper is not None and _only_given_migrated_models(ctx, helper):
            # `def export(parallel, path): parallel.layers[-2].save(path)`, every call handing it a
            # model the codemod migrated: that model is the template itself now
            ctx.plan.nodes[id(node)] = held.deep_clone()
            continue
        holder = tree.code(held)
        ctx.report(node, "MGPU304", (
            f"`{code}.{parent.attr.value}(...)` unwraps the old parallel model (its template sat at "
            f"`layers[-(outputs + 1)]`); after migration the model trained is the template itself, so this "
            f"reaches one of its layers. Save `{holder}` itself (pass the template here), or use a plain "
            "`ModelCheckpoint(filepath)` on the template's `fit`."
        ))


def _report_callback_unwrapping(ctx: FixContext) -> None:
    """A callback method saving/loading what it dug out of `self.model` (not in `set_model`: MGPU302).

    After migration `fit` runs on the template, so `self.model` IS the template and the old
    unwrapping reaches one of its layers (no `save`: AttributeError at the first checkpoint)."""
    tree = ctx.tree
    done: set[int] = set()
    for function in tree.all(cst.FunctionDef):
        assert isinstance(function, cst.FunctionDef)
        block = tree.parent(function)
        owner = tree.parent(block) if block is not None else None
        if function.name.value == "set_model" or not (isinstance(owner, cst.ClassDef) and _is_callback(owner)):
            continue
        held: set[str] = set()  # `template = self.model.layers[-2]` then `template.save(...)`
        found: list[cst.CSTNode] = []
        for node in walk_same_scope(function.body):
            if not unwraps(node):
                continue
            parent = tree.parent(node)
            if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in PERSIST:
                found.append(node)
            elif (
                isinstance(parent, cst.Assign)
                and len(parent.targets) == 1
                and isinstance(parent.targets[0].target, cst.Name)
            ):
                name = parent.targets[0].target.value
                uses = m.findall(
                    function.body, m.Attribute(value=m.Name(name), attr=m.OneOf(*(m.Name(a) for a in PERSIST)))
                )
                if uses:
                    held.add(name)
                    found.append(node)
        only_migrated = _only_given_to_migrated_fits(ctx, cst.ensure_type(owner, cst.ClassDef))
        for node in found:
            done.add(id(node))
            code = tree.code(node)
            if only_migrated and single_output_unwrap(node):
                # Every instance goes to the `fit` of a model the codemod migrated: `self.model` is
                # that model, the template itself.
                ctx.plan.nodes[id(node)] = SELF_MODEL.deep_clone()
                continue
            ctx.report(node, "MGPU304", (
                f"`{code}` unwrapped the old parallel model to reach the template; after migration `fit` runs "
                f"on the template itself, so `self.model` is the template and `{code}` is one of its layers. "
                f"Use `self.model` instead, or drop this callback and pass a plain `ModelCheckpoint(filepath)` "
                f"to the template's `fit`."
            ))
    _report_helper_unwrapping(ctx, done)


def _only_given_migrated_models(ctx: FixContext, helper: HelperUnwrap) -> bool:
    """Every call of `helper` passes a migrated parallel model for the parameter it unwraps (and
    there is one), and the unwrapping is the one-output template's (`layers[-2]`)."""
    migrated = {id(n) for site in ctx.rewritten for n in ctx.references.get(id(site), [])}
    given = helper.given
    return bool(given) and single_output_unwrap(helper.unwrap) and all(id(g) in migrated for g in given or ())


def _only_given_to_migrated_fits(ctx: FixContext, owner: cst.ClassDef) -> bool:
    """Every `Owner(...)` in this module goes, directly or through one name, into `callbacks=` of a
    `fit` / `fit_generator` of a model the codemod rewrote (and there is at least one)."""
    tree = ctx.tree
    receivers = {tree.code(s.template) for s in ctx.rewritten if s.template is not None}
    receivers |= {tree.code(s.target) for s in ctx.rewritten if s.target is not None}
    if not receivers:
        return False
    fed: list[cst.CSTNode] = []  # the `callbacks=` values of migrated fits
    for call in tree.all(cst.Call):
        assert isinstance(call, cst.Call)
        func = call.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in ("fit", "fit_generator")
            and tree.code(func.value) in receivers
        ):
            fed += [a.value for a in call.args if a.keyword is not None and a.keyword.value == "callbacks"]
    fed_names = {n.value for value in fed for n in m.findall(value, m.Name()) if isinstance(n, cst.Name)}
    instances = [
        c for c in tree.all(cst.Call) if isinstance(c, cst.Call) and m.matches(c.func, m.Name(owner.name.value))
    ]
    if not instances:
        return False
    for call in instances:
        if any(any(a is value for a in tree.ancestors(call)) for value in fed):
            continue
        parent = tree.parent(call)
        if (isinstance(parent, cst.Assign) and parent.value is call and len(parent.targets) == 1
                and isinstance(parent.targets[0].target, cst.Name) and parent.targets[0].target.value in fed_names):
            continue
        return False
    return True


_CALLBACK_WORDS = ("Callback", "Checkpoint", "Parallel", "MGPU", "MultiGPU", "MultiGpu")


def _is_callback(node: cst.ClassDef) -> bool:
    """A Keras callback by its bases (`Callback`, `ModelCheckpoint`...) or its name (`ModelCheckpointParallel`)."""
    names = [node.name.value, *(_tail(base.value) for base in node.bases)]
    return any(word in name for name in names for word in _CALLBACK_WORDS)


def _tail(node: cst.BaseExpression) -> str:
    while isinstance(node, cst.Attribute):
        return node.attr.value
    return node.value if isinstance(node, cst.Name) else ""
