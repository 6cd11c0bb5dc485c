"""codemod/wrapper_messages.py: a message next to the removed call that announced the wrapper
goes with it; one that says how many devices train stays."""

import libcst as cst
import pytest

from multi_gpu_codemod import transform_source
from multi_gpu_codemod.wrapper_messages import announces_wrapper, reworded


def _migrated(source: str) -> str:
    result = transform_source(source.encode(), "train.py")
    assert transform_source(result.output, "train.py").output == result.output
    return result.output.decode()


@pytest.mark.parametrize("line,stale", [
    ('print("converting model to parallel")', True),
    ('print("Creating multi GPU model")', True),
    ("logger.info('Wrapping the model for %d GPUs', G)", True),
    ('print(f"using multi_gpu_model on {G} cards")', True),
    ('print("Training using multiple GPUs..")', False),
    ('print("[INFO] training with {} GPUs...".format(G))', False),
    ('print(describe(model))', False),  # not a literal text
    ('print("converting model to parallel", report())', False),  # computes more than text
    ('logger("Creating multi-GPU model: N=%i" % num_GPUs)', True),  # a logging callable (`logger=print`)
    ('log("Training on %d GPUs" % n)', False),
])
def test_what_announces_the_wrapper(line, stale):
    assert announces_wrapper(cst.parse_statement(line + "\n")) is stale


def test_a_kept_branch_loses_its_announcement_and_then_the_if_goes():
    source = (
        "import keras\n\n\ndef train(x, y, gpu_cnt):\n    model = build()\n"
        "    if gpu_cnt > 1:\n        print('converting model to parallel')\n"
        "        parallel_model = keras.utils.multi_gpu_model(model, gpus=gpu_cnt)\n"
        "        parallel_model.compile(optimizer='adam', loss='mse')\n"
        "        parallel_model.fit(x, y)\n"
        "    else:\n        model.compile(optimizer='adam', loss='mse')\n        model.fit(x, y)\n"
    )
    out = _migrated(source)
    assert "converting" not in out and "if gpu_cnt > 1" not in out
    assert "        model.compile(optimizer='adam', loss='mse')\n    model.fit(x, y)\n" in out


def test_a_flag_guard_chooses_the_strategy_without_the_announcement():
    source = (
        "from keras.utils import multi_gpu_model\n\nbase = build()\nif args.multi_gpu:\n"
        "    print('Creating multi GPU model')\n    model = multi_gpu_model(base, gpus=2)\nelse:\n"
        "    model = base\nmodel.compile('adam', 'mse')\nmodel.fit(x, y)\n"
    )
    out = _migrated(source)
    assert "Creating" not in out and "strategy = tf.distribute.get_strategy()" in out


def test_a_message_about_the_devices_stays():
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\nif G > 1:\n"
        "    print('[INFO] training with {} GPUs...'.format(G))\n    model = multi_gpu_model(model, gpus=G)\n"
        "model.compile('adam', 'mse')\nmodel.fit(x, y)\n"
    )
    assert "print('[INFO] training with {} GPUs...'.format(G))" in _migrated(source)


def test_a_logging_callable_inside_the_guard_goes_and_the_guard_chooses_the_strategy():
    source = (
        "from keras.utils import multi_gpu_model\n\n\ndef init(num_gpus, logger=print):\n    base = build()\n"
        "    if num_gpus > 1:\n        model = multi_gpu_model(base, gpus=num_gpus)\n"
        "        logger('Creating multi-GPU model: N=%i' % num_gpus)\n    else:\n        model = base\n"
        "    model.compile('adam', 'mse')\n    return model\n"
    )
    out = _migrated(source)
    assert "Creating" not in out and "strategy = tf.distribute.get_strategy()" in out
    assert "    if num_gpus > 1:\n        strategy = tf.distribute.MirroredStrategy(" in out


