"""`multi-gpu-compat` commands on careless or hostile use: usage errors are exit 2 with or without
TensorFlow, and `unwrap`'s write cannot be redirected by a planted symlink."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from multi_gpu_compat import doctor, unwrap
from child_process import child_env
from test_backend import _run_without_tensorflow
from test_hostile_legacy_files import FIXTURES, _unwrap


@pytest.mark.parametrize("argv", [["--bogus"], ["extra"], ["--json", "-v"]])
def test_doctor_refuses_unknown_arguments(argv, capsys):
    assert doctor.main(argv) == 2
    err = capsys.readouterr().err
    assert "doctor: error: it takes no arguments" in err and "Traceback" not in err


@pytest.mark.parametrize("argv, status", [
    ([], 2), (["only-one.h5"], 2), (["--bogus", "a.h5", "b.keras"], 2), (["a.h5", "b.txt"], 2),
])
def test_unwrap_usage_errors_are_2_without_tensorflow(argv, status):
    done = _run_without_tensorflow(f"""
        from multi_gpu_compat.__main__ import main
        sys.exit(main(["unwrap", *{argv!r}]))
    """)
    assert done.returncode == status, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.startswith("multi-gpu-compat unwrap: error: ")


def test_doctor_usage_error_is_2_without_tensorflow():
    done = _run_without_tensorflow("""
        from multi_gpu_compat.__main__ import main
        sys.exit(main(["doctor", "--bogus"]))
    """)
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_simulate_gpus_without_tensorflow_says_what_to_install():
    done = _run_without_tensorflow("""
        import multi_gpu_compat
        try:
            multi_gpu_compat.simulate_gpus(2)
        except ModuleNotFoundError as error:
            print("ERROR", error)
    """)
    assert done.returncode == 0, done.stderr
    assert "ERROR" in done.stdout and "needs TensorFlow" in done.stdout


class _FakeModel:
    """Writes what `model.save` would, at the path it is given, the way Keras does (open, write)."""

    def save(self, path: str) -> None:
        with open(path, "wb") as handle:
            handle.write(b"model bytes")


def test_unwrap_write_ignores_symlinks_planted_at_predictable_names(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    new = tmp_path / "new.keras"
    for name in (".new.keras.unwrap-tmp.keras", ".new.keras.tmp", ".new.keras.unwrap-tmp"):
        (tmp_path / name).symlink_to(victim)
    unwrap._save(_FakeModel(), str(new))
    assert new.read_bytes() == b"model bytes" and not new.is_symlink()
    assert victim.read_text() == "keep me\n"
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == [".new.keras.tmp", ".new.keras.unwrap-tmp", ".new.keras.unwrap-tmp.keras", "new.keras", "victim.txt"]


def test_unwrap_replaces_a_symlink_at_new_never_writes_through_it(tmp_path):
    victim = tmp_path / "victim.keras"
    victim.write_text("keep me\n")
    new = tmp_path / "new.keras"
    new.symlink_to(victim)
    unwrap._save(_FakeModel(), str(new))
    assert not new.is_symlink() and new.read_bytes() == b"model bytes"
    assert victim.read_text() == "keep me\n"


def test_unwrap_failing_save_leaves_nothing_behind(tmp_path):
    class Broken:
        def save(self, path):
            Path(path).write_bytes(b"half")
            raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        unwrap._save(Broken(), str(tmp_path / "new.keras"))
    assert list(tmp_path.iterdir()) == []


def test_unwrap_needs_force_for_a_dangling_symlink_at_new(tmp_path):
    new = tmp_path / "new.keras"
    new.symlink_to(tmp_path / "nowhere.keras")
    done = _unwrap(str(FIXTURES / "func_2gpu_2out_keras224.h5"), str(new))
    assert done.returncode == 1 and "already exists; pass --force" in done.stderr
    assert not (tmp_path / "nowhere.keras").exists()


@pytest.mark.slow  # a TensorFlow child; the fake-model tests above cover the write fast
def test_unwrap_end_to_end_with_a_planted_symlink(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    new = tmp_path / "new.keras"
    (tmp_path / ".new.keras.unwrap-tmp.keras").symlink_to(victim)
    done = subprocess.run([sys.executable, "-m", "multi_gpu_compat", "unwrap",
                           str(FIXTURES / "func_2gpu_2out_keras224.h5"), str(new)],
                          capture_output=True, text=True, timeout=300, env=child_env())
    assert done.returncode == 0, done.stderr[-3000:]
    assert victim.read_text() == "keep me\n" and new.stat().st_size > 1000


def test_unwrap_error_shows_a_terminal_escape_in_a_path_as_text(tmp_path):
    done = _unwrap(str(tmp_path / "evil\x1b[2J.h5"), str(tmp_path / "new\x1b]0;x\x07.keras"))
    assert done.returncode == 1 and "\x1b" not in done.stderr and "\x07" not in done.stderr
    assert "evil\\x1b[2J.h5" in done.stderr
