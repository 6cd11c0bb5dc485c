"""Per call site: rewritten, reported or untouched, for the summary and the JSON report.

A site is each recognised `multi_gpu_model` / copied-helper call, plus each call the fixers
report without recognising it as one (an unbound `multi_gpu_model`, one also bound
otherwise, a vendored copy, a wrapper-named call from this project). "reported" lists the finding codes that name it;
"untouched" (neither) means the codemod said nothing about a call it recognised.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import libcst as cst

from ._tree import dotted_name
from .strategy_expression import dropped_notes

__all__ = ["SiteStatus", "Status", "format_sites", "site_statuses", "sites_json"]

Status = Literal["rewritten", "reported", "untouched"]
# Findings the fixers give calls they do not rewrite as sites (fixers/leftovers.py).
_CALL_CODES = frozenset({"MGPU107", "MGPU108", "MGPU111", "MGPU403", "MGPU601", "MGPU602", "MGPU605"})


@dataclass(frozen=True, order=True)
class SiteStatus:
    """One call site: where, what is called, what became of it, and the findings about it."""

    line: int
    col: int
    name: str
    status: Status
    codes: tuple[str, ...] = ()
    cell: int | None = None
    # what the rewrite left out, and why: "dropped `cpu_merge=False` (...)"
    notes: tuple[str, ...] = ()

    def as_json(self) -> dict[str, object]:
        data: dict[str, object] = {"line": self.line, "col": self.col, "name": self.name, "status": self.status,
                                   "codes": list(self.codes)}
        if self.notes:
            data["notes"] = list(self.notes)
        if self.cell is not None:
            data["cell"] = self.cell
        return data


def site_statuses(ctx: object, source: str | None = None) -> list[SiteStatus]:
    """The statuses of a finished FixContext's sites, in source order. `source`, the module's
    text, lets a file without findings skip resolving every node's position (a codegen pass):
    each site's call is then found by its text, when that text occurs exactly as often as there
    are sites spelled that way."""
    from .fix_context import FixContext

    assert isinstance(ctx, FixContext)
    tree = ctx.tree
    rewritten = {id(site) for site in ctx.rewritten}
    found: list[SiteStatus] = []
    # CR-only line ends: lines are not counted by "\n" there, so positions decide.
    textual = source is not None and not ctx.findings and "\r" not in source
    places = _places_by_text(ctx, source) if textual and source is not None else {}
    for site in ctx.sites:
        codes = tuple(sorted({f.code for f in ctx.site_findings.get(id(site), [])}))
        status: Status = "rewritten" if id(site) in rewritten else "reported" if codes else "untouched"
        line, col = places.get(id(site.call)) or tree.position(site.call)
        notes = tuple(dropped_notes(site.dropped)) if status == "rewritten" else ()
        found.append(SiteStatus(line, col, site.name, status, codes, notes=notes))
    site_calls = {id(site.call) for site in ctx.sites}
    for node, finding in ctx.reported_nodes:
        if finding.code in _CALL_CODES and isinstance(node, cst.Call) and id(node) not in site_calls:
            name = dotted_name(node.func).rsplit(".", 1)[-1] or "call"
            found.append(SiteStatus(finding.line, finding.col, name, "reported", (finding.code,)))
    return sorted(found)


def _places_by_text(ctx: object, source: str) -> dict[int, tuple[int, int]]:
    """(line, col) of each site's call found by its text; calls whose text is ambiguous are left out."""
    from .fix_context import FixContext

    assert isinstance(ctx, FixContext)
    by_text: dict[str, list[cst.Call]] = {}
    for site in ctx.sites:
        by_text.setdefault(ctx.tree.code(site.call), []).append(site.call)
    places: dict[int, tuple[int, int]] = {}
    for text, calls in by_text.items():
        offsets = []
        start = source.find(text)
        while start != -1:
            offsets.append(start)
            start = source.find(text, start + 1)
        if len(offsets) != len(calls):
            continue  # also in a comment or a string, or nested: positions decide
        for call, offset in zip(calls, offsets):
            line = source.count("\n", 0, offset) + 1
            places[id(call)] = (line, offset - (source.rfind("\n", 0, offset) + 1) + 1)
    return places


def format_sites(statuses: list[SiteStatus], path: str, would: bool = False) -> list[str]:
    """One line per site, as the text report prints it: `train.py:12:14: multi_gpu_model rewritten`,
    `train.py:30:9: make_parallel reported (MGPU113)`; with `would` (--check, --diff) a rewrite
    reads `would be rewritten`."""
    lines = []
    for s in statuses:
        where = f"{path}:cell {s.cell}:line {s.line}:col {s.col}" if s.cell is not None else f"{path}:{s.line}:{s.col}"
        codes = f" ({', '.join(s.codes)})" if s.codes else ""
        status = "would be rewritten" if would and s.status == "rewritten" else s.status
        notes = "".join(f"; {note}" for note in s.notes)
        lines.append(f"{where}: {s.name} {status}{codes}{notes}")
    return lines


def sites_json(statuses: list[SiteStatus]) -> list[dict[str, object]]:
    """The statuses as JSON-ready dicts: line, col, name, status, codes (and cell in a notebook)."""
    return [s.as_json() for s in statuses]
