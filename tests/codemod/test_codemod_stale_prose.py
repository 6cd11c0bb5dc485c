"""codemod/stale_prose.py: prose elsewhere in a rewritten file that still describes the removed
helper is made true (the helper named as the tool), dropped (every sentence names something
removed) or reported with its line (MGPU305); every other comment, docstring and markdown stays."""

import json

import pytest

from codemod_fixtures import assert_comments_kept
from multi_gpu_codemod import transform_source
from multi_gpu_codemod.notebook import transform_notebook
from multi_gpu_codemod.sites import format_sites
from multi_gpu_codemod.stale_prose import STRATEGY, Prose, _clause_kept, docstring_without_stale, markdown

IMPORTS = "import tensorflow as tf\nfrom keras.utils import multi_gpu_model\n"
HELPER = (  # a copied tower helper: slices the batch per GPU, concatenates on the CPU
    "def make_parallel(model, gpu_count):\n"
    "    def get_slice(data, idx, parts):\n        size = tf.shape(data)[:1] // parts\n"
    "        return data[idx * size[0]:(idx + 1) * size[0]]\n\n"
    "    outputs = []\n    for i in range(gpu_count):\n        with tf.device('/gpu:%d' % i):\n"
    "            piece = Lambda(get_slice, arguments={'idx': i, 'parts': gpu_count})(model.inputs[0])\n"
    "            outputs.append(model(piece))\n"
    "    with tf.device('/cpu:0'):\n        merged = concatenate(outputs, axis=0)\n"
    "    return Model(inputs=model.inputs, outputs=merged)\n"
)
SITE = "model = build()\ngpu_model = multi_gpu_model(model, gpus=2)\ngpu_model.compile('adam', 'mse')\n"
MIGRATED = (
    'strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:2])\n'
    "with strategy.scope():\n    model = build()\n    model.compile('adam', 'mse')\n"
)


def migrate(before: str) -> tuple[str, list[tuple[int, str, str]]]:
    result = transform_source(before.encode(), "train.py")
    assert not result.failed
    assert transform_source(result.output, "train.py").output == result.output  # a second run changes nothing
    assert_comments_kept(before.encode(), result.output)
    return result.output.decode(), [(f.line, f.code, f.message) for f in result.findings]


def test_the_helper_named_as_the_tool_becomes_the_strategy():
    before = (
        '"""CIFAR-10 ResNet, trained on several GPUs with multi_gpu_model."""\n'
        "# data parallel using `multi_gpu_model`\n" + IMPORTS + "\n"
        "# multi_gpu_model splits each batch evenly, so use an even batch size.\n"
        "BATCH = 64\n" + SITE
    )
    after, findings = migrate(before)
    assert after == (
        '"""CIFAR-10 ResNet, trained on several GPUs with tf.distribute.MirroredStrategy."""\n'
        "# data parallel using `tf.distribute.MirroredStrategy`\nimport tensorflow as tf\n\n"
        "# tf.distribute.MirroredStrategy splits each batch evenly, so use an even batch size.\n"
        "BATCH = 64\n" + MIGRATED
    )
    assert findings == []


def test_a_header_about_the_copied_helper_goes_with_its_blank_line():
    before = (
        "# kuza55's make_parallel helper, copied here so the script is standalone.\n\n"
        "import tensorflow as tf\nfrom keras.layers import Lambda, concatenate\nfrom keras.models import Model\n\n\n"
        + HELPER + "\n\n"
        "model = build()\nmodel = make_parallel(model, 2)\nmodel.compile('adam', 'mse')\nmodel.fit(x, y)\n"
    )
    after, findings = migrate(before)
    assert after.startswith("import tensorflow as tf\n\n"), after
    assert "kuza55" not in after and findings == []


def test_only_the_lines_up_to_a_sentence_end_go_with_the_stale_sentence():
    before = (
        "# Character-level seq2seq translation (eng -> fra)\n"
        "# multi gpu via the make_parallel helper from kuza55's gist\n"
        "import tensorflow as tf\nfrom keras.layers import Lambda, concatenate\nfrom keras.models import Model\n\n\n"
        + HELPER + "\n\n"
        "model = build()\nmodel = make_parallel(model, 2)\nmodel.compile('adam', 'mse')\nmodel.fit(x, y)\n"
    )
    after, _ = migrate(before)
    assert after.startswith("# Character-level seq2seq translation (eng -> fra)\nimport tensorflow as tf\n")
    assert "kuza55" not in after


def test_a_comment_naming_the_removed_parallel_model_goes_a_true_one_stays():
    before = (
        IMPORTS + SITE + "encoder = Model(x, h)  # shares weights with the autoencoder\n"
        "# weights of the template are shared with the parallel model\n"
        "model.save('m.h5')  # the template, not gpu_model\n"
    )
    after, findings = migrate(before)
    assert after == (
        "import tensorflow as tf\n" + MIGRATED + "encoder = Model(x, h)  # shares weights with the autoencoder\n"
        "model.save('m.h5')\n"
    )
    assert findings == []


def test_a_docstring_about_the_wrapper_goes_a_comment_mixing_sentences_is_reported():
    before = (
        IMPORTS + "\n\nclass Checkpoint(Callback):\n"
        '    """Save the template, which sits at layers[-2] of the parallel model."""\n\n'
        "    def on_epoch_end(self, epoch, logs=None):\n        self.model.save('x.h5')\n\n\n"
        "# Train for ten epochs. The batch of every step is split evenly over the\n"
        "# gpu_model's replicas. Save often.\n# Save gpu_model's template.\n" + SITE
    )
    after, findings = migrate(before)
    # every sentence of the docstring was about the wrapper: it goes, and no blank line is left under the class
    assert "class Checkpoint(Callback):\n    def on_epoch_end(self, epoch, logs=None):\n" in after
    # a sentence on a line of its own goes; one running over lines into another is reported
    assert (
        "# Train for ten epochs. The batch of every step is split evenly over the\n"
        "    # gpu_model's replicas. Save often.\n    model = build()"
    ) in after
    assert [(line, code) for line, code, _ in findings] == [(13, "MGPU305")]
    assert "`gpu_model`" in findings[0][2]
    assert "reword it for tf.distribute.MirroredStrategy or delete it" in findings[0][2]


def test_a_comment_over_lines_loses_the_stale_sentences_it_ends_with():
    before = (
        IMPORTS + "\n\n# Kernel run on a 2xP100 machine. The model is built, then `multi_gpu_model` makes a\n"
        "# data-parallel copy; we train the parallel model and predict with the template.\n" + SITE
    )
    after, findings = migrate(before)
    assert "    # Kernel run on a 2xP100 machine.\n    model = build()\n" in after
    assert "data-parallel" not in after
    assert findings == []


def test_a_docstring_loses_only_its_stale_sentences():
    before = (
        'def build(n_gpus):\n    """Build the two-input model.\n\n'
        "    The sequence branch is an LSTM, the static branch a small MLP.  The\n"
        "    model is wrapped with multi_gpu_model so each GPU gets a slice of the\n"
        '    batch; the compiled parallel model is returned.\n    """\n'
        "    model = make()\n    parallel = multi_gpu_model(model, gpus=n_gpus)\n"
        "    parallel.compile('adam', 'mse')\n    return parallel\n"
    )
    after, findings = migrate(IMPORTS + before)
    # the model "wrapped with" the helper is replicated with the strategy; "the compiled parallel
    # model" after the `;` is the one compiled model now
    # (filled again within the paragraph's widest line: the renamed line would read 88 columns)
    kept = (
        "The sequence branch is an LSTM, the static branch a small MLP.  The\n"
        "    model is replicated with tf.distribute.MirroredStrategy so each GPU\n"
        "    gets a slice of the batch; the compiled model is returned."
    )
    assert f'    """Build the two-input model.\n\n    {kept}\n    """\n' in after
    assert [code for _, code, _ in findings] == ["MGPU117"]  # (the count read from its name), no MGPU305


def test_a_docstring_left_with_one_line_closes_on_it():
    before = (
        'def build(n_gpus):\n    """Build the two-input model.\n\n'
        "    Each GPU holds a data-parallel copy of it.\n    \"\"\"\n"
        "    model = make()\n    parallel = multi_gpu_model(model, gpus=n_gpus)\n"
        "    parallel.compile('adam', 'mse')\n    return parallel\n"
    )
    after, _ = migrate(IMPORTS + before)
    assert 'def build(n_gpus):\n    """Build the two-input model."""\n' in after


def test_a_module_docstring_wholly_about_the_helper_stays_and_is_reported_where_it_names_it():
    before = '"""\nmulti_gpu_model returns the parallel copy.\n"""\n' + IMPORTS + SITE
    after, findings = migrate(before)
    assert after.startswith('"""\nmulti_gpu_model returns the parallel copy.\n"""\n')
    assert [(line, code) for line, code, _ in findings] == [(2, "MGPU305")]


def test_with_a_site_left_for_a_human_the_parallel_model_still_exists():
    before = (
        IMPORTS + "# the parallel model trains, the template is saved\n" + SITE
        + "other = multi_gpu_model(model, gpus=2)\nother.train_on_batch(x, y)\n"
    )
    after, _ = migrate(before)
    assert "# the parallel model trains, the template is saved" in after
    assert "from keras.utils import multi_gpu_model" in after


def test_pragmas_and_files_left_as_they_are_are_never_touched():
    before = (IMPORTS + "x = 1  # noqa: make_parallel\n"
              "parallel = multi_gpu_model(model, gpus=2)\nparallel.train_on_batch(x, y)\n")
    assert transform_source(before.encode(), "t.py").output.decode() == before


@pytest.mark.parametrize("text,renamed", [
    ("data parallel with make_parallel", "data parallel with tf.distribute.MirroredStrategy"),
    ("Uses `multi_gpu_model()` to split each batch.", "Uses `tf.distribute.MirroredStrategy` to split each batch."),
    ("multi GPU via ModelMGPU", "multi GPU via tf.distribute.MirroredStrategy"),
    ("ModelMGPU forwards save() to the serial model", "ModelMGPU forwards save() to the serial model"),
    ("wrapped with multi_gpu_model_v2", "wrapped with multi_gpu_model_v2"),
    ("replicated with keras.utils.multi_gpu_model;", "replicated with tf.distribute.MirroredStrategy;"),
    ("the model is wrapped with multi_gpu_model", "the model is replicated with tf.distribute.MirroredStrategy"),
    ("builds it and wraps it in multi_gpu_model.", "builds it and replicates it with tf.distribute.MirroredStrategy."),
    ("ResNet, trained through a ModelMGPU wrapper.", "ResNet, trained under tf.distribute.MirroredStrategy."),
    ("Trained with keras.utils.multi_gpu_model.", "Trained with tf.distribute.MirroredStrategy."),
    ("wrapped with multi_gpu_model, merged on the CPU", "wrapped with multi_gpu_model, merged on the CPU"),
    ("the ModelMGPU wrapper saves the template", "the ModelMGPU wrapper saves the template"),
    ("Tabular MLP, make_parallel variant.", "Tabular MLP, tf.distribute.MirroredStrategy variant."),
    # (round 53, ao01 and ao20: deleted whole) the helper's set-up or code path is the strategy's
    ("so we check that the multi_gpu_model replica setup works.",
     "so we check that the tf.distribute.MirroredStrategy replica setup works."),
    ("# so the multi_gpu_model path is only used locally.",
     "# so the tf.distribute.MirroredStrategy path is only used locally."),
    ("# the multi_gpu_model replica copy is merged on the CPU",
     "# the multi_gpu_model replica copy is merged on the CPU"),
    ("2 GPUs (`multi_gpu_model`), the batch split.", "2 GPUs (`tf.distribute.MirroredStrategy`), the batch split."),
    # (round 52, an07: the sentence went whole) the aside gives the Keras version that had the helper
    ("`n_gpus` sets data parallelism (Keras 2.0.9 `training_utils.multi_gpu_model`).",
     "`n_gpus` sets data parallelism (`tf.distribute.MirroredStrategy`)."),
    ("# split over 2 GPUs (Keras' multi_gpu_model)", "# split over 2 GPUs (tf.distribute.MirroredStrategy)"),
    # a line the longer name would push past 100 columns stays as it was
    ("# " + "x" * 60 + " wraps it in multi_gpu_model.", "# " + "x" * 60 + " wraps it in multi_gpu_model."),
    ("multi_gpu_model needs two GPUs", "multi_gpu_model needs two GPUs"),
    ("Compile and train the parallel model.", "Compile and train the model."),
    ("Save the template, not the parallel model.", "Save the template, not the parallel model."),
])
def test_what_counts_as_the_helper_named_as_the_tool(text, renamed):
    prose = Prose(frozenset({"make_parallel", "multi_gpu_model", "ModelMGPU"}), mechanics_gone=True)
    assert prose.renamed(text) == renamed


def test_a_helper_still_in_the_code_is_not_renamed():
    prose = Prose.between("from keras.utils import multi_gpu_model\nm = multi_gpu_model(x)\n",
                          "from keras.utils import multi_gpu_model\nm = multi_gpu_model(x)\n", mechanics_gone=False)
    assert prose.renamed("trained with multi_gpu_model") == "trained with multi_gpu_model"
    assert prose.names_removed("the parallel model") is None


def _notebook(*cells: tuple[str, str]) -> bytes:
    return json.dumps({
        "cells": [
            {"cell_type": kind, "metadata": {}, "source": source.splitlines(keepends=True),
             **({"outputs": [], "execution_count": None} if kind == "code" else {})}
            for kind, source in cells
        ],
        "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 2,
    }, indent=1).encode()


def test_notebook_markdown_is_renamed_dropped_or_reported_with_its_cell():
    before = _notebook(
        ("markdown", "# CIFAR ResNet\nUses `multi_gpu_model` to split each batch.\n"
                     "Save the model (it shares weights with `gpu_model`)."),
        ("markdown", "We train on 4 GPUs; on a laptop `multi_gpu_model` raises and we keep one model."),
        ("code", IMPORTS + SITE),
        ("markdown", "Compile and train the parallel model."),
    )
    result = transform_notebook(before, "nb.ipynb")
    cells = json.loads(result.output)["cells"]
    # renamed; the wholly stale line goes, with no blank line left at the cell's end
    assert "".join(cells[0]["source"]) == "# CIFAR ResNet\nUses `tf.distribute.MirroredStrategy` to split each batch."
    assert "".join(cells[3]["source"]) == "Compile and train the model."
    # a true clause before a stale one: the true one stays, closed (round 25, vb01)
    assert "".join(cells[1]["source"]) == "We train on 4 GPUs."
    assert result.findings == []
    assert transform_notebook(result.output, "nb.ipynb").output == result.output


def test_a_markdown_cell_left_empty_goes_and_later_cells_are_numbered_as_shown():
    before = _notebook(
        ("code", IMPORTS + "import numpy as np\n"),
        ("markdown", "The helper below is kuza55's `make_parallel`: it slices each batch over the GPUs."),
        ("code", "def make_parallel(model, gpu_count):\n    return ModelMGPU(model, gpu_count)\n"),
        ("code", "model = build()\nmodel = make_parallel(model, 2)\nmodel.compile('adam', 'mse')\nmodel.fit(x, y)\n"),
        ("markdown", "## Notes on `make_parallel`"),
    )
    result = transform_notebook(before, "nb.ipynb")
    kinds = [c["cell_type"] for c in json.loads(result.output)["cells"]]
    assert kinds.count("markdown") == 1 and len(kinds) < 5
    finding = next(f for f in result.findings if f.code == "MGPU305")
    assert kinds[finding.cell - 1] == "markdown" and finding.cell == len(kinds)


def test_a_markdown_line_loses_its_stale_sentence_and_keeps_the_true_one():
    """Round 25, vb01: "Kernel with 2 GPUs. The template model lives on the CPU and
    `multi_gpu_model` copies it onto both GPUs." keeps its first sentence."""
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    text = ("# Plant seedlings\nKernel with 2 GPUs. The template model lives on the CPU and `multi_gpu_model` "
            "copies it onto both GPUs.\n")
    assert markdown(text, prose) == ("# Plant seedlings\nKernel with 2 GPUs.\n", [])


def test_a_notebook_exports_cell_marker_never_goes_with_a_stale_header():
    before = (
        "# trains the template through gpu_model\n# In[1]:\n\n\n" + IMPORTS + "\n\n# In[2]:\n\n\n" + SITE
    )
    after, _ = migrate(before)
    assert after.startswith("# In[1]:\n\n\nimport tensorflow as tf\n")
    assert "\n# In[2]:\n\n\n" in after


def test_dotted_names_wrapped_with_and_messages_in_code():
    before = (
        '"""Trained with keras.utils.multi_gpu_model.\n\nThe model is wrapped with multi_gpu_model so each GPU\n'
        'gets a slice of the batch.\n"""\n' + IMPORTS
        + 'parser.add_argument("--gpus", type=int, help="number of GPUs (multi_gpu_model needs >= 2)")\n'
        + "model = build()\ngpu_model = multi_gpu_model(model, gpus=2)\ngpu_model.compile('adam', 'mse')\n"
        + "gpu_model.save('gpu_model.h5')\n"
    )
    after, findings = migrate(before)
    assert after.startswith(
        '"""Trained with tf.distribute.MirroredStrategy.\n\nThe model is replicated with tf.distribute.MirroredStrategy'
        ' so each GPU\ngets a slice of the batch.\n"""\n'
    )
    # the help text loses its aside on the helper (round 33: a help text reads as a message does);
    # a file name is no prose
    assert 'help="number of GPUs")' in after and findings == []
    assert "model.save('gpu_model.h5')" in after


def test_a_title_over_a_bare_hash_line_stays_when_the_paragraph_below_goes():
    before = (
        "# train_tagger.py -- POS tagger (BiLSTM) with optional multi-GPU training\n#\n"
        "# With fewer GPUs than requested, multi_gpu_model raises a\n# ValueError and we fall back.\n" + IMPORTS + SITE
    )
    after, _ = migrate(before)
    # (the bare `#` that set the paragraph apart goes with it, round 53)
    assert after.startswith("# train_tagger.py -- POS tagger (BiLSTM) with optional multi-GPU training\nimport")


def test_an_exported_markdown_heading_is_never_dropped():
    before = "# # Siamese network on gpu_model\n# In[1]:\n\n\n" + IMPORTS + "\n\n# In[2]:\n\n\n" + SITE
    after, findings = migrate(before)
    assert after.startswith("# # Siamese network on model\n# In[1]:\n")


def test_a_sentence_about_the_old_pair_is_not_made_true_by_a_name():
    # "the template is built on the CPU and replicated with ...": renaming the tool would say something false
    prose = Prose(frozenset({"multi_gpu_model", "gpu_model"}), True, parallel_names={"gpu_model": "model"})
    text = "the template is built on the CPU and replicated with multi_gpu_model."
    assert prose.renamed(text) == text and prose.wholly_stale(text)
    assert prose.renamed("Recompile `gpu_model` so the change takes effect.") == (
        "Recompile `model` so the change takes effect."
    )
    assert prose.names_removed("when asked, it is the data-parallel copy") == "data-parallel copy"


def test_a_docstring_laid_out_as_a_list_is_reported_not_cut():
    before = IMPORTS + (
        "\n\nclass Saver(Callback):\n"
        '    """Save the model whenever val_loss improves.\n\n    Args:\n'
        "        template: the single-device model whose weights the parallel\n            model shares.\n"
        '        path: where to write the file.\n    """\n\n'
        "    def on_epoch_end(self, epoch, logs=None):\n        pass\n\n\n" + SITE
    )
    after, findings = migrate(before)
    assert "        path: where to write the file.\n" in after and "the parallel\n            model shares." in after
    assert [(line, code) for line, code, _ in findings] == [(9, "MGPU305")]
    assert "the removed multi-GPU wrapper ('parallel model')" in findings[0][2]


def test_prose_on_the_old_mechanics_without_a_removed_name_goes_too():
    # the argument names, the setattr trick and "the parallel wrapper" were all the old call's
    before = (
        '"""Speech classifier.\n\nWe train on the 4-GPU node; the call below keeps the default cpu_merge.\n\n'
        'The __setattr__ trick below makes callbacks see the template.\n"""\n' + IMPORTS
        + "class Saver(Callback):\n    \"\"\"Save the best weights.\n\n"
        "    Keras' own ModelCheckpoint would save the parallel wrapper instead.\n    \"\"\"\n\n"
        "    def on_epoch_end(self, epoch, logs=None):\n        self.model.save('best.h5')\n\n\n" + SITE
    )
    after, findings = migrate(before)
    # the clause before the `;` stays, ended as the sentence was; the paragraph on the trick goes
    assert after.startswith('"""Speech classifier.\n\nWe train on the 4-GPU node.\n"""\n')
    assert '    """Save the best weights."""\n' in after
    assert not [f for f in findings if f[1] == "MGPU305"]


