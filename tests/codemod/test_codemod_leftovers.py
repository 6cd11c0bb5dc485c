"""codemod/fixers/leftovers.py: what still fails at run time is reported, never silent."""

import pytest

from codemod import transform_source
from codemod_fixtures import ROOT, check_unchanged, unchanged

EXPECTED = {
    "commented_out_import.unchanged.py": [(5, "MGPU107")],
    "vendored_copy.unchanged.py": [(6, "MGPU108")],
    "relative_import.unchanged.py": [(5, "MGPU108")],
    "wrapper_class_defined.unchanged.py": [(5, "MGPU402"), (12, "MGPU402")],
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
