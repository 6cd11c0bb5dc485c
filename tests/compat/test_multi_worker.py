"""Multi-worker training behind `multi_gpu_model` (MultiWorkerMirroredStrategy).

The pytest process runs on 4 simulated GPUs already, and MultiWorkerMirroredStrategy must
configure TensorFlow before its first op, so every cluster runs in subprocesses: 2 workers on
127.0.0.1 (free ports), 2 simulated GPUs each, compared with one process on 4 simulated GPUs.
Every subprocess has a timeout and runs in its own process group, killed in `finally`.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from multi_gpu_compat import multi_worker
from child_process import child_env
from compat_helpers import keras3_older_than
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

TRAIN = FIXTURES / "multi_worker" / "train.py"
EPOCHS = 4
# Float32 sums reduced in a different order (all-reduce over 2 workers vs. on one host).
ATOL = 1e-5
RUN_TIMEOUT = 150  # seconds, per launch


# --- helpers -------------------------------------------------------------------------


def _free_ports(count: int) -> list[int]:
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _tf_config(ports: list[int], index: int) -> str:
    return json.dumps(
        {
            "cluster": {"worker": [f"127.0.0.1:{p}" for p in ports]},
            "task": {"type": "worker", "index": index},
        }
    )


class Processes:
    """Launches processes in their own process groups; kills every group on exit."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.procs: list[tuple[subprocess.Popen, Path]] = []

    def __enter__(self) -> Processes:
        return self

    def __exit__(self, *exc: object) -> None:
        for proc, _ in self.procs:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            proc.wait(timeout=30)
            if proc.stdout:
                proc.stdout.close()

    def start(self, name: str, args: list[str], env: dict[str, str | None]) -> subprocess.Popen:
        log = self.tmp / f"{name}.log"
        proc = subprocess.Popen(
            [sys.executable, *args],
            env=child_env(env, drop=["TF_CONFIG"]),  # each worker gets its own cluster
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, killed as a whole
        )
        self.procs.append((proc, log))
        return proc

    def wait(self, proc: subprocess.Popen, timeout: float = RUN_TIMEOUT, expect_ok: bool = True) -> int:
        log = next(log for p, log in self.procs if p is proc)
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{log.name} still running after {timeout} s:\n{_tail(log)}")
        if expect_ok and code != 0:
            pytest.fail(f"{log.name} exited with {code}:\n{_tail(log)}")
        return code

    def start_cluster(
        self, name: str, out: Path, extra: list[str], env: dict[str, str | None] | None = None
    ) -> list[subprocess.Popen]:
        ports = _free_ports(2)
        procs = []
        for i in range(2):
            tmpdir = out / f"tmp-{name}-{i}"
            tmpdir.mkdir(parents=True, exist_ok=True)
            procs.append(
                self.start(
                    f"{name}-worker-{i}",
                    [str(TRAIN), str(out / f"worker-{i}"), "--gpus", "2", *extra],
                    {
                        "TF_CONFIG": _tf_config(ports, i),
                        "MULTI_GPU_COMPAT_SIMULATE_GPUS": "2",
                        "TMPDIR": str(tmpdir),
                        **(env or {}),
                    },
                )
            )
        return procs


def _tail(log: Path, lines: int = 40) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def _result(directory: Path) -> dict:
    (path,) = directory.glob("result-*.json")
    return json.loads(path.read_text())


def _max_weight_difference(a: dict, b: dict) -> float:
    return max(float(np.max(np.abs(np.subtract(u, v)))) for u, v in zip(a["weights"], b["weights"]))


def _epoch_lines(log: Path, kind: str) -> list[int]:
    if not log.exists():
        return []
    return [int(line.split()[1]) for line in log.read_text().splitlines() if line.startswith(kind)]


