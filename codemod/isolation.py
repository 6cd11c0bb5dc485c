"""One file's rewrite in a forked child with bounded time and memory and a deep stack.

libcst's native parser overflows the C stack (a segfault) on very long `and` chains, and its
visitors recurse once per nesting level. In the child a big-stack thread with a high recursion
limit handles deep but legitimate code; whatever still goes wrong (a crash, memory, time) ends
the child, not the run, and comes back as a finding. Without `os.fork` (Windows) the work runs
in-process with the same findings for the errors Python can catch.
"""

from __future__ import annotations

import ctypes
import faulthandler
import gc
import os
import pickle
import re
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

from .findings import Finding

__all__ = [
    "Limits", "die_with_parent", "memory_budget", "out_of_memory", "parse_size", "run_isolated", "too_deep",
    "too_large", "unexpected",
]

_STACK_BYTES = 512 << 20  # reserved address space; only the pages used cost memory
_RECURSION_LIMIT = 100_000
_MIB = 1 << 20


@dataclass(frozen=True)
class Limits:
    """Per-file bounds: `max_bytes` of source (notebooks: NOTEBOOK_FACTOR times that), seconds, memory."""

    max_bytes: int = _MIB
    timeout: float = 300.0
    memory: int = 4 << 30  # address space the child may add to what it inherits

    NOTEBOOK_FACTOR = 10  # outputs and images make notebooks larger than their code

    def for_path(self, path: str) -> int:
        return self.max_bytes * (self.NOTEBOOK_FACTOR if path.endswith(".ipynb") else 1)


