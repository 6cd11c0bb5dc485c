"""A watchdog process that ends a worker, with a message, when its cluster does not come up."""

from __future__ import annotations

import os
from typing import Any

_WATCHDOG = """
import os, select, signal, sys
pid, timeout, message = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
ready, _, _ = select.select([sys.stdin], [], [], timeout)
if not ready:
    sys.stderr.write("\\nmulti-gpu-compat: " + message + "\\n")
    sys.stderr.flush()
    os.kill(pid, signal.SIGKILL)
"""


def start_watchdog(timeout: float, message: str) -> Any:
    """A tiny process that ends this one, with `message`, if the cluster is not up in time.

    TensorFlow waits for missing workers in C++ while holding the GIL and ignoring
    SIGTERM, so neither a Python thread nor a signal handler could report it. The
    watchdog exits as soon as its stdin closes: on success, failure, or our death.
    Stop it with `stop_watchdog`.
    """
    import subprocess
    import sys

    return subprocess.Popen(
        [sys.executable, "-S", "-I", "-c", _WATCHDOG, str(os.getpid()), str(timeout), message],
        stdin=subprocess.PIPE,
    )


def stop_watchdog(watchdog: Any) -> None:
    """Ends the watchdog: the cluster connected, or connecting failed with an error."""
    watchdog.stdin.close()
    watchdog.wait()
