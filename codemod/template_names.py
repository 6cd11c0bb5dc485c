"""The one model takes the plain name the parallel model had, not the template's name for its half of the pair.

`serial = build(); model = multi_gpu_model(serial, 2)` becomes one model; the rewrite reads
`model` as `serial` everywhere (every read of the parallel name renamed to the template's), and the
migrated script trains, saves and predicts with `serial`, a name that only meant "not the
parallel one". A reviewer renames it back to `model`. So does this pass: the template's name goes
where it was the old pair's half (`serial`, `template_model`, `_model`, `single_gpu_model`,
`orig_model`, `cpu_model`), the parallel model's was a plain one (`model`, `net`, `autoencoder`,
not `gpu_model` or `parallel_net`; when neither is plain, `template_model` / `train_model`, the one
model is `model`), and renaming provably changes nothing: the plain name is bound or read only in
other scopes that bind it themselves (`def evaluate(model)`), the template's is bound by plain
assignments in function scopes and in the module scope of a script or under its `if __name__ ==
"__main__":` (a builder's local and its caller's, renamed together), never a parameter, class
attribute, `global` or `nonlocal`, and every read of it resolves there. Comment words written as
that identifier (`template_model`, or a backquoted `serial`) follow, unless the comment speaks of
the old pair. core.py runs it last, on the migrated module.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from typing import Final

import libcst as cst
from libcst.metadata import (
    Assignment, ClassScope, CodeRange, GlobalScope, MetadataWrapper, ParentNodeProvider, PositionProvider,
    Scope, ScopeProvider,
)

from ._tree import runs_as_script, walk
from .layout import realign_call, realign_value
from .stale_prose import MECHANICS

__all__ = ["NameRenamer", "plain_names"]

# a name for the template's half of the old pair
_PAIR_HALF: Final = re.compile(
    r"^(?:_+(?:model|net)|(?:serial|template|tmpl|single(?:_gpu|_device)?|org|orig(?:inal)?|cpu)(?:_?(?:model|net))?"
    r"|(?:model|net)_(?:serial|template|tmpl|single|cpu|org|orig(?:inal)?))$"
)
# words of a name for the parallel half: such a name is no better than the template's
_PARALLEL_WORDS: Final = frozenset(
    "gpu gpus mgpu multi parallel par replica replicas replicated train training trainable trainer tower towers "
    "wrapped dp "
    "distributed data".split()
)


def plain_names(
    new: cst.Module, original: cst.Module, pairs: Sequence[tuple[str, str]]
) -> tuple[cst.Module, tuple[tuple[str, str], ...]]:
    """`new` with each (template, parallel) name pair's template renamed to the parallel model's
    plain name, where that provably changes nothing; and the (old, new) names renamed."""
    done: list[tuple[str, str]] = []
    for template, parallel in dict.fromkeys(pairs):
        if not _PAIR_HALF.match(template):
            continue
        # `template_model` / `train_model`: neither is plain; the noun both share is
        plain = parallel if _plain(parallel) else "net" if template.endswith("net") else "model"
        renamed = _renamed(new, original, template, plain)
        if renamed is not None:
            new = renamed
            done.append((template, plain))
    return new, tuple(done)


def _plain(name: str) -> bool:
    return not name.startswith("_") and not (set(name.lower().split("_")) & _PARALLEL_WORDS)


def _renamed(module: cst.Module, original: cst.Module, old: str, new: str) -> cst.Module | None:
    names_before = _bound_or_read(module.code)
    if names_before is None or old not in names_before:
        return None
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    scopes = {s for s in wrapper.resolve(ScopeProvider).values() if s is not None}
    # (a function taking a parameter of that name binds its own: `def __init__(self, template)`)
    owners = [s for s in scopes if old in s.assignments and not _parameter_only(s, old)]
    if not owners or any(isinstance(owner, ClassScope) for owner in owners):
        return None
    if new in names_before and not _local_elsewhere(module, scopes, owners, new):
        return None
    names: dict[int, str] = {}
    for owner in owners:  # a builder's local and its caller's (`template_model = build_models(cfg)`)
        if isinstance(owner, GlobalScope) and not runs_as_script(original) and not _main_only(
            wrapper.resolve(ParentNodeProvider), owner, old
        ):
            return None  # another file may import the module's name
        for assignment in owner.assignments[old]:
            if not (isinstance(assignment, Assignment) and isinstance(assignment.node, cst.Name)):
                return None  # a parameter, an import, a `def`/`class` of that name
            names[id(assignment.node)] = new
            for access in assignment.references:
                if not isinstance(access.node, cst.Name):
                    return None  # read in a string annotation or a `del`-like form
                names[id(access.node)] = new
    positions = wrapper.resolve(PositionProvider)
    out = module.visit(NameRenamer(names, positions, module.code.splitlines(), comments=(old, new)))
    return out if _only_parameters_left(out, old) else None  # a use the scopes did not see (`global`, `nonlocal`)


def _only_parameters_left(module: cst.Module, name: str) -> bool:
    """`name` is bound nowhere in `module` but as a parameter, and read only there, as that
    parameter; never in a `global`/`nonlocal`."""
    left = _bound_or_read(module.code)
    if left is None:
        return False
    if name not in left:
        return True
    if any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in ast.walk(ast.parse(module.code))):
        return False
    scopes = {s for s in MetadataWrapper(module).resolve(ScopeProvider).values() if s is not None}
    # (a read with no binding at all is one the scopes did not see: not a parameter's)
    return all(_parameter_only(scope, name) for scope in scopes if name in scope.assignments) and all(
        access.referents and all(isinstance(r, Assignment) and isinstance(r.node, cst.Param) for r in access.referents)
        for scope in scopes for access in scope.accesses[name]
    )


def _parameter_only(scope: Scope, name: str) -> bool:
    """Every binding of `name` in `scope` is one of its function's parameters."""
    return all(isinstance(a, Assignment) and isinstance(a.node, cst.Param) for a in scope.assignments[name])


