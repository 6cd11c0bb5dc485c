"""The rewrites, in the order they run. Each module: one rewrite, one docstring saying why."""

from __future__ import annotations

from collections.abc import Callable

from ..fix_context import FixContext
from . import (
    behaviour,
    checkpoints,
    contrib_strategy,
    copied_helpers,
    device_towers,
    estimator,
    imports,
    leftovers,
    multi_worker,
    strategy_scope,
    template_recovery,
)

__all__ = ["FIXERS", "STRATEGIES"]

# What `--strategy` may ask for; FixContext.strategy holds the choice and fixers read it.
STRATEGIES = ("mirrored", "multi-worker")

# strategy_scope decides which sites are rewritten; the others follow from that decision.
FIXERS: tuple[Callable[[FixContext], None], ...] = (
    strategy_scope.fix,
    template_recovery.fix,
    behaviour.fix,  # *_on_batch and TF1-session inference on the migrated model
    checkpoints.fix,
    copied_helpers.fix,
    leftovers.fix,  # unbound calls, vendored copies, helper definitions
    contrib_strategy.fix,  # the era's other idioms: tf.contrib strategies,
    estimator.fix,  # model_to_estimator + train,
    device_towers.fix,  # hand-placed towers
    imports.fix,
    multi_worker.fix,  # only with `--strategy multi-worker`: works on the strategy lines planned above
)
