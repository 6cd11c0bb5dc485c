"""Drops `multi_gpu_model` imports that became unused and adds `import tensorflow as tf` when missing.

Imports change only through libcst's AddImportsVisitor / RemoveImportsVisitor, which keep
every other import byte-for-byte; a `try: from keras.utils import multi_gpu_model /
except ImportError: ...` pair left empty is removed whole.
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from ..plan import Plan
from ..recognise import MULTI_GPU_MODEL_NAMES
from .context import FixContext

__all__ = ["fix", "finish"]

_MODULES = {name.rsplit(".", 1)[0] for name in MULTI_GPU_MODEL_NAMES}


def fix(ctx: FixContext) -> None:
    if not ctx.rewritten:
        return
    code = cst.Module(body=[]).code_for_node
    for node in _all(ctx.tree.module, (cst.ImportFrom, cst.Import)):
        if isinstance(node, cst.ImportFrom) and node.module is not None and not node.relative:
            module = code(node.module)
            if module in _MODULES and not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    if code(alias.name) == "multi_gpu_model":
                        asname = alias.asname.name.value if alias.asname else None  # type: ignore[union-attr]
                        ctx.plan.remove_imports.append((module, "multi_gpu_model", asname))
        elif isinstance(node, cst.Import):
            for alias in node.names:
                if code(alias.name) in _MODULES and alias.asname is not None:
                    ctx.plan.remove_imports.append((code(alias.name), None, alias.asname.name.value))  # type: ignore[union-attr]


def _all(module: cst.Module, types: tuple[type, ...]) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []

    class _Collect(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, types):
                found.append(node)
            return True

    module.visit(_Collect())
    return found


def finish(module: cst.Module, plan: Plan) -> cst.Module:
    """Applies the import changes to the rewritten module."""
    context = CodemodContext()
    for entry in plan.remove_imports:
        RemoveImportsVisitor.remove_unused_import(context, entry[0], entry[1], entry[2])
    if plan.remove_imports:
        before = module
        module = RemoveImportsVisitor(context).transform_module(module)
        if module is not before:
            module = module.visit(_DropEmptyImportFallbacks())
    if plan.add_imports:
        context = CodemodContext()
        for entry in plan.add_imports:
            AddImportsVisitor.add_needed_import(context, entry[0], entry[1], entry[2])
        module = AddImportsVisitor(context).transform_module(module)
    return module


def _only_pass(body: cst.BaseSuite) -> bool:
    return isinstance(body, cst.IndentedBlock) and all(
        isinstance(s, cst.SimpleStatementLine) and all(isinstance(x, cst.Pass) for x in s.body) for s in body.body
    )


class _DropEmptyImportFallbacks(cst.CSTTransformer):
    """`try: pass / except ImportError: pass` left by removing both halves of an import fallback."""

    def leave_Try(self, original_node: cst.Try, updated_node: cst.Try) -> cst.Try | cst.RemovalSentinel:
        if (
            _only_pass(updated_node.body)
            and updated_node.orelse is None
            and updated_node.finalbody is None
            and all(
                h.type is not None
                and cst.Module(body=[]).code_for_node(h.type) in {"ImportError", "ModuleNotFoundError", "(ImportError, AttributeError)"}
                and _only_pass(h.body)
                for h in updated_node.handlers
            )
        ):
            return cst.RemovalSentinel.REMOVE
        return updated_node
