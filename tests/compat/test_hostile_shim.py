"""Hostile and careless use of the shim: only the `ModelMGPU` recipe is adopted, absurd `gpus`
values stay cheap, concurrent wrapping shares one strategy, and environment variables that
cannot take effect say so."""

from __future__ import annotations

import os
import sys
import textwrap
import threading

import numpy as np
import pytest

import multi_gpu_compat as compat
from multi_gpu_compat import _devices, _gpus, doctor, import_hook, simulation
from compat_helpers import N_REPLICAS, ROOT, SITE_PACKAGES, STARTUP_DIR, STARTUP_PTH, checkout_startup, data, mlp, run


# --- `multi_gpu_model` inside someone else's class --------------------------------------

def test_plain_trainer_class_keeps_its_class(keras_module):
    class Trainer:
        def __init__(self, model):
            self.parallel = compat.multi_gpu_model(model, gpus=2)

        def fit(self, x, y):
            return "Trainer.fit"

    trainer = Trainer(mlp(keras_module, name="trainer_template"))
    assert type(trainer) is Trainer
    assert trainer.fit(None, None) == "Trainer.fit"
    assert trainer.parallel.distribute_strategy.num_replicas_in_sync == 2


def test_built_model_subclass_holding_a_parallel_copy_keeps_its_class(keras_module):
    K = keras_module

    class Holder(K.Model):
        def __init__(self, template):
            super().__init__()
            self.template = template
            self.parallel = compat.multi_gpu_model(template, gpus=2)

        def call(self, inputs):
            return self.template(inputs)

    holder = Holder(mlp(K, name="holder_template"))
    assert type(holder) is Holder
    x, _ = data(4)
    np.testing.assert_allclose(holder(x), holder.template(x), rtol=1e-6)


def test_model_method_other_than_init_keeps_its_class(keras_module):
    K = keras_module

    class Builder(K.Model):
        def __init__(self, template):
            super().__init__()
            self.template = template

        def call(self, inputs):
            return self.template(inputs)

        def parallel(self):
            copy = compat.multi_gpu_model(self.template, gpus=2)
            self.__dict__["last"] = copy  # mentions __dict__, but is not `__init__`
            return copy

    builder = Builder(mlp(K, name="builder_template"))
    builder.parallel()
    assert type(builder) is Builder


def test_model_mgpu_recipe_is_still_adopted(keras_module):
    K = keras_module

    class ModelMGPU(K.Model):
        def __init__(self, ser_model, gpus):
            pmodel = compat.multi_gpu_model(ser_model, gpus)
            self.__dict__.update(pmodel.__dict__)
            self._smodel = ser_model

    template = mlp(K, name="mgpu_recipe_template")
    wrapper = ModelMGPU(template, 2)
    assert isinstance(wrapper, ModelMGPU) and type(wrapper).__name__ == "ModelMGPU"
    wrapper.compile(optimizer="sgd", loss="mse")
    x, y = data(8)
    before = template.get_weights()[0].copy()
    wrapper.fit(x, y, batch_size=8, epochs=1, verbose=0)
    assert not np.array_equal(template.get_weights()[0], before)  # trained the template


# --- MULTI_GPU_COMPAT_DISABLE: only true-ish values switch the hook off ------------------

FALSE_VALUES = ["", "0", "false", "False", "no", "NO", "off", " Off "]
TRUE_VALUES = ["1", "true", "TRUE", "yes", "Yes", "on", " ON "]


def run_with_checkout_startup(code: str, env: dict, check: bool = True):
    """Runs `code` after this checkout's .pth line, as `site` runs it (the installed copy
    belongs to another checkout): `-S`, with the project and dependencies on PYTHONPATH."""
    prelude = f"exec(open({str(STARTUP_PTH)!r}).read())\n"
    extra = {"PYTHONPATH": os.pathsep.join([str(STARTUP_DIR), str(ROOT / ".dev"), SITE_PACKAGES])}
    extra.update(env)
    return run(prelude + textwrap.dedent(code), env=extra, args=["-S"], check=check)


def _startup_finders(monkeypatch, disable: str | None, simulate: str | None = None) -> list[str]:
    """The start-up finders the .pth line puts on sys.meta_path for these variables."""
    for var, value in (("MULTI_GPU_COMPAT_DISABLE", disable), (simulation.ENV_VAR, simulate)):
        if value is None:
            monkeypatch.delenv(var, raising=False)
        else:
            monkeypatch.setenv(var, value)
    saved = list(sys.meta_path)
    # As in a fresh interpreter: this one's hook is already installed, which the line respects.
    sys.meta_path[:] = [f for f in saved if not isinstance(f, import_hook._Finder)]
    fresh = list(sys.meta_path)
    try:
        checkout_startup().install()  # what the .pth line runs
        return [getattr(f, "__name__", "") for f in sys.meta_path if f not in fresh]
    finally:
        sys.meta_path[:] = saved


