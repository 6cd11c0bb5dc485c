"""codemod/plan.py: the edits fixers decide on, applied to the module in one pass."""

import libcst as cst
import pytest

from codemod_fixtures import check_source_pair
from multi_gpu_codemod import transform_source
from multi_gpu_codemod._tree import Tree
from multi_gpu_codemod.plan import Plan, Region, apply_plan

SOURCE = """\
import os
# the template
model = make()  # built here
parallel = wrap(model)
parallel.compile('adam', 'mse')
print(os.getcwd())
"""


def _apply(plan: Plan, module: cst.Module, with_tree: bool) -> str:
    return apply_plan(module, plan, Tree(module) if with_tree else None).code


def test_an_empty_plan_is_empty_and_changes_nothing():
    module = cst.parse_module(SOURCE)
    assert Plan().empty
    assert apply_plan(module, Plan()).code == SOURCE


def test_a_removed_statement_hands_its_comments_to_the_next_one():
    module = cst.parse_module("x = f(\n    1,  # one\n)\n# about y\ny = 2\n")
    plan = Plan(statements={id(module.body[0]): None})
    assert not plan.empty
    for with_tree in (False, True):
        assert _apply(plan, module, with_tree) == "# one\n# about y\ny = 2\n"


def test_a_replaced_statement_keeps_every_comment_it_had():
    module = cst.parse_module(SOURCE)
    plan = Plan(statements={id(module.body[1]): cst.parse_statement("model = make_small()\n")})
    # Its leading comment stays; the trailing one becomes a line of its own above the replacement.
    assert _apply(plan, module, True) == SOURCE.replace("model = make()  # built here",
                                                        "# built here\nmodel = make_small()")


def test_a_region_goes_under_the_strategy_scope_with_its_notes():
    module = cst.parse_module(SOURCE)
    region = Region(block=module, start=1, end=3, name="strategy", expression="tf.distribute.MirroredStrategy()",
                    notes=["# a note"])
    plan = Plan(regions=[region], statements={id(module.body[2]): None})
    assert _apply(plan, module, True) == (
        "import os\n"
        "# a note\n"
        "strategy = tf.distribute.MirroredStrategy()\n"
        "with strategy.scope():\n"
        "    # the template\n"  # the first statement's own comment stays with it
        "    model = make()  # built here\n"
        "    parallel.compile('adam', 'mse')\n"
        "print(os.getcwd())\n"
    )


def test_a_node_replacement_and_a_cpu_block_dissolved():
    module = cst.parse_module("with tf.device('/cpu:0'):  # template\n    m = make(wrap(1))\nn = 2\n")
    with_block = module.body[0]
    call = with_block.body.body[0].body[0].value.args[0].value
    plan = Plan(unwrap={id(with_block)}, nodes={id(call): cst.Integer("1")})
    assert _apply(plan, module, True) == "# template\nm = make(1)\nn = 2\n"


def test_a_definition_moved_above_the_strategy_takes_its_spacing_along():
    module = cst.parse_module("import x\na = make()\n\n\ndef f():\n    pass\n\n\nb = wrap(a)\nb.compile()\n")
    definition = module.body[2]
    region = Region(block=module, start=1, end=4, name="strategy", expression="tf.distribute.MirroredStrategy()",
                    hoisted=[definition])
    plan = Plan(regions=[region], moved={id(definition)})
    assert _apply(plan, module, True) == (
        "import x\n"
        "\n"
        "\n"
        "def f():\n"
        "    pass\n"
        "\n"
        "\n"
        "strategy = tf.distribute.MirroredStrategy()\n"
        "with strategy.scope():\n"
        "    a = make()\n"
        "\n"  # one blank line inside the block, not the two that set the `def` apart
        "    b = wrap(a)\n"
        "    b.compile()\n"
    )


