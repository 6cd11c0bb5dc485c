"""An `if` the prose pass left with the same branches: written once, and its strategy scope settled.

`unet.layers[-2].save(p)  # the serial model sits at layers[-2]` / `else: unet.save(p)` read the
same only once the stale comment went; the `if` is then written once, as `merged` writes it (an
`if` that read so before the migration is kept). Written once whole under the strategy's scope
(round 63, bi11: `# multi gpu acceleration` / `if gpus > 1:` compile and fit / `else:` the same),
it leaves no branch to label, so

- its note on the devices ("# multi gpu acceleration") goes above the strategy line, which now
  makes that choice; the labels of its other branches (`# single gpu`) go;
- the training it ended with (`history = model.fit(...)` after the compile) goes below the scope,
  which ends at the compile as it does where no `if` was;
- what only sets up data or callbacks between the build and that compile (`stop =
  EarlyStopping(...)`) goes below the scope too, as plan.py writes it where no `if` was.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from ._tree import RUNS, bound_names, calls_method, method_call, names_in_functions, scope_owner, walk
from .plan import data_after
from .same_branches import code_of, dissolved, merged
from .stale_comments import CELL_MARKER, DEVICE_TOPIC

__all__ = ["settled"]


def settled(original: cst.Module, new: cst.Module) -> cst.Module:
    """`new` with each `if` the migration changed whose branches now read the same written once."""
    before = {code_of(node) for node in walk(original) if isinstance(node, cst.If)}
    return new.visit(_SettledBranches(before))


def _device_note(statement: cst.If) -> list[cst.EmptyLine]:
    """The comment lines right above `statement`, when every one is a note on the devices."""
    lines = list(statement.leading_lines)
    start = max((k for k, line in enumerate(lines) if line.comment is None), default=-1) + 1
    notes = lines[start:]
    if notes and all(
        line.comment is not None and DEVICE_TOPIC.search(line.comment.value)
        and not CELL_MARKER.match(line.comment.value) for line in notes
    ):
        return notes
    return []


def _blank_lead(statement: cst.BaseStatement) -> int:
    """The blank lines that open the statement's leading lines (above its first comment line)."""
    lines: Sequence[cst.EmptyLine] = getattr(statement, "leading_lines", ())
    return next((k for k, line in enumerate(lines) if line.comment is not None), len(lines))


def _with_blank_lead(statement: cst.BaseStatement, blanks: int) -> cst.BaseStatement:
    assert isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
    lines = list(statement.leading_lines)
    rest = lines[_blank_lead(statement):]
    return statement.with_changes(leading_lines=[*(cst.EmptyLine(indent=False) for _ in range(blanks)), *rest])


class _SettledBranches(cst.CSTTransformer):
    def __init__(self, before: set[str]) -> None:
        super().__init__()
        self.before = before
        self.notes: dict[int, list[cst.EmptyLine]] = {}  # first statement of a dissolved `if` -> its device note
        self.written_once: set[int] = set()  # the statements a dissolved `if` was written as

    def _body(self, body: Sequence[cst.BaseStatement], functions: frozenset[str]) -> list[cst.BaseStatement]:
        out: list[cst.BaseStatement] = []
        for statement in body:
            changed = isinstance(statement, cst.If) and code_of(statement) not in self.before
            shared = merged(statement, labels_go=True) if changed else None  # type: ignore[arg-type]
            if shared is not None and dissolved(statement, shared):  # type: ignore[arg-type]
                self.notes[id(shared[0])] = _device_note(statement)  # type: ignore[arg-type]
                self.written_once.update(id(s) for s in shared)
            out.extend(shared if shared is not None else [statement])
        index = 1
        while index < len(out):
            name = scope_owner(out[index])
            if name is not None and name in bound_names(out[index - 1]):
                scope = cst.ensure_type(out[index], cst.With)
                out[index - 1], out[index], after = self._scope_settled(out[index - 1], scope, functions)
                out[index + 1:index + 1] = after
            index += 1
        return out

    def _scope_settled(
        self, strategy: cst.BaseStatement, scope: cst.With, functions: frozenset[str]
    ) -> tuple[cst.BaseStatement, cst.With, list[cst.BaseStatement]]:
        """The strategy line with the device notes of the `if`s written once in its scope above it,
        the scope, and what those `if`s no longer keep in it, moved below it."""
        suite = scope.body
        if not isinstance(suite, cst.IndentedBlock) or not any(id(s) in self.written_once for s in suite.body):
            return strategy, scope, []
        body = list(suite.body)
        for k, inner in enumerate(body):
            notes = self.notes.get(id(inner), [])
            if notes and isinstance(inner, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                body[k] = inner.with_changes(
                    leading_lines=[line for line in inner.leading_lines if not any(line is n for n in notes)]
                )
                assert isinstance(strategy, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
                strategy = strategy.with_changes(leading_lines=[*strategy.leading_lines, *notes])
        # the training the `if` ended with, after its compile
        tail = len(body)
        while tail > 1 and id(body[tail - 1]) in self.written_once and calls_method(body[tail - 1], RUNS):
            tail -= 1
        if tail == len(body) or method_call(body[tail - 1], "compile") is None:
            return strategy, scope.with_changes(body=suite.with_changes(body=body)), []
        kept, data = data_after(body[:tail], functions)
        after = [*data, *body[tail:]]
        if data:
            # the blank line that set the `if` apart from the build now sets the scope apart
            compile_at = len(kept) - 1
            blanks = _blank_lead(kept[compile_at])
            kept[compile_at] = _with_blank_lead(kept[compile_at], 0) if blanks else kept[compile_at]
            after[0] = _with_blank_lead(after[0], max(blanks, _blank_lead(after[0])))
        return strategy, scope.with_changes(body=suite.with_changes(body=kept)), after

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        nested = names_in_functions(updated_node)
        return updated_node.with_changes(body=self._body(updated_node.body, nested))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return updated_node.with_changes(body=self._body(updated_node.body, names_in_functions(updated_node)))
