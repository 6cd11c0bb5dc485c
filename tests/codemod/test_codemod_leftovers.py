"""codemod/fixers/leftovers.py: what still fails at run time is reported, never silent."""

import pytest

from multi_gpu_codemod import transform_source
from codemod_fixtures import ROOT, check_unchanged, unchanged

EXPECTED = {
    "commented_out_import.unchanged.py": [(5, "MGPU107")],
    "vendored_copy.unchanged.py": [(6, "MGPU108")],
    "relative_import.unchanged.py": [(5, "MGPU108")],
    "wrapper_class_defined.unchanged.py": [(5, "MGPU402"), (12, "MGPU402")],
    "renamed_wrapper_class.unchanged.py": [(5, "MGPU402")],
    "imported_wrapper_user.unchanged.py": [(7, "MGPU111")],
}


def test_every_case_has_its_expectation():
    assert {p.name for p in unchanged("leftovers")} == set(EXPECTED)


@pytest.mark.parametrize("path", unchanged("leftovers"), ids=lambda p: p.name)
def test_unchanged_but_reported(path):
    check_unchanged(path)
    findings = transform_source(path.read_bytes(), path.name).findings
    assert [(f.line, f.code) for f in findings] == EXPECTED[path.name]


def test_messages_name_the_module_and_the_fix():
    (finding,) = transform_source((ROOT / "leftovers" / "vendored_copy.unchanged.py").read_bytes()).findings
    assert "`utils.multi_gpu_utils`" in finding.message and "MirroredStrategy().scope()" in finding.message
    (finding,) = transform_source((ROOT / "leftovers" / "commented_out_import.unchanged.py").read_bytes()).findings
    assert "NameError" in finding.message and "import it by name" in finding.message


@pytest.mark.parametrize("source", [
    # another library's function of that name: its own arguments
    b"from lib.multi_gpu_frame import multi_gpu_model\njob = multi_gpu_model(config='a.yml', ratios=[1, 2])\n",
    # the module's own definition
    b"def multi_gpu_model(model, gpus=1):\n    return model\n\nnet = multi_gpu_model(net, gpus=4)\n",
    # commented-out call
    b"# parallel = multi_gpu_model(model, gpus=2)\nx = 1\n",
])
def test_what_is_not_a_leftover_stays_quiet(source):
    result = transform_source(source)
    assert result.output == source and result.findings == []


def test_renamed_wrapper_definition_claims_no_rewrite_elsewhere():
    (finding,) = transform_source((ROOT / "leftovers" / "renamed_wrapper_class.unchanged.py").read_bytes()).findings
    assert "does not recognise `ParallelNet(...)` calls" in finding.message and "MGPU111" in finding.message
    assert "rewrites" not in finding.message


def test_known_wrapper_definition_says_its_users_are_rewritten():
    findings = transform_source((ROOT / "leftovers" / "wrapper_class_defined.unchanged.py").read_bytes()).findings
    assert any("rewrites `ModelMGPU(...)` calls" in f.message for f in findings)


def test_wrapper_reached_through_its_module_is_reported():
    source = b"import training.parallel_net as pn\nnet = build()\npar = pn.ParallelNet(net, gpus=2)\n"
    (finding,) = transform_source(source).findings
    assert (finding.line, finding.code) == (3, "MGPU111") and "`training.parallel_net`" in finding.message


def test_imported_wrapper_call_names_module_and_template():
    (finding,) = transform_source((ROOT / "leftovers" / "imported_wrapper_user.unchanged.py").read_bytes()).findings
    assert "`training.parallel_net`" in finding.message and "build and compile `net`" in finding.message


@pytest.mark.parametrize("source", [
    # a library's class of a wrapper-like name
    b"from torch.nn import DataParallel\nnet = DataParallel(net, 2)\n",
    b"import torch\nnet = torch.nn.DataParallel(net, 2)\n",
    b"import torch.nn as nn\nnet = nn.DataParallel(net, 2)\n",
    # a project name that is not wrapper-like
    b"from training.pool import ThreadPool\npool = ThreadPool(net, 4)\n",
    # wrapper-like but not called like one (one argument, no GPU keyword)
    b"from training.parallel_net import ParallelNet\nnet = ParallelNet(config)\n",
])
def test_other_imported_calls_are_quiet(source):
    assert transform_source(source).findings == []
