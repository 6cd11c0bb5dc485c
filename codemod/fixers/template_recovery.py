"""Rewrites the template looked up in the parallel model (`layers[-2]`, `get_layer(...)`) to the model itself.

With MirroredStrategy there is no wrapper model: the template is what gets trained, so the old
ways of digging it out of the parallel model would now point at one of its layers. Which
lookups name the template is template_lookups.py's call; a site with any other lookup is not
rewritten (strategy_scope reports it, MGPU301), so every lookup left here is replaced.

`single = parallel.layers[-2]` would become `single = model`, a second name for the model: its
reads read `model` instead and the line goes, when that provably changes nothing. The comment
right above such a line that describes the wrapper ("the template sits before the merge layers")
goes with it (stale_comments.py), as does one on a save of the model that names the wrapper
("the template shares its weights with the parallel model"; one alone in its paragraph whose only
words of the pair are an aside in parentheses stays, and stale_prose.py takes the aside out). So does Keras 2's
`parallel.__setattr__('callback_model', model)` hack (callbacks were to see the template; with no
wrapper they do). The parallel model's name in a notebook export's `%time` magic source
(`get_ipython().run_cell_magic('time', '', 'parallel.fit(x, y)\n')`) is renamed like its code reads.
"""

from __future__ import annotations

import re
from typing import Final

import libcst as cst
from libcst.metadata import Assignment

from .. import stale_comments, stale_prose
from .._tree import Tree, code_of, walk_same_scope
from ..fix_context import FixContext, contains, same_scope_targets, subtree
from ..recognise import Site
from ..template_lookups import lookups
from ..unwrapping import SAVES

__all__ = ["CODES", "fix"]

# The finding codes this stage reports: none (an unknown lookup leaves the site: MGPU301 is a precondition).
CODES: Final[frozenset[str]] = frozenset()


def fix(ctx: FixContext) -> None:
    tree = ctx.tree
    for site in ctx.rewritten:
        hacks = [_callback_model_hack(tree, name, site.template) for name in ctx.references.get(id(site), [])]
        for hack in [*hacks, *_attribute_hacks(tree, site)]:
            if hack is not None and id(hack) not in ctx.plan.statements:
                # `parallel.__setattr__('callback_model', model)`: callbacks were to see the template;
                # with no wrapper they see it anyway, and the line would set an attribute on itself
                ctx.plan.statements[id(hack)] = None
                gone = stale_comments.without(hack.leading_lines, stale_comments.WRAPPER)
                ctx.plan.dropped_lines |= {id(line) for line in hack.leading_lines if line not in gone}
        _stale_save_comments(ctx, site)
        _magic_sources(ctx, site)
        for lookup in lookups(tree, site, ctx.references.get(id(site), [])):
            if not lookup.replaced:  # (strategy_scope leaves such sites: not reached)
                continue
            replacement = ctx.plan.nodes.get(id(lookup.name), lookup.name)
            ctx.plan.nodes[id(lookup.node)] = replacement.deep_clone()
            node = _both_arms(ctx, lookup.node, replacement)
            if node is not lookup.node:  # `parallel.layers[-2] if G > 1 else parallel`: the model either way
                ctx.plan.nodes[id(node)] = replacement.deep_clone()
            statement = tree.statement_of(lookup.node)
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            kept = stale_comments.without(statement.leading_lines, stale_comments.WRAPPER)
            ctx.plan.dropped_lines |= {id(line) for line in statement.leading_lines if line not in kept}
            reads = _alias_reads(tree, statement, node, replacement)
            if reads is not None and id(statement) not in ctx.plan.statements:
                ctx.plan.statements[id(statement)] = None
                comment = statement.trailing_whitespace.comment  # `single = parallel.layers[-2]  # the template`
                if comment is not None and stale_comments.WRAPPER.search(comment.value):
                    ctx.plan.dropped_lines.add(id(comment))
                for read in reads:
                    ctx.plan.nodes[id(read)] = replacement.deep_clone()


