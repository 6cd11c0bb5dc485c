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
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

__all__ = ["Comparison", "Report", "Run", "TOLERANCES", "main", "verify"]

# The codemod needs libcst alone; only verify, which trains the script's models, needs more.
MISSING_TENSORFLOW = (
    "verify trains the script's models and needs TensorFlow, which is not installed here "
    "(the codemod itself does not need it). Install it next to the codemod: "
    "`pip install 'multi-gpu-compat[cpu]'` (CPU), `pip install 'multi-gpu-compat[gpu]'` (NVIDIA GPUs), "
    "plus `pip install --no-deps tf-keras` for tf.keras scripts; or verify in the "
    "environment the script runs in."
)


def _has_tensorflow() -> bool:
    return importlib.util.find_spec("tensorflow") is not None

# Layers whose training-time behaviour depends on how the batch is split across replicas.
# BatchNormalization normalises each replica's slice with that slice's statistics; Dropout
# draws its masks per replica from per-replica random streams. Neither can match a
# single-device run, so those comparisons are reported as "n/c" (not comparable), not failed.
SPLIT_SENSITIVE = ("BatchNormalization", "Dropout", "SpatialDropout", "AlphaDropout",
                   "GaussianDropout", "GaussianNoise")

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


@dataclass
class Run:
    """One subprocess run of the script."""

    mode: str
    ok: bool = False
    seconds: float = 0.0
    error: str = ""
    skipped: str = ""
    replicas: int | None = None
    losses: dict[str, list[float]] = field(default_factory=dict)
    weights: list[Any] = field(default_factory=list)
    weight_names: list[str] = field(default_factory=list)
    trainable: list[bool] = field(default_factory=list)
    predictions: dict[str, Any] = field(default_factory=dict)
    split_sensitive: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


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


@dataclass
class Report:
    script: str
    runs: dict[str, Run]
    comparisons: list[Comparison]
    findings: list[str]

    @property
    def passed(self) -> bool:
        return all(r.ok or r.skipped for r in self.runs.values()) and not any(
            c.status == "FAIL" and c.required for c in self.comparisons
        )


# ---------------------------------------------------------------------------------------------
# The child: runs one script with seeds, hooks and a recorder.
# ---------------------------------------------------------------------------------------------

