"""codemod/announcement.py: a kept `try` that only said which path ran becomes an `if` on the
replica count; before/after pinned byte for byte, and the `try`s that stay (reported)."""

import pytest

from codemod_fixtures import check_source_pair
from multi_gpu_codemod import transform_source

HEAD = "from keras.utils import multi_gpu_model\n\nmodel = build()\n"
STRATEGY = 'strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:2])\n'
IF = "    if strategy.num_replicas_in_sync > 1:\n"
# a `try` that only announced: its `if` on the replica count right under the strategy line, above the scope
TOP_IF = "if strategy.num_replicas_in_sync > 1:\n"
SCOPE = "with strategy.scope():\n    model = build()\n"


@pytest.mark.parametrize("before,after", [
    pytest.param(
        HEAD + "try:\n    model = multi_gpu_model(model, gpus=2)\n    print('Training on several GPUs')\n"
        "except ValueError:\n    print('Training on one device')\nmodel.compile('adam', 'mse')\n",
        "import tensorflow as tf\n\n" + STRATEGY + TOP_IF + "    print('Training on several GPUs')\nelse:\n"
        "    print('Training on one device')\n" + SCOPE + "    model.compile('adam', 'mse')\n",
        id="print-in-both-branches",
    ),
    pytest.param(
        HEAD + "try:\n    model = multi_gpu_model(model, gpus=2)  # replicate\n    logging.info('two GPUs')\n"
        "except:\n    pass\nmodel.compile('adam', 'mse')\n",
        "import tensorflow as tf\n\n# replicate\n" + STRATEGY + TOP_IF + "    logging.info('two GPUs')\n" + SCOPE
        + "    model.compile('adam', 'mse')\n",
        id="bare-except-with-pass-has-no-else-and-the-calls-comment-goes-above-the-strategy",
    ),
    pytest.param(
        HEAD + "try:\n    model = multi_gpu_model(model, gpus=2)\n    print('params', model.count_params())\n"
        "except Exception:  # one GPU\n    print('single')\nmodel.compile('adam', 'mse')\n",
        "import tensorflow as tf\n\n" + STRATEGY + "with strategy.scope():\n    model = build()\n" + IF
        + "        print('params', model.count_params())\n    else:  # one GPU\n        print('single')\n"
        "    model.compile('adam', 'mse')\n",
        id="a-message-reading-the-model-that-keeps-its-name",
    ),
    pytest.param(
        HEAD + "try:\n    parallel = multi_gpu_model(model, gpus=2)\n    print('multi')\nexcept ValueError:\n"
        "    parallel = model\n    print('single')\nparallel.compile('adam', 'mse')\n",
        "import tensorflow as tf\n\n" + STRATEGY + TOP_IF + "    print('multi')\nelse:\n    print('single')\n"
        + SCOPE + "    model.compile('adam', 'mse')\n",
        id="the-handler-bound-the-template-too-so-every-read-becomes-the-template",
    ),
    pytest.param(
        HEAD + "try:\n    parallel = multi_gpu_model(model, gpus=2)\n    print('multi')\nexcept ValueError:\n"
        "    parallel = model\n    print('single')\nparallel.compile('adam', 'mse')\nparallel = other\n",
        "import tensorflow as tf\n\n" + STRATEGY + TOP_IF + "    print('multi')\nelse:\n    print('single')\n"
        + SCOPE + "    parallel = model\n    parallel.compile('adam', 'mse')\nparallel = other\n",
        id="bound-again-later-so-the-alias-stays-above",
    ),
    pytest.param(
        HEAD + "try:\n    parallel = multi_gpu_model(model, gpus=2)\nexcept Exception as e:\n"
        "    print('multi_gpu_model failed: %s' % e)\n    parallel = model\nelse:\n    print('on 2 GPUs')\n"
        "parallel.compile('adam', 'mse')\n",
        "import tensorflow as tf\n\n" + STRATEGY + TOP_IF + "    print('on 2 GPUs')\n" + SCOPE
        + "    model.compile('adam', 'mse')\n",
        id="an-else-that-only-prints-said-what-the-body-would-have",
    ),
])
def test_a_try_that_only_announced_becomes_an_if_on_the_replica_count(before, after):
    assert check_source_pair(before, after) == []


