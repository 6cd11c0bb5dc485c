"""File walking and safe writing: which files to look at, and replacing them atomically."""

from __future__ import annotations

import errno
import os
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = ["SUFFIXES", "iter_python_files", "write_atomically"]

_SKIP_DIRS = {
    ".git", ".hg", ".svn", "__pycache__", "site-packages", "dist-packages", "build", "dist",
    ".tox", ".nox", ".eggs", "node_modules", ".mypy_cache", ".pytest_cache", "venv", ".venv", "env", ".env",
}


def _skipped_dir(path: Path) -> bool:
    name = path.name
    return (
        name in _SKIP_DIRS
        or name.endswith(".egg-info")
        or (path / "pyvenv.cfg").exists()  # any virtualenv, whatever its name
        or (path / "conda-meta").is_dir()
    )


def _git_ignored(files: list[Path], root: Path | None = None) -> set[Path]:
    """Files `.gitignore` excludes, asked of git itself (nothing when git is absent).

    With `root` (a walked tree holding no other repository below it) one `git check-ignore`
    answers for the whole tree; otherwise git is asked per directory, so that nested
    repositories answer for their own files.
    """
    if root is not None:
        if not files:
            return set()
        try:
            result = subprocess.run(
                ["git", "-C", str(root), "check-ignore", "--stdin", "-z"],
                input="\0".join(str(f.relative_to(root)) for f in files) + "\0",
                capture_output=True, text=True, timeout=60, check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return set()
        if result.returncode in (0, 1):
            return {root / name for name in result.stdout.split("\0") if name}
        if result.returncode == 128 and "not a git repository" in result.stderr:
            return set()  # not in a work tree, and no repository below it
    ignored: set[Path] = set()
    by_dir: dict[Path, list[Path]] = {}
    for file in files:
        by_dir.setdefault(file.parent, []).append(file)
    for directory, group in by_dir.items():
        try:
            result = subprocess.run(
                ["git", "-C", str(directory), "check-ignore", "--stdin", "-z"],
                input="\0".join(f.name for f in group) + "\0",
                capture_output=True, text=True, timeout=60, check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return set()
        if result.returncode not in (0, 1):  # 128: not a git work tree
            continue
        ignored |= {directory / name for name in result.stdout.split("\0") if name}
    return ignored


SUFFIXES = (".py", ".ipynb")


def iter_python_files(
    paths: Iterable[str | os.PathLike[str]], skipped: list[tuple[Path, str]] | None = None
) -> Iterator[Path]:
    """Files given explicitly, plus `*.py` / `*.ipynb` under directories (skipping venvs, builds, ignored files).

    Symlinks met while walking a directory (to files or to directories) are not followed: they
    are appended to `skipped` with the reason, so the caller reports them. A symlink named
    explicitly is processed, and a rewrite replaces its target (the link stays a link).
    """
    for raw in paths:
        path = Path(raw)
        if not path.is_dir():  # explicit files (and explicit symlinks) are always processed
            yield path
            continue
        found: list[Path] = []
        nested_repo = False
        for root, dirs, files in os.walk(path):
            root_path = Path(root)
            if root_path != path and (".git" in dirs or ".git" in files):
                nested_repo = True
            kept = []
            for d in sorted(dirs):
                if _skipped_dir(root_path / d):
                    continue
                if (root_path / d).is_symlink():
                    if skipped is not None:
                        skipped.append((root_path / d, "symbolic link to a directory, not followed"))
                    continue
                kept.append(d)
            dirs[:] = kept
            for f in sorted(files):
                if not f.endswith(SUFFIXES):
                    continue
                if (root_path / f).is_symlink():
                    if skipped is not None:
                        skipped.append((root_path / f, "symbolic link, not followed; name it explicitly to rewrite its target"))
                    continue
                found.append(root_path / f)
        ignored = _git_ignored(found, None if nested_repo else path)
        yield from (f for f in found if f not in ignored)


def write_atomically(path: Path, data: bytes) -> None:
    """Temp file in the same directory, same mode, then `os.replace`: never a half-written file.

    A symlink is resolved first, so its target is replaced and the link kept. A read-only file
    (no write bit) is refused with PermissionError rather than replaced behind the user's back.
    """
    path = Path(os.path.realpath(path))
    mode = path.stat().st_mode & 0o7777
    if not mode & 0o222:
        raise PermissionError(errno.EACCES, "file is read-only", str(path))
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise
