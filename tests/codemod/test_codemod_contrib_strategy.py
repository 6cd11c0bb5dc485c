"""codemod/fixers/contrib_strategy.py: before/after pairs and left-unchanged-but-reported cases."""

import pytest

from multi_gpu_codemod import transform_source
from child_process import run_on_two_simulated_gpus
from codemod_fixtures import ROOT, check_pair, check_unchanged, needs_tensorflow, pairs, unchanged


@pytest.mark.parametrize("before", pairs("contrib_strategy"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    assert check_pair(before) == []


@pytest.mark.parametrize("path", unchanged("contrib_strategy"), ids=lambda p: p.name)
def test_unchanged_but_reported(path):
    assert set(check_unchanged(path)) == {"MGPU601"}


def test_contrib_imports_dropped_and_tensorflow_imported():
    out = (ROOT / "contrib_strategy" / "aliases.after.py").read_text()
    assert "contrib" not in out and out.startswith("import tensorflow as tf\n")


def test_current_strategy_without_num_gpus_is_left_alone():
    source = b"import tensorflow as tf\nstrategy = tf.distribute.MirroredStrategy()  # gpu:0\n"
    result = transform_source(source)
    assert result.output == source and result.findings == []


@needs_tensorflow
@pytest.mark.slow
def test_migrated_contrib_script_runs_on_two_simulated_gpus(tmp_path):
    run_on_two_simulated_gpus(ROOT / "contrib_strategy" / "num_gpus.before.py", tmp_path)


# A replacement that would take its line past 100 columns has its one argument on a line of its own
# (black's shape), relative to the statement's block (two-space files keep two spaces); a short one
# stays on the line, with what followed the call.
LAID_OUT = [
    pytest.param(
        "import tensorflow as tf\n\n\n"
        "class Trainer:\n"
        "    def strategy(self, n):\n"
        "        if n:\n"
        '            self.mirrored = tf.contrib.distribute.MirroredStrategy(devices=["/gpu:0", "/gpu:1"])\n',
        "import tensorflow as tf\n\n\n"
        "class Trainer:\n"
        "    def strategy(self, n):\n"
        "        if n:\n"
        "            self.mirrored = tf.distribute.MirroredStrategy(\n"
        '                tf.config.list_logical_devices("GPU")[:2]\n'
        "            )\n",
        id="devices-wrapped",
    ),
    pytest.param(
        "import tensorflow as tf\n\n"
        "def make(settings):\n"
        "  config = tf.estimator.RunConfig(save_summary_steps=10)\n"
        "  return tf.contrib.distribute.MirroredStrategy(num_gpus=settings.gpus_per_worker), config\n",
        "import tensorflow as tf\n\n"
        "def make(settings):\n"
        "  config = tf.estimator.RunConfig(save_summary_steps=10)\n"
        "  return tf.distribute.MirroredStrategy(\n"
        '    tf.config.list_logical_devices("GPU")[:settings.gpus_per_worker]\n'
        "  ), config\n",
        id="count-wrapped-two-spaces",
    ),
    pytest.param(
        "import tensorflow as tf\n"
        "strategy = tf.contrib.distribute.MirroredStrategy(num_gpus=4)  # four towers\n",
        "import tensorflow as tf\n"
        'strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:4])  # four towers\n',
        id="fits-on-its-line",
    ),
]


@pytest.mark.parametrize("before,after", LAID_OUT)
def test_replacement_stays_within_the_line_limit(before, after):
    result = transform_source(before.encode())
    assert result.output.decode() == after
    assert all(len(line) <= 100 for line in after.splitlines())
    assert transform_source(result.output).output == result.output
