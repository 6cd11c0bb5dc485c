"""The execution oracle (fixtures/oracle): per legacy site, "rewritten" must mean "trains the same model
on N replicas as the shim", and "not rewritten" must mean "reported".

Two parts, both independent of the codemod's own recogniser:

- `legacy_sites(source)`: the legacy call sites of a script, found with `ast` by name
  (`multi_gpu_model`, the copied helpers `make_parallel` / `to_multi_gpu`, the `ModelMGPU`-style
  wrapper classes, `tf.contrib.distribute` strategies). The bodies of the helpers themselves and a
  class's calls of its own methods (`self.make_parallel()`) are not sites.
- `grade(path, source)`: migrates the script with `transform_source` and grades each site:
  ``rewritten`` (its call is gone from the output), ``reported`` (still there, and a finding is on
  its lines or names its line) or ``silent`` (still there, nothing said).
- `run_batch(...)`: the training check of the `verify` harness (codemod/verify), many scripts per
  child process. Each script still runs through `multi_gpu_codemod.verify.child.run` (same seeds,
  same `fit` recorder, same record of the trained template), and the records are compared with
  `verify.compare.compare_runs` at the "tight" (shim vs migrated) tolerance. One child per
  (mode, Keras flavour) instead of one per script and mode: TensorFlow's import dominates a
  tiny script's run. Between scripts the child resets Keras's session, the environment, the
  working folder and the script folder's modules.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from multi_gpu_codemod import transform_source
from multi_gpu_codemod.findings import Finding

ROOT = Path(__file__).resolve().parents[2]
ORACLE = ROOT / "fixtures" / "oracle"
# Names that make a call a legacy site (the last part of the called name).
SITE_NAMES = frozenset({"multi_gpu_model", "make_parallel", "to_multi_gpu", "ModelMGPU", "MultiGPUModel",
                        "ModelMultiGPU", "MultiGpuModel"})
_CONTRIB = re.compile(r"\bcontrib\.distribute\.\w*Strategy$")
# A script that cannot run on current TensorFlow at all (tf.estimator / tf.contrib are gone): its
# sites cannot be proven by training, so they must be reported. Declared on the script's 2nd line.
STATIC_MARK = "# oracle: static"
# A script the shim cannot train (a pre-existing strategy scope, a model built on the parallel model's
# tensors): the migrated run is compared with verify's one-device `single` run at the "reference"
# tolerance instead (the comparison verify itself also requires). Declared on the script's 2nd line.
SINGLE_MARK = "# oracle: reference=single"


@dataclass(frozen=True)
class Site:
    line: int
    end_line: int
    name: str
    scope: str  # the enclosing def/class path
    text: str  # the call, normalised (ast.unparse)


@dataclass
class Graded:
    script: str
    sites: list[Site]
    outcomes: dict[Site, str]  # rewritten / reported / silent
    findings: list[Finding]
    output: bytes
    changed: bool
    failed: bool
    second_run_changes: bool = False
    parses: bool = True
    # Device settings (CUDA_VISIBLE_DEVICES, tf.config device calls) that ran before the first legacy
    # call but come after the first strategy line once migrated: listing devices starts CUDA, so
    # they would be ignored. Simulated GPUs cannot show this in a run; it is checked statically.
    device_settings_moved_below: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def rewritten(self) -> list[Site]:
        return [s for s in self.sites if self.outcomes[s] == "rewritten"]

    @property
    def silent(self) -> list[Site]:
        return [s for s in self.sites if self.outcomes[s] == "silent"]


def scripts() -> list[Path]:
    """The oracle's scripts (helper modules `lib_*.py` are imported by them, not run)."""
    return sorted(p for p in ORACLE.glob("*.py") if not p.name.startswith("lib_"))


def _mark(source: str) -> str:
    lines = source.splitlines()
    return lines[1] if len(lines) > 1 else ""


def is_static(source: str) -> bool:
    return _mark(source).startswith(STATIC_MARK)


def reference_mode(source: str) -> str:
    """The run the migrated run must match: ``shim`` (the script unchanged, on the shim) or ``single``."""
    return "single" if _mark(source).startswith(SINGLE_MARK) else "shim"


def _called_name(func: ast.expr) -> str:
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


