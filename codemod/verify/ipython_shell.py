"""`get_ipython()` for a notebook exported as a script, so `verify` can run the export.

`jupyter nbconvert --to script` (what verify asks for a notebook) turns `%matplotlib inline` into
`get_ipython().run_line_magic('matplotlib', 'inline')` and `!pip install ...` into
`get_ipython().system('pip install ...')`; outside IPython, `get_ipython` is not defined and the
export fails in every mode. The stand-in runs the code a magic wraps (`%time`, `%%time`,
`%%capture`, ...) once in the script's namespace, writes `%%writefile` cells, and skips the rest
(shell commands, display and extension set-up): the same in every mode, so the runs stay
comparable, and each skipped line is listed in the run's notes.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

__all__ = ["Shell"]

# Magics whose argument (line) or cell is Python code the notebook ran.
# (`%timeit` is skipped: it ran its statement many times, and once would not be the same either)
_RUNS_CODE = {"time", "capture", "prun", "debug"}


class Shell:
    """The part of IPython's `InteractiveShell` that exported notebooks call."""

    def __init__(self) -> None:
        self.skipped: list[str] = []

    def __call__(self) -> Shell:  # the script calls `get_ipython()`
        return self

    def run_line_magic(self, name: str, line: str, _stack_depth: int = 1) -> None:
        if name in _RUNS_CODE and line.strip() and not line.lstrip().startswith("-"):
            exec(compile(line, "<magic>", "exec"), _caller_globals())
        else:
            self.skipped.append(f"%{name} {line}".rstrip())

    def run_cell_magic(self, name: str, line: str, cell: str) -> None:
        if name in _RUNS_CODE:
            exec(compile(cell, "<cell>", "exec"), _caller_globals())
        elif name in ("writefile", "file") and line.strip():
            target = line.split()[-1]
            mode = "a" if line.split()[0] in ("-a", "--append") else "w"
            with Path(target).open(mode, encoding="utf-8") as handle:
                handle.write(cell)
        else:
            self.skipped.append(f"%%{name} {line}".rstrip())

    def magic(self, line: str) -> None:  # the form older exports use: get_ipython().magic('matplotlib inline')
        name, _, rest = line.lstrip("%").partition(" ")
        self.run_line_magic(name, rest)

    def system(self, command: str) -> None:
        self.skipped.append(f"!{command}")

    def getoutput(self, command: str) -> list[str]:
        self.skipped.append(f"!{command}")
        return []

    def notes(self) -> list[str]:
        if not self.skipped:
            return []
        shown = ", ".join(f"`{line}`" for line in self.skipped[:5])
        more = f" and {len(self.skipped) - 5} more" if len(self.skipped) > 5 else ""
        return [f"IPython lines skipped outside a notebook (the same in every run): {shown}{more}"]


def _caller_globals() -> dict[str, Any]:
    """The namespace of the script that called the magic: the first frame outside this module."""
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_globals.get("__name__") == __name__:
        frame = frame.f_back
    return frame.f_globals
