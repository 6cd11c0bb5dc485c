"""Rewrites `model_to_estimator(..., RunConfig(train_distribute=strategy))` + `train` into `model.fit`.

`tf.estimator` is gone from current TensorFlow. Where the whole pattern sits in one block and is
simple (input_fn a local function returning a tf.data.Dataset, steps known), the Keras model is
built and compiled under the strategy's scope and trained with `fit`. Estimator fed each replica
its own batch from `input_fn`; `fit` splits each batch across replicas, so the input function's
`.batch(B)` becomes `.batch(B * strategy.num_replicas_in_sync)` (same examples per step). Anything
else is reported with the manual steps (MGPU602).
"""

from __future__ import annotations

from typing import Final

from dataclasses import dataclass, field

import libcst as cst

from .._tree import Block, Tree, binds, bound_names, used_names, walk_same_scope
from ..construction import construction_start, dependency_statements
from ..fix_context import FixContext
from ..plan import Region
from . import contrib_strategy

__all__ = ["CODES", "fix"]

# The finding codes this stage reports (MIGRATION.md, "Finding codes").
CODES: Final = frozenset({"MGPU602"})

_MANUAL = (
    "migrate by hand: create the strategy (`strategy = tf.distribute.MirroredStrategy()`), build and "
    "compile the Keras model under `with strategy.scope():`, then `model.fit(input_fn(), "
    "steps_per_epoch=STEPS, epochs=1)` instead of `estimator.train(input_fn, steps=STEPS)` and "
    "`model.evaluate(input_fn())` instead of `estimator.evaluate`; multiply the input function's batch "
    "size by `strategy.num_replicas_in_sync` (Estimator gave each replica a whole batch, fit splits it). "
    "See MIGRATION.md, \"Estimator: model_to_estimator with train_distribute\"."
)


class _NotSimple(Exception):
    """The pattern is not one the codemod rewrites; the message says why."""


@dataclass
class _Pattern:
    block: Block
    scope: cst.CSTNode
    removed: list[cst.BaseStatement] = field(default_factory=list)
    nodes: dict[int, cst.CSTNode] = field(default_factory=dict)
    start: int = 0
    end: int = 0
    name: str = ""
    expression: str = ""


def _is_call_to(tree: Tree, node: cst.CSTNode | None, suffix: str) -> bool:
    return isinstance(node, cst.Call) and any(
        q.endswith(suffix) and q.startswith(("tensorflow.", "keras.", "tf_keras."))
        for q in tree.qualified_names(node.func)
    )


def fix(ctx: FixContext) -> None:
    for call in ctx.tree.all(cst.Call):
        assert isinstance(call, cst.Call)
        if not _is_call_to(ctx.tree, call, ".model_to_estimator"):
            continue
        try:
            pattern = _recognise(ctx, call)
        except _NotSimple as why:
            ctx.report(call, "MGPU602", f"`model_to_estimator` not rewritten: {why}; {_MANUAL}")
            continue
        ctx.plan.regions.append(Region(pattern.block, pattern.start, pattern.end, pattern.name, pattern.expression))
        for statement in pattern.removed:
            ctx.plan.statements[id(statement)] = None
        ctx.plan.nodes.update(pattern.nodes)


def _line_of(tree: Tree, node: cst.CSTNode) -> cst.SimpleStatementLine:
    statement = tree.statement_of(node)
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        raise _NotSimple("it does not stand alone on its own line")
    return statement


def _assigned_name(tree: Tree, call: cst.Call, what: str) -> str:
    parent = tree.parent(call)
    if (
        not isinstance(parent, cst.Assign)
        or len(parent.targets) != 1
        or not isinstance(parent.targets[0].target, cst.Name)
    ):
        raise _NotSimple(f"the {what} is not assigned to a plain variable")
    return parent.targets[0].target.value


def _uses(tree: Tree, statement: cst.CSTNode, name: str) -> list[cst.Name]:
    """Reads of `name` bound by `statement` (scope analysis); raises when it is bound elsewhere too."""
    target = None
    for node in walk_same_scope(statement):
        if isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Name) and node.target.value == name:
            target = node.target
    assert target is not None
    scope = tree.scopes.get(target)
    if scope is None:
        raise _NotSimple(f"`{name}` cannot be followed")
    assignments = list(scope.assignments[name])
    if len(assignments) != 1:
        raise _NotSimple(f"`{name}` is assigned more than once")
    return [a.node for a in assignments[0].references if isinstance(a.node, cst.Name)]


