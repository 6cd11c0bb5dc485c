"""Backslash-continued lines (`compile(loss=l,\\` / `metrics=m)`) moved with their statement.

libcst keeps the whitespace after a backslash as written, at its absolute column, so a statement
moved under `with strategy.scope():` (or out of a dissolved `with tf.device(...)`, or out of an
`if` written once) would leave its continuation lines where they were. Each such whitespace is
found in the parsed file with the indentation of its statement, and after the rewrite shifted
by as much as that statement moved. For comparing statements (same_branches), `canonical` writes
every such whitespace the same way: it is not part of the code's meaning.
"""

from __future__ import annotations

import re

import libcst as cst

from ._tree import Tree

__all__ = ["CONTINUED", "Continuations", "canonical"]

CONTINUED = re.compile(r"(\\\r?\n)([ \t]*)")
_MODULE = cst.Module([])


class _Indents:
    """The indentation of the statement being visited, from the blocks around it."""

    def __init__(self, default: str) -> None:
        self.stack = [""]
        self.default = default

    def enter(self, block: cst.IndentedBlock) -> None:
        self.stack.append(self.stack[-1] + (self.default if block.indent is None else block.indent))

    def leave(self) -> None:
        self.stack.pop()


class _Follow(cst.CSTTransformer):
    def __init__(self, default: str, found: dict[int, tuple[cst.SimpleWhitespace, str]]) -> None:
        super().__init__()
        self.indents = _Indents(default)
        self.found = found

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.indents.enter(node)

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        self.indents.leave()
        return updated_node

    def leave_SimpleWhitespace(
        self, original_node: cst.SimpleWhitespace, updated_node: cst.SimpleWhitespace
    ) -> cst.SimpleWhitespace:
        known = self.found.get(id(original_node))
        if known is None or known[0] is not original_node:
            return updated_node
        was, now = known[1], self.indents.stack[-1]
        if was == now:
            return updated_node
        return updated_node.with_changes(
            value=CONTINUED.sub(lambda m: m.group(1) + _moved(m.group(2), was, now), updated_node.value)
        )


def _moved(spaces: str, was: str, now: str) -> str:
    """A continuation line's indentation after its statement went from `was` to `now`."""
    if now.startswith(was):
        return now[len(was):] + spaces
    removed = was[len(now):] if was.startswith(now) else None
    if removed is not None and spaces.startswith(removed):
        return spaces[len(removed):]
    width = len(spaces.expandtabs(4)) + len(now.expandtabs(4)) - len(was.expandtabs(4))
    return " " * width if width >= 0 else spaces


class Continuations:
    """The backslash continuations of a parsed module, to be moved along after a rewrite."""

    def __init__(self, tree: Tree, source: str | None = None) -> None:
        """`source`: the module's text when the caller has it (a file without `\\` + newline
        has nothing to follow)."""
        self.default = tree.module.default_indent
        # Each node is kept so that its id stays its own while the rewrite runs.
        self.found: dict[int, tuple[cst.SimpleWhitespace, str]] = {}
        if source is not None and not CONTINUED.search(source):
            return
        for node in tree.all_nodes():
            if type(node) is cst.SimpleWhitespace and "\\" in node.value:
                blocks = [a for a in tree.ancestors(node) if isinstance(a, cst.IndentedBlock)]
                indent = "".join(self.default if b.indent is None else b.indent for b in reversed(blocks))
                self.found[id(node)] = (node, indent)

    def carry(self, old: cst.SimpleWhitespace, new: cst.SimpleWhitespace) -> None:
        """`new` replaces `old` (realigned after a rename): it moves as `old` would have."""
        known = self.found.get(id(old))
        if known is not None and known[0] is old:
            self.found[id(new)] = (new, known[1])

    def follow(self, new: cst.Module) -> cst.Module:
        """`new` (the rewritten module) with every continuation shifted like its statement."""
        if not self.found:
            return new
        return new.visit(_Follow(self.default, self.found))


class _Canonical(cst.CSTTransformer):
    def leave_SimpleWhitespace(
        self, original_node: cst.SimpleWhitespace, updated_node: cst.SimpleWhitespace
    ) -> cst.SimpleWhitespace:
        if "\\" not in updated_node.value:
            return updated_node
        return updated_node.with_changes(value=CONTINUED.sub(lambda m: m.group(1) + " ", updated_node.value))


def canonical(node: cst.CSTNode) -> str:
    """`node`'s code with every backslash continuation indented the same way."""
    code = _MODULE.code_for_node(node)
    if "\\" not in code or not CONTINUED.search(code):
        return code
    canonical_node = node.visit(_Canonical())
    assert isinstance(canonical_node, cst.CSTNode)
    return _MODULE.code_for_node(canonical_node)
