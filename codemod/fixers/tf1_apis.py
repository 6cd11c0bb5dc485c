"""Reports the TensorFlow 1 calls left in a rewritten file: the strategy code needs TensorFlow 2.

A 2018 script often set up its session next to the multi-GPU call (`config = tf.ConfigProto()`,
`K.set_session(tf.Session(config=config))`) or compiled with `tf.train.AdamOptimizer`. TensorFlow 2
removed those names, and the rewrite's `tf.distribute.MirroredStrategy` / `tf.config` lines are
TensorFlow 2 code: left as they are, the migrated file stops at them. They are the user's own
code, not the multi-GPU call, so they are not rewritten; each one is reported once, at its first
line, with its TensorFlow 2 form (`tf.compat.v1.` keeps it running as it is).
"""

from __future__ import annotations

from typing import Final

import libcst as cst

from ..fix_context import FixContext
from . import behaviour

__all__ = ["CODES", "fix"]

# The finding codes this stage reports (MIGRATION.md, "Finding codes").
CODES: Final = frozenset({"MGPU407"})

_SESSION: Final = "delete the line: Keras on TensorFlow 2 runs eagerly, with no session to set"
_GPU_OPTIONS: Final = (
    "for memory growth call `tf.config.experimental.set_memory_growth(gpu, True)` for each `gpu` of "
    "`tf.config.list_physical_devices('GPU')` before anything else touches the GPUs"
)
# TensorFlow 1 name (after `tensorflow.`) -> what to write instead
_REPLACEMENTS: Final = {
    "ConfigProto": _GPU_OPTIONS, "GPUOptions": _GPU_OPTIONS,
    "Session": _SESSION, "InteractiveSession": _SESSION,
    "placeholder": "use a `keras.Input` (or eager tensors)",
    "get_default_graph": "delete the line: TensorFlow 2 runs eagerly",
    "global_variables_initializer": "delete the line: Keras initialises its variables",
    "train.AdamOptimizer": "pass `tf.keras.optimizers.Adam(...)`, built under the scope",
    "train.GradientDescentOptimizer": "pass `tf.keras.optimizers.SGD(...)`, built under the scope",
    "train.MomentumOptimizer": "pass `tf.keras.optimizers.SGD(..., momentum=...)`, built under the scope",
    "train.RMSPropOptimizer": "pass `tf.keras.optimizers.RMSprop(...)`, built under the scope",
    "train.AdagradOptimizer": "pass `tf.keras.optimizers.Adagrad(...)`, built under the scope",
}
_KERAS_SESSION: Final = frozenset({"set_session", "get_session"})  # `K.set_session(...)`


def fix(ctx: FixContext) -> None:
    if not ctx.rewritten:
        return
    tree = ctx.tree
    seen: set[str] = set()
    # (a session that runs the model's tensors has its own finding, MGPU204, saying what to use)
    inference = any(f.code in behaviour.CODES for f in ctx.findings)
    for call in tree.all(cst.Call):
        assert isinstance(call, cst.Call)
        for name in sorted(tree.qualified_names(call.func)):
            old = _tf1_name(name)
            if old is None or old in seen or (inference and _instead(old) == _SESSION):
                continue
            seen.add(old)
            written = tree.code(call.func)
            # (a TensorFlow 1 optimizer has no form Keras on TensorFlow 2 compiles with)
            compat = "" if old.startswith("train.") else (
                f" (or keep it as `tf.compat.v1.keras.backend.{old}`)" if old in _KERAS_SESSION
                else f" (or keep it as `tf.compat.v1.{old}`)"
            )
            ctx.report(call, "MGPU407", (
                f"`{written}` (line {tree.position(call)[0]}) is TensorFlow 1 API, which TensorFlow 2 removed, "
                "and the migrated strategy code is TensorFlow 2 code (`tf.config`, `tf.distribute`): port this line "
                f"too. Instead, {_instead(old)}{compat}."
            ))


def _tf1_name(qualified: str) -> str | None:
    """`tensorflow.ConfigProto` -> `ConfigProto`; `keras.backend.set_session` -> `set_session`;
    None for anything else (`tensorflow.compat.v1.Session` runs on TensorFlow 2)."""
    for keras in ("keras.backend.", "tensorflow.keras.backend.", "keras.backend.tensorflow_backend."):
        if qualified.startswith(keras) and qualified[len(keras):] in _KERAS_SESSION:
            return qualified[len(keras):]
    if qualified.startswith("tensorflow.") and qualified[len("tensorflow."):] in _REPLACEMENTS:
        return qualified[len("tensorflow."):]
    return None


def _instead(old: str) -> str:
    if old in _KERAS_SESSION:
        return _SESSION
    return _REPLACEMENTS[old]
