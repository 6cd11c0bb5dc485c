"""`--strategy multi-worker`: MultiWorkerMirroredStrategy instead of MirroredStrategy, chief-aware saving.

Runs after every other fixer, on the plan they built (only when asked for):

- each strategy region's `tf.distribute.MirroredStrategy(...)` becomes
  `tf.distribute.MultiWorkerMirroredStrategy()`: it takes no device list and uses every GPU a
  worker sees, so a `gpus` count (or a one-device guard) is dropped with a comment saying to
  limit GPUs per worker with CUDA_VISIBLE_DEVICES;
- the strategy must exist before TensorFlow's first op (collective ops are configured at
  startup): a module-level strategy line is hoisted to just after the module's imports (and
  after statements that touch `os.environ` / `tf.config`), past any code with calls; a
  strategy created inside a function or a nested block cannot be placed safely and is
  reported (MGPU701), as is every strategy after the first in a module;
- every `save(path)` / `save_weights(path)` of a migrated model, `ModelCheckpoint(path)`,
  `save_model(model, path)` and `tf.saved_model.save(model, path)` in the function where a
  model was migrated gets its path wrapped in `_chief_path(...)`, a helper emitted once per
  module: the chief (TF_CONFIG's "chief" task, else worker 0; no TF_CONFIG at all: the one
  process) keeps the path, the other workers write into one temporary directory per process
  that is removed when the process exits. Every worker still calls save (saving reads
  synchronised variables: a collective op). Saves found elsewhere are reported (MGPU702).
"""

from __future__ import annotations

from typing import Final

import functools
from dataclasses import dataclass, field

import libcst as cst
import libcst.matchers as m

from .._tree import code_of
from ..fix_context import FixContext, contains, subtree

__all__ = ["CODES", "Pending", "fix", "finish"]

# The finding codes this stage reports (MIGRATION.md, "Finding codes").
CODES: Final = frozenset({"MGPU701", "MGPU702"})

_NOTE = "# multi-gpu-codemod:"
_HOIST_NOTE = (
    "# multi-gpu-codemod: MultiWorkerMirroredStrategy must exist before TensorFlow's first op: "
    "created here, right after the imports."
)
_HELPER = '''\
def {name}(path):  # multi-gpu-codemod: multi-worker: only the chief keeps what it saves
    """`path` on the chief (TF_CONFIG's "chief" task, else worker 0, or the only process);
    on the other workers the same file name in a temporary directory removed at exit.
    Every worker must still save: saving reads synchronised variables (a collective op)."""
    import atexit
    import json
    import os
    import shutil
    import tempfile

    config = json.loads(os.environ.get("TF_CONFIG") or "{{}}")
    task = config.get("task") or {{}}
    kind, index = task.get("type", "worker"), int(task.get("index", 0))
    if kind == "chief" or (kind == "worker" and index == 0 and "chief" not in config.get("cluster", {{}})):
        return path
    scratch = getattr({name}, "scratch", None)
    if scratch is None:
        scratch = {name}.scratch = tempfile.mkdtemp(prefix=f"{{kind}}-{{index}}-")
        atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    return os.path.join(scratch, os.path.basename(os.path.normpath(os.fspath(path))))
'''
_SAVE_METHODS = ("save", "save_weights")
_MUST_PRECEDE = ("environ", "TF_CONFIG", "putenv", ".config.", "set_visible_devices", "set_memory_growth")


@dataclass
class Pending:
    """What `finish` does on the rewritten module: strategy lines to hoist, the helper to add."""

    hoist: list[str] = field(default_factory=list)  # source of module-level strategy statements
    helper: str | None = None


def fix(ctx: FixContext) -> None:
    """With `--strategy multi-worker`: converts the planned strategy lines, then has `finish` hoist
    them and add the `_chief_path` helper once the plan is applied."""
    if ctx.strategy != "multi-worker":
        return
    pending = _convert_strategies(ctx)
    if pending.hoist or pending.helper is not None:
        ctx.finishers.append(functools.partial(finish, pending=pending))


