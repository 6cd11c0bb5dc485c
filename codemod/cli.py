"""The codemod's command line: rewrite, `--diff` or `--check`; reports; parallel runs (`multi-gpu-codemod PATH...`)."""

from __future__ import annotations

import argparse
import difflib
import io
import itertools
import json
import math
import os
import stat
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from .core import TransformResult, transform_source
from .atomic_write import write_new_file
from .files import (
    FileChangedError, NotRegularFileError, Skip, file_may_contain_site, iter_python_files, read_regular,
    write_atomically,
)
from .findings import Finding
from .isolation import Limits, die_with_parent, memory_budget, parse_size, run_isolated, too_large, unexpected
from .prefilter import may_contain_site
from .sites import SiteStatus, format_sites, sites_json

__all__ = ["main", "process_file", "Outcome"]

EXIT_CLEAN, EXIT_CHANGES, EXIT_FAILED = 0, 1, 2
REPORT_VERSION = 1
_DEFAULT_LIMITS = Limits()
_CHECK_IN_PROCESS_BELOW = 256 << 10  # Python's own check of a file without a marker: cheap below this
# Workers per core at most: parsing is CPU-bound, so more only cost memory and file descriptors.
WORKERS_PER_CORE = 4
_MIN_TIMEOUT, _MAX_TIMEOUT = 0.001, 86400.0


@dataclass
class Outcome:
    """One file's result as sent back from a worker: `output` only when it changed."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    source: bytes | None = None
    output: bytes | None = None
    failed: bool = False
    sites: list[SiteStatus] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.output is not None and not self.failed


def process_file(path: str, strategy: str = "mirrored", limits: Limits = _DEFAULT_LIMITS) -> Outcome:
    """Reads and transforms one file (a worker's job); never raises."""
    try:
        return _process(path, strategy, limits)
    except Exception as error:  # noqa: BLE001 - the last line of defence: one file never ends the run
        return Outcome(path, [unexpected(path, f"{type(error).__name__}: {error}".splitlines()[0][:300])], failed=True)


def _process(path: str, strategy: str, limits: Limits) -> Outcome:
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):  # a FIFO would block the run forever once opened
            return Outcome(path, [_not_regular(path, info.st_mode)], failed=True)
        limit = limits.for_path(path)
        if info.st_size > limit:
            return _oversized(path, info.st_size, limit)
        source = read_regular(path, limit)
        if source is None:  # grew past the limit since the stat
            return _oversized(path, os.stat(path).st_size, limit)
    except NotRegularFileError as error:
        return Outcome(path, [_not_regular(path, error.mode)], failed=True)
    except OSError as error:
        reason = error.strerror or type(error).__name__
        message = f"cannot read the file ({reason}); check the path and permissions."
        return Outcome(path, [Finding(1, 1, "MGPU503", message, path)], failed=True)
    if path.endswith(".ipynb") and strategy == "multi-worker":
        return Outcome(path, [Finding(1, 1, "MGPU703", (
            "notebooks are not rewritten with --strategy multi-worker: every worker runs the same script "
            "with its own TF_CONFIG; export the notebook to a script (`jupyter nbconvert --to script`) and rerun."
        ), path)])
    work = partial(_transform, source, path, strategy)
    if may_contain_site(source) or len(source) > _CHECK_IN_PROCESS_BELOW:  # libcst, or a big ast: bounded, in a child
        value, findings = run_isolated(work, path, limits)
        if not isinstance(value, TransformResult):
            return Outcome(path, findings, failed=True)
        result = value
    else:  # only Python's own checks run on a small file: cheap, and they raise nothing uncaught
        result = work()
    if result.changed:
        return Outcome(path, result.findings, source, result.output, sites=result.sites)
    return Outcome(path, result.findings, failed=result.failed, sites=result.sites)


def _transform(source: bytes, path: str, strategy: str) -> TransformResult:
    if path.endswith(".ipynb"):
        from .notebook import transform_notebook

        return transform_notebook(source, path)
    return transform_source(source, path, strategy=strategy)