# IPython magics whose source is Python run in the user's namespace (a notebook saved as a script:
# `get_ipython().run_cell_magic('time', '', 'hist = parallel.fit(x, y)\n')`)
_PYTHON_MAGICS: Final = frozenset({"time", "timeit", "prun", "capture"})


def _magic_sources(ctx: FixContext, site: Site) -> None:
    """The parallel model's name read in the source string of an exported `%time` / `%%time` magic
    after the call becomes the model's, as the code's reads do (else it is a NameError)."""
    target, template = site.target, site.template
    if not isinstance(target, cst.Name) or template is None or code_of(template) == target.value:
        return
    scope = ctx.tree.scopes.get(target)
    if scope is None or len(scope.assignments[target.value]) != 1:
        return  # bound again somewhere: which binding a string reads cannot be told
    name = re.compile(rf"(?<![\w.]){re.escape(target.value)}\b")
    for call in (c for c in ctx.tree.all(cst.Call) if isinstance(c, cst.Call)):
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in ("run_cell_magic", "run_line_magic")
                and isinstance(func.value, cst.Call) and code_of(func.value.func) == "get_ipython"
                and call.args and isinstance(call.args[0].value, cst.SimpleString)
                and str(call.args[0].value.evaluated_value) in _PYTHON_MAGICS
                and ctx.tree.order(call) > ctx.tree.order(site.call)):
            continue
        for arg in call.args[1:]:
            if isinstance(arg.value, cst.SimpleString) and name.search(arg.value.value):
                renamed = name.sub(code_of(template), arg.value.value)
                ctx.plan.nodes[id(arg.value)] = arg.value.with_changes(value=renamed)


def _both_arms(ctx: FixContext, lookup: cst.CSTNode, replacement: cst.CSTNode) -> cst.CSTNode:
    """The conditional expression around `lookup` when its other arm becomes the same model and its
    test only compares (`model.layers[-2] if n_gpus > 1 else model`); else `lookup` itself."""
    parent = ctx.tree.parent(lookup)
    if not isinstance(parent, cst.IfExp) or any(isinstance(n, cst.Call) for n in subtree(parent.test)):
        return lookup
    other = parent.orelse if parent.body is lookup else parent.body
    final = ctx.plan.nodes.get(id(other), other)
    return parent if code_of(final) == code_of(replacement) else lookup




def _stale_save_comments(ctx: FixContext, site: Site) -> None:
    """`# save the template, it shares its weights with the parallel model` above (or after)
    `model.save(...)`: with no wrapper there is one model, and the comment says otherwise."""
    tree = ctx.tree
    names = {tree.code(n) for n in (site.template, site.target) if n is not None}
    scope = tree.enclosing_scope_node(site.call)
    for statement in walk_same_scope(scope.body if isinstance(scope, cst.FunctionDef) else scope):
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
            continue
        small = statement.body[0]
        call = small.value if isinstance(small, cst.Expr) else None
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and call.func.attr.value in SAVES and tree.code(call.func.value) in names):
            continue
        kept = stale_comments.without(statement.leading_lines, stale_comments.MECHANICS, headings=True)
        ctx.plan.dropped_lines |= {
            id(line) for line in statement.leading_lines if line not in kept and not _renamed_true(statement, line)
        }
        trailing = statement.trailing_whitespace
        if trailing.comment is not None and stale_comments.MECHANICS.search(trailing.comment.value):
            ctx.plan.nodes[id(trailing)] = trailing.with_changes(whitespace=cst.SimpleWhitespace(""), comment=None)


