"""Each precondition of a rewrite (preconditions.py): the shapes that break it are left unchanged
and reported at the object involved; the neighbouring shapes that satisfy it are rewritten."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from multi_gpu_codemod import CODES, transform_source
from multi_gpu_codemod.preconditions import PRECONDITIONS
from multi_gpu_codemod.sites import format_sites, sites_json

HEADER = (
    "from keras.utils import multi_gpu_model\nfrom keras.layers import Dense, Input\nfrom keras.models import Model\n"
)


def _run(body: str):
    source = (HEADER + textwrap.dedent(body)).encode()
    return source, transform_source(source, "t.py")


def _reported(body: str) -> list[tuple[int, str, str]]:
    source, result = _run(body)
    assert result.output == source, "a site breaking a precondition is left as it is"
    return [(f.line, f.code, f.message) for f in result.findings]


def test_every_precondition_has_a_documented_code_and_a_row_in_the_table():
    guide = (Path(__file__).resolve().parents[2] / "MIGRATION.md").read_text()
    table = guide.split("## When the codemod rewrites, and what it reports instead", 1)[1].split("\n## ", 1)[0]
    assert [p.code for p in PRECONDITIONS if p.code not in CODES] == []
    assert [p.code for p in PRECONDITIONS if f"| {p.code} | {p.holds_when} |" not in table] == []


def test_template_assigned_only_inside_an_if_is_reported_at_that_assignment():
    findings = _reported("""
        class Trainer:
            def train(self, extra, x, y):
                if extra:
                    self.net = build()
                self.parallel = multi_gpu_model(self.net, gpus=2)
                self.parallel.compile("sgd", "mse")
    """)
    assert [(line, code) for line, code, _ in findings] == [(8, "MGPU112")]
    assert "`self.net` is assigned here only on some paths (inside the `if` on line 7)" in findings[0][2]
    assert "call on line 9" in findings[0][2]


def test_template_built_above_a_try_that_may_reload_it_goes_under_the_scope():
    source, result = _run("""
        def build(path):
            inp = Input((4,))
            model = Model(inp, Dense(3)(inp))
            try:
                model = load(path)
            except IOError:
                pass
            parallel = multi_gpu_model(model, gpus=2)
            parallel.compile("sgd", "mse")
    """)
    out = result.output.decode()
    assert "    with strategy.scope():\n        inp = Input((4,))\n" in out
    assert "        try:\n            model = load(path)\n" in out
    assert [s.status for s in result.sites] == ["rewritten"]


@pytest.mark.parametrize("use,line", [("out = Dense(2)(backbone.output)\n    model = Model(backbone.input, out)", 6),
                                      ("feats = backbone(inp)\n    model = Model(inp, Dense(2)(feats))", 6)])
def test_a_parameter_used_as_a_layer_or_model_is_reported_at_its_use(use, line):
    findings = _reported(f"""
def build(backbone, inp, x, y):
    {use}
    parallel = multi_gpu_model(model, gpus=2)
    parallel.compile("sgd", "mse")
