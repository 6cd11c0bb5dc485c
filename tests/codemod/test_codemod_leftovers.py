"""codemod/fixers/leftovers.py: what still fails at run time is reported, never silent."""

import pytest

from multi_gpu_codemod import transform_source
from codemod_fixtures import check_unchanged, reported, unchanged

# Each file's findings exactly as the command line prints them: the module, the reason and the fix.
EXPECTED = {
    'commented_out_import.unchanged.py': [
        'commented_out_import.unchanged.py:5:9: MGPU107 `multi_gpu_model` is called here but not imported or defined'
        ' in this file: this line raises NameError. Build and compile the model under'
        " `with tf.distribute.MirroredStrategy().scope():` and use it instead of the call's result; or import it by"
        ' name from `keras.utils` and rerun the codemod.',
    ],
    'vendored_copy.unchanged.py': [
        'vendored_copy.unchanged.py:6:12: MGPU108 `multi_gpu_model` here comes from `utils.multi_gpu_utils`, a'
        " module of this project or another package, not from Keras: the codemod rewrites only Keras's function."
        " If `utils.multi_gpu_utils` is a copy of Keras's `multi_gpu_model`, build and compile the model under `with"
        " tf.distribute.MirroredStrategy().scope():`, use the model instead of the call's result, then delete the"
        ' copy.',
    ],
    'relative_import.unchanged.py': [
        'relative_import.unchanged.py:5:12: MGPU108 `multi_gpu_model` here comes from `.parallel`, a module of this'
        " project, not from Keras: the codemod rewrites only Keras's function. If `.parallel` is a copy of Keras's"
        ' `multi_gpu_model`, build and compile the model under `with tf.distribute.MirroredStrategy().scope():`, use'
        " the model instead of the call's result, then delete the copy.",
    ],
    'wrapper_class_defined.unchanged.py': [
        'wrapper_class_defined.unchanged.py:5:1: MGPU402 `ModelMGPU` (defined here) calls `multi_gpu_model`, which'
        ' Keras removed: importing this module fails without multi-gpu-compat. The codemod rewrites `ModelMGPU(...)`'
        ' calls in the files that import `ModelMGPU` by that name; once none is left, delete `ModelMGPU`.',
        'wrapper_class_defined.unchanged.py:12:1: MGPU402 `make_parallel` (defined here) calls `multi_gpu_model`,'
        ' which Keras removed: importing this module fails without multi-gpu-compat. The codemod rewrites'
        ' `make_parallel(...)` calls in the files that import `make_parallel` by that name; once none is left,'
        ' delete `make_parallel`.',
    ],
    'renamed_wrapper_class.unchanged.py': [
        'renamed_wrapper_class.unchanged.py:5:1: MGPU402 `ParallelNet` (defined here) calls `multi_gpu_model`, which'
        ' Keras removed: importing this module fails without multi-gpu-compat. The codemod reads one file at a time'
        ' and does not recognise `ParallelNet(...)` calls in the files that import it (it reports them as MGPU111):'
        ' in each, build and compile the model under `with tf.distribute.MirroredStrategy().scope():` and use it'
        ' instead of the `ParallelNet` instance; then delete `ParallelNet`.',
    ],
    'imported_wrapper_user.unchanged.py': [
        'imported_wrapper_user.unchanged.py:7:11: MGPU111 `ParallelNet` comes from `training.parallel_net`, a module'
        ' of this project or another package, and is called like a multi-GPU wrapper (a model, then `2`); the'
        ' codemod cannot see whether it calls `multi_gpu_model`. If it does, build and compile `net` under `with'
        ' tf.distribute.MirroredStrategy().scope():` and use it instead of the `ParallelNet(...)` result; this call'
        ' is left as it is.',
    ],
}


def test_every_case_has_its_expectation():
    assert {p.name for p in unchanged("leftovers")} == set(EXPECTED)


@pytest.mark.parametrize("path", unchanged("leftovers"), ids=lambda p: p.name)
def test_unchanged_but_reported(path):
    check_unchanged(path)
    assert reported(path.read_bytes(), path.name) == EXPECTED[path.name]


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


def test_only_a_relative_import_is_said_to_be_this_projects():
    """Round 58, az19: `mrcnn.parallel_model` is usually the installed Matterport package."""
    relative = reported(b"from .parallel import ParallelNet\nnet = build()\npar = ParallelNet(net, 2)\n")
    assert "comes from `.parallel`, a module of this project, and" in relative[0]


def test_wrapper_reached_through_its_module_is_reported():
    source = b"import training.parallel_net as pn\nnet = build()\npar = pn.ParallelNet(net, gpus=2)\n"
    assert reported(source) == [
        'table.py:3:7: MGPU111 `ParallelNet` comes from `training.parallel_net`, a module of this project or another'
        ' package, and is called like a multi-GPU wrapper (a model, then `2`); the codemod cannot see whether it calls'
        ' `multi_gpu_model`. If it does, build and compile `net` under `with'
        ' tf.distribute.MirroredStrategy().scope():` and use it instead of the `ParallelNet(...)` result; this call'
        ' is left as it is.',
    ]
