"""Findings: sites the codemod leaves for a human, each with a stable code."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CODES", "Finding"]

# Stable codes -> one-line title. MIGRATION.md documents each one; tests check the two agree.
CODES: dict[str, str] = {
    "MGPU101": "template not built in this function",
    "MGPU102": "call shape not understood",
    "MGPU103": "call in a position the codemod does not rewrite",
    "MGPU104": "template construction cannot be moved under the scope",
    "MGPU105": "GPU count is computed after the template is built",
    "MGPU106": "fallback kept: its other branch is now dead code",
    "MGPU202": "no compile found for the migrated model",
    "MGPU301": "template recovery on the parallel model",
    "MGPU302": "callback swaps in the template in set_model",
    "MGPU303": "AltModelCheckpoint on a model that is not a migrated template",
    "MGPU401": "multi-GPU helper no longer used",
    "MGPU501": "file is not valid Python 3",
    "MGPU502": "rewrite did not parse; file left unchanged",
    "MGPU503": "file could not be read or written",
}


@dataclass(frozen=True, order=True)
class Finding:
    """One site for a human: `path:line:col: CODE message` (line and column 1-based)."""

    line: int
    col: int
    code: str
    message: str
    path: str = "<string>"

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unknown finding code {self.code}")

    def format(self, path: str | None = None) -> str:
        return f"{path or self.path}:{self.line}:{self.col}: {self.code} {self.message}"
