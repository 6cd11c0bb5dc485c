"""codemod/unread_counts.py: a machine GPU count only the removed call read goes, with its helper."""

from multi_gpu_codemod import transform_source

HELPER = (
    "def get_available_gpus():\n    from tensorflow.python.client import device_lib\n"
    "    return [x.name for x in device_lib.list_local_devices() if x.device_type == 'GPU']\n"
)
HEAD = "import numpy as np\nfrom keras.utils import multi_gpu_model\n\n\n" + HELPER + "\n\n"
SITE = (
    "model = build()\n\n# how many cards\nG = len(get_available_gpus())\nif G > 1:\n"
    "    parallel = multi_gpu_model(model, gpus=G)\nelse:\n    parallel = model\n"
    "parallel.compile('adam', 'mse')\nparallel.fit(x, y)\n"
)


def _migrated(source: str) -> str:
    result = transform_source(source.encode(), "train.py")
    assert transform_source(result.output, "train.py").output == result.output
    return result.output.decode()


def test_a_count_nothing_reads_goes_with_its_comment_and_its_helper():
    out = _migrated(HEAD + SITE)
    assert out == (
        "import numpy as np\nimport tensorflow as tf\n\n\n"
        "strategy = tf.distribute.MirroredStrategy()\nwith strategy.scope():\n    model = build()\n"
        "    model.compile('adam', 'mse')\n\nmodel.fit(x, y)\n"
    )


def test_a_count_still_read_stays_and_so_does_its_helper():
    out = _migrated(HEAD + SITE + "print('batch', 32 * G)\n")
    assert "G = len(get_available_gpus())\n" in out and "def get_available_gpus():" in out


def test_a_helper_something_else_reads_stays():
    out = _migrated(HEAD + SITE + "print(get_available_gpus())\n")
    assert "G = len(" not in out and "def get_available_gpus():" in out


def test_a_module_others_import_keeps_its_names():
    body = SITE.replace("parallel.fit(x, y)\n", "return parallel\n").splitlines()
    library = HEAD + "def train(x, y):\n" + "".join(f"    {line}\n" if line else "\n" for line in body)
    out = _migrated(library)
    assert "G = len(get_available_gpus())" in out and "def get_available_gpus():" in out


def test_the_helpers_own_import_goes_with_it_and_a_docstring_aside_naming_it_goes():
    source = (
        '"""Audio tagging.\n\nUses every GPU the machine has (counted through device_lib).\n"""\n'
        "from keras.utils import multi_gpu_model\nfrom tensorflow.python.client import device_lib\n\n\n"
        "def get_available_gpus():\n    return [x.name for x in device_lib.list_local_devices()"
        " if x.device_type == 'GPU']\n\n\n" + SITE
    )
    out = _migrated(source)
    assert out.startswith('"""Audio tagging.\n\nUses every GPU the machine has.\n"""\nimport tensorflow as tf\n')
    assert "device_lib" not in out and "get_available_gpus" not in out


