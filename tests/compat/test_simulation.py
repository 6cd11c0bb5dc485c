"""Simulation mode: logical CPU devices standing in for GPUs, for multi_gpu_model and for plain
tf.distribute code. Fresh interpreters: devices are fixed once TensorFlow initialises."""

from __future__ import annotations

import pytest

import multi_gpu_compat as compat
from multi_gpu_compat import simulation
from compat_helpers import N_REPLICAS, run

ENV = simulation.ENV_VAR

TINY_FIT = """
def tiny_fit(K, strategy):
    import numpy as np
    with strategy.scope():
        model = K.Sequential([K.Input((3,)), K.layers.Dense(2)])
        model.compile(optimizer="sgd", loss="mse")
    x = np.ones((6, 3), "float32"); y = np.ones((6, 2), "float32")  # divides by 2 and 3
    return model.fit(x, y, batch_size=6, epochs=1, verbose=0).history["loss"][-1]
"""


@pytest.mark.slow  # a TensorFlow child; children given the variable (test_import_hook) stay fast
def test_env_var_simulates_gpus_for_plain_tensorflow_code():
    code = TINY_FIT + """
import math, numpy as np, tensorflow as tf
from multi_gpu_compat import backend
K = backend.keras_module()
assert tf.distribute.MirroredStrategy().num_replicas_in_sync == 3
pair = tf.distribute.MirroredStrategy(devices=["/gpu:0", "/gpu:1"])
assert pair.num_replicas_in_sync == 2
assert [d.rsplit(":", 1)[-1] for d in pair.extended.worker_devices] == ["0", "1"]
assert math.isfinite(tiny_fit(K, pair))  # completes instead of hanging on missing GPUs
assert math.isfinite(tiny_fit(K, tf.distribute.MirroredStrategy()))
# The public listing shows the simulated GPUs, so migrated code that counts or slices them
# runs on what it asked for; physical devices stay real (memory-growth code runs on them).
listed = tf.config.list_logical_devices("GPU")
assert [d.name for d in listed] == ["/device:GPU:0", "/device:GPU:1", "/device:GPU:2"], listed
assert tf.config.experimental.list_logical_devices("GPU") == listed
assert tf.config.list_physical_devices("GPU") == []
assert tf.distribute.MirroredStrategy(listed[:1]).num_replicas_in_sync == 1
assert tf.distribute.MirroredStrategy(listed[:2]).num_replicas_in_sync == 2
assert tf.distribute.MirroredStrategy([d.name for d in listed]).num_replicas_in_sync == 3
# Keras reads the listing to pick kernels: it must not choose cuDNN on the CPU.
with tf.distribute.MirroredStrategy().scope():
    rnn = K.Sequential([K.Input((4, 3)), K.layers.LSTM(2)])
    rnn.compile(optimizer="sgd", loss="mse")
rnn.fit(np.ones((6, 4, 3), "float32"), np.ones((6, 2), "float32"), batch_size=6, verbose=0)
try:
    tf.distribute.MirroredStrategy(devices=["/gpu:0", "/gpu:3"])
except ValueError as err:
    assert "/gpu:3" in str(err) and "MULTI_GPU_COMPAT_SIMULATE_GPUS" in str(err), err
else:
    raise AssertionError("/gpu:3 accepted with 3 simulated GPUs")
import multi_gpu_compat as compat
parallel = compat.multi_gpu_model(K.Sequential([K.Input((3,)), K.layers.Dense(2)]), gpus=None)
assert parallel.distribute_strategy.num_replicas_in_sync == 3
try:
    compat.multi_gpu_model(K.Sequential([K.Input((3,)), K.layers.Dense(2)]), gpus=4)
except ValueError as err:
    assert "However this machine only has: ['/cpu:0', '/gpu:0', '/gpu:1', '/gpu:2']." in str(err), err
else:
    raise AssertionError("gpus=4 accepted with 3 simulated GPUs")
compat.simulate_gpus(3)  # same count again: a no-op
try:
    compat.simulate_gpus(2)
except ValueError as err:
    assert "already" in str(err)
else:
    raise AssertionError("count changed after start-up")
print("SIMULATION-OK")
"""
    proc = run(code, env={ENV: "3"}, timeout=150)
    assert "SIMULATION-OK" in proc.stdout


