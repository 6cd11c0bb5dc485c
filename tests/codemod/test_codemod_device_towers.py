"""codemod/fixers/device_towers.py: before/after pairs and left-unchanged-but-reported cases."""

import pytest

from multi_gpu_codemod import transform_source
from codemod_fixtures import check_pair, check_unchanged, pairs, reported, unchanged


@pytest.mark.parametrize("before", pairs("device_towers"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    assert "MGPU603" not in check_pair(before)  # a /gpu:N block around multi_gpu_model is not a tower


@pytest.mark.parametrize("path", unchanged("device_towers"), ids=lambda p: p.name)
def test_unchanged_but_reported(path):
    codes = check_unchanged(path)
    # the function splits one model over two GPUs; the module's loop runs the same code per GPU
    assert codes == ["MGPU603", "MGPU604"]


def test_message_points_to_the_migration_section():
    source = (b"import tensorflow as tf\n\ndef f(x):\n    with tf.device('/device:GPU:0'):\n        x = tf.nn.relu(x)\n"
              b"    with tf.device('/device:GPU:1'):\n        return tf.nn.relu(x)\n")
    assert reported(source) == [
        'table.py:4:5: MGPU603 hand-placed GPU devices (lines 4, 6) split one model across GPUs (model parallelism);'
        ' left as it is: MirroredStrategy is data parallelism and does not replace it. Manual `tf.device` placement'
        ' still works on real GPUs (it fails where those GPUs are missing); for Keras 3 on JAX use'
        ' `keras.distribution.ModelParallel` with a `LayoutMap`; or drop the placement and train replicas under'
        ' `tf.distribute.MirroredStrategy`. See MIGRATION.md, "Hand-placed GPU towers (model parallelism)".',
    ]


@pytest.mark.parametrize("source", [
    b"import tensorflow as tf\nwith tf.device('/cpu:0'):\n    x = tf.zeros(1)\n",
    b"import tensorflow as tf\nwith tf.device('/gpu:0'):\n    pass\n",
    # one GPU for everything (`gpu_id` chosen by the user) is placement, not a split of the model
    b"import tensorflow as tf\ngpu_id = 1\nwith tf.device('/gpu:' + str(gpu_id)):\n    x = tf.zeros(1)\n",
    b"import torch\nwith torch.device('cuda:0'):\n    x = torch.zeros(1)  # gpu:0\n",
])
def test_not_towers(source):
    result = transform_source(source)
    assert result.output == source and result.findings == []


@pytest.mark.parametrize("device", ["'/gpu:%d' % i", "f'/gpu:{i}'", "'/gpu:' + str(i)", "'/gpu:{}'.format(i)"])
def test_a_loop_over_gpus_is_data_parallel_not_model_parallel(device):
    source = (
        "import tensorflow as tf\n\ndef make_parallel(model, n):\n    outs = []\n    for i in range(n):\n"
        f"        with tf.device({device}):\n            outs.append(model(slice_of(model.inputs[0], i, n)))\n"
        "    return outs\n"
    ).encode()
    assert reported(source) == [
        f"table.py:6:9: MGPU604 the loop around line 6 opens `tf.device({device})` once per GPU and runs the same "
        "code on each: hand-written data parallelism (batch slices on towers), what `multi_gpu_model` did; left as "
        "it is. MirroredStrategy replaces it: build and compile the model under `with "
        "tf.distribute.MirroredStrategy().scope():`, train it directly and delete this tower code (the codemod "
        "already rewrites calls of `make_parallel` / `to_multi_gpu` where they are used)."
    ]
