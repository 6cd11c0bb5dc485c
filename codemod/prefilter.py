"""Byte-level prefilter: files that cannot contain a site are never parsed by libcst.

Every call the recogniser (recognise.py) and the checkpoint fixer act on is reached through
a name that appears literally in the file: `multi_gpu_model` (also via a
`...multi_gpu_utils` module or an alias, whose import names it), the copied helpers
`make_parallel` / `to_multi_gpu`, the `ModelMGPU`-style wrapper classes (a local one calls
`multi_gpu_model` in its `__init__`), `AltModelCheckpoint`, and the wrapper-named calls the
leftovers fixer reports (`gpu` or `parallel` in the name). A Python file's coding cookie may
only name an ASCII-compatible encoding, so a byte search is exact in every encoding a Python
file may use.
"""

from __future__ import annotations

__all__ = ["MARKERS", "may_contain_site"]

MARKERS: tuple[bytes, ...] = (
    b"multi_gpu",  # multi_gpu_model, keras.utils.multi_gpu_utils
    b"make_parallel",
    b"to_multi_gpu",
    b"ModelMGPU",
    b"MultiGPUModel",
    b"ModelMultiGPU",
    b"MultiGpuModel",
    b"AltModelCheckpoint",
    # contrib strategies, TF 1.x `num_gpus`, Estimator, hand-placed GPU towers
    b"contrib",
    b"num_gpus",
    b"model_to_estimator",
    b"gpu:",
    b"GPU:",
    # callbacks unwrapping the parallel model (`self.model.layers[-2]`, `get_layer('model_1')`)
    b"layers[-",
    b"get_layer('model",
    b'get_layer("model',
    # a wrapper-named call imported from the project (`ParallelNet(m, 2)`, `GpuWrapper(m, gpus=2)`)
    b"arallel",
    b"gpu",
    b"Gpu",
    b"GPU",
)


def may_contain_site(data: bytes) -> bool:
    """False only when no marker occurs: such a file is left as it is, without a libcst parse."""
    return any(marker in data for marker in MARKERS)
