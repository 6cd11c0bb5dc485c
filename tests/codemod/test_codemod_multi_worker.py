"""codemod/fixers/multi_worker.py: `--strategy multi-worker` (MultiWorkerMirroredStrategy, chief-aware saving)."""

import json
import os
import shutil
import subprocess
import sys

import libcst as cst
import pytest

from multi_gpu_codemod import transform_source
from multi_gpu_codemod.cli import main
from multi_gpu_codemod.fixers.multi_worker import _HELPER
from codemod_fixtures import ROOT, check_pair, check_source_pair, needs_tensorflow, pairs

EXPECTED = {
    "hoist_after_imports.before.py": [],
    "in_function.before.py": ["MGPU701", "MGPU702"],
    "runs_single_worker.before.py": [],
}


@pytest.mark.parametrize("before", pairs("multi_worker"), ids=lambda p: p.name)
def test_fixture_pairs(before):
    assert sorted(check_pair(before, strategy="multi-worker")) == EXPECTED[before.name]


@pytest.mark.parametrize("before", pairs("multi_worker"), ids=lambda p: p.name)
def test_default_is_still_mirrored(before):
    source = before.read_bytes()
    default = transform_source(source).output
    assert transform_source(source, strategy="mirrored").output == default
    assert b"MultiWorkerMirroredStrategy" not in default and b"_chief_path" not in default
    assert b"tf.distribute.MirroredStrategy(" in default


def test_unknown_strategy_is_refused():
    with pytest.raises(ValueError, match="multi-worker"):
        transform_source(b"x = 1\n", strategy="multiworker")