def _kwargs(call: cst.Call, positional: tuple[str, ...], what: str) -> dict[str, cst.BaseExpression]:
    if any(a.star for a in call.args):
        raise _NotSimple(f"{what} is called with */** arguments")
    out: dict[str, cst.BaseExpression] = {}
    for i, arg in enumerate(a for a in call.args if a.keyword is None):
        if i >= len(positional):
            raise _NotSimple(f"{what} has more positional arguments than the codemod knows")
        out[positional[i]] = arg.value
    for arg in call.args:
        if arg.keyword is not None:
            out[arg.keyword.value] = arg.value
    return out


def _recognise(ctx: FixContext, call: cst.Call) -> _Pattern:
    tree = ctx.tree
    args = _kwargs(
        call, ("keras_model", "keras_model_path", "custom_objects", "model_dir", "config"), "`model_to_estimator`"
    )
    extra = sorted(set(args) - {"keras_model", "config"})
    if extra:
        raise _NotSimple(f"it is given {', '.join(extra)} (a model_dir restores checkpoints, which fit does not)")
    model = args.get("keras_model")
    if not isinstance(model, cst.Name):
        raise _NotSimple("`keras_model` is not a plain variable")
    est_line = _line_of(tree, call)
    estimator = _assigned_name(tree, call, "estimator")
    if not isinstance(tree.parent(est_line), (cst.Module, cst.IndentedBlock)):
        raise _NotSimple("it is not a statement of a block")
    block, est_index = tree.block_of(est_line)
    scope = tree.enclosing_scope_node(est_line)
    pattern = _Pattern(block, scope, removed=[est_line])
    strategy_inputs, strategy_index = _follow_strategy(ctx, pattern, args.get("config"), est_index)
    start, end = _model_construction(tree, block, est_index, model.value)
    removed_ids = {id(s) for s in pattern.removed}
    for j in range(start, end + 1):
        if id(block.body[j]) in removed_ids:
            raise _NotSimple("the RunConfig or strategy is created in the middle of the model's construction")
    if strategy_index > start:
        late = set()
        for j in range(start, strategy_index):
            late |= bound_names(block.body[j])
        if strategy_inputs & late:
            raise _NotSimple(
                f"the strategy uses {', '.join(sorted(strategy_inputs & late))}, assigned after the model "
                "starts being built"
            )
    for region in ctx.plan.regions:
        if region.block is block and not (region.end < start or region.start > end):
            raise _NotSimple("the model's construction is already rewritten for `multi_gpu_model`")
    pattern.start, pattern.end = start, end

    _estimator_calls(ctx, pattern, est_line, estimator, model.value)
    return pattern


def _follow_strategy(
    ctx: FixContext, pattern: _Pattern, config: cst.BaseExpression | None, est_index: int
) -> tuple[set[str], int]:
    """The RunConfig and its `train_distribute` strategy: their lines go (recorded in `pattern`), the
    strategy becomes the pattern's strategy line. Returns the names the strategy reads and the index
    of the statement creating it."""
    tree, block = ctx.tree, pattern.block
    config_call = config
    if isinstance(config, cst.Name):
        config_line = _binding_in_block(tree, block, est_index, config.value, "the RunConfig")
        config_call = _value_of(config_line)
        if _uses(tree, config_line, config.value) != [config]:
            raise _NotSimple(f"`{config.value}` is used elsewhere too")
        pattern.removed.append(config_line)
    if not _is_call_to(tree, config_call, ".RunConfig"):
        raise _NotSimple("its `config` is not a `RunConfig(train_distribute=...)` the codemod can follow")
    assert isinstance(config_call, cst.Call)
    config_args = _kwargs(config_call, (), "`RunConfig`")
    if set(config_args) != {"train_distribute"}:
        raise _NotSimple(
            "the RunConfig has settings fit has no direct equivalent for ("
            + ", ".join(sorted(set(config_args) - {"train_distribute"}) or ["no train_distribute"]) + ")"
        )
    strategy = config_args["train_distribute"]
    strategy_call: cst.BaseExpression | None = strategy
    if isinstance(strategy, cst.Name):
        strategy_line = _binding_in_block(tree, block, est_index, strategy.value, "the strategy")
        strategy_call = _value_of(strategy_line)
        if _uses(tree, strategy_line, strategy.value) != [strategy]:
            raise _NotSimple(
                f"`{strategy.value}` is used elsewhere too; build the model under `{strategy.value}.scope()` by hand"
            )
        pattern.removed.append(strategy_line)
        pattern.name = strategy.value
        strategy_inputs = used_names(strategy_call)
        strategy_index = tree.block_of(strategy_line)[1]
    else:
        pattern.name = ctx.strategy_name(pattern.scope)
        strategy_inputs = used_names(strategy_call) if strategy_call is not None else set()
        strategy_index = est_index
    pattern.expression = _strategy_source(ctx, strategy_call)
    return strategy_inputs, strategy_index