@pytest.mark.parametrize("value", FALSE_VALUES + [None])
def test_false_values_keep_hook_on_everywhere(monkeypatch, value):
    assert _startup_finders(monkeypatch, value) == ["_MultiGpuCompatStartup"]
    assert not import_hook.disabled()
    assert import_hook.install() is not None


@pytest.mark.parametrize("value", TRUE_VALUES)
def test_true_values_switch_hook_off_everywhere(monkeypatch, value):
    assert _startup_finders(monkeypatch, value) == []
    assert import_hook.disabled()
    assert import_hook.install() is None


def test_disabled_with_simulation_installs_only_the_notice(monkeypatch):
    assert _startup_finders(monkeypatch, "1", simulate="2") == ["_MultiGpuCompatDisabledNotice"]
    assert _startup_finders(monkeypatch, "0", simulate="2") == ["_MultiGpuCompatStartup"]


@pytest.mark.parametrize("disable, simulate", [(None, None), ("1", None), ("1", "2"), ("no", "2")])
def test_startup_line_imports_nothing(monkeypatch, disable, simulate):
    before = set(sys.modules)
    _startup_finders(monkeypatch, disable, simulate)
    assert set(sys.modules) == before


def test_unknown_value_keeps_hook_on_and_says_so(monkeypatch):
    assert _startup_finders(monkeypatch, "2") == ["_MultiGpuCompatStartup"]
    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if not isinstance(f, import_hook._Finder)])
    with pytest.warns(RuntimeWarning, match="MULTI_GPU_COMPAT_DISABLE='2' is neither true.*stays on"):
        assert import_hook.install() is not None


@pytest.mark.parametrize("value, state", [("off", "not installed"), ("On", "disabled by MULTI_GPU_COMPAT_DISABLE")])
def test_doctor_reads_the_variable_like_the_hook(monkeypatch, capsys, value, state):
    monkeypatch.setenv("MULTI_GPU_COMPAT_DISABLE", value)
    monkeypatch.setattr(import_hook, "is_installed", lambda: False)  # e.g. `python -S`
    assert doctor.main([]) == 0
    assert f"import hook: {state}" in capsys.readouterr().out


@pytest.mark.slow  # a TensorFlow child; test_import_hook's disable test stays fast
def test_disable_false_serves_legacy_imports_in_fresh_interpreter():
    proc = run_with_checkout_startup("""
        from keras.utils import multi_gpu_model
        print("SERVED-BY " + multi_gpu_model.__module__)
    """, env={"MULTI_GPU_COMPAT_DISABLE": "false"})
    assert "SERVED-BY multi_gpu_compat.multi_gpu" in proc.stdout


# --- MULTI_GPU_COMPAT_SIMULATE_GPUS that cannot take effect says so -----------------------

@pytest.mark.slow  # a TensorFlow child; the in-process count-change warning stays fast
def test_simulate_with_hook_disabled_warns_at_tensorflow_import_and_at_use():
    proc = run_with_checkout_startup("""
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import tensorflow as tf
        print("AT-IMPORT " + " | ".join(str(w.message) for w in caught if w.category is RuntimeWarning))
        import multi_gpu_compat as compat
        from multi_gpu_compat import backend
        K = backend.keras_module()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                compat.multi_gpu_model(K.Sequential([K.Input((3,)), K.layers.Dense(2)]), gpus=2)
            except ValueError as err:
                print("NO-DEVICES " + str("only has: ['/cpu:0']" in str(err)))
        print("AT-USE " + " | ".join(str(w.message) for w in caught if w.category is RuntimeWarning))
    """, env={"MULTI_GPU_COMPAT_DISABLE": "1", simulation.ENV_VAR: "2"})
    at_import = proc.stdout.split("AT-IMPORT ", 1)[1].splitlines()[0]
    assert "MULTI_GPU_COMPAT_SIMULATE_GPUS=2 is ignored" in at_import
    assert "Unset MULTI_GPU_COMPAT_DISABLE" in at_import and "multi_gpu_compat.simulate_gpus(2)" in at_import
    assert "NO-DEVICES True" in proc.stdout
    at_use = proc.stdout.split("AT-USE ", 1)[1].splitlines()[0]
    assert "MULTI_GPU_COMPAT_SIMULATE_GPUS=2 is ignored" in at_use and "MULTI_GPU_COMPAT_DISABLE" in at_use