def _child(config: dict[str, Any]) -> None:
    import random
    import runpy

    mode, gpus, script = config["mode"], config["gpus"], config["script"]
    legacy = os.environ.get("TF_USE_LEGACY_KERAS", "") in ("1", "true", "True")
    if mode == "migrated":
        # The import hook is off; only the device simulation of the project is used.
        from multi_gpu_compat import simulation

        simulation.simulate_gpus(gpus)
    if mode in ("single", "original"):
        import multi_gpu_compat.multi_gpu

        replacement = _identity if mode == "single" else _original_algorithm(config, gpus)
        multi_gpu_compat.multi_gpu.multi_gpu_model = replacement  # the import hook hands out this one
    import numpy as np
    import tensorflow as tf

    if legacy:
        import tf_keras as keras
    else:
        import keras
    if mode in ("single", "original"):  # modules imported before the swap
        for module in list(sys.modules.values()):
            current = getattr(module, "multi_gpu_model", None)
            if callable(current) and getattr(current, "__module__", "") == "multi_gpu_compat.multi_gpu":
                try:
                    module.multi_gpu_model = multi_gpu_compat.multi_gpu.multi_gpu_model
                except (AttributeError, TypeError):
                    pass
    random.seed(0)
    np.random.seed(0)
    tf.random.set_seed(0)
    keras.utils.set_random_seed(0)

    fitted: list[Any] = []
    histories: list[dict[str, list[float]]] = []
    depth = [0]
    original_fit = keras.Model.fit

    def fit(self: Any, *args: Any, **kwargs: Any) -> Any:
        depth[0] += 1
        try:
            history = original_fit(self, *args, **kwargs)
        finally:
            depth[0] -= 1
        if depth[0] == 0:
            fitted.append(self)
            histories.append({k: [float(v) for v in vals] for k, vals in getattr(history, "history", {}).items()})
        return history

    keras.Model.fit = fit
    out = Path(config["out"])
    before = {p.name for p in Path.cwd().iterdir()}
    sys.argv = [script]
    sys.path.insert(0, str(Path(script).parent))
    runpy.run_path(script, run_name="__main__")
    keras.Model.fit = original_fit

    result: dict[str, Any] = {"losses": {}, "notes": [], "predictions": [], "split_sensitive": []}
    for i, history in enumerate(histories):
        for key, values in history.items():
            if "loss" in key:
                name = key if len(histories) == 1 else f"fit{i + 1}:{key}"
                result["losses"][name] = values
    arrays: dict[str, Any] = {}
    if fitted:
        model = fitted[-1]
        template = _template_of(model)
        strategy = getattr(model, "distribute_strategy", None)
        result["replicas"] = int(getattr(strategy, "num_replicas_in_sync", 1) or 1)
        variables = list(template.weights)
        result["weight_names"] = [getattr(v, "path", None) or v.name for v in variables]
        result["trainable"] = [bool(v.trainable) for v in variables]
        for i, v in enumerate(variables):
            arrays[f"w{i}"] = np.asarray(v.numpy())
        result["split_sensitive"] = sorted(_split_sensitive(template))
    else:
        result["notes"].append("the script never called fit")
    x_test = Path("x_test.npy")
    x = np.load(x_test) if x_test.exists() else None
    if Path("predictions.npy").exists():
        arrays["p:predictions.npy"] = np.load("predictions.npy")
        result["predictions"].append("predictions.npy")
    new_files = sorted(p for p in Path.cwd().iterdir() if p.name not in before)
    for path in new_files:
        if path.suffix not in (".h5", ".keras") or path.name.endswith(".weights.h5"):
            continue
        try:
            loaded = keras.models.load_model(str(path), compile=False)
        except Exception as error:  # weights-only files and the like
            result["notes"].append(f"{path.name}: not a loadable model ({type(error).__name__})")
            continue
        if x is None:
            continue
        y = loaded.predict(x, verbose=0)
        for j, part in enumerate(y if isinstance(y, (list, tuple)) else [y]):
            key = f"{path.name}" + (f"[{j}]" if isinstance(y, (list, tuple)) else "")
            arrays["p:" + key] = np.asarray(part)
            result["predictions"].append(key)
    np.savez(out / "arrays.npz", **arrays)
    (out / "result.json").write_text(json.dumps(result))


def _identity(model: Any, *args: Any, **kwargs: Any) -> Any:
    """The single-device reference: `multi_gpu_model` returns the template itself.

    A `ModelMGPU(Model)` wrapper copies the result's `__dict__` into a half-built instance;
    make that instance a model of the template's class so that it can train.
    """
    caller = sys._getframe(1)
    instance = caller.f_locals.get("self")
    if instance is None or instance is model or not callable(getattr(type(instance), "fit", None)):
        return model
    # A functional model over the template's own layers (weights shared, live), whose
    # `__dict__` the wrapper copies; the instance becomes a model of that class too.
    wrapper = type(model)(model.inputs, model.outputs) if hasattr(model, "inputs") else model
    cls = type(instance)
    if not isinstance(instance, type(wrapper)):
        instance.__class__ = type(cls.__name__, (cls, type(wrapper)), {"__module__": cls.__module__})
    wrapper.__dict__["_verify_template"] = model
    return wrapper


