"""What must hold at a `multi_gpu_model` site before the codemod rewrites it, each with its finding.

fixers/strategy_scope.py checks these per site, in this order, and rewrites the site only when
all hold; otherwise it reports the first one that does not, at the line of the object involved,
with what to change. MIGRATION.md, "When the codemod rewrites, and what it reports instead",
has one row per entry of `PRECONDITIONS` (a test keeps the two in step).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import libcst as cst

from ._tree import Tree, binds

__all__ = [
    "PRECONDITIONS",
    "Precondition",
    "binds_on_every_path",
    "enclosing_strategy_scope",
    "TEMPLATE_BUILT_HERE",
    "TEMPLATE_MOVABLE",
    "TEMPLATE_ON_EVERY_PATH",
    "TEMPLATE_LOOKUPS_KNOWN",
    "CALLER_OBJECTS",
    "MODULE_OBJECTS",
    "OUTER_OBJECTS",
    "COMPILE_FOLLOWS",
    "ONE_COMPILE",
    "CALLS_ONLY",
    "NO_PATCHED_METHODS",
    "HELPERS_GIVEN_MIGRATED",
    "NO_BATCH_CALLS",
    "COMPILE_OBJECTS",
    "ONE_STRATEGY",
    "OWN_SCOPE_COVERS",
    "DEVICE_SETTINGS_FIRST",
    "GPU_COUNT_FIRST",
]

TEMPLATE_BUILT_HERE: Final = "MGPU101"
TEMPLATE_MOVABLE: Final = "MGPU104"
TEMPLATE_ON_EVERY_PATH: Final = "MGPU112"
CALLER_OBJECTS: Final = "MGPU113"
MODULE_OBJECTS: Final = "MGPU109"
OUTER_OBJECTS: Final = "MGPU118"
COMPILE_OBJECTS: Final = "MGPU110"
COMPILE_FOLLOWS: Final = "MGPU202"
ONE_COMPILE: Final = "MGPU119"
CALLS_ONLY: Final = "MGPU120"
NO_PATCHED_METHODS: Final = "MGPU121"
HELPERS_GIVEN_MIGRATED: Final = "MGPU122"
NO_BATCH_CALLS: Final = "MGPU203"
OWN_SCOPE_COVERS: Final = "MGPU114"
DEVICE_SETTINGS_FIRST: Final = "MGPU115"
GPU_COUNT_FIRST: Final = "MGPU105"
ONE_STRATEGY: Final = "MGPU116"
TEMPLATE_LOOKUPS_KNOWN: Final = "MGPU301"


@dataclass(frozen=True)
class Precondition:
    code: str
    holds_when: str
    fix: str


PRECONDITIONS: tuple[Precondition, ...] = (
    Precondition(CALLS_ONLY, "the file uses `multi_gpu_model` only by calling it (not passed, stored or tested "
                 "as a value, which would keep the removed import after migration)",
                 "remove that use (after migration a test such as `multi_gpu_model is not None` is always "
                 "true), then rerun"),
    Precondition(NO_PATCHED_METHODS, "no method of the parallel model is replaced by assignment "
                 "(`parallel.save = type(model.save)(_save, parallel)`, a save redirected to the template), there or "
                 "in a function of the file it is handed to: after migration the two are one model, and the patch "
                 "would call itself (or do nothing)",
                 "remove the patch (and the function it installs) and rerun"),
    Precondition(TEMPLATE_LOOKUPS_KNOWN, "every layer looked up in the parallel model is the template (`layers[-2]`, "
                 "`layers[-(n + 1)]`, `layers[-3]` with two outputs seen, `get_layer('model_1')` or another name "
                 "Keras gives a model itself, `get_layer(model.name)`, `._smodel`)",
                 "replace the lookup with the model if it meant the template, or index (or walk) the model's own "
                 "layers, then rerun"),
    Precondition(TEMPLATE_BUILT_HERE, "the template is assigned earlier in the function (or module) of the call",
                 "create the strategy where the model is built; build and compile it under its scope"),
    Precondition(TEMPLATE_MOVABLE, "the template is assigned by a call, not by an import, `def` or `class`",
                 "build the model in this function under `strategy.scope()` by hand"),
    Precondition(TEMPLATE_ON_EVERY_PATH, "the template is assigned on every path to the call (not only inside an "
                 "`if`, a loop or an `except`)", "build it on every path (an `else:` that builds it), or "
                 "migrate by hand"),
    Precondition(CALLER_OBJECTS, "no parameter of the function and no `self.` attribute assigned in another method "
                 "is used as a layer or model in the construction, nor passed as a `Model(...)`'s `outputs` (the "
                 "caller's layers computed it) (their variables exist outside the scope)",
                 "build that model under the same scope (in the caller), or migrate by hand"),
    Precondition(MODULE_OBJECTS, "no object the construction or `compile` uses is created at module level",
                 "create it inside the function, under the scope"),
    Precondition(OUTER_OBJECTS, "every model or layer the covered statements use that is built before them in "
                 "the same block is covered too (the scope starts earlier, over plain data, constants and "
                 "definitions only); none is built in an enclosing block",
                 "build that model or layer right before the template (or the template right after it)"),
    Precondition(COMPILE_OBJECTS, "every optimizer, loss or metric object `compile` receives is created in the "
                 "statements the scope covers (strings and plain functions are not objects); or one the scope "
                 "would create is also given to the `compile` of a model outside it (`optimizer = Adam(...)` "
                 "shared with `self.generator.compile(optimizer=optimizer)`), whose training would then fail",
                 "create it under the scope, or pass a string such as `'adam'`; give the other compile its own "
                 "optimizer"),
    Precondition(NO_BATCH_CALLS, "neither the model nor another model built in the statements the scope covers "
                 "is used with `train_on_batch`, `test_on_batch` or `predict_on_batch` after the call, nor, for a "
                 "model built at module level, in a function of the module that reads it as the global (`def "
                 "train(): disc.train_on_batch(...)`), nor in a caller of the site's function that it returned "
                 "the model to (`model, parallel = build(2)`, then `parallel.predict_on_batch(...)`) (under "
                 "MirroredStrategy Keras 3 gives every replica the whole batch passed to them: 8 inputs predict 16 "
                 "rows)", "use `fit` / `evaluate` / `predict` with `batch_size=len(x)` instead (or build the other "
                 "model outside those statements), then rerun"),
    Precondition(COMPILE_FOLLOWS, "a `compile` of the template (or of the parallel model) follows in the same "
                 "function, or the template is loaded with `load_model`, or the model is only used to predict "
                 "(nothing in the function or file compiles, trains or evaluates it, returns or stores it, or hands it "
                 "to other code: `predict` needs no compile)",
                 "compile the model in the function that builds it, after the call"),
    Precondition(ONE_COMPILE, "the template and the parallel model are not both compiled, or are compiled with "
                 "the same arguments, or the template's own compile serves only before the call (after migration "
                 "they are one model: a later compile would replace the other's optimizer, loss and metrics)",
                 "compile the model once, with the parallel model's arguments, or migrate by hand"),
    Precondition(OWN_SCOPE_COVERS, "when the call is already inside `with <strategy>.scope():`, that scope also "
                 "covers the template's construction and its `compile` (then that strategy is kept, the call "
                 "dropped, no second strategy added)", "build and compile the model inside that scope"),
    Precondition(DEVICE_SETTINGS_FIRST, "every device setting (`os.environ[...]`, `tf.config.set_visible_devices`, "
                 "`set_memory_growth`, `K.set_session`) that ran before the construction can stay before the "
                 "strategy line (it is moved above it with what it reads)",
                 "move the setting before the model's construction"),
    Precondition(GPU_COUNT_FIRST, "the GPU count can be computed before the construction (a plain count there is "
                 "moved above the strategy line)", "compute the count before building the model"),
    Precondition(ONE_STRATEGY, "sites whose scopes would overlap use the same GPU count on the same paths",
                 "create one strategy for both models by hand"),
    Precondition(HELPERS_GIVEN_MIGRATED, "every function of the file that the parallel model is passed to and that "
                 "saves the template it unwraps from that parameter (`def export(parallel, path): "
                 "parallel.layers[-2].save(path)`) is given, on every call, a parallel model the codemod migrates "
                 "(it is then made to save the model it is given)",
                 "make the function save the model it is given and pass it the template, then rerun"),
)


def binds_on_every_path(tree: Tree, statement: cst.CSTNode, target: str) -> bool:
    """`statement` assigns `target` however it runs (or leaves the block on the paths that do not)."""
    if isinstance(statement, (cst.SimpleStatementLine, cst.FunctionDef, cst.ClassDef)):
        return binds(statement, target, tree)
    if isinstance(statement, cst.If):
        if not _suite_binds(tree, statement.body, target):
            return False
        other = statement.orelse
        if other is None:
            return False
        return binds_on_every_path(tree, other, target) if isinstance(other, cst.If) else _suite_binds(
            tree, other.body, target)
    if isinstance(statement, cst.With):
        return _suite_binds(tree, statement.body, target)
    if isinstance(statement, cst.Try):
        if statement.finalbody is not None and _suite_binds(tree, statement.finalbody.body, target):
            return True
        success = _suite_binds(tree, statement.body, target) or (
            statement.orelse is not None and _suite_binds(tree, statement.orelse.body, target))
        return success and all(_suite_binds(tree, h.body, target) for h in statement.handlers)
    return False  # a loop may run zero times


def _suite_binds(tree: Tree, suite: cst.BaseSuite, target: str) -> bool:
    body: list[cst.BaseStatement] = (
        list(suite.body) if isinstance(suite, cst.IndentedBlock)
        else [cst.SimpleStatementLine(body=cst.ensure_type(suite, cst.SimpleStatementSuite).body)]
    )
    if any(binds_on_every_path(tree, s, target) for s in body):
        return True
    last = body[-1] if body else None
    return isinstance(last, cst.SimpleStatementLine) and isinstance(
        last.body[-1], (cst.Return, cst.Raise, cst.Continue, cst.Break))


def enclosing_strategy_scope(tree: Tree, node: cst.CSTNode) -> cst.With | None:
    """The innermost `with <something>.scope():` around `node` in its function (a strategy's
    scope: `tf.name_scope`/`variable_scope` are other names), or None."""
    for ancestor in tree.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
        if isinstance(ancestor, cst.With):
            for item in ancestor.items:
                call = item.item
                if (
                    isinstance(call, cst.Call)
                    and not call.args
                    and isinstance(call.func, cst.Attribute)
                    and call.func.attr.value == "scope"
                ):
                    return ancestor
    return None
