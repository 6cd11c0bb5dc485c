"""A handle the script kept on the template before the wrap took its name goes; its reads read the model.

keras-yolo3's shape, and many scripts' after it:

    template_model = model
    if gpu_num >= 2:
        model = multi_gpu_model(model, gpus=gpu_num)
    ...
    template_model.save_weights(path)

kept the template under a second name because the wrap rebound the first. Migrated, `model` is
the one model and is never rebound, so `template_model = model` only names it twice (rounds 46
and 47: ae01, ae09, and bb19 before them). The alias goes, with the comment lines right above it
(they spoke of the handle: "keep a handle on the single-device model"), and every read of it
reads the template's name, when that provably changes nothing: the alias is bound by that one
plain assignment in a function or a script's module scope (not a class body, never `global` or
`nonlocal`, not importable by another file), the template's name is bound there only before it,
and no scope reading the alias binds the template's name itself. core.py runs it on the rewritten
module, with the names the wrap rebound.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection

import libcst as cst
from libcst.metadata import Assignment, ClassScope, GlobalScope, MetadataWrapper, PositionProvider, ScopeProvider

from ._tree import runs_as_script
from .statement_drops import StatementDrops

__all__ = ["without_aliases"]


def without_aliases(module: cst.Module, original: cst.Module, rebound: Collection[str]) -> cst.Module:
    """`module` less each `alias = template` the wrap of a rebound template's name made necessary."""
    if not rebound or not any(re.search(rf"=\s*{re.escape(name)}\s*(?:#.*)?$", module.code, re.MULTILINE)
                              for name in rebound):
        return module
    tree = ast.parse(module.code)
    declared = {n for node in ast.walk(tree) if isinstance(node, (ast.Global, ast.Nonlocal)) for n in node.names}
    # (a `del handle` renamed would delete the model)
    declared |= {t.id for node in ast.walk(tree) if isinstance(node, ast.Delete) for t in ast.walk(node)
                 if isinstance(t, ast.Name)}
    wrapper = MetadataWrapper(module)
    scopes = wrapper.resolve(ScopeProvider)
    positions = wrapper.resolve(PositionProvider)
    renames: dict[cst.Name, str] = {}
    dropped: set[cst.SimpleStatementLine] = set()
    for statement in _alias_statements(wrapper.module, rebound):
        assign = statement.body[0]
        assert isinstance(assign, cst.Assign)
        alias = cst.ensure_type(assign.targets[0].target, cst.Name)
        template = cst.ensure_type(assign.value, cst.Name)
        scope = scopes.get(alias)
        if scope is None or isinstance(scope, ClassScope) or {alias.value, template.value} & declared:
            continue
        if isinstance(scope, GlobalScope) and not runs_as_script(original):
            continue  # another file may import the alias
        bindings = list(scope.assignments[alias.value])
        if len(bindings) != 1 or not isinstance(bindings[0], Assignment) or bindings[0].node is not alias:
            continue
        line = positions[statement].start.line
        if any(not isinstance(b, Assignment) or positions[b.node].start.line >= line
               for b in scope.assignments[template.value]):
            continue  # the template's name is bound again after the alias (or by a parameter, an import)
        reads = list(bindings[0].references)
        if any(not isinstance(r.node, cst.Name) or (r.scope is not scope and template.value in r.scope.assignments)
               for r in reads):
            continue
        dropped.add(statement)
        renames.update({cst.ensure_type(r.node, cst.Name): template.value for r in reads})
    if not dropped:
        return module
    return wrapper.module.visit(_Drop(dropped, renames))


def _alias_statements(module: cst.Module, rebound: Collection[str]) -> list[cst.SimpleStatementLine]:
    found: list[cst.SimpleStatementLine] = []

    class _Find(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
            if len(node.body) != 1 or not isinstance(assign := node.body[0], cst.Assign) or len(assign.targets) != 1:
                return
            target, value = assign.targets[0].target, assign.value
            if isinstance(target, cst.Name) and isinstance(value, cst.Name) and value.value in rebound and (
                target.value != value.value
            ):
                found.append(node)

    module.visit(_Find())
    return found


class _Drop(StatementDrops):
    def __init__(self, dropped: set[cst.SimpleStatementLine], renames: dict[cst.Name, str]) -> None:
        super().__init__(dropped)
        self.renames = renames

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        name = self.renames.get(original_node)
        return updated_node if name is None else updated_node.with_changes(value=name)
