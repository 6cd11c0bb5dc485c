"""Collapses `try: p = multi_gpu_model(m) except ValueError: p = m` and `if gpus > 1:` guards.

MirroredStrategy also runs on one GPU or on the CPU, so a fallback whose only job is to
use the template on such machines is the strategy code itself. `if` guards stay visible: their
condition, written once as the script wrote it, chooses the strategy (`strategy_expression`
renders `if c: <mirrored> else: tf.distribute.get_strategy()`; an `else:` guard, recorded here
as `not (c)`, becomes `if c:` with the branches swapped, never a negated copy).

Only a fallback made of nothing but the call, its assignment, the `parallel = model` branch,
a local `multi_gpu_model` import and `pass` is collapsed; an `if` guard may also print or log
(`said`: those messages go into the strategy choice's branches, written once). Anything else
in a branch (any other user statement) keeps the whole try/if: only the call is rewritten.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

import libcst as cst

from ._tree import Tree, findall, used_names, walk
from .wrapper_messages import MESSAGE_FUNCTIONS, announces_wrapper, message_text, reworded

__all__ = ["ChainBranch", "Fallback", "Said", "collapse", "droppable", "message", "without_error"]

_FALLBACK_ERRORS = {"ValueError", "Exception", "BaseException"}


@dataclass
class Said:
    """An `if` guard's messages: before and after the call in its branch, and before and after
    `parallel = model` in its `else` (all before, when it has none)."""

    before: list[cst.BaseStatement]
    after: list[cst.BaseStatement]
    otherwise: list[cst.BaseStatement] = field(default_factory=list)
    otherwise_after: list[cst.BaseStatement] = field(default_factory=list)
    # a `try` inside the guard that said which path ran (`try: wrap; print('several') except:
    # print('one')`): its messages, said by the replica count after the strategy
    replicas: tuple[list[cst.BaseStatement], list[cst.BaseStatement]] | None = None
    # the guard's `else` said what the `try`'s handler said: the replica count's `if` goes after
    # the whole strategy choice, saying it for both branches
    replicas_for_both: bool = False
    # an `if`/`elif`/`else` chain that picked the model: each branch, to choose the strategy
    chain: list[ChainBranch] | None = None
    # the comment lines right above the call (`# make the model parallel`) and above the guard's
    # `else:` (`# otherwise, one GPU`): where the strategy is chosen in the branches, they stay
    # with the branch they were in
    call_leading: list[cst.EmptyLine] = field(default_factory=list)
    else_leading: list[cst.EmptyLine] = field(default_factory=list)


@dataclass
class ChainBranch:
    """One branch of a collapsed `if`/`elif`/`else`: its condition (None for the `else`), whether
    it held the call, and its messages before and after the call or `parallel = model`."""

    test: cst.BaseExpression | None
    several: bool
    before: list[cst.BaseStatement]
    after: list[cst.BaseStatement]
    # the comment lines above its `elif`/`else` (`# otherwise, several GPUs`): they stay there
    leading: list[cst.EmptyLine] = field(default_factory=list)


@dataclass
class Fallback:
    anchor: cst.BaseStatement  # the statement the rewrite removes (site, or the collapsed try/if)
    guards: list[str] = field(default_factory=list)
    collapsed: bool = False
    said: Said | None = None


_LOGGERS = frozenset({"logging", "logger", "log", "LOGGER", "LOG", "_logger"})
_LEVELS = frozenset({"info", "warning", "warn", "debug", "error"})


def message(statement: cst.CSTNode) -> bool:
    """`print(...)` or `logging.info(...)` (`logger.`, `log.`; info to error), one per line; also a
    logging callable called by name (`logger("...")`, as `def train(..., logger=print)` takes one)."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    if not isinstance(small, cst.Expr) or not isinstance(small.value, cst.Call):
        return False
    func = small.value.func
    return (isinstance(func, cst.Name) and func.value in MESSAGE_FUNCTIONS) or (
        isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
        and func.value.value in _LOGGERS and func.attr.value in _LEVELS
    )


# the end of a message's text that introduced the error: "not available: " or " (%s)"
_ERROR_LEAD = re.compile(r"[\s:;,-]*$")
_ERROR_SLOT = re.compile(r"[\s:;,-]*[(\[]?%[sr][)\]]?[.\s]*$")


