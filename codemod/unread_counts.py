"""A count of GPUs that only the removed call and its guard read goes, with the listing helper
only it called.

`G = len(get_available_gpus())` fed `multi_gpu_model(model, gpus=G)` and `if G > 1:`; once
`MirroredStrategy()` takes every GPU and the guard is gone, nothing reads `G`, and a reviewer
deletes it and the `device_lib` helper behind it. The same for a count of ids the script holds
(`n_gpu = len(args.gpu_ids.split(","))`, `len(args.gpus)`): reading names has no effect to keep;
and for a literal only the removed call's `cpu_merge=` or `cpu_relocation=` read (`CPU_MERGE = False`).
Only in a file that runs as a script (nothing imports its names), for a name the original read
and the rewritten file reads nowhere, in any scope; the helper only when it is a module-level
`def` whose name says it lists or counts GPUs and nothing else reads it (with the imports only it
read). The comment lines right above a removed statement go with it; the blank lines before them
stay. A statement that is the last of its block, or of a notebook cell, stays. core.py runs it on
the rewritten module, with the original to compare.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any, cast

import libcst as cst

from ._tree import findall, runs_as_script
from .cell_scopes import PLACEHOLDER_PREFIX
from .fixers import imports
from .fixers.copied_helpers import imports_read_by
from .plan import Plan
from .stale_comments import CELL_MARKER
from .strategy_expression import machine_count, machine_query

__all__ = ["without_unread_counts"]


def without_unread_counts(original: cst.Module, new: cst.Module) -> cst.Module:
    """`new` less the machine GPU counts (and their listing helpers) nothing reads any more."""
    if not runs_as_script(original):
        return new
    before, after = _reads(original.code), _reads(new.code)
    if before is None or after is None:
        return new
    counts = _Counts(before - after, _bindings(new.code), _dropped_settings(original))
    new.visit(counts)
    if not counts.found:
        return new
    new = new.visit(_Without(counts.found))
    left = _reads(new.code)
    if left is None:
        return new
    helpers = [
        s for s in new.body if isinstance(s, cst.FunctionDef) and s.name.value in counts.helpers
        and s.name.value not in left and not s.decorators
    ]
    if not helpers:
        return new
    # what only the helper imported goes too (`from tensorflow.python.client import device_lib`)
    removals = [removal for helper in helpers for removal in imports_read_by(new, helper)]
    new = new.visit(_Without({id(helper) for helper in helpers}))
    return imports.finish(new, Plan(remove_imports=removals)) if removals else new


def _reads(code: str) -> set[str] | None:
    """Every name the code reads anywhere (any scope: a local of the same name counts too), and
    every attribute it reads (`self.G` reads a class's `G = len(...)`)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}
    return names | {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}


def _dropped_settings(module: cst.Module) -> set[str]:
    """The names the original passed as `cpu_merge=` / `cpu_relocation=`, arguments the strategy drops."""
    return {
        arg.value.value for call in findall(module, cst.Call) if isinstance(call, cst.Call) for arg in call.args
        if arg.keyword is not None and arg.keyword.value in ("cpu_merge", "cpu_relocation")
        and isinstance(arg.value, cst.Name)
    }


def _bindings(code: str) -> dict[str, int]:
    """How many times each name is bound anywhere in the code (assigned, a target, a parameter...)."""
    counts: dict[str, int] = {}
    for node in ast.walk(ast.parse(code)):
        names = [node.id] if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) else (
            [node.arg] if isinstance(node, ast.arg) else []
        )
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    return counts


class _Counts(cst.CSTVisitor):
    """`G = len(get_available_gpus())` statements binding a name in `unread`."""

    def __init__(self, unread: set[str], bindings: dict[str, int], settings: set[str]) -> None:
        self.unread = unread
        self.bindings = bindings
        self.settings = settings
        self.found: set[int] = set()
        self.helpers: set[str] = set()

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        if len(node.body) != 1 or not isinstance(node.body[0], cst.Assign):
            return False
        assign = node.body[0]
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
            return False
        if assign.targets[0].target.value not in self.unread:
            return False
        name = assign.targets[0].target.value
        # (a literal the old call's `cpu_merge=` read, where it is the name's one binding)
        if machine_count(assign.value) or _count_of_ids(assign.value) or (
            _literal(assign.value) and name in self.settings and self.bindings.get(name) == 1
        ):
            self.found.add(id(node))
            self.helpers |= {
                n.func.value for n in findall(assign.value, cst.Call)
                if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and machine_query(n)
            }
        return False


