"""Whether an `if`/`elif` chain without `else` stops the script when no branch runs.

Legacy scripts often choose the model with `if gpus > 1: ... elif gpus == 1: ...` and no `else`.
When every branch binds a name (`trainer = ...`) that nothing bound before, and the statement
after the chain reads it (`trainer.compile(...)`), the path where no branch runs ends in a
`NameError` (`UnboundLocalError` in a function). Statements every branch shares can then be
written once without changing what any working path does (same_branches.py).
"""

from __future__ import annotations

import builtins

import libcst as cst

from .same_branches import bodies_of_if
from ._tree import Tree, bound_names, findall, walk, walk_same_scope

__all__ = ["stops_when_no_branch_runs"]

_BUILTINS = frozenset(dir(builtins))


def stops_when_no_branch_runs(tree: Tree, statement: cst.If) -> bool:
    """True when no path reaches the code after `statement` without a branch having run, except
    by raising `NameError` on a name every branch binds (see the module docstring)."""
    if bodies_of_if(statement, no_branch_stops=False) is not None:
        return False  # it ends in `else:`: a branch always runs
    bodies = bodies_of_if(statement, no_branch_stops=True)
    if bodies is None:
        return False
    scope = tree.enclosing_scope_node(statement)
    if isinstance(scope, (cst.ClassDef, cst.Lambda)) or not _plainly_reached(tree, statement, scope):
        return False
    shared = set.intersection(*(_names_bound_at_top(body) for body in bodies))
    return any(_unbound_then_read(tree, statement, scope, name) for name in sorted(shared))


def _names_bound_at_top(body: list[cst.BaseStatement]) -> set[str]:
    """Names a branch's own simple statements bind (not inside a nested `if`, loop or `try`)."""
    names: set[str] = set()
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            names |= bound_names(statement)
    return names


def _plainly_reached(tree: Tree, statement: cst.If, scope: cst.CSTNode) -> bool:
    """No loop (a name bound on an earlier pass), `try` or unknown `with` (either may swallow the
    `NameError`) lies between the chain and its scope."""
    for ancestor in tree.ancestors(statement):
        if ancestor is scope:
            return True
        if isinstance(ancestor, (cst.For, cst.While, cst.Try, cst.TryStar)):
            return False
        if isinstance(ancestor, cst.With) and not tree.is_cpu_device_with(ancestor):
            return False
    return True


def _unbound_then_read(tree: Tree, statement: cst.If, scope: cst.CSTNode, name: str) -> bool:
    if name in _BUILTINS or name.startswith("__"):
        return False  # a module-level read would find the builtin
    if isinstance(scope, cst.FunctionDef) and name in _parameters(scope):
        return False
    start = tree.order(statement)
    root = scope.body if isinstance(scope, cst.FunctionDef) else scope
    for node in walk_same_scope(root):
        if isinstance(node, cst.ImportFrom) and isinstance(node.names, cst.ImportStar):
            return False
        if tree.order(node) < start and name in _names_bound_by(node):
            return False  # bound before the chain: it may hold a value when no branch runs
    # `global name` anywhere (a function of this module may bind it before the chain runs)
    if any(name in {x.name.value for x in g.names} for g in findall(tree.module, (cst.Global, cst.Nonlocal))):
        return False
    return _read_next(tree, statement, name)


def _names_bound_by(node: cst.CSTNode) -> set[str]:
    """Names `node` itself binds: a simple statement's targets and imports, a definition's name,
    a loop's target, `with ... as`, `except ... as`, `:=`."""
    if isinstance(node, (cst.SimpleStatementLine, cst.FunctionDef, cst.ClassDef)):
        return bound_names(node)
    targets: list[cst.CSTNode] = []
    if isinstance(node, (cst.For, cst.CompFor, cst.NamedExpr)):
        targets = [node.target]
    elif isinstance(node, (cst.AsName)):
        targets = [node.name]
    return {n.value for t in targets for n in walk(t) if isinstance(n, cst.Name)}


def _parameters(function: cst.FunctionDef) -> set[str]:
    params = function.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            every.append(star)
    return {p.name.value for p in every}


def _read_next(tree: Tree, statement: cst.If, name: str) -> bool:
    """A later simple statement of the same block calls a method of `name` first thing
    (`name.compile(...)`, `h = name.fit(...)`), and the statements between bind nothing of it."""
    block, index = tree.block_of(statement)
    for following in block.body[index + 1:]:
        if not isinstance(following, cst.SimpleStatementLine):
            return False
        if _reads_first(following, name):
            return True
        if name in bound_names(following) or any(isinstance(s, cst.Del) for s in following.body):
            return False
    return False


def _reads_first(line: cst.SimpleStatementLine, name: str) -> bool:
    small = line.body[0]
    value = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == name