class _SiteFinder(ast.NodeVisitor):
    def __init__(self) -> None:
        self.sites: list[Site] = []
        self._scope: list[str] = []
        self._classes: list[set[str]] = []  # method names of the enclosing classes
        self._in_helper = 0

    def _is_helper_def(self, node: ast.AST) -> bool:
        # A module-level `def make_parallel` / `class ModelMGPU`: the copied helper itself.
        return not self._scope and getattr(node, "name", "") in SITE_NAMES

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        helper = self._is_helper_def(node)
        self._in_helper += helper
        self._scope.append(node.name)
        self.generic_visit(node)
        self._scope.pop()
        self._in_helper -= helper

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        helper = self._is_helper_def(node)
        self._in_helper += helper
        self._scope.append(node.name)
        self._classes.append({n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))})
        self.generic_visit(node)
        self._classes.pop()
        self._scope.pop()
        self._in_helper -= helper

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        if self._in_helper:
            return
        name = _called_name(node.func)
        last = name.rsplit(".", 1)[-1]
        if not (last in SITE_NAMES or _CONTRIB.search(name)):
            return
        if name.startswith("self.") and name.count(".") == 1 and self._classes and last in self._classes[-1]:
            return  # the class's own method, not the copied helper
        self.sites.append(Site(node.lineno, node.end_lineno or node.lineno, last, ".".join(self._scope),
                               ast.unparse(node)))


def legacy_sites(source: str) -> list[Site]:
    finder = _SiteFinder()
    finder.visit(ast.parse(source))
    return finder.sites


_DEVICE_CALLS = re.compile(r"(set_visible_devices|set_memory_growth|set_logical_device_configuration|"
                           r"set_virtual_device_configuration|set_session|threading\.set_\w+|"
                           r"environ\.(setdefault|update)|putenv)$")


def device_setting_lines(tree: ast.AST) -> list[int]:
    """Lines of statements that change device visibility or TensorFlow's device configuration."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Subscript) and _called_name(t.value).endswith("environ") for t in targets):
                lines.append(node.lineno)
        elif isinstance(node, ast.Call) and _DEVICE_CALLS.search(_called_name(node.func)):
            lines.append(node.lineno)
    return sorted(lines)


def _strategy_lines(tree: ast.AST) -> list[int]:
    return sorted(n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call)
                  and _called_name(n.func).endswith("MirroredStrategy"))


def _reports(finding: Finding, site: Site) -> bool:
    if site.line <= finding.line <= site.end_line:
        return True
    return re.search(rf"\bline {site.line}\b", finding.message) is not None


def grade(path: Path, source: bytes | None = None) -> Graded:
    """Migrates one script and grades each of its legacy sites (see the module docstring)."""
    data = path.read_bytes() if source is None else source
    result = transform_source(data, path.name)
    sites = legacy_sites(data.decode())
    graded = Graded(path.name, sites, {}, list(result.findings), result.output, result.changed, result.failed)
    try:
        remaining = Counter((s.scope, s.text) for s in legacy_sites(result.output.decode()))
    except SyntaxError:
        graded.parses = False
        remaining = Counter()
    for site in sites:
        key = (site.scope, site.text)
        if remaining[key] > 0:
            remaining[key] -= 1
            reported = any(_reports(f, site) for f in result.findings)
            graded.outcomes[site] = "reported" if reported else "silent"
        else:
            graded.outcomes[site] = "rewritten"
    if result.changed:
        again = transform_source(result.output, path.name)
        graded.second_run_changes = again.changed
        if graded.parses and sites:
            graded.device_settings_moved_below = device_settings_moved_below(data, result.output, sites)
    return graded


def device_settings_moved_below(source: bytes, output: bytes, sites: list[Site]) -> int:
    """How many device settings made before the first legacy call come after the migrated
    script's first strategy line."""
    before_call = [n for n in device_setting_lines(ast.parse(source)) if n < min(s.line for s in sites)]
    output_tree = ast.parse(output)
    strategy = _strategy_lines(output_tree)
    if not strategy:
        return 0
    above = [n for n in device_setting_lines(output_tree) if n < strategy[0]]
    return max(0, len(before_call) - len(above))


# --- the training check: verify's child, many scripts per process -------------------------------

@dataclass
class Job:
    """One script to run as `mode` in `workdir` (its record in workdir/.verify)."""

    name: str
    script: Path
    workdir: Path
    error: str = ""
    run: Any = None  # verify.runs.Run once read back


def prepare_migrated(script: Path, output: bytes, base: Path) -> Path:
    """As verify's migrated run: a copy of the script's folder (helpers unchanged), the script migrated."""
    src = base / "migrated-src"
    src.mkdir(parents=True, exist_ok=True)
    for sibling in script.parent.glob("*.py"):
        shutil.copy(sibling, src / sibling.name)
    target = src / script.name
    target.write_bytes(output)
    return target


