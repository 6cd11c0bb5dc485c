"""`python -m codemod PATH...` / `multi-gpu-codemod`: rewrite, `--diff` or `--check`."""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Sequence
from pathlib import Path

from .core import TransformResult, transform_source
from .files import iter_python_files, write_atomically
from .findings import Finding

__all__ = ["main"]

EXIT_CLEAN, EXIT_CHANGES, EXIT_FAILED = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="multi-gpu-codemod",
        description="Rewrite Keras multi_gpu_model code into tf.distribute.MirroredStrategy scope code.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files or directories (recursing over *.py)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--diff", action="store_true", help="print unified diffs, write nothing")
    mode.add_argument("--check", action="store_true", help="write nothing; exit 1 if anything would change")
    return parser


def _process(path: Path) -> TransformResult:
    try:
        source = path.read_bytes()
    except OSError as error:
        finding = Finding(1, 1, "MGPU503", f"cannot read the file ({error.strerror}); check the path and permissions.", str(path))
        return TransformResult(b"", b"", [finding], failed=True)
    return transform_source(source, str(path))


def _diff(path: Path, result: TransformResult) -> str:
    encoding = "utf-8"
    try:
        before, after = result.source.decode(encoding), result.output.decode(encoding)
    except UnicodeDecodeError:
        before, after = result.source.decode("latin-1"), result.output.decode("latin-1")
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
        )
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    report = sys.stderr if args.diff else sys.stdout  # keep --diff output a clean patch
    scanned = rewritten = attention = failed = 0
    for path in iter_python_files(args.paths):
        scanned += 1
        result = _process(path)
        if result.changed:
            if args.diff:
                sys.stdout.write(_diff(path, result))
            elif not args.check:
                try:
                    write_atomically(path, result.output)
                except OSError as error:
                    result.findings.append(Finding(1, 1, "MGPU503", f"cannot write the file ({error.strerror}); left unchanged.", str(path)))
                    result.failed = True
            if not result.failed:
                rewritten += 1
        failed += result.failed
        attention += bool(result.findings) and not result.failed
        for finding in result.findings:
            print(finding.format(str(path)), file=report)
    verb = "would be rewritten" if args.diff or args.check else "rewritten"
    print(
        f"{scanned} file{'s' if scanned != 1 else ''} scanned, {rewritten} {verb}, "
        f"{attention} need{'s' if attention == 1 else ''} attention, {failed} failed",
        file=report,
    )
    if failed:
        return EXIT_FAILED
    return EXIT_CHANGES if rewritten or attention else EXIT_CLEAN
