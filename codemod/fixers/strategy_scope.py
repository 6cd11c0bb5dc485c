"""Rewrites `multi_gpu_model(model, ...)` sites into `strategy = MirroredStrategy(...)` + `with strategy.scope():`.

The template's construction and every later `compile` in the same function go under the
scope (Keras 3 creates the optimizer there); the parallel model disappears: renamed to the
template where scope analysis proves it safe, else kept as an alias of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst
import libcst.matchers as m

from .. import fallbacks
from .._tree import Block, Tree, binds, bound_names, dotted_name, used_names, walk_same_scope
from ..construction import (
    construction_start,
    dependency_statements,
    makes_layers,
    object_reads,
    outer_construction,
    plain_uses,
)
from ..fix_context import FixContext, contains, subtree
from ..plan import Region
from ..recognise import Site
from ..strategy_expression import dropped_notes, strategy_expression, surely_int

__all__ = ["fix"]

# compile arguments that may carry objects owning variables (optimizers, metric objects).
_VARIABLE_ARGS = ("optimizer", "metrics", "weighted_metrics")


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


def fix(ctx: FixContext) -> None:
    planned: list[_Planned] = []
    for site in ctx.sites:
        if site.problem is not None:
            continue
        result = _plan_site(ctx, site)
        if result is not None:
            planned.append(result)
    for item in _resolve_overlaps(ctx, planned):
        _commit(ctx, item)


def _plan_site(ctx: FixContext, site: Site) -> _Planned | None:
    """How one site is rewritten, or None when it is reported instead (the finding says why)."""
    tree = ctx.tree
    assert site.statement is not None and site.template is not None
    template = tree.code(site.template)
    target = tree.code(site.target) if site.target is not None else None
    if target is not None:
        fallback = fallbacks.collapse(tree, site.statement, target, template)
    else:
        fallback = fallbacks.Fallback(anchor=site.statement)
    anchor = fallback.anchor
    construction = _template_construction(ctx, site, anchor, template)
    if construction is None:
        return None
    block0, j = construction
    built_by = block0.body[j]

    scope_node = tree.enclosing_scope_node(anchor)
    start0 = construction_start(tree, block0, j)
    receivers = {template} if target is None else {template, target}
    compiles = _compiles(tree, scope_node, receivers, block0.body[start0], site.call)
    block, start, end = _scope_range(tree, anchor, block0, start0, j, template, compiles)
    if _reported_module_object(ctx, site, scope_node, [block0.body[start0], built_by, *compiles]):
        return None
    if _reported_outside_argument(ctx, site, template, scope_node, compiles, block.body[start:end + 1]):
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
    hoisted = _strategy_inputs_to_hoist(ctx, site, template, target, anchor, guards, block, start)
    if hoisted is None:
        return None

    known_int = site.gpus is not None and surely_int(site.gpus, _IntResolver(tree, site.gpus))
    expression = strategy_expression(ctx.tf_name(), site.gpus, guards, known_int=known_int)
    planned = _Planned(
        site, anchor, block, start, end, expression, dropped_notes(site.dropped), scope_node,
        unwrap=_cpu_blocks_to_unwrap(tree, built_by, block.body[start:end + 1]),
        hoisted=hoisted, definitions=_movable_definitions(block, start, end, hoisted),
    )
    if not fallback.collapsed and target is not None:
        planned.fallback_kept = _kept_fallback(tree, site.statement, anchor)
    if not compiles and not _loaded(built_by):
        ctx.report(site.call, "MGPU202", (
            f"no `compile` of `{template}` follows in this function; compile it under "
            f"`with {template}.distribute_strategy.scope():` wherever it is compiled "
            "(Keras 3 creates the optimizer in `compile`; outside the scope `fit` fails)."
        ))
    return planned


def _template_construction(
    ctx: FixContext, site: Site, anchor: cst.BaseStatement, template: str
) -> tuple[Block, int] | None:
    """(block, index) of the call that builds the template; None when there is none to put under
    the scope (reported: MGPU101 not bound here, MGPU104 bound by an import, def or class)."""
    tree = ctx.tree
    construction = _template_binding(tree, anchor, template)
    if construction is None:
        ctx.report(site.call, "MGPU101", (
            f"{_origin_of(tree, site, template)}; create `strategy = tf.distribute.MirroredStrategy()` where it "
            f"is built, build and compile it under `with strategy.scope():`, and use `{template}` instead of "
            f"the `{site.name}` result."
        ))
        return None
    block0, j = construction
    if _bound_by_definition(tree, block0.body[j], template):
        ctx.report(site.call, "MGPU104", (
            f"`{template}` is bound by an import, def or class; build the model in this function under "
            "`with strategy.scope():` by hand (see MIGRATION.md)."
        ))
        return None
    return construction


def _template_binding(tree: Tree, anchor: cst.BaseStatement, template: str) -> tuple[Block, int] | None:
    """(block, index) of the template's last binding before the site, climbing out of
    if/try/with/for blocks; None when the function (or module) does not bind it first."""
    for block, index in tree.block_chain(anchor):
        for j in range(index - 1, -1, -1):
            if binds(block.body[j], template, tree):
                return block, j
    return None


def _bound_by_definition(tree: Tree, built_by: cst.BaseStatement, template: str) -> bool:
    """The template comes from a `def`, a `class` or an import, not from a call assigned here."""
    if isinstance(built_by, (cst.FunctionDef, cst.ClassDef)):
        return True
    imports = any(isinstance(n, (cst.Import, cst.ImportFrom)) for n in walk_same_scope(built_by))
    return imports and not _assigns_with_call(built_by, template, tree)


def _scope_range(
    tree: Tree, anchor: cst.BaseStatement, block0: Block, start0: int, j: int, template: str,
    compiles: list[cst.Call],
) -> tuple[Block, int, int]:
    """The statements `strategy.scope()` covers: the site, the template's construction with what
    it uses from the blocks around it, and every compile with the optimizer/metrics it is given."""
    members: list[cst.CSTNode] = [block0.body[start0], anchor]
    members += outer_construction(tree, block0, start0, j, template)
    for call in compiles:
        statement = tree.statement_of(call)
        assert statement is not None
        members.append(statement)
        members.extend(dependency_statements(tree, statement, call))
    return _common_range(tree, members)


def _reported_module_object(ctx: FixContext, site: Site, scope_node: cst.CSTNode, nodes: list[cst.CSTNode]) -> bool:
    """MGPU109: the function's model uses an object created at module level, outside any scope."""
    tree = ctx.tree
    outside = _created_outside(tree, scope_node, nodes)
    if outside is None:
        return False
    name, statement = outside
    ctx.report(statement, "MGPU109", (
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
    ctx.report(node, "MGPU110", (
        f"{origin}, and `compile` receives it; an optimizer or metric object created outside the scope makes "
        f"`fit` fail (\"Mixing different tf.distribute.Strategy objects\"). Create it under the same "
        f"`strategy.scope()` as `{template}` (pass a string such as 'adam', or build it inside), then migrate "
        f"the `{site.name}` call (line {tree.position(site.call)[0]}) by hand; it is left as it is."
    ))
    return True


def _strategy_inputs_to_hoist(
    ctx: FixContext, site: Site, template: str, target: str | None, anchor: cst.BaseStatement,
    guards: list[str], block: Block, start: int,
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
    for statement in block.body[start:anchor_index + 1]:
        late |= bound_names(statement)
    late -= {target} if target else set()
    hoisted = _hoistable(tree, block, start, anchor_index, needed & late)
    if hoisted:
        late -= set().union(*(bound_names(h) for h in hoisted))
    if not needed & late:
        return hoisted
    names = sorted(needed & late)
    first = block.body[start]
    assigned = " and ".join(
        f"`{n}`, assigned on line {_binding_line(tree, block.body[start:anchor_index + 1], n)}," for n in names
    )
    ctx.report(site.call, "MGPU105", (
        f"the GPU count uses {assigned} "
        f"after line {tree.position(first)[0]}{_short_code(tree, first)} where the code the scope must "
        f"cover starts (what builds `{template}` or its compile's arguments); assign "
        f"{', '.join(f'`{n}`' for n in names)} before that line and rerun, or migrate by hand."
    ))
    return None


def _cpu_blocks_to_unwrap(tree: Tree, built_by: cst.CSTNode, region: Sequence[cst.BaseStatement]) -> list[cst.CSTNode]:
    """The `with tf.device('/cpu:0'):` blocks around the construction, inside the scope's range:
    the strategy places the variables now."""
    return [
        node
        for node in [built_by, *tree.ancestors(built_by)]
        if tree.is_cpu_device_with(node) and any(contains(tree, s, node) for s in region)
    ]


def _movable_definitions(
    block: Block, start: int, end: int, hoisted: list[cst.BaseStatement]
) -> list[cst.BaseStatement]:
    """The `def`s and `class`es inside the range that can move above the strategy line (they
    create no variables): their decorators, defaults and bases read nothing the range binds
    before them, and nothing else in the range rebinds their name."""
    chosen: list[cst.BaseStatement] = []
    bound_before: set[str] = set()
    region = block.body[start:end + 1]
    for statement in region:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            header: list[cst.CSTNode] = [d.decorator for d in statement.decorators]
            if isinstance(statement, cst.FunctionDef):
                header += [p.default for p in statement.params.params if p.default is not None]
                header += [p.default for p in statement.params.kwonly_params if p.default is not None]
            else:
                header += [a.value for a in statement.bases]
            reads = set().union(*(used_names(h) for h in header)) if header else set()
            rebound = any(statement.name.value in bound_names(o) for o in region if o is not statement)
            if not (reads & bound_before) and not rebound:
                chosen.append(statement)
                continue
        if statement not in hoisted:
            bound_before |= bound_names(statement)
    return chosen


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
                    if _constant_assignment(statement):
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
    if value is None or m.findall(value, m.Call() | m.Attribute() | m.Lambda() | m.Subscript()):
        return False
    return all(cst.ensure_type(n, cst.Name).value in {"None", "True", "False"} for n in m.findall(value, m.Name()))


def _assigns_with_call(statement: cst.CSTNode, template: str, tree: Tree) -> bool:
    return any(
        isinstance(n, cst.Assign) and any(tree.code(t.target) == template for t in n.targets)
        for n in walk_same_scope(statement)
    )


def _path_guards(tree: Tree, anchor: cst.CSTNode, block0: Block) -> list[str]:
    guards = []
    previous: cst.CSTNode = anchor
    for ancestor in tree.ancestors(anchor):
        if ancestor is block0:
            break
        if isinstance(ancestor, cst.If):
            if ancestor.body is previous:
                guards.append(tree.code(ancestor.test))
            elif ancestor.orelse is previous:
                guards.append(f"not ({tree.code(ancestor.test)})")
        previous = ancestor
    return guards


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
        if isinstance(node, cst.Attribute):
            option = node.attr.value
        elif isinstance(node, cst.Subscript) and len(node.slice) == 1:
            index = node.slice[0].slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
                option = index.value.evaluated_value
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


def _empties_block(tree: Tree, statement: cst.CSTNode) -> bool:
    """The site is the only statement of its (kept) branch: removing it would need a `pass`."""
    block = tree.parent(statement)
    return isinstance(block, cst.IndentedBlock) and all(s is statement for s in block.body)


def _loaded(statement: cst.CSTNode) -> bool:
    return bool(m.findall(statement, m.Call(func=m.Name("load_model") | m.Attribute(attr=m.Name("load_model")))))


def _hoistable(tree: Tree, block: Block, start: int, stop: int, names: set[str]) -> list[cst.BaseStatement]:
    """The statements binding `names` between `start` and `stop`, when each is a one-target plain
    assignment (`gpus = 2`, `n = len(ids)`) reading nothing bound before it in that range: moving
    them above the strategy line changes nothing. Empty when any one is not."""
    if not names:
        return []
    chosen: list[cst.BaseStatement] = []
    bound_before: set[str] = set()
    for statement in block.body[start:stop + 1]:
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
                or makes_layers(statement)
                or used_names(small.value) & bound_before
            ):
                return []
            chosen.append(statement)
        bound_before |= bound_names(statement)
    return chosen if set().union(*(bound_names(c) for c in chosen)) == names else []


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
            n for n in m.findall(node, m.Name())
            if isinstance(n, cst.Name) and n.value in plain and not _is_attr_name(tree, n)
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
                ):
                    return name.value, statement
    return None


def _constructs(statement: cst.CSTNode) -> bool:
    """`x = Adam(...)`, `x = keras.layers.Dense(...)`: the value is an instance of a class (a
    capitalised callee), the objects that own variables; `cfg = load_config()` is not."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], (cst.Assign, cst.AnnAssign))):
        return False
    value = statement.body[0].value
    if not isinstance(value, cst.Call) or not makes_layers(statement):
        return False
    name = dotted_name(value.func).rsplit(".", 1)[-1]
    return name[:1].isupper()


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
            if other.block is item.block and not (item.start > other.end or item.end < other.start):
                if other.expression != item.expression:
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
                ctx.report(this.site.call, "MGPU104", (
                    f"this `{this.site.name}` site and the one at line {ctx.tree.position(that.site.call)[0]} "
                    f"share the code the scope would cover but need different strategies ({differ}); create one "
                    "`tf.distribute.MirroredStrategy` for both models and build them under its scope by hand."
                ))
            continue
        kept.append(item)
    return [item for item in kept if id(item) not in dropped]


def _nested(tree: Tree, outer: _Planned, inner: _Planned) -> bool:
    if outer.block is inner.block:
        return False
    statements = outer.block.body[outer.start:outer.end + 1]
    return any(contains(tree, s, inner.block) for s in statements)


def _commit(ctx: FixContext, item: _Planned) -> None:
    name = ctx.strategy_name(item.scope_node)
    hoisted = [h.with_changes(leading_lines=[]) for h in item.hoisted]
    for statement in item.hoisted:
        ctx.plan.statements[id(statement)] = None  # its comments stay where it was
    if item.definitions:
        # Definitions create no variables: they move above the strategy line, whole (their
        # comments and blank lines with them), in their order, before the hoisted settings.
        for statement in item.definitions:
            ctx.plan.moved.add(id(statement))
        hoisted = [*item.definitions, *hoisted]
    ctx.plan.regions.append(Region(item.block, item.start, item.end, name, item.expression, item.notes, hoisted))
    for node in item.unwrap:
        ctx.plan.unwrap.add(id(node))
    for planned in [item, *item.site_followers]:
        _replace_site(ctx, planned)


def _replace_site(ctx: FixContext, item: _Planned) -> None:
    tree, site = ctx.tree, item.site
    assert site.template is not None
    ctx.rewritten.append(site)
    if site.target is None:  # `return multi_gpu_model(model)` -> `return model`
        ctx.plan.nodes[id(site.call)] = site.template.deep_clone()
        return
    template, target = tree.code(site.template), tree.code(site.target)
    if item.fallback_kept is not None:
        ctx.report(item.fallback_kept, "MGPU106", _kept_fallback_message(tree, item.fallback_kept, site, template))
    if target == template:
        ctx.plan.statements[id(item.anchor)] = None
        ctx.references[id(site)] = ctx.references_of(site)
        return
    accesses = ctx.safe_rename(site, item.anchor) if isinstance(site.target, cst.Name) else None
    if accesses is not None and _empties_block(tree, item.anchor):
        accesses = None  # the alias keeps the kept branch non-empty (never a `pass`)
    ctx.references[id(site)] = ctx.references_of(site)
    if accesses is not None:
        ctx.plan.statements[id(item.anchor)] = None
        for access in accesses:
            ctx.plan.nodes[id(access)] = site.template.deep_clone()
    else:
        alias = cst.parse_statement(f"{target} = {template}\n")
        ctx.plan.statements[id(item.anchor)] = alias


def _kept_fallback_message(tree: Tree, kept: cst.CSTNode, site: Site, template: str) -> str:
    """MGPU106: what the kept `if`/`try` holds besides the model choice, and which branch to keep."""
    kind = "if" if isinstance(kept, cst.If) else "try"
    branch = next(a for a in tree.ancestors(site.call) if isinstance(a, cst.IndentedBlock))
    besides = [s for s in branch.body if s is not site.statement]
    others = [
        s for s in besides
        if not m.matches(s, m.SimpleStatementLine(body=[m.Expr(m.Call(func=m.Name("print")))]))
    ]
    everywhere = {tree.code(s) for s in _branch_statements(kept) if not any(a is branch for a in tree.ancestors(s))}
    others = [s for s in others if tree.code(s) not in everywhere]  # the same in the other branch: no difference
    head = f"kept this `{kind}` around `{site.name}`: it is not a plain fallback"
    rebuilt = [s for s in others if binds(s, template, tree)]
    if rebuilt:
        return (
            f"{head}; its branch with the call also builds `{template}` (line {tree.position(rebuilt[0])[0]}), "
            f"so both branches matter: after migration both train `{template}` under the strategy. Review it; "
            "nothing in it needs the old wrapper any more."
        )
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
    shown = others or besides  # a branch that only adds a `print` is still not a plain fallback
    held = f" (its branch with the call also runs {_quoted(tree, shown[0])})" if shown else ""
    return (
        f"{head}{held}. After migration `{template}` is the model in every branch; {plain} was written for "
        f"a plain model, so keep that branch's code and remove the `{kind}` with the branch written for the "
        "old wrapper."
    )


def _quoted(tree: Tree, statement: cst.CSTNode) -> str:
    """`code` (line N) for a one-line statement; a longer one is named by its line only."""
    text = tree.code(statement).strip()
    line = tree.position(statement)[0]
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


def _gpus_text(tree: Tree, site: Site) -> str:
    return "all GPUs (no `gpus`)" if site.gpus is None else f"gpus={tree.code(site.gpus)}"


def _branch_statements(kept: cst.CSTNode) -> list[cst.BaseStatement]:
    """The statements directly in every branch of an `if` chain or `try`."""
    suites: list[cst.BaseSuite] = []
    current: cst.CSTNode | None = kept
    while isinstance(current, cst.If):
        suites.append(current.body)
        current = current.orelse
    if isinstance(current, cst.Else):
        suites.append(current.body)
    if isinstance(kept, cst.Try):
        suites += [kept.body, *(h.body for h in kept.handlers)]
    return [s for suite in suites if isinstance(suite, cst.IndentedBlock) for s in suite.body]