def _model_construction(tree: Tree, block: Block, est_index: int, model: str) -> tuple[int, int]:
    """The index range of the statements that build and compile `model` earlier in the block."""
    built = next((j for j in range(est_index - 1, -1, -1) if binds(block.body[j], model, tree)), None)
    if built is None or isinstance(block.body[built], (cst.FunctionDef, cst.ClassDef)) or not isinstance(
        _value_of_or_none(block.body[built]), cst.Call
    ):
        raise _NotSimple(f"`{model}` is not built by a call earlier in this block")
    start, end = construction_start(tree, block, built), built
    for j in range(built + 1, est_index):
        statement = block.body[j]
        compiles = [n for n in walk_same_scope(statement) if _is_compile_of(tree, n, model)]
        if compiles:
            if not isinstance(statement, cst.SimpleStatementLine):
                raise _NotSimple(f"`{model}` is compiled inside a compound statement")
            end = j
            for dependency in dependency_statements(tree, statement, cst.ensure_type(compiles[0], cst.Call)):
                start = min(start, tree.block_of(dependency)[1])
        elif model in bound_names(statement):
            raise _NotSimple(f"`{model}` is rebound before `model_to_estimator`")
    return start, end


def _binding_in_block(tree: Tree, block: Block, before: int, name: str, what: str) -> cst.SimpleStatementLine:
    for j in range(before - 1, -1, -1):
        statement = block.body[j]
        if binds(statement, name, tree):
            if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and isinstance(
                statement.body[0], cst.Assign
            ) and len(statement.body[0].targets) == 1:
                return statement
            break
    raise _NotSimple(f"{what} `{name}` is not assigned earlier in the same block")


def _value_of_or_none(statement: cst.CSTNode) -> cst.BaseExpression | None:
    if (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Assign)
    ):
        return statement.body[0].value
    return None


def _value_of(statement: cst.SimpleStatementLine) -> cst.BaseExpression:
    value = _value_of_or_none(statement)
    assert value is not None
    return value


def _strategy_source(ctx: FixContext, call: cst.BaseExpression | None) -> str:
    if not isinstance(call, cst.Call):
        raise _NotSimple("the strategy is not created by a call the codemod can follow")
    if contrib_strategy.strategy_kind(ctx.tree, call) is not None:
        expression, problem = contrib_strategy.convert(ctx, call)
        if expression is None:
            raise _NotSimple(problem.rstrip("."))
        return expression
    names = ctx.tree.qualified_names(call.func)
    if any(
        q.startswith("tensorflow.") and q.rsplit(".", 1)[-1] in {"MirroredStrategy", "OneDeviceStrategy"} for q in names
    ):
        return ctx.tree.code(call)
    raise _NotSimple("the strategy is not a MirroredStrategy/OneDeviceStrategy the codemod knows")


def _is_compile_of(tree: Tree, node: cst.CSTNode, model: str) -> bool:
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "compile"
        and tree.code(node.func.value) == model
    )


_Calls = list[tuple[cst.Call, dict[str, cst.BaseExpression]]]  # each call with its arguments by name


def _estimator_calls(
    ctx: FixContext, pattern: _Pattern, est_line: cst.SimpleStatementLine, estimator: str, model: str
) -> None:
    """Every use of the estimator: `train`/`evaluate` statements the codemod can turn into fit/evaluate."""
    trains, evaluates = _train_and_evaluate_calls(ctx.tree, pattern, est_line, estimator, model)
    scaled = _rewrite_trains(ctx, pattern, trains, model)
    _rewrite_evaluates(ctx, pattern, evaluates, scaled, model)
    for function in scaled.values():
        _scale_batch(ctx, pattern, function, trains, evaluates)


