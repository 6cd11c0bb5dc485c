"""codemod/fixers/copied_helpers.py: before/after pairs and left-unchanged-but-reported cases."""

import pytest

from codemod_fixtures import check_pair, check_unchanged, pairs, unchanged


@pytest.mark.parametrize("before", pairs("helpers"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    check_pair(before)


@pytest.mark.parametrize("path", unchanged("helpers"), ids=lambda p: p.name)
def test_unchanged_but_reported(path):
    check_unchanged(path)


from multi_gpu_codemod import transform_source  # noqa: E402

WRAPPER = (
    "import tensorflow as tf\nfrom keras.models import Model\nfrom keras.utils import multi_gpu_model\n\n\n"
    "class ModelMGPU(Model):\n    def __init__(self, ser_model, gpus):\n"
    "        pmodel = multi_gpu_model(ser_model, gpus)\n        self.__dict__.update(pmodel.__dict__)\n"
    "        self._smodel = ser_model\n\n    def __getattribute__(self, attrname):\n"
    "        if 'save' in attrname:\n            return getattr(self._smodel, attrname)\n"
    "        return super(ModelMGPU, self).__getattribute__(attrname)\n\n\n"
)
MAIN = ("if __name__ == '__main__':\n    net = build()\n    model = ModelMGPU(net, 2)\n"
        "    model.compile('adam', 'mse')\n")


def test_a_scripts_own_wrapper_goes_with_its_import_once_nothing_uses_it():
    # left, `from keras.utils import multi_gpu_model` would stop the script on Keras 3
    result = transform_source((WRAPPER + MAIN).encode(), "train.py")
    out = result.output.decode()
    assert "ModelMGPU" not in out and "multi_gpu_model" not in out
    # and `from keras.models import Model`, which only the class read
    assert out.startswith("import tensorflow as tf\n\n\nif __name__ == '__main__':\n")
    assert [f.code for f in result.findings] == []
    # an import the script reads too stays
    kept = transform_source((WRAPPER + MAIN + "    print(Model)\n").encode(), "train.py").output.decode()
    assert kept.startswith("import tensorflow as tf\nfrom keras.models import Model\n")


def test_a_documented_helper_goes_too_and_the_deletion_is_reported():
    # kept, its import would stop the script on Keras 3; another file importing it is told of
    documented = WRAPPER.replace("(Model):\n", "(Model):\n    \"\"\"Other notebooks import this.\"\"\"\n\n")
    result = transform_source((documented + MAIN).encode(), "train.py")
    assert "ModelMGPU" not in result.output.decode() and "with strategy.scope():" in result.output.decode()
    (finding,) = result.findings
    assert finding.code == "MGPU401" and "was deleted with its `multi_gpu_model` import" in finding.message


def test_an_exported_cell_marker_above_the_helper_documents_nothing():
    # `# In[2]:` is the export's, not the helper's: no MGPU401; a real comment above it is one
    marked = WRAPPER.replace("class ModelMGPU", "# In[2]:\n\n\nclass ModelMGPU")
    result = transform_source((marked + MAIN).encode(), "train.py")
    assert "ModelMGPU" not in result.output.decode() and [f.code for f in result.findings] == []
    commented = WRAPPER.replace("class ModelMGPU", "# Other notebooks import this.\nclass ModelMGPU")
    assert [f.code for f in transform_source((commented + MAIN).encode(), "train.py").findings] == ["MGPU401"]


def test_the_tower_loop_of_a_deleted_helper_is_not_reported():
    helper = (
        "import tensorflow as tf\nfrom keras.layers import Lambda, concatenate\nfrom keras.models import Model\n\n\n"
        "def make_parallel(model, n):\n    outs = []\n    for i in range(n):\n"
        "        with tf.device('/gpu:%d' % i):\n            outs.append(model(Lambda(lambda t: t)(model.input)))\n"
        "    with tf.device('/cpu:0'):\n        return Model(model.input, concatenate(outs, axis=0))\n\n\n"
    )
    main = (
        "if __name__ == '__main__':\n    net = build()\n    net = make_parallel(net, 2)\n"
        "    net.compile('adam', 'mse')\n"
    )
    result = transform_source((helper + main).encode(), "train.py")
    out = result.output.decode()
    assert "make_parallel" not in out and "Lambda" not in out and "concatenate" not in out
    assert result.findings == []


def test_a_wrapper_in_a_module_others_may_import_goes_with_its_import_and_is_reported():
    # rounds 63 and 64, bi03, bk03: kept, its `multi_gpu_model` import stopped the module on Keras 3
    # for every file importing it
    library = WRAPPER + ("def train():\n    net = build()\n    model = ModelMGPU(net, 2)\n"
                         "    model.compile('adam', 'mse')\n")
    result = transform_source(library.encode(), "train.py")
    out = result.output.decode()
    assert "ModelMGPU" not in out and "multi_gpu_model" not in out, out
    [finding] = [f for f in result.findings if f.code == "MGPU401"]
    assert finding.message.startswith(
        "`ModelMGPU` (defined here) was deleted with its `multi_gpu_model` import: nothing in this file reads it"
    )
    assert "If another file imports `ModelMGPU` from here, migrate that file too" in finding.message


def test_a_wrapper_the_file_still_reads_is_kept():
    still_read = WRAPPER + MAIN + "    assert isinstance(model, ModelMGPU)\n"
    result = transform_source(still_read.encode(), "train.py")
    assert "class ModelMGPU(Model):" in result.output.decode()
    assert "MGPU401" in [f.code for f in result.findings] or not result.changed


def test_a_pragma_on_the_removed_import_goes_with_it():
    source = (
        "import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '0,1'\nimport tensorflow as tf  # noqa: E402\n"
        "from keras.utils import multi_gpu_model  # noqa: E402\n\nmodel = build()\n"
        "parallel = multi_gpu_model(model, gpus=2)  # two cards\nparallel.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode()).output.decode()
    assert out.count("# noqa: E402") == 1 and "# two cards" in out


def test_a_script_training_at_module_level_owns_its_helper_too():
    source = (
        "from keras.utils import multi_gpu_model\n\n\ndef make_parallel(model, n):\n"
        "    return multi_gpu_model(model, gpus=n)\n\n\nnet = build()\nnet = make_parallel(net, 2)\n"
        "net.compile('adam', 'mse')\nnet.fit(x, y)\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert "make_parallel" not in out and "multi_gpu_model" not in out and "net.fit(x, y)" in out


def test_a_documented_slicing_helper_that_never_called_multi_gpu_model_is_reported_with_its_own_reason():
    source = (
        "import tensorflow as tf\nfrom keras.layers import Lambda, concatenate\nfrom keras.models import Model\n\n\n"
        "def make_parallel(model, gpu_count):\n    \"\"\"kuza55's towers: slice each batch per GPU.\"\"\"\n"
        "    outputs = []\n    for g in range(gpu_count):\n        with tf.device('/gpu:%d' % g):\n"
        "            outputs.append(model(Lambda(lambda x: x)(model.inputs[0])))\n"
        "    return Model(model.inputs, concatenate(outputs, axis=0))\n\n\n"
        "if __name__ == '__main__':\n    net = build()\n    model = make_parallel(net, 2)\n"
        "    model.compile('adam', 'mse')\n"
    )
    result = transform_source(source.encode(), "train.py")
    (finding,) = result.findings
    assert finding.code == "MGPU401" and "multi_gpu_model" not in finding.message
    assert "was deleted: nothing in this file reads it any more, and MirroredStrategy does what it did" in (
        finding.message
    )


def test_a_helper_module_imported_by_name_goes_when_nothing_else_reads_it():
    source = (
        "import numpy as np\n\nfrom utils import multi_gpu\n\n\nif __name__ == '__main__':\n    net = build()\n"
        "    model = multi_gpu.make_parallel(net, 2)\n    model.compile('adam', 'mse')\n"
    )
    result = transform_source(source.encode(), "train.py")
    assert result.output.decode().startswith("import numpy as np\nimport tensorflow as tf\n\n\nif __name__")
    (finding,) = result.findings
    assert finding.code == "MGPU401" and "(from `utils.multi_gpu`)" in finding.message
    kept = transform_source((source + "    print(multi_gpu.__file__)\n").encode(), "train.py").output.decode()
    assert "from utils import multi_gpu\n" in kept


def test_a_helper_the_file_still_defines_keeps_the_comment_that_describes_it():
    """Round 60, bd04: another file may import `make_parallel` (MGPU401), so its banner's title stays."""
    source = (
        "import tensorflow as tf\nfrom keras.layers import Lambda, concatenate\n\n\n"
        "# ------------------------------------------------------------\n"
        "# Data-parallel helper (after kuza55/keras-extras)\n"
        "# ------------------------------------------------------------\n"
        "def make_parallel(model, gpu_count):\n    outputs = []\n    for i in range(gpu_count):\n"
        "        with tf.device('/gpu:%d' % i):\n"
        "            outputs.append(model(Lambda(lambda x: x)(model.inputs[0])))\n"
        "    return concatenate(outputs, axis=0)\n\n\n"
        "def train(x, y):\n    model = build_net()\n    model = make_parallel(model, 2)\n"
        "    model.compile(optimizer='adam', loss='mse')\n    model.fit(x, y)\n"
    )
    result = transform_source(source.encode(), "helpers.py")
    out = result.output.decode()
    assert "with strategy.scope():" in out and "MGPU401" in [f.code for f in result.findings]
    assert "# Data-parallel helper (after kuza55/keras-extras)\n# -----" in out, out


def test_a_helper_the_file_still_defines_keeps_its_docstring_and_comments():
    """Round 63, bi03: a kept helper lost its docstring and its comment to the prose pass."""
    library = (
        "import tensorflow as tf\nfrom keras.layers import Lambda, concatenate\n\n\n"
        "def make_parallel(model, gpu_count):\n"
        '    """Slices every batch across the towers and concatenates the outputs on the CPU."""\n'
        "    outputs = []\n    for i in range(gpu_count):  # one tower per GPU\n"
        "        with tf.device('/gpu:%d' % i):\n"
        "            outputs.append(model(Lambda(lambda x: x)(model.inputs[0])))\n"
        "    return concatenate(outputs, axis=0)\n\n\n"
        "def train():\n    net = build()\n    model = make_parallel(net, 2)\n    model.compile('adam', 'mse')\n"
    )
    result = transform_source(library.encode(), "train.py")
    out = result.output.decode()
    assert '    """Slices every batch across the towers and concatenates the outputs on the CPU."""\n' in out, out
    assert "    for i in range(gpu_count):  # one tower per GPU\n" in out