def without_error(statement: cst.BaseStatement, error: set[str]) -> cst.BaseStatement | None:
    """`print('no GPUs:', err)` or `log.warning('no GPUs (%s)', err)` without the error: the
    message as it reads on one device; None for any other shape, or a comment, which may
    speak of the error."""
    if any(isinstance(n, cst.Comment) for n in walk(statement)) or not isinstance(statement, cst.SimpleStatementLine):
        return None
    call = cst.ensure_type(cst.ensure_type(statement.body[0], cst.Expr).value, cst.Call)
    args = list(call.args)
    if len(args) != 2 or any(a.keyword is not None or a.star for a in args):
        return None
    text, last = args[0].value, args[1].value
    if not (isinstance(last, cst.Name) and last.value in error) or not isinstance(text, cst.SimpleString):
        return None
    if used_names(cst.Expr(call.func)) & error or text.value[-3:] in ("'''", '"""'):
        return None
    quote, body = text.value[-1], text.value[len(text.prefix) + 1:-1]
    slots = body.count("%")
    is_print = isinstance(call.func, cst.Name) and call.func.value == "print"
    if is_print and slots == 0:
        rest = _ERROR_LEAD.sub("", body)
    elif not is_print and slots == 1 and _ERROR_SLOT.search(body):
        rest = _ERROR_SLOT.sub("", body)
    else:
        return None
    if not rest.strip():
        return None
    plain = text.with_changes(value=text.value[:len(text.prefix) + 1] + rest + quote)
    new_call = call.with_changes(args=[args[0].with_changes(value=plain, comma=cst.MaybeSentinel.DEFAULT)])
    return statement.with_changes(body=[cst.Expr(new_call)])


def is_fallback_alias(statement: cst.CSTNode, target: str, template: str, tree: Tree) -> bool:
    """`parallel = model`: the fallback branch's assignment."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return False
    small = statement.body[0]
    return (
        isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and tree.code(small.targets[0].target) == target
        and tree.code(small.value) == template
    )


def droppable(statement: cst.CSTNode) -> bool:
    """`pass` or a local `from ... import multi_gpu_model`: the only statements a collapse may drop."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Pass):
            continue
        if not (
            isinstance(small, cst.ImportFrom)
            and not isinstance(small.names, cst.ImportStar)
            and all(isinstance(a.name, cst.Name) and a.name.value == "multi_gpu_model" for a in small.names)
        ):
            return False
    return True


def _only(body: cst.CSTNode | None, anchor: cst.BaseStatement, *, announcing: bool = False) -> bool:
    """The block holds `anchor` plus `pass` / the local `multi_gpu_model` import only (and, when
    `announcing`, messages announcing the wrapper: `print("multi_gpu_model OK")`, false without it)."""
    return isinstance(body, cst.IndentedBlock) and any(s is anchor for s in body.body) and all(
        s is anchor or droppable(s) or (announcing and announces_wrapper(s)) for s in body.body
    )


def _fallback_branch_ok(body: cst.BaseSuite, target: str, template: str, tree: Tree) -> bool:
    if not isinstance(body, cst.IndentedBlock):
        return False
    statements = [s for s in body.body if not droppable(s)]
    if target == template:
        return not statements or (len(statements) == 1 and is_fallback_alias(statements[0], target, template, tree))
    return len(statements) == 1 and is_fallback_alias(statements[0], target, template, tree)


def _without_error_messages(handler: cst.ExceptHandler) -> cst.BaseSuite:
    """The handler's body less its messages about the error it names (`except ValueError as e:
    print('no multi-GPU: %s' % e)`): they told of the call's failure, which goes with the call."""
    body = handler.body
    if handler.name is None or not isinstance(body, cst.IndentedBlock):
        return body
    error = used_names(handler.name.name)
    return body.with_changes(body=[
        s for s in body.body if not (message(s) and used_names(s) & error and _comments_about_devices(s))
    ])


# What a comment on a handler's message about the call's error says when it describes the fallback
# ("# fewer GPUs than requested: train on whatever device we have"), which the strategy line now
# makes: it goes above that line. A comment on anything else ("# tell the on-call engineer") says
# the message matters to someone, and keeps the `try`.
_DEVICE_WORDS: Final = re.compile(r"\b(?:gpus?|cards?|devices?|cpus?|fall\s*back|single|fewer|multi)", re.IGNORECASE)


def _comments_about_devices(statement: cst.CSTNode) -> bool:
    """Every comment on `statement` (none at all, too) speaks of GPUs, devices or the fallback."""
    return all(_DEVICE_WORDS.search(c.value) for c in findall(statement, cst.Comment))


