"""`python -m codemod PATH...`."""

import sys

from .cli import main

sys.exit(main())