def _literal(node: cst.BaseExpression) -> bool:
    """`CPU_MERGE = False` that only the removed call's `cpu_merge=` read (round 60, bc12): a
    setting of the old call, dead now."""
    return isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)) or (
        isinstance(node, cst.Name) and node.value in ("True", "False")
    )


def _count_of_ids(node: cst.BaseExpression) -> bool:
    """`len(args.gpus)`, `len(args.gpu_ids.split(","))`, `len(cfg["gpus"])`: a count that only reads
    names, so removing it changes nothing but the name."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len"
            and len(node.args) == 1 and not node.args[0].star):
        return False
    value = node.args[0].value
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "split":
        if not all(isinstance(a.value, cst.SimpleString) and not a.keyword and not a.star for a in value.args):
            return False
        value = value.func.value
    return _read_only(value)


def _read_only(node: cst.BaseExpression) -> bool:
    """A name, an attribute of one, or a string key of one (`args.gpu_ids`, `cfg["gpus"]`)."""
    while True:
        if isinstance(node, cst.Name):
            return True
        if isinstance(node, cst.Attribute):
            node = node.value
        elif (
            isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)
            and isinstance(node.slice[0].slice.value, cst.SimpleString)
        ):
            node = node.value
        else:
            return False


class _Without(cst.CSTTransformer):
    """The statements of `removed` out of their blocks, their blank lines handed on."""

    def __init__(self, removed: set[int]) -> None:
        super().__init__()
        self.removed = removed

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        return updated.with_changes(body=self._body(original.body, updated.body))

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        return updated.with_changes(body=self._body(original.body, updated.body))

    def _body(self, original: Sequence[cst.BaseStatement], updated: Sequence[cst.BaseStatement]) -> list[Any]:
        body: list[Any] = list(updated)  # (statements and compound statements: both have leading_lines)
        out: list[Any] = []
        carried: list[cst.EmptyLine] = []
        for index, (old, statement) in enumerate(zip(original, body)):
            if id(old) in self.removed and not _alone(body, index):
                lines = list(statement.leading_lines)
                while lines and lines[-1].comment is not None:  # its own comments go with it
                    lines.pop()
                # an export's cell marker above it stays, for what follows in the cell
                marker = max((k for k, line in enumerate(lines) if _marker(line)), default=-1)
                carried = [line for k, line in enumerate(lines) if k <= marker or line.comment is None] or carried
                continue
            if carried:
                own = list(statement.leading_lines)
                blanks = 0
                while blanks < len(own) and own[blanks].comment is None:
                    blanks += 1
                if not any(_marker(line) for line in carried):
                    leading = [*carried[blanks:], *own]
                elif not any(_marker(line) for line in own):
                    leading = [*carried, *own[blanks:]]  # the cell goes on: its marker, the blank lines under it
                else:
                    leading = own  # the next cell's marker follows: the emptied cell goes
                statement = statement.with_changes(leading_lines=leading)
                carried = []
            out.append(statement)
        return out


def _marker(line: cst.EmptyLine) -> bool:
    return line.comment is not None and bool(CELL_MARKER.match(line.comment.value))


def _alone(body: list[cst.BaseStatement], index: int) -> bool:
    """The statement is all its block (or its notebook cell) holds."""
    def boundary(k: int) -> bool:
        if k < 0 or k >= len(body):
            return True
        code = cst.Module(body=[cast(Any, body[k]).with_changes(leading_lines=[])]).code
        return code.startswith(PLACEHOLDER_PREFIX)
    return boundary(index - 1) and boundary(index + 1)
