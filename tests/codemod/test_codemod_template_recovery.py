"""codemod/fixers/template_recovery.py: before/after pairs and left-unchanged-but-reported cases."""

import pytest

from codemod_fixtures import check_pair, check_unchanged, pairs, unchanged
from multi_gpu_codemod import transform_source


@pytest.mark.parametrize("before", pairs("template_recovery"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    check_pair(before)


def test_the_documented_lookups_become_the_model_with_nothing_reported():
    from codemod_fixtures import ROOT

    assert check_pair(ROOT / "template_recovery" / "layers_minus_two.before.py") == []


@pytest.mark.parametrize("path", unchanged("template_recovery"), ids=lambda p: p.name)
def test_a_site_with_a_lookup_the_codemod_cannot_map_is_left_and_reported_there(path):
    assert check_unchanged(path) == ["MGPU301"]


@pytest.mark.parametrize("lookup", [
    "parallel.layers[0]", "parallel.layers[1]", "parallel.layers[-1]", "parallel.get_layer('encoder')",
    "parallel.get_layer(index=0)", "parallel.get_layer(name='dense_1')", "parallel.layers[:-1]",
])
def test_each_unmappable_lookup_leaves_the_site_and_names_line_and_fix(lookup):
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\nparallel = multi_gpu_model(model, gpus=2)\n"
        f"parallel.compile('adam', 'mse')\nparallel.fit(x, y)\nlayer = {lookup}\n"
    )
    result = transform_source(source.encode())
    assert result.output == source.encode()
    (finding,) = result.findings
    assert (finding.line, finding.code) == (7, "MGPU301")
    assert f"`{lookup}`" in finding.message and "Replace it with `model`" in finding.message
    assert "call on line 4 is left as it is" in finding.message


@pytest.mark.parametrize("lookup", ["get_layer(name='model_1')", "get_layer(index=-2)", "layers[-(1 + 1)]"])
def test_keyword_and_spelled_out_lookups_of_the_template_become_the_model(lookup):
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\nparallel = multi_gpu_model(model, gpus=2)\n"
        f"parallel.compile('adam', 'mse')\nparallel.{lookup}.save('m.keras')\n"
    )
    result = transform_source(source.encode())
    assert "\nmodel.save('m.keras')" in result.output.decode() and result.findings == []


@pytest.mark.parametrize("walk", [
    "for i in range(len(parallel.layers)):\n    parallel.layers[i].trainable = True\n",
    "for layer in parallel.layers:\n    layer.trainable = True\n",
    "frozen = [l.name for l in parallel.layers if not l.trainable]\n",
])
def test_a_walk_over_the_wrappers_layers_leaves_the_site(walk):
    # keras-yolo3's unfreeze step met the template as one layer: its own layers stayed frozen,
    # while the same walk over the model's layers would unfreeze them all (verify: weights differ)
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\nparallel = multi_gpu_model(model, gpus=2)\n"
        f"parallel.compile('adam', 'mse')\nparallel.fit(x, y)\n# stage two\n{walk}parallel.compile('adam', 'mse')\n"
    )
    result = transform_source(source.encode())
    assert result.output == source.encode()
    (finding,) = result.findings
    assert (finding.line, finding.code) == (8, "MGPU301")
    assert f"`{walk.splitlines()[0]}` walks the old parallel wrapper's layers" in finding.message
    assert "model.layers" in finding.message
    assert "call on line 4 is left as it is" in finding.message


def test_minus_three_is_the_template_only_when_two_outputs_are_seen():
    from codemod_fixtures import ROOT

    known = transform_source((ROOT / "template_recovery" / "two_outputs_minus_three.before.py").read_bytes())
    assert b'model.save("two_outputs.h5")' in known.output and known.findings == []
    unknown = (ROOT / "template_recovery" / "unknown_outputs.unchanged.py").read_bytes()
    result = transform_source(unknown)
    assert result.output == unknown
    (finding,) = result.findings
    assert finding.code == "MGPU301" and "Replace it with `model`" in finding.message


@pytest.mark.parametrize("name", ["sequential", "sequential_3", "functional_1", "model"])
def test_a_name_keras_gives_a_model_itself_looked_up_in_the_wrapper_is_the_template(name):
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\nparallel = multi_gpu_model(model, gpus=2)\n"
        f"parallel.compile('adam', 'mse')\nparallel.get_layer('{name}').save_weights('w.weights.h5')\n"
    )
    result = transform_source(source.encode())
    assert "model.save_weights('w.weights.h5')" in result.output.decode()
    assert "MGPU301" not in [f.code for f in result.findings]


def test_a_walk_that_only_prints_the_layers_is_renamed():
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\nparallel = multi_gpu_model(model, gpus=2)\n"
        "for layer in parallel.layers:\n    print(layer.name)\nprint(len(parallel.layers))\n"
        "parallel.compile('adam', 'mse')\n"
    )
    result = transform_source(source.encode())
    assert "    for layer in model.layers:\n        print(layer.name)\n    print(len(model.layers))\n" in (
        result.output.decode()
    )
    assert result.findings == []


@pytest.mark.parametrize("other", ["parallel", "model"])
def test_a_lookup_whose_other_arm_is_the_model_too_becomes_the_model_with_no_second_name(other):
    # `single = parallel.layers[-2] if G > 1 else parallel`: the model either way, so `single` goes
    before = (
        "from keras.utils import multi_gpu_model\n\nG = 2\nmodel = build()\n"
        "parallel = multi_gpu_model(model, gpus=G)\nparallel.compile('adam', 'mse')\nparallel.fit(x, y)\n"
        f"single = parallel.layers[-2] if G > 1 else {other}\nsingle.save('m.h5')\n"
    )
    out = transform_source(before.encode()).output.decode()
    assert out.endswith("model.fit(x, y)\nmodel.save('m.h5')\n") and "single" not in out


def test_a_conditional_lookup_whose_test_calls_something_keeps_its_name():
    before = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\n"
        "parallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n"
        "single = parallel.layers[-2] if check() else parallel\nsingle.save('m.h5')\n"
    )
    out = transform_source(before.encode()).output.decode()
    assert "single = model if check() else model\n" in out


def test_the_parallel_name_in_an_exported_time_magic_is_renamed_like_the_code():
    # a notebook saved as a script: `%%time` / `%time` became get_ipython() calls with the source as a string
    before = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\n"
        "preg = multi_gpu_model(model, gpus=2)\npreg.compile('adam', 'mse')\n"
        "get_ipython().run_cell_magic('time', '', 'hist = preg.fit(x, y)\\n')\n"
        "get_ipython().run_line_magic('time', 'preg.evaluate(x, y)')\n"
        "get_ipython().run_cell_magic('writefile', 'notes.txt', 'preg trained\\n')\n"
    )
    out = transform_source(before.encode()).output.decode()
    assert "run_cell_magic('time', '', 'hist = model.fit(x, y)\\n')" in out
    assert "run_line_magic('time', 'model.evaluate(x, y)')" in out
    assert "run_cell_magic('writefile', 'notes.txt', 'preg trained\\n')" in out  # not Python: left
