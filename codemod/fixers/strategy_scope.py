"""Rewrites `multi_gpu_model(model, ...)` sites into `strategy = MirroredStrategy(...)` + `with strategy.scope():`.

The template's construction and every later `compile` in the same function go under the
scope (Keras 3 creates the optimizer there); the parallel model disappears: renamed to the
template where scope analysis proves it safe, else kept as an alias of it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import libcst as cst
import libcst.matchers as m

from .. import fallbacks, self_copies
from ..batch_calls import EFFECT, ON_BATCH, on_batch_calls
from .._tree import (
    TF_DEVICE,
    Block, Tree, binds, bound_names, branch_suites, children_of, code_of, code_tokens, dotted_name, findall,
    runs_as_script,
    used_names, walk, walk_same_scope,
)
from ..wrapper_messages import announcing_messages, reworded
from ..construction import (
    MODEL_PARTS as _MODEL_PARTS,
    construction_start,
    dependency_statements,
    is_alias,
    makes_layers,
    object_reads,
    outer_construction,
    plain_uses,
    stacked_arguments,
    stacked_on,
)
from ..fix_context import FixContext, contains, subtree
from ..devices import creates_no_variables, device_setting, only_device_work
from ..plan import Region, cell_boundary, trains_or_builds_nothing
from ..preconditions import (
    NO_BATCH_CALLS,
    CALLER_OBJECTS,
    CALLS_ONLY,
    NO_PATCHED_METHODS,
    HELPERS_GIVEN_MIGRATED,
    COMPILE_FOLLOWS,
    ONE_COMPILE,
    COMPILE_OBJECTS,
    DEVICE_SETTINGS_FIRST,
    GPU_COUNT_FIRST,
    MODULE_OBJECTS,
    ONE_STRATEGY,
    OUTER_OBJECTS,
    OWN_SCOPE_COVERS,
    TEMPLATE_BUILT_HERE,
    TEMPLATE_MOVABLE,
    TEMPLATE_ON_EVERY_PATH,
    TEMPLATE_LOOKUPS_KNOWN,
    PRECONDITIONS,
    binds_on_every_path,
    enclosing_strategy_scope,
)
from ..recognise import Site
from ..stale_comments import CELL_MARKER
from ..announcement import announcement
from ..replica_count import sliced_count
from ..same_branches import dissolves
from ..strategy_expression import (
    KeptCondition, StrategyCode, compared_in_guards, refine, strategy_expression, surely_int,
)
from ..template_lookups import lookups
from ..unwrapping import HelperUnwrap, helper_unwrapping, single_output_unwrap
from ..value_uses import value_uses

__all__ = ["CODES", "fix"]

# The finding codes this stage reports: one per precondition (preconditions.py), plus the call's
# own position (MGPU103), a kept fallback (MGPU106) and a
# `gpus` whose kind (count or GPU ids) only its name tells (MGPU117: rewritten, and reported).
CODES: Final = frozenset({p.code for p in PRECONDITIONS} | {"MGPU103", "MGPU106", "MGPU117"})

# compile arguments that may carry objects owning variables (optimizers, metric objects).
_VARIABLE_ARGS = ("optimizer", "metrics", "weighted_metrics")


# Calls that run a model's graph (`K.function`, `sess.run`) rather than build on it.
_GRAPH_RUNNERS = frozenset({"function", "run", "predict", "predict_on_batch", "evaluate", "fit"})
# Keras 2's lowercase optimizer aliases (`keras.optimizers.adam(lr=...)`): they create objects too.
_OPTIMIZER_ALIASES = frozenset({"sgd", "adam", "rmsprop", "adagrad", "adadelta", "adamax", "nadam"})


@dataclass
class _Planned:
    site: Site
    anchor: cst.BaseStatement
    block: Block
    start: int
    end: int
    expression: str
    notes: list[str]
    scope_node: cst.CSTNode
    fallback_kept: cst.CSTNode | None = None
    unwrap: list[cst.CSTNode] = field(default_factory=list)
    hoisted: list[cst.BaseStatement] = field(default_factory=list)
    definitions: list[cst.BaseStatement] = field(default_factory=list)
    site_followers: list[_Planned] = field(default_factory=list)  # sites sharing this one's strategy
    guards: list[str] = field(default_factory=list)
    known_int: bool = False
    own_scope: cst.With | None = None  # the call's own `with strategy.scope():`, kept
    said: fallbacks.Said | None = None  # a collapsed guard's messages, for the strategy choice


def fix(ctx: FixContext) -> None:
    planned: list[_Planned] = []
    uncovered: list[tuple[Site, list[cst.BaseStatement]]] = []  # MGPU118: a site and the objects it could not cover
    uses = value_uses(ctx.tree)
    for site in ctx.sites:
        if site.problem is not None:
            continue
        if uses:
            line = ctx.tree.position(uses[0])[0]
            ctx.report(site.call, CALLS_ONLY, (
                f"`{ctx.tree.code(uses[0])}` is also used as a value on line {line} (`"
                f"{_short(ctx.tree.code(ctx.tree.statement_of(uses[0]) or uses[0]))}`), not called; the codemod "
                f"rewrites calls only, so after migration this file would still import Keras's removed function. "
                f"Remove that use (once the calls are migrated, a test such as `is not None` is always true) and "
                f"rerun; the call is left as it is."
            ))
            continue
        if _unused_wrap(ctx, site) or _reported_lookup(ctx, site):
            continue
        ctx.current_site = site
        result = _plan_site(ctx, site, uncovered)
        ctx.current_site = None
        # (checked last: what keeps the site anyway, a model built by the caller, is said first)
        if result is not None and not _reported_patch(ctx, site):
            planned.append(result)
    planned = _drop_sharing_uncovered(ctx, planned, uncovered)
    planned = _drop_given_to_unwrapping_helpers(ctx, planned)
    for item in planned:
        if item.own_scope is not None:
            ctx.current_site = item.site
            _replace_site(ctx, item)
            ctx.current_site = None
    for item in _resolve_overlaps(ctx, [p for p in planned if p.own_scope is None]):
        _commit(ctx, item)


def _unused_wrap(ctx: FixContext, site: Site) -> bool:
    """`parallel = multi_gpu_model(model, ...)` (or `if n_gpus > 1:` around it) where nothing ever
    reads `parallel`, in a function or a script: the call only built a model no code trained,
    and the script ran on one device. The call (its `if`) goes, and nothing else changes: no
    strategy, so the script still trains where it did. Planned here when that holds, without
    comments to lose."""
    statement = site.statement
    if not isinstance(site.target, cst.Name) or statement is None or len(statement.body) != 1:
        return False
    assignment = ctx._site_assignment(site)
    scope = ctx.tree.enclosing_scope_node(site.call)
    module_level = isinstance(scope, cst.Module)
    if assignment is None or assignment.references or (module_level and not runs_as_script(ctx.tree.module)):
        return False
    removed: cst.SimpleStatementLine | cst.If = _dead_guard(ctx.tree, statement) or statement
    if removed is statement and _empties_block(ctx.tree, statement):
        return False
    if findall(removed, cst.Comment):  # (its leading lines' comments too)
        return False
    ctx.rewritten.append(site)
    ctx.plan.statements[id(removed)] = None
    return True


def _reported_patch(ctx: FixContext, site: Site) -> bool:
    """MGPU121 when a method of the parallel model is replaced by assignment (`parallel.save =
    type(model.save)(_save, parallel)`, the save redirected to the template): migrated, the two
    names are one model and the patched method would call itself (`RecursionError` at the save)."""
    tree = ctx.tree
    for name in ctx.references_of(site):
        parent = tree.parent(name)
        direct = [parent] if isinstance(parent, cst.Attribute) and parent.value is name else []
        for attribute in [*direct, *_patched_by_helper(tree, name)]:
            target = tree.parent(attribute)
            if not (isinstance(target, cst.AssignTarget) and target.target is attribute):
                continue
            if attribute.attr.value == "callback_model":
                continue  # Keras 2's callback hack: template_recovery removes it
            if attribute.attr.value in _DATA_ATTRIBUTES:
                # `disc.trainable = False` freezes a GAN's discriminator (round 47, af04): a flag the
                # one model takes as the wrapper did, no method replaced
                continue
            through = None if direct and attribute is direct[0] else name
            _report_patched(ctx, site, attribute, through)
            return True
    return False


# attributes of a model that hold data, not methods: setting one replaces nothing that could recurse
_DATA_ATTRIBUTES: Final = frozenset({
    "trainable", "stop_training", "name", "history", "optimizer", "loss", "metrics_names", "built", "run_eagerly",
})


def _patched_by_helper(tree: Tree, name: cst.Name) -> list[cst.Attribute]:
    """`patch_save(parallel_model, model)` handing the parallel model to a function of the file:
    the attributes of that parameter the function names (`parallel.save = model.save` among them)."""
    arg = tree.parent(name)
    call = tree.parent(arg) if isinstance(arg, cst.Arg) else None
    if not (isinstance(arg, cst.Arg) and isinstance(call, cst.Call) and isinstance(call.func, cst.Name)
            and not arg.star):
        return []
    scope = tree.scopes.get(call.func)
    defined = [getattr(a, "node", None) for a in scope[call.func.value]] if scope is not None else []
    function = defined[0] if len(defined) == 1 else None
    if not isinstance(function, cst.FunctionDef):
        return []
    params = [*function.params.posonly_params, *function.params.params]
    if arg.keyword is not None:
        keyword = arg.keyword.value
        param = next((p for p in params if p.name.value == keyword), None)
    else:
        index = [a for a in call.args if a.keyword is None].index(arg)
        param = params[index] if index < len(params) else None
    if param is None:
        return []
    return [
        n for n in walk_same_scope(function.body)
        if isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name) and n.value.value == param.name.value
    ]


def _report_patched(ctx: FixContext, site: Site, attribute: cst.Attribute, through: cst.Name | None) -> None:
    tree = ctx.tree
    patch = tree.statement_of(attribute)
    given = f" (it receives that model on line {tree.position(through)[0]})" if through is not None else ""
    ctx.report(attribute, NO_PATCHED_METHODS, (
        f"`{tree.code(attribute)}` is replaced here (line {tree.position(patch or attribute)[0]}), on the model "
        f"`{site.name}` returned{given}; after migration that name is the model itself: a replacement that "
        f"installs the model's own `{attribute.attr.value}` does nothing, and one that calls it would call "
        "itself. Remove the replacement (and the function it installs) and rerun; the "
        f"`{site.name}` call on line {tree.position(site.call)[0]} is left as it is."
    ), site=site)


def _reported_lookup(ctx: FixContext, site: Site) -> bool:
    """MGPU301 when the parallel model's layers are looked up in a way the codemod cannot map to
    the template (`parallel.layers[0]`, `get_layer('encoder')`) or walked over: after migration
    there is no wrapper, so the same code on the model would name another layer, or reach layers
    the old walk never changed."""
    unknown = [lk for lk in lookups(ctx.tree, site, ctx.references_of(site)) if not lk.replaced]
    if not unknown:
        return False
    tree = ctx.tree
    template = tree.code(site.template) if site.template is not None else "the model"
    walk = next((lk for lk in unknown if isinstance(lk.node, cst.Attribute)), None)
    left = f"the `{site.name}` call on line {tree.position(site.call)[0]} is left as it is."
    if walk is not None:
        ctx.report(walk.node, TEMPLATE_LOOKUPS_KNOWN, (
            f"`{_first_line(tree, tree.statement_of(walk.node) or walk.node)}` walks the old "
            f"parallel wrapper's layers, where `{template}` was one layer: in Keras 2, setting `trainable` on it "
            f"left the flags of `{template}`'s own layers as they were, while the same walk over `{template}.layers` "
            f"would reach every one of them and change what trains. Write it over `{template}.layers` if "
            f"every layer was meant (keras-yolo3's unfreeze step), or remove it, and rerun; {left}"
        ), site=site)
        return True
    first = unknown[0]
    ctx.report(first.node, TEMPLATE_LOOKUPS_KNOWN, (
        f"`{tree.code(first.node)}` looks a layer up in the old parallel wrapper (its layers were the inputs, "
        f"one slice per GPU, the template `{template}` itself and one merge per output); the codemod cannot "
        f"tell which layer of `{template}` it means, and after migration there is no wrapper. Replace it with "
        f"`{template}` if it meant the template (or index `{template}.layers` for one of its layers) and rerun; "
        f"{left}"
    ), site=site)
    return True


def _first_line(tree: Tree, node: cst.CSTNode) -> str:
    """The first line of `node`'s code, past its leading comment lines (`for layer in ...:`)."""
    if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        node = node.with_changes(leading_lines=[])
    return tree.code(node).strip().splitlines()[0]


def _drop_sharing_uncovered(
    ctx: FixContext, planned: list[_Planned], uncovered: list[tuple[Site, list[cst.BaseStatement]]]
) -> list[_Planned]:
    """A site whose scope would build an object that another site uses but cannot cover (MGPU118:
    a GAN's discriminator, used by the stacked model) is left too: rewritten alone, the two models
    would live under different strategies."""
    kept = []
    for item in planned:
        region = item.block.body[item.start:item.end + 1]
        shared = next(((other, built) for other, chain in uncovered for built in chain
                       if any(s is built for s in region)), None)
        if shared is None or item.own_scope is not None:
            kept.append(item)
            continue
        other, built = shared
        tree = ctx.tree
        ctx.report(item.site.call, OUTER_OBJECTS, (
            f"line {tree.position(built)[0]}{_short_code(tree, built)}, which this `{item.site.name}` call's "
            f"`strategy.scope()` would cover, is also used by the `{other.name}` call on line "
            f"{tree.position(other.call)[0]}, which is left as it is (see its finding); rewritten alone, the two "
            "models would be under different strategies. Build both models under one `strategy.scope()` by "
            "hand, or move what the other call's model uses next to its construction and rerun; the call is "
            "left as it is."
        ))
    return kept


def _drop_given_to_unwrapping_helpers(ctx: FixContext, planned: list[_Planned]) -> list[_Planned]:
    """MGPU122: a site whose parallel model goes to a function of the file that saves
    `parameter.layers[-2]` is left unless every call of that function passes the parallel model of
    a site rewritten too (then the checkpoints fixer makes it save the model it is given).
    Migrated, the model is the template itself and `layers[-2]` one of its layers (AttributeError
    at the save); the function cannot simply save what it is given while unmigrated parallel
    models (or unknown values) reach it. Repeated: leaving one site can leave another."""
    tree = ctx.tree
    found = (helper_unwrapping(tree, n) for n in tree.all_nodes() if isinstance(n, (cst.Subscript, cst.Call)))
    helpers = [h for h in found if h is not None]
    if not helpers:
        return planned
    kept = list(planned)
    while True:
        reads = {id(item): {id(r) for r in ctx.references_of(item.site)} for item in kept}
        migrated = set().union(*reads.values()) if reads else set()
        left = next(((item, helper) for item in kept if item.own_scope is None for helper in helpers
                     if _reaches(tree, helper, reads[id(item)]) and not _safe_helper(helper, migrated)), None)
        if left is None:
            return kept
        item, helper = left
        kept.remove(item)
        _report_helper(ctx, item.site, helper, migrated)


def _reaches(tree: Tree, helper: HelperUnwrap, reads: set[int]) -> bool:
    """One of `reads` is an argument of a call of the helper's name."""
    name = helper.function.name.value
    for call in tree.all(cst.Call):
        assert isinstance(call, cst.Call)
        if isinstance(call.func, cst.Name) and call.func.value == name and any(id(a.value) in reads for a in call.args):
            return True
    return False