def test_a_strategy_code_renders_its_branches_in_the_block():
    from multi_gpu_codemod.strategy_expression import Branch, StrategyCode

    module = cst.parse_module("def run(n):\n    m = make()\n    m.compile()\n")
    block = module.body[0].body
    code = StrategyCode("tf.distribute.MirroredStrategy()",
                        branch=Branch("n > 1", True, "tf.distribute.get_strategy()"))
    plan = Plan(regions=[Region(block=block, start=0, end=1, name="strategy", expression=code)])
    assert _apply(plan, module, True) == (
        "def run(n):\n"
        "    if n > 1:\n"
        "        strategy = tf.distribute.MirroredStrategy()\n"
        "    else:\n"
        "        strategy = tf.distribute.get_strategy()\n"
        "    with strategy.scope():\n"
        "        m = make()\n"
        "        m.compile()\n"
    )


HEAD = "from keras.utils import multi_gpu_model\n\n"
SCOPE = 'strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:2])\nwith strategy.scope():\n'


def test_a_compile_the_rename_made_identical_to_the_one_before_goes():
    before = (HEAD + "model = build()\nmodel.compile('adam', 'mse')\nparallel = multi_gpu_model(model, gpus=2)\n"
              "# same settings on the parallel model\nparallel.compile('adam', 'mse')\nparallel.fit(x, y)\n")
    after = ("import tensorflow as tf\n\n" + SCOPE + "    model = build()\n    model.compile('adam', 'mse')\n"
             "# same settings on the model\nmodel.fit(x, y)\n")  # one model now (stale_prose.py)
    assert check_source_pair(before, after) == []


def test_a_summary_the_rename_made_identical_to_the_one_before_goes():
    before = (HEAD + "model = build()\nmodel.summary()\nparallel = multi_gpu_model(model, gpus=2)\nparallel.summary()\n"
              "parallel.compile('adam', 'mse')\nparallel.fit(x, y)\n")
    after = ("import tensorflow as tf\n\n" + SCOPE + "    model = build()\n    model.summary()\n"
             "    model.compile('adam', 'mse')\nmodel.fit(x, y)\n")
    assert check_source_pair(before, after) == []


def test_repeated_compiles_the_script_wrote_itself_stay():
    before = (HEAD + "model = build()\nparallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n"
              "parallel.compile('adam', 'mse')\nparallel.fit(x, y)\n")
    after = ("import tensorflow as tf\n\n" + SCOPE + "    model = build()\n    model.compile('adam', 'mse')\n"
             "    model.compile('adam', 'mse')\nmodel.fit(x, y)\n")
    assert check_source_pair(before, after) == []


def test_only_the_calls_own_comments_go_above_the_strategy_line():
    # `# In[5]:` (a notebook export's cell marker) is set apart by a blank line: it stays where it
    # was, with the blank lines; `# two cards` right above the call is about it and moves
    before = (HEAD + "model = build()\n\n# In[5]:\n\n# two cards\nparallel = multi_gpu_model(model, gpus=2)\n"
              "parallel.compile('adam', 'mse')\n")
    after = ("import tensorflow as tf\n\n# two cards\n" + SCOPE + "    model = build()\n\n    # In[5]:\n\n"
             "    model.compile('adam', 'mse')\n")
    assert check_source_pair(before, after) == []


_STAGE = (
    "import numpy as np\nfrom keras.utils import multi_gpu_model\n\n"
    "model = build()\n{between}\nparallel = multi_gpu_model(model, gpus=2)\nparallel.compile({compile})\n"
    "parallel.fit(x, y)\n{after}"
)


def _scoped(between: str, compile_args: str = "'adam', 'mse'", after: str = "") -> str:
    from multi_gpu_codemod import transform_source

    source = _STAGE.format(between=between, compile=compile_args, after=after)
    return transform_source(source.encode(), "train.py").output.decode()


