"""The rewrites, in the order they run. Each module: one rewrite, one docstring saying why.

Every stage reads the shared `FixContext` and adds to it; `STAGES` says, per stage, what it reads,
what it adds and which finding codes it owns (each module's `CODES`), so a reader can follow why a
site was rewritten: `strategy_scope` alone decides that (it checks preconditions.py per site and
records `ctx.rewritten`); every later stage only follows from that decision.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..fix_context import FixContext
from . import (
    backend_gpus,
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
    tf1_apis,
    weight_copies,
)

__all__ = ["FIXERS", "STAGES", "STRATEGIES", "Stage"]

# What `--strategy` may ask for; FixContext.strategy holds the choice and fixers read it.
STRATEGIES = ("mirrored", "multi-worker")


@dataclass(frozen=True)
class Stage:
    """One fixer: what it reads from the FixContext, what it adds to it, the codes it reports."""

    name: str
    run: Callable[[FixContext], None]
    reads: str
    adds: str
    codes: frozenset[str]


STAGES: tuple[Stage, ...] = (
    Stage("strategy_scope", strategy_scope.fix, "tree, sites (recognised, shaped)",
          "plan.regions/statements/nodes/unwrap/moved; rewritten (the sites it rewrote); references",
          strategy_scope.CODES),
    Stage("backend_gpus", backend_gpus.fix, "rewritten, tree",
          "plan.nodes (`K.tensorflow_backend._get_available_gpus()` -> `tf.config.list_logical_devices`), "
          "plan.remove_imports (the backend import, if no longer read)",
          backend_gpus.CODES),
    Stage("template_recovery", template_recovery.fix, "rewritten, references",
          "plan.nodes (`parallel.layers[-2]` -> the template)", template_recovery.CODES),
    Stage("weight_copies", weight_copies.fix, "rewritten, plan.nodes (the renames planned above)",
          "plan.deleted (`model.set_weights(parallel.get_weights())`, now a copy onto itself)",
          weight_copies.CODES),
    Stage("behaviour", behaviour.fix, "rewritten", "findings only (*_on_batch, TF1-session inference)",
          behaviour.CODES),
    Stage("tf1_apis", tf1_apis.fix, "rewritten, tree",
          "findings only (TensorFlow 1 calls the strategy code cannot run beside)", tf1_apis.CODES),
    Stage("checkpoints", checkpoints.fix, "rewritten, sites, helpers",
          "plan.nodes, plan.add_imports/remove_imports", checkpoints.CODES),
    Stage("copied_helpers", copied_helpers.fix, "helpers, rewritten", "plan.remove_imports",
          copied_helpers.CODES),
    Stage("leftovers", leftovers.fix, "tree, sites, helpers",
          "findings only (unbound calls, vendored copies, helper definitions)", leftovers.CODES),
    Stage("contrib_strategy", contrib_strategy.fix, "tree", "plan.nodes, plan.remove_imports",
          contrib_strategy.CODES),
    Stage("estimator", estimator.fix, "tree", "plan.regions/statements/nodes", estimator.CODES),
    Stage("device_towers", device_towers.fix, "tree, sites", "findings only", device_towers.CODES),
    Stage("imports", imports.fix, "plan", "plan.add_imports/remove_imports", frozenset()),
    # only with `--strategy multi-worker`: works on the strategy lines planned above
    Stage("multi_worker", multi_worker.fix, "plan.regions, rewritten", "plan.nodes, finishers",
          multi_worker.CODES),
)

# The stages' run functions, in order (what core.py calls).
FIXERS: tuple[Callable[[FixContext], None], ...] = tuple(stage.run for stage in STAGES)
