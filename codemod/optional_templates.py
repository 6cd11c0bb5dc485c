"""A handle bound to the template only when the wrap ran goes, with the `if` that chose it over the model.

keras-yolo3's multi-GPU forks:

    template_model = None
    if gpu_num >= 2:
        template_model = model
        model = multi_gpu_model(model, gpus=gpu_num)
    ...
    if template_model is not None:
        template_model.save_weights(path)
    else:
        model.save_weights(path)

Migrated, the wrap is gone and `model` is never rebound: `template_model` is either `None` or the
model, and both branches of the save do the same to the one model (round 56, au04). The handle
goes, with its `None` and the comment lines right above it, and each such `if` becomes the branch
that names the model, when that provably changes nothing: the handle is bound only by those two
plain assignments in one function or a script's module scope, the `if` binding it does nothing else
and its condition calls nothing, the template's name is bound only before it, and every read of the
handle is the test (`h is not None`, `h is None`, `h`, `not h`) of an `if`/`else` whose branches read
the same once the handle is the model. core.py runs it on the rewritten module.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import libcst as cst
import libcst.matchers as m
from libcst.metadata import Assignment, ClassScope, GlobalScope, MetadataWrapper, PositionProvider, ScopeProvider

from ._tree import code_tokens, runs_as_script, walk
from .statement_drops import StatementDrops

__all__ = ["without_optional_templates"]

_MODULE = cst.Module(body=[])


def without_optional_templates(module: cst.Module, original: cst.Module, rebound: Collection[str]) -> cst.Module:
    """`module` less each handle on a rebound template that only the wrap's branch bound."""
    if not rebound or "None" not in module.code:
        return module
    wrapper = MetadataWrapper(module)
    scopes = wrapper.resolve(ScopeProvider)
    positions = wrapper.resolve(PositionProvider)
    dropped: set[cst.BaseStatement] = set()
    chosen: dict[cst.If, Sequence[cst.BaseStatement]] = {}
    for first, guard, handle, template in _candidates(wrapper.module, rebound):
        target = cst.ensure_type(cst.ensure_type(first, cst.SimpleStatementLine).body[0], cst.Assign).targets[0].target
        scope = scopes.get(target)
        if scope is None or isinstance(scope, ClassScope) or (isinstance(scope, GlobalScope) and not runs_as_script(
            original
        )):
            continue
        bindings = list(scope.assignments[handle])
        if len(bindings) != 2 or not all(isinstance(b, Assignment) for b in bindings):
            continue
        line = positions[guard].start.line
        if any(not isinstance(b, Assignment) or positions[b.node].start.line >= line
               for b in scope.assignments[template]):
            continue  # the template's name is bound again after the handle (or by a parameter)
        ifs = _choosing_ifs(wrapper.module, handle, template)
        reads = [r.node for b in bindings for r in b.references]
        tests = {id(n) for statement in ifs for n in walk(statement.test)}
        branch_reads = {id(n) for statement in ifs for n in walk(statement.body)} | {
            id(n) for statement in ifs if statement.orelse is not None for n in walk(statement.orelse)
        }
        if not ifs or any(id(r) not in tests and id(r) not in branch_reads for r in reads):
            continue
        dropped |= {first, guard}
        chosen.update(ifs)
    if not dropped:
        return module
    return wrapper.module.visit(_Drop(dropped, chosen))


def _candidates(module: cst.Module, rebound: Collection[str]) -> list[tuple[cst.BaseStatement, cst.If, str, str]]:
    """(`h = None`, `if c: h = template`, h, template) pairs, the `if` later in the same block."""
    found: list[tuple[cst.BaseStatement, cst.If, str, str]] = []
    blocks = [module.body, *(n.body for n in walk(module) if isinstance(n, cst.IndentedBlock))]
    for body in blocks:
        nones = {}
        for statement in body:
            name = _assigned(statement, m.Name("None"))
            if name is not None:
                nones[name] = statement
            if not (isinstance(statement, cst.If) and statement.orelse is None
                    and isinstance(statement.body, cst.IndentedBlock) and len(statement.body.body) == 1):
                continue
            if any(isinstance(n, cst.Call) for n in walk(statement.test)):
                continue
            inner = statement.body.body[0]
            for handle, first in nones.items():
                value = _assigned_value(inner, handle)
                if isinstance(value, cst.Name) and value.value in rebound:
                    found.append((first, statement, handle, value.value))
    return found