def _train_and_evaluate_calls(
    tree: Tree, pattern: _Pattern, est_line: cst.SimpleStatementLine, estimator: str, model: str
) -> tuple[_Calls, _Calls]:
    """The estimator's `train(...)` and `evaluate(...)` statements; any other use is not simple."""
    uses = _uses(tree, est_line, estimator)
    if not uses:
        raise _NotSimple(f"`{estimator}` is never trained")
    trains: _Calls = []
    evaluates: _Calls = []
    for use in uses:
        attribute = tree.parent(use)
        call = tree.parent(attribute) if attribute is not None else None
        if not (
            isinstance(attribute, cst.Attribute) and attribute.value is use
            and isinstance(call, cst.Call) and call.func is attribute
        ):
            raise _NotSimple(f"`{estimator}` is used other than as `{estimator}.train(...)` / `.evaluate(...)`")
        method = attribute.attr.value
        statement = tree.statement_of(call)
        if not (
            isinstance(statement, cst.SimpleStatementLine)
            and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)
            and statement.body[0].value is call
        ):
            raise _NotSimple(
                f"the result of `{estimator}.{method}(...)` is used (Estimator returns other types than Keras)"
            )
        if tree.enclosing_scope_node(call) is not pattern.scope or tree.order(call) < tree.order(est_line):
            raise _NotSimple(f"`{estimator}.{method}` is called from another function")
        if method == "train":
            trains.append(
                (call, _kwargs(call, ("input_fn", "hooks", "steps", "max_steps", "saving_listeners"), "`train`"))
            )
        elif method == "evaluate":
            evaluates.append(
                (call, _kwargs(call, ("input_fn", "steps", "hooks", "checkpoint_path", "name"), "`evaluate`"))
            )
        elif method == "predict":
            raise _NotSimple(
                f"`{estimator}.predict` yields one dict per example; `{model}.predict(dataset)` returns arrays: "
                "rewrite its use by hand"
            )
        else:
            raise _NotSimple(f"`{estimator}.{method}` has no direct Keras equivalent")
    if not trains:
        raise _NotSimple(f"`{estimator}` is never trained")
    return trains, evaluates


def _rewrite_trains(ctx: FixContext, pattern: _Pattern, trains: _Calls, model: str) -> dict[int, cst.FunctionDef]:
    """`estimator.train(input_fn, steps=N)` -> `model.fit(input_fn(), steps_per_epoch=N, epochs=1)`.
    Returns the input functions whose batch size is to be scaled."""
    tree = ctx.tree
    scaled: dict[int, cst.FunctionDef] = {}
    for call, args in trains:
        extra = sorted(set(args) - {"input_fn", "steps", "max_steps"})
        if extra:
            raise _NotSimple(f"`train` is given {', '.join(extra)}")
        if "steps" in args and "max_steps" in args:
            raise _NotSimple("`train` is given both steps and max_steps")
        statement = tree.statement_of(call)
        assert statement is not None
        if "max_steps" in args and (len(trains) > 1 or tree.block_of(statement)[0] is not pattern.block):
            raise _NotSimple("`max_steps` counts across train calls; only a single top-level train maps to fit")
        function = _input_function(ctx, pattern, args.get("input_fn"))
        scaled[id(function)] = function
        dataset = f"{tree.code(cst.ensure_type(args['input_fn'], cst.Name))}()"
        steps = args.get("steps", args.get("max_steps"))
        if steps is not None:
            text = f"{model}.fit({dataset}, steps_per_epoch={tree.code(steps)}, epochs=1)"
        else:
            text = f"{model}.fit({dataset}, epochs=1)"
        pattern.nodes[id(call)] = cst.parse_expression(text)
    return scaled


def _rewrite_evaluates(
    ctx: FixContext, pattern: _Pattern, evaluates: _Calls, scaled: dict[int, cst.FunctionDef], model: str
) -> None:
    """`estimator.evaluate(input_fn, steps=N)` -> `model.evaluate(input_fn(), steps=N)`."""
    tree = ctx.tree
    for call, args in evaluates:
        extra = sorted(set(args) - {"input_fn", "steps"})
        if extra:
            raise _NotSimple(f"`evaluate` is given {', '.join(extra)}")
        input_fn = args.get("input_fn")
        if isinstance(input_fn, cst.Lambda) and _no_params(input_fn.params):
            dataset = tree.code(input_fn.body)
        elif isinstance(input_fn, cst.Name):
            function = _input_function(ctx, pattern, input_fn, scale=False)
            if id(function) in scaled and "steps" in args:
                raise _NotSimple(
                    "`evaluate(steps=...)` shares its input function with `train`, whose batch size changes"
                )
            dataset = f"{input_fn.value}()"
        else:
            raise _NotSimple("`evaluate`'s input_fn is not a local function or a lambda")
        steps = args.get("steps")
        if steps is not None:
            text = f"{model}.evaluate({dataset}, steps={tree.code(steps)})"
        else:
            text = f"{model}.evaluate({dataset})"
        pattern.nodes[id(call)] = cst.parse_expression(text)


