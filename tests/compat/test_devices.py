"""compat/_devices.py: the devices `multi_gpu_model` sees and the one strategy per device set."""

from __future__ import annotations

import pytest
import tensorflow as tf

from multi_gpu_compat import _devices

from compat_helpers import N_REPLICAS


def test_available_devices_are_named_as_keras_2_printed_them():
    assert _devices.available_devices() == ["/cpu:0"] + [f"/gpu:{i}" for i in range(N_REPLICAS)]
    assert _devices.visible_gpu_count() == N_REPLICAS


def test_replicas_run_on_the_logical_cpus_standing_in_for_gpus():
    assert _devices.replica_devices([0, 2]) == ["/device:CPU:0", "/device:CPU:2"]


def test_one_strategy_per_device_set_reused_and_recognised():
    devices = _devices.replica_devices([0, 1])
    strategy = _devices.strategy_for(devices)
    assert _devices.strategy_for(list(devices)) is strategy
    assert strategy.num_replicas_in_sync == 2
    assert _devices.is_shim_strategy(strategy)
    assert not _devices.is_shim_strategy(tf.distribute.get_strategy())


def test_a_second_call_cannot_switch_cross_device_ops():
    devices = _devices.replica_devices([0, 1])
    chosen = _devices.strategy_for(devices).extended._cross_device_ops
    assert _devices.strategy_for(devices, chosen) is _devices.strategy_for(devices)
    with pytest.raises(ValueError, match=r"already runs a MirroredStrategy on .* switch to HierarchicalCopyAllReduce"):
        _devices.strategy_for(devices, tf.distribute.HierarchicalCopyAllReduce())


def test_foreign_strategy_error_names_the_variable_and_the_fix():
    error = _devices.foreign_strategy_error("dense/kernel:0")
    assert str(error) == (
        "Variable dense/kernel:0 was created under another tf.distribute strategy; `multi_gpu_model` expects a "
        "template built outside any strategy scope. Build the template without `strategy.scope()`, or use that "
        "strategy directly instead of `multi_gpu_model`."
    )
