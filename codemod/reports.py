"""What a run of the codemod prints and writes: findings as text, GitHub annotations or one JSON
document, diffs, per-site lines, the summary line, progress, and the report file."""

from __future__ import annotations

import difflib
import os
import stat
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from .atomic_write import write_new_file
from .files import Skip
from .findings import Finding
from .run_files import Outcome
from .sites import SiteStatus, sites_json

__all__ = [
    "REPORT_VERSION", "Progress", "Totals", "counted_sites", "finding_record", "github_annotation", "json_report",
    "printable", "report_problem", "report_skipped", "safe_text", "shown_path", "summary_line", "unified_diff",
    "write_report",
]

REPORT_VERSION = 1


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotation(finding: Finding, fixed: bool) -> str:
    level = "error" if finding.code.startswith("MGPU5") else "warning"
    props = [f"file={_escape_property(shown_path(finding.path))}"]
    message = finding.message
    if finding.cell is None:
        props += [f"line={finding.line}", f"col={finding.col}"]
    else:  # a notebook: the JSON line means nothing to a reader, name the cell instead
        message = f"cell {finding.cell}, line {finding.line}, col {finding.col}: {message}"
    props.append(f"title={_escape_property(finding.code + (' (file rewritten)' if fixed else ''))}")
    message = printable(message, keep="\r\n")  # line ends are escaped below, other controls here
    return f"::{level} {','.join(props)}::{_escape_data(message)}"


def finding_record(finding: Finding, fixed: bool) -> dict[str, object]:
    """One entry of the JSON report (schema documented in MIGRATION.md)."""
    return {
        "file": finding.path, "line": finding.line, "col": finding.col, "cell": finding.cell,
        "code": finding.code, "message": finding.message, "fixed": fixed,
    }


def report_problem(report: str, inputs: list[str]) -> str | None:
    """Why the report cannot go to `report` (checked before any file is touched), or None.

    Never one of the inputs however it is spelt (another relative path, a hard link, a symlink
    onto it), never a directory, never through a symlink someone else owns; missing folders
    are created.
    """
    path = Path(report)
    if path.is_symlink():
        owner = os.lstat(path).st_uid
        if owner not in (os.geteuid(), 0):
            return ("it is a symbolic link owned by another user, and the report would go wherever it points. "
                    "Give a path of your own.")
    if path.is_dir():
        return "it is a directory. Give the path of a file, e.g. reports/multi_gpu_codemod.txt."
    target = os.path.realpath(path)
    ids = set()
    for name in inputs:
        if os.path.realpath(name) == target:
            return f"it is one of the files being migrated ({shown_path(name)}). Give a path outside the inputs."
        try:
            known = os.stat(name)
        except OSError:
            continue
        ids.add((known.st_dev, known.st_ino))
    info: os.stat_result | None
    try:
        info = os.stat(path)
    except OSError:
        info = None
    if info is not None and (info.st_dev, info.st_ino) in ids:
        return "it is one of the files being migrated (a link to it). Give a path outside the inputs."
    if info is not None and stat.S_ISREG(info.st_mode) and not info.st_mode & 0o222:
        return "it is read-only, and is never replaced behind your back. Make it writable, or give another path."
    if info is None:  # a new file: its folder must exist (created now) and take new files
        folder = Path(target).parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            return f"{error.strerror or error}. Give a writable file path."
        if not os.access(folder, os.W_OK | os.X_OK):
            return f"its folder {shown_path(str(folder))} is not writable. Give a writable file path."
    return None