def _safe_helper(helper: HelperUnwrap, migrated: set[int]) -> bool:
    return helper.given is not None and single_output_unwrap(helper.unwrap) and all(
        id(g) in migrated for g in helper.given)


def _report_helper(ctx: FixContext, site: Site, helper: HelperUnwrap, migrated: set[int]) -> None:
    tree = ctx.tree
    name = helper.function.name.value
    unwrap = tree.code(helper.unwrap)
    other = next((g for g in helper.given or () if id(g) not in migrated), None)
    if other is not None:
        why = (f"`{name}` is also given `{tree.code(other)}` (line {tree.position(other)[0]}), which the codemod "
               "does not migrate, so it cannot simply save what it is given")
    elif helper.given is None:
        why = f"`{name}` is also used where the codemod cannot see what it is given"
    else:
        why = f"the codemod cannot tell that `{unwrap}` is the template of a one-output model"
    ctx.report(helper.unwrap, HELPERS_GIVEN_MIGRATED, (
        f"`{name}` saves `{unwrap}`, the template inside the old parallel wrapper, and receives the model the "
        f"`{site.name}` call on line {tree.position(site.call)[0]} returns; migrated, that model is the template "
        f"itself and `{unwrap}` one of its layers (AttributeError at the save), while {why}. Make `{name}` save "
        f"`{helper.parameter}` itself and pass it the template (or the migrated model) on every call, then "
        "rerun; the call is left as it is."
    ), site=site)


def _reported_batch_calls(ctx: FixContext, site: Site, receivers: set[str],
                          built_under: Mapping[str, cst.CSTNode] | None = None) -> bool:
    """MGPU203 when the model is used with `*_on_batch` after the call: under the strategy those
    calls give every replica the whole batch, so the rewrite would train or predict another way.
    `built_under`: other models the scope would cover (`baseline = Sequential(...)` between the
    template and its compile), by name, with the statement that builds each."""
    found = on_batch_calls(ctx.tree, site.call, receivers)
    if not found:
        return False
    tree = ctx.tree
    if built_under:
        first = found[0]
        built = tree.position(built_under[first.receiver])[0]
        ctx.report(site.call, NO_BATCH_CALLS, (
            f"`{site.name}(...)` left as it is: `{first.receiver}` (line {built}) is built among the statements "
            f"the `strategy.scope()` would cover, so it would become a distributed model too, and "
            f"`{first.receiver}.{first.method}(...)` (line {tree.position(first.call)[0]}) would give every "
            f"replica the whole batch ({EFFECT[first.method]}). Build `{first.receiver}` after the compile of "
            f"`{tree.code(site.template) if site.template is not None else 'the model'}` (or before its "
            "construction) and rerun."
        ))
        return True
    named = [
        f"`{c.receiver}.{c.method}(...)` (line {tree.position(c.call)[0]}"
        + (f", given the model on line {tree.position(c.through)[0]})" if c.through else ")")
        for c in found
    ]
    listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
    first = found[0]
    ctx.report(site.call, NO_BATCH_CALLS, (
        f"`{site.name}(...)` left as it is: {listed} would run on the migrated model, and under "
        f"MirroredStrategy Keras 3 gives every replica the whole batch passed to `{first.method}` "
        f"({EFFECT[first.method]}). Replace each with its whole-batch form, e.g. "
        f"{ON_BATCH[first.method].format(model=first.receiver)} for `{first.method}` (for a list of inputs, "
        "`batch_size=len(x[0])`), and rerun."
    ))
    return True


def _plan_site(
    ctx: FixContext, site: Site, uncovered: list[tuple[Site, list[cst.BaseStatement]]] | None = None,
    *, messages: bool = True,
) -> _Planned | None:
    """How one site is rewritten, or None when a precondition (preconditions.py) does not hold:
    then the first one that does not is reported, at the object involved. `messages`: a guard's
    prints may move into the strategy choice (tried first; not when they read what the region binds)."""
    tree = ctx.tree
    assert site.statement is not None and site.template is not None
    template = tree.code(site.template)
    target = tree.code(site.target) if site.target is not None else None
    if target is not None:
        fallback = fallbacks.collapse(tree, site.statement, target, template, messages=messages)
    else:
        fallback = fallbacks.Fallback(anchor=site.statement)
    anchor = fallback.anchor
    construction = _template_construction(ctx, site, anchor, template, fallback.guards)
    if construction is None:
        return None
    block0, j, rebinders = construction
    built_by = block0.body[j]

    scope_node = tree.enclosing_scope_node(anchor)
    start0 = construction_start(tree, block0, j)
    for rebinder in rebinders:  # a later, conditional rebinding (`try: model = model_from_json(...)`)
        start0 = min(start0, construction_start(tree, block0, _index_in(block0, rebinder)))
    receivers = {template} if target is None else {template, target}
    compiles = _compiles(tree, scope_node, receivers, block0.body[start0], site.call)
    derived = _derived_statements(tree, scope_node, site, receivers)
    derived_names = set().union(*(_assigned(tree, d) for d in derived)) if derived else set()
    if derived:
        compiles += _compiles(tree, scope_node, derived_names, derived[0])
    construction_nodes: list[cst.CSTNode] = [*block0.body[start0:j + 1], *stacked_on(tree, block0, j), *rebinders]
    if _reported_caller_object(ctx, site, scope_node, construction_nodes, template):
        return None
    if _reported_module_object(ctx, site, scope_node, [block0.body[start0], built_by, *compiles, *derived]):
        return None
    own_scope = enclosing_strategy_scope(tree, anchor)
    if own_scope is not None:
        return _plan_in_own_scope(ctx, site, fallback, own_scope, template, target, scope_node,
                                  [block0.body[start0], built_by, *compiles, *derived])
    if _reported_batch_calls(ctx, site, receivers | derived_names):
        return None
    if _reported_derived_compiled_elsewhere(ctx, site, scope_node, template, derived, compiles):
        return None
    if not compiles and not _loaded(built_by) and not _predicts_only(tree, scope_node, receivers, site.call):
        _report_no_compile(ctx, site, scope_node, template, target)
        return None
    if target is not None and target != template and _reported_two_compiles(ctx, site, template, target, compiles):
        return None
    block, start, end = _scope_range(tree, anchor, block0, start0, j, template, compiles, derived)
    region = block.body[start:end + 1]
    if fallback.said is not None and (
        not _said_moves(tree, fallback.said, region, receivers)
        or _replicas_across_cells(fallback.said, region, anchor)
        or _replicas_under_kept_if(tree, fallback.said, anchor, block)
    ):
        return _plan_site(ctx, site, uncovered, messages=False)  # the `if` stays with its messages
    # Past the construction: a model the covered code calls (`fake = self.generator(z)` for a GAN's
    # stacked model) that another method or the caller built has variables outside the scope too.
    past: list[cst.CSTNode] = [s for s in region if not any(s is c for c in construction_nodes)]
    if _reported_caller_object(ctx, site, scope_node, past, template,
                               user="the code the `strategy.scope()` would cover"):
        return None
    others = {
        name: statement for statement in region if makes_layers(statement)
        for name in bound_names(statement) - receivers - derived_names
    }
    if others and _reported_batch_calls(ctx, site, set(others), others):
        return None
    if _reported_module_object(ctx, site, scope_node, list(region)):
        return None
    covered = _cover_objects_built_before(ctx, site, template, block, start, end, uncovered)
    if covered is None:
        return None
    start = covered
    if _reported_outside_argument(ctx, site, template, scope_node, compiles, block.body[start:end + 1]):
        return None
    if _reported_shared_argument(ctx, site, template, scope_node, compiles, block.body[start:end + 1]):
        return None
    # Every `if` between the site and the block the scope goes in guards the site: where its
    # condition is false the old script ran on one device, so it caps the count (kept structure too).
    guards = [*fallback.guards, *_path_guards(tree, anchor, block)]

    if not fallback.collapsed and target == template and _empties_block(tree, site.statement):
        ctx.report(site.call, "MGPU103", (
            f"removing `{site.name}(...)` would leave its branch empty; restructure the `if`/`try` so the "
            "branch has other code (or drop the branch) and rerun, or migrate by hand."
        ))
        return None
    settings = _device_settings_to_hoist(ctx, site, template, anchor, block, start)
    if settings is None:
        return None
    hoisted = _strategy_inputs_to_hoist(ctx, site, template, target, anchor, guards, block, start, settings)
    if hoisted is None:
        return None
    hoisted = sorted({id(h): h for h in [*settings, *hoisted]}.values(), key=tree.order)
    hoisted = [*hoisted, *_said_with_hoisted(tree, block, start, hoisted)]
    hoisted = sorted({id(h): h for h in hoisted}.values(), key=tree.order)

    known_int = site.gpus is not None and (
        surely_int(site.gpus, _IntResolver(tree, site.gpus)) or _ordered_on_the_way(tree, site)
    )
    expression = strategy_expression(ctx.tf_name(), site.gpus, guards, known_int=known_int)
    planned = _Planned(
        site, anchor, block, start, end, expression, [], scope_node,
        unwrap=_cpu_blocks_to_unwrap(tree, built_by, block.body[start:end + 1])
        + _device_blocks_around_call(tree, anchor, block.body[start:end + 1]),
        hoisted=hoisted, definitions=_movable_definitions(block, start, end, hoisted),
        guards=guards, known_int=known_int, said=fallback.said,
    )
    if not fallback.collapsed and target is not None:
        planned.fallback_kept = _kept_fallback(tree, site.statement, anchor)
    return planned


def _replicas_across_cells(said: fallbacks.Said, region: Sequence[cst.BaseStatement], anchor: cst.CSTNode) -> bool:
    """A `try`'s messages (now on the replica count) in a later notebook cell than the region's start:
    they stay in their cell, which would otherwise be left empty (and its stored output lost)."""
    if said.replicas is None or said.chain is not None or said.before or said.after or said.otherwise:
        return False
    for statement in region[1:]:
        if cell_boundary(statement) or any(
            line.comment is not None and CELL_MARKER.match(line.comment.value)
            for line in getattr(statement, "leading_lines", ())
        ):
            return True
        if statement is anchor:
            break
    return False


def _replicas_under_kept_if(tree: Tree, said: fallbacks.Said, anchor: cst.CSTNode, block: Block) -> bool:
    """A `try`'s messages (now on the replica count) in a branch of an `if` that stays (`if gpus <= 1:
    print('one device') else: try: wrap ...`): above the scope they would print on the `if`'s other
    path too, so the `if` on the replica count takes the `try`'s place in its branch."""
    if said.replicas is None or said.chain is not None or said.before or said.after or said.otherwise:
        return False
    return bool(_path_guards(tree, anchor, block))


def _said_moves(tree: Tree, said: fallbacks.Said, region: Sequence[cst.BaseStatement], models: set[str]) -> bool:
    """A guard's messages may move up into the strategy choice: they read nothing the region
    binds (they would run before it) and not the models."""
    bound = set().union(*(bound_names(s) for s in region)) | {m.split(".")[0] for m in models}
    every: list[cst.CSTNode] = [*said.before, *said.after, *said.otherwise, *said.otherwise_after]
    if said.replicas is not None:
        every += [*said.replicas[0], *said.replicas[1]]
    for branch in said.chain or []:  # the conditions move up with the messages
        every += [*branch.before, *branch.after, *([branch.test] if branch.test is not None else [])]
    return not any(used_names(s) & bound for s in every)


def _index_in(block: Block, statement: cst.CSTNode) -> int:
    return next(i for i, s in enumerate(block.body) if s is statement)


def _plan_in_own_scope(
    ctx: FixContext, site: Site, fallback: fallbacks.Fallback, own: cst.With, template: str, target: str | None,
    scope_node: cst.CSTNode, members: list[cst.CSTNode],
) -> _Planned | None:
    """The call already sits in `with <strategy>.scope():`: that strategy is kept and the call
    dropped, when the same scope covers the template's construction and compile (MGPU114)."""
    tree = ctx.tree
    outside = [n for n in members if not contains(tree, own.body, n)]
    if outside:
        line = tree.position(outside[0])[0]
        ctx.report(site.call, OWN_SCOPE_COVERS, (
            f"`{site.name}(...)` is inside `with {tree.code(own.items[0].item)}:` (line {tree.position(own)[0]}), "
            f"but line {line}{_short_code(tree, outside[0])}, which builds or compiles `{template}`, is outside "
            f"that scope; move it inside the scope, replace the call's result with `{template}` and rerun, or "
            "migrate by hand. The call is left as it is."
        ))
        return None
    compiles = [n for n in members if isinstance(n, cst.Call)]
    region = own.body.body if isinstance(own.body, cst.IndentedBlock) else []
    if _reported_outside_argument(ctx, site, template, scope_node, compiles, region):
        return None
    assert site.statement is not None
    if not fallback.collapsed and target == template and _empties_block(tree, site.statement):
        ctx.report(site.call, "MGPU103", (
            f"removing `{site.name}(...)` would leave its branch empty; restructure the `if`/`try` so the "
            "branch has other code (or drop the branch) and rerun, or migrate by hand."
        ))
        return None
    anchor = fallback.anchor
    block, index = tree.block_of(anchor)
    planned = _Planned(site, anchor, block, index, index, "", [], scope_node, own_scope=own)
    if not fallback.collapsed and target is not None:
        planned.fallback_kept = _kept_fallback(tree, site.statement, anchor)
    return planned


def _template_construction(
    ctx: FixContext, site: Site, anchor: cst.BaseStatement, template: str, guards: Sequence[str] = ()
) -> tuple[Block, int, list[cst.BaseStatement]] | None:
    """(block, index) of the statement that builds the template on every path to the call, and the
    statements after it in that block that rebind it on some paths only; None when there is none to
    put under the scope (reported: MGPU101 not bound here, MGPU104 bound by an import, def or class,
    MGPU112 bound only on some paths)."""
    tree = ctx.tree
    bindings = list(itertools.islice(_template_bindings(tree, anchor, template), 1))
    if not bindings:
        ctx.report(site.call, TEMPLATE_BUILT_HERE, (
            f"{_origin_of(tree, site, template)}{_built_in_method(tree, site, template)}; "
            f"create {_strategy_to_create(ctx, site, guards)} "
            f"where it is built{_parameters_passed(tree, site)}, build and compile it under "
            f"`with strategy.scope():`, and use `{template}` instead of the `{site.name}` result."
        ))
        return None
    partial: list[cst.BaseStatement] = []
    for block0, j in _template_bindings(tree, anchor, template):
        statement = block0.body[j]
        if binds_on_every_path(tree, statement, template):
            break
        partial.append(statement)
    else:
        first = partial[0]
        assignment = next((n for n in walk_same_scope(first) if isinstance(n, cst.SimpleStatementLine)
                           and binds(n, template, tree)), first)
        ctx.report(assignment, TEMPLATE_ON_EVERY_PATH, (
            f"`{template}` is assigned here only on some paths (inside the `{_kind(first)}` on line "
            f"{tree.position(first)[0]}), and the "
            f"`{site.name}` call on line {tree.position(site.call)[0]} uses it; on the other paths it comes from "
            f"elsewhere, outside the `strategy.scope()` the migration would open here. Build `{template}` on every "
            f"path before the call in this function (an `else:` that builds it) and rerun, or migrate by hand; "
            "the call is left as it is."
        ))
        return None
    if _bound_by_definition(tree, block0.body[j], template):
        ctx.report(site.call, TEMPLATE_MOVABLE, (
            f"`{template}` is bound by an import, def or class (line {tree.position(block0.body[j])[0]}); build "
            "the model in this function under `with strategy.scope():` by hand (see MIGRATION.md)."
        ))
        return None
    if any(tree.parent(p) is not block0 for p in partial):
        ctx.report(partial[0], TEMPLATE_ON_EVERY_PATH, (
            f"`{template}` is assigned here only on some paths (inside this `{_kind(partial[0])}`), after its "
            f"construction on line {tree.position(block0.body[j])[0]} in an enclosing block; the `{site.name}` call "
            f"on line {tree.position(site.call)[0]} uses either. Build `{template}` in one block before the call and "
            "rerun, or migrate by hand; the call is left as it is."
        ))
        return None
    return block0, j, partial


