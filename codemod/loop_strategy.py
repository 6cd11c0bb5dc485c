"""The strategy a loop's body would make on every pass is made once, above the loop.

A k-fold script builds and wraps a fresh model in every fold; migrated in place, its loop body
creates `strategy = tf.distribute.MirroredStrategy(...)` once per fold (rounds 41 and 46: fb12,
ac04, ad04), which no one writes: TensorFlow's guide makes one strategy and opens its scope for
each model. The strategy line (or the `if`/`else` that only chooses it) moves right above the
loop when nothing in the loop can change what it reads: it reads no name the loop binds (its
target, an assignment, an import, a `with ... as`), the loop binds the strategy's name nowhere
else and reads it nowhere before, and the loop clears no Keras or TensorFlow state
(`clear_session()`, `reset_default_graph()`), after which a person might want a fresh one. The
comments above the strategy line go with it. core.py runs it on the rewritten module, with the
names the plan gave the strategies.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Final

import libcst as cst

from .stale_comments import CELL_MARKER

__all__ = ["hoisted"]

# calls after which the loop's author may rely on fresh global state: the strategy stays per pass
_RESETS: Final = frozenset({"clear_session", "reset_default_graph", "reset_uids"})


def hoisted(module: cst.Module, names: Collection[str]) -> cst.Module:
    """`module` with each strategy made in a `for` body made once above the loop instead."""
    if not names or "for " not in module.code:
        return module
    return module.visit(_Hoist(frozenset(names)))


class _Hoist(cst.CSTTransformer):
    def __init__(self, names: frozenset[str]) -> None:
        super().__init__()
        self.names = names

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        return updated_node.with_changes(body=self._statements(list(updated_node.body)))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return updated_node.with_changes(body=self._statements(list(updated_node.body)))

    def _statements(self, body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        out: list[cst.BaseStatement] = []
        for statement in body:
            if isinstance(statement, cst.For) and isinstance(statement.body, cst.IndentedBlock):
                moved = self._movable(statement)
                if moved is not None:
                    first, last = moved
                    inner = list(statement.body.body)
                    lines = inner[first:last + 1]
                    del inner[first:last + 1]
                    out.extend(_above(statement, lines))
                    statement = _below(statement, inner)
            out.append(statement)
        return out

    def _movable(self, loop: cst.For) -> tuple[int, int] | None:
        """The first and last index in `loop`'s body of the strategy statement that can move above
        it (with the line binding the machine's GPUs right above it: `gpus = ...`)."""
        body = list(cst.ensure_type(loop.body, cst.IndentedBlock).body)
        for index, statement in enumerate(body):
            name = _strategy_name(statement, self.names)
            if name is None:
                continue
            first = index - 1 if index and _listing(body[index - 1]) in _loads(statement) else index
            own = {n for s in body[first:index + 1] for n in [_listing(s), *_listings_in(s)] if n}
            if (_loads(statement) - own) & _bound(loop) or _resets(loop) or loop.orelse is not None:
                return None
            others = [s for k, s in enumerate(body) if not first <= k <= index]
            if any((own | {name}) & _bound_in(s) for s in others) or any(
                (own | {name}) & _reads(s) for s in body[:first]
            ):
                return None
            if (own | {name}) & _bound_in(loop.target):
                return None
            return first, index
        return None


def _strategy_name(statement: cst.BaseStatement, names: frozenset[str]) -> str | None:
    """The strategy's name where `statement` only makes it: `name = tf.distribute...(...)`, or an
    `if`/`else` whose branches only do that."""
    if isinstance(statement, cst.SimpleStatementLine):
        if len(statement.body) != 1 or not isinstance(statement.body[0], cst.Assign):
            return None
        assign = statement.body[0]
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
            return None
        name = assign.targets[0].target.value
        made = cst.Module([]).code_for_node(assign.value)
        return name if name in names and made.startswith("tf.distribute.") else None
    if isinstance(statement, cst.If) and isinstance(statement.orelse, cst.Else):
        # (a branch's strategy on GPU ids comes with the line binding the machine's GPUs)
        branches = [_without_listing(cst.ensure_type(b, cst.IndentedBlock).body)
                    for b in (statement.body, statement.orelse.body)]
        found = {_strategy_name(s, names) for branch in branches for s in branch}
        if len(found) == 1 and None not in found and all(len(b) == 1 for b in branches):
            return found.pop()
    return None


def _listing(statement: cst.BaseStatement) -> str | None:
    """`gpus = tf.config.list_logical_devices("GPU")`: the name bound, else None."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Assign)):
        return None
    assign = statement.body[0]
    target = assign.targets[0].target if len(assign.targets) == 1 else None
    made = cst.Module([]).code_for_node(assign.value)
    listed = made.endswith('.config.list_logical_devices("GPU")')
    return target.value if isinstance(target, cst.Name) and listed else None


def _without_listing(body: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
    return list(body[1:]) if len(body) == 2 and _listing(body[0]) is not None else list(body)


def _listings_in(statement: cst.BaseStatement) -> list[str]:
    """The GPU listings bound in the branches of an `if` choosing the strategy."""
    if not isinstance(statement, cst.If) or not isinstance(statement.orelse, cst.Else):
        return []
    return [n for b in (statement.body, statement.orelse.body)
            for s in cst.ensure_type(b, cst.IndentedBlock).body for n in [_listing(s)] if n]


class _Names(cst.CSTVisitor):
    def __init__(self) -> None:
        self.read: set[str] = set()
        self.bound: set[str] = set()
        self.calls: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.read.add(node.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.bound |= _target_names(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.bound |= _target_names(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.bound |= _target_names(node.target)

    def visit_For(self, node: cst.For) -> None:
        self.bound |= _target_names(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self.bound |= _target_names(node.name)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        self.bound.add(cst.Module([]).code_for_node(node.name).split(".")[0])

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.bound.add(node.name.value)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.bound.add(node.name.value)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.bound |= _target_names(node.target)

    def visit_Global(self, node: cst.Global) -> None:
        self.bound |= {n.name.value for n in node.names}

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        self.calls.add(func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", ""))


class _Loads(cst.CSTVisitor):
    """The names an expression reads (`tf` in `tf.config.list_logical_devices`, not `config`)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False


def _loads(statement: cst.BaseStatement) -> set[str]:
    """What the strategy statement reads: its values, and an `if`'s condition."""
    loads = _Loads()
    if isinstance(statement, cst.If):
        statement.test.visit(loads)
        for branch in (statement.body, cst.ensure_type(statement.orelse, cst.Else).body):
            for inner in cst.ensure_type(branch, cst.IndentedBlock).body:
                loads.names |= _loads(inner)
    else:
        cst.ensure_type(cst.ensure_type(statement, cst.SimpleStatementLine).body[0], cst.Assign).value.visit(loads)
    return loads.names


def _target_names(node: cst.CSTNode) -> set[str]:
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, (cst.Tuple, cst.List)):
        return {n for element in node.elements for n in _target_names(element.value)}
    if isinstance(node, cst.StarredElement):
        return _target_names(node.value)
    return set()  # (an attribute or a subscript binds no name)