@pytest.mark.parametrize("line,expected", [
    ("log.info('Wrapping model with multi_gpu_model on %d GPUs', args.gpus)",
     "log.info('Training on %d GPUs', args.gpus)"),
    ('print("[INFO] creating multi-GPU model for %d GPUs..." % G)', 'print("[INFO] training on %d GPUs..." % G)'),
    # round 27, xa18: the helper named as the tool at the end goes, the count stays
    ('log.info("Training on %d GPUs with multi_gpu_model", n)', 'log.info("Training on %d GPUs", n)'),
    # round 26, wb14: the helper's name leading the message goes with it
    ("print('multi_gpu_model: replicating on %d GPUs' % NGPU)", "print('Training on %d GPUs' % NGPU)"),
    # round 32, na07: the helper first, then the count
    ('print("[kws] using multi_gpu_model with %d GPUs" % cfg["gpus"])', 'print("[kws] using %d GPUs" % cfg["gpus"])'),
    ("log.info('Using make_parallel across %d cards', n)", "log.info('Using %d cards', n)"),
    # round 58, ay09: the count given as a setting after the model
    ('print("Creating multi-GPU model: N=%i" % args.num_gpus)', 'print("Training on %i GPUs" % args.num_gpus)'),
    ("log.info('building parallel model (gpus=%d)', n)", "log.info('training on %d GPUs', n)"),
    ('print("converting model to parallel")', None),  # no count to keep: it goes
    ("log.info('Wrapping model with multi_gpu_model on %d GPUs, cpu_merge=%s', n, m)", None),
])
def test_an_announcement_carrying_the_gpu_count_says_the_count_instead(line, expected):
    out = reworded(cst.parse_statement(line + "\n"))
    assert (None if out is None else cst.Module([out]).code.strip()) == expected


def test_a_guards_announcement_with_the_count_is_reworded_in_the_strategy_choice():
    source = (
        "from keras.utils import multi_gpu_model\n\nbase = build()\nif G > 1:\n"
        "    log.info('Wrapping model with multi_gpu_model on %d GPUs', G)\n    model = multi_gpu_model(base, gpus=G)\n"
        "else:\n    model = base\nmodel.compile('adam', 'mse')\nmodel.fit(x, y)\n"
    )
    out = _migrated(source)
    assert "if G > 1:\n    log.info('Training on %d GPUs', G)\n    strategy = tf.distribute.MirroredStrategy(" in out


def test_a_count_used_through_the_helper_keeps_the_count_and_loses_the_helper():
    # round 32, na20: "Using %d GPUs via multi_gpu_model" went whole, leaving the branch silent
    from multi_gpu_codemod.wrapper_messages import reworded

    statement = cst.parse_statement('print("Using %d GPUs via multi_gpu_model" % gpus)\n')
    new = reworded(statement)
    assert new is not None and cst.Module([new]).code == 'print("Using %d GPUs" % gpus)\n'
    assert reworded(cst.parse_statement('log.info("[INFO] using {} GPUs with make_parallel".format(n))\n')) is None


def test_a_past_tense_announcement_keeps_the_count():
    # round 35, ha13: "[info] wrapped model for %d GPUs" went whole
    out = reworded(cst.parse_statement('print("[info] wrapped model for %d GPUs" % args.gpus)\n'))
    assert out is not None and cst.Module([out]).code == 'print("[info] training on %d GPUs" % args.gpus)\n'


@pytest.mark.parametrize("text,said", [
    # round 43, da08: the helper named with its module
    ('logger.info("Using %d GPUs via keras.utils.multi_gpu_model", n)\n', 'logger.info("Using %d GPUs", n)\n'),
    ('print("using tf.keras.utils.multi_gpu_model with %d gpus" % n)\n', 'print("using %d gpus" % n)\n'),
])
def test_the_helper_named_with_its_module_is_reworded_like_the_bare_name(text, said):
    out = reworded(cst.parse_statement(text))
    assert out is not None and cst.Module([out]).code == said


def test_an_announcement_in_the_try_that_said_which_path_ran_is_reworded():
    # round 43, da02: "using multi_gpu_model with %d gpus" under the call stayed, flagged (MGPU305)
    source = (
        "from keras.utils import multi_gpu_model\n\nbase = build()\ntry:\n"
        "    model = multi_gpu_model(base, gpus=N)\n    print('using multi_gpu_model with %d gpus' % N)\n"
        "except ValueError:\n    model = base\n    print('training on one device')\n"
        "model.compile('adam', 'mse')\nmodel.fit(x, y)\n"
    )
    out = _migrated(source)
    assert "multi_gpu_model" not in out
    assert "if strategy.num_replicas_in_sync > 1:\n    print('using %d gpus' % strategy.num_replicas_in_sync)\n" in out


def test_a_towers_message_after_the_compile_goes_with_the_call():
    # round 61, bf17: "towers built" printed after compiling the helper's model; there are no towers
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\nmodel = multi_gpu_model(model, 2)\n"
        "model.compile('adam', 'mse')\nprint('towers built')\nprint('compiled on', 2, 'GPUs')\nmodel.fit(x, y)\n"
    )
    out = _migrated(source)
    assert "towers built" not in out
    assert "    model.compile('adam', 'mse')\nprint('compiled on', 2, 'GPUs')\nmodel.fit(x, y)\n" in out