def _strategy_to_create(ctx: FixContext, site: Site, guards: Sequence[str]) -> str:
    """The strategy line an MGPU101 finding asks for, in backquotes; with the script's own
    condition (`if self.n_gpus > 1:` around the call) as the choice between two."""
    decided = strategy_expression(ctx.tf_name(), site.gpus, list(guards))
    branch = decided.branch if isinstance(decided, StrategyCode) else None
    if branch is None:
        return f"`strategy = {decided}`"
    multi, single = (decided, branch.single) if branch.multi_when_true else (branch.single, decided)
    return f"`strategy = {multi}` if `{branch.condition}`, else `strategy = {single}`,"


def _said_with_hoisted(
    tree: Tree, block: Block, start: int, hoisted: Sequence[cst.BaseStatement]
) -> list[cst.BaseStatement]:
    """A message right after a hoisted count that reads nothing else the covered code binds
    (`n_gpus = count_gpus()` / `print("Found %d GPUs" % n_gpus)`): it goes up with the count."""
    found: list[cst.BaseStatement] = []
    ids = {id(h) for h in hoisted}
    for index, statement in enumerate(block.body):
        if id(statement) not in ids or index + 1 >= len(block.body) or index < start:
            continue
        following = block.body[index + 1]
        if id(following) in ids or not fallbacks.message(following):
            continue
        bound_between = set().union(set(), *(
            bound_names(s) for s in block.body[start:index + 1] if id(s) not in ids
        ))
        if not used_names(following) & bound_between:
            found.append(following)
    return found


def _kind(statement: cst.CSTNode) -> str:
    kinds = {cst.If: "if", cst.For: "for", cst.While: "while", cst.Try: "try", cst.With: "with"}
    return next((k for t, k in kinds.items() if isinstance(statement, t)), "statement")


def _template_bindings(tree: Tree, anchor: cst.BaseStatement, template: str) -> Iterator[tuple[Block, int]]:
    """(block, index) of the statements binding the template before the site, latest first, climbing
    out of if/try/with/for blocks (lazily: the caller stops at the first that binds on every path)."""
    for block, index in tree.block_chain(anchor):
        for j in range(index - 1, -1, -1):
            if binds(block.body[j], template, tree):
                yield block, j


def _bound_by_definition(tree: Tree, built_by: cst.BaseStatement, template: str) -> bool:
    """The template comes from a `def`, a `class` or an import, not from a call assigned here."""
    if isinstance(built_by, (cst.FunctionDef, cst.ClassDef)):
        return True
    imports = any(isinstance(n, (cst.Import, cst.ImportFrom)) for n in walk_same_scope(built_by))
    return imports and not _assigns_with_call(built_by, template, tree)


def _scope_range(
    tree: Tree, anchor: cst.BaseStatement, block0: Block, start0: int, j: int, template: str,
    compiles: list[cst.Call], derived: Sequence[cst.BaseStatement] = (),
) -> tuple[Block, int, int]:
    """The statements `strategy.scope()` covers: the site, the template's construction with what
    it uses from the blocks around it, the models built on the parallel model, and every compile
    with the optimizer/metrics it is given."""
    members: list[cst.CSTNode] = [block0.body[start0], anchor, *derived]
    members += outer_construction(tree, block0, start0, j, template)
    for call in compiles:
        statement = tree.statement_of(call)
        assert statement is not None
        members.append(statement)
        members.extend(dependency_statements(tree, statement, call))
    return _common_range(tree, members)


# Callees whose result is a model whatever their case: `load_model(path)`, `model_from_json(text)`.
_MODEL_LOADERS = frozenset({"load_model", "model_from_json", "model_from_yaml", "model_from_config", "clone_model"})


def _model_binding(statement: cst.CSTNode) -> bool:
    """`x = Model(...)`, `x = Dense(4)`, `x = keras.applications.ResNet50(...)`, `x = load_model(p)`:
    the statement assigns an object that owns (or will own) variables."""
    if _constructs(statement):
        return True
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], (cst.Assign, cst.AnnAssign))):
        return False
    value = statement.body[0].value
    if not isinstance(value, cst.Call):
        return False
    dotted = dotted_name(value.func)
    return dotted.rsplit(".", 1)[-1] in _MODEL_LOADERS or ".applications." in f".{dotted}."


def _cover_objects_built_before(
    ctx: FixContext, site: Site, template: str, block: Block, start: int, end: int,
    uncovered: list[tuple[Site, list[cst.BaseStatement]]] | None = None,
) -> int | None:
    """The scope's first statement, moved up so that the scope covers every model or layer its
    statements use that is built earlier in the same block (`backbone = Model(inp, h)` above
    `for layer in backbone.layers: model.add(layer)`, `self.generator` called in a GAN's stacked
    model) with what builds it: variables created before the scope make `fit` fail. Moving up is
    safe only over plain data, constants, definitions and statements working on those objects;
    otherwise the object is reported (MGPU118), as is one built in an enclosing block. None when
    reported."""
    tree = ctx.tree
    region = block.body[start:end + 1]
    read: set[str] = set()
    used_as_model: set[str] = set()
    for statement in region:
        read |= plain_uses(statement) | object_reads(statement)
        used_as_model |= object_reads(statement)
        for call in findall(statement, cst.Call):
            func = call.func
            if isinstance(func, cst.Name) or _self_attribute(func):
                used_as_model.add(tree.code(func))  # `base(x)`, `self.generator(z)`
        for part in _self_attribute_parts(statement):
            if part.attr.value in _MODEL_PARTS:
                used_as_model.add(tree.code(cst.ensure_type(part, cst.Attribute).value))  # `self.base.output`
        for line in findall(statement, cst.SimpleStatementLine):
            if is_alias(line):  # `self._original_model = self.model`: the model passes on (in an `if` too)
                alias = cst.ensure_type(line.body[0], cst.Assign)
                used_as_model.add(tree.code(alias.value))
    read |= {code for code in used_as_model if code.startswith("self.")}
    read = {code for code in read if not _bound_before_read(tree, region, code)}
    chain: list[cst.BaseStatement] = []
    needed: set[str] = set()  # what the chain's statements read
    new_start = start
    for k in range(start - 1, -1, -1):
        statement = block.body[k]
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) or findall(statement, (cst.Import, cst.ImportFrom)):
            continue
        bound = {code for code in read | needed if _binds_code(tree, statement, code)}
        if not (bound & needed or bound & used_as_model or (bound and _model_binding(statement))):
            continue  # data or a setting only the scope's statements read: it stays before the scope
        if makes_layers(statement) or is_alias(statement):
            chain.append(statement)
            new_start = k
            needed |= plain_uses(statement) | object_reads(statement)
    wanted = read | needed
    objects = {code for s in chain for code in wanted if _binds_code(tree, s, code)}
    outer = _object_built_in_enclosing_block(tree, block, start, read - objects, used_as_model)
    if not chain and outer is None:
        return start
    chained = {id(s) for s in chain}
    blocking: cst.BaseStatement | None = None
    for statement in block.body[new_start:start]:
        if id(statement) in chained or isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        if findall(statement, (cst.Import, cst.ImportFrom)) or device_setting(statement, tree) is not None:
            continue  # imports stay valid under the scope; device settings are hoisted or reported later
        if not makes_layers(statement) or (_touches(tree, statement, objects) and not bound_names(statement)):
            continue  # plain data, or work on the objects moved with it (`backbone.load_weights(path)`)
        blocking = statement
        break
    if blocking is None and outer is None:
        return new_start
    if outer is not None:
        name, built = outer
        where = f"line {tree.position(built)[0]}, in an enclosing block"
    else:
        built = next(s for s in reversed(chain) if any(_binds_code(tree, s, c) for c in read))
        name = sorted(c for c in read if _binds_code(tree, built, c))[0]
        where = f"line {tree.position(built)[0]}"
    stop = (
        f"; line {tree.position(blocking)[0]}{_short_code(tree, blocking)} between it and that code "
        "is not plain data, so the scope cannot be extended over it"
        if blocking is not None and outer is None else ""
    )
    if uncovered is not None:
        uncovered.append((site, chain))
    ctx.report(built, OUTER_OBJECTS, (
        f"`{name}` is built on {where}, before the code the `strategy.scope()` would cover (what builds "
        f"`{template}`, from line {tree.position(block.body[start])[0]}), and that code uses it as a model or "
        f"layer{stop}; its variables would exist outside the scope and `fit` would fail. Build `{name}` "
        f"right before `{template}` (or `{template}` right after it) and rerun, or migrate the `{site.name}` "
        f"call (line {tree.position(site.call)[0]}) by hand; it is left as it is."
    ))
    return None


def _bound_before_read(tree: Tree, region: Sequence[cst.BaseStatement], code: str) -> bool:
    """The region binds `code` before (or where) it first reads it: its value comes from the region.
    Statement by statement, inside blocks too (`if`: read by its first line, bound by its second)."""
    lines = [line for statement in region for line in findall(statement, cst.SimpleStatementLine)]
    for statement in lines:
        reads = code in plain_uses(statement) or code in object_reads(statement) or (
            "." in code and code in {tree.code(a) for a in findall(statement, cst.Attribute)}
            and not _binds_code(tree, statement, code)
        )
        if reads and not _binds_code(tree, statement, code):
            return False
        if _binds_code(tree, statement, code):
            return True
    return False


def _binds_code(tree: Tree, statement: cst.CSTNode, code: str) -> bool:
    """`statement` assigns `code` (a plain name, or a `self.` attribute)."""
    return code in bound_names(statement) if "." not in code else binds(statement, code, tree)


def _touches(tree: Tree, statement: cst.CSTNode, objects: set[str]) -> bool:
    """`statement` reads or changes one of `objects` (names, `self.` attributes)."""
    if used_names(statement) & objects:
        return True
    return any(tree.code(a) in objects for a in findall(statement, cst.Attribute) if _is_self(a.value))


def _object_built_in_enclosing_block(
    tree: Tree, block: Block, start: int, read: set[str], used_as_model: set[str]
) -> tuple[str, cst.BaseStatement] | None:
    """A name the scope's statements use as a model or layer that a statement of an enclosing
    block (same function) builds before them: the scope cannot reach it."""
    wanted = read & used_as_model
    if not wanted:
        return None
    for outer, index in tree.block_chain(block.body[start])[1:]:
        for k in range(index - 1, -1, -1):
            statement = outer.body[k]
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                continue
            names = {code for code in wanted if _binds_code(tree, statement, code)}
            if names and makes_layers(statement) and not findall(statement, (cst.Import, cst.ImportFrom)):
                return sorted(names)[0], statement
    return None


def _reported_module_object(ctx: FixContext, site: Site, scope_node: cst.CSTNode, nodes: list[cst.CSTNode]) -> bool:
    """MGPU109: the function's model uses an object created at module level, outside any scope."""
    tree = ctx.tree
    outside = _created_outside(tree, scope_node, nodes)
    if outside is None:
        return False
    name, statement = outside
    ctx.report(statement, MODULE_OBJECTS, (
        f"`{name}` is created here, at module level, and used by `{site.name}`'s model in "
        f"`{cst.ensure_type(scope_node, cst.FunctionDef).name.value}` (line {tree.position(site.call)[0]}): "
        f"the codemod cannot move it under that function's `strategy.scope()`, and variables created outside "
        f"the scope make `fit` fail. Create `{name}` inside the function, under the scope, and rerun; the "
        "call is left as it is meanwhile."
    ))
    return True


def _reported_outside_argument(
    ctx: FixContext, site: Site, template: str, scope_node: cst.CSTNode, compiles: list[cst.Call],
    region: Sequence[cst.BaseStatement],
) -> bool:
    """MGPU110: `compile` receives an optimizer or metric object created outside the scope's range."""
    tree = ctx.tree
    outside_arg = _outside_compile_argument(tree, scope_node, compiles, region)
    if outside_arg is None:
        return False
    name, node, where = outside_arg
    function = scope_node.name.value if isinstance(scope_node, cst.FunctionDef) else "this module"
    origin = (
        f"`{name}` is a parameter of `{function}`: its caller creates it, outside the `strategy.scope()` "
        "the migration would open here"
        if where == "parameter"
        else f"`{name}` is assigned on {where}, outside the code the codemod would move under `strategy.scope()`"
    )
    ctx.report(node, COMPILE_OBJECTS, (
        f"{origin}, and `compile` receives it; an optimizer or metric object created outside the scope makes "
        f"`fit` fail (\"Mixing different tf.distribute.Strategy objects\"). Create it under the same "
        f"`strategy.scope()` as `{template}` (pass a string such as 'adam', or build it inside), then migrate "
        f"the `{site.name}` call (line {tree.position(site.call)[0]}) by hand; it is left as it is."
    ))
    return True


def _reported_shared_argument(
    ctx: FixContext, site: Site, template: str, scope_node: cst.CSTNode, compiles: list[cst.Call],
    region: Sequence[cst.BaseStatement],
) -> bool:
    """MGPU110: an optimizer or metric object the scope would create (`optimizer = Adam(...)` above
    the template) is also given to a `compile` the scope does not cover (`self.generator.compile(
    optimizer=optimizer)` further down): created under the strategy, it fails that model's `fit`."""
    tree = ctx.tree
    inside = {id(n) for statement in region for n in subtree(statement)}
    covered = {id(c) for c in compiles}
    # (another site's models get a scope of their own: their compiles are its)
    sites = {tree.code(n) for other in ctx.sites for n in (other.target, other.template) if n is not None}
    for call in findall(scope_node, cst.Call):
        if id(call) in inside or id(call) in covered or not (
            isinstance(call.func, cst.Attribute) and call.func.attr.value == "compile"
        ) or tree.code(call.func.value) in sites:
            continue
        if tree.enclosing_scope_node(call) is not scope_node:
            continue
        for position, arg in enumerate(call.args):
            keyword = arg.keyword.value if arg.keyword is not None else None
            if not (keyword in _VARIABLE_ARGS or (keyword is None and position in (0, 2))):
                continue
            for name in _passed_objects(arg.value):
                scope = tree.scopes.get(name)
                bound = [getattr(a, "node", None) for a in scope.assignments[name.value]] if scope is not None else []
                if not any(node is not None and id(node) in inside for node in bound):
                    continue
                line = tree.position(call)[0]
                ctx.report(name, COMPILE_OBJECTS, (
                    f"`{name.value}` would be created under the `strategy.scope()` the migration opens for "
                    f"`{template}`, and `{tree.code(call.func)}(...)` (line {line}), outside that scope, receives it "
                    "too: training that model would fail (\"Need to be inside strategy.scope()\"). Give that "
                    f"compile its own optimizer (a string such as 'adam', or a new object), then migrate the "
                    f"`{site.name}` call (line {tree.position(site.call)[0]}) by hand or rerun; it is left as it is."
                ))
                return True
    return False


