"""`python -m multi_gpu_codemod ...`, the same as `multi-gpu-codemod ...` (cli.py)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
