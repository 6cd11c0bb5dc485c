"""Drops `multi_gpu_model` imports that became unused and adds `import tensorflow as tf` when missing.

Imports change only through libcst's AddImportsVisitor / RemoveImportsVisitor, which keep
every other import byte-for-byte; a `try: from keras.utils import multi_gpu_model /
except ImportError: ...` pair left empty is removed whole.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor
from libcst.codemod.visitors._add_imports import _skip_first
from libcst.matchers import _decorators as _matcher_decorators

from .._tree import Tree, code_of, findall
from ..cell_scopes import PLACEHOLDER_PREFIX
from ..fix_context import FixContext
from ..plan import Plan
from ..recognise import MULTI_GPU_MODEL_NAMES

__all__ = ["PRAGMA", "fix", "finish"]

_Block = TypeVar("_Block", cst.Module, cst.IndentedBlock)
# A comment that is an instruction to a tool about its own line.
PRAGMA = re.compile(r"#\s*(noqa\b|type:\s*ignore|pylint:|pragma:|nosec\b|isort:|fmt:|pyright:|mypy:)", re.IGNORECASE)
_MODULES = {name.rsplit(".", 1)[0] for name in MULTI_GPU_MODEL_NAMES}


def fix(ctx: FixContext) -> None:
    # Every Keras `multi_gpu_model` import is scheduled; `finish` drops only those no longer read
    # (a leftover `import ... as MGM` raises ImportError on Keras 3 even when unused).
    for node in ctx.tree.all(cst.ImportFrom, cst.Import):
        if isinstance(node, cst.ImportFrom) and node.module is not None and not node.relative:
            module = code_of(node.module)
            if isinstance(node.names, cst.ImportStar):
                continue
            for alias in node.names:
                name = code_of(alias.name)
                # `from keras.utils import multi_gpu_model`, `from keras import utils as ku`
                if (module in _MODULES and name == "multi_gpu_model") or f"{module}.{name}" in _MODULES:
                    asname = alias.evaluated_alias
                    ctx.plan.remove_imports.append((module, name, asname))
        elif isinstance(node, cst.Import):
            for alias in node.names:
                if code_of(alias.name) == "keras" and alias.asname is None and any(
                    code_of(site.call.func).startswith("keras.") for site in ctx.sites
                ):
                    # `import keras` for `keras.utils.multi_gpu_model(...)`: unused once that call goes
                    ctx.plan.remove_imports.append(("keras", None, None))
                elif code_of(alias.name) in _MODULES and alias.asname is not None:
                    ctx.plan.remove_imports.append((code_of(alias.name), None, alias.evaluated_alias))
                elif code_of(alias.name) in _MODULES and (
                    "." in code_of(alias.name) or code_of(alias.name) == "multi_gpu_compat"
                ):
                    # `import keras.utils.training_utils` (or this project's `import multi_gpu_compat`):
                    # unused when no `keras.utils.training_utils...` is left
                    ctx.plan.remove_imports.append((code_of(alias.name), None, None))


def finish(module: cst.Module, plan: Plan, tree: Tree | None = None) -> cst.Module:
    """Applies the import changes to the rewritten module: one RemoveImportsVisitor and one
    AddImportsVisitor pass, both scheduled through one CodemodContext.

    Neither runs libcst's metadata machinery: RemoveImportsVisitor's own scope analysis (a deep
    copy and a full ScopeProvider resolution of the whole module) is replaced by a precise
    answer for the few names scheduled (`_still_used`), and both visitors only descend where
    imports can be (statements, never expressions; given the parsed `tree`, only the paths to
    its imports and the nodes the rewrite created).
    """
    prune = _Prune(tree) if tree is not None else None
    blanks_after_imports = _blanks_after_imports(module)[1]
    group = _later_group(module, plan) if plan.add_imports and plan.remove_imports else []
    context = CodemodContext()
    for entry in plan.remove_imports:
        RemoveImportsVisitor.remove_unused_import(context, entry[0], entry[1], entry[2])
    for entry in plan.add_imports:
        AddImportsVisitor.add_needed_import(context, entry[0], entry[1], entry[2])
    if plan.remove_imports:
        names = {entry[2] or entry[1] or entry[0] for entry in plan.remove_imports}
        unused = names - _still_used(module, names)
        if unused:
            before = module
            module = module.visit(_RemoveImports(context, unused, prune))
            if module is not before:
                module = module.visit(_DropEmptyImportFallbacks(prune))
    if plan.add_imports:
        before_add = module
        module = module.visit(_AddImports(context))
        module = _blank_lines_after_added_imports(module, blanks_after_imports)
        module = _placeholders_as_before(before_add, module)
        module = _late_import_pragma(before_add, module)
        if group:
            module = _into_group(before_add, module, group)
        else:
            module = _into_framework_group(before_add, module)
    return module


def _later_group(module: cst.Module, plan: Plan) -> list[str]:
    """The code of the other import lines of the group the removed `multi_gpu_model` import sat in,
    when that group comes after the module's first import block (a notebook's imports cell below a
    cell of helpers, `from keras.utils import multi_gpu_model` among the keras imports there)."""
    body = list(module.body)
    top_end = _section_end(body, 1 if _skip_first(module) else 0)
    removed = {(entry[0], entry[1]) for entry in plan.remove_imports}
    for index in range(top_end, len(body)):
        statement = body[index]
        if not (_is_import_line(statement) and _imports_any(statement, removed)):
            continue
        start = index
        while start > top_end and _is_import_line(body[start - 1]):
            start -= 1
        end = index
        while end + 1 < len(body) and _is_import_line(body[end + 1]):
            end += 1
        return [_bare_code(s) for s in body[start:end + 1] if s is not statement]
    return []


def _imports_any(statement: cst.BaseStatement, removed: set[tuple[str, str | None]]) -> bool:
    small = cst.ensure_type(statement, cst.SimpleStatementLine).body[0]
    if isinstance(small, cst.ImportFrom) and small.module is not None and not isinstance(small.names, cst.ImportStar):
        return any((code_of(small.module), code_of(a.name)) in removed for a in small.names)
    if isinstance(small, cst.Import):
        return any((code_of(a.name), None) in removed for a in small.names)
    return False


def _bare_code(statement: cst.BaseStatement) -> str:
    return code_of(statement.with_changes(leading_lines=[])).strip()


def _into_group(before: cst.Module, after: cst.Module, group: list[str]) -> cst.Module:
    """`after` with the one import line the add put in the first block moved to the end of `group`."""
    existing = {_bare_code(s) for s in before.body if _is_import_line(s)}
    added = [k for k, s in enumerate(after.body) if _is_import_line(s) and _bare_code(s) not in existing]
    if len(added) != 1:
        return after
    body = list(after.body)
    statement = body.pop(added[0])
    if added[0] < len(body) and not _is_import_line(body[added[0]]) and added[0] > 0 and _is_import_line(
        body[added[0] - 1]
    ):
        # the line after the block keeps the blank lines the added import had above it
        follower = body[added[0]]
        body[added[0]] = follower.with_changes(leading_lines=[*statement.leading_lines, *follower.leading_lines])
    last = max((k for k, s in enumerate(body) if k >= added[0] and _is_import_line(s) and _bare_code(s) in group),
               default=None)
    if last is None:
        return after
    body.insert(last + 1, statement.with_changes(leading_lines=[]))
    return after.with_changes(body=body)


# Top-level packages of the import group `import tensorflow as tf` belongs to.
_FRAMEWORK_ROOTS = frozenset({"tensorflow", "keras", "tf_keras"})


def _into_framework_group(before: cst.Module, after: cst.Module) -> cst.Module:
    """`after` with the added import line, which the add put at the end of the import block, moved
    to the end of the earlier blank-line-separated group that imports keras or tensorflow when the
    last group imports neither (the project's own `from sleep_data import load_split`)."""
    existing = {_bare_code(s) for s in before.body if _is_import_line(s)}
    added = [k for k, s in enumerate(after.body) if _is_import_line(s) and _bare_code(s) not in existing]
    if len(added) != 1 or added[0] == 0:
        return after
    body = list(after.body)
    index = added[0]
    start = index - 1  # the first line of the last group, walking up through import lines
    while start > 0 and _is_import_line(body[start - 1]) and not _opens_group(body[start]):
        start -= 1
    if not _is_import_line(body[start]) or start == 0 or any(_imports_framework(s) for s in body[start:index]):
        return after
    end = start  # the last line of the framework group above, within the same import block
    while end > 0 and _is_import_line(body[end - 1]) and not _imports_framework(body[end - 1]):
        end -= 1
    if end == 0 or not _is_import_line(body[end - 1]) or not _imports_framework(body[end - 1]):
        return after
    statement = body.pop(index)
    if index < len(body):  # the line after the block keeps the blank lines the added import had above it
        follower = body[index]
        body[index] = follower.with_changes(leading_lines=[*statement.leading_lines, *follower.leading_lines])
    group_end = end
    while group_end < start and not _opens_group(body[group_end]):
        group_end += 1
    body.insert(group_end, statement.with_changes(leading_lines=[]))
    return after.with_changes(body=body)


def _opens_group(statement: cst.BaseStatement) -> bool:
    """An import line with a blank (or comment) line above it: the first of its group."""
    return isinstance(statement, cst.SimpleStatementLine) and bool(statement.leading_lines)


def _imports_framework(statement: cst.BaseStatement) -> bool:
    small = cst.ensure_type(statement, cst.SimpleStatementLine).body[0]
    if isinstance(small, cst.ImportFrom):
        roots = [code_of(small.module).split(".")[0]] if small.module is not None and not small.relative else []
    else:
        roots = [code_of(a.name).split(".")[0] for a in cst.ensure_type(small, cst.Import).names]
    return any(root in _FRAMEWORK_ROOTS for root in roots)


_LATE_IMPORT = re.compile(r"#\s*noqa(?::[\sA-Z0-9,]*\bE402\b[\sA-Z0-9,]*)?\s*$")


def _late_import_pragma(before: cst.Module, after: cst.Module) -> cst.Module:
    """An added import below code (`os.environ[...] = ...` before the imports) carries the
    `# noqa: E402` its neighbour above carries: the file's own way to keep flake8 quiet there."""
    kept = {id(statement) for statement in before.body}
    body = list(after.body)
    for index, statement in enumerate(body):
        if id(statement) in kept or not _is_import_line(statement) or index == 0:
            continue
        assert isinstance(statement, cst.SimpleStatementLine)
        above = body[index - 1]
        if not _is_import_line(above) or not any(not _is_import_line(s) and not _docstring(s) for s in body[:index]):
            continue
        assert isinstance(above, cst.SimpleStatementLine)
        comment = above.trailing_whitespace.comment
        if comment is None or not _LATE_IMPORT.search(comment.value) or statement.trailing_whitespace.comment:
            continue
        body[index] = statement.with_changes(trailing_whitespace=above.trailing_whitespace)
    return after.with_changes(body=body)


def _docstring(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and isinstance(
        statement.body[0], cst.Expr) and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def _placeholders_as_before(before: cst.Module, after: cst.Module) -> cst.Module:
    """A notebook cell that got the import ends where it ended (libcst puts a blank line after an
    added import, which would open the next cell's boundary statement)."""
    def placeholder(statement: cst.BaseStatement) -> str | None:
        if not isinstance(statement, cst.SimpleStatementLine) or _is_import_line(statement):
            return None
        code = code_of(statement.with_changes(leading_lines=[]))
        return code if code.startswith(PLACEHOLDER_PREFIX) else None

    lines = {key: s.leading_lines for s in before.body if (key := placeholder(s)) is not None}
    if not lines:
        return after
    body = []
    for statement in after.body:
        key = placeholder(statement)
        if key is not None and key in lines and statement.leading_lines != lines[key]:
            statement = statement.with_changes(leading_lines=lines[key])
        body.append(statement)
    return after.with_changes(body=body)


def _section_end(body: Sequence[cst.BaseStatement], start: int) -> int:
    """The index after the module's import block: its imports and the set-up lines between them."""
    end = last = start
    while end < len(body) and (_is_import_line(body[end]) or _is_set_up(body[end])):
        if _is_import_line(body[end]) or isinstance(body[end], cst.Try):
            last = end + 1
        end += 1
    return last


def _blanks_after_imports(module: cst.Module) -> tuple[int, int]:
    """(index, blank lines) of the first statement after the module's import block."""
    index = _section_end(module.body, 1 if _skip_first(module) else 0)
    if index >= len(module.body):
        return index, 0
    lines = module.body[index].leading_lines
    blanks = 0
    while blanks < len(lines) and lines[blanks].comment is None:
        blanks += 1
    return index, blanks


def _blank_lines_after_added_imports(module: cst.Module, wanted: int) -> cst.Module:
    """The code after the import block keeps the blank lines it had there (two before a `def`),
    also when the removed import opened the file and the added one takes its place (libcst
    would leave one)."""
    index, blanks = _blanks_after_imports(module)
    if index == 0 or index >= len(module.body) or blanks >= wanted:
        return module
    statement = module.body[index]
    fixed = statement.with_changes(leading_lines=[*[cst.EmptyLine()] * (wanted - blanks), *statement.leading_lines])
    return module.with_changes(body=[*module.body[:index], fixed, *module.body[index + 1:]])


def _still_used(module: cst.Module, names: set[str]) -> set[str]:
    """Which of `names` the rewritten module still reads: a Name anywhere (any scope, so a local
    shadowing counts too: conservative), a string in `__all__`, or a word of a string annotation."""
    used: set[str] = set()
    strings: list[str] = []
    tree = ast.parse(module.code)
    dotted = {name for name in names if "." in name}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if node.id in names:
                used.add(node.id)
        elif dotted and isinstance(node, ast.Attribute):
            chain = _dotted_chain(node)
            used |= {name for name in dotted if chain == name or chain.startswith(name + ".")}
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
                strings += [
                    c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str)
                ]
        if isinstance(node, (ast.arg, ast.AnnAssign, ast.FunctionDef, ast.AsyncFunctionDef)):
            annotation = (
                node.annotation if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else node.returns
            )
            if annotation is not None:
                strings += [
                    c.value for c in ast.walk(annotation) if isinstance(c, ast.Constant) and isinstance(c.value, str)
                ]
    for text in strings:
        used |= names & set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    return used


def _dotted_chain(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    return ".".join([node.id, *reversed(parts)])


def _statements_only(node: cst.CSTNode) -> bool:
    """Descend into statements and blocks; a simple statement only when it imports something."""
    if isinstance(node, cst.SimpleStatementLine):
        return any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in node.body)
    return not isinstance(node, (cst.BaseExpression, cst.Import, cst.ImportFrom, cst.BaseSmallStatement))


class _Prune:
    """True for a node that may hold an import: a node the rewrite created (not in the parsed
    tree; the parsed tree is alive, so ids cannot be reused), or an original node on the way
    from the module to one of its imports. Untouched subtrees are the parsed nodes themselves."""

    def __init__(self, tree: Tree) -> None:
        self.original = {id(n) for n in tree.all_nodes()}
        self.paths: set[int] = set()
        for node in tree.all(cst.Import, cst.ImportFrom):
            current: cst.CSTNode | None = node
            while current is not None and id(current) not in self.paths:
                self.paths.add(id(current))
                current = tree.parent(current)

    def __call__(self, node: cst.CSTNode) -> bool:
        key = id(node)
        return key in self.paths or key not in self.original


class _AliasesOf:
    """Stands in for RemoveImportsVisitor's scope-analysed set of unused import aliases."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    def __contains__(self, alias: object) -> bool:
        if not isinstance(alias, cst.ImportAlias):
            return False
        if alias.evaluated_alias is not None:
            return alias.evaluated_alias in self.names
        if alias.evaluated_name in self.names:  # `import keras.utils.training_utils`, `from keras import utils`
            return True
        return "." not in alias.evaluated_name and alias.evaluated_name in self.names


_MATCHER_ATTRIBUTES = tuple(
    getattr(_matcher_decorators, name) for name in (
        "VISIT_POSITIVE_MATCHER_ATTR", "VISIT_NEGATIVE_MATCHER_ATTR",
        "CONSTRUCTED_VISIT_MATCHER_ATTR", "CONSTRUCTED_LEAVE_MATCHER_ATTR",
    )
)


class _NoMatcherScan:
    """libcst's matcher transformers look for decorated methods (`@m.visit`, `@m.call_if_inside`)
    by walking `dir(self)` on every instance, about a third of the codemod's time on a corpus.
    The import visitors below and their libcst bases have none (checked once per class): their
    `dir()` then lists nothing, and that walk finds nothing at once."""

    _plain: ClassVar[dict[type, bool]] = {}

    def __dir__(self) -> list[str]:
        cls = type(self)
        plain = _NoMatcherScan._plain.get(cls)
        if plain is None:
            plain = not any(
                hasattr(getattr(cls, name, None), attribute) for name in dir(cls) for attribute in _MATCHER_ATTRIBUTES
            )
            _NoMatcherScan._plain[cls] = plain
        return [] if plain else list(object.__dir__(self))


class _RemoveImports(_NoMatcherScan, RemoveImportsVisitor):
    """RemoveImportsVisitor with its usage analysis answered by `_still_used`."""

    # No provider: `_still_used` answers the usage questions the scope analysis would.
    METADATA_DEPENDENCIES = ()  # type: ignore[misc,assignment]  # libcst's stub: a one-provider tuple

    def __init__(self, context: CodemodContext, unused: set[str], prune: _Prune | None = None) -> None:
        super().__init__(context)
        self._unused_names = unused
        self._prune = prune

    def visit_Module(self, node: cst.Module) -> None:
        self._unused_imports = _AliasesOf(self._unused_names)  # type: ignore[assignment]  # its set, stood in for
        # Marker nodes by id; holding the nodes keeps their ids from being reused by new nodes.
        self._emptied: dict[int, cst.SimpleStatementLine] = {}

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine:
        # A line whose imports all went is kept as a marker until its block is rebuilt, so its
        # blank lines and comments can go to the next statement (libcst would drop them).
        if not updated_node.body and original_node.body:
            marker = updated_node.with_changes(body=[cst.Pass()])
            self._emptied[id(marker)] = marker
            return marker
        return updated_node

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return _hand_on_lines(updated_node, self._emptied, top=True)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.BaseSuite:
        return _hand_on_lines(updated_node, self._emptied, top=False)

    def on_visit(self, node: cst.CSTNode) -> bool:
        return super().on_visit(node) and _statements_only(node) and (self._prune is None or self._prune(node))


def _hand_on_lines(block: _Block, emptied: dict[int, cst.SimpleStatementLine], top: bool) -> _Block:
    """Drops the emptied import lines of `block`, handing their leading lines to what follows:
    comments always; blank lines so that a separation stays (`import os` / blank / removed /
    `import numpy` keeps its blank line) without doubling one, and none at the top of a file."""
    if not any(emptied.get(id(s)) is s for s in block.body):
        return block
    out: list[cst.SimpleStatementLine | cst.BaseCompoundStatement] = []
    carry: list[cst.EmptyLine] = []
    for statement in block.body:
        marker = emptied.get(id(statement))
        if marker is not None and marker is statement:
            carry += list(marker.leading_lines)
            # `import multi_gpu  # why`: its comment spoke of the line that went, and goes too (a
            # pragma, a note naming the helper, round 44, ba13; "# kuza55's helper, lives in utils/"
            # or "# vendored from our utils repo", round 47, af16: left alone, it floated over
            # whatever came next)
            continue
        assert isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
        if carry:
            statement = statement.with_changes(leading_lines=_merge_lines(carry, list(statement.leading_lines)))
            carry = []
        out.append(statement)
    if top and out and not block.header and emptied.get(id(block.body[0])) is block.body[0]:
        first = list(out[0].leading_lines)
        while first and first[0].comment is None:
            first.pop(0)
        out[0] = out[0].with_changes(leading_lines=first)
    if not out:
        if isinstance(block, cst.Module):
            return block.with_changes(body=[], footer=[*carry, *block.footer])
        out = [cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=carry)]
        carry = []
    return block.with_changes(body=out, footer=[*carry, *block.footer])


def _merge_lines(carried: list[cst.EmptyLine], own: list[cst.EmptyLine]) -> list[cst.EmptyLine]:
    if any(line.comment is not None for line in carried):
        return [*carried, *own]
    blank_carried = sum(line.comment is None for line in carried)
    blank_own = sum(line.comment is None for line in own)
    return own if blank_own >= blank_carried or any(line.comment is not None for line in own) else carried


class _AddImports(_NoMatcherScan, AddImportsVisitor):
    """AddImportsVisitor touching only the module's top-level import lines (all it edits)."""

    def visit_Module(self, node: cst.Module) -> None:
        # Its gatherer only reads the imports at the top of the module: hand it just those.
        start = 1 if _skip_first(node) else 0
        end = start
        while end < len(node.body) and _is_import_line(node.body[end]):
            end += 1
        super().visit_Module(node.with_changes(body=node.body[:end + 1]))

    def _split_module(
        self, orig_module: cst.Module, updated_module: cst.Module
    ) -> tuple[list[Any], list[Any], list[Any]]:
        """Where the new import goes: after the module's import block, which runs on through set-up
        lines between imports (`import matplotlib` / `matplotlib.use("agg")` / `import matplotlib.pyplot`)."""
        before, imports, _after = super()._split_module(orig_module, updated_module)
        start = len(before)
        last = max(_section_end(orig_module.body, start), start + len(imports))
        return before, list(updated_module.body[start:last]), list(updated_module.body[last:])

    def on_visit(self, node: cst.CSTNode) -> bool:
        keep = isinstance(node, cst.Module) or (
            isinstance(node, cst.SimpleStatementLine) and _is_import_line(node)
        )
        return super().on_visit(node) and keep


def _is_import_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) > 0 and isinstance(
        statement.body[0], (cst.Import, cst.ImportFrom)
    )