def _strategy_inputs_to_hoist(
    ctx: FixContext, site: Site, template: str, target: str | None, anchor: cst.BaseStatement,
    guards: list[str], block: Block, start: int, settings: Sequence[cst.BaseStatement] = (),
) -> list[cst.BaseStatement] | None:
    """The strategy line goes before the construction, so its inputs (the `gpus` value, the guards)
    must exist there: the plain settings assigned inside the range, moved above it. None when
    one cannot move (reported, MGPU105)."""
    tree = ctx.tree
    needed = set()
    if site.gpus is not None:
        needed |= used_names(site.gpus)
    for guard in guards:
        needed |= used_names(cst.parse_expression(guard))
    anchor_index = next(i for i, s in enumerate(block.body) if s is anchor or contains(tree, s, anchor))
    late = set()
    for statement in block.body[start:anchor_index]:
        late |= bound_names(statement)
    on_the_way = _bound_on_the_way(tree, block.body[anchor_index], site.call)
    late |= on_the_way
    late -= {target} if target else set()
    for setting in settings:  # moved above the strategy line already
        late -= bound_names(setting)
    # (the `if` holding the call binds the count only where the call does not run: what to move
    # lies before it)
    apart = on_the_way != bound_names(block.body[anchor_index]) and not on_the_way & needed
    hoisted = _hoistable(tree, block, start, anchor_index - apart, needed & late)
    if hoisted:
        late -= set().union(*(bound_names(h) for h in hoisted))
    if not needed & late:
        return hoisted
    names = sorted(needed & late)
    loop = next((a for a in tree.ancestors(site.call) if isinstance(a, (cst.For, cst.While))), None)
    if loop is not None and contains(tree, block.body[anchor_index], loop) and any(
        n in bound_names(loop) for n in names
    ):
        # `while gpus > 1: try: wrap(gpus); break / except ValueError: gpus -= 1`: a retry with
        # fewer GPUs, which MirroredStrategy does not need
        ctx.report(site.call, GPU_COUNT_FIRST, (
            f"the call sits in a loop (line {tree.position(loop)[0]}) that changes "
            f"{' and '.join(f'`{n}`' for n in names)} and calls it again (a retry with fewer GPUs); "
            "MirroredStrategy runs on the GPUs that exist, so replace the loop with "
            "`strategy = tf.distribute.MirroredStrategy()` (or a device list) above the model, build and "
            f"compile `{template}` under `with strategy.scope():`, and use `strategy.num_replicas_in_sync` where "
            "the loop's count was read."
        ))
        return None
    first = block.body[start]
    line = tree.position(first)[0]
    region = block.body[start:anchor_index + 1]
    if all(_binding_line(tree, region, n) == line for n in names):
        # (`cfg = load_config()`, read by the count and by the build: the first statement covered)
        listed = " and ".join(f"`{n}`" for n in names)
        ctx.report(site.call, GPU_COUNT_FIRST, (
            f"the GPU count uses {listed} from line {line}{_short_code(tree, first)}, where the code the scope "
            f"must cover starts (what builds `{template}` or its compile's arguments); the codemod cannot tell "
            "that this statement creates no model or layer, so it does not move it above the strategy line. If "
            f"it creates none, migrate by hand: create the strategy right after line {line}, then build and compile "
            f"`{template}` under `with strategy.scope():`."
        ))
        return None
    assigned = " and ".join(
        f"`{n}`, assigned on line {_binding_line(tree, block.body[start:anchor_index + 1], n)}," for n in names
    )
    # What the count's own assignment reads of the code the scope covers (`gpus = f(model)`): then
    # it cannot simply move before that code.
    covered = block.body[start:anchor_index + 1 - apart]
    built = set().union(*(bound_names(st) for st in covered if makes_layers(st)))
    reads = sorted({
        r for n in names for st in covered if n in bound_names(st) and not binds(st, template, tree)
        for r in _free_names(tree, st) & built - {n}
    })
    advice = (
        f"it reads {', '.join(f'`{r}`' for r in reads)}, built in that code, so it cannot come first: compute the "
        "count without it and rerun, or migrate by hand."
        if reads else
        f"assign {', '.join(f'`{n}`' for n in names)} before that line and rerun, or migrate by hand."
    )
    ctx.report(site.call, GPU_COUNT_FIRST, (
        f"the GPU count uses {assigned} "
        f"after line {tree.position(first)[0]}{_short_code(tree, first)} where the code the scope must "
        f"cover starts (what builds `{template}` or its compile's arguments); {advice}"
    ))
    return None


def _bound_on_the_way(tree: Tree, statement: cst.BaseStatement, call: cst.Call) -> set[str]:
    """The names `statement` (holding `call`) binds before the call runs: in an `if` whose branch
    holds the call's statement, only what that branch binds ahead of it (`else: G = 1` runs when
    the call does not, after the guard read `G`); anything else, all it binds."""
    if isinstance(statement, cst.If) and not any(
        isinstance(n, cst.BaseExpression) and n is call for n in walk_same_scope(statement.test)
    ):
        for suite in branch_suites(statement):
            body = list(suite.body) if isinstance(suite, cst.IndentedBlock) else []
            holder = next((k for k, s in enumerate(body) if s is call or contains(tree, s, call)), None)
            if holder is not None and isinstance(body[holder], cst.SimpleStatementLine):
                return set().union(set(), *(bound_names(s) for s in body[:holder + 1]))
    return bound_names(statement)


def _device_settings_to_hoist(
    ctx: FixContext, site: Site, template: str, anchor: cst.BaseStatement, block: Block, start: int,
) -> list[cst.BaseStatement] | None:
    """The device settings (devices.py) the scope's range runs before the site, with the plain
    statements they read, when all can move above the strategy line in their order: they set
    nothing the other statements read and read nothing those bind. None when one cannot (MGPU115):
    after the strategy line, which lists the GPUs, they would come too late."""
    tree = ctx.tree
    anchor_index = _index_in(block, next(s for s in block.body if s is anchor or contains(tree, s, anchor)))
    before = block.body[start:anchor_index]
    chosen = {id(s) for s in before if device_setting(s, tree) is not None}
    inner = block.body[anchor_index]
    blocked: cst.CSTNode | None = None
    if inner is not anchor:  # the site's own `if`/`with`: what runs there before it cannot move
        for node in walk_same_scope(inner):
            if isinstance(node, cst.SimpleStatementLine) and tree.order(node) < tree.order(site.call) and (
                device_setting(node, tree) is not None
            ):
                blocked = node
                break
    if not chosen and blocked is None:
        return []
    needed = set().union(*(used_names(s) for s in before if id(s) in chosen)) if chosen else set()
    for statement in reversed(before):  # what the settings read: `config = ConfigProto()`, `config.x = 1`
        if id(statement) not in chosen and _touched_names(statement) & needed and only_device_work(tree, statement):
            chosen.add(id(statement))
            needed |= used_names(statement)
    stay_bound: set[str] = set()
    stay_read: set[str] = set()
    for statement in before:
        if id(statement) in chosen:
            movable = only_device_work(tree, statement) and not (
                used_names(statement) & stay_bound or _touched_names(statement) & stay_read)
            if not movable and blocked is None:
                blocked = statement
        else:
            stay_bound |= _touched_names(statement)
            stay_read |= used_names(statement)
    if blocked is None:
        return [s for s in before if id(s) in chosen]
    first = block.body[start]
    what = device_setting(blocked, tree) or "a device setting"
    ctx.report(blocked, DEVICE_SETTINGS_FIRST, (
        f"`{what}` (line {tree.position(blocked)[0]}) changes the devices TensorFlow uses and runs after line "
        f"{tree.position(first)[0]}{_short_code(tree, first)}, where the code the scope must cover (what builds "
        f"`{template}`) starts; the strategy line would list the GPUs before it and the setting would be ignored, "
        f"and this statement cannot move above that line unchanged. Move it (with what it reads) before line "
        f"{tree.position(first)[0]} and rerun; the `{site.name}` call (line {tree.position(site.call)[0]}) is "
        "left as it is."
    ))
    return None


def _simple_statements(node: cst.CSTNode) -> Iterator[cst.SimpleStatementLine]:
    """Every simple statement line under `node` in its own scope, in source order (statements
    only: cheaper than walking every expression node)."""
    if isinstance(node, cst.SimpleStatementLine):
        yield node
        return
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return
    for child in children_of(node):
        if isinstance(child, (cst.BaseStatement, cst.BaseSuite, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler,
                              cst.Finally, cst.Module, cst.If)):
            yield from _simple_statements(child)


def _touched_names(statement: cst.CSTNode) -> set[str]:
    """Names a statement binds, or changes through an attribute or item (`config.gpu_options.x = 1`)."""
    names = bound_names(statement)
    for node in walk_same_scope(statement):
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)):
            root: cst.BaseExpression = node.target
            while isinstance(root, (cst.Attribute, cst.Subscript)):
                root = root.value
            if isinstance(root, cst.Name):
                names.add(root.value)
    return names


def _derived_statements(
    tree: Tree, scope_node: cst.CSTNode, site: Site, receivers: set[str]
) -> list[cst.BaseStatement]:
    """Assignments after the site that build on the parallel model (`head = Dense(2)(b.output)`,
    `full = Model(b.input, head)`), and those that build on their results: the models they make
    train through the parallel model's layers, so they go under the scope with their compile."""
    body = scope_node.body if isinstance(scope_node, cst.FunctionDef) else scope_node
    after = tree.order(site.call)
    flowing = set(receivers)
    found: list[cst.BaseStatement] = []
    for node in _simple_statements(body):
        if not (tree.order(node) > after and len(node.body) == 1):
            continue
        small = node.body[0]
        # `full = Model(...)` or `self.combined = Model(...)` (a GAN's stacked model, kept on the object)
        if not (isinstance(small, cst.Assign) and all(
            isinstance(t.target, cst.Name) or _self_attribute(t.target) for t in small.targets
        )):
            continue
        if not _derives(tree, node, small, receivers, flowing, body):
            # `model = cnn()` after the site (a second sweep, a retrain): a new model under the
            # name; what is built on it from then on is not built on this site's model
            flowing -= _assigned(tree, node)
            continue
        found.append(node)
        flowing |= _assigned(tree, node)
    return found


def _derives(
    tree: Tree, node: cst.SimpleStatementLine, small: cst.Assign, receivers: set[str], flowing: set[str],
    body: cst.CSTNode,
) -> bool:
    """The assignment builds a model on what flows from the site's model (`full = Model(b.input, head)`)."""
    value = small.value
    calls = findall(value, cst.Call)
    if not calls or any(dotted_name(c.func).rsplit(".", 1)[-1] in _GRAPH_RUNNERS for c in calls):
        return False  # `K.function([m.input], [m.output])` runs the model; it builds none
    if _runs_only(tree, calls):
        return False  # `picks = pick(model, waves)`, where `def pick(m, w): return m.predict(w) ...`
    passed = set()  # what flows into a call as an argument: `Dense(2)(b.output)`, `Model(b.input, head)`
    for call in calls:
        for arg in call.args:
            passed |= plain_uses(cst.Expr(cst.Call(func=cst.Name("f"), args=[arg])))
            passed |= {
                tree.code(a.value) for a in findall(arg.value, cst.Attribute)
                if a.attr.value in _MODEL_PARTS
            }
    callees = {tree.code(c.func) for c in calls}
    if _makes_callback(tree, value):
        return False  # `Histories(model=model)`: a callback holding the model builds no layers
    if _view_of(tree, value, receivers) and not _compiled(tree, body, _assigned(tree, node)):
        return False  # `encoder = Model(ae.input, ae.get_layer("code").output)`: new layers none, no optimizer
    return bool((passed | callees) & flowing) and makes_layers(value)


def _runs_only(tree: Tree, calls: Sequence[cst.CSTNode]) -> bool:
    """Each call runs a model or computes a plain value, or calls a function of the module whose
    every call does (`def pick(model, w): probs = model.predict(w); return [np.where(...) ...]`)."""
    functions = {s.name.value: s for s in tree.module.body if isinstance(s, cst.FunctionDef)}

    def plain(call: cst.CSTNode) -> bool:
        assert isinstance(call, cst.Call)
        name = dotted_name(call.func)
        return name.rsplit(".", 1)[-1] in _GRAPH_RUNNERS or not makes_layers(call.with_changes(args=[]))

    for call in calls:
        assert isinstance(call, cst.Call)
        function = functions.get(dotted_name(call.func))
        if function is not None:
            if findall(function.body, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) or not all(
                plain(c) for c in findall(function.body, cst.Call)
            ):
                return False
        elif not plain(call):
            return False
    return True


def _view_of(tree: Tree, value: cst.BaseExpression, receivers: set[str]) -> bool:
    """`Model(ae.input, ae.get_layer("code").output)`: a model over the migrated model's own
    tensors, which creates no variables (only `get_layer` is called, on the model itself)."""
    if not (isinstance(value, cst.Call) and dotted_name(value.func).rsplit(".", 1)[-1] == "Model"):
        return False
    for arg in value.args:
        for call in findall(arg.value, cst.Call):
            if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "get_layer"
                    and tree.code(call.func.value) in receivers):
                return False
        for name in findall(arg.value, cst.Name):
            root = tree.parent(name)
            if isinstance(root, cst.Attribute) and root.attr is name:
                continue
            if name.value not in receivers:
                return False  # a tensor made elsewhere (`head = Dense(2)(...)`): layers may be new
    return True


def _compiled(tree: Tree, body: cst.CSTNode, names: set[str]) -> bool:
    """Some statement of `body` compiles one of `names` (`encoder.compile(...)`)."""
    return any(
        isinstance(call.func, cst.Attribute) and call.func.attr.value == "compile"
        and tree.code(call.func.value) in names
        for call in findall(body, cst.Call)
    )


_KERAS_CALLBACKS: Final = frozenset({
    "EarlyStopping", "ReduceLROnPlateau", "TensorBoard", "CSVLogger", "LearningRateScheduler", "TerminateOnNaN",
    "History", "ProgbarLogger", "RemoteMonitor", "BackupAndRestore",
})


def _makes_callback(tree: Tree, value: cst.BaseExpression) -> bool:
    """`Histories(model=model)`, `ModelCheckpoint(...)`: a callback (a class of the file deriving
    from one, or a name ending in `Callback`/`Checkpoint`), not a model; or a list of them."""
    if isinstance(value, (cst.List, cst.Tuple)) and value.elements:  # `cbs = [EarlyStopping(...), Ckpt(model, p)]`
        return all(_makes_callback(tree, e.value) for e in value.elements)
    if not isinstance(value, cst.Call):
        return False
    name = dotted_name(value.func).rsplit(".", 1)[-1]
    if name.endswith(("Callback", "Checkpoint")) or name in _KERAS_CALLBACKS:
        return True
    return any(
        isinstance(c, cst.ClassDef) and c.name.value == name
        and any(code_of(b.value).rsplit(".", 1)[-1].endswith("Callback") for b in c.bases)
        for c in tree.all(cst.ClassDef)
    )


def _reported_derived_compiled_elsewhere(
    ctx: FixContext, site: Site, scope_node: cst.CSTNode, template: str,
    derived: Sequence[cst.BaseStatement], compiles: list[cst.Call],
) -> bool:
    """MGPU110: a `self.` model built on the parallel model (`self.combined = Model(z, d(g(z)))`)
    goes under the scope, but another method compiles it: its optimizer would be created outside
    the strategy, and training it fails."""
    tree = ctx.tree
    owner = _owner_class(tree, scope_node) if isinstance(scope_node, cst.FunctionDef) else None
    if owner is None:
        return False
    compiled_here = {tree.code(cst.ensure_type(c.func, cst.Attribute).value) for c in compiles}
    for statement in derived:
        for code in sorted(_assigned(tree, statement) - compiled_here):
            if not code.startswith("self."):
                continue
            elsewhere = next((
                (method, node) for method in owner.body.body if isinstance(method, cst.FunctionDef)
                and method is not scope_node for node in walk_same_scope(method.body)
                if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                and node.func.attr.value == "compile" and tree.code(node.func.value) == code
            ), None)
            if elsewhere is None:
                continue
            method, call = elsewhere
            built = tree.position(statement)[0]
            ctx.report(call, COMPILE_OBJECTS, (
                f"`{code}` (line {built}) is built on `{template}`, so the migration would build it under "
                f"`strategy.scope()` with `{template}`, but it is compiled here, in `{method.name.value}`, "
                f"outside that scope: its optimizer would be created outside the strategy and training `{code}` "
                f"would fail. Compile `{code}` in the function that builds it, right after line {built}, and rerun; "
                f"the `{site.name}` call (line {tree.position(site.call)[0]}) is left as it is."
            ))
            return True
    return False


