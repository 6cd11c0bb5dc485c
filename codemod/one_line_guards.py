"""A guard written on one line, `if args.gpus > 1: model = multi_gpu_model(model, ...)`, is split.

The guard rewrite (fixers/strategy_scope.py) works on statements in blocks; on the line of its
`if` the call was reported (MGPU103) with the advice to split the line and rerun. core.py now
does that itself: it splits the one-line suites of that `if` chain (`if`, `elif`, `else`) into
indented blocks, the file's own indentation and line ends, and migrates the split file. The
split is kept only when it lets the codemod rewrite a site it reported before; otherwise the file
stays as it was, reported with the reason the split file gives (MGPU103's advice to split would
not help). Findings and sites are moved back to the lines and columns of the file the user has.
"""

from __future__ import annotations

import dataclasses

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .findings import Finding
from .sites import SiteStatus

# The start of MGPU103's message for a call on the line of its `if`/`else` (recognise.py).
_ON_ITS_LINE = "(...)` is on the line of its `if`/`else`"


def lines_to_split(findings: list[Finding]) -> set[int]:
    """The lines of the calls reported for standing on the line of their `if`/`else`."""
    return {f.line for f in findings if f.code == "MGPU103" and _ON_ITS_LINE in f.message}


def split(module: cst.Module, lines: set[int]) -> tuple[cst.Module, list[Split]]:
    """`module` with the one-line suites of each `if` chain holding one of `lines` split into blocks,
    and the splits made, by line."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    splitter = _Splitter(wrapper.resolve(PositionProvider), lines, len(module.default_indent))
    new = wrapper.module.visit(splitter)
    return new, sorted(splitter.splits)


@dataclasses.dataclass(frozen=True, order=True)
class Split:
    """A one-line suite split: its line in the user's file, and how far its statement moved left."""

    line: int
    shift: int


def original_position(line: int, col: int, splits: list[Split]) -> tuple[int, int]:
    """The user's line and column for `line`, `col` of the split file: each split adds a line below its own."""
    # Split i (0-based) of line L is on split-file lines L + i (the header) and L + i + 1 (the statement).
    for index, made in enumerate(splits):
        if line == made.line + index + 1:
            return made.line, col + made.shift
        if line < made.line + index + 1:
            return line - index, col
    return line - len(splits), col


def moved_back(findings: list[Finding], sites: list[SiteStatus], splits: list[Split]
               ) -> tuple[list[Finding], list[SiteStatus]]:
    """Findings and sites of the split file, on the lines of the file as the user has it."""
    findings = [dataclasses.replace(f, line=line, col=col) for f in findings
                for line, col in [original_position(f.line, f.col, splits)]]
    sites = [dataclasses.replace(s, line=line, col=col) for s in sites
             for line, col in [original_position(s.line, s.col, splits)]]
    return sorted(set(findings)), sites


def reasons(findings: list[Finding], sites: list[SiteStatus], split_findings: list[Finding],
            split_sites: list[SiteStatus], lines: set[int]) -> tuple[list[Finding], list[SiteStatus]]:
    """The first run's findings and sites, with what the split file (moved back) says about the calls
    on `lines` in place of MGPU103's advice to split them, which would not get them rewritten."""
    kept = [f for f in findings if not (f.line in lines and f.code == "MGPU103" and _ON_ITS_LINE in f.message)]
    said = {(s.line, s.col): s for s in split_sites if s.line in lines}
    return sorted(set(kept + [f for f in split_findings if f.line in lines])), [
        said.get((s.line, s.col), s) for s in sites]


class _Splitter(cst.CSTTransformer):
    def __init__(self, positions: object, lines: set[int], indent: int) -> None:
        super().__init__()
        self.positions = positions
        self.lines = lines
        self.indent = indent
        self.chains: set[int] = set()  # id() of the `if` and `else` nodes of the chains split
        self.splits: set[Split] = set()

    def _line(self, node: cst.CSTNode) -> int:
        return self.positions[node].start.line  # type: ignore[index]

    def visit_If(self, node: cst.If) -> None:
        if id(node) in self.chains:
            return
        chain = _chain(node)
        if any(self._line(suite) in self.lines for suite in _one_line_suites(chain)):
            self.chains.update(id(member) for member in chain)
            # (the split statement starts one indent in from the `if`)
            column = self.positions[node].start.column + self.indent  # type: ignore[index]
            self.splits.update(
                Split(self._line(suite), self.positions[suite.body[0]].start.column - column)  # type: ignore[index]
                for suite in _one_line_suites(chain)
            )

    def leave_If(self, original: cst.If, updated: cst.If) -> cst.If:
        if id(original) not in self.chains:
            return updated
        return updated.with_changes(body=_block(updated.body))

    def leave_Else(self, original: cst.Else, updated: cst.Else) -> cst.Else:
        if id(original) not in self.chains:
            return updated
        return updated.with_changes(body=_block(updated.body))


def _chain(node: cst.If) -> list[cst.If | cst.Else]:
    chain: list[cst.If | cst.Else] = [node]
    while isinstance(chain[-1], cst.If) and chain[-1].orelse is not None:
        chain.append(chain[-1].orelse)
    return chain


def _one_line_suites(chain: list[cst.If | cst.Else]) -> list[cst.SimpleStatementSuite]:
    return [member.body for member in chain if _splittable(member.body)]  # type: ignore[misc]


def _splittable(body: cst.BaseSuite) -> bool:
    return isinstance(body, cst.SimpleStatementSuite) and len(body.body) == 1


def _block(body: cst.BaseSuite) -> cst.BaseSuite:
    if not _splittable(body):
        return body
    assert isinstance(body, cst.SimpleStatementSuite)
    line = cst.SimpleStatementLine(
        body=[body.body[0].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)],
        trailing_whitespace=body.trailing_whitespace,
    )
    return cst.IndentedBlock(body=[line])