def _original_algorithm(config: dict[str, Any], default_gpus: int) -> Any:
    import importlib.util

    path = Path(config["original"])
    spec = importlib.util.spec_from_file_location("_make_legacy_models", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def multi_gpu_model(model: Any, gpus: Any = None, cpu_merge: bool = True, cpu_relocation: bool = False) -> Any:
        del cpu_merge, cpu_relocation  # devices are not part of the re-implementation
        count = len(gpus) if isinstance(gpus, (list, tuple)) else int(gpus or default_gpus)
        parallel = module._multi_gpu_model(model, count)
        parallel.__dict__["_verify_template"] = model
        return parallel

    return multi_gpu_model


def _template_of(model: Any) -> Any:
    for name in ("_verify_template", "_compat_template", "_smodel"):
        found = model.__dict__.get(name)
        if found is not None and found is not model:
            return found
    return model


def _split_sensitive(model: Any) -> set[str]:
    found: set[str] = set()
    seen: set[int] = set()

    def walk(layer: Any) -> None:
        if id(layer) in seen:
            return
        seen.add(id(layer))
        for klass in type(layer).__mro__:
            if klass.__name__ in SPLIT_SENSITIVE:
                found.add("BatchNormalization" if "Batch" in klass.__name__ else "Dropout")
        for sub in getattr(layer, "layers", []) or []:
            walk(sub)

    walk(model)
    return found


# ---------------------------------------------------------------------------------------------
# The parent: prepares the runs, starts them, compares.
# ---------------------------------------------------------------------------------------------

ORIGINAL_REFERENCE = Path(__file__).resolve().parents[1] / "fixtures" / "legacy_models" / "make_legacy_models.py"


def uses_tf_keras(source: str) -> bool:
    """True when a script is written against tf.keras (run it on tf_keras), not standalone Keras."""
    import re

    standalone = re.search(r"^\s*(from\s+keras[\s.]|import\s+keras\b)", source, re.M)
    tf_style = re.search(r"\b(tf\.keras|tensorflow\.keras|tf_keras)\b", source)
    return bool(tf_style) and not standalone


def _migrate(script: Path, target: Path) -> tuple[bool, list[str]]:
    from .core import transform_source

    result = transform_source(script.read_bytes(), str(script))
    findings = [f.format(str(script)) for f in result.findings]
    target.write_bytes(result.output if result.changed else script.read_bytes())
    return result.changed and not result.failed, findings


def _start(mode: str, script: Path, workdir: Path, *, gpus: int, legacy: bool, timeout: float,
           original: Path, hook: bool = False) -> Run:
    if not _has_tensorflow():
        raise RuntimeError(MISSING_TENSORFLOW)
    workdir.mkdir(parents=True, exist_ok=True)
    out = workdir / ".verify"
    out.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("MULTI_GPU_COMPAT_SIMULATE_GPUS", "MULTI_GPU_COMPAT_DISABLE")}
    env.update(TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="", PYTHONHASHSEED="0",
               TF_USE_LEGACY_KERAS="1" if legacy else "0")
    if mode == "shim":
        env["MULTI_GPU_COMPAT_SIMULATE_GPUS"] = str(gpus)
    elif mode == "migrated" and not hook:
        env["MULTI_GPU_COMPAT_DISABLE"] = "1"
    # This package must be importable by the child whatever the working directory.
    package_root = str(Path(__file__).absolute().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([package_root] + [p for p in [env.get("PYTHONPATH")] if p])
    config = {"mode": mode, "gpus": gpus, "script": str(script), "out": str(out), "original": str(original)}
    run = Run(mode)
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-m", f"{__package__}.verify", "_child", json.dumps(config)],
            cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        run.seconds = time.monotonic() - started
        run.error = f"timed out after {timeout:.0f} s"
        return run
    run.seconds = time.monotonic() - started
    (workdir / "stdout.txt").write_text(done.stdout)
    (workdir / "stderr.txt").write_text(done.stderr)
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        run.error = f"exit {done.returncode}: " + (lines[-1] if lines else "no output")
        run.notes.append(done.stderr[-3000:])
        return run
    import numpy as np

    data = json.loads((out / "result.json").read_text())
    arrays = np.load(out / "arrays.npz")
    run.ok = True
    run.replicas = data.get("replicas")
    run.losses = data["losses"]
    run.weight_names = data.get("weight_names", [])
    run.trainable = data.get("trainable", [])
    run.weights = [arrays[f"w{i}"] for i in range(len(run.weight_names))]
    run.predictions = {name: arrays["p:" + name] for name in data["predictions"]}
    run.split_sensitive = data["split_sensitive"]
    run.notes += data["notes"]
    return run


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


BN_MOVING_STATS = ("BatchNormalization moving statistics: plain MirroredStrategy code on Keras 3 keeps "
                   "one copy per replica and saves replica 0's, the shim averages them (MIGRATION.md)")


def _compare(left: Run, right: Run, kind: str, required: bool, legacy: bool = False) -> list[Comparison]:
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

    def add(metric: str, pairs: list[tuple[Any, Any]], why_missing: str = "") -> None:
        if not pairs:
            out.append(Comparison(left.mode, right.mode, metric, "skip", detail=why_missing or "nothing to compare", required=required))
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


def verify(script: str | Path, *, gpus: int = 2, keras_flavour: str = "auto", original: bool = False,
           timeout: float = 600, workdir: str | Path | None = None, keep: bool = False,
           modes: Sequence[str] = ("shim", "migrated", "single")) -> Report:
    """Runs the script in every mode and compares the runs; see the module docstring."""
    script = Path(script).resolve()
    source = script.read_text(encoding="utf-8", errors="replace")
    legacy = uses_tf_keras(source) if keras_flavour == "auto" else keras_flavour == "tf_keras"
    base = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="codemod-verify-"))
    findings: list[str] = []
    modes = list(modes) + (["original"] if original and "original" not in modes else [])
    runs: dict[str, Run] = {}
    try:
        for mode in modes:
            target = script
            if mode == "migrated":
                # A copy of the script's folder (its local helper modules), the script migrated.
                src = base / "migrated-src"
                src.mkdir(parents=True, exist_ok=True)
                for sibling in script.parent.glob("*.py"):
                    shutil.copy(sibling, src / sibling.name)
                target = src / script.name
                changed, findings = _migrate(script, target)
                if not changed:
                    runs[mode] = Run(mode, error="the codemod left the script unchanged (see its findings "
                                     "below; MIGRATION.md explains each code): nothing to compare")
                    continue
            if mode == "original" and not legacy:
                run = Run(mode, skipped="the original algorithm is re-implemented in tf_keras: tf.keras scripts only")
                runs[mode] = run
                continue
            run = runs[mode] = _start(mode, target, base / mode, gpus=gpus, legacy=legacy, timeout=timeout,
                                      original=ORIGINAL_REFERENCE)
            if (mode == "migrated" and not run.ok and "multi_gpu_model" in run.error
                    and any("MGPU401" in f for f in findings)):
                # The codemod keeps a copied helper it does not delete (MGPU401), and that helper
                # still imports `multi_gpu_model`: the migrated script needs the shim until the
                # helper is deleted. Run it with the import hook on, and say so.
                retry = _start(mode, target, base / "migrated-with-hook", gpus=gpus, legacy=legacy,
                               timeout=timeout, original=ORIGINAL_REFERENCE, hook=True)
                retry.notes.insert(0, "without the shim the migrated script fails (" + run.error + "): "
                                   "it still imports `multi_gpu_model` for a helper the codemod kept "
                                   "(MGPU401); ran again with the import hook on. Delete the helper "
                                   "to run without multi-gpu-compat.")
                runs[mode] = retry
        comparisons: list[Comparison] = []
        pairs = [("shim", "migrated", "tight", True), ("shim", "single", "reference", True),
                 ("migrated", "single", "reference", True), ("original", "shim", "reference", True),
                 ("original", "migrated", "reference", True)]
        for left, right, kind, required in pairs:
            if left in runs and right in runs and not (runs[left].skipped or runs[right].skipped):
                comparisons += _compare(runs[left], runs[right], kind, required, legacy)
        return Report(str(script), runs, comparisons, findings)
    finally:
        if not keep and workdir is None:
            shutil.rmtree(base, ignore_errors=True)


