"""Every kind of template the original accepted: Sequential, Functional with custom layers,
subclassed (with and without get_config), BatchNormalization/Dropout, already-trained ones."""

from __future__ import annotations

import numpy as np
import pytest

import multi_gpu_compat as compat
from compat_helpers import data, mlp, weights_equal


def custom_layer_cls(K):
    class Scale(K.layers.Layer):
        def build(self, input_shape):
            self.scale = self.add_weight(name="scale", shape=(input_shape[-1],), initializer="ones")

        def call(self, inputs):
            return inputs * self.scale

    return Scale


def build(K, kind):
    x, _ = data(2)
    if kind == "sequential":
        return K.Sequential([K.Input((3,)), K.layers.Dense(4, activation="relu"), K.layers.Dense(2)],
                            name="seq_template")
    if kind == "functional_custom_layer":
        inp = K.Input((3,))
        out = K.layers.Dense(2)(custom_layer_cls(K)(name="scale")(K.layers.Dense(4)(inp)))
        return K.Model(inp, out, name="custom_template")
    if kind == "bn_dropout":
        return mlp(K, name="bn_dropout_template", bn=True, dropout=True)
    Scale = custom_layer_cls(K)

    class Sub(K.Model):
        def __init__(self, units=4, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.hidden = K.layers.Dense(units, activation="relu")
            self.scale = Scale()
            self.out = K.layers.Dense(2)

        def call(self, inputs):
            return self.out(self.scale(self.hidden(inputs)))

    if kind == "subclassed_with_config":
        class SubConfig(Sub):
            def get_config(self):
                return {"units": self.units, "name": self.name}

        model = SubConfig(name="sub_config_template")
    else:
        model = Sub(name="sub_template")
    model(x)  # build it
    return model


KINDS = ["sequential", "functional_custom_layer", "bn_dropout", "subclassed_with_config",
         "subclassed_without_config"]


# The fast lane keeps one Sequential and one subclassed kind; bn_dropout trains longest
# (BatchNormalization has fast tests in test_keras3_fixes.py), the others run with the slow tests.
_FAST_KINDS = ("sequential", "subclassed_with_config")


@pytest.mark.parametrize("kind", [k if k in _FAST_KINDS else pytest.param(k, marks=pytest.mark.slow) for k in KINDS])
def test_model_kind_trains_and_shares(keras_module, kind):
    template = build(keras_module, kind)
    x, y = data(8, seed=9)
    expected = template.predict(x, verbose=0)
    parallel = compat.multi_gpu_model(template, gpus=2)
    np.testing.assert_allclose(parallel.predict(x, verbose=0), expected, rtol=1e-5, atol=1e-6)
    assert parallel.layers[-2] is template
    assert parallel.get_layer(template.name) is template
    parallel.compile(optimizer="sgd", loss="mse")
    before = template.get_weights()
    parallel.fit(x, y, batch_size=4, epochs=1, verbose=0)
    assert not weights_equal(before, template.get_weights())
    assert all(np.isfinite(w).all() for w in template.get_weights())


def _optimizer_state(optimizer):
    variables = optimizer.variables  # a method on Keras 2's legacy optimizers
    return [np.asarray(v.numpy()).copy() for v in (variables() if callable(variables) else variables)]


def test_compiled_trained_template_keeps_optimizer_state(keras_module):
    K = keras_module
    template = mlp(K, name="pretrained_template")
    template.compile(optimizer=K.optimizers.SGD(0.01, momentum=0.9), loss="mse")
    x, y = data(8, seed=10)
    template.fit(x, y, batch_size=4, epochs=1, verbose=0)
    state = _optimizer_state(template.optimizer)
    iterations = int(template.optimizer.iterations.numpy())
    assert iterations == 2 and any(np.abs(s).sum() > 0 for s in state[1:])  # momentum built
    weights = template.get_weights()
    parallel = compat.multi_gpu_model(template, gpus=2)
    # Right after wrapping: weights, iterations and momentum slots unchanged.
    assert weights_equal(template.get_weights(), weights, rtol=0, atol=0)
    after = _optimizer_state(template.optimizer)
    assert len(after) == len(state)
    assert all(np.array_equal(a, b) for a, b in zip(after, state))
    assert int(template.optimizer.iterations.numpy()) == iterations
    # The template keeps training with the same optimizer: its slots are used, none added.
    template.fit(x, y, batch_size=4, epochs=1, verbose=0)
    assert int(template.optimizer.iterations.numpy()) == iterations + 2
    assert len(_optimizer_state(template.optimizer)) == len(state)
    assert not all(np.array_equal(a, b) for a, b in zip(_optimizer_state(template.optimizer)[1:], state[1:]))
    # And the parallel model, compiled as legacy scripts do, trains the same variables.
    parallel.compile(optimizer=K.optimizers.SGD(0.01), loss="mse")
    before = template.get_weights()
    parallel.fit(x, y, batch_size=4, epochs=1, verbose=0)
    assert not weights_equal(before, template.get_weights())
