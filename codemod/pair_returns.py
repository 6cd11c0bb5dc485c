"""A builder that returned (template, parallel model) returns the one model it now builds.

`def get_models(n_gpus): ...; return template, parallel` becomes `return template, template`
once the parallel model is the template, and its callers unpack the same model twice. A person
returns it once and lets the callers use one name:

    def get_models(n_gpus):          template, parallel = get_models(2)     ->  template = get_models(2)
        ...                           parallel.fit(x, y)                     ->  template.fit(x, y)
        return template                template.save("m.h5")                     template.save("m.h5")

Only when the rewrite made the pair (the original returned two different names), the function is
a top-level one of a file nothing imports (it runs as a script: `runs_as_script`), it has that one
`return`, and every use of it is `a, b = f(...)` where `a` and `b` are bound nowhere else in their
scope and the kept name reads the same binding wherever the other was read. Otherwise the pair stays.
core.py runs it on the rewritten module, with the original to compare.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import libcst as cst
from libcst.metadata import Assignment, CodeRange, MetadataWrapper, PositionProvider, ScopeProvider

from ._tree import code_of, findall, runs_as_script, scope_owner, walk_same_scope
from .template_names import NameRenamer

__all__ = ["SingleReturn", "described", "importable", "single_returns"]


@dataclass(frozen=True)
class SingleReturn:
    """A builder of `original` that now returns its model once: `return model` for `return model, gpu_model`."""

    function: cst.FunctionDef  # its definition in the original module
    kept: str
    dropped: str
    # the (kept, dropped) names each caller unpacked: `template, train_model = create_models(...)`
    callers: tuple[tuple[str, str], ...] = ()
    # the pair as the old `return` wrote it, in its order: `(train_m, m)` (round 53, ao11)
    returned: tuple[str, str] = ("", "")


def single_returns(original: cst.Module, new: cst.Module) -> tuple[cst.Module, list[SingleReturn]]:
    """`new` with each such builder returning its model once and its callers using one name, and
    those builders."""
    changed: list[SingleReturn] = []
    if not runs_as_script(original):
        return new, changed
    before = {s.name.value: s for s in original.body if isinstance(s, cst.FunctionDef)}
    for function in [s for s in new.body if isinstance(s, cst.FunctionDef)]:
        old = before.get(function.name.value)
        if old is None:
            continue
        pair = _pair(function)
        old_pair = _pair(old)
        if pair is None or old_pair is None:
            continue
        names = [code_of(e.value) for e in pair.elements]
        old_names = [code_of(e.value) for e in old_pair.elements]
        if names[0] != names[1] or old_names[0] == old_names[1]:
            continue
        kept = old_names.index(names[0]) if names[0] in old_names else 0
        rewritten = _rewritten(new, function, kept)
        if rewritten is not None:
            new, callers = rewritten
            returned = (old_names[0], old_names[1])
            changed.append(SingleReturn(old, old_names[kept], old_names[1 - kept], callers, returned))
    return new, changed


def described(new: cst.Module, singles: Sequence[SingleReturn]) -> cst.Module:
    """`new` with a docstring again on each builder of `singles` whose docstring went (it spoke of the
    pair only: "Returns (template, trainable) - trainable is the multi-GPU copy."), or whose
    `Returns:` section lists the pair: what it returns now, which its callers rely on (`model =
    build(...)`)."""
    wanted = {s.function.name.value for s in singles if s.function.get_docstring() is not None}
    pairs = {s.function.name.value: {s.kept, s.dropped} for s in singles}
    if not wanted:
        return new
    body = list(new.body)
    for index, statement in enumerate(body):
        if not (isinstance(statement, cst.FunctionDef) and statement.name.value in wanted):
            continue
        if not isinstance(statement.body, cst.IndentedBlock):
            continue
        returns = [n for n in walk_same_scope(statement.body) if isinstance(n, cst.Return)]
        value = returns[0].value if len(returns) == 1 else None
        if not isinstance(value, cst.Name) or value.value in {p.name.value for p in statement.params.params}:
            continue  # (a model the caller passed in: not built here)
        compiled = any(
            isinstance(c.func, cst.Attribute) and c.func.attr.value == "compile"
            and isinstance(c.func.value, cst.Name) and c.func.value.value == value.value
            for c in findall(statement, cst.Call)
        )
        if not compiled:
            continue  # (the rewrite compiles it where it is built: another shape says nothing here)
        scope = _scope_said(statement)
        if statement.get_docstring() is not None:
            statement = _pair_summary_single(statement, scope)  # ("Return (template_model, training_model).")
            statement = _returns_section_single(statement, scope)  # ("Returns:" over the pair's two items)
            # ("Returns:" whose one entry starts with the pair: "(template, parallel): the template ...")
            body[index] = _returns_entry_single(statement, scope, pairs[statement.name.value])
            continue
        text = f'"""Return the model, built and compiled under {scope}."""'
        line = cst.SimpleStatementLine(body=[cst.Expr(cst.SimpleString(text))])
        first, *rest = statement.body.body
        # the comment lines above the first statement stay with it, below the docstring
        block = statement.body.with_changes(body=[line, first, *rest])
        body[index] = statement.with_changes(body=block)
    return new.with_changes(body=body)


def _scope_said(function: cst.FunctionDef) -> str:
    """How the docstring names the scope the model is built under: `strategy.scope()` (the
    function's own `with <name>.scope():`: a MirroredStrategy or, where the script chose one
    device, TensorFlow's default), else a MirroredStrategy's."""
    for node in findall(function, cst.With):
        owner = scope_owner(node)
        if owner is not None:
            return f"`{owner}.scope()`"
    return "a tf.distribute.MirroredStrategy scope"


# a summary line naming the pair it returned: "Return (template_model, training_model)."
# (or "Return (template, trainable) models.")
_PAIR_SUMMARY: Final = re.compile(r"^\s*Returns?:?\s*\(?\s*`?\w+`?\s*,\s*`?\w+`?\s*\)?(?:\s+models?)?\.?\s*$")


def _pair_summary_single(function: cst.FunctionDef, scope: str) -> cst.FunctionDef:
    """`function` whose docstring's first line only named the pair it returned saying the one model."""
    first = cst.ensure_type(function.body, cst.IndentedBlock).body[0]
    string = cst.ensure_type(cst.ensure_type(first, cst.SimpleStatementLine).body[0], cst.Expr).value
    if not isinstance(string, cst.SimpleString) or string.prefix.lower() not in ("", "r"):
        return function
    quote = string.quote
    inner = string.value[len(string.prefix) + len(quote):len(string.value) - len(quote)]
    said = f"Return the model, built and compiled under {scope}."
    lines = inner.split("\n")
    for k, line in enumerate(lines):
        # the summary, or a later paragraph of that one line ("Returns (template, parallel).")
        alone = (k == 0 or not lines[k - 1].strip()) and (k + 1 == len(lines) or not lines[k + 1].strip())
        if _PAIR_SUMMARY.match(line) and (k == 0 or alone):
            lines[k] = line[:len(line) - len(line.lstrip())] + said
    if "\n".join(lines) == inner:
        return function
    value = f"{string.prefix}{quote}{chr(10).join(lines)}{quote}"
    return function.with_deep_changes(string, value=value)


def _returns_section_single(function: cst.FunctionDef, scope: str) -> cst.FunctionDef:
    """`function` whose docstring's `Returns:` section listed the pair (`- the template model, used for
    saving` / `- the compiled model that trains on several GPUs`) saying the one model it returns."""
    return _returns_said(function, scope, _lists_the_pair)


def _lists_the_pair(entries: list[str], pair: set[str] | None) -> bool:
    """The section's lines are the pair's two halves as items (`- ...`), or Google style
    (`template_model: the single-GPU model` / `train_model: ...`, each running on over lines
    indented further)."""
    items = [line for line in entries if _ITEM.match(line)]
    if not items:
        level = len(entries[0]) - len(entries[0].lstrip())
        items = [line for line in entries if len(line) - len(line.lstrip()) == level]
        if not all(_NAMED_ITEM.match(line) for line in items):
            items = []
    return len(items) == 2


# a `Returns:` entry that opens with the pair: "(template_model, parallel_model): the template ...",
# "tuple: (template, parallel) ...", "template, parallel -- ..."
_PAIR_ENTRY: Final = re.compile(
    r"^\s*(?:tuple\s*(?:\(|:)?\s*)?\(?`?(\w+)`?\s*,\s*`?(\w+)`?\s*\)?\s*(?:[:,]|-{1,2}|\u2013|\u2014|$)"
)


def _returns_entry_single(function: cst.FunctionDef, scope: str, pair: set[str]) -> cst.FunctionDef:
    """`function` whose docstring's `Returns:` section is one entry about the pair it returned,
    opening with its two names: the entry, all its lines, says the one model instead."""
    return _returns_said(function, scope, _opens_with_the_pair, pair)


def _opens_with_the_pair(entries: list[str], pair: set[str] | None) -> bool:
    opening = _PAIR_ENTRY.match(entries[0])
    return opening is not None and {opening.group(1), opening.group(2)} == pair


def _returns_said(
    function: cst.FunctionDef, scope: str, about_the_pair: Callable[[list[str], set[str] | None], bool],
    pair: set[str] | None = None,
) -> cst.FunctionDef:
    """`function` with its docstring's `Returns:` section (the lines indented under the heading)
    saying the one model, when `about_the_pair` holds for those lines and more of the docstring
    follows them (its closing quotes on a line of their own)."""
    first = cst.ensure_type(function.body, cst.IndentedBlock).body[0]
    string = cst.ensure_type(cst.ensure_type(first, cst.SimpleStatementLine).body[0], cst.Expr).value
    if not isinstance(string, cst.SimpleString):
        return function
    lines = string.value.split("\n")
    heading = next((k for k, line in enumerate(lines) if _RETURNS.match(line)), None)
    if heading is None:
        return function
    indent = len(lines[heading]) - len(lines[heading].lstrip())
    end = heading + 1
    while end < len(lines) and lines[end].strip() and len(lines[end]) - len(lines[end].lstrip()) > indent:
        end += 1
    if end == heading + 1 or end == len(lines) or not about_the_pair(lines[heading + 1:end], pair):
        return function  # (not about the pair, or the section ends the quotes)
    item = lines[heading + 1]
    lead = item[:len(item) - len(item.lstrip())]
    said = f"{lead}The model, built and compiled under {scope}."
    value = "\n".join([*lines[:heading + 1], said, *lines[end:]])
    return function.with_deep_changes(string, value=value)


_RETURNS: Final = re.compile(r"^\s*Returns?:\s*$")
_ITEM: Final = re.compile(r"^\s*(?:[-*]|\d+[.)])\s+\S")
_NAMED_ITEM: Final = re.compile(r"^\s*\w+(?:\s*\([^()]*\))?:\s+\S")


def importable(module: cst.Module) -> bool:
    """The file runs as a program behind `if __name__ == "__main__":`, so another file may still
    import its functions (a test, an evaluation script)."""
    return any(isinstance(s, cst.If) and "__main__" in code_of(s.test) for s in module.body)


def _pair(function: cst.FunctionDef) -> cst.Tuple | None:
    """The function's one `return a, b` (of two plain names), if that is its only `return`."""
    returns = [n for n in walk_same_scope(function.body) if isinstance(n, cst.Return)]
    if len(returns) != 1 or not isinstance(returns[0].value, cst.Tuple):
        return None
    pair = returns[0].value
    if len(pair.elements) != 2 or not all(
        isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in pair.elements
    ):
        return None
    return pair


def _rewritten(
    module: cst.Module, function: cst.FunctionDef, kept: int
) -> tuple[cst.Module, tuple[tuple[str, str], ...]] | None:
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    scopes = wrapper.resolve(ScopeProvider)
    name = function.name.value
    global_scope = scopes.get(function)
    if global_scope is None:
        return None
    assignments = list(global_scope.assignments[name])
    if len(assignments) != 1:
        return None
    renames: dict[int, str] = {}  # id of a Name read -> the name kept
    targets: dict[int, cst.Name] = {}  # id of an unpacking target -> the name kept
    callers: list[tuple[str, str]] = []
    for access in assignments[0].references:
        unpack = _unpacking(module, access.node)
        if unpack is None:
            return None
        assign, names = unpack
        keep, drop = names[kept], names[1 - kept]
        if keep.value == drop.value:
            return None
        scope = scopes.get(keep)
        if scope is None:
            return None
        mine = [a for a in scope.assignments[keep.value] if isinstance(a, Assignment)]
        other = [a for a in scope.assignments[drop.value] if isinstance(a, Assignment)]
        if len(mine) != 1 or mine[0].node is not keep or len(other) != 1 or other[0].node is not drop:
            return None
        for read in other[0].references:
            where = scopes.get(read.node)
            seen = [getattr(a, "node", None) for a in where[keep.value]] if where is not None else []
            if not isinstance(read.node, cst.Name) or seen != [keep]:
                return None  # there, the kept name would read something else
            renames[id(read.node)] = keep.value
        targets[id(assign.targets[0].target)] = keep
        callers.append((keep.value, drop.value))
    if not targets:
        return None
    positions = wrapper.resolve(PositionProvider)
    lines = module.code.splitlines()
    return module.visit(_Apply(function, renames, targets, positions, lines)), tuple(callers)


def _unpacking(module: cst.Module, name: cst.CSTNode) -> tuple[cst.Assign, Sequence[cst.Name]] | None:
    """(the assignment, its two target names) when `name` is called as `a, b = name(...)`."""
    for statement in findall(module, cst.SimpleStatementLine):
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
            continue
        assign = statement.body[0]
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.value, cst.Call)
                and assign.value.func is name):
            continue
        target = assign.targets[0].target
        if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2 and all(
            isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements
        ):
            return assign, [cst.ensure_type(e.value, cst.Name) for e in target.elements]
        return None
    return None


class _Apply(NameRenamer):
    def __init__(self, function: cst.FunctionDef, renames: dict[int, str], targets: dict[int, cst.Name],
                 positions: Mapping[cst.CSTNode, CodeRange], lines: list[str]) -> None:
        super().__init__(renames, positions, lines)
        self.function = function
        self.targets = targets
        self.functions: list[cst.CSTNode] = []  # the definitions the visit is in, innermost last

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self.functions.pop()
        return updated

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.functions.append(node)

    def leave_Lambda(self, original: cst.Lambda, updated: cst.Lambda) -> cst.Lambda:
        self.functions.pop()
        return updated

    def leave_Return(self, original: cst.Return, updated: cst.Return) -> cst.Return:
        mine = bool(self.functions) and self.functions[-1] is self.function
        if mine and isinstance(updated.value, cst.Tuple) and len(updated.value.elements) == 2:
            return updated.with_changes(value=updated.value.elements[0].value)
        return updated

    def leave_AssignTarget(self, original: cst.AssignTarget, updated: cst.AssignTarget) -> cst.AssignTarget:
        keep = self.targets.get(id(original.target))
        return updated if keep is None else updated.with_changes(target=cst.Name(keep.value))
