"""codemod/pair_returns.py: a builder that returned (template, parallel model) returns the model
once and its callers use one name; any other use of the builder keeps the pair."""

import pytest

from codemod_fixtures import check_source_pair
from multi_gpu_codemod import transform_source

BUILD = (
    "from keras.utils import multi_gpu_model\n\n\n"
    "def build(n_gpus):\n    model = make()\n    parallel = multi_gpu_model(model, gpus=n_gpus)\n"
    "    parallel.compile('adam', 'mse')\n    return model, parallel\n\n\n"
)
BUILT = (
    "import tensorflow as tf\n\n\n"
    "def build(n_gpus):\n"
    "    strategy = tf.distribute.MirroredStrategy(\n"  # (past 92 columns, the file's width: wrapped)
    '        tf.config.list_logical_devices("GPU")[:n_gpus]\n    )\n'
    "    with strategy.scope():\n        model = make()\n        model.compile('adam', 'mse')\n    return model\n\n\n"
)


def test_the_builder_returns_the_model_once_and_the_caller_uses_one_name():
    before = BUILD + (
        "if __name__ == '__main__':\n    model, par = build(2)\n"
        "    par.fit(x, y, batch_size=64,\n            epochs=2)\n    model.save('m.h5')\n"
    )
    after = BUILT + (
        "if __name__ == '__main__':\n    model = build(2)\n"
        "    model.fit(x, y, batch_size=64,\n              epochs=2)\n    model.save('m.h5')\n"
    )
    # behind `if __name__ == "__main__":` another file may import `build`: told where and what to change
    assert check_source_pair(before, after) == ["MGPU406"]
    finding = next(f for f in transform_source(before.encode(), "train.py").findings if f.code == "MGPU406")
    assert finding.line == 4
    assert "`build()` now returns one model, not the pair `(model, parallel)`" in finding.message
    assert "`model = build(...)`, read where it read `model` or `parallel`" in finding.message


def test_the_finding_names_the_pair_in_the_order_it_was_returned():
    # round 53, ao11: `return train_m, m` was told as the pair `(m, train_m)`
    before = BUILD.replace("return model, parallel", "return parallel, model") + (
        "if __name__ == '__main__':\n    par, model = build(2)\n    par.fit(x, y)\n    model.save('m.h5')\n"
    )
    finding = next(f for f in transform_source(before.encode(), "train.py").findings if f.code == "MGPU406")
    assert "not the pair `(parallel, model)`" in finding.message
    assert "read where it read `parallel` or `model`" in finding.message


def test_the_name_kept_is_the_one_the_template_had_in_the_return():
    before = BUILD.replace("return model, parallel", "return parallel, model") + (
        "gpu_model, cpu_model = build(2)\ngpu_model.fit(x, y)\ncpu_model.save('m.h5')\n"
    )
    result = transform_source(before.encode())
    out = result.output.decode()
    # (and the caller's `cpu_model`, a name for the old pair's half, becomes `model`: template_names.py)
    assert out.endswith("    return model\n\n\nmodel = build(2)\nmodel.fit(x, y)\nmodel.save('m.h5')\n")
    assert not result.findings  # it trains at module level: nothing imports it, nothing to tell


@pytest.mark.parametrize("use", [
    "pair = build(2)\npair[1].fit(x, y)\n",  # not unpacked
    "model, par = build(2)\npar.fit(x, y)\npar = other\n",  # the dropped name bound again
    "model, par = build(2)\npar.fit(x, y)\n\n\ndef later(model):\n    return par.predict(model)\n",  # shadowed there
    "model, par = build(2)\npar.fit(x, y)\nrun(build)\n",  # used as a value
])
def test_any_other_use_keeps_the_pair(use):
    out = transform_source((BUILD + use + "model.fit(x, y)\n").encode()).output.decode()
    assert "    return model, model\n" in out


def test_a_module_something_may_import_keeps_the_pair():
    out = transform_source((BUILD + "def main():\n    model, par = build(2)\n    return par\n").encode()).output
    assert b"    return model, model\n" in out


