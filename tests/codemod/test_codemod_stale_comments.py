"""codemod/stale_comments.py: comments on the CPU placement, a dropped argument or the wrapper go
with the code they described; every other comment stays, a paragraph goes whole or not at all."""

import libcst as cst
import pytest

from codemod_fixtures import ROOT, check_pair
from multi_gpu_codemod import transform_source
from multi_gpu_codemod.stale_comments import CPU_PLACEMENT, WRAPPER, without

HEAD = "from keras.utils import multi_gpu_model\n\n"


def test_the_pinned_pair_drops_exactly_the_stale_comments():
    check_pair(ROOT / "strategy_scope" / "stale_comments_go.before.py")
    after = (ROOT / "strategy_scope" / "stale_comments_go.after.py").read_text()
    for kept in ("# data", "# two replicas", "# both cards", "# master copy"):
        assert kept in after
    for gone in ("on the CPU", "host memory", "faster", "merge layer"):
        assert gone not in after


def test_a_paragraph_goes_whole_and_only_when_a_line_matches():
    module = cst.parse_module("y = 0\n# keep this\n\n# one line\n# and the CPU one\nx = 1\n")
    lines = without(cst.ensure_type(module.body[1], cst.SimpleStatementLine).leading_lines, CPU_PLACEMENT)
    assert [line.comment.value if line.comment else "" for line in lines] == ["# keep this", ""]


@pytest.mark.parametrize("text,pattern,matches", [
    ("# build the template on the CPU", CPU_PLACEMENT, True),
    ("# weights on the host", CPU_PLACEMENT, True),
    ("# cpus are slow here, use the hostname", CPU_PLACEMENT, True),
    ("# the precision of the model", CPU_PLACEMENT, False),
    ("# the wrapper ends with one merge layer per output", WRAPPER, True),
    ("# pull the single-device model back out", WRAPPER, True),
    ("# save the final weights", WRAPPER, False),
])
def test_what_each_pattern_selects(text, pattern, matches):
    assert bool(pattern.search(text)) is matches


def test_a_comment_elsewhere_mentioning_the_cpu_stays():
    source = (
        HEAD + "# preprocessing runs on the CPU\nx = load()\nmodel = build()\n"
        "parallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n"
    )
    assert "# preprocessing runs on the CPU\nx = load()" in transform_source(source.encode()).output.decode()


def test_a_trailing_comment_after_a_closing_parenthesis_on_its_own_line_stays():
    source = (
        HEAD + "model = build()\nparallel = multi_gpu_model(\n    model,\n    gpus=2,\n    cpu_merge=False,\n"
        ")  # done\n"
        "parallel.compile('adam', 'mse')\n"
    )
    assert "# done\n" in transform_source(source.encode()).output.decode()


@pytest.mark.parametrize("later,kept", [
    # the model bound again: `parallel` stays the first model's name, and `single` reads it
    ("model = other()\n", "model = other()\nparallel.save('m.keras')\n"),
    # `single` bound twice: its line stays, the lookup replaced
    ("single = other()\n", "single = model\nsingle = other()\nsingle.save('m.keras')\n"),
])
def test_the_recovered_name_goes_only_when_nothing_else_binds_it(later, kept):
    source = (
        HEAD + "model = build()\nparallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n"
        f"single = parallel.layers[-2]\n{later}single.save('m.keras')\n"
    )
    assert transform_source(source.encode()).output.decode().endswith(kept)


@pytest.mark.parametrize("hack", [
    "parallel.__setattr__('callback_model', model)\n",
    "parallel.callback_model = model\n",
])
def test_the_callback_model_hack_goes_with_its_comment(hack):
    source = (
        HEAD + "model = build()\nparallel = multi_gpu_model(model, gpus=2)\n"
        f"# let the checkpoint save the template, not the wrapper\n{hack}"
        "parallel.compile('adam', 'mse')\nparallel.fit(x, y, callbacks=[ModelCheckpoint('m.h5')])\n"
    )
    output = transform_source(source.encode()).output.decode()
    assert "callback_model" not in output and "not the wrapper" not in output
    assert output.endswith("    model.compile('adam', 'mse')\nmodel.fit(x, y, callbacks=[ModelCheckpoint('m.h5')])\n")


def test_a_comment_on_the_call_naming_its_mechanics_goes_what_it_was_for_stays():
    source = (
        HEAD + "model = build()\n# replicate on all cards\n"
        "parallel = multi_gpu_model(model, gpus=2)  # outputs are concatenated per head\n"
        "parallel.compile('adam', 'mse')\n"
    )
    output = transform_source(source.encode()).output.decode()
    assert "# replicate on all cards\nstrategy = " in output and "concatenated" not in output