def run_batch(jobs: list[Job], mode: str, *, legacy: bool, gpus: int = 2, hook: bool = False,
              timeout: float = 900, processes: int = 2) -> None:
    """Runs the jobs as `mode` in `processes` child processes at once (CI has 2 cores), each child
    running its share of the scripts one after the other with verify's child.run; fills job.run."""
    from multi_gpu_codemod.verify.harness import ORIGINAL_REFERENCE
    from multi_gpu_codemod.verify.runs import Run, _read_record, child_environment

    if not jobs:
        return
    configs = []
    for job in jobs:
        out = job.workdir / ".verify"
        out.mkdir(parents=True, exist_ok=True)
        configs.append({"mode": mode, "gpus": gpus, "script": str(job.script), "original": str(ORIGINAL_REFERENCE),
                        "result": str(out / "result.json"), "arrays": str(out / "arrays.npz"),
                        "workdir": str(job.workdir), "error": str(out / "error.txt")})
    env = child_environment(mode, gpus=gpus, legacy=legacy, hook=hook)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), env["PYTHONPATH"]])
    flavour = ("tf_keras" if legacy else "keras3") + ("-hook" if hook else "")
    folder = jobs[0].workdir.parent
    children = []
    for i in range(min(processes, len(configs))):
        listing = folder / f"batch-{mode}-{flavour}-{i}.json"
        listing.write_text(json.dumps(configs[i::processes]))
        log = listing.with_suffix(".log")
        with open(log, "w") as out:
            child = subprocess.Popen([sys.executable, "-m", "oracle", "_child", str(listing)], env=env,
                                     stdout=out, stderr=subprocess.STDOUT, cwd=folder)
        children.append((child, log))
    for child, _ in children:
        try:
            child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
    for n, (job, config) in enumerate(zip(jobs, configs)):
        run = Run(mode)
        error_file = Path(config["error"])
        if error_file.exists():
            run.error = error_file.read_text()
        elif Path(config["result"]).exists():
            _read_record(run, Path(config["result"]), Path(config["arrays"]))
        else:
            child, log = children[n % processes]
            run.error = f"no record (batch child exit {child.returncode}: {log.read_text().strip()[-500:]})"
        job.run = run


def last_line(error: str) -> str:
    """A traceback's exception line (the last line naming an exception), else its last line."""
    lines = [line.strip() for line in error.strip().splitlines() if line.strip()]
    raised = [line for line in lines if re.match(r"^[\w.]+(Error|Exception|Exit|Interrupt)\b", line)]
    return (raised or lines or ["?"])[-1][:300]


def compare(reference: Any, migrated: Any, legacy: bool, gpus: int = 2) -> list[str]:
    """verify's comparison of the migrated run with its reference run (the shim's: "tight"
    tolerance; the one-device run's: "reference" tolerance), and the migrated replica count.
    Returns the failures: empty when the rewrite is proven."""
    from multi_gpu_codemod.verify.compare import compare_runs

    problems = []
    if not reference.ok:
        return [f"{reference.mode} run failed: {last_line(reference.error)}"]
    if not migrated.ok:
        return [f"migrated run crashed: {last_line(migrated.error)}"]
    if not migrated.weights:
        problems.append("the migrated script never called fit")
    if migrated.replicas != gpus:
        problems.append(f"the migrated script trains on {migrated.replicas} replica(s), not {gpus}")
    kind = "tight" if reference.mode == "shim" else "reference"
    for c in compare_runs(reference, migrated, kind, True, legacy):
        if c.status == "FAIL" or (c.status == "skip" and c.metric in ("losses", "weights")):
            problems.append(f"{c.metric} differ from the {reference.mode} run (max diff {c.diff}) {c.detail}".strip())
    return problems


@dataclass
class Proof:
    """The training check of one script: its reference run, its migrated run, the failures."""

    script: str
    reference: Any = None
    migrated: Any = None
    problems: list[str] = field(default_factory=list)


