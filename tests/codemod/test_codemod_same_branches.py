"""codemod/same_branches.py: a kept `if`/`try` whose branches read the same after the rewrite is
written once; before/after pinned byte for byte, and the cases that must stay as they are."""

import libcst as cst
import pytest

from codemod_fixtures import check_source_pair
from multi_gpu_codemod import transform_source
from multi_gpu_codemod.same_branches import already_holds, merged

HEAD = "from keras.utils import multi_gpu_model\n\n"
STRATEGY = 'strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:gpus])\n'

PAIRS = [
    pytest.param(
        HEAD + "gpus = 2\nmodel = build()\nif gpus > 1:\n    parallel = multi_gpu_model(model, gpus=gpus)\n"
        "    saver = ParallelSaver()\nelse:\n    parallel = model\n    saver = ModelCheckpoint('best.h5')\n"
        "parallel.compile('sgd', 'mse')\nparallel.fit(x, y, callbacks=[saver])\n",
        "import tensorflow as tf\n\ngpus = 2\n" + STRATEGY + "with strategy.scope():\n    model = build()\n"
        "    parallel = model\n    if gpus > 1:\n        saver = ParallelSaver()\n    else:\n"
        "        saver = ModelCheckpoint('best.h5')\n    parallel.compile('sgd', 'mse')\n"
        "parallel.fit(x, y, callbacks=[saver])\n",
        ["MGPU106"],
        id="shared-first-statement-goes-before",
    ),
    pytest.param(
        HEAD + "gpus = 2\nmodel = build()\nif gpus > 1:\n    print('several')\n"
        "    parallel = multi_gpu_model(model, gpus=gpus)\nelse:\n    parallel = model\n"
        "parallel.compile('sgd', 'mse')\n",
        "import tensorflow as tf\n\ngpus = 2\n" + STRATEGY + "with strategy.scope():\n    model = build()\n"
        "    if gpus > 1:\n        print('several')\n    parallel = model\n    parallel.compile('sgd', 'mse')\n",
        [],  # the branch for a plain model is gone: no branch left to choose, nothing to report
        id="shared-last-statement-goes-after-and-the-empty-else-goes",
    ),
    pytest.param(
        HEAD + "gpus = 2\nmodel = build()\nif gpus > 1:\n    parallel = multi_gpu_model(model, gpus=gpus)\n"
        "    parallel.compile('sgd', 'mse')\nelse:\n    parallel = model\n    parallel.compile('sgd', 'mse')\n",
        "import tensorflow as tf\n\ngpus = 2\n" + STRATEGY + "with strategy.scope():\n    model = build()\n"
        "    parallel = model\n    parallel.compile('sgd', 'mse')\n",
        [],  # nothing of the `if` is left: nothing to report
        id="identical-branches-are-written-once",
    ),
    pytest.param(
        HEAD + "gpus = 2\nmodel = build()\ntry:\n    model = reload()\n"
        "    parallel = multi_gpu_model(model, gpus=gpus)\nexcept IOError:\n    parallel = model\n"
        "parallel.compile('sgd', 'mse')\n",
        "import tensorflow as tf\n\ngpus = 2\n" + STRATEGY + "with strategy.scope():\n    model = build()\n"
        "    try:\n        model = reload()\n    except IOError:\n        pass\n    parallel = model\n"
        "    parallel.compile('sgd', 'mse')\n",
        [],
        id="try-alias-after-the-handler",
    ),
]


@pytest.mark.parametrize("before,after,codes", PAIRS)
def test_branches_that_read_the_same_are_written_once(before, after, codes):
    assert check_source_pair(before, after) == codes


@pytest.mark.parametrize("source", [
    # `elif` without `else`: when neither holds, the old script ran neither branch.
    "if n > 1:\n    p = m\nelif n == 1:\n    p = m\n",
    # The `if` branch would be left empty while the `else` is not: only a negated condition says that.
    "if n > 1:\n    p = m\nelse:\n    print('one')\n    p = m\n",
    # A condition that calls something runs before the shared first statement.
    "if ready():\n    p = m\n    a()\nelse:\n    p = m\n    b()\n",
    # A shared first statement that binds what the condition reads.
    "if n > 1:\n    n = 2\n    a()\nelse:\n    n = 2\n    b()\n",
    # A comment only one branch has would be lost.
    "if n > 1:\n    p = m  # several\nelse:\n    p = m\n",
    # Nothing shared.
    "if n > 1:\n    a()\nelse:\n    b()\n",
    # A `try` with `finally`, and a shared last statement that is not a plain alias.
    "try:\n    a()\n    p = m\nexcept E:\n    p = m\nfinally:\n    c()\n",
    "try:\n    a()\n    b()\nexcept E:\n    b()\n",
])
def test_what_must_stay_as_it_is(source):
    statement = cst.parse_module(source).body[0]
    assert isinstance(statement, (cst.If, cst.Try))
    assert merged(statement) is None


def test_an_if_the_rewrite_did_not_touch_is_left_alone():
    source = (HEAD + "model = build()\nparallel = multi_gpu_model(model, gpus=2)\nparallel.compile('sgd', 'mse')\n"
              "if verbose:\n    print('done')\n    log()\nelse:\n    print('done')\n    log()\n")
    out = transform_source(source.encode()).output.decode()
    assert out.endswith("if verbose:\n    print('done')\n    log()\nelse:\n    print('done')\n    log()\n")


@pytest.mark.parametrize("before,after", [
    pytest.param(
        HEAD + "gpus = 2\n\n\ndef train(path):\n    pmodel = model = build()\n    if (gpus > 1):\n"
        "        pmodel = multi_gpu_model(model, gpus=gpus)\n    pmodel.compile('adam', 'mse')\n",
        "import tensorflow as tf\n\ngpus = 2\n\n\ndef train(path):\n    " + STRATEGY + "    with strategy.scope():\n"
        "        pmodel = model = build()\n        pmodel.compile('adam', 'mse')\n",
        id="chained-assignment-already-holds-the-model",
    ),
])
def test_an_if_that_would_only_repeat_an_alias_goes(before, after):
    assert check_source_pair(before, after) == []


@pytest.mark.parametrize("earlier,holds", [
    ("p = m\n", True),
    ("p = m = build()\nfit(p)\nm.load_weights('w')\n", True),
    ("p = m\nm = other()\n", False),  # rebound between
    ("p = other\n", False),
    ("p = m\nwith scope():\n    p = q\n", False),  # a compound statement between: not followed
])
def test_already_holds_follows_the_block_back_to_the_binding(earlier, holds):
    statements = list(cst.parse_module(earlier).body)
    statement = cst.parse_statement("if n > 1:\n    p = m\n")
    assert isinstance(statement, cst.If)
    assert already_holds(statement, statements) is holds