def _assigned(statement: cst.BaseStatement, value: m.BaseMatcherNode | None) -> str | None:
    """`h` of a statement that is only `h = <value>` (any value for None)."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) and (
        value is None or m.matches(small.value, value)
    ):
        return small.targets[0].target.value
    return None


def _assigned_value(statement: cst.BaseStatement, handle: str) -> cst.BaseExpression | None:
    if _assigned(statement, None) != handle:
        return None
    return cst.ensure_type(cst.ensure_type(statement, cst.SimpleStatementLine).body[0], cst.Assign).value


def _choosing_ifs(module: cst.Module, handle: str, template: str) -> dict[cst.If, Sequence[cst.BaseStatement]]:
    """Each `if h is not None: A else: B` (or `if h is None: B else: A`) whose A, with `h` read as
    `template`, is B: the `if` -> B."""
    found: dict[cst.If, Sequence[cst.BaseStatement]] = {}
    for node in walk(module):
        if not isinstance(node, cst.If) or not isinstance(node.orelse, cst.Else):
            continue
        set_when = _set_when(node.test, handle)
        if set_when is None or not isinstance(node.body, cst.IndentedBlock):
            continue
        other = node.orelse.body
        if not isinstance(other, cst.IndentedBlock):
            continue
        with_handle, without = (node.body, other) if set_when else (other, node.body)
        if _code(with_handle.body, {handle: template}) == _code(without.body, {}) and not any(
            isinstance(n, cst.Name) and n.value == handle for n in walk(without)
        ):
            found[node] = without.body
    return found


def _set_when(test: cst.BaseExpression, handle: str) -> bool | None:
    """True for `h is not None` / `h`, False for `h is None` / `not h`, None for anything else."""
    if m.matches(test, m.Name(handle)):
        return True
    if m.matches(test, m.UnaryOperation(operator=m.Not(), expression=m.Name(handle))):
        return False
    if m.matches(test, m.Comparison(left=m.Name(handle), comparisons=[
        m.ComparisonTarget(operator=m.IsNot(), comparator=m.Name("None"))
    ])):
        return True
    if m.matches(test, m.Comparison(left=m.Name(handle), comparisons=[
        m.ComparisonTarget(operator=m.Is(), comparator=m.Name("None"))
    ])):
        return False
    return None


def _code(statements: Sequence[cst.BaseStatement], renames: dict[str, str]) -> tuple[str, ...]:
    class _Rename(cst.CSTTransformer):
        def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
            return updated_node.with_changes(value=renames.get(updated_node.value, updated_node.value))

    renamed = [s.visit(_Rename()) for s in statements]
    text = "".join(_MODULE.code_for_node(s) for s in renamed if isinstance(s, cst.CSTNode))
    return code_tokens(text)


class _Drop(StatementDrops):
    def __init__(self, dropped: set[cst.BaseStatement], chosen: dict[cst.If, Sequence[cst.BaseStatement]]) -> None:
        super().__init__(dropped)
        self.chosen = chosen

    def replaced(self, original: cst.BaseStatement, updated: cst.BaseStatement) -> list[cst.BaseStatement]:
        """A choosing `if` -> its branch that names the model, with the `if`'s own leading lines."""
        if not (isinstance(original, cst.If) and original in self.chosen):
            return [updated]
        branch = list(self.chosen[original])
        first = branch[0]
        assert isinstance(first, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
        lead = list(cst.ensure_type(updated, cst.If).leading_lines)
        return [first.with_changes(leading_lines=[*lead, *first.leading_lines]), *branch[1:]]
