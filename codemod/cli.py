"""`multi-gpu-codemod`: reads the command line (arguments.py), runs the files (run_files.py) and
says what happened (reports.py); `verify` runs the migration proof (verify/)."""

from __future__ import annotations

import argparse
import io
import itertools
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from . import reports, run_files
from .arguments import parse, worker_count
from .files import Skip, iter_python_files
from .isolation import Limits, memory_budget
from .sites import format_sites

__all__ = ["EXIT_CHANGES", "EXIT_CLEAN", "EXIT_FAILED", "main", "migrate"]

EXIT_CLEAN, EXIT_CHANGES, EXIT_FAILED = 0, 1, 2


def main(argv: Sequence[str] | None = None) -> int:
    """`multi-gpu-codemod ...` (also `python -m multi_gpu_codemod ...`); returns the exit code."""
    args = parse(sys.argv[1:] if argv is None else argv)
    if args.command == "verify":
        from .verify import run as verify

        return verify(args)
    return migrate(args)


def migrate(args: argparse.Namespace) -> int:
    """`multi-gpu-codemod [migrate] PATH...`: rewrite, `--diff` or `--check`."""
    jobs = worker_count(args.jobs)
    skipped: list[Skip] = []
    unreadable: list[tuple[Path, str]] = []
    paths = [str(p) for p in iter_python_files(args.paths, skipped, unreadable)]
    if args.report:
        problem = reports.report_problem(args.report, [*args.paths, *paths])
        if problem:
            print(f"multi-gpu-codemod: error: cannot write the report to {reports.shown_path(args.report)}: {problem}",
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
        problem = reports.report_problem(args.report, [*args.paths, *paths])
        try:
            if problem:
                raise OSError(problem)
            reports.write_report(args.report, report.getvalue().encode("utf-8", "backslashreplace"))
        except OSError as error:
            print(f"multi-gpu-codemod: error: cannot write the report to {reports.shown_path(args.report)}: "
                  f"{(error.strerror or str(error)).rstrip('.')}. The files' own results stand (see the summary "
                  "line); give a writable file path and rerun with --check to get the report.", file=sys.stderr)
            return EXIT_FAILED
    return status


def _run(args: argparse.Namespace, jobs: int, paths: list[str], skipped: list[Skip],
         unreadable: list[tuple[Path, str]], stream: TextIO, summary_stream: TextIO) -> int:
    limits = Limits(max_bytes=args.max_size, timeout=args.timeout, memory=memory_budget(jobs))
    enabled = args.progress == "always" or (args.progress == "auto" and sys.stderr.isatty() and len(paths) >= 50)
    progress = reports.Progress(len(paths), enabled)
    records: list[dict[str, object]] = []
    totals = reports.Totals()
    reports.report_skipped(skipped, args.format, stream)
    folders = [run_files.unreadable_folder(folder, reason) for folder, reason in unreadable]
    totals.scanned -= len(folders)  # reported and counted as failed like files, but not scanned
    for outcome in itertools.chain(folders, run_files.outcomes(paths, jobs, args.strategy, limits)):
        progress.step(outcome.path)
        if outcome.changed:
            if args.diff:
                sys.stdout.write(reports.safe_text(reports.unified_diff(outcome.path, outcome)))
            elif not args.check:
                run_files.write_outcome(outcome)
        totals.add(outcome)
        for finding in outcome.findings:
            if args.format == "text":
                progress.close()
                print(reports.printable(finding.format(reports.shown_path(outcome.path))), file=stream)
            elif args.format == "github":
                print(reports.github_annotation(finding, outcome.changed), file=stream)
            else:
                records.append(reports.finding_record(finding, outcome.changed))
        if args.format == "text":
            sites = reports.counted_sites(outcome)
            for line in format_sites(sites, reports.shown_path(outcome.path), would=args.diff or args.check):
                print(reports.printable(line), file=stream)
    progress.close()
    line = reports.summary_line(totals, skipped, would=args.diff or args.check)
    if args.format == "json":
        mode = "diff" if args.diff else "check" if args.check else "write"
        json.dump(reports.json_report(mode, totals, skipped, records), stream, indent=2)
        stream.write("\n")
    if args.format == "text" and stream is not summary_stream:
        print(line, file=stream)  # a text report file ends with the summary too
    print(line, file=summary_stream)
    if totals.failed:
        return EXIT_FAILED
    return EXIT_CHANGES if totals.rewritten or totals.attention else EXIT_CLEAN