def test_a_module_docstring_keeps_its_stale_summary_line_reported_and_loses_the_rest():
    before = (
        '"""Data-parallel helper adapted from kuza55, used for our net.\n\n'
        "multi_gpu_model slices every batch over the GPUs.\n\"\"\"\n" + IMPORTS + SITE
    )
    after, findings = migrate(before)
    assert after.startswith('"""Data-parallel helper adapted from kuza55, used for our net."""\n')
    assert [(line, code) for line, code, _ in findings] == [(1, "MGPU305")]


def test_a_comment_line_ending_in_a_colon_before_a_lower_case_line_is_one_sentence_with_it():
    before = (
        "# Trained on tabular data, as in the docs:\n# the parallel model is built on the CPU.\n"
        "# Data: the census set.\n" + IMPORTS + SITE
    )
    after, _ = migrate(before)
    assert after.startswith("# Data: the census set.\nimport tensorflow as tf\n")


def test_a_dropped_argument_is_said_on_the_sites_report_line_not_in_the_code():
    before = IMPORTS + "model = build()\ngpu_model = multi_gpu_model(model, gpus=2, cpu_merge=False)\n" \
        "gpu_model.compile('adam', 'mse')\n"
    after, findings = migrate(before)
    assert "cpu_merge" not in after and not [f for f in findings if f[1] == "MGPU305"]
    result = transform_source(before.encode(), "t.py")
    assert format_sites(result.sites, "t.py") == [
        "t.py:4:13: multi_gpu_model rewritten; dropped `cpu_merge=False` (MirroredStrategy decides where the "
        "replicas' results are combined)"
    ]
    restated = transform_source(before.replace("cpu_merge=False", "cpu_merge=True").encode(), "t.py")
    assert format_sites(restated.sites, "t.py") == ["t.py:4:13: multi_gpu_model rewritten"]  # the old default


def test_a_paragraph_led_by_a_label_is_prose_and_the_multi_gpu_replica_is_mechanics():
    before = (
        '"""Dogs vs cats.\n\nCallbacks: early stopping. ModelCheckpoint is\nomitted (it would save the'
        ' multi-GPU wrapper).\n\nThe multi-GPU replica is what we train.\n"""\n' + IMPORTS + SITE
    )
    after, findings = migrate(before)
    assert after.startswith('"""Dogs vs cats.\n\nCallbacks: early stopping.\n"""\n')
    assert not [f for f in findings if f[1] == "MGPU305"]


def test_commented_out_code_naming_what_was_removed_goes_whole_not_renamed_line_by_line():
    before = (
        IMPORTS + "def other(x):\n    # parallel = multi_gpu_model(net, gpus=2)\n    # gpu_model = net\n"
        "    # gpu_model.fit(x, x, epochs=10)\n    return x\n\n\n" + SITE
    )
    after, _ = migrate(before)
    assert "def other(x):\n    return x\n" in after
    assert "# model.fit" not in after


def test_a_docstring_paragraph_the_rename_makes_too_wide_is_filled_again_to_its_width():
    before = (
        '"""Helpers.\n\nget_model() returns the network ready to train: compiled, and wrapped with\n'
        'multi_gpu_model when more than one GPU was requested, ready for the long training loop.\n"""\n'
        + IMPORTS + SITE
    )
    after, findings = migrate(before)
    assert after.startswith(
        '"""Helpers.\n\nget_model() returns the network ready to train: compiled, and replicated with\n'
        "tf.distribute.MirroredStrategy when more than one GPU was requested, ready for the long\n"
        'training loop.\n"""\n'
    )
    assert not [f for f in findings if f[1] == "MGPU305"]


def test_a_docstring_left_ending_in_a_quote_keeps_its_closing_quotes_below():
    before = 'def f():\n    """Says "hi"\n\n    Each GPU holds a data-parallel copy.\n    """\n' + IMPORTS + SITE
    after, _ = migrate(before)
    assert '    """Says "hi"\n    """\n' in after


def test_a_semicolon_inside_parentheses_ends_no_clause():
    before = '"""Trainer.\n\nUses lr (0.1; decayed) and gpu_model.\n"""\n' + IMPORTS + SITE
    after, _ = migrate(before)
    assert "(0.1." not in after


def test_an_aside_ending_a_sentence_goes_when_the_rest_says_something():
    prose = Prose(frozenset({"device_lib", "make_parallel"}), True)
    kept = "Uses every GPU the machine has (counted through device_lib)."
    assert _clause_kept(kept, prose) == "Uses every GPU the machine has."
    assert _clause_kept("Return (model, make_parallel).", prose) == ""  # no sentence left
    assert _clause_kept("Grab it (via make_parallel) and save it.", prose) == ""  # not at its end


def test_a_crlf_docstring_loses_its_stale_sentence_and_keeps_its_line_ends():
    before = (
        '"""Bidirectional LSTM classifier.\r\n\r\nRun on the GPUs set below; falls back to one device\r\n'
        'if multi_gpu_model refuses (e.g. only one GPU visible).\r\n"""\r\n'
        + (IMPORTS + SITE).replace("\n", "\r\n")
    )
    after, _ = migrate(before)
    assert after.startswith('"""Bidirectional LSTM classifier.\r\n\r\nRun on the GPUs set below.\r\n"""\r\n')
    assert "\n" not in after.replace("\r\n", "")


def test_an_abbreviation_or_a_stop_in_parentheses_ends_no_sentence():
    before = '"""Trainer.\n\nFalls back if multi_gpu_model refuses (e.g. one GPU. Or none.) at start.\n"""\n'
    after, _ = migrate(before + IMPORTS + SITE)
    assert after.startswith('"""Trainer."""\n')  # the whole sentence went, not its half after "e.g."


def test_a_clause_with_its_own_subject_after_a_comma_and_goes_alone():
    before = (
        '"""Fine-tune a conv net.\n\n    CUDA_VISIBLE_DEVICES is set before keras is imported, and the\n'
        '    number of ids decides how many replicas multi_gpu_model builds.\n"""\n'
    )
    after, _ = migrate(before + IMPORTS + SITE)
    assert after.startswith(
        '"""Fine-tune a conv net.\n\n    CUDA_VISIBLE_DEVICES is set before keras is imported.\n"""\n'
    )
    # a list's last item is no clause of its own: the sentence goes whole
    listed = '"""Fine-tune.\n\nIt loads data, builds, and merges outputs for multi_gpu_model.\n"""\n'
    after, _ = migrate(listed + IMPORTS + SITE)
    assert after.startswith('"""Fine-tune."""\n')


@pytest.mark.parametrize("text,expected", [
    # the model named, with its own words, is replicated with the strategy; the tool keeps its backticks
    ("and wrap the siamese model with `multi_gpu_model` over two cards.",
     "and replicate the siamese model with `tf.distribute.MirroredStrategy` over two cards."),
    ("We wrap our base network in multi_gpu_model.",
     "We replicate our base network with tf.distribute.MirroredStrategy."),
    # what ran on the parallel model runs on the strategy's replicas
    ("Both stages run on the parallel model (4 GPUs).",
     "Both stages run under tf.distribute.MirroredStrategy (4 GPUs)."),
])
def test_a_named_model_wrapped_in_the_helper_is_trained_under_the_strategy(text, expected):
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    assert prose.renamed(text) == expected


def test_a_clause_of_a_sentence_about_the_old_pair_is_not_renamed():
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    text = "The template lives on the CPU; `multi_gpu_model` copies it to each GPU."
    assert prose.renamed(text) == text
    assert prose.wholly_stale(text)  # so a markdown line holding it goes
    assert prose.renamed("We train on 2 GPUs; `multi_gpu_model` copies the model.") == (
        "We train on 2 GPUs; `tf.distribute.MirroredStrategy` copies the model."
    )


def test_a_markdown_line_is_renamed_whatever_its_width():
    before = _notebook(
        ("markdown", "## Sentiment\n\nIf more than one GPU is visible we use `multi_gpu_model`; otherwise we "
                     "fall back to the plain model."),
        ("code", IMPORTS + SITE),
    )
    result = transform_notebook(before, "nb.ipynb")
    cells = json.loads(result.output)["cells"]
    assert "".join(cells[0]["source"]).endswith(
        "we use `tf.distribute.MirroredStrategy`; otherwise we fall back to the plain model."
    )
    assert not [f for f in result.findings if f.code == "MGPU305"]


def test_a_comment_on_wrapping_for_several_gpus_goes():
    before = IMPORTS + "# Multi-GPU: wrap the VAE, losses stay on the template\n" + SITE
    after, findings = migrate(before)
    assert "wrap the VAE" not in after and findings == []


@pytest.mark.parametrize("text,expected", [
    ("Multi-GPU via the classic make_parallel helper.", "Multi-GPU via tf.distribute.MirroredStrategy."),
    ("Built with our `make_parallel` function.", "Built with `tf.distribute.MirroredStrategy`."),
    # round 30, kb14: an exported notebook's title; "wrapper" is the tool's noun, no word of the pair
    ("# # Fashion-MNIST CNN with the make_parallel wrapper",
     "# # Fashion-MNIST CNN with tf.distribute.MirroredStrategy"),
])
def test_the_helper_named_with_its_noun_as_the_tool_is_the_strategy(text, expected):
    assert Prose(frozenset({"make_parallel"}), True).renamed(text) == expected


def test_a_wrapper_named_mid_sentence_is_left_to_the_finding():
    # not ending its clause: "the make_parallel wrapper keeps ..." says how the pair worked
    text = "the make_parallel wrapper keeps the serial weights"
    assert Prose(frozenset({"make_parallel"}), True).renamed(text) == text


@pytest.mark.parametrize("text", [
    "Phase 2 re-wraps the template after unfreezing.",
    "the template holds the weights; the parallel wrapper is throwaway",
    "The template `model` keeps the weights.",
    "Keeps both the template and the GPU replica, so checkpoints stay loadable.",
])
def test_the_old_pairs_weights_and_rewrapping_are_mechanics(text):
    assert Prose(frozenset({"multi_gpu_model"}), True).wholly_stale(text)
    assert not Prose(frozenset({"multi_gpu_model"}), False).wholly_stale(text)  # (while a site is left)


def test_a_docstring_of_mixed_line_ends_is_left_as_it_is():
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    mixed = '"""Title.\r\n\r\nUses multi_gpu_model for speed. Trains fast.\n"""'
    assert docstring_without_stale(mixed, prose) is None
    assert prose.renamed("Built with multi_gpu_model.\r\nOr\n") == "Built with multi_gpu_model.\r\nOr\n"


def test_a_parenthesis_never_closed_joins_no_sentences():
    from multi_gpu_codemod.stale_prose import _sentence_spans

    text = "Fast (mostly. Saves it. Done."
    assert [text[a:b] for a, b in _sentence_spans(text)] == ["Fast (mostly.", "Saves it.", "Done."]
    closed = "Falls back (e.g. one GPU. Or none.) at start. Done."
    assert [closed[a:b] for a, b in _sentence_spans(closed)] == [
        "Falls back (e.g. one GPU. Or none.) at start.", "Done."
    ]


@pytest.mark.parametrize("text", [
    "The template of the report keeps its title.",
    "Saves the template and the config.",
    "Each GPU replica reads its own shard.",
])
def test_a_template_or_replica_outside_the_old_pair_is_no_mechanics(text):
    assert not Prose(frozenset({"multi_gpu_model"}), True).wholly_stale(text)


@pytest.mark.parametrize("items,expected", [
    # every item went: the line that introduced the list goes too, and the section's heading on the
    # old set-up, which heads nothing now (round 31)
    ("- the parallel model shares its weights with the template\n- the template keeps the weights\n", ""),
    # an item is left: the introduction still introduces it
    ("- the parallel model shares its weights with the template\n- the loss is averaged per batch\n",
     "## Multi-GPU training\n\nTwo pieces make this work:\n\n- the loss is averaged per batch\n"),
])
def test_a_markdown_line_introducing_a_list_goes_only_with_all_its_items(items, expected):
    prose = Prose(frozenset({"multi_gpu_model"}), mechanics_gone=True)
    text = "## Multi-GPU training\n\nTwo pieces make this work:\n\n" + items
    assert markdown(text, prose)[0] == expected


def test_a_summary_line_over_a_returns_section_stays_when_it_cannot_be_cut():
    prose = Prose(frozenset({"multi_gpu_model", "parallel_model"}), mechanics_gone=True)
    value = '"""Wrap the net with multi_gpu_model.\n\n    Returns:\n        the compiled net.\n    """'
    assert docstring_without_stale(value, prose) in (None, value)  # left as it is, and reported


def test_a_later_paragraph_that_becomes_the_summary_starts_right_after_the_quotes():
    prose = Prose(frozenset({"multi_gpu_model"}), mechanics_gone=True)
    value = '"""Wrap the net with multi_gpu_model.\n\n    Trains the net on every GPU.\n    """'
    assert docstring_without_stale(value, prose) == '"""Trains the net on every GPU."""'


@pytest.mark.parametrize("text,expected", [
    ('"""Build the forecaster and its multi-GPU copy."""', '"""Build the forecaster."""'),
    ('"""Create the encoder with its parallel wrapper."""', '"""Create the encoder."""'),
])
def test_the_other_half_of_the_old_pair_goes_from_a_sentence_the_model_half_stays(text, expected):
    assert docstring_without_stale(text, Prose(frozenset({"multi_gpu_model"}), mechanics_gone=True)) == expected


def test_a_sentence_naming_the_pair_is_not_renamed_in_any_of_its_clauses():
    prose = Prose(frozenset({"parallel_model"}), True, {"parallel_model": "model"})
    text = "(model, parallel_model): save the model; parallel_model splits each batch"
    assert prose.renamed(text) == text


@pytest.mark.parametrize("text", [
    "# always persist the single-device copy",
    "# weights are shared, so saving the single model is enough",
    "# the template shares its weights with the towers",
])
def test_comments_on_saving_one_half_of_the_old_pair_are_mechanics(text):
    assert Prose(frozenset({"multi_gpu_model"}), True).wholly_stale(text)


@pytest.mark.parametrize("text", [
    "# save the template model, not the parallel one, so the weights reload on one GPU",
    "# always save the template; the parallel model cannot be reloaded on one GPU",
    "Owns the template model and the (possibly parallel) training model.",
])
def test_a_comment_contrasting_the_template_with_the_parallel_model_is_mechanics_in_each_clause(text):
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    assert prose.wholly_stale(text)
    assert "the model cannot" not in prose.renamed(text)  # no clause renamed into a false one


def test_a_template_clause_beside_a_clause_naming_only_the_helper_is_renamed_not_dropped():
    # "the template model is saved" is true of the one model once the helper is the strategy
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    text = "Trains on 4 GPUs with multi_gpu_model; the template model is saved for inference."
    assert not prose.wholly_stale(text)


def test_the_template_model_is_the_model_once_every_site_is_rewritten():
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    assert prose.renamed("Save the template model after each epoch.") == "Save the model after each epoch."
    left = Prose(frozenset({"multi_gpu_model"}), False)  # a site is left: the pair still exists
    assert left.renamed("Save the template model.") == "Save the template model."


def test_a_stale_comment_inside_brackets_goes():
    before = IMPORTS + (
        "from keras.callbacks import ModelCheckpoint\nmodel = build()\ngpu_model = multi_gpu_model(model, gpus=2)\n"
        "gpu_model.compile('adam', 'mse')\ncallbacks = [\n    # multi_gpu_model forwards save() to the template\n"
        "    ModelCheckpoint('best.h5'),\n]\ngpu_model.fit(x, y, callbacks=callbacks)\n"
    )
    after, findings = migrate(before)
    assert "forwards" not in after and "callbacks = [\n    ModelCheckpoint('best.h5'),\n]\n" in after


def test_a_comment_loses_its_opening_line_about_the_wrapper_and_keeps_the_rest():
    before = IMPORTS + (
        "model = build()\nfish_parallel = multi_gpu_model(model, gpus=2)\nfish_parallel.compile('adam', 'mse')\n"
        "fish_parallel.fit(x, y)\n# NOTE: saving fish_parallel would store the Lambda slicing layers too;\n"
        "# model is what the inference service loads\nmodel.save('m.h5')\n"
    )
    after, findings = migrate(before)
    assert "model.fit(x, y)\n# model is what the inference service loads\nmodel.save('m.h5')\n" in after
    assert not [f for f in findings if f[1] == "MGPU305"]


def test_a_sentence_about_the_mechanics_is_not_renamed_into_a_false_one():
    prose = Prose(frozenset({"fish_parallel"}), True, {"fish_parallel": "fish_model"})
    text = "# NOTE: saving fish_parallel would store the Lambda slicing layers too;"
    assert prose.renamed(text) == text


def test_trained_with_a_multi_gpu_wrapper_is_trained_under_the_strategy():
    prose = Prose(frozenset({"ModelMGPU"}), True)
    assert prose.renamed("# Chest X-ray classifier trained with a multi-GPU wrapper.") == (
        "# Chest X-ray classifier trained under tf.distribute.MirroredStrategy."
    )


def test_the_clause_after_a_stale_one_stays_as_its_own_sentence():
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    value = (
        '"""Batch inference.\n\nThe network is loaded on the CPU and replicated for\n'
        'predict(); no training happens here.\n"""'
    )
    assert docstring_without_stale(value, prose) == '"""Batch inference.\n\nNo training happens here.\n"""'


@pytest.mark.parametrize("text", [
    "# checkpoint the template so the file loads on one GPU",
    "It returns both: the training model for fit() and the template for saving.",
])
def test_the_two_models_of_the_old_pair_named_together_are_mechanics(text):
    assert Prose(frozenset({"multi_gpu_model"}), True).wholly_stale(text)


def test_a_wrapped_sentence_with_a_colon_is_no_field_list():
    from multi_gpu_codemod.stale_prose import _structured

    assert not _structured("It compiles the model.  It returns\nboth: the model for fit() and more.")
    assert _structured("Returns:\n    model: the compiled model.")


@pytest.mark.parametrize("text,expected", [
    ("# architecture as JSON + weights, from the template model", "# architecture as JSON + weights, from the model"),
    ("Save `template` (the single-GPU model) at the end of every epoch.", "Save `template` at the end of every epoch."),
])
def test_the_template_half_of_the_pair_is_named_as_the_one_model(text, expected):
    assert Prose(frozenset({"multi_gpu_model"}), True).renamed(text) == expected


def test_loading_without_the_wrapper_is_mechanics():
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    assert prose.wholly_stale("# checkpoint the template so the weights can be loaded without the wrapper")


def test_the_towers_of_a_slicing_helper_are_mechanics():
    prose = Prose(frozenset({"make_parallel"}), True)
    assert prose.wholly_stale("Run one tower per GPU and merge the outputs on the CPU.")
    assert not prose.wholly_stale("Merge the outputs of both heads.")


@pytest.mark.parametrize("text,expected", [
    ('"""Save the template model (not the multi-gpu wrapper) after each epoch."""',
     '"""Save the model after each epoch."""'),
    ("# Save model (the serial one)", "# Save model"),
])
def test_an_aside_telling_the_wrapper_apart_goes(text, expected):
    assert Prose(frozenset({"ModelMGPU"}), True).renamed(text) == expected


def test_a_pointer_left_of_a_stale_sentence_does_not_stand_alone():
    prose = Prose(frozenset({"ModelMGPU"}), True)
    assert prose.wholly_stale("This file imports the wrapper from utils.")
    value = '"""Colorization with a ModelMGPU.\n\nThis file imports the wrapper from utils; see utils/mgpu.py.\n"""'
    assert docstring_without_stale(value, prose) == ""  # (a module's keeps its summary, reported)


@pytest.mark.parametrize("text,expected", [
    ("# the parallel model splits every batch between the GPUs",
     "# tf.distribute.MirroredStrategy splits every batch between the GPUs"),
    ("# the parallel model holds no weights of its own", "# the parallel model holds no weights of its own"),
])
def test_the_parallel_model_splitting_batches_is_what_the_strategy_does_now(text, expected):
    assert Prose(frozenset({"multi_gpu_model"}), True).renamed(text) == expected


