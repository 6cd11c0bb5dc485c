"""The execution oracle: for every legacy script of fixtures/oracle, "rewritten" means "trains the same
model on 2 replicas", and "not rewritten" means "reported" (tests/codemod/oracle.py explains how).

Fast lane: each script migrates without failure, its output parses, a second run changes nothing,
and each legacy site is either gone (rewritten) or reported. Slow lane: every runnable script trains
on 2 simulated GPUs through the shim (the reference), and every script with a rewritten site trains,
migrated and without the shim, on 2 replicas with the reference run's losses and weights (verify's
child and comparison, several scripts per child process).
"""

from __future__ import annotations

import ast
import functools
import importlib.util

import pytest

import oracle

SCRIPTS = oracle.scripts()
NAMES = [p.name for p in SCRIPTS]
RUNNABLE = [p.name for p in SCRIPTS if not oracle.is_static(p.read_text())]
needs_tensorflow = pytest.mark.skipif(
    importlib.util.find_spec("tensorflow") is None,
    reason="the oracle trains models: TensorFlow is not installed (codemod-only environment)",
)


@functools.lru_cache(maxsize=None)
def graded(name: str) -> oracle.Graded:
    return oracle.grade(oracle.ORACLE / name)


def describe(g: oracle.Graded, sites: list[oracle.Site]) -> str:
    findings = "\n".join(f.format() for f in g.findings) or "(no findings)"
    return ", ".join(f"line {s.line} `{s.text}`" for s in sites) + "\nfindings:\n" + findings


def test_the_oracle_has_sixty_scripts_each_naming_its_shape_and_holding_a_site():
    assert len(SCRIPTS) >= 60
    for path in SCRIPTS:
        source = path.read_text()
        assert source.startswith("# shape: "), path.name
        assert oracle.legacy_sites(source), f"{path.name}: no legacy call site"
    helpers = {p.stem for p in oracle.ORACLE.glob("lib_*.py")}
    imported = {node.module for p in SCRIPTS for node in ast.walk(ast.parse(p.read_text()))
                if isinstance(node, ast.ImportFrom)} | {alias.name for p in SCRIPTS
                                                        for node in ast.walk(ast.parse(p.read_text()))
                                                        if isinstance(node, ast.Import) for alias in node.names}
    assert helpers and helpers <= imported


def test_site_finder_skips_helper_bodies_and_a_class_s_own_methods():
    source = (
        "from keras.utils import multi_gpu_model\n"
        "def make_parallel(m, n):\n    return multi_gpu_model(m, gpus=n)\n"
        "class Net:\n"
        "    def make_parallel(self):\n        self.p = multi_gpu_model(self.m, 2)\n"
        "    def go(self):\n        self.make_parallel()\n"
        "p = make_parallel(model, 2)\n"
        "s = tf.contrib.distribute.MirroredStrategy(num_gpus=2)\n"
    )
    sites = oracle.legacy_sites(source)
    assert [(s.line, s.name) for s in sites] == [(6, "multi_gpu_model"), (9, "make_parallel"),
                                                (10, "MirroredStrategy")]


def test_device_settings_moved_below_the_strategy_line_are_counted(tmp_path):
    script = tmp_path / "env.py"
    script.write_text("import os\nfrom keras.utils import multi_gpu_model\nos.environ['CUDA_VISIBLE_DEVICES'] = '0,1'\n"
                      "model = build()\nparallel = multi_gpu_model(model, gpus=2)\nparallel.compile('sgd', 'mse')\n")
    g = oracle.grade(script)
    assert g.rewritten and g.device_settings_moved_below == 0
    # The same migration with the setting moved below the strategy line.
    output = g.output.decode()
    setting = "os.environ['CUDA_VISIBLE_DEVICES'] = '0,1'\n"
    moved = output.replace(setting, "").replace("with strategy.scope():", setting + "with strategy.scope():")
    assert moved != output
    assert oracle.device_settings_moved_below(script.read_bytes(), moved.encode(), g.sites) == 1


