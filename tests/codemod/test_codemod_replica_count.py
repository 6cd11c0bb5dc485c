"""codemod/replica_count.py: a message said when the strategy holds several replicas prints their
number where it printed the count asked for; before/after pinned byte for byte, and the messages
left as they are."""

import pytest

from codemod_fixtures import check_source_pair
from multi_gpu_codemod import transform_source

HEAD = "from keras.utils import multi_gpu_model\n\nn = int(sys.argv[1])\nmodel = build()\n"
NEW_HEAD = (
    "import tensorflow as tf\n\nn = int(sys.argv[1])\n"
    'strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:n])\n'
)
SCOPE = "with strategy.scope():\n    model = build()\n    model.compile('adam', 'mse')\n"


def _try(*said: str) -> str:
    body = "".join(f"    {s}\n" for s in said)
    return (HEAD + "try:\n    model = multi_gpu_model(model, gpus=n)\n" + body
            + "except ValueError:\n    print('Training on one device')\nmodel.compile('adam', 'mse')\n")


def _if(*said: str) -> str:
    body = "".join(f"    {s}\n" for s in said)
    return NEW_HEAD + "if strategy.num_replicas_in_sync > 1:\n" + body + "else:\n    print('Training on one device')\n"


@pytest.mark.parametrize("message,now", [
    pytest.param("print('Training on %d GPUs' % n)", "print('Training on %d GPUs' % strategy.num_replicas_in_sync)",
                 id="percent"),
    pytest.param("print('%d GPUs, batch %d' % (n, 64))",
                 "print('%d GPUs, batch %d' % (strategy.num_replicas_in_sync, 64))", id="percent-tuple"),
    pytest.param("log.info('Using %d GPUs', n)", "log.info('Using %d GPUs', strategy.num_replicas_in_sync)",
                 id="logging-argument"),
    pytest.param("print('on {} GPUs'.format(n))", "print('on {} GPUs'.format(strategy.num_replicas_in_sync))",
                 id="format"),
    pytest.param("print(f'on {n} GPUs')", "print(f'on {strategy.num_replicas_in_sync} GPUs')", id="f-string"),
])
def test_a_message_printing_the_count_asked_for_prints_the_replica_count(message, now):
    # `[:n]` takes the GPUs there are, up to n: the old call raised with fewer, so its message was
    # true whenever it printed; the replica count keeps it true
    assert check_source_pair(_try(message), _if(now) + SCOPE) == []


@pytest.mark.parametrize("message", [
    pytest.param("print('Training on %d GPUs' % max_gpus)", id="another-name"),
    pytest.param("print('requested', n)", id="a-plain-print-argument-is-not-formatted"),
    pytest.param("log.info(n)", id="the-logged-message-itself"),
])
def test_a_message_not_formatting_the_count_is_left_as_written(message):
    out = transform_source(_try(message).encode(), "train.py").output.decode()
    assert f"if strategy.num_replicas_in_sync > 1:\n    {message}\n" in out


def test_every_gpu_is_the_replica_count_already_so_the_message_stays():
    # `MirroredStrategy()` over a machine count: `G` is the number of replicas
    source = (
        "from keras.utils import multi_gpu_model\nfrom utils import get_available_gpus\n\n"
        "G = len(get_available_gpus())\nmodel = build()\ntry:\n    model = multi_gpu_model(model, gpus=G)\n"
        "    print('Training on %d GPUs' % G)\nexcept ValueError:\n    print('one device')\n"
        "model.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert "MirroredStrategy()" in out and "    print('Training on %d GPUs' % G)\n" in out


def test_the_one_device_branch_keeps_its_message():
    source = _try("print('%d GPUs' % n)").replace("print('Training on one device')", "print('not %d GPUs' % n)")
    out = transform_source(source.encode(), "train.py").output.decode()
    assert "else:\n    print('not %d GPUs' % n)\n" in out


def test_a_guard_choosing_the_strategy_says_the_replica_count_after_it():
    source = HEAD + (
        "if n > 1:\n    parallel = multi_gpu_model(model, gpus=n)\n    print('Training on %d GPUs' % n)\n"
        "else:\n    parallel = model\nparallel.compile('adam', 'mse')\n"
    )
    after = NEW_HEAD.replace("strategy = ", "if n > 1:\n    strategy = ") + (
        "    print('Training on %d GPUs' % strategy.num_replicas_in_sync)\nelse:\n"
        "    strategy = tf.distribute.get_strategy()\n" + SCOPE
    )
    assert check_source_pair(source, after) == []


def test_a_message_before_the_strategy_line_keeps_the_count_it_printed():
    # said before the strategy exists: it cannot read the replica count
    source = HEAD + (
        "if n > 1:\n    print('Asking for %d GPUs' % n)\n    parallel = multi_gpu_model(model, gpus=n)\n"
        "else:\n    parallel = model\nparallel.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert "if n > 1:\n    print('Asking for %d GPUs' % n)\n    strategy = " in out


@pytest.mark.parametrize("count,said,now", [
    # round 62, bh15: with 2 or 3 of the 4 GPUs asked for, "Using 4 GPUs" would print
    ("4", "print('Using 4 GPUs')", "print(f'Using {strategy.num_replicas_in_sync} GPUs')"),
    # more than one of 2 is 2: true as written
    ("2", "print('using 2 GPUs')", "print('using 2 GPUs')"),
    # another number in the text is not the count
    ("4", "print('Using 14 GPUs')", "print('Using 14 GPUs')"),
])
def test_a_literal_count_in_the_text_is_said_as_the_replica_count(count, said, now):
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\ntry:\n"
        f"    model = multi_gpu_model(model, gpus={count})\n    {said}\nexcept ValueError:\n"
        "    print('one device')\nmodel.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert f"if strategy.num_replicas_in_sync > 1:\n    {now}\nelse:\n" in out, out
