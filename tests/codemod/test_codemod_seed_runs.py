"""The four seed-document examples, migrated by the codemod, really train on 2 simulated GPUs."""

import pytest

from multi_gpu_codemod import transform_source
from child_process import run_on_two_simulated_gpus
from codemod_fixtures import ROOT, needs_tensorflow

SEEDS = sorted((ROOT / "seed").glob("*.before.py"))


@pytest.mark.parametrize("before", SEEDS, ids=lambda p: p.name.split(".")[0])
def test_seed_fixture_migrates_to_its_after_file(before):
    after = before.with_name(before.name.replace(".before.py", ".after.py")).read_bytes()
    assert transform_source(before.read_bytes()).output == after


@needs_tensorflow
@pytest.mark.slow
@pytest.mark.parametrize("before", SEEDS, ids=lambda p: p.name.split(".")[0])
def test_migrated_seed_runs_on_two_simulated_gpus(before, tmp_path):
    run_on_two_simulated_gpus(before, tmp_path)