def _is_set_up(statement: cst.CSTNode) -> bool:
    """A line that set-up code puts between imports: `matplotlib.use("agg")`, `sys.path.insert(...)`,
    `os.environ["X"] = "1"`, `warnings.filterwarnings(...)`; or a `try:` importing something."""
    if isinstance(statement, cst.Try):
        body = statement.body
        return isinstance(body, cst.IndentedBlock) and all(_is_import_line(s) for s in body.body) and all(
            isinstance(h.body, cst.IndentedBlock) and all(_is_import_line(s) or _only_pass(h.body) for s in h.body.body)
            for h in statement.handlers
        )
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Name):
            if not small.value.value.startswith(PLACEHOLDER_PREFIX):  # `!pip install ...`, masked
                return False
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            func = small.value.func
            # a notebook's cell boundary or IPython line (`!pip install ...`) between its imports
            placeholder = isinstance(func, cst.Name) and func.value.startswith(PLACEHOLDER_PREFIX)
            if not isinstance(func, cst.Attribute) and not placeholder and not _plain_calls(small.value):
                return False
        elif isinstance(small, cst.Assign):
            # `os.environ["CUDA_VISIBLE_DEVICES"] = GPUS`, or a setting it reads: `GPUS = "0,1"`
            if not all(
                (isinstance(t.target, cst.Subscript) and code_of(t.target.value) == "os.environ")
                or (isinstance(t.target, cst.Name) and _plain_calls(small.value))
                for t in small.targets
            ):
                return False
        else:
            return False
    return True


