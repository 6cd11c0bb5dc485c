"""The real-world corpus (fixtures/realworld) and its manifest: what each site must become.

`manifest.json` maps a corpus file to its sites (or to "quiet": nothing there is ours). A site is
found by the text `at` (its first occurrence; in a notebook, the cell holding it) and says what the
codemod must do there: `"expect": "rewritten"` (no finding on that line, the `present` texts in the
output, the `absent` ones gone, by default the site's own line), a finding code such as `"MGPU301"`
(on that line, its message holding every `message` text and no `not_message` one; with `present` /
`absent` too, the site is also rewritten and the output must have that shape), or `"quiet"`
(no finding on that line). `evaluate` runs the codemod once per file and grades every site:

- rewritten / reported / quiet: what the manifest asks for;
- silent: the file is unchanged there and nothing was said;
- wrong: rewritten where a report was due, or rewritten differently from the manifest;
- misleading: reported with another code, or a message that misses what it must say;
- crash: the codemod raised.
"""

from __future__ import annotations

import json
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from multi_gpu_codemod import transform_source
from multi_gpu_codemod.findings import Finding
from multi_gpu_codemod.notebook import transform_notebook

ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "realworld"
OUTCOMES = ("rewritten", "reported", "quiet", "silent", "wrong", "misleading", "crash")


@dataclass
class Graded:
    path: str
    at: str
    klass: int
    expect: str
    outcome: str
    detail: str = ""


@dataclass
class FileRun:
    path: str
    source: bytes
    output: bytes | None = None
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None
    failed: bool = False


def manifest() -> dict:
    return json.loads((ROOT / "manifest.json").read_text(encoding="utf-8"))


def corpus_files() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*") if p.suffix in (".py", ".ipynb"))


def run_file(path: Path, source: bytes | None = None) -> FileRun:
    rel = path.relative_to(ROOT).as_posix()
    data = path.read_bytes() if source is None else source
    run = FileRun(rel, data)
    try:
        transform = transform_notebook if path.suffix == ".ipynb" else transform_source
        result = transform(data, rel)
    except Exception:  # the corpus test reports it; the grading counts it
        run.error = traceback.format_exc()
        return run
    run.output, run.findings, run.failed = result.output, list(result.findings), result.failed
    return run


def code_text(path: Path, data: bytes) -> str:
    """A .py file's text; a notebook's code cells, each followed by a blank line."""
    if path.suffix != ".ipynb":
        return data.decode("utf-8-sig")
    return "".join(source + "\n\n" for _, source in cells(data))


def cells(data: bytes) -> list[tuple[int, str]]:
    """(1-based cell number among all cells, source) of each code cell."""
    notebook = json.loads(data.decode("utf-8-sig"))
    found = []
    for number, cell in enumerate(notebook.get("cells", []), start=1):
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            found.append((number, "".join(source) if isinstance(source, list) else source))
    return found


def _locate(path: Path, data: bytes, at: str) -> tuple[int | None, int]:
    """(cell, line) where `at` starts; cell None outside notebooks."""
    if path.suffix == ".ipynb":
        for number, source in cells(data):
            index = source.find(at)
            if index >= 0:
                return number, source[:index].count("\n") + 1
        raise LookupError(f"{path.name}: no cell holds {at!r}")
    text = data.decode("utf-8-sig")
    index = text.find(at)
    if index < 0:
        raise LookupError(f"{path.name}: {at!r} not found")
    return None, text[:index].count("\n") + 1


def grade(path: Path, run: FileRun, sites: list[dict] | str) -> list[Graded]:
    if sites == "quiet":
        sites = []
    graded = []
    out = code_text(path, run.output) if run.output is not None else None
    for site in sites:
        cell, line = _locate(path, run.source, site["at"])
        g = Graded(run.path, site["at"], int(site["class"]), site["expect"], "")
        graded.append(g)
        if run.error is not None or out is None:
            g.outcome, g.detail = "crash", (run.error or "").strip().splitlines()[-1:]
            continue
        here = [f for f in run.findings if f.line == line and f.cell == cell]
        codes = sorted({f.code for f in here})
        present = site.get("present", [])
        absent = site.get("absent", [] if present else [site["at"].splitlines()[0].strip()])
        shape_ok = all(p in out for p in present) and not any(a in out for a in absent)
        if "starts" in site:
            shape_ok = shape_ok and out.startswith(site["starts"])
        unchanged = run.output == run.source
        line_text = site["at"].splitlines()[0].strip()
        expect = site["expect"]
        if expect == "quiet":
            g.outcome = "quiet" if not here else "misleading"
            g.detail = ", ".join(codes)
        elif expect == "rewritten":
            if here:
                g.outcome, g.detail = "reported", ", ".join(codes)
            elif shape_ok and not unchanged:
                g.outcome = "rewritten"
            elif unchanged or (not line_text.startswith("#") and line_text in out):
                g.outcome = "silent"  # the site's own line is still there, and nothing was said
            else:
                missing = [p for p in present if p not in out] + [a for a in absent if a in out]
                g.outcome, g.detail = "wrong", f"expected/unexpected text: {missing}"
        else:
            matching = [f for f in here if f.code == expect]
            if matching:
                message = matching[0].message
                bad = [t for t in site.get("message", []) if t not in message]
                bad += [t for t in site.get("not_message", []) if t in message]
                g.outcome = "reported" if not bad else "misleading"
                g.detail = f"message lacks/has {bad}: {message}" if bad else ""
                if not bad and ("present" in site or "absent" in site) and not shape_ok:
                    # rewritten and reported (MGPU117): the rewrite must still have its shape
                    missing = [p for p in present if p not in out] + [a for a in absent if a in out]
                    g.outcome, g.detail = "wrong", f"expected/unexpected text: {missing}"
            elif here:
                g.outcome, g.detail = "misleading", f"got {codes}, expected {expect}"
            elif line_text in out:
                g.outcome = "silent"
            else:
                g.outcome, g.detail = "wrong", f"rewritten where {expect} was due"
    return graded


def evaluate() -> tuple[list[Graded], dict[str, FileRun]]:
    spec = manifest()["files"]
    runs: dict[str, FileRun] = {}
    graded: list[Graded] = []
    for path in corpus_files():
        rel = path.relative_to(ROOT).as_posix()
        run = runs[rel] = run_file(path)
        graded += grade(path, run, spec.get(rel, []))
    return graded, runs


def table(graded: list[Graded]) -> list[dict]:
    """One row per class of the manifest: how many sites got each outcome."""
    names = manifest()["classes"]
    rows = []
    for key in sorted(names, key=int):
        mine = [g for g in graded if g.klass == int(key)]
        row = {"class": f"{key} {names[key]}", "sites": len(mine)}
        row.update({o: sum(g.outcome == o for g in mine) for o in OUTCOMES})
        rows.append(row)
    total = {"class": "all", "sites": len(graded)}
    total.update({o: sum(g.outcome == o for g in graded) for o in OUTCOMES})
    rows.append(total)
    return rows
