"""codemod/value_uses.py (and its reports in leftovers.py and strategy_scope.py): `multi_gpu_model`
used as a value, not called, is reported at each use and keeps every site of the file."""

import pytest

from multi_gpu_codemod import transform_source
from multi_gpu_codemod.value_uses import value_uses
from multi_gpu_codemod._tree import Tree

import libcst as cst

_MODEL = (
    "from keras.layers import Dense\nfrom keras.models import Sequential\n"
    "net = Sequential([Dense(2, input_shape=(3,))])\n"
)

CASES = {
    "partial": (
        "from functools import partial\nfrom keras.utils import multi_gpu_model\n" + _MODEL
        + "wrap = partial(multi_gpu_model, gpus=2)\nwide = wrap(net)\nwide.compile('sgd', 'mse')\n",
        [(6, "MGPU404")],
    ),
    "chosen by a conditional expression": (
        "from keras.utils import multi_gpu_model\n" + _MODEL
        + "G = 2\nwrap = multi_gpu_model if G > 1 else (lambda m, gpus: m)\nwide = wrap(net, gpus=G)\n"
          "wide.compile('sgd', 'mse')\n",
        [(6, "MGPU404")],
    ),
    "passed by keyword": (
        "from keras.utils import multi_gpu_model\n" + _MODEL
        + "def train(model, parallelizer):\n    p = parallelizer(model, gpus=2)\n    p.compile('sgd', 'mse')\n"
          "train(net, parallelizer=multi_gpu_model)\n",
        [(8, "MGPU404")],
    ),
    "an alias of the import": (
        "from keras.utils import multi_gpu_model as mgm\n" + _MODEL + "helpers = {'parallel': mgm}\n",
        [(5, "MGPU404")],
    ),
    "through the module": (
        "import keras\n" + _MODEL + "wrap = keras.utils.multi_gpu_model\n",
        [(5, "MGPU404")],
    ),
    "tested before the call": (
        "from keras.utils import multi_gpu_model\n" + _MODEL
        + "if multi_gpu_model is not None:\n    wide = multi_gpu_model(net, gpus=2)\nelse:\n    wide = net\n"
          "wide.compile('sgd', 'mse')\n",
        [(5, "MGPU404"), (6, "MGPU120")],
    ),
    "bound to None when the import fails": (
        "try:\n    from keras.utils import multi_gpu_model\nexcept ImportError:\n    multi_gpu_model = None\n"
        + _MODEL + "if multi_gpu_model:\n    wide = multi_gpu_model(net, gpus=2)\n    wide.compile('sgd', 'mse')\n",
        [(8, "MGPU404"), (9, "MGPU403")],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_value_use_is_reported_and_nothing_is_rewritten(name):
    source, expected = CASES[name]
    result = transform_source(source.encode(), "train.py")
    assert result.output == source.encode(), "a file that keeps a value use of the function is left as it is"
    found = [(f.line, f.code) for f in result.findings if f.code in ("MGPU120", "MGPU403", "MGPU404")]
    assert found == expected, [f.format() for f in result.findings]


def test_tested_use_says_the_test_is_always_true_and_a_stored_one_does_not():
    tested = transform_source(CASES["tested before the call"][0].encode(), "t.py").findings
    stored = transform_source(CASES["chosen by a conditional expression"][0].encode(), "s.py").findings
    assert "always true" in next(f.message for f in tested if f.code == "MGPU404")
    assert "always true" not in next(f.message for f in stored if f.code == "MGPU404")


def test_the_call_names_the_other_binding_line():
    findings = transform_source(CASES["bound to None when the import fails"][0].encode(), "n.py").findings
    message = next(f.message for f in findings if f.code == "MGPU403")
    assert "(line 4)" in message and "multi_gpu_model = None" in message


def test_the_call_left_for_its_other_binding_is_a_reported_site_in_the_tally():
    """Round 57, ax05: the MGPU403 call was reported but missing from "N call sites: ... reported"."""
    sites = transform_source(CASES["bound to None when the import fails"][0].encode(), "n.py").sites
    assert [(s.line, s.name, s.status, s.codes) for s in sites] == [(9, "multi_gpu_model", "reported", ("MGPU403",))]


@pytest.mark.parametrize("source", [
    "from keras.utils import multi_gpu_model\n" + _MODEL + "wide = multi_gpu_model(net, gpus=2)\n",
    "from mylib import multi_gpu_model\nwrap = multi_gpu_model\n",  # another library's function of that name
    "multi_gpu_model = 'a label'\nprint(multi_gpu_model)\n",
    # Names spelt like it that are no read of it: a keyword, a `global`, a parameter.
    "from keras.utils import multi_gpu_model\ntrain(multi_gpu_model=True)\n"
    "def run(multi_gpu_model=None):\n    global G\n",
    "from keras.utils import multi_gpu_model\ndef setup():\n    global multi_gpu_model\n",
])
def test_calls_imports_and_other_values_are_not_value_uses(source):
    assert value_uses(Tree(cst.parse_module(source))) == []