def _local_elsewhere(module: cst.Module, scopes: set[Scope], owners: list[Scope], name: str) -> bool:
    """`name` is bound and read only in other scopes, each binding it itself (the caller under
    `__main__` may take `model` while the builder has its own local `model`): no read of it can
    reach the renamed binding, nor one of its reads another binding."""
    if any(name in owner.assignments or owner.accesses[name] for owner in owners):
        return False
    if any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in ast.walk(ast.parse(module.code))):
        return False
    return all(name in scope.assignments for scope in scopes if scope.accesses[name])


def _main_only(parents: Mapping[cst.CSTNode, cst.CSTNode], scope: GlobalScope, name: str) -> bool:
    """Every module-level binding of `name` is under `if __name__ == "__main__":`: importing the
    module binds none of them."""
    for assignment in scope.assignments[name]:
        if not isinstance(assignment, Assignment):
            return False
        node = parents.get(assignment.node)
        while node is not None and not (isinstance(node, cst.If) and _MAIN_TEST.match(_code(node.test))):
            node = parents.get(node)
        if node is None:
            return False
    return True


_MAIN_TEST: Final = re.compile(r"""^__name__\s*==\s*(['"])__main__\1$""")


def _code(node: cst.BaseExpression) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _bound_or_read(code: str) -> set[str] | None:
    """Every variable name the code binds or reads, in any scope (with parameters, `global`s and
    the names of definitions and imports); None where this Python cannot parse it."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


class NameRenamer(cst.CSTTransformer):
    """Renames the `Name` nodes whose ids `names` maps, realigning a call's continuation lines under
    its parenthesis when its head changes width (`serial.fit(x,` / `           y)`); `comments`:
    an (old, new) identifier renamed in comments too."""

    def __init__(self, names: Mapping[int, str], positions: Mapping[cst.CSTNode, CodeRange], lines: list[str],
                 comments: tuple[str, str] | None = None) -> None:
        super().__init__()
        self.names = names
        self.positions = positions
        self.lines = lines
        self.word = None if comments is None else (_identifier_in_prose(comments[0]), comments[1])

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        head = original.func.value if isinstance(original.func, cst.Attribute) else original.func
        if id(head) not in self.names or original not in self.positions:
            return updated
        start = self.positions[original].start
        line = self.lines[start.line - 1]
        return realign_call(original, updated, start.column, line[:len(line) - len(line.lstrip())])

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        if len(original.targets) != 1 or id(target := original.targets[0].target) not in self.names:
            return updated
        # (a value holding a renamed name, a call's head, realigns itself: leave_Call)
        if original.value not in self.positions or any(
            id(n) in self.names for n in walk(original.value) if isinstance(n, cst.Name)
        ):
            return updated
        assert isinstance(target, cst.Name)
        start = self.positions[original.value].start
        line = self.lines[start.line - 1]
        delta = len(self.names[id(target)]) - len(target.value)
        return realign_value(original, updated, start.column, line[:len(line) - len(line.lstrip())], delta)

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if id(original) in self.names:
            return updated.with_changes(value=self.names[id(original)])
        return updated

    def leave_Comment(self, original: cst.Comment, updated: cst.Comment) -> cst.Comment:
        if self.word is None:
            return updated
        pattern, new = self.word
        text = pattern.sub(new, updated.value)
        if text == updated.value or MECHANICS.search(text):
            # ("# weights are saved from org_model; the multi-GPU model shares them": the pair, which
            # stale_prose.py drops whole; renamed first, it would read as true)
            return updated
        return updated.with_changes(value=text)


def _identifier_in_prose(name: str) -> re.Pattern[str]:
    """`name` as an identifier in a comment: inside backquotes, or bare where it cannot be an English
    word (it has an underscore: `template_model`)."""
    if "_" in name.strip("_"):
        return re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")
    return re.compile(rf"(?<=`){re.escape(name)}(?=`)")
