"""Pytest plugin for the 8-GPU conformance child: leave at once when the session is done.

TensorFlow with many MirroredStrategy replica threads can block at interpreter shutdown;
the results (and the JUnit report) are complete by then, so the child exits without it.
"""

from __future__ import annotations

import os
import sys

import pytest

_status = {"code": 0}


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _status["code"] = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(_status["code"])
