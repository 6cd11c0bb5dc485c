"""codemod/fallbacks.py: before/after pairs and left-unchanged-but-reported cases."""

import ast

import pytest

from multi_gpu_codemod import transform_source
from codemod_fixtures import ROOT, check_pair, check_source_pair, check_unchanged, pairs, strategy_devices, unchanged


@pytest.mark.parametrize("before", pairs("fallbacks"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    check_pair(before)


@pytest.mark.parametrize("path", unchanged("fallbacks"), ids=lambda p: p.name)
def test_unchanged_but_reported(path):
    check_unchanged(path)


def test_kept_structure_keeps_user_statements_and_reports_the_fallback():
    before = ROOT / "fallbacks" / "kept_structure.before.py"
    codes = check_pair(before)
    after = before.with_name("kept_structure.after.py").read_text()
    assert 'logging.info("using %d GPUs", n_gpus)' in after
    assert 'print("parallel")  # keep me' in after
    # the `try` only said which path ran: the replica count says it now, nothing left to review
    assert "if strategy.num_replicas_in_sync > 1:" in after and "except ValueError:" not in after
    assert codes.count("MGPU106") == 0


def test_if_else_guard_keeps_both_prints():
    after = (ROOT / "fallbacks" / "if_else_guard.after.py").read_text()
    assert 'print("[INFO] training with {} GPUs...".format(G))' in after
    assert 'print("[INFO] training with 1 GPU...")' in after


def _plain_calls(source: bytes) -> list[str]:
    """Call statements on a plain function or `logging`/`logger` (print, notify...), unparsed: renames never
    touch them."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            func = node.value.func
            plain = isinstance(func, ast.Name) or (
                isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                and func.value.id in {"logging", "logger"}
            )
            if plain and "multi_gpu_model" not in ast.unparse(node):
                found.append(ast.unparse(node))
    return found


@pytest.mark.parametrize("before", sorted(ROOT.glob("*/*.before.py")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_user_statement_is_dropped(before):
    """Fallbacks (and every other rewrite) never drop a print/logging/other call statement."""
    after = before.with_name(before.name.replace(".before.py", ".after.py")).read_bytes()
    kept = _plain_calls(after)
    lost = [s for s in _plain_calls(before.read_bytes()) if s not in kept]
    assert not lost, f"statements dropped: {lost}"


def test_kept_structure_chooses_the_strategy_with_the_scripts_condition():
    out = (ROOT / "fallbacks" / "kept_guard_in_count.after.py").read_text()
    # G = 0 and G = 1 run on one device (TensorFlow's default strategy), as the old script did;
    # G = 2, on two GPUs; on a machine without GPUs, on TensorFlow's default device.
    assert [strategy_devices(out, 4, G=g) for g in (0, 1, 2)] == ["one device", "one device", ["/gpu:0", "/gpu:1"]]
    assert strategy_devices(out, 0, G=0) == "one device"
    # The condition is written once, in the script's own kept `if`: never copied, never negated.
    assert out.count("G <= 1") == 1 and "not (" not in out


@pytest.mark.parametrize("name,code", [("elif_two_sites.unchanged.py", "MGPU103"),
                                       ("elif_two_sites_with_code.unchanged.py", "MGPU116")])
def test_if_elif_sites_are_left_whole_and_each_reported(name, code):
    source = (ROOT / "fallbacks" / name).read_bytes()
    result = transform_source(source)
    assert result.output == source
    assert [f.code for f in result.findings] == [code, code]


# before -> after, and the findings the rewrite still reports.
REWRITES = [
    pytest.param(
        'from keras.utils import multi_gpu_model\n'
        'm = make()\n'
        'try:\n'
        '    p = multi_gpu_model(m, 2)\n'
        'except ValueError:\n'
        "    print('one')\n"
        "p.compile('a', 'b')\n",
        'import tensorflow as tf\n'
        '\n'
        'strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:2])\n'
        'if strategy.num_replicas_in_sync == 1:\n'
        "    print('one')\n"
        'with strategy.scope():\n'
        '    m = make()\n'
        "    m.compile('a', 'b')\n",
        [],  # the handler only said the model ran on one device: the replica count says it now
        id='a-handler-that-only-prints-becomes-a-replica-check',
    ),
    pytest.param(
        'from keras.utils import multi_gpu_model\n'
        'm = make()\n'
        'try:\n'
        '  m = multi_gpu_model(m, gpus=2)\n'
        'except Exception as e:\n'
        "  print('multi gpu failed (%s), using one device' % e)\n"
        "m.compile('a', 'b')\n",
        'import tensorflow as tf\n'
        '\n'
        'strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:2])\n'
        'with strategy.scope():\n'
        '  m = make()\n'
        "  m.compile('a', 'b')\n",
        [],  # the message was about the call's error, which goes with the call
        id='a-message-about-the-error-goes-with-the-call',
    ),
    pytest.param(
        'from keras.utils import multi_gpu_model\n'
        'net = make()\n'
        'try:\n'
        '    net_gpu = multi_gpu_model(net, gpus=n_gpus)\n'
        "    print('multi_gpu_model OK')\n"
        'except Exception as exc:  # fewer GPUs than requested, or none at all\n'
        "    print('falling back to single device:', exc)\n"
        '    net_gpu = net\n'
        "net_gpu.compile('a', 'b')\n",
        'import tensorflow as tf\n'
        '\n'
        'strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:n_gpus])\n'
        'with strategy.scope():\n'
        '    net = make()\n'
        "    net.compile('a', 'b')\n",
        # the body's print announced the wrapper (false without it), the handler's line said when the
        # one-device path ran: both go with the `try`, a plain fallback
        ['MGPU117'],
        id='an-announcing-print-and-the-except-lines-comment-go-with-a-fallback-try',
    ),
]


@pytest.mark.parametrize("before,after,findings", REWRITES)
def test_rewrite(before, after, findings):
    assert check_source_pair(before, after) == findings


def _kept_if_message(branch_extra: str) -> str:
    source = (
        "import keras\nfrom nets import build\n\n\ndef run(many):\n    net = build()\n    if many:\n"
        f"{branch_extra}        trainer = keras.utils.multi_gpu_model(net, gpus=2)\n    else:\n"
        "        print('one device')\n        trainer = net\n"
        "    trainer.compile('adam', 'mse')\n"
    ).encode()
    (finding,) = [f for f in transform_source(source).findings if f.code == "MGPU106"]
    return finding.message


def test_a_guard_that_only_prints_chooses_the_strategy_with_its_print():
    # the `if` only printed besides the call: its condition chooses the strategy, written once,
    # and the print goes with it; nothing is left to keep or remove, nothing to report
    source = (
        b"import keras\nfrom nets import build\n\n\ndef run(many):\n    net = build()\n    if many:\n"
        b"        print('several')\n        trainer = keras.utils.multi_gpu_model(net, gpus=2)\n    else:\n"
        b"        trainer = net\n    trainer.compile('adam', 'mse')\n"
    )
    result = transform_source(source)
    assert [f.code for f in result.findings] == []
    assert result.output.decode().endswith(
        "    if many:\n        print('several')\n"
        '        strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:2])\n'
        "    else:\n        strategy = tf.distribute.get_strategy()\n    with strategy.scope():\n"
        "        net = build()\n        net.compile('adam', 'mse')\n"
    )


@pytest.mark.parametrize("count,strategy_code", [
    ("G = 2", None),
    # the machine's own count: every GPU, and the messages say what the replica count says
    ("G = len(get_available_gpus())", 'strategy = tf.distribute.MirroredStrategy()\n'
     "if strategy.num_replicas_in_sync > 1:\n    print('{} GPUs'.format(G))\nelse:\n    print('one GPU')\n"),
])
def test_a_guard_with_the_call_in_its_else_takes_its_messages_into_the_strategy_choice(count, strategy_code):
    source = (
        f"from keras.utils import multi_gpu_model\n\n{count}\nmodel = build()\n\n"
        "if G <= 1:\n    print('one GPU')\n    parallel = model\nelse:\n    print('{} GPUs'.format(G))\n"
        "    parallel = multi_gpu_model(model, gpus=G)\n\nparallel.compile('adam', 'mse')\n"
    )
    result = transform_source(source.encode())
    assert [f.code for f in result.findings] == []
    out = result.output.decode()
    if strategy_code is None:  # the script's own condition, once, as it wrote it
        strategy_code = (
            "if G <= 1:\n    print('one GPU')\n    strategy = tf.distribute.get_strategy()\nelse:\n"
            "    print('{} GPUs'.format(G))\n"
            '    strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:G])\n'
        )
    # (the compile joins the build at the file's end: round 61, be07)
    assert out.endswith(strategy_code + "with strategy.scope():\n    model = build()\n"
                        "    model.compile('adam', 'mse')\n")
    assert transform_source(result.output).output == result.output


CHAIN = (
    "from keras.utils import multi_gpu_model\n\nG = args.gpus\nmodel = build()\n"
    "if G <= 0:\n    log.info('CPU')\n    parallel = model\nelif G == 1:\n    parallel = model\n"
    "else:\n    log.info('%d GPUs', G)\n    parallel = multi_gpu_model(model, gpus=G)\n"
    "parallel.compile('adam', 'mse')\n"
)


def test_an_if_elif_else_that_picked_the_model_chooses_the_strategy_with_each_condition_once():
    result = transform_source(CHAIN.encode())
    assert [f.code for f in result.findings] == []
    assert result.output.decode() == (
        "import tensorflow as tf\n\nG = args.gpus\n"
        "if G <= 0:\n    log.info('CPU')\n    strategy = tf.distribute.get_strategy()\n"
        "elif G == 1:\n    strategy = tf.distribute.get_strategy()\n"
        "else:\n    log.info('%d GPUs', G)\n"
        '    strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:G])\n'
        "with strategy.scope():\n    model = build()\n    model.compile('adam', 'mse')\n"
    )
    assert transform_source(result.output).output == result.output


@pytest.mark.parametrize("change", [
    ("elif G == 1:\n    parallel = model\n", "elif G == 1:\n    parallel = model\n    batch = 32\n"),  # does more
    ("else:\n", "elif G > 1:\n"),  # no `else`: some path leaves `parallel` unbound
    ("if G <= 0:", "if model.count_params() < 0:"),  # a condition reading the model: it ran after it
    ("if G <= 0:\n    log.info('CPU')\n", "if model.count_params() < 0:\n"),  # so, without messages
])
def test_a_chain_that_does_more_than_pick_the_model_is_not_collapsed(change):
    result = transform_source(CHAIN.replace(*change).encode())
    assert "strategy = tf.distribute.get_strategy()\nelif" not in result.output.decode()


def test_a_print_reading_what_the_scope_builds_keeps_its_if():
    # `print(net.count_params())` would run before `net` exists in the strategy choice: the `if` stays
    source = (
        b"import keras\nfrom nets import build\n\n\ndef run(many):\n    net = build()\n    if many:\n"
        b"        print(net.count_params())\n        trainer = keras.utils.multi_gpu_model(net, gpus=2)\n"
        b"    else:\n        trainer = net\n    trainer.compile('adam', 'mse')\n"
    )
    output = transform_source(source).output.decode()
    assert "        if many:\n            print(net.count_params())\n" in output


def test_kept_if_gives_its_reason():
    message = _kept_if_message("        notify('building the multi GPU copy')\n")
    assert message == (
        "kept this `if` around `multi_gpu_model`: it is not a plain fallback: its branch with the call also runs"
        " `notify('building the multi GPU copy')` (line 8), left as it was. After migration `net` is the model in"
        " every branch: if that code was written for the old wrapper (a checkpoint of the parallel model), keep the"
        " code of the `else`/`elif` branch (line 10) and remove the `if`; if it is still wanted with the strategy"
        " (scaling the batch size or learning rate by the GPU count is), leave the `if` as it is."
    )


def test_kept_if_never_quotes_a_call_cut_in_half():
    message = _kept_if_message("        log_settings(gpus=2,\n                     copies=True)\n")
    # a call cut in half is named by its line, never quoted
    assert "its branch with the call also runs the statement on line 8, left as it was" in message


def test_kept_try_says_its_except_branch_no_longer_catches_the_calls_error():
    source = (
        b"import sys\nfrom keras.utils import multi_gpu_model\nfrom nets import build\n\nnet = build()\ntry:\n"
        b"    trainer = multi_gpu_model(net, gpus=2)\nexcept ValueError as err:\n    print('needs 2 GPUs', err)\n"
        b"    sys.exit(1)\ntrainer.compile('adam', 'mse')\n"
    )
    (finding,) = [f for f in transform_source(source).findings if f.code == "MGPU106"]
    assert "its `except` branch (line 8) handled `ValueError`" in finding.message
    assert "Keep the `try` body and remove the `except` branch" in finding.message
    assert "keep the code of" not in finding.message  # never: keep the branch that exits


def test_a_handler_whose_commented_message_reports_the_calls_error_collapses_keeping_the_comment():
    # the message about the call's error goes with the call; the comment above it is kept, above the
    # strategy line, never dropped and never a reason to keep a `try` that can no longer catch anything
    source = (
        b"import tensorflow as tf\nfrom keras.utils import multi_gpu_model\nfrom nets import build\n\n\n"
        b"def train():\n    net = build()\n    try:\n        net_gpu = multi_gpu_model(net, gpus=2)\n"
        b"    except ValueError as err:\n        # fewer GPUs than asked: use what there is\n"
        b"        print('multi_gpu_model failed (%s), single model' % err)\n        net_gpu = net\n"
        b"    net_gpu.compile('adam', 'mse')\n"
    )
    result = transform_source(source)
    assert [f.code for f in result.findings] == []
    assert result.output.decode().endswith(
        "def train():\n    # fewer GPUs than asked: use what there is\n"
        "    strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices(\"GPU\")[:2])\n"
        "    with strategy.scope():\n        net = build()\n        net.compile('adam', 'mse')\n"
    )


def test_an_if_whose_call_branch_held_only_the_local_import_is_not_reported():
    source = (
        b"from nets import build\n\n\ndef train(gpus=2):\n    net = build()\n    if gpus >= 2:\n"
        b"        from keras.utils import multi_gpu_model\n        fit_me = multi_gpu_model(net, gpus=gpus)\n"
        b"    else:\n        print('one device')\n        fit_me = net\n    fit_me.compile('adam', 'mse')\n"
    )
    result = transform_source(source)
    assert result.changed and "MGPU106" not in [f.code for f in result.findings]


def test_a_kept_if_that_only_prints_besides_what_both_branches_do_is_not_reported():
    # both branches compile and fit (the parallel model's lines aligned differently): those are
    # written once after the `if`, which is left printing only; nothing to decide, no MGPU106,
    # and the blank line between the compile and the fit stays
    source = (
        b"import keras\n\n\ndef train(gpus):\n    model = build()\n    if gpus > 1:\n        print('parallel')\n"
        b"        parallel_model = keras.utils.multi_gpu_model(model, gpus=gpus)\n"
        b"        parallel_model.compile(optimizer='adam',\n                               loss='mse')\n\n"
        b"        return parallel_model.fit(x, y)\n    else:\n"
        b"        model.compile(optimizer='adam',\n                      loss='mse')\n\n"
        b"        return model.fit(x, y)\n"
    )
    result = transform_source(source)
    assert [f.code for f in result.findings] == []
    assert result.output.decode().endswith(
        "    if gpus > 1:\n        print('parallel')\n    with strategy.scope():\n        model = build()\n"
        "        model.compile(optimizer='adam',\n                      loss='mse')\n\n        return model.fit(x, y)\n"
    )


@pytest.mark.parametrize("extra,reported", [
    ("    lr = base_lr * n_gpus\n    batch_size *= n_gpus\n", False),  # still wanted with the strategy
    ("    saver = ParallelSaver(parallel)\n", True),  # written for the old wrapper, or not: the user decides
])
def test_a_kept_if_that_only_scales_by_the_gpu_count_is_not_reported(extra, reported):
    source = (
        "from keras.utils import multi_gpu_model\n\nn_gpus = 2\nmodel = build()\n"
        f"if n_gpus > 1:\n    parallel = multi_gpu_model(model, gpus=n_gpus)\n{extra}"
        "    parallel.compile(SGD(lr), 'mse')\nelse:\n    parallel = model\n    lr = base_lr\n"
        "    parallel.compile(SGD(lr), 'mse')\n"
    )
    result = transform_source(source.encode())
    assert result.changed
    assert ("MGPU106" in [f.code for f in result.findings]) is reported


def test_the_else_of_an_elif_chain_chooses_the_default_strategy_with_the_scripts_conditions():
    source = (
        "import tensorflow as tf\nfrom keras.utils import multi_gpu_model\n\nG = int(input())\n"
        "if G == 0:\n    print('cpu')\n    model = build()\n    parallel = model\n"
        "elif G == 1:\n    print('one')\n    model = build()\n    parallel = model\n"
        "else:\n    print('many')\n    model = build()\n    parallel = multi_gpu_model(model, gpus=G)\n"
        "parallel.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode()).output.decode()
    assert "if G == 0 or G == 1:\n    strategy = tf.distribute.get_strategy()\nelse:\n" in out
    assert "not (" not in out
    assert [strategy_devices(out, 4, G=g) for g in (0, 1, 2)] == ["one device", "one device", ["/gpu:0", "/gpu:1"]]


def test_the_comments_of_the_else_and_of_the_call_stay_in_their_branches():
    # round 42, ca20: pyimagesearch's `# otherwise, ...` above `else:` and `# make the model
    # parallel` above the call were stacked above the `if` once the strategy was chosen in it
    before = (
        "from keras.utils import multi_gpu_model\n\nG = int(input())\n\nmodel = build()\n\n"
        "# check to see if we are compiling using just a single GPU\nif G <= 1:\n"
        "    print('[INFO] training with 1 GPU...')\n# otherwise, we are compiling using multiple GPUs\nelse:\n"
        "    print('[INFO] training with {} GPUs...'.format(G))\n    # make the model parallel\n"
        "    model = multi_gpu_model(model, gpus=G)\n\nmodel.compile(loss='mse', optimizer='adam')\n"
        "model.fit(x, y)\n"
    )
    after = (
        "import tensorflow as tf\n\nG = int(input())\n\n"
        "# check to see if we are compiling using just a single GPU\nif G <= 1:\n"
        "    print('[INFO] training with 1 GPU...')\n    strategy = tf.distribute.get_strategy()\n"
        "# otherwise, we are compiling using multiple GPUs\nelse:\n"
        "    print('[INFO] training with {} GPUs...'.format(G))\n    # make the model parallel\n"
        '    strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:G])\n'
        "with strategy.scope():\n    model = build()\n    model.compile(loss='mse', optimizer='adam')\n\n"
        "model.fit(x, y)\n"
    )
    assert check_source_pair(before, after) == []


@pytest.mark.parametrize("gap", ["", "\n"])
def test_a_choice_written_with_blank_lines_is_set_apart_from_the_scope(gap):
    # round 56, au08, av04: pyimagesearch's airy `if G <= 1:` / blank / `# otherwise ...` / `else:`
    # had its scope's `with` right under it; a compact `if`/`else` keeps it there
    source = (
        "from keras.utils import multi_gpu_model\n\nG = int(input())\n\nif G <= 1:\n"
        "    print('[INFO] training with 1 GPU...')\n    model = build()\n" + gap + "else:\n"
        "    print('[INFO] training with {} GPUs...'.format(G))\n    model = build()\n"
        "    model = multi_gpu_model(model, gpus=G)\n\nmodel.compile(loss='mse', optimizer='adam')\nmodel.fit(x, y)\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    strategy = '    strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:G])\n'
    assert strategy + ("\n" if gap else "") + "with strategy.scope():\n    model = build()\n" in out, out


def test_a_comment_on_the_call_dropped_with_its_argument_does_not_come_back_in_the_branch():
    # the call's comment about `cpu_relocation=True` goes with the argument, in the branch too
    source = (
        "from keras.utils import multi_gpu_model\n\nN = int(input())\ntagger = build()\nif N > 1:\n"
        "    # replicate on every GPU, weights live on the CPU\n"
        "    model = multi_gpu_model(tagger, gpus=N, cpu_relocation=True)\n    print('Training on %d GPUs' % N)\n"
        "else:\n    model = tagger\n    print('Training on one device')\nmodel.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode()).output.decode()
    assert "if N > 1:\n    strategy = tf.distribute.MirroredStrategy(" in out
    assert "CPU" not in out


@pytest.mark.parametrize("later,kept", [
    ("logger.info('Training on %d GPU(s)', n_gpu)\n", False),  # said a few lines below already
    ("logger.info('Fitting %d rows', len(x))\n", True),
])
def test_an_announcement_reworded_into_a_message_the_code_says_anyway_goes(later, kept):
    # round 42, cb19: 'Wrapping model with multi_gpu_model for %d GPUs' became 'Training on %d
    # GPUs', right above the unchanged `logger.info('Training on %d GPU(s)', n_gpu)`
    source = (
        "import logging\nfrom keras.utils import multi_gpu_model\n\nlogger = logging.getLogger('p')\n"
        "n_gpu = 2\nnet = build()\nif n_gpu > 1:\n"
        "    logger.info('Wrapping model with multi_gpu_model for %d GPUs', n_gpu)\n"
        "    net = multi_gpu_model(net, gpus=n_gpu)\nnet.compile(optimizer='adam', loss='mse')\n"
        + later + "net.fit(x, y)\n"
    )
    out = transform_source(source.encode()).output.decode()
    assert ("logger.info('Training on %d GPUs', n_gpu)" in out) == kept
    assert "Wrapping" not in out and "if n_gpu > 1:\n" in out and "    strategy = tf.distribute.Mirrored" in out


def test_the_comment_on_the_handlers_fallback_goes_with_its_message():
    # round 43, da02: "# fewer than 2 GPUs visible: fall back to the plain model" (over the
    # handler's `model = base_model`) landed above the strategy line, describing nothing there
    source = (
        "from keras.utils import multi_gpu_model\n\nbase = build()\ntry:\n"
        "    model = multi_gpu_model(base, gpus=N)\n    print('using %d gpus' % N)\nexcept ValueError:\n"
        "    # fewer than 2 GPUs visible: fall back to the plain model\n    model = base\n"
        "    print('training on one device')\nmodel.compile('adam', 'mse')\nmodel.fit(x, y)\n"
    )
    out = transform_source(source.encode()).output.decode()
    assert ("else:\n    # fewer than 2 GPUs visible: fall back to the plain model\n"
            "    print('training on one device')\n") in out
    assert out.count("fewer than 2 GPUs") == 1
