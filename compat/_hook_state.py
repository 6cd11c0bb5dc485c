"""Whether the import hook serves this process, read from `sys.meta_path` (imports nothing).

Kept apart from `import_hook` so that the low modules that word messages about the hook
(`simulation`, `_explainer`) need not import it.
"""

from __future__ import annotations

import sys

# Class attribute of the hook's finders: the real one and the .pth start-up one.
MARK = "_multi_gpu_compat_hook"
# The start-up finder's name, for a .pth file installed before it carried MARK.
_STARTUP_FINDER = "_MultiGpuCompatStartup"


def installed() -> bool:
    """True when the hook (or the start-up finder that installs it) is on `sys.meta_path`."""
    return any(
        getattr(finder, MARK, False) or getattr(finder, "__name__", "") == _STARTUP_FINDER
        for finder in sys.meta_path
    )
