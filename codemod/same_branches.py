"""An `if`/`else` or `try`/`except` the rewrite left with the same statements in every branch.

After migration `parallel = multi_gpu_model(model, n)` in one branch and `parallel = model` in
the other read the same, so a kept fallback often ends up as

    if gpus > 1:                          if gpus > 1:
        parallel = model                      saver = ParallelSaver()
        saver = ParallelSaver()     ->    else:
    else:                                     saver = ModelCheckpoint(path)
        parallel = model                  parallel = model    (before the `if`, where it ran)
        saver = ModelCheckpoint(path)

Statements every branch shares are written once, where every path ran them:

- the same first statements of every branch of a complete `if`/`elif`/`else` go before it,
  when the conditions call nothing and read nothing they bind;
- the same last statements of every branch go after it (a `try` with no `else`/`finally`:
  only plain aliases `a = b`, which cannot raise where the try body got that far);
- an `else` left empty goes; an `if` left with every branch empty goes (conditions calling
  nothing); an `except` left empty gets `pass`. An `if` whose first branch would be left empty
  while another is not is left as it is (that would need a negated condition).
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from ._tree import code_tokens, walk
from .continuations import canonical
from .disjoint import disjoint

__all__ = ["bodies_of_if", "code_of", "dissolved", "merged", "without_blank_lead"]

_MODULE = cst.Module([])


def _code(statement: cst.BaseStatement) -> str:
    """The statement with its comment lines (blank lines aside): shared only if both are the same."""
    assert isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
    comments = [line for line in statement.leading_lines if line.comment is not None]
    return canonical(statement.with_changes(leading_lines=comments)).strip()


def _comments(nodes: Sequence[cst.CSTNode]) -> set[str]:
    return {n.value for node in nodes for n in walk(node) if isinstance(n, cst.Comment)}


def merged(
    statement: cst.If | cst.Try, *, no_branch_stops: bool = False, labels_go: bool = False
) -> list[cst.BaseStatement] | None:
    """`[before..., statement', after...]` (or the shared statements alone), or None when no
    statement is shared by every branch, or when writing them once would drop a comment.

    `no_branch_stops`: `statement` is an `if`/`elif` chain without `else` whose no-branch path
    stops with a `NameError` (fallthrough.py), so its branches count as every path.
    `labels_go`: an `if` written once whole may drop the comments that labelled its later
    branches (`# single gpu` over `else:`): no branch is left for them to label."""
    if isinstance(statement, cst.If):
        result = _merged_if(statement, no_branch_stops)
    else:
        result = _merged_try(statement)
    if result is None:
        return None
    labels = _branch_labels(statement) if labels_go and isinstance(statement, cst.If) and dissolved(
        statement, result
    ) else set()
    if not _comments([statement]) - labels <= _comments(result):
        return None
    return result


def dissolved(statement: cst.If, result: Sequence[cst.BaseStatement]) -> bool:
    """No branch of `statement` is left in `result`: every statement was written once."""
    tests = {id(test) for test in _conditions(statement)}
    return not any(isinstance(s, cst.If) and id(s.test) in tests for s in result)


def _branch_labels(statement: cst.If) -> set[str]:
    """The comments heading the `elif`/`else` branches: above them and on their header line."""
    found: set[str] = set()
    current: cst.If | cst.Else | None = statement.orelse
    while current is not None:
        found |= {line.comment.value for line in current.leading_lines if line.comment is not None}
        header = current.body.header.comment if isinstance(current.body, cst.IndentedBlock) else None
        found |= {header.value} if header is not None else set()
        current = current.orelse if isinstance(current, cst.If) else None
    return found


def bodies_of_if(statement: cst.If, no_branch_stops: bool) -> list[list[cst.BaseStatement]] | None:
    """Each branch's statements, for a chain that ends in `else:` (every path runs one branch),
    or one without whose no-branch path stops (`no_branch_stops`)."""
    bodies = []
    current: cst.If | cst.Else | None = statement
    while isinstance(current, cst.If):
        if not isinstance(current.body, cst.IndentedBlock):
            return None
        bodies.append(list(current.body.body))
        current = current.orelse
    if current is None and no_branch_stops:
        return bodies
    if not isinstance(current, cst.Else) or not isinstance(current.body, cst.IndentedBlock):
        return None
    bodies.append(list(current.body.body))
    return bodies


def _conditions(statement: cst.If) -> list[cst.BaseExpression]:
    found = []
    current: cst.If | cst.Else | None = statement
    while isinstance(current, cst.If):
        found.append(current.test)
        current = current.orelse
    return found


# Builtins a condition may call and still do nothing else (`len(gpus) == 1`): dropping or
# moving the condition cannot skip an effect.
_PURE = frozenset({"len", "int", "float", "bool", "str", "abs", "min", "max", "isinstance"})


def _calls(node: cst.CSTNode) -> bool:
    """`node` may do something when evaluated: a call (other than a pure builtin), an `await`..."""
    for n in walk(node):
        if isinstance(n, (cst.Await, cst.Yield, cst.NamedExpr, cst.Lambda)):
            return True
        if isinstance(n, cst.Call) and not (isinstance(n.func, cst.Name) and n.func.value in _PURE):
            return True
    return False


def _names(node: cst.CSTNode) -> set[str]:
    """What `node` reads or binds, as dotted paths: `self.gpus > 1` reads `self.gpus`, not `self`."""
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, cst.Attribute):
        base = _names(node.value)
        if len(base) == 1 and isinstance(node.value, (cst.Name, cst.Attribute)):
            return {f"{next(iter(base))}.{node.attr.value}"}
        return base
    return set().union(*(_names(child) for child in node.children))


def _overlap(read: set[str], bound: set[str]) -> bool:
    """A path bound is one read, or inside or around one (`self` read whole and `self.model` bound)."""
    return any(r == b or r.startswith(b + ".") or b.startswith(r + ".") for r in read for b in bound)


def _bound(statement: cst.BaseStatement) -> set[str] | None:
    """Names a simple statement binds; None for a compound one (not moved before a condition)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return None
    names: set[str] = set()
    for small in statement.body:
        if isinstance(small, cst.Assign):
            for target in small.targets:
                names |= _names(target.target)
        elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
            names |= _names(small.target)
    return names


