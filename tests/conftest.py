"""Session set-up shared by all tests: 4 simulated GPUs, and a fresh-interpreter runner."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SIMULATED_GPUS = 4

# Quiet TensorFlow's C++ start-up chatter in this process and in subprocesses.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def pytest_configure(config: pytest.Config) -> None:
    # Logical devices must exist before TensorFlow initialises its context, so the
    # whole session runs on 4 simulated GPUs from the start.
    import compat

    compat.simulate_gpus(SIMULATED_GPUS)


def pytest_report_header(config: pytest.Config) -> str:
    from compat import backend

    return f"keras backend: {'tf_keras' if backend.uses_legacy_keras() else 'keras 3'}"


@pytest.fixture(scope="session")
def legacy_keras() -> bool:
    """True when this run uses tf_keras (TF_USE_LEGACY_KERAS=1)."""
    from compat import backend

    return backend.uses_legacy_keras()


@pytest.fixture(scope="session")
def keras_module():
    """The Keras package under test: `keras` (Keras 3) or `tf_keras`."""
    from compat import backend

    return backend.keras_module()


def run_python(
    code: str,
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """Runs `code` in a fresh interpreter (own TensorFlow devices) and returns the result.

    The child inherits this environment minus the session's simulation variable;
    pass `env` to add or override variables (a value of None removes one).
    """
    child_env = dict(os.environ)
    child_env.pop("MULTI_GPU_COMPAT_SIMULATE_GPUS", None)
    for key, value in (env or {}).items():
        if value is None:
            child_env.pop(key, None)
        else:
            child_env[key] = value
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=cwd,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
