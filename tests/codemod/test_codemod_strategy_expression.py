"""codemod/strategy_expression.py: the house-style strategy forms, pinned, and what each selects."""

import ast
import json
import re
import subprocess
import sys
import textwrap

import libcst as cst
import pytest

from child_process import child_env, simulated_gpus_env
from codemod_fixtures import ROOT, check_pair, check_source_pair, check_unchanged, needs_tensorflow, pairs
from codemod_fixtures import strategy_devices, unchanged
from multi_gpu_codemod import transform_source
from multi_gpu_codemod.strategy_expression import KeptCondition, StrategyCode, count_or_list, strategy_expression

LOGICAL = 'tf.config.list_logical_devices("GPU")'


@pytest.mark.parametrize("before", pairs("gpus"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    check_pair(before)


@pytest.mark.parametrize("path", unchanged("gpus"), ids=lambda p: p.name)
def test_unchanged_but_reported(path):
    check_unchanged(path)


def _expression(gpus, guards=(), known_int=False):
    node = None if gpus is None else cst.parse_expression(gpus)
    return strategy_expression("tf", node, list(guards), known_int=known_int)


# gpus source -> the strategy expression, for every canonical form without a guard.
FORMS = {
    None: "tf.distribute.MirroredStrategy()",
    "len(get_available_gpus())": "tf.distribute.MirroredStrategy()",
    'len(tf.config.list_physical_devices("GPU"))': "tf.distribute.MirroredStrategy()",
    "context.num_gpus()": "tf.distribute.MirroredStrategy()",
    "len(K.tensorflow_backend._get_available_gpus())": "tf.distribute.MirroredStrategy()",
    'len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))': "tf.distribute.MirroredStrategy()",
    "2": f"tf.distribute.MirroredStrategy({LOGICAL}[:2])",
    "n_gpus": f"tf.distribute.MirroredStrategy({LOGICAL}[:n_gpus])",
    "args.gpus": f"tf.distribute.MirroredStrategy({LOGICAL}[:args.gpus])",
    "n - 1": f"tf.distribute.MirroredStrategy({LOGICAL}[:(n - 1)])",
    "[0, 1]": f"tf.distribute.MirroredStrategy({LOGICAL}[:2])",  # the first two GPUs: a count
    "(0, 1, 2, 3)": f"tf.distribute.MirroredStrategy({LOGICAL}[:4])",
    "[0, 1, 3]": f"tf.distribute.MirroredStrategy([{LOGICAL}[i] for i in [0, 1, 3]])",
    "[1, 0]": f"tf.distribute.MirroredStrategy([{LOGICAL}[i] for i in [1, 0]])",
    "GPU_IDS": f"tf.distribute.MirroredStrategy([{LOGICAL}[i] for i in GPU_IDS])",
}


@pytest.mark.parametrize("gpus", list(FORMS), ids=str)
def test_each_gpus_argument_has_one_plain_form(gpus):
    code = _expression(gpus)
    assert code == FORMS[gpus] and code.branch is None
    # Never a nested comprehension, an `isinstance`, or a condition inside the expression.
    tree = ast.parse(str(code))
    assert not any(isinstance(n, (ast.IfExp, ast.Call)) and getattr(getattr(n, "func", None), "id", "") == "isinstance"
                   for n in ast.walk(tree))
    assert all(len(c.generators) == 1 for c in ast.walk(tree) if isinstance(c, ast.ListComp))
    assert not any(isinstance(n, ast.IfExp) for n in ast.walk(tree))


def test_a_list_of_ids_is_indexed_with_no_comment_of_the_tools():
    # round 54, ar19: "# Indexed, not named: ..." above it read as the tool's voice (MIGRATION.md says why)
    assert _expression("[0, 2]") == f"tf.distribute.MirroredStrategy([{LOGICAL}[i] for i in [0, 2]])"
    assert not hasattr(_expression("[0, 2]"), "comment")


@pytest.mark.parametrize("gpus,kind", [
    ("2", "count"), ("len(ids)", "count"), ("n // 2", "count"),
    ("G", "count?"), ("cfg['gpus']", "count?"), ("self.n_gpus", "count?"),
    ("GPU_IDS", "list?"), ("gpu_list", "list?"), ("args.devices", "list?"), ("[a, b]", "list"),
])
def test_count_or_list_decides_from_the_code_then_from_the_name(gpus, kind):
    assert count_or_list(cst.parse_expression(gpus), []) == kind


def test_a_guard_ordering_the_variable_against_a_number_proves_a_count():
    node = cst.parse_expression("G")
    assert count_or_list(node, ["G > 1"]) == "count"
    assert count_or_list(node, ["not (G <= 1)"]) == "count"
    assert count_or_list(node, ["use_all"]) == "count?"
    assert count_or_list(node, [], known_int=True) == "count"


def test_a_guessed_kind_is_handed_to_the_caller_to_report():
    assert _expression("G").guessed == (
        "`gpus=G` is taken for a count of GPUs: its name says so, and no value it is given here proves it; if it holds "
        'GPU ids, pass `[tf.config.list_logical_devices("GPU")[i] for i in G]` to '
        "`MirroredStrategy` instead."
    )
    assert "taken for a list of GPU ids" in _expression("GPU_IDS").guessed
    assert _expression("args.gpus", known_int=True).guessed == ""
    assert _expression("G", ["G > 1"]).guessed == ""


def test_an_undecided_kind_is_rewritten_and_reported_at_the_call():
    # `make(gpus)` is never called in its file: a count or GPU ids, nothing says which (MGPU117).
    before = (
        "from keras.utils import multi_gpu_model\n\n"
        "def make(gpus):\n"
        "    model = build()\n"
        "    parallel = multi_gpu_model(model, gpus=gpus)\n"
        "    parallel.compile('sgd', 'mse')\n"
        "    return parallel\n"
    )
    result = transform_source(before.encode(), "make.py")
    assert f"MirroredStrategy({LOGICAL}[:gpus])" in result.output.decode()
    assert [(f.line, f.code) for f in result.findings] == [(5, "MGPU117")]
    assert "if it holds GPU ids, pass `[tf.config.list_logical_devices(\"GPU\")[i] for i in gpus]`" in (
        result.findings[0].message)
    # A call in the file that passes a count decides it: rewritten, nothing reported.
    decided = transform_source((before + "make(2)\n").encode(), "make.py")
    assert decided.changed and decided.findings == []


@pytest.mark.parametrize("binding,reported", [
    ("MAXLEN, VOCAB, NUM_GPU = 150, 50000, 2", False),  # round 49, aj10: a tuple assignment gives the count
    ("[MAXLEN, NUM_GPU] = [150, 2]", False),
    ("MAXLEN, NUM_GPU = settings()", True),  # nothing says which
    ("MAXLEN, *NUM_GPU = 150, 2, 3", True),
])
def test_a_count_given_by_tuple_assignment_is_a_count(binding, reported):
    before = (
        f"from keras.utils import multi_gpu_model\n\n{binding}\nmodel = build()\n"
        "parallel = multi_gpu_model(model, gpus=NUM_GPU)\nparallel.compile('sgd', 'mse')\n"
    )
    result = transform_source(before.encode(), "t.py")
    assert result.changed
    assert [f.code for f in result.findings] == (["MGPU117"] if reported else [])


def test_a_guard_chooses_the_strategy_with_the_scripts_condition_once():
    code = _expression("n_gpus", ["n_gpus > 1"])
    assert code == StrategyCode(f"tf.distribute.MirroredStrategy({LOGICAL}[:n_gpus])", branch=code.branch)
    assert code.branch is not None and code.branch.condition == "n_gpus > 1" and code.branch.multi_when_true
    assert code.branch.single == "tf.distribute.get_strategy()"
    # An `else:` branch's guard comes as `not (c)`: the strategy is chosen with `if c:`, not negated.
    negated = _expression("G", ["not (G <= 1)"])
    assert negated.branch is not None and negated.branch.condition == "G <= 1"
    assert not negated.branch.multi_when_true
    # Several guards: each as written, parenthesised only where `and` would change it.
    both = _expression("G", ["G > 1", "a or b"])
    assert both.branch is not None and both.branch.condition == "G > 1 and (a or b)"


@pytest.mark.parametrize("guard", ["n > 1", "n >= 2", "1 < n", "2 <= n", "not (n <= 1)", "not (n < 2)"])
def test_a_kept_more_than_one_gpu_condition_is_not_written_again(guard):
    # The script's own `if` stays around the site: its condition is not copied into the strategy
    # code; `max(n, 1)` selects one device exactly where the condition is false (`[:0]` is every GPU).
    code = _expression("n", [KeptCondition(guard)])
    assert code == f"tf.distribute.MirroredStrategy({LOGICAL}[:max(n, 1)])" and code.branch is None
    # A count that is surely at least one needs no `max`.
    positive = strategy_expression("tf", cst.parse_expression("n"), [KeptCondition(guard)], positive=True)
    assert positive == f"tf.distribute.MirroredStrategy({LOGICAL}[:n])"
    split = _expression("len(a.split(','))", [KeptCondition(re.sub(r"\bn\b", "len(a.split(','))", guard))])
    assert split == f"tf.distribute.MirroredStrategy({LOGICAL}[:len(a.split(','))])"


def test_a_kept_condition_that_is_not_a_gpu_count_stays_a_branch():
    code = _expression("n", [KeptCondition("args.multi_gpu")])
    assert code.branch is not None and code.branch.condition == "args.multi_gpu"


def test_a_kept_condition_and_the_same_written_one_are_one_strategy():
    # Two sites under `if gpus > 1:`, one collapsed, one inside a kept `if`: they share one strategy.
    assert _expression("gpus", ["gpus > 1"]) == _expression("gpus", [KeptCondition("gpus > 1")])
    assert _expression("gpus", ["gpus > 1"]) != _expression("gpus", [KeptCondition("gpus > 2")])


def test_two_codes_differing_in_their_guard_are_different_strategies():
    assert _expression("G", ["G > 1"]) != _expression("G")
    assert _expression("G") == _expression("G") == "tf.distribute.MirroredStrategy(" + f"{LOGICAL}[:G])"


# Before/after tables pinning the layout of each form in a script.
LAYOUT_PAIRS = {
    "count-at-module-level": (
        "from keras.utils import multi_gpu_model\n\n"
        "model = build()\n"
        "model = multi_gpu_model(model, gpus=4)\n"
        "model.compile('sgd', 'mse')\n",
        "import tensorflow as tf\n\n"
        f"strategy = tf.distribute.MirroredStrategy({LOGICAL}[:4])\n"
        "with strategy.scope():\n"
        "    model = build()\n"
        "    model.compile('sgd', 'mse')\n",
    ),
    "long-count-wrapped-like-black": (
        "from keras.utils import multi_gpu_model\n\n"
        "class Trainer:\n"
        "    def build(self):\n"
        "        model = build()\n"
        "        model = multi_gpu_model(model, gpus=self.config.training.number_of_gpus)\n"
        "        model.compile('sgd', 'mse')\n",
        "import tensorflow as tf\n\n"
        "class Trainer:\n"
        "    def build(self):\n"
        "        strategy = tf.distribute.MirroredStrategy(\n"
        f"            {LOGICAL}[:self.config.training.number_of_gpus]\n"
        "        )\n"
        "        with strategy.scope():\n"
        "            model = build()\n"
        "            model.compile('sgd', 'mse')\n",
    ),
    "id-list-indexed-without-a-comment": (  # the index raises where a GPU is missing; no tool's note
        "from keras.utils import multi_gpu_model\n\n"
        "model = build()\n"
        "model = multi_gpu_model(model, gpus=[1, 3])\n"
        "model.compile('sgd', 'mse')\n",
        "import tensorflow as tf\n\n"
        f"gpus = {LOGICAL}\n"
        "strategy = tf.distribute.MirroredStrategy([gpus[1], gpus[3]])\n"
        "with strategy.scope():\n"
        "    model = build()\n"
        "    model.compile('sgd', 'mse')\n",
    ),
    "first-ids-are-a-count": (  # `[0, 1]` names the first two GPUs: the count's form
        "from keras.utils import multi_gpu_model\n\n"
        "model = build()\n"
        "model = multi_gpu_model(model, gpus=[0, 1])\n"
        "model.compile('sgd', 'mse')\n",
        "import tensorflow as tf\n\n"
        f"strategy = tf.distribute.MirroredStrategy({LOGICAL}[:2])\n"
        "with strategy.scope():\n"
        "    model = build()\n"
        "    model.compile('sgd', 'mse')\n",
    ),
    "every-gpu-count-from-the-machine": (
        "from keras.utils import multi_gpu_model\n\n"
        "model = build()\n"
        "model = multi_gpu_model(model, gpus=len(get_available_gpus()))\n"
        "model.compile('sgd', 'mse')\n",
        "import tensorflow as tf\n\n"
        "strategy = tf.distribute.MirroredStrategy()\n"
        "with strategy.scope():\n"
        "    model = build()\n"
        "    model.compile('sgd', 'mse')\n",
    ),
    "two-space-file-keeps-its-unit-in-the-branches": (
        "from keras.utils import multi_gpu_model\n\n"
        "def run(x, n_gpus):\n"
        "  model = build()\n"
        "  if n_gpus > 1:\n"
        "    model = multi_gpu_model(model, gpus=n_gpus)\n"
        "  model.compile('sgd', 'mse')\n",
        "import tensorflow as tf\n\n"
        "def run(x, n_gpus):\n"
        "  if n_gpus > 1:\n"
        "    strategy = tf.distribute.MirroredStrategy(\n"  # (past 92 columns, the file's width: wrapped)
        f"      {LOGICAL}[:n_gpus]\n"
        "    )\n"
        "  else:\n"
        "    strategy = tf.distribute.get_strategy()\n"
        "  with strategy.scope():\n"
        "    model = build()\n"
        "    model.compile('sgd', 'mse')\n",
    ),
}


@pytest.mark.parametrize("name", sorted(LAYOUT_PAIRS))
def test_layout_of_each_form(name):
    before, after = LAYOUT_PAIRS[name]
    check_source_pair(before, after)
    assert all(len(line) <= 100 for line in after.splitlines())


@pytest.mark.parametrize("name", sorted(LAYOUT_PAIRS))
def test_what_each_form_selects(name):
    after = LAYOUT_PAIRS[name][1]
    if "get_strategy" in after:
        assert strategy_devices(after, 4, n_gpus=1) == "one device"
        assert strategy_devices(after, 4, n_gpus=3) == ["/gpu:0", "/gpu:1", "/gpu:2"]
        assert strategy_devices(after, 0, n_gpus=3) is None  # no GPU: TensorFlow's default device
    elif "[1, 3]" in after:
        assert strategy_devices(after, 4) == ["/gpu:1", "/gpu:3"]
        # a machine without GPU 3 raises, as the old call did (naming it would hang `fit`)
        with pytest.raises(IndexError):
            strategy_devices(after, 2)
    elif "[:2]" in after:
        assert strategy_devices(after, 4) == ["/gpu:0", "/gpu:1"]
        assert strategy_devices(after, 1) == ["/gpu:0"]
        assert strategy_devices(after, 0) is None
    elif "[:4]" in after:
        assert strategy_devices(after, 8) == [f"/gpu:{i}" for i in range(4)]
        assert strategy_devices(after, 2) == ["/gpu:0", "/gpu:1"]
        assert strategy_devices(after, 0) is None


def test_gpus_variable_count_or_list_fixture():
    out = (ROOT / "gpus" / "gpu_ids_variable.after.py").read_text()
    on_ids, on_count = out.split("def build_on_count")
    assert strategy_devices(on_ids, 4, ids=[1, 3]) == ["/gpu:1", "/gpu:3"]
    with pytest.raises(IndexError):  # no GPU 3 here: raises where the old call raised
        strategy_devices(on_ids, 2, ids=[1, 3])
    assert strategy_devices("def build_on_count" + on_count, 4, args=type("A", (), {"gpus": 1})) == ["/gpu:0"]


# Each emitted form, run by TensorFlow itself on this machine: no form may name a device that is not
# there (MirroredStrategy would hang in `fit`); with no GPU every form falls back to the default device.
_REAL_FORMS = [
    "tf.distribute.MirroredStrategy()",
    f"tf.distribute.MirroredStrategy({LOGICAL}[:2])",
    f"tf.distribute.MirroredStrategy({LOGICAL}[:n])",
    f"tf.distribute.MirroredStrategy([{LOGICAL}[i] for i in [0, 1]])",
    "tf.distribute.get_strategy()",
    f"tf.distribute.MirroredStrategy([{LOGICAL}[i] for i in [0, 3]])",
]

_PROBE = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tensorflow as tf
    import keras
    out = []
    for form in json.loads(sys.argv[1]):
        n = 2
        try:
            strategy = eval(form)
        except IndexError:  # a listed GPU id the machine lacks
            out.append("IndexError")
            continue
        with strategy.scope():
            model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
            model.compile("sgd", "mse")
        model.fit(np.ones((8, 3)), np.ones((8, 1)), epochs=1, batch_size=4, verbose=0)
        out.append(strategy.num_replicas_in_sync)
    print(json.dumps(out))
""")


@needs_tensorflow
@pytest.mark.slow
@pytest.mark.parametrize("simulated", [0, 2])
def test_every_form_trains_on_this_machine_without_hanging(simulated):
    env = simulated_gpus_env(simulated) if simulated else child_env({"CUDA_VISIBLE_DEVICES": ""})
    done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(_REAL_FORMS)], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    replicas = json.loads(done.stdout.strip().splitlines()[-1])
    # No GPU: one replica (the CPU) for every form but the GPU ids, which raise as the old call did;
    # 2 simulated GPUs: the mirrored forms use both, and GPU 3 is missing.
    assert replicas == ([1, 1, 1, "IndexError", 1, "IndexError"] if not simulated else [2, 2, 2, 2, 1, "IndexError"])


def test_the_module_decides_what_a_name_holds():
    out = (ROOT / "gpus" / "kinds_from_bindings.after.py").read_text()
    functions = dict(part.split("(", 1) for part in out.split("\ndef ")[1:])
    # `GPUS = 2` at module level and `n_gpu=2` as a default are counts: sliced, nothing guessed.
    assert f"{LOGICAL}[:GPUS])" in functions["module_constant"]
    assert f"{LOGICAL}[:n_gpu])" in functions["parameter_default"]
    # `ids=GPU_IDS` with `GPU_IDS = [0, 1]`: the GPUs at those indices.
    assert f"    logical_gpus = {LOGICAL}\n" in functions["ids_default"]  # (`gpus` is a name in the module)
    assert "MirroredStrategy([logical_gpus[i] for i in ids])" in functions["ids_default"]
    # The machine's own GPU count, guarded by "more than one": every GPU, no `if` left.
    for name in ("backend_query_guarded", "machine_count_guarded"):
        assert "strategy = tf.distribute.MirroredStrategy()\n" in functions[name]
        assert "if " not in functions[name]
    # A parameter without a default holds what the calls in the module pass: `called_with_ids([0, 1])`.
    assert "MirroredStrategy([logical_gpus[i] for i in gpus])" in functions["called_with_ids"]
    # `self.n_gpus` holds what `__init__` stores: its `n_gpus=2` default, or the `n_gpus=4` a call passes.
    assert f"    {LOGICAL}[:self.n_gpus]\n" in out


_ARGPARSE = (
    "import argparse\nfrom keras.layers import Dense\nfrom keras.models import Sequential\n"
    "from keras.utils import multi_gpu_model\n\nparser = argparse.ArgumentParser()\n"
    "parser.add_argument({declaration})\nargs = parser.parse_args()\n"
    "net = Sequential([Dense(2, input_shape=(3,))])\nwide = multi_gpu_model(net, gpus={gpus})\n"
    "wide.compile('sgd', 'mse')\n"
)


@pytest.mark.parametrize("declaration, gpus, kind", [
    ("'--gpus', type=int, nargs='+', default=[0, 1]", "args.gpus", "list"),
    ("'--gpu-ids', type=int, nargs='*'", "args.gpu_ids", "list"),
    ("'--gpus', type=int, nargs=1", "args.gpus", "list"),
    ("'--gpu', dest='devices', type=int, action='append'", "args.devices", "list"),
    ("'--gpus', type=int, default=2", "args.gpus", "count"),
])
def test_an_argparse_option_says_count_or_list(declaration, gpus, kind):
    source = _ARGPARSE.format(declaration=declaration, gpus=gpus)
    result = transform_source(source.encode(), "train.py")
    out = result.output.decode()
    assert "MGPU117" not in [f.code for f in result.findings]  # decided from the declaration, not guessed
    if kind == "list":
        assert f"gpus = {LOGICAL}\nstrategy = tf.distribute.MirroredStrategy([gpus[i] for i in {gpus}])\n" in out
    else:
        assert f"{LOGICAL}[:{gpus}])" in out


def test_a_configparser_getint_is_a_count():
    source = (
        "import configparser\nfrom keras.layers import Dense\nfrom keras.models import Sequential\n"
        "from keras.utils import multi_gpu_model\ncfg = configparser.ConfigParser()\ncfg.read('train.ini')\n"
        "net = Sequential([Dense(2, input_shape=(3,))])\n"
        "wide = multi_gpu_model(net, gpus=cfg.getint('train', 'gpus'))\nwide.compile('sgd', 'mse')\n"
    )
    result = transform_source(source.encode(), "train.py")
    assert "MGPU117" not in [f.code for f in result.findings]  # `getint` says it: no guess from the name
    assert f"{LOGICAL}[:cfg.getint('train', 'gpus')]" in result.output.decode()


@pytest.mark.parametrize("env,every", [
    ("os.environ['CUDA_VISIBLE_DEVICES'] = ','.join(str(g) for g in args.gpus)\n", True),  # renumbered from 0
    ("os.environ['CUDA_VISIBLE_DEVICES'] = '0,1,2,3'\n", False),  # other GPUs: the ids still name them
    ("", False),
])
def test_gpu_ids_the_script_also_made_visible_are_every_visible_gpu(env, every):
    source = (
        "import argparse\nimport os\nfrom keras.utils import multi_gpu_model\n\n"
        "ap = argparse.ArgumentParser()\nap.add_argument('--gpus', type=int, nargs='+', default=[0, 1])\n"
        f"args = ap.parse_args()\n{env}model = build()\nparallel = multi_gpu_model(model, gpus=args.gpus)\n"
        "parallel.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode()).output.decode()
    assert ("strategy = tf.distribute.MirroredStrategy()\n" in out) is every
    assert ("MirroredStrategy([gpus[i] for i in args.gpus])" in out) is not every


def test_gpus_read_from_a_dict_literal_take_the_kind_of_what_it_holds():
    # `CONFIG["gpus"]` holds ids in the literal: never sliced as a count (that raises TypeError)
    from multi_gpu_codemod import transform_source

    source = (
        'from keras.utils import multi_gpu_model\nCONFIG = {"gpus": [0, 1], "batch": 32}\n'
        'def main():\n    model = build()\n    parallel = multi_gpu_model(model, gpus=CONFIG["gpus"])\n'
        '    parallel.compile("adam", "mse")\n'
    )
    result = transform_source(source.encode(), "train.py")
    output = result.output.decode()
    assert '    strategy = tf.distribute.MirroredStrategy([gpus[i] for i in CONFIG["gpus"]])\n' in output
    assert not result.findings
    counted = source.replace('"gpus": [0, 1]', '"gpus": 2')
    output = transform_source(counted.encode(), "train.py").output.decode()
    assert 'tf.config.list_logical_devices("GPU")[:CONFIG["gpus"]]' in output
    # assigned elsewhere: the literal no longer tells, the name does (and it is reported)
    changed = source + 'CONFIG["gpus"] = [2, 3]\n'
    assert [f.code for f in transform_source(changed.encode(), "train.py").findings] == ["MGPU117"]


def test_a_count_chosen_by_a_conditional_expression_of_ints_is_a_count():
    from multi_gpu_codemod.strategy_expression import surely_int
    import libcst as cst

    assert surely_int(cst.parse_expression("int(sys.argv[1]) if len(sys.argv) > 1 else 2"))
    assert not surely_int(cst.parse_expression("args.gpus if flag else 2"))


@pytest.mark.parametrize("setup,every", [
    # a name bound to the count of the visible GPUs (read the same way as in the call)
    ("os.environ['CUDA_VISIBLE_DEVICES'] = '2,3'\nn = len(os.environ['CUDA_VISIBLE_DEVICES'].split(','))\n", True),
    # the count of the ids the script made visible: every visible GPU
    ("os.environ['CUDA_VISIBLE_DEVICES'] = args.ids\nn = len(args.ids.split(','))\n", True),
    # the same count of ids never made visible: the first n GPUs of the machine
    ("n = len(args.ids.split(','))\n", False),
    # unset, the script ran on one GPU: not every GPU
    ("n = len(os.environ.get('CUDA_VISIBLE_DEVICES', '0').split(','))\n", False),
    # unset, two ids: the script counted on a two-GPU default (the variable set, every GPU it names)
    ("n = len(os.environ.get('CUDA_VISIBLE_DEVICES', '0,1').split(','))\n", True),
])
def test_a_count_of_the_visible_gpus_bound_to_a_name_is_every_gpu(setup, every):
    source = (
        "import argparse\nimport os\nfrom keras.utils import multi_gpu_model\n\n"
        "ap = argparse.ArgumentParser()\nap.add_argument('--ids', default='0,1')\nargs = ap.parse_args()\n"
        f"{setup}model = build()\nif n > 1:\n    parallel = multi_gpu_model(model, gpus=n)\nelse:\n"
        "    parallel = model\nparallel.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode()).output.decode()
    assert ("strategy = tf.distribute.MirroredStrategy()\n" in out) is every, out
    assert ('list_logical_devices("GPU")[:n]' in out) is not every, out


def test_a_dict_key_read_through_a_parameter_takes_the_literal_passed_in():
    source = (
        "from keras.utils import multi_gpu_model\n\nCONFIG = {'gpus': [0, 1], 'lr': 0.1}\n\n\n"
        "def build(cfg):\n    model = make()\n    parallel = multi_gpu_model(model, gpus=cfg['gpus'])\n"
        "    parallel.compile('adam', 'mse')\n    return parallel\n\n\nbuild(CONFIG).fit(x, y)\n"
    )
    result = transform_source(source.encode())
    out = result.output.decode()
    # ids, as the literal passed in holds: never sliced as a count, and no MGPU117 guess
    assert "MirroredStrategy([gpus[i] for i in cfg['gpus']])" in out, out
    assert not [f for f in result.findings if f.code == "MGPU117"]


@pytest.mark.parametrize("helper,guessed", [
    # round 38, la06: the file's own helper returns a length, so `n_gpus` is a count (MGPU117 was false)
    ("def visible_gpus():\n    devs = os.environ.get('CUDA_VISIBLE_DEVICES', '0,1')\n"
     "    return len([d for d in devs.split(',') if d.strip()])\n", False),
    ("def visible_gpus():\n    if FAST:\n        return 1\n    return int(os.environ['N_GPUS'])\n", False),
    # its end can be reached (None comes back), or it takes arguments: nothing proves a count
    ("def visible_gpus():\n    if FAST:\n        return 1\n", True),
    ("def visible_gpus():\n    return CONFIG['gpus']\n", True),
])
def test_a_count_returned_by_the_files_own_helper_is_a_count(helper, guessed):
    source = (
        "import os\nfrom keras.utils import multi_gpu_model\n\n" + helper + "\n\n"
        "n_gpus = visible_gpus()\nnet = build()\nwide = multi_gpu_model(net, gpus=n_gpus)\nwide.compile('sgd', 'mse')\n"
    )
    result = transform_source(source.encode(), "train.py")
    assert ("MGPU117" in [f.code for f in result.findings]) == guessed
    assert f"{LOGICAL}[:n_gpus])" in result.output.decode()


@pytest.mark.parametrize("config,reported", [
    # (round 50, al12: Mask R-CNN's configs set the count in the class body)
    ("class Config:\n    GPU_COUNT = 2\n\n\nclass Train(Config):\n    GPU_COUNT = 4\n\n\nconfig = Train()\n", False),
    ("class Config:\n    GPU_COUNT = 2\n\n\nconfig = Config()\nconfig.GPU_COUNT = 1\n", False),
    # a value no class body proves a count: guessed from the name, and reported
    ("class Config:\n    GPU_COUNT = 2\n\n\nconfig = Config()\nconfig.GPU_COUNT = read_gpus()\n", True),
    ("config = load_config()\n", True),
])
def test_a_count_set_in_a_class_body_is_a_count(config, reported):
    source = (
        f"from keras.utils import multi_gpu_model\n\n{config}model = build()\n"
        "parallel = multi_gpu_model(model, gpus=config.GPU_COUNT)\nparallel.compile('sgd', 'mse')\n"
    )
    result = transform_source(source.encode(), "train.py")
    assert f"{LOGICAL}[:config.GPU_COUNT]\n" in result.output.decode()  # (wrapped past the file's width)
    assert ("MGPU117" in [f.code for f in result.findings]) is reported


@pytest.mark.parametrize("taken,listing", [
    ("", "gpus"),
    ("gpus = 2\n", "logical_gpus"),
    ("gpus = logical_gpus = visible_gpus = 2\n", None),  # every name in use: the one-expression form
])
def test_gpu_ids_index_the_machines_gpus_bound_on_the_line_above(taken, listing):
    # round 57/59, az18, ba17: `gpus=[2, 3]` reads as written, and an id the machine lacks raises
    source = (
        f"from keras.utils import multi_gpu_model\n\n{taken}model = build()\n# the two free cards\n"
        "parallel = multi_gpu_model(model, gpus=[2, 3])\nparallel.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    if listing is None:
        strategy = f"strategy = tf.distribute.MirroredStrategy(\n    [{LOGICAL}[i] for i in [2, 3]]\n)\n"
    else:
        strategy = (f"{listing} = {LOGICAL}\n"
                    f"strategy = tf.distribute.MirroredStrategy([{listing}[2], {listing}[3]])\n")
    assert f"# the two free cards\n{strategy}with strategy.scope():\n    model = build()\n" in out, out
    assert strategy_devices(out, 4) == ["/gpu:2", "/gpu:3"]
    with pytest.raises(IndexError):
        strategy_devices(out, 2)


def test_gpu_ids_in_a_choice_are_bound_in_its_branch():
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\nif len(args.gpu_ids) > 1:\n"
        "    parallel = multi_gpu_model(model, gpus=args.gpu_ids)\nelse:\n    parallel = model\n"
        "parallel.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert (
        f"if len(args.gpu_ids) > 1:\n    gpus = {LOGICAL}\n"
        "    strategy = tf.distribute.MirroredStrategy([gpus[i] for i in args.gpu_ids])\n"
        "else:\n    strategy = tf.distribute.get_strategy()\nwith strategy.scope():\n"
    ) in out, out
    ids = type("Args", (), {"gpu_ids": [1, 3]})
    assert strategy_devices(out, 4, args=ids) == ["/gpu:1", "/gpu:3"]
    assert strategy_devices(out, 4, args=type("Args", (), {"gpu_ids": [0]})) == "one device"