def _renamed_true(statement: cst.SimpleStatementLine, line: cst.EmptyLine) -> bool:
    """A comment line alone in its paragraph that says what is still true once its half of the pair
    is "the model": `# Save model weights (template model when running multi-GPU)` reads
    `# Save model weights` (stale_prose.py renames it later; round 38, lb14)."""
    lines = list(statement.leading_lines)
    k = next(i for i, other in enumerate(lines) if other is line)
    alone = all(lines[j].comment is None for j in (k - 1, k + 1) if 0 <= j < len(lines))
    if line.comment is None or not alone:
        return False
    prose = stale_prose.Prose(frozenset(stale_prose.HELPERS), True)
    text = line.comment.value
    renamed = prose.renamed(text)
    # only an aside in parentheses taken out ("via the template model" read as "via the model"
    # says nothing)
    start = next((i for i, (a, b) in enumerate(zip(text, renamed)) if a != b), len(renamed))
    removed = text[start:start + len(text) - len(renamed)]
    cut = text[:start] + text[start + len(removed):] == renamed and bool(re.fullmatch(r"\s*\([^()]*\)", removed))
    return cut and renamed != text and not stale_comments.MECHANICS.search(renamed) and not (
        prose.wholly_stale(renamed) or prose.names_removed(renamed)
    )


def _callback_model_hack(
    tree: Tree, name: cst.Name, template: cst.CSTNode | None
) -> cst.SimpleStatementLine | None:
    """The line `parallel.__setattr__('callback_model', model)` or `parallel.callback_model = model`
    (the template itself), read through `name`; None for anything else."""
    statement = tree.statement_of(name)
    if template is None or not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    target = tree.code(template)
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        dest = small.targets[0].target
        if (isinstance(dest, cst.Attribute) and dest.value is name and dest.attr.value == "callback_model"
                and tree.code(small.value) == target):
            return statement
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        call = small.value
        func = call.func
        if (
            isinstance(func, cst.Attribute) and func.value is name and func.attr.value == "__setattr__"
            and len(call.args) == 2 and isinstance(call.args[0].value, cst.SimpleString)
            and call.args[0].value.evaluated_value == "callback_model" and tree.code(call.args[1].value) == target
        ):
            return statement
    return None


def _attribute_hacks(tree: Tree, site: Site) -> list[cst.SimpleStatementLine]:
    """`self.model.callback_model = self._original_model` after `self.model = multi_gpu_model(
    self._original_model, ...)`: the same hack on an attribute target (no name to follow), in the
    call's function, after it."""
    if not (isinstance(site.target, cst.Attribute) and site.template is not None):
        return []
    target, template = tree.code(site.target), tree.code(site.template)
    scope = tree.enclosing_scope_node(site.call)
    found = []
    for node in walk_same_scope(scope.body if isinstance(scope, cst.FunctionDef) else scope):
        if not (isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1
                and tree.order(node) > tree.order(site.call)):
            continue
        small = node.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            dest = small.targets[0].target
            if (isinstance(dest, cst.Attribute) and dest.attr.value == "callback_model"
                    and tree.code(dest.value) == target and tree.code(small.value) in (template, target)):
                found.append(node)
    return found


def _alias_reads(
    tree: Tree, statement: cst.SimpleStatementLine, lookup: cst.CSTNode, template: cst.CSTNode
) -> list[cst.Name] | None:
    """The reads of `single` in `single = parallel.layers[-2]`, when that is the only binding of
    `single`, every read sees only it (same scope), and the template is not bound again after it."""
    if len(statement.body) != 1 or not isinstance(statement.body[0], cst.Assign):
        return None
    assign = statement.body[0]
    if assign.value is not lookup or len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return None
    name = assign.targets[0].target
    scope = tree.scopes.get(name)
    if scope is None:
        return None
    bindings = list(scope.assignments[name.value])
    if len(bindings) != 1 or not isinstance(bindings[0], Assignment) or bindings[0].node is not name:
        return None
    template_code = tree.code(template)
    scope_node = tree.enclosing_scope_node(statement)
    after = tree.order(statement)
    if any(tree.code(t) == template_code and tree.order(t) > after for t in same_scope_targets(tree, scope_node)):
        return None
    reads: list[cst.Name] = []
    for access in bindings[0].references:
        if not isinstance(access.node, cst.Name) or access.scope is not scope or len(access.referents) != 1:
            return None
        if contains(tree, statement, access.node):
            return None
        reads.append(access.node)
    return reads if reads else None