def test_a_guard_kept_for_its_message_loses_its_else_alias_and_the_pair_goes():
    # `if n > 1: print(...); parallel = multi_gpu_model(...) else: parallel = model`: the `if` stays
    # for its message, the `else` holding only the alias goes with the call (no `else: pass`), and
    # with no alias left the builder returns its model once
    before = (
        "import tensorflow as tf\nfrom keras.utils import multi_gpu_model\n\n\n"
        "def build():\n    model = make()\n    n_gpu = len(tf.config.list_physical_devices('GPU'))\n"
        "    if n_gpu > 1:\n        print('Using %d GPUs' % n_gpu)\n"
        "        parallel = multi_gpu_model(model, gpus=n_gpu)\n    else:\n        parallel = model\n"
        "    parallel.compile('adam', 'mse')\n    return model, parallel\n\n\n"
        "if __name__ == '__main__':\n    model, parallel = build()\n    parallel.fit(x, y)\n"
    )
    after = transform_source(before.encode(), "train.py").output.decode()
    assert after.endswith(
        "    if n_gpu > 1:\n        print('Using %d GPUs' % n_gpu)\n    with strategy.scope():\n"
        "        model = make()\n        model.compile('adam', 'mse')\n    return model\n\n\n"
        "if __name__ == '__main__':\n    model = build()\n    model.fit(x, y)\n"
    )


def test_a_builder_docstring_only_about_the_pair_says_what_it_returns_now():
    # round 26, wb06: the docstring "Returns (template, trainable) - trainable is the multi-GPU copy."
    # went whole, and the builder's new contract went unsaid
    before = (
        "from keras.utils import multi_gpu_model\n\n\ndef build(n_gpus):\n"
        '    """Returns (template, trainable) - trainable is the multi-GPU copy when n_gpus > 1."""\n'
        "    template = make()\n    trainable = multi_gpu_model(template, gpus=n_gpus)\n"
        "    trainable.compile('adam', 'mse')\n    return template, trainable\n\n\n"
        "template, trainable = build(2)\ntrainable.fit(x, y)\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert ('def build(n_gpus):\n    """Return the model, built and compiled under `strategy.scope()`."""\n'
            '    strategy = ') in out
    # a docstring that stays true stays as written
    kept = before.replace("Returns (template, trainable) - trainable is the multi-GPU copy when n_gpus > 1.",
                          "Build the keyword-spotting CNN.")
    assert '    """Build the keyword-spotting CNN."""\n' in transform_source(kept.encode(), "t.py").output.decode()


def test_a_returns_section_listing_the_pair_lists_the_one_model():
    # round 24, ua12: "Returns:" over "- the template model, used for saving" / "- the compiled model
    # that can be trained with several GPUs" stayed, half renamed, after the builder returned one model
    before = (
        "from keras.utils import multi_gpu_model\n\n\ndef build(n_gpus):\n"
        '    """Build the regression MLP.\n\n    Returns:\n        - the template model, used for saving\n'
        '        - the compiled model that can be trained with several GPUs\n    """\n'
        "    template = make()\n    trainable = multi_gpu_model(template, gpus=n_gpus)\n"
        "    trainable.compile('adam', 'mse')\n    return template, trainable\n\n\n"
        "template, trainable = build(2)\ntrainable.fit(x, y)\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert ('    """Build the regression MLP.\n\n    Returns:\n'
            '        The model, built and compiled under `strategy.scope()`.\n    """\n') in out
    # one item (not the pair's two halves): left as written
    one = before.replace("        - the compiled model that can be trained with several GPUs\n", "")
    assert "        - the model, used for saving\n" in transform_source(one.encode(), "t.py").output.decode()