def test_data_made_between_the_model_and_its_compile_goes_after_the_scope():
    out = _scoped("x = np.random.rand(8, 4)\ny = (np.random.rand(8, 1) > 0.5).astype('float32')\n")
    assert out.endswith(
        "with strategy.scope():\n    model = build()\n    model.compile('adam', 'mse')\n\n"
        "x = np.random.rand(8, 4)\ny = (np.random.rand(8, 1) > 0.5).astype('float32')\nmodel.fit(x, y)\n"
    )


def test_arithmetic_between_the_model_and_its_compile_goes_after_the_scope():
    # `batch_size = args.batch_size * gpus` calls nothing: it creates no variable (round 30, ka16)
    out = _scoped("batch = cfg.batch * 2 + 1\nsteps = -(n // batch)\n")
    assert out.endswith(
        "with strategy.scope():\n    model = build()\n    model.compile('adam', 'mse')\n\n"
        "batch = cfg.batch * 2 + 1\nsteps = -(n // batch)\nmodel.fit(x, y)\n"
    )
    called = _scoped("batch = cfg.size() * 2\n")  # a call: whatever it does stays under the scope
    assert "    batch = cfg.size() * 2\n" in called
    counted = _scoped("batch = int(cfg.batch) * len(gpus)\n")  # (but a built-in that makes a number)
    assert counted.endswith("    model.compile('adam', 'mse')\n\nbatch = int(cfg.batch) * len(gpus)\nmodel.fit(x, y)\n")


def test_an_if_choosing_a_batch_size_between_the_model_and_its_compile_goes_after_the_scope():
    # round 31, ma05: what was left of the guard once the call went, `if G >= 2: bs = BASE * G` /
    # `else: bs = BASE`, calls nothing and creates nothing
    out = _scoped("if n >= 2:\n    batch = BASE * n\nelse:\n    batch = BASE\n")
    assert out.endswith(
        "with strategy.scope():\n    model = build()\n    model.compile('adam', 'mse')\n\n"
        "if n >= 2:\n    batch = BASE * n\nelse:\n    batch = BASE\nmodel.fit(x, y)\n"
    )
    aliased = _scoped("if n >= 2:\n    batch = BASE * n\nelse:\n    batch = other\n")  # a lower-case name
    assert "    if n >= 2:\n" in aliased  # may name a model: stays under the scope


def test_data_a_later_statement_or_a_function_reads_stays_in_the_scope():
    read_by_compile = _scoped("w = np.ones(3)\n", compile_args="'adam', 'mse', loss_weights=w")
    assert "    w = np.ones(3)\n" in read_by_compile
    read_by_function = _scoped("x = np.ones((8, 4))\n", after="\n\ndef peek():\n    return x.shape\n")
    assert "    x = np.ones((8, 4))\n" in read_by_function
    seeded = _scoped("x = np.ones((8, 4))\n", compile_args="'adam', 'mse', seed=np.random.seed(0)")
    assert "    x = np.ones((8, 4))\n" in seeded  # `np` shares its random state with a later statement


def test_a_comment_on_the_call_about_the_next_stage_stays_above_what_follows():
    from multi_gpu_codemod import transform_source

    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\n\n# phase 1: train the new head\n"
        "parallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\nparallel.fit(x, y)\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert "    model = build()\n\n    # phase 1: train the new head\n    model.compile('adam', 'mse')\n" in out
    # one about the devices is about the strategy line's choice: above it
    devices = source.replace("# phase 1: train the new head", "# replicate on both cards")
    out = transform_source(devices.encode(), "train.py").output.decode()
    assert "# replicate on both cards\nstrategy = " in out


