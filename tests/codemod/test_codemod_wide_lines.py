"""codemod/wide_lines.py: an added line past the file's width is wrapped; the strategy line the
migration writes keeps to the file's own width, 92 columns at least (round 64)."""

import pytest

from codemod_fixtures import check_source_pair
from multi_gpu_codemod import transform_source

HEAD = "import tensorflow as tf\nfrom keras.utils import multi_gpu_model\n\nGPU_COUNT = 2\n\n\n"


def _script(body: str) -> str:
    return HEAD + "def main(x, y):\n    if True:\n" + body


def test_a_strategy_line_past_a_narrow_files_width_is_wrapped():
    # round 64, bk04: 100 columns two levels in, in a file whose widest line had 60
    before = _script(
        "        model = build()\n        model = multi_gpu_model(model, gpus=GPU_COUNT)\n"
        "        model.compile('adam', 'mse')\n        model.fit(x, y)\n"
    )
    after = (
        "import tensorflow as tf\n\nGPU_COUNT = 2\n\n\ndef main(x, y):\n    if True:\n"
        "        strategy = tf.distribute.MirroredStrategy(\n"
        '            tf.config.list_logical_devices("GPU")[:GPU_COUNT]\n'
        "        )\n"
        "        with strategy.scope():\n            model = build()\n            model.compile('adam', 'mse')\n"
        "        model.fit(x, y)\n"
    )
    check_source_pair(before, after)


@pytest.mark.parametrize("indent,widest,width", [
    ("", "", 92),  # at module level, 92 columns: read as one line
    ("        ", "note = '" + "x" * 100 + "'\n", 100),  # two levels in, the file's own lines wider still
])
def test_a_strategy_line_within_the_files_width_stays_one_line(indent, widest, width):
    body = (
        "model = build()\nmodel = multi_gpu_model(model, gpus=GPU_COUNT)\nmodel.compile('adam', 'mse')\n"
    )
    if indent:
        body = "def main():\n    if True:\n" + "".join(indent + line + "\n" for line in body.splitlines())
    before = HEAD + widest + body
    out = transform_source(before.encode(), "train.py").output.decode()
    line = next(line for line in out.splitlines() if "MirroredStrategy(" in line)
    one_line = 'strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:GPU_COUNT])'
    assert line == indent + one_line
    assert len(line) == width


def test_a_users_contrib_line_renamed_with_its_comment_keeps_its_layout():
    before = "import tensorflow as tf\nstrategy = tf.contrib.distribute.MirroredStrategy(num_gpus=4)  # four towers\n"
    out = transform_source(before.encode(), "train.py").output.decode()
    kept = 'strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:4])  # four towers\n'
    assert kept in out
