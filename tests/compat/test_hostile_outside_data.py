"""Legacy `.h5` files whose data would come from outside the file (external storage, virtual
datasets, links to other files) are refused with one sentence, by the loaders and by `unwrap`."""

from __future__ import annotations

import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest

import multi_gpu_compat as compat
from multi_gpu_compat.legacy_models import LegacyFileError
from test_hostile_legacy_files import FIXTURES, _assert_one_line_error, _unwrap

MULTI_GPU_FILE = "func_2gpu_2out_keras224.h5"
WEIGHTS_FILE = "func_2gpu_2out_weights_only.h5"


def _first_weight(f: h5py.File) -> tuple[h5py.Group, str]:
    found: list[tuple[h5py.Group, str]] = []

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset) and not found:
            found.append((obj.parent, name.rsplit("/", 1)[-1]))

    f.visititems(visit)
    return found[0]


def _secret(tmp_path: Path) -> Path:
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"root:x:0:0:secret-password-line\n" * 64)
    return secret


def _external_storage(path: Path, secret: Path) -> None:
    with h5py.File(path, "r+") as f:
        group, name = _first_weight(f)
        shape, dtype = group[name].shape, group[name].dtype
        del group[name]
        group.create_dataset(name, shape=shape, dtype=dtype, external=[(str(secret), 0, h5py.h5f.UNLIMITED)])


def _virtual(path: Path, tmp_path: Path) -> None:
    with h5py.File(path, "r+") as f:
        group, name = _first_weight(f)
        shape, dtype = group[name].shape, group[name].dtype
        del group[name]
        layout = h5py.VirtualLayout(shape=shape, dtype=dtype)
        layout[...] = h5py.VirtualSource(str(tmp_path / "missing.h5"), "data", shape=shape)
        group.create_virtual_dataset(name, layout, fillvalue=0)


def _external_link(path: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f.create_dataset("data", data=np.ones(3))
    with h5py.File(path, "r+") as f:
        group, name = _first_weight(f)
        del group[name]
        group[name] = h5py.ExternalLink(str(other), "/data")


HOSTILE = {
    "external storage": lambda path, tmp: _external_storage(path, _secret(tmp)),
    "virtual dataset": _virtual,
    "link to another file": _external_link,
}


def _hostile(tmp_path: Path, source: str, kind: str) -> Path:
    path = tmp_path / f"hostile_{source}"
    shutil.copy(FIXTURES / source, path)
    HOSTILE[kind](path, tmp_path)
    return path


@pytest.mark.parametrize("kind", sorted(HOSTILE))
@pytest.mark.parametrize("source", [MULTI_GPU_FILE, WEIGHTS_FILE])
def test_loaders_refuse_data_from_outside_the_file(tmp_path, source, kind):
    path = _hostile(tmp_path, source, kind)
    with pytest.raises(LegacyFileError, match="would be read from outside the file") as info:
        if source == WEIGHTS_FILE:
            compat.load_legacy_weights(object(), path)
        else:
            compat.load_legacy_model(path)
    assert "secret-password" not in str(info.value)


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_unwrap_refuses_data_from_outside_the_file_in_one_line(tmp_path, kind):
    path = _hostile(tmp_path, MULTI_GPU_FILE, kind)
    new = tmp_path / "new.keras"
    _assert_one_line_error(_unwrap(str(path), str(new)), 1, "would be read from outside the file")
    assert not new.exists()


def test_link_inside_the_file_is_still_accepted(tmp_path):
    path = tmp_path / "soft.h5"
    shutil.copy(FIXTURES / MULTI_GPU_FILE, path)
    with h5py.File(path, "r+") as f:
        f["alias"] = h5py.SoftLink("/model_weights")
    from multi_gpu_compat import legacy_models

    assert legacy_models._inspect(path).is_parallel
