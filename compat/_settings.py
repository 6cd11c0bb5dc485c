"""Every environment variable the shim reads, in one place (stdlib only, imports nothing else).

- `MULTI_GPU_COMPAT_DISABLE`: `1`, `true`, `yes`, `on` switch the shim off; `0`, `false`,
  `no`, `off` or empty leave it on (any other value leaves it on, with a warning).
- `MULTI_GPU_COMPAT_SIMULATE_GPUS`: N logical CPU devices stand in for GPUs 0..N-1.
- `MULTI_GPU_COMPAT_STRATEGY`: `mirrored` or `multi_worker` (else TF_CONFIG decides).
- `MULTI_GPU_COMPAT_WORKER_TIMEOUT`: seconds a worker waits for the others.
- `TF_USE_LEGACY_KERAS`: TensorFlow's own switch routing `tf.keras` to tf_keras.

Values are read when asked for, never cached: a script may set them before the first use.
"""

from __future__ import annotations

import os

DISABLE = "MULTI_GPU_COMPAT_DISABLE"
SIMULATE_GPUS = "MULTI_GPU_COMPAT_SIMULATE_GPUS"
STRATEGY = "MULTI_GPU_COMPAT_STRATEGY"
WORKER_TIMEOUT = "MULTI_GPU_COMPAT_WORKER_TIMEOUT"
LEGACY_KERAS = "TF_USE_LEGACY_KERAS"

TRUE_VALUES = ("1", "true", "yes", "on")
FALSE_VALUES = ("", "0", "false", "no", "off")
# TensorFlow's own test of TF_USE_LEGACY_KERAS (case-sensitive, unlike ours).
_LEGACY_KERAS_VALUES = ("true", "True", "1")


def raw(name: str) -> str:
    """The variable's value as set ("" when unset)."""
    return os.environ.get(name, "")


def disabled() -> bool:
    """True when `MULTI_GPU_COMPAT_DISABLE` switches the shim off."""
    return raw(DISABLE).strip().lower() in TRUE_VALUES


def unclear_disable_value() -> str | None:
    """The value of `MULTI_GPU_COMPAT_DISABLE` when it is neither true nor false, else None."""
    value = raw(DISABLE)
    normal = value.strip().lower()
    return None if normal in TRUE_VALUES or normal in FALSE_VALUES else value


def simulate_gpus() -> str:
    """`MULTI_GPU_COMPAT_SIMULATE_GPUS`, stripped ("" when unset)."""
    return raw(SIMULATE_GPUS).strip()


def strategy() -> str:
    """`MULTI_GPU_COMPAT_STRATEGY`, normalised (`multi-worker` -> `multi_worker`; "" when unset)."""
    return raw(STRATEGY).strip().lower().replace("-", "_")


def worker_timeout() -> str:
    """`MULTI_GPU_COMPAT_WORKER_TIMEOUT`, stripped ("" when unset)."""
    return raw(WORKER_TIMEOUT).strip()


def legacy_keras() -> bool:
    """True when `TF_USE_LEGACY_KERAS` routes `tf.keras` to tf_keras."""
    return raw(LEGACY_KERAS) in _LEGACY_KERAS_VALUES
