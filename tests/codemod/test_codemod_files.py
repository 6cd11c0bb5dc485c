"""codemod/files.py and the CLI around it: owners, hard links, edits during the run, non-regular files, workers."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from multi_gpu_codemod import run_files
from multi_gpu_codemod.cli import main
from multi_gpu_codemod.files import write_atomically
from codemod_fixtures import ROOT

LEGACY = (ROOT / "seed" / "xception_doc.before.py").read_bytes()
MIGRATED = (ROOT / "seed" / "xception_doc.after.py").read_bytes()
REPO = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can run on a file another user owns")
def test_root_keeps_the_users_owner_group_and_mode(tmp_path, capsys):
    script = tmp_path / "train.py"
    script.write_bytes(LEGACY)
    os.chown(script, 1234, 5678)
    script.chmod(0o640)
    assert main([str(script)]) == 1
    info = script.stat()
    assert (info.st_uid, info.st_gid, info.st_mode & 0o7777) == (1234, 5678, 0o640)
    assert script.read_bytes() == MIGRATED


def test_owner_that_cannot_be_given_is_kept_by_writing_in_place(tmp_path, monkeypatch):
    script = tmp_path / "train.py"
    script.write_bytes(LEGACY)
    inode = script.stat().st_ino

    def refused(*args, **kwargs):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "stat", _other_owner(os.stat, script))
    monkeypatch.setattr(os, "chown", refused)
    write_atomically(script, MIGRATED, expected=LEGACY)
    monkeypatch.undo()
    assert script.read_bytes() == MIGRATED and script.stat().st_ino == inode  # same file: owner untouched
    assert [p.name for p in tmp_path.iterdir()] == ["train.py"]


def _other_owner(real_stat, target):
    """os.stat reporting another owner for `target` (as a user's file seen by a member of its group)."""

    def fake(path, *args, **kwargs):
        info = real_stat(path, *args, **kwargs)
        if os.fspath(path) == str(target):
            values = list(info)
            values[4] += 1  # st_uid
            return os.stat_result(values)
        return info

    return fake


def test_hard_links_keep_sharing_the_rewritten_file(tmp_path, capsys):
    script = tmp_path / "train.py"
    script.write_bytes(LEGACY)
    twin = tmp_path / "copy_of_train.txt"
    os.link(script, twin)
    script.chmod(0o604)
    assert main([str(script)]) == 1
    assert twin.read_bytes() == MIGRATED and os.path.samefile(script, twin)
    assert script.stat().st_nlink == 2 and script.stat().st_mode & 0o7777 == 0o604


def test_hard_link_write_shrinks_and_grows_exactly(tmp_path):
    script = tmp_path / "a.py"
    script.write_bytes(b"x" * 100)
    os.link(script, tmp_path / "b.py")
    write_atomically(script, b"short\n", expected=b"x" * 100)
    assert (tmp_path / "b.py").read_bytes() == b"short\n"
    write_atomically(script, b"y" * 5000, expected=b"short\n")
    assert (tmp_path / "b.py").read_bytes() == b"y" * 5000


def test_edit_during_the_run_is_kept_and_reported(tmp_path, capsys, monkeypatch):
    script = tmp_path / "train.py"
    script.write_bytes(LEGACY)
    other = tmp_path / "zz_train.py"
    other.write_bytes(LEGACY)
    real = run_files.process_file

    def then_the_user_saves(path, *args, **kwargs):
        outcome = real(path, *args, **kwargs)
        if path == str(script):  # read and rewritten in memory; the editor saves before the write
            script.write_bytes(LEGACY + b"# my edit\n")
        return outcome

    monkeypatch.setattr(run_files, "process_file", then_the_user_saves)
    assert main([str(tmp_path)]) == 2
    assert script.read_bytes() == LEGACY + b"# my edit\n"
    assert other.read_bytes() == MIGRATED
    out = capsys.readouterr().out
    assert f"{script}:1:1: MGPU507 the file changed on disk while the codemod ran" in out
    assert f"{script}:23:18" not in out  # the failed file's call is not said to be rewritten
    assert out.endswith(f"{other}:23:18: multi_gpu_model rewritten\n"
                        "2 files scanned, 1 rewritten, 0 need attention, 1 failed; 1 call site: 1 rewritten, 0 "
                        "reported, "
                        "0 untouched\n")


def test_same_size_edit_is_detected(tmp_path):
    script = tmp_path / "train.py"
    script.write_bytes(b"a = 1\n")
    with pytest.raises(OSError, match="changed on disk"):
        write_atomically(script, b"b = 2\n", expected=b"a = 9\n")
    assert script.read_bytes() == b"a = 1\n"


def _codemod(*args, timeout=120):
    env = {**os.environ, "PYTHONPATH": str(REPO / ".dev")}
    return subprocess.run([sys.executable, "-m", "multi_gpu_codemod", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_fifo_named_py_is_never_opened(tmp_path):
    fifo = tmp_path / "x.py"
    os.mkfifo(fifo)
    (tmp_path / "train.py").write_bytes(LEGACY)
    walked = _codemod("--check", str(tmp_path))  # a blocking open would hang: the timeout fails the test
    named = _codemod("--check", str(fifo))
    for done in (walked, named):
        assert done.returncode == 2
        assert f"{fifo}:1:1: MGPU506 a FIFO, not a regular file: never opened" in done.stdout
    assert "2 files scanned, 1 would be rewritten, 0 need attention, 1 failed" in walked.stdout


def test_device_named_on_the_command_line(capsys):
    assert main(["/dev/null"]) == 2
    assert "/dev/null:1:1: MGPU506 a device, not a regular file" in capsys.readouterr().out


def _children(pid: int) -> set[int]:
    found = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found |= {int(c) for c in (task / "children").read_text().split()}
        except OSError:
            pass
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads the process tree from /proc")
def test_workers_go_when_the_parent_is_killed(tmp_path):
    for n in range(60):
        (tmp_path / f"train_{n}.py").write_bytes(LEGACY)
    env = {**os.environ, "PYTHONPATH": str(REPO / ".dev")}
    parent = subprocess.Popen([sys.executable, "-m", "multi_gpu_codemod", "--check", "-j", "2", str(tmp_path)],
                              cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        workers: set[int] = set()
        deadline = time.monotonic() + 60
        while len(workers) < 2 and time.monotonic() < deadline and parent.poll() is None:
            workers = _children(parent.pid)
            time.sleep(0.05)
        assert len(workers) >= 2, "the pool never started"
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 30  # a liveness bound, not a speed goal: they must not outlive it
        while any(_alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(w) for w in workers)
    finally:
        if parent.poll() is None:
            parent.kill()


def test_a_worker_killed_from_outside_does_not_cost_the_run(tmp_path, capsys, monkeypatch):
    main_pid = os.getpid()
    real = run_files._process

    def killed_in_a_worker(path, *args, **kwargs):  # forked workers see this patch
        if path.endswith("train_3.py") and os.getpid() != main_pid:
            os.kill(os.getpid(), signal.SIGKILL)  # the out-of-memory killer, or a user's kill
        return real(path, *args, **kwargs)

    monkeypatch.setattr(run_files, "_process", killed_in_a_worker)
    for n in range(10):
        (tmp_path / f"train_{n}.py").write_bytes(LEGACY)
    assert main(["-j", "2", str(tmp_path)]) == 1
    sites = "".join(f"{tmp_path / f'train_{n}.py'}:23:18: multi_gpu_model rewritten\n" for n in range(10))
    assert capsys.readouterr().out == sites + (
        "10 files scanned, 10 rewritten, 0 need attention, 0 failed; 10 call sites: 10 rewritten, 0 reported, 0 "
        "untouched\n")
    assert all(p.read_bytes() == MIGRATED for p in tmp_path.iterdir())