def test_a_comment_on_saving_the_template_instead_of_the_wrapper_goes():
    source = (
        HEAD + "model = build()\nparallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n"
        "# save the template: it shares its weights with the parallel model\nmodel.save('m.h5')\n"
        "# keep a copy for the report\nmodel.save_weights('w.h5')  # goes to the serial model thanks to ModelMGPU\n"
    )
    output = transform_source(source.encode()).output.decode()
    assert output.endswith("\nmodel.save('m.h5')\n# keep a copy for the report\nmodel.save_weights('w.h5')\n")


def test_a_mechanics_comment_on_a_call_inside_a_collapsed_guard_goes_the_guards_own_stays():
    source = (
        HEAD + "G = 2\nmodel = build()\n# even GPU counts only\nif G > 1:\n"
        "    # ModelMGPU saves the serial model\n"
        "    model = multi_gpu_model(model, gpus=G)  # outputs are concatenated\n"
        "model.compile('adam', 'mse')\n"
    )
    output = transform_source(source.encode()).output.decode()
    assert "# even GPU counts only\n" in output
    assert "ModelMGPU" not in output and "concatenated" not in output


def test_a_paragraph_inside_a_collapsed_guard_goes_whole_when_a_line_of_it_speaks_of_the_cpu():
    # round 33, pa19: only the line on the CPU went, leaving "... and the results are" cut off
    source = (
        HEAD + "G = 2\nmodel = build()\nif G > 1:\n"
        "    # Replicates `model` on each GPU.\n"
        "    # Each replica processes a slice of every batch and the results are\n"
        "    # concatenated on the CPU.\n"
        "    model = multi_gpu_model(model, gpus=G)\n"
        "model.compile('adam', 'mse')\n"
    )
    output = transform_source(source.encode()).output.decode()
    assert "Replicates" not in output and "results are" not in output and "concatenated" not in output
    assert "if G > 1:\n    strategy = " in output


@pytest.mark.parametrize("call", [
    # the comment line right above the dropped argument describes it
    "parallel = multi_gpu_model(model, gpus=2,\n                           # merge on GPU, faster on NVLink\n"
    "                           cpu_merge=False)\n",
    # a comment on the call about what the dropped argument chose
    "# merge on GPU, faster on NVLink\nparallel = multi_gpu_model(model, gpus=2, cpu_merge=False)\n",
    "# relocating the template would cost memory\nparallel = multi_gpu_model(model, gpus=2, cpu_relocation=False)\n",
])
def test_a_comment_about_a_dropped_argument_goes_with_it(call):
    source = HEAD + "# two cards\nmodel = build()\n" + call + "parallel.compile('adam', 'mse')\n"
    output = transform_source(source.encode()).output.decode()
    assert "NVLink" not in output and "relocating" not in output
    assert "# two cards\n" in output


def test_a_comment_about_merging_stays_when_the_call_drops_no_merge_argument():
    source = HEAD + "model = build()\n# merge the two branches' features\nparallel = multi_gpu_model(model, gpus=2)\n" \
        "parallel.compile('adam', 'mse')\n"
    assert "# merge the two branches' features\n" in transform_source(source.encode()).output.decode()


def test_a_comment_on_the_first_scoped_statement_about_the_device_scope_goes():
    source = (
        HEAD + "x = load()\n\n# Not needed to change the device scope for model definition:\n"
        "model = Xception(weights=None)\n# the head\nmodel = add_head(model)\n"
        "parallel = multi_gpu_model(model, gpus=2)\nparallel.compile('adam', 'mse')\n"
    )
    output = transform_source(source.encode()).output.decode()
    assert "device scope" not in output
    assert "x = load()\n\nstrategy = " in output and "    # the head\n    model = add_head(model)\n" in output


def test_a_commented_out_call_goes_alone_and_the_note_above_it_stays():
    source = (
        HEAD + "net = build()\n\n# 3 GPUs on the risk cluster\n# net = multi_gpu_model(net, gpus=2)   # old box\n"
        "multi_net = multi_gpu_model(net, gpus=3)\nmulti_net.compile('adam', 'mse')\n"
    )
    output = transform_source(source.encode()).output.decode()
    assert "# 3 GPUs on the risk cluster\nstrategy = " in output and "old box" not in output


@pytest.mark.parametrize("comment,goes", [
    ("# positional gpus arg", True),  # round 46, ac14: how the call's arguments were written
    ("# keyword argument form", True),
    ("# will raise on a 1-GPU box", True),  # round 49, ai11: how the call failed; the strategy never raises
    ("# raises ValueError with fewer GPUs", True),
    ("# 8 GPUs on the DGX-1", False),  # the count: what the strategy line now chooses
])
def test_a_comment_on_how_the_calls_arguments_were_written_goes_with_the_call(comment, goes):
    source = (
        "from keras.utils import multi_gpu_model\n\nmodel = build()\n"
        f"model = multi_gpu_model(model, 8)   {comment}\nmodel.compile('adam', 'mse')\n"
    )
    out = transform_source(source.encode(), "t.py").output.decode()
    assert (comment in out) is not goes