# before -> after under `--strategy multi-worker`, and the findings the rewrite still reports.
REWRITES = [
    pytest.param(
        'import os\n'
        'import tensorflow as tf\n'
        'from keras.utils import multi_gpu_model\n'
        'os.environ["TF_CONFIG"] = "{}"\n'
        'data = tf.ones((4, 2))\n'
        'model = build()\n'
        'model = multi_gpu_model(model)\n'
        "model.compile('sgd', 'mse')\n",
        'import os\n'
        'import tensorflow as tf\n'
        'os.environ["TF_CONFIG"] = "{}"\n'
        '\n'
        "# multi-gpu-codemod: MultiWorkerMirroredStrategy must exist before TensorFlow's first op: created here,"
        ' right after the imports.\n'
        'strategy = tf.distribute.MultiWorkerMirroredStrategy()\n'
        '\n'
        'data = tf.ones((4, 2))\n'
        'with strategy.scope():\n'
        '    model = build()\n'
        "    model.compile('sgd', 'mse')\n",
        [],
        id='strategy-hoisted-past-tf-ops-not-past-environment-setup',
    ),
    pytest.param(
        'import tensorflow as tf\n'
        'from keras.utils import multi_gpu_model\n'
        'EPOCHS = 3\n'
        'model = build()\n'
        'model = multi_gpu_model(model, gpus=2)\n'
        "model.compile('sgd', 'mse')\n",
        'import tensorflow as tf\n'
        'EPOCHS = 3\n'
        '# multi-gpu-codemod: dropped `gpus=2`: MultiWorkerMirroredStrategy uses every GPU a worker sees; limit them'
        ' per worker with CUDA_VISIBLE_DEVICES.\n'
        'strategy = tf.distribute.MultiWorkerMirroredStrategy()\n'
        'with strategy.scope():\n'
        '    model = build()\n'
        "    model.compile('sgd', 'mse')\n",
        [],
        id='no-hoist-when-nothing-runs-before',
    ),
    pytest.param(
        'from keras.utils import multi_gpu_model\n'
        'G = 2\n'
        'a = build()\n'
        'if G > 1:\n'
        '    a = multi_gpu_model(a)\n'
        "a.compile('sgd', 'mse')\n"
        'b = build()\n'
        'b = multi_gpu_model(b, gpus=2)\n'
        "b.compile('sgd', 'mse')\n",
        'import tensorflow as tf\n'
        '\n'
        'G = 2\n'
        '# multi-gpu-codemod: dropped the one-device guard: MultiWorkerMirroredStrategy uses every GPU a worker'
        ' sees; limit them per worker with CUDA_VISIBLE_DEVICES.\n'
        'strategy = tf.distribute.MultiWorkerMirroredStrategy()\n'
        'with strategy.scope():\n'
        '    a = build()\n'
        "    a.compile('sgd', 'mse')\n"
        '# multi-gpu-codemod: dropped `gpus=2`: MultiWorkerMirroredStrategy uses every GPU a worker sees; limit them'
        ' per worker with CUDA_VISIBLE_DEVICES.\n'
        'strategy = tf.distribute.MultiWorkerMirroredStrategy()\n'
        'with strategy.scope():\n'
        '    b = build()\n'
        "    b.compile('sgd', 'mse')\n",
        ['MGPU701'],
        id='guard-only-is-noted-and-second-strategy-is-reported',
    ),
    pytest.param(
        'from keras.utils import multi_gpu_model\n'
        "_chief_path = 'taken'\n"
        'model = build()\n'
        'model = multi_gpu_model(model, gpus=2)\n'
        "model.compile('sgd', 'mse')\n"
        'model.save(**options)\n'
        'model.save_weights(_chief_path)\n',
        'import tensorflow as tf\n'
        '\n'
        '\n'
        'def _chief_path_2(path):  # multi-gpu-codemod: multi-worker: only the chief keeps what it saves\n'
        '    """`path` on the chief (TF_CONFIG\'s "chief" task, else worker 0, or the only process);\n'
        '    on the other workers the same file name in a temporary directory removed at exit.\n'
        '    Every worker must still save: saving reads synchronised variables (a collective op)."""\n'
        '    import atexit\n'
        '    import json\n'
        '    import os\n'
        '    import shutil\n'
        '    import tempfile\n'
        '\n'
        '    config = json.loads(os.environ.get("TF_CONFIG") or "{}")\n'
        '    task = config.get("task") or {}\n'
        '    kind, index = task.get("type", "worker"), int(task.get("index", 0))\n'
        '    if kind == "chief" or (kind == "worker" and index == 0 and "chief" not in config.get("cluster", {})):\n'
        '        return path\n'
        '    scratch = getattr(_chief_path_2, "scratch", None)\n'
        '    if scratch is None:\n'
        '        scratch = _chief_path_2.scratch = tempfile.mkdtemp(prefix=f"{kind}-{index}-")\n'
        '        atexit.register(shutil.rmtree, scratch, ignore_errors=True)\n'
        '    return os.path.join(scratch, os.path.basename(os.path.normpath(os.fspath(path))))\n'
        '\n'
        '\n'
        "_chief_path = 'taken'\n"
        '# multi-gpu-codemod: dropped `gpus=2`: MultiWorkerMirroredStrategy uses every GPU a worker sees; limit them'
        ' per worker with CUDA_VISIBLE_DEVICES.\n'
        'strategy = tf.distribute.MultiWorkerMirroredStrategy()\n'
        'with strategy.scope():\n'
        '    model = build()\n'
        "    model.compile('sgd', 'mse')\n"
        'model.save(**options)\n'
        'model.save_weights(_chief_path_2(_chief_path))\n',
        ['MGPU702'],
        id='unreadable-save-is-reported-and-helper-name-is-free',
    ),
    pytest.param(
        'from keras.utils import multi_gpu_model\n'
        'model = build()\n'
        'model = multi_gpu_model(model, gpus=min(\n'
        '    8,\n'
        '    4))\n'
        "model.compile('sgd', 'mse')\n",
        'import tensorflow as tf\n'
        '\n'
        '# multi-gpu-codemod: dropped `gpus=min( 8, 4)`: MultiWorkerMirroredStrategy uses every GPU a worker sees;'
        ' limit them per worker with CUDA_VISIBLE_DEVICES.\n'
        'strategy = tf.distribute.MultiWorkerMirroredStrategy()\n'
        'with strategy.scope():\n'
        '    model = build()\n'
        "    model.compile('sgd', 'mse')\n",
        [],
        id='multiline-gpus-becomes-one-comment-line',
    ),
]