@pytest.mark.parametrize("entry", [
    "(template, trainable): the template shares its weights with\n        the trainable copy; save it.\n",
    "tuple: (template, trainable), the second one for fit().\n",
    "template, trainable -- the pair to save and to fit\n",
])
def test_a_returns_entry_opening_with_the_pair_says_the_one_model(entry: str) -> None:
    # round 30, ka12: "(template_model, parallel_model): the template shares its weights with / the
    # parallel model and is the one to save to disk." stayed under "Returns:", unflagged
    before = (
        "from keras.utils import multi_gpu_model\n\n\ndef build(n_gpus):\n"
        '    """Build the regression MLP.\n\n    Returns:\n        ' + entry + '    """\n'
        "    template = make()\n    trainable = multi_gpu_model(template, gpus=n_gpus)\n"
        "    trainable.compile('adam', 'mse')\n    return template, trainable\n\n\n"
        "template, trainable = build(2)\ntrainable.fit(x, y)\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert ('    """Build the regression MLP.\n\n    Returns:\n'
            '        The model, built and compiled under `strategy.scope()`.\n    """\n') in out
    # other names first: not about the pair, left as written (renamed)
    other = before.replace("(template, trainable)", "(history, score)").replace("template, trainable --", "a, b --")
    assert "The model, built and compiled" not in transform_source(other.encode(), "t.py").output.decode()


def test_a_google_style_returns_section_naming_the_pair_lists_the_one_model_and_the_args_read_alone():
    # round 28, ya10: `template_model: the single-GPU model, ...` / `train_model: the compiled model
    # ... (the multi-GPU` / `replica when gpus > 1, ...)`, with the `gpus` argument's line naming the
    # helper; the caller's `trainer` (a name for the training half) becomes `model`
    before = (
        "from keras.utils import multi_gpu_model\n\n\ndef get_models(gpus=1):\n"
        '    """Build the classifier.\n\n    Arguments:\n'
        "        gpus: how many GPUs to train on (multi_gpu_model is used when > 1)\n\n    Returns:\n"
        "        template_model: the single-GPU model, use this one to save weights\n"
        "        train_model: the compiled model to call fit on (the multi-GPU\n"
        '            replica when gpus > 1, else the template itself)\n    """\n'
        "    template_model = make()\n    if gpus > 1:\n"
        "        train_model = multi_gpu_model(template_model, gpus=gpus)\n    else:\n"
        "        train_model = template_model\n    train_model.compile('adam', 'mse')\n"
        "    return template_model, train_model\n\n\n"
        "if __name__ == '__main__':\n    template, trainer = get_models(2)\n    trainer.fit(x, y)\n"
        "    template.save_weights('w.h5')\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert (
        "        gpus: how many GPUs to train on (tf.distribute.MirroredStrategy is used when > 1)\n\n    Returns:\n"
        '        The model, built and compiled under `strategy.scope()`.\n    """\n'
    ) in out
    assert out.endswith("    model = get_models(2)\n    model.fit(x, y)\n    model.save_weights('w.h5')\n")


def test_a_summary_naming_the_pair_it_returned_says_the_one_model():
    # round 29, za09: """Return (template_model, training_model).""" over `return template, training`
    before = (
        "from keras.utils import multi_gpu_model\n\n\ndef build_models(gpus):\n"
        '    """Return (template_model, training_model)."""\n'
        "    template = make()\n    training = multi_gpu_model(template, gpus=gpus)\n"
        "    training.compile('adam', 'mse')\n    return template, training\n\n\n"
        "template, training = build_models(2)\ntraining.fit(x, y)\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert 'def build_models(gpus):\n    """Return the model, built and compiled under `strategy.scope()`."""\n' in out


def test_a_summary_naming_the_pair_as_models_says_the_one_model():
    # round 37, jb05: "Return (template, trainable) models." had stayed
    source = (
        "from keras.utils import multi_gpu_model\n\n\ndef build_models(cfg):\n"
        '    """Return (template, trainable) models."""\n'
        "    template = make(cfg)\n    if cfg['gpus'] > 1:\n"
        "        trainable = multi_gpu_model(template, gpus=cfg['gpus'])\n"
        "    else:\n        trainable = template\n    trainable.compile('adam', 'mse')\n"
        "    return template, trainable\n\n\n"
        "template, trainable = build_models(CFG)\ntrainable.fit(x, y)\ntemplate.save('m.h5')\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert '    """Return the model, built and compiled under `strategy.scope()`."""\n' in out