# --- one reference run and one 2-worker run, shared by the tests below ----------------


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The same script in one process on 4 simulated GPUs (4 replicas)."""
    tmp = tmp_path_factory.mktemp("reference")
    with Processes(tmp) as p:
        proc = p.start(
            "reference",
            [str(TRAIN), str(tmp / "out"), "--gpus", "4", "--epochs", str(EPOCHS)],
            {"MULTI_GPU_COMPAT_SIMULATE_GPUS": "4"},
        )
        p.wait(proc)
    return _result(tmp / "out")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2 workers x 2 simulated GPUs; each worker writes into its own directory."""
    tmp = tmp_path_factory.mktemp("cluster")
    start = time.monotonic()
    with Processes(tmp) as p:
        for proc in p.start_cluster("cluster", tmp, ["--epochs", str(EPOCHS)]):
            p.wait(proc)
    (tmp / "seconds").write_text(f"{time.monotonic() - start:.1f}")
    return tmp


@pytest.mark.slow
def test_workers_agree_with_each_other_and_with_one_process(cluster: Path, reference: dict) -> None:
    worker0, worker1 = _result(cluster / "worker-0"), _result(cluster / "worker-1")
    assert worker0["replicas"] == worker1["replicas"] == reference["replicas"] == 4
    # Both workers hold the same mirrored variables.
    assert _max_weight_difference(worker0, worker1) <= ATOL
    # 2 workers x 2 devices train like one process on 4 devices: same global batches.
    assert _max_weight_difference(worker0, reference) <= ATOL
    if not keras3_older_than((3, 8)):
        # Keras 3.3-3.7 keep the loss tracker per replica (no aggregation): the losses
        # `fit` reports are each worker's own share. The training itself is the same.
        np.testing.assert_allclose(worker0["losses"], worker1["losses"], atol=ATOL)
        np.testing.assert_allclose(worker0["losses"], reference["losses"], atol=ATOL)
    np.testing.assert_allclose(worker0["evaluation"], reference["evaluation"], atol=ATOL)
    np.testing.assert_allclose(worker0["predictions"], reference["predictions"], atol=ATOL)
    # And it trained: the loss went down.
    assert worker0["losses"][-1] < worker0["losses"][0] / 2


@pytest.mark.slow
def test_only_the_chief_writes_the_saved_template(cluster: Path, legacy_keras: bool, keras_module) -> None:
    name = "model.h5" if legacy_keras else "model.keras"
    assert (cluster / "worker-0" / name).is_file()  # worker 0 is the chief
    assert not (cluster / "worker-1" / name).exists()
    # The non-chief's temporary copy is gone.
    assert list((cluster / "tmp-cluster-1").iterdir()) == []
    # The chief's file is the plain template with the trained weights.
    loaded = keras_module.models.load_model(cluster / "worker-0" / name, compile=False)
    assert loaded.name == "template"
    trained = _result(cluster / "worker-0")["weights"]
    for saved, expected in zip(loaded.get_weights(), trained):
        np.testing.assert_allclose(np.ravel(saved), expected, atol=1e-6)


@pytest.mark.slow
def test_killed_worker_restarted_resumes_from_the_last_saved_epoch(
    tmp_path: Path, reference: dict
) -> None:
    backup = tmp_path / "backup"
    args = ["--epochs", str(EPOCHS), "--backup", str(backup), "--epoch-pause", "1.5"]
    chief_log = tmp_path / "worker-0" / "epochs-worker-0.log"
    other_log = tmp_path / "worker-1" / "epochs-worker-1.log"
    with Processes(tmp_path) as p:
        worker0, worker1 = p.start_cluster("first", tmp_path, args)
        deadline = time.monotonic() + RUN_TIMEOUT
        # Kill worker 1 once both finished (and backed up) epochs 0 and 1.
        while not (1 in _epoch_lines(chief_log, "end") and 1 in _epoch_lines(other_log, "end")):
            if time.monotonic() > deadline or worker0.poll() is not None or worker1.poll() is not None:
                pytest.fail("the cluster did not reach epoch 2:\n" + _tail(p.procs[0][1]))
            time.sleep(0.1)
        os.killpg(worker1.pid, signal.SIGKILL)
        # The surviving worker's collectives fail: it exits with an error (no hang).
        assert p.wait(worker0, timeout=90, expect_ok=False) != 0
        saved_epochs = len(_epoch_lines(chief_log, "end"))
        assert saved_epochs >= 2
        # The cluster manager's part: start the same command again on every worker.
        for log in (chief_log, other_log):
            log.rename(log.with_suffix(".first"))
        for proc in p.start_cluster("restart", tmp_path, args):
            p.wait(proc)
    for log in (chief_log, other_log):
        # No epoch before the last backup is run again; nothing after it is skipped.
        assert _epoch_lines(log, "begin") == list(range(saved_epochs, EPOCHS))
    restarted = _result(tmp_path / "worker-0")
    assert _max_weight_difference(restarted, _result(tmp_path / "worker-1")) <= ATOL
    # Killed and resumed, the result equals the uninterrupted single-process run.
    assert _max_weight_difference(restarted, reference) <= ATOL
    np.testing.assert_allclose(restarted["losses"], reference["losses"][saved_epochs:], atol=ATOL)


