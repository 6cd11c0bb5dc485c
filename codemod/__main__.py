"""`python -m codemod PATH...`; `python -m codemod verify SCRIPT` (see codemod/verify.py)."""

import sys

if len(sys.argv) > 1 and sys.argv[1] == "verify":
    from .verify import main as verify_main

    sys.exit(verify_main(sys.argv[2:]))

from .cli import main

sys.exit(main())
