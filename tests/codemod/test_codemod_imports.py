"""codemod/fixers/imports.py: before/after pairs and left-unchanged-but-reported cases."""

import pytest

from multi_gpu_codemod import transform_source

from codemod_fixtures import check_pair, check_unchanged, pairs, unchanged


@pytest.mark.parametrize("before", pairs("imports"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    check_pair(before)


@pytest.mark.parametrize("path", unchanged("imports"), ids=lambda p: p.name)
def test_unchanged_but_reported(path):
    check_unchanged(path)


def test_unused_aliased_imports_go_even_without_a_call_site():
    from codemod_fixtures import ROOT

    assert check_pair(ROOT / "imports" / "unused_aliases.before.py") == []


def test_removed_imports_keep_the_blank_lines_around_them():
    from codemod_fixtures import ROOT

    after = (ROOT / "imports" / "blank_lines_kept.after.py").read_text()
    assert after.startswith("import os\n\nfrom keras.models import Sequential\n")
    top = (ROOT / "imports" / "top_of_file.after.py").read_text()
    assert top.startswith("from keras.models import Sequential\n")


def test_the_added_import_goes_after_the_set_up_between_imports():
    from codemod_fixtures import ROOT

    after = (ROOT / "imports" / "after_matplotlib_use.after.py").read_text()
    lines = after.splitlines()
    # `matplotlib.use("agg")` must run before pyplot is imported: the new import never splits them,
    # it follows the module's last import; the environment setting stays before every import after it.
    assert lines.index("import tensorflow as tf") == lines.index("from keras.models import Sequential") + 1
    assert lines.index('matplotlib.use("agg")') == lines.index("import matplotlib") + 1


@pytest.mark.parametrize("after_call,kept", [("", False), ("keras.backend.clear_session()\n", True)])
def test_import_keras_used_only_for_the_call_goes_with_it(after_call, kept):
    source = (
        "import keras\n\nmodel = build()\nparallel = keras.utils.multi_gpu_model(model, gpus=2)\n"
        f"parallel.compile('adam', 'mse')\n{after_call}"
    )
    out = transform_source(source.encode()).output.decode()
    assert ("import keras\n" in out) is kept and "multi_gpu_model" not in out


def test_the_added_import_joins_the_later_group_the_removed_import_sat_in():
    # a notebook's first cell of helpers, then its imports cell: tf goes with the keras imports
    source = (
        "import matplotlib.pyplot as plt\n\n\ndef plot(h):\n    plt.plot(h)\n\n\n"
        "import numpy as np\nfrom keras.models import Sequential\nfrom keras.utils import multi_gpu_model\n\n"
        "model = Sequential()\nparallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode(), "t.py").output.decode()
    assert out.startswith("import matplotlib.pyplot as plt\n\n\ndef plot(h):\n    plt.plot(h)\n\n\n"
                          "import numpy as np\nfrom keras.models import Sequential\nimport tensorflow as tf\n\n")


def test_a_removed_import_alone_in_its_group_leaves_the_added_import_at_the_top():
    source = (
        "import numpy as np\n\n\ndef plot(h):\n    pass\n\n\nfrom keras.utils import multi_gpu_model\n\n"
        "model = build()\nparallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode(), "t.py").output.decode()
    assert out.startswith("import numpy as np\nimport tensorflow as tf\n\n\ndef plot(h):\n")


@pytest.mark.parametrize("imports,expected", [
    # the project's own group last: tf joins the group that imports keras (round 25, va09)
    ("import argparse\n\nfrom tensorflow.keras import layers\nfrom tensorflow.keras.callbacks import CSVLogger\n\n"
     "from sleep_data import load_split\n",
     "import argparse\n\nfrom tensorflow.keras import layers\nfrom tensorflow.keras.callbacks import CSVLogger\n"
     "import tensorflow as tf\n\nfrom sleep_data import load_split\n"),
    # keras in the last group already, or in no group: the end of the block, as before
    ("import numpy as np\n\nfrom keras.layers import Dense\nimport loaders\n",
     "import numpy as np\n\nfrom keras.layers import Dense\nimport loaders\nimport tensorflow as tf\n"),
    ("import numpy as np\n\nimport loaders\n", "import numpy as np\n\nimport loaders\nimport tensorflow as tf\n"),
])
def test_the_added_import_joins_the_group_that_imports_keras(imports, expected):
    calls = "\nmodel = build()\nparallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n"
    source = imports.replace("\n\n", "\nfrom keras.utils import multi_gpu_model\n\n", 1) + calls
    out = transform_source(source.encode(), "t.py").output.decode()
    assert out.startswith(expected + "\nstrategy = ")


def test_tf_imported_as_tensorflow_in_a_module_level_branch_is_reused_as_tf():
    # round 29, za07's neighbour: `if USE_TF: import tensorflow as tf` binds the same module; the
    # added top-level import makes it bound on every path
    source = (
        "from keras.utils import multi_gpu_model\n\nif USE_TF:\n    import tensorflow as tf\n"
        "model = build()\nparallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert out.startswith("import tensorflow as tf\n\nif USE_TF:\n    import tensorflow as tf\n")
    assert "strategy = tf.distribute.MirroredStrategy(" in out


def test_tf_imported_inside_the_function_keeps_the_full_name():
    # round 29, za07: `import tensorflow as tf` in a branch of `main()` makes `tf` a local of
    # `main`, unbound where the strategy line would read it: the module's full name instead
    source = (
        "from keras.utils import multi_gpu_model\n\n\ndef main(G):\n    if G > 1:\n        import tensorflow as tf\n"
        "        print(tf.__version__)\n    model = build()\n    parallel = multi_gpu_model(model, gpus=2)\n"
        "    parallel.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert out.startswith("import tensorflow\n") and "strategy = tensorflow.distribute.MirroredStrategy(" in out


@pytest.mark.parametrize("comment,kept", [
    ("# local helper with make_parallel()", False),  # round 44, ba13: it only spoke of the line that went
    # round 47, af16: why the file had it spoke of the line too; kept, it floated over the code below
    ("# vendored from our utils repo", False),
    ("# kuza55's helper, lives in utils/", False),
])
def test_a_removed_imports_comment_goes_with_it(comment, kept):
    source = (
        "import numpy as np\n\nimport multi_gpu  " + comment + "\n\nmodel = build()\n"
        "model = multi_gpu.make_parallel(model, 2)\nmodel.compile('adam', 'mse')\nmodel.fit(x, y)\n"
    )
    out = transform_source(source.encode(), "t.py").output.decode()
    assert "import multi_gpu" not in out and "MirroredStrategy" in out
    assert (comment.replace("make_parallel()", "") in out) == kept
    assert "MirroredStrategy\n" not in out.split("strategy =")[0]  # (no renamed helper comment left above)