def _alias(statement: cst.BaseStatement) -> bool:
    """`a = b`, `self.a = b`: binds a name to what another holds (no call, cannot fail half-way)."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return False
    small = statement.body[0]
    return (
        isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and isinstance(small.value, (cst.Name, cst.Attribute))
        and not _calls(small)
    )


def _bare(statement: cst.BaseStatement) -> str:
    """The statement without its leading lines (its own trailing and inner comments kept)."""
    assert isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
    return canonical(statement.with_changes(leading_lines=[])).strip()


def _notes(statement: cst.BaseStatement) -> tuple[str, ...]:
    assert isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
    return tuple(line.comment.value for line in statement.leading_lines if line.comment is not None)


def _same(statements: Sequence[cst.BaseStatement]) -> bool:
    """The same code in every branch, with the same comment lines above it, or with them above
    it in some branches and none in the others (`# initialize the model` in the `else` only):
    written once, it takes them along."""
    return len({_layout_aside(s) for s in statements}) == 1 and len({_notes(s) for s in statements} - {()}) <= 1


def _layout_aside(statement: cst.BaseStatement) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A simple statement's tokens and its own comments: `compile(a,\n  b)` is `compile(a, b)`. A
    compound one's code as written (its tokens alone would not tell which block a line is in)."""
    assert isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
    if not isinstance(statement, cst.SimpleStatementLine):
        return (_bare(statement),), ()
    return code_tokens(_bare(statement)), tuple(sorted(_comments([statement.with_changes(leading_lines=[])])))


def _pick(statements: Sequence[cst.BaseStatement]) -> cst.BaseStatement:
    """The one of `_same` statements written once: the one with comment lines, if any."""
    return next((s for s in statements if _notes(s)), statements[0])


def _shared_head(bodies: Sequence[Sequence[cst.BaseStatement]]) -> int:
    count = 0
    while all(len(b) > count for b in bodies) and _same([b[count] for b in bodies]):
        count += 1
    return count