def test_a_keras_data_pipeline_between_the_model_and_its_compile_goes_after_the_scope_in_a_function():
    from multi_gpu_codemod import transform_source

    source = (
        "from keras.preprocessing.image import ImageDataGenerator\nfrom keras.utils import multi_gpu_model\n\n\n"
        "def main(args):\n    model = build()\n\n    gen = ImageDataGenerator(rescale=1. / 255)\n"
        "    train = gen.flow_from_directory(args.data, (224, 224))\n\n"
        "    parallel = multi_gpu_model(model, gpus=2)\n    parallel.compile('sgd', 'categorical_crossentropy')\n"
        "    parallel.fit(train)\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    # (`args`, `gen` and `train` are the function's own: no other function can read them)
    assert out.endswith(
        "    with strategy.scope():\n        model = build()\n"
        "        model.compile('sgd', 'categorical_crossentropy')\n\n"
        "    gen = ImageDataGenerator(rescale=1. / 255)\n    train = gen.flow_from_directory(args.data, (224, 224))\n"
        "    model.fit(train)\n"
    )


def test_a_keras_callback_made_between_the_model_and_its_compile_goes_after_the_scope():
    from multi_gpu_codemod import transform_source

    source = (
        "from keras.callbacks import EarlyStopping\nfrom keras.utils import multi_gpu_model\n\n\n"
        "class Trainer:\n    def train(self, x, y):\n        model = self.build()\n"
        "        early = EarlyStopping(monitor='val_acc', patience=self.patience)\n"
        "        parallel = multi_gpu_model(model, gpus=2)\n        parallel.compile('adam', 'mse')\n"
        "        parallel.fit(x, y, callbacks=[early])\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    # (`self` is read on both sides; only `compile` is called on what it reads: nothing it reads changes)
    assert out.endswith(
        "        with strategy.scope():\n            model = self.build()\n            model.compile('adam', 'mse')\n\n"
        "        early = EarlyStopping(monitor='val_acc', patience=self.patience)\n"
        "        model.fit(x, y, callbacks=[early])\n"
    )
    # a later statement that calls a method of what the callback reads keeps it in place
    changed = source.replace("        parallel = multi_gpu", "        self.reset()\n        parallel = multi_gpu")
    assert "            early = EarlyStopping(" in transform_source(changed.encode(), "train.py").output.decode()


@pytest.mark.parametrize("made,moved", [
    # round 38, ua07/la10: a list of callbacks, and paths built for them, go after the scope too
    ("callbacks = [EarlyStopping(patience=3), ModelCheckpoint(os.path.join(out, 'best.h5'))]\n", True),
    ("ckpt = ModelCheckpoint('w.{}.h5'.format(name), save_best_only=True)\n", True),
    # a callback of the script's own, or one built by a call that may do anything, stays
    ("callbacks = [EarlyStopping(patience=3), TemplateSaver(model)]\n", False),
    ("ckpt = ModelCheckpoint(make_path(out))\n", False),
])
def test_callbacks_made_between_the_model_and_its_compile(made, moved):
    out = _scoped(made)
    assert out.endswith("    model.compile('adam', 'mse')\n\n" + made + "model.fit(x, y)\n") == moved
    assert ("    " + made in out) != moved


def test_a_callback_pointed_at_the_template_before_fit_is_left_to_fit():
    """`callbacks[1].set_model(template)` made the checkpoint save the template while the parallel
    model trained; `fit` on the one model hands every callback that model (round 25, va09)."""
    head = (
        "from keras.callbacks import CSVLogger, ModelCheckpoint\nfrom keras.utils import multi_gpu_model\n\n\n"
        "def run(x, y):\n    template = build()\n    parallel = multi_gpu_model(template, gpus=2)\n"
        "    parallel.compile('adam', 'mse')\n    callbacks = [CSVLogger('log.csv'), ModelCheckpoint('w.h5')]\n"
    )
    before = head + "    callbacks[1].set_model(template)\n    parallel.fit(x, y, callbacks=callbacks)\n"
    out = transform_source(before.encode(), "t.py").output.decode()
    assert "set_model" not in out
    assert "    model.fit(x, y, callbacks=callbacks)\n" in out
    # the callback not given to that fit, or given the model the script already trained: kept
    for kept in ("    callbacks[1].set_model(template)\n    parallel.fit(x, y, callbacks=callbacks[:1])\n",
                 "    callbacks[1].set_model(template)\n    template.fit(x, y, callbacks=callbacks)\n"):
        assert "set_model(" in transform_source((head + kept).encode(), "t.py").output.decode()


def test_a_messages_only_if_left_by_the_guard_goes_above_the_scope_by_the_strategy_line():
    # round 27, xb20: `if gpus > 1: logging.info(...)` / `else: logging.info(...)` sat inside the
    # `with`, between the build and the compile; it creates nothing and reads only the count
    # (counted after the build, so the strategy cannot be chosen in the guard's branches)
    before = (
        "import logging\nimport os\nfrom keras.utils import multi_gpu_model\n\n\nclass Trainer:\n"
        "    def compile(self):\n        self.model_save = self.build()\n"
        "        gpus = len(os.environ['CUDA_VISIBLE_DEVICES'].split(','))\n        if gpus > 1:\n"
        "            self.model = multi_gpu_model(self.model_save, gpus=gpus)\n"
        "            logging.info('Training using %d GPUs...', gpus)\n        else:\n"
        "            self.model = self.model_save\n            logging.info('Training using one device...')\n"
        "        self.model.compile(loss='mse', optimizer='adam')\n"
    )
    after = transform_source(before.encode(), "train.py").output.decode()
    assert after.endswith(
        "        if gpus > 1:\n            logging.info('Training using %d GPUs...', gpus)\n        else:\n"
        "            logging.info('Training using one device...')\n        with strategy.scope():\n"
        "            self.model_save = self.build()\n            self.model = self.model_save\n"
        "            self.model.compile(loss='mse', optimizer='adam')\n"
    )


def test_a_messages_only_if_on_the_length_of_the_gpu_list_goes_above_the_scope_too():
    # round 42, ca16: `if len(gpus) > 1: print("Using %d GPUs" % len(gpus))` stayed under the
    # `with`, between the build and the compile: its condition calls `len`, which creates nothing
    before = (
        "from keras import backend as K\nfrom keras.utils import multi_gpu_model\n\nctr_model = build()\n\n"
        "gpus = K.tensorflow_backend._get_available_gpus()\nif len(gpus) > 1:\n"
        "    print('Using %d GPUs' % len(gpus))\n    train_model = multi_gpu_model(ctr_model, gpus=len(gpus))\n"
        "else:\n    train_model = ctr_model\n\ntrain_model.compile(optimizer='adam', loss='mse')\n"
        "train_model.fit(x, y)\n"
    )
    after = transform_source(before.encode(), "train.py").output.decode()
    assert "\nif len(gpus) > 1:\n    print('Using %d GPUs' % len(gpus))\nwith strategy.scope():\n" in after


def test_a_messages_only_if_reading_what_the_scope_binds_stays_under_it():
    # `n` is counted from the model the scope builds: the message must follow it
    before = (
        "from keras.utils import multi_gpu_model\n\ngpus = 2\nmodel = build()\nn = model.count_params()\n"
        "if gpus > 1:\n    parallel = multi_gpu_model(model, gpus=gpus)\n"
        "    print('%d weights on %d GPUs' % (n, gpus))\n"
        "else:\n    parallel = model\n    print('one device')\nparallel.compile('sgd', 'mse')\n"
    )
    after = transform_source(before.encode(), "train.py").output.decode()
    scope = after.index("with strategy.scope():")
    assert scope < after.index("n = model.count_params()") < after.index("if gpus > 1:")


def test_what_ends_the_covered_range_and_builds_nothing_stays_below_the_with():
    # round 28, ya14: `load_model` then a print and colour tables, then the wrap: only the load
    # creates variables
    before = (
        "import colorsys\nfrom keras.models import load_model\nfrom keras.utils import multi_gpu_model\n\n\n"
        "class Detector:\n    def generate(self, path, n):\n        self.model = load_model(path, compile=False)\n"
        "        print('{} loaded.'.format(path))\n        hsv = [(x / n, 1.0, 1.0) for x in range(n)]\n"
        "        self.colors = [tuple(int(c * 255) for c in colorsys.hsv_to_rgb(*h)) for h in hsv]\n"
        "        if self.gpus >= 2:\n            self.model = multi_gpu_model(self.model, gpus=self.gpus)\n"
    )
    after = transform_source(before.encode(), "detect.py").output.decode()
    assert after.endswith(
        "        with strategy.scope():\n            self.model = load_model(path, compile=False)\n"
        "        print('{} loaded.'.format(path))\n        hsv = [(x / n, 1.0, 1.0) for x in range(n)]\n"
        "        self.colors = [tuple(int(c * 255) for c in colorsys.hsv_to_rgb(*h)) for h in hsv]\n"
    )


def test_an_if_left_with_nothing_to_do_goes():
    # round 29, zb20: the call and the `callback_model` hack went, the `else` alias too; an
    # `if n_gpu > 1: pass` was left inside the scope
    before = (
        "from keras.utils import multi_gpu_model\n\nn_gpu = 2\nmodel = build()\n\nif n_gpu > 1:\n"
        "    parallel_model = multi_gpu_model(model, gpus=n_gpu)\n"
        "    parallel_model.__setattr__('callback_model', model)\nelse:\n    parallel_model = model\n\n"
        "parallel_model.compile('adam', 'mse')\n"
    )
    after = transform_source(before.encode(), "train.py").output.decode()
    assert "pass" not in after and "if n_gpu > 1" not in after
    # (the compile joins the build at the file's end: round 61, be07)
    assert after.endswith("with strategy.scope():\n    model = build()\n    model.compile('adam', 'mse')\n")


def test_a_message_on_the_gpu_count_between_the_model_and_its_compile_stays_above_the_scope():
    # round 35, ha06: `print("Using %i GPUs" % n)` over the guard that went had landed inside the scope
    out = _scoped("model.summary()\n\nprint('Using %i GPUs' % n)\n")
    assert "\nprint('Using %i GPUs' % n)\nwith strategy.scope():\n    model = build()\n    model.summary()\n" in out
    said = _scoped("print('model built')\n")  # about the model, not the devices: where it was
    assert "    model = build()\n    print('model built')\n" in said


def test_an_if_on_the_gpu_count_choosing_a_batch_size_goes_after_the_scope():
    # round 36, ia17: `if len(gpus) >= 2:` calls only a built-in that counts
    out = _scoped("if len(gpus) >= 2:\n    batch = BATCH * len(gpus)\nelse:\n    batch = BATCH\n")
    assert out.endswith(
        "    model.compile('adam', 'mse')\n\nif len(gpus) >= 2:\n    batch = BATCH * len(gpus)\nelse:\n"
        "    batch = BATCH\nmodel.fit(x, y)\n"
    )


@pytest.mark.parametrize("between,repeated", [
    # round 36, ib19: only files and callbacks set up between: the second compile would redo the first
    ("os.makedirs('weights', exist_ok=True)\ncheckpointer = ModelCheckpoint('w.h5')\n", False),
    # a layer's `trainable` changed between: the recompile applies it, it stays
    ("for layer in model.layers[:2]:\n    layer.trainable = False\n", True),
    ("model.layers[0].trainable = False\n", True),
])
def test_a_compile_read_the_same_as_the_one_before_goes_past_set_up_lines_only(between, repeated):
    source = (
        "import os\nfrom keras.utils import multi_gpu_model\n\nmodel = build()\n"
        "model.compile('adam', 'mse')\n" + between + "parallel = multi_gpu_model(model, gpus=2)\n"
        "parallel.compile('adam', 'mse')\nparallel.fit(x, y)\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert out.count("model.compile('adam', 'mse')") == (2 if repeated else 1)


@pytest.mark.parametrize("test,compile_args,kept", [
    # round 56, au19: "wrap and compile again": once renamed, the `if` compiles as the line above did
    ("NGPU > 1", "'adam', 'mse'", False),
    ("NGPU > 1", "'sgd', 'mse'", True),  # another optimizer: the compile the training uses, kept
    ("gpus() > 1", "'adam', 'mse'", True),  # a condition that calls: it may do anything, kept
])
def test_an_if_that_only_compiles_again_as_the_line_above_goes(test, compile_args, kept):
    source = (
        "from keras.utils import multi_gpu_model\n\nNGPU = 4\nmodel = build()\nmodel.compile('adam', 'mse')\n"
        "model.summary()\n\nif " + test + ":\n    # wrap and compile again\n"
        "    model_gpu = multi_gpu_model(model, gpus=NGPU)\n    model_gpu.compile(" + compile_args + ")\n"
        "else:\n    model_gpu = model\n\nmodel_gpu.fit(x, y)\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert ("if " + test + ":\n        model.compile(" + compile_args + ")\n" in out) is kept, out
    if not kept:
        assert out.endswith(
            "with strategy.scope():\n    model = build()\n    model.compile('adam', 'mse')\n"
            "model.summary()\n\nmodel.fit(x, y)\n"
        ), out


@pytest.mark.parametrize("label,above", [
    ("# Multi-gpu setup:", True),  # round 56, au01: labels what the strategy line and its scope do now
    ("# use 2 GPUs", True),
    ("# build the model on 2 GPUs", False),  # about the build below it: stays with it, in the scope
])
def test_a_label_on_the_devices_over_the_build_goes_above_the_strategy_line(label, above):
    source = (
        "from keras.utils import multi_gpu_model\n\nX = load()\n\n" + label + "\nbase = build()\n"
        "if args.gpus > 1: model = multi_gpu_model(base, gpus=args.gpus)\nelse: model = base\n\n"
        "model.compile('adam', 'mse')\nmodel.fit(X, X)\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    if above:
        assert "X = load()\n\n" + label + "\nif args.gpus > 1:\n" in out, out
    else:
        assert "with strategy.scope():\n    " + label + "\n    base = build()\n" in out, out


def test_a_colab_text_cell_between_the_build_and_the_compile_stays_between_two_scopes():
    # round 55, at15: the text cell had been indented into the one scope
    source = (
        '"""Exported from Colab."""\nfrom keras.utils import multi_gpu_model\n\nmodel = build()\n\n'
        '"""## Parallelise\n\nTwo cards.\n"""\n\nparallel = multi_gpu_model(model, gpus=2)\n'
        "parallel.compile('adam', 'mse')\n\nparallel.fit(x, y)\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert out.endswith(
        SCOPE + '    model = build()\n\n"""## Parallelise\n\nTwo cards.\n"""\n\nwith strategy.scope():\n'
        "    model.compile('adam', 'mse')\n\nmodel.fit(x, y)\n"
    ), out
    # in a function, a string between statements is no cell: one scope
    inside = transform_source(source.replace("model = build()", "def main():\n    model = build()").replace(
        '\n"""## Parallelise\n\nTwo cards.\n"""\n\nparallel', '    "note"\n    parallel'
    ).replace("\nparallel.compile", "\n    parallel.compile").replace("\nparallel.fit", "\n    parallel.fit").encode(),
        "train.py").output.decode()
    assert inside.count("with strategy.scope():") == 1, inside


@pytest.mark.parametrize("made,outside", [
    # round 41, fa08: data the build reads stay above the strategy line, where they were (the
    # configuration both read had started the scope above them)
    ("    X = np.random.rand(40, 12)\n    n = X.shape[1]\n", True),
    # a call that may do anything (read a file, build layers) stays under the scope
    ("    X = load(path)\n    n = X.shape[1]\n", False),
])
def test_data_made_before_the_model_stay_above_the_scope(made, outside):
    from multi_gpu_codemod import transform_source

    source = (
        "import numpy as np\nfrom keras.utils import multi_gpu_model\n\nDEFAULT = {'gpus': 2}\n\n\n"
        "def load_config():\n    cfg = dict(DEFAULT)\n    return cfg\n\n\nif __name__ == '__main__':\n"
        "    cfg = load_config()\n" + made + "\n    model = build(n, cfg)\n    # use every configured GPU\n"
        "    model = multi_gpu_model(model, gpus=cfg['gpus'])\n    model.compile('adam', 'mse')\n    model.fit(X, X)\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    strategy = (  # (past 92 columns, the file's width: wrapped)
        "    strategy = tf.distribute.MirroredStrategy(\n"
        "        tf.config.list_logical_devices(\"GPU\")[:cfg['gpus']]\n    )\n"
    )
    if outside:
        assert out.endswith("    cfg = load_config()\n" + made + "\n    # use every configured GPU\n" + strategy
                            + "    with strategy.scope():\n        model = build(n, cfg)\n"
                            "        model.compile('adam', 'mse')\n    model.fit(X, X)\n"), out
    else:
        assert "    with strategy.scope():\n" + made.replace("    ", "        ") in out, out


@pytest.mark.parametrize("scaled", [
    "batch_size *= 2\n",  # round 44, ba11
    "if n_gpus >= 2:\n    batch_size *= n_gpus\n",  # round 44, ba15 (the `if` the call left)
])
def test_the_batch_scaled_between_the_model_and_its_compile_goes_after_the_scope(scaled):
    before = (
        "from keras.utils import multi_gpu_model\n\nbatch_size = 32\nn_gpus = 2\nmodel = build()\n"
        "model = multi_gpu_model(model, gpus=2)\n" + scaled + "model.compile('adam', 'mse')\n"
        "model.fit(x, y, batch_size=batch_size)\n"
    )
    after = transform_source(before.encode(), "train.py").output.decode()
    scope = after.index("with strategy.scope():")
    assert after.index("    model.compile(") > scope
    assert after.index(scaled.splitlines()[0]) > after.index("    model.compile(")
    assert scaled in after  # at the block's level again, as written


def test_the_calls_comment_going_on_from_the_cpu_blocks_no_longer_starts_with_and():
    # round 62, bg13: "# keep the master copy ... on the CPU" went with its block; the call's
    # "# and one replica per GPU" heads the strategy line alone
    source = (
        "import tensorflow as tf\nfrom keras.utils import multi_gpu_model\n\n"
        "# keep the master copy of the weights on the CPU\nwith tf.device('/cpu:0'):\n    model = build()\n"
        "# and one replica per GPU\nmodel = multi_gpu_model(model, gpus=2)\nmodel.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert "\n# one replica per GPU\nstrategy = " in out and "and one" not in out


@pytest.mark.parametrize("comment,said", [
    # round 61, bf05: over the strategy line, what the wrapping was for
    ("# wrap the fresh model for data-parallel training on 2 cards", "# data-parallel training on 2 cards"),
    # round 63, bi20: the copied helpers' towers are the strategy's replicas
    ("# two towers, one per GPU", "# two replicas, one per GPU"),
    # round 61, bf08: the strategy splits the batches per GPU too
    ("# replicate the network so prediction batches are split per GPU",
     "# replicate the network so prediction batches are split per GPU"),
])
def test_the_calls_comment_says_what_stays_true_over_the_strategy_line(comment, said):
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\n" + comment
        + "\nparallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert "\n" + said + "\nstrategy = " in out, out


def test_a_scope_ending_the_file_has_its_compile_join_the_build():
    # round 61, be07 and be12: the blank line that set the removed call apart stayed under the scope
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\n\n"
        "parallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert out.endswith("with strategy.scope():\n    model = build()\n    model.compile('adam', 'mse')\n"), out
    # after a compound statement the blank line stays, as where a statement follows
    source = source.replace(
        "model = build()\n", "model = build()\nfor layer in model.layers:\n    layer.trainable = True\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert "        layer.trainable = True\n\n    model.compile('adam', 'mse')\n" in out, out
