"""codemod/fixers/strategy_scope.py: construction and compile under `strategy.scope()`."""

import pytest

from multi_gpu_codemod import transform_source

from codemod_fixtures import check_pair, check_unchanged, pairs, unchanged


@pytest.mark.parametrize("before", pairs("strategy_scope"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    check_pair(before)


@pytest.mark.parametrize("path", unchanged("strategy_scope"), ids=lambda p: p.name)
def test_unchanged_but_reported(path):
    codes = check_unchanged(path) if "not_the_function" not in path.name and "own_definition" not in path.name else None
    if codes is not None:
        assert all(c.startswith("MGPU1") for c in codes)


@pytest.mark.parametrize("name", ["not_the_function.unchanged.py", "own_definition.unchanged.py"])
def test_other_functions_named_multi_gpu_model_are_silent(name):
    from codemod_fixtures import ROOT

    source = (ROOT / "strategy_scope" / name).read_bytes()
    result = transform_source(source)
    assert result.output == source and result.findings == []


def _run(code: str) -> str:
    return transform_source(code.encode()).output.decode()


@pytest.mark.parametrize("template,parallel", [("model", "parallel_model"), ("net", "gpu_net"), ("m", "pm")])
def test_new_name_is_renamed_to_template(template, parallel):
    out = _run(
        f"from keras.utils import multi_gpu_model\n{template} = make()\n"
        f"{parallel} = multi_gpu_model({template}, gpus=2)\n{parallel}.compile('adam', 'mse')\n"
        f"{parallel}.fit(x, y)\n"
    )
    assert f"{parallel}" not in out
    assert f"    {template}.compile('adam', 'mse')\n{template}.fit(x, y)\n" in out


def test_parallel_name_reassigned_becomes_alias():
    out = _run(
        "from keras.utils import multi_gpu_model\nmodel = make()\nparallel = multi_gpu_model(model, 2)\n"
        "parallel.compile('adam', 'mse')\nparallel = other\n"
    )
    assert "    parallel = model\n" in out and "parallel = other" in out


def test_closure_with_own_template_name_blocks_rename():
    out = _run(
        "from keras.utils import multi_gpu_model\nmodel = make()\np = multi_gpu_model(model, 2)\n"
        "p.compile('adam', 'mse')\ndef f(model):\n    return p.predict(model)\n"
    )
    assert "p = model" in out and "return p.predict(model)" in out


def test_lines_outside_the_edit_are_byte_identical():
    before = (
        "import os  # keep   spacing\nx = [1,2,\n     3]\nfrom keras.utils import multi_gpu_model\n"
        "model = make()\nparallel = multi_gpu_model(model, 2)\nparallel.compile('a', 'b')\n"
        "y = {'k':1}   # trailing\n"
    )
    out = _run(before)
    for line in ["import os  # keep   spacing", "x = [1,2,", "     3]", "y = {'k':1}   # trailing"]:
        assert line + "\n" in out


def test_tabs_indentation_is_kept():
    out = _run(
        "from keras.utils import multi_gpu_model\ndef f():\n\tmodel = make()\n"
        "\tparallel = multi_gpu_model(model, 2)\n\tparallel.compile('a', 'b')\n"
    )
    assert "\twith strategy.scope():\n\t\tmodel = make()\n" in out


def test_two_sites_sharing_a_construction_share_one_strategy():
    out = _run(
        "from keras.utils import multi_gpu_model\ng = make_g()\nd = make_d()\n"
        "pg = multi_gpu_model(g, 2)\npd = multi_gpu_model(d, 2)\npg.compile('a', 'b')\npd.compile('a', 'b')\n"
    )
    assert out.count("MirroredStrategy(") == 1 and "multi_gpu_model" not in out


def test_trainer_class_is_not_a_wrapper_its_init_site_is_rewritten():
    from codemod_fixtures import ROOT

    result = transform_source((ROOT / "strategy_scope" / "trainer_class_init.before.py").read_bytes())
    out = result.output.decode()
    assert "trainer = Trainer(2, 0.1)\ntrainer.train(" in out and "len(trainer.history)" in out
    assert "multi_gpu_model" not in out and not [f for f in result.findings if f.code == "MGPU401"]


def test_class_taking_a_built_model_is_reported_and_its_callers_left_alone():
    from codemod_fixtures import ROOT

    source = (ROOT / "strategy_scope" / "trainer_class_model_param.unchanged.py").read_bytes()
    result = transform_source(source)
    assert result.output == source and [f.code for f in result.findings] == ["MGPU101"]


def test_model_mgpu_recipe_still_a_wrapper():
    out = _run(
        "from keras.models import Model\nfrom keras.utils import multi_gpu_model\n"
        "class Wrap(Model):\n    def __init__(self, ser, gpus):\n        p = multi_gpu_model(ser, gpus)\n"
        "        self.__dict__.update(p.__dict__)\n\nm = make()\npm = Wrap(m, 2)\npm.compile('a', 'b')\n"
    )
    assert "pm = Wrap" not in out and "    m.compile('a', 'b')" in out


def test_scope_ends_before_the_template_is_rebound():
    out = _run(
        "from keras.utils import multi_gpu_model\nmodel = make()\np = multi_gpu_model(model, 2)\n"
        "p.compile('adam', 'mse')\nmodel = other()\nmodel.compile('sgd', 'mse')\n"
    )
    assert out.endswith("    p.compile('adam', 'mse')\nmodel = other()\nmodel.compile('sgd', 'mse')\n")


def test_comments_inside_a_removed_call_become_comment_lines():
    out = _run(
        "from keras.utils import multi_gpu_model\nmodel = make()\np = multi_gpu_model(\n    model,  # the template\n"
        "    gpus=2,  # two\n)\np.compile('adam', 'mse')\nq = p\n"
    )
    assert "# the template\n" in out and "# two\n" in out and "multi_gpu_model" not in out


@pytest.mark.parametrize("name,inside", [
    ("layers_above_elif.before.py", ["    inp = Input(shape=(8,))", "    out = Dense(1)("]),
    ("template_above_try.before.py", ["    model = Model(inp, Dense(2)(inp))", "    inp = Input(shape=(4,))"]),
    ("gpu_count_moved_up.before.py", ["    opt = keras.optimizers.Adam(1e-3)"]),
])
def test_what_creates_variables_for_the_template_or_compile_is_under_the_scope(name, inside):
    from codemod_fixtures import ROOT

    after = (ROOT / "strategy_scope" / name.replace(".before.", ".after.")).read_text()
    scope = after.index("with strategy.scope():")
    for line in inside:
        assert after.index(line) > scope, line


def test_a_gpu_count_reading_what_the_scope_builds_is_reported_with_the_lines():
    source = (b"import keras\nfrom keras.utils import multi_gpu_model\n\nmodel = keras.Sequential()\n"
              b"gpus = 2 if model.built else 1\nparallel = multi_gpu_model(model, gpus=gpus)\nparallel.compile('adam', 'mse')\n")
    result = transform_source(source)
    (finding,) = result.findings
    assert result.output == source and finding.code == "MGPU105"
    assert "`gpus`, assigned on line 5, after line 4" in finding.message


def test_template_that_is_a_parameter_is_named_as_one():
    source = b"from keras.utils import multi_gpu_model\n\ndef wrap(net, n):\n    return multi_gpu_model(net, gpus=n)\n"
    (finding,) = transform_source(source).findings
    assert finding.code == "MGPU101" and "`net` is a parameter of `wrap`" in finding.message


def test_a_module_level_optimizer_a_function_compiles_with_is_reported_at_its_line():
    from codemod_fixtures import ROOT

    source = (ROOT / "strategy_scope" / "module_level_optimizer.unchanged.py").read_bytes()
    result = transform_source(source)
    (finding,) = result.findings
    assert result.output == source
    assert (finding.line, finding.code) == (4, "MGPU109") and "`OPT`" in finding.message and "`run`" in finding.message


@pytest.mark.parametrize("setting", ["CFG = load_config('a.yml')", "CFG = {'units': 4}", "CFG = yaml.safe_load(open('a'))"])
def test_module_level_settings_read_by_the_function_are_not_objects_with_variables(setting):
    source = (f"from keras.utils import multi_gpu_model\n{setting}\n\ndef run():\n    model = build(CFG['units'], CFG)\n"
              "    parallel = multi_gpu_model(model, gpus=2)\n    parallel.compile('adam', 'mse')\n").encode()
    result = transform_source(source)
    assert result.changed and result.findings == []


def _findings(name: str):
    from codemod_fixtures import ROOT

    return transform_source((ROOT / "strategy_scope" / name).read_bytes(), name).findings


def test_optimizer_parameter_is_reported_with_its_name():
    (finding,) = _findings("optimizer_parameter.unchanged.py")
    assert finding.code == "MGPU110" and finding.line == 8
    assert "`optimizer` is a parameter of `make_trainer`" in finding.message and "strategy.scope()" in finding.message


def test_metrics_from_outside_the_moved_code_are_reported():
    (finding,) = _findings("metrics_from_outside.unchanged.py")
    assert finding.code == "MGPU110" and "`scores` is assigned on line 6" in finding.message


def test_settings_neither_start_the_scope_nor_block_it():
    (finding,) = _findings("settings_do_not_start_scope.unchanged.py")
    assert finding.code == "MGPU105"
    assert "`devices`, assigned on line 14, after line 12" in finding.message and "after line 12 (`opt = keras" in finding.message
    assert "parse_args" not in finding.message


def test_gpu_count_assigned_in_a_branch_names_its_own_line():
    out = transform_source(
        b"import keras\nfrom keras.utils import multi_gpu_model\nfrom nets import build, gpus_of\n"
        b"opt = keras.optimizers.Adam()\nif args.n > 1:\n    serial = build()\n    devices = gpus_of()\n"
        b"    net = multi_gpu_model(serial, gpus=len(devices))\nelse:\n    net = build()\n"
        b"net.compile(optimizer=opt, loss='mse')\n"
    )
    (finding,) = out.findings
    assert finding.code == "MGPU105" and "`devices`, assigned on line 7," in finding.message


@pytest.mark.parametrize("optimizer,rewritten", [("'adam'", True), ("OPTIMIZERS['adam']", False)])
def test_compile_argument_constants_do_not_block(optimizer, rewritten):
    source = (
        "from keras.utils import multi_gpu_model\n\n\ndef fit(x, y):\n"
        f"    opt = {optimizer}\n    model = build()\n    par = multi_gpu_model(model, 2)\n"
        "    par.compile(opt, 'mse')\n"
    ).encode()
    result = transform_source(source)
    assert result.changed is rewritten
    assert [f.code for f in result.findings] == ([] if rewritten else ["MGPU110"])


def test_definition_between_template_and_site_stays_out_of_the_scope():
    out = _run(
        "from keras.utils import multi_gpu_model\nnet = build()\n\n\ndef log(h):\n    print(h)\n\n\n"
        "serial = net\npar = multi_gpu_model(serial, 2)\npar.compile('adam', 'mse')\n"
    )
    assert "\ndef log(h):\n    print(h)\n" in out
    assert out.index("def log") < out.index("strategy = ") < out.index("    net = build()")


def test_backbone_read_through_attributes_at_module_level_is_reported_at_its_line():
    (finding,) = _findings("backbone_at_module_level.unchanged.py")
    assert (finding.line, finding.code) == (6, "MGPU109") and "`backbone`" in finding.message


def test_data_read_through_attributes_is_not_pulled_under_the_scope():
    out = _run(
        "from keras.utils import multi_gpu_model\nx_train, y_train = load_data()\nmodel = build(x_train.shape[1:])\n"
        "par = multi_gpu_model(model, 2)\npar.compile('adam', 'mse')\n"
    )
    assert "\nx_train, y_train = load_data()\n" in out and "    model = build(x_train.shape[1:])" in out