def _not_regular(path: str, mode: int) -> Finding:
    kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a directory" if stat.S_ISDIR(mode)
            else "not a regular file")
    return Finding(1, 1, "MGPU506", (
        f"{kind}, not a regular file: never opened, left as it is. Leave it out of the paths given "
        "(or rename it) if it is not Python source."
    ), path)


def _oversized(path: str, size: int, limit: int) -> Outcome:
    """Too large to parse: reported if it may hold a site, else left alone (it cannot hold one)."""
    if file_may_contain_site(path):
        return Outcome(path, [too_large(path, size, limit)], failed=True)
    return Outcome(path)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="multi-gpu-codemod",
        description="Rewrite Keras multi_gpu_model code into tf.distribute.MirroredStrategy scope code.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="files or directories (recursing over *.py and *.ipynb)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--diff", action="store_true", help="print unified diffs, write nothing")
    mode.add_argument("--check", action="store_true", help="write nothing; exit 1 if anything would change")
    parser.add_argument("-j", "--jobs", type=_jobs, default=None, metavar="N",
                        help=f"worker processes (default: all cores; 1: no pool; at most {WORKERS_PER_CORE} "
                             "per core, a larger N is lowered to that)")
    parser.add_argument("--format", choices=("text", "json", "github"), default="text",
                        help="findings as text lines, one JSON document, or GitHub Actions annotations")
    parser.add_argument("--report", metavar="FILE", type=_report_path,
                        help="write the findings report to FILE instead of the terminal, once the run is over "
                             "(atomically; never one of the files being migrated)")
    parser.add_argument("--strategy", choices=("mirrored", "multi-worker"), default="mirrored",
                        help="emit MirroredStrategy (one machine, default) or MultiWorkerMirroredStrategy code "
                             "with chief-aware saving (several machines, TF_CONFIG)")
    parser.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                        help="progress line on stderr (auto: only when stderr is a terminal and many files)")
    parser.add_argument("--max-size", type=_size, default=_DEFAULT_LIMITS.max_bytes, metavar="SIZE",
                        help="largest file rewritten, e.g. 512K, 2M (default 1M; notebooks: 10 times that); "
                             "a larger one that may hold a site is reported (MGPU504), never parsed")
    parser.add_argument("--timeout", type=_seconds, default=_DEFAULT_LIMITS.timeout, metavar="SECONDS",
                        help="time allowed to rewrite one file (default 300, at most 86400); beyond it the file is "
                             "reported (MGPU504)")
    return parser


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(
            f"not a size: {text!r} ({error}; give bytes, or a number with K, M or G: 512K, 2M)"
        ) from None


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not _MIN_TIMEOUT <= value <= _MAX_TIMEOUT:  # also refuses nan and inf
        raise argparse.ArgumentTypeError(
            f"not a number of seconds between {_MIN_TIMEOUT:g} and {_MAX_TIMEOUT:g}: {text!r}"
        )
    return value


def _report_path(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give the file to write, e.g. reports/multi_gpu_codemod.txt")
    return text


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"not a positive whole number of workers: {text!r} (1: no pool)")
    return value


def worker_count(requested: int | None) -> int:
    """The workers to start: all cores by default, never more than WORKERS_PER_CORE per core."""
    cores = os.cpu_count() or 1
    if requested is None:
        return cores
    most = WORKERS_PER_CORE * cores
    if requested > most:
        print(f"multi-gpu-codemod: -j {requested} lowered to {most} ({WORKERS_PER_CORE} workers per core on "
              f"{cores} core{'s' if cores != 1 else ''}; more only cost memory).", file=sys.stderr)
        return most
    return requested


def _diff(path: str, outcome: Outcome) -> str:
    before, after = outcome.source or b"", outcome.output or b""
    try:
        a, b = before.decode("utf-8"), after.decode("utf-8")
    except UnicodeDecodeError:
        a, b = before.decode("latin-1"), after.decode("latin-1")
    return "".join(difflib.unified_diff(a.splitlines(keepends=True), b.splitlines(keepends=True),
                                        f"a/{shown_path(path)}", f"b/{shown_path(path)}"))


