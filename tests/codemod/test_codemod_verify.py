"""`multi-gpu-codemod verify`: the migrated legacy fixtures train the same model as the shim,
as one device, and (tf_keras fixtures) as the ORIGINAL slicing `multi_gpu_model`."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import numpy as np
except ImportError:  # the codemod's own install is libcst alone; numpy comes with TensorFlow
    np = None

from child_process import run_on_two_simulated_gpus
from codemod_fixtures import strategy_devices
from multi_gpu_codemod import transform_source
from multi_gpu_codemod import verify as harness

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "fixtures" / "legacy_scripts"
FULL = ["keras21_training_utils.py", "multi_io_dict_losses.py", "model_mgpu_checkpoint.py",
        "tf_keras_fit_generator.py"]
MIGRATE_AND_RUN = ["cpu_merge_false.py", "input_dense_even_gpus.py", "make_parallel_dense.py",
                   "xception_doc_small.py", "keras22_cpu_template.py", "try_except_fallback.py",
                   "model_mgpu_class.py", "template_checkpoint_callback.py"]
# The codemod leaves these, and says why: `gpus` read from the model built above it cannot move
# above the strategy line (a plain `gpus = 2` there is moved, so the fixture itself is migrated).
NEEDS_A_HUMAN = {"template_checkpoint_callback.py": ("gpus = 2\n", "gpus = 2 if model.built else 1\n", "MGPU105")}
NOT_SCRIPTS = {"check_saved_model.py", "multi_gpu.py"}  # a checker and a copied helper module

needs_numpy = pytest.mark.skipif(np is None, reason="numpy is not installed (it comes with TensorFlow)")
needs_tensorflow = pytest.mark.skipif(
    importlib.util.find_spec("tensorflow") is None,
    reason="verify trains models: TensorFlow is not installed (codemod-only environment)",
)


def test_every_fixture_script_is_covered():
    scripts = {p.name for p in SCRIPTS.glob("*.py")} - NOT_SCRIPTS
    covered = set(FULL) | set(MIGRATE_AND_RUN) | {"tf_keras_attribute_call.py"}
    assert scripts == covered
    assert len(scripts) >= 8
    readme = (SCRIPTS / "README.md").read_text()
    for name in scripts | {"multi_gpu.py"}:
        assert f"`{name}`" in readme, name


@pytest.mark.parametrize("name", sorted(FULL + MIGRATE_AND_RUN))
def test_fixture_is_rewritten_by_the_codemod(name):
    result = transform_source((SCRIPTS / name).read_bytes(), name)
    assert result.changed and not result.failed
    assert "MirroredStrategy" in result.output.decode()


@pytest.mark.parametrize("name", sorted(NEEDS_A_HUMAN))
def test_script_the_codemod_leaves_fails_verification_with_its_finding(name, tmp_path):
    old, new, code = NEEDS_A_HUMAN[name]
    script = tmp_path / name
    source = (SCRIPTS / name).read_text()
    assert old in source
    script.write_text(source.replace(old, new))
    report = harness.verify(script, modes=("migrated",), workdir=tmp_path / "work")
    text = harness.format_report(report)
    assert not report.passed and "left the script unchanged" in text
    assert code in text


def test_script_without_a_site_says_the_codemod_found_none(tmp_path):
    script = tmp_path / "plain.py"
    script.write_text("print('no multi-GPU code here')\n")
    report = harness.verify(script, modes=("migrated",), workdir=tmp_path / "work")
    text = harness.format_report(report)
    assert not report.passed and "found no `multi_gpu_model` call it recognises, and reported nothing" in text
    assert "codemod:" not in text and "above" not in text


@needs_tensorflow
@pytest.mark.slow  # a TensorFlow child: each run starts in its own folder, below the relative one
def test_relative_workdir_is_taken_from_where_verify_was_started(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    report = harness.verify(SCRIPTS / "keras21_training_utils.py", modes=("single",), workdir="runs")
    assert report.runs["single"].ok, report.runs["single"].error
    assert (tmp_path / "runs" / "single" / "stdout.txt").exists()


def test_gpus_list_variable_is_migrated_to_a_valid_device_slice():
    result = transform_source((SCRIPTS / "tf_keras_attribute_call.py").read_bytes())
    assert result.changed and not result.failed
    output = result.output.decode()
    # `GPU_IDS = [0, 1]`: a list of device ids, not a count to slice with.
    assert strategy_devices(output, 4, GPU_IDS=[0, 1]) == ["/gpu:0", "/gpu:1"]
    with pytest.raises(IndexError):  # one GPU: raises, as the old call did (naming GPU 1 would hang)
        strategy_devices(output, 1, GPU_IDS=[0, 1])


def test_backend_detection():
    assert harness.uses_tf_keras("import tensorflow as tf\nm = tf.keras.Sequential()\n")
    assert harness.uses_tf_keras("from tensorflow.keras.utils import multi_gpu_model\n")
    assert not harness.uses_tf_keras("import tensorflow as tf\nfrom keras.layers import Dense\n")
    assert not harness.uses_tf_keras("import keras\n")


def _run(mode, replicas, loss, w, sensitive=(), preds=None):
    run = harness.Run(mode, ok=True, replicas=replicas, losses={"loss": list(loss)},
                      weights=[np.array(w, dtype="float32")], weight_names=["w"], trainable=[True],
                      split_sensitive=list(sensitive))
    run.predictions = {"predictions.npy": np.array(preds if preds is not None else w, dtype="float32")}
    return run


def _status(comparisons):
    return {c.metric: c.status for c in comparisons}


@needs_numpy
def test_tight_comparison_passes_ulps_and_fails_real_differences():
    a = _run("shim", 2, [1.0, 0.5], [0.25, -1.0])
    ulps = _run("migrated", 2, [1.0 + 2e-7, 0.5], [0.25 + 3e-8, -1.0])
    off = _run("migrated", 2, [1.0, 0.51], [0.25, -1.0])
    assert set(_status(harness.compare_runs(a, ulps, "tight", True)).values()) == {"ok"}
    assert _status(harness.compare_runs(a, off, "tight", True))["losses"] == "FAIL"


@needs_numpy
def test_reference_comparison_tolerates_reduction_order_only():
    shim = _run("shim", 2, [1.0, 0.5], [0.25, -1.0])
    single = _run("single", 1, [1.0 + 5e-5, 0.5 - 3e-5], [0.25 + 1e-5, -1.0])
    wrong = _run("single", 1, [1.0, 0.5], [0.27, -1.0])
    assert set(_status(harness.compare_runs(shim, single, "reference", True)).values()) == {"ok"}
    assert _status(harness.compare_runs(shim, wrong, "reference", True))["weights"] == "FAIL"


@needs_numpy
def test_batchnorm_and_dropout_are_not_comparable_across_replica_counts():
    shim = _run("shim", 2, [1.0], [0.25], sensitive=["BatchNormalization"])
    single = _run("single", 1, [1.2], [0.3])
    comparisons = harness.compare_runs(shim, single, "reference", True)
    assert {c.status for c in comparisons} == {"n/c"}
    assert not any(c.required for c in comparisons)
    report = harness.Report("x.py", {"shim": shim, "single": single}, comparisons, [])
    assert report.passed
    assert "BatchNormalization" in harness.format_report(report)


@needs_numpy
def test_batchnorm_moving_statistics_between_shim_and_migrated_are_reported_not_failed():
    shim = _run("shim", 2, [1.0], [0.25], sensitive=["BatchNormalization"], preds=[1.0])
    migrated = _run("migrated", 2, [1.0], [0.25], sensitive=["BatchNormalization"], preds=[1.1])
    status = _status(harness.compare_runs(shim, migrated, "tight", True, legacy=False))
    assert status == {"losses": "ok", "weights": "ok", "predictions": "n/c"}
    # Training losses still compare tightly: they use batch statistics, not moving ones.
    worse = _run("migrated", 2, [1.1], [0.25], sensitive=["BatchNormalization"], preds=[1.0])
    assert _status(harness.compare_runs(shim, worse, "tight", True))["losses"] == "FAIL"


def test_cli_usage_errors(tmp_path):
    env_python = [sys.executable, "-m", "multi_gpu_codemod", "verify"]
    done = subprocess.run(env_python + ["--help"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0 and "--gpus" in done.stdout
    done = subprocess.run(env_python + [str(tmp_path / "missing.py")], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and "no such file" in done.stderr


@pytest.mark.parametrize("where", ["script", "folder"])
def test_json_report_never_replaces_the_script_or_a_folder(tmp_path, where):
    script = tmp_path / "train.py"
    source = "from keras.utils import multi_gpu_model\n"
    script.write_text(source)
    target = script if where == "script" else tmp_path
    done = subprocess.run([sys.executable, "-m", "multi_gpu_codemod", "verify", str(script), "--json", str(target)],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2, done.stderr
    assert "cannot write the JSON report" in done.stderr and "Traceback" not in done.stderr
    assert script.read_text() == source


def test_verify_without_tensorflow_says_what_to_install(tmp_path):
    script = tmp_path / "legacy.py"
    script.write_text("from keras.utils import multi_gpu_model\n")
    # `None` in sys.modules makes `tensorflow` unimportable, as in a codemod-only install.
    hide = ("import sys; sys.modules['tensorflow'] = None; from multi_gpu_codemod.verify import main; "
            f"sys.exit(main([{str(script)!r}]))")
    done = subprocess.run([sys.executable, "-c", hide], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2
    assert "needs TensorFlow" in done.stderr and "multi-gpu-compat[cpu]" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow  # a TensorFlow child; the verdict's comparisons are pinned fast above
@needs_tensorflow
def test_failing_script_fails_the_verdict(tmp_path):
    script = tmp_path / "broken.py"
    script.write_text("from keras.utils import multi_gpu_model\nraise SystemExit('boom')\n")
    report = harness.verify(script, modes=("single",), timeout=120)
    assert not report.passed
    assert "boom" in report.runs["single"].error or "exit" in report.runs["single"].error
    assert "FAIL" in harness.format_report(report)


@needs_tensorflow
@pytest.mark.slow
@pytest.mark.parametrize("name", FULL)
def test_full_harness(name, tmp_path):
    original = harness.uses_tf_keras((SCRIPTS / name).read_text())
    report = harness.verify(SCRIPTS / name, original=original, workdir=tmp_path, timeout=600)
    text = harness.format_report(report)
    assert report.passed, text
    assert report.runs["shim"].replicas == 2 and report.runs["migrated"].replicas == 2, text
    assert report.runs["single"].replicas == 1, text
    tight = [c for c in report.comparisons if (c.left, c.right) == ("shim", "migrated")]
    assert {c.metric for c in tight} >= {"losses", "weights", "predictions"}
    assert all(c.status == "ok" for c in tight), text
    if original:
        vs_original = [c for c in report.comparisons if c.left == "original"]
        assert vs_original and all(c.status == "ok" for c in vs_original), text


@needs_tensorflow
@pytest.mark.slow
def test_shim_matches_the_original_slicing_algorithm_on_a_second_fixture(tmp_path):
    # tf_keras_attribute_call.py: `gpus=GPU_IDS` (a list in a variable), `cpu_merge=False`.
    report = harness.verify(SCRIPTS / "tf_keras_attribute_call.py", modes=("shim", "migrated", "single"),
                            original=True, workdir=tmp_path)
    text = harness.format_report(report)
    assert report.passed, text
    assert [c.status for c in report.comparisons if c.left == "original"] == ["ok"] * 6, text


@needs_tensorflow
@pytest.mark.slow
@pytest.mark.parametrize("name", MIGRATE_AND_RUN)
def test_migrated_fixture_runs_on_two_simulated_gpus(name, tmp_path):
    run_on_two_simulated_gpus(SCRIPTS / name, tmp_path)


def test_the_verdict_says_when_nothing_was_compared_and_when_replica_counts_differ():
    from multi_gpu_codemod.verify.compare import Comparison
    from multi_gpu_codemod.verify.report import Report, format_report
    from multi_gpu_codemod.verify.runs import Run

    runs = {"shim": Run("shim", ok=True, replicas=1), "migrated": Run("migrated", ok=True, replicas=2)}
    text = format_report(Report("s.py", runs, [], []))
    assert text.endswith("VERDICT: PASS: every run finished, but nothing was compared "
                         "(no training or prediction verify records)")
    assert "the shim run used 1 replica(s), the migrated 2" in text
    compared = [Comparison("shim", "migrated", "losses", "ok", 0.0)]
    runs["shim"].replicas = 2
    text = format_report(Report("s.py", runs, compared, []))
    assert text.endswith("VERDICT: PASS: the migrated script trains the same model") and "note:" not in text
    # both on one replica: nothing multi-GPU was proven
    runs["shim"].replicas = runs["migrated"].replicas = 1
    text = format_report(Report("s.py", runs, compared, [], gpus=2))
    assert "VERDICT: PASS on one replica only: the migrated run trained on 1 device, not the 2 simulated" in text


def test_only_a_subclass_of_keras_model_is_taken_for_a_wrapper_class():
    # `self.parallel = multi_gpu_model(self.model, 2)` in a trainer class of the script's own (with
    # a `fit` method) is no `ModelMGPU(Model)`: the reference run gets the template itself
    from multi_gpu_codemod.verify.child import _keras_model_class

    keras_model = type("Model", (), {"__module__": "keras.src.models.model"})
    sequential = type("Sequential", (keras_model,), {"__module__": "keras.src.models.sequential"})
    wrapper = type("ModelMGPU", (keras_model,), {"__module__": "__main__"})
    trainer = type("MLPRegressor", (), {"__module__": "__main__", "fit": lambda self: None})
    assert _keras_model_class(wrapper) is keras_model and _keras_model_class(sequential) is keras_model
    assert _keras_model_class(trainer) is None
    assert _keras_model_class(type("Model", (), {"__module__": "__main__"})) is None


def test_a_migrated_run_failing_on_an_uneven_batch_says_which_keras_3_pitfall_it_is():
    from multi_gpu_codemod.verify.report import Report
    from multi_gpu_codemod.verify.runs import Run

    error = ("exit 1: InvalidArgumentError: Inputs to operation AddN of type AddN must have the same size and "
             "shape.  Input 0: [7,16,16,16,1] != input 1: [6,16,16,16,1]")
    failed = Report("s.py", {"shim": Run("shim", ok=True), "migrated": Run("migrated", error=error)}, [], [])
    text = harness.format_report(failed)
    assert "FAIL" in text and "validation_split" in text and "divides by the replica count" in text
    other = Report("s.py", {"migrated": Run("migrated", error="exit 1: NameError: x")}, [], [])
    assert "validation_split" not in harness.format_report(other)