def _input_function(
    ctx: FixContext, pattern: _Pattern, input_fn: cst.BaseExpression | None, scale: bool = True
) -> cst.FunctionDef:
    tree = ctx.tree
    if not isinstance(input_fn, cst.Name):
        raise _NotSimple("the input_fn is not a local function (a lambda cannot have its batch size scaled)")
    scope = tree.scopes.get(input_fn)
    defs = [getattr(a, "node", None) for a in scope[input_fn.value]] if scope is not None else []
    if len(defs) != 1 or not isinstance(defs[0], cst.FunctionDef):
        raise _NotSimple(f"`{input_fn.value}` is not a function defined once in this module")
    function = defs[0]
    if tree.enclosing_scope_node(function) is not pattern.scope:
        raise _NotSimple(f"`{input_fn.value}` is not defined next to the estimator code")
    if not _no_params(function.params):
        raise _NotSimple(f"`{input_fn.value}` takes parameters (params/mode/config)")
    if function.decorators or function.asynchronous:
        raise _NotSimple(f"`{input_fn.value}` is decorated or async")
    returns = [n for n in walk_same_scope(function.body) if isinstance(n, cst.Return)]
    if not returns or not all(_is_dataset(tree, function, r.value) for r in returns):
        raise _NotSimple(f"`{input_fn.value}` does not visibly return a `tf.data.Dataset`")
    return function


def _no_params(params: cst.Parameters) -> bool:
    return not (
        params.params or isinstance(params.star_arg, (cst.Param, cst.ParamStar)) or params.kwonly_params
        or params.star_kwarg or params.posonly_params
    )


def _is_dataset(
    tree: Tree, function: cst.FunctionDef, expr: cst.BaseExpression | None, seen: frozenset[str] = frozenset()
) -> bool:
    root = expr
    while isinstance(root, (cst.Call, cst.Attribute)):
        if isinstance(root, cst.Call):
            if any(
                q.startswith(("tensorflow.data.", "tensorflow.compat.v1.data."))
                for q in tree.qualified_names(root.func)
            ):
                return True
            root = root.func
        else:
            root = root.value
    if isinstance(root, cst.Name) and root.value in seen:
        return True  # `dataset = dataset.batch(8)`: as good as its other bindings
    if isinstance(root, cst.Name):
        values = [
            n.value
            for n in walk_same_scope(function.body)
            if isinstance(n, cst.Assign)
            and any(isinstance(t.target, cst.Name) and t.target.value == root.value for t in n.targets)
        ]
        return bool(values) and all(_is_dataset(tree, function, v, seen | {root.value}) for v in values)
    return False


def _scale_batch(
    ctx: FixContext, pattern: _Pattern, function: cst.FunctionDef, trains: _Calls, evaluates: _Calls
) -> None:
    """Estimator gave each replica one `input_fn` batch; fit splits a batch: scale `.batch(B)` by the replicas."""
    tree = ctx.tree
    name = function.name.value
    scope = tree.scopes.get(function)
    handled = {id(args.get("input_fn")) for _, args in [*trains, *evaluates]}
    if scope is not None:
        for assignment in scope[name]:
            for access in assignment.references:
                if id(access.node) not in handled:
                    raise _NotSimple(f"`{name}` is used elsewhere too, and its batch size changes")
    batches = [
        n for n in walk_same_scope(function.body)
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "batch"
    ]
    if len(batches) != 1:
        raise _NotSimple(
            f"`{name}` does not call `.batch(...)` exactly once, so its per-replica batch size cannot be scaled"
        )
    call = batches[0]
    first = call.args[0] if call.args else None
    if first is None or first.star or (first.keyword is not None and first.keyword.value != "batch_size"):
        raise _NotSimple(f"`{name}`'s `.batch(...)` has no batch size the codemod can read")
    value = first.value
    text = tree.code(value)
    if not isinstance(value, (cst.Name, cst.Integer, cst.Attribute, cst.Call, cst.Subscript)):
        text = f"({text})"
    pattern.nodes[id(value)] = cst.parse_expression(f"{text} * {pattern.name}.num_replicas_in_sync")