def test_grading_tells_a_rewritten_site_from_a_reported_one(tmp_path):
    rewritten = graded("mod_sequential_basic.py")
    assert [rewritten.outcomes[s] for s in rewritten.sites] == ["rewritten"]
    # A call the codemod does not rewrite (a starred argument) and reports on its line.
    script = tmp_path / "starred.py"
    script.write_text("from keras.utils import multi_gpu_model\nkw = {'gpus': 2}\n"
                      "parallel = multi_gpu_model(model, **kw)\n")
    reported = oracle.grade(script)
    assert [reported.outcomes[s] for s in reported.sites] == ["reported"]
    assert oracle._reports(reported.findings[0], reported.sites[0])
    assert not reported.silent


@pytest.mark.parametrize("name", NAMES)
def test_every_site_is_rewritten_or_reported(name):
    g = graded(name)
    assert not g.failed, describe(g, g.sites)
    assert g.parses, "the migrated script does not parse"
    assert not g.second_run_changes, "a second run of the codemod changes the migrated script"
    assert not g.silent, "left in place without a finding: " + describe(g, g.silent)
    assert not g.device_settings_moved_below, "a device setting made before the call now comes after the strategy line"
    if oracle.is_static((oracle.ORACLE / name).read_text()):
        # Nothing can run this script on current TensorFlow: a rewrite cannot be proven.
        assert not g.rewritten, "rewritten although no run can prove it: " + describe(g, g.rewritten)


@pytest.fixture(scope="module")
def proofs(tmp_path_factory):
    base = tmp_path_factory.mktemp("oracle")
    return oracle.prove({oracle.ORACLE / name: graded(name) for name in RUNNABLE}, base)


@needs_tensorflow
@pytest.mark.slow
@pytest.mark.parametrize("name", RUNNABLE)
def test_fixture_trains_on_two_replicas_as_written(name, proofs):
    """The reference: the script unchanged through the shim (or, marked, on one device) trains."""
    reference = proofs[name].reference
    assert reference.ok, oracle.last_line(reference.error)
    assert reference.weights, "the script never called fit"
    if reference.mode == "shim":
        assert reference.replicas == 2


@needs_tensorflow
@pytest.mark.slow
@pytest.mark.parametrize("name", RUNNABLE)
def test_rewritten_script_trains_on_two_replicas_like_the_reference(name, proofs):
    g = graded(name)
    if not g.rewritten:  # nothing rewritten: every site must then have been reported
        assert not g.silent and not g.failed, describe(g, g.sites)
        return
    proof = proofs[name]
    assert not proof.problems, f"rewritten ({describe(g, g.rewritten)}) but: " + "; ".join(proof.problems)


@needs_tensorflow
@pytest.mark.slow
def test_batched_runs_match_verify_and_catch_a_one_replica_rewrite(tmp_path):
    """The batched check is verify's: same records as `verify()` run per script, and a rewrite that
    silently trains on one device (the call replaced by the template) is caught."""
    from multi_gpu_codemod import verify as harness
    from multi_gpu_codemod.verify.compare import compare_runs

    source = (oracle.ORACLE / "mod_sequential_basic.py").read_text()
    good, bad = tmp_path / "src" / "good.py", tmp_path / "src" / "one_device.py"
    good.parent.mkdir()
    good.write_text(source)
    bad.write_text(source)
    graded_good, graded_bad = oracle.grade(good), oracle.grade(bad)
    graded_bad.output = source.replace("multi_gpu_model(model, gpus=2)", "model").replace(
        "from keras.utils import multi_gpu_model\n", "").encode()
    proofs = oracle.prove({good: graded_good, bad: graded_bad}, tmp_path / "runs")
    assert proofs["good.py"].problems == []
    assert any("1 replica" in p for p in proofs["one_device.py"].problems), proofs["one_device.py"].problems

    report = harness.verify(good, modes=("shim", "migrated"), workdir=tmp_path / "verify")
    assert report.passed
    for mode, proof_run in (("shim", proofs["good.py"].reference), ("migrated", proofs["good.py"].migrated)):
        alone = report.runs[mode]
        assert alone.replicas == proof_run.replicas == 2
        # A run in its own process and the same run in a batch: verify's shim-vs-migrated tolerance.
        comparisons = compare_runs(alone, proof_run, "tight", True)
        checked = {c.metric: c.status for c in comparisons if c.metric in ("losses", "weights")}
        assert checked == {"losses": "ok", "weights": "ok"}, comparisons