@pytest.mark.parametrize("text,stale", [
    ("# template model", True), ("# the template:", True), ("# serial model", True),
    ("# template model for the encoder", False), ("# model", False),
])
def test_a_label_naming_one_half_of_the_old_pair_goes(text, stale):
    assert Prose(frozenset({"multi_gpu_model"}), True).wholly_stale(text) is stale
    assert not Prose(frozenset({"multi_gpu_model"}), False).wholly_stale(text)  # a site left: the pair is there


def test_concatenating_the_outputs_on_the_cpu_is_the_old_helpers_mechanics():
    text = "Data-parallel training with multi_gpu_model (slices each batch and concatenates the outputs on the CPU)."
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    assert prose.renamed(text) == text and prose.wholly_stale(text)  # not made the strategy's by a name


@pytest.mark.parametrize("text,expected", [
    ("# parallelise if we can; multi_gpu_model raises ValueError when < 2 GPUs are visible",
     "# parallelise if we can"),
    ("# multi_gpu_model raises ValueError; we catch it", "# multi_gpu_model raises ValueError; we catch it"),
    ("# Wide & deep CTR model; builder returns (model, gpu_model)", "# Wide & deep CTR model"),
])
def test_a_one_line_comments_last_clause_naming_what_was_removed_goes(text, expected):
    prose = Prose(frozenset({"multi_gpu_model", "gpu_model"}), True)
    assert prose.without_stale_sentences(text) == expected


@pytest.mark.parametrize("summary,expected", [
    ("Binary segmentation (tiny U-Net) using the ModelMGPU wrapper so that\nModelCheckpoint can save the serial model.",
     "Binary segmentation (tiny U-Net)."),
    ("Speech enhancement model with parallel_model.save kept as in the original.", "Speech enhancement model."),
    ("make_parallel helper used by an OCR model.", None),  # nothing of its own before the phrase: reported
])
def test_a_module_summary_loses_its_closing_phrase_on_the_old_mechanics(summary, expected):
    prose = Prose(frozenset({"ModelMGPU", "make_parallel", "parallel_model"}), True)
    cleaned = docstring_without_stale(f'"""{summary}"""', prose, keep_first=True)
    assert cleaned == (None if expected is None else f'"""{expected}"""')


def test_a_markdown_sentence_over_two_lines_is_read_whole_before_any_rename():
    # the helper named as the tool on the first line, its mechanics on the second: not renamed
    text = (
        "Data-parallel training with the `make_parallel` helper (slices each batch across GPUs\n"
        "and concatenates the outputs on the CPU). Batches must be divisible by the GPU count."
    )
    # once the slicing's limit counts as the old mechanics (round 31), every sentence is stale: the
    # paragraph goes whole, still never renamed into "training with tf.distribute... (slices ...)";
    # beside a sentence still true, only that sentence stays (round 35: not the whole unit, flagged)
    text = text.replace(" Batches must be divisible by the GPU count.", " Batches are shuffled.")
    new, reported = markdown(text, Prose(frozenset({"make_parallel"}), True))
    assert new == "Batches are shuffled." and reported == []
    whole = text.replace(" Batches are shuffled.", " Batches must be divisible by the GPU count.")
    assert markdown(whole, Prose(frozenset({"make_parallel"}), True)) == ("", [])


def test_a_later_paragraph_losing_its_first_sentence_keeps_its_indentation():
    prose = Prose(frozenset({"train_model"}), True)
    value = '"""Build the churn model.\n\n    Returns (model, train_model). The file is saved by the caller.\n    """'
    assert docstring_without_stale(value, prose) == (
        '"""Build the churn model.\n\n    The file is saved by the caller.\n    """'
    )


def test_a_parallel_aside_before_model_goes():
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    assert prose.renamed("# serialize the (parallel) model to JSON") == "# serialize the model to JSON"
    assert prose.renamed("# f(x) (parallel) of the model") == "# f(x) (parallel) of the model"  # not before a model


@pytest.mark.parametrize("text,expected", [
    # round 25, va10 / va11: the template as the noun, and the "too" that meant the parallel model
    ("# Quick sanity check with the reloaded template.", "# Quick sanity check with the reloaded model."),
    ("# sanity check: the saved template predicts the same thing",
     "# sanity check: the saved model predicts the same thing"),
    ("# the template model is compiled too so that model.save() keeps the optimizer config",
     "# the model is compiled so that model.save() keeps the optimizer config"),
    ("# the template is too large to fit", "# the model is too large to fit"),  # "too" of degree stays
    # left: another model named, the pair's sharing, a bare label, a template that is not the model
    ("# returns the template and the model to train", None),
    ("# weights are shared, so saving the template keeps everything", None),
    ("# the template", None),
    ("# render the template file", None),
])
def test_the_template_named_alone_is_the_model_once_every_site_is_rewritten(text, expected):
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    assert prose.renamed(text) == (expected or text)
    assert Prose(frozenset({"multi_gpu_model"}), False).renamed(text) == text  # a site left: still a pair


def test_a_builders_docstring_on_its_replica_and_the_train_model_keeps_only_what_stays_true():
    """Round 25, va07: "..., if several GPUs are configured, its replica." loses that phrase; "the
    train model only exists for the multi-GPU fit" is the old pair's mechanics."""
    before = IMPORTS + (
        "\n\ndef build_models(n):\n    \"\"\"Build the U-Net and, if several GPUs are configured, its replica.\n\n"
        "    Weights must be saved from the template model, the train model only exists for the\n"
        "    multi-GPU fit.\n    \"\"\"\n    template_model = unet()\n"
        "    train_model = multi_gpu_model(template_model, gpus=n)\n    train_model.compile('adam', 'mse')\n"
        "    return train_model\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert '    """Build the U-Net."""\n' in out
    assert "train model" not in out and "replica" not in out


@pytest.mark.parametrize("comment,kept", [
    # round 25, vb16: the clause after the `;` and its aside on the next line go; the first stays
    ("# Kaggle gives us 2 GPUs on this kernel; fall back to one if the wrap fails\n"
     "# (e.g. when the kernel is restarted on a CPU-only session).\n", "# Kaggle gives us 2 GPUs on this kernel.\n"),
    ("# Use both GPUs when the machine has them; multi_gpu_model raises a\n"
     "# ValueError on a laptop, then we simply keep the single model.\n",
     "# Use both GPUs when the machine has them.\n"),
])
def test_a_comment_over_lines_loses_its_stale_clause_after_a_semicolon(comment, kept):
    before = IMPORTS + "\n" + comment + "\nmodel = build()\nparallel = multi_gpu_model(model, gpus=2)\n" + (
        "parallel.compile('adam', 'mse')\nparallel.fit(x, y)\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert kept in out and "(e.g." not in out and "ValueError on a laptop" not in out


def test_a_module_summary_loses_a_closing_phrase_led_by_the_helper():
    """Round 24, ua17: "Object-count regression, ModelMGPU variant that tolerates gpus == 1." was
    renamed into "..., tf.distribute.MirroredStrategy variant that tolerates gpus == 1."."""
    prose = Prose(frozenset({"ModelMGPU"}), True)
    text = '"""Object-count regression, ModelMGPU variant that tolerates gpus == 1."""'
    assert docstring_without_stale(text, prose, keep_first=True) == '"""Object-count regression."""'
    assert prose.renamed("the ModelMGPU variant of the script") == (
        "the tf.distribute.MirroredStrategy variant of the script"
    )


@pytest.mark.parametrize("text", [
    "# Wrap for multi-GPU training; checkpoints still save the base model",  # round 25, va02
    "# fall back to one if the wrap fails",
])
def test_what_the_wrapper_did_beside_the_model_is_mechanics(text):
    assert Prose(frozenset({"ModelMGPU"}), True).wholly_stale(text)
    assert not Prose(frozenset({"ModelMGPU"}), True).wholly_stale("# the wrap layer pads each batch")


@pytest.mark.parametrize("line,expected", [
    # round 26, wb02: the closing phrase naming the old pair's half goes, the message stays
    ("print('weights written from the single-GPU template')", "print('weights written')"),
    ("log.info('Model saved to disk, via multi_gpu_model.')", "log.info('Model saved to disk.')"),
    # placeholders before the phrase stay, with their arguments
    ("print('weights written from %s via multi_gpu_model' % path)", "print('weights written from %s' % path)"),
    # left (reported): nothing would be left to say, a placeholder in the phrase, not a message
    ("print('saved from multi_gpu_model')", None),
    ("print('saved to %s with multi_gpu_model %d' % (path, n))", None),
    ("mode = 'weights written from the single-GPU template'", None),
])
def test_a_printed_message_loses_a_closing_phrase_on_what_was_removed(line, expected):
    before = IMPORTS + "model = build()\ngpu_model = multi_gpu_model(model, gpus=2)\n" + (
        "gpu_model.compile('adam', 'mse')\ngpu_model.fit(x, y)\n" + line + "\n"
    )
    result = transform_source(before.encode(), "t.py")
    last = result.output.decode().rstrip("\n").rsplit("\n", 1)[-1]
    assert last == (expected or line)
    assert ("MGPU305" in {f.code for f in result.findings}) == (expected is None)


@pytest.mark.parametrize("text,renamed,stale", [
    # round 27: xb02, the wrapper's reason goes with it; xb06, saving the parallel model was the pair's
    # problem, not renamed into a false "we save the model directly"
    ("DenseNet-ish head, trained with `ModelMGPU` so that checkpoints can be saved.",
     "DenseNet-ish head, trained with `tf.distribute.MirroredStrategy`.", False),
    ("We save the parallel model directly (we always reload on the same node).", None, True),
    ("Compile and train the parallel model.", "Compile and train the model.", False),
    # xa07, xa01, xa03, xb09, xb20: the old pair's halves and the wrapper's limits
    ("The serial generator/discriminator are returned as well; the parallel ones only train.", None, True),
    ("# replicate the model on every GPU; keep `model` around for saving", None, False),
    ("# predict() on the replica splits each batch between the GPUs", None, True),
    ("# save the single-device template; the replica is not loadable on 1 GPU", None, True),
    ("# model used for training (may be multi-gpu)", "# model used for training", False),
])
def test_round_27_prose(text, renamed, stale):
    prose = Prose(frozenset({"ModelMGPU", "multi_gpu_model"}), True)
    now = prose.renamed(text, markdown=not text.startswith("#"))
    assert now == (renamed or text)
    assert prose.wholly_stale(now) == stale  # (stale whole: it goes)
    if text.startswith("# replicate"):
        assert prose.without_stale_sentences(text) == "# replicate the model on every GPU"


def test_a_comment_naming_the_templates_old_name_and_the_pair_goes_whole():
    """Round 27, xa04: "# weights are saved from org_model; the multi-GPU model shares them" was
    renamed clause by clause into "from model; the model shares them"."""
    before = IMPORTS + (
        "\n\ndef run(n):\n    org_model = build()\n    model = multi_gpu_model(org_model, gpus=n)\n"
        "    model.compile('adam', 'mse')\n    # weights are saved from org_model; the multi-GPU model shares them\n"
        "    model.fit(x, y)\n    org_model.save('m.h5')\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert "shares them" not in out and "    model.save('m.h5')\n" in out


def test_a_docstring_clause_pointing_back_at_what_went_goes_with_it():
    """Round 27, xa10: "...would save the multi_gpu_model wrapper; this" / "callback saves the original
    model instead." kept "This" / "callback saves ..." across two lines."""
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    text = ('"""Keras\' ModelCheckpoint would save the multi_gpu_model wrapper; this\n'
            '    callback saves the original model instead.\n    """')
    assert docstring_without_stale(text, prose) == ""
    kept = text.replace("the original model instead", "each epoch's weights to disk")
    assert docstring_without_stale(kept, prose) == '"""This callback saves each epoch\'s weights to disk."""'


@pytest.mark.parametrize("line,expected", [
    # round 27, xa05 / xa16: a failure named first, an aside naming the old half
    ("print('multi_gpu_model failed, training on a single device')", "print('Training on a single device')"),
    ('print("model saved (single-GPU version)")', 'print("model saved")'),
])
def test_a_printed_message_loses_what_named_the_old_mechanics(line, expected):
    before = IMPORTS + "model = build()\ngpu_model = multi_gpu_model(model, gpus=2)\n" + (
        "gpu_model.compile('adam', 'mse')\ngpu_model.fit(x, y)\n" + line + "\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert out.rstrip("\n").rsplit("\n", 1)[-1] == expected


def test_a_line_ending_in_a_colon_before_lower_case_text_is_one_sentence_not_a_list():
    """Round 27, xa06: "... with the old `make_parallel` helper:" / "each GPU gets a slice ..." was
    read as a list heading, left and reported; "Args:" over its fields is still a list."""
    prose = Prose(frozenset({"make_parallel"}), True)
    text = ('"""Matrix-factorisation recommender.\n\nMulti-GPU data parallelism is done with the old '
            '`make_parallel` helper:\neach GPU gets a slice of the batch and the outputs are concatenated on CPU.\n"""')
    assert docstring_without_stale(text, prose, keep_first=True) == '"""Matrix-factorisation recommender."""'
    listed = '"""Train.\n\n    Args:\n        gpus: count for make_parallel.\n    """'
    assert docstring_without_stale(listed, prose) is None


def test_a_tagged_message_opening_with_the_helpers_failure_keeps_its_tag():
    # round 22, sa04: "[INFO] multi_gpu_model failed, training on a single device"
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\ntry:\n"
        "    model = multi_gpu_model(model, gpus=2)\n    print('[INFO] training on 2 GPUs')\nexcept ValueError:\n"
        "    print('[INFO] multi_gpu_model failed, training on a single device')\nmodel.compile('adam', 'mse')\n"
    )
    result = transform_source(source.encode(), "train.py")
    assert "    print('[INFO] Training on a single device')\n" in result.output.decode()
    assert [f.code for f in result.findings] == []


CLASS_HEAD = "from keras.utils import multi_gpu_model\n\n\nclass Trainer(object):\n"
CLASS_BODY = (
    "\n    def __init__(self, gpus=2):\n        self.model = build()\n"
    "        self.parallel = multi_gpu_model(self.model, gpus=gpus)\n"
    "        self.parallel.compile('adam', 'mse')\n"
)


@pytest.mark.parametrize("docstring,now", [
    # round 26, wb19: the pair, named as such, is one model now
    pytest.param('"""Owns the template and the data-parallel model used for fit."""',
                 '"""Owns the model used for fit."""', id="both-halves-are-the-model"),
    # round 27, xa10: every sentence named the pair, but the summary alone says what the code does
    pytest.param('"""Save the single-device template after every epoch.\n\n    Keras would save the multi_gpu_model '
                 'wrapper; this\n    callback saves the original model instead.\n    """',
                 '"""Save the model after every epoch."""', id="the-summary-alone-stays"),
])
def test_a_docstring_about_the_pair_says_what_the_one_model_does(docstring, now):
    source = CLASS_HEAD + f"    {docstring}\n" + CLASS_BODY
    out = transform_source(source.encode(), "train.py").output.decode()
    assert f"class Trainer(object):\n    {now}\n\n    def __init__" in out


@pytest.mark.parametrize("docstring", [
    pytest.param('"""Owns both the template and the parallel model."""', id="both-of-them-is-no-one-model"),
    pytest.param('"""Uses the serial model for saving.\n\n    The multi_gpu_model copy trains.\n    """',
                 id="a-summary-saying-why-the-half-was-used"),
])
def test_a_docstring_only_about_the_pair_that_no_one_model_makes_true_goes(docstring):
    source = CLASS_HEAD + f"    {docstring}\n" + CLASS_BODY
    out = transform_source(source.encode(), "train.py").output.decode()
    assert "class Trainer(object):\n    def __init__" in out


def test_a_stale_line_that_moved_is_also_given_at_its_line_in_the_migrated_file():
    # round 27, xb20: the finding gave line 49 (the file as read); a reader of the written file
    # found `def train(...)` there, the comment two lines further down
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\nmodel = multi_gpu_model(model, gpus=2)\n"
        "model.compile('adam', 'mse')\nmodel.fit(x, y)\n"
        "parser.add_argument('--gpus', help='multi_gpu_model needs >= 2 GPUs')\n"
    )
    result = transform_source(source.encode(), "train.py")
    lines = result.output.decode().splitlines()
    (finding,) = [f for f in result.findings if f.code == "MGPU305"]
    assert finding.line == 7
    moved = int(finding.message.split("(line ")[1].split(" of the migrated file)")[0])
    assert "multi_gpu_model needs >= 2 GPUs" in lines[moved - 1] and moved != 7
    assert finding.message.endswith("; reword it for tf.distribute.MirroredStrategy or delete it.")


@pytest.mark.parametrize("comment,now", [
    # round 28, yb09: the sharing was between the two models; one is left
    pytest.param("# train on both GPUs; the weights are shared with `autoencoder`", "# train on both GPUs",
                 id="a-clause-on-the-shared-weights-goes"),
    # round 28, yb01: the old function's placement, and the contrast that only made sense beside it
    pytest.param("# Build on the CPU and copy the weights to every GPU; with one GPU just use the model as is.",
                 None, id="the-placement-and-its-contrast-go-whole"),
])
def test_the_old_pairs_weight_sharing_and_placement_are_stale(comment, now):
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\n"
        f"{comment}\nparallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n"
    )
    result = transform_source(source.encode(), "train.py")
    out = result.output.decode()
    assert comment not in out and [f.code for f in result.findings] == []
    if now is not None:
        assert f"{now}\n" in out


def test_a_clause_on_what_the_parallel_model_shares_goes_and_the_rest_ends_as_written():
    # round 28, ya20: "the parallel model shares the layers with `model`" was renamed into "the
    # model shares the layers with `model`"; the stage's own clause stays, with no added full stop
    source = (
        "from keras.utils import multi_gpu_model\n\n\ndef main(gpus):\n    model = build()\n"
        "    parallel = multi_gpu_model(model, gpus=gpus)\n    parallel.compile('adam', 'mse')\n"
        "    parallel.fit(x, y)\n    # stage 2: unfreeze the last 30 layers; the parallel model shares the\n"
        "    # layers with `model`, so recompiling it is enough\n    for layer in model.layers[-30:]:\n"
        "        layer.trainable = True\n    parallel.compile('sgd', 'mse')\n    parallel.fit(x, y)\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert "    # stage 2: unfreeze the last 30 layers\n    for layer in model.layers[-30:]:\n" in out


def test_the_template_model_as_an_item_of_a_returned_tuple_is_the_model():
    # round 28, ya17: ":return: (template model, keras History)"
    source = (
        "from keras.utils import multi_gpu_model\n\n\ndef train(x, y, gpus):\n"
        '    """Train the RUL model.\n\n    :return: (template model, keras History)\n    """\n'
        "    model = build()\n    parallel = multi_gpu_model(model, gpus=gpus)\n    parallel.compile('adam', 'mse')\n"
        "    return model, parallel.fit(x, y)\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert "    :return: (model, keras History)\n" in out


@pytest.mark.parametrize("said,now", [
    # round 29, za16 / zb04: a message naming the template's half as a kind of model
    pytest.param('print("Saved the single-GPU model")', 'print("Saved the model")', id="the-single-gpu-model"),
    pytest.param('print("saved template model")', 'print("saved model")', id="saved-template-model"),
    # round 30, ka12: "weights" in a file name is no word of the pair's mechanics
    pytest.param('print("saved m.weights.h5 from the template model")', 'print("saved m.weights.h5 from the model")',
                 id="weights-file-name"),
    # round 52, an13: the template's weights are the one model's weights
    pytest.param("print('saved template weights')", "print('saved weights')", id="saved-template-weights"),
    pytest.param('print("Saving template\'s weights to %s" % path)', 'print("Saving weights to %s" % path)',
                 id="templates-weights-placeholder"),
])
def test_a_message_naming_the_templates_half_names_the_one_model(said, now):
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\nparallel = multi_gpu_model(model, gpus=2)\n"
        f"parallel.compile('adam', 'mse')\nparallel.fit(x, y)\nmodel.save('m.h5')\n{said}\n"
    )
    result = transform_source(source.encode(), "train.py")
    assert result.output.decode().endswith(f"model.save('m.h5')\n{now}\n")
    assert [f.code for f in result.findings] == []


def test_a_message_saying_more_of_the_pair_is_left_and_reported():
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\nparallel = multi_gpu_model(model, gpus=2)\n"
        "parallel.compile('adam', 'mse')\nparallel.fit(x, y)\n"
        "print('saved template model; the parallel one cannot be loaded')\n"
    )
    result = transform_source(source.encode(), "train.py")
    assert "print('saved template model; the parallel one cannot be loaded')" in result.output.decode()
    assert [f.code for f in result.findings] == ["MGPU305"]