""")
    assert [(f[0], f[1]) for f in findings] == [(line, "MGPU113")]
    assert findings[0][2].startswith("`backbone` is a parameter of `build`: its caller builds it")


def test_a_builder_function_passed_as_parameter_is_not_a_caller_object():
    _, result = _run("""
        def train(make_model, x, y):
            model = make_model()
            parallel = multi_gpu_model(model, gpus=2)
            parallel.compile("sgd", "mse")
    """)
    assert result.changed and [f.code for f in result.findings] == []


def test_call_inside_its_own_strategy_scope_keeps_that_strategy_and_adds_none():
    source, result = _run("""
        import tensorflow as tf
        strat = tf.distribute.MirroredStrategy()
        with strat.scope():
            inp = Input((4,))
            model = Model(inp, Dense(3)(inp))
            parallel = multi_gpu_model(model, gpus=2)
            parallel.compile("sgd", "mse")
        parallel.fit(x, y)
    """)
    out = result.output.decode()
    assert "MirroredStrategy(" in out and out.count("MirroredStrategy(") == 1
    assert out.count(".scope()") == 1
    assert "    model.compile(\"sgd\", \"mse\")\nmodel.fit(x, y)\n" in out


def test_own_scope_not_covering_the_construction_is_reported():
    findings = _reported("""
        import tensorflow as tf
        inp = Input((4,))
        model = Model(inp, Dense(3)(inp))
        strat = tf.distribute.MirroredStrategy()
        with strat.scope():
            parallel = multi_gpu_model(model, gpus=2)
            parallel.compile("sgd", "mse")
    """)
    assert [(f[0], f[1]) for f in findings] == [(10, "MGPU114")]
    assert "inside `with strat.scope():` (line 9), but line 6" in findings[0][2]


def test_head_on_the_parallel_model_goes_under_the_scope_with_its_compile():
    _, result = _run("""
        def main(x, y):
            inp = Input((4,))
            b = Model(inp, Dense(3)(inp))
            b = multi_gpu_model(b, 4)
            head = Dense(2)(b.output)
            full = Model(b.input, head)
            full.compile("sgd", "mse")
            full.fit(x, y)
    """)
    out = result.output.decode()
    assert "        head = Dense(2)(b.output)\n        full = Model(b.input, head)\n        full.compile(" in out
    assert "    full.fit(x, y)" in out
    assert [f.code for f in result.findings] == []  # no "no compile follows"


def test_device_settings_before_the_model_stay_before_the_strategy_line():
    _, result = _run("""
        import os
        import tensorflow as tf
        def main(gpu):
            inp = Input((4,))
            os.environ["CUDA_VISIBLE_DEVICES"] = gpu
            for g in tf.config.list_physical_devices("GPU"):
                tf.config.experimental.set_memory_growth(g, True)
            model = Model(inp, Dense(3)(inp))
            parallel = multi_gpu_model(model, gpus=2)
            parallel.compile("sgd", "mse")
    """)
    out = result.output.decode()
    assert out.index('os.environ["CUDA_VISIBLE_DEVICES"] = gpu') < out.index("strategy = ")
    assert out.index("set_memory_growth") < out.index("strategy = ")


def test_a_device_setting_that_reads_the_model_is_reported():
    findings = _reported("""
        import os
        def main(x):
            inp = Input((4,))
            os.environ["CUDA_VISIBLE_DEVICES"] = str(inp.shape[0])
            model = Model(inp, Dense(3)(inp))
            parallel = multi_gpu_model(model, gpus=2)
            parallel.compile("sgd", "mse")
    """)
    assert [(f[0], f[1]) for f in findings] == [(8, "MGPU115")]
    assert findings[0][2].startswith('`os.environ["CUDA_VISIBLE_DEVICES"]` (line 8) changes the devices')


def test_gpu_count_from_a_device_listing_function_moves_above_the_strategy():
    _, result = _run("""
        from tensorflow.python.client import device_lib
        def get_available_gpus():
            return [d.name for d in device_lib.list_local_devices() if d.device_type == "GPU"]
        def main():
            inp = Input((4,))
            G = len(get_available_gpus())
            model = Model(inp, Dense(3)(inp))
            parallel = multi_gpu_model(model, gpus=G)
            parallel.compile("sgd", "mse")
    """)
    out = result.output.decode()
    assert out.index("G = len(get_available_gpus())") < out.index("strategy = ") < out.index("inp = Input")
    assert [f.code for f in result.findings] == []


def test_metrics_list_of_strings_and_functions_is_not_an_object_and_module_optimizer_is_named():
    _, result = _run("""
        def rmse(a, b):
            return a - b
        def main():
            metrics = ["accuracy", rmse]
            inp = Input((4,))
            model = Model(inp, Dense(3)(inp))
            parallel = multi_gpu_model(model, gpus=2)
            parallel.compile("sgd", "mse", metrics=metrics)
    """)
    assert result.changed and [f.code for f in result.findings] == []
    findings = _reported("""
        from keras import optimizers
        opt = optimizers.adam(lr=0.1)
        def main():
            inp = Input((4,))
            model = Model(inp, Dense(3)(inp))
            parallel = multi_gpu_model(model, gpus=2)
            parallel.compile(opt, "mse", metrics=["accuracy"])
    """)
    assert [(f[0], f[1]) for f in findings] == [(6, "MGPU109")]
    assert findings[0][2].startswith("`opt` is created here, at module level")


def test_same_count_in_both_branches_gets_one_strategy():
    _, result = _run("""
        inp = Input((4,))
        model = Model(inp, Dense(3)(inp))
        if flag:
            parallel = multi_gpu_model(model, gpus=2)
        else:
            parallel = multi_gpu_model(model, gpus=2)
        parallel.compile("sgd", "mse")
    """)
    out = result.output.decode()
    assert out.count("MirroredStrategy(") == 1 and "flag" not in out.split("with strategy")[0]
    assert [f.code for f in result.findings] == []
    assert [s.status for s in result.sites] == ["rewritten", "rewritten"]


def test_own_method_named_make_parallel_is_not_the_copied_helper():
    source, result = _run("""
        class Net:
            def make_parallel(self, m, gpus):
                return multi_gpu_model(m, gpus)
            def build(self):
                inp = Input((4,))
                model = Model(inp, Dense(3)(inp))
                self.p = self.make_parallel(model, 2)
    """)
    assert result.output == source
    assert [(f.line, f.code) for f in result.findings] == [(7, "MGPU101")]
    assert result.findings[0].message.startswith("`m` is a parameter of `make_parallel`")


def test_star_imported_helper_is_reported_with_the_import_line():
    source = b"from helpers import *\n\nmodel = build()\nparallel = make_parallel(model, 2)\n"
    result = transform_source(source, "t.py")
    assert result.output == source
    assert [(f.line, f.code) for f in result.findings] == [(4, "MGPU111")]
    assert "only `from helpers import *` (line 1) can bring it" in result.findings[0].message
    assert [(s.line, s.name, s.status, s.codes) for s in result.sites] == [(4, "make_parallel", "reported",
                                                                             ("MGPU111",))]


@pytest.mark.parametrize("second", ["'w.h5'", "'w_{}.h5'.format(epoch)", "os.path.join(out, 'w.h5')",
                                    "out + '/w.h5'", "str(path)", "f'{out}/w.h5'"])
def test_checkpoint_callback_with_a_path_is_not_a_wrapper(second):
    source = f"from utils import ParallelModelCheckpoint\n\ncb = ParallelModelCheckpoint(model, {second})\n".encode()
    assert transform_source(source, "t.py").findings == []


@pytest.mark.parametrize("count", ["len(os.environ['CUDA_VISIBLE_DEVICES'].split(','))", "G", "args.gpus", "2"])
def test_star_imported_helper_with_a_count_read_from_text_is_still_reported(count):
    source = f"from helpers import *\n\nparallel = make_parallel(model, {count})\n".encode()
    assert [(f.line, f.code) for f in transform_source(source, "t.py").findings] == [(3, "MGPU111")]


def test_contrib_strategy_feeding_a_custom_estimator_is_reported_not_rewritten():
    source = textwrap.dedent("""
        import tensorflow as tf
        def main():
            strategy = tf.contrib.distribute.MirroredStrategy(num_gpus=2)
            config = tf.estimator.RunConfig(train_distribute=strategy)
            est = tf.estimator.Estimator(model_fn=model_fn, config=config)
    """).encode()
    result = transform_source(source, "t.py")
    assert result.output == source
    assert [(f.line, f.code) for f in result.findings] == [(4, "MGPU605")]
    assert "`tf.estimator` is gone in TensorFlow 2.16" in result.findings[0].message


def test_on_batch_in_another_method_and_session_through_a_tensor_name_are_reported():
    _, result = _run("""
        import keras.backend as K
        class GAN:
            def __init__(self):
                inp = Input((4,))
                model = Model(inp, Dense(3)(inp))
                self.model = multi_gpu_model(model, gpus=2)
                self.model.compile("sgd", "mse")
                out = self.model.output
                self.y = K.get_session().run(out, feed_dict={inp: 1})
            def step(self, x, y):
                return self.model.train_on_batch(x, y)
    """)
    # `self.model.train_on_batch` in another method keeps the site (MGPU203, at the call, naming line 15).
    assert [(f.line, f.code) for f in result.findings] == [(10, "MGPU203")]
    assert "`self.model.train_on_batch(...)` (line 15)" in result.findings[0].message
    assert "`self.model.fit(x, y, batch_size=len(x)" in result.findings[0].message


def test_session_through_a_tensor_name_is_reported_after_the_rewrite():
    _, result = _run("""
        import keras.backend as K
        def main():
            inp = Input((4,))
            model = Model(inp, Dense(3)(inp))
            parallel = multi_gpu_model(model, gpus=2)
            parallel.compile("sgd", "mse")
            out = parallel.output
            return K.get_session().run(out, feed_dict={inp: 1})
    """)
    assert [(f.line, f.code) for f in result.findings] == [(12, "MGPU204")]
    assert result.findings[0].message.startswith("`out` holds `parallel.output` (line 11)")


def test_site_statuses_format_for_the_summary_and_json():
    _, result = _run("""
        def main(backbone):
            model = Model(backbone.input, Dense(2)(backbone.output))
            parallel = multi_gpu_model(model, gpus=2)
            parallel.compile("sgd", "mse")
        def ok():
            inp = Input((4,))
            model = Model(inp, Dense(3)(inp))
            parallel = multi_gpu_model(model, gpus=2)
            parallel.compile("sgd", "mse")
    """)
    assert format_sites(result.sites, "t.py") == [
        "t.py:7:16: multi_gpu_model reported (MGPU113)",
        "t.py:12:16: multi_gpu_model rewritten",
    ]
    assert sites_json(result.sites)[0] == {"line": 7, "col": 16, "name": "multi_gpu_model", "status": "reported",
                                           "codes": ["MGPU113"]}


def test_session_configured_before_the_model_stays_before_the_strategy_line_with_its_config():
    _, result = _run("""
        import tensorflow as tf
        import keras.backend as K
        inp = Input((4,))
        config = tf.ConfigProto()
        config.gpu_options.allow_growth = True
        K.set_session(tf.Session(config=config))
        model = Model(inp, Dense(3)(inp))
        parallel = multi_gpu_model(model, gpus=2)
        parallel.compile("sgd", "mse")
    """)
    out = result.output.decode()
    lines = ["config = tf.ConfigProto()", "config.gpu_options.allow_growth = True", "K.set_session(", "strategy = ",
             "    inp = Input((4,))"]
    assert [out.index(line) for line in lines] == sorted(out.index(line) for line in lines)


def test_site_lines_found_by_text_agree_with_positions_on_the_corpus():
    from multi_gpu_codemod._tree import Tree
    from multi_gpu_codemod.fix_context import FixContext
    from multi_gpu_codemod.recognise import find_sites
    from multi_gpu_codemod.sites import site_statuses

    import libcst as cst

    corpus = Path(__file__).resolve().parents[2] / "fixtures" / "realworld"
    checked = 0
    for path in sorted(corpus.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        statuses = []
        for source in (text, None):  # by text, then by libcst positions (a fresh parse each)
            tree = Tree(cst.parse_module(text))
            sites, helpers = find_sites(tree)
            statuses.append(site_statuses(FixContext(tree, sites, helpers), source))
        assert statuses[0] == statuses[1], path
        checked += len(statuses[0])
    assert checked >= 60


def test_a_backbone_built_in_init_and_read_in_another_method_is_reported():
    findings = _reported("""
        class FineTuner:
            def __init__(self):
                self.base = VGG16(weights=None, include_top=False)
            def build(self):
                out = Dense(2)(self.base.output)
                self.model = Model(self.base.input, out)
                self.parallel = multi_gpu_model(self.model, gpus=2)
                self.parallel.compile("sgd", "mse")
    """)
    assert [(f[0], f[1]) for f in findings] == [(9, "MGPU113")]
    assert findings[0][2].startswith("`self.base` is assigned in another method (line 7)")


def test_model_built_before_the_scope_past_an_unrelated_object_is_reported_at_it():
    path = Path(__file__).resolve().parents[2] / "fixtures" / "codemod" / "strategy_scope"
    source = (path / "encoder_layers_reused_past_other_model.unchanged.py").read_bytes()
    result = transform_source(source, "t.py")
    assert result.output == source
    assert [(f.line, f.code) for f in result.findings] == [(8, "MGPU118")]
    message = result.findings[0].message
    assert "`encoder` is built on line 8" in message and "line 9 (`critic = build_critic()`)" in message
    assert "Build `encoder` right before `net`" in message


def test_model_built_before_the_scope_over_plain_data_is_covered_by_it():
    source, result = _run("""
        inp = Input((4,))
        base = Model(inp, Dense(3)(inp))
        SIZE = 8
        head = Sequential()
        head.add(base)
        head.add(Dense(SIZE))
        parallel = multi_gpu_model(head, gpus=2)
        parallel.compile("sgd", "mse")
    """)
    assert result.findings == []
    assert "with strategy.scope():\n    inp = Input((4,))\n    base = Model(" in result.output.decode()


def test_model_compiled_by_the_caller_is_reported_and_left():
    path = Path(__file__).resolve().parents[2] / "fixtures" / "codemod" / "strategy_scope"
    source = (path / "compiled_by_caller.unchanged.py").read_bytes()
    result = transform_source(source, "t.py")
    assert result.output == source
    assert [(f.line, f.code) for f in result.findings] == [(9, "MGPU202")]
    assert "no `net.compile(...)` follows in this function" in result.findings[0].message
    assert "Compile the call's result in this function after the call" in result.findings[0].message


def test_two_sites_sharing_a_model_one_cannot_cover_are_both_left():
    path = Path(__file__).resolve().parents[2] / "fixtures" / "codemod" / "strategy_scope"
    source = (path / "two_models_sharing_a_critic.unchanged.py").read_bytes()
    result = transform_source(source, "t.py")
    assert result.output == source
    assert [(f.line, f.code) for f in result.findings] == [(10, "MGPU118"), (12, "MGPU118")]
    first, second = (f.message for f in result.findings)
    assert "`self.gen` is built on line 10" in first and "line 13 (`self.critic_gpu.compile" in first
    assert "is also used by the `multi_gpu_model` call on line 17" in second


@pytest.mark.parametrize("loss_import, loss", [
    ("from keras.losses import Huber", "Huber(delta=0.5)"),
    ("from tensorflow.keras.losses import Huber as H", "H(delta=0.5)"),
    ("import keras", "keras.losses.Huber(delta=0.5)"),
])
def test_module_level_loss_object_is_not_blamed_the_metric_object_is(loss_import, loss):
    findings = _reported(f"""
        {loss_import}
        from keras.metrics import AUC
        LOSS = {loss}
        AUC_METRIC = AUC(name='auc')
        def build():
            model = Model(inp, Dense(1)(inp))
            parallel = multi_gpu_model(model, gpus=2)
            parallel.compile(optimizer='adam', loss=LOSS, metrics=[AUC_METRIC])
            return parallel
    """)
    assert [(f[0], f[1]) for f in findings] == [(8, "MGPU109")]  # the AUC_METRIC line
    assert findings[0][2].startswith("`AUC_METRIC` is created here, at module level")


def test_module_level_loss_object_alone_does_not_keep_the_site():
    source, result = _run("""
        from keras.losses import Huber
        LOSS = Huber(delta=0.5)
        def build():
            inp = Input((4,))
            model = Model(inp, Dense(1)(inp))
            parallel = multi_gpu_model(model, gpus=2)
            parallel.compile(optimizer='adam', loss=LOSS)
            return parallel
    """)
    assert result.changed and result.findings == []


def test_no_compile_says_what_was_seen_instead():
    # A custom training loop calls the model; a helper receives it (and may compile it).
    head = ("from keras.layers import Dense\nfrom keras.models import Sequential\nfrom keras.utils import "
            "multi_gpu_model\nnet = Sequential([Dense(1, input_shape=(2,))])\nwide = multi_gpu_model(net, gpus=2)\n")
    loop = transform_source((head + "for xb in batches:\n    out = wide(xb, training=True)\n").encode(), "t.py")
    message = next(f.message for f in loop.findings if f.code == "MGPU202")
    assert "`wide` is called directly on line 7" in message and "strategy.run" in message
    assert "Compile `wide`" not in message  # a compile is not the fix for a custom loop
    helper = transform_source((head + "setup(wide, lr=0.1)\nwide.fit(x, y)\n").encode(), "h.py")
    message = next(f.message for f in helper.findings if f.code == "MGPU202")
    assert "`setup(...)` on line 6 receives the model and may compile it" in message


def test_a_count_computed_from_the_model_is_not_told_to_move_first():
    source = (
        "from keras.layers import Dense\nfrom keras.models import Sequential\nfrom keras.utils import "
        "multi_gpu_model\nnet = Sequential([Dense(4, input_shape=(3,))])\n"
        "n = 2 if net.count_params() > 10 else 1\nwide = multi_gpu_model(net, gpus=n)\nwide.compile('sgd', 'mse')\n"
    )
    (finding,) = [f for f in transform_source(source.encode(), "t.py").findings if f.code == "MGPU105"]
    assert "it reads `net`, built in that code, so it cannot come first" in finding.message
    assert "assign `n` before that line" not in finding.message


def test_a_retry_loop_with_fewer_gpus_is_named_as_such():
    source = (
        b"from keras.utils import multi_gpu_model\n\ngpus = 4\nmodel = build()\nparallel = model\n"
        b"while gpus > 1:\n    try:\n        parallel = multi_gpu_model(model, gpus=gpus)\n        break\n"
        b"    except ValueError:\n        gpus -= 1\nparallel.compile('adam', 'mse')\n"
    )
    (finding,) = [f for f in transform_source(source).findings if f.code == "MGPU105"]
    assert finding.message.startswith("the call sits in a loop (line 6) that changes `gpus` and calls it again")
    assert "`strategy = tf.distribute.MirroredStrategy()`" in finding.message
    assert "reads `model`" not in finding.message  # the count's `gpus -= 1` reads no model


def test_no_compile_names_a_method_that_receives_the_model_and_each_name_once():
    source = (
        b"from keras.utils import multi_gpu_model\n\n\nclass Net:\n    def __init__(self):\n"
        b"        self.model = build()\n        self.model = multi_gpu_model(self.model, gpus=2)\n"
        b"        self.compile_net(self.model)\n\n    def compile_net(self, model):\n"
        b"        model.compile('adam', 'mse')\n"
    )
    (finding,) = [f for f in transform_source(source).findings if f.code == "MGPU202"]
    assert finding.message.startswith("no `self.model.compile(...)` follows in this function")
    assert "`self.compile_net(...)` on line 8 receives the model and may compile it" in finding.message


def test_on_batch_in_a_module_function_reading_the_global_model_is_reported():
    # round 28, ya07: a module-level GAN trained by `def train(): disc_mgpu.train_on_batch(...)`
    _, result = _run("""
        disc = build()
        disc_mgpu = multi_gpu_model(disc, gpus=2)
        disc_mgpu.compile("adam", "mse")
        def train(x, steps=10):
            for step in range(steps):
                disc_mgpu.train_on_batch(x, x)
    """)
    assert [(f.line, f.code) for f in result.findings] == [(6, "MGPU203")]
    assert "`disc_mgpu.train_on_batch(...)` (line 10)" in result.findings[0].message


def test_a_module_function_with_its_own_model_of_that_name_does_not_stop_the_rewrite():
    out, result = _run("""
        disc = build()
        disc_mgpu = multi_gpu_model(disc, gpus=2)
        disc_mgpu.compile("adam", "mse")
        disc_mgpu.fit(x, y)
        def evaluate(disc_mgpu, x):
            return disc_mgpu.test_on_batch(x, x)
    """)
    assert [f.code for f in result.findings] == [] and b"strategy.scope()" in result.output


def test_on_batch_in_a_caller_of_the_builder_that_returned_the_model_is_reported():
    # round 29, za06: `gen, disc, disc_train, combined = build_gan(cfg)` then
    # `disc_train.train_on_batch(...)`; and `predict_on_batch` on 8 inputs would return 16 rows
    _, result = _run("""
        def build(gpus):
            model = make()
            parallel = multi_gpu_model(model, gpus=gpus)
            parallel.compile("adam", "mse")
            return model, parallel
        def main():
            model, parallel = build(2)
            parallel.fit(x, y)
            return parallel.predict_on_batch(x[:8])
    """)
    assert [(f.line, f.code) for f in result.findings] == [(7, "MGPU203")]
    assert "`parallel.predict_on_batch(...)` (line 13, given the model on line 11)" in result.findings[0].message


def test_a_method_patched_on_the_parallel_model_keeps_the_site():
    """Round 33, pa15: `parallel.save = type(model.save)(_save, parallel)` redirected the save to the
    template; renamed, the patch made `model.save` call itself (RecursionError at the save)."""
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\nparallel = multi_gpu_model(model, gpus=2)\n\n\n"
        "def _save(self_, *args, **kwargs):\n    model.save(*args, **kwargs)\n\n\n"
        "parallel.save = type(model.save)(_save, parallel)\nparallel.compile('adam', 'mse')\nparallel.fit(x, y)\n"
        "parallel.save('m.h5')\n"
    )
    result = transform_source(source.encode(), "t.py")
    assert result.output == source.encode()
    assert [(f.line, f.code) for f in result.findings] == [(11, "MGPU121")]
    assert "Remove the replacement (and the function it installs) and rerun" in result.findings[0].message
    # Keras 2's `callback_model` hack is no patched method: it goes with the rewrite
    hack = source.replace("parallel.save = type(model.save)(_save, parallel)", "parallel.callback_model = model")
    assert transform_source(hack.encode(), "t.py").changed


@pytest.mark.parametrize("flag", ["parallel.trainable = False", "parallel.stop_training = True"])
def test_a_flag_set_on_the_parallel_model_is_no_patched_method(flag):
    """Round 47, af04: `disc.trainable = False`, a GAN freezing its discriminator, was reported as
    a replaced method (MGPU121, with advice that would break the GAN) and the site left."""
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\nparallel = multi_gpu_model(model, gpus=2)\n"
        f"parallel.compile('adam', 'mse')\n{flag}\ncombined = Model(z, parallel(gen(z)))\n"
        "combined.compile('adam', 'mse')\n"
    )
    result = transform_source(source.encode(), "t.py")
    assert result.changed and not [f for f in result.findings if f.code == "MGPU121"]
    assert f"    {flag.replace('parallel', 'model')}\n" in result.output.decode()


@pytest.mark.parametrize("patch,left", [
    ("parallel.save = lambda *a, **k: model.save(*a, **k)", True),  # migrated: RecursionError at the save
    ("parallel.save = model.save", True),  # migrated: `model.save = model.save`, a no-op left in the diff
    ("print(parallel.name)", False),  # reads the parameter, patches nothing
])
def test_a_method_patched_by_a_helper_the_parallel_model_is_handed_to_keeps_the_site(patch, left):
    # round 43, da20: `parallel_model = patch_save(parallel_model, model)`, where `patch_save`
    # replaced `save` on its parameter: the direct assignment was reported, the helper's was not
    source = (
        "from keras.utils import multi_gpu_model\n\n\ndef patch_save(parallel, model):\n"
        f"    {patch}\n    return parallel\n\n\nmodel = build()\n"
        "parallel_model = multi_gpu_model(model, gpus=2)\npatch_save(parallel_model, model)\n"
        "parallel_model.compile('adam', 'mse')\nparallel_model.fit(x, y)\n"
    )
    result = transform_source(source.encode(), "t.py")
    assert (result.output == source.encode()) == left
    if left:
        assert [(f.line, f.code) for f in result.findings] == [(5, "MGPU121")]
        assert "(it receives that model on line 11)" in result.findings[0].message


@pytest.mark.parametrize("use,rewritten", [
    ("scores = model.predict(batch, batch_size=256)\n", True),  # inference: no compile to cover
    ("model.fit(batch, labels)\n", False),  # trained without a compile here: MGPU202
    ("scores = run(model, batch)\n", False),  # handed on: it may be compiled or trained there
    ("scores = model.predict(batch)\nregistry['scorer'] = model\n", False),  # stored: compiled elsewhere?
])
def test_a_model_only_used_for_prediction_needs_no_compile(use, rewritten):
    # round 43, db20: an inference script (`model_from_json`, `load_weights`, the wrap, `predict`)
    # was left with MGPU202, asking for a compile it does not need
    source = (
        "from keras.models import model_from_json\nfrom keras.utils import multi_gpu_model\n\n"
        "with open('arch.json') as fh:\n    model = model_from_json(fh.read())\nmodel.load_weights('w.h5')\n"
        "model = multi_gpu_model(model, gpus=2)\n" + use
    )
    result = transform_source(source.encode(), "t.py")
    assert result.changed == rewritten
    if rewritten:
        assert "with strategy.scope():\n    with open('arch.json') as fh:\n" in result.output.decode()
        assert "    model.load_weights('w.h5')\n" in result.output.decode()
    else:
        assert [f.code for f in result.findings] == ["MGPU202"]
        assert "follows in this file" in result.findings[0].message


def test_a_builder_that_predicts_and_returns_the_model_still_needs_its_compile():
    # the caller may compile and fit what it gets, outside any scope the codemod could open here
    source = (
        "from keras.models import model_from_json\nfrom keras.utils import multi_gpu_model\n\n\n"
        "def scorer(arch, n):\n    model = model_from_json(arch)\n    parallel = multi_gpu_model(model, gpus=n)\n"
        "    print(parallel.predict(probe))\n    return parallel\n"
    )
    result = transform_source(source.encode(), "t.py")
    assert not result.changed and [f.code for f in result.findings] == ["MGPU202"]