@pytest.mark.parametrize("source", [
    # IOError was never what the call raised: the handler handled something else
    HEAD + "try:\n    model = multi_gpu_model(model, gpus=2)\n    print('multi')\nexcept IOError:\n"
    "    print('single')\nmodel.compile('adam', 'mse')\n",
    # the body does more than announce
    HEAD + "try:\n    model = multi_gpu_model(model, gpus=2)\n    model.load_weights('w.h5')\nexcept ValueError:\n"
    "    print('single')\nmodel.compile('adam', 'mse')\n",
    # an `else` doing more than printing
    HEAD + "try:\n    model = multi_gpu_model(model, gpus=2)\n    print('multi')\nexcept ValueError:\n"
    "    print('single')\nelse:\n    model.load_weights('w.h5')\nmodel.compile('adam', 'mse')\n",
    # a `finally`
    HEAD + "try:\n    model = multi_gpu_model(model, gpus=2)\n    print('multi')\nexcept ValueError:\n"
    "    print('single')\nfinally:\n    print('done')\nmodel.compile('adam', 'mse')\n",
    # a message reading the name the rewrite renames away
    HEAD + "try:\n    parallel = multi_gpu_model(model, gpus=2)\n    print(parallel.name)\nexcept ValueError:\n"
    "    print('single')\nparallel.compile('adam', 'mse')\n",
    # the handler binds the error and does more with it than say it
    HEAD + "try:\n    model = multi_gpu_model(model, gpus=2)\n    print('multi')\nexcept ValueError as error:\n"
    "    errors.append(error)\nmodel.compile('adam', 'mse')\n",
])
def test_a_try_that_does_more_stays_and_is_reported(source):
    result = transform_source(source.encode())
    assert "    try:\n" in result.output.decode()
    assert "num_replicas_in_sync" not in result.output.decode()
    assert "MGPU106" in [f.code for f in result.findings]


def test_a_guard_holding_only_such_a_try_chooses_the_strategy_and_says_it_there():
    before = (
        HEAD + "if PARALLEL:\n    try:\n        model = multi_gpu_model(model)\n        print('several')\n"
        "    except:\n        print('one')\nmodel.compile('adam', 'mse')\n"
    )
    after = (
        "import tensorflow as tf\n\nif PARALLEL:\n    strategy = tf.distribute.MirroredStrategy()\n"
        "    if strategy.num_replicas_in_sync > 1:\n        print('several')\n    else:\n        print('one')\n"
        "else:\n    strategy = tf.distribute.get_strategy()\nwith strategy.scope():\n    model = build()\n"
        "    model.compile('adam', 'mse')\n"
    )
    assert check_source_pair(before, after) == []


@pytest.mark.parametrize("before,after", [
    pytest.param(
        HEAD + "try:\n    parallel = multi_gpu_model(model, gpus=2)\n    log.info('multi')\n"
        "except ValueError as e:\n    log.warning('failed (%s), one device', e)\n    parallel = model\n"
        "parallel.compile('adam', 'mse')\n",
        "import tensorflow as tf\n\n" + STRATEGY + TOP_IF + "    log.info('multi')\n" + SCOPE
        + "    model.compile('adam', 'mse')\n",
        id="the-message-about-the-error-goes-with-the-error",
    ),
    pytest.param(
        HEAD + "try:\n    parallel = multi_gpu_model(model, gpus=2)\nexcept Exception as e:\n"
        "    print('falling back:', e)\n    parallel = model\nparallel.compile('adam', 'mse')\n",
        "import tensorflow as tf\n\n" + STRATEGY + "with strategy.scope():\n    model = build()\n"
        "    model.compile('adam', 'mse')\n",
        id="nothing-but-the-alias-is-left-so-the-try-goes",
    ),
    pytest.param(
        HEAD + "try:\n    parallel = multi_gpu_model(model, gpus=2)\n    print('multi')\nexcept ValueError as err:\n"
        "    # multi_gpu_model raises ValueError with fewer GPUs\n    print('failed (%s), one device' % err)\n"
        "    parallel = model\nparallel.compile('adam', 'mse')\n",
        "import tensorflow as tf\n\n" + STRATEGY + TOP_IF + "    print('multi')\n" + SCOPE
        + "    model.compile('adam', 'mse')\n",
        id="a-comment-on-the-errors-message-about-the-error-goes-with-it",
    ),
    pytest.param(
        # round 61, bf15: the one-device message lost its `else:` with the error it printed
        HEAD + "try:\n    parallel = multi_gpu_model(model, gpus=2)\n    print('using 2 GPUs')\n"
        "except ValueError as err:\n    parallel = model\n    print('multi-GPU not available:', err)\n"
        "parallel.compile('adam', 'mse')\n",
        "import tensorflow as tf\n\n" + STRATEGY + TOP_IF + "    print('using 2 GPUs')\nelse:\n"
        "    print('multi-GPU not available')\n" + SCOPE + "    model.compile('adam', 'mse')\n",
        id="a-print-of-text-then-the-error-keeps-its-text",
    ),
    pytest.param(
        HEAD + "try:\n    parallel = multi_gpu_model(model, gpus=2)\n    log.info('multi')\n"
        "except ValueError as e:\n    log.warning('staying on one device (%s).', e)\n    parallel = model\n"
        "parallel.compile('adam', 'mse')\n",
        "import tensorflow as tf\n\n" + STRATEGY + TOP_IF + "    log.info('multi')\nelse:\n"
        "    log.warning('staying on one device')\n" + SCOPE + "    model.compile('adam', 'mse')\n",
        id="a-log-whose-format-ends-on-the-error-keeps-the-text-before-it",
    ),
])
def test_a_handler_naming_the_error_loses_only_what_it_said_about_it(before, after):
    assert check_source_pair(before, after) == []