def _walk(node: cst.CSTNode) -> _Names:
    names = _Names()
    node.visit(names)
    return names


def _reads(node: cst.CSTNode) -> set[str]:
    return _walk(node).read


def _bound_in(node: cst.CSTNode) -> set[str]:
    return _walk(node).bound


def _bound(loop: cst.For) -> set[str]:
    return _bound_in(loop.target) | _target_names(loop.target) | _bound_in(loop.body)


def _resets(loop: cst.For) -> bool:
    return bool(_walk(loop.body).calls & _RESETS)


def _split_leading(loop: cst.For) -> tuple[list[cst.EmptyLine], list[cst.EmptyLine]]:
    """The loop's leading lines: those that go above the strategy line (its blank lines, or up to and
    past an exported cell's marker, `# In[5]:` / `# %%`, so the strategy stays in the loop's cell)
    and those that stay on the loop (its own comments)."""
    leading = list(loop.leading_lines)
    marks = [k for k, line in enumerate(leading) if line.comment is not None and CELL_MARKER.match(line.comment.value)]
    start = marks[-1] + 1 if marks else 0
    while start < len(leading) and leading[start].comment is None:
        start += 1
    return leading[:start], leading[start:]


def _above(loop: cst.For, lines: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    first = lines[0]
    assert isinstance(first, (cst.SimpleStatementLine, cst.If))
    # (libcst writes a statement and its comment lines at the indentation of the block it is in)
    return [first.with_changes(leading_lines=[*_split_leading(loop)[0], *first.leading_lines]), *lines[1:]]


def _below(loop: cst.For, inner: list[cst.BaseStatement]) -> cst.For:
    body = cst.ensure_type(loop.body, cst.IndentedBlock)
    return loop.with_changes(leading_lines=_split_leading(loop)[1], body=body.with_changes(body=inner))
