"""codemod/settled_branches.py: an `if` left with the same branches is written once; under the
strategy's scope its device note goes above the strategy line, and the training it ended with and
the callbacks made before it go below the scope, which ends at the compile (round 63, bi11)."""

import pytest

from codemod_fixtures import check_source_pair
from multi_gpu_codemod import transform_source

HEAD = "import keras\nfrom keras.utils import multi_gpu_model\n\n\n"
BEFORE = HEAD + (
    "def train(build, x, y, gpus):\n"
    "    model = build()\n"
    "    stop = keras.callbacks.EarlyStopping(patience=3)\n"
    "\n"
    "    # NOTE\n"
    "    if gpus > 1:\n"
    "        parallel = multi_gpu_model(model, gpus=gpus)\n"
    "        parallel.compile(optimizer='adam', loss='mse')\n"
    "        history = parallel.fit(x, y, callbacks=[stop])\n"
    "    # LABEL\n"
    "    else:\n"
    "        model.compile(optimizer='adam', loss='mse')\n"
    "        history = model.fit(x, y, callbacks=[stop])\n"
    "\n"
    "    model.save('m.h5')\n"
    "    return history\n"
)
AFTER = (
    "import keras\nimport tensorflow as tf\n\n\n"
    "def train(build, x, y, gpus):\n"
    "{above}"
    "    strategy = tf.distribute.MirroredStrategy(\n"
    '        tf.config.list_logical_devices("GPU")[:max(gpus, 1)]\n'
    "    )\n"
    "    with strategy.scope():\n"
    "        model = build()\n"
    "{inside}"
    "        model.compile(optimizer='adam', loss='mse')\n"
    "\n"
    "    stop = keras.callbacks.EarlyStopping(patience=3)\n"
    "    history = model.fit(x, y, callbacks=[stop])\n"
    "\n"
    "    model.save('m.h5')\n"
    "    return history\n"
)


@pytest.mark.parametrize("note,label,above,inside", [
    # the note on the devices goes above the strategy line, which makes that choice now; the
    # label of the `else` goes with its branch
    ("# multi gpu acceleration", "# single gpu", "    # multi gpu acceleration\n", ""),
    (
        "# use several GPUs when we have them", "# fall back to the plain model",
        "    # use several GPUs when we have them\n", "",
    ),
    # a note on what the branch did stays with what it did
    ("# the real run", "# plain", "", "        # the real run\n"),
])
def test_an_if_written_once_under_the_scope_leaves_it_at_the_compile(note, label, above, inside):
    before = BEFORE.replace("# NOTE", note).replace("# LABEL", label)
    assert check_source_pair(before, AFTER.format(above=above, inside=inside)) == []


def test_a_callback_the_compile_reads_stays_under_the_scope():
    # `stop` named by the compile: moving it below the scope would read it before it exists
    before = BEFORE.replace("    # NOTE\n", "").replace("    # LABEL\n", "").replace(
        "compile(optimizer='adam', loss='mse')", "compile(optimizer='adam', loss='mse', metrics=[stop.monitor])"
    )
    out = transform_source(before.encode(), "train.py").output.decode()
    assert "    with strategy.scope():\n        model = build()\n        stop = keras" in out
    assert "\n    history = model.fit(x, y, callbacks=[stop])\n" in out  # (the training still goes below)


def test_an_if_whose_branches_still_differ_keeps_its_note_and_its_training():
    before = BEFORE.replace("# NOTE", "# multi gpu acceleration").replace("# LABEL", "# single gpu").replace(
        "history = model.fit(x, y, callbacks=[stop])", "history = model.fit(x, y, callbacks=[stop], verbose=2)"
    )
    out = transform_source(before.encode(), "train.py").output.decode()
    assert "    # multi gpu acceleration\n    if gpus > 1:\n        history = model.fit(" in out
