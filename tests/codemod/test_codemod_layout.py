"""codemod/layout.py (and how plan.py uses it): the rewritten file keeps the original's layout."""

import pytest

from codemod_fixtures import ROOT, check_pair, pairs
from multi_gpu_codemod import transform_source
from multi_gpu_codemod.layout import fitted, strategy_statements
from multi_gpu_codemod.strategy_expression import Branch, StrategyCode

import libcst as cst


@pytest.mark.parametrize("before", pairs("layout"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    check_pair(before)


def test_continuation_lines_follow_the_parenthesis_after_a_rename():
    after = (ROOT / "layout" / "realign_after_rename.after.py").read_text().splitlines()
    for opening, continued in (("model.compile(", "loss="), ("history = model.fit(", "x, y,")):
        line = next(i for i, text in enumerate(after) if opening in text)
        column = after[line].index(opening) + len(opening)
        assert after[line][column:].startswith(continued)
        assert after[line + 1][:column].strip() == "" and after[line + 1][column] != " "
    # A hanging indent is relative to the statement, not to the parenthesis: left as it was.
    assert "    model.evaluate(\n        x, y, verbose=0)" in "\n".join(after)


def test_blank_lines_stay_blank_and_stay_where_they_were():
    before = (ROOT / "layout" / "blank_lines_kept.before.py").read_text()
    after = (ROOT / "layout" / "blank_lines_kept.after.py").read_text()
    assert not [line for line in after.splitlines() if line and not line.strip()]  # no whitespace-only line
    assert after.count("\n\n") == before.count("\n\n") - 1  # only the removed import's own blank line went
    assert "\n\n\ndef train" in after  # two blank lines before the `def`, as before


def _text(statement: cst.BaseStatement, indent: str = "") -> str:
    module = cst.Module(body=[statement])
    return "".join(indent + line if line else line for line in module.code.splitlines(keepends=True))


def test_a_long_strategy_line_is_wrapped_like_black_at_its_indentation():
    code = StrategyCode('tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:self.n_gpus])')
    short = strategy_statements("strategy", code, "", "    ", 100)
    assert _text(short) == f"strategy = {code}\n"
    deep = strategy_statements("strategy", code, " " * 12, "    ", 100)
    assert cst.Module(body=[cst.IndentedBlock(body=[deep]).body[0]]).code == (
        "strategy = tf.distribute.MirroredStrategy(\n"
        '    tf.config.list_logical_devices("GPU")[:self.n_gpus]\n'
        ")\n"
    )
    # The file's widest line is the limit when it is wider than 100 columns.
    assert "\n" not in cst.Module(body=[strategy_statements("strategy", code, " " * 12, "    ", 120)]).code.strip()


def test_a_branch_uses_the_files_indentation_unit():
    code = StrategyCode("tf.distribute.MirroredStrategy()",
                        branch=Branch("G > 1", True, "tf.distribute.get_strategy()"))
    statement = strategy_statements("s", code, "", "\t", 100)
    assert cst.Module(body=[statement], default_indent="\t").code == (
        "if G > 1:\n\ts = tf.distribute.MirroredStrategy()\nelse:\n\ts = tf.distribute.get_strategy()\n"
    )


WIDE = "x" * 60


@pytest.mark.parametrize("line,indent,expected", [
    # fits: unchanged
    ("m = f(a, b)\n", "    ", "m = f(a, b)\n"),
    # one line of arguments fits: black's hanging shape
    (f"early = EarlyStopping(monitor='{WIDE}', patience=3)\n", "    " * 2,
     f"early = EarlyStopping(\n    monitor='{WIDE}', patience=3\n)\n"),
    # one argument per line, with a trailing comma
    (f"early = EarlyStopping(monitor='{WIDE}', mode='{WIDE}')\n", "    ",
     f"early = EarlyStopping(\n    monitor='{WIDE}',\n    mode='{WIDE}',\n)\n"),
    # not a call at the end of the line, or no shape fits: left as it is
    (f"w = '{WIDE}' + '{WIDE}'\n", "    ", f"w = '{WIDE}' + '{WIDE}'\n"),
    (f"layer = Dense(units, name='{WIDE}{WIDE}')(v)\n", "    ", f"layer = Dense(units, name='{WIDE}{WIDE}')(v)\n"),
    # a call of a call: the first call's arguments go on their own line
    (f"out = Dense(units, name='{WIDE}xxxxxxxxxx')(v)\n", "    " * 2,
     f"out = Dense(\n    units, name='{WIDE}xxxxxxxxxx'\n)(v)\n"),
    # arguments already on several lines (aligned under `(`): rewrapped like a one-line call
    (f"model.compile(loss='{WIDE}xxxxxxxxxxxxx',\n              x=1)\n", "    " * 2,
     f"model.compile(\n    loss='{WIDE}xxxxxxxxxxxxx', x=1\n)\n"),
    (f"model.compile(loss='{WIDE}', optimizer=SGD(0.1),\n              metrics=['{WIDE}'])\n", "    ",
     f"model.compile(\n    loss='{WIDE}',\n    optimizer=SGD(0.1),\n    metrics=['{WIDE}'],\n)\n"),
    # a comment among the arguments, or an argument spanning lines: the user's layout stays
    (f"model.compile(loss='{WIDE}xxxxxxxxxxxxxxx',  # why\n              metrics=['mae'])\n", "    " * 2,
     f"model.compile(loss='{WIDE}xxxxxxxxxxxxxxx',  # why\n              metrics=['mae'])\n"),
    (f"model.compile(loss='{WIDE}xxxxxxxxxxxxxxx', optimizer=SGD(0.1,\n    0.9), metrics=['mae'])\n", "    " * 2,
     f"model.compile(loss='{WIDE}xxxxxxxxxxxxxxx', optimizer=SGD(0.1,\n    0.9), metrics=['mae'])\n"),
])
def test_a_line_pushed_past_the_limit_under_the_scope_is_wrapped_like_black(line, indent, expected):
    statement = cst.parse_statement(line)
    assert isinstance(statement, cst.SimpleStatementLine)
    result = fitted(statement, indent, "    ", 100)
    assert cst.Module([result]).code == expected


def test_every_line_moved_under_the_scope_is_fitted_in_place():
    before = (
        "from keras.utils import multi_gpu_model\n\n\ndef train():\n    model = build()\n"
        f"    stop = CustomStopper(monitor='{'v' * 25}', patience=3, restore_best_weights=True)\n"
        "    parallel = multi_gpu_model(model, gpus=2)\n    parallel.compile('adam', 'mse')\n"
    )
    assert max(len(line) for line in before.splitlines()) == 100  # within the limit before
    out = transform_source(before.encode()).output.decode()
    assert all(len(line) <= 100 for line in out.splitlines())
    wrapped = ("        stop = CustomStopper(\n"
               "            monitor='{}', patience=3, restore_best_weights=True\n        )\n")
    assert wrapped.format("v" * 25) in out


def test_a_realigned_continuation_that_would_pass_the_files_width_stays_where_it_was():
    # round 36, ia17: `net.fit(` -> `model.fit(` would have pushed the aligned line to 101 columns
    args = "callbacks=[ModelCheckpoint('ecg_weights.h5', save_weights_only=True, save_best_only=True)])"
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\nnet = multi_gpu_model(model, gpus=2)\n"
        "net.compile('adam', 'mse')\nnet.fit(x, y,\n        " + args + "\n"
    )
    assert len("        " + args) == 99
    out = transform_source(source.encode(), "train.py").output.decode()
    assert out.endswith("model.fit(x, y,\n        " + args + "\n")
    assert max(len(line) for line in out.splitlines()) <= 100


def test_a_call_kept_in_place_by_the_width_is_not_shifted_when_its_name_comes_back():
    # round 38, la15: `model.fit_generator(` read as `template_model.fit_generator(` could not be
    # realigned (it would pass 100 columns); renamed back to `model`, its inner line lost 9 columns
    call = (
        "model.fit_generator(train_seq, validation_data=val_seq, epochs=params.epochs,\n"
        "                    callbacks=[EarlyStopping(patience=5),\n"
        "                               ModelCheckpoint('crnn.{epoch:02d}.h5', save_weights_only=True)])\n"
    )
    source = (
        "from keras.utils import multi_gpu_model\n\ntemplate_model = build()\n"
        "model = multi_gpu_model(template_model, gpus=2)\nmodel.compile('adam', 'mse')\n" + call
        + "template_model.save_weights('final.h5')\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert call + "model.save_weights('final.h5')\n" in out


@pytest.mark.parametrize("between,fit,expected", [
    # the blank line that set the removed call apart goes below the block, before the `fit`
    ("\n", "model.fit(x, y)\n", "    model.compile('adam', 'mse')\n\nmodel.fit(x, y)\n"),
    # a comment under it keeps the blank line above it, inside the block
    ("\n# stage 1\n", "model.fit(x, y)\n", "\n    # stage 1\n    model.compile('adam', 'mse')\nmodel.fit(x, y)\n"),
    # a blank line already sets the block apart: the build and the compile read as one unit
    # (round 59, bb04)
    ("\n", "\nmodel.fit(x, y)\n", "    model.compile('adam', 'mse')\n\nmodel.fit(x, y)\n"),
    ("\n\n", "\n\nmodel.fit(x, y)\n", "    model.compile('adam', 'mse')\n\n\nmodel.fit(x, y)\n"),
])
def test_the_blank_line_above_the_removed_call_goes_below_the_scope(between, fit, expected):
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\n" + between
        + "parallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n" + fit
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert out.endswith("with strategy.scope():\n    model = build()\n" + expected), out


def test_the_compile_joins_the_build_but_after_a_block():
    # rounds 60 and 61 (bd05, be12): the blank line that set the removed call apart goes; after a
    # compound statement (`for layer in ...:`) it stays
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\nmodel.summary()\n\n"
        "parallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n\nparallel.fit(x, y)\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert out.endswith(
        "with strategy.scope():\n    model = build()\n    model.summary()\n    model.compile('adam', 'mse')\n"
        "\nmodel.fit(x, y)\n"
    ), out
    frozen = source.replace("model.summary()\n", "for layer in model.layers[:-1]:\n    layer.trainable = False\n")
    out = transform_source(frozen.encode(), "train.py").output.decode()
    assert "        layer.trainable = False\n\n    model.compile('adam', 'mse')\n\nmodel.fit(x, y)\n" in out, out


def test_a_line_a_late_rename_pushes_past_the_files_widest_is_wrapped_like_black():
    """Round 44, ba04: `model.fit(...)` renamed to `base_model.fit(...)` after the plan (the
    template keeps its name) grew a 102-column line to 107; wrapped as the plan wraps moved lines."""
    fit = "history_of_training = model.fit(x_train_images, y_train_labels, batch_size=256, epochs=100, verbose=2)"
    source = (
        "from keras.utils import multi_gpu_model\n\n"
        "base_model = build()\nmodel = multi_gpu_model(base_model, gpus=2)\nmodel.compile('adam', 'mse')\n"
        f"{fit}\nbase_model.save('m.h5')\n"
    )
    assert len(fit) == 102
    out = transform_source(source.encode(), "t.py").output.decode()
    assert (
        "history_of_training = base_model.fit(\n"
        "    x_train_images, y_train_labels, batch_size=256, epochs=100, verbose=2\n)\n"
    ) in out
    assert max(len(line) for line in out.splitlines()) <= 102
    assert transform_source(out.encode(), "t.py").output.decode() == out


def test_commented_out_code_on_the_template_above_the_call_stays_below_the_construction():
    """Round 46, ac03: `# model.load_weights('prev.h5')` between the build and the wrap went above
    the strategy line, before the model exists; a note on the devices still goes up."""
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = unet()\n# model.load_weights('prev.h5')\n"
        "model = multi_gpu_model(model, 4)   # 4x Titan X\nmodel.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode(), "t.py").output.decode()
    assert out.endswith(
        "# 4x Titan X\nstrategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices(\"GPU\")[:4])\n"
        "with strategy.scope():\n    model = unet()\n    # model.load_weights('prev.h5')\n"
        "    model.compile('adam', 'mse')\n"
    )


@pytest.mark.parametrize("message", ["print('Training on 4 GPUs')\n", ""])
def test_commented_out_code_right_under_the_build_stays_under_it_in_the_scope(message):
    """Round 58, ay19: `#base.load_weights(...)` right under the build, a blank line before the
    wrap and a message after it, stayed where the build was: below the strategy line and above the
    build, which moved into the scope, so that uncommented it read a model not yet built."""
    source = (
        "from keras.utils import multi_gpu_model\n\nbase = unet()\n#base.load_weights('best.h5')\n\n"
        f"model = multi_gpu_model(base, gpus=4)\n{message}model.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode(), "t.py").output.decode()
    assert out.count("#base.load_weights('best.h5')") == 1
    assert "    base = unet()\n    #base.load_weights('best.h5')\n" in out
    assert out.index("with strategy.scope():") < out.index("#base.load_weights")


@pytest.mark.parametrize("ids,kept", [("[0, 1]", False), ("[2, 3]", True)])
def test_a_note_that_the_call_named_gpu_ids_goes_where_the_strategy_names_none(ids, kept):
    """Round 58, ay12: `gpus=[0, 1]  # explicit device ids` reads `[:2]` now: no ids in sight."""
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = unet()\n"
        f"model = multi_gpu_model(model, gpus={ids})  # explicit device ids\nmodel.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode(), "t.py").output.decode()
    assert ("# explicit device ids\ngpus = tf.config.list_logical_devices(\"GPU\")\nstrategy = " in out) is kept, out
    assert out.count("# explicit device ids") == kept
    assert "    model = unet()\n    model.compile('adam', 'mse')\n" in out


def test_a_heading_over_the_build_keeps_its_blank_line_above_a_definition_moved_up():
    """Round 57, aw17: `epochs = 2`, a blank line, `# ---- VAE ----` over the build, with a `def` the
    build calls between: the `def` goes above the strategy line and the heading over it, still set
    apart from `epochs = 2` by its blank line."""
    source = (
        "from keras.utils import multi_gpu_model\n\nepochs = 2\n\n# ---- VAE ----\nx = Input(shape=(4,))\n\n\n"
        "def sampling(args):\n    return args\n\n\nvae = Model(x, Lambda(sampling)(x))\n"
        "vae = multi_gpu_model(vae, gpus=2)\nvae.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode(), "t.py").output.decode()
    assert "epochs = 2\n\n# ---- VAE ----\n\n\ndef sampling(args):\n" in out, out


def test_a_compile_repeated_after_a_dissolved_device_block_goes():
    """Round 47, af10: the template compiled inside `with tf.device('/cpu:0'):`, then the parallel
    model compiled the same way: renamed, the second compile read as the first, twice in one scope."""
    source = (
        "import tensorflow as tf\nfrom keras.utils import multi_gpu_model\n\n"
        "with tf.device('/cpu:0'):\n    lm = build()\n    lm.compile(loss='mse', optimizer='adam')\n\n"
        "parallel_lm = multi_gpu_model(lm, 8)\nparallel_lm.compile(loss='mse', optimizer='adam')\n"
        "parallel_lm.fit(x, y)\n"
    )
    out = transform_source(source.encode(), "t.py").output.decode()
    assert out.count(".compile(") == 1
    assert "with strategy.scope():\n    lm = build()\n    lm.compile(loss='mse', optimizer='adam')\n" in out


@pytest.mark.parametrize("arrow", ["<- ", "<-- ", "^ "])
def test_an_arrow_on_the_calls_line_is_dropped_when_its_comment_goes_above(arrow):
    # round 47, ae04: "# <- the only multi-gpu line" above the strategy line pointed at nothing
    source = (
        "from keras.utils import multi_gpu_model\n\nm = build()\n"
        f"m = multi_gpu_model(m, 2)   # {arrow}the only multi-gpu line\nm.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode(), "t.py").output.decode()
    assert "# the only multi-gpu line\nstrategy = " in out


def test_a_comment_line_among_realigned_arguments_moves_with_them():
    # (round 49, ai20: the arguments moved back under `model.compile(`, the comment between them
    # stayed 4 columns to the right)
    before = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\n"
        "model_gpu = multi_gpu_model(model, gpus=2)\n"
        "for lr in rates:\n"
        "    model_gpu.compile(loss='binary_crossentropy',\n"
        "                      # binary, because tags are independent\n"
        "                      optimizer=Adam(lr))\n"
        "    model_gpu.fit(x, y)\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert (
        "        model.compile(loss='binary_crossentropy',\n"
        "                      # binary, because tags are independent\n"
        "                      optimizer=Adam(lr))\n"
    ) in out
