"""`verify()`: runs the script in every mode, each in its own child process, and compares the runs."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from typing import Sequence

from ..core import transform_source
from .compare import Comparison, compare_runs
from .report import Report
from .runs import Run, start_run

__all__ = ["ORIGINAL_REFERENCE", "uses_tf_keras", "verify"]

ORIGINAL_REFERENCE = Path(__file__).resolve().parents[2] / "fixtures" / "legacy_models" / "make_legacy_models.py"
# (left, right, tolerance kind, required): the comparisons made between the runs that exist.
_PAIRS = (("shim", "migrated", "tight", True), ("shim", "single", "reference", True),
          ("migrated", "single", "reference", True), ("original", "shim", "reference", True),
          ("original", "migrated", "reference", True))


def uses_tf_keras(source: str) -> bool:
    """True when a script is written against tf.keras (run it on tf_keras), not standalone Keras."""
    standalone = re.search(r"^\s*(from\s+keras[\s.]|import\s+keras\b)", source, re.M)
    tf_style = re.search(r"\b(tf\.keras|tensorflow\.keras|tf_keras)\b", source)
    return bool(tf_style) and not standalone


def verify(script: str | Path, *, gpus: int = 2, keras_flavour: str = "auto", original: bool = False,
           timeout: float = 600, workdir: str | Path | None = None, keep: bool = False,
           modes: Sequence[str] = ("shim", "migrated", "single")) -> Report:
    """Runs the script in every mode and compares the runs; see the package docstring."""
    script = Path(script).resolve()
    source = script.read_text(encoding="utf-8", errors="replace")
    legacy = uses_tf_keras(source) if keras_flavour == "auto" else keras_flavour == "tf_keras"
    # Absolute: every run starts in its own folder, where a relative path would mean another place.
    base = Path(workdir).resolve() if workdir else Path(tempfile.mkdtemp(prefix="codemod-verify-"))
    findings: list[str] = []
    modes = list(modes) + (["original"] if original and "original" not in modes else [])
    runs: dict[str, Run] = {}
    try:
        for mode in modes:
            if mode == "migrated":
                runs[mode], findings = _run_migrated(script, base, gpus=gpus, legacy=legacy, timeout=timeout)
            elif mode == "original" and not legacy:
                runs[mode] = Run(mode, skipped="the original algorithm is re-implemented in tf_keras: "
                                 "tf.keras scripts only")
            else:
                runs[mode] = start_run(mode, script, base / mode, gpus=gpus, legacy=legacy, timeout=timeout,
                                       original=ORIGINAL_REFERENCE)
        return Report(str(script), runs, _comparisons(runs, legacy), findings, gpus=gpus)
    finally:
        if not keep and workdir is None:
            shutil.rmtree(base, ignore_errors=True)


def _run_migrated(script: Path, base: Path, *, gpus: int, legacy: bool, timeout: float) -> tuple[Run, list[str]]:
    """The ``migrated`` run, on a migrated copy of the script's folder, and the codemod's findings."""
    # A copy of the script's folder (its local helper modules), the script migrated.
    src = base / "migrated-src"
    src.mkdir(parents=True, exist_ok=True)
    for sibling in script.parent.glob("*.py"):
        shutil.copy(sibling, src / sibling.name)
    target = src / script.name
    changed, findings = _migrate(script, target)
    if not changed:
        why = ("see the `codemod:` lines above; MIGRATION.md explains each code" if findings
               else "it found no `multi_gpu_model` call it recognises, and reported nothing")
        return Run("migrated", error=f"the codemod left the script unchanged ({why}): nothing to compare"), findings
    run = start_run("migrated", target, base / "migrated", gpus=gpus, legacy=legacy, timeout=timeout,
                    original=ORIGINAL_REFERENCE)
    if not run.ok and "multi_gpu_model" in run.error and any("MGPU401" in f for f in findings):
        # The codemod keeps a copied helper it does not delete (MGPU401), and that helper
        # still imports `multi_gpu_model`: the migrated script needs the shim until the
        # helper is deleted. Run it with the import hook on, and say so.
        retry = start_run("migrated", target, base / "migrated-with-hook", gpus=gpus, legacy=legacy,
                          timeout=timeout, original=ORIGINAL_REFERENCE, hook=True)
        retry.notes.insert(0, "without the shim the migrated script fails (" + run.error + "): "
                           "it still imports `multi_gpu_model` for a helper the codemod kept "
                           "(MGPU401); ran again with the import hook on. Delete the helper "
                           "to run without multi-gpu-compat.")
        return retry, findings
    return run, findings


def _migrate(script: Path, target: Path) -> tuple[bool, list[str]]:
    """Writes the codemod's rewrite of `script` to `target`: (rewritten without failure, findings)."""
    result = transform_source(script.read_bytes(), str(script))
    findings = [f.format(str(script)) for f in result.findings]
    target.write_bytes(result.output if result.changed else script.read_bytes())
    return result.changed and not result.failed, findings


def _comparisons(runs: dict[str, Run], legacy: bool) -> list[Comparison]:
    comparisons: list[Comparison] = []
    for left, right, kind, required in _PAIRS:
        if left in runs and right in runs and not (runs[left].skipped or runs[right].skipped):
            comparisons += compare_runs(runs[left], runs[right], kind, required, legacy)
    return comparisons
