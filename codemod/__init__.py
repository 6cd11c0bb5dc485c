"""multi-gpu-codemod: rewrites Keras `multi_gpu_model` scripts into MirroredStrategy scope code.

Never imports TensorFlow: it works on source text (libcst) only.
"""

if __name__ != "multi_gpu_codemod":  # imported as the repository folder, beside the installed package
    raise ImportError(
        f"{__name__!r} here is the repository folder of multi-gpu-compat; the package is installed "
        "as `multi_gpu_codemod` (command: `multi-gpu-codemod`). Install the project (`pip install -e .`) and "
        "import `multi_gpu_codemod`."
    )

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
