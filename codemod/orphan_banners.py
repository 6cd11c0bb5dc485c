"""A section banner's closing rule goes when the rewrite removed its titled opening line.

Scripts mark a section with a titled rule above it and a bare rule below it:

    # ---- multi GPU --------------------------------------------------
    # multi_gpu_model(net, gpus=N_GPUS) slices every batch ...
    parallel = multi_gpu_model(net, gpus=N_GPUS)
    parallel.compile(...)
    # ------------------------------------------------------------------

When the opening paragraph goes with the call it described, the bare rule is left closing
nothing. It goes too: only when the opening line the original had is missing from the output,
every copy of the bare rule the original had is still there, and code stood between the two
(a three-line header, rule / title / rule, is one paragraph and goes or stays whole). core.py
runs it on the rewritten module, with the original to compare.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Final

import libcst as cst

__all__ = ["without_orphan_closers"]

# "# ---- multi GPU ----", "# ===== Training =====": a rule with words in it
_TITLED: Final = re.compile(r"^#+\s*(?P<rule>[-=*~_#])(?P=rule){2,}\s*\w.*$")
# "# ------------------": a rule alone
_BARE: Final = re.compile(r"^#+\s*(?P<rule>[-=*~_#])(?P=rule){5,}\s*$")
_CODE: Final = object()  # (a statement, or a compound statement's header, in the sequence)


class _Sequence(cst.CSTVisitor):
    """The module's comment lines (text) and statements (`_CODE`), in source order."""

    def __init__(self) -> None:
        self.items: list[object] = []

    def visit_EmptyLine(self, node: cst.EmptyLine) -> None:
        if node.comment is not None:
            self.items.append(node.comment.value.rstrip())

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        self.items.append(_CODE)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.items.append(_CODE)

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self.items.append(_CODE)


def _sequence(module: cst.Module) -> list[object]:
    visitor = _Sequence()
    module.visit(visitor)
    return visitor.items


def _closers(items: list[object]) -> list[tuple[str, str, int]]:
    """(opening line, closing rule, which copy of that rule it is) for each titled rule of
    `items` closed by a bare rule after code."""
    found: list[tuple[str, str, int]] = []
    for k, item in enumerate(items):
        if not (isinstance(item, str) and _TITLED.match(item)):
            continue
        code_seen = False
        for later in items[k + 1:]:
            if later is _CODE:
                code_seen = True
            elif isinstance(later, str) and (_TITLED.match(later) or _BARE.match(later)):
                if code_seen and _BARE.match(later):
                    copy = sum(1 for i in items[:items.index(later, k + 1)] if i == later)
                    found.append((item, later, copy))
                break
    return found


class _Without(cst.CSTTransformer):
    """The module less the `copy`-th comment line reading `text` (counting from 0)."""

    def __init__(self, text: str, copy: int) -> None:
        self.text, self.copy, self.seen = text, copy, 0

    def leave_EmptyLine(
        self, original_node: cst.EmptyLine, updated_node: cst.EmptyLine
    ) -> cst.EmptyLine | cst.RemovalSentinel:
        if updated_node.comment is None or updated_node.comment.value.rstrip() != self.text:
            return updated_node
        self.seen += 1
        return cst.RemoveFromParent() if self.seen - 1 == self.copy else updated_node


def without_orphan_closers(original: cst.Module, new: cst.Module) -> cst.Module:
    """`new` less each bare rule that closed a section whose titled opening line went."""
    before = _sequence(original)
    closers = _closers(before)
    if not closers:
        return new
    was = Counter(item for item in before if isinstance(item, str))
    now = Counter(item for item in _sequence(new) if isinstance(item, str))
    removed: Counter[str] = Counter()
    # (the last copy first: removing it leaves the earlier copies where they were)
    for opening, rule, copy in sorted(closers, key=lambda c: -c[2]):
        if now[opening] < was[opening] and now[rule] + removed[rule] == was[rule]:
            new = new.visit(_Without(rule, copy))
            removed[rule] += 1
    return new
