"""codemod/same_branches.py: a kept `if`/`try` whose branches read the same after the rewrite is
written once; before/after pinned byte for byte, and the cases that must stay as they are."""

import libcst as cst
import pytest

from codemod_fixtures import check_source_pair
from multi_gpu_codemod import transform_source
from multi_gpu_codemod._tree import Tree
from multi_gpu_codemod.disjoint import disjoint
from multi_gpu_codemod.fallthrough import stops_when_no_branch_runs
from multi_gpu_codemod.same_branches import already_holds, merged

HEAD = "from keras.utils import multi_gpu_model\n\n"
STRATEGY = 'strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:gpus])\n'

PAIRS = [
    pytest.param(
        HEAD + "gpus = 2\nmodel = build()\nif gpus > 1:\n    print('parallel')\n"
        "    parallel = multi_gpu_model(model, gpus=gpus)\n    parallel.compile(optimizer='sgd',\n"
        "                     loss='mse')\n    parallel.fit(x, y)\nelse:\n"
        "    model.compile(optimizer='sgd', loss='mse')\n    model.fit(x, y)\n",
        "import tensorflow as tf\n\ngpus = 2\n" + STRATEGY + "if gpus > 1:\n    print('parallel')\n"
        "with strategy.scope():\n    model = build()\n    model.compile(optimizer='sgd',\n"
        "                  loss='mse')\nmodel.fit(x, y)\n",
        [],
        id="a-compile-laid-out-differently-in-each-branch-is-the-same-compile",
    ),
    pytest.param(
        HEAD + "gpus = 2\nmodel = build()\nif gpus > 1:\n    parallel = multi_gpu_model(model, gpus=gpus)\n"
        "    saver = ParallelSaver()\nelse:\n    parallel = model\n    saver = ModelCheckpoint('best.h5')\n"
        "parallel.compile('sgd', 'mse')\nparallel.fit(x, y, callbacks=[saver])\n",
        "import tensorflow as tf\n\ngpus = 2\n" + STRATEGY + "with strategy.scope():\n    model = build()\n"
        "    if gpus > 1:\n        saver = ParallelSaver()\n    else:\n"
        "        saver = ModelCheckpoint('best.h5')\n    model.compile('sgd', 'mse')\n"
        "model.fit(x, y, callbacks=[saver])\n",
        ["MGPU106"],  # the checkpoint branch is still the script's to decide
        id="the-other-branchs-alias-goes-with-the-call-and-reads-are-renamed",
    ),
    pytest.param(
        HEAD + "gpus = 2\nmodel = build()\nif gpus > 1:\n    notify('several')\n"
        "    parallel = multi_gpu_model(model, gpus=gpus)\nelse:\n    parallel = model\n"
        "parallel.compile('sgd', 'mse')\n",
        "import tensorflow as tf\n\ngpus = 2\n" + STRATEGY + "with strategy.scope():\n    model = build()\n"
        "    if gpus > 1:\n        notify('several')\n    model.compile('sgd', 'mse')\n",
        [],  # the branch for a plain model goes with its alias: no branch left to choose, nothing to report
        id="shared-last-statement-goes-after-and-the-empty-else-goes",
    ),
    pytest.param(
        HEAD + "gpus = 2\nmodel = build()\nif gpus > 1:\n    parallel = multi_gpu_model(model, gpus=gpus)\n"
        "    parallel.compile('sgd', 'mse')\nelse:\n    parallel = model\n    parallel.compile('sgd', 'mse')\n",
        "import tensorflow as tf\n\ngpus = 2\n" + STRATEGY + "with strategy.scope():\n    model = build()\n"
        "    model.compile('sgd', 'mse')\n",
        [],  # nothing of the `if` is left, the alias neither: nothing to report
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
    pytest.param(
        HEAD + "gpus = 2\nmodel = build()\nif gpus > 1:\n    trainer = multi_gpu_model(model, gpus=gpus)\n"
        "elif gpus == 1:\n    trainer = model\n    print('one GPU')\n\ntrainer.compile('sgd', 'mse')\n",
        "import tensorflow as tf\n\ngpus = 2\n" + STRATEGY + "if gpus == 1:\n    print('one GPU')\n"
        "with strategy.scope():\n    model = build()\n    trainer = model\n    trainer.compile('sgd', 'mse')\n",
        [],  # with no branch run, `trainer.compile` stopped on a NameError: the chain was every path
        id="elif-without-else-whose-no-branch-path-stops",
    ),
    pytest.param(
        HEAD + "def train(args):\n    net = build()\n    if args.gpus > 1:\n"
        "        trainer = multi_gpu_model(net, gpus=args.gpus)\n    elif args.gpus == 1:\n"
        "        trainer = net\n    trainer.compile('sgd', 'mse')\n    return trainer.fit(x, y)\n",
        "import tensorflow as tf\n\ndef train(args):\n    strategy = tf.distribute.MirroredStrategy(\n"
        '        tf.config.list_logical_devices("GPU")[:max(args.gpus, 1)]\n    )\n    with strategy.scope():\n'
        "        net = build()\n        trainer = net\n        trainer.compile('sgd', 'mse')\n"
        "    return trainer.fit(x, y)\n",
        [],  # in a function the no-branch path stopped on an UnboundLocalError
        id="elif-without-else-in-a-function",
    ),
    pytest.param(
        HEAD + "G = 2\nmodel = build()\nif G > 1:\n    print('several')\n    # the copy\n"
        "    parallel = multi_gpu_model(model, gpus=G)\n    notify('copied')\n"
        "if G <= 1:\n    model.compile('sgd', 'mse')\nelse:\n    parallel.compile('sgd', 'mse')\n",
        'import tensorflow as tf\n\nG = 2\n# the copy\nstrategy = tf.distribute.MirroredStrategy('
        'tf.config.list_logical_devices("GPU")[:G])\nwith strategy.scope():\n    model = build()\n'
        "    if G > 1:\n        print('several')\n        notify('copied')\n    model.compile('sgd', 'mse')\n",
        [],  # the second `if` only renamed: its branches read the same and are written once
        id="branches-the-rename-made-the-same-and-the-calls-comment-above-the-strategy",
    ),
    pytest.param(  # round 38, la10: the `if` had stayed under the scope, its fits with it
        HEAD + "def train(gpus):\n    model = build()\n\n    if gpus > 1:\n"
        "        parallel = multi_gpu_model(model, gpus=gpus)\n        parallel.compile('sgd', 'mse')\n"
        "        parallel.fit(x, y, callbacks=[a])\n        model.save('best.h5')\n    else:\n"
        "        model.compile('sgd', 'mse')\n        model.fit(x, y, callbacks=[a, b])\n",
        "import tensorflow as tf\n\ndef train(gpus):\n    strategy = tf.distribute.MirroredStrategy(\n"
        '        tf.config.list_logical_devices("GPU")[:max(gpus, 1)]\n    )\n'  # (past 92 columns: wrapped)
        "    with strategy.scope():\n"
        "        model = build()\n        model.compile('sgd', 'mse')\n\n    if gpus > 1:\n"
        "        model.fit(x, y, callbacks=[a])\n        model.save('best.h5')\n    else:\n"
        "        model.fit(x, y, callbacks=[a, b])\n",
        ["MGPU106"],
        id="a-kept-if-left-to-train-and-save-follows-the-scope",
    ),
]


@pytest.mark.parametrize("before,after,codes", PAIRS)
def test_branches_that_read_the_same_are_written_once(before, after, codes):
    assert check_source_pair(before, after) == codes


@pytest.mark.parametrize("source", [
    # `elif` without `else`: when neither holds, the old script ran neither branch (here nothing
    # says that path stopped: see the fallthrough cases below).
    "if n > 1:\n    p = m\nelif n == 1:\n    p = m\n",
    # An `if` left empty before an `elif` its condition does not exclude (`n == 2` is both).
    "if n > 1:\n    p = m\nelse:\n    p = m\n    a()\n",
    "if n > 1:\n    p = m\nelif n >= 2:\n    p = m\n    a()\nelse:\n    p = m\n",
    # The `if` branch would be left empty while the `else` is not: only a negated condition says that.
    "if n > 1:\n    p = m\nelse:\n    print('one')\n    p = m\n",
    # A condition that calls something runs before the shared first statement.
    "if ready():\n    p = m\n    a()\nelse:\n    p = m\n    b()\n",
    # A shared first statement that binds what the condition reads.
    "if n > 1:\n    n = 2\n    a()\nelse:\n    n = 2\n    b()\n",
    # ... an attribute path the condition reads, or one inside or around it
    "if self.n > 1:\n    self.n = 2\n    a()\nelse:\n    self.n = 2\n    b()\n",
    "if self.cfg.n > 1:\n    self.cfg = c\n    a()\nelse:\n    self.cfg = c\n    b()\n",
    "if ok(self):\n    self.p = m\n    a()\nelse:\n    self.p = m\n    b()\n",
    "if self:\n    self.p = m\n    a()\nelse:\n    self.p = m\n    b()\n",
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


@pytest.mark.parametrize("source", [
    # bound before the chain: with no branch run it still holds the model
    "trainer = None\nif gpus > 1:\n    trainer = multi_gpu_model(model, gpus=gpus)\nelif gpus == 1:\n"
    "    trainer = model\ntrainer.compile('sgd', 'mse')\n",
    # in a loop: bound by an earlier pass
    "for gpus in (1, 2):\n    if gpus > 1:\n        trainer = multi_gpu_model(model, gpus=gpus)\n"
    "    elif gpus == 1:\n        trainer = model\n    trainer.compile('sgd', 'mse')\n",
    # in a `try` that may catch the NameError
    "try:\n    if gpus > 1:\n        trainer = multi_gpu_model(model, gpus=gpus)\n    elif gpus == 1:\n"
    "        trainer = model\n    trainer.compile('sgd', 'mse')\nexcept Exception:\n    pass\n",
    # nothing reads it after the chain
    "if gpus > 1:\n    trainer = multi_gpu_model(model, gpus=gpus)\nelif gpus == 1:\n    trainer = model\n",
    # a statement between may rebind it
    "if gpus > 1:\n    trainer = multi_gpu_model(model, gpus=gpus)\nelif gpus == 1:\n    trainer = model\n"
    "trainer = pick()\ntrainer.compile('sgd', 'mse')\n",
    # a parameter of the function
    "def run(trainer, gpus):\n    if gpus > 1:\n        trainer = multi_gpu_model(model, gpus=gpus)\n"
    "    elif gpus == 1:\n        trainer = model\n    trainer.compile('sgd', 'mse')\n",
    # a builtin name: the module-level read would find it
    "if gpus > 1:\n    input = multi_gpu_model(model, gpus=gpus)\nelif gpus == 1:\n    input = model\n"
    "input.compile('sgd', 'mse')\n",
    # `global` somewhere: a function may have bound it
    "def f():\n    global trainer\n    trainer = model\n\nif gpus > 1:\n"
    "    trainer = multi_gpu_model(model, gpus=gpus)\nelif gpus == 1:\n    trainer = model\n"
    "trainer.compile('sgd', 'mse')\n",
])
def test_a_chain_without_else_is_every_path_only_when_the_other_path_stops(source):
    tree = Tree(cst.parse_module(source))
    chain = next(n for n in tree.all_nodes() if isinstance(n, cst.If))
    assert not stops_when_no_branch_runs(tree, chain)


def test_a_chain_without_else_read_right_after_is_every_path():
    source = ("model = build()\nif gpus > 1:\n    trainer = multi_gpu_model(model, gpus=gpus)\n"
              "elif gpus == 1:\n    trainer = model\nprint('ready')\nhistory = trainer.fit(x, y)\n")
    tree = Tree(cst.parse_module(source))
    chain = next(n for n in tree.all_nodes() if isinstance(n, cst.If))
    assert stops_when_no_branch_runs(tree, chain)


@pytest.mark.parametrize("first,second,excluded", [
    ("n > 1", "n == 1", True),
    ("(n >= 2)", "1 == n", True),
    ("n >= 2 and n % 2 == 0", "n == 1", True),
    ("n != 1", "n == 1", True),
    ("n > 1", "n <= 1", True),
    ("n > 1", "n < 2", False),  # 1.5
    ("n > 1", "n >= 1", False),
    ("n > 1", "m == 1", False),
    ("n > 1", "f(n) == 1", False),
    ("n > 1 or n < 0", "n == 1", False),
])
def test_conditions_that_exclude_each_other(first, second, excluded):
    assert disjoint(cst.parse_expression(first), cst.parse_expression(second)) is excluded


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


def test_compound_statements_are_the_same_only_as_written():
    # their tokens alone would not say which block `y()` is in
    from multi_gpu_codemod.same_branches import _same

    nested = cst.parse_statement("if a:\n    if b:\n        x()\n    y()\n")
    deeper = cst.parse_statement("if a:\n    if b:\n        x()\n        y()\n")
    assert not _same([nested, deeper])
    assert _same([cst.parse_statement("m.compile(a,\n          b)\n"), cst.parse_statement("m.compile(a, b)\n")])


def test_a_branch_building_the_template_itself_loses_its_alias_and_every_read_is_the_template():
    # `else: model = build(); parallel = model` runs instead of the call's branch, not after it: the
    # template it binds there is the one its alias names, so `parallel` reads `model` on every path
    before = HEAD + (
        "import tensorflow as tf\n\ngpus = 2\nif gpus > 1:\n    with tf.device('/cpu:0'):\n        model = build()\n"
        "    parallel = multi_gpu_model(model, gpus=gpus)\nelse:\n    model = build()\n    parallel = model\n\n"
        "parallel.compile('adam', 'mse')\nparallel.fit(x, y,\n             epochs=2)\n"
    )
    after = (
        "import tensorflow as tf\n\ngpus = 2\n" + STRATEGY + "with strategy.scope():\n    model = build()\n"
        "    model.compile('adam', 'mse')\n\nmodel.fit(x, y,\n          epochs=2)\n"
    )
    assert check_source_pair(before, after) == []


def test_a_branch_binding_the_template_again_after_its_alias_keeps_the_name():
    before = HEAD + (
        "gpus = 2\nif gpus > 1:\n    model = build()\n    parallel = multi_gpu_model(model, gpus=gpus)\nelse:\n"
        "    model = build()\n    parallel = model\n    model = other()\nparallel.compile('adam', 'mse')\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert "parallel.compile('adam', 'mse')" in out  # `model` is another model there: no rename


def test_a_comment_on_the_device_choice_above_a_guard_written_once_goes_above_the_strategy_line():
    before = HEAD + (
        "def train(gpus):\n    model = build()\n\n    # multi gpu acceleration\n    if gpus > 1:\n"
        "        parallel = multi_gpu_model(model, gpus=gpus)\n        parallel.compile('adam', 'mse')\n"
        "        parallel.fit(x, y)\n    else:\n        model.compile('adam', 'mse')\n        model.fit(x, y)\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert "    # multi gpu acceleration\n    strategy = tf.distribute.MirroredStrategy(" in out
    assert out.count("# multi gpu acceleration") == 1
    # a comment on what the branches did stays with it
    kept = transform_source(before.replace("# multi gpu acceleration", "# train it").encode(), "t.py").output.decode()
    assert "# train it\n" in kept and "# train it\n    strategy" not in kept


def test_a_kept_if_of_fits_keeps_its_comment_and_goes_below_the_scope():
    # round 29, zb11: both branches compiled the same and fit with their own batch size; the
    # compile is written once under the scope, the `if` of fits runs after it, under its comment
    source = (
        HEAD + "gpus = 2\nmodel = build()\n# multi gpu acceleration\nif gpus > 1:\n"
        "    parallel = multi_gpu_model(model, gpus=gpus)\n    parallel.compile('sgd', 'mse')\n"
        "    h = parallel.fit(x, y, batch_size=64)\nelse:\n    model.compile('sgd', 'mse')\n"
        "    h = model.fit(x, y, batch_size=32)\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert out.endswith(
        "with strategy.scope():\n    model = build()\n    model.compile('sgd', 'mse')\n# multi gpu acceleration\n"
        "if gpus > 1:\n    h = model.fit(x, y, batch_size=64)\nelse:\n    h = model.fit(x, y, batch_size=32)\n"
    )


def test_branches_the_same_once_a_stale_comment_went_are_written_once():
    # (round 49, ai16: the template pulled out of the wrapper to save it; migrated, both branches
    # save the model, and the comment on `layers[-2]` went with the lookup)
    before = HEAD + (
        "model = build()\nif G > 1:\n    model = multi_gpu_model(model, gpus=G)\n"
        "model.compile('adam', 'mse')\nmodel.fit(x, y)\n\n"
        "if G > 1:\n    model.layers[-2].save(PATH)   # the serial model sits at layers[-2]\n"
        "else:\n    model.save(PATH)\n"
    )
    after = (
        "import tensorflow as tf\n\nif G > 1:\n    " + STRATEGY.replace("gpus", "G")
        + "else:\n    strategy = tf.distribute.get_strategy()\n"
        "with strategy.scope():\n    model = build()\n    model.compile('adam', 'mse')\n"
        "model.fit(x, y)\n\nmodel.save(PATH)\n"
    )
    check_source_pair(before, after)


def test_an_if_whose_branches_read_the_same_before_the_migration_is_left_to_its_author():
    before = HEAD + (
        "model = build()\nparallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n"
        "if verbose:\n    log(x)  # the same\nelse:\n    log(x)  # the same\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert "if verbose:\n    log(x)  # the same\nelse:\n    log(x)  # the same\n" in out


def test_a_shared_attribute_alias_goes_before_a_condition_on_another_attribute():
    # round 54, aq13: `self.model = self.model_save` stayed in both branches of `if self.gpus > 1:`
    # (binding `self.model` was taken for binding `self`, which the condition reads)
    statement = cst.parse_module(
        "if self.gpus > 1:\n    self.model = self.model_save\n    print('many')\n"
        "else:\n    self.model = self.model_save\n    print('one')\n"
    ).body[0]
    assert isinstance(statement, cst.If)
    result = merged(statement)
    assert result is not None
    assert cst.Module(list(result)).code == (
        "self.model = self.model_save\nif self.gpus > 1:\n    print('many')\nelse:\n    print('one')\n"
    )


def test_a_binding_then_its_alias_reads_as_the_chained_assignment_of_the_other_branch():
    # round 62, bg10: `template = build(); model = template` (the call gone) beside
    # `template = model = build()` bound the same names to the same model
    statement = cst.parse_module(
        "if gpus > 1:\n    template = build()\n    model = template\nelse:\n    template = model = build()\n"
    ).body[0]
    result = merged(statement)
    assert result is not None and [cst.Module(body=[s]).code for s in result] == ["template = model = build()\n"]
    # not where the branches differ in anything else
    statement = cst.parse_module(
        "if gpus > 1:\n    template = build()\n    model = template\nelse:\n    template = model = build(1)\n"
    ).body[0]
    assert merged(statement) is None