@pytest.mark.slow
def test_unreachable_worker_ends_with_a_message_not_a_hang(tmp_path: Path) -> None:
    ports = _free_ports(2)
    with Processes(tmp_path) as p:
        proc = p.start(
            "alone",
            [str(TRAIN), str(tmp_path / "out")],
            {
                "TF_CONFIG": _tf_config(ports, 0),  # worker 1 never starts
                "MULTI_GPU_COMPAT_SIMULATE_GPUS": "2",
                multi_worker.TIMEOUT_ENV: "3",
            },
        )
        assert p.wait(proc, timeout=60, expect_ok=False) != 0
    output = (tmp_path / "alone.log").read_text()
    assert "could not connect the cluster" in output
    assert f"127.0.0.1:{ports[1]}" in output and multi_worker.TIMEOUT_ENV in output


@pytest.mark.slow
def test_tf_config_set_after_tensorflow_started_gives_a_clear_error(tmp_path: Path) -> None:
    code = f"""
import os
import tensorflow as tf
from multi_gpu_compat import multi_gpu_model
model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])  # TF runs
os.environ["TF_CONFIG"] = {_tf_config(_free_ports(2), 0)!r}  # too late for the strategy
try:
    multi_gpu_model(model, gpus=2)
except RuntimeError as err:
    print("ERROR:", err)
"""
    with Processes(tmp_path) as p:
        proc = p.start("late", ["-c", code], {"MULTI_GPU_COMPAT_SIMULATE_GPUS": "2"})
        p.wait(proc, timeout=90)
    output = (tmp_path / "late.log").read_text()
    assert "ERROR: `multi_gpu_model` cannot start multi-worker training" in output
    assert "Set TF_CONFIG in the environment" in output


# --- in-process unit tests (no cluster) -----------------------------------------------


def _config(**task: object) -> str:
    return json.dumps({"cluster": {"worker": ["a:1", "b:2"]}, "task": task})


def test_tf_config_parsing() -> None:
    info = multi_worker.cluster_info(_config(type="worker", index=1))
    assert info.is_multi_worker and not info.is_chief and info.num_workers == 2
    assert multi_worker.cluster_info(_config(type="worker", index=0)).is_chief
    with_chief = json.dumps(
        {"cluster": {"chief": ["c:1"], "worker": ["a:1"]}, "task": {"type": "worker", "index": 0}}
    )
    assert not multi_worker.cluster_info(with_chief).is_chief
    assert multi_worker.cluster_info("") is None
    assert multi_worker.cluster_info('{"cluster": {}}') is None
    single = json.dumps({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 0}})
    assert not multi_worker.cluster_info(single).is_multi_worker


@pytest.mark.parametrize(
    "raw, fragment",
    [
        ("{not json", "not valid JSON"),
        ('["worker"]', "top level is a list"),
        (json.dumps({"cluster": {"worker": ["a:1", "b:2"]}}), '"task"'),
        (_config(type="ps", index=0), 'task type "ps" is not a job'),
        (_config(type="worker", index=2), "task index 2 is out of range"),
        (json.dumps({"cluster": {"worker": ["nohostport"]}, "task": {"type": "worker"}}), "host:port"),
    ],
)
def test_malformed_tf_config_says_what_is_wrong(raw: str, fragment: str) -> None:
    with pytest.raises(ValueError, match="TF_CONFIG is malformed") as info:
        multi_worker.cluster_info(raw)
    assert fragment in str(info.value)
    assert "unset TF_CONFIG" in str(info.value)


