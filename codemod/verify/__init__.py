"""`multi-gpu-codemod verify SCRIPT`: proof that the migration preserves training.

For one runnable legacy script, each run in its own subprocess, with the same fixed seeds
(`random`, NumPy, TensorFlow / `keras.utils.set_random_seed(0)`) set before the script runs:

- ``shim``: the script unchanged, `multi_gpu_model` served by multi-gpu-compat, on N simulated GPUs;
- ``migrated``: the codemod's rewrite of a copy, run on the same N simulated devices with the
  shim's import hook switched OFF (`MULTI_GPU_COMPAT_DISABLE=1`): it must not need the shim;
- ``single``: the script unchanged on one device, `multi_gpu_model` replaced by the identity;
- ``original`` (``--original``, tf_keras scripts only): `multi_gpu_model` replaced by the
  re-implementation of the ORIGINAL Lambda-slicing algorithm in
  fixtures/legacy_models/make_legacy_models.py (a source checkout is needed).

Each run records the per-epoch losses of every `fit` (by wrapping `Model.fit`), the final
weights of the trained model and the predictions of every model file the script saved
(reloaded, on the script's `x_test.npy`, else on the `predictions.npy` it wrote). The runs are
then compared; see `TOLERANCES` for the bounds and why. Exit code 0: all comparisons that are
required pass; 1: a run failed or a required comparison did not match.

Modules: harness.py (`verify()`: the runs, then the comparisons), runs.py (starting one run),
child.py (the child process, the only part that imports TensorFlow), compare.py (tolerances,
one comparison), report.py (the report and its verdict). This module runs the subcommand, whose
arguments `arguments.py` reads.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Sequence

from ..reports import report_problem, shown_path, write_report
from .compare import TOLERANCES, Comparison, compare_runs
from .harness import uses_tf_keras, verify
from .report import Report, format_report, report_document
from .runs import MISSING_TENSORFLOW, Run, has_tensorflow

__all__ = [
    "TOLERANCES", "Comparison", "Report", "Run", "compare_runs", "format_report", "main", "run", "uses_tf_keras",
    "verify",
]


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m multi_gpu_codemod.verify ...`, the same as `multi-gpu-codemod verify ...`."""
    from ..cli import main as cli_main

    return cli_main(["verify", *(sys.argv[1:] if argv is None else argv)])


def run(args: argparse.Namespace) -> int:
    """`multi-gpu-codemod verify ...` (arguments.py reads it): 0 when the migration is proven, 1 when
    not, 2 when it cannot run."""
    if args.rtol is not None:
        TOLERANCES["reference"] = (args.rtol, TOLERANCES["reference"][1])
    if not Path(args.script).is_file():
        print(f"verify: {args.script}: no such file", file=sys.stderr)
        return 2
    if args.script.endswith(".ipynb"):
        print(f"verify: {shown_path(args.script)} is a notebook, and verify runs scripts. Export it first "
              "(`jupyter nbconvert --to script NOTEBOOK`) and verify the .py; Received: a .ipynb file.",
              file=sys.stderr)
        return 2
    if args.json:
        problem = report_problem(args.json, [args.script])
        if problem is not None:
            print(f"verify: cannot write the JSON report to {shown_path(args.json)}: {problem}", file=sys.stderr)
            return 2
    if not has_tensorflow():
        print(f"verify: {MISSING_TENSORFLOW}", file=sys.stderr)
        return 2
    report = verify(args.script, gpus=args.gpus, keras_flavour=args.keras, original=args.original,
                    timeout=args.timeout, workdir=args.workdir)
    print(format_report(report))
    if args.json:
        try:
            write_report(args.json, json.dumps(report_document(report), indent=2).encode())
        except OSError as error:
            print(f"verify: cannot write the JSON report to {shown_path(args.json)}: "
                  f"{(error.strerror or str(error)).rstrip('.')}. The comparison above stands.", file=sys.stderr)
            return 2
    return 0 if report.passed else 1
