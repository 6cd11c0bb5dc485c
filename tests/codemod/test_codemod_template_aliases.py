"""template_aliases.py: the handle a script kept on the template before the wrap took its name goes."""

import pytest

from codemod_fixtures import check_source_pair
from multi_gpu_codemod import transform_source

STRATEGY = 'strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:gpus])\n'


def test_the_handle_goes_and_its_reads_read_the_model():
    # keras-yolo3's shape (rounds 46 and 47: ae01, ae09)
    before = (
        "from keras.utils import multi_gpu_model\n\n\ndef train(gpus):\n"
        "    model = create_model()\n\n"
        "    # keep a handle on the single-device model, we save that one\n"
        "    template_model = model\n"
        "    if gpus >= 2:\n        model = multi_gpu_model(model, gpus=gpus)\n\n"
        "    model.compile('adam', 'mse')\n    model.fit(x, y)\n"
        "    template_model.save_weights('final.h5')\n"
    )
    after = (
        "import tensorflow as tf\n\n\ndef train(gpus):\n"
        "    if gpus >= 2:\n        strategy = tf.distribute.MirroredStrategy(\n"  # (past 92 columns: wrapped)
        '            tf.config.list_logical_devices("GPU")[:gpus]\n        )\n'
        "    else:\n        strategy = tf.distribute.get_strategy()\n"
        "    with strategy.scope():\n        model = create_model()\n\n"
        "        model.compile('adam', 'mse')\n\n    model.fit(x, y)\n"
        "    model.save_weights('final.h5')\n"
    )
    check_source_pair(before, after)


@pytest.mark.parametrize("later", [
    "    template_model = other\n",  # bound twice: not a plain handle
    "    model = rebuild()\n",  # the template's name bound again: the handle keeps the first model
])
def test_a_handle_that_may_name_another_model_stays(later):
    before = (
        "from keras.utils import multi_gpu_model\n\n\ndef train(gpus):\n"
        "    model = create_model()\n    template_model = model\n"
        "    model = multi_gpu_model(model, gpus=gpus)\n    model.compile('adam', 'mse')\n    model.fit(x, y)\n"
        + later + "    template_model.save_weights('final.h5')\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert "template_model = model\n" in out and "    template_model.save_weights('final.h5')\n" in out


def test_a_module_level_handle_another_file_may_import_stays():
    before = (
        "from keras.utils import multi_gpu_model\n\nmodel = create_model()\ntemplate_model = model\n"
        "model = multi_gpu_model(model, gpus=2)\nmodel.compile('adam', 'mse')\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert "template_model = model\n" in out
    script = before + "model.fit(x, y)\ntemplate_model.save('m.h5')\n"  # trains at module level: a script
    out = transform_source(script.encode(), "t.py").output.decode()
    assert "template_model" not in out and out.endswith("model.fit(x, y)\nmodel.save('m.h5')\n")


def test_a_handle_with_a_trailing_comment_goes_too_but_not_one_that_is_deleted():
    head = "from keras.utils import multi_gpu_model\n\n\ndef train(gpus):\n    model = create_model()\n"
    tail = ("    model = multi_gpu_model(model, gpus=gpus)\n    model.compile('adam', 'mse')\n    model.fit(x, y)\n"
            "    template.save('final.h5')\n")
    out = transform_source((head + "    template = model  # for saving\n" + tail).encode(), "t.py").output.decode()
    assert "template" not in out and "    model.save('final.h5')\n" in out
    deleted = head + "    template = model\n" + tail + "    del template\n"
    out = transform_source(deleted.encode(), "t.py").output.decode()
    assert "    template = model\n" in out and "    del template\n" in out