def _convert_strategies(ctx: FixContext) -> Pending:
    """MirroredStrategy regions -> MultiWorkerMirroredStrategy, chief-aware save paths."""
    pending = Pending()
    if not ctx.plan.regions:
        return pending
    tf = ctx.tf_name()
    mirrored = f"{tf}.distribute.MirroredStrategy("
    first = True
    for region in ctx.plan.regions:
        if not region.expression.startswith(mirrored):
            continue
        statements = region.block.body[region.start:region.end + 1]
        sites = [s for s in ctx.rewritten if any(contains(ctx.tree, st, s.call) for st in statements)]
        where = sites[0].call if sites else statements[0]
        if region.expression != f"{tf}.distribute.MirroredStrategy()":
            counts = [" ".join(ctx.tree.code(s.gpus).split()) for s in sites if s.gpus is not None]
            what = f"`gpus={counts[0]}`" if counts else "the one-device guard"
            region.notes.append(
                f"{_NOTE} dropped {what}: MultiWorkerMirroredStrategy uses every GPU a worker sees; "
                "limit them per worker with CUDA_VISIBLE_DEVICES."
            )
        region.expression = f"{tf}.distribute.MultiWorkerMirroredStrategy()"
        if not first:
            ctx.report(where, "MGPU701", (
                "a second MultiWorkerMirroredStrategy in this module: a process can create only one, before "
                "TensorFlow's first op; create one strategy at the top of the script and build every model "
                "under its scope."
            ))
        elif not isinstance(region.block, cst.Module):
            ctx.report(where, "MGPU701", (
                "MultiWorkerMirroredStrategy is created inside a function or block; it must be created once, "
                "before TensorFlow's first op (\"Collective ops must be configured at program startup\"): "
                f"move `{region.name} = {region.expression}` to the top of the script, after the imports."
            ))
        else:
            pending.hoist.append(f"{region.name} = {region.expression}")
        first = False
    if ctx.rewritten:
        _chief_saves(ctx, pending)
    return pending


def _helper_name(ctx: FixContext) -> str:
    taken = ctx.names_in_use()
    return next(n for n in ["_chief_path", *(f"_chief_path_{i}" for i in range(2, 1000))] if n not in taken)


def _path_arg(call: cst.Call, index: int, keywords: tuple[str, ...]) -> cst.Arg | None:
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if len(positional) > index:
        return positional[index]
    return next((a for a in call.args if a.keyword is not None and a.keyword.value in keywords), None)


def _save_kind(ctx: FixContext, call: cst.Call, receivers: set[str]) -> tuple[int, tuple[str, ...]] | None:
    """(index of the path among positional arguments, its keyword names) for a save of a
    migrated model, a ModelCheckpoint, a save_model / saved_model.save call; else None."""
    tree, func = ctx.tree, call.func
    if isinstance(func, cst.Attribute) and func.attr.value in _SAVE_METHODS:
        receiver = ctx.plan.nodes.get(id(func.value), func.value)
        if tree.code(func.value) in receivers or code_of(receiver) in receivers:
            return 0, ("filepath",)
        return None
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    if name == "ModelCheckpoint":
        return 0, ("filepath",)
    code = tree.code(func)
    if name == "save_model" or code.endswith("saved_model.save"):
        positional = [a for a in call.args if a.keyword is None and not a.star]
        first = positional[0].value if positional else None
        if first is not None and tree.code(first) in receivers:
            return 1, ("filepath", "export_dir")
    return None


def _chief_saves(ctx: FixContext, pending: Pending) -> None:
    tree = ctx.tree
    receivers = {tree.code(s.template) for s in ctx.rewritten if s.template is not None}
    receivers |= {tree.code(s.target) for s in ctx.rewritten if s.target is not None}
    scopes = {id(tree.enclosing_scope_node(s.call)) for s in ctx.rewritten}
    edited = set(ctx.plan.nodes)
    for call in tree.all(cst.Call):
        assert isinstance(call, cst.Call)
        replaced = ctx.plan.nodes.get(id(call))  # AltModelCheckpoint -> ModelCheckpoint
        current = replaced if isinstance(replaced, cst.Call) else call
        kind = _save_kind(ctx, current, receivers)
        if kind is None:
            continue
        what = tree.code(call)
        what = what if len(what) <= 60 else what[:57] + "..."
        if id(tree.enclosing_scope_node(call)) not in scopes:
            ctx.report(call, "MGPU702", (
                f"`{what}` is not where the model was migrated: if it saves a model trained under "
                "MultiWorkerMirroredStrategy, every worker must call it and only the chief may keep the file: "
                "wrap the path in `_chief_path(...)` (see MIGRATION.md, \"Going multi-machine\")."
            ))
            continue
        arg = _path_arg(current, *kind)
        if arg is None or any(a.star for a in current.args) or any(id(n) in edited for n in subtree(arg.value)):
            ctx.report(call, "MGPU702", (
                f"cannot find the path of `{what}`: every worker must call it and only the chief may keep "
                "the file: wrap the path in `_chief_path(...)` by hand (see MIGRATION.md, \"Going multi-machine\")."
            ))
            continue
        if pending.helper is None:
            pending.helper = _helper_name(ctx)
        wrapped = cst.Call(func=cst.Name(pending.helper), args=[cst.Arg(value=arg.value)])
        if replaced is not None:
            new_args = [a.with_changes(value=wrapped) if a is arg else a for a in current.args]
            ctx.plan.nodes[id(call)] = current.with_changes(args=new_args)
        else:
            ctx.plan.nodes[id(arg.value)] = wrapped