def format_report(report: Report) -> str:
    lines = [f"verify {report.script}", ""]
    lines.append(f"{'run':<10} {'status':<7} {'replicas':>8} {'epochs':>6} {'final loss':>12} {'seconds':>8}")
    for run in report.runs.values():
        losses = run.losses.get("loss") or next(iter(run.losses.values()), [])
        final = f"{losses[-1]:.6f}" if losses else "-"
        status = "ok" if run.ok else "skipped" if run.skipped else "FAILED"
        lines.append(f"{run.mode:<10} {status:<7} {run.replicas or '-':>8} "
                     f"{len(losses) if run.ok else '-':>6} {final:>12} {run.seconds:>8.1f}")
    lines.append("")
    metrics = [m for m in ("losses", "val losses", "weights", "non-trainable", "predictions")
               if any(c.metric == m for c in report.comparisons)]
    lines.append(f"{'comparison':<22}" + "".join(f"{m:>24}" for m in metrics))
    seen: list[tuple[str, str]] = []
    for c in report.comparisons:
        if (c.left, c.right) not in seen:
            seen.append((c.left, c.right))
    for left, right in seen:
        cells = []
        kind = "tight" if {left, right} == {"shim", "migrated"} else "reference"
        for m in metrics:
            c = next((c for c in report.comparisons if (c.left, c.right, c.metric) == (left, right, m)), None)
            if c is None:
                cells.append("-")
            elif c.status == "skip":
                cells.append("skip")
            else:
                cells.append(f"{c.status} {c.diff:.1e}" if c.diff is not None else c.status)
        lines.append(f"{left + ' vs ' + right:<22}" + "".join(f"{cell:>24}" for cell in cells) + f"   ({kind})")
    lines.append("")
    for kind, (rtol, atol) in TOLERANCES.items():
        lines.append(f"tolerance {kind}: |a - b| <= {atol:g} + {rtol:g} * |b|")
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
    for run in report.runs.values():
        if run.skipped:
            lines.append(f"{run.mode} run skipped: {run.skipped}")
        elif not run.ok:
            lines.append(f"{run.mode} run failed: {run.error}")
        for note in run.notes:
            if run.ok:
                lines.append(f"{run.mode}: {note}")
    lines.append("")
    lines.append("VERDICT: " + ("PASS: the migrated script trains the same model" if report.passed else "FAIL"))
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="multi-gpu-codemod verify",
        description="Run a legacy multi_gpu_model script unchanged (shim), migrated (codemod) and on "
                    "one device, with fixed seeds, and compare losses, weights and predictions.",
    )
    parser.add_argument("script", help="a runnable legacy script (run from a scratch folder; it may write files)")
    parser.add_argument("--gpus", type=int, default=2, help="simulated GPUs for the shim and migrated runs (default 2)")
    parser.add_argument("--keras", choices=("auto", "keras3", "tf_keras"), default="auto",
                        help="backend (auto: tf_keras for tf.keras scripts, Keras 3 otherwise)")
    parser.add_argument("--original", action="store_true",
                        help="also run the re-implementation of the original slicing algorithm (tf_keras scripts, source checkout)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per run (default 600)")
    parser.add_argument("--epochs-tolerance", "--rtol", dest="rtol", type=float, default=None,
                        help=f"relative tolerance of the reference comparisons (default {TOLERANCES['reference'][0]:g})")
    parser.add_argument("--workdir", help="keep the runs' folders here (outputs, stdout.txt, stderr.txt)")
    parser.add_argument("--json", metavar="FILE", help="also write the comparisons as JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.rtol is not None:
        TOLERANCES["reference"] = (args.rtol, TOLERANCES["reference"][1])
    if args.gpus < 2:
        print("verify: --gpus must be at least 2", file=sys.stderr)
        return 2
    if not Path(args.script).is_file():
        print(f"verify: {args.script}: no such file", file=sys.stderr)
        return 2
    if not _has_tensorflow():
        print(f"verify: {MISSING_TENSORFLOW}", file=sys.stderr)
        return 2
    flavour = {"auto": "auto", "keras3": "keras3", "tf_keras": "tf_keras"}[args.keras]
    report = verify(args.script, gpus=args.gpus, keras_flavour=flavour, original=args.original,
                    timeout=args.timeout, workdir=args.workdir)
    print(format_report(report))
    if args.json:
        Path(args.json).write_text(json.dumps({
            "script": report.script, "passed": report.passed, "findings": report.findings,
            "runs": {m: {"ok": r.ok, "error": r.error, "replicas": r.replicas, "losses": r.losses,
                         "seconds": round(r.seconds, 2)} for m, r in report.runs.items()},
            "comparisons": [c.__dict__ for c in report.comparisons],
        }, indent=2))
    return 0 if report.passed else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "_child":
        _child(json.loads(sys.argv[2]))
    else:
        sys.exit(main(sys.argv[1:]))
