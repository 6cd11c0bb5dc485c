"""Pruning: the top-level definitions the scope analysis may skip, because they cannot change its answers.

Scope analysis (libcst's ScopeProvider) costs time per node; in a long module most functions
and classes have nothing to do with `multi_gpu_model`. A def/class is skipped when it reads no
name the analysed code binds, binds none it reads and holds nothing the codemod looks for. It
stays in the module, untouched.
"""

from __future__ import annotations

import ast
import os
import re
import symtable
from typing import Union

import libcst as cst

from ._tree import zip_equal
from .prefilter import may_contain_site

__all__ = ["ENABLED", "relevant_statements"]

# "1": analyse every statement (to compare the answers with and without pruning).
ENABLED = os.environ.get("MULTI_GPU_CODEMOD_FULL_SCOPES") != "1"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ALWAYS = frozenset({"tf", "tensorflow", "strategy", "mirrored_strategy", "distribute_strategy", "global", "nonlocal"})
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_Definition = Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef]  # not `X | Y`: runs on Python 3.9


def relevant_statements(module: cst.Module, tree: ast.Module, text: str) -> list[bool] | None:
    """Which top-level statements the scope analysis must see (a flag per `module.body` item).

    Every statement but a def/class is kept. A def/class is kept when its text holds a
    prefilter marker, `global`/`nonlocal`, a name the codemod may choose (`tf`, `strategy`...),
    a name it reads from module scope that a kept statement binds, or when a kept statement mentions its
    name; repeated until nothing changes. A def/class left out reads no name the kept code
    binds and binds none it reads, so it cannot change any answer about the kept code; it is
    still in the module, untouched. None when the ast and libcst statements do not line up.
    """
    groups = _ast_statements(module, tree)
    if groups is None:
        return None
    definitions: dict[int, _Definition] = {
        index: group[0] for index, group in enumerate(groups) if len(group) == 1 and isinstance(group[0], _DEFINITIONS)
    }
    keep = [index not in definitions for index in range(len(groups))]
    if all(keep):
        return None
    lines = text.splitlines(keepends=True)
    reads: dict[int, set[str]] = {}
    for index, node in definitions.items():
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        segment = "".join(lines[first - 1:node.end_lineno])
        names = set(_IDENT.findall(segment))
        if _ALWAYS & names or may_contain_site(segment.encode("utf-8", "surrogatepass")):
            keep[index] = True
        module_reads = _module_level_reads(segment)
        reads[index] = names if module_reads is None else module_reads
    _keep_connected(groups, keep, definitions, reads)
    return keep


def _ast_statements(module: cst.Module, tree: ast.Module) -> list[list[ast.stmt]] | None:
    """The `ast` statements of each libcst top-level statement (`a = 1; b = 2` is one line, two
    statements), or None when the two parses do not line up."""
    groups: list[list[ast.stmt]] = []
    statements = iter(tree.body)
    try:
        for statement in module.body:
            count = len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
            groups.append([next(statements) for _ in range(count)])
    except StopIteration:
        return None
    if next(statements, None) is not None:
        return None
    return groups


def _keep_connected(groups: list[list[ast.stmt]], keep: list[bool], definitions: dict[int, _Definition],
                    reads: dict[int, set[str]]) -> None:
    """Keeps every definition the kept statements mention or that reads a name they bind, until
    nothing changes."""
    bound: set[str] = set()
    mentioned: set[str] = set()
    seen: set[int] = set()
    changed = True
    while changed:
        changed = False
        for index, (group, kept) in enumerate(zip_equal(groups, keep)):
            if not kept or index in seen:
                continue
            seen.add(index)
            for node in group:
                _collect_names(node, mentioned, bound)
        for index, node in definitions.items():
            if not keep[index] and (node.name in mentioned or reads[index] & bound):
                keep[index] = True
                changed = True


def _collect_names(statement: ast.stmt, mentioned: set[str], bound: set[str]) -> None:
    """Adds the names `statement` mentions (names, attributes, definitions) and those it binds."""
    for sub in ast.walk(statement):
        if isinstance(sub, ast.Name):
            mentioned.add(sub.id)
            if isinstance(sub.ctx, (ast.Store, ast.Del)):
                bound.add(sub.id)
        elif isinstance(sub, ast.alias):
            bound.add((sub.asname or sub.name).split(".")[0])
        elif isinstance(sub, _DEFINITIONS):
            bound.add(sub.name)
            mentioned.add(sub.name)
        elif isinstance(sub, ast.Attribute):
            mentioned.add(sub.attr)


def _module_level_reads(segment: str) -> set[str] | None:
    """Names a top-level def/class reads from module scope (symtable), None if it can't tell.

    Its decorators, defaults, annotations and bases are read at module level; inside it, only
    names that resolve to globals. A loop variable `x` in a function is its own local and says
    nothing about a module-level `x`.
    """
    try:
        top = symtable.symtable(segment, "<def>", "exec")
    except (SyntaxError, ValueError):
        return None
    names: set[str] = set()
    tables = [top]
    while tables:
        table = tables.pop()
        for symbol in table.get_symbols():
            if symbol.is_referenced() and (table is top or symbol.is_global()):
                names.add(symbol.get_name())
        tables.extend(table.get_children())
    return names
