"""codemod/fixers/checkpoints.py: before/after pairs and left-unchanged-but-reported cases."""

import pytest

from codemod_fixtures import check_pair, check_unchanged, pairs, reported, unchanged
from multi_gpu_codemod import transform_source


@pytest.mark.parametrize("before", pairs("checkpoints"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    check_pair(before)


@pytest.mark.parametrize("path", unchanged("checkpoints"), ids=lambda p: p.name)
def test_unchanged_but_reported(path):
    check_unchanged(path)


def test_callbacks_unwrapping_the_parallel_model_are_reported_where_they_unwrap():
    from codemod_fixtures import ROOT

    name = "callback_unwraps.unchanged.py"
    assert reported((ROOT / "checkpoints" / name).read_bytes(), name) == [
        'callback_unwraps.unchanged.py:12:9: MGPU304 `self.model.layers[-(self.num_outputs + 1)]` unwrapped the old'
        ' parallel model to reach the template; after migration `fit` runs on the template itself, so `self.model`'
        ' is the template and `self.model.layers[-(self.num_outputs + 1)]` is one of its layers. Use `self.model`'
        " instead, or drop this callback and pass a plain `ModelCheckpoint(filepath)` to the template's `fit`.",
        'callback_unwraps.unchanged.py:17:20: MGPU304 `self.model.get_layer("model_1")` unwrapped the old parallel'
        ' model to reach the template; after migration `fit` runs on the template itself, so `self.model` is the'
        ' template and `self.model.get_layer("model_1")` is one of its layers. Use `self.model` instead, or drop'
        " this callback and pass a plain `ModelCheckpoint(filepath)` to the template's `fit`.",
    ]


def test_helpers_that_save_what_they_unwrap_are_reported_anywhere():

    source = (b"import os\n\ndef save_single(parallel_model, path):\n    parallel_model.layers[-2].save(path)\n\n"
              b"def features(model):\n    return model.layers[-2].output  # a layer's output: not unwrapping\n")
    assert reported(source) == [
        'table.py:4:5: MGPU304 `parallel_model.layers[-2].save(...)` unwraps the old parallel model (its template'
        ' sat at `layers[-(outputs + 1)]`); after migration the model trained is the template itself, so this'
        ' reaches one of its layers. Save `parallel_model` itself (pass the template here), or use a plain'
        " `ModelCheckpoint(filepath)` on the template's `fit`.",
    ]


def test_a_callback_only_given_to_migrated_fits_gets_self_model_where_the_index_is_known():
    from multi_gpu_codemod import transform_source
    from codemod_fixtures import ROOT

    # check_pair pins `self.model.save(...)` where the unwrapping index is a constant; `-(self.n + 1)`
    # depends on a value the codemod does not know: left and reported.
    before = ROOT / "checkpoints" / "callback_given_to_migrated_fit.before.py"
    assert check_pair(before) == ["MGPU304"]
    assert [f.line for f in transform_source(before.read_bytes()).findings] == [17]


@pytest.mark.parametrize("other_call,fixed", [
    ("", True),  # every call hands it the migrated model: the model itself is saved
    ("export(serial, 'b.h5')\n", False),  # another call hands it something else: the site is left
    ("hooks = [export]\n", False),  # handed on: what else it is given is unknown
])
def test_a_helper_unwrapping_its_parameter_that_only_migrated_models_reach(other_call, fixed):
    # round 39, oa12: `export_template(parallel_model, path)` saved `parallel_model.layers[-2]`, a
    # layer of the migrated model (AttributeError after training), with only MGPU304 to say so;
    # a helper other models reach too left the same crash in a rewritten file until round 42
    from multi_gpu_codemod import transform_source

    source = (
        "from keras.utils import multi_gpu_model\n\n\ndef export(parallel_model, path):\n"
        "    parallel_model.layers[-2].save(path)\n\n\nmodel = build()\n"
        "parallel_model = multi_gpu_model(model, gpus=2)\nparallel_model.compile('sgd', 'mse')\n"
        "parallel_model.fit(x, y)\nexport(parallel_model, 'a.h5')\n" + other_call
    )
    result = transform_source(source.encode(), "train.py")
    out = result.output.decode()
    if fixed:
        assert "    parallel_model.save(path)\n" in out and "export(model, 'a.h5')\n" in out
        assert result.findings == []
    else:
        assert out == source  # never a rewritten call whose model reaches `layers[-2].save`
        assert [(f.line, f.code) for f in result.findings] == [(5, "MGPU122")]
        assert "the `multi_gpu_model` call on line 9" in result.findings[0].message


def test_a_helper_given_two_parallel_models_leaves_both_calls_when_one_is_left():
    # leaving one site (its template is not built in its function: MGPU101) leaves the other, whose
    # parallel model reaches the same `layers[-2].save` helper
    from multi_gpu_codemod import transform_source

    source = (
        "from keras.utils import multi_gpu_model\n\n\ndef export(parallel, path):\n"
        "    parallel.layers[-2].save(path)\n\n\ndef train(base):\n"
        "    wide = multi_gpu_model(base, gpus=2)\n    wide.compile('sgd', 'mse')\n"
        "    export(wide, 'w.h5')\n\n\nmodel = build()\n"
        "parallel = multi_gpu_model(model, gpus=2)\nparallel.compile('sgd', 'mse')\nparallel.fit(x, y)\n"
        "export(parallel, 'a.h5')\n"
    )
    result = transform_source(source.encode(), "train.py")
    assert result.output == source.encode()
    assert sorted(f.code for f in result.findings) == ["MGPU101", "MGPU122"]


def test_weights_the_parallel_model_loaded_are_reported_the_load_is_still_rewritten():
    # (round 50, al18: a file saved from the parallel model no longer loads into the migrated model)
    source = (
        "from keras.utils import multi_gpu_model\n\nnet = build()\n"
        "net.load_weights('pretrained.h5')\n"                    # the template's own file: fine
        "net_gpu = multi_gpu_model(net, gpus=2)\n"
        "net_gpu.load_weights('net_parallel.h5')\n"              # line 6: written by the parallel model
        "net_gpu.compile('adam', 'mse')\nnet_gpu.fit(x, y)\n"
    )
    result = transform_source(source.encode(), "t.py")
    assert result.changed and "net.load_weights('net_parallel.h5')" in result.output.decode()
    (finding,) = [f for f in result.findings if f.code == "MGPU306"]
    assert finding.line == 6 and "load_legacy_weights(model, 'net_parallel.h5')" in finding.message


def test_a_set_model_swap_is_one_finding_however_many_lines_it_spans():
    # round 53, ao10: `if isinstance(model.layers[-2], Model): self.model = model.layers[-2]` was
    # reported twice, once per line
    source = (
        "from keras.callbacks import ModelCheckpoint\nfrom keras.models import Model\n"
        "from keras.utils import multi_gpu_model\n\n\nclass TemplateCheckpoint(ModelCheckpoint):\n"
        "    def set_model(self, model):\n        if isinstance(model.layers[-2], Model):\n"
        "            self.model = model.layers[-2]\n        else:\n            self.model = model\n\n\n"
        "model = build()\nparallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n"
        "parallel.fit(x, y, callbacks=[TemplateCheckpoint('m.h5')])\n"
    )
    found = [f for f in transform_source(source.encode(), "train.py").findings if f.code == "MGPU302"]
    assert [f.line for f in found] == [9]  # (the swap)
    assert "use the base callback itself where the swap was all the subclass added" in found[0].message