def _handler_ok(handler: cst.ExceptHandler, tree: Tree) -> bool:
    if handler.type is None:
        return True
    names = handler.type.elements if isinstance(handler.type, cst.Tuple) else None
    codes = [tree.code(e.value) for e in names] if names else [tree.code(handler.type)]
    return all(code.split(".")[-1] in _FALLBACK_ERRORS for code in codes)


def _in_block(tree: Tree, statement: cst.CSTNode) -> bool:
    """Not an `elif`: only statements directly in a block can be removed whole."""
    return isinstance(tree.parent(statement), (cst.Module, cst.IndentedBlock))


def _said(tree: Tree, block: cst.BaseSuite, anchor: cst.BaseStatement, allowed: bool) -> Said | None:
    """The branch's messages around the call, when everything else in it is droppable."""
    if not allowed or not isinstance(block, cst.IndentedBlock):
        return None
    index = next((i for i, s in enumerate(block.body) if s is anchor), None)
    if index is None:
        return None
    rest = [s for s in block.body if s is not anchor and not droppable(s)]
    if not rest or not all(message(s) for s in rest):
        return None
    # `print("converting model to parallel")` goes with the call: no model is converted now
    elsewhere = _messages_of(tree, anchor)
    before = [r for s in block.body[:index] if not droppable(s) for r in [_said_now(s, elsewhere)] if r is not None]
    after = [r for s in block.body[index + 1:] if not droppable(s) for r in [_said_now(s, elsewhere)] if r is not None]
    lines = list(getattr(anchor, "leading_lines", ()))  # (every concrete statement has them)
    own = len(lines)
    while own > 0 and lines[own - 1].comment is not None:
        own -= 1
    return Said(before, after, call_leading=lines[own:])


def _said_now(statement: cst.BaseStatement, said_elsewhere: frozenset[str]) -> cst.BaseStatement | None:
    """A branch's message as it reads after the rewrite: an announcement of the wrapper goes, or
    says the GPU count it carried (`'Training on %d GPUs'`), unless the code around says that
    already (`logger.info('Training on %d GPU(s)', n_gpu)` a few lines below); any other message
    as it was."""
    if not announces_wrapper(statement):
        return statement
    said = reworded(statement)
    text = message_text(said) if said is not None else None
    return None if text is not None and _said_as(text) in said_elsewhere else said


def _said_as(text: str) -> str:
    """A message's words, for comparing two: no case, `(s)` or closing dots."""
    return re.sub(r"\bgpu(?:\(s\)|s\b)", "gpu", text.lower()).rstrip(" .!:")


def _messages_of(tree: Tree, anchor: cst.CSTNode) -> frozenset[str]:
    """The words of every string in the function (or module) around `anchor`, outside the `if`
    or `try` that holds it."""
    scope = tree.enclosing_scope_node(anchor)
    holder = next((a for a in tree.ancestors(anchor) if isinstance(a, (cst.If, cst.Try))), anchor)
    inside = {id(n) for n in walk(holder)}
    return frozenset(_said_as(n.evaluated_value) for n in walk(scope) if isinstance(n, cst.SimpleString)
                     and id(n) not in inside and isinstance(n.evaluated_value, str))


def _otherwise(
    orelse: cst.If | cst.Else | None, target: str, template: str, tree: Tree, messages: bool
) -> tuple[list[cst.BaseStatement], list[cst.BaseStatement]] | None:
    """The `else` branch's messages before and after `parallel = model`, when it is a fallback
    branch (messages only when `messages`); None when it is not one."""
    if not isinstance(orelse, cst.Else):
        return None
    return _fallback_messages(orelse.body, target, template, tree, messages)


def _fallback_messages(
    body: cst.BaseSuite, target: str, template: str, tree: Tree, messages: bool
) -> tuple[list[cst.BaseStatement], list[cst.BaseStatement]] | None:
    """A fallback branch's messages before and after `parallel = model` (messages only when
    `messages`); None when the branch is not one."""
    if _fallback_branch_ok(body, target, template, tree):
        return [], []
    if not messages or not isinstance(body, cst.IndentedBlock):
        return None
    statements = [s for s in body.body if not droppable(s)]
    aliases = [i for i, s in enumerate(statements) if is_fallback_alias(s, target, template, tree)]
    said = [s for i, s in enumerate(statements) if i not in aliases]
    if len(aliases) != (0 if target == template else 1) or not all(message(s) for s in said):
        return None
    if not aliases:
        return said, []
    return statements[:aliases[0]], statements[aliases[0] + 1:]


