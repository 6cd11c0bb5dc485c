"""The scope reaches every model the migrated one is made of: models stacked into it with
`.add(...)` are built under `strategy.scope()` as those listed in `Sequential([...])` are."""

from __future__ import annotations

import libcst as cst
import pytest

from multi_gpu_codemod import transform_source
from multi_gpu_codemod.construction import object_reads

from codemod_fixtures import ROOT, check_pair, check_source_pair, check_unchanged, pairs, unchanged


@pytest.mark.parametrize("before", pairs("scope_reach"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    assert check_pair(before) == []


# What each site left as it is is reported with, at the part the scope cannot reach.
UNCHANGED = {
    "added_module_level_part.unchanged.py": ["MGPU109"],
    "added_parameter.unchanged.py": ["MGPU113"],
    "added_other_method_attribute.unchanged.py": ["MGPU113"],
    "derived_compiled_in_other_method.unchanged.py": ["MGPU110"],
    "derived_uses_other_method_model.unchanged.py": ["MGPU113"],
}


@pytest.mark.parametrize("path", unchanged("scope_reach"), ids=lambda p: p.name)
def test_unchanged_fixtures_are_reported(path):
    assert check_unchanged(path) == UNCHANGED[path.name]


@pytest.mark.parametrize(
    ("name", "line", "says"),
    [
        ("added_parameter.unchanged.py", 10, "`backbone` is a parameter of `fine_tune`: its caller builds it"),
        ("added_other_method_attribute.unchanged.py", 14, "`self.trunk` is assigned in another method (line 10)"),
        ("derived_compiled_in_other_method.unchanged.py", 17,
         "`self.stacked` (line 14) is built on `self.critic`, so the migration would build it under "
         "`strategy.scope()` with `self.critic`, but it is compiled here, in `prepare`, outside that scope"),
        ("derived_uses_other_method_model.unchanged.py", 16,
         "`self.maker` is assigned in another method (line 20), and the code the `strategy.scope()` would cover "
         "uses it"),
    ],
)
def test_parts_the_scope_cannot_reach_are_named_where_they_are(name, line, says):
    findings = transform_source((ROOT / "scope_reach" / name).read_bytes(), name).findings
    assert [f.line for f in findings] == [line]
    assert says in findings[0].message


def test_a_stacked_self_model_compiled_in_the_same_method_goes_under_the_scope():
    """The GAN shape: `self.combined = Model(z, self.critic(...))` built on the rebound parallel
    critic and compiled after it, in the same method, is covered with its compile."""
    after = (ROOT / "scope_reach" / "derived_self_model.after.py").read_text()
    scope = after.index("with strategy.scope():")
    assert scope < after.index("self.stacked = Model(noise, score)") < after.index("self.stacked.compile(")
    assert "\n            self.stacked.compile(" in after  # indented under the scope


def test_module_level_part_is_named_with_its_line():
    name = "added_module_level_part.unchanged.py"
    findings = transform_source((ROOT / "scope_reach" / name).read_bytes(), name).findings
    assert [(f.line, f.code) for f in findings] == [(7, "MGPU109")]
    assert "`shared_trunk` is created here, at module level" in findings[0].message


@pytest.mark.parametrize(
    ("code", "reads"),
    [
        ("model.add(encoder)", {"encoder"}),
        ("self.model.add(self.encoder)", {"self.encoder"}),
        ("for layer in base.layers:\n    model.add(layer)", {"base", "layer"}),
        # not a model stacked into another: two operands, a keyword, a module or settings root
        ("t = tf.add(a, b)", set()),
        ("np.add(a)", set()),
        ("model.add(units=n)", set()),
        ("model.add(Dense(4))", set()),
        ("model.summary(encoder)", set()),
    ],
)
def test_object_reads_include_what_add_stacks(code, reads):
    assert object_reads(cst.parse_module(code + "\n")) == reads


def test_an_unrelated_model_between_the_part_and_the_add_still_stops_the_scope():
    """The scope moves up over plain data only: a model built in between is reported (MGPU118)."""
    source = (
        "from keras.models import Sequential\nfrom keras.utils import multi_gpu_model\n\n"
        "trunk = make_trunk()\nother = make_other()\nmodel = Sequential()\nmodel.add(trunk)\n"
        "parallel = multi_gpu_model(model, gpus=2)\nparallel.compile(optimizer='adam', loss='mse')\n"
    )
    result = transform_source(source.encode(), "t.py")
    assert result.output == source.encode()
    assert [(f.line, f.code) for f in result.findings] == [(4, "MGPU118")]
    assert "line 5 (`other = make_other()`)" in result.findings[0].message


def test_list_and_add_forms_get_the_same_scope():
    """`Sequential([enc, dec])` and `Sequential()` + `.add(enc)` + `.add(dec)` are one model:
    the scope starts above `enc = ...` in both."""
    head = "from keras.models import Sequential\nfrom keras.utils import multi_gpu_model\n\n"
    tail = "parallel = multi_gpu_model(model, gpus=2)\nparallel.compile(optimizer='adam', loss='mse')\n"
    built = "enc = make_enc()\ndec = make_dec()\n"
    scoped = (
        "from keras.models import Sequential\nimport tensorflow as tf\n\n"
        "strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices(\"GPU\")[:2])\n"
        "with strategy.scope():\n    enc = make_enc()\n    dec = make_dec()\n"
    )
    check_source_pair(
        head + built + "model = Sequential([enc, dec])\n" + tail,
        scoped + "    model = Sequential([enc, dec])\n    model.compile(optimizer='adam', loss='mse')\n",
    )
    check_source_pair(
        head + built + "model = Sequential()\nmodel.add(enc)\nmodel.add(dec)\n" + tail,
        scoped + "    model = Sequential()\n    model.add(enc)\n    model.add(dec)\n"
        "    model.compile(optimizer='adam', loss='mse')\n",
    )


def test_stacked_on_lists_the_templates_add_statements_until_it_is_bound_again():
    from multi_gpu_codemod._tree import Tree
    from multi_gpu_codemod.construction import stacked_arguments, stacked_on

    source = (
        "model = Sequential()\nmodel.add(a)\nother.add(b)\nfor l in ls:\n    model.add(l)\n"
        "model = f()\nmodel.add(c)\n"
    )
    tree = Tree(cst.parse_module(source))
    found = stacked_on(tree, tree.module, 0)
    assert [tree.code(s).strip().splitlines()[0] for s in found] == ["model.add(a)", "for l in ls:"]
    assert [tree.code(a) for s in found for a in stacked_arguments(tree, s, "model")] == ["a", "l"]


# MGPU203 is one policy whatever path reaches the migrated model: a method of its class, an
# alias chosen by a conditional expression, or an instance of the class outside it.


@pytest.mark.parametrize(
    ("name", "call_line", "says"),
    [
        ("on_batch_through_alias.unchanged.py", 15, "`net.train_on_batch(...)` (line 20)"),
        ("on_batch_through_instance.unchanged.py", 13, "`ranker.scorer.predict_on_batch(...)` (line 23)"),
    ],
)
def test_on_batch_calls_through_an_alias_or_an_instance_keep_the_site(name, call_line, says):
    path = ROOT / "batch_calls" / name
    assert check_unchanged(path) == ["MGPU203"]
    finding = transform_source(path.read_bytes(), name).findings[0]
    assert finding.line == call_line
    assert says in finding.message


@pytest.mark.parametrize("before", pairs("batch_calls"), ids=lambda p: p.name)
def test_on_batch_calls_on_another_model_do_not_keep_the_site(before):
    assert check_pair(before) == []


def test_a_template_passed_on_from_an_attribute_built_outside_the_branch_is_reported():
    """`self._original_model = self.model` inside `if n_gpu > 1:` passes on a model built above
    the `if`: a scope inside the branch would cover nothing that creates variables (round 20, qa19)."""
    source = (
        "import keras\n\n\nclass Forecaster:\n    def __init__(self, n_gpu):\n"
        "        self.model = keras.Sequential([keras.layers.Dense(1)])\n"
        "        self.model.compile(loss='mae', optimizer='adam')\n"
        "        if n_gpu > 1:\n            self._original_model = self.model\n"
        "            self.model = keras.utils.multi_gpu_model(self._original_model, gpus=n_gpu)\n"
        "            self.model.compile(loss='mae', optimizer='adam')\n"
    )
    result = transform_source(source.encode(), "t.py")
    assert result.output == source.encode()
    assert [(f.line, f.code) for f in result.findings] == [(6, "MGPU118")]
    assert "`self.model` is built on line 6, in an enclosing block" in result.findings[0].message


def test_a_template_passed_on_from_an_attribute_another_method_built_is_reported():
    """`self._original_model = self.model` in `use_multiple_gpus`, `self.model` built in `build`:
    a scope there would cover only the recompile (round 21, ra18: RecursionError, then `Need to be
    inside strategy.scope()`)."""
    source = (
        "import keras\n\n\nclass Tagger:\n    def build(self):\n"
        "        self.model = keras.Sequential([keras.layers.Dense(1)])\n\n"
        "    def use_multiple_gpus(self, n_gpu):\n        if n_gpu > 1:\n"
        "            self._original_model = self.model\n"
        "            self.model = keras.utils.multi_gpu_model(self._original_model, gpus=n_gpu)\n"
        "            self.model.compile(loss='mae', optimizer='adam')\n"
    )
    result = transform_source(source.encode(), "t.py")
    assert result.output == source.encode()
    assert [(f.line, f.code) for f in result.findings] == [(10, "MGPU113")]
    assert "`self.model` is assigned in another method (line 6)" in result.findings[0].message


def test_a_template_another_method_built_in_a_local_then_stored_is_reported():
    """`m = Sequential(); m.add(...); self.model = m` in `build`: the model is built there all the
    same (round 30, ka20: the scope in `compile` covered only the alias, and `fit` failed with
    `Need to be inside strategy.scope()` on two GPUs)."""
    source = (
        "import keras\n\n\nclass Forecast:\n    def build(self):\n        m = keras.Sequential()\n"
        "        m.add(keras.layers.Dense(1))\n        self.model = m\n\n"
        "    def compile(self, n_gpu):\n        if n_gpu > 1:\n"
        "            self._original_model = self.model\n"
        "            self.model = keras.utils.multi_gpu_model(self._original_model, gpus=n_gpu)\n"
        "            self.model.compile(loss='mae', optimizer='adam')\n"
    )
    result = transform_source(source.encode(), "t.py")
    assert result.output == source.encode()
    assert [(f.line, f.code) for f in result.findings] == [(12, "MGPU113")]
    assert "`self.model` is assigned in another method (line 8)" in result.findings[0].message


def test_a_view_of_the_model_made_after_fit_needs_no_scope_of_its_own():
    """`encoder = Model(ae.input, ae.get_layer("code").output)` creates no variables (round 21, ra07);
    compiled, it would need one (its optimizer)."""
    source = (
        "from keras.models import Model\nfrom keras.utils import multi_gpu_model\n\nae = build()\n"
        "parallel = multi_gpu_model(ae, gpus=2)\nparallel.compile('adam', 'mse')\nparallel.fit(x, x)\n\n"
        "encoder = Model(ae.input, ae.get_layer('code').output)\ncodes = encoder.predict(x)\n"
    )
    out = transform_source(source.encode(), "t.py").output.decode()
    assert out.count("with strategy.scope():") == 1
    assert "\nencoder = Model(ae.input, ae.get_layer('code').output)\n" in out
    compiled = source + "encoder.compile('adam', 'mse')\n"
    assert "    encoder = Model(ae.input" in transform_source(compiled.encode(), "t.py").output.decode()


def test_an_alias_inside_the_branch_pulls_the_construction_above_it_under_the_scope():
    """`self.model = Model(...)` above `if n > 1: self._original_model = self.model; self.model =
    multi_gpu_model(...)`, compiled after the `if` (round 23, ta18: only the compile was scoped, and
    `self.model.callback_model = self._original_model` set the model on itself: RecursionError)."""
    source = (
        "import keras\n\n\nclass AE:\n    def __init__(self, n):\n        inp = keras.Input((4,))\n"
        "        self.model = keras.Model(inp, keras.layers.Dense(4)(inp))\n        if n > 1:\n"
        "            self._original_model = self.model\n"
        "            self.model = keras.utils.multi_gpu_model(self._original_model, gpus=n)\n"
        "            self.model.callback_model = self._original_model\n"
        "        self.model.compile(loss='mse', optimizer='adam')\n"
    )
    out = transform_source(source.encode(), "t.py").output.decode()
    assert "        with strategy.scope():\n            inp = keras.Input((4,))\n" in out
    assert "callback_model" not in out


def test_data_loading_that_also_returns_sizes_stays_above_the_scope():
    """`x, y, n_in, n_out = vectorize(...)` feeds `fit` and gives the layers their sizes: it loads
    data and creates no variables, so the scope starts at the layers (round 25, va11)."""
    before = (
        "import tensorflow as tf\nfrom keras.layers import Dense, Input\nfrom keras.models import Model\n"
        "from keras.utils import multi_gpu_model\n\nraw = load_rows('data.tsv')\nx, y, n_in, n_out = vectorize(raw)\n\n"
        "with tf.device('/cpu:0'):\n    inputs = Input(shape=(n_in,))\n"
        "    model = Model(inputs, Dense(n_out)(inputs))\n\n"
        "parallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\nparallel.fit(x, y)\n"
    )
    after = (
        "import tensorflow as tf\nfrom keras.layers import Dense, Input\nfrom keras.models import Model\n\n"
        "raw = load_rows('data.tsv')\nx, y, n_in, n_out = vectorize(raw)\n\n"
        "strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices(\"GPU\")[:2])\n"
        "with strategy.scope():\n    inputs = Input(shape=(n_in,))\n    model = Model(inputs, Dense(n_out)(inputs))\n"
        "    model.compile('adam', 'mse')\n\nmodel.fit(x, y)\n"
    )
    check_source_pair(before, after)
    # a statement whose names feed no model is still followed: it may build what the layers use
    unfed = before.replace("parallel.fit(x, y)", "parallel.fit(a, b)")
    assert "    x, y, n_in, n_out = vectorize(raw)" in transform_source(unfed.encode(), "t.py").output.decode()


def test_a_module_function_that_only_predicts_with_the_model_stays_below_the_scope():
    # round 29, za11: `picks = pick(model, waves)` with `def pick(m, w): return m.predict(w)...`
    # builds nothing: it stays where it was, after the `with`
    source = (
        "import numpy as np\nfrom keras.models import load_model\nfrom keras.utils import multi_gpu_model\n\n\n"
        "def pick(model, waves):\n    probs = model.predict(waves, batch_size=256)\n"
        "    return [np.where(p > 0.5)[0] for p in probs]\n\n\n"
        "def main(path, gpus):\n    model = load_model(path)\n    model = multi_gpu_model(model, gpus=gpus)\n"
        "    waves = np.load('w.npy')\n    picks = pick(model, waves)\n    return picks\n"
    )
    out = transform_source(source.encode(), "infer.py").output.decode()
    assert out.endswith(
        "    with strategy.scope():\n        model = load_model(path)\n    waves = np.load('w.npy')\n"
        "    picks = pick(model, waves)\n    return picks\n"
    )


def test_a_sweep_then_a_retrain_under_the_same_names_get_a_scope_each():
    """A learning-rate sweep wraps in a loop, then the winner is rebuilt and wrapped again under the
    same names (round 30, kb09): the second call's model is a new one, not built on the first's,
    and `Adam(lr=best['lr'])` reads `best`, not the loop's `lr`. Neither scope reaches over the
    data or the other site's cell."""
    source = (
        "from keras.optimizers import Adam\nfrom keras.utils import multi_gpu_model\n\n"
        "x, y = load()\nresults = []\nfor lr in [0.1, 0.01]:\n    model = cnn()\n"
        "    pmodel = multi_gpu_model(model, gpus=2)\n    pmodel.compile(optimizer=Adam(lr=lr), loss='mse')\n"
        "    results.append(pmodel.fit(x, y).history['loss'][-1])\n\n"
        "best = {'lr': 0.1}\nmodel = cnn()\npmodel = multi_gpu_model(model, gpus=2)\n"
        "pmodel.compile(optimizer=Adam(lr=best['lr']), loss='mse')\npmodel.fit(x, y)\n"
    )
    output = transform_source(source.encode(), "t.py").output.decode()
    strategy = 'strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:2])\n'
    assert output == (
        "from keras.optimizers import Adam\nimport tensorflow as tf\n\nx, y = load()\nresults = []\n"
        # (the sweep's strategy made once, above its loop: loop_strategy.py)
        + strategy + "for lr in [0.1, 0.01]:\n    with strategy.scope():\n        model = cnn()\n"
        "        pmodel = model\n        pmodel.compile(optimizer=Adam(lr=lr), loss='mse')\n"
        "    results.append(pmodel.fit(x, y).history['loss'][-1])\n\n"
        "best = {'lr': 0.1}\n" + strategy + "with strategy.scope():\n    model = cnn()\n    pmodel = model\n"
        "    pmodel.compile(optimizer=Adam(lr=best['lr']), loss='mse')\npmodel.fit(x, y)\n"
    )


def test_two_sites_share_one_strategy_line_only_over_code_that_needs_no_scope():
    """Between two wrapped models of one block, a `fit` and plain data: one strategy line, a
    `with` for each; a call there that may build (`extra = make_other()`) keeps them apart, each
    with its own strategy line, as before."""
    source = (
        "from keras.utils import multi_gpu_model\n\na = make()\npa = multi_gpu_model(a, 2)\npa.compile('adam', 'mse')\n"
        "pa.fit(x, y)\nn = 3\n{between}b = make()\npb = multi_gpu_model(b, 2)\npb.compile('adam', 'mse')\n"
        "pb.fit(x, y)\n"
    )
    shared = transform_source(source.format(between="").encode(), "t.py").output.decode()
    assert shared.count("strategy = tf.distribute") == 1 and shared.count("with strategy.scope():") == 2
    apart = transform_source(source.format(between="extra = make_other()\n").encode(), "t.py").output.decode()
    assert apart.count("strategy = tf.distribute") == 2
    # the same text reading a count bound again between them is another strategy: kept apart
    count = source.replace("multi_gpu_model(a, 2)", "multi_gpu_model(a, n)").replace("multi_gpu_model(b, 2)",
                                                                                      "multi_gpu_model(b, n)")
    rebound = transform_source(count.format(between="n = 4\n").encode(), "t.py").output.decode()
    assert rebound.count("strategy = tf.distribute") == 2


def test_a_message_right_after_a_hoisted_count_goes_up_with_it():
    """Round 32, na03: `n_gpus = count_gpus()` went above the strategy line and its
    `print("Found %d GPUs" % n_gpus)` stayed under the scope, after the model."""
    source = (
        "from keras.utils import multi_gpu_model\n\nbase = build()\n\nn_gpus = 2\nprint('Found %d GPUs' % n_gpus)\n"
        "if n_gpus > 1:\n    train = multi_gpu_model(base, gpus=n_gpus)\nelse:\n    train = base\n"
        "train.compile('adam', 'mse')\n"
    )
    output = transform_source(source.encode(), "t.py").output.decode()
    assert "n_gpus = 2\nprint('Found %d GPUs' % n_gpus)\nif n_gpus > 1:\n    strategy = " in output