@pytest.mark.slow  # a TensorFlow child; the in-process count-change warning stays fast
def test_simulate_set_after_tensorflow_started_warns_at_use():
    proc = run_with_checkout_startup("""
        import os, warnings
        import tensorflow as tf
        float(tf.constant(1.0))  # TensorFlow has initialised its devices
        os.environ["MULTI_GPU_COMPAT_SIMULATE_GPUS"] = "2"
        import multi_gpu_compat as compat
        from multi_gpu_compat import backend
        K = backend.keras_module()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                compat.multi_gpu_model(K.Sequential([K.Input((3,)), K.layers.Dense(2)]), gpus=2)
            except ValueError:
                pass
        print("AT-USE " + " | ".join(str(w.message) for w in caught if w.category is RuntimeWarning))
    """, env={"MULTI_GPU_COMPAT_DISABLE": None})
    at_use = proc.stdout.split("AT-USE ", 1)[1].splitlines()[0]
    assert "MULTI_GPU_COMPAT_SIMULATE_GPUS=2 is ignored" in at_use
    assert "before starting Python" in at_use and "multi_gpu_compat.simulate_gpus(2)" in at_use


def test_simulate_count_changed_in_running_process_warns(keras_module, monkeypatch):
    monkeypatch.setenv(simulation.ENV_VAR, str(N_REPLICAS + 2))
    monkeypatch.setattr(simulation, "_ignored_values_reported", set())
    with pytest.warns(RuntimeWarning, match=f"already simulates {N_REPLICAS} GPUs"):
        compat.multi_gpu_model(mlp(keras_module, name="changed_count_template"), gpus=2)


# --- absurd `gpus` values: short messages, no memory spent -------------------------------

@pytest.fixture
def template(keras_module):
    return mlp(keras_module, name="hostile_gpus_template")


@pytest.mark.parametrize("gpus", [10**7, 10**8, 10**100])
def test_huge_gpu_count_gets_a_short_original_message(template, gpus):
    with pytest.raises(ValueError) as excinfo:
        compat.multi_gpu_model(template, gpus=gpus)
    message = str(excinfo.value)
    assert len(message) < 600, message[:600]
    assert message.startswith(f"To call `multi_gpu_model` with `gpus={gpus}`, we expect the following "
                              "devices to be available: ['/cpu:0', '/gpu:0', '/gpu:1', ")
    assert f"... ({gpus + 1 - 8} more)]. However this machine only has: ['/cpu:0', " in message
    assert message.endswith("Try reducing `gpus`.")


def test_huge_gpu_id_list_gets_a_short_message(template):
    ids = list(range(10**6))
    with pytest.raises(ValueError) as excinfo:
        compat.multi_gpu_model(template, gpus=ids)
    assert len(str(excinfo.value)) < 600
    assert "`gpus=[0, 1, 2, 3, 4, 5, 6, 7, ... (999992 more)]`" in str(excinfo.value)
    with pytest.raises(ValueError, match=r"\[5\] appear more than once") as excinfo:
        compat.multi_gpu_model(template, gpus=ids + [5])  # a quadratic duplicate scan never ends
    assert len(str(excinfo.value)) < 600


def test_short_lists_are_shown_in_full():
    assert _gpus.brief([0, 1, 2]) == "[0, 1, 2]"
    assert _gpus.brief((3,)) == "(3,)"
    assert _gpus.brief(list(range(16))) == repr(list(range(16)))
    assert _gpus.brief(tuple(range(17))) == "(0, 1, 2, 3, 4, 5, 6, 7, ... (9 more))"
    assert _gpus.device_names(range(15)) == repr(["/cpu:0"] + [f"/gpu:{i}" for i in range(15)])


# --- threads wrapping at once -------------------------------------------------------------

THREADS = 4


def test_threads_wrapping_at_once_share_one_strategy_and_can_rewrap(keras_module, monkeypatch):
    monkeypatch.setattr(_devices, "_strategies", {})  # this device set starts without a strategy
    templates = [mlp(keras_module, name=f"thread_template_{i}") for i in range(THREADS)]
    barrier = threading.Barrier(THREADS)
    parallels: list = [None] * THREADS
    errors: list[BaseException] = []

    def wrap(i: int) -> None:
        barrier.wait()
        try:
            parallels[i] = compat.multi_gpu_model(templates[i], gpus=[1, 3])
        except BaseException as err:  # reported below, never lost in the thread
            errors.append(err)

    threads = [threading.Thread(target=wrap, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    strategy = parallels[0].distribute_strategy
    assert all(p.distribute_strategy is strategy for p in parallels)
    # Afterwards, single-threaded code re-wraps the same templates as it always could.
    again = [compat.multi_gpu_model(t, gpus=[1, 3]) for t in templates]
    assert all(p.distribute_strategy is strategy for p in again)
    x, y = data(8)
    again[0].compile(optimizer="sgd", loss="mse")
    assert np.isfinite(again[0].train_on_batch(x, y)).all()
