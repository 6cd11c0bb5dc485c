"""`with tf.device(b"/cpu:0"):` is not the legacy CPU template block (TensorFlow refuses a bytes
device name): the codemod migrates around it instead of failing on the file."""

from __future__ import annotations

from multi_gpu_codemod import transform_source

BEFORE = b'''import tensorflow as tf
from keras.utils import multi_gpu_model
with tf.device(b"/cpu:0"):
    model = build()
parallel = multi_gpu_model(model, gpus=2)
parallel.compile("sgd", "mse")
'''
STRATEGY = (b'tf.distribute.MirroredStrategy('
            b'tf.config.list_logical_devices("GPU")[:2])')
AFTER = b'''import tensorflow as tf
strategy = ''' + STRATEGY + b'''
with strategy.scope():
    with tf.device(b"/cpu:0"):
        model = build()
    model.compile("sgd", "mse")
'''


def test_bytes_device_block_is_kept_and_the_script_migrated():
    result = transform_source(BEFORE, "train.py")
    assert (result.output, result.findings, result.failed) == (AFTER, [], False)
    assert transform_source(result.output, "train.py").output == AFTER  # a second run changes nothing
