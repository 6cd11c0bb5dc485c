"""codemod/fixers/backend_gpus.py: Keras 2's private GPU listing, and the backend import it went through."""

from codemod_fixtures import check_source_pair

from multi_gpu_codemod import transform_source

_BODY = """\
model = Sequential([Dense(4, input_shape=(3,))])
if G > 1:
    model = multi_gpu_model(model, gpus=G)
model.compile(loss="mse", optimizer="sgd")
"""
_AFTER_BODY = """\
strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = Sequential([Dense(4, input_shape=(3,))])
    model.compile(loss="mse", optimizer="sgd")
"""


def test_count_replaced_and_unread_backend_import_removed():
    before = (
        "from keras import backend as K\nfrom keras.models import Sequential\nfrom keras.layers import Dense\n"
        "from keras.utils import multi_gpu_model\n\n"
        "G = len(K.tensorflow_backend._get_available_gpus())\n" + _BODY
    )
    after = (
        "from keras.models import Sequential\nfrom keras.layers import Dense\nimport tensorflow as tf\n\n"
        'G = len(tf.config.list_logical_devices("GPU"))\n' + _AFTER_BODY
    )
    check_source_pair(before, after)


def test_dotted_backend_import_removed_too():
    before = (
        "import keras.backend as K\nfrom keras.models import Sequential\nfrom keras.layers import Dense\n"
        "from keras.utils import multi_gpu_model\n\n"
        "G = len(K.tensorflow_backend._get_available_gpus())\n" + _BODY
    )
    after = (
        "from keras.models import Sequential\nfrom keras.layers import Dense\nimport tensorflow as tf\n\n"
        'G = len(tf.config.list_logical_devices("GPU"))\n' + _AFTER_BODY
    )
    check_source_pair(before, after)


def test_backend_import_kept_while_the_script_still_reads_it():
    before = (
        "from keras import backend as K\nfrom keras.models import Sequential\nfrom keras.layers import Dense\n"
        "from keras.utils import multi_gpu_model\n\n"
        "gpus = K.tensorflow_backend._get_available_gpus()\nG = len(gpus)\n" + _BODY + "K.clear_session()\n"
    )
    after = (
        "from keras import backend as K\nfrom keras.models import Sequential\nfrom keras.layers import Dense\n"
        "import tensorflow as tf\n\n"
        'gpus = [d.name for d in tf.config.list_logical_devices("GPU")]\nG = len(gpus)\n'
        + _AFTER_BODY + "K.clear_session()\n"
    )
    check_source_pair(before, after)


def test_file_without_a_rewritten_site_keeps_the_listing():
    # Nothing migrated here: the shim still serves the private listing, and the line stays.
    source = b"from keras import backend as K\nG = len(K.tensorflow_backend._get_available_gpus())\nprint(G)\n"
    result = transform_source(source, "listing.py")
    assert result.output == source and not result.changed


def test_a_listing_copied_into_the_strategy_choice_is_written_with_tf_config():
    # the guard chooses the strategy: its copy there must not call the private listing either
    before = (
        "import keras.backend as K\nfrom keras.utils import multi_gpu_model\n\nmodel = build()\n"
        "if K.tensorflow_backend._get_available_gpus():\n    print('several GPUs')\n"
        "    model = multi_gpu_model(model, gpus=2)\nmodel.compile('adam', 'mse')\n"
    )
    after = (
        "import tensorflow as tf\n\n"
        'if tf.config.list_logical_devices("GPU"):\n    print(\'several GPUs\')\n'
        '    strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:2])\n'
        "else:\n    strategy = tf.distribute.get_strategy()\nwith strategy.scope():\n    model = build()\n"
        "    model.compile('adam', 'mse')\n"
    )
    assert check_source_pair(before, after) == []


def test_where_only_presence_is_read_the_devices_are_enough():
    before = (
        "from keras import backend as K\nfrom keras.utils import multi_gpu_model\n\nmodel = build()\n"
        "parallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n"
        "if not K.tensorflow_backend._get_available_gpus():\n    print('on the CPU')\n"
        "names = K.tensorflow_backend._get_available_gpus()\n"
    )
    out = transform_source(before.encode()).output.decode()
    assert 'if not tf.config.list_logical_devices("GPU"):\n' in out
    assert 'names = [d.name for d in tf.config.list_logical_devices("GPU")]\n' in out


def test_a_plain_copy_of_the_listing_is_replaced_whole():
    before = (
        "from keras import backend as K\nfrom keras.models import Sequential\nfrom keras.layers import Dense\n"
        "from keras.utils import multi_gpu_model\n\n\ndef get_available_gpus():\n"
        "    return [x for x in K.tensorflow_backend._get_available_gpus()]\n\n\n"
        "G = len(get_available_gpus())\n" + _BODY
    )
    after = (
        "from keras.models import Sequential\nfrom keras.layers import Dense\nimport tensorflow as tf\n\n\n"
        "def get_available_gpus():\n"
        '    return [d.name for d in tf.config.list_logical_devices("GPU")]\n\n\n'
        "G = len(get_available_gpus())\n" + _AFTER_BODY
    )
    check_source_pair(before, after)
    # a comprehension that filters or transforms keeps its own shape
    filtered = before.replace("_get_available_gpus()]", "_get_available_gpus() if x]")
    assert "[x for x in [d.name for d in" in transform_source(filtered.encode()).output.decode()
