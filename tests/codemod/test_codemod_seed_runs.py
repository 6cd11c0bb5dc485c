"""The four seed-document examples, migrated by the codemod, really train on 2 simulated GPUs."""

import os
import shutil
import subprocess
import sys

import pytest

from multi_gpu_codemod import transform_source
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
    script = tmp_path / "train.py"
    shutil.copy(before.with_name(before.name.replace(".before.py", ".after.py")), script)
    # Prove the run is distributed: print the replica count the migrated strategy got.
    script.write_text(script.read_text() + "\nprint('REPLICAS', strategy.num_replicas_in_sync)\n")
    env = {**os.environ, "MULTI_GPU_COMPAT_SIMULATE_GPUS": "2", "TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "REPLICAS 2" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
