"""The rewrites, in the order they run. Each module: one rewrite, one docstring saying why."""

from __future__ import annotations

from collections.abc import Callable

from . import checkpoints, helpers, imports, strategy_scope, template_recovery
from .context import FixContext

__all__ = ["FIXERS", "FixContext"]

# strategy_scope decides which sites are rewritten; the others follow from that decision.
FIXERS: tuple[Callable[[FixContext], None], ...] = (
    strategy_scope.fix,
    template_recovery.fix,
    checkpoints.fix,
    helpers.fix,
    imports.fix,
)
