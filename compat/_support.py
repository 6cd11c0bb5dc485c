"""Which TensorFlow / Keras versions the shim is tested on, and the check made at first use.

The shim reaches into private parts of Keras and TensorFlow (`_internals`), which change
between releases. The start-up routine (`startup.run`) calls `warn_if_untested` for the
stack in use, whichever Keras serves it: an untested version gets a one-time warning that
names the tested range and what to do. `check` (run before the Keras 3 backend is first
used) also says what to install when a package is missing, and an internal that cannot be
found gets `UnsupportedVersionError` instead of an ImportError from a private module.
`status` is what `multi-gpu-compat doctor` prints.

Which Keras serves, and its version, come from `_stack`. Nothing here imports TensorFlow or Keras.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _stack
from ._stack import Version, parse_version
from .notices import notify_once

_REPORT_HINT = (
    "report it to multi-gpu-compat with the output of `multi-gpu-compat doctor`"
)


@dataclass(frozen=True)
class TestedRange:
    """The versions of one backend the test matrix runs on (major.minor, inclusive)."""

    backend: str  # "keras3", "tf_keras" or "keras2"
    label: str  # how messages name the Keras package
    distribution: str  # its PyPI name ("" when it ships inside TensorFlow)
    keras: tuple[Version, Version]
    tensorflow: tuple[Version, Version]

    def describe(self) -> str:
        tf = f"TensorFlow {_span(self.tensorflow)}"
        if not self.distribution:
            return f"{self.label} in {tf}"
        return f"{self.label} {_span(self.keras)} with {tf}"

    def pin_hint(self) -> str:
        newest_tf = _dotted(self.tensorflow[1])
        if not self.distribution:
            return f'pip install "tensorflow=={newest_tf}.*"'
        return (
            f'pip install "tensorflow=={newest_tf}.*" '
            f'"{self.distribution}=={_dotted(self.keras[1])}.*"'
        )


TESTED_RANGES = {
    _stack.KERAS3: TestedRange(_stack.KERAS3, "Keras", "keras", ((3, 3), (3, 15)), ((2, 16), (2, 21))),
    _stack.TF_KERAS: TestedRange(_stack.TF_KERAS, "tf_keras", "tf-keras", ((2, 16), (2, 21)), ((2, 16), (2, 21))),
    _stack.KERAS2: TestedRange(_stack.KERAS2, "the built-in Keras 2", "", ((2, 12), (2, 15)), ((2, 12), (2, 15))),
}


class UnsupportedVersionError(RuntimeError):
    """The installed Keras or TensorFlow lacks something the shim relies on."""


def _dotted(version: Version) -> str:
    return ".".join(str(p) for p in version)


def _span(bounds: tuple[Version, Version]) -> str:
    return f"{_dotted(bounds[0])}–{_dotted(bounds[1])}"


@dataclass(frozen=True)
class Status:
    """What `status` found: `state` is "supported", "untested newer version",
    "untested older version" or "not installed"; `message` (for a person) starts with
    the state, or with what is not installed."""

    backend: str
    state: str
    tensorflow: str | None
    keras: str | None
    tested: TestedRange
    message: str

    @property
    def supported(self) -> bool:
        return self.state == "supported"


def _compare(version: Version, bounds: tuple[Version, Version]) -> int:
    """-1 below the range, 0 inside, 1 above (by major.minor)."""
    key = version[:2]
    if key < bounds[0]:
        return -1
    if key > bounds[1]:
        return 1
    return 0


def _install_hint(tested: TestedRange) -> str:
    if tested.backend == "tf_keras":
        return f'pip install "tensorflow=={_dotted(tested.tensorflow[1])}.*" tf-keras'
    return 'pip install tensorflow (or tensorflow-cpu), or pip install "multi-gpu-compat[cpu]"'


def status(backend: str | None = None) -> Status:
    """The support status of this environment for `backend` (default: the one in use)."""
    backend = backend or _stack.backend()
    tested = TESTED_RANGES[backend]
    tf, keras = _stack.tensorflow_version(), _stack.package_version(backend)
    found = f"{tested.label} {keras}" if tested.distribution else "Keras 2"
    if tf is None:
        message = (
            f"TensorFlow not installed: `multi_gpu_model` runs on TensorFlow, install it "
            f"with {_install_hint(tested)}. Tested: {tested.describe()}."
        )
        return Status(backend, "not installed", tf, keras, tested, message)
    if keras is None:
        wanted = tested.distribution
        if backend == "tf_keras":  # tf_keras releases follow TensorFlow's
            wanted = f'"{wanted}=={_dotted(parse_version(tf)[:2])}.*"'
        message = (
            f"{tested.label} not installed: install it next to TensorFlow {tf} with "
            f"pip install {wanted}. Tested: {tested.describe()}."
        )
        return Status(backend, "not installed", tf, keras, tested, message)
    positions = [_compare(parse_version(tf), tested.tensorflow)]
    if tested.distribution:
        positions.append(_compare(parse_version(keras), tested.keras))
    here = (
        f"{found} with TensorFlow {tf}"
        if tested.distribution
        else f"TensorFlow {tf} with its built-in Keras {keras}"
    )
    if all(p == 0 for p in positions):
        message = f"supported: {here} (tested: {tested.describe()})."
        return Status(backend, "supported", tf, keras, tested, message)
    state = "untested newer version" if max(positions) > 0 else "untested older version"
    if state == "untested newer version":
        advice = (
            f"It may well work; if something fails, pin a tested version "
            f"({tested.pin_hint()}) and {_REPORT_HINT}."
        )
    else:
        advice = (
            f"If something fails, upgrade to a tested version ({tested.pin_hint()}) "
            f"or {_REPORT_HINT}."
        )
    message = (
        f"{state}: multi-gpu-compat is tested with {tested.describe()}; this environment "
        f"has {here}. {advice}"
    )
    return Status(backend, state, tf, keras, tested, message)


def check(backend: str) -> Status:
    """The first-use check: warns once on an untested version, raises if a package is missing.

    Raises:
        ImportError: if TensorFlow (or the backend's Keras package) is not installed,
            with what to install.
    """
    found = status(backend)
    if found.state == "not installed":
        raise ImportError(f"multi-gpu-compat: {found.message}")
    _warn(found)
    return found


def warn_if_untested(backend: str | None = None) -> Status:
    """Warns once per process when `backend` (default: the one in use) is an untested version.

    Never raises for a missing package: the start-up routine runs this at TensorFlow's import,
    where a missing Keras is not yet an error (`check` says what to install when it is used).
    """
    found = status(backend)
    if found.state != "not installed":
        _warn(found)
    return found


def _warn(found: Status) -> None:
    if not found.supported:
        notify_once(f"support:{found.backend}", f"multi-gpu-compat: {found.message}", stacklevel=5)


def missing_internal(backend: str, what: str, detail: str = "") -> UnsupportedVersionError:
    """The error for a private internal this TensorFlow / Keras does not have."""
    found = status(backend)
    here = f"TensorFlow {found.tensorflow}"
    if found.tested.distribution:
        here = f"{found.tested.label} {found.keras} with {here}"
    if found.supported:
        advice = f"This is a bug in multi-gpu-compat: {_REPORT_HINT}."
    else:
        advice = f"Install a tested version ({found.tested.pin_hint()}) or {_REPORT_HINT}."
    suffix = f" ({detail})" if detail else ""
    return UnsupportedVersionError(
        f"multi-gpu-compat cannot run on {here}: it needs {what}, which this version "
        f"does not have{suffix}. Tested: {found.tested.describe()}. {advice}"
    )


def missing_internals_warning(backend: str, names: list[str], needed_by: str) -> str:
    """The start-up warning for private internals this TensorFlow / Keras lacks, which only
    `needed_by` uses (so the rest of the shim still works)."""
    found = status(backend)
    if found.supported:
        advice = f"this is a bug in multi-gpu-compat: {_REPORT_HINT}"
    else:
        advice = f"install a tested version ({found.tested.pin_hint()}) or {_REPORT_HINT}"
    listed = ", ".join(f"`{name}`" for name in names)
    return (
        f"multi-gpu-compat: this TensorFlow lacks private internals that {needed_by} needs, so "
        f"{needed_by} will fail here (the rest of the shim is not affected); {advice}. "
        f"Received: TensorFlow {found.tensorflow} without {listed}."
    )
