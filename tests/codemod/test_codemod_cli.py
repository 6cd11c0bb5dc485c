"""codemod/cli.py and codemod/files.py: modes, exit codes, summary, walking, safe writes."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from multi_gpu_codemod.cli import main
from codemod_fixtures import ROOT

LEGACY = (ROOT / "seed" / "xception_doc.before.py").read_bytes()
MIGRATED = (ROOT / "seed" / "xception_doc.after.py").read_bytes()


def test_rewrites_in_place_keeping_mode(tmp_path, capsys):
    script = tmp_path / "train.py"
    script.write_bytes(LEGACY)
    script.chmod(0o751)
    assert main([str(tmp_path)]) == 1
    assert script.read_bytes() == MIGRATED
    assert script.stat().st_mode & 0o777 == 0o751
    assert [p.name for p in tmp_path.iterdir()] == ["train.py"]  # no temp files left
    out = capsys.readouterr().out
    assert out.endswith(f"{script}:23:18: multi_gpu_model rewritten\n"
                        "1 file scanned, 1 rewritten, 0 need attention, 0 failed; 1 call site: 1 rewritten, 0 "
                        "reported, "
                        "0 untouched\n")
    assert main([str(tmp_path)]) == 0  # second run: nothing to do


def test_diff_and_check_write_nothing(tmp_path, capsys):
    script = tmp_path / "train.py"
    script.write_bytes(LEGACY)
    assert main(["--diff", str(script)]) == 1
    out = capsys.readouterr()
    assert out.out.startswith(f"--- a/{script}") and "+with strategy.scope():" in out.out
    assert "1 would be rewritten" in out.err
    assert main(["--check", str(script)]) == 1
    assert script.read_bytes() == LEGACY


def test_findings_format_and_exit_code(tmp_path, capsys):
    shutil.copy(ROOT / "strategy_scope" / "template_is_parameter.unchanged.py", tmp_path / "lib.py")
    assert main([str(tmp_path)]) == 1
    line = capsys.readouterr().out.splitlines()[0]
    assert line.startswith(f"{tmp_path / 'lib.py'}:5:16: MGPU101 ")


def test_unparseable_file_fails_with_2_and_is_untouched(tmp_path, capsys):
    bad = tmp_path / "py2.py"
    bad.write_bytes(b'print "x"\n')
    assert main([str(bad)]) == 2
    assert bad.read_bytes() == b'print "x"\n'
    assert "MGPU501" in capsys.readouterr().out


def test_walk_skips_venvs_builds_and_gitignored(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    for rel in ["keep.py", ".venv/lib/x.py", "myenv/a.py", "build/b.py", "pkg/site-packages/c.py", "ignored/d.py",
                ".git/e.py"]:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(LEGACY)
    (tmp_path / "myenv" / "pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / ".gitignore").write_text("ignored/\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert main(["--check", str(tmp_path)]) == 1
    from multi_gpu_codemod.files import iter_python_files

    assert [p.relative_to(tmp_path).as_posix() for p in iter_python_files([tmp_path])] == ["keep.py"]


def test_python_dash_m_and_no_tensorflow_import(tmp_path):
    script = tmp_path / "t.py"
    script.write_bytes(LEGACY)
    probe = "import sys, runpy; sys.argv=['multi-gpu-codemod','--check',sys.argv[1]]\n" \
            "try:\n    runpy.run_module('multi_gpu_codemod', run_name='__main__')\nexcept SystemExit as e:\n" \
            "    assert 'tensorflow' not in sys.modules; sys.exit(e.code)\n"
    done = subprocess.run([sys.executable, "-c", probe, str(script)], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 1, done.stderr
    assert "1 would be rewritten" in done.stdout


def test_libcst_tool_command(tmp_path):
    script = tmp_path / "t.py"
    script.write_bytes(LEGACY)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / ".dev")}
    done = subprocess.run(
        [sys.executable, "-m", "libcst.tool", "codemod", "-x", "multi_gpu_codemod.command.MigrateMultiGpuCommand",
         "--no-format", str(script)],
        capture_output=True, text=True, cwd=tmp_path, env=env,
    )
    assert done.returncode == 0, done.stderr
    assert script.read_bytes() == MIGRATED


def test_crlf_latin1_bytes_kept():
    from multi_gpu_codemod import transform_source

    source = (ROOT / "imports" / "crlf_latin1.before.py").read_bytes()
    out = transform_source(source).output
    assert b"\r\n" in out and b"\n" not in out.replace(b"\r\n", b"")
    assert b"# caf\xe9\r\n" in out and out.decode("latin-1")


def test_every_finding_code_is_documented():
    from multi_gpu_codemod import CODES

    guide = (Path(__file__).resolve().parents[2] / "MIGRATION.md").read_text()
    assert [c for c in CODES if f"| {c} |" not in guide] == []


@pytest.mark.parametrize("how", ["python -m", "console script"])
def test_a_users_codemod_module_in_the_folder_is_never_run(tmp_path, how):
    # Repositories have their own codemod.py, and PyPI's `codemod` installs a top-level package:
    # ours is installed as `multi_gpu_codemod`, so neither is picked up.
    (tmp_path / "codemod.py").write_text("raise SystemExit('the user\\'s codemod.py ran')\n")
    (tmp_path / "train.py").write_bytes(LEGACY)
    argv = ([sys.executable, "-m", "multi_gpu_codemod"] if how == "python -m"
            else [str(Path(sys.executable).parent / "multi-gpu-codemod")])
    done = subprocess.run(argv + ["--check", "train.py"], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "1 would be rewritten" in done.stdout


def test_migrate_is_a_subcommand_and_the_default(tmp_path, capsys):
    for n, argv in enumerate((["migrate"], [])):
        script = tmp_path / f"train_{n}.py"
        script.write_bytes(LEGACY)
        assert main([*argv, "--check", str(script)]) == 1
        assert "1 would be rewritten" in capsys.readouterr().out


def test_a_folder_named_like_a_subcommand_is_migrated_after_migrate(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "verify").mkdir()
    (tmp_path / "verify" / "train.py").write_bytes(LEGACY)
    assert main(["migrate", "--check", "verify"]) == 1
    assert "1 would be rewritten" in capsys.readouterr().out
    assert main(["--check", "./verify"]) == 1
    assert main(["migrate", "verify"]) == 1
    assert (tmp_path / "verify" / "train.py").read_bytes() == MIGRATED


def test_help_lists_both_subcommands_and_verify_has_its_own(capsys):
    with pytest.raises(SystemExit) as ended:
        main(["--help"])
    assert ended.value.code == 0
    out = capsys.readouterr().out
    assert "migrate" in out and "verify" in out
    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    out = capsys.readouterr().out
    assert "--gpus" in out and "--diff" not in out


@pytest.mark.parametrize("gpus", ["1", "0", "two"])
def test_verify_usage_errors_name_the_argument(tmp_path, capsys, gpus):
    script = tmp_path / "train.py"
    script.write_bytes(LEGACY)
    with pytest.raises(SystemExit) as ended:
        main(["verify", str(script), "--gpus", gpus])
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert "--gpus" in err and "at least 2" in err and repr(gpus) in err


def test_no_arguments_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as ended:
        main([])
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert "usage: multi-gpu-codemod migrate" in err and "required: PATH" in err


def test_verify_refuses_a_notebook_with_the_export_command(tmp_path, capsys):
    notebook = tmp_path / "train.ipynb"
    notebook.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    assert main(["verify", str(notebook)]) == 2
    assert "jupyter nbconvert --to script" in capsys.readouterr().err
