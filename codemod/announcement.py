"""A kept `try` that only announced which path ran becomes an `if` on the replica count.

    try:                                          if strategy.num_replicas_in_sync > 1:
        model = multi_gpu_model(model)                print("Training on several GPUs")
        print("Training on several GPUs")   ->    else:
    except ValueError:                                print("Training on one device")
        print("Training on one device")

The old call raised (a `ValueError`) without enough GPUs, so the body's messages printed exactly
when the model was replicated and the handler's when it was not. Once the call is gone nothing in
the body raises, the `except` branch would never run, and the body's message would print on one
device too; the replica count says what the `try` said.

Where the messages read nothing the scope binds, that `if` goes right under the strategy line,
above the scope (fallbacks.collapse, plan.py); this module writes it in place of the `try`
otherwise (a message reads the model, or the `try` sits in a later notebook cell).
"""

from __future__ import annotations

import re

from dataclasses import dataclass

import libcst as cst

from ._tree import Tree, code_of, used_names, walk
from .fallbacks import droppable, message, without_error
from .replica_count import replicas_said
from .same_branches import without_blank_lead

__all__ = ["Announcement", "announcement"]

_MODULE = cst.Module([])

# What `multi_gpu_model` raised without enough GPUs is a ValueError: a handler for it (or a
# broader one) ran exactly on the one-device path.
_CAUGHT = frozenset({"ValueError", "Exception", "BaseException"})


@dataclass
class Announcement:
    """What replaces the `try`: `[alias, if]` or `[if]`."""

    statements: list[cst.BaseStatement]
    alias: cst.SimpleStatementLine | None  # `parallel = model`, when the handler bound it too


def announcement(tree: Tree, kept: cst.Try, site_statement: cst.BaseStatement, strategy: str,
                 target: str, template: str, count: str | None = None) -> Announcement | None:
    """The `if <strategy>.num_replicas_in_sync > 1:` that replaces `kept` (after `target =
    template` when the `except` branch bound that too), or None when `kept` does more than
    announce: another statement besides the call, another handler, an `else` doing more than
    printing, a `finally`, or a message reading `target` where the rewrite renames it away.
    `count`: the most GPUs the strategy takes; a message printing it prints the replica count."""
    if kept.finalbody is not None or len(kept.handlers) != 1:
        return None
    # `else: print('running on 2 GPUs')`: it ran when the call did not raise, as the body's own
    # messages did after it (no comment on the `else:` line or above it, which would be lost)
    after: list[cst.BaseStatement] = []
    if kept.orelse is not None:
        if not isinstance(kept.orelse.body, cst.IndentedBlock) or _has_comment(
            kept.orelse.with_changes(body=kept.orelse.body.with_changes(body=[]))
        ):
            return None
        after = [s for s in kept.orelse.body.body if not droppable(s)]
        if not after:
            return None
    handler = kept.handlers[0]
    if not _catches_value_error(handler.type):
        return None
    if not isinstance(kept.body, cst.IndentedBlock) or not isinstance(handler.body, cst.IndentedBlock):
        return None
    if not any(s is site_statement for s in kept.body.body):
        return None
    alias_code = f"{target} = {template}"
    said = [*(s for s in kept.body.body if s is not site_statement and not droppable(s)), *after]
    otherwise = [s for s in handler.body.body if not droppable(s)]
    if handler.name is not None:
        # `except ValueError as e: log.warning('multi GPU failed (%s)', e)`: a message about the
        # call's error, which the migrated code no longer raises, goes with it
        error = {n.value for n in walk(handler.name.name) if isinstance(n, cst.Name)}
        about_error = [s for s in otherwise if used_names(s) & error]
        # (a comment on such a message is about the error too: "multi_gpu_model raises ValueError...")
        if not all(message(s) for s in about_error) or any(
            isinstance(n, cst.Comment) and not _ABOUT_ERROR.search(n.value) for s in about_error for n in walk(s)
        ):
            return None
        # ... but what it said without the error stays true on one device: `print('multi-GPU not
        # available:', err)` reads `print('multi-GPU not available')`
        # (when the body said nothing, that alone would keep an `if`: it goes, as before)
        otherwise = [
            plain for s in otherwise
            if (plain := s if not used_names(s) & error else without_error(s, error) if said else None) is not None
        ]
    aliases = [i for i, s in enumerate(otherwise) if _code(s) == alias_code]
    alias = None
    if target != template and len(aliases) == 1:
        alias = cst.ensure_type(cst.parse_statement(alias_code + "\n"), cst.SimpleStatementLine)
        otherwise = [s for i, s in enumerate(otherwise) if i != aliases[0]]
    unread = set() if target == template or alias is not None else {target.split(".")[0]}
    if not all(_message(s, unread) for s in [*said, *otherwise]):
        return None
    if not said:
        if otherwise or alias is None:
            return None
        # only the error's messages besides the alias: `parallel = model` is all that is left
        alias = alias.with_changes(leading_lines=kept.leading_lines)
        return Announcement([alias], alias)
    # (the call's own comments go above the strategy line: plan.py)
    said[0] = without_blank_lead(said[0])
    if count is not None:
        said = [replicas_said(s, count, strategy) for s in said]
    orelse = None
    if otherwise:
        otherwise[0] = without_blank_lead(otherwise[0])
        orelse = cst.Else(
            body=handler.body.with_changes(body=otherwise), leading_lines=handler.leading_lines,
            whitespace_before_colon=handler.whitespace_before_colon,
        )
    test = cst.parse_expression(f"{strategy}.num_replicas_in_sync > 1")
    chosen = cst.If(test=test, body=cst.IndentedBlock(body=said, indent=kept.body.indent), orelse=orelse)
    if alias is None:
        return Announcement([chosen.with_changes(leading_lines=kept.leading_lines)], None)
    alias = alias.with_changes(leading_lines=kept.leading_lines)
    return Announcement([alias, chosen], alias)


_ABOUT_ERROR = re.compile(r"multi_gpu_model|ValueError|\brais|\bfail", re.IGNORECASE)


def _code(statement: cst.BaseStatement) -> str:
    return _MODULE.code_for_node(statement).strip()


def _catches_value_error(kind: cst.BaseExpression | None) -> bool:
    if kind is None:
        return True  # a bare `except:`
    if isinstance(kind, cst.Tuple):
        return any(_catches_value_error(e.value) for e in kind.elements)
    return code_of(kind) in _CAUGHT


def _message(statement: cst.BaseStatement, names: set[str]) -> bool:
    """A print or logging call (fallbacks.message) reading none of `names`."""
    return message(statement) and not used_names(statement) & names


def _has_comment(statement: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Comment) for n in walk(statement))

