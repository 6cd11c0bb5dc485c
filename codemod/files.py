"""Files: which to look at, reading them safely (regular files only, bounded), replacing them atomically."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from .atomic_write import FileChangedError, write_atomically
from .prefilter import MARKERS, may_contain_site

__all__ = [
    "SUFFIXES", "FileChangedError", "NotRegularFileError", "Skip", "file_may_contain_site", "iter_python_files",
    "read_regular", "write_atomically",
]

# Never walked, without a word: version-control data and tool caches hold no source anyone migrates.
_QUIET_DIRS = {".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
# Skipped when met inside a walked folder, and said (a line each, counted in the summary):
# builds, environments and installed packages are copies, not the user's own source.
_SKIP_DIRS = {
    "site-packages", "dist-packages", "build", "dist", ".tox", ".nox", ".eggs", "node_modules",
    "venv", ".venv", "env", ".env",
}
_NAME_IT = "name it on the command line to process it"


class Skip(NamedTuple):
    """A path the walk did not process, why, and its kind (`symlink`, `folder` or `ignored`) for the summary."""

    path: Path
    reason: str
    kind: str


def _skip_reason(path: Path) -> str | None:
    """Why the walk passes over this folder (None: it is walked), or "" when it passes over it quietly."""
    name = path.name
    if name in _QUIET_DIRS:
        return ""
    if name in _SKIP_DIRS:
        return f"folder named `{name}` (builds, environments and installed packages are skipped); {_NAME_IT}"
    if name.endswith(".egg-info"):
        return f"packaging metadata folder; {_NAME_IT}"
    try:  # any virtualenv or conda environment, whatever its name
        if (path / "pyvenv.cfg").exists():
            return f"virtual environment (holds pyvenv.cfg); {_NAME_IT}"
        if (path / "conda-meta").is_dir():
            return f"conda environment (holds conda-meta); {_NAME_IT}"
    except OSError:  # an unreadable folder: the walk reports it
        return None
    return None


def _git_ignored(files: list[Path], root: Path | None = None) -> set[Path]:
    """Files `.gitignore` excludes, asked of git itself (nothing when git is absent).

    With `root` (a walked tree holding no other repository below it) one `git check-ignore`
    answers for the whole tree; otherwise git is asked per directory, so that nested
    repositories answer for their own files.
    """
    if root is not None:
        if not files:
            return set()
        result = _check_ignore(root, [f.relative_to(root) for f in files])
        if result is None:
            return set()
        if result.returncode in (0, 1):
            return {root / os.fsdecode(name) for name in result.stdout.split(b"\0") if name}
        if result.returncode == 128 and b"not a git repository" in result.stderr:
            return set()  # not in a work tree, and no repository below it
    ignored: set[Path] = set()
    by_dir: dict[Path, list[Path]] = {}
    for file in files:
        by_dir.setdefault(file.parent, []).append(file)
    for directory, group in by_dir.items():
        result = _check_ignore(directory, [Path(f.name) for f in group])
        if result is None:
            return set()
        if result.returncode not in (0, 1):  # 128: not a git work tree
            continue
        ignored |= {directory / os.fsdecode(name) for name in result.stdout.split(b"\0") if name}
    return ignored


def _check_ignore(directory: Path, names: list[Path]) -> subprocess.CompletedProcess[bytes] | None:
    """`git check-ignore` on names relative to `directory`, as bytes (names need not be UTF-8)."""
    try:
        return subprocess.run(
            ["git", "-C", os.fsencode(directory), "check-ignore", "--stdin", "-z"],
            input=b"".join(os.fsencode(name) + b"\0" for name in names),
            capture_output=True, timeout=60, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None


SUFFIXES = (".py", ".ipynb")


def iter_python_files(
    paths: Iterable[str | os.PathLike[str]], skipped: list[Skip] | None = None,
    errors: list[tuple[Path, str]] | None = None,
) -> Iterator[Path]:
    """Files given explicitly, plus `*.py` / `*.ipynb` under directories (skipping venvs, builds, ignored files).

    What a walk passes over is appended to `skipped` with the reason, so the caller says so:
    symlinks met while walking (to files or to directories, never followed), folders of builds,
    environments and installed packages, and files `.gitignore` lists. A path named explicitly
    is never skipped: a named file (or symlink: a rewrite replaces its target) is processed, a
    named folder is walked whatever its name, and inside a named folder that git ignores as a
    whole, `.gitignore` is not applied. Version-control folders and tool caches (`.git`,
    `__pycache__`...) are never walked. Folders that cannot be listed are appended to `errors`
    with the reason; the walk goes on.
    """
    for raw in paths:
        path = Path(raw)
        if not path.is_dir():  # explicit files (and explicit symlinks) are always processed
            yield path
            continue
        yield from _walk(path, skipped, errors)


def _walk(top: Path, skipped: list[Skip] | None, errors: list[tuple[Path, str]] | None) -> Iterator[Path]:
    """The `*.py` / `*.ipynb` files under the directory `top` (see iter_python_files), sorted."""
    found: list[Path] = []
    nested_repo = False
    said: list[Skip] = []

    def _unreadable(error: OSError) -> None:
        if errors is not None:
            errors.append((Path(error.filename or top), error.strerror or type(error).__name__))

    for root, dirs, files in os.walk(top, onerror=_unreadable):
        root_path = Path(root)
        if root_path != top and (".git" in dirs or ".git" in files):
            nested_repo = True
        kept = []
        for d in sorted(dirs):
            if (root_path / d).is_symlink():
                said.append(Skip(root_path / d, "symbolic link to a directory, not followed", "symlink"))
                continue
            reason = _skip_reason(root_path / d)
            if reason is not None:
                if reason:
                    said.append(Skip(root_path / d, reason, "folder"))
                continue
            kept.append(d)
        dirs[:] = kept  # os.walk descends into these only
        for f in sorted(files):
            if not f.endswith(SUFFIXES):
                continue
            if (root_path / f).is_symlink():
                reason = "symbolic link, not followed; name it explicitly to rewrite its target"
                said.append(Skip(root_path / f, reason, "symlink"))
                continue
            found.append(root_path / f)
    ignored = set() if _ignored_as_a_whole(top) else _git_ignored(found, None if nested_repo else top)
    said += [Skip(f, f"listed in .gitignore; {_NAME_IT}", "ignored") for f in found if f in ignored]
    if skipped is not None:
        skipped += sorted(said)
    yield from (f for f in found if f not in ignored)


def _ignored_as_a_whole(folder: Path) -> bool:
    """True when git ignores the named folder itself: the user asked for it anyway."""
    result = _check_ignore(folder, [Path(".")])
    return result is not None and result.returncode == 0


class NotRegularFileError(OSError):
    """A FIFO, socket or device where a file was expected: never read (a FIFO would block)."""

    def __init__(self, path: str, mode: int) -> None:
        super().__init__(errno.EINVAL, "not a regular file", path)
        self.mode = mode


def _open_regular(path: str) -> int:
    """A read descriptor on a regular file. Non-blocking, so a FIFO swapped in after a stat cannot hang."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise NotRegularFileError(path, mode)
    return fd


def read_regular(path: str, limit: int) -> bytes | None:
    """The file's bytes, or None when it is larger than `limit` bytes (never read further than that)."""
    fd = _open_regular(path)
    try:
        if os.fstat(fd).st_size > limit:
            return None
        chunks, total = [], 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                return None
        return b"".join(chunks)
    finally:
        os.close(fd)


def file_may_contain_site(path: str) -> bool:
    """prefilter.may_contain_site on a file of any size, read in chunks (never whole)."""
    overlap = max(len(m) for m in MARKERS) - 1
    with os.fdopen(_open_regular(path), "rb") as handle:
        tail = b""
        while chunk := handle.read(1 << 20):
            if may_contain_site(tail + chunk):
                return True
            tail = chunk[-overlap:]
    return False


