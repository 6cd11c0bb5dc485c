"""Removes a weight copy between the model and itself: with one model there is nothing to copy.

Scripts trained the parallel model and then copied its weights back into the template before
saving: `model.set_weights(parallel.get_weights())`, or a round trip through a file,
`parallel.layers[-2].save_weights(path)` then `model.load_weights(path)`. Once the parallel
model's reads become the template's (strategy_scope, template_recovery), such a line reads
`model.set_weights(model.get_weights())`: it copies the model onto itself. It goes, with the
comment paragraph right above it ("# copy the weights back into the template"), which described it;
of a round trip only the reload goes (the file the save writes may be wanted on its own), also
when the save ends the loop right above the reload (`for epoch in ...: fit; save_weights(path)`;
tf_keras cannot load a `.weights.h5` file into a model built under the strategy, so the reload
would fail too).
A copy that is all its block holds stays (the block would be empty), as does anything whose two
ends do not read the same model once renamed.
"""

from __future__ import annotations

from typing import Final

import libcst as cst

from .. import self_copies
from .._tree import code_of, walk_same_scope
from ..fix_context import FixContext
from ..plan import cell_boundary

__all__ = ["CODES", "fix"]

# The finding codes this stage reports (MIGRATION.md, "Finding codes"): none, it only removes.
CODES: Final[frozenset[str]] = frozenset()


def fix(ctx: FixContext) -> None:
    tree, plan = ctx.tree, ctx.plan
    seen: set[int] = set()
    for site in ctx.rewritten:
        scope = tree.enclosing_scope_node(site.call)
        for node in walk_same_scope(scope.body if isinstance(scope, cst.FunctionDef) else scope):
            if not isinstance(node, (cst.IndentedBlock, cst.Module)) or id(node) in seen:
                continue
            seen.add(id(node))
            body = list(node.body)
            for index, statement in enumerate(body):
                if id(statement) in plan.statements or id(statement) in plan.deleted:
                    continue
                # (the next statement, in the next cell of a notebook: "load the weights saved above")
                after = next((s for s in body[index + 1:] if not cell_boundary(s)), None)
                copies = self_copies.copies(statement, after, lambda a, b: _same_model(ctx, a, b))
                if copies and len(body) > len(copies) and tree.order(statement) > tree.order(site.call):
                    plan.deleted.update(id(s) for s in copies)


def _same_model(ctx: FixContext, one: cst.BaseExpression, other: cst.BaseExpression) -> bool:
    """`one` and `other` read the same model after the rewrite's renames, and did not before."""
    before = code_of(one), code_of(other)
    after = tuple(code_of(ctx.plan.nodes.get(id(n), n)) for n in (one, other))
    return after[0] == after[1] and before[0] != before[1]
