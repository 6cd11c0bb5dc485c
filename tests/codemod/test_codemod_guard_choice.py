"""codemod/guard_choice.py: a kept `if`/`else` of prints right above the scope chooses the
strategy in its branches; anything else is left as the rewrite wrote it."""

import pytest

from codemod_fixtures import check_source_pair
from multi_gpu_codemod import transform_source

HEAD = "import tensorflow as tf\nfrom keras.utils import multi_gpu_model\n\nG = int(input())\n\n"


def _guarded(test: str, single: str = "model = build()") -> str:
    return (
        HEAD + f"if {test}:\n    print('one device')\n    {single}\nelse:\n    print('%d GPUs' % G)\n"
        "    with tf.device('/cpu:0'):\n        model = build()\n    # replicate on every card\n"
        "    model = multi_gpu_model(model, gpus=G)\nmodel.compile('adam', 'mse')\n"
    )


def test_pyimagesearch_guard_chooses_the_strategy_in_its_branches():
    after = (
        "import tensorflow as tf\n\nG = int(input())\n\n"
        "if G <= 1:\n    print('one device')\n    strategy = tf.distribute.get_strategy()\n"
        "else:\n    print('%d GPUs' % G)\n    # replicate on every card\n"
        '    strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:G])\n'
        "with strategy.scope():\n    model = build()\n    model.compile('adam', 'mse')\n"
    )
    assert check_source_pair(_guarded("G <= 1"), after) == []


@pytest.mark.parametrize("test,multi_first", [("G < 2", False), ("1 >= G", False)])
def test_equivalent_conditions_fold_the_same_way(test, multi_first):
    out = transform_source(_guarded(test).encode()).output.decode()
    assert "max(" not in out
    single, multi = out.index("get_strategy()"), out.index("[:G]")
    assert (multi < single) is multi_first


@pytest.mark.parametrize("test", ["G == 1", "G != 2", "G <= 2"])
def test_a_condition_that_does_not_split_one_from_two_gpus_is_not_folded(test):
    # `G == 1` puts no GPU (G = 0) in the multi-GPU branch: the prints' `if` is left as it was
    out = transform_source(_guarded(test).encode()).output.decode()
    assert f"if {test}:\n    print('one device')\nelse:\n    print('%d GPUs' % G)\nwith strategy.scope():" in out


def test_an_if_doing_more_than_printing_is_not_folded():
    out = transform_source(_guarded("G <= 1", "batch = 32").encode()).output.decode()
    assert "[:max(G, 1)]" in out and "get_strategy()" not in out



@pytest.mark.parametrize("marker", ["# %%", "# In[4]:"])
def test_an_exported_cell_marker_above_the_guard_stays_above_it(marker):
    # (round 52, an14: the `# %%` above `if G <= 1:` went into the `else:` with the strategy line)
    first = "# %%\n" if marker == "# %%" else "# In[1]:\n"
    source = first + HEAD + f"{marker}\n# make it parallel\n" + _guarded("G <= 1")[len(HEAD):]
    out = transform_source(source.encode()).output.decode()
    # the marker starts the guard's cell, above the `if` (its paragraph may go with the multi-GPU line)
    assert f"{marker}\nif G <= 1:\n" in out or f"{marker}\n# make it parallel\nif G <= 1:\n" in out
    assert f"    {marker}" not in out and out.count(marker) == source.count(marker)
    assert out.count("# make it parallel") == 1


def test_a_guard_that_ends_up_first_in_its_function_starts_right_below_the_def():
    # round 64, bk16: the layers built above the guard went under the scope; the blank line that
    # set the guard apart from them went with them, not left as the function's first line
    before = (
        "import tensorflow as tf\nfrom keras.utils import multi_gpu_model\n\nG = 2\n\n\n"
        "def make(shape):\n    inputs = Input(shape)\n    outputs = Dense(1)(inputs)\n\n"
        "    if G <= 1:\n        print('one GPU')\n        model = Model(inputs, outputs)\n"
        "    else:\n        print('%d GPUs' % G)\n        with tf.device('/cpu:0'):\n"
        "            model = Model(inputs, outputs)\n        model = multi_gpu_model(model, gpus=G)\n\n"
        "    model.compile('adam', 'mse')\n    return model\n"
    )
    out = transform_source(before.encode(), "train.py").output.decode()
    assert "def make(shape):\n    if G <= 1:\n        print('one GPU')\n" in out, out