_PLAIN_BUILTINS = frozenset({"print", "len", "int", "str", "float", "bool"})


def _plain_calls(value: cst.BaseExpression) -> bool:
    """A constant or a value computed only with builtins and methods (`len(GPUS.split(","))`,
    `print("n_gpu =", n)`): set-up a script may do between its imports, which builds nothing."""
    for node in findall(value, cst.Call):
        func = node.func
        if not (isinstance(func, cst.Attribute) or (isinstance(func, cst.Name) and func.value in _PLAIN_BUILTINS)):
            return False
    return not findall(value, (cst.Lambda, cst.Await, cst.Yield))


def _only_pass(body: cst.BaseSuite) -> bool:
    return isinstance(body, cst.IndentedBlock) and all(
        isinstance(s, cst.SimpleStatementLine) and all(isinstance(x, cst.Pass) for x in s.body) for s in body.body
    )


class _DropEmptyImportFallbacks(cst.CSTTransformer):
    """`try: pass / except ImportError: pass` left by removing both halves of an import fallback."""

    def __init__(self, prune: _Prune | None = None) -> None:
        super().__init__()
        self._prune = prune
        self._removed: set[int] = set()

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        # The file opened with the removed `try`: it must not now open with the blank line after it.
        if original_node.body and id(original_node.body[0]) in self._removed and updated_node.body:
            first = updated_node.body[0]
            lines = list(first.leading_lines)
            while lines and lines[0].comment is None:
                lines.pop(0)
            return updated_node.with_changes(body=[first.with_changes(leading_lines=lines), *updated_node.body[1:]])
        return updated_node

    def on_visit(self, node: cst.CSTNode) -> bool:
        return isinstance(node, (cst.Module, cst.BaseCompoundStatement, cst.BaseSuite, cst.Else,
                                 cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally)) and (
            self._prune is None or self._prune(node))

    def leave_Try(self, original_node: cst.Try, updated_node: cst.Try) -> cst.Try | cst.RemovalSentinel:
        if (
            _only_pass(updated_node.body)
            and updated_node.orelse is None
            and updated_node.finalbody is None
            and all(
                h.type is not None
                and code_of(h.type) in {"ImportError", "ModuleNotFoundError", "(ImportError, AttributeError)"}
                and _only_pass(h.body)
                for h in updated_node.handlers
            )
        ):
            self._removed.add(id(original_node))
            return cst.RemovalSentinel.REMOVE
        return updated_node
