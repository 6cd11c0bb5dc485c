"""The project's one way to write a file: never half-written, never through a planted name.

Every file the project writes (a rewritten script, a report, `multi-gpu-compat unwrap`'s
output) goes through here: the new content goes to a temporary file with a random name,
created exclusively (`O_EXCL`) in the destination's own folder, is flushed to disk (fsync),
then renamed over the destination. Nobody can predict the temporary name, and an exclusive
create never follows a symlink planted in its place.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["FileChangedError", "output_path", "write_atomically", "write_new_file"]


class FileChangedError(OSError):
    """The file on disk is no longer what was read: someone edited it during the run."""


def _umask_mode() -> int:
    """The mode a plain `open(path, "w")` would give a new file (0o666 less the umask)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _fsync_folder(folder: Path) -> None:
    """Makes a rename in `folder` durable; file systems that cannot sync a folder are left be."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _temporary_copy(folder: Path, name: str, data: bytes) -> str:
    """`data` in a new file with a random name in `folder` (mkstemp: O_EXCL, mode 0600), synced."""
    fd, temp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        os.unlink(temp)
        raise
    return temp


def write_new_file(path: Path, data: bytes) -> None:
    """Writes `data` to `path`, which may or may not exist yet, atomically.

    An existing regular file is replaced as `write_atomically` does (mode, owner, hard links
    kept; a symlink's target written). A missing file is created through a temporary file with
    the mode `open` would give it. Anything else (a directory, a device) raises OSError.
    """
    path = Path(path)
    if os.path.exists(path):
        write_atomically(path, data)
        return
    if os.path.islink(path):  # dangling: write where it points, never replace the link blindly
        path = Path(os.path.realpath(path))
    temp = _temporary_copy(path.parent, path.name, data)
    try:
        os.chmod(temp, _umask_mode())
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise
    _fsync_folder(path.parent)


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
    temp = _temporary_copy(path.parent, path.name, data)
    try:
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
    _fsync_folder(path.parent)


@contextlib.contextmanager
def output_path(path: Path, suffix: str = "") -> Iterator[Path]:
    """For writers that need a path of their own (Keras's `model.save`): a fresh path to write to.

    The path lies in a new folder with a random name beside `path` (`mkdtemp`: created
    exclusively, readable by this user only), so nobody can plant a symlink in its place. When
    the block ends without an exception, the file written there is synced and renamed over
    `path` (a symlink at `path` is replaced, never followed); either way the folder goes.
    """
    path = Path(os.path.abspath(path))
    folder = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"))
    try:
        temp = folder / f"output{suffix}"
        yield temp
        info = os.lstat(temp)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "the writer did not produce a regular file", str(temp))
        fd = os.open(temp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(temp, _umask_mode())
        os.replace(temp, path)
        _fsync_folder(path.parent)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


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