def test_a_guard_whose_else_says_what_the_handler_said_says_it_once_by_the_replica_count():
    source = (
        "from keras.utils import multi_gpu_model\n\n\ndef build(multi):\n    net = make()\n"
        "    if multi:\n        try:\n            model = multi_gpu_model(net)\n            print('several')\n"
        "        except ValueError as e:\n            model = net\n            print(e)\n            print('one')\n"
        "    else:\n        model = net\n        print('one')\n    model.compile('adam', 'mse')\n    return model\n"
    )
    out = transform_source(source.encode()).output.decode()
    assert out.endswith(
        "    if multi:\n        strategy = tf.distribute.MirroredStrategy()\n    else:\n"
        "        strategy = tf.distribute.get_strategy()\n"
        "    if strategy.num_replicas_in_sync > 1:\n        print('several')\n    else:\n        print('one')\n"
        "    with strategy.scope():\n        net = make()\n        net.compile('adam', 'mse')\n    return net\n"
    )



def test_a_handler_message_with_a_comment_about_something_else_keeps_the_try():
    source = (
        HEAD + "try:\n    parallel = multi_gpu_model(model, gpus=2)\n    print('multi')\nexcept ValueError as err:\n"
        "    # tell the on-call engineer\n    print('one device: %s' % err)\n    parallel = model\n"
        "parallel.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode()).output.decode()
    assert "# tell the on-call engineer" in out and "num_replicas_in_sync" not in out


def test_a_try_in_a_later_cell_than_the_build_keeps_its_if_in_that_cell():
    # moved above the scope, the messages would leave their cell empty (and its stored output false)
    before = (
        "# %%\nfrom keras.utils import multi_gpu_model\n\n# %%\nmodel = build()\n\n# %%\ntry:\n"
        "    model = multi_gpu_model(model, gpus=2)\n    print('several')\nexcept ValueError:\n"
        "    print('one')\n\n# %%\nmodel.compile('adam', 'mse')\n"
    )
    out = transform_source(before.encode(), "train.py").output.decode()
    assert "# %%\nif strategy.num_replicas_in_sync > 1:\n    print('several')\nelse:\n    print('one')\n" in out
    assert out.index("with strategy.scope():\n    model = build()") < out.index("print('several')")


def test_a_try_in_the_else_of_a_kept_if_keeps_its_if_in_that_branch():
    """Round 59, bb06: above the scope, the `try`'s one-device message would print on the `if`'s
    other path too (`--gpus 1`), which it never did."""
    before = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\nif args.gpus <= 1:\n"
        "    print('Training on one device')\nelse:\n    try:\n"
        "        model = multi_gpu_model(model, gpus=args.gpus)\n        print('Training on several GPUs')\n"
        "    except ValueError:\n        print('Could not build the multi-GPU model, falling back')\n"
        "model.compile('adam', 'mse')\n"
    )
    out = transform_source(before.encode(), "train.py").output.decode()
    # (the `else:` holding only that `if` reads `elif`; the `if` of prints then goes above the scope)
    assert out.endswith(
        "if args.gpus <= 1:\n    print('Training on one device')\n"
        "elif strategy.num_replicas_in_sync > 1:\n    print('Training on several GPUs')\n"
        "else:\n    print('Could not replicate the model, falling back')\n"
        "with strategy.scope():\n    model = build()\n    model.compile('adam', 'mse')\n"
    ), out
    assert out.count("print(") == 3


def test_a_comment_on_the_else_keeps_the_nested_if():
    before = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\nif args.gpus <= 1:\n"
        "    print('Training on one device')\nelse:  # several GPUs asked for\n    try:\n"
        "        model = multi_gpu_model(model, gpus=args.gpus)\n        print('Training on several GPUs')\n"
        "    except ValueError:\n        print('falling back')\nmodel.compile('adam', 'mse')\n"
    )
    out = transform_source(before.encode(), "train.py").output.decode()
    assert "else:  # several GPUs asked for\n" in out and "elif" not in out, out


def test_a_guard_whose_only_message_named_the_helper_leaves_no_empty_if():
    # round 41, fb05/fb14/fb15: `print('using multi_gpu_model with', n, 'GPUs')` went, and an
    # `if strategy.num_replicas_in_sync == 1: pass` was left to say nothing
    from multi_gpu_codemod import transform_source

    source = (
        "import tensorflow as tf\nfrom tensorflow.keras.utils import multi_gpu_model\n\n"
        "physical = tf.config.list_physical_devices('GPU')\ncnn = build()\nif len(physical) > 1:\n"
        "    cnn_train = multi_gpu_model(cnn, gpus=len(physical))\n"
        "    print('using multi_gpu_model with', len(physical), 'GPUs')\nelse:\n    cnn_train = cnn\n"
        "cnn_train.compile('adam', 'mse')\ncnn_train.fit(x, y)\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert "pass" not in out and "num_replicas_in_sync" not in out
    assert "strategy = tf.distribute.MirroredStrategy()\nwith strategy.scope():\n" in out
