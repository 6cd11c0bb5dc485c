"""codemod/plan.py: the edits fixers decide on, applied to the module in one pass."""

import libcst as cst

from multi_gpu_codemod._tree import Tree
from multi_gpu_codemod.plan import Plan, Region, apply_plan

SOURCE = """\
import os
# the template
model = make()  # built here
parallel = wrap(model)
parallel.compile('adam', 'mse')
print(os.getcwd())
"""


def _apply(plan: Plan, module: cst.Module, with_tree: bool) -> str:
    return apply_plan(module, plan, Tree(module) if with_tree else None).code


def test_an_empty_plan_is_empty_and_changes_nothing():
    module = cst.parse_module(SOURCE)
    assert Plan().empty
    assert apply_plan(module, Plan()).code == SOURCE


def test_a_removed_statement_hands_its_comments_to_the_next_one():
    module = cst.parse_module("x = f(\n    1,  # one\n)\n# about y\ny = 2\n")
    plan = Plan(statements={id(module.body[0]): None})
    assert not plan.empty
    for with_tree in (False, True):
        assert _apply(plan, module, with_tree) == "# one\n# about y\ny = 2\n"


def test_a_replaced_statement_keeps_every_comment_it_had():
    module = cst.parse_module(SOURCE)
    plan = Plan(statements={id(module.body[1]): cst.parse_statement("model = make_small()\n")})
    # Its leading comment stays; the trailing one becomes a line of its own above the replacement.
    assert _apply(plan, module, True) == SOURCE.replace("model = make()  # built here",
                                                        "# built here\nmodel = make_small()")


def test_a_region_goes_under_the_strategy_scope_with_its_notes():
    module = cst.parse_module(SOURCE)
    region = Region(block=module, start=1, end=3, name="strategy", expression="tf.distribute.MirroredStrategy()",
                    notes=["# a note"])
    plan = Plan(regions=[region], statements={id(module.body[2]): None})
    assert _apply(plan, module, True) == (
        "import os\n"
        "# the template\n"
        "# a note\n"
        "strategy = tf.distribute.MirroredStrategy()\n"
        "with strategy.scope():\n"
        "    model = make()  # built here\n"
        "    parallel.compile('adam', 'mse')\n"
        "print(os.getcwd())\n"
    )


def test_a_node_replacement_and_a_cpu_block_dissolved():
    module = cst.parse_module("with tf.device('/cpu:0'):  # template\n    m = make(wrap(1))\nn = 2\n")
    with_block = module.body[0]
    call = with_block.body.body[0].body[0].value.args[0].value
    plan = Plan(unwrap={id(with_block)}, nodes={id(call): cst.Integer("1")})
    assert _apply(plan, module, True) == "# template\nm = make(1)\nn = 2\n"