@pytest.mark.parametrize("before,after,findings", REWRITES)
def test_rewrite(before, after, findings):
    assert check_source_pair(before, after, strategy="multi-worker") == findings


def _run_helper(tmp_path, tf_config):
    script = tmp_path / "helper.py"
    script.write_text(_HELPER.format(name="_chief_path") + (
        "import os, sys\n"
        "p = _chief_path(sys.argv[1])\n"
        "os.makedirs(os.path.dirname(p) or '.', exist_ok=True)\n"
        "open(p, 'w').write('x')\n"
        "print(p)\n"
    ))
    env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    if tf_config is not None:
        env["TF_CONFIG"] = json.dumps(tf_config)
    done = subprocess.run([sys.executable, str(script), "out/model.keras"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize("config, chief", [
    (None, True),
    ({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 0}}, True),
    ({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 1}}, False),
    ({"cluster": {"chief": ["c:1"], "worker": ["a:1"]}, "task": {"type": "chief", "index": 0}}, True),
    ({"cluster": {"chief": ["c:1"], "worker": ["a:1"]}, "task": {"type": "worker", "index": 0}}, False),
])
def test_chief_path_helper(tmp_path, config, chief):
    written = _run_helper(tmp_path, config)
    if chief:
        assert written == "out/model.keras" and (tmp_path / written).exists()
    else:
        assert written.endswith("model.keras") and os.path.isabs(written)
        assert not os.path.exists(os.path.dirname(written)), "a non-chief's scratch directory is removed at exit"
        assert not (tmp_path / "out" / "model.keras").exists()


def test_cli_option(tmp_path, capsys):
    script = tmp_path / "train.py"
    shutil.copy(ROOT / "multi_worker" / "in_function.before.py", script)
    notebook = tmp_path / "nb.ipynb"
    notebook.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    assert main(["--strategy", "multi-worker", "-j", "1", str(script), str(notebook)]) == 1
    assert script.read_bytes() == (ROOT / "multi_worker" / "in_function.after.py").read_bytes()
    out = capsys.readouterr().out
    assert "MGPU701" in out and "MGPU702" in out and "MGPU703" in out
    shutil.copy(ROOT / "multi_worker" / "in_function.before.py", script)
    assert main(["--diff", str(script)]) == 1
    assert "MultiWorkerMirroredStrategy" not in capsys.readouterr().out


def test_libcst_command_takes_the_option():
    from libcst.codemod import CodemodContext

    from multi_gpu_codemod.command import MigrateMultiGpuCommand

    before = ROOT / "multi_worker" / "in_function.before.py"
    command = MigrateMultiGpuCommand(CodemodContext(filename=before.name), strategy="multi-worker")
    new = command.transform_module(cst.parse_module(before.read_bytes()))
    assert new.bytes == (ROOT / "multi_worker" / "in_function.after.py").read_bytes()
    assert MigrateMultiGpuCommand(CodemodContext()).strategy == "mirrored"


@needs_tensorflow
@pytest.mark.slow
def test_migrated_fixture_runs_as_one_worker_and_saves(tmp_path):
    script = tmp_path / "train.py"
    shutil.copy(ROOT / "multi_worker" / "runs_single_worker.after.py", script)
    env = {k: v for k, v in os.environ.items() if k not in ("TF_CONFIG", "MULTI_GPU_COMPAT_SIMULATE_GPUS")}
    env.update(TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "LOADED ['input_layer', 'dense']" in done.stdout, done.stdout[-2000:]
    assert (tmp_path / "final.keras").exists() and (tmp_path / "best.keras").exists()
