"""The codemod's command line: the `migrate` and `verify` subcommands and their arguments, checked.

`multi-gpu-codemod PATH...` is `multi-gpu-codemod migrate PATH...`: a first argument that is not a
subcommand name starts `migrate`. A path spelt like a subcommand is given after `migrate`
(`multi-gpu-codemod migrate verify`) or as `./verify`.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence

from .isolation import parse_size
from .run_files import DEFAULT_LIMITS
from .verify.compare import TOLERANCES

__all__ = ["SUBCOMMANDS", "WORKERS_PER_CORE", "parse", "parser", "worker_count"]

SUBCOMMANDS = ("migrate", "verify")
# Workers per core at most: parsing is CPU-bound, so more only cost memory and file descriptors.
WORKERS_PER_CORE = 4
_MIN_TIMEOUT, _MAX_TIMEOUT = 0.001, 86400.0
_HELP_FLAGS = ("-h", "--help")


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """The parsed command line; `args.command` is "migrate" or "verify". Exits 2 on a usage error."""
    args = list(argv)
    if not args or (args[0] not in SUBCOMMANDS and args[0] not in _HELP_FLAGS):
        args.insert(0, "migrate")  # `multi-gpu-codemod PATH...`, as the codemod was always run (none: "PATH needed")
    return parser().parse_args(args)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="multi-gpu-codemod",
        description="Rewrite Keras multi_gpu_model code into tf.distribute.MirroredStrategy scope code "
                    "(`multi-gpu-codemod PATH...`, short for `migrate PATH...`), or prove a rewrite by "
                    "training both versions (`verify SCRIPT`).",
    )
    commands = top.add_subparsers(dest="command", required=True, metavar="{migrate,verify}")
    _add_migrate(commands.add_parser(
        "migrate", help="rewrite files and folders (the default: `multi-gpu-codemod PATH...`)",
        description="Rewrite Keras multi_gpu_model code into tf.distribute.MirroredStrategy scope code.",
    ))
    _add_verify(commands.add_parser(
        "verify", help="run a legacy script through the shim, migrated and on one device, and compare",
        description="Run a legacy multi_gpu_model script unchanged (shim), migrated (codemod) and on "
                    "one device, with fixed seeds, and compare losses, weights and predictions.",
    ))
    return top


def _add_migrate(parser: argparse.ArgumentParser) -> None:
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
    parser.add_argument("--max-size", type=_size, default=DEFAULT_LIMITS.max_bytes, metavar="SIZE",
                        help="largest file rewritten, e.g. 512K, 2M (default 1M; notebooks: 10 times that); "
                             "a larger one that may hold a site is reported (MGPU504), never parsed")
    parser.add_argument("--timeout", type=_seconds, default=DEFAULT_LIMITS.timeout, metavar="SECONDS",
                        help="time allowed to rewrite one file (default 300, at most 86400); beyond it the file is "
                             "reported (MGPU504)")


def _add_verify(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("script", help="a runnable legacy script (run from a scratch folder; it may write files)")
    parser.add_argument("--gpus", type=_gpus, default=2,
                        help="simulated GPUs for the shim and migrated runs (default 2)")
    parser.add_argument("--keras", choices=("auto", "keras3", "tf_keras"), default="auto",
                        help="backend (auto: tf_keras for tf.keras scripts, Keras 3 otherwise)")
    parser.add_argument("--original", action="store_true",
                        help="also run the re-implementation of the original slicing algorithm "
                             "(tf_keras scripts, source checkout)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per run (default 600)")
    parser.add_argument("--epochs-tolerance", "--rtol", dest="rtol", type=float, default=None,
                        help="relative tolerance of the reference comparisons "
                             f"(default {TOLERANCES['reference'][0]:g})")
    parser.add_argument("--workdir", help="keep the runs' folders here (outputs, stdout.txt, stderr.txt)")
    parser.add_argument("--json", metavar="FILE", type=_report_path, help="also write the comparisons as JSON")


def _whole_number(text: str, least: int, problem: str) -> int:
    """`text` as a whole number of at least `least`, else the usage error `problem` with `text`."""
    try:
        value = int(text)
    except ValueError:
        value = least - 1
    if value < least:
        raise argparse.ArgumentTypeError(problem.format(text=repr(text)))
    return value


def _gpus(text: str) -> int:
    return _whole_number(text, 2, "must be a whole number of at least 2: {text}")


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
    return _whole_number(text, 1, "not a positive whole number of workers: {text} (1: no pool)")


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


