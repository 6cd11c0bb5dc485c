"""one_line_guards.py: `if C: p = multi_gpu_model(m, ...)` on one line is split and rewritten as the block form."""

import json

from codemod_fixtures import check_source_pair
from multi_gpu_codemod import transform_source
from multi_gpu_codemod.notebook import transform_notebook

HEAD = "import argparse\nimport tensorflow as tf\nfrom keras.utils import multi_gpu_model\n\n"
# (past 92 columns, the file's width, in a branch: wrapped)
STRATEGY = (
    'strategy = tf.distribute.MirroredStrategy(\n    tf.config.list_logical_devices("GPU")[:args.gpus]\n)\n'
)
REWRITTEN = (
    "if args.gpus > 1:\n    " + STRATEGY.replace("\n", "\n    ").rstrip(" ")
    + "else:\n    strategy = tf.distribute.get_strategy()\n"
    "with strategy.scope():\n    model = build()\n    model.compile('adam', 'mse')\n"
)


def test_a_one_line_guard_is_rewritten_as_its_block_form_would_be():
    before = HEAD + (
        "model = build()\n"
        "if args.gpus > 1: model = multi_gpu_model(model, gpus=args.gpus)\n"
        "model.compile('adam', 'mse')\nmodel.fit(x, y)\n"
    )
    block = before.replace("if args.gpus > 1: model", "if args.gpus > 1:\n    model")
    after = "import argparse\nimport tensorflow as tf\n\n" + REWRITTEN + "model.fit(x, y)\n"
    check_source_pair(before, after)
    assert transform_source(block.encode(), "t.py").output.decode() == after


def test_one_line_if_and_else_with_their_comments():
    before = HEAD + (
        "base = build()\n"
        "if args.gpus > 1: net = multi_gpu_model(base, gpus=args.gpus)  # split each batch\n"
        "else: net = base\n"
        "net.compile('adam', 'mse')\nnet.fit(x, y)\n"
    )
    out = transform_source(before.encode(), "t.py")
    assert out.changed and [s.status for s in out.sites] == ["rewritten"]
    text = out.output.decode()
    assert "if args.gpus > 1:\n" in text and "else:\n    strategy = tf.distribute.get_strategy()\n" in text
    assert "multi_gpu_model" not in text and "net" not in text and "# split each batch" in text


def test_lines_and_columns_of_sites_and_findings_are_the_users():
    # Two one-line guards above a call the codemod reports: every position is the original file's.
    before = HEAD + (
        "model = build()\n"                                                      # line 5
        "if args.gpus > 1: model = multi_gpu_model(model, gpus=args.gpus)\n"     # line 6
        "model.compile('adam', 'mse')\nmodel.fit(x, y)\n"                        # lines 7-8
        "other = build()\n"                                                      # line 9
        "if args.gpus > 1: wide = multi_gpu_model(other, gpus=args.gpus)\n"      # line 10: no compile follows
        "print(wide)\n"                                                          # line 11
        "third = build()\nfoo(multi_gpu_model(third, 2))\n"                      # line 13: inside a call
    )
    result = transform_source(before.encode(), "t.py")
    lines = before.splitlines()
    assert [(s.line, s.status) for s in result.sites] == [(6, "rewritten"), (10, "reported"), (13, "reported")]
    for site in result.sites:
        assert lines[site.line - 1][site.col - 1:].startswith("multi_gpu_model(")
    assert {(f.line, f.code) for f in result.findings} >= {(10, "MGPU202"), (13, "MGPU103")}
    for finding in result.findings:
        if finding.code in ("MGPU202", "MGPU103"):
            assert lines[finding.line - 1][finding.col - 1:].startswith("multi_gpu_model(")


def test_the_split_keeps_the_files_indentation_and_line_ends():
    before = (HEAD + "def train(args):\n\tmodel = build()\n"
              "\tif args.gpus > 1: model = multi_gpu_model(model, gpus=args.gpus)\n"
              "\tmodel.compile('adam', 'mse')\n\tmodel.fit(x, y)\n").replace("\n", "\r\n")
    out = transform_source(before.encode(), "t.py").output.decode()
    assert "\tif args.gpus > 1:\r\n\t\t" + STRATEGY.replace("\n    ", "\n\t\t\t").replace("\n)", "\n\t\t)").replace(
        "\n", "\r\n"
    ) in out
    assert "\n" not in out.replace("\r\n", "") and "    " not in out


def test_left_unchanged_but_reported_with_the_reason_that_holds_once_split():
    # Split, nothing compiles the parallel model: MGPU202 says so; the advice to split would not help.
    before = ("from keras.utils import multi_gpu_model\n\n"
              "model = build()\nif G > 1: parallel = multi_gpu_model(model, G)\n")
    result = transform_source(before.encode(), "t.py")
    assert not result.changed
    assert [(f.line, f.col, f.code) for f in result.findings] == [(4, 22, "MGPU202")]
    assert [(s.line, s.col, s.status, s.codes) for s in result.sites] == [(4, 22, "reported", ("MGPU202",))]


def test_two_statements_on_the_line_are_reported_as_before():
    before = HEAD + (
        "model = build()\nif args.gpus > 1: n = 2; model = multi_gpu_model(model, gpus=n)\n"
        "model.compile('adam', 'mse')\n"
    )
    result = transform_source(before.encode(), "t.py")
    assert not result.changed
    (finding,) = [f for f in result.findings if f.code == "MGPU103"]
    assert finding.line == 6 and "on the line of its `if`/`else`" in finding.message


def test_a_notebook_cell_with_a_one_line_guard():
    cells = [
        "import tensorflow as tf\nfrom keras.utils import multi_gpu_model\nargs = parse()",
        "model = build()\nif args.gpus > 1: model = multi_gpu_model(model, gpus=args.gpus)\n"
        "model.compile('adam', 'mse')",
        "model.fit(x, y)",
    ]
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": i,
                           "source": source.splitlines(keepends=True)} for i, source in enumerate(cells, 1)],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 4}
    result = transform_notebook(json.dumps(notebook, indent=1).encode(), "nb.ipynb")
    assert result.changed and [s.status for s in result.sites] == ["rewritten"]
    written = json.loads(result.output)
    assert "".join(written["cells"][1]["source"]) == REWRITTEN.rstrip("\n")
    assert "".join(written["cells"][2]["source"]) == "model.fit(x, y)"
