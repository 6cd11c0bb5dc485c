"""Rewrites the template looked up in the parallel model (`layers[-2]`, `get_layer(...)`) to the model itself.

With MirroredStrategy there is no wrapper model: the template is what gets trained, so the old
ways of digging it out of the parallel model would now point at one of its layers. Which
lookups name the template is template_lookups.py's call; a site with any other lookup is not
rewritten (strategy_scope reports it, MGPU301), so every lookup left here is replaced.
"""

from __future__ import annotations

from typing import Final

from ..fix_context import FixContext
from ..template_lookups import lookups

__all__ = ["CODES", "fix"]

# The finding codes this stage reports: none (an unknown lookup leaves the site: MGPU301 is a precondition).
CODES: Final[frozenset[str]] = frozenset()


def fix(ctx: FixContext) -> None:
    for site in ctx.rewritten:
        for lookup in lookups(ctx.tree, site, ctx.references.get(id(site), [])):
            if not lookup.replaced:  # (strategy_scope leaves such sites: not reached)
                continue
            replacement = ctx.plan.nodes.get(id(lookup.name), lookup.name)
            ctx.plan.nodes[id(lookup.node)] = replacement.deep_clone()
