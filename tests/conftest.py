"""Session set-up shared by all tests: 4 simulated GPUs and the backend under test.

A child process's environment and the "runs on 2 simulated GPUs" runner: tests/child_process.py;
the shim's code runners: tests/compat/compat_helpers.py.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

SIMULATED_GPUS = 4

# Quiet TensorFlow's C++ start-up chatter in this process and in subprocesses.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


# The codemod's tests run without TensorFlow (its install needs libcst alone).
HAS_TENSORFLOW = importlib.util.find_spec("tensorflow") is not None


def pytest_configure(config: pytest.Config) -> None:
    # Logical devices must exist before TensorFlow initialises its context, so the
    # whole session runs on 4 simulated GPUs from the start.
    if not HAS_TENSORFLOW:
        return
    import multi_gpu_compat as compat

    compat.simulate_gpus(SIMULATED_GPUS)


def pytest_report_header(config: pytest.Config) -> str:
    if not HAS_TENSORFLOW:
        return "keras backend: none (TensorFlow is not installed: codemod tests only)"
    from multi_gpu_compat import backend

    if backend.uses_keras2():
        return f"keras backend: Keras 2 ({backend.keras2_package_name()})"
    return "keras backend: keras 3"


# Under pytest-xdist (.ci/test runs `-n 2 --dist loadfile`) each module's tests run in one worker,
# so a module-scoped fixture (the oracle's batched training runs, the 8-GPU conformance run, the
# multi-worker cluster) runs once. The longest modules go first, so that neither worker is left
# with one of them at the end while the other idles (measured serially, in minutes: the
# differential pairs 18, the other differential tables 7, the oracle 7.5, verify 5.7, realworld
# and seed runs 2.2 each).
_LONGEST_FIRST = (
    "test_differential_pairs.py", "test_differential.py", "test_codemod_oracle.py", "test_codemod_verify.py",
    "test_codemod_realworld.py",
    "test_codemod_seed_runs.py", "test_conformance.py", "test_legacy_scripts.py",
)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not hasattr(config, "workerinput"):  # (only in an xdist worker; every worker sorts the same way)
        return
    rank = {name: index for index, name in enumerate(_LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: modules stay whole


@pytest.fixture(scope="session")
def legacy_keras() -> bool:
    """True when this run uses a Keras 2: tf_keras (TF_USE_LEGACY_KERAS=1) or Keras 2.12-2.15."""
    from multi_gpu_compat import backend

    return backend.uses_keras2()


@pytest.fixture(scope="session")
def keras_module():
    """The Keras package under test: `keras` (Keras 3 or 2.12-2.15) or `tf_keras`."""
    from multi_gpu_compat import backend

    return backend.keras_module()