def _assigned(tree: Tree, statement: cst.CSTNode) -> set[str]:
    """What a derived statement assigns, as written: `full`, `self.combined`."""
    small = cst.ensure_type(cst.ensure_type(statement, cst.SimpleStatementLine).body[0], cst.Assign)
    return {tree.code(t.target) for t in small.targets}


def _reported_caller_object(
    ctx: FixContext, site: Site, scope_node: cst.CSTNode, construction: list[cst.CSTNode], template: str,
    user: str | None = None,
) -> bool:
    """MGPU113: the construction uses as a layer or model a parameter of the function (its caller
    built it) or a `self.` attribute another method built: its variables exist outside the scope."""
    tree = ctx.tree
    if not isinstance(scope_node, cst.FunctionDef):
        return False
    p = scope_node.params
    params = {x.name.value for x in [*p.posonly_params, *p.params, *p.kwonly_params]} - {"self", "cls"}
    owner = _owner_class(tree, scope_node)
    bound_here: set[str] = set()
    for statement in construction:
        found: tuple[str, cst.CSTNode, str] | None = None
        for name in sorted(object_reads(statement) & params - bound_here):
            node: cst.CSTNode = next(n for n in findall(statement, cst.Name) if n.value == name)
            found = (name, node, f"a parameter of `{scope_node.name.value}`: its caller builds it")
            break
        for call in findall(statement, cst.Call):
            if found is not None:
                break
            assert isinstance(call, cst.Call)
            func = call.func
            outputs = _model_outputs(call)
            if isinstance(func, cst.Name) and func.value in params - bound_here and _layer_call(
                tree, call, construction
            ):
                found = (func.value, func, f"a parameter of `{scope_node.name.value}`: its caller builds it")
            elif isinstance(outputs, cst.Name) and outputs.value in params - bound_here:
                # `Model(inputs=x, outputs=out)` with `out` passed in: the caller's layers made it
                found = (outputs.value, outputs, f"a parameter of `{scope_node.name.value}`: its caller builds "
                         "the layers that compute it")
            elif owner is not None and _self_attribute(func) and not _binds_in(tree, scope_node, site, tree.code(func)):
                built = _built_in_other_method(tree, owner, scope_node, tree.code(func))
                if built is not None:
                    found = (tree.code(func), func, f"assigned in another method (line {tree.position(built)[0]})")
        for added in stacked_arguments(tree, statement, template):  # `model.add(self.encoder)`
            if found is not None or owner is None:
                break
            code = tree.code(added)
            if _self_attribute(added) and not _binds_in(tree, scope_node, site, code):
                built = _built_in_other_method(tree, owner, scope_node, code)
                if built is not None:
                    found = (code, added, f"assigned in another method (line {tree.position(built)[0]})")
        for part in _self_attribute_parts(statement):
            if found is not None or owner is None:
                break
            assert isinstance(part, cst.Attribute)
            holder = tree.code(part.value)
            if part.attr.value in _MODEL_PARTS and not _binds_in(tree, scope_node, site, holder):
                built = _built_in_other_method(tree, owner, scope_node, holder)
                if built is not None:
                    found = (holder, part, f"assigned in another method (line {tree.position(built)[0]})")
        if found is None and owner is not None and is_alias(statement):
            # `self._original_model = self.model` passes on what another method built
            value = cst.ensure_type(cst.ensure_type(statement, cst.SimpleStatementLine).body[0], cst.Assign).value
            code = tree.code(value)
            if _self_attribute(value) and not any(
                binds(node, code, tree) for node in walk_same_scope(scope_node.body)
                if isinstance(node, cst.SimpleStatementLine) and tree.order(node) < tree.order(statement)
            ):
                built = _built_in_other_method(tree, owner, scope_node, code, named=True)
                if built is not None:
                    found = (code, value, f"assigned in another method (line {tree.position(built)[0]})")
        bound_here |= bound_names(statement)
        if found is None:
            continue
        name, node, origin = found
        ctx.report(node, CALLER_OBJECTS, (
            f"`{name}` is {origin}, and {user or f'the construction of `{template}`'} uses it as a layer or model "
            "on this line; "
            f"its variables are created outside the `strategy.scope()` the migration would open here, so `fit` "
            f"would fail. Build `{name}` under the same scope (where it is built), or migrate the `{site.name}` call "
            f"(line {tree.position(site.call)[0]}) by hand; it is left as it is."
        ))
        return True
    return False


def _model_outputs(call: cst.Call) -> cst.BaseExpression | None:
    """The `outputs` of a `Model(inputs, outputs)` call (keyword or second positional argument)."""
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    if name != "Model":
        return None
    for k, arg in enumerate(call.args):
        if (arg.keyword is not None and arg.keyword.value == "outputs") or (arg.keyword is None and k == 1):
            return arg.value
    return None


def _layer_call(tree: Tree, call: cst.Call, construction: list[cst.CSTNode]) -> bool:
    """`p(x)` is a layer call, not a builder's: its result flows into another call as an argument
    (`Dense(2)(p(x))`, or `f = p(x)` then `Dense(2)(f)`) rather than being used as a model."""
    parent = tree.parent(call)
    if isinstance(parent, cst.Arg):
        return True
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
        name = parent.targets[0].target.value
        return any(name in plain_uses(s) for s in construction if tree.order(s) > tree.order(call))
    return False


def _self_attribute(func: cst.BaseExpression) -> bool:
    return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"


def _owner_class(tree: Tree, function: cst.FunctionDef) -> cst.ClassDef | None:
    parent = tree.parent(tree.parent(function) or function)
    return parent if isinstance(parent, cst.ClassDef) else None


def _binds_in(tree: Tree, function: cst.FunctionDef, site: Site, target: str) -> bool:
    return any(
        binds(node, target, tree) for node in walk_same_scope(function.body)
        if isinstance(node, cst.SimpleStatementLine) and tree.order(node) < tree.order(site.call)
    )


def _built_in_other_method(
    tree: Tree, owner: cst.ClassDef, here: cst.FunctionDef, target: str, *, named: bool = False
) -> cst.CSTNode | None:
    """The statement of another method of `owner` that assigns `target` (`self.enc`) a layer or model;
    `named`: also one that assigns it a local name (`m = Sequential()` ... `self.model = m`), as a
    model is handed over when read as one (`self._original_model = self.model` before the call)."""
    methods = [f for f in owner.body.body if isinstance(f, cst.FunctionDef)]
    if any(f.name.value == target.split(".", 1)[1] for f in methods):
        return None  # `self.head(x)` is a method call
    for method in methods:
        if method is here:
            continue
        for node in walk_same_scope(method.body):
            if isinstance(node, cst.SimpleStatementLine) and binds(node, target, tree) and (
                makes_layers(node) or (named and _assigns_a_name(node))
            ):
                return node
    return None


def _assigns_a_name(statement: cst.SimpleStatementLine) -> bool:
    """`self.model = m`: the value is a local name (not `None`, `True` or `False`)."""
    small = statement.body[0] if len(statement.body) == 1 else None
    return isinstance(small, cst.Assign) and isinstance(small.value, cst.Name) and small.value.value not in (
        "None", "True", "False"
    )


def _cpu_blocks_to_unwrap(tree: Tree, built_by: cst.CSTNode, region: Sequence[cst.BaseStatement]) -> list[cst.CSTNode]:
    """The `with tf.device('/cpu:0'):` blocks around the construction, inside the scope's range:
    the strategy places the variables now."""
    return [
        node
        for node in [built_by, *tree.ancestors(built_by)]
        if tree.is_cpu_device_with(node) and any(contains(tree, s, node) for s in region)
    ]


def _device_blocks_around_call(
    tree: Tree, anchor: cst.CSTNode, region: Sequence[cst.BaseStatement]
) -> list[cst.CSTNode]:
    """`with tf.device(GPU_device):` around the call itself (where the old wrapper merged the
    replicas' outputs), inside the scope's range: MirroredStrategy places each replica's work,
    and the block kept under the scope would pin the compile and `fit` in it to one device."""
    return [
        node for node in tree.ancestors(anchor)
        if _device_with(tree, node) and any(contains(tree, s, node) for s in region)
    ]


def _device_with(tree: Tree, node: cst.CSTNode) -> bool:
    """`with tf.device(<anything>):`, one item, no `as`."""
    if not isinstance(node, cst.With) or len(node.items) != 1 or node.items[0].asname is not None:
        return False
    call = node.items[0].item
    return isinstance(call, cst.Call) and bool(tree.qualified_names(call.func) & TF_DEVICE)


def _movable_definitions(
    block: Block, start: int, end: int, hoisted: list[cst.BaseStatement]
) -> list[cst.BaseStatement]:
    """The `def`s and `class`es inside the range that can move above the strategy line (they
    create no variables): their decorators, defaults and bases read nothing the range binds
    before them, and nothing else in the range rebinds their name."""
    chosen: list[cst.BaseStatement] = []
    bound_before: set[str] = set()
    region = block.body[start:end + 1]
    binders: dict[str, int] = {}  # name -> how many statements of the region bind it
    for other in region:
        for name in bound_names(other):
            binders[name] = binders.get(name, 0) + 1
    crossed = False  # past a notebook cell's start: a definition there stays in its own cell
    for statement in region:
        crossed = crossed or (statement is not region[0] and _starts_cell(statement))
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) and not crossed:
            header: list[cst.CSTNode] = [d.decorator for d in statement.decorators]
            if isinstance(statement, cst.FunctionDef):
                header += [p.default for p in statement.params.params if p.default is not None]
                header += [p.default for p in statement.params.kwonly_params if p.default is not None]
            else:
                header += [a.value for a in statement.bases]
            reads = set().union(*(used_names(h) for h in header)) if header else set()
            rebound = binders.get(statement.name.value, 0) > 1
            if not (reads & bound_before) and not rebound:
                chosen.append(statement)
                continue
        if statement not in hoisted:
            bound_before |= bound_names(statement)
    return chosen


def _starts_cell(statement: cst.BaseStatement) -> bool:
    """A notebook's cell boundary, or a statement under an export's `# In[5]:` / `# %%` marker."""
    return cell_boundary(statement) or any(
        line.comment is not None and CELL_MARKER.match(line.comment.value)
        for line in getattr(statement, "leading_lines", ())
    )


def _binding_line(tree: Tree, statements: Sequence[cst.BaseStatement], name: str) -> int:
    """The line of the innermost statement among `statements` that assigns `name`."""
    for statement in statements:
        if name not in bound_names(statement) and not any(
            isinstance(n, cst.SimpleStatementLine) and name in bound_names(n) for n in walk_same_scope(statement)
        ):
            continue
        inner = [
            n for n in walk_same_scope(statement) if isinstance(n, cst.SimpleStatementLine) and name in bound_names(n)
        ]
        return tree.position(inner[0] if inner else statement)[0]
    return tree.position(statements[0])[0]


def _outside_compile_argument(
    tree: Tree, scope_node: cst.CSTNode, compiles: list[cst.Call], region: Sequence[cst.BaseStatement]
) -> tuple[str, cst.CSTNode, str] | None:
    """A name passed to `compile` as optimizer or metrics that the scope will not cover: a
    parameter of the function (its caller creates the object) or a value assigned outside the
    statements moved under the scope that is not a plain constant. (name, node, where)."""
    params: set[str] = set()
    if isinstance(scope_node, cst.FunctionDef):
        p = scope_node.params
        params = {x.name.value for x in [*p.posonly_params, *p.params, *p.kwonly_params]}
        for star in (p.star_arg, p.star_kwarg):
            if isinstance(star, cst.Param):
                params.add(star.name.value)
    inside = {id(n) for statement in region for n in subtree(statement)}
    for call in compiles:
        for position, arg in enumerate(call.args):
            keyword = arg.keyword.value if arg.keyword is not None else None
            if not (
                keyword in _VARIABLE_ARGS or (keyword is None and position == 0) or (keyword is None and position == 2)
            ):
                continue
            for name in _passed_objects(arg.value):
                if name.value in {"None", "True", "False"}:
                    continue
                scope = tree.scopes.get(name)
                if scope is None:
                    continue
                bound = [getattr(a, "node", None) for a in scope.assignments[name.value]]
                nodes = [node for node in bound if node is not None]
                local_inside = [node for node in nodes if id(node) in inside]
                if name.value in params and not local_inside:
                    return name.value, name, "parameter"
                for node in nodes:
                    if id(node) in inside or isinstance(
                        node, (cst.Import, cst.ImportFrom, cst.FunctionDef, cst.ClassDef)
                    ):
                        continue
                    statement = tree.statement_of(node)
                    if statement is None or tree.enclosing_scope_node(statement) is not scope_node:
                        continue  # module-level objects are checked by `_created_outside`
                    if _constant_assignment(statement) or _strings_and_functions(tree, statement):
                        continue
                    return name.value, name, f"line {tree.position(statement)[0]}"
    return None


def _passed_objects(value: cst.BaseExpression) -> list[cst.Name]:
    """The names `compile` receives as objects: `opt`, the items of `[acc, auc]` or `{'out': m}`.
    A name inside a call (`SGD(lr)`) is not one: the call creates the object where it stands."""
    if isinstance(value, cst.Name):
        return [value]
    if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
        return [n for e in value.elements for n in _passed_objects(e.value)]
    if isinstance(value, cst.Dict):
        return [n for e in value.elements if isinstance(e, cst.DictElement) for n in _passed_objects(e.value)]
    return []


def _constant_assignment(statement: cst.CSTNode) -> bool:
    """`opt = 'adam'`, `metrics = ['accuracy']`: no object is created."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], (cst.Assign, cst.AnnAssign))):
        return False
    value = statement.body[0].value
    if value is None or findall(value, (cst.Call, cst.Attribute, cst.Lambda, cst.Subscript)):
        return False
    return all(n.value in {"None", "True", "False"} for n in findall(value, cst.Name))


def _strings_and_functions(tree: Tree, statement: cst.CSTNode) -> bool:
    """`metrics = ["accuracy", rmse]`: strings and names of functions (a `def`, an import, a
    `keras.metrics.mae`-style attribute): no object with variables is created."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], (cst.Assign, cst.AnnAssign))):
        return False
    value = statement.body[0].value
    if not isinstance(value, (cst.List, cst.Tuple, cst.Dict)) or findall(value, (cst.Call, cst.Lambda)):
        return False
    items = [e.value for e in value.elements] if not isinstance(value, cst.Dict) else [
        e.value for e in value.elements if isinstance(e, cst.DictElement)]
    return len(items) == len(value.elements) and all(_string_or_function(tree, item) for item in items)


