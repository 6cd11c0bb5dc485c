"""`multi-gpu-codemod PATH...` / `multi-gpu-codemod verify SCRIPT` (or `python -m multi_gpu_codemod ...`)."""

from __future__ import annotations

import sys
from typing import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["verify"]:
        from .verify import main as verify_main

        return verify_main(args[1:])
    from .cli import main as cli_main

    return cli_main(args)


if __name__ == "__main__":
    sys.exit(main())
