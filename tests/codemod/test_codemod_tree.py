"""codemod/_tree.py: the parsed module every fixer reads (parents, blocks, names, bindings)."""

import libcst as cst
import pytest

from multi_gpu_codemod._tree import Tree, binds, bound_names, code_of, dotted_name, used_names, zip_equal

SOURCE = """\
import tensorflow as tf
from keras import utils as u


def build(n):
    if n:
        with tf.device("/cpu:0"):
            model = make(n)
    return model


a, (b, *c) = 1, (2, 3)
self_x = obj.x.y
"""


@pytest.fixture(scope="module")
def tree() -> Tree:
    return Tree(cst.parse_module(SOURCE))


def _call(tree: Tree, name: str) -> cst.Call:
    return next(c for c in tree.all(cst.Call) if dotted_name(c.func) == name)


def test_code_of_renders_a_node_on_its_own():
    assert code_of(cst.parse_statement("x = f( 1 )\n")) == "x = f( 1 )\n"
    assert code_of(cst.parse_expression("a.b[ 0 ]")) == "a.b[ 0 ]"


def test_zip_equal_pairs_items_and_refuses_different_lengths():
    assert list(zip_equal([1, 2], "ab")) == [(1, "a"), (2, "b")]
    with pytest.raises(ValueError, match=r"lengths differ: \[2, 1\]"):
        list(zip_equal([1, 2], [3]))


def test_all_lists_indexed_nodes_in_source_order(tree):
    assert [dotted_name(c.func) for c in tree.all(cst.Call)] == ["tf.device", "make"]
    assert [f.name.value for f in tree.all(cst.FunctionDef)] == ["build"]
    with pytest.raises(AssertionError):
        tree.all(cst.Name)  # not indexed: asking for it is a programming error


def test_positions_parents_and_statements(tree):
    make = _call(tree, "make")
    assert tree.position(make) == (8, 21)
    assert tree.code(make) == "make(n)"
    statement = tree.statement_of(make)
    assert tree.code(statement) == "model = make(n)"
    assert isinstance(tree.parent(make), cst.Assign)
    assert tree.order(tree.statement_of(_call(tree, "tf.device"))) < tree.order(statement)


def test_block_chain_stops_at_the_function(tree):
    statement = tree.statement_of(_call(tree, "make"))
    chain = tree.block_chain(statement)
    assert [index for _, index in chain] == [0, 0, 0]  # in `with`, in `if`, in the function body
    assert tree.enclosing_scope_node(statement).name.value == "build"
    assert tree.block_of(statement) == chain[0]


def test_qualified_names_follow_imports(tree):
    assert tree.qualified_names(_call(tree, "tf.device").func) == {"tensorflow.device"}


@pytest.mark.parametrize("code,expected", [
    ('with tf.device("/cpu:0"):\n    pass\n', True),
    ('with tf.device("/device:CPU:0"):\n    pass\n', True),
    ('with tf.device("cpu"):\n    pass\n', True),
    ('with tf.device("/gpu:0"):\n    pass\n', False),
    ('with tf.device("/cpu:0") as d:\n    pass\n', False),
    ('with device("/cpu:0"):\n    pass\n', False),  # not TensorFlow's
])
def test_is_cpu_device_with(code, expected):
    tree = Tree(cst.parse_module("import tensorflow as tf\n" + code))
    assert tree.is_cpu_device_with(tree.module.body[1]) is expected


def test_bound_used_and_dotted_names(tree):
    body = tree.module.body
    assert bound_names(body[0]) == {"tf"}
    assert bound_names(body[1]) == {"u"}
    assert bound_names(body[2]) == {"build"}
    assert bound_names(body[3]) == {"a", "b", "c"}
    assert used_names(body[4]) == {"self_x", "obj", "x", "y"}  # conservative: attribute names too
    assert dotted_name(body[4].body[0].value) == "obj.x.y"
    assert dotted_name(cst.parse_expression("f()")) == ""
    # Today an attribute of a call keeps its tail (callers compare whole names, so it never matches).
    assert dotted_name(cst.parse_expression("f().x")) == ".x"


def test_binds_a_name_or_an_attribute_target(tree):
    body = tree.module.body
    assert binds(body[3], "b", tree) and not binds(body[3], "d", tree)
    assert binds(body[2], "build", tree)
    own = Tree(cst.parse_module("self.m = x\n"))
    assert binds(own.module.body[0], "self.m", own) and not binds(own.module.body[0], "m", own)


def test_keep_leaves_top_level_statements_out_of_the_analysis():
    module = cst.parse_module("import tensorflow as tf\nx = tf.ones(1)\ny = tf.zeros(1)\n")
    tree = Tree(module, keep=[True, True, False])
    (kept,) = tree.all(cst.Call)  # the skipped statement's call is not indexed
    assert tree.code(kept) == "tf.ones(1)" and tree.qualified_names(kept.func) == {"tensorflow.ones"}
    skipped = module.body[2].body[0].value
    assert tree.qualified_names(skipped.func) == set() and tree.parent(skipped) is None
    assert tree.position(skipped) == (3, 5)  # positions still cover the whole module
