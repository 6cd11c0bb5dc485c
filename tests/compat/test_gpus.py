"""Validation of `gpus` and of the model argument: the original messages, verbatim."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import multi_gpu_compat as compat
from multi_gpu_compat import _gpus
from compat_helpers import N_REPLICAS, mlp

COMPAT_DIR = Path(compat.__file__).resolve().parent
AVAILABLE = ["/cpu:0"] + [f"/gpu:{i}" for i in range(N_REPLICAS)]


def missing_message(gpus, ids):
    return (
        "To call `multi_gpu_model` with `gpus=%s`, we expect the following devices to be "
        "available: %s. However this machine only has: %s. Try reducing `gpus`."
        % (gpus, ["/cpu:0"] + [f"/gpu:{i}" for i in ids], AVAILABLE)
    )


def assert_raised_by_shim(excinfo):
    """A clear error raised by the shim itself, not a trace from deep inside TensorFlow."""
    last = Path(str(excinfo.traceback[-1].path)).resolve()
    assert COMPAT_DIR in last.parents, f"raised from {last}"


@pytest.fixture
def template(keras_module):
    return mlp(keras_module, name="validation_template")


# --- through the public function ------------------------------------------------------

@pytest.mark.parametrize(
    "gpus, message",
    [
        (1, "For multi-gpu usage to be effective, call `multi_gpu_model` with `gpus >= 2`. "
            "Received: `gpus=1`"),
        (-3, "For multi-gpu usage to be effective, call `multi_gpu_model` with `gpus >= 2`. "
             "Received: `gpus=-3`"),
        ([0], "For multi-gpu usage to be effective, call `multi_gpu_model` with "
              "`len(gpus) >= 2`. Received: `gpus=[0]`"),
        ((3,), "For multi-gpu usage to be effective, call `multi_gpu_model` with "
               "`len(gpus) >= 2`. Received: `gpus=(3,)`"),
        (8, missing_message(8, range(8))),
        (5, missing_message(5, range(5))),
        ([0, 7], missing_message([0, 7], [0, 7])),
        ([2, 4], missing_message([2, 4], [2, 4])),
    ],
)
def test_original_value_errors_verbatim(template, gpus, message):
    with pytest.raises(ValueError) as excinfo:
        compat.multi_gpu_model(template, gpus=gpus)
    assert str(excinfo.value) == message
    assert_raised_by_shim(excinfo)


def test_documented_single_gpu_fallback_pattern(template):
    # try: parallel = multi_gpu_model(model) except ValueError: parallel = model
    try:
        parallel = compat.multi_gpu_model(template, gpus=N_REPLICAS + 1)
    except ValueError:
        parallel = template
    assert parallel is template


@pytest.mark.parametrize("gpus", [None, 0, [], ()])
def test_unset_gpus_autodetects_all_simulated(keras_module, gpus):
    parallel = compat.multi_gpu_model(mlp(keras_module, name="auto_template"), gpus=gpus)
    assert parallel.distribute_strategy.num_replicas_in_sync == N_REPLICAS


@pytest.mark.parametrize(
    "gpus, replicas",
    [(2, 2), (2.0, 2), (np.int64(3), 3), ([0, 1], 2), ((1, 3), 2), ([np.int32(0), 1.0, 2], 3),
     (range(2), 2)],
)
def test_accepted_gpus_values(keras_module, gpus, replicas):
    parallel = compat.multi_gpu_model(mlp(keras_module, name="accepted_template"), gpus=gpus)
    assert parallel.distribute_strategy.num_replicas_in_sync == replicas


def test_gpu_ids_select_those_devices(keras_module):
    parallel = compat.multi_gpu_model(mlp(keras_module, name="ids_template"), gpus=[1, 3])
    devices = parallel.distribute_strategy.extended.worker_devices
    # Simulated /gpu:i is logical CPU i.
    assert [d.rsplit(":", 1)[-1] for d in devices] == ["1", "3"]


@pytest.mark.parametrize(
    "gpus, exc",
    [
        ("2", TypeError),
        (b"2", TypeError),
        (2.5, TypeError),
        (np.array([0, 1]), TypeError),
        (True, TypeError),
        ({0, 1}, TypeError),
        ([0, "1"], TypeError),
        ([0, 1.5], TypeError),
        ([0, True], TypeError),
        ([0, None], TypeError),
        ([-1, 0], ValueError),
        ([0, -2, 1], ValueError),
        ([0, 0], ValueError),
        ([1, 2, 1, 2], ValueError),
    ],
    ids=repr,
)
def test_junk_gpus_clear_error_naming_argument(template, gpus, exc):
    with pytest.raises(exc) as excinfo:
        compat.multi_gpu_model(template, gpus=gpus)
    assert excinfo.type is exc
    assert "`gpus" in str(excinfo.value)
    assert_raised_by_shim(excinfo)


def test_duplicate_ids_message_names_the_duplicates(template):
    with pytest.raises(ValueError, match=r"\[1\] appear more than once") as excinfo:
        compat.multi_gpu_model(template, gpus=[0, 1, 1])
    assert "gpus=[0, 1, 1]" in str(excinfo.value)


# (ids by type, not repr: an object's repr holds its address, which differs between pytest-xdist's
# workers, and they must collect the same tests)
@pytest.mark.parametrize("model", ["model.h5", None, 3, object()],
                         ids=lambda m: "object" if type(m) is object else repr(m))
def test_non_model_first_argument(model):
    with pytest.raises(TypeError, match="Keras model instance") as excinfo:
        compat.multi_gpu_model(model, gpus=2)
    assert_raised_by_shim(excinfo)


def test_unbuilt_model_clear_error(keras_module):
    unbuilt = keras_module.Sequential([keras_module.layers.Dense(2)])
    # The shim's own message on Keras 3; tf_keras refuses first, just as clearly.
    with pytest.raises(ValueError, match="built model|have not yet been created"):
        compat.multi_gpu_model(unbuilt, gpus=2)


def test_failed_validation_leaves_template_untouched(keras_module):
    import tensorflow as tf

    model = mlp(keras_module, name="untouched_template")
    with pytest.raises(ValueError):
        compat.multi_gpu_model(model, gpus=[0, 9])
    assert not any(isinstance(getattr(v, "value", v), tf.distribute.DistributedValues)
                   for v in model.weights)
    assert tf.distribute.has_strategy() is False


# --- pure-Python validation (compat/_gpus.py), property-based -----------------------

@given(st.integers(min_value=2, max_value=10_000))
def test_int_count_gives_range(n):
    assert _gpus.target_gpu_ids(n) == list(range(n))
    assert _gpus.target_gpu_ids(float(n)) == list(range(n))
    assert not _gpus.is_unset(n)


@given(st.integers(max_value=1).filter(lambda n: n != 0))
def test_int_below_two_rejected_verbatim(n):
    with pytest.raises(ValueError) as excinfo:
        _gpus.target_gpu_ids(n)
    assert str(excinfo.value) == (
        "For multi-gpu usage to be effective, call `multi_gpu_model` with `gpus >= 2`. "
        f"Received: `gpus={n}`"
    )


@given(st.lists(st.integers(0, 64), min_size=2, max_size=8, unique=True),
       st.sampled_from([list, tuple]))
def test_distinct_ids_returned_in_order(ids, kind):
    result = _gpus.target_gpu_ids(kind(ids))
    assert result == ids
    assert all(type(i) is int for i in result)


@given(st.lists(st.integers(0, 64), max_size=1))
def test_short_lists_rejected_verbatim(ids):
    if not ids:
        assert _gpus.is_unset(ids)
        return
    with pytest.raises(ValueError) as excinfo:
        _gpus.target_gpu_ids(ids)
    assert str(excinfo.value) == (
        "For multi-gpu usage to be effective, call `multi_gpu_model` with `len(gpus) >= 2`. "
        f"Received: `gpus={ids}`"
    )


@given(st.lists(st.integers(0, 16), min_size=2, max_size=8).filter(lambda values: len(set(values)) < len(values)))
def test_duplicates_always_rejected(ids):
    with pytest.raises(ValueError, match="more than once"):
        _gpus.target_gpu_ids(ids)


@given(st.lists(st.integers(-50, 50), min_size=2, max_size=6).filter(lambda values: min(values) < 0))
def test_negative_ids_rejected(ids):
    with pytest.raises(ValueError, match=re.escape("`gpus=")):
        _gpus.target_gpu_ids(ids)


@given(st.floats(allow_nan=True, allow_infinity=False).filter(lambda f: f != int(f) if f == f else True))
@settings(max_examples=50)
def test_non_integral_floats_rejected(value):
    with pytest.raises(TypeError, match="`gpus"):
        _gpus.target_gpu_ids(value)
    with pytest.raises(TypeError, match="`gpus"):
        _gpus.target_gpu_ids([0, value])


@given(st.one_of(st.text(), st.binary(), st.dictionaries(st.integers(), st.integers()),
                 st.sets(st.integers()), st.booleans(), st.just(np.array([0, 1]))))
@settings(max_examples=50)
def test_junk_types_rejected_with_type_error(value):
    if _gpus.is_unset(value):  # {} / set() are not unset: only None, 0 and []/() are
        pytest.fail(f"{value!r} treated as unset")
    with pytest.raises(TypeError, match="`gpus"):
        _gpus.target_gpu_ids(value)


def test_is_unset_exactly_none_zero_empty():
    for value in (None, 0, 0.0, [], ()):
        assert _gpus.is_unset(value), value
    for value in (1, 2, [0, 1], "0", "", True, np.array([])):
        assert not _gpus.is_unset(value), value
