"""Files: which to look at, reading them safely (regular files only, bounded), replacing them atomically."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from .prefilter import MARKERS, may_contain_site

__all__ = [
    "SUFFIXES", "FileChangedError", "NotRegularFileError", "file_may_contain_site", "iter_python_files",
    "read_regular", "write_atomically",
]

_SKIP_DIRS = {
    ".git", ".hg", ".svn", "__pycache__", "site-packages", "dist-packages", "build", "dist",
    ".tox", ".nox", ".eggs", "node_modules", ".mypy_cache", ".pytest_cache", "venv", ".venv", "env", ".env",
}


def _skipped_dir(path: Path) -> bool:
    name = path.name
    if name in _SKIP_DIRS or name.endswith(".egg-info"):
        return True
    try:  # any virtualenv or conda environment, whatever its name
        return (path / "pyvenv.cfg").exists() or (path / "conda-meta").is_dir()
    except OSError:  # an unreadable folder: the walk reports it
        return False


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
    paths: Iterable[str | os.PathLike[str]], skipped: list[tuple[Path, str]] | None = None,
    errors: list[tuple[Path, str]] | None = None,
) -> Iterator[Path]:
    """Files given explicitly, plus `*.py` / `*.ipynb` under directories (skipping venvs, builds, ignored files).

    Symlinks met while walking a directory (to files or to directories) are not followed: they
    are appended to `skipped` with the reason, so the caller reports them. A symlink named
    explicitly is processed, and a rewrite replaces its target (the link stays a link).
    Folders that cannot be listed are appended to `errors` with the reason; the walk goes on.
    """
    for raw in paths:
        path = Path(raw)
        if not path.is_dir():  # explicit files (and explicit symlinks) are always processed
            yield path
            continue
        yield from _walk(path, skipped, errors)


def _walk(top: Path, skipped: list[tuple[Path, str]] | None, errors: list[tuple[Path, str]] | None) -> Iterator[Path]:
    """The `*.py` / `*.ipynb` files under the directory `top` (see iter_python_files), sorted."""
    found: list[Path] = []
    nested_repo = False

    def _unreadable(error: OSError) -> None:
        if errors is not None:
            errors.append((Path(error.filename or top), error.strerror or type(error).__name__))

    for root, dirs, files in os.walk(top, onerror=_unreadable):
        root_path = Path(root)
        if root_path != top and (".git" in dirs or ".git" in files):
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
        dirs[:] = kept  # os.walk descends into these only
        for f in sorted(files):
            if not f.endswith(SUFFIXES):
                continue
            if (root_path / f).is_symlink():
                if skipped is not None:
                    reason = "symbolic link, not followed; name it explicitly to rewrite its target"
                    skipped.append((root_path / f, reason))
                continue
            found.append(root_path / f)
    ignored = _git_ignored(found, None if nested_repo else top)
    yield from (f for f in found if f not in ignored)


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


class FileChangedError(OSError):
    """The file on disk is no longer what was read: someone edited it during the run."""


def write_atomically(path: Path, data: bytes, expected: bytes | None = None) -> None:
    """Replaces the file's content without ever leaving a half-written or foreign-owned file.

    Normally: a temporary file in the same folder, fsync, the original mode, owner and group,
    then `os.replace`. A file with hard links, or whose owner or group this user cannot give
    the temporary file, is written in place instead (space reserved first), so every link
    keeps seeing it and its owner does not change. A symlink is resolved first, so its target
    is replaced and the link kept. A read-only file (no write bit) is refused with
    PermissionError rather than replaced behind the user's back. With `expected` (the bytes
    the rewrite started from), the file is re-read right before it is replaced and
    FileChangedError raised, nothing written, if it differs.
    """
    path = Path(os.path.realpath(path))
    info = os.stat(path)  # not Path.stat, which on Python 3.9 bypasses a monkeypatched os.stat
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    mode = info.st_mode & 0o7777
    if not mode & 0o222:
        raise PermissionError(errno.EACCES, "file is read-only", str(path))
    if info.st_nlink > 1:
        _check_unchanged(path, expected)
        _write_in_place(path, data, expected)
        return
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        made = os.stat(temp)
        if (made.st_uid, made.st_gid) != (info.st_uid, info.st_gid):
            try:
                os.chown(temp, info.st_uid, info.st_gid)
            except PermissionError:  # not ours to give away: keep the inode, write into it
                os.unlink(temp)
                _check_unchanged(path, expected)
                _write_in_place(path, data, expected)
                return
        os.chmod(temp, mode)  # after chown, which clears set-id bits
        _check_unchanged(path, expected)
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def _check_unchanged(path: Path, expected: bytes | None) -> None:
    if expected is None:
        return
    if path.stat().st_size != len(expected) or path.read_bytes() != expected:
        raise FileChangedError(errno.EAGAIN, "the file changed on disk since it was read", str(path))


def _write_in_place(path: Path, data: bytes, original: bytes | None) -> None:
    """Overwrites the file's own inode: space is reserved first, the old bytes restored on failure."""
    fd = os.open(path, os.O_WRONLY)
    try:
        reserve = getattr(os, "posix_fallocate", None)
        if reserve is not None and len(data) > os.fstat(fd).st_size:
            try:
                reserve(fd, 0, len(data))
            except OSError as error:
                if error.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
                    raise
                # the file system cannot reserve space up front; the write below reports a shortage
        try:
            _write_all(fd, data)
            os.ftruncate(fd, len(data))
            os.fsync(fd)
        except OSError:
            if original is not None:
                try:
                    _write_all(fd, original)
                    os.ftruncate(fd, len(original))
                except OSError:
                    pass  # the first error is the one to report
            raise
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view, offset = memoryview(data), 0
    while offset < len(data):
        offset += os.pwrite(fd, view[offset:], offset)