def _outcomes(paths: list[str], jobs: int, strategy: str = "mirrored",
              limits: Limits = _DEFAULT_LIMITS) -> Iterator[Outcome]:
    work = partial(process_file, strategy=strategy, limits=limits)
    if jobs <= 1 or len(paths) < 8:
        yield from map(work, paths)
        return
    chunk = max(1, min(64, len(paths) // (jobs * 8)))
    done = 0
    # Workers end with this process, even when it is killed without a chance to stop them.
    workers = min(jobs, len(paths))
    with ProcessPoolExecutor(max_workers=workers, initializer=die_with_parent, initargs=(os.getpid(),)) as pool:
        try:
            for outcome in pool.map(work, paths, chunksize=chunk):
                done += 1
                yield outcome
        except BrokenProcessPool:  # a worker was killed from outside: finish here, one file at a time
            yield from map(work, paths[done:])


class _Progress:
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


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    jobs = worker_count(args.jobs)
    skipped: list[Skip] = []
    unreadable: list[tuple[Path, str]] = []
    paths = [str(p) for p in iter_python_files(args.paths, skipped, unreadable)]
    if args.report:
        problem = report_problem(args.report, [*args.paths, *paths])
        if problem:
            print(f"multi-gpu-codemod: error: cannot write the report to {shown_path(args.report)}: {problem}",
                  file=sys.stderr)
            return EXIT_FAILED
    # The report is written once the run is over; meanwhile it is kept here.
    report = io.StringIO() if args.report else None
    # Text and GitHub lines go to stdout, or stderr under --diff to keep the patch clean.
    stream: TextIO = report or (sys.stderr if args.diff else sys.stdout)
    # The summary line goes to the terminal: stdout, or stderr when stdout carries a patch or JSON.
    summary_stream = sys.stderr if args.diff or (args.format == "json" and report is None) else sys.stdout
    status = _run(args, jobs, paths, skipped, unreadable, stream, summary_stream)
    if report is not None:
        sys.stdout.flush()  # what went to the terminal comes first, also when FILE is /dev/stdout
        # Checked again: the path may have changed during the run (a symlink planted meanwhile).
        problem = report_problem(args.report, [*args.paths, *paths])
        try:
            if problem:
                raise OSError(problem)
            write_report(args.report, report.getvalue().encode("utf-8", "backslashreplace"))
        except OSError as error:
            print(f"multi-gpu-codemod: error: cannot write the report to {shown_path(args.report)}: "
                  f"{(error.strerror or str(error)).rstrip('.')}. The files' own results stand (see the summary "
                  "line); give a writable file path and rerun with --check to get the report.", file=sys.stderr)
            return EXIT_FAILED
    return status


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


def _safe(text: str) -> str:
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
    text = _safe(path)
    return text if text.isprintable() else repr(text)


def printable(text: str, keep: str = "") -> str:
    """`text` with every non-printable character (control, escape, bidi override) but those in `keep`
    shown as an escape."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else c.encode("unicode_escape").decode("ascii") for c in text)


def _unreadable_folder(folder: Path, reason: str) -> Outcome:
    return Outcome(str(folder), [Finding(1, 1, "MGPU503", (
        f"cannot read the folder ({reason}); the files in it were not processed. Check its permissions and rerun."
    ), str(folder))], failed=True)


@dataclass
class _Totals:
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
        for site in _counted_sites(outcome):
            self.sites[site.status] += 1
        self.rewritten += outcome.changed
        self.failed += outcome.failed
        self.attention += bool(outcome.findings) and not outcome.failed
        status = ("failed" if outcome.failed else "rewritten" if outcome.changed
                  else "needs attention" if outcome.findings else "unchanged")
        if status != "unchanged" or outcome.sites:
            self.files.append({"file": outcome.path, "status": status, "sites": sites_json(_counted_sites(outcome))})


def _counted_sites(outcome: Outcome) -> list[SiteStatus]:
    """The file's call sites, none when the file failed (nothing in it was rewritten)."""
    return [] if outcome.failed else outcome.sites


def _run(args: argparse.Namespace, jobs: int, paths: list[str], skipped: list[Skip],
         unreadable: list[tuple[Path, str]], stream: TextIO, summary_stream: TextIO) -> int:
    limits = Limits(max_bytes=args.max_size, timeout=args.timeout, memory=memory_budget(jobs))
    enabled = args.progress == "always" or (args.progress == "auto" and sys.stderr.isatty() and len(paths) >= 50)
    progress = _Progress(len(paths), enabled)
    records: list[dict[str, object]] = []
    totals = _Totals()
    _report_skipped(skipped, args.format, stream)
    folders = [_unreadable_folder(folder, reason) for folder, reason in unreadable]
    totals.scanned -= len(folders)  # reported and counted as failed like files, but not scanned
    for outcome in itertools.chain(folders, _outcomes(paths, jobs, args.strategy, limits)):
        progress.step(outcome.path)
        if outcome.changed:
            if args.diff:
                sys.stdout.write(_safe(_diff(outcome.path, outcome)))
            elif not args.check:
                _write(outcome)
        totals.add(outcome)
        for finding in outcome.findings:
            if args.format == "text":
                progress.close()
                print(printable(finding.format(shown_path(outcome.path))), file=stream)
            elif args.format == "github":
                print(github_annotation(finding, outcome.changed), file=stream)
            else:
                records.append(finding_record(finding, outcome.changed))
        if args.format == "text":
            for line in format_sites(_counted_sites(outcome), shown_path(outcome.path), would=args.diff or args.check):
                print(printable(line), file=stream)
    progress.close()
    line = _summary_line(totals, skipped, would=args.diff or args.check)
    if args.format == "json":
        mode = "diff" if args.diff else "check" if args.check else "write"
        json.dump(_json_report(mode, totals, skipped, records), stream, indent=2)
        stream.write("\n")
    if args.format == "text" and stream is not summary_stream:
        print(line, file=stream)  # a text report file ends with the summary too
    print(line, file=summary_stream)
    if totals.failed:
        return EXIT_FAILED
    return EXIT_CHANGES if totals.rewritten or totals.attention else EXIT_CLEAN


def _report_skipped(skipped: list[Skip], report_format: str, stream: TextIO) -> None:
    """What the walk passed over: a line each in text, a notice each for GitHub (in JSON, a list)."""
    for skip in skipped:
        if report_format == "text":
            print(f"{shown_path(str(skip.path))}: skipped: {skip.reason}", file=stream)
        elif report_format == "github":
            print(f"::notice file={_escape_property(shown_path(str(skip.path)))},title=skipped::"
                  f"{_escape_data(skip.reason)}", file=stream)


def _write(outcome: Outcome) -> None:
    """Replaces the file with the rewrite; a file that cannot be replaced fails with a finding."""
    try:
        write_atomically(Path(outcome.path), outcome.output or b"", expected=outcome.source)
    except FileChangedError:
        outcome.findings.append(Finding(1, 1, "MGPU507", (
            "the file changed on disk while the codemod ran (edited or saved meanwhile?); "
            "not replaced, your version is kept. Rerun the codemod on it."
        ), outcome.path))
        outcome.failed = True
    except OSError as error:
        outcome.findings.append(Finding(
            1, 1, "MGPU503",
            f"cannot write the file ({error.strerror or error}); left unchanged. Make it writable and rerun.",
            outcome.path,
        ))
        outcome.failed = True
    except Exception as error:  # noqa: BLE001 - one file never ends the run
        outcome.findings.append(unexpected(outcome.path, f"{type(error).__name__}: {error}".splitlines()[0]))
        outcome.failed = True


_SKIP_NOUNS = {"symlink": ("symlink", "symlinks"), "folder": ("folder", "folders"),
               "ignored": ("git-ignored file", "git-ignored files")}


def _summary_line(totals: _Totals, skipped: list[Skip], would: bool) -> str:
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


def _json_report(mode: str, totals: _Totals, skipped: list[Skip],
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