@pytest.mark.parametrize("comment,now", [
    # round 29, za18
    pytest.param("# ---- phase 2: unfreeze the last 30 layers and recompile the replica",
                 "# ---- phase 2: unfreeze the last 30 layers and recompile the model", id="recompile-the-replica"),
])
def test_the_replica_as_what_is_compiled_or_trained_is_the_model(comment, now):
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\nparallel = multi_gpu_model(model, gpus=2)\n"
        f"parallel.compile('adam', 'mse')\nparallel.fit(x, y)\n{comment}\nparallel.compile('sgd', 'mse')\n"
        "parallel.fit(x, y)\n"
    )
    assert f"{now}\n" in transform_source(source.encode(), "train.py").output.decode()


def test_a_model_wrapped_to_predict_is_run_under_the_strategy_not_trained():
    # round 29, za11: "wraps it with multi_gpu_model so predict() splits the windows"
    source = (
        '"""Batch inference.\n\nLoads the picker and wraps it with multi_gpu_model so predict() splits the batch.\n'
        '"""\n'
        "from keras.models import load_model\nfrom keras.utils import multi_gpu_model\n\n"
        "model = load_model('m.h5')\nmodel = multi_gpu_model(model, gpus=2)\nmodel.predict(x)\n"
    )
    out = transform_source(source.encode(), "infer.py").output.decode()
    assert "Loads the picker and runs it under tf.distribute.MirroredStrategy so predict() splits" in out


@pytest.mark.parametrize("written,now", [
    # round 30, ka17: a phrase across two lines, emphasised, with an aside on the template
    ("# stage 2: unfreeze the top of the backbone and recompile the\n"
     "# *parallel* model (recompiling the template has no effect on it)\n",
     "# stage 2: unfreeze the top of the backbone and recompile the model\n"),
    # the tool named across lines (vb20's shape): renamed as one sentence, filled again
    ("# The model is loaded once and, when several GPUs are present, wrapped with\n"
     "# multi_gpu_model so predict() spreads each batch over them.\n",
     "# The model is loaded once and, when several GPUs are present, run under\n"
     "# tf.distribute.MirroredStrategy so predict() spreads each batch over them.\n"),
])
def test_a_sentence_across_comment_lines_is_renamed_as_one(written, now):
    out, findings = migrate(IMPORTS + "x = load()\n\n" + written + "y = x.mean()\n\n" + SITE)
    assert "\n" + now + "y = x.mean()\n" in out
    assert [f for f in findings if f[1] == "MGPU305"] == []


def test_comment_lines_nothing_runs_across_keep_their_breaks():
    # each line renamed on its own reads the same as the sentence renamed whole: the lines stay
    written = "# Trains on two GPUs with multi_gpu_model.\n# Saves every epoch.\n"
    out, _ = migrate(IMPORTS + written + "y = 1\n\n" + SITE)
    assert "# Trains on two GPUs with tf.distribute.MirroredStrategy.\n# Saves every epoch.\ny = 1\n" in out


@pytest.mark.parametrize("written,now", [
    # round 30, kb06 / kb11
    ("# Tabular churn model - helper that returns serial and parallel models\n",
     "# Tabular churn model - helper that returns the model\n"),
    ("# quick sanity check that the saved file loads without the GPU wrapper\n",
     "# quick sanity check that the saved file loads\n"),
])
def test_the_pair_as_two_models_and_doing_without_the_wrapper_read_as_one_model(written, now):
    out, _ = migrate(IMPORTS + SITE + "model.save('m.h5')\n" + written + "m2 = load('m.h5')\n")
    assert now + "m2 = load('m.h5')\n" in out


def test_doing_without_the_wrapper_in_a_sentence_on_the_template_is_left_to_the_pair_rules():
    # the sentence says more of the pair: not cut into "checkpoint the template so ... can be loaded"
    written = "# checkpoint the template so the weights can be loaded without the wrapper\n"
    out, _ = migrate(IMPORTS + SITE + written + "ckpt = make_checkpoint()\n")
    assert "can be loaded\n" not in out


def test_a_docstring_paragraph_on_the_pair_goes_whole_not_leaving_a_fragment():
    # round 31, ma09: "replicated by multi_gpu_model. The" / "replicas share their weights with the
    # template model, ..." kept "The" alone on its line and the false sentence after it
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    paragraph = (
        "With num_gpus > 1 the network is replicated by multi_gpu_model. The\n"
        "replicas share their weights with the template model, which is why the\n"
        "checkpoint callback below is attached to the template model."
    )
    assert docstring_without_stale('"""Title.\n\n' + paragraph + '\n"""', prose) == '"""Title."""'


def test_a_paragraph_cut_mid_line_is_filled_again():
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    paragraph = (
        "Reads the config. Wraps it with multi_gpu_model. Then\n"
        "the data pipeline streams the shards from the bucket and\n"
        "the loss is logged every epoch."
    )
    cleaned = docstring_without_stale('"""Title.\n\n' + paragraph + '\n"""', prose)
    # within the paragraph's widest line (57 columns), no line left with "Then" alone
    assert cleaned == (
        '"""Title.\n\nReads the config. Then the data pipeline streams the\n'
        'shards from the bucket and the loss is logged every\nepoch.\n"""'
    )


def test_the_replicated_model_is_the_pairs_mechanics():
    written = "# the replicated model cannot be reloaded on a CPU box, save the original\n"
    out, _ = migrate(IMPORTS + SITE + written + "model.save('m.h5')\n")
    assert "replicated model" not in out


@pytest.mark.parametrize("written,now", [
    # rounds 30-31: the old slicing's limit, the copy, the twin, the save redirection
    ("# batch size must be divisible by the number of GPUs\n", ""),
    ("# split every batch over the cards; batch must be divisible by GPU_COUNT\n",
     "# split every batch over the cards\n"),
    ("# train the replicated copy, keep base_model for saving\n", ""),
    ("# wrap for multi gpu; save/load calls go to base_model\n", ""),
    ("# data parallelism: replicate the compiled model and compile the copy\n", ""),
])
def test_what_the_old_wrapper_required_or_did_goes(written, now):
    out, _ = migrate(IMPORTS + "BATCH = 64\n" + written + "EPOCHS = 2\n\n" + SITE)
    assert "BATCH = 64\n" + now + "EPOCHS = 2\n" in out


@pytest.mark.parametrize("said,now", [
    ("print('saved template')", "print('saved model')"),
    ('print("test mae (template):", mae)', 'print("test mae:", mae)'),
])
def test_a_message_naming_the_template_alone_names_the_model(said, now):
    out, _ = migrate(IMPORTS + SITE + "model.save('m.h5')\n" + said + "\n")
    assert out.endswith(now + "\n")


def test_a_stale_opening_sentence_ending_inside_a_line_goes_and_the_rest_of_the_line_stays():
    # round 31, ma13: the release-notes recipe over three lines, then a sentence still true
    written = (
        "# Following the Keras 2.0.9 release notes: build the template model\n"
        "# under the CPU device scope, then replicate it on G GPUs with\n"
        "# multi_gpu_model. Batch size is the *global* batch size.\n"
    )
    out, findings = migrate(IMPORTS + "x = load()\n\n" + written + "BATCH = 64\n\n" + SITE)
    assert "\n# Batch size is the *global* batch size.\nBATCH = 64\n" in out
    assert [f for f in findings if f[1] == "MGPU305"] == []


@pytest.mark.parametrize("heading,goes", [
    ("### Multi-GPU notes", True),  # round 31, mb11: left heading nothing
    ("## Data parallelism helper", True),
    ("# Xception baseline on the 8-GPU DGX", False),  # a title stays
    ("### Fine tune MobileNet on 3 GPUs", False),  # says more than the set-up
])
def test_a_section_heading_over_notes_that_all_went_goes_with_them(heading, goes):
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    text = heading + "\n\nThe template lives on the CPU and multi_gpu_model makes one replica per GPU.\n"
    assert markdown(text, prose)[0] == ("" if goes else heading + "\n")


@pytest.mark.parametrize("heading,kept", [
    ("## Auto-detecting GPUs", True),  # round 58, az09: it heads the code cell below too
    ("### Multi-GPU notes", False),  # it headed the notes, which went
    ("## Data parallelism helper", False),  # it headed the helper, which went
])
def test_a_notebook_heading_over_text_that_went_stays_over_the_code_below(heading, kept):
    before = _notebook(
        ("markdown", heading + "\n\nWe count the GPUs and only wrap the model when there are at least two.\n"),
        ("code", IMPORTS + SITE),
    )
    cells = json.loads(transform_notebook(before, "nb.ipynb").output)["cells"]
    assert ("".join(cells[0]["source"]).rstrip("\n") == heading) is kept
    assert len(cells) == (2 if kept else 1)


def test_the_helper_refusing_is_at_most_one_gpu_being_visible():
    # round 31, mb03: the fallback still happens, for the reason the strategy has
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    said = "Falls back to a single device when `multi_gpu_model` refuses."
    assert prose.renamed(said) == "Falls back to a single device when at most one GPU is visible."
    assert Prose(frozenset({"multi_gpu_model"}), False).renamed(said) == said  # (a site is left: it still may)


def test_an_rst_literal_names_the_tool_as_a_backquoted_one_does():
    # round 31, ma12: "is wrapped by ``multi_gpu_model``" in an Args line
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    said = "With more than one the tagger is wrapped by ``multi_gpu_model``."
    assert prose.renamed(said) == "With more than one the tagger is replicated with ``tf.distribute.MirroredStrategy``."


def test_compiled_again_for_training_is_the_pairs_mechanics():
    # round 31, ma15: one compile now, under the scope
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    assert prose.wholly_stale("The model is compiled first, then replicated and compiled again for training.")


def test_an_emphasised_template_model_is_the_model():
    # round 30, ka01: "the *template* model" kept an emphasis that contrasts with nothing
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    assert prose.renamed("Save the *template* model at the end of every epoch.") == (
        "Save the model at the end of every epoch."
    )


def test_the_renamed_tool_loses_the_helpers_towers_and_home():
    # round 30, kb18: "(data parallel over towers) from our utils notebook" was left on the strategy
    prose = Prose(frozenset({"make_parallel"}), True)
    said = "Uses `make_parallel` (data parallel over towers) from our utils notebook."
    assert prose.renamed(said) == "Uses `tf.distribute.MirroredStrategy`."


def test_two_halves_are_never_renamed_into_the_model_and_the_model():
    # round 32, na09: "both the template model and the model used for fitting"
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    said = "The Trainer owns both the template model and the model used for fitting."
    assert "the model and the model" not in prose.renamed(said)
    assert prose.wholly_stale(said)  # the pair, both halves: it goes


@pytest.mark.parametrize("said,now", [
    ("# submission uses the template model (same weights)", "# submission uses the model"),  # round 32, nb16
])
def test_an_aside_on_sharing_weights_with_the_other_half_goes(said, now):
    assert Prose(frozenset({"multi_gpu_model"}), True).renamed(said) == now


def test_the_emphasised_parallel_model_is_the_pairs_mechanics():
    # round 32, nb09: "Keras callbacks get the *parallel* model; this wrapper hands them the template"
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    assert prose.wholly_stale("Keras callbacks get the *parallel* model; this wrapper hands them the template model.")


def test_a_removed_short_name_in_backquotes_is_stale():
    # round 33, pb15: "Returns (template, parallel). Train `parallel`; save `template`." stayed as the
    # builder's docstring; `parallel` is code there, the variable the rewrite removed
    before = (
        "from keras.utils import multi_gpu_model\n\n\ndef build(n):\n"
        '    """Build the pair.\n\n    Returns (template, parallel). Train `parallel`; save `template`.\n    """\n'
        "    template = make()\n    parallel = multi_gpu_model(template, gpus=n)\n"
        "    parallel.compile('adam', 'mse')\n    return template, parallel\n\n\n"
        "template, parallel = build(2)\nparallel.fit(x, y)\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert ('    """Build the pair.\n\n    Return the model, built and compiled under `strategy.scope()`.\n    """\n'
            in out)
    prose = Prose(frozenset(), True, quoted=frozenset({"parallel"}))
    assert prose.names_removed("Train `parallel` first") == "`parallel`"
    assert prose.names_removed("data parallel training") is None  # the word, not the name


def test_an_argparse_help_loses_its_closing_phrase_on_the_helper():
    # round 33, pb13: help='number of GPUs for multi_gpu_model'
    line = "parser.add_argument('--gpus', help='number of GPUs for multi_gpu_model')\n"
    out, findings = migrate(IMPORTS + line + SITE)
    assert "help='number of GPUs')" in out and findings == []


@pytest.mark.parametrize("help_text,kept", [
    ("GPUs for multi_gpu_model (1 disables it)", "GPUs (1 disables it)"),  # round 43, da08: the aside stays
    ("number of GPUs for multi_gpu_model (see the multi_gpu_model docs)", "number of GPUs"),  # on the helper: goes
    # round 46: asides on the old call's limits go; the phrase cut keeps the option's own words
    ("number of GPUs for multi_gpu_model (1 = no replication)", "number of GPUs"),  # ac02
    ("number of GPUs to replicate the model on with multi_gpu_model (>=2)",
     "number of GPUs to replicate the model on"),  # ad15: " on" stays
    ("GPUs to use (at least 2)", "GPUs to use"),
    # the helper as the subject of what the strategy does is renamed, as in a comment (ac02), where
    # the line stays within 100 columns
    ("batch; multi_gpu_model splits it across GPUs", "batch; tf.distribute.MirroredStrategy splits it across GPUs"),
    ("global batch; multi_gpu_model splits it across GPUs", "global batch"),
])
def test_an_argparse_help_keeps_its_own_aside_after_the_phrase_on_the_helper(help_text, kept):
    line = f"parser.add_argument('--gpus', help='{help_text}')\n"
    out, findings = migrate(IMPORTS + line + SITE)
    assert f"help='{kept}'" in out and f"help='{kept} " not in out and findings == []


@pytest.mark.parametrize("text", [
    # rounds 42 and 43 (cb01, db01): the one-GPU half alone was left, a choice the code no longer makes
    "With one GPU we just build the net. Otherwise the template lives on the CPU and\n`multi_gpu_model` "
    "copies it onto every GPU; each GPU gets a slice of the batch.",
    "If there is only one GPU we just build the model. Otherwise the template\nlives on the CPU and "
    "`multi_gpu_model` copies it to every GPU; gradients are\nmerged back on the CPU.",
])
def test_the_one_gpu_half_of_the_old_choice_goes_with_its_otherwise(text):
    assert Prose(frozenset({"multi_gpu_model"}), True).wholly_stale(text)
    assert markdown(text, Prose(frozenset({"multi_gpu_model"}), True))[0] == ""


def test_a_sentence_on_one_gpu_not_followed_by_an_otherwise_stays():
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    text = "Train for ten epochs on one GPU. The batch is split by multi_gpu_model."
    assert prose.without_stale_sentences(text) == "Train for ten epochs on one GPU."


@pytest.mark.parametrize("text", [
    "# With more than one GPU, train a parallel copy; otherwise train the model itself.",  # round 43, db14
    # round 41, fa12: the old placement, as its authors wrote it
    "The template model is instantiated under a CPU device scope so its weights are\n"
    "hosted on the CPU and the GPUs only hold the replicas.",
])
def test_more_of_the_old_pair_and_placement_is_mechanics(text):
    assert Prose(frozenset({"multi_gpu_model"}), True).wholly_stale(text)


def test_a_clause_kept_after_a_stale_one_is_not_about_a_half_of_the_old_pair():
    # round 41, fa01: "...with keras.utils.multi_gpu_model; the template model is what we
    # checkpoint." left "The template model is what we checkpoint."
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    sentence = ("When --gpus is larger than one the network is replicated on every GPU with\n"
                "keras.utils.multi_gpu_model; the template model is what we checkpoint.")
    assert _clause_kept(sentence, prose) == ""


def test_a_summary_following_the_helpers_docs_keeps_what_the_file_is():
    # round 41, fa12: "Fine-grained flower classifier, following the multi_gpu_model docs."
    from multi_gpu_codemod.stale_prose import _summary_kept

    prose = Prose(frozenset({"multi_gpu_model"}), True)
    sentence = "Fine-grained flower classifier, following the multi_gpu_model docs."
    assert _summary_kept(sentence, prose) == "Fine-grained flower classifier."


# Comment lines that only the old pair made true, one row per review round's finding: each
# goes (or loses its clause on the pair) wherever it stands between two statements.
STALE_COMMENT_LINES = [
    # round 33: the old pair's two halves and their roles, unflagged before
    ("# replicate on the GPUs; weights stay shared with `net`\n", "# replicate on the GPUs\n"),  # pb05
    ("# With several GPUs train the replica, but keep checkpointing the template:\n"
     "# the replica's weights are the template's weights.\n", ""),  # pb20
    ("# Checkpoints must be taken from the template `model`.\n", ""),  # pb03
    ("# weights saved from the base model so sampling runs on one device\n", ""),  # pa12
    # round 34: the old slicing's limit, the wrapper the save went through, the template's purpose
    ("# batch must divide evenly between the towers\n", ""),  # gb05
    ("# the checkpoint saves through the wrapper, i.e. the single-GPU autoencoder\n", ""),  # gb09
    ("# save the template so the fold model loads on any machine\n", ""),  # gb18
    ("# keeps the best template weights with a small callback\n", "# keeps the best weights with a small callback\n"),
    # round 35: the old wrapper, its slicing and the pair, said in new words
    ("# NB: saving the weights of the multi-GPU model; reload them into a model\n# wrapped the same way\n", ""),  # ha13
    ("# batch must be a multiple of gpu_count or the last tower gets nothing\n", ""),  # hb06
    ("# wrap for data parallelism; the original `model` keeps the weights for saving\n", ""),  # hb13
    ("# written from the template model so they can be reloaded on a single-GPU box\n", ""),  # ha01
    # round 36: more of the old pair's words
    ("# save the base model: the towers share its weights\n", ""),  # ia06
    ("# wrap for data-parallel training; checkpoints still save `model`\n", ""),  # ia02
    ("# batch must divide evenly by the gpu count\n", ""),  # ib06
    ("# Credit default classifier; template compiled first so it can be evaluated on one GPU later\n",
     "# Credit default classifier\n"),  # ib19
    # round 37
    ("# self.model is the parallel model here; save the serial one\n", ""),  # ja17: not "the model here"
    ("# re-compile the replicated model with a larger lr for the larger batch\n",
     "# re-compile the model with a larger lr for the larger batch\n"),  # ja19: the recompile stays, so does its note
    ("# always save the template, the multi-GPU graph is tied to the GPU count\n", ""),  # jb05
    # round 45
    ("# the original (non-parallel) model is what we ship\n", ""),  # aa04
    ("# replicate on all GPUs; raises ValueError when fewer than 2 are visible\n",
     "# replicate on all GPUs\n"),  # ab03: the old call's refusal, not the strategy's
    ("# NOTE: this is the multi-GPU model, reload it with the same number of GPUs\n", ""),  # ab19
    ("# Tries to use every GPU; falls back to one device if the wrap fails.\n",
     "# Tries to use every GPU.\n"),  # aa05: ends as the comment did
]


@pytest.mark.parametrize("written,now", STALE_COMMENT_LINES)
def test_a_comment_line_only_the_old_pair_made_true_goes(written, now):
    out, _ = migrate(IMPORTS + "BATCH = 64\n" + written + "EPOCHS = 2\n\n" + SITE)
    assert "BATCH = 64\n" + now + "EPOCHS = 2\n" in out


def test_a_fallback_that_no_longer_raises_goes_from_the_markdown():
    # round 33, pb06: nothing raises under the strategy, and there is no CPU model to fall back to
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    text = "ECG beat classifier. We try to parallelise; on the laptop this raises and we just use the CPU model.\n"
    assert markdown(text, prose)[0] == "ECG beat classifier.\n"


def test_a_single_gpu_template_model_is_the_model_once():
    # round 33, pa11: "the single-GPU template model" had become "the model model"
    written = (
        "class Saver(Callback):\n"
        '    """Save the single-GPU template model at the end of each epoch."""\n\n'
        "    def on_epoch_end(self, epoch, logs=None):\n        self.model.save('m.h5')\n\n\n"
    )
    out, _ = migrate(IMPORTS + written + SITE)
    assert '    """Save the model at the end of each epoch."""\n' in out


def test_a_usage_line_stays_when_the_sentence_after_it_goes():
    # round 33, pa01: "Usage: ..." has no full stop, so it had been read as the start of the stale sentence
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    value = (
        '"""Train a small CNN.\n\nUsage: python train.py --gpus 2 --epochs 1\n'
        "If more than one GPU is given the model is replicated with multi_gpu_model,\n"
        'the template model is kept for checkpointing.\n"""'
    )
    kept = '"""Train a small CNN.\n\nUsage: python train.py --gpus 2 --epochs 1\n"""'
    assert docstring_without_stale(value, prose) == kept


