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
