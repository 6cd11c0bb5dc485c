"""loop_strategy.py: a strategy a loop body made on every pass is made once above the loop."""

import pytest

from codemod_fixtures import check_source_pair
from multi_gpu_codemod import transform_source

HEAD = "import tensorflow as tf\nfrom keras.utils import multi_gpu_model\n\nN = 2\n"
STRATEGY = 'strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:N])\n'


def test_a_k_fold_loop_makes_one_strategy_above_it():
    before = HEAD + (
        "for fold, (tr, va) in enumerate(splits):\n"
        "    base = build()\n"
        "    net = multi_gpu_model(base, gpus=N)  # split batches over the GPUs\n"
        "    net.compile('adam', 'mse')\n"
        "    net.fit(x[tr], y[tr])\n"
        "    base.save('fold%d.h5' % fold)\n"
    )
    after = "import tensorflow as tf\n\nN = 2\n" + (
        "# split batches over the GPUs\n" + STRATEGY
        + "for fold, (tr, va) in enumerate(splits):\n"
        "    with strategy.scope():\n"
        "        base = build()\n"
        "        base.compile('adam', 'mse')\n"
        "    base.fit(x[tr], y[tr])\n"
        "    base.save('fold%d.h5' % fold)\n"
    )
    check_source_pair(before, after)


def test_the_loops_blank_lines_go_above_the_strategy_its_comment_stays_on_the_loop():
    before = HEAD + (
        "\n# cross-validation\nfor fold in range(3):\n"
        "    base = build()\n    net = multi_gpu_model(base, gpus=N)\n    net.compile('adam', 'mse')\n"
        "    net.fit(x, y)\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert "N = 2\n\n" + STRATEGY + "# cross-validation\nfor fold in range(3):\n    with strategy.scope():\n" in out


@pytest.mark.parametrize("loop,why", [
    # the count changes per pass: the strategy differs per pass
    ("for N in (1, 2):\n", "the loop binds the count"),
    ("for fold in range(3):\n    N = counts[fold]\n", "the body binds the count"),
])
def test_a_strategy_reading_what_the_loop_binds_stays_in_the_loop(loop, why):
    before = HEAD + loop + (
        "    base = build()\n    net = multi_gpu_model(base, gpus=N)\n"
        "    net.compile('adam', 'mse')\n    net.fit(x, y)\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert "\n    " + STRATEGY in out, why


def test_a_loop_that_clears_the_session_keeps_its_strategy_per_pass():
    before = HEAD + (
        "for fold in range(3):\n    tf.keras.backend.clear_session()\n"
        "    base = build()\n    net = multi_gpu_model(base, gpus=N)\n"
        "    net.compile('adam', 'mse')\n    net.fit(x, y)\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert "for fold in range(3):\n    tf.keras.backend.clear_session()\n    " + STRATEGY in out


def test_a_strategy_chosen_in_an_if_moves_whole_when_the_condition_is_the_loops_too():
    before = HEAD + (
        "def run(folds, n):\n"
        "    for fold in folds:\n"
        "        base = build()\n"
        "        if n > 1:\n"
        "            base = multi_gpu_model(base, gpus=n)\n"
        "        base.compile('adam', 'mse')\n"
        "        base.fit(x, y)\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert "def run(folds, n):\n    if n > 1:\n        strategy = " in out
    assert "    for fold in folds:\n        with strategy.scope():\n" in out


def test_in_an_exported_notebook_the_strategy_stays_in_the_loops_cell():
    before = (
        "#!/usr/bin/env python\n# coding: utf-8\n\n# In[1]:\n\n\nfrom keras.utils import multi_gpu_model\nN = 2\n\n\n"
        "# In[2]:\n\n\nfor fold in range(3):\n    m = build()\n    p = multi_gpu_model(m, gpus=N)\n"
        "    p.compile('adam', 'mse')\n    p.fit(x, y)\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert "# In[2]:\n\n\n" + STRATEGY + "for fold in range(3):\n    with strategy.scope():\n" in out


def test_in_a_notebook_the_strategy_stays_in_the_loops_cell():
    import json

    from multi_gpu_codemod.notebook import transform_notebook

    cells = [
        "from keras.utils import multi_gpu_model\nN = 2",
        "for fold in range(3):\n    m = build()\n    p = multi_gpu_model(m, gpus=N)\n    p.compile('adam', 'mse')\n"
        "    p.fit(x, y)",
    ]
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": c} for c in cells
    ]}
    out = json.loads(transform_notebook(json.dumps(notebook).encode(), "t.ipynb").output)
    assert "".join(out["cells"][1]["source"]).startswith(STRATEGY + "for fold in range(3):\n")


def test_a_strategy_on_gpu_ids_moves_above_the_loop_with_the_line_binding_the_gpus():
    before = HEAD + (
        "for fold in range(3):\n    base = build()\n    net = multi_gpu_model(base, gpus=[2, 3])\n"
        "    net.compile('adam', 'mse')\n    net.fit(x, y)\n"
    )
    after = "import tensorflow as tf\n\nN = 2\n" + (
        'gpus = tf.config.list_logical_devices("GPU")\n'
        "strategy = tf.distribute.MirroredStrategy([gpus[2], gpus[3]])\n"
        "for fold in range(3):\n    with strategy.scope():\n        base = build()\n"
        "        base.compile('adam', 'mse')\n    base.fit(x, y)\n"
    )
    check_source_pair(before, after)


def test_a_choice_binding_the_gpus_in_its_branch_moves_above_the_loop_whole():
    before = HEAD + (
        "for fold in range(3):\n    base = build()\n    if len(args.gpu_ids) > 1:\n"
        "        net = multi_gpu_model(base, gpus=args.gpu_ids)\n    else:\n        net = base\n"
        "    net.compile('adam', 'mse')\n    net.fit(x, y)\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert (
        'if len(args.gpu_ids) > 1:\n    gpus = tf.config.list_logical_devices("GPU")\n'
        "    strategy = tf.distribute.MirroredStrategy([gpus[i] for i in args.gpu_ids])\nelse:\n"
        "    strategy = tf.distribute.get_strategy()\nfor fold in range(3):\n    with strategy.scope():\n"
    ) in out, out


def test_a_loop_clearing_the_session_keeps_both_lines_in_it():
    before = HEAD + (
        "for fold in range(3):\n    print(fold)\n    base = build()\n    net = multi_gpu_model(base, gpus=[2, 3])\n"
        "    net.compile('adam', 'mse')\n    net.fit(x, y)\n    tf.keras.backend.clear_session()\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    # (a loop clearing the session keeps a strategy per pass: both lines stay in it, in order)
    assert '    gpus = tf.config.list_logical_devices("GPU")\n    strategy = tf.distribute.MirroredStrategy(' in out
