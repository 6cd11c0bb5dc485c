"""Two runs compared metric by metric (losses, weights, predictions) within stated tolerances."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .runs import Run

__all__ = ["BN_MOVING_STATS", "TOLERANCES", "Comparison", "compare_runs"]

# (rtol, atol) per comparison kind; a value passes when |a - b| <= atol + rtol * |b|.
TOLERANCES: dict[str, tuple[float, float]] = {
    # shim vs migrated: same devices, same replica count, same batch split, same reduction
    # (ReductionToOneDevice on simulated CPUs), same seeds: only op scheduling may differ,
    # so a few float32 ulps (eps = 1.2e-7) grown over the training steps.
    "tight": (1e-5, 1e-6),
    # N replicas vs one device (and vs the original slicing graph): the gradient is the same
    # mean over the global batch, but summed in another order (per-replica partial sums, then
    # an all-reduce), ~sqrt(N) * eps * |g| per step; optimizers (Adam, RMSprop divide by a
    # running gradient magnitude) amplify such differences for near-zero gradients. Measured
    # on the fixtures: <= 1e-5 after 2-5 epochs; 1e-3 relative leaves two orders of margin
    # and still catches any real change (wrong batch split, re-initialised weights, a
    # lost update, which all show at 1e-2 and above).
    "reference": (1e-3, 1e-4),
}

BN_MOVING_STATS = ("BatchNormalization moving statistics: plain MirroredStrategy code on Keras 3 keeps "
                   "one copy per replica and saves replica 0's, the shim averages them (MIGRATION.md)")


@dataclass
class Comparison:
    """One metric between two runs: 'ok', 'FAIL', 'n/c' (not comparable) or 'skip'."""

    left: str
    right: str
    metric: str
    status: str
    diff: float | None = None
    detail: str = ""
    required: bool = True


def compare_runs(left: Run, right: Run, kind: str, required: bool, legacy: bool = False) -> list[Comparison]:
    """`left` against `right` with the `kind` tolerances (see TOLERANCES), one entry per metric.

    A metric that differs for a reason the migration cannot remove (layers that see each
    replica's slice of the batch, BatchNormalization moving statistics) is 'n/c', not 'FAIL'.
    """
    rtol, atol = TOLERANCES[kind]
    out: list[Comparison] = []
    if not (left.ok and right.ok):
        return [Comparison(left.mode, right.mode, m, "skip", detail="a run failed", required=required)
                for m in ("losses", "weights", "predictions")]
    replicas_differ = (left.replicas or 1) != (right.replicas or 1)
    sensitive = sorted(set(left.split_sensitive) | set(right.split_sensitive))
    not_comparable = ""
    if replicas_differ and sensitive:
        not_comparable = "/".join(sensitive) + " (per-replica)"

    # Moving statistics only feed inference (validation losses, predictions, saved files).
    bn_stats = ("BatchNormalization" in sensitive and not legacy and not replicas_differ
                and "migrated" in (left.mode, right.mode) and "shim" in (left.mode, right.mode))

    def add(metric: str, pairs: list[tuple[Any, Any]]) -> None:
        if not pairs:
            out.append(Comparison(left.mode, right.mode, metric, "skip", detail="nothing to compare",
                                  required=required))
            return
        diff, ok = _max_diff(pairs, rtol, atol)
        reason = not_comparable or (BN_MOVING_STATS if bn_stats and metric != "losses" else "")
        if reason and not ok:
            out.append(Comparison(left.mode, right.mode, metric, "n/c", diff, reason, required=False))
        else:
            out.append(Comparison(left.mode, right.mode, metric, "ok" if ok else "FAIL", diff, required=required))

    keys = [k for k in left.losses if k in right.losses]
    add("losses", [(left.losses[k], right.losses[k]) for k in keys if "val_" not in k])
    if any("val_" in k for k in keys):
        add("val losses", [(left.losses[k], right.losses[k]) for k in keys if "val_" in k])
    if len(left.weights) != len(right.weights):
        out.append(Comparison(left.mode, right.mode, "weights", "FAIL", None,
                              f"{len(left.weights)} vs {len(right.weights)} variables", required))
    else:
        trainable = [(a, b) for a, b, t in zip(left.weights, right.weights, left.trainable) if t]
        frozen = [(a, b) for a, b, t in zip(left.weights, right.weights, left.trainable) if not t]
        add("weights", trainable)
        if frozen:
            add("non-trainable", frozen)
    names = [k for k in left.predictions if k in right.predictions]
    add("predictions", [(left.predictions[k], right.predictions[k]) for k in names])
    return out


def _max_diff(pairs: list[tuple[Any, Any]], rtol: float, atol: float) -> tuple[float, bool]:
    import numpy as np

    worst, ok = 0.0, True
    for a, b in pairs:
        a, b = np.asarray(a, dtype="float64"), np.asarray(b, dtype="float64")
        if a.shape != b.shape:
            return float("inf"), False
        if a.size:
            worst = max(worst, float(np.max(np.abs(a - b))))
            ok = ok and bool(np.allclose(a, b, rtol=rtol, atol=atol))
    return worst, ok