def prove(graded: dict[Path, Graded], base: Path, gpus: int = 2) -> dict[str, Proof]:
    """Runs the reference run of every runnable script and the migrated run of every script with a
    rewritten site, batched per (mode, Keras flavour), and compares them (see `compare`)."""
    from multi_gpu_codemod.verify.harness import uses_tf_keras

    proofs: dict[str, Proof] = {}
    reference_jobs: dict[tuple[str, bool], list[Job]] = {}
    migrated_jobs: dict[tuple[bool, bool], list[Job]] = {}
    legacy_of: dict[str, bool] = {}
    for path, g in graded.items():
        source = path.read_text()
        if is_static(source):
            continue
        legacy = legacy_of[path.name] = uses_tf_keras(source)
        work = base / path.stem
        mode = reference_mode(source)
        reference_jobs.setdefault((mode, legacy), []).append(Job(path.name, path, work / mode))
        proofs[path.name] = Proof(path.name)
        if not g.rewritten or g.failed:
            continue
        # Sites left in place (reported) still need the shim: the import hook stays on for them.
        hook = len(g.rewritten) < len(g.sites)
        target = prepare_migrated(path, g.output, work)
        migrated_jobs.setdefault((legacy, hook), []).append(Job(path.name, target, work / "migrated"))
    for (mode, legacy), jobs in reference_jobs.items():
        run_batch(jobs, mode, legacy=legacy, gpus=gpus)
        for job in jobs:
            proofs[job.name].reference = job.run
    for (legacy, hook), jobs in migrated_jobs.items():
        run_batch(jobs, "migrated", legacy=legacy, gpus=gpus, hook=hook)
    # As verify: a migrated script that still imports `multi_gpu_model` for a copied helper the
    # codemod kept (MGPU401) runs again with the import hook on.
    retry: dict[bool, list[Job]] = {}
    for (legacy, hook), jobs in migrated_jobs.items():
        for job in jobs:
            findings = graded_by_name(graded)[job.name].findings
            if (not hook and not job.run.ok and "multi_gpu_model" in job.run.error
                    and any(f.code == "MGPU401" for f in findings)):
                again = Job(job.name, job.script, job.workdir.parent / "migrated-with-hook")
                retry.setdefault(legacy, []).append(again)
            else:
                proofs[job.name].migrated = job.run
    for legacy, jobs in retry.items():
        run_batch(jobs, "migrated", legacy=legacy, gpus=gpus, hook=True)
        for job in jobs:
            proofs[job.name].migrated = job.run
    for name, proof in proofs.items():
        if proof.migrated is not None:
            proof.problems = compare(proof.reference, proof.migrated, legacy_of[name], gpus)
    return proofs


def graded_by_name(graded: dict[Path, Graded]) -> dict[str, Graded]:
    return {path.name: g for path, g in graded.items()}


def _child(listing: str) -> None:
    """The batch child: each config run by verify's child.run, in its own folder and clean state."""
    import traceback

    from multi_gpu_codemod.verify import child

    configs = json.loads(Path(listing).read_text())
    environ = dict(os.environ)
    path = list(sys.path)
    base_modules = set(sys.modules)
    for config in configs:
        script_dir = str(Path(config["script"]).parent)
        os.chdir(config["workdir"])
        try:
            if "keras" in sys.modules or "tf_keras" in sys.modules:
                child._keras().backend.clear_session()
            child.run(config)
        except BaseException:  # noqa: B036 - a script's SystemExit too; the next script must still run
            Path(config["error"]).write_text(traceback.format_exc())
        finally:
            os.environ.clear()
            os.environ.update(environ)
            sys.path[:] = path
            for name in [n for n in sys.modules if n not in base_modules]:
                module_file = getattr(sys.modules[name], "__file__", None) or ""
                if module_file.startswith(script_dir):
                    del sys.modules[name]


def summary(run: bool = True) -> str:
    """Per site of every oracle script: its outcome, and why when it is not proven. The table the
    issue asks for: sites / rewritten correctly / reported / wrong / silent."""
    import tempfile

    graded = {path: grade(path) for path in scripts()}
    proofs = prove(graded, Path(tempfile.mkdtemp(prefix="oracle-"))) if run else {}
    counts: Counter[str] = Counter()
    lines = []
    for path, g in graded.items():
        static = is_static(path.read_text())
        for site in g.sites:
            outcome = g.outcomes[site]
            why = ""
            if outcome == "rewritten":
                proof = proofs.get(path.name)
                if static:
                    outcome, why = "wrong", "rewritten, but nothing can run this script on current TensorFlow"
                elif g.failed or not g.parses:
                    outcome, why = "wrong", "the migration failed or does not parse"
                elif g.device_settings_moved_below:
                    outcome, why = "wrong", "a device setting now comes after the strategy line"
                elif not run or proof is None:
                    outcome = "rewritten (not run)"
                elif proof.problems:
                    outcome, why = "wrong", "; ".join(proof.problems)
                else:
                    outcome = "rewritten correctly"
            elif outcome == "reported":
                why = "; ".join(f"{f.code} line {f.line}" for f in g.findings if _reports(f, site))
            counts[outcome] += 1
            lines.append(f"{path.name}:{site.line} {site.name}: {outcome}{' -- ' + why if why else ''}")
    total = sum(counts.values())
    lines.append("")
    lines.append(f"sites {total}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1:2] == ["_child"]:
        _child(sys.argv[2])
    else:  # python tests/codemod/oracle.py [--no-run]: the per-site table
        print(summary(run="--no-run" not in sys.argv))
