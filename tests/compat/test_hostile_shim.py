"""Hostile and careless use of the shim: only the `ModelMGPU` recipe is adopted, absurd `gpus`
values stay cheap, concurrent wrapping shares one strategy, and environment variables that
cannot take effect say so."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import compat
from compat import _devices, _gpus
from compat_helpers import N_REPLICAS, data, mlp


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
