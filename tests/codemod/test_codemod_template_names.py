"""codemod/template_names.py: the one model takes the plain name the parallel model had (`model`),
not the template's name for its half of the old pair (`serial`, `template_model`, `_model`); the
cases where renaming could change anything keep the template's name."""

import pytest

from codemod_fixtures import check_source_pair
from multi_gpu_codemod import transform_source

HEAD = "from keras.utils import multi_gpu_model\n\n"
STRATEGY = 'strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:2])\n'


@pytest.mark.parametrize("template", ["serial", "template_model", "_model", "single_gpu_model", "orig_model"])
def test_the_templates_pair_name_gives_way_to_the_plain_one(template):
    before = HEAD + (
        f"{template} = build()\nmodel = multi_gpu_model({template}, gpus=2)\n"
        "model.compile(optimizer='adam',\n              loss='mse')\n"
        f"model.fit(x, y)\n{template}.save_weights('w.h5',\n{' ' * (len(template) + 14)}overwrite=True)\n"
    )
    after = (
        "import tensorflow as tf\n\n" + STRATEGY + "with strategy.scope():\n    model = build()\n"
        "    model.compile(optimizer='adam',\n                  loss='mse')\n"
        "model.fit(x, y)\nmodel.save_weights('w.h5',\n                   overwrite=True)\n"
    )
    assert check_source_pair(before, after) == []


def test_comments_naming_the_template_as_an_identifier_follow():
    before = HEAD + (
        "def train():\n    serial_model = build()\n    net = multi_gpu_model(serial_model, gpus=2)\n"
        "    net.compile('adam', 'mse')\n    net.fit(x, y)\n"
        "    # score serial_model on held-out data; `serial_model` reads x_val\n"
        "    serial_model.evaluate(x_val, y_val)\n\n\nif __name__ == '__main__':\n    train()\n"
    )
    out = transform_source(before.encode(), "train.py").output.decode()
    assert "    # score net on held-out data; `net` reads x_val\n    net.evaluate(x_val, y_val)\n" in out
    assert "serial_model" not in out


def test_the_plain_name_a_function_binds_for_itself_does_not_stop_the_rename():
    """`def evaluate(model)` reads its own parameter: no read of `model` can reach the renamed one."""
    before = HEAD + (
        "def train():\n    serial = build()\n    model = multi_gpu_model(serial, gpus=2)\n"
        "    model.compile('adam', 'mse')\n    model.fit(x, y)\n    return serial\n\n\n"
        "def evaluate(model):\n    return model.evaluate(x, y)\n\n\ntrain()\n"
    )
    out = transform_source(before.encode(), "train.py").output.decode()
    assert "serial" not in out and "    return model\n" in out


def test_where_neither_name_is_plain_the_one_model_is_model():
    """`serial` / `gpu_model`, `template_model` / `train_model`: the noun both names share (round 25, va07)."""
    before = HEAD + (
        "serial = build()\ngpu_model = multi_gpu_model(serial, gpus=2)\ngpu_model.compile('adam', 'mse')\n"
        "gpu_model.fit(x, y)\n"
    )
    out = transform_source(before.encode(), "train.py").output.decode()
    assert "    model = build()\n    model.compile('adam', 'mse')\nmodel.fit(x, y)\n" in out
    nets = before.replace("serial", "serial_net")
    assert "    net = build()\n" in transform_source(nets.encode(), "train.py").output.decode()


def test_a_function_taking_a_parameter_of_the_templates_name_does_not_stop_the_rename():
    """Round 27, xa10: `class TemplateCheckpoint(Callback): def __init__(self, template, path)` binds its own."""
    before = HEAD + (
        "class Saver(Callback):\n    def __init__(self, template):\n        self.template = template\n\n\n"
        "template = build()\ngpu_model = multi_gpu_model(template, gpus=2)\ngpu_model.compile('adam', 'mse')\n"
        "gpu_model.fit(x, y, callbacks=[Saver(template)])\n"
    )
    out = transform_source(before.encode(), "train.py").output.decode()
    assert "def __init__(self, template):\n        self.template = template\n" in out
    assert "    model = build()\n    model.compile('adam', 'mse')\nmodel.fit(x, y, callbacks=[Saver(model)])\n" in out