def test_strategy_choice_argument_then_environment_then_tf_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(multi_worker.STRATEGY_ENV, raising=False)
    monkeypatch.delenv("TF_CONFIG", raising=False)
    assert not multi_worker.wants_multi_worker()
    assert multi_worker.wants_multi_worker("multi_worker")
    assert multi_worker.wants_multi_worker("multi-worker")
    monkeypatch.setenv("TF_CONFIG", _config(type="worker", index=1))
    assert multi_worker.wants_multi_worker()
    assert not multi_worker.wants_multi_worker("mirrored")
    monkeypatch.setenv(multi_worker.STRATEGY_ENV, "mirrored")
    assert not multi_worker.wants_multi_worker()
    assert multi_worker.wants_multi_worker("multi_worker")
    monkeypatch.setenv(multi_worker.STRATEGY_ENV, "parameter_server")
    with pytest.raises(ValueError, match="MULTI_GPU_COMPAT_STRATEGY must be one of"):
        multi_worker.wants_multi_worker()
    with pytest.raises(ValueError, match="`strategy` must be None"):
        multi_worker.wants_multi_worker("tpu")


def test_bad_strategy_argument_is_rejected_before_anything_happens(keras_module) -> None:
    from multi_gpu_compat import multi_gpu_model

    model = keras_module.Sequential([keras_module.Input((3,)), keras_module.layers.Dense(1)])
    with pytest.raises(ValueError, match="Received: strategy='cluster'"):
        multi_gpu_model(model, gpus=2, strategy="cluster")


def test_chief_aware_save_writes_a_temporary_file_on_other_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written: list[Path] = []

    class Template:
        def save(self, filepath: object, overwrite: bool = True) -> str:
            path = Path(filepath)
            path.write_text("model")
            written.append(path)
            assert path.exists()
            return "saved"

        def save_weights(self, filepath: object) -> None:
            self.save(filepath)

    template = Template()
    multi_worker.chief_aware_saving(template)
    multi_worker.chief_aware_saving(template)  # idempotent
    monkeypatch.setenv("TF_CONFIG", _config(type="worker", index=1))
    target = tmp_path / "model.keras"
    assert template.save(target, overwrite=True) == "saved"
    assert not target.exists()
    assert written[-1].name == "model.keras" and written[-1].parent != tmp_path
    assert not written[-1].parent.exists()  # the temporary directory is deleted
    template.save_weights(str(tmp_path / "w.weights.h5"))
    assert not (tmp_path / "w.weights.h5").exists()
    monkeypatch.setenv("TF_CONFIG", _config(type="worker", index=0))
    template.save(target)
    assert target.read_text() == "model"


def test_gpus_must_match_the_devices_per_worker() -> None:
    class Extended:
        worker_devices = ("/job:worker/task:0/device:CPU:0", "/job:worker/task:0/device:CPU:1")

    class Strategy:
        extended = Extended()

    multi_worker.check_gpus([0, 1], Strategy())
    with pytest.raises(ValueError, match="`gpus` must be 2 .* on every worker"):
        multi_worker.check_gpus([0, 1, 2], Strategy())


def test_keras3_reduce_fix_applies_only_to_multi_worker_strategies(legacy_keras: bool) -> None:
    if legacy_keras:
        pytest.skip("tensorflow#72388 is a Keras 3 bug; tf_keras reduces correctly")
    import tensorflow as tf
    from keras.src.backend.tensorflow import trainer

    from multi_gpu_compat.multi_worker import _keras3_reduce

    _keras3_reduce.patch_reduce_per_replica()
    calls = []

    class Ours:
        _compat_multi_worker = True

        def reduce(self, op: str, value: object, axis: object) -> object:
            calls.append((op, axis))
            return value

    loss = tf.constant(2.0)
    assert trainer.reduce_per_replica({"loss": loss}, Ours(), "auto") == {"loss": loss}
    assert calls == [("MEAN", None)]  # Keras passes axis=0, which fails on scalars
    other = tf.distribute.get_strategy()  # not ours: Keras's own code path
    assert trainer.reduce_per_replica(loss, other, "auto") is loss
    assert calls == [("MEAN", None)]
