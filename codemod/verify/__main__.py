"""`python -m multi_gpu_codemod.verify SCRIPT`, the same as `multi-gpu-codemod verify SCRIPT`."""

import sys

from . import main

sys.exit(main(sys.argv[1:]))
