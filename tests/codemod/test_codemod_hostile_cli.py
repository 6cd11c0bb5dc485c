"""The command line under hostile use: the report never costs an input, names cannot forge lines,
skips are said, edge values of the options are usage errors, many workers stay within bounds."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys

import pytest

from multi_gpu_codemod import arguments, isolation, reports, run_files, transform_source
from multi_gpu_codemod.cli import main
from codemod_fixtures import ROOT

LEGACY = (ROOT / "seed" / "xception_doc.before.py").read_bytes()
MIGRATED = (ROOT / "seed" / "xception_doc.after.py").read_bytes()
SMALL_LEGACY = (
    b"from keras.utils import multi_gpu_model\n"
    b"model = build()\n"
    b"parallel = multi_gpu_model(model, gpus=2)\n"
    b'parallel.compile("sgd", "mse")\n'
)


def _error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err.strip()


# --- the report: never an input, never a directory, never through a symlink onto an input ------------

@pytest.mark.parametrize("spelling", ["same", "relative", "dot-dot", "hard link", "symlink"])
def test_report_that_is_an_input_is_refused_and_the_input_kept(tmp_path, capsys, monkeypatch, spelling):
    script = tmp_path / "train.py"
    script.write_bytes(LEGACY)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    report = {"same": "train.py", "relative": "./train.py", "dot-dot": "sub/../train.py",
              "hard link": "sub/report.txt", "symlink": "sub/report.txt"}[spelling]
    if spelling == "hard link":
        os.link(script, tmp_path / report)
    elif spelling == "symlink":
        (tmp_path / report).symlink_to(script)
    assert main(["--report", report, "train.py"]) == 2
    assert script.read_bytes() == LEGACY
    assert "is one of the files being migrated" in _error_line(capsys)


def test_report_that_is_a_walked_file_or_notebook_is_refused(tmp_path, capsys):
    shutil.copy(ROOT / "notebooks" / "train.before.ipynb", tmp_path / "nb.ipynb")
    before = (tmp_path / "nb.ipynb").read_bytes()
    for report in (tmp_path / "nb.ipynb", tmp_path / "deeper" / ".." / "nb.ipynb"):
        (tmp_path / "deeper").mkdir(exist_ok=True)
        assert main(["--report", str(report), str(tmp_path)]) == 2
        assert "is one of the files being migrated" in _error_line(capsys)
    assert (tmp_path / "nb.ipynb").read_bytes() == before


def test_report_that_is_a_directory_is_refused(tmp_path, capsys):
    (tmp_path / "train.py").write_bytes(SMALL_LEGACY)
    assert main(["--report", str(tmp_path), str(tmp_path / "train.py")]) == 2
    assert "is a directory" in _error_line(capsys)
    assert (tmp_path / "train.py").read_bytes() == SMALL_LEGACY


def test_report_through_another_users_symlink_is_refused(tmp_path, capsys):
    if os.geteuid() != 0:
        pytest.skip("only root can make a symlink owned by another user")
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    (tmp_path / "train.py").write_bytes(SMALL_LEGACY)
    planted = tmp_path / "report.txt"
    planted.symlink_to(victim)
    os.lchown(planted, 4321, 4321)
    assert main(["--check", "--report", str(planted), str(tmp_path / "train.py")]) == 2
    assert "symbolic link owned by another user" in _error_line(capsys)
    assert victim.read_text() == "keep me\n"


def test_report_is_written_atomically_once_the_run_is_over(tmp_path, capsys, monkeypatch):
    script = tmp_path / "train.py"
    script.write_bytes(SMALL_LEGACY)
    report = tmp_path / "out" / "report.txt"
    report.parent.mkdir()
    report.write_text("old report\n")
    seen = []
    real = run_files.outcomes

    def watching(*args, **kwargs):
        for outcome in real(*args, **kwargs):
            seen.append(report.read_text())  # during the run: the old report, whole
            yield outcome

    monkeypatch.setattr(run_files, "outcomes", watching)
    assert main(["--report", str(report), str(script)]) == 1
    assert seen == ["old report\n"]
    assert report.read_text().endswith("1 file scanned, 1 rewritten, 0 need attention, 0 failed; 1 call site: 1 "
                                       "rewritten, 0 reported, "
                                         "0 untouched\n")
    assert sorted(p.name for p in report.parent.iterdir()) == ["report.txt"]  # no temporary file left


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_report_to_a_full_device_is_one_line_and_exit_2_with_the_results_kept(tmp_path, capsys):
    script = tmp_path / "train.py"
    script.write_bytes(SMALL_LEGACY)
    clean = tmp_path / "clean.py"
    clean.write_text("x = 1\n")
    assert main(["--report", "/dev/full", str(clean)]) == 2
    line = _error_line(capsys)
    assert line.startswith("multi-gpu-codemod: error: cannot write the report to /dev/full: ")
    assert main(["--report", "/dev/full", str(script)]) == 2
    capsys.readouterr()
    assert script.read_bytes() != SMALL_LEGACY and b"strategy.scope()" in script.read_bytes()  # result kept


def test_report_written_after_the_run_can_fail_without_a_traceback(tmp_path, capsys, monkeypatch):
    script = tmp_path / "train.py"
    script.write_bytes(SMALL_LEGACY)

    def full(report, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(reports, "write_report", full)
    assert main(["--report", str(tmp_path / "r.txt"), str(script)]) == 2
    captured = capsys.readouterr()
    assert "No space left on device" in captured.err and "Traceback" not in captured.err
    assert "1 rewritten" in captured.out  # the summary still says what happened to the files


def test_report_to_a_device_is_written_straight(tmp_path, capsys):
    (tmp_path / "clean.py").write_text("x = 1\n")
    assert main(["--report", "/dev/null", str(tmp_path / "clean.py")]) == 0
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")


# --- unwrap-style planted names: the writer's temporary file is random and exclusive -------------

def test_atomic_writer_never_follows_a_planted_temporary_name(tmp_path, monkeypatch):
    from multi_gpu_codemod import atomic_write

    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    target = tmp_path / "report.txt"
    for name in (".report.txt.tmp", ".report.txt.unwrap-tmp.txt", ".report.txt.0.tmp"):
        (tmp_path / name).symlink_to(victim)
    atomic_write.write_new_file(target, b"new\n")
    assert target.read_bytes() == b"new\n" and victim.read_text() == "keep me\n"
    with atomic_write.output_path(tmp_path / "model.keras", ".keras") as temp:
        assert temp.parent.parent == tmp_path and oct(temp.parent.stat().st_mode & 0o777) == "0o700"
        temp.write_bytes(b"model")
    assert (tmp_path / "model.keras").read_bytes() == b"model"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".model.keras")]


# --- -j: capped, 0 and negatives refused --------------------------------------------------------

@pytest.mark.parametrize("bad", ["0", "-1", "-1000", "two", "1.5", ""])
def test_bad_jobs_are_a_usage_error(bad, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["-j", bad, "x.py"])
    assert stop.value.code == 2 and "-j/--jobs: not a positive whole number" in capsys.readouterr().err


def test_huge_jobs_are_lowered_and_said(tmp_path, capsys, monkeypatch):
    started = []

    class Pool(run_files.ProcessPoolExecutor):
        def __init__(self, max_workers, **kwargs):
            started.append(max_workers)
            super().__init__(max_workers=max_workers, **kwargs)

    monkeypatch.setattr(run_files, "ProcessPoolExecutor", Pool)
    for i in range(40):
        (tmp_path / f"t{i:02}.py").write_bytes(SMALL_LEGACY)
    assert main(["--check", "-j", "1000", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    most = arguments.WORKERS_PER_CORE * (os.cpu_count() or 1)
    assert f"-j 1000 lowered to {most}" in captured.err
    assert started and started[0] <= most
    assert "40 files scanned, 40 would be rewritten, 0 need attention, 0 failed" in captured.out


def test_child_answer_is_read_on_a_descriptor_above_1024():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2100:
        pytest.skip("cannot open descriptors above 2048 here")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 2100), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]  # pushes the child's pipe past 1024
    try:
        value, findings = isolation.run_isolated(lambda: 42, "x.py", isolation.Limits())
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert (value, findings) == (42, [])


# --- names that are not plain text --------------------------------------------------------------

@pytest.mark.parametrize("name", ["a\nb.py", "evil\x1b[2J.py", "x\rfake.py", "rlo\u202eyp.py"])
@pytest.mark.parametrize("fmt", ["text", "github"])
def test_file_names_with_controls_are_quoted(tmp_path, capsys, name, fmt):
    (tmp_path / name).write_bytes(b'print "x"\n')
    assert main(["--format", fmt, str(tmp_path)]) == 2
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert len(lines) == 2, out  # one finding, one summary line: the name split nothing
    assert not any(c in out for c in "\x1b\r\u202e")
    assert repr(str(tmp_path / name)) in lines[0]


def test_diff_header_quotes_a_name_with_a_newline(tmp_path, capsys):
    script = tmp_path / "a\nb.py"
    script.write_bytes(SMALL_LEGACY)
    assert main(["--diff", str(script)]) == 1
    header = capsys.readouterr().out.splitlines()[:2]
    assert header == [f"--- a/{str(script)!r}", f"+++ b/{str(script)!r}"]


# --- skips are said; named paths are never skipped -----------------------------------------------

def _git(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)


def test_skipped_folders_and_ignored_files_are_said(tmp_path, capsys):
    _git(tmp_path)
    for rel in ["build/b.py", "dist/d.py", "env/e.py", "ignored/i.py", "gen.py", ".git/hooks/h.py", "keep.py"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(SMALL_LEGACY)
    (tmp_path / ".gitignore").write_text("ignored/\ngen.py\n")
    assert main(["--check", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    for rel in ("build", "dist", "env"):
        assert f"{tmp_path / rel}: skipped: folder named `{rel}`" in out
    for rel in ("ignored/i.py", "gen.py"):
        assert f"{tmp_path / rel}: skipped: listed in .gitignore" in out
    assert f"{tmp_path / '.git'}" not in out
    assert out.endswith("1 file scanned, 1 would be rewritten, 0 need attention, 0 failed, "
                        "3 folders and 2 git-ignored files skipped; 1 call site: 1 would be rewritten, 0 "
                        "reported, 0 untouched\n")
    main(["--check", "--format", "json", str(tmp_path)])
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"]["skipped"] == 5
    assert {s["kind"] for s in doc["skipped"]} == {"folder", "ignored"}


@pytest.mark.parametrize("named", ["build", "dist", "env", ".venv", "ignored", "ignored/sub"])
def test_a_folder_named_on_the_command_line_is_never_skipped(tmp_path, capsys, named):
    _git(tmp_path)
    (tmp_path / ".gitignore").write_text("ignored/\nbuild/\n")
    script = tmp_path / named / "train.py"
    script.parent.mkdir(parents=True)
    script.write_bytes(SMALL_LEGACY)
    assert main(["--check", str(tmp_path / named)]) == 1  # legacy code found, not passed over
    assert "1 would be rewritten" in capsys.readouterr().out


def test_a_file_named_inside_an_ignored_folder_is_processed(tmp_path, capsys):
    _git(tmp_path)
    (tmp_path / ".gitignore").write_text("ignored/\n*.py\n!keep.py\n")
    (tmp_path / "ignored").mkdir()
    for rel in ("ignored/x.py", "other.py", "keep.py"):
        (tmp_path / rel).write_bytes(SMALL_LEGACY)
    assert main(["--check", str(tmp_path / "ignored" / "x.py"), str(tmp_path / "other.py")]) == 1
    assert "2 files scanned, 2 would be rewritten" in capsys.readouterr().out
    assert main(["--check", str(tmp_path)]) == 1  # the negation: keep.py is walked
    out = capsys.readouterr().out
    assert "1 file scanned, 1 would be rewritten" in out and "1 folder" not in out


# --- syntax of a newer Python ------------------------------------------------------------------

NEWER = {
    (3, 12): [b"type Alias = list[int]\n", b"def first[T](items: list[T]) -> T:\n    return items[0]\n",
              b"class Box[T]:\n    pass\n", b'name = "x"\ngreeting = f"{"hello"} {name}"\n'],
    (3, 10): [b"match command:\n    case 1:\n        pass\n"],
}


@pytest.mark.parametrize("version, source", [(v, s) for v, sources in NEWER.items() for s in sources])
def test_newer_python_syntax_says_run_a_newer_python(version, source):
    if sys.version_info >= version:
        assert not transform_source(source, "new.py").failed
        return
    [finding] = transform_source(source, "new.py").findings
    assert finding.code == "MGPU501"
    wanted = f"{version[0]}.{version[1]}"
    assert f"needs Python {wanted} to parse" in finding.message
    assert "needs no fix" in finding.message and "Fix the syntax error" not in finding.message


def test_real_syntax_errors_still_say_fix_it():
    [finding] = transform_source(b"type = (\n", "bad.py").findings
    assert "Fix the syntax error" in finding.message and "needs Python" not in finding.message


# --- numeric options: edge values are usage errors ----------------------------------------------

@pytest.mark.parametrize("option, bad", [
    ("--max-size", "0.5"), ("--max-size", "inf"), ("--max-size", "1e400"), ("--max-size", "nan"),
    ("--max-size", "0.0001K"), ("--max-size", "99999999G"), ("--max-size", "-5M"),
    ("--timeout", "inf"), ("--timeout", "nan"), ("--timeout", "1e400"), ("--timeout", "0"), ("--timeout", "1e-9"),
    ("--timeout", "-1"),
])
def test_edge_values_of_numeric_options_are_usage_errors(option, bad, capsys):
    with pytest.raises(SystemExit) as stop:
        main([f"{option}={bad}", "x.py"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "Traceback" not in err and f"{option}: not a" in err


def test_report_to_dev_stdout_redirected_to_a_file_is_appended_not_replaced(tmp_path):
    (tmp_path / "clean.py").write_text("x = 1\n")
    out = tmp_path / "out.txt"
    with open(out, "w") as handle:
        done = subprocess.run([sys.executable, "-m", "multi_gpu_codemod", "--report", "/dev/stdout",
                               str(tmp_path / "clean.py")], stdout=handle, stderr=subprocess.PIPE, text=True)
    assert done.returncode == 0, done.stderr
    # the report's own summary line, then the terminal's: both kept
    assert out.read_text() == "1 file scanned, 0 rewritten, 0 need attention, 0 failed\n" * 2


def test_read_only_report_is_refused_before_any_file_is_touched(tmp_path, capsys):
    script = tmp_path / "train.py"
    script.write_bytes(SMALL_LEGACY)
    report = tmp_path / "report.txt"
    report.write_text("kept\n")
    report.chmod(0o444)
    assert main(["--report", str(report), str(script)]) == 2
    assert "is read-only" in _error_line(capsys)
    assert script.read_bytes() == SMALL_LEGACY and report.read_text() == "kept\n"


def test_symlink_planted_at_the_report_during_the_run_is_not_followed(tmp_path, capsys, monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("only root can make a symlink owned by another user")
    script = tmp_path / "train.py"
    script.write_bytes(SMALL_LEGACY)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    report = tmp_path / "report.txt"
    real = run_files.outcomes

    def planting(*args, **kwargs):
        yield from real(*args, **kwargs)
        report.symlink_to(victim)
        os.lchown(report, 4321, 4321)

    monkeypatch.setattr(run_files, "outcomes", planting)
    assert main(["--report", str(report), str(script)]) == 2
    assert "symbolic link owned by another user" in _error_line(capsys)
    assert victim.read_text() == "keep me\n" and b"strategy.scope()" in script.read_bytes()


def test_empty_report_path_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--report", "", "x.py"])
    assert stop.value.code == 2 and "--report: an empty path" in capsys.readouterr().err
