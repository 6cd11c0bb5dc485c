"""Reports copied multi-GPU helpers (`make_parallel`, `to_multi_gpu`, `ModelMGPU`) left unused.

Their call sites are rewritten like `multi_gpu_model`'s; the helper code itself belongs
to the user and is left alone, only its now-unused import is dropped. In a notebook, or a script
(`if __name__ == "__main__":`, or training at module level), the helper is the file's own: one
defined there that nothing reads any more goes whole, with its comments and its `multi_gpu_model` import (left, that
import would stop the file on Keras 3); a documented one's deletion is reported. In a module others may
import, one that calls `multi_gpu_model` goes the same way, always reported (kept, it would stop the
module on Keras 3 for every file importing it); one that does not stays and is reported.
"""

from __future__ import annotations

import re
from typing import Final, Optional

import libcst as cst

from .._tree import code_of, findall, runs_as_script, used_names
from ..fix_context import FixContext, contains
from ..recognise import Helper

__all__ = ["CODES", "fix"]

# The finding codes this stage reports (MIGRATION.md, "Finding codes").
CODES: Final = frozenset({"MGPU401"})


def fix(ctx: FixContext) -> None:
    rewritten = {id(site) for site in ctx.rewritten}
    for helper in ctx.helpers:
        if not helper.sites or not all(id(site) in rewritten for site in helper.sites):
            continue
        origin = helper.origin
        # (in a module others may import, one that calls `multi_gpu_model` goes too: kept, its import
        # would stop the module on Keras 3 for every importer; rounds 63 and 64, bi03, bk03)
        owned = ctx.path.endswith(".ipynb") or runs_as_script(ctx.tree.module) or (
            isinstance(origin, (cst.FunctionDef, cst.ClassDef)) and "multi_gpu_model" in used_names(origin)
        )
        if owned and _unread_definition(ctx, helper):
            # the definition goes whole: its own comments (and the paragraph right above it) with it
            ctx.plan.deleted.add(id(origin))
            # what only the helper imported goes too (`from keras.layers.merge import concatenate`
            # would stop the file on Keras 3); the imports fixer keeps any name still read
            ctx.plan.remove_imports.extend(imports_read_by(ctx.tree.module, origin))
            if isinstance(origin, (cst.FunctionDef, cst.ClassDef)) and (
                _documented(origin) or not (ctx.path.endswith(".ipynb") or runs_as_script(ctx.tree.module))
            ):
                # documented: another file may import it; say so rather than keep what would stop this one
                # why it went: the `multi_gpu_model` import it needed, or (kuza55's slicing towers,
                # which never called it) the strategy doing what it did
                why = (
                    " with its `multi_gpu_model` import: nothing in this file reads it any more, and kept, that "
                    "import would stop the file on Keras 3"
                    if "multi_gpu_model" in used_names(origin) else
                    ": nothing in this file reads it any more, and MirroredStrategy does what it did"
                )
                ctx.report(origin, "MGPU401", (
                    f"`{helper.name}` (defined here{', documented' if _documented(origin) else ''}) was deleted{why}. "
                    "If another file imports "
                    f"`{helper.name}` from here, migrate that file too (its calls are rewritten the same way) or "
                    "restore the helper from version control."
                ))
            continue
        where = "defined here"
        if isinstance(origin, (cst.Import, cst.ImportFrom)):
            module, removals = _import_details(origin, helper)
            ctx.plan.remove_imports.extend(removals)
            where = f"from `{module}`"
        ctx.report(origin, "MGPU401", (
            f"`{helper.name}` ({where}) is no longer used here; once no file uses it, delete the copied "
            "helper (MirroredStrategy replaces it)."
        ))


# an nbconvert export's cell marker (`# In[2]:`) above a `def` says nothing of it
_CELL_MARKER: Final = re.compile(r"^#\s*In\[[\d ]*\]:\s*$")


def _documented(origin: cst.FunctionDef | cst.ClassDef) -> bool:
    """A docstring, or comments in it or right above it other than an exported cell's marker."""
    comments = [*findall(origin.body, cst.Comment), *(line.comment for line in origin.leading_lines if line.comment)]
    return origin.get_docstring() is not None or any(not _CELL_MARKER.match(c.value) for c in comments)


def _unread_definition(ctx: FixContext, helper: Helper) -> bool:
    """A module-level `def`/`class` whose name nothing reads but its rewritten call sites (and the
    definition itself: `super(ModelMGPU, self)`)."""
    origin = helper.origin
    if not isinstance(origin, (cst.FunctionDef, cst.ClassDef)) or not isinstance(ctx.tree.parent(origin), cst.Module):
        return False
    scope = ctx.tree.scopes.get(origin)
    if scope is None:
        return False
    calls = [site.call for site in helper.sites]
    for assignment in scope.assignments[helper.name]:
        if getattr(assignment, "node", None) is not origin:
            return False  # bound again somewhere: not only this definition
        for reference in assignment.references:
            if not any(contains(ctx.tree, owner, reference.node) for owner in [origin, *calls]):
                return False
    return True


_Removal = tuple[str, Optional[str], Optional[str]]  # (module, name, asname), as Plan.remove_imports holds them


def imports_read_by(module: cst.Module, definition: cst.CSTNode) -> list[_Removal]:
    """The module-level imports (outside `try`) of names `definition` reads."""
    read = used_names(definition)
    found: list[_Removal] = []
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.ImportFrom) and not small.relative and not isinstance(small.names, cst.ImportStar):
                source = code_of(small.module) if small.module is not None else ""
                found += [(source, code_of(a.name), a.evaluated_alias) for a in small.names
                          if (a.evaluated_alias or code_of(a.name)) in read]
            elif isinstance(small, cst.Import):
                found += [(code_of(a.name), None, a.evaluated_alias) for a in small.names
                          if (a.evaluated_alias or code_of(a.name).split(".")[0]) in read]
    return found


def _import_details(node: cst.Import | cst.ImportFrom, helper: Helper) -> tuple[str, list[_Removal]]:
    if isinstance(node, cst.ImportFrom):
        module = ("." * len(node.relative)) + (code_of(node.module) if node.module else "")
        # `from utils import multi_gpu` read as `multi_gpu.make_parallel(...)`: the module imported
        receivers = {
            code_of(site.call.func.value) for site in helper.sites if isinstance(site.call.func, cst.Attribute)
        }
        removals: list[_Removal] = []
        if not isinstance(node.names, cst.ImportStar) and not node.relative:
            for alias in node.names:
                asname = alias.evaluated_alias
                removals.append((module, code_of(alias.name), asname))
        through = [r for r in removals if (r[2] or r[1]) in receivers]
        if through:  # (the imports fixer keeps the name if anything else still reads it)
            return f"{module}.{through[0][1]}", through
        return module, [r for r in removals if r[1] == helper.name]
    removals = []
    module = ""
    for alias in node.names:
        module = code_of(alias.name)
        asname = alias.evaluated_alias
        removals.append((module, None, asname))
    return module, removals
