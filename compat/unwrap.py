"""`multi-gpu-compat unwrap OLD.h5 NEW.keras`: save the template of a legacy multi-GPU file.

The output format follows NEW's suffix: `.keras` (Keras's current format) or `.h5` /
`.hdf5` (legacy HDF5). An existing NEW is left alone unless `--force` is given; the output
goes through the project's atomic writer (a random, exclusively created temporary name in
NEW's folder, fsync, rename), so a failure never leaves a half-written NEW behind and no
planted symlink can redirect the write. The input is checked with h5py alone before TensorFlow is
imported, so rejecting a bad file is fast. Exit status: 0 on success, 1 when the file
cannot be unwrapped, 2 on a usage error; failures print one line on stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

_PROG = "multi-gpu-compat unwrap"
_SUFFIXES = (".keras", ".h5", ".hdf5")


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage dump
        raise _UsageError(message)


def _parser() -> _Parser:
    parser = _Parser(
        prog=_PROG,
        description="Turn a model file saved from `multi_gpu_model` into the plain template "
        "model, without executing the Lambda bytecode stored in it.",
    )
    parser.add_argument("old", metavar="OLD.h5", help="legacy multi-GPU model file")
    parser.add_argument("new", metavar="NEW.keras", help="output file: .keras, .h5 or .hdf5")
    parser.add_argument("--force", action="store_true", help="overwrite NEW if it exists")
    return parser


def _printable(text: str) -> str:
    """Without controls: a terminal escape (or other control) in a path is shown as an escape."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def _fail(message: str, status: int = 1) -> int:
    print(f"{_PROG}: error: {_printable(' '.join(message.split()))}", file=sys.stderr)
    return status


def main(argv: list[str]) -> int:
    try:
        args = _parser().parse_args(argv)
    except _UsageError as e:
        return _fail(f"{e} (see `{_PROG} --help`)", 2)
    new = os.fspath(args.new)
    if not new.endswith(_SUFFIXES):
        return _fail(f"NEW must end in .keras, .h5 or .hdf5. Received: {new}", 2)
    if os.path.isdir(new):
        return _fail(f"NEW is a directory: {new}. Give the path of the file to write.", 2)
    folder = os.path.dirname(os.path.abspath(new))
    if not os.path.isdir(folder):
        return _fail(f"The folder of NEW does not exist: {folder}. Create it first.", 2)
    if os.path.lexists(new) and not args.force:
        return _fail(f"{new} already exists; pass --force to overwrite it.")
    if os.path.exists(new) and os.path.exists(args.old) and os.path.samefile(new, args.old):
        return _fail("NEW must be a different file from OLD.", 2)

    from . import legacy_models

    try:
        info = legacy_models._inspect(args.old)
        if info.model_config is None:
            raise legacy_models.NotMultiGPUModelError(
                f"{args.old} holds weights only (written by `save_weights`). Build the "
                "template in code and use `multi_gpu_compat.load_legacy_weights(template, path)`."
            )
        if not info.is_parallel:
            raise legacy_models.NotMultiGPUModelError(
                f"{args.old} is not a multi-GPU model (no slicing Lambdas, nested template "
                "and Concatenate layers found); load it with `keras.models.load_model` or "
                "`multi_gpu_compat.load_legacy_model`."
            )
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # keep stderr to our own line
        model = legacy_models.load_legacy_model(args.old)
        _save(model, new)
    except (OSError, ValueError, ImportError) as e:
        return _fail(str(e))
    except Exception as e:  # one line, never a traceback; NEW is complete or untouched
        return _fail(
            f"could not unwrap {args.old}: {type(e).__name__}: {str(e)[:300]}. The file is "
            "probably damaged; copy it again from its source, or report this if it is not."
        )
    levels = " then ".join(f"{n} GPUs" for n in info.replicas)
    print(
        f"Wrote {_printable(new)}: template '{model.name}' ({model.count_params()} parameters), "
        f"unwrapped from multi_gpu_model ({levels})."
    )
    return 0


def _save(model, new: str) -> None:
    """Writes through the project's atomic writer, so NEW is complete or untouched.

    Keras writes the file itself, so it gets a path in a new private folder with a random name
    beside NEW (no name anyone could predict or plant a symlink at); the file is then synced and
    renamed over NEW. A symlink at NEW is replaced, never followed.
    """
    from multi_gpu_codemod.atomic_write import output_path

    with output_path(Path(new), os.path.splitext(new)[1]) as temp:
        model.save(os.fspath(temp))
