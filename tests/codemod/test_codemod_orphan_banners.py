"""codemod/orphan_banners.py: a section's bare closing rule goes when the rewrite removed the
titled rule that opened it; a rule that still closes something, or a header block, stays."""

import pytest

from multi_gpu_codemod import transform_source

HEAD = "import tensorflow as tf\nfrom keras.utils import multi_gpu_model\n\nnet = build()\n\n"
RULE = "# " + "-" * 60 + "\n"


def migrate(source: str) -> str:
    result = transform_source(source.encode(), "train.py")
    assert not result.failed
    assert transform_source(result.output, "train.py").output == result.output  # a second run changes nothing
    return result.output.decode()


def test_the_closing_rule_of_a_section_whose_opening_went_goes():
    # round 32, na19: the banner's text went with the call, its closing rule was left after the scope
    source = HEAD + (
        "# ---- multi GPU " + "-" * 44 + "\n"
        "# multi_gpu_model(net, gpus=2) slices every batch in two parts,\n"
        "# runs one part per GPU and merges the outputs on the CPU.\n"
        "parallel = multi_gpu_model(net, gpus=2)\n"
        "parallel.compile('adam', 'mse')\n" + RULE + "\nparallel.fit(x, y)\n"
    )
    out = migrate(source)
    assert RULE not in out and "multi GPU" not in out
    assert out.endswith("    net.compile('adam', 'mse')\n\nnet.fit(x, y)\n")


def test_a_closing_rule_stays_when_its_opening_stays():
    source = HEAD.replace("net = build()\n", "# ---- model " + "-" * 48 + "\nnet = build()\n" + RULE) + (
        "parallel = multi_gpu_model(net, gpus=2)\nparallel.compile('adam', 'mse')\nparallel.fit(x, y)\n"
    )
    out = migrate(source)
    assert "# ---- model " in out and out.count(RULE) == 1


@pytest.mark.parametrize("header", [
    # a three-line header (rule, title, rule) is one paragraph: it went whole, nothing is left to close
    RULE + "# multi-GPU: multi_gpu_model replicates the net\n" + RULE,
])
def test_a_header_block_leaves_the_rules_elsewhere_alone(header):
    source = HEAD + header + "parallel = multi_gpu_model(net, gpus=2)\nparallel.compile('adam', 'mse')\n" + (
        "\n" + RULE + "# evaluation\n" + RULE + "parallel.fit(x, y)\n"
    )
    out = migrate(source)
    assert RULE + "# evaluation\n" + RULE in out