def test_the_parallel_model_contrasted_with_the_template_by_name_is_not_renamed_into_a_contradiction():
    # round 33, pb12: "compile the *parallel* model, not `ae`" had become "compile the model, not `ae`"
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    said = "# build the replicated model; note: compile the *parallel* model, not `ae`"
    assert prose.renamed(said) == said
    assert prose.wholly_stale(said)


@pytest.mark.parametrize("said,now", [
    ("print('compiled multi-GPU model on', gpus, 'GPUs')", "print('compiled model on', gpus, 'GPUs')"),  # pb12
    ("print('Saving the parallel model')", "print('Saving the model')"),
])
def test_a_message_naming_the_parallel_half_names_the_model(said, now):
    out, findings = migrate(IMPORTS + SITE + said + "\n")
    assert out.endswith(now + "\n")
    assert [f for f in findings if f[1] == "MGPU305"] == []


def test_a_bare_weights_are_shared_left_by_a_dropped_clause_goes():
    # round 34, gb18: "Weights are shared, so the template can be saved" had kept "Weights are shared."
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    assert prose.without_stale_sentences("Build the MLP. Weights are shared.") == "Build the MLP."


def test_the_refusal_example_goes_with_the_refusal():
    # round 34, ga05: "when fewer GPUs are visible (e.g. only one card visible)": fewer than what
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    said = "Falls back to a single device when multi_gpu_model refuses (e.g. only one card visible)."
    assert prose.renamed(said) == "Falls back to a single device when at most one GPU is visible."


def test_a_message_saving_the_template_to_a_file_names_the_model():
    # round 35, ha09
    out, findings = migrate(IMPORTS + SITE + "model.save('f.keras')\nprint('saved template to f.keras')\n")
    assert out.endswith("print('saved model to f.keras')\n") and findings == []


def test_a_stale_sentence_of_a_markdown_paragraph_goes_and_the_rest_is_filled_again():
    # round 35, hb02/hb03/hb12: a sentence running over the paragraph's lines had kept the whole
    # paragraph, flagged
    prose = Prose(frozenset({"ModelMGPU"}), True)
    text = (
        "Trains a ResNet-ish net on 96x96 tiles. The `ModelMGPU` class below is the workaround from the\n"
        "keras issue tracker so that ModelCheckpoint saves the single-GPU model. Tiles come from\n"
        "the 2018 challenge.\n"
    )
    assert markdown(text, prose) == (
        "Trains a ResNet-ish net on 96x96 tiles. Tiles come from the 2018 challenge.\n", []
    )
    listed = "- The `ModelMGPU` class below saves\n  the single-GPU model.\n- Tiles.\n"
    assert markdown(listed, prose)[0] == "- Tiles.\n"  # (a list item: its lines go whole, as before)


def test_a_stale_sentence_wrapped_past_an_aside_goes_whole():
    # round 36, ia06: the line closing "(tower per GPU, outputs merged on CPU)" went, the two lines
    # the sentence ran on to stayed
    before = (
        "# Keyword spotting on log-mel spectrograms.\n"
        "# Uses the old `make_parallel` helper (tower per GPU, outputs merged on CPU)\n"
        "# from our utils package, since multi_gpu_model was not in keras yet when\n"
        "# this was written.\n"
        "import tensorflow as tf\nfrom utils import make_parallel\n\n"
        "model = build()\nmodel = make_parallel(model, 2)\nmodel.compile('adam', 'mse')\nmodel.fit(x, y)\n"
    )
    after, _ = migrate(before)
    assert after.startswith("# Keyword spotting on log-mel spectrograms.\nimport tensorflow as tf\n")


def test_a_renamed_docstring_line_past_79_columns_and_its_paragraph_is_filled_again():
    # round 36, ia19: an 89-column line in a paragraph wrapped at 72
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    text = (
        '"""MLP.\n\nHistory: this used to run on one GPU (see the commented block); now the\n'
        "MLP is wrapped with multi_gpu_model so each of the two GPUs gets half of\n"
        'every batch.\n"""'
    )
    assert prose.renamed(text) == (
        '"""MLP.\n\nHistory: this used to run on one GPU (see the commented block); now the\n'
        "MLP is replicated with tf.distribute.MirroredStrategy so each of the two\n"
        'GPUs gets half of every batch.\n"""'
    )
    one_line = '"""Trains with multi_gpu_model on every GPU of the machine, logging the loss."""'
    assert prose.renamed(one_line) == (  # (one line, within 100 columns: renamed, not left as it was)
        '"""Trains with tf.distribute.MirroredStrategy on every GPU of the machine, logging the loss."""'
    )


def test_converted_to_a_parallel_model_is_not_renamed_into_converted_to_a_model():
    # round 36, ib09
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    said = "With more than one GPU the model is converted to a parallel model before compiling."
    assert prose.renamed(said) == said and prose.wholly_stale(said)


def test_an_args_entry_loses_its_clause_on_the_removed_helper():
    # round 36, ia18: flagged and left before (an `Args:` list is no run of sentences)
    prose = Prose(frozenset({"ModelMGPU"}), True)
    value = (
        '"""Train the hourglass network.\n\n    Args:\n'
        "        num_gpus: number of GPUs; > 1 wraps the network in ModelMGPU\n"
        "            (multi_gpu_model with save/load forwarded to the template).\n"
        "        epochs: how long to train.\n    \"\"\""
    )
    assert docstring_without_stale(value, prose) == (
        '"""Train the hourglass network.\n\n    Args:\n'
        "        num_gpus: number of GPUs.\n        epochs: how long to train.\n    \"\"\""
    )


def test_a_try_except_that_let_the_script_run_on_a_laptop_is_stale():
    # round 36, ib03: the wrap's fallback is an `if` on the replica count now
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    said = "Small U-Net. The try/except lets the same notebook run on the laptop (no GPUs) and on the DGX."
    assert prose.without_stale_sentences(said) == "Small U-Net."


def test_a_wrapper_falling_back_is_stale_and_a_plot_title_loses_its_aside():
    prose = Prose(frozenset({"ModelMGPU"}), True)
    said = "Chest X-ray classifier, 3 GPUs. When gpus == 1 the wrapper falls back to the plain model."
    assert prose.without_stale_sentences(said) == "Chest X-ray classifier, 3 GPUs."  # ja14
    out, findings = migrate(IMPORTS + SITE + "plt.title('loss (parallel model)')\n")  # jb08
    assert out.endswith("plt.title('loss')\n") and findings == []


@pytest.mark.parametrize("removed,text,now", [
    # round 38, lb04: the helper's ways ("by hand") and history go with its name
    ({"make_parallel"}, "`make_parallel` splits every batch across the GPUs by hand (this was written before "
     "Keras shipped `multi_gpu_model`).\n", "`tf.distribute.MirroredStrategy` splits every batch across the GPUs.\n"),
    # lb06: "returns the template model (for saving) and the model we train": one model now
    ({"multi_gpu_model"}, "All knobs live in `cfg`; `build_models` returns the template model (for saving) and the "
     "model we train.\n", "All knobs live in `cfg`.\n"),
    # lb07: the clause that went ended the sentence; the one before it was the pair's too
    ({"multi_gpu_model"}, "Tiles of 64x64. The template is compiled first so we can call `evaluate` on it later on "
     "a single GPU;\nthe parallel copy is compiled again with the same loss.\n", "Tiles of 64x64.\n"),
    ({"multi_gpu_model"}, "Tiles of 64x64. The data come from disk;\nthe parallel copy is compiled again.\n",
     "Tiles of 64x64. The data come from disk.\n"),
    # lb03: nothing is wrapped now
    ({"multi_gpu_model"}, "Counts the GPUs with `device_lib` and only wraps the model when there is more than one.\n",
     ""),
])
def test_round_38s_markdown(removed, text, now):
    assert markdown("# Title\n\n" + text, Prose(frozenset(removed), True))[0].rstrip("\n") == (
        ("# Title\n\n" + now) if now else "# Title"
    ).rstrip("\n")


@pytest.mark.parametrize("removed,text,now", [
    # round 56, av17: the helper's home is not the strategy's
    ({"make_parallel"}, "Parallelised with `make_parallel` from our utils (tower per GPU).\n",
     "Parallelised with `tf.distribute.MirroredStrategy`.\n"),
    # round 56, au18: the old call's argument, which the strategy line does not take
    ({"multi_gpu_model"}, "* We train with multi_gpu_model on 2 GPUs (positional arg below).\n",
     "* We train with tf.distribute.MirroredStrategy on 2 GPUs.\n"),
    # round 55, at10: the old argument's count of sub-batches
    ({"multi_gpu_model"}, "multi_gpu_model splits each batch into `gpus` sub-batches.\n",
     "tf.distribute.MirroredStrategy splits each batch into per-replica sub-batches.\n"),
    # round 56, au07: where the script came from, the old function's documentation
    ({"multi_gpu_model"}, "Xception on 4 GPUs, following the Keras docs example for multi_gpu_model.\n",
     "Xception on 4 GPUs.\n"),
    # round 57, aw07, ax08, ax15: nothing is wrapped now; the strategy replicates
    ({"multi_gpu_model"}, "Build the MLP and, if we have more than one GPU, wrap it.\n", "Build the MLP.\n"),
    ({"multi_gpu_model"}, "Builds the net and wraps it with multi_gpu_model.\n",
     "Builds the net and replicates it with tf.distribute.MirroredStrategy.\n"),
    ({"multi_gpu_model"}, "Build the net and wrap it in a KerasClassifier.\n",
     "Build the net and wrap it in a KerasClassifier.\n"),  # another wrapper: it stays
    ({"multi_gpu_model"}, "Set `n_gpus` below: 0 or 1 means no wrapping.\n",
     "Set `n_gpus` below: 0 or 1 means a single device.\n"),
    ({"multi_gpu_model"}, "Wrap it for the two V100s:\n", "Replicate it on the two V100s:\n"),
    ({"multi_gpu_model"}, "Save the single-device model, not the wrapper.\n", "Save the model.\n"),
    ({"multi_gpu_model"}, "Remember to save the template, not the wrapper.\n",  # the pair's rules decide
     "Remember to save the template, not the wrapper.\n"),
    # round 57, aw13: the old call's keyword for every visible GPU
    ({"multi_gpu_model"}, "`gpus=None` uses all GPUs visible to TF.\n",
     "`tf.distribute.MirroredStrategy()` uses all GPUs visible to TF.\n"),
    # round 59, ba08: the call itself in prose, what the strategy line does now
    ({"multi_gpu_model"},
     "Set `num_gpus`:\n  * 1 -> plain keras model\n  * N -> keras.utils.multi_gpu_model(model, gpus=N)\n",
     "Set `num_gpus`:\n  * 1 -> plain keras model\n  * N -> tf.distribute.MirroredStrategy over N GPUs\n"),
    # round 59, bb01: the clause on the old placement goes, the tool before it is renamed
    ({"multi_gpu_model"}, "We train on **2 GPUs** using `multi_gpu_model`; the template model stays on the CPU.\n",
     "We train on **2 GPUs** using `tf.distribute.MirroredStrategy`.\n"),
    # round 59, bb04: the helper's Keras version is not the strategy's
    ({"multi_gpu_model"}, "We use keras.utils.training_utils.multi_gpu_model (Keras 2.0.9).\n",
     "We use tf.distribute.MirroredStrategy.\n"),
    # rounds 55 and 58, at15, az15: the old call's count, on no line now
    ({"multi_gpu_model"}, "Colab has one GPU, so here `gpus=2` only tests the code path.\n",
     "Colab has one GPU, so here the 2-GPU strategy only tests the code path.\n"),
    ({"multi_gpu_model"}, "`gpus=2` -> each GPU sees half the batch.\n",
     "The 2-GPU strategy -> each GPU sees half the batch.\n"),
    ({"multi_gpu_model"}, "Intro.\n`gpus=2` -> each GPU sees half the batch.\n",
     "Intro.\nThe 2-GPU strategy -> each GPU sees half the batch.\n"),
    # ... but the file's history stays as it was
    ({"multi_gpu_model"}, "The first attempt used `gpus=4` by mistake (see the commented cell).\n",
     "The first attempt used `gpus=4` by mistake (see the commented cell).\n"),
    # the script's own flag is no argument of the old call: it stays
    ({"multi_gpu_model"}, "We train with multi_gpu_model on several GPUs (see --gpus).\n",
     "We train with tf.distribute.MirroredStrategy on several GPUs (see --gpus).\n"),
])
def test_the_helpers_home_and_arguments_go_with_its_name(removed, text, now):
    assert markdown("# Title\n\n" + text, Prose(frozenset(removed), True))[0] == "# Title\n\n" + now


@pytest.mark.parametrize("comment,kept", [
    # round 57, aw15: a checkpoint resumed from is the file's history, still true
    ("# resume from a single-gpu checkpoint if given, else start from scratch\n", True),
    # aw08: where the helper was imported from, gone with it
    ("# keras 2.0.9 location of the helper\n", False),
    # aw20: the serial half, told apart from the copy that went: the sentence goes whole
    ("# The serial ``model`` owns the weights; ``gpu_model`` is the data-parallel\n"
     "# copy produced by multi_gpu_model and is only used for compile/fit.\n", False),
    # aw17: a commented-out block holding the call goes whole, not its one line
    ("#try:\n#    gpu_model = multi_gpu_model(model, gpus=2)\n#    print('several GPUs')\n"
     "#except ValueError:\n#    print('one GPU')\n", False),
])
def test_round_57s_comments(comment, kept):
    out, _ = migrate(IMPORTS + "\n# Smoke test.\n" + comment + "x = 1\n\n" + SITE + "gpu_model.fit(x, y)\n")
    assert out.startswith("import tensorflow as tf\n\n# Smoke test.\n" + (comment if kept else "") + "x = 1\n"), out


@pytest.mark.parametrize("comment,now", [
    # round 58, az11: the old wrapper's limit, and the reason for saving by hand, no longer true
    ("# ModelCheckpoint(...) would save the wrapper, so we save by hand\n", ""),
    # round 58, ay11: the half of the old pair, emphasised and told apart in an aside
    ("# Save the *template* (single-device) model at the end of each epoch.\n",
     "# Save the model at the end of each epoch.\n"),
    # round 57, aw16: built on no CPU, no parallel copy returned; the build and compile stay true
    ("# Build the CNN on the CPU and return a parallel, compiled version.\n",
     "# Build the CNN and return a compiled version.\n"),
    # round 58, ay04: the file's only description keeps what it says of the model
    ("# Old-school data parallelism (kuza55 style) for the malware CNN.\n",
     "# Data parallelism for the malware CNN.\n"),
    # round 59, ba01, ba06, ba19: the strategy splits, replicates, and compiles once
    ("# per-step batch; split across the GPUs by the wrapper\n", "# per-step batch; split across the GPUs\n"),
    ("# A fresh model per fold, wrapped for multi-GPU training (2x 1080Ti).\n",
     "# A fresh model per fold, replicated for multi-GPU training (2x 1080Ti).\n"),
    ("# Two-stage transfer learning: train the head, unfreeze, re-wrap & recompile.\n",
     "# Two-stage transfer learning: train the head, unfreeze, recompile.\n"),
    # ... but where the CPU placement is the whole point, the sentence is the old mechanics'
    ("# Build the model on the CPU, then replicate it.\n", ""),
])
def test_round_58s_comments(comment, now):
    out, _ = migrate(IMPORTS + "\n# Smoke test.\n" + comment + "x = 1\n\n" + SITE + "gpu_model.fit(x, y)\n")
    assert out.startswith("import tensorflow as tf\n\n# Smoke test.\n" + now + "x = 1\n"), out


@pytest.mark.parametrize("text,now", [
    # round 58, az01: ModelMGPU's forwarding, and the Keras issue it came from
    ("`multi_gpu_model` splits each batch. We subclass `Model` so `save` is forwarded to the template model "
     "(see keras issue #2436).\n", "`tf.distribute.MirroredStrategy` splits each batch.\n"),
    # round 58, az02: a verdict on the sentence that went goes with it
    ("Train ten epochs. Saving `model` stores the parallel wrapper. Good enough for this experiment.\n",
     "Train ten epochs.\n"),
    ("Train ten epochs. Good enough for this experiment.\n", "Train ten epochs. Good enough for this experiment.\n"),
    # round 58, az07: the true clause before the `;` of a stale sentence among others stays
    ("All settings live in `CFG`. Set `n_gpus` to the number of cards; with `n_gpus > 1` the model is\n"
     "replicated by `multi_gpu_model` (`cpu_merge=False`, because NVLink).\n",
     "All settings live in `CFG`. Set `n_gpus` to the number of cards.\n"),
    # round 58, az11: wrapped again, and why
    ("Resume. We reload the `.h5` and wrap it again (the wrapper itself is not serialisable).\n", "Resume.\n"),
])
def test_round_58s_markdown(text, now):
    assert markdown("# Title\n\n" + text, Prose(frozenset({"multi_gpu_model"}), True))[0] == "# Title\n\n" + now


def test_a_docstring_on_the_pair_a_builder_returned_goes_with_the_pair():
    """Round 58, ay07: "Returns a (template, trainable) pair." over `return model`."""
    source = (
        "from keras.utils import multi_gpu_model\n\n\ndef build(n):\n"
        '    """Build the net.\n\n    Returns a (template, trainable) pair.\n    """\n'
        "    template = net()\n    trainable = multi_gpu_model(template, gpus=n)\n"
        "    trainable.compile('adam', 'mse')\n    return template, trainable\n\n\n"
        "template, trainable = build(2)\ntrainable.fit(x, y)\ntemplate.save('m.h5')\n"
    )
    out, _ = migrate(source)
    assert '    """Build the net."""\n' in out and "pair" not in out, out


@pytest.mark.parametrize("comment,now", [
    # round 59, bb10: "in parallel" is how the strategy trains, not the other half of a pair
    ("# Train in parallel, predict with the template\n", "# Train in parallel, predict with the model\n"),
    # round 61, be05: the fallback is one device, not a second model
    ("# Use all GPUs if possible, otherwise fall back to the single-device model.\n",
     "# Use all GPUs if possible, otherwise fall back to a single device.\n"),
    # ... but with the parallel *model* the sentence is the pair's, and goes
    ("# Train the parallel model, predict with the template\n",
     ""),
])
def test_round_59s_comments(comment, now):
    out, _ = migrate(IMPORTS + "\n# Smoke test.\n" + comment + "x = 1\n\n" + SITE + "gpu_model.fit(x, y)\n")
    assert out.startswith("import tensorflow as tf\n\n# Smoke test.\n" + now + "x = 1\n"), out


@pytest.mark.parametrize("said,now", [
    # round 59, bb06: the one-device path's message; the model was built, it was not replicated
    ("Could not build the multi-GPU model, falling back to one device",
     "Could not replicate the model, falling back to one device"),
    ("Failed to create the parallel model.", "Failed to replicate the model."),
    ("[warn] couldn't build multi-GPU model", "[warn] couldn't replicate the model"),
])
def test_a_message_that_the_multi_gpu_model_failed_says_the_model_was_not_replicated(said, now):
    out, _ = migrate(IMPORTS + SITE + "gpu_model.fit(x, y)\nif len(tf.config.list_logical_devices('GPU')) < 2:\n"
                     f"    print({said!r})\n")
    assert out.endswith(f"    print({now!r})\n"), out


