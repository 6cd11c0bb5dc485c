"""codemod/fixers/device_towers.py: before/after pairs and left-unchanged-but-reported cases."""

import pytest

from codemod import transform_source
from codemod.fixers.device_towers import SECTION
from codemod_fixtures import check_pair, check_unchanged, pairs, unchanged


@pytest.mark.parametrize("before", pairs("device_towers"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    assert "MGPU603" not in check_pair(before)  # a /gpu:N block around multi_gpu_model is not a tower


@pytest.mark.parametrize("path", unchanged("device_towers"), ids=lambda p: p.name)
def test_unchanged_but_reported(path):
    codes = check_unchanged(path)
    assert codes == ["MGPU603", "MGPU603"]  # once per function, once for the module


def test_message_points_to_the_migration_section():
    source = b"import tensorflow as tf\n\ndef f(x):\n    with tf.device('/device:GPU:1'):\n        return tf.nn.relu(x)\n"
    (finding,) = transform_source(source).findings
    assert finding.code == "MGPU603" and f'"{SECTION}"' in finding.message and "ModelParallel" in finding.message


@pytest.mark.parametrize("source", [
    b"import tensorflow as tf\nwith tf.device('/cpu:0'):\n    x = tf.zeros(1)\n",
    b"import tensorflow as tf\nwith tf.device('/gpu:0'):\n    pass\n",
    b"import torch\nwith torch.device('cuda:0'):\n    x = torch.zeros(1)  # gpu:0\n",
])
def test_not_towers(source):
    result = transform_source(source)
    assert result.output == source and result.findings == []