def test_a_class_count_read_as_an_attribute_stays_and_so_does_the_class_attribute_alias():
    source = (
        "import tensorflow as tf\nfrom keras.utils import multi_gpu_model\n\n\n"
        "class Trainer:\n    G = len(tf.config.list_physical_devices('GPU'))\n"
        "    model = build()\n    parallel = multi_gpu_model(model, gpus=G)\n    parallel.compile('adam', 'mse')\n\n"
        "    def batch(self):\n        return 32 * self.G\n\n\nTrainer.parallel.fit(x, y)\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert "G = len(" in out
    # `Trainer.parallel` is read as an attribute: the class keeps the name, bound to the model
    assert "        parallel = model\n        parallel.compile('adam', 'mse')\n" in out


IDS_HEAD = (
    "import os\nimport argparse\nfrom keras.utils import multi_gpu_model\n\n"
    "parser = argparse.ArgumentParser()\nparser.add_argument('--gpu_ids', default='0,1')\n"
    "args = parser.parse_args()\nos.environ['CUDA_VISIBLE_DEVICES'] = args.gpu_ids\n"
)
IDS_SITE = (
    "\nmodel = build()\nif n_gpu > 1:\n    model = multi_gpu_model(model, gpus=n_gpu)\n"
    "model.compile('adam', 'mse')\nmodel.fit(x, y)\n"
)


def test_a_count_of_the_ids_the_script_holds_goes_when_nothing_reads_it():
    out = _migrated(IDS_HEAD + "n_gpu = len(args.gpu_ids.split(','))\n" + IDS_SITE)
    assert out == (
        "import os\nimport argparse\nimport tensorflow as tf\n\n"
        "parser = argparse.ArgumentParser()\nparser.add_argument('--gpu_ids', default='0,1')\n"
        "args = parser.parse_args()\nos.environ['CUDA_VISIBLE_DEVICES'] = args.gpu_ids\n\n"
        "strategy = tf.distribute.MirroredStrategy()\nwith strategy.scope():\n    model = build()\n"
        "    model.compile('adam', 'mse')\nmodel.fit(x, y)\n"
    )


def test_a_count_of_ids_still_read_stays():
    source = IDS_HEAD + "n_gpu = len(args.gpu_ids.split(','))\n" + IDS_SITE + "print('batch', 32 * n_gpu)\n"
    assert "n_gpu = len(args.gpu_ids.split(','))\n" in _migrated(source)


def test_a_count_that_calls_something_stays_even_unread():
    # `count_ids(...)` may do more than count (log, validate): only reads of names go
    source = IDS_HEAD + "n_gpu = len(count_ids(args.gpu_ids))\n" + IDS_SITE
    assert "n_gpu = len(count_ids(args.gpu_ids))\n" in _migrated(source)


EXPORT_HEAD = (
    "#!/usr/bin/env python\n# coding: utf-8\n\n# In[1]:\n\n\nimport numpy as np\n"
    "from keras.utils import multi_gpu_model\nfrom tensorflow.python.client import device_lib\n\n\n# In[2]:\n\n\n"
    "def count_gpus():\n    return sum(1 for d in device_lib.list_local_devices() if d.device_type == 'GPU')\n\n\n"
)
EXPORT_TRAINER = (
    "class Trainer:\n    def __init__(self):\n        self.net = build()\n        gpus = count_gpus()\n"
    "        if gpus > 1:\n            self.model = multi_gpu_model(self.net, gpus=gpus)\n        else:\n"
    "            self.model = self.net\n        self.model.compile('adam', 'mse')\n\n"
    "    def train(self, x, y):\n        self.model.fit(x, y)\n\n\n"
)


def test_a_notebook_export_runs_as_a_script_and_keeps_the_cell_marker_of_the_helpers_cell():
    # nothing at module level calls fit (the last cell calls `trainer.train`): an export still runs
    # as a program, so the count in the method and its helper go; the cell goes on with the class
    out = _migrated(EXPORT_HEAD + EXPORT_TRAINER + "# In[3]:\n\n\nTrainer().train(x, y)\n")
    assert "gpus = count_gpus()" not in out and "def count_gpus" not in out and "device_lib" not in out
    assert "import tensorflow as tf\n\n\n# In[2]:\n\n\nclass Trainer:\n" in out
    assert "\n\n\n# In[3]:\n\n\nTrainer().train(x, y)\n" in out


def test_a_cell_the_helper_filled_alone_goes_with_its_marker():
    source = EXPORT_HEAD + "# In[3]:\n\n\n" + EXPORT_TRAINER + "# In[4]:\n\n\nTrainer().train(x, y)\n"
    out = _migrated(source)
    assert "# In[2]:" not in out and "import tensorflow as tf\n\n\n# In[3]:\n\n\nclass Trainer:\n" in out


def test_a_setting_only_the_removed_calls_dropped_argument_read_goes_with_its_comment():
    """Round 60, bc12: `CPU_MERGE = False` fed `cpu_merge=CPU_MERGE`, which the strategy has no
    use for; a setting something still reads stays."""
    source = (
        "from keras.utils import multi_gpu_model\n\nGPUS = 4\n# NVLink box: merging on GPU is faster\n"
        "CPU_MERGE = False\nRELOCATE = True\nEPOCHS = 3\n\nmodel = build()\n"
        "parallel = multi_gpu_model(model, gpus=GPUS, cpu_merge=CPU_MERGE, cpu_relocation=RELOCATE)\n"
        "parallel.compile('adam', 'mse')\nparallel.fit(x, y, epochs=EPOCHS)\n"
    )
    out = _migrated(source)
    assert out.startswith("import tensorflow as tf\n\nGPUS = 4\nEPOCHS = 3\n\nstrategy = "), out
    assert "NVLink" not in out and "CPU_MERGE" not in out and "RELOCATE" not in out