def _string_or_function(tree: Tree, item: cst.BaseExpression) -> bool:
    if isinstance(item, (cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(item, cst.Attribute):
        return isinstance(item.value, (cst.Name, cst.Attribute)) and not item.attr.value[:1].isupper()
    if not isinstance(item, cst.Name):
        return False
    scope = tree.scopes.get(item)
    assignments = list(scope[item.value]) if scope is not None else []
    return bool(assignments) and all(
        isinstance(getattr(a, "node", None), (cst.FunctionDef, cst.Import, cst.ImportFrom))
        and not item.value[:1].isupper()
        for a in assignments
    )


def _assigns_with_call(statement: cst.CSTNode, template: str, tree: Tree) -> bool:
    return any(
        isinstance(n, cst.Assign) and any(tree.code(t.target) == template for t in n.targets)
        for n in walk_same_scope(statement)
    )


def _path_guards(tree: Tree, anchor: cst.CSTNode, block0: Block) -> list[str]:
    """The conditions of the `if`s that stay around the site: `KeptCondition`s, which the strategy
    line must not write a second time."""
    guards: list[str] = []
    previous: cst.CSTNode = anchor
    for ancestor in tree.ancestors(anchor):
        if ancestor is block0:
            break
        if isinstance(ancestor, cst.If):
            if ancestor.body is previous:
                guards.append(KeptCondition(tree.code(ancestor.test)))
            elif ancestor.orelse is previous:
                guards.append(KeptCondition(f"not ({tree.code(ancestor.test)})"))
        previous = ancestor
    return guards


# Calls that make an object whose attributes are their keyword arguments.
_NAMESPACES = frozenset({"SimpleNamespace", "Namespace", "EasyDict", "edict", "AttrDict", "Bunch"})


def _ordered_on_the_way(tree: Tree, site: Site) -> bool:
    """An `if`/`elif` the call is reached through orders `gpus` against a number (`if gpus <= 1:`
    ... `else:` the wrap): a list would have raised there, so it holds a count, unless a
    statement on the way binds it again."""
    if site.gpus is None or site.statement is None:
        return False
    text = code_of(site.gpus)
    root = _root_name(site.gpus)
    child: cst.CSTNode = site.statement
    for ancestor in tree.ancestors(site.statement):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Module)):
            return False
        if isinstance(ancestor, cst.IndentedBlock):
            earlier = ancestor.body[: next(i for i, s in enumerate(ancestor.body) if s is child)]
            if any(root in bound_names(s) or f"{text} =" in code_of(s) for s in earlier):
                return False
        if isinstance(ancestor, cst.If) and child is not ancestor.test:
            if compared_in_guards(text, [code_of(ancestor.test)]):
                return True
        child = ancestor
    return False


def _root_name(node: cst.BaseExpression) -> str:
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else ""


class _IntResolver:
    """Proves a `gpus` variable holds an int: every binding of the name assigns an int
    (`n_gpus = 2`, `G = args["gpus"]`, a parameter annotated `int`), or it is an argparse
    option declared `type=int` (`args.gpus`, `args["gpus"]`). Anything else may be a list."""

    def __init__(self, tree: Tree, root: cst.BaseExpression) -> None:
        self.tree = tree
        self.root = root
        self.seen: set[str] = set()
        self._int_options: set[str | bytes] | None = None

    def __call__(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.Name):
            return self._name(node)
        option: str | bytes | None = None
        if isinstance(node, cst.Attribute) and self._namespace_int(node):
            return True
        if isinstance(node, cst.Attribute):
            option = node.attr.value
        elif isinstance(node, cst.Subscript) and len(node.slice) == 1:
            index = node.slice[0].slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
                option = index.value.evaluated_value
                if isinstance(option, str) and self._literal_int(node, option):
                    return True
        return option is not None and option in self.int_options()

    def _name(self, node: cst.Name) -> bool:
        if node.value in self.seen or len(self.seen) > 8:
            return False
        self.seen.add(node.value)
        scope = self.tree.scopes.get(node) or self.tree.scopes.get(self.root)
        if scope is None:
            return False
        assignments = list(scope.assignments[node.value])
        if not assignments:
            return False
        for assignment in assignments:
            target = getattr(assignment, "node", None)
            parent = self.tree.parent(target) if target is not None else None
            if isinstance(parent, cst.Param):
                annotation = parent.annotation
                if not (
                    annotation is not None
                    and isinstance(annotation.annotation, cst.Name)
                    and annotation.annotation.value == "int"
                ):
                    return False
                continue
            if isinstance(parent, cst.AssignTarget):
                assign = self.tree.parent(parent)
                if isinstance(assign, cst.Assign) and surely_int(assign.value, self):
                    continue
            return False
        return True

    def _namespace_int(self, node: cst.Attribute) -> bool:
        """`cfg.n_gpu` where every binding of `cfg` is `SimpleNamespace(..., n_gpu=2)` (or
        argparse's `Namespace`, `EasyDict`, `AttrDict`, `Bunch`) and nothing assigns `cfg.n_gpu`."""
        values = self._bound_values(node.value)
        if values is None:
            return False
        held: list[cst.BaseExpression] = []
        for value in values:
            if not (isinstance(value, cst.Call) and dotted_name(value.func).split(".")[-1] in _NAMESPACES):
                return False
            held += [a.value for a in value.args if a.keyword is not None and a.keyword.value == node.attr.value]
        assigned = self._assigned_values(node)  # `cfg = EasyDict()` then `cfg.NUM_GPU = 2`
        if assigned is None:
            return False
        held += assigned
        return bool(held) and all(surely_int(v, self) for v in held)

    def _literal_int(self, node: cst.Subscript, key: str) -> bool:
        """`CONFIG["gpus"]` where every binding of `CONFIG` is a dict literal (or `dict(...)`)
        giving `"gpus"` an int, and nothing assigns `CONFIG["gpus"]`."""
        values = self._bound_values(node.value)
        if values is None:
            return False
        for value in values:
            given: list[cst.BaseExpression] = []
            if isinstance(value, cst.Dict):
                given = [
                    e.value for e in value.elements
                    if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
                    and e.key.evaluated_value == key
                ]
                if any(isinstance(e, cst.StarredDictElement) for e in value.elements):
                    return False
            elif isinstance(value, cst.Call) and dotted_name(value.func) == "dict":
                given = [a.value for a in value.args if a.keyword is not None and a.keyword.value == key]
            if len(given) != 1 or not surely_int(given[0], self):
                return False
        return not self._assigned(node)

    def _bound_values(self, name: cst.BaseExpression) -> list[cst.BaseExpression] | None:
        """What every binding of `name` (where it is read: also a module global read in a
        function) assigns; None when one is not a plain `name = value`."""
        if not isinstance(name, cst.Name):
            return None
        scope = self.tree.scopes.get(name) or self.tree.scopes.get(self.root)
        assignments = list(scope[name.value]) if scope is not None else []
        if not assignments:
            return None
        values = []
        for assignment in assignments:
            target = getattr(assignment, "node", None)
            parent = self.tree.parent(target) if target is not None else None
            assign = self.tree.parent(parent) if isinstance(parent, cst.AssignTarget) else None
            if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1):
                return None
            values.append(assign.value)
        return values

    def _assigned(self, node: cst.BaseExpression) -> bool:
        """Some statement assigns `node` (`cfg.n_gpu = ...`, `CONFIG["gpus"] += 1`)."""
        return self._assigned_values(node) != []

    def _assigned_values(self, node: cst.BaseExpression) -> list[cst.BaseExpression] | None:
        """What the statements assigning `node` give it (`cfg.NUM_GPU = 2`); None when one is
        not a plain one-target assignment (`+=`, `a = cfg.NUM_GPU = 2`)."""
        spelled = self.tree.code(node)
        found: list[cst.BaseExpression] = []
        for n in self.tree.all_nodes():
            if isinstance(n, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)) and self.tree.code(n.target) == spelled:
                assign = self.tree.parent(n) if isinstance(n, cst.AssignTarget) else None
                if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1):
                    return None
                found.append(assign.value)
        return found

    def int_options(self) -> set[str | bytes]:
        if self._int_options is None:
            found: set[str | bytes] = set()
            for call in self.tree.all(cst.Call):
                assert isinstance(call, cst.Call)
                if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "add_argument"):
                    continue
                keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
                kind = keywords.get("type")
                if (
                    not (isinstance(kind, cst.Name) and kind.value == "int")
                    or "nargs" in keywords
                    or "action" in keywords
                ):
                    continue
                dest = keywords.get("dest")
                names = [
                    a.value.evaluated_value
                    for a in call.args
                    if a.keyword is None and isinstance(a.value, cst.SimpleString)
                ]
                if isinstance(dest, cst.SimpleString):
                    found.add(dest.evaluated_value)
                elif names:
                    longs = [n for n in names if isinstance(n, str) and n.startswith("--")]
                    chosen = (longs or names)[0]
                    if isinstance(chosen, str):
                        found.add(chosen.lstrip("-").replace("-", "_"))
            self._int_options = found
        return self._int_options


def _sibling_branch(tree: Tree, node: cst.CSTNode, site_call: cst.CSTNode) -> bool:
    """`node` is in an `if`/`try` that also holds the site (`except: parallel = model`)."""
    site_ancestors = {id(a) for a in tree.ancestors(site_call) if isinstance(a, (cst.If, cst.Try))}
    return any(id(a) in site_ancestors for a in tree.ancestors(node))


def _dead_guard(tree: Tree, statement: cst.CSTNode) -> cst.If | None:
    """The `if` (no `else`, a condition calling nothing) whose branch holds only `statement`."""
    block = tree.parent(statement)
    owner = tree.parent(block) if block is not None else None
    if not (isinstance(owner, cst.If) and owner.body is block and owner.orelse is None):
        return None
    if not _empties_block(tree, statement) or findall(owner.test, cst.Call):
        return None
    return owner if isinstance(tree.parent(owner), (cst.IndentedBlock, cst.Module)) else None


def _empties_block(tree: Tree, statement: cst.CSTNode) -> bool:
    """The site is the only statement of its (kept) branch: removing it would need a `pass`."""
    block = tree.parent(statement)
    return isinstance(block, cst.IndentedBlock) and all(s is statement for s in block.body)


def _loaded(statement: cst.CSTNode) -> bool:
    return any(_callee_name(c.func) == "load_model" for c in findall(statement, cst.Call))


def _predicts_only(tree: Tree, scope_node: cst.CSTNode, receivers: set[str], call: cst.Call) -> bool:
    """The model is only used for inference (`parallel.predict(x)`, an inference script with no
    compile): nothing in the function (or module) compiles, trains or evaluates it under any of
    `receivers`, or hands it to other code; `predict` needs no compile, so no scope must cover one."""
    predicts = False
    for node in walk(scope_node):
        if not (isinstance(node, cst.Name) and node.value in receivers):
            continue
        parent = tree.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            if parent.attr.value not in _INFERENCE_ONLY:
                return False  # (`compile`, `fit`, `model.output` built on, `layers` changed: not inference alone)
            predicts = predicts or parent.attr.value.startswith("predict")
        elif isinstance(parent, cst.AssignTarget) and parent.target is node:
            continue  # (bound here: `model = model_from_json(...)`)
        elif not (isinstance(parent, cst.Arg) and tree.parent(parent) is call):
            # returned, stored, handed to a function or called on tensors: code the codemod does not
            # see may compile or train it (outside the scope, where `fit` fails)
            return False
    return predicts


# What an inference script does with its model besides predicting.
_INFERENCE_ONLY = frozenset({"predict", "predict_generator", "summary", "save", "save_weights", "load_weights",
                             "to_json", "count_params", "name", "input_shape", "output_shape"})


def _free_names(tree: Tree, node: cst.CSTNode) -> set[str]:
    """The names `node` reads from around it: `used_names` without a comprehension's own loop
    variables (`[x for x in gpus]` reads `gpus`, not an `x` bound before)."""
    found = set()
    for name in findall(node, cst.Name):
        for above in tree.ancestors(name):
            if isinstance(above, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
                loop: cst.CompFor | None = above.for_in
                targets: set[str] = set()
                while loop is not None:
                    targets |= {n.value for n in findall(loop.target, cst.Name)}
                    loop = loop.inner_for_in
                if name.value in targets:
                    break
            if above is node:
                found.add(name.value)
                break
        else:
            found.add(name.value)
    return found


def _hoistable(tree: Tree, block: Block, start: int, stop: int, names: set[str]) -> list[cst.BaseStatement]:
    """The statements binding `names` between `start` and `stop` (and those binding what they read
    there), when each is a one-target plain assignment (`gpus = 2`, `n = len(ids)`) reading nothing
    bound before it in that range but by another of them: moving them above the strategy line
    changes nothing. Empty when any one is not."""
    if not names:
        return []
    statements = block.body[start:stop + 1]
    in_range = set().union(*(bound_names(s) for s in statements))
    # and what they read of the range, when that is plain too (`devices = device_lib.list_local_devices()`
    # above `gpus = len([d for d in devices if ...])`)
    names = set(names)
    while True:
        extra: set[str] = set()
        for statement in statements:
            if bound_names(statement) & names and isinstance(statement, cst.SimpleStatementLine):
                for part in statement.body:
                    if isinstance(part, cst.Assign):
                        extra |= _free_names(tree, part.value) & in_range
        if extra <= names:
            break
        names |= extra
    chosen: list[cst.BaseStatement] = []
    bound_before: set[str] = set()
    for statement in statements:
        binding = bound_names(statement) & names
        if binding:
            one = isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            small = statement.body[0] if one and isinstance(statement, cst.SimpleStatementLine) else None
            if (
                not (
                    isinstance(small, cst.Assign)
                    and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)
                )
                or (makes_layers(statement) and not creates_no_variables(tree, statement))
                or _free_names(tree, small.value) & (bound_before - set().union(*(bound_names(c) for c in chosen)))
            ):
                return []
            chosen.append(statement)
        bound_before |= bound_names(statement)
    return chosen if names <= set().union(*(bound_names(c) for c in chosen)) else []


def _created_outside(
    tree: Tree, scope_node: cst.CSTNode, nodes: list[cst.CSTNode]
) -> tuple[str, cst.BaseStatement] | None:
    """A module-level name, bound by a statement that creates objects (`OPT = Adam()`,
    `shared = Dense(4)`), that a function's template construction or compile reads."""
    if not isinstance(scope_node, cst.FunctionDef):
        return None
    for node in nodes:
        plain = plain_uses(node) | object_reads(node)
        reads = [
            n for n in findall(node, cst.Name)
            if n.value in plain and not _is_attr_name(tree, n)
        ]
        for name in reads:
            scope = tree.scopes.get(name)
            if scope is None or name.value in scope.assignments:
                continue  # a local (or unresolved): not a module-level object
            for assignment in scope[name.value]:
                target = getattr(assignment, "node", None)
                if target is None or isinstance(target, (cst.Import, cst.ImportFrom, cst.FunctionDef, cst.ClassDef)):
                    continue
                statement = tree.statement_of(target)
                if (
                    statement is not None
                    and tree.enclosing_scope_node(statement) is tree.module
                    and _constructs(statement)
                    and not _loss_object(tree, statement)
                ):
                    return name.value, statement
    return None


def _loss_object(tree: Tree, statement: cst.CSTNode) -> bool:
    """`LOSS = Huber(0.5)` with `Huber` from a `losses` module, or `keras.losses.Huber(...)`: a loss
    object owns no variables, so creating it outside the scope is harmless (a metric of the same
    name, `keras.metrics.MeanSquaredError`, does own variables: only the module decides)."""
    assert isinstance(statement, cst.SimpleStatementLine)
    small = statement.body[0]
    value = small.value if isinstance(small, (cst.Assign, cst.AnnAssign)) else None
    if not isinstance(value, cst.Call):
        return False
    dotted = dotted_name(value.func)
    if "." in dotted:
        return dotted.rsplit(".", 1)[0].rsplit(".", 1)[-1] == "losses"
    for node in tree.module.body:
        for line in node.body if isinstance(node, cst.SimpleStatementLine) else []:
            if (isinstance(line, cst.ImportFrom) and line.module is not None
                    and dotted_name(line.module).rsplit(".", 1)[-1] == "losses"
                    and not isinstance(line.names, cst.ImportStar)
                    and any((a.evaluated_alias or dotted_name(a.name)) == dotted for a in line.names)):
                return True
    return False


