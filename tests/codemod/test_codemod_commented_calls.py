"""codemod/commented_calls.py: commented-out training on the removed wrapper reads the model, as
the live call does (round 64: bl13, bl17, bl18); other commented-out code on it goes."""

import libcst as cst
import pytest

from codemod_fixtures import check_source_pair
from multi_gpu_codemod.commented_calls import renamed

BEFORE = (
    "from keras.utils import multi_gpu_model\n\n"
    "{template} = build()\n"
    "parallel_model = multi_gpu_model({template}, gpus=2)\n"
    "parallel_model.compile('adam', 'mse')\n"
    "{comment}\n"
    "parallel_model.fit(x, y)\n"
)
AFTER = (
    "import tensorflow as tf\n\n"
    'strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:2])\n'
    "with strategy.scope():\n"
    "    model = build()\n"
    "    model.compile('adam', 'mse')\n"
    "{comment}"
    "model.fit(x, y)\n"
)


@pytest.mark.parametrize("template,comment,kept", [
    ("model", "# parallel_model.fit_generator(train, epochs=20)", "# model.fit_generator(train, epochs=20)\n"),
    ("model", "#parallel_model.evaluate(x_test, y_test)", "#model.evaluate(x_test, y_test)\n"),
    # the template's pair name gave way to the plain one: the comment reads that one too
    ("template", "# parallel_model.fit(x, y, epochs=3)", "# model.fit(x, y, epochs=3)\n"),
    # anything else on the wrapper said how the old pair worked: it goes
    ("model", "# parallel_model.save('p.h5')", ""),
    ("model", "# parallel_model.fit(x, y)  # slower: see notes", ""),
    # a commented-out block that also binds the wrapper goes whole, not renamed line by line
    ("model", "# parallel_model = model\n# parallel_model.fit(x, y)", ""),
])
def test_a_commented_out_call_on_the_wrapper(template, comment, kept):
    before = BEFORE.format(template=template, comment=comment)
    assert check_source_pair(before, AFTER.format(comment=kept)) == []


def test_a_wrapper_name_the_code_still_has_is_left_as_written():
    # `parallel = model` kept (another file may read `parallel`): the comment names a live name
    code = "parallel = model\n# parallel.fit(x, y)\nmodel.fit(x, y)\n"
    assert renamed(cst.parse_module(code), [("model", "parallel")]).code == code
    gone = code.replace("parallel = model\n", "")
    assert renamed(cst.parse_module(gone), [("model", "parallel")]).code == gone.replace("# parallel", "# model")
