"""The outcome of `verify`: every run and comparison, the verdict, as text or as a JSON document."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .compare import BN_MOVING_STATS, TOLERANCES, Comparison
from .runs import Run

__all__ = ["Report", "format_report", "report_document"]

_METRICS = ("losses", "val losses", "weights", "non-trainable", "predictions")


@dataclass
class Report:
    script: str
    runs: dict[str, Run]
    comparisons: list[Comparison]
    findings: list[str]
    gpus: int = 2  # the simulated GPUs the shim and migrated runs were given

    @property
    def passed(self) -> bool:
        return all(r.ok or r.skipped for r in self.runs.values()) and not any(
            c.status == "FAIL" and c.required for c in self.comparisons
        )


def format_report(report: Report) -> str:
    """The report a person reads: runs, comparisons, tolerances, explanations, then the verdict."""
    lines = [f"verify {report.script}", ""]
    lines += _run_table(report)
    lines.append("")
    lines += _comparison_table(report)
    lines.append("")
    for kind, (rtol, atol) in TOLERANCES.items():
        lines.append(f"tolerance {kind}: |a - b| <= {atol:g} + {rtol:g} * |b|")
    lines += _explanations(report)
    lines.append("")
    lines.append("VERDICT: " + _verdict(report))
    return "\n".join(lines)


def _verdict(report: Report) -> str:
    if not report.passed:
        return "FAIL"
    if not any(c.status == "ok" for c in report.comparisons):
        return "PASS: every run finished, but nothing was compared (no training or prediction verify records)"
    migrated = report.runs.get("migrated")
    if migrated is not None and migrated.ok and migrated.replicas == 1 and report.gpus > 1:
        return (
            f"PASS on one replica only: the migrated run trained on 1 device, not the {report.gpus} simulated "
            "GPUs, so its multi-GPU path did not run (the script's own GPU count, through device_lib, "
            "CUDA_VISIBLE_DEVICES or an argument, chose one device); set that count and rerun to prove it"
        )
    return "PASS: the migrated script trains the same model"


def report_document(report: Report) -> dict[str, Any]:
    """The `--json` document: verdict, findings, runs and comparisons."""
    return {
        "script": report.script, "passed": report.passed, "verdict": _verdict(report), "findings": report.findings,
        "runs": {m: {"ok": r.ok, "error": r.error, "replicas": r.replicas, "losses": r.losses,
                     "seconds": round(r.seconds, 2)} for m, r in report.runs.items()},
        "comparisons": [c.__dict__ for c in report.comparisons],
    }


def _run_table(report: Report) -> list[str]:
    lines = [f"{'run':<10} {'status':<7} {'replicas':>8} {'epochs':>6} {'final loss':>12} {'seconds':>8}"]
    for run in report.runs.values():
        losses = run.losses.get("loss") or next(iter(run.losses.values()), [])
        final = f"{losses[-1]:.6f}" if losses else "-"
        status = "ok" if run.ok else "skipped" if run.skipped else "FAILED"
        lines.append(f"{run.mode:<10} {status:<7} {run.replicas or '-':>8} "
                     f"{len(losses) if run.ok else '-':>6} {final:>12} {run.seconds:>8.1f}")
    return lines


def _comparison_table(report: Report) -> list[str]:
    """One row per pair of runs, one column per metric compared."""
    metrics = [m for m in _METRICS if any(c.metric == m for c in report.comparisons)]
    lines = [f"{'comparison':<22}" + "".join(f"{m:>24}" for m in metrics)]
    pairs: list[tuple[str, str]] = []
    for c in report.comparisons:
        if (c.left, c.right) not in pairs:
            pairs.append((c.left, c.right))
    for left, right in pairs:
        kind = "tight" if {left, right} == {"shim", "migrated"} else "reference"
        cells = [_cell(report.comparisons, left, right, m) for m in metrics]
        lines.append(f"{left + ' vs ' + right:<22}" + "".join(f"{cell:>24}" for cell in cells) + f"   ({kind})")
    return lines


def _cell(comparisons: list[Comparison], left: str, right: str, metric: str) -> str:
    c = next((c for c in comparisons if (c.left, c.right, c.metric) == (left, right, metric)), None)
    if c is None:
        return "-"
    if c.status == "skip":
        return "skip"
    return f"{c.status} {c.diff:.1e}" if c.diff is not None else c.status


# Keras 3 on a MirroredStrategy, given a batch its replicas cannot split evenly (the shim fixes it)
_UNEVEN_BATCH = ("AddN must have the same size and shape", "input and filter must have the same depth")
_UNEVEN_HINT = (
    "hint: Keras 3 under MirroredStrategy fails on a batch the replicas cannot split evenly (a first "
    "evaluation batch not divisible by the replica count, or a last batch smaller than it); choose "
    "`validation_split`, the data size or the batch size so that every batch divides by the replica count "
    "(MIGRATION.md, \"BatchNormalization and the other Keras 3 pitfalls\"); the shim runs it as it is."
)


def _explanations(report: Report) -> list[str]:
    """Why comparisons are n/c, the codemod's findings, failed or skipped runs and the runs' notes."""
    lines = []
    reasons = []
    for c in report.comparisons:
        if c.status == "n/c" and c.detail not in reasons:
            reasons.append(c.detail)
            if c.detail == BN_MOVING_STATS:
                lines.append(f"n/c (not comparable, not a failure): {c.detail}")
            else:
                lines.append(f"n/c (not comparable, not a failure): {c.left} vs {c.right}: {c.detail}: "
                             "each replica normalises / drops out its own slice of the batch")
    for finding in report.findings:
        lines.append(f"codemod: {finding}")
    shim, migrated = report.runs.get("shim"), report.runs.get("migrated")
    if shim and migrated and shim.ok and migrated.ok and shim.replicas and migrated.replicas and (
        shim.replicas != migrated.replicas
    ):
        lines.append(
            f"note: the shim run used {shim.replicas} replica(s), the migrated {migrated.replicas}: they did not "
            "train on the same devices. Either the legacy script counted GPUs where simulation shows none "
            "(`device_lib`, `nvidia-smi`; on a machine with GPUs both count them the same), or its own "
            "`try`/`except` fell back to one device when `multi_gpu_model` raised: the shim run's output says which"
        )
    for run in report.runs.values():
        if run.skipped:
            lines.append(f"{run.mode} run skipped: {run.skipped}")
        elif not run.ok:
            lines.append(f"{run.mode} run failed: {run.error}")
            if run.mode == "migrated" and any(mark in (run.error or "") for mark in _UNEVEN_BATCH):
                lines.append(_UNEVEN_HINT)
    # A note every run that went through made (IPython lines skipped, say) is said once.
    noted = [run for run in report.runs.values() if run.ok]
    shared = [note for note in noted[0].notes if all(note in run.notes for run in noted)] if len(noted) > 1 else []
    lines += [f"every run: {note}" for note in shared]
    for run in noted:
        lines += [f"{run.mode}: {note}" for note in run.notes if note not in shared]
    return lines