def _constructs(statement: cst.CSTNode) -> bool:
    """`x = Adam(...)`, `x = keras.layers.Dense(...)`: the value is an instance of a class (a
    capitalised callee), the objects that own variables; `cfg = load_config()` is not."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], (cst.Assign, cst.AnnAssign))):
        return False
    value = statement.body[0].value
    if not isinstance(value, cst.Call) or not makes_layers(statement):
        return False
    dotted = dotted_name(value.func)
    name = dotted.rsplit(".", 1)[-1]
    return name[:1].isupper() or name in _OPTIMIZER_ALIASES or ".optimizers." in f".{dotted}"


def _is_attr_name(tree: Tree, name: cst.Name) -> bool:
    parent = tree.parent(name)
    return isinstance(parent, cst.Attribute) and parent.attr is name


def _compiles(tree: Tree, scope_node: cst.CSTNode, receivers: set[str], after: cst.CSTNode,
              site_call: cst.Call | None = None) -> list[cst.Call]:
    """Compiles of `receivers` after `after`, up to where the receiver's name is bound again
    after the site (`model = Sequential(...)  # another model`: its compile is not ours)."""
    start = tree.order(after)  # source order, as lines would: `after` starts its own line
    body = scope_node if not isinstance(scope_node, cst.FunctionDef) else scope_node.body
    limits: dict[str, int] = {}
    if site_call is not None:
        site_order = tree.order(site_call)
        for node in walk_same_scope(body):
            if isinstance(node, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign)):
                target_node = node.target
                code = tree.code(target_node)
                order = tree.order(target_node)
                if (
                    code in receivers
                    and order > site_order
                    and not contains(tree, site_call, target_node)
                    and not _sibling_branch(tree, target_node, site_call)
                ):
                    statement = tree.statement_of(target_node)
                    stop = tree.order(statement) if statement is not None else order
                    limits[code] = min(limits.get(code, stop), stop)
    found = []
    for node in walk_same_scope(body):
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "compile"
            and tree.code(node.func.value) in receivers
            and tree.order(node) >= start
            and tree.order(node) < limits.get(tree.code(node.func.value), 1 << 62)
        ):
            found.append(node)
    return found


def _common_range(tree: Tree, members: list[cst.CSTNode]) -> tuple[Block, int, int]:
    """The innermost block holding all `members`, and the index range they span there."""
    chains = []
    for member in members:
        statement = (
            member if isinstance(tree.parent(member), (cst.Module, cst.IndentedBlock)) else tree.statement_of(member)
        )
        assert isinstance(statement, cst.BaseStatement)
        chains.append(tree.block_chain(statement))
    common = [block for block, _ in chains[0] if all(any(b is block for b, _ in c) for c in chains[1:])]
    block = common[0]
    indexes = [next(i for b, i in chain if b is block) for chain in chains]
    return block, min(indexes), max(indexes)


def _kept_fallback(tree: Tree, statement: cst.CSTNode, anchor: cst.CSTNode) -> cst.CSTNode | None:
    for ancestor in tree.ancestors(statement):
        if isinstance(ancestor, (cst.Try, cst.If)):
            branch_other = ancestor.handlers if isinstance(ancestor, cst.Try) else ancestor.orelse
            if branch_other:
                # Once the call reads `parallel = model` the plan writes what every branch shares
                # once, and the branch for a plain model is left empty: no choice left to report.
                if isinstance(statement, cst.SimpleStatementLine) and dissolves(ancestor, statement):
                    return None
                return ancestor
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Module)):
            return None
    return None


def _resolve_overlaps(ctx: FixContext, planned: list[_Planned]) -> list[_Planned]:
    """Sites sharing a construction share one strategy; nested or conflicting ones are reported
    and left untouched, all of them (rewriting one half of an `if/elif` would change behaviour)."""
    kept: list[_Planned] = []
    dropped: set[int] = set()
    for item in planned:
        clash: _Planned | str | None = None
        for other in kept:
            if other.block is item.block and (
                not (item.start > other.end or item.end < other.start)
                or (other.expression == item.expression and _only_runs_between(other, item))
            ):
                if other.expression != item.expression and not _complementary(ctx, other, item):
                    clash = other
                    break
                other.start, other.end = min(other.start, item.start), max(other.end, item.end)
                other.notes += [n for n in item.notes if n not in other.notes]
                other.unwrap += item.unwrap
                other.site_followers.append(item)
                clash = "merged"
                break
            if _nested(ctx.tree, other, item) or _nested(ctx.tree, item, other):
                clash = other
                break
        if clash == "merged":
            continue
        if clash is not None:
            assert isinstance(clash, _Planned)
            for this, that in ((item, clash), *((p, item) for p in [clash, *clash.site_followers])):
                if id(this) in dropped and this is not item:
                    continue
                dropped.add(id(this))
                mine, theirs = _gpus_text(ctx.tree, this.site), _gpus_text(ctx.tree, that.site)
                differ = (
                    f"`{mine}` here, `{theirs}` there"
                    if mine != theirs
                    else f"`{mine}` in both, under different conditions"
                )
                templates = {ctx.tree.code(t.site.template) for t in (this, that) if t.site.template is not None}
                models = (f"the model (`{next(iter(templates))}`)" if len(templates) == 1
                          else "both models") + (" and build it" if len(templates) == 1 else " and build them")
                # (two models on different devices: one strategy each; round 52, am16 was told to
                # share one; one model on either: one strategy, chosen as its sites chose the GPUs)
                todo = (
                    f"create one `tf.distribute.MirroredStrategy` for {models} under its scope by hand."
                    if mine == theirs or len(templates) == 1 else
                    "create a `tf.distribute.MirroredStrategy` for each, on its own devices, and build and "
                    "compile each model under its own strategy's scope by hand."
                )
                ctx.report(this.site.call, ONE_STRATEGY, (
                    f"this `{this.site.name}` site and the one at line {ctx.tree.position(that.site.call)[0]} "
                    f"share the code the scope would cover but need different strategies ({differ}); {todo}"
                ))
            continue
        kept.append(item)
    return [item for item in kept if id(item) not in dropped]


def _only_runs_between(one: _Planned, other: _Planned) -> bool:
    """Every statement between two ranges of one block trains, prints or handles plain data (the
    first model's `fit` before the second is built): one strategy line serves both, each range
    keeping its own `with` (plan.py opens one per stretch that builds)."""
    first, second = (one, other) if one.start < other.start else (other, one)
    if second.hoisted or second.definitions or second.said is not None:
        return False  # (what its own strategy line would carry: kept apart)
    between = first.block.body[first.end + 1:second.start]
    # the expression's names keep their values up to the second range (`gpus = 4` between would
    # make the same text another strategy)
    branch = getattr(first.expression, "branch", None)
    read = set(re.findall(r"[A-Za-z_]\w*", f"{first.expression} {branch.condition if branch else ''}"))
    return all(
        trains_or_builds_nothing(s) and not _starts_cell(s) and not bound_names(s) & read for s in between
    )


def _complementary(ctx: FixContext, one: _Planned, other: _Planned) -> bool:
    """Two sites with the same GPU count in the two branches of one `if`/`else`: one of them runs
    on every path, so one strategy without that condition serves both (`one` is updated to it)."""
    tree = ctx.tree
    if _gpus_text(tree, one.site) != _gpus_text(tree, other.site) or len(one.guards) != len(other.guards):
        return False
    differing = [(a, b) for a, b in zip(one.guards, other.guards) if a != b]
    if len(differing) != 1:
        return False
    a, b = differing[0]
    if not (a == f"not ({b})" or b == f"not ({a})"):
        return False
    guards = [g for g in one.guards if g != a]
    one.guards = guards
    one.fallback_kept = other.fallback_kept = None  # both branches now hold the same model
    one.expression = strategy_expression(ctx.tf_name(), one.site.gpus, guards, known_int=one.known_int)
    return True


def _nested(tree: Tree, outer: _Planned, inner: _Planned) -> bool:
    if outer.block is inner.block:
        return False
    statements = outer.block.body[outer.start:outer.end + 1]
    return any(contains(tree, s, inner.block) for s in statements)


def _commit(ctx: FixContext, item: _Planned) -> None:
    name = ctx.strategy_name(item.scope_node)
    hoisted = [h.with_changes(leading_lines=_attached_comments(h)) for h in item.hoisted]
    for statement in item.hoisted:
        # the comment lines right above it go along; blank lines and comments further up stay
        ctx.plan.statements[id(statement)] = None
        ctx.plan.dropped_lines |= {id(line) for line in _attached_comments(statement)}
    if item.definitions:
        # Definitions create no variables: they move above the strategy line, whole (their
        # comments and blank lines with them), in their order, before the hoisted settings.
        for statement in item.definitions:
            ctx.plan.moved.add(id(statement))
        hoisted = [*item.definitions, *hoisted]
    decided = refine(item.expression, ctx.tree)
    ctx.plan.regions.append(
        Region(item.block, item.start, item.end, name, item.expression, item.notes, hoisted, said=item.said,
               listing=_listing_name(ctx, decided, name))
    )
    if isinstance(decided, StrategyCode) and decided.guessed:
        ctx.report(item.site.call, "MGPU117", decided.guessed)
    for node in item.unwrap:
        ctx.plan.unwrap.add(id(node))
    for planned in [item, *item.site_followers]:
        ctx.current_site = planned.site
        _replace_site(ctx, planned)
        ctx.current_site = None


# The name for `tf.config.list_logical_devices("GPU")` above a strategy on GPU ids, the first the
# module does not use.
_LISTING_NAMES = ("gpus", "logical_gpus", "visible_gpus")


def _listing_name(ctx: FixContext, code: str, strategy: str) -> str | None:
    """A free name to bind the machine's GPUs to, above a strategy on GPU ids (`gpus = ...` /
    `MirroredStrategy([gpus[2], gpus[3]])`, also in a choice's branch), else None: a count, every GPU."""
    if not isinstance(code, StrategyCode) or code.ids is None:
        return None
    taken = ctx.names_in_use() | {strategy}
    return next((n for n in _LISTING_NAMES if n not in taken), None)


def _attached_comments(statement: cst.BaseStatement) -> list[cst.EmptyLine]:
    """The comment lines right above `statement` (no blank line between them and it)."""
    lines = list(getattr(statement, "leading_lines", []))
    start = len(lines)
    while start > 0 and lines[start - 1].comment is not None:
        start -= 1
    return lines[start:]


def _replace_site(ctx: FixContext, item: _Planned) -> None:
    tree, site = ctx.tree, item.site
    assert site.template is not None
    ctx.rewritten.append(site)
    ctx.plan.calls.add(id(item.anchor))
    if site.target is None:  # `return multi_gpu_model(model)` -> `return model`
        ctx.plan.nodes[id(site.call)] = site.template.deep_clone()
        return
    template, target = tree.code(site.template), tree.code(site.target)
    kept = item.fallback_kept
    announced = None
    if isinstance(kept, cst.Try):
        # a `try` that only said which path ran: the replica count says it now (announcement.py)
        announced = announcement(tree, kept, item.anchor, ctx.strategy_name(item.scope_node), target, template,
                                 sliced_count(refine(item.expression, tree)))
    if announced is not None and announced.alias is not None and isinstance(site.target, cst.Name):
        # `except ValueError: parallel = model` too: both bind the template, so every read of
        # `parallel` reads the template, when nothing else binds it
        reads = ctx.safe_rename(site, kept)
        rest = [s for s in announced.statements if s is not announced.alias]
        if reads is not None and kept is not None and (rest or not findall(kept, cst.Comment)):
            if rest:
                chosen = cst.ensure_type(rest[0], cst.If)
                ctx.plan.statements[id(kept)] = chosen.with_changes(leading_lines=announced.alias.leading_lines)
            else:  # nothing but `parallel = model` was left: the `try` goes
                ctx.plan.statements[id(kept)] = None
            ctx.plan.statements[id(item.anchor)] = None
            for access in reads:
                ctx.plan.nodes[id(access)] = site.template.deep_clone()
            ctx.references[id(site)] = ctx.references_of(site)
            return
    if announced is not None and announced.alias is not None:
        # `except ValueError: parallel = model` too: `parallel = model` above the `if`
        ctx.plan.statements[id(kept)] = cst.FlattenSentinel(announced.statements)
        ctx.plan.statements[id(item.anchor)] = None
        ctx.references[id(site)] = ctx.references_of(site)
        return
    accesses: list[cst.Name] | None = []
    aliases: list[cst.SimpleStatementLine] = []
    if target != template:
        accesses = ctx.safe_rename(site, item.anchor) if isinstance(site.target, cst.Name) else None
        guard = kept if kept is not None else _dissolved_guard(tree, item.anchor)
        if accesses is None and isinstance(guard, cst.If) and isinstance(site.target, cst.Name):
            # `if G <= 1: ...; parallel = model` / `else: ...; parallel = multi_gpu_model(model, G)`:
            # the other branch's alias binds the template too, so every read can be renamed
            aliases = _branch_aliases(tree, guard, site, target, template)
            accesses = ctx.safe_rename(site, item.anchor, aliases) if aliases else None
        if accesses is None and kept is None and isinstance(site.target, cst.Name):
            # `parallel = model` / `if gpus > 1: parallel = multi_gpu_model(model, gpus)`: the
            # default binds the template too, so every read can be renamed and the default goes
            aliases = _default_alias(tree, site, target, template)
            accesses = ctx.safe_rename(site, item.anchor, aliases) if aliases else None
        # (nothing reads the name, or every read is renamed and the default goes with the call)
        dead = _dead_guard(tree, item.anchor) if accesses == [] or (accesses and aliases and kept is None) else None
        if dead is not None:
            # `if n_gpus > 1: parallel = multi_gpu_model(...)` and nothing reads `parallel`: the
            # `if` only built a model no code used; it goes (its comments stay)
            ctx.plan.statements[id(dead)] = None
        elif accesses is not None and _empties_block(tree, item.anchor):
            accesses = None  # the alias keeps the kept branch non-empty (never a `pass`)
    ctx.references[id(site)] = ctx.references_of(site)
    if announced is not None and accesses is not None:
        ctx.plan.statements[id(kept)] = cst.FlattenSentinel(announced.statements)
    elif kept is not None:
        message = _kept_fallback_message(tree, kept, site, template)
        if message is not None:
            ctx.report(kept, "MGPU106", message)
    if announced is None:
        for stale in announcing_messages(tree, item.anchor):  # `print("converting model to parallel")`
            ctx.plan.statements[id(stale)] = reworded(stale)  # (or `"Training on %d GPUs"`, its count kept)
    if accesses is not None:
        ctx.plan.statements[id(item.anchor)] = None
        for other in aliases:
            ctx.plan.statements[id(other)] = None
        for access in accesses:
            ctx.plan.nodes[id(access)] = site.template.deep_clone()
    else:
        alias = cst.parse_statement(f"{target} = {template}\n")
        ctx.plan.statements[id(item.anchor)] = alias


def _dissolved_guard(tree: Tree, anchor: cst.CSTNode) -> cst.If | None:
    """The `if` (with an `else`) whose body holds the call, kept for what else it does (`print(...)`),
    whose `else: parallel = model` the plan would write once after it (_kept_fallback: dissolves)."""
    parent = tree.parent(anchor)
    owner = tree.parent(parent) if parent is not None else None
    if isinstance(owner, cst.If) and owner.body is parent and isinstance(owner.orelse, cst.Else):
        return owner
    return None


def _default_alias(tree: Tree, site: Site, target: str, template: str) -> list[cst.SimpleStatementLine]:
    """`parallel = model` right above the `if` (without `else`) whose body holds the call: the
    value the name keeps when the condition is false."""
    guard = next((a for a in tree.ancestors(site.call) if isinstance(a, cst.If)), None)
    if guard is None or guard.orelse is not None or not any(a is guard.body for a in tree.ancestors(site.call)):
        return []
    parent = tree.parent(guard)
    if not isinstance(parent, (cst.Module, cst.IndentedBlock)):
        return []
    block, index = tree.block_of(guard)
    before = block.body[index - 1] if index else None
    if not (isinstance(before, cst.SimpleStatementLine) and len(before.body) == 1):
        return []
    assign = before.body[0]
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1
            and tree.code(assign.targets[0].target) == target and tree.code(assign.value) == template):
        return []
    return [before]


