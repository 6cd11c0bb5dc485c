"""A transformer base that removes whole statements, their own comment lines with them.

template_aliases.py and optional_templates.py remove statements of the rewritten module (the
handle on the template) and leave the blank lines that set them apart for the next statement.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import libcst as cst

__all__ = ["StatementDrops"]


class StatementDrops(cst.CSTTransformer):
    """Removes the statements in `dropped` (the original nodes) from every block; subclasses may
    put other statements where one was (`replaced`)."""

    def __init__(self, dropped: Collection[cst.BaseStatement]) -> None:
        super().__init__()
        self.dropped = dropped

    def replaced(self, original: cst.BaseStatement, updated: cst.BaseStatement) -> list[cst.BaseStatement]:
        """What stands where `original` was (kept as updated by default)."""
        return [updated]

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.BaseSuite:
        return updated_node.with_changes(body=self._kept(original_node.body, updated_node.body))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return updated_node.with_changes(body=self._kept(original_node.body, updated_node.body))

    def _kept(
        self, original: Sequence[cst.BaseStatement], updated: Sequence[cst.BaseStatement]
    ) -> list[cst.BaseStatement]:
        out: list[cst.BaseStatement] = []
        carried: list[cst.EmptyLine] = []
        for before, after in zip(original, updated):
            assert isinstance(after, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
            if before in self.dropped:
                # its own comment lines (right above it) go with it; what lies further up stays
                lines = list(after.leading_lines)
                while lines and lines[-1].comment is not None:
                    lines.pop()
                carried = [*carried, *lines]
                continue
            pieces = self.replaced(before, after)
            first = pieces[0]
            if carried and isinstance(first, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                lead = list(first.leading_lines)
                if lead and lead[0].comment is None and carried[-1].comment is None:
                    carried = carried[:-1]  # (one blank line where two statements' met)
                pieces = [first.with_changes(leading_lines=[*carried, *lead]), *pieces[1:]]
                carried = []
            out.extend(pieces)
        return out
