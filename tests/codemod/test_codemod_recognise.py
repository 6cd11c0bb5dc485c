"""codemod/recognise.py: which calls are `multi_gpu_model`, a copied helper or a wrapper class."""

import libcst as cst
import pytest

from multi_gpu_codemod._tree import Tree
from multi_gpu_codemod.recognise import MULTI_GPU_MODEL_NAMES, find_sites, local_helper_definitions


def _sites(source: str):
    tree = Tree(cst.parse_module(source))
    sites, helpers = find_sites(tree)
    return tree, sites, helpers


def _summary(source: str) -> list[tuple]:
    tree, sites, _ = _sites(source)
    return [(s.kind, s.name, tree.code(s.template) if s.template is not None else None,
             tree.code(s.gpus) if s.gpus is not None else None, s.dropped, s.problem and s.problem[0])
            for s in sites]


@pytest.mark.parametrize("source", [
    "from keras.utils import multi_gpu_model\np = multi_gpu_model(m, gpus=2)\n",
    "from keras.utils.training_utils import multi_gpu_model as mgm\np = mgm(m, gpus=2)\n",
    "from tensorflow.keras.utils import multi_gpu_model\np = multi_gpu_model(m, gpus=2)\n",
    "import tensorflow as tf\np = tf.keras.utils.multi_gpu_model(m, gpus=2)\n",
    "from multi_gpu_compat import multi_gpu_model\np = multi_gpu_model(m, gpus=2)\n",
])
def test_every_legacy_import_path_is_recognised(source):
    assert _summary(source) == [("function", "multi_gpu_model", "m", "2", [], None)]


def test_a_function_reached_through_an_assignment_is_not_followed():
    source = "import tensorflow as tf\nmgm = tf.keras.utils.multi_gpu_model\np = mgm(m, gpus=2)\n"
    assert _summary(source) == []


def test_the_legacy_names_include_keras_tf_keras_and_the_shim():
    assert {"keras.utils.multi_gpu_model", "tensorflow.keras.utils.multi_gpu_model", "tf_keras.utils.multi_gpu_model",
            "multi_gpu_compat.multi_gpu_model"} <= MULTI_GPU_MODEL_NAMES


@pytest.mark.parametrize("source", [
    "def multi_gpu_model(m, gpus):\n    return m\np = multi_gpu_model(m, 2)\n",
    "from lib.multi_gpu_frame import multi_gpu_model\np = multi_gpu_model(m, 2)\n",
    "p = multi_gpu_model(m, 2)\n",  # nothing imported: unknown
])
def test_other_functions_with_the_name_are_not_sites(source):
    assert _summary(source) == []


def test_arguments_are_read_as_the_original_signature():
    head = "from keras.utils import multi_gpu_model\n"
    assert _summary(head + "p = multi_gpu_model(m, 4, False, True)\n") == [
        ("function", "multi_gpu_model", "m", "4", ["cpu_merge=False", "cpu_relocation=True"], None)]
    assert _summary(head + "p = multi_gpu_model(model=self.m, gpus=None, cpu_relocation=True)\n") == [
        ("function", "multi_gpu_model", "self.m", None, ["cpu_relocation=True"], None)]


@pytest.mark.parametrize("call,code", [
    ("p = multi_gpu_model(*args)", "MGPU102"),
    ("p = multi_gpu_model(m, gpus=2, extra=1)", "MGPU102"),
    ("p = multi_gpu_model(build(), gpus=2)", "MGPU102"),
    ("fit(multi_gpu_model(m, 2))", "MGPU103"),
    ("p = multi_gpu_model(m, 2); p.compile('a', 'b')", "MGPU103"),
    ("a = b = multi_gpu_model(m, 2)", "MGPU103"),
])
def test_shapes_it_cannot_rewrite_carry_their_problem(call, code):
    (site,) = _sites(f"from keras.utils import multi_gpu_model\n{call}\n")[1]
    assert site.problem is not None and site.problem[0] == code and site.statement is None


def test_a_rewritable_site_has_its_statement_and_target():
    tree, (site,), _ = _sites("from keras.utils import multi_gpu_model\nparallel = multi_gpu_model(m, 2)\n")
    assert site.problem is None
    assert tree.code(site.statement) == "parallel = multi_gpu_model(m, 2)" and tree.code(site.target) == "parallel"
    tree, (site,), _ = _sites("from keras.utils import multi_gpu_model\ndef f(m):\n    return multi_gpu_model(m, 2)\n")
    assert site.problem is None and site.target is None  # `return`: no name to rename


HELPERS = """\
from keras.models import Model
from keras.utils import multi_gpu_model


def make_parallel(model, gpu_count):
    return multi_gpu_model(model, gpu_count)


class ModelMGPU(Model):
    def __init__(self, ser_model, gpus):
        pmodel = multi_gpu_model(ser_model, gpus)
        self.__dict__.update(pmodel.__dict__)


a = make_parallel(m, 2)
b = make_parallel(n, gpu_count=4)
c = ModelMGPU(m, gpus=2)
d = make_parallel(m)
"""


def test_copied_helpers_and_wrapper_classes_are_sites_their_bodies_are_not():
    tree, sites, helpers = _sites(HELPERS)
    assert [(s.kind, s.name, tree.code(s.template) if s.template else None, tree.code(s.gpus) if s.gpus else None,
             s.problem and s.problem[0]) for s in sites] == [
        ("helper", "make_parallel", "m", "2", None),
        ("helper", "make_parallel", "n", "4", None),
        ("wrapper", "ModelMGPU", "m", "2", None),
        ("helper", "make_parallel", None, None, "MGPU102"),  # no count: its default is in the helper
    ]
    assert [(h.name, len(h.sites)) for h in helpers] == [("make_parallel", 3), ("ModelMGPU", 1)]
    assert [name for name, _ in local_helper_definitions(tree)] == ["make_parallel", "ModelMGPU"]


def test_a_trainer_class_calling_multi_gpu_model_is_not_a_wrapper():
    source = ("from keras.utils import multi_gpu_model\nclass Trainer:\n    def __init__(self, gpus):\n"
              "        self.m = build()\n        self.p = multi_gpu_model(self.m, gpus)\nt = Trainer(2)\n")
    tree, sites, helpers = _sites(source)
    assert [(s.kind, tree.code(s.template)) for s in sites] == [("function", "self.m")]
    assert helpers == [] and local_helper_definitions(tree) == []


@pytest.mark.parametrize("line,advice", [
    ("parallel = multi_gpu_model(model, gpus=n) if n > 1 else model",
     "write it as `if n > 1:` / `    parallel = multi_gpu_model(model, gpus=n)` / `else:` / `    parallel = model`"),
    ("if n > 1: parallel = multi_gpu_model(model, gpus=n)",
     "is on the line of its `if`/`else`; put it on its own line"),
])
def test_a_guard_written_on_one_line_is_reported_with_the_if_the_codemod_rewrites(line, advice):
    # (core.py splits the one-line `if` itself and reruns: one_line_guards.py, tested there)
    source = f"from keras.utils import multi_gpu_model\nmodel = build()\nparallel = model\n{line}\nparallel.fit(x, y)\n"
    _, (site,), _ = _sites(source)
    code, message = site.problem
    assert code == "MGPU103" and advice in message and "rerun" in message