@pytest.mark.slow  # a TensorFlow child; the session (4 simulated GPUs) and test_devices.py cover it fast
def test_simulate_gpus_call_before_tensorflow_initialises():
    code = TINY_FIT + """
import multi_gpu_compat as compat
compat.simulate_gpus(2)  # before any TensorFlow op
import math, tensorflow as tf
from multi_gpu_compat import backend
assert tf.distribute.MirroredStrategy().num_replicas_in_sync == 2
assert math.isfinite(tiny_fit(backend.keras_module(), tf.distribute.MirroredStrategy(["/gpu:0", "/gpu:1"])))
print("CALL-OK")
"""
    proc = run(code, timeout=150)
    assert "CALL-OK" in proc.stdout


@pytest.mark.slow  # a TensorFlow child; the session (4 simulated GPUs) and test_devices.py cover it fast
def test_simulate_after_tensorflow_initialised_and_bad_env_value():
    code = """
import warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import tensorflow as tf  # a bad env value must not break this import
assert any("MULTI_GPU_COMPAT_SIMULATE_GPUS" in str(w.message) and "'two'" in str(w.message)
           for w in caught), [str(w.message) for w in caught]
assert float(tf.reduce_sum(tf.constant([1.0, 2.0]))) == 3.0  # TensorFlow works, initialised
import multi_gpu_compat as compat
try:
    compat.simulate_gpus(2)
except RuntimeError as err:
    assert "after TensorFlow initialised" in str(err) and "MULTI_GPU_COMPAT_SIMULATE_GPUS=2" in str(err), err
else:
    raise AssertionError("simulate_gpus after initialisation did not raise")
# No GPUs, no simulation: the original's fallback ValueError, never a hang.
from multi_gpu_compat import backend
K = backend.keras_module()
assert tf.distribute.MirroredStrategy().num_replicas_in_sync == 1
try:
    compat.multi_gpu_model(K.Sequential([K.Input((3,)), K.layers.Dense(2)]))
except ValueError as err:
    assert str(err) == ("For multi-gpu usage to be effective, call `multi_gpu_model` with "
                        "`gpus >= 2`. Received: `gpus=0`"), err
else:
    raise AssertionError("multi_gpu_model without GPUs did not raise")
try:
    compat.multi_gpu_model(K.Sequential([K.Input((3,)), K.layers.Dense(2)]), gpus=2)
except ValueError as err:
    assert "However this machine only has: ['/cpu:0']." in str(err), err
else:
    raise AssertionError("gpus=2 accepted without GPUs")
print("INIT-OK")
"""
    proc = run(code, env={ENV: "two"}, timeout=120)
    assert "INIT-OK" in proc.stdout


@pytest.mark.parametrize("n", [0, -1, "2", 2.0, True, None])
def test_simulate_gpus_rejects_bad_counts(n):
    with pytest.raises(ValueError, match="positive integer"):
        compat.simulate_gpus(n)


def test_simulate_gpus_in_session():
    compat.simulate_gpus(N_REPLICAS)  # same count: accepted, nothing changes
    assert simulation.simulated_gpus() == N_REPLICAS
    with pytest.raises(ValueError, match="already provides 4 GPUs"):
        compat.simulate_gpus(N_REPLICAS + 1)


@pytest.mark.parametrize("value", ["abc", "0", "-2", "1.5"])
def test_bad_env_value_message(monkeypatch, value):
    monkeypatch.setenv(ENV, value)
    with pytest.raises(ValueError, match=f"{ENV} must be a positive integer.*{value!r}"):
        simulation.simulate_from_environment()


def test_simulated_device_mapping():
    assert simulation.simulated_device("/gpu:2").endswith("device:CPU:2")
    assert simulation.simulated_device("/job:localhost/device:GPU:1").endswith("device:CPU:1")
    assert simulation.simulated_device("/cpu:0") == "/cpu:0"
    with pytest.raises(ValueError, match="/gpu:4"):
        simulation.simulated_device("/gpu:4")


@pytest.mark.slow  # a TensorFlow child; the session (4 simulated GPUs) and test_devices.py cover it fast
def test_each_simulated_replica_gets_an_inter_op_thread_unless_the_user_chose():
    # Eight replicas on a 2-core machine must not wait on each other with no thread left.
    code = """
import os, tensorflow as tf
import multi_gpu_compat as compat
compat.simulate_gpus(8)
threads = tf.config.threading.get_inter_op_parallelism_threads()
assert threads >= 10, threads
print("THREADS-OK")
"""
    assert "THREADS-OK" in run(code, timeout=120).stdout
    chosen = """
import tensorflow as tf
import multi_gpu_compat as compat
tf.config.threading.set_inter_op_parallelism_threads(3)
compat.simulate_gpus(8)
assert tf.config.threading.get_inter_op_parallelism_threads() == 3
print("KEPT-OK")
"""
    assert "KEPT-OK" in run(chosen, timeout=120).stdout