def memory_budget(jobs: int, cap: int = 4 << 30) -> int:
    """Memory one file's child may add: `cap`, or less so `jobs` children fit in half the machine's RAM."""
    try:
        physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return cap
    return max(256 << 20, min(cap, physical // (2 * max(jobs, 1))))


MAX_SIZE = 16 << 30  # far beyond anything parseable in the time and memory a file gets


def parse_size(text: str) -> int:
    """`1000000`, `512K`, `2M`, `1.5M`, `1G` (binary multiples) -> bytes, 1 byte to 16 GiB; ValueError otherwise."""
    match = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)([KMG]?)B?", text.strip().upper())
    if match is None:
        raise ValueError("not a number of bytes")
    number, unit = match.groups()
    if not unit and not number.isdigit():
        raise ValueError("a number of bytes is a whole number")
    size = int(float(number) * {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(unit, 1))
    if size < 1:
        raise ValueError("less than one byte")
    if size > MAX_SIZE:
        raise ValueError(f"over the largest size, {MAX_SIZE >> 30}G")
    return size


def _human(size: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} bytes"


def too_large(path: str, size: int, limit: int) -> Finding:
    return Finding(1, 1, "MGPU504", (
        f"file too large to rewrite safely ({_human(size)}, limit {_human(limit)}); left unchanged. "
        "Rerun with a higher `--max-size` (time and memory grow with the size), or migrate it by hand."
    ), path)


def too_deep(path: str, what: str) -> Finding:
    return Finding(1, 1, "MGPU505", (
        f"nested too deeply to parse safely ({what}); left unchanged. Generated code? Exclude it, "
        "or split the long expression, `elif` chain or nested data, then rerun."
    ), path)


def _too_slow(path: str, limits: Limits) -> Finding:
    return Finding(1, 1, "MGPU504", (
        f"processing the file took longer than the time limit ({limits.timeout:g} s); left unchanged. "
        "Rerun with a higher `--timeout`, or migrate it by hand."
    ), path)


def out_of_memory(path: str, limit: int | None = None) -> Finding:
    allowed = f"more memory than allowed ({_human(limit)} per file)" if limit else "more memory than there is"
    return Finding(1, 1, "MGPU504", (
        f"processing the file needed {allowed}; left unchanged. Migrate it by hand, or split the file."
    ), path)


def die_with_parent(parent: int) -> None:
    """Ends this process when `parent` goes (Linux: the kernel does it; elsewhere a watchdog thread)."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(1, signal.SIGKILL, 0, 0, 0) == 0:  # PR_SET_PDEATHSIG
                if os.getppid() != parent:  # it went before the request took effect
                    os._exit(1)
                return
        except (OSError, AttributeError):
            pass

    def _watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=_watch, name="die-with-parent", daemon=True).start()


def _limit_memory(extra: int) -> None:
    try:
        import resource

        with open("/proc/self/statm") as statm:
            current = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        limit = current + _STACK_BYTES + extra
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, OSError, ValueError):
        pass  # no /proc or no rlimits: the time limit still bounds the child


def _deep_stack(work: Callable[[], object]) -> object:
    """Runs `work` on a thread with a big stack and a high recursion limit (the child's only job)."""
    values: list[object] = []
    errors: list[BaseException] = []

    def _run() -> None:
        try:
            values.append(work())
        except BaseException as error:  # noqa: BLE001 - carried back to the caller
            errors.append(error)

    sys.setrecursionlimit(_RECURSION_LIMIT)
    threading.stack_size(_STACK_BYTES)
    thread = threading.Thread(target=_run, name="codemod-file")
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return values[0] if values else None


def run_isolated(work: Callable[[], object], path: str, limits: Limits) -> tuple[object | None, list[Finding]]:
    """`work()` in a forked child: (its value, []) or (None, [a finding saying why there is none]).

    `work` is expected to turn bad input into findings itself; whatever escapes it (a crash, a
    timeout, memory, an exception) is reported here. Without fork, `work()` runs in-process.
    """
    if not hasattr(os, "fork"):
        return work(), []
    read_end, write_end = os.pipe()
    parent = os.getpid()
    gc.freeze()  # the child's collections then skip the inherited heap: fewer pages copied
    try:
        pid = os.fork()
    finally:
        if os.getpid() == parent:
            gc.unfreeze()
    if pid == 0:
        _child(work, (read_end, write_end), parent, limits)
    os.close(write_end)
    answer, timed_out, status = _wait_for_answer(read_end, pid, limits.timeout)
    if timed_out:
        return None, [_too_slow(path, limits)]
    try:
        kind, value = pickle.loads(answer)
    except Exception:  # noqa: BLE001 - no complete answer: the child died
        return None, [_crashed(path, status, limits)]
    if kind == "memory":
        return None, [out_of_memory(path, limits.memory)]
    if kind == "error":
        return None, [unexpected(path, str(value))]
    return value, []


def _child(work: Callable[[], object], pipe: tuple[int, int], parent: int, limits: Limits) -> NoReturn:
    """The forked child: runs `work` within the limits, sends back a pickled (kind, value), exits."""
    status = 0
    read_end, write_end = pipe
    try:
        os.close(read_end)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        faulthandler.disable()  # a crash here is reported as a finding, not as a stack dump
        die_with_parent(parent)
        _limit_memory(limits.memory)
        try:
            payload = pickle.dumps(("value", _deep_stack(work)))
        except MemoryError:
            payload = pickle.dumps(("memory", None))
        except Exception as error:  # noqa: BLE001 - reported by the parent
            payload = pickle.dumps(("error", f"{type(error).__name__}: {error}".splitlines()[0][:300]))
        view = memoryview(payload)
        while view:
            view = view[os.write(write_end, view):]
    except BaseException:  # noqa: BLE001 - anything here: the parent reports a crash
        status = 70
    os._exit(status)


def _wait_for_answer(read_end: int, pid: int, timeout: float) -> tuple[bytes, bool, int]:
    """What the child wrote until it closed the pipe or `timeout` passed (then it is killed):
    (the bytes, whether it timed out, its wait status). Closes `read_end`."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    timed_out = False
    # poll, not select: select cannot watch a descriptor numbered 1024 or more (FD_SETSIZE),
    # which a worker among many can be given.
    poller = select.poll() if hasattr(select, "poll") else None
    if poller is not None:
        poller.register(read_end, select.POLLIN | select.POLLHUP | select.POLLERR)
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            wait = min(left, 1.0)
            if poller is not None:
                ready = bool(poller.poll(wait * 1000))
            else:
                ready = bool(select.select([read_end], [], [], wait)[0])
            if ready:
                chunk = os.read(read_end, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
    finally:
        os.close(read_end)
        if timed_out:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    return b"".join(chunks), timed_out, status


def unexpected(path: str, error: str) -> Finding:
    """The last line of defence: an error nobody expected, named, with what to do."""
    return Finding(1, 1, "MGPU502", (
        f"the codemod failed on this file ({error}); file left unchanged. "
        "Please report this with the file; migrate this file by hand meanwhile."
    ), path)


def _crashed(path: str, status: int, limits: Limits) -> Finding:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if number == signal.SIGKILL:  # the kernel's out-of-memory killer, most likely
            return out_of_memory(path, limits.memory)
        name = signal.Signals(number).name if number in signal.Signals._value2member_map_ else str(number)
        return too_deep(path, f"the parser crashed with {name}")
    return too_deep(path, f"the parser process exited with status {os.WEXITSTATUS(status)}")