def _announced(tree: Tree, owner: cst.Try, anchor: cst.BaseStatement, target: str,
               template: str) -> tuple[list[cst.BaseStatement], list[cst.BaseStatement]] | None:
    """The messages of a `try` that only said which path ran: besides the call its body prints or
    logs, its one handler (for what the call raised) prints, logs or passes, and may bind the
    template as the call did. None for anything else."""
    if owner.orelse is not None or owner.finalbody is not None or len(owner.handlers) != 1:
        return None
    handler = owner.handlers[0]
    if not _handler_ok(handler, tree):
        return None
    body, caught = owner.body, handler.body
    if not isinstance(body, cst.IndentedBlock) or not isinstance(caught, cst.IndentedBlock):
        return None
    said = [s for s in body.body if s is not anchor and not droppable(s)]
    otherwise = [s for s in caught.body if not droppable(s)]
    if handler.name is not None:  # `print(e)`: about the call's error, which is gone with the call
        error = used_names(handler.name.name)
        about = [s for s in otherwise if used_names(s) & error]
        if not all(message(s) and _comments_about_devices(s) for s in about):
            return None
        # (but `print('no multi-GPU:', e)` still says something true without it, when the body spoke too)
        otherwise = [
            plain for s in otherwise
            if (plain := s if not used_names(s) & error else without_error(s, error) if said else None) is not None
        ]
    aliases = [i for i, s in enumerate(otherwise) if is_fallback_alias(s, target, template, tree)]
    if target != template and len(aliases) == 1:
        otherwise = [s for i, s in enumerate(otherwise) if i != aliases[0]]
    if not any(s is anchor for s in body.body) or not (said or otherwise):
        return None
    if not all(message(s) for s in [*said, *otherwise]):
        return None
    # ("using multi_gpu_model with %d gpus" after the call: "using %d gpus", as beside a guard's call)
    elsewhere = _messages_of(tree, anchor)
    return [r for s in said for r in [_said_now(s, elsewhere)] if r is not None], otherwise


def _guarded(tree: Tree, statement: cst.Try, target: str, template: str) -> bool:
    """`statement` is all a guard's branch holds, and the guard collapses (`if flag:` with no
    `else`, or an `else` that is a fallback branch): its messages then go into the strategy choice."""
    block = tree.parent(statement)
    owner = tree.parent(block) if block is not None else None
    if not (isinstance(owner, cst.If) and owner.body is block and _only(block, statement) and _in_block(tree, owner)):
        return False
    orelse = owner.orelse
    return (orelse is None and target == template) or (
        isinstance(orelse, cst.Else) and _fallback_messages(orelse.body, target, template, tree, True) is not None
    )