def test_round_60s_comments_on_the_pair_go_whole():
    """Round 60: bc11, a clause on the pair's shared weights before one on its single-device copy;
    bc03, why the model was wrapped."""
    source = (
        IMPORTS + "model = build()\n# wrap so that ModelCheckpoint saves the serial weights\n"
        "gpu_model = multi_gpu_model(model, gpus=2)\ngpu_model.compile('adam', 'mse')\ngpu_model.fit(x, y)\n\n"
        "# model and gpu_model share weights; the single-device copy is the one to keep\n"
        "model.save_weights('w.h5')\n"
    )
    out, _ = migrate(source)
    assert "wrap so" not in out and "share weights" not in out, out
    assert out.endswith("model.fit(x, y)\n\nmodel.save_weights('w.h5')\n"), out


@pytest.mark.parametrize("comment", [
    # round 60, bd10: the parallel half named as a trainer, sharing the template's weights
    "# evaluate with the multi-GPU trainer (it shares weights with classifier)\n",
])
def test_round_60s_comments_that_go(comment):
    out, _ = migrate(IMPORTS + "\n# Smoke test.\n" + comment + "x = 1\n\n" + SITE + "gpu_model.fit(x, y)\n")
    assert out.startswith("import tensorflow as tf\n\n# Smoke test.\nx = 1\n"), out


def test_the_old_relocation_of_the_weights_to_the_cpu_goes_from_markdown():
    # round 60, bd18: what `cpu_relocation=True` did, false of the strategy
    text = ("We pass `cpu_relocation=True` because the model was built without `tf.device('/cpu:0')`; "
            "Keras moves the weights to the CPU for us.\n")
    assert markdown("# Title\n\n" + text, Prose(frozenset({"multi_gpu_model"}), True))[0].rstrip() == "# Title"


def test_a_docstring_on_a_returned_template_and_its_multi_gpu_model_goes():
    """Round 60, bd16: "Return (template, trainable). trainable is the multi-GPU model when gpus > 1."."""
    source = (
        "from keras.utils import multi_gpu_model\n\n\ndef build(gpus):\n"
        '    """Return (template, trainable). trainable is the multi-GPU model when gpus > 1."""\n'
        "    template = net()\n    if gpus > 1:\n        trainable = multi_gpu_model(template, gpus=gpus)\n"
        "    else:\n        trainable = template\n    trainable.compile('adam', 'mse')\n"
        "    return template, trainable\n\n\ntemplate, trainable = build(2)\ntrainable.fit(x, y)\n"
    )
    out, _ = migrate(source)
    assert '    """Return the model, built and compiled under `strategy.scope()`."""\n' in out, out
    assert "template" not in out and "trainable is" not in out, out


def test_an_exported_markdown_heading_over_a_stale_note_on_saving_stays():
    """Round 60, bc16: "# ## Save" heads the code cell that saves; only its note went."""
    source = (
        IMPORTS + "\n# In[2]:\n\n\n" + SITE + "gpu_model.fit(x, y)\n\n\n"
        "# ## Save\n# \n# Save the CPU template, not `gpu_model` -- the template shares the weights.\n\n"
        "# In[3]:\n\n\nmodel.save('m.h5')\n"
    )
    out, _ = migrate(source)
    assert out.endswith("model.fit(x, y)\n\n\n# ## Save\n\n# In[3]:\n\n\nmodel.save('m.h5')\n"), out
    # (a heading over notes on the old set-up goes with them)
    notes = source.replace("# ## Save\n", "# ## Multi-GPU notes\n")
    out, _ = migrate(notes)
    assert "notes" not in out and out.endswith("# In[3]:\n\n\nmodel.save('m.h5')\n"), out


def test_a_comment_wrapped_over_two_lines_is_renamed_whole():
    # round 59, ba06: "wrapped for" / "# multi-GPU training" over a line end
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    said = "# A fresh model per fold, wrapped for\n# multi-GPU training (2x 1080Ti on the lab box)."
    now = "# A fresh model per fold, replicated for\n# multi-GPU training (2x 1080Ti on the lab box)."
    assert prose.renamed(said) == now


def test_commented_out_code_binding_the_wrappers_plain_name_goes():
    """Round 59, ba18: `#parallel = model  # uncomment to debug on a single device` over the call
    binds `parallel`, which no line binds now; it had moved into the scope."""
    before = (
        IMPORTS + "model = build()\n\n#parallel = model  # uncomment to debug on a single device\n"
        "parallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\nparallel.fit(x, y)\n"
        "print('done, weights saved from the template model')\n"
    )
    out = transform_source(before.encode(), "t.py").output.decode()
    assert "#parallel" not in out and "model.fit(x, y)\n" in out
    # (and the message names the one model: round 59, ba18)
    assert out.endswith("print('done, weights saved from the model')\n"), out


def test_which_half_was_checkpointed_goes_and_an_aside_on_when_it_ran_on_several_gpus():
    # round 38, lb17 and lb14
    docstring = (
        '"""Sky camera.\n\nThe model is replicated on two GPUs with multi_gpu_model; the parallel model is\n'
        'what gets checkpointed.\n"""\n'
    )
    out, findings = migrate(docstring + IMPORTS + SITE + "# Save model weights (template model when running "
                            "multi-GPU)\nmodel.save_weights('w.h5')\n")
    assert out.startswith(
        '"""Sky camera.\n\nThe model is replicated on two GPUs with tf.distribute.MirroredStrategy.\n"""\n'
    )
    assert out.endswith("# Save model weights\nmodel.save_weights('w.h5')\n") and findings == []


@pytest.mark.parametrize("text", [
    # round 39: the removed helper's mechanics in new words (oa08, oa12)
    "Data-parallel training helper: the batch is sliced per GPU and the outputs are concatenated on the CPU.",
    "The template model is the layer just before the merge outputs.",
    "ModelCheckpoint is attached to the multi-GPU model, so the checkpoint files contain the replicated graph.",
    "Use export_template() afterwards to get a single-GPU h5.",
])
def test_round_39s_stale_sentences(text):
    prose = Prose(frozenset({"make_parallel"}), True)
    assert prose.wholly_stale(prose.renamed(text))
    # (not renamed into a half truth first: "attached to the model, so ..." would keep its first clause)
    assert "attached to the model" not in prose.renamed(text)


def test_an_argparse_help_of_one_word_loses_its_closing_phrase_on_the_helper():
    # round 39, oa20: help='GPUs for multi_gpu_model' was flagged and left
    line = "parser.add_argument('--gpus', type=int, help='GPUs for multi_gpu_model')\n"
    out, findings = migrate(IMPORTS + line + SITE)
    assert "help='GPUs')" in out and findings == []


@pytest.mark.parametrize("text", [
    # round 40: the old pair's words once more (ea18, eb06, eb09, eb20)
    "# evaluate with the parallel model, it is faster on the full validation set",
    "Build the landmark net on the CPU and replicate it on N_GPUS cards.",
    "Keep a handle on `model` for saving.",
    "# batch is split evenly over the GPUs, so it must be a multiple of NGPUS",
])
def test_round_40s_stale_sentences(text):
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    assert prose.renamed(text) == text and prose.wholly_stale(text)


def test_a_bulleted_item_wholly_about_the_pair_goes_from_a_docstring():
    # round 40, ea20: "* We save the parallel model at the end; on load, call model.layers[-2] ..." stayed,
    # unreported, inside a list (the list's other item, naming the function, is still reported)
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    item = "  * We save the parallel model at the end; on load, call\n    model.layers[-2] to get the template back.\n"
    kept = "  * Batches are shuffled every epoch.\n"
    value = '"""Sentiment encoder.\n\nTraining notes:\n' + kept + item + '"""'
    assert docstring_without_stale(value, prose) == '"""Sentiment encoder.\n\nTraining notes:\n' + kept + '"""'
    alone = '"""Sentiment encoder.\n\nTraining notes:\n' + item + '"""'
    assert docstring_without_stale(alone, prose) == '"""Sentiment encoder."""'  # (its heading went with it)


@pytest.mark.parametrize("second,kept", [
    ("kept here because the cluster still runs Keras 2.0.", ""),  # its subject was the helper
    ("used only when more than one GPU is asked for.", ""),
    ("the cluster still runs Keras 2.0 on every node.", "The cluster still runs Keras 2.0 on every node."),
])
def test_a_clause_whose_subject_was_the_stale_one_goes_with_it(second, kept):
    # round 42, ca05: "make_parallel is the classic slicing trick (...); kept here because the
    # cluster still runs Keras 2.0." left "Kept here because the cluster still runs Keras 2.0."
    prose = Prose(frozenset({"make_parallel"}), True)
    sentence = "make_parallel is the classic slicing trick (one tower per GPU); " + second
    assert _clause_kept(sentence, prose) == kept


def test_an_exported_markdown_heading_over_text_that_all_went_goes_too():
    # round 42, cb15: "# ## Multi-GPU wrapper" stayed (MGPU305) over nothing once the paragraph
    # on `ModelMGPU` under it and the class's cell were gone
    from multi_gpu_codemod import transform_source

    head = "#!/usr/bin/env python\n# coding: utf-8\n\n# In[1]:\n\n\nfrom keras.utils import multi_gpu_model\n\n\n"
    source = (
        head + "# ## Multi-GPU wrapper\n# `ModelMGPU` lets ModelCheckpoint save the serial model instead of the\n"
        "# parallel one (otherwise the saved file needs the same number of GPUs).\n\n# In[2]:\n\n\n"
        "mf = build()\nparallel = multi_gpu_model(mf, gpus=2)\nparallel.compile(loss='mse', optimizer='adam')\n"
        "parallel.fit(x, y)\n"
    )
    result = transform_source(source.encode(), "nb.py")
    out = result.output.decode()
    assert "Multi-GPU wrapper" not in out and "ModelMGPU" not in out
    assert "# In[2]:" in out and [f.code for f in result.findings] == []
    # a heading over text that stays is kept
    kept = source.replace("# parallel one (otherwise the saved file needs the same number of GPUs).\n",
                          "# parallel one.\n# The embeddings are trained from scratch.\n")
    assert "# ## Multi-GPU wrapper\n" in transform_source(kept.encode(), "nb.py").output.decode()


def test_the_several_gpu_half_of_the_old_choice_also_takes_the_one_gpu_half():
    # round 44, bb01: "With one GPU we just build it. With several, the template lives on the CPU ..."
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    text = ("With one GPU we just build it. With several, the template lives on the CPU and\n"
            "`multi_gpu_model` copies it to every GPU; the gradients are merged on the CPU.")
    assert prose.wholly_stale(text)


def test_why_the_helper_was_still_used_is_not_renamed_into_the_strategy():
    # round 44, ba15: "We still use multi_gpu_model here because the cluster image is pinned to TF
    # 2.1" became "We still use tf.distribute.MirroredStrategy here because ...", and its clause
    # "it splits every batch" would stand for the helper
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    text = ("We still use tf.keras.utils.multi_gpu_model here because the cluster image\n"
            "is pinned to TF 2.1; it splits every batch across the visible GPUs.")
    assert prose.renamed(text) == text
    assert _clause_kept(text.replace("\n", " "), prose) == ""


@pytest.mark.parametrize("text", [
    "# encoder shares weights with ae (and therefore with the GPU replicas)",  # round 44 (ra07): the aside goes
])
def test_a_comment_stale_only_by_its_closing_aside_keeps_the_rest(text):
    from multi_gpu_codemod import transform_source

    source = (IMPORTS + "model = build()\nparallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n"
              "parallel.fit(x, y)\n\n" + text + "\nencoder = Model(model.input, model.layers[1].output)\n")
    out = transform_source(source.encode(), "t.py").output.decode()
    assert "# encoder shares weights with ae\nencoder = " in out


def test_a_comment_whose_rest_is_about_the_pair_goes_whole():
    from multi_gpu_codemod import transform_source

    line = "# single-GPU evaluation on the template (weights are shared with the replicas)"
    source = (IMPORTS + "model = build()\nparallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n"
              "parallel.fit(x, y)\n\n" + line + "\nprint(model.evaluate(x, y))\n")
    assert "single-GPU" not in transform_source(source.encode(), "t.py").output.decode()


@pytest.mark.parametrize("text,expected", [
    # round 44, da14: "save the template, train the replica" is the pair, not "train the model"
    ('Model and checkpoint handling follow the usual "save the template, train the replica" pattern.', None),
    # round 44, da14: the template described as inside the wrapper is the one model now
    ("ModelCheckpoint replacement: saves the wrapped template model.", "ModelCheckpoint replacement: saves the model."),
    # round 44, ba19: the old pair's two halves
    ("ModelCheckpoint replacement: saves the CPU copy, not the GPU replica.", None),
])
def test_more_of_the_pair_named_in_callback_docstrings(text, expected):
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    if expected is None:
        assert prose.wholly_stale(prose.renamed(text))
    else:
        assert prose.renamed(text) == expected


@pytest.mark.parametrize("text,expected", [
    # "the multi-GPU version" is the other of two versions: one model now
    ("# compile the multi-GPU version", "# compile the model"),
    # the count's aside on what one GPU meant to the wrapper: a strategy of one replica now
    ("# number of GPUs to use (1 = no wrapping)", "# number of GPUs to use"),
    ("# how many cards (one means no parallelism)", "# how many cards"),
])
def test_the_other_version_and_the_one_gpu_aside(text, expected):
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    assert prose.renamed(text) == expected


def test_a_count_comment_keeps_its_words_and_loses_the_wrapping_aside():
    source = (IMPORTS + "G = 2  # number of GPUs to use (1 = no wrapping)\nmodel = build()\n"
              "parallel = multi_gpu_model(model, gpus=G)\nparallel.compile('adam', 'mse')"
              "  # compile the multi-GPU version\nparallel.fit(x, y)\n")
    out = transform_source(source.encode(), "t.py").output.decode()
    assert "G = 2  # number of GPUs to use\n" in out
    assert "model.compile('adam', 'mse')  # compile the model\n" in out


@pytest.mark.parametrize("text,renamed,stale", [
    # round 46: true of the file or of the strategy, kept
    ("# Resume training of a saved single-GPU checkpoint on several GPUs.", None, False),  # ac17
    ("Wraps model construction, multi-GPU replication and fitting.", None, False),  # ac15: a class's job
    # the old pair's words, stale
    ("# docs: if G <= 1 just build the net, otherwise build it on the CPU and wrap it.", None, True),  # ac10
    ("Always save template_model.", None, True),  # ad08
    ("It returns *both* models: the template (for saving) and the one to train.", None, True),  # ac11
    ("and keeps the **template** for saving.", None, True),  # ad04
    ("# template model (weights live here)", None, True),  # ad13
    # the template described as the inner model is the one model (ad09)
    ("Save the inner (single-GPU) model at the end of every epoch.",
     "Save the model at the end of every epoch.", False),
])
def test_round_46_prose(text, renamed, stale):
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    now = prose.renamed(text, markdown=not text.startswith("#"))
    assert now == (renamed or text)
    assert prose.wholly_stale(now) == stale


def test_a_comment_clause_on_shared_weights_goes_the_rest_stays():
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    text = "# parallelise across both cards; weights shared with base_model"  # round 46, ad04
    assert prose.without_stale_sentences(prose.renamed(text)) == "# parallelise across both cards"


def test_the_one_gpu_condition_goes_with_the_otherwise_sentence():
    """Round 46, ad03: "If `G <= 1` we train normally." was left alone, half of a choice the code no
    longer makes; a line closing an aside ("(2 GPUs on the rig)") no longer ends the sentence."""
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    text = ("# Title\n\nIf `G <= 1` we train normally. Otherwise the weights are placed on the CPU\n"
            "and `multi_gpu_model` replicates the network onto the `G` GPUs.")
    assert markdown(text, prose)[0] == "# Title"
    text = ("# Title\n\nEach fold builds a model, wraps it in `multi_gpu_model` (2 GPUs on the rig)\n"
            "and keeps the **template** for saving.")
    assert markdown(text, prose)[0] == "# Title"


@pytest.mark.parametrize("text,kept", [
    # round 46, ac13: the clause before the `;` on the wrapper goes, the one that says something stays
    ("# wrap for multi-GPU; effective batch = BATCH_SIZE * gpu_count", "# effective batch = BATCH_SIZE * gpu_count"),
    ("# Wrap with multi_gpu_model; the global batch is BATCH times the count.",
     "# The global batch is BATCH times the count."),
    # not a clause whose subject or pronoun went with the first, nor a pointer too short to stand alone
    ("# multi_gpu_model copies it; it splits every batch", None),
    ("# wrap for multi-GPU; see utils", None),
])
def test_a_comment_keeps_the_clause_after_its_stale_semicolon_clause(text, kept):
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    assert prose.without_stale_sentences(text) == (kept or text)


def test_a_helper_the_file_never_imported_is_stale_too_once_every_site_is_rewritten():
    """Round 46, ac05: over a `make_parallel` script, "# Keras 2.0.x did not have multi_gpu_model
    yet." stayed: the file never bound `multi_gpu_model`, so it did not count as removed."""
    source = (
        "# Written for Keras 2.0.x.\n# Keras 2.0.x did not have multi_gpu_model yet.\n"
        "from multi_gpu import make_parallel\n\nmodel = build()\nmodel = make_parallel(model, 2)\n"
        "model.compile('adam', 'mse')\nmodel.fit(x, y)\n"
    )
    out = transform_source(source.encode(), "t.py").output.decode()
    assert out.startswith("# Written for Keras 2.0.x.\n") and "multi_gpu_model" not in out


def test_a_clause_after_the_semicolon_that_goes_on_from_the_stale_one_is_not_kept_alone():
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    text = "# shape: `model = multi_gpu_model(model, gpus=2)` rebinding it; the script then saves `model`."
    assert prose.without_stale_sentences(text) == text


def test_a_printed_f_string_loses_its_aside_on_the_helper_or_is_reported():
    """Round 47, af20: `print(f"Training using {n_gpus} GPUs (multi_gpu_model)")` was kept as it was,
    and not reported."""
    head = (IMPORTS + "n = 2\nmodel = build()\nparallel = multi_gpu_model(model, gpus=n)\n"
            "parallel.compile('adam', 'mse')\n")
    out, findings = migrate(head + 'print(f"Training using {n} GPUs (multi_gpu_model)")\nparallel.fit(x, y)\n')
    assert 'print(f"Training using {n} GPUs")\n' in out and findings == []
    out, findings = migrate(head + 'print(f"{n} GPUs, wrapped by multi_gpu_model for {x}")\nparallel.fit(x, y)\n')
    assert [code for _, code, _ in findings] == ["MGPU305"]


@pytest.mark.parametrize("header,kept", [
    # round 47, ae10: a sentence wrapped before its backquoted name was cut at the line
    ("# We use both GPUs on the machine via\n# `multi_gpu_model`, as the docs said.\n",
     "# We use both GPUs on the machine via `tf.distribute.MirroredStrategy`, as the\n# docs said.\n"),
    # round 47, af14: the clause left ends the sentence, not on a `;`
    ("# Data-parallel training over two GPUs with `multi_gpu_model`;\n# `parallel_model` is what we fit.\n",
     "# Data-parallel training over two GPUs with `tf.distribute.MirroredStrategy`.\n"),
])
def test_a_comment_paragraph_is_cut_at_sentences_and_ends_on_one(header, kept):
    source = header + "\n" + IMPORTS + "model = build()\nparallel_model = multi_gpu_model(model, gpus=2)\n" \
        "parallel_model.compile('adam', 'mse')\nparallel_model.fit(x, y)\n"
    out, _ = migrate(source)
    assert out.startswith(kept + "\n")


def test_a_markdown_line_ending_in_a_colon_before_a_name_goes_on_into_the_next():
    """Round 47, af02: "... so we use the `ModelMGPU` trick from the keras issue tracker:" /
    "`save`/`load` calls are forwarded ..." was cut after the colon, which was left dangling."""
    prose = Prose(frozenset({"multi_gpu_model", "ModelMGPU"}), True)
    text = ("# U-Net\n\nTraining on 2 GPUs. `ModelCheckpoint` on a `multi_gpu_model` saves the *parallel* model,\n"
            "so we use the `ModelMGPU` trick from the keras issue tracker:\n"
            "`save`/`load` calls are forwarded to the serial (template) model.")
    assert markdown(text, prose)[0] == "# U-Net\n\nTraining on 2 GPUs."


def test_a_sentence_pointing_back_at_a_stale_one_goes_with_it():
    """Round 47, af12: "Remember to scale `batch_size` with it." was left after the sentence on
    `CFG['gpus']` that "it" named went."""
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    text = ("All knobs live in `CFG`. `CFG['gpus']` picks Keras `multi_gpu_model` over that many GPUs. "
            "Remember to scale `batch_size` with it.")
    assert prose.without_stale_sentences(text) == "All knobs live in `CFG`."
    # (a sentence of its own after it stays)
    text = "Knobs live in `CFG`. It wraps with `multi_gpu_model`. Scale `batch_size` by hand."
    assert prose.without_stale_sentences(text) == "Knobs live in `CFG`. Scale `batch_size` by hand."


