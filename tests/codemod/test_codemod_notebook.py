"""codemod/notebook.py: cells as one module, magics kept, JSON layout kept, findings per cell."""

import json
import sys

import pytest

from multi_gpu_codemod.cli import main
from multi_gpu_codemod.notebook import transform_notebook
from codemod_fixtures import ROOT

BEFORE = (ROOT / "notebooks" / "train.before.ipynb").read_bytes()
AFTER = (ROOT / "notebooks" / "train.after.ipynb").read_bytes()


def _cells(data: bytes) -> list[dict]:
    return json.loads(data)["cells"]


def test_fixture_pair_and_idempotent():
    result = transform_notebook(BEFORE, "train.ipynb")
    assert result.output == AFTER and not result.failed
    assert transform_notebook(AFTER, "train.ipynb").output == AFTER


def test_only_edited_cells_source_changes():
    before, after = _cells(BEFORE), _cells(AFTER)
    # The template's cell lost its `multi_gpu_model` call: what it printed is no longer its output.
    assert before[2]["outputs"] and after[2]["outputs"] == [] and after[2]["execution_count"] is None
    assert [c.get("outputs") for i, c in enumerate(before) if i != 2] == [
        c.get("outputs") for i, c in enumerate(after) if i != 2
    ]
    assert [c["metadata"] for c in before] == [c["metadata"] for c in after]
    assert [list(c) for c in before] == [list(c) for c in after]  # key order
    assert before[0] == after[0] and before[4] == after[4]  # markdown, %%bash cell
    assert json.loads(BEFORE)["metadata"] == json.loads(AFTER)["metadata"]
    assert AFTER.endswith(b"}\n")
    # lines outside the edited cells' sources are byte-identical
    a, b = BEFORE.decode().splitlines(), AFTER.decode().splitlines()
    assert a[:15] == b[:15] and a[-23:] == b[-23:]


def test_magics_and_cross_cell_scope():
    cells = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in _cells(AFTER)]
    assert cells[1].startswith("%matplotlib inline\n!nvidia-smi\n")
    assert "multi_gpu_model" not in cells[1]
    assert cells[2].startswith("strategy = tf.distribute.MirroredStrategy(")
    # the compile in a later `%%time` cell reopens the scope there (each cell compiles alone)
    assert cells[3].startswith("%%time\nwith strategy.scope():\n    model.compile(")
    assert "files = !ls\n" in cells[3] and cells[3].endswith("model.fit(x, y, epochs=1)  # café")
    assert cells[4] == "%%bash\necho hi\n"


def _notebook(sources, indent=1, as_string=False, trailing="\n"):
    cells = [
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
         "source": s if as_string else s.splitlines(keepends=True)}
        for s in sources
    ]
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return (json.dumps(nb, indent=indent) + trailing).encode()


SCRIPT = [
    "import tensorflow as tf\nfrom keras.utils import multi_gpu_model\n",
    "model = build()\nparallel = multi_gpu_model(model, 2)\nparallel.compile('sgd', 'mse')\n",
]


def test_string_sources_and_other_layouts():
    for indent, as_string, trailing in [(2, True, ""), (None, False, ""), (4, False, "\n")]:
        data = _notebook(SCRIPT, indent, as_string, trailing)
        result = transform_notebook(data, "nb.ipynb")
        assert result.changed, (indent, as_string)
        cells = _cells(result.output)
        assert isinstance(cells[1]["source"], str) == as_string
        out = result.output.decode()
        assert out.endswith("}" + trailing)
        reference = json.loads(result.output)
        assert (json.dumps(reference, indent=indent) + trailing) == out  # same layout as json.dumps made it
        assert transform_notebook(result.output).output == result.output


def test_findings_name_cell_and_line(tmp_path, capsys):
    nb = tmp_path / "nb.ipynb"
    legacy = "from keras.utils import multi_gpu_model\n\ndef f(m):\n    return multi_gpu_model(m, 2)\n"
    nb.write_bytes(_notebook(["%matplotlib inline\nimport os\n", legacy]))
    assert main([str(tmp_path)]) == 1  # notebooks are found when walking
    out = capsys.readouterr().out
    assert f"{nb}:cell 2:line 4:col 12: MGPU101 " in out