def collapse(tree: Tree, statement: cst.BaseStatement, target: str, template: str, *,
             messages: bool = True) -> Fallback:
    """Climbs from the site through fallbacks that provably reduce to the strategy code
    (`messages`: an `if` guard's prints and logging may go into the strategy choice)."""
    result = Fallback(anchor=statement)
    while True:
        chain = None if result.guards or result.said else _chain(tree, result.anchor, target, template, messages)
        if chain is not None:
            result.anchor, result.said, result.collapsed = chain[0], Said([], [], chain=chain[1]), True
            return result
        block = tree.parent(result.anchor)
        owner = tree.parent(block) if block is not None else None
        if isinstance(owner, cst.Try) and owner.body is block:
            if (
                _only(block, result.anchor, announcing=messages)
                and owner.orelse is None
                and owner.finalbody is None
                and owner.handlers
                and all(
                    _handler_ok(h, tree) and _fallback_branch_ok(_without_error_messages(h), target, template, tree)
                    for h in owner.handlers
                )
            ):
                result.anchor, result.collapsed = owner, True
                continue
            replicas = _announced(tree, owner, result.anchor, target, template) if messages else None
            if replicas is not None and not result.said:
                # the comments on the handler's fallback (`# fewer than 2 GPUs visible: ...` over
                # `model = base_model`) say why one device runs: they go with its message
                handled = cst.ensure_type(owner.handlers[0].body, cst.IndentedBlock).body
                fallback = [line for st in handled if not message(st)
                            for line in getattr(st, "leading_lines", ()) if line.comment is not None]
                result.said = Said([], [], replicas=replicas, else_leading=fallback)
                result.anchor, result.collapsed = owner, True
                continue
        elif isinstance(owner, cst.If) and owner.body is block and _in_block(tree, owner):
            allowed = messages and not result.said
            said = None if _only(block, result.anchor) else _said(tree, block, result.anchor, allowed)
            orelse = owner.orelse
            if said is None and not _only(block, result.anchor):
                return result
            otherwise = _otherwise(orelse, target, template, tree, said is not None)
            if otherwise is None and said is None and result.said is not None and result.said.replicas is not None:
                # `if multi: try: wrap; print('several') except: print('one') else: print('one')`:
                # the `else` says what the `try`'s handler said, which the replica count says now
                told = _otherwise(orelse, target, template, tree, True)
                if told is not None and _codes([*told[0], *told[1]]) == _codes(result.said.replicas[1]):
                    otherwise = ([], [])
                    result.said.replicas_for_both = True
            if (orelse is None and target == template) or otherwise is not None:
                if said is not None:
                    said.otherwise, said.otherwise_after = otherwise or ([], [])
                    said.else_leading = list(orelse.leading_lines) if isinstance(orelse, cst.Else) else []
                    result.said = said
                result.guards.append(tree.code(owner.test))
                result.anchor, result.collapsed = owner, True
                continue
        elif isinstance(owner, cst.Else) and isinstance(block, cst.IndentedBlock):
            # `if n <= 1: parallel = model else: parallel = multi_gpu_model(...)`, each branch
            # perhaps saying which it is
            allowed = messages and not result.said
            said = None if _only(block, result.anchor) else _said(tree, block, result.anchor, allowed)
            if_node = tree.parent(owner)
            if (said is not None or _only(block, result.anchor)) and isinstance(if_node, cst.If) and _in_block(
                tree, if_node
            ):
                otherwise = _fallback_messages(if_node.body, target, template, tree, said is not None)
                if otherwise is not None:
                    if said is not None:
                        said.otherwise, said.otherwise_after = otherwise
                        said.else_leading = list(owner.leading_lines)
                        result.said = said
                    result.guards.append(f"not ({tree.code(if_node.test)})")
                    result.anchor, result.collapsed = if_node, True
                    continue
        return result


def _chain(
    tree: Tree, anchor: cst.BaseStatement, target: str, template: str, messages: bool
) -> tuple[cst.If, list[ChainBranch]] | None:
    """`if a: p = m elif b: p = m else: p = multi_gpu_model(m, n)` (three or more branches, one
    holding the call, every other a fallback branch; each may also print or log): the chain's
    first `if` and its branches. Each condition stays as written, once, choosing the strategy."""
    if not messages:  # the conditions move up like messages: not where they may not
        return None
    block = tree.parent(anchor)
    owner = tree.parent(block) if isinstance(block, cst.IndentedBlock) else None
    if not (isinstance(owner, cst.If) and owner.body is block) and not isinstance(owner, cst.Else):
        return None
    top = owner if isinstance(owner, cst.If) else tree.parent(owner)
    while True:
        parent = tree.parent(top) if top is not None else None
        if not (isinstance(parent, cst.If) and parent.orelse is top):
            break
        top = parent
    if not isinstance(top, cst.If) or not _in_block(tree, top):
        return None
    branches: list[tuple[cst.BaseExpression | None, cst.BaseSuite, list[cst.EmptyLine]]] = []
    current: cst.If | cst.Else | None = top
    while isinstance(current, cst.If):
        branches.append((current.test, current.body, [] if current is top else list(current.leading_lines)))
        current = current.orelse
    if not isinstance(current, cst.Else) or len(branches) < 2:
        return None  # no `else`: on no branch the name stays unbound; two branches: `collapse` itself
    branches.append((None, current.body, list(current.leading_lines)))
    found: list[ChainBranch] = []
    for test, body, leading in branches:
        if body is block:
            said = Said([], []) if _only(block, anchor) else _said(tree, block, anchor, messages)
            if said is None:
                return None
            found.append(ChainBranch(test, True, said.before, said.after, leading))
            continue
        otherwise = _fallback_messages(body, target, template, tree, messages)
        if otherwise is None:
            return None
        found.append(ChainBranch(test, False, *otherwise, leading=leading))
    return top, found


def _codes(statements: list[cst.BaseStatement]) -> list[str]:
    return [cst.Module([]).code_for_node(s.with_changes(leading_lines=[])).strip() for s in statements]