def _has_import(statement: cst.CSTNode) -> bool:
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return False
    return bool(m.findall(statement, m.Import() | m.ImportFrom()))


def _is_docstring(statement: cst.CSTNode) -> bool:
    return m.matches(statement, m.SimpleStatementLine(body=[m.Expr(value=m.SimpleString() | m.ConcatenatedString())]))


def _must_precede(module: cst.Module, statement: cst.BaseStatement) -> bool:
    """Stays before the strategy: imports, the docstring, environment and tf.config set-up."""
    if _has_import(statement) or _is_docstring(statement):
        return True
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return False
    code = module.code_for_node(statement)
    return any(word in code for word in _MUST_PRECEDE)


def _runs_code(statement: cst.BaseStatement) -> bool:
    return not isinstance(statement, (cst.FunctionDef, cst.ClassDef)) and bool(m.findall(statement, m.Call()))


def _blank() -> cst.EmptyLine:
    return cst.EmptyLine(indent=False)


def finish(module: cst.Module, pending: Pending) -> cst.Module:
    """Hoists module-level strategy lines after the imports and adds the `_chief_path` helper."""
    body = list(module.body)
    for source in pending.hoist:
        index = next((i for i, s in enumerate(body) if _stripped(module, s) == source), None)
        if index is None:
            continue
        at = next((j + 1 for j in range(index - 1, -1, -1) if _must_precede(module, body[j])), 0)
        if not any(_runs_code(s) for s in body[at:index]):
            continue
        statement = body[index]
        lines = list(statement.leading_lines)
        notes: list[cst.EmptyLine] = []
        while lines and lines[-1].comment is not None and lines[-1].comment.value.startswith(_NOTE):
            notes.insert(0, lines.pop())
        after = body[index + 1] if index + 1 < len(body) else None
        if after is not None:  # the user's lines before the construction stay with it
            body[index + 1] = after.with_changes(leading_lines=[*lines, *after.leading_lines])
        del body[index]
        moved = statement.with_changes(leading_lines=[
            _blank(), cst.EmptyLine(comment=cst.Comment(_HOIST_NOTE)), *notes,
        ])
        body.insert(at, moved)
        if at + 1 < len(body) and not body[at + 1].leading_lines:
            body[at + 1] = body[at + 1].with_changes(leading_lines=[_blank()])
    if pending.helper is not None:
        marker = f"{pending.helper}("
        first_use = next(
            (i for i, s in enumerate(body)
             if not isinstance(s, (cst.FunctionDef, cst.ClassDef)) and marker in module.code_for_node(s)),
            len(body),
        )
        at = next((j + 1 for j in range(first_use - 1, -1, -1) if _has_import(body[j]) or _is_docstring(body[j])), 0)
        helper = cst.parse_statement(_HELPER.format(name=pending.helper))
        helper = helper.with_changes(leading_lines=[_blank(), _blank()] if at > 0 else [])
        body.insert(at, helper)
        if at + 1 < len(body):
            following = body[at + 1]
            blanks = 0
            for line in following.leading_lines:
                if line.comment is not None:
                    break
                blanks += 1
            missing = max(0, 2 - blanks)
            body[at + 1] = following.with_changes(
                leading_lines=[*(_blank() for _ in range(missing)), *following.leading_lines]
            )
    return module.with_changes(body=body)


def _stripped(module: cst.Module, statement: cst.BaseStatement) -> str:
    return module.code_for_node(statement.with_changes(leading_lines=[])).strip()