def _branch_aliases(
    tree: Tree, kept: cst.If, site: Site, target: str, template: str
) -> list[cst.SimpleStatementLine]:
    """The `parallel = model` lines of the kept `if`'s other branches, when each leaves its branch
    something else to run (or is all of the final `else`, which then goes) and nothing in that
    branch binds the template after it; else []."""
    found: list[cst.SimpleStatementLine] = []
    final = kept.orelse.body if isinstance(kept.orelse, cst.Else) else None
    for suite in branch_suites(kept):
        if not isinstance(suite, cst.IndentedBlock) or any(a is suite for a in tree.ancestors(site.call)):
            continue
        for k, statement in enumerate(suite.body):
            if not binds(statement, target, tree):
                continue
            alone = len(suite.body) == 1 and suite is final and not findall(suite, cst.Comment)
            if not (fallbacks.is_fallback_alias(statement, target, template, tree) and (len(suite.body) > 1 or alone)):
                return []
            if any(binds(later, template, tree) for later in suite.body[k + 1:]):
                return []
            found.append(cst.ensure_type(statement, cst.SimpleStatementLine))
    return found


def _kept_fallback_message(tree: Tree, kept: cst.CSTNode, site: Site, template: str) -> str | None:
    """MGPU106: what the kept `if`/`try` holds besides the model choice, and which branch to keep;
    None when the call's branch builds the model too (both branches are kept as they are)."""
    kind = "if" if isinstance(kept, cst.If) else "try"
    branch = next(a for a in tree.ancestors(site.call) if isinstance(a, cst.IndentedBlock))
    # The call's own local import goes with the rewrite: it is no work of the branch.
    besides = [s for s in branch.body if s is not site.statement and not fallbacks.droppable(s)]
    others = [s for s in besides if not fallbacks.message(s)]
    # the same in the other branch once the parallel model's name reads the template's: no difference
    target = tree.code(site.target) if site.target is not None else template
    everywhere = {
        code_tokens(tree.code(s), {target: template})
        for s in _branch_statements(kept) if not any(a is branch for a in tree.ancestors(s))
    }
    others = [s for s in others if code_tokens(tree.code(s), {target: template}) not in everywhere]
    # `model.set_weights(parallel.get_weights())`: a copy onto itself now, which fixers/weight_copies.py removes
    copied = {id(c) for k, s in enumerate(branch.body)
              for c in self_copies.copies(s, branch.body[k + 1] if k + 1 < len(branch.body) else None,
                                          _one_model(tree, target, template))}
    others = [s for s in others if id(s) not in copied]
    head = f"kept this `{kind}` around `{site.name}`: it is not a plain fallback"
    if any(binds(s, template, tree) for s in besides):
        return None  # its branch builds the model too: both branches stay as they are, nothing to change
    if isinstance(kept, cst.Try):
        plain = (
            f"the `except` branch (line {tree.position(kept.handlers[0])[0]})" if kept.handlers else "the code after it"
        )
    elif isinstance(kept, cst.If) and tree.parent(branch) is kept:
        plain = (
            f"the `else`/`elif` branch (line {tree.position(kept.orelse)[0]})"
            if kept.orelse is not None
            else "the code after it"
        )
    else:
        plain = f"the `if` branch (line {tree.position(kept)[0]})"
    if not others and isinstance(kept, cst.If):
        return None  # besides the call, only prints and what the other branch does too: nothing to decide
    if isinstance(kept, cst.If) and all(_scales_by_count(s, site) for s in others):
        return None  # `lr = base_lr * n_gpus`: still wanted with the strategy, the `if` stays as it is
    shown = others or besides
    if isinstance(kept, cst.Try):
        handler = kept.handlers[0] if kept.handlers else None
        caught = tree.code(handler.type) if handler is not None and handler.type is not None else "every error"
        return (
            f"{head}: its `except` branch (line {tree.position(handler or kept)[0]}) handled `{caught}` from "
            f"`{site.name}`, which raised it without enough GPUs; the migrated code raises nothing there "
            f"(MirroredStrategy runs on the devices it finds), so that branch now runs only if the rest of the "
            f"`try` body raises. Keep the `try` body and remove the `except` branch, unless that rest can raise it."
        )
    if not shown:
        return None  # the `if` only picked the model, and still decides what its other branch runs
    return (
        f"{head}: its branch with the call also runs {_quoted(tree, shown[0])}, left as it was. After "
        f"migration `{template}` is the model in every branch: if that code was written for the old wrapper "
        f"(a checkpoint of the parallel model), keep the code of {plain} and remove the `{kind}`; if it is still "
        f"wanted with the strategy (scaling the batch size or learning rate by the GPU count is), leave the "
        f"`{kind}` as it is."
    )


def _one_model(tree: Tree, target: str, template: str) -> Callable[[cst.BaseExpression, cst.BaseExpression], bool]:
    """Whether two ends of a weight copy both become the template: its name, the parallel model's
    name or the template looked up in it (`parallel.layers[-2]`), written differently."""
    def final(node: cst.BaseExpression) -> str:
        if isinstance(node, cst.Subscript) and m.matches(node.value, m.Attribute(attr=m.Name("layers"))):
            node = cst.ensure_type(node.value, cst.Attribute).value
        elif isinstance(node, cst.Call) and m.matches(node.func, m.Attribute(attr=m.Name("get_layer"))):
            node = cst.ensure_type(node.func, cst.Attribute).value
        code = tree.code(node)
        return template if code == target else code
    return lambda one, other: final(one) == final(other) == template and tree.code(one) != tree.code(other)


def _scales_by_count(statement: cst.CSTNode, site: Site) -> bool:
    """`lr = base_lr * n_gpus`, `batch_size *= G`: a value computed from the GPU count, which the
    strategy's replicas still share out (MIGRATION.md, "Batch size and learning rate")."""
    if site.gpus is None or not isinstance(statement, cst.SimpleStatementLine):
        return False
    count = used_names(site.gpus)
    return bool(count) and all(
        isinstance(small, (cst.Assign, cst.AugAssign)) and bool(used_names(small.value) & count)
        for small in statement.body
    )


def _quoted(tree: Tree, statement: cst.CSTNode) -> str:
    """`code` (line N) for a one-line statement; a block by its header (`with tf.device('/cpu:0'):`
    block, line N); a longer one is named by its line only."""
    text = tree.code(statement).strip()
    line = tree.position(statement)[0]
    header = text.split("\n", 1)[0].rstrip()
    if isinstance(statement, cst.BaseCompoundStatement) and header.endswith(":") and len(header) <= 80:
        return f"the `{header}` block (line {line})"
    if "\n" in text or len(text) > 80:
        return f"the statement on line {line}"
    return f"`{text}` (line {line})"


def _short_code(tree: Tree, statement: cst.CSTNode) -> str:
    """` (`code`)` for a one-line statement, nothing for a longer one (never a call cut in half)."""
    text = tree.code(statement).strip()
    return "" if "\n" in text or len(text) > 80 else f" (`{text}`)"


def _origin_of(tree: Tree, site: Site, template: str) -> str:
    """Where the template comes from, as far as the codemod can see (MGPU101)."""
    scope = tree.enclosing_scope_node(site.call)
    if isinstance(scope, cst.FunctionDef):
        params = scope.params
        names = {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]}
        root = template.split(".")[0]
        if root in names and root != "self":
            return f"`{template}` is a parameter of `{scope.name.value}`: the model is built by its caller"
        return f"`{template}` is not assigned earlier in `{scope.name.value}`"
    return f"`{template}` is not assigned earlier in this module"


def _parameters_passed(tree: Tree, site: Site) -> str:
    """` (with `gpus` the value the caller passes to `parallelize` for it)` when the count is a
    parameter of the function holding the call: at the caller, that name means nothing (MGPU101)."""
    scope = tree.enclosing_scope_node(site.call)
    if site.gpus is None or not isinstance(scope, cst.FunctionDef):
        return ""
    params = scope.params
    names = {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]} - {"self"}
    used = sorted({n.value for n in findall(site.gpus, cst.Name)} & names)
    if not used:
        return ""
    spelled = " and ".join(f"`{name}`" for name in used)
    return f" (with {spelled} the value the caller passes to `{scope.name.value}` for it)"


def _built_in_method(tree: Tree, site: Site, template: str) -> str:
    """` (it is assigned in `__init__`, line 12)` for a `self.` template another method of the class
    assigns; nothing otherwise."""
    scope = tree.enclosing_scope_node(site.call)
    owner = _owner_class(tree, scope) if template.startswith("self.") and isinstance(scope, cst.FunctionDef) else None
    if owner is None:
        return ""
    for method in owner.body.body:
        if not isinstance(method, cst.FunctionDef) or method is scope:
            continue
        for node in walk_same_scope(method.body):
            if isinstance(node, cst.AssignTarget) and tree.code(node.target) == template:
                value = tree.parent(node)
                if isinstance(value, cst.Assign) and m.matches(value.value, m.Name("None")):
                    continue  # `self.model = None` in `__init__`: a placeholder, not the model
                return f" (it is assigned in `{method.name.value}`, line {tree.position(node)[0]})"
    return ""


def _gpus_text(tree: Tree, site: Site) -> str:
    return "all GPUs (no `gpus`)" if site.gpus is None else f"gpus={tree.code(site.gpus)}"


def _branch_statements(kept: cst.CSTNode) -> list[cst.BaseStatement]:
    """The statements directly in every branch of an `if` chain or `try`."""
    return [s for suite in branch_suites(kept) if isinstance(suite, cst.IndentedBlock) for s in suite.body]


def _is_self(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Name) and node.value == "self"


def _self_attribute_parts(statement: cst.CSTNode) -> list[cst.Attribute]:
    """`self.x.<part>` attributes under `statement`."""
    return [
        a for a in findall(statement, cst.Attribute) if isinstance(a.value, cst.Attribute) and _is_self(a.value.value)
    ]


def _callee_name(func: cst.BaseExpression) -> str:
    """`f` for `f(...)` and `x.f(...)`."""
    if isinstance(func, cst.Name):
        return func.value
    return func.attr.value if isinstance(func, cst.Attribute) else ""


def _reported_two_compiles(ctx: FixContext, site: Site, template: str, target: str, compiles: list[cst.Call]) -> bool:
    """The template and the parallel model compiled with different arguments: two models with their
    own optimizer, loss and metrics before; one model after the rename, where the later compile wins."""
    tree = ctx.tree
    own = [c for c in compiles if tree.code(cst.ensure_type(c.func, cst.Attribute).value) == template]
    parallel = [c for c in compiles if tree.code(cst.ensure_type(c.func, cst.Attribute).value) == target]
    if not own or not parallel or len({_arguments_code(tree, c) for c in [*own, *parallel]}) == 1:
        return False
    if _template_done_before(tree, site, template, own, parallel):
        return False
    first, other = own[0], parallel[0]
    ctx.report(site.call, ONE_COMPILE, (
        f"`{template}` is compiled on line {tree.position(first)[0]} and `{target}` on line "
        f"{tree.position(other)[0]} with other arguments; after migration they are one model, so the later "
        f"compile would replace the other's optimizer, loss and metrics. Compile the model once (with "
        f"`{target}`'s arguments, if the template was compiled only to be saved) and rerun, or migrate by "
        "hand; the call is left as it is."
    ))
    return True


def _arguments_code(tree: Tree, call: cst.Call) -> str:
    """A call's arguments as text, spacing and line breaks aside."""
    return "".join(tree.code(cst.Call(func=cst.Name("f"), args=call.args)).split())


def _short(code: str, limit: int = 60) -> str:
    """The first line of `code`, cut to `limit` characters."""
    line = code.strip().splitlines()[0] if code.strip() else ""
    return line if len(line) <= limit else line[:limit - 3] + "..."


def _report_no_compile(ctx: FixContext, site: Site, scope_node: cst.CSTNode, template: str,
                       target: str | None) -> None:
    """MGPU202, saying what was seen instead of a compile: the model called directly (a custom training
    loop), or handed to a function (which may compile it: the codemod does not follow calls)."""
    tree = ctx.tree
    names = list(dict.fromkeys(n for n in (target, template) if n is not None))
    models = " or ".join(f"`{n}.compile(...)`" for n in names)
    result = "the call's result" if target is None else f"`{target}`"
    fix = (f"Compile {result} in this function after the call and rerun, or migrate by hand: build and compile "
           f"`{template}` under one `strategy.scope()` where it is compiled")
    seen = ""
    after = tree.order(site.call)
    body = scope_node.body if isinstance(scope_node, cst.FunctionDef) else scope_node
    for call in findall(body, cst.Call):
        if tree.order(call) <= after or contains(tree, site.call, call):
            continue
        line = tree.position(call)[0]
        if tree.code(call.func) in names:
            seen = (f" `{tree.code(call.func)}` is called directly on line {line}, as a custom training loop "
                    "does.")
            fix = (f"Migrate the loop by hand: build `{template}` and its optimizer under `strategy.scope()` and "
                   "run each step with `strategy.run` on a distributed dataset (TensorFlow's custom training guide)")
            break
        method_of_model = isinstance(call.func, cst.Attribute) and tree.code(call.func.value) in names
        if any(tree.code(a.value) in names for a in call.args) and not method_of_model:
            seen = (f" `{tree.code(call.func)}(...)` on line {line} receives the model and may compile it; the "
                    "codemod does not follow calls into other functions.")
            break
    where = "function" if isinstance(scope_node, cst.FunctionDef) else "file"
    ctx.report(site.call, COMPILE_FOLLOWS, (
        f"no {models} follows in this {where}, so the `strategy.scope()` the migration would open here cannot "
        f"cover a compile, and a compile outside the scope makes `fit` fail (Keras 3 creates the optimizer in "
        f"`compile`).{seen} {fix}; the call is left as it is."
    ))


# What runs on a model's compile state (its optimizer, loss and metrics).
_USES_COMPILE = frozenset({"fit", "evaluate", "fit_generator", "evaluate_generator", "train_on_batch",
                           "test_on_batch"})


def _template_done_before(tree: Tree, site: Site, template: str, own: list[cst.Call], parallel: list[cst.Call]) -> bool:
    """The template's own compile served only before the call (`model.compile('sgd')`, `model.fit(...)`
    to pre-train, then the wrap and `parallel.compile('adam')`): nothing after the parallel model's
    compile trains or evaluates the template with its own settings, so one model does the same."""
    site_order = tree.order(site.call)
    if any(tree.order(c) > site_order for c in own):
        return False
    first_parallel = min(tree.order(c) for c in parallel)
    scope = tree.enclosing_scope_node(site.call)
    body = scope.body if isinstance(scope, cst.FunctionDef) else scope
    return not any(
        isinstance(call.func, cst.Attribute) and call.func.attr.value in _USES_COMPILE
        and tree.code(call.func.value) == template and tree.order(call) > first_parallel
        for call in findall(body, cst.Call)
    )