def test_python2_cell_reported_untouched():
    data = _notebook(["from keras.utils import multi_gpu_model\n", "print 'hello'\n"])
    result = transform_notebook(data, "nb.ipynb")
    assert result.failed and result.output == data
    [finding] = result.findings
    assert finding.cell == 2 and finding.format().startswith("nb.ipynb:cell 2: cannot parse as Python 3: ")


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="PEP 695 syntax parses on Python 3.12+: nothing to report")
def test_cell_with_newer_python_syntax_says_run_a_newer_python_not_port_it():
    data = _notebook(["from keras.utils import multi_gpu_model\n", "type Alias = list[int]\n"])
    result = transform_notebook(data, "nb.ipynb")
    assert result.failed and result.output == data
    [finding] = result.findings
    assert finding.cell == 2 and "needs Python 3.12 to parse" in finding.message
    assert "The file itself needs no fix: run the codemod with Python 3.12 or newer" in finding.message
    assert "Port the cell" not in finding.message


def test_call_sites_name_their_cell_and_line(tmp_path, capsys):
    data = _notebook(SCRIPT)
    result = transform_notebook(data, "nb.ipynb")
    assert [(s.cell, s.line, s.name, s.status) for s in result.sites] == [(2, 2, "multi_gpu_model", "rewritten")]
    (tmp_path / "nb.ipynb").write_bytes(data)
    assert main(["--check", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"{tmp_path / 'nb.ipynb'}:cell 2:line 2:col 12: multi_gpu_model would be rewritten" in out


def test_broken_json_reported():
    result = transform_notebook(b'{"cells": [multi_gpu', "nb.ipynb")
    assert result.failed and result.findings[0].code == "MGPU501"
    assert transform_notebook(b"{not json", "x.ipynb").failed


def test_no_marker_notebook_untouched():
    data = _notebook(["import os\n", "%time x = 1\n"])
    assert transform_notebook(data).output == data


def test_notebook_without_tensorflow_import_gets_it_after_its_imports():
    before = (ROOT / "notebooks" / "no_tf_import.before.ipynb").read_bytes()
    after = (ROOT / "notebooks" / "no_tf_import.after.ipynb").read_bytes()
    result = transform_notebook(before, "nb.ipynb")
    assert not result.failed and result.output == after
    assert transform_notebook(after, "nb.ipynb").output == after
    cells = ["".join(c["source"]) for c in _cells(after)]
    assert cells[1] == (
        "%matplotlib inline\nimport keras\nfrom keras.utils import multi_gpu_model\nimport tensorflow as tf"
    )
    assert [f.format().split(": ")[0] for f in result.findings] == ["nb.ipynb:cell 4:line 2:col 12"]


def test_a_cell_holding_only_the_call_is_removed_not_left_empty_or_with_a_bare_with():
    before = (ROOT / "notebooks" / "call_alone_in_cell.before.ipynb").read_bytes()
    after = (ROOT / "notebooks" / "call_alone_in_cell.after.ipynb").read_bytes()
    result = transform_notebook(before, "nb.ipynb")
    assert not result.failed and result.output == after
    assert result.findings == []
    assert transform_notebook(after, "nb.ipynb").output == after
    cells = ["".join(c["source"]) for c in _cells(after)]
    old = ["".join(c["source"]) for c in _cells(before)]
    assert old[2] == "parallel = multi_gpu_model(model, gpus=2)" and len(cells) == len(old) - 1
    assert "" not in cells
    assert cells[3] == "# one optimizer per run\nwith strategy.scope():\n    model.compile('adam', 'mse')"
    assert cells[4] == "model.fit(x, y)"


def test_an_emptied_cell_goes_and_a_finding_on_a_later_cell_names_it_as_the_notebook_now_shows_it():
    sources = [
        "from keras.utils import multi_gpu_model\nmodel = build()\n",
        "parallel = multi_gpu_model(model, gpus=2)\n",
        "parallel.compile('adam', 'mse')\n",
        "other = multi_gpu_model(template_from_elsewhere, gpus=2)\nother.compile('adam', 'mse')\n",
    ]
    result = transform_notebook(_notebook(sources), "nb.ipynb")
    cells = ["".join(c["source"]) for c in _cells(result.output)]
    assert len(cells) == 3 and "template_from_elsewhere" in cells[2]
    assert [f.cell for f in result.findings] == [3]


def test_a_helpers_emptied_cell_goes_and_its_deletion_is_reported_where_it_was():
    sources = [
        "from keras.models import Model\nfrom keras.utils import multi_gpu_model\n",
        "class ModelMGPU(Model):\n    \"\"\"Other notebooks import this.\"\"\"\n\n"
        "    def __init__(self, ser_model, gpus):\n"
        "        pmodel = multi_gpu_model(ser_model, gpus)\n        self.__dict__.update(pmodel.__dict__)\n",
        "net = build()\nmodel = ModelMGPU(net, 2)\nmodel.compile('adam', 'mse')\n",
    ]
    result = transform_notebook(_notebook(sources), "nb.ipynb")
    cells = ["".join(c["source"]) for c in _cells(result.output)]
    assert len(cells) == 2 and "ModelMGPU" not in "".join(cells)
    (finding,) = result.findings
    assert finding.code == "MGPU401" and "(defined in a code cell here, removed with it)" in finding.message


def _migrated_cells(sources: list[str]) -> list[str]:
    """Each cell's source after migrating a notebook of `sources` (checked: no failure, idempotent)."""
    result = transform_notebook(_notebook(sources), "nb.ipynb")
    assert not result.failed, result.findings
    assert transform_notebook(result.output, "nb.ipynb").output == result.output
    return ["".join(c["source"]) for c in _cells(result.output)]


STRATEGY_LINE = 'strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:2])\n'


def test_the_calls_comments_go_above_the_strategy_line_and_its_emptied_cell_goes():
    assert _migrated_cells([
        "import tensorflow as tf\nfrom keras.utils import multi_gpu_model\nmodel = build()\n",
        "# wrap it\nparallel = multi_gpu_model(model, gpus=2)  # two cards\n",
        "parallel.compile('adam', 'mse')\n",
    ]) == [
        "import tensorflow as tf\n# wrap it\n# two cards\n" + STRATEGY_LINE
        + "with strategy.scope():\n    model = build()\n",
        "with strategy.scope():\n    model.compile('adam', 'mse')\n",
    ]


def test_names_read_by_magics_are_renamed_with_the_code():
    cells = _migrated_cells([
        "from keras.utils import multi_gpu_model\nmodel = build()\n",
        "parallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n",
        "%time parallel.fit(x, y, epochs=2)\n!echo {parallel.name}\n",
    ])
    assert cells[2] == "%time model.fit(x, y, epochs=2)\n!echo {model.name}\n"


def test_a_cell_magic_left_without_code_is_dropped_with_it():
    cells = _migrated_cells([
        "from keras.utils import multi_gpu_model\nmodel = build()\n",
        "%%time\nparallel = multi_gpu_model(model, gpus=2)\n",
        "parallel.compile('adam', 'mse')\n",
    ])
    assert len(cells) == 2 and cells[1].startswith("with strategy.scope():\n")  # the `%%time` cell is gone


def _code_sources(data: bytes) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(data)["cells"] if c["cell_type"] == "code"]


def test_only_cells_that_build_or_compile_get_a_scope_and_each_cell_shows_its_last_expression():
    before = (ROOT / "notebooks" / "scope_where_needed.before.ipynb").read_bytes()
    after = (ROOT / "notebooks" / "scope_where_needed.after.ipynb").read_bytes()
    result = transform_notebook(before, "nb.ipynb")
    assert result.output == after and not result.failed
    assert transform_notebook(after, "nb.ipynb").output == after
    sources = _code_sources(after)
    # The template's cell: the scope, then `model.summary()` outside it, still the cell's last line.
    assert sources[1].endswith(
        "with strategy.scope():\n    model = Sequential([Dense(4, input_shape=(3,)), Dense(1)])\nmodel.summary()"
    )
    # Cells between the template and the compile that only read, hold constants or import: untouched.
    assert sources[2:5] == _code_sources(before)[2:5]
    # The call's cell shows the model; the compile's cell compiles under the scope and shows the optimizer.
    assert sources[5] == "model"
    assert sources[6] == "with strategy.scope():\n    model.compile('adam', 'mse')\nmodel.optimizer"


def test_stored_outputs_are_kept_only_where_the_cell_still_runs_the_same_code():
    before = json.loads((ROOT / "notebooks" / "scope_where_needed.before.ipynb").read_bytes())["cells"]
    after = json.loads((ROOT / "notebooks" / "scope_where_needed.after.ipynb").read_bytes())["cells"]
    # The template's cell runs the same statements under the scope: its printed summary still holds.
    assert after[1]["outputs"] == before[1]["outputs"] and after[1]["execution_count"] == 2
    assert after[2] == before[2]  # untouched cell, untouched outputs
    # `parallel` now shows the template, and `parallel.optimizer` became `model.optimizer`: cleared.
    for index in (5, 6):
        assert before[index]["outputs"] and after[index]["outputs"] == []
        assert after[index]["execution_count"] is None


def test_a_guard_and_a_list_of_ids_take_their_house_forms_in_a_notebook():
    before = (ROOT / "notebooks" / "guard_and_ids.before.ipynb").read_bytes()
    after = (ROOT / "notebooks" / "guard_and_ids.after.ipynb").read_bytes()
    result = transform_notebook(before, "nb.ipynb")
    assert result.output == after and not result.failed and not result.findings
    assert transform_notebook(after, "nb.ipynb").output == after
    sources = _code_sources(after)
    # The guard's cell chose the model; its condition now chooses the strategy, once.
    assert sources[1].startswith("if N_GPUS > 1:\n    strategy = tf.distribute.MirroredStrategy(")
    assert "else:\n    strategy = tf.distribute.get_strategy()\nwith strategy.scope():\n" in sources[1]
    # The guard's own cell held nothing else: it is removed, not left empty.
    assert len(sources) == len(_code_sources(before)) - 1
    assert sources[2] == "with strategy.scope():\n    model.compile('adam', 'mse')"
    # `GPU_IDS = [0, 1]`: the GPUs at those indices, with no comment of the tool's above them.
    assert sources[3].startswith(
        'gpus = tf.config.list_logical_devices("GPU")\n'
        "strategy = tf.distribute.MirroredStrategy([gpus[i] for i in GPU_IDS])\n"
    )
    assert all(len(line) <= 100 for source in sources for line in source.splitlines())


def test_a_data_cell_using_the_arrays_it_made_gets_no_scope():
    # `y = X.sum(axis=1)` calls a method of what `np.random.rand` returned in the same cell: NumPy
    # all along, no TensorFlow variable, so the cell stays as it was; `Z = other.sum()` does not
    # say what `other` is, so that cell keeps its scope
    cells = _migrated_cells([
        "import numpy as np\nfrom keras.utils import multi_gpu_model\nmodel = build()\n",
        "X = np.random.rand(64, 5)\ny = X.sum(axis=1)\nX.shape\n",
        "Z = other.sum()\n",
        "parallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n",
    ])
    assert cells[1] == "X = np.random.rand(64, 5)\ny = X.sum(axis=1)\nX.shape\n"
    assert cells[2].startswith("with strategy.scope():\n")


def test_a_helper_defined_in_a_cell_between_the_model_and_its_compile_stays_in_its_cell():
    # the `def` is not moved above the strategy line into the model's cell, and the cell that
    # defines and calls a function that only prints gets no scope (round 30, kb04); a function
    # that builds keeps its cell's scope
    describe = "def describe(cfg):\n    for k in sorted(cfg):\n        print(k, cfg[k])\n\ndescribe(CFG)\n"
    cells = _migrated_cells([
        "from keras.utils import multi_gpu_model\nmodel = build()\n",
        describe,
        "def head():\n    return Dense(1)\n",
        "parallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n",
    ])
    assert cells[0].endswith(STRATEGY_LINE + "with strategy.scope():\n    model = build()\n")
    assert cells[1] == describe
    assert cells[2].startswith("with strategy.scope():\n    def head():")
    # a function that builds (or compiles) what it is passed keeps its cell's scope
    setup = "def setup(m):\n    m.build((None, 4))\n\nsetup(model)\n"
    cells = _migrated_cells([
        "from keras.utils import multi_gpu_model\nmodel = build()\n", setup,
        "parallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n",
    ])
    assert cells[1].startswith("with strategy.scope():\n    def setup(m):")


def test_a_cell_defining_and_making_a_callback_class_gets_no_scope():
    # round 32, nb05 / nb09: `class MyCallBack(Callback)` and its instances were indented under a
    # reopened scope; a class that builds in its body keeps the scope
    callback = (
        "class Saver(Callback):\n    def on_epoch_end(self, epoch, logs=None):\n        self.model.save('m.h5')\n\n"
        "saver = Saver()\n"
    )
    cells = _migrated_cells([
        "from keras.utils import multi_gpu_model\nmodel = build()\n",
        callback,
        "class Head(Layer):\n    dense = Dense(1)\n",
        "parallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n",
    ])
    assert cells[1] == callback
    assert cells[2].startswith("with strategy.scope():\n    class Head(Layer):")


def test_the_added_import_follows_the_notebooks_imports_past_a_pip_cell():
    cells = _migrated_cells([
        "!pip install -q keras==2.2.4\n",
        "# imports\nimport numpy as np\nfrom keras.utils import multi_gpu_model\nfrom keras.optimizers import Adam\n",
        "model = build()\nparallel = multi_gpu_model(model, gpus=2)\nparallel.compile(Adam(), 'mse')\n",
    ])
    assert cells[0] == "!pip install -q keras==2.2.4\n"  # installing comes first, as written
    assert cells[1] == "# imports\nimport numpy as np\nfrom keras.optimizers import Adam\nimport tensorflow as tf\n"


def test_a_wrapper_class_defined_in_the_notebook_goes_once_nothing_uses_it():
    wrapper = (
        "class ModelMGPU(Model):\n    def __init__(self, ser_model, gpus):\n"
        "        pmodel = multi_gpu_model(ser_model, gpus)\n        self.__dict__.update(pmodel.__dict__)\n"
        "        self._smodel = ser_model\n\n    def __getattribute__(self, attrname):\n"
        "        if 'save' in attrname:\n            return getattr(self._smodel, attrname)\n"
        "        return super(ModelMGPU, self).__getattribute__(attrname)\n"
    )
    sources = [
        "import tensorflow as tf\nfrom keras.models import Model\nfrom keras.utils import multi_gpu_model\n",
        wrapper, "net = build()\n", "gpu_net = ModelMGPU(net, 2)\ngpu_net.compile('adam', 'mse')\n",
    ]
    cells = _migrated_cells(sources)
    # its import would stop the notebook at its first cell on Keras 3: both go, and the emptied
    # cell, and `Model`, which only the class read
    assert cells[0] == "import tensorflow as tf\n" and len(cells) == 3
    assert not any("ModelMGPU" in c or "multi_gpu_model" in c for c in cells)
    # still read elsewhere: kept, and reported
    result = transform_notebook(_notebook([*sources, "assert isinstance(gpu_net, ModelMGPU)\n"]), "nb.ipynb")
    assert "MGPU401" in [f.code for f in result.findings] and "class ModelMGPU" in result.output.decode()
    # holding a comment: it goes whole, comment and all, and the deletion is reported
    commented = [sources[0], wrapper.replace("    def __init__", "    # the keras issue's recipe\n    def __init__"),
                 *sources[2:]]
    result = transform_notebook(_notebook(commented), "nb.ipynb")
    assert "ModelMGPU" not in result.output.decode() and "recipe" not in result.output.decode()
    assert [f.code for f in result.findings] == ["MGPU401"] and "was deleted" in result.findings[0].message


def test_a_cell_that_only_says_which_path_ran_gets_no_scope():
    cells = _migrated_cells([
        "from keras.utils import multi_gpu_model\nmodel = build()\n",
        "try:\n    parallel = multi_gpu_model(model, gpus=2)\n    print('{} GPUs'.format(2))\n"
        "except ValueError:\n    parallel = model\n    print('one device')\n",
        "parallel.compile('adam', 'mse')\n",
    ])
    assert cells[1] == (
        "if strategy.num_replicas_in_sync > 1:\n    print('{} GPUs'.format(strategy.num_replicas_in_sync))\nelse:\n"
        "    print('one device')\n"
    )
    assert cells[2] == "with strategy.scope():\n    model.compile('adam', 'mse')\n"


def test_a_compile_repeated_in_the_next_cell_goes_and_that_cell_reopens_no_scope():
    sources = [
        "from keras.utils import multi_gpu_model\n",
        "model = build()\nmodel.compile(loss='mse', optimizer='adam')\n",
        "parallel = multi_gpu_model(model, gpus=2)\nparallel.compile(loss='mse', optimizer='adam')\n"
        "hist = parallel.fit(x, y)\n",
    ]
    cells = _migrated_cells(sources)
    assert cells[1].endswith("    model.compile(loss='mse', optimizer='adam')\n")
    assert cells[2] == "hist = model.fit(x, y)\n"


def test_lines_a_finding_message_names_are_given_as_the_notebook_shows_them():
    data = _notebook([
        "from keras.utils import multi_gpu_model\n",
        "model = build()\nparallel = multi_gpu_model(model, 2)\nparallel.compile('sgd', 'mse')\n",
        "for step in range(10):\n    parallel.train_on_batch(x, y)\n",
    ])
    (finding,) = [f for f in transform_notebook(data, "nb.ipynb").findings if f.code == "MGPU203"]
    assert finding.cell == 2 and "`parallel.train_on_batch(...)` (cell 3, line 2)" in finding.message


def test_what_a_template_cell_ends_with_that_builds_nothing_leaves_the_scope():
    # the freeze loop and the data arrays after the template create no variables: they stay at
    # the cell's level, below a scope that holds only what builds
    cells = _migrated_cells([
        "import numpy as np\nfrom keras.utils import multi_gpu_model\n",
        "model = build()\nfor layer in model.layers[:5]:\n    layer.trainable = False\n\n"
        "X = np.random.rand(64, 5)\nY = np.eye(2)[np.random.randint(0, 2, 64)]\n",
        "parallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\nparallel.fit(X, Y)\n",
    ])
    assert cells[1] == (
        STRATEGY_LINE + "with strategy.scope():\n    model = build()\nfor layer in model.layers[:5]:\n"
        "    layer.trainable = False\n\nX = np.random.rand(64, 5)\nY = np.eye(2)[np.random.randint(0, 2, 64)]\n"
    )
    assert cells[2] == "with strategy.scope():\n    model.compile('adam', 'mse')\nmodel.fit(X, Y)\n"


def test_an_alias_of_the_model_is_no_data_value_and_compiling_through_it_builds():
    # a name bound by a NumPy/pandas call is data, whose methods build nothing; `p = model` is not
    from multi_gpu_codemod.cell_scopes import builds_nothing

    assert builds_nothing("X = np.random.rand(64, 5)\ny = X.sum(axis=1)\n")
    assert not builds_nothing("p = model\np.compile('adam', 'mse')\n")
    assert not builds_nothing("p = model.layers\np.pop()\n")


def test_what_a_reopened_scope_would_begin_with_that_builds_nothing_goes_above_it():
    # the prints that said which path ran, and a freeze loop, run before the compile's scope
    cells = _migrated_cells([
        "from keras.utils import multi_gpu_model\n",
        "model = build()\n",
        "try:\n    parallel = multi_gpu_model(model, gpus=2)\n    print('2 GPUs')\nexcept ValueError:\n"
        "    parallel = model\n    print('1 device')\n\nfor layer in model.layers[:3]:\n    layer.trainable = False\n"
        "# the head only\nparallel.compile('adam', 'mse')\n",
    ])
    assert cells[2] == (
        "if strategy.num_replicas_in_sync > 1:\n    print('2 GPUs')\nelse:\n    print('1 device')\n\n"
        "for layer in model.layers[:3]:\n    layer.trainable = False\n"
        "with strategy.scope():\n    # the head only\n    model.compile('adam', 'mse')\n"
    )


def test_a_reopened_scope_starts_right_under_its_with_line():
    # the removed call left a blank line at the top of the compile's cell: not under the `with`;
    # the comment the cell's code now opens with heads the cell, above the `with` (round 35, hb11)
    cells = _migrated_cells([
        "from keras.utils import multi_gpu_model\nmodel = build()\n",
        "parallel = multi_gpu_model(model, gpus=2)\n\n# compile it\nparallel.compile('adam', 'mse')\n",
    ])
    assert cells[1] == "# compile it\nwith strategy.scope():\n    model.compile('adam', 'mse')\n"


def test_statements_sharing_a_line_with_what_builds_stay_under_the_scope():
    from multi_gpu_codemod.cell_scopes import display_last_expression

    header = "with s.scope():"
    for cell in ([header, "    X = np.ones(3); m.compile()"], [header, "    m = build(); X = np.ones(3)"]):
        assert display_last_expression(cell) == cell
    cell = [header, "", "    X = np.ones(3)", "    m.compile()", "    print(1)"]
    assert display_last_expression(cell) == ["X = np.ones(3)", header, "    m.compile()", "print(1)"]


@pytest.mark.parametrize("cell", [
    # valid Python: the `%` line continues the bracketed call (break before the operator)
    'print("AUC %.4f | thr %.3f"\n      % (auc, best))\n',
    # a real magic in the cell too: only the line that starts a statement is one
    '%matplotlib inline\nprint("AUC %.4f"\n      % auc)\n',
])
def test_a_percent_line_continuing_an_expression_is_no_magic(cell):
    data = _notebook([*SCRIPT, cell])
    result = transform_notebook(data, "nb.ipynb")
    assert result.changed and not result.failed and not [f for f in result.findings if f.code == "MGPU501"]
    assert "".join(_cells(result.output)[2]["source"]) == cell


def test_a_cell_reading_the_template_under_the_name_the_model_takes_keeps_its_outputs():
    """`print(serial.evaluate(...))` -> `print(model.evaluate(...))`: the same model, the same
    numbers; a cell that read the parallel model (`model.evaluate` for `parallel.evaluate`) is
    cleared (round 24, ub08)."""
    sources = [
        "from keras.utils import multi_gpu_model\n",
        "serial = build()\nparallel = multi_gpu_model(serial, 2)\nparallel.compile('sgd', 'mse')\nparallel.fit(x, y)\n",
        "print(serial.evaluate(x, y))\n",
        "print(parallel.evaluate(x, y))\n",
    ]
    data = json.loads(_notebook(sources))
    printed = [{"output_type": "stream", "name": "stdout", "text": ["0.25\n"]}]
    for cell in data["cells"][2:]:
        cell["outputs"], cell["execution_count"] = printed, 3
    result = transform_notebook(json.dumps(data, indent=1).encode() + b"\n", "nb.ipynb")
    after = json.loads(result.output)["cells"]
    assert "".join(after[2]["source"]) == "print(model.evaluate(x, y))\n"
    assert after[2]["outputs"] == printed and after[2]["execution_count"] == 3
    assert after[3]["outputs"] == [] and after[3]["execution_count"] is None


def test_a_notebook_reading_tf_it_never_imports_gets_tf_and_its_cpu_block_goes():
    # round 26, wb04: `with tf.device('/cpu:0'):` with no `import tensorflow as tf` in any cell
    # (a NameError as written): `tf` is TensorFlow as its author meant, imported as `tf`, and the
    # template's CPU block dissolves as it does where `tf` is imported
    cells = _migrated_cells([
        "from keras.utils import multi_gpu_model\nfrom keras.models import Model\n",
        "with tf.device('/cpu:0'):\n    model = build()\n",
        "parallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n",
    ])
    assert cells[0] == "from keras.models import Model\nimport tensorflow as tf\n"
    assert cells[1] == STRATEGY_LINE + "with strategy.scope():\n    model = build()\n"
    assert cells[2] == "with strategy.scope():\n    model.compile('adam', 'mse')\n"


def test_a_notebook_binding_tf_itself_keeps_its_meaning():
    # `tf = load_config()`: not TensorFlow; the strategy is written with the full module name
    cells = _migrated_cells([
        "from keras.utils import multi_gpu_model\ntf = load_config()\n",
        "model = build()\nparallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n",
    ])
    assert cells[0] == "import tensorflow\ntf = load_config()\n"
    assert "strategy = tensorflow.distribute.MirroredStrategy(" in cells[1]


def test_a_cells_opening_comment_heads_it_above_its_scope_and_the_cell_ends_on_code():
    # round 35, hb11: "# stage 1: head only" had gone under the `with`; the build's cell ended on the
    # blank line that stood above the removed call
    cells = _migrated_cells([
        "from keras.utils import multi_gpu_model\nmodel = build()\nfreeze(model)\n\n"
        "parallel = multi_gpu_model(model, gpus=2)",
        "# stage 1: head only\nparallel.compile('adam', 'mse')\nparallel.fit(x, y)",
    ])
    assert cells[0].endswith("    model = build()\n    freeze(model)")
    assert cells[1] == "# stage 1: head only\nwith strategy.scope():\n    model.compile('adam', 'mse')\nmodel.fit(x, y)"


def test_a_comment_set_apart_by_a_blank_line_or_alone_stays_under_the_scope():
    from multi_gpu_codemod.cell_scopes import cell_comments_first

    header = "with strategy.scope():"
    apart = [header, "    # built here", "", "    model.compile()"]
    assert cell_comments_first(apart) == apart
    assert cell_comments_first([header, "    # the end"]) == [header, "    # the end"]
    assert cell_comments_first([header, "    # a", "    m.compile()"]) == ["# a", header, "    m.compile()"]


def test_the_reload_in_the_next_cell_of_what_the_training_loop_saved_goes():
    # round 35, hb20's shape in a notebook: the reload is in a cell of its own
    cells = _migrated_cells([
        "from keras.utils import multi_gpu_model\nmodel = build()\nparallel = multi_gpu_model(model, gpus=2)\n"
        "parallel.compile('adam', 'mse')",
        "for e in range(3):\n    parallel.fit(x, y)\n    parallel.save_weights('w.weights.h5')",
        "model.load_weights('w.weights.h5')\nmodel.save('m.keras')",
    ])
    assert cells[1:] == ["for e in range(3):\n    model.fit(x, y)\n    model.save_weights('w.weights.h5')",
                         "model.save('m.keras')"]


def test_a_cell_whose_opening_call_went_starts_on_the_code_that_followed_it():
    # round 61, bf20: the predict cell began with the blank line that stood under the removed call
    cells = _migrated_cells([
        "from keras.utils import multi_gpu_model\nmodel = load_model('m.h5')",
        "gpu_model = multi_gpu_model(model, gpus=2)\n\nx = np.load('x.npy')\npreds = gpu_model.predict(x)",
    ])
    assert cells[1] == "x = np.load('x.npy')\npreds = model.predict(x)"
    # a cell that opened on a blank line keeps it
    cells = _migrated_cells([
        "from keras.utils import multi_gpu_model\nmodel = load_model('m.h5')",
        "\ngpu_model = multi_gpu_model(model, gpus=2)\n\nx = np.load('x.npy')\npreds = gpu_model.predict(x)",
    ])
    assert cells[1] == "\nx = np.load('x.npy')\npreds = model.predict(x)"