def test_commented_out_code_on_a_gone_name_is_stale_whatever_its_own_note_says():
    # round 48, ah15: "#parallel_model.save(...)   # don't! see TemplateCheckpoint" read as two
    # sentences, one of them naming nothing removed
    prose = Prose(frozenset({"multi_gpu_model", "parallel_model"}), True)
    assert prose.wholly_stale("#parallel_model.save('seg_parallel.h5')   # don't! see TemplateCheckpoint")
    assert not prose.wholly_stale("#model.save('seg.h5')   # don't! see TemplateCheckpoint")


_LOADED_THEN_WRAPPED = (
    "from keras.utils import multi_gpu_model\n\nmodel = load_model(ckpt, compile=False)\n"
    "parallel_model = multi_gpu_model(model, gpus=2)\n\n{comments}\nparallel_model.compile('adam', 'mse')\n"
    "parallel_model.fit(x, y)\n"
)


@pytest.mark.parametrize("comments,kept", [
    # round 53, ao18: unfreezing the model's last layers, commented out, is the user's code on the
    # one model: it stays, both lines, unreported (the second went, as the wrapper's `layers[-2]`)
    ("# model.layers[-1].trainable = True\n# model.layers[-2].trainable = True",
     "    # model.layers[-1].trainable = True\n    # model.layers[-2].trainable = True\n"),
    # the wrapper's idiom and code on a gone name go (round 48, ah15: the line went unseen in a file)
    ("# model.layers[-2].save('template.h5')", ""),
    ("#parallel_model.save('p.h5')   # don't! see TemplateCheckpoint", ""),
])
def test_commented_out_code_is_judged_as_code_in_a_file(comments, kept):
    result = transform_source(_LOADED_THEN_WRAPPED.format(comments=comments).encode(), "train.py")
    assert f"model = load_model(ckpt, compile=False)\n\n{kept}    model.compile('adam', 'mse')\n" in (
        result.output.decode()
    )
    assert result.findings == []


@pytest.mark.parametrize("text,renamed", [
    # round 48, ah01: the strategy is TensorFlow's
    ("Keras' `multi_gpu_model` splits every batch across the cards.",
     "`tf.distribute.MirroredStrategy` splits every batch across the cards."),
    # round 48, ah06: the helper as the old way is no name for the strategy
    ("# Old-school data parallelism (`multi_gpu_model`)", None),
])
def test_the_helper_renamed_is_not_keras_nor_the_old_way(text, renamed):
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    assert prose.renamed(text, markdown=not text.startswith("#")) == (renamed or text)


def test_the_wrapper_named_as_what_is_trained_is_stale_and_its_heading_goes():
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    text = "Training on 2 GPUs. The template lives on the CPU; the wrapper is what we compile and fit."
    assert prose.without_stale_sentences(text) == "Training on 2 GPUs."
    assert markdown("## Build & wrap\n\nThe wrapper is what we compile and fit.", prose)[0] == ""


def test_the_old_cpu_placement_named_as_code_is_stale():
    # round 48, ag11: "...built normally (not under tf.device('/cpu:0'))" was left as a half-thought
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    assert prose.wholly_stale("# The template is built normally (not under tf.device('/cpu:0')); "
                              "cpu_relocation=True moves its weights to the CPU for us.")


def test_a_finding_on_kuza55_names_the_helper_not_a_removed_name():
    # round 48, ag04: "still names `kuza55`, which the migration removed" was half false
    from multi_gpu_codemod.stale_prose import _message

    assert "names `kuza55`" not in _message("# Old kuza55-style data parallelism.", "kuza55")
    assert "names `multi_gpu_model`" in _message("# uses multi_gpu_model", "multi_gpu_model")


@pytest.mark.parametrize("rest,expected", [
    # the stale clause goes; the heading keeps its own line
    ("Runs on our 2-GPU workstation via a local runtime; the multi_gpu_model\nwrapper splits each batch in 2.\n",
     "# Flowers (VGG16 fine-tune)\nRuns on our 2-GPU workstation via a local runtime.\n"),
    # every sentence under it went: the heading stays over the cell's code
    ("The multi_gpu_model wrapper splits\neach batch in 2.\n", "# Flowers (VGG16 fine-tune)\n"),
])
def test_a_markdown_heading_in_a_docstring_is_never_joined_to_the_text_under_it(rest, expected):
    # (round 49, aj15: a Colab export's text cell as a docstring; "# Flowers (VGG16 fine-tune) Runs on ...")
    prose = Prose(frozenset({"multi_gpu_model"}), mechanics_gone=True)
    value = '"""\nColab notebook.\n\n# Flowers (VGG16 fine-tune)\n' + rest + '"""'
    assert docstring_without_stale(value, prose) == '"""\nColab notebook.\n\n' + expected + '"""'


def test_a_clause_pointing_back_at_a_dropped_clause_goes_with_it():
    # (round 49, aj16: "# `_get_available_gpus` lists the visible cards; we replicate over all of
    # them." was cut to "# we replicate over all of them.")
    prose = Prose(frozenset({"_get_available_gpus", "multi_gpu_model"}), mechanics_gone=True)
    text = "# `_get_available_gpus` lists the visible cards; we replicate over all of them."
    assert prose.without_stale_sentences(text) == text and prose.wholly_stale(text)
    kept = "# `_get_available_gpus` lists the visible cards; batch size is per step."
    assert prose.without_stale_sentences(kept) == "# batch size is per step."


@pytest.mark.parametrize("text,expected", [
    # (round 49, ai15: the reason for the ids went with the sentence)
    ("hence the explicit list passed to multi_gpu_model.", "hence the explicit list passed to " + STRATEGY + "."),
    ("# the list of ids passed to multi_gpu_model", "# the list of ids passed to " + STRATEGY),
    # (round 49, aj11: the reason for the ids, in a markdown cell)
    ("We pass explicit device ids to `multi_gpu_model` because GPU 2 is reserved.",
     "We pass explicit device ids to `" + STRATEGY + "` because GPU 2 is reserved."),
    ("# we pass the model to make_parallel", "# we pass the model to make_parallel"),
    # the model is not what the strategy is given: left to the staleness rules
    ("# the model passed to make_parallel", "# the model passed to make_parallel"),
])
def test_the_gpu_ids_passed_to_the_helper_are_passed_to_the_strategy(text, expected):
    prose = Prose(frozenset({"multi_gpu_model", "make_parallel"}), mechanics_gone=True)
    assert prose.renamed(text) == expected


@pytest.mark.parametrize("text,expected", [
    # (round 49, ai18: the wrap and the wrapper's compile are gone)
    ("# Beat classifier.  It is compiled again after wrapping it (the wrapper needs its own compile()).",
     "# Beat classifier."),
    ("# The wrapper needs a compile of its own. Data are normalised.", "# Data are normalised."),
    ("# A thin wrapper around the dataset. Data are normalised.",  # another wrapper: stays
     "# A thin wrapper around the dataset. Data are normalised."),
])
def test_what_the_wrap_needed_goes_once_the_wrap_is_gone(text, expected):
    prose = Prose(frozenset({"multi_gpu_model"}), mechanics_gone=True)
    assert prose.without_stale_sentences(text) == expected


@pytest.mark.parametrize("text,named", [
    # (round 50, al12: Mask R-CNN's ParallelModel described against the helper: still true, not reported)
    ("It is *not* Keras' `multi_gpu_model`; it subclasses `KM.Model`.", None),
    ("A tower model, unlike keras.utils.multi_gpu_model.", None),
    ("# uses plain tf.device blocks instead of make_parallel", None),
    ("This isn't Keras’s multi_gpu_model either.", None),
    # the history of a migration by hand: true after it (a second run must not report it)
    ("# replaced multi_gpu_model with MirroredStrategy", None),
    ("# MirroredStrategy replaces keras.utils.multi_gpu_model (removed in TF 2.4)", None),
    ("strategy used in place of `make_parallel`", None),
    ("# migrated from multi_gpu_model; no longer uses make_parallel", None),
    # the helper as what the script did, or history of it: still reported or dropped
    ("# Keras 2.0.x did not have multi_gpu_model yet.", "multi_gpu_model"),
    ("# not multi-GPU yet: wrap with multi_gpu_model later", "multi_gpu_model"),
    ("It is not Keras' multi_gpu_model, but gpu_model is wrapped by it.", "gpu_model"),
])
def test_the_helper_named_to_say_what_something_is_not_stays_true(text, named):
    prose = Prose(frozenset({"multi_gpu_model", "make_parallel", "gpu_model"}), mechanics_gone=False)
    assert prose.names_removed(text) == named


@pytest.mark.parametrize("help_text,expected", [
    # (round 50, ak03: cut at its first "of", the help read 'number')
    ("number of GPUs; >1 uses keras multi_gpu_model", "number of GPUs"),
    # (round 52, am03: cut to '>1 wraps the model'): the clause says what the strategy does now,
    # where the line stays within 100 columns; the clause goes where it would not
    ("GPUs; >1 wraps it with multi_gpu_model", "GPUs; >1 replicates it with " + STRATEGY),
    ("Number of GPUs; more than one wraps the whole model with multi_gpu_model", "Number of GPUs"),
    ("GPUs to use; passed to multi_gpu_model", "GPUs to use"),
])
def test_a_help_clause_naming_the_helper_goes_whole_or_is_renamed(help_text, expected):
    source = (
        "import argparse\nfrom keras.utils import multi_gpu_model\n\nap = argparse.ArgumentParser()\n"
        f"ap.add_argument('--gpus', type=int, default=2,\n                help='{help_text}')\nargs = ap.parse_args()\n"
        "model = build()\nparallel = multi_gpu_model(model, gpus=args.gpus)\nparallel.compile('sgd', 'mse')\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert f"help='{expected}'" in out


@pytest.mark.parametrize("text,expected", [
    # (round 52, an13) the other clause speaks of the replicas, which the strategy has too: renamed
    ("# with `multi_gpu_model`; each replica sees half of every batch.",
     "# with `" + STRATEGY + "`; each replica sees half of every batch."),
    # ... not where it speaks of the old pair's other half (round 48, ag19)
    ("# anything larger wraps it with multi_gpu_model; train on a single device otherwise.",
     "# anything larger wraps it with multi_gpu_model; train on a single device otherwise."),
    ("# The template lives on the CPU; multi_gpu_model copies it to each GPU.",
     "# The template lives on the CPU; multi_gpu_model copies it to each GPU."),
])
def test_a_clause_naming_the_helper_is_renamed_when_the_others_stay_true(text, expected):
    prose = Prose(frozenset({"multi_gpu_model"}), mechanics_gone=True)
    assert prose.renamed(text) == expected


@pytest.mark.parametrize("text", [
    # round 52: am11 (an end-of-line comment on the call), an10 (markdown), an19 (a docstring)
    "# overwrite: we never need the single copy",
    "Scaling is sub-linear because of the CPU merge.",
    "the wrapper only exists for training speed.",
])
def test_the_old_pairs_mechanics_of_round_52_are_stale(text):
    prose = Prose(frozenset({"multi_gpu_model"}), mechanics_gone=True)
    assert prose.wholly_stale(prose.renamed(text))


def test_a_second_run_reports_the_prose_the_first_run_reported():
    # (rounds 49-52: MGPU305 went silent on a second run, so the stale line survived unseen)
    source = (
        "# shape: `model = multi_gpu_model(model, gpus=2)` rebinding the template's name; then saves it.\n"
        "from keras.utils import multi_gpu_model\n\nmodel = build()\nmodel = multi_gpu_model(model, gpus=2)\n"
        "model.compile('adam', 'mse')\nmodel.fit(x, y)\nmodel.save('m.h5')\n"
    )
    first = transform_source(source.encode(), "train.py")
    assert first.changed and [f.code for f in first.findings] == ["MGPU305"]
    second = transform_source(first.output, "train.py")
    assert not second.changed and second.output == first.output
    assert [(f.line, f.code) for f in second.findings] == [(1, "MGPU305")]
    # a file that never called the helper (no strategy in it) is not told about it
    plain = transform_source(b"# see keras.utils.multi_gpu_model for the old way\nimport numpy as np\n", "notes.py")
    assert plain.findings == []
    # a file migrated by hand whose comment tells that history is not told about it either
    by_hand = transform_source(
        b"import tensorflow as tf\n\n# replaced multi_gpu_model with MirroredStrategy\n"
        b"strategy = tf.distribute.MirroredStrategy()\nwith strategy.scope():\n    model = build()\n",
        "train.py",
    )
    assert not by_hand.changed and by_hand.findings == []


@pytest.mark.parametrize("text,expected", [
    # round 53, ap02: the two halves as the subject of a plural verb are the pair, not "the model share"
    ("Predictions: the template and the parallel model share weights, so either can be used. We use the template.",
     ""),
    # (as one object, they are the one model)
    ("Compile the template and the parallel model.", "Compile the model."),
    # round 53, ap11: where the template was placed goes; what the callback does stays
    ("`MultiGPUCheckpoint` saves the *template* model (the one built under `/cpu:0`) whenever val loss improves.",
     "`MultiGPUCheckpoint` saves the model whenever val loss improves."),
    # round 53, ap14 and ap15: the serial `model` kept for saving, the CPU scope: the pair's mechanics
    ("# The serial `model` is kept around for saving; `parallel_model` does the training.", ""),
    ("Built under the CPU scope so the weights are shared by all replicas.", ""),
])
def test_the_pairs_mechanics_of_round_53(text, expected):
    prose = Prose(frozenset({"multi_gpu_model", "parallel_model"}), True, {"parallel_model": "model"})
    renamed = prose.renamed(text)
    assert (renamed if not prose.wholly_stale(renamed) else "") == expected


def test_a_comment_saying_what_the_model_is_not_goes_with_the_parallel_name():
    # round 53, ap20: `# not gpu_model` was renamed into `# not model` on `model.save(...)`
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\ngpu_model = multi_gpu_model(model, gpus=2)\n"
        "gpu_model.compile('adam', 'mse')\ngpu_model.fit(x, y)\nmodel.save('m.h5')  # not gpu_model\n"
    )
    result = transform_source(source.encode(), "train.py")
    assert result.output.decode().endswith("model.fit(x, y)\nmodel.save('m.h5')\n")
    assert result.findings == []


def test_the_bare_hash_line_that_set_apart_a_note_goes_with_it():
    # round 53, ap14: an exported markdown cell's "# " line was left under its heading
    source = (
        "# # Regression (2 GPUs)\n# \n# The serial `model` is kept for saving; `parallel_model` trains.\n\n"
        "from keras.utils import multi_gpu_model\n\nmodel = build()\nparallel_model = multi_gpu_model(model, gpus=2)\n"
        "parallel_model.compile('adam', 'mse')\nparallel_model.fit(x, y)\nmodel.save('m.h5')\n"
    )
    out = transform_source(source.encode(), "train.py").output.decode()
    assert out.startswith("# # Regression (2 GPUs)\n\nimport tensorflow as tf\n"), out


def test_a_kept_attribute_is_not_said_to_be_removed():
    # round 53, ao14: `self.parallel_model = self.model` stays; MGPU305 said the migration removed it
    source = (
        "from keras.utils import multi_gpu_model\n\n\nclass Trainer:\n    def __init__(self, n):\n"
        "        self.model = build()\n        # self.parallel_model is what we fit; with one GPU it is\n"
        "        # simply self.model\n        if n > 1:\n"
        "            self.parallel_model = multi_gpu_model(self.model, gpus=n)\n        else:\n"
        "            self.parallel_model = self.model\n        self.parallel_model.compile('adam', 'mse')\n"
    )
    result = transform_source(source.encode(), "trainer.py")
    assert "self.parallel_model" in result.output.decode()
    assert [f.code for f in result.findings] == ["MGPU305"]
    assert "which the migration removed" not in result.findings[0].message
    assert "describes the removed multi-GPU wrapper ('parallel model')" in result.findings[0].message


def test_a_docstring_line_is_quoted_where_it_was_written_after_lines_above_it_went():
    # round 53, ao11: the Args lines above went, and the finding quoted a blank line ("Received: ''")
    source = (
        "from keras.utils import multi_gpu_model\n\n\ndef create(gpus):\n"
        '    """Build the MLP.\n\n    Args:\n        gpus: number of GPUs. If > 1 the model is wrapped with\n'
        "            multi_gpu_model and the *parallel* model is returned along with\n"
        "            the template (save the template!).\n\n    Returns:\n        (train_model, template_model)\n"
        '    """\n    m = make()\n    if gpus > 1:\n        train_m = multi_gpu_model(m, gpus=gpus)\n'
        "    else:\n        train_m = m\n    train_m.compile('adam', 'mse')\n    return train_m, m\n\n\n"
        "if __name__ == '__main__':\n    train_model, template = create(2)\n    train_model.fit(x, y)\n"
        "    template.save('m.h5')\n"
    )
    result = transform_source(source.encode(), "train.py")
    stale = [f for f in result.findings if f.code == "MGPU305"]
    assert [f.line for f in stale] == [13]
    assert "(Received: '(train_model, template_model)')" in stale[0].message


@pytest.mark.parametrize("text,expected", [
    # round 54, aq01: the contrast of the pair's halves says nothing once there is one model
    ("# save the template, not the replicated wrapper", ""),
    ("# save the template model, not the replicated one", ""),
    # round 54, aq19: "goes through the model" would say nothing; it runs under the strategy
    ("# inference also goes through the parallel model (splits the batch)",
     f"# inference also runs under {STRATEGY} (splits the batch)"),
    # round 54, ar09: the helper's old module, imported no more
    ("Uses the older import path `keras.utils.training_utils` (Keras 2.0.x).", ""),
    # round 54, aq13: the pair's halves and their roles; the copy owned beside the model
    ("# self.model is the replicated network used for fit(); self.model_save shares its weights and is what we store",
     ""),
    ("Owns the model and the (optional) multi-GPU replica.", "Owns the model."),
    ("Builds the data pipeline and the parallel model.", "Builds the data pipeline and the model."),
    # round 50, ak13 (reported since): both clauses were the pair's
    ("# the template holds the weights; the wrapper cannot be reloaded", ""),
    # round 55, as05 and a probe: the template kept for saving, and where it sat in the wrapper
    ("# train on all cards, keep `unet` for saving", ""),
    ("# the template lives at -2", ""),
])
def test_the_pairs_mechanics_of_round_54(text, expected):
    prose = Prose(frozenset({"multi_gpu_model", "parallel_model"}), True, {"parallel_model": "model"})
    renamed = prose.renamed(text)
    assert (renamed if not prose.wholly_stale(renamed) else "") == expected


def test_a_comment_stale_by_its_aside_and_closing_conjunct_keeps_what_is_left():
    # round 54, aq16: the stage header went whole with the wrapper's step and its two-line aside
    source = (
        "from keras.utils import multi_gpu_model\n\nclf = build()\n"
        "clf.get_layer('base').trainable = False\npmodel = multi_gpu_model(clf, gpus=2)\n"
        "pmodel.compile('rmsprop', 'mse')\npmodel.fit(x, y)\n\n"
        "# stage 2 -- unfreeze and re-wrap (multi_gpu_model must be re-created\n"
        "# after changing trainable flags, otherwise the change is ignored)\n"
        "clf.get_layer('base').trainable = True\npmodel = multi_gpu_model(clf, gpus=2)\n"
        "pmodel.compile('sgd', 'mse')\npmodel.fit(x, y)\n"
    )
    after, findings = migrate(source)
    assert "    # stage 2 -- unfreeze\n    clf.get_layer('base').trainable = True\n" in after, after
    assert "re-wrap" not in after and "re-created" not in after
    assert findings == []


def test_a_comment_stale_by_its_conjunct_alone_still_goes_whole():
    # the conjunct is only cut with a stale aside: "# unfreeze and re-wrap" names nothing else to keep
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    assert prose.wholly_stale("# unfreeze and re-wrap")


def _cell(kind: str, text: str) -> dict:
    """A notebook cell of `kind` holding `text`, as nbformat 4 writes it."""
    extra = {"execution_count": None, "outputs": []} if kind == "code" else {}
    return {"cell_type": kind, "metadata": {}, "source": text.splitlines(keepends=True), **extra}


