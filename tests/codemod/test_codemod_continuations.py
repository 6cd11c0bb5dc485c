"""codemod/continuations.py: backslash-continued lines move with their statement (under the
scope, out of a dissolved `with tf.device(...)`, out of an `if` written once, after a rename);
before/after pinned byte for byte, and what must stay as written."""

import libcst as cst

from codemod_fixtures import ROOT
from multi_gpu_codemod import transform_source
from multi_gpu_codemod.continuations import canonical


def _migrated(source: str) -> str:
    result = transform_source(source.encode())
    assert not result.failed, result.findings
    return result.output.decode()


def test_the_pinned_pair_keeps_each_continuation_where_its_statement_put_it():
    before = (ROOT / "layout" / "backslash_continuations.before.py").read_text()
    after = (ROOT / "layout" / "backslash_continuations.after.py").read_text()
    assert _migrated(before) == after
    lines = after.splitlines()
    # moved one level in: the continuation one level in too
    batch = lines.index("        batch = batch_for(gpus) * 32 + \\")
    assert lines[batch + 1] == "            16"
    # renamed `parallel.compile(` -> `model.compile(`: still aligned under the parenthesis
    compile_line = next(i for i, line in enumerate(lines) if "model.compile(loss='mse', \\" in line
                        and "optimizer" not in line)
    column = lines[compile_line].index("(") + 1
    assert lines[compile_line + 1].index("optimizer") == column
    # a backslash-newline inside a string is the string's own text: untouched
    assert 'TITLE = "a string that goes on \\\n   with its own spaces"' in after


def test_a_statement_moved_under_the_scope_takes_its_continuation_along():
    before = (
        "from keras.utils import multi_gpu_model\n\n"
        "model = build()\n"
        "parallel = multi_gpu_model(model, gpus=2)\n"
        "parallel.compile(loss='mse', \\\n"
        "    optimizer='sgd')\n"
        "parallel.fit(x, y)\n"
    )
    after = _migrated(before)
    assert "    model.compile(loss='mse', \\\n        optimizer='sgd')\n" in after
    assert _migrated(after) == after  # a second run changes nothing


def test_branches_differing_only_in_continuation_indentation_are_written_once():
    before = (
        "import tensorflow as tf\n"
        "from keras.utils import multi_gpu_model\n\n\n"
        "class GAN:\n"
        "    def build(self):\n"
        "        optimizer = RMSprop(learning_rate=2e-4)\n"
        "        if self.gpus <= 1:\n"
        "            self.d = make()\n"
        "            self.d.compile(loss='mse', optimizer=optimizer,\\\n"
        "                metrics=['mae'])\n"
        "        else:\n"
        "            with tf.device('/cpu:0'):\n"
        "                self.d = make()\n"
        "            self.d = multi_gpu_model(self.d, gpus=self.gpus)\n"
        "            self.d.compile(loss='mse', optimizer=optimizer,\\\n"
        "                    metrics=['mae'])\n"
        "        return self.d\n"
    )
    after = _migrated(before)
    assert "else:" not in after and after.count("self.d.compile(") == 1
    assert (
        "        with strategy.scope():\n"
        "            optimizer = RMSprop(learning_rate=2e-4)\n"
        "            self.d = make()\n"
        "            self.d.compile(loss='mse', optimizer=optimizer,\\\n"
        "                metrics=['mae'])\n"
    ) in after


def test_a_tab_indented_file_gets_tabs_on_the_moved_continuation():
    before = (
        "from keras.utils import multi_gpu_model\n\n"
        "def train(x, y):\n"
        "\tmodel = build()\n"
        "\tparallel = multi_gpu_model(model, gpus=2)\n"
        "\tparallel.compile(loss='mse', \\\n"
        "\t\toptimizer='sgd')\n"
        "\tparallel.fit(x, y)\n"
    )
    after = _migrated(before)
    assert "\t\tmodel.compile(loss='mse', \\\n\t\t\toptimizer='sgd')\n" in after


def test_canonical_ignores_only_the_whitespace_after_a_backslash():
    def code(text: str) -> str:
        return canonical(cst.parse_statement(text))

    assert code("f(a,\\\n    b)\n") == code("f(a,\\\n            b)\n")
    assert code("f(a,\\\n    b)\n") != code("f(a,\\\n    c)\n")
    # inside a string the spaces after the backslash are text
    assert code("s = 'x\\\n    y'\n") != code("s = 'x\\\n  y'\n")