def _shared_tail(bodies: Sequence[Sequence[cst.BaseStatement]], start: int) -> int:
    count = 0
    while all(len(b) - start > count for b in bodies) and _same([b[len(b) - 1 - count] for b in bodies]):
        count += 1
    return count


def without_blank_lead(statement: cst.BaseStatement) -> cst.BaseStatement:
    assert isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
    lines = list(statement.leading_lines)
    while lines and lines[0].comment is None:
        lines.pop(0)
    return statement.with_changes(leading_lines=lines)


def _first_without_blank_lead(statements: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """Statements moved out of a branch: the first one's blank lines go (it follows the `if` or
    `try` now), the others' stay as they separated them."""
    return [without_blank_lead(s) if i == 0 else s for i, s in enumerate(statements)]


def _merged_if(statement: cst.If, no_branch_stops: bool) -> list[cst.BaseStatement] | None:
    bodies = bodies_of_if(statement, no_branch_stops)
    conditions = _conditions(statement)
    if bodies is None or any(_calls(c) for c in conditions):
        return None
    read = set().union(*(_names(c) for c in conditions))
    chained = [_chained(b) for b in bodies]
    if not _all_same(bodies) and _all_same(chained):
        # `template = build(); model = template` beside `template = model = build()`: the same
        # bindings, written the way the other branch writes them (round 62, bg10)
        bodies = chained
    head = 0
    for index in range(_shared_head(bodies)):
        bound = _bound(bodies[0][index])
        if bound is None or _overlap(read, bound):
            break
        head = index + 1
    tail = _shared_tail(bodies, head)
    if not head and not tail:
        return None
    rest = [b[head:len(b) - tail] for b in bodies]
    before = [_pick([b[i] for b in bodies]) for i in range(head)]
    after = _first_without_blank_lead([_pick([b[len(b) - tail + i] for b in bodies]) for i in range(tail)])
    lines = list(statement.leading_lines)
    if all(not r for r in rest):
        shared = before + after
        first = shared[0]
        assert isinstance(first, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
        shared[0] = first.with_changes(leading_lines=[*lines, *(x for x in first.leading_lines if x.comment)])
        return shared
    rebuilt = _rebuilt_if(statement, rest)
    if rebuilt is None:
        return None
    if before:
        # the blank lines go above what is written first; the comment lines stay on the `if` they
        # head ("# multi gpu acceleration" over `if gpus > 1:`), now holding less
        start = next((k for k, line in enumerate(lines) if line.comment is not None), len(lines))
        first = before[0]
        assert isinstance(first, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
        before[0] = first.with_changes(leading_lines=[*lines[:start], *(x for x in first.leading_lines if x.comment)])
        rebuilt = rebuilt.with_changes(leading_lines=lines[start:])
    return [*before, rebuilt, *after]


def _all_same(bodies: Sequence[Sequence[cst.BaseStatement]]) -> bool:
    return len({len(b) for b in bodies}) == 1 and _shared_head(bodies) == len(bodies[0])


def _chained(body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """`body` with each `a = <value>` followed by `b = a` written `a = b = <value>` (neither
    with a comment); the statements themselves otherwise."""
    out: list[cst.BaseStatement] = []
    for statement in body:
        previous = out[-1] if out else None
        if (
            isinstance(previous, cst.SimpleStatementLine) and _alias(statement) and not _comments([statement])
            and not _comments([previous]) and len(previous.body) == 1 and isinstance(previous.body[0], cst.Assign)
            and isinstance(statement, cst.SimpleStatementLine)
        ):
            first, alias = previous.body[0], cst.ensure_type(statement.body[0], cst.Assign)
            bound, value, target = first.targets[-1].target, alias.value, alias.targets[0].target
            if (isinstance(bound, cst.Name) and isinstance(value, cst.Name) and value.value == bound.value
                    and isinstance(target, cst.Name) and not any(line.comment for line in statement.leading_lines)):
                chain = first.with_changes(targets=[*first.targets, cst.AssignTarget(target=target)])
                out[-1] = previous.with_changes(body=[chain])
                continue
        out.append(statement)
    return out


def _rebuilt_if(statement: cst.If, rest: list[list[cst.BaseStatement]]) -> cst.If | None:
    """The chain with each branch holding `rest[i]`, branches left empty dropped; None when
    dropping one would change which branch runs (an `if` left empty before a kept `else` needs
    a negated condition; before a kept `elif`, the two conditions must exclude each other)."""
    branches: list[cst.If | cst.Else] = []
    current: cst.If | cst.Else | None = statement
    while current is not None:
        branches.append(current)
        current = current.orelse if isinstance(current, cst.If) else None
    kept = [i for i, r in enumerate(rest) if r]
    for dropped in (i for i, r in enumerate(rest) if not r):
        for later in (k for k in kept if k > dropped):
            branch, other = branches[dropped], branches[later]
            if not isinstance(branch, cst.If) or not isinstance(other, cst.If) or not disjoint(branch.test, other.test):
                return None
    if not kept or not isinstance(branches[kept[0]], cst.If):
        return None

    def body_of(index: int) -> cst.BaseSuite:
        suite = branches[index].body
        return suite.with_changes(body=[without_blank_lead(rest[index][0]), *rest[index][1:]])

    chain: cst.If | cst.Else | None = None
    for index in reversed(kept):
        branch = branches[index]
        if isinstance(branch, cst.Else):
            chain = branch.with_changes(body=body_of(index))
        else:
            chain = branch.with_changes(body=body_of(index), orelse=chain)
    assert isinstance(chain, cst.If)
    if kept[0]:
        # an `elif` that became the `if`: the statement's own lines and spacing
        lines = [*statement.leading_lines, *(x for x in chain.leading_lines if x.comment is not None)]
        chain = chain.with_changes(leading_lines=lines, whitespace_before_test=statement.whitespace_before_test)
    return chain


def _merged_try(statement: cst.Try) -> list[cst.BaseStatement] | None:
    if statement.orelse is not None or statement.finalbody is not None or not statement.handlers:
        return None
    suites = [statement.body, *(h.body for h in statement.handlers)]
    if not all(isinstance(s, cst.IndentedBlock) for s in suites):
        return None
    bodies = [list(s.body) for s in suites if isinstance(s, cst.IndentedBlock)]
    tail = 0
    while tail < _shared_tail(bodies, 0) and _alias(bodies[0][len(bodies[0]) - 1 - tail]):
        tail += 1
    if not tail or len(bodies[0]) == tail:
        return None  # nothing shared, or the try body would be left empty
    after = _first_without_blank_lead(bodies[0][len(bodies[0]) - tail:])
    body = statement.body.with_changes(body=bodies[0][:len(bodies[0]) - tail])
    handlers = []
    for handler, kept in zip(statement.handlers, bodies[1:]):
        kept = kept[:len(kept) - tail] or [cst.SimpleStatementLine(body=[cst.Pass()])]
        handlers.append(handler.with_changes(body=handler.body.with_changes(body=kept)))
    return [statement.with_changes(body=body, handlers=handlers), *after]


def dissolves(kept: cst.If | cst.Try, site: cst.BaseStatement) -> bool:
    """Once `site` (`parallel = multi_gpu_model(model, ...)`) reads `parallel = model`, every branch
    of `kept` holds it, so `merged` writes it once outside, and the branch written for a plain
    model (`else:`, `except:`) is left empty: the `if`/`try` no longer chooses anything."""
    if not (isinstance(site, cst.SimpleStatementLine) and len(site.body) == 1):
        return False
    small = site.body[0]
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Call)):
        return False
    args = [a for a in small.value.args if a.keyword is None]
    if not args or code_of(small.targets[0].target) == code_of(args[0].value):
        return False  # `model = multi_gpu_model(model)` is removed, not aliased
    alias = site.with_changes(body=[small.with_changes(value=args[0].value)])
    call = code_of(site.with_changes(leading_lines=[]))
    rewritten = kept.visit(_SameCallAliased(call, alias))  # this site and any copy of it
    if not isinstance(rewritten, (cst.If, cst.Try)):
        return False
    dissolved = rewritten.visit(_CpuBlocksDissolved())  # as the plan dissolves `with tf.device('/cpu:0'):`
    if not isinstance(dissolved, (cst.If, cst.Try)):
        return False
    result = merged(dissolved)
    return result is not None and all(_plain_branch_gone(s) for s in result if isinstance(s, (cst.If, cst.Try)))


def _plain_branch_gone(statement: cst.If | cst.Try) -> bool:
    """Nothing is left in the branch written for a plain model (the `else`, the `except`s), so
    there is no branch to choose between any more."""
    if isinstance(statement, cst.If):
        return statement.orelse is None
    return all(
        isinstance(h.body, cst.IndentedBlock)
        and all(isinstance(s, cst.SimpleStatementLine) and all(isinstance(x, cst.Pass) for x in s.body)
                for s in h.body.body)
        for h in statement.handlers
    )


def code_of(node: cst.CSTNode) -> str:
    return _MODULE.code_for_node(node).strip()


class _CpuBlocksDissolved(cst.CSTTransformer):
    """`with tf.device('/cpu:0'):` blocks replaced by their statements."""

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        body: list[cst.BaseStatement] = []
        for statement in updated_node.body:
            if (
                isinstance(statement, cst.With)
                and len(statement.items) == 1
                and isinstance(statement.body, cst.IndentedBlock)
                and code_of(statement.items[0].item).split("(")[0].endswith("device")
                and "cpu" in code_of(statement.items[0].item).lower()
            ):
                body.extend(statement.body.body)
            else:
                body.append(statement)
        return updated_node.with_changes(body=body)


class _SameCallAliased(cst.CSTTransformer):
    """Every statement reading `call` (this site, and the same call in another branch) becomes `alias`."""

    def __init__(self, call: str, alias: cst.SimpleStatementLine) -> None:
        super().__init__()
        self.call, self.alias = call, alias

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine:
        if code_of(updated_node.with_changes(leading_lines=[])) == self.call:
            return self.alias.with_changes(leading_lines=updated_node.leading_lines)
        return updated_node


def already_holds(statement: cst.If, earlier: Sequence[cst.BaseStatement]) -> bool:
    """`if c: parallel = model` (no `else`) where `parallel` already holds `model`: the statement
    before it in the block binds both (`parallel = model`, `pmodel = model = build()`) and nothing
    between rebinds either, and `c` calls nothing. The `if` then changes nothing."""
    if statement.orelse is not None or _calls(statement.test) or not isinstance(statement.body, cst.IndentedBlock):
        return False
    pairs = []
    for line in statement.body.body:
        if not _alias(line):
            return False
        assert isinstance(line, cst.SimpleStatementLine) and isinstance(line.body[0], cst.Assign)
        small = line.body[0]
        pairs.append((code_of(small.targets[0].target), code_of(small.value)))
    names = {name for pair in pairs for name in pair}
    for previous in reversed(earlier):
        if not isinstance(previous, cst.SimpleStatementLine):
            return False
        assigns = [s for s in previous.body if isinstance(s, (cst.Assign, cst.AugAssign, cst.AnnAssign))]
        if any(isinstance(s, (cst.Global, cst.Nonlocal, cst.Del)) for s in previous.body):
            return False
        bound = {
            code_of(t.target) for s in assigns if isinstance(s, cst.Assign) for t in s.targets
        } | {code_of(s.target) for s in assigns if not isinstance(s, cst.Assign)}
        if not bound & names:
            continue  # `parallel.fit(x, y)`, `model.load_weights(path)`: neither name rebound
        chain = [s for s in assigns if isinstance(s, cst.Assign)]
        if len(previous.body) != 1 or len(chain) != 1:
            return False
        targets = [code_of(t.target) for t in chain[0].targets]
        value = code_of(chain[0].value)
        # `a = b` itself, or a chain `a = b = value` binding both to one object
        return all((t in targets and v in targets) or (targets == [t] and value == v) for t, v in pairs)
    return False
