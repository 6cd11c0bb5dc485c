"""Findings: sites the codemod leaves for a human, each with a stable code."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CODES", "FILE_LEVEL", "Finding"]

# Stable codes -> one-line title. MIGRATION.md documents each one; tests check the two agree.
CODES: dict[str, str] = {
    "MGPU101": "template not built in this function",
    "MGPU102": "call shape not understood",
    "MGPU103": "call in a position the codemod does not rewrite",
    "MGPU104": "template construction cannot be moved under the scope",
    "MGPU105": "GPU count is computed after the template is built",
    "MGPU106": "fallback kept: its other branch is now dead code",
    "MGPU107": "multi_gpu_model called but not imported",
    "MGPU108": "multi_gpu_model imported from a module of this project",
    "MGPU109": "an object the model or compile uses is created at module level",
    "MGPU110": "compile receives an optimizer or metric created outside the scope",
    "MGPU112": "template assigned only on some paths to the call",
    "MGPU113": "a layer or model built by the caller or another method is used in the construction",
    "MGPU114": "the call's own strategy scope does not cover the construction",
    "MGPU115": "a device setting cannot stay before the strategy line",
    "MGPU116": "sites sharing code need different strategies",
    "MGPU117": "gpus read as a count or as GPU ids from its name only",
    "MGPU118": "a model or layer the construction uses is built before the scope and cannot be covered",
    "MGPU119": "the template and the parallel model are compiled with different arguments",
    "MGPU120": "multi_gpu_model is also used as a value in this file",
    "MGPU121": "a method of the parallel model is replaced by assignment",
    "MGPU122": "a helper saving the template it unwraps is also given other models",
    "MGPU202": "no compile found for the migrated model",
    "MGPU203": "*_on_batch call on a model now under MirroredStrategy",
    "MGPU204": "inference through model tensors and a TF1 session",
    "MGPU301": "template recovery on the parallel model",
    "MGPU302": "callback swaps in the template in set_model",
    "MGPU303": "AltModelCheckpoint on a model that is not a migrated template",
    "MGPU304": "callback unwraps the old parallel model",
    "MGPU305": "comment or docstring still names what the migration removed",
    "MGPU306": "weights the old parallel model wrote are loaded into the migrated model",
    "MGPU401": "multi-GPU helper no longer used",
    "MGPU402": "copied multi-GPU helper defined here",
    "MGPU403": "multi_gpu_model bound both by a Keras import and otherwise",
    "MGPU404": "multi_gpu_model used as a value, not called",
    "MGPU406": "a builder that returned the (template, parallel) pair returns one model",
    "MGPU407": "TensorFlow 1 call left in a migrated file",
    "MGPU111": "call of a wrapper-like name imported from this project",
    "MGPU501": "file is not valid Python 3",
    "MGPU502": "rewrite did not parse; file left unchanged",
    "MGPU503": "file could not be read or written",
    "MGPU504": "file too large, too slow or too memory-hungry to rewrite within the limits",
    "MGPU505": "file nested too deeply to parse safely",
    "MGPU506": "not a regular file (FIFO, device, socket): never opened",
    "MGPU507": "file changed while the codemod ran: not replaced",
    "MGPU508": "notebook format the codemod does not read (nbformat 3, cell without cell_type)",
    "MGPU601": "tf.contrib / TF 1.x strategy without an exact current equivalent",
    "MGPU605": "a strategy feeds tf.estimator, removed in TensorFlow 2.16",
    "MGPU602": "model_to_estimator pattern not rewritten",
    "MGPU603": "hand-placed GPU towers (model parallelism) left as they are",
    "MGPU604": "hand-written data-parallel towers (a loop over GPUs) left as they are",
    "MGPU701": "MultiWorkerMirroredStrategy may not be created before TensorFlow's first op",
    "MGPU702": "save not made chief-aware for multi-worker training",
    "MGPU703": "notebook not rewritten for multi-worker training",
}


# Whole-file problems: printed as `path: message [CODE]` (the message carries the position).
FILE_LEVEL = frozenset({"MGPU501"})


@dataclass(frozen=True, order=True)
class Finding:
    """One site for a human: `path:line:col: CODE message` (line and column 1-based).

    In a notebook `line` counts within the code cell `cell` (1-based, counting every cell of
    the notebook, markdown included, as Jupyter shows them): `nb.ipynb:cell 3:line 2:col 5: CODE ...`.
    """

    line: int
    col: int
    code: str
    message: str
    path: str = "<string>"
    cell: int | None = None

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unknown finding code {self.code}")

    def location(self, path: str | None = None, *, position: bool = True) -> str:
        where = path or self.path
        if self.cell is not None:
            where = f"{where}:cell {self.cell}"
            return f"{where}:line {self.line}:col {self.col}" if position else where
        return f"{where}:{self.line}:{self.col}" if position else where

    def format(self, path: str | None = None) -> str:
        if self.code in FILE_LEVEL:
            return f"{self.location(path, position=False)}: {self.message} [{self.code}]"
        return f"{self.location(path)}: {self.code} {self.message}"