def test_a_helper_named_only_in_markdown_is_the_removed_helper_and_its_title_says_what_is_done_now():
    # round 54, ar07: `multi_gpu_model` was named only in the markdown of a notebook using
    # make_parallel; the sentence was kept and unreported, and its title reported
    notebook = {"cells": [
        _cell("markdown", "# make_parallel (kuza55 style)\n"
                         "Before Keras 2.0.9 there was no `multi_gpu_model`; this helper slices every batch\n"
                         "across GPUs and concatenates the outputs on the CPU."),
        _cell("markdown", "# Evaluation with the replicated model\n"
                         "`make_parallel` splits the batch across the GPUs for `predict` too."),
        _cell("code", HELPER),
        _cell("code", "model = build()\npmodel = make_parallel(model, 2)\npmodel.compile('adam', 'mse')\n"
                     "pmodel.fit(x, y)\npmodel.predict(x)"),
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    data = json.dumps(notebook, indent=1).encode()
    result = transform_notebook(data, "nb.ipynb")
    assert not result.failed
    cells = json.loads(result.output)["cells"]
    markdown_cells = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    # the title naming the removed helper says what the notebook does now (round 55, at06: not
    # left untitled); the section (still true) is renamed
    assert markdown_cells == [
        f"# Data-parallel training with {STRATEGY}",
        "# Evaluation with the replicated model\n"
        "`tf.distribute.MirroredStrategy` splits the batch across the GPUs for `predict` too."
    ], markdown_cells
    assert transform_notebook(result.output, "nb.ipynb").output == result.output


def test_a_text_cell_string_between_statements_loses_its_stale_clause():
    # round 54, ar15: a Colab export's text cell (a string between statements) was only reported
    source = (
        "from keras.utils import multi_gpu_model\n\nx = load()\n\n"
        '"""## Model\n\nTry to spread training across 2 GPUs; if `multi_gpu_model` cannot find them we\n'
        'just use the plain model.\n"""\n\n'
        "net = build()\ntry:\n    net = multi_gpu_model(net, gpus=2)\nexcept ValueError:\n    pass\n"
        "net.compile('adam', 'mse')\n"
    )
    after, findings = migrate(source)
    assert '"""## Model\n\nTry to spread training across 2 GPUs.\n"""\n' in after, after
    assert findings == []


def test_a_second_run_over_a_notebook_reports_the_markdown_the_first_run_reported():
    # round 54, ar07: the second run's report said nothing of markdown still naming the helper
    notebook = {"cells": [
        _cell("markdown", "## Old-school data parallelism (`multi_gpu_model`)\nThe loss curves below are from 4 GPUs."),
        _cell("code", "from keras.utils import multi_gpu_model\n\nmodel = build()\n"
                     "parallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\nparallel.fit(x, y)"),
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    first = transform_notebook(json.dumps(notebook, indent=1).encode(), "nb.ipynb")
    second = transform_notebook(first.output, "nb.ipynb")
    assert second.output == first.output
    stale = [(f.cell, f.line, f.code) for f in first.findings if f.code == "MGPU305"]
    assert stale and [(f.cell, f.line, f.code) for f in second.findings] == stale


def test_a_heading_on_the_replicated_model_stays_unreported():
    # round 54, ar12: the strategy replicates the model too; the title is still true
    prose = Prose(frozenset({"multi_gpu_model"}), True)
    assert markdown("# Evaluation with the replicated model\nAccuracy on the held-out fold.", prose) == (
        "# Evaluation with the replicated model\nAccuracy on the held-out fold.", []
    )
    # a sentence contrasting it with the template is the old pair's, and goes
    assert markdown("Save the template, not the replicated model.\nThen plot the loss.", prose) == (
        "Then plot the loss.", []
    )


@pytest.mark.parametrize("title,expected", [
    # round 55, at06: the notebook's title naming the helper says what it does now
    (True, f"## Data-parallel training with {STRATEGY}"),
    # a later section on the helper, over text that all went, goes with it
    (False, ""),
])
def test_a_heading_naming_the_removed_helper_over_text_that_all_went(title, expected):
    prose = Prose(frozenset({"make_parallel"}), True)
    text = (
        "## kuza55 `make_parallel` (pre Keras 2.0.9)\n"
        "This `make_parallel` slices every batch and concatenates the outputs on the CPU."
    )
    assert markdown(text, prose, title=title) == (expected, [])


def test_markdown_on_the_towers_share_and_the_cpu_average_loses_that_sentence_or_clause():
    # round 61, bf17 and bf18: the old slicing gave each tower part of the batch, and cpu_merge
    # averaged on the CPU; the strategy all-reduces across the GPUs and takes any batch size
    before = _notebook(
        ("markdown", "Replicate on 2 GPUs. The batch has to be a multiple of 2 because each tower gets half."),
        ("markdown", "Each GPU takes 128 windows per step; the gradients of the replicas are averaged on the CPU."),
        ("code", IMPORTS + SITE),
    )
    result = transform_notebook(before, "nb.ipynb")
    cells = json.loads(result.output)["cells"]
    assert "".join(cells[0]["source"]) == "Replicate on 2 GPUs."
    assert "".join(cells[1]["source"]) == "Each GPU takes 128 windows per step."
    assert transform_notebook(result.output, "nb.ipynb").output == result.output


def test_a_line_leading_in_to_commented_out_code_that_went_goes_with_it():
    # round 62, bg20's shape in a script: "# first attempt:" over the commented-out call
    after, _ = migrate(IMPORTS + "# first attempt, on the 1-GPU box:\n# model = multi_gpu_model(model, gpus=2)\n"
                       "# Note: the data is cached.\n" + SITE)
    assert "first attempt" not in after and "# Note: the data is cached.\n" in after
    after, _ = migrate(IMPORTS + "# the settings:\nG = 2\n" + SITE)
    assert "# the settings:\nG = 2\n" in after


def test_a_trailing_comment_the_rename_leaves_saying_only_the_model_goes():
    # round 62, bg09: `model = Model(inputs, outputs)  # the template model` read "# the model"
    after, _ = migrate(IMPORTS + "model = build()  # the template model\n"
                       "gpu_model = multi_gpu_model(model, gpus=2)\ngpu_model.compile('adam', 'mse')  # compile it\n")
    assert "    model = build()\n    model.compile('adam', 'mse')  # compile it\n" in after
    after, _ = migrate(IMPORTS + "model = build()  # the model\n" + SITE[len("model = build()\n"):])
    assert "    model = build()  # the model\n" in after  # written so: not the rename's doing


def test_a_heading_loses_its_clause_on_the_old_set_up_and_keeps_the_rest():
    # round 62, bg16 (an export's `# ###`) and round 61, bf14 (a notebook's `##`)
    source = (
        "# In[1]:\n\n\nimport tensorflow as tf\nfrom keras.utils import multi_gpu_model\n\n\n"
        "# ### Build on CPU, train on 2 GPUs\n\n# In[2]:\n\n\nwith tf.device('/cpu:0'):\n    model = build()\n"
        "gpu_model = multi_gpu_model(model, gpus=2)\ngpu_model.compile('adam', 'mse')\n"
    )
    result = transform_source(source.encode(), "nb.py")
    assert "\n# ### Train on 2 GPUs\n\n# In[2]:\n" in result.output.decode()
    assert not [f for f in result.findings if f.code == "MGPU305"]
    before = _notebook(
        ("markdown", "## Build on the CPU, replicate on the GPUs"),
        ("markdown", "## Data, model and training"),
        ("code", IMPORTS + SITE),
    )
    cells = json.loads(transform_notebook(before, "nb.ipynb").output)["cells"]
    assert ["".join(c["source"]) for c in cells[:2]] == ["## Replicate on the GPUs", "## Data, model and training"]


@pytest.mark.parametrize("text", [
    "Load the checkpoint on the CPU so the weights stay in host memory.",
    "Try to replicate the model on 2 GPUs.",
    "The checkpoint callback must save the **template** (`model`), so we give it a small wrapper.",
    # round 62, bg18: the old call's second model
    "`multi_gpu_model(model, 2)` returns a new model that splits each batch.",
    "We compile and fit that one; `model` keeps the shared weights.",
    # round 61, bf10: the pair's other half
    "Save it rather than the replica.",
    # round 62, bh11, bh18, bh20
    "Keeping the template's weights in host memory avoids a bottleneck on GPU:0.",
    "The summary above shows the two `Lambda` slices (one per GPU).",
    "The model is built normally.",
    # round 63, bj20, bi06
    "The original `lstm` object stays uncompiled, which is fine because we only use it to save the weights.",
    "Both share weights; compile and fit the second one, save the first one.",
])
def test_what_only_the_old_call_made_true_goes(text):
    # round 62, bg14, bg19; round 61, bf14
    before = _notebook(("markdown", "We fit for ten epochs. " + text), ("code", IMPORTS + SITE))
    cells = json.loads(transform_notebook(before, "nb.ipynb").output)["cells"]
    assert "".join(cells[0]["source"]) == "We fit for ten epochs."


def test_a_heading_on_the_old_mechanics_over_text_that_went_goes_though_code_follows():
    # round 61, bf13 ("A model that can still be checkpointed" once renamed) and bf11
    before = _notebook(
        ("markdown", "## A multi-GPU model that can still be checkpointed\n\n"
                     "`ModelMGPU` forwards `save` to the template."),
        ("code", IMPORTS + "model = build()\n"),
        ("markdown", "## Model\n\nWe first build the ordinary single-device model."),
        ("code", "gpu_model = multi_gpu_model(model, gpus=2)\ngpu_model.compile('adam', 'mse')\n"),
    )
    cells = json.loads(transform_notebook(before, "nb.ipynb").output)["cells"]
    assert [c["cell_type"] for c in cells] == ["code", "markdown", "code"]
    assert "".join(cells[1]["source"]) == "## Model"


def test_a_count_of_replicas_is_the_strategys_too_and_the_helper_named_with_it_is_renamed():
    # round 61, be19: "with `NUM_GPUS` replicas" had kept the sentence from its rename (and dropped it)
    after, _ = migrate("# Multi-GPU: we use `multi_gpu_model` with `NUM_GPUS` replicas.\n" + IMPORTS + SITE)
    assert after.startswith("# Multi-GPU: we use `tf.distribute.MirroredStrategy` with `NUM_GPUS` replicas.\n")
    # "the replica" is still the old pair's other half
    after, _ = migrate("# `multi_gpu_model` trains the replica; we save the model.\n" + IMPORTS + SITE)
    assert "MirroredStrategy` trains the replica" not in after


def test_a_header_naming_the_deleted_helper_with_its_attribution_is_renamed_without_it():
    # round 62, bh03: the whole header went for its "(kuza55/keras-extras)" aside
    after, _ = migrate(
        "#!/usr/bin/env python\n"
        "# House prices from tabular features, data-parallel over\n"
        "# every GPU on the box via the make_parallel helper (kuza55/keras-extras).\nimport tensorflow as tf\n"
        "from keras.layers import Lambda, concatenate\n"
        "from keras.models import Model\n\n\n" + HELPER
        + "\n\nmodel = build()\nmodel = make_parallel(model, 2)\nmodel.compile('adam', 'mse')\nmodel.fit(x, y)\n"
    )
    assert after.startswith(
        "#!/usr/bin/env python\n# House prices from tabular features, data-parallel over every GPU on the box\n"
        "# via tf.distribute.MirroredStrategy.\n"
    ), after


@pytest.mark.parametrize("comment", [
    "# otherwise, build the weights on the CPU so the replicas can share them\n",  # round 62, bh01
    "# Instantiate the base model on the default device.\n",  # round 62, bh05
])
def test_a_placement_the_scope_decides_now_goes(comment):
    after, _ = migrate(IMPORTS + comment + SITE)
    assert after.endswith(MIGRATED)


def test_a_note_above_an_else_that_went_takes_its_blank_line_along():
    # round 62, bh01
    after, _ = migrate(
        IMPORTS + "if G <= 1:\n    print('one GPU')\n    model = build()\n\n# otherwise, build the weights on the CPU\n"
        "else:\n    print('several')\n    with tf.device('/cpu:0'):\n        model = build()\n"
        "    model = multi_gpu_model(model, gpus=G)\n"
        "model.compile('adam', 'mse')\n"
    )
    assert "strategy = tf.distribute.get_strategy()\nelse:\n    print('several')\n" in after, after
    # a blank line above an `else:` the rewrite did not touch stays as written
    after, _ = migrate("if x:\n    a = 1\n\nelse:\n    a = 2\n" + IMPORTS + SITE)
    assert after.startswith("if x:\n    a = 1\n\nelse:\n    a = 2\n"), after


def test_the_pair_being_one_object_on_one_gpu_goes_from_the_builders_docstring():
    # round 62, bh04
    after, _ = migrate(
        IMPORTS + 'def build_models(n):\n    """Return (template, train_model).\n\n'
        '    On one GPU they are the same object.\n    """\n    template = build()\n'
        "    if n > 1:\n        train_model = multi_gpu_model(template, gpus=n)\n"
        "    else:\n        train_model = template\n"
        "    train_model.compile('adam', 'mse')\n    return template, train_model\n"
    )
    assert "same object" not in after


def test_the_single_gpu_name_is_the_one_model_and_ignoring_the_parallel_one_is_not_renamed():
    # round 62, bh17 and bh06
    before = _notebook(("markdown", "Save the single-GPU `model` (it holds the trained weights)."),
                       ("code", IMPORTS + SITE))
    cells = json.loads(transform_notebook(before, "nb.ipynb").output)["cells"]
    assert "".join(cells[0]["source"]) == "Save `model` (it holds the trained weights)."
    after, _ = migrate(IMPORTS + "class Saver(Callback):\n    def set_model(self, model):\n"
                       "        # ignore the parallel model that fit() hands us\n        self.m = model\n\n\n" + SITE)
    assert "ignore the model" not in after


def test_a_docstring_sentence_on_which_half_the_builder_returns_goes():
    # round 63, bi19: "Returns the model when n_gpus > 1, otherwise the plain one." once renamed
    after, _ = migrate(
        IMPORTS + 'def build(n):\n    """Builds the captioning model.\n\n'
        '    Returns the parallel model when n > 1, otherwise the plain one.\n    """\n    model = make()\n'
        "    if n > 1:\n        model = multi_gpu_model(model, gpus=n)\n    model.compile('adam', 'mse')\n"
        "    return model\n"
    )
    assert '    """Builds the captioning model."""\n' in after, after


def test_a_sentence_going_on_about_it_after_a_stale_one_goes_with_it():
    # round 63, bj11 (notebook markdown) and bi20 (an export's comment, across lines)
    before = _notebook(
        ("markdown", "## Build the model\n\nFirst the ordinary single-device model. "
                     "We keep a reference to it: this is the model we will save."),
        ("code", IMPORTS + SITE),
    )
    cells = json.loads(transform_notebook(before, "nb.ipynb").output)["cells"]
    assert "".join(cells[0]["source"]) == "## Build the model"
    after, _ = migrate(
        "# Before Keras shipped `multi_gpu_model`, the usual trick was the\n"
        "# `make_parallel` helper from kuza55's blog post. We import it from our\n"
        "# utils package and wrap the MLP with it.\n" + IMPORTS + SITE
    )
    assert after.startswith("import tensorflow as tf\n"), after
    # a true sentence after a stale one stays, "it" the model included
    after, _ = migrate("# `multi_gpu_model` copies the model. We train for 5 epochs.\n" + IMPORTS + SITE)
    assert "We train for 5 epochs.\n" in after, after
    after, _ = migrate("# The template lives on the CPU. We then train it for 10 epochs.\n" + IMPORTS + SITE)
    assert after.startswith("# We then train it for 10 epochs.\n"), after


def test_a_clause_saying_which_half_is_saved_goes_and_one_for_the_other_case_keeps_the_sentence():
    # round 64, bk02: renamed, "the template model is what we save" says nothing
    after, _ = migrate("# Trains on 4 GPUs; the template model is what we save.\n" + IMPORTS + SITE)
    assert after.startswith("# Trains on 4 GPUs.\nimport tensorflow as tf\n"), after
    # round 64, bl15: "with one GPU it returns the plain model." is no sentence without the case
    # before it; the sentence stays whole and is reported (never the fragment)
    text = ("`build` builds the network on the CPU when several GPUs are used and returns the parallel "
            "version; with one GPU it returns the plain model.")
    cells = json.loads(transform_notebook(
        _notebook(("markdown", text), ("code", IMPORTS + SITE)), "nb.ipynb"
    ).output)["cells"]
    assert "".join(cells[0]["source"]) != "with one GPU it returns the plain model."
    # a true clause after a stale one still stays: "save the plain model" says what to do
    after, _ = migrate("# weights are shared with the parallel copy; save the plain model\n" + IMPORTS + SITE)
    assert "# weights are shared" not in after, after


def test_the_cpu_merging_and_the_parallel_models_limits_go_with_the_old_call():
    # round 64, bl01: "each GPU gets a slice of the batch and the CPU merges the gradients" is the
    # old placement, not the strategy's (it all-reduces across the GPUs)
    after, _ = migrate(
        '"""Train a classifier on one or more GPUs.\n\nThe network is built on the CPU and replicated with\n'
        '``multi_gpu_model``; each GPU gets a slice of the batch and the CPU merges the gradients.\n"""\n'
        + IMPORTS + SITE
    )
    assert after.startswith('"""Train a classifier on one or more GPUs."""\nimport tensorflow as tf\n'), after
    # round 64, bl09: renamed, "the model can't be reloaded on a single-GPU box" would be false
    after, _ = migrate(
        "# Checkpoint the *base* model; the multi-GPU model can't be reloaded on a\n# single-GPU box.\n"
        + IMPORTS + SITE
    )
    assert after.startswith("# Checkpoint the *base* model.\nimport tensorflow as tf\n"), after


@pytest.mark.parametrize("heading,kept", [
    # round 64, bl11: over text that all went and the cell that only wrapped the model, the heading
    # would head the compile it never headed
    ("## Replicate on the GPUs", False),
    ("## Replicate the model across all GPUs", False),
    # a heading on what the cells below still do stays
    ("## Training on 2 GPUs", True),
])
def test_a_heading_whose_text_and_cell_went_goes(heading, kept):
    before = _notebook(
        ("code", IMPORTS + "model = build()\n"),
        ("markdown", heading + "\n\n`multi_gpu_model` slices each batch and concatenates the results on the CPU."),
        ("code", "gpu_model = multi_gpu_model(model, gpus=2)\n"),
        ("code", "gpu_model.compile('adam', 'mse')\ngpu_model.fit(x, y)\n"),
    )
    cells = json.loads(transform_notebook(before, "nb.ipynb").output)["cells"]
    assert ([c["cell_type"] for c in cells] == ["code", "markdown", "code"]) is kept
    if kept:
        assert "".join(cells[1]["source"]) == heading


def test_the_scripts_own_name_for_itself_is_no_stale_prose():
    # round 65, bm01: "CIFAR-10 multi-GPU trainer" is still what the script is; reported, it was a
    # false finding
    source = (
        IMPORTS + "import argparse\nparser = argparse.ArgumentParser(description='CIFAR-10 multi-GPU trainer')\n"
        + SITE
    )
    after, findings = migrate(source)
    assert "description='CIFAR-10 multi-GPU trainer'" in after
    assert not [f for f in findings if f[1] == "MGPU305"], findings
    # the other half of the old pair, named as such, still goes
    after, _ = migrate("# evaluate with the multi-GPU trainer; it shares the weights\n" + IMPORTS + SITE)
    assert "multi-GPU trainer" not in after, after


@pytest.mark.parametrize("markdown,kept", [
    # round 65, bn14: "in that case" pointed at the failure that went with the clause before it
    ("## Use both GPUs if we can\n\nIf fewer than 2 GPUs are available `multi_gpu_model` raises a "
     "`ValueError`; in that case we just train the plain model.", "## Use both GPUs if we can"),
    # round 65, bn15: the pair's other half, kept for saving
    ("Wrap the model with `multi_gpu_model` when more than one GPU is present. The **original** "
     "`model` is kept for saving.",
     "Replicate the model with `tf.distribute.MirroredStrategy` when more than one GPU is present."),
])
def test_what_points_back_at_the_pair_goes_with_it(markdown, kept):
    cells = json.loads(transform_notebook(
        _notebook(("markdown", markdown), ("code", IMPORTS + SITE)), "nb.ipynb"
    ).output)["cells"]
    assert "".join(cells[0]["source"]) == kept
