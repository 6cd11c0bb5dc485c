"""multi-gpu-codemod: rewrites Keras `multi_gpu_model` scripts into MirroredStrategy scope code.

Never imports TensorFlow: it works on source text (libcst) only.
"""

from .command import MigrateMultiGpuCommand
from .core import TransformResult, transform_module, transform_source
from .findings import CODES, Finding

__all__ = [
    "CODES",
    "Finding",
    "MigrateMultiGpuCommand",
    "TransformResult",
    "transform_module",
    "transform_source",
]