def test_a_value_aligned_under_its_bracket_moves_with_the_renamed_name():
    before = HEAD + (
        "serial = Sequential([Dense(4, input_shape=(3,)),\n                     Dense(1)])\n"
        "gpu_model = multi_gpu_model(serial, gpus=2)\ngpu_model.compile('adam', 'mse')\ngpu_model.fit(x, y)\n"
    )
    out = transform_source(before.encode(), "train.py").output.decode()
    assert "    model = Sequential([Dense(4, input_shape=(3,)),\n                        Dense(1)])\n" in out


def test_a_builders_local_and_its_callers_name_under_main_are_renamed_together():
    """`template_model` bound in `build_models` and by its caller under `__main__` (importing the
    module binds neither): both become `model` (round 25, va07)."""
    before = HEAD + (
        "def build_models(n):\n    template_model = build()\n"
        "    train_model = multi_gpu_model(template_model, gpus=n)\n"
        "    train_model.compile('adam', 'mse')\n    return template_model, train_model\n\n\n"
        "if __name__ == '__main__':\n    template_model, train_model = build_models(2)\n"
        "    train_model.fit(x, y)\n    template_model.save('m.h5')\n"
    )
    out = transform_source(before.encode(), "train.py").output.decode()
    assert "template_model" not in out and "train_model" not in out
    assert "    return model\n" in out
    assert "    model = build_models(2)\n    model.fit(x, y)\n    model.save('m.h5')\n" in out
    # a module another file imports (it trains nothing) binding it at its top level: it stays
    imported = before.replace("if __name__ == '__main__':\n    ", "").replace("    train_model.fit(x, y)\n", "")
    imported = imported.replace("\n    template_model.save", "\ntemplate_model.save")
    assert "template_model.save('m.h5')" in transform_source(imported.encode(), "train.py").output.decode()


@pytest.mark.parametrize("source", [
    # the template's name is its own (a backbone, a plain name)
    "base_model = build()\nmodel = multi_gpu_model(base_model, gpus=2)\nmodel.compile('adam', 'mse')\n"
    "model.fit(x, y)\n",
    # the plain name is read elsewhere in the file where it could reach the renamed binding
    "def train():\n    serial = build()\n    model = multi_gpu_model(serial, gpus=2)\n"
    "    model.compile('adam', 'mse')\n    model.fit(x, y)\n\n\n"
    "def evaluate():\n    return model.evaluate(x, y)\n\n\ntrain()\n",
    # ... or bound in the template's own scope (a module-level `model` beside a local `serial` read by name)
    "serial = build()\nmodel = multi_gpu_model(serial, gpus=2)\nmodel.compile('adam', 'mse')\nmodel.fit(x, y)\n"
    "model = None\nserial.save('m.h5')\n",
    # a `global` of the template's name: another function reads the module's binding
    "def train():\n    global serial\n    serial = build()\n    model = multi_gpu_model(serial, gpus=2)\n"
    "    model.compile('adam', 'mse')\n    model.fit(x, y)\n\n\ntrain()\nserial.save('m.h5')\n",
])
def test_the_templates_name_stays_where_renaming_could_change_anything(source):
    out = transform_source((HEAD + source).encode(), "train.py").output.decode()
    name = "base_model" if "base_model" in source else "serial"
    assert f"{name}." in out or f"{name} = " in out
    assert "multi_gpu_model" not in out


def test_a_module_others_may_import_keeps_its_module_level_name():
    # no `__main__` guard and no training at module level: another file may import `serial`
    source = HEAD + "serial = build()\nmodel = multi_gpu_model(serial, gpus=2)\nmodel.compile('adam', 'mse')\n"
    out = transform_source(source.encode(), "models.py").output.decode()
    assert "    serial = build()\n    serial.compile('adam', 'mse')\n" in out
