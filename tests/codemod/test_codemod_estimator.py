"""codemod/fixers/estimator.py: before/after pairs and left-unchanged-but-reported cases."""

import pytest

from multi_gpu_codemod import transform_source
from child_process import run_on_two_simulated_gpus
from codemod_fixtures import ROOT, check_pair, check_source_pair, check_unchanged, needs_tensorflow, pairs, unchanged


@pytest.mark.parametrize("before", pairs("estimator"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    assert check_pair(before) == []


@pytest.mark.parametrize("path", unchanged("estimator"), ids=lambda p: p.name)
def test_unchanged_but_reported(path):
    assert set(check_unchanged(path)) == {"MGPU602"}


def test_steps_map_to_one_epoch_and_batch_scales_with_replicas():
    out = (ROOT / "estimator" / "train_evaluate.after.py").read_text()
    assert "model.fit(train_input_fn(), steps_per_epoch=10, epochs=1)" in out
    assert ".batch(8 * strategy.num_replicas_in_sync)" in out
    assert "model.evaluate(eval_input_fn())" in out  # eval batch unchanged: Estimator evaluated on one device
    assert "estimator" not in out.replace("Estimator", "")


TEMPLATE = """import tensorflow as tf


def input_fn():
    return tf.data.Dataset.from_tensor_slices(([[1.0]], [[2.0]])).batch(1)


model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])
model.compile("sgd", "mse")
strategy = tf.distribute.MirroredStrategy()
""" + (
    "estimator = tf.keras.estimator.model_to_estimator(keras_model=model, "
    "config=tf.estimator.RunConfig(train_distribute=strategy))\n{call}\n"
)


@pytest.mark.parametrize("call, why", [
    ("estimator.train(input_fn=input_fn, hooks=[])", "hooks"),
    ("estimator.train(input_fn=input_fn)\nestimator.train(input_fn=input_fn, max_steps=5)", "max_steps"),
    ("estimator.train(input_fn=input_fn)\nestimator.evaluate(input_fn=input_fn, steps=2)", "shares its input function"),
    ("estimator.train(input_fn=lambda: input_fn())", "lambda"),
    ("metrics = estimator.evaluate(input_fn=input_fn)", "result"),
    ("estimator.train(input_fn=input_fn)\nestimator.export_saved_model('out', None)", "export_saved_model"),
    ("print(strategy)\nestimator.train(input_fn=input_fn)", "used elsewhere"),
])
def test_not_simple_is_reported_not_rewritten(call, why):
    source = TEMPLATE.format(call=call).encode()
    result = transform_source(source)
    assert result.output == source
    assert [f.code for f in result.findings] == ["MGPU602"]
    assert why in result.findings[0].message


REWRITES = [
    pytest.param(
        'import tensorflow as tf\n'
        '\n'
        '\n'
        'def input_fn():\n'
        '    return tf.data.Dataset.from_tensor_slices(([[1.0]], [[2.0]])).batch(1)\n'
        '\n'
        '\n'
        'model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])\n'
        'model.compile("sgd", "mse")\n'
        'strategy = tf.distribute.MirroredStrategy()\n'
        'estimator = tf.keras.estimator.model_to_estimator(keras_model=model,'
        ' config=tf.estimator.RunConfig(train_distribute=strategy))\n'
        'estimator.train(input_fn)\n',
        'import tensorflow as tf\n'
        '\n'
        '\n'
        'def input_fn():\n'
        '    return tf.data.Dataset.from_tensor_slices(([[1.0]], [[2.0]])).batch(1 * strategy.num_replicas_in_sync)\n'
        '\n'
        '\n'
        'strategy = tf.distribute.MirroredStrategy()\n'
        'with strategy.scope():\n'
        '    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])\n'
        '    model.compile("sgd", "mse")\n'
        'model.fit(input_fn(), epochs=1)\n',
        [],
        id='train-until-input-ends',
    ),
]


@pytest.mark.parametrize("before,after,findings", REWRITES)
def test_rewrite(before, after, findings):
    assert check_source_pair(before, after) == findings


@needs_tensorflow
@pytest.mark.slow
def test_migrated_estimator_script_runs_on_two_simulated_gpus(tmp_path):
    run_on_two_simulated_gpus(ROOT / "estimator" / "train_evaluate.before.py", tmp_path)