def write_report(report: str, data: bytes) -> None:
    """Writes the report: atomically to a file, straight to a device or pipe (`/dev/stdout`, `>(cmd)`)."""
    # /dev/stdout, /dev/fd/N (`>(cmd)`), /proc/self/fd/N: the process's own streams, even when one
    # is redirected to a regular file (replacing that file would lose what was printed to it).
    where = os.path.abspath(report)
    stream_like = where in ("/dev/stdout", "/dev/stderr") or where.startswith(("/dev/fd/", "/proc/"))
    try:
        mode = os.stat(report).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and (stream_like or not stat.S_ISREG(mode)):
        fd = os.open(report, os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOCTTY", 0))
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        return
    write_new_file(Path(report), data)


def safe_text(text: str) -> str:
    """Printable text: bytes of a non-UTF-8 file name (surrogate escapes) shown as `\\xNN`."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        try:
            return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:
            return text.encode("utf-8", "backslashreplace").decode("utf-8")


def shown_path(path: str) -> str:
    """A file name as printed: as it is when printable, else quoted with escapes, so that a newline
    or a terminal escape in a name can neither split a line nor reach the terminal."""
    text = safe_text(path)
    return text if text.isprintable() else repr(text)


def printable(text: str, keep: str = "") -> str:
    """`text` with every non-printable character (control, escape, bidi override) but those in `keep`
    shown as an escape."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else c.encode("unicode_escape").decode("ascii") for c in text)


def unified_diff(path: str, outcome: Outcome) -> str:
    before, after = outcome.source or b"", outcome.output or b""
    try:
        a, b = before.decode("utf-8"), after.decode("utf-8")
    except UnicodeDecodeError:
        a, b = before.decode("latin-1"), after.decode("latin-1")
    return "".join(difflib.unified_diff(a.splitlines(keepends=True), b.splitlines(keepends=True),
                                        f"a/{shown_path(path)}", f"b/{shown_path(path)}"))



class Progress:
    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.enabled, self.done, self.last = total, enabled, 0, 0.0

    def step(self, path: str) -> None:
        self.done += 1
        now = time.monotonic()
        if self.enabled and (now - self.last > 0.1 or self.done == self.total):
            self.last = now
            name = shown_path(path)
            name = name if len(name) < 50 else "..." + name[-47:]
            sys.stderr.write(f"\r\x1b[K[{self.done}/{self.total}] {name}")
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()



@dataclass
class Totals:
    """The run's counts for the summary line, and the files that need a mention in the JSON report."""

    scanned: int = 0
    rewritten: int = 0
    attention: int = 0
    failed: int = 0
    files: list[dict[str, object]] = field(default_factory=list)
    sites: dict[str, int] = field(default_factory=lambda: dict.fromkeys(("rewritten", "reported", "untouched"), 0))

    def add(self, outcome: Outcome) -> None:
        """Counts one file's outcome, once it is written (or not)."""
        self.scanned += 1
        for site in counted_sites(outcome):
            self.sites[site.status] += 1
        self.rewritten += outcome.changed
        self.failed += outcome.failed
        self.attention += bool(outcome.findings) and not outcome.failed
        status = ("failed" if outcome.failed else "rewritten" if outcome.changed
                  else "needs attention" if outcome.findings else "unchanged")
        if status != "unchanged" or outcome.sites:
            self.files.append({"file": outcome.path, "status": status, "sites": sites_json(counted_sites(outcome))})


def counted_sites(outcome: Outcome) -> list[SiteStatus]:
    """The file's call sites, none when the file failed (nothing in it was rewritten)."""
    return [] if outcome.failed else outcome.sites


_SKIP_NOUNS = {"symlink": ("symlink", "symlinks"), "folder": ("folder", "folders"),
               "ignored": ("git-ignored file", "git-ignored files")}


def summary_line(totals: Totals, skipped: list[Skip], would: bool) -> str:
    verb = "would be rewritten" if would else "rewritten"
    line = (
        f"{totals.scanned} file{'s' if totals.scanned != 1 else ''} scanned, {totals.rewritten} {verb}, "
        f"{totals.attention} need{'s' if totals.attention == 1 else ''} attention, {totals.failed} failed"
    )
    parts = []
    for kind, (one, many) in _SKIP_NOUNS.items():
        count = sum(skip.kind == kind for skip in skipped)
        if count:
            parts.append(f"{count} {one if count == 1 else many}")
    if parts:
        line += ", " + (parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]) + " skipped"
    if any(totals.sites.values()):
        count = sum(totals.sites.values())
        line += (f"; {count} call site{'s' if count != 1 else ''}: {totals.sites['rewritten']} {verb}, "
                 f"{totals.sites['reported']} reported, {totals.sites['untouched']} untouched")
    return line


def json_report(mode: str, totals: Totals, skipped: list[Skip],
                 records: list[dict[str, object]]) -> dict[str, object]:
    """The `--format json` document (schema documented in MIGRATION.md)."""
    return {
        "version": REPORT_VERSION,
        "mode": mode,
        "summary": {"scanned": totals.scanned, "rewritten": totals.rewritten, "attention": totals.attention,
                    "failed": totals.failed, "skipped": len(skipped), "sites": dict(totals.sites)},
        "files": totals.files,
        "skipped": [{"file": str(skip.path), "reason": skip.reason, "kind": skip.kind} for skip in skipped],
        "findings": records,
    }


def report_skipped(skipped: list[Skip], report_format: str, stream: TextIO) -> None:
    """What the walk passed over: a line each in text, a notice each for GitHub (in JSON, a list)."""
    for skip in skipped:
        if report_format == "text":
            print(f"{shown_path(str(skip.path))}: skipped: {skip.reason}", file=stream)
        elif report_format == "github":
            print(f"::notice file={_escape_property(shown_path(str(skip.path)))},title=skipped::"
                  f"{_escape_data(skip.reason)}", file=stream)
