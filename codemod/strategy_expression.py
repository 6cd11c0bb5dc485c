"""Turns `multi_gpu_model`'s `gpus` argument into the `tf.distribute.MirroredStrategy(...)` a person writes.

The house style (MIGRATION.md, "House style"):

- every GPU (`gpus=None`, a count read from the machine) -> `tf.distribute.MirroredStrategy()`;
- a count `n` -> `tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU")[:n])`:
  at most `n` of the GPUs this machine has. Naming GPUs that do not exist
  (`MirroredStrategy(["/gpu:0", "/gpu:1"])`) hangs in `fit`; with no GPU the slice is empty
  and TensorFlow takes its default devices (`MirroredStrategy([])` is `MirroredStrategy()`);
- a list of GPU ids -> `0, 1, ..., k-1` as the count `k`; any other the machine's GPUs at those
  indices, which raises where one is missing (as the old call did) instead of hanging (no
  comment says so: MIGRATION.md does, and the code reads as a person writes it);
- a guard (`if n_gpus > 1:` ... `else:`), the script's condition once, choosing the strategy in
  its branches: `tf.distribute.get_strategy()` (one device, as the plain model ran) in the other;
- a "more than one GPU" guard whose `if` stays in the script (`KeptCondition`) is not written again:
  the count becomes `max(n, 1)` (unless it is surely at least 1), which selects one device exactly
  where the condition is false.

The result is a `str` (the multi-device expression, what callers that only want an expression use)
that also carries the layout: `StrategyCode.branch` and `.guessed` when the code did not
say whether `gpus` holds a count or a list of ids (the caller should report it).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from .gpu_listing import with_public_listing
from ._tree import code_of, findall, walk

if TYPE_CHECKING:
    from ._tree import Tree

__all__ = [
    "Branch", "KeptCondition", "StrategyCode", "count_or_list", "dropped_notes", "machine_count", "machine_query",
    "refine", "strategy_expression",
    "surely_int",
]

_WHY_DROPPED = {
    # (not "it merges no outputs": `predict` still gathers the replicas' outputs; round 63, bj08)
    "cpu_merge": "MirroredStrategy decides where the replicas' results are combined",
    "cpu_relocation": "MirroredStrategy places every variable itself",
}

# Calls whose value is how many GPUs (or which devices) the machine has: using them as the count
# means "every GPU", which is what `MirroredStrategy()` does.
_MACHINE_QUERIES = ("list_physical_devices", "list_logical_devices", "list_local_devices", "num_gpus",
                    "get_available_gpus", "get_gpus", "device_count")
# `get_available_gpus`, `_get_available_gpus`, `list_gpu_devices`, `count_gpus`: project helpers asking the machine.
_MACHINE_QUERY = re.compile(r"^_?(get|list|count|num|available)_\w*(gpu|device)s?\w*$", re.IGNORECASE)
# Last names that hold GPU ids, not a count (`GPU_IDS`, `gpu_list`, `devices`).
_LIST_SUFFIXES = ("ids", "id_list", "list", "devices")


@dataclass(frozen=True)
class Branch:
    """`if <condition>:` chooses the multi-device strategy (`multi_when_true`) or the default one."""

    condition: str
    multi_when_true: bool
    single: str


class KeptCondition(str):
    """A guard whose `if` stays in the script (it does more than pick the model): the script
    already writes that condition, so the strategy line must not write it again."""


@dataclass(frozen=True)
class _Inputs:
    tf: str
    gpus: cst.BaseExpression | None
    guards: tuple[str, ...]
    known_int: bool


class StrategyCode(str):
    """The strategy's multi-device expression, plus how it is laid out (`plan.Region` renders it)."""

    branch: Branch | None
    guessed: str
    inputs: _Inputs | None  # what it was made from, to decide again with the whole module (`refine`)
    ids: str | None  # the GPU ids it names (`[2, 3]`, `args.gpu_ids`), else None (a count, every GPU)

    def __new__(cls, expression: str, *, branch: Branch | None = None, guessed: str = "",
                inputs: _Inputs | None = None, ids: str | None = None) -> StrategyCode:
        code = super().__new__(cls, expression)
        code.branch, code.guessed, code.inputs, code.ids = branch, guessed, inputs, ids
        return code

    def on_listed(self, tf: str, listing: str) -> str:
        """The strategy on the GPUs at its ids in `listing`, a name bound to
        `tf.config.list_logical_devices("GPU")`: `MirroredStrategy([gpus[2], gpus[3]])`, or
        `[gpus[i] for i in ids]` for ids not written out."""
        assert self.ids is not None
        node = cst.parse_expression(self.ids)
        if isinstance(node, (cst.List, cst.Tuple)) and _all_ints(node):
            devices = ", ".join(f"{listing}[{code_of(e.value)}]" for e in node.elements)
            return f"{tf}.distribute.MirroredStrategy([{devices}])"
        return f"{tf}.distribute.MirroredStrategy([{listing}[i] for i in {self.ids}])"

    def _key(self) -> tuple[str, Branch | None]:
        return str(self), self.branch

    def _made_from(self) -> tuple[object, ...] | None:
        if self.inputs is None:
            return None
        gpus = None if self.inputs.gpus is None else code_of(self.inputs.gpus)
        return self.inputs.tf, gpus, tuple(str(g) for g in self.inputs.guards), self.inputs.known_int

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StrategyCode):
            # Made from the same `gpus` under the same conditions: the same strategy, whether a
            # condition is written in the strategy line or kept in the script's own `if`.
            made, other_made = self._made_from(), other._made_from()
            if made is not None and other_made is not None:
                return made == other_made
            return self._key() == other._key()
        return isinstance(other, str) and self.branch is None and str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        # Codes that differ in text can be equal (a condition kept in the script's `if`): one bucket.
        return hash(StrategyCode)


def strategy_expression(tf: str, gpus: cst.BaseExpression | None, guards: list[str], *,
                        known_int: bool = False, kind: str | None = None, positive: bool = False) -> StrategyCode:
    """The `tf.distribute.MirroredStrategy(...)` for a `gpus` argument.

    `guards` are conditions under which the legacy code used the parallel model (a negated one
    is `not (<condition>)`); when they do not hold the old script ran on one device. `kind`, when
    the caller knows it from the module ("machine": every GPU, "count", "list"), overrides what
    the expression alone says; `positive` that every value the count can hold is at least 1.
    A guard that is a `KeptCondition` is written in the script already (its `if` stays).
    """
    # a condition copied into the strategy choice gets what backend_gpus gives the script's own
    guards = [type(g)(with_public_listing(g, tf)) for g in guards]
    inputs = _Inputs(tf, gpus, tuple(guards), known_int)
    guessed = ""
    ids = None
    if gpus is None or machine_count(gpus) or kind == "machine":
        multi = f"{tf}.distribute.MirroredStrategy()"
        if gpus is not None and all(_counts_present(gpus, g) for g in guards):
            guards = []  # "more than one GPU here": with fewer, MirroredStrategy() is one device too
    elif isinstance(gpus, (cst.List, cst.Tuple)) and _all_ints(gpus):
        first = _first_ids(gpus)
        if first:  # `[0, 1]` is "the first two GPUs": the count's form
            multi = f'{tf}.distribute.MirroredStrategy({tf}.config.list_logical_devices("GPU")[:{first}])'
        else:
            multi, ids = _listed(tf, code_of(gpus)), code_of(gpus)
    else:
        kind = kind or count_or_list(gpus, guards, known_int=known_int)
        if kind.startswith("list"):
            multi, ids = _listed(tf, code_of(gpus)), code_of(gpus)
        else:
            # The script's own `if n > 1:` stays: not written again; `[:max(n, 1)]` is one device
            # where it is false (`[:0]` would be every GPU).
            kept = [g for g in guards if isinstance(g, KeptCondition) and _more_than_one(gpus, g)]
            bound = _sliced(gpus)
            if kept:
                guards = [g for g in guards if g not in kept]
                bound = bound if positive or _at_least_one(gpus) else f"max({code_of(gpus)}, 1)"
            multi = f'{tf}.distribute.MirroredStrategy({tf}.config.list_logical_devices("GPU")[:{bound}])'
        if kind.endswith("?"):
            guessed = _guessed(tf, code_of(gpus), kind)
    branch = _branch(guards, f"{tf}.distribute.get_strategy()")
    return StrategyCode(multi, branch=branch, guessed=guessed, inputs=inputs, ids=ids)


def _counts_present(gpus: cst.BaseExpression, guard: str) -> bool:
    """`guard` only orders the machine's GPU count against a number (`len(gpu_list) > 1`, `G >= 2`,
    `not (G <= 1)` for the call in the `else:` of `if G <= 1:`)."""
    try:
        node = cst.parse_expression(guard)
    except cst.ParserSyntaxError:
        return False
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        node = node.expression
    if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1:
        return False
    operands = [node.left, node.comparisons[0].comparator]
    text = code_of(gpus)
    return any(isinstance(o, cst.Integer) for o in operands) and any(
        code_of(o) == text or machine_count(o) for o in operands
    )


def refine(code: str, tree: Tree) -> str:
    """`code` decided again with the whole module in view: a `gpus` name bound to the machine's GPU
    count (`G = len(get_available_gpus())`) is every GPU, one bound to a list of ids is a list,
    one bound to an int (also a parameter's default, a module constant) is a count."""
    if not isinstance(code, StrategyCode) or code.inputs is None or code.inputs.gpus is None:
        return code
    inputs = code.inputs
    assert inputs.gpus is not None
    kind = _bound_kind(tree, inputs.gpus, set())
    if kind != "machine" and _renumbered(tree, inputs.gpus):
        kind = "machine"
    positive = kind in (None, "count") and _bound_positive(tree, inputs.gpus)
    if kind is None and not positive:
        return code
    return strategy_expression(inputs.tf, inputs.gpus, list(inputs.guards), known_int=inputs.known_int, kind=kind,
                               positive=positive)


def _renumbered(tree: Tree, gpus: cst.BaseExpression) -> bool:
    """The script hands the same GPUs to `CUDA_VISIBLE_DEVICES` before the call
    (`os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, args.gpus))`): TensorFlow then
    numbers them 0..k-1, so the ids no longer name them; every visible GPU is the choice."""
    if gpus not in tree._order:
        return False
    spelled = re.compile(rf"(?<![\w.]){re.escape(code_of(gpus))}(?!\w)")
    for node in tree.all_nodes():
        if type(node) is not cst.Assign or len(node.targets) != 1 or tree.order(node) > tree.order(gpus):
            continue
        target = node.targets[0].target
        if not (isinstance(target, cst.Subscript) and code_of(target.value) == "os.environ"):
            continue
        key = target.slice[0].slice if len(target.slice) == 1 else None
        if (
            isinstance(key, cst.Index) and isinstance(key.value, cst.SimpleString)
            and key.value.evaluated_value == "CUDA_VISIBLE_DEVICES" and spelled.search(code_of(node.value))
        ):
            return True
    return False


def _split_text(node: cst.BaseExpression) -> cst.BaseExpression:
    """The text a `<text>.split(...)` splits, else the expression itself."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "split":
        return node.func.value
    return node


def _bound_positive(tree: Tree, node: cst.BaseExpression) -> bool:
    """Every value a name (or `self.attr`) can hold in the module is at least 1 (`n_gpus = 4`)."""
    if _at_least_one(node):
        return True
    if isinstance(node, cst.Name):
        values = _name_values(tree, node)
    elif isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        values = _self_attribute_values(tree, node)
    else:
        return False
    return bool(values) and all(v is not None and _at_least_one(v) for v in values)


def _at_least_one(node: cst.BaseExpression) -> bool:
    """A literal count of at least 1, or `len(<text>.split(...))` (a split has at least one part)."""
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value) >= 1
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len" and node.args:
        inner = node.args[0].value
        func = inner.func if isinstance(inner, cst.Call) else None
        return isinstance(func, cst.Attribute) and func.attr.value == "split"
    return False


_MORE_THAN_ONE = {("GreaterThan", 1), ("GreaterThanEqual", 2)}  # `n > 1`, `n >= 2`
_AT_MOST_ONE = {("LessThanEqual", 1), ("LessThan", 2)}  # `n <= 1`, `n < 2`
_MIRRORED = {"GreaterThan": "LessThan", "GreaterThanEqual": "LessThanEqual",
             "LessThan": "GreaterThan", "LessThanEqual": "GreaterThanEqual"}


def _more_than_one(gpus: cst.BaseExpression, guard: str) -> bool:
    """`guard` says "more than one GPU" of the count `gpus` (`n > 1`, `2 <= n`, `not (n <= 1)`)."""
    try:
        node = cst.parse_expression(guard)
    except cst.ParserSyntaxError:
        return False
    wanted = _MORE_THAN_ONE
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        node, wanted = node.expression, _AT_MOST_ONE
    if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1:
        return False
    left, target = node.left, node.comparisons[0]
    operator, right = type(target.operator).__name__, target.comparator
    if isinstance(left, cst.Integer) and not isinstance(right, cst.Integer) and operator in _MIRRORED:  # `1 < n`
        left, right, operator = right, left, _MIRRORED[operator]
    text = code_of(gpus)
    return code_of(left.with_changes(lpar=[], rpar=[])) == text and isinstance(right, cst.Integer) and (
        (operator, int(right.evaluated_value)) in wanted
    )


def _bound_kind(tree: Tree, node: cst.BaseExpression, seen: set[str]) -> str | None:
    """"machine", "count" or "list" when every value the expression can hold says so: a name's
    bindings (assignments, a parameter's default and the arguments its function's calls in this
    module pass), `self.attr`'s assignments in the class, `len(...)` of the machine's GPU list."""
    if machine_count(node) or machine_query(node):
        return "machine"  # a count, or the list of the machine's GPUs as the value of a `len(...)`
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len" and node.args:
        inner = node.args[0].value
        if _renumbered(tree, _split_text(inner)):  # `len(args.gpu_ids.split(","))`, the ids made visible
            return "machine"
        return "machine" if _bound_kind(tree, inner, seen) == "machine" else "count"  # (a length is a count)
    if isinstance(node, (cst.List, cst.Tuple)) and _all_ints(node):
        return "list"
    if isinstance(node, cst.ListComp):  # `[int(g) for g in args.gpus.split(",")]`: ids
        return "list"
    if surely_int(node):
        return "count"
    key = code_of(node)
    if key in seen or len(seen) > 12:
        return None
    seen.add(key)
    if isinstance(node, cst.Name):
        values = _name_values(tree, node)
    elif isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        values = _self_attribute_values(tree, node)
    elif isinstance(node, cst.Attribute):  # `args.gpus`: the argparse option of that name says
        kind = _option_kind(tree, node.attr.value)
        if kind is not None or not isinstance(node.value, cst.Name):
            return kind
        values = _class_attribute_values(tree, node.attr.value)  # `Config.GPU_COUNT`, `config.GPU_COUNT`
    elif isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):  # `CONFIG["gpus"]`
        values = _dict_key_values(tree, node)
    elif isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and not node.args:
        values = _returned_values(tree, node.func)  # `n_gpus = visible_gpus()`, a helper of this file
    else:
        return None
    kinds = {_bound_kind(tree, value, seen) if value is not None else None for value in values or [None]}
    return kinds.pop() if len(kinds) == 1 else None


def _returned_values(tree: Tree, name: cst.Name) -> list[cst.BaseExpression | None]:
    """What the module's one undecorated `def name():` with no parameters, bound nowhere else,
    returns: each `return`'s value (None for a bare `return`, where its end can be reached, or
    when `name` is no such helper)."""
    scope = tree.scopes.get(name)
    bindings = list(scope[name.value]) if scope is not None else []
    function = getattr(bindings[0], "node", None) if len(bindings) == 1 else None
    if not (
        isinstance(function, cst.FunctionDef) and isinstance(tree.parent(function), cst.Module)
        and not function.decorators and not function.params.params and not function.params.posonly_params
        and not isinstance(function.params.star_arg, cst.Param)
    ):
        return [None]
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    last = body[-1] if body else None
    if not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)):
        return [None]  # (the end of the body may be reached: None comes back)
    returns = []
    stack: list[cst.CSTNode] = list(body)
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(current, (cst.Yield, cst.Await)):
            return [None]
        if isinstance(current, cst.Return):
            returns.append(current.value)
        stack.extend(current.children)
    return returns or [None]


def _option_kind(tree: Tree, option: str) -> str | None:
    """"list" for an argparse option taking several values (`nargs`, `action="append"`), "count" for
    one declared `type=int` alone; None when no `add_argument` of this file declares it, or they disagree."""
    kinds: set[str | None] = set()
    for call in tree.all(cst.Call):
        assert isinstance(call, cst.Call)
        if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "add_argument"):
            continue
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        if _option_dest(call, keywords) != option:
            continue
        nargs, action, kind = keywords.get("nargs"), keywords.get("action"), keywords.get("type")
        # Any `nargs` but "?" gives a list (`nargs=1` too); so do the appending actions.
        optional = isinstance(nargs, cst.SimpleString) and nargs.evaluated_value == "?"
        appends = isinstance(action, cst.SimpleString) and action.evaluated_value in ("append", "extend")
        several = (nargs is not None and not optional) or appends
        if several:
            kinds.add("list")
        elif nargs is None and action is None and isinstance(kind, cst.Name) and kind.value == "int":
            kinds.add("count")
        else:
            kinds.add(None)
    return kinds.pop() if len(kinds) == 1 else None


def _option_dest(call: cst.Call, keywords: dict[str, cst.BaseExpression]) -> str | None:
    """The attribute an `add_argument` call sets: `dest=`, else its first long flag, else its name."""
    dest = keywords.get("dest")
    if isinstance(dest, cst.SimpleString) and isinstance(dest.evaluated_value, str):
        return dest.evaluated_value
    names = [a.value.evaluated_value for a in call.args if a.keyword is None and isinstance(a.value, cst.SimpleString)]
    texts = [n for n in names if isinstance(n, str)]
    longs = [n for n in texts if n.startswith("--")]
    chosen = (longs or texts)[0] if longs or texts else None
    return chosen.lstrip("-").replace("-", "_") if chosen is not None else None


def _dict_key_values(tree: Tree, node: cst.Subscript) -> list[cst.BaseExpression | None]:
    """What `CONFIG["gpus"]` can hold: the value each binding of `CONFIG` (a dict literal or
    `dict(gpus=...)`) gives that key; [None] where one does not say, or a statement assigns it."""
    index = node.slice[0].slice if len(node.slice) == 1 else None
    if not (isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString)):
        return [None]
    key = index.value.evaluated_value
    values: list[cst.BaseExpression | None] = []
    names = [cst.ensure_type(node.value, cst.Name)]
    bound = _name_values(tree, names[0])
    while any(isinstance(v, cst.Name) for v in bound) and len(names) < 4:
        # `def build(cfg): ... cfg["gpus"]` called as `build(CONFIG)`: the literal `CONFIG` is bound to
        names += [v for v in bound if isinstance(v, cst.Name)]
        bound = [w for v in bound for w in (_name_values(tree, v) if isinstance(v, cst.Name) else [v])]
    for value in bound:
        if isinstance(value, cst.Dict) and not any(isinstance(e, cst.StarredDictElement) for e in value.elements):
            given = [e.value for e in value.elements if isinstance(e, cst.DictElement)
                     and isinstance(e.key, cst.SimpleString) and e.key.evaluated_value == key]
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict":
            given = [a.value for a in value.args if a.keyword is not None and a.keyword.value == key]
        else:
            return [None]
        if len(given) != 1:
            return [None]
        values += given
    spelled = {f"{name.value}{code_of(node)[len(code_of(node.value)):]}" for name in names}
    for target in tree.all_nodes():
        if isinstance(target, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)) and code_of(target.target) in spelled:
            return [None]  # `CONFIG["gpus"] = ...` somewhere
    return values


def _name_values(tree: Tree, node: cst.Name) -> list[cst.BaseExpression | None]:
    """What `node` can hold: each binding's value (None where one is not a plain value)."""
    scope = tree.scopes.get(node)
    if scope is None:
        return [None]
    values: list[cst.BaseExpression | None] = []
    for assignment in scope[node.value]:
        target = getattr(assignment, "node", None)
        if isinstance(target, cst.Param):
            values += _parameter_values(tree, target)
            continue
        parent = tree.parent(target) if target is not None else None
        if isinstance(parent, cst.Element):
            values.append(_unpacked_value(tree, parent))  # `MAXLEN, VOCAB, NUM_GPU = 150, 50000, 2`
            continue
        assign = tree.parent(parent) if isinstance(parent, cst.AssignTarget) else None
        values.append(assign.value if isinstance(assign, cst.Assign) and len(assign.targets) == 1 else None)
    return values


def _unpacked_value(tree: Tree, element: cst.Element) -> cst.BaseExpression | None:
    """The value a tuple assignment gives the name at `element`'s place (`a, n = 1, 2`), when the
    two sides have as many plain elements; None otherwise."""
    targets = tree.parent(element)
    holder = tree.parent(targets) if isinstance(targets, (cst.Tuple, cst.List)) else None
    assign = tree.parent(holder) if isinstance(holder, cst.AssignTarget) else None
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1
            and isinstance(assign.value, (cst.Tuple, cst.List))):
        return None
    assert isinstance(targets, (cst.Tuple, cst.List))
    names, given = targets.elements, assign.value.elements
    if len(names) != len(given) or any(isinstance(e, cst.StarredElement) for e in [*names, *given]):
        return None
    return given[[id(e) for e in names].index(id(element))].value


def _parameter_values(tree: Tree, param: cst.Param) -> list[cst.BaseExpression | None]:
    """A parameter's default and what the calls of its function in this module pass for it."""
    values: list[cst.BaseExpression | None] = [param.default] if param.default is not None else []
    function = next((a for a in tree.ancestors(param) if isinstance(a, cst.FunctionDef)), None)
    if function is None:
        return [None]
    params = function.params
    positional = [*params.posonly_params, *params.params]
    index = next((i for i, p in enumerate(positional) if p is param), None)
    block = tree.parent(function)
    owner = tree.parent(block) if block is not None else None
    method = isinstance(owner, cst.ClassDef)
    names = {function.name.value}
    if isinstance(owner, cst.ClassDef) and function.name.value == "__init__":
        names = {owner.name.value}  # `Trainer(n_features, n_gpus=4)`
    calls = 0
    for call in tree.all(cst.Call):
        assert isinstance(call, cst.Call)
        callee = call.func.attr.value if isinstance(call.func, cst.Attribute) else (
            call.func.value if isinstance(call.func, cst.Name) else "")
        if callee not in names:
            continue
        calls += 1
        if any(a.star for a in call.args):
            return [None]
        keyword = next(
            (a.value for a in call.args if a.keyword is not None and a.keyword.value == param.name.value), None
        )
        if keyword is not None:
            values.append(keyword)
            continue
        plain = [a.value for a in call.args if a.keyword is None]
        slot = None if index is None else index - (1 if method else 0)  # `self` is not passed
        if slot is not None and 0 <= slot < len(plain):
            values.append(plain[slot])
    return values if values and (calls or param.default is not None) else [None]


def _self_attribute_values(tree: Tree, node: cst.Attribute) -> list[cst.BaseExpression | None]:
    """The values `self.<attr> = ...` assigns in the class around `node`."""
    owner = next((a for a in tree.ancestors(node) if isinstance(a, cst.ClassDef)), None)
    if owner is None:
        return [None]
    values: list[cst.BaseExpression | None] = []
    for assign in walk(owner):
        if not isinstance(assign, cst.Assign):
            continue
        for target in assign.targets:
            if code_of(target.target) == code_of(node):
                values.append(assign.value if len(assign.targets) == 1 else None)
    return values or [None]


def _class_attribute_values(tree: Tree, attr: str) -> list[cst.BaseExpression | None]:
    """What `attr` holds when the module sets it in class bodies (`class Config: GPU_COUNT = 2`,
    Mask R-CNN's configs): those values and any `<obj>.attr = ...`; [None] when no class sets it."""
    in_classes: list[cst.BaseExpression | None] = []
    elsewhere: list[cst.BaseExpression | None] = []
    for assign in findall(tree.module, cst.Assign):
        for target in assign.targets:
            value = assign.value if len(assign.targets) == 1 else None
            if isinstance(target.target, cst.Name) and target.target.value == attr:
                up = list(itertools.islice(tree.ancestors(assign), 3))  # line, block, class
                if len(up) == 3 and isinstance(up[2], cst.ClassDef):
                    in_classes.append(value)
            elif isinstance(target.target, cst.Attribute) and target.target.attr.value == attr:
                elsewhere.append(value)
    return in_classes + elsewhere if in_classes else [None]


def _guessed(tf: str, text: str, kind: str) -> str:
    """The finding for a `gpus` whose kind came from its name: what was assumed, and the other form."""
    if kind == "list?":
        taken, other = "a list of GPU ids", f'`{tf}.config.list_logical_devices("GPU")[:{text}]`'
        holds = "a count"
    else:
        taken, holds = "a count of GPUs", "GPU ids"
        other = f'`[{tf}.config.list_logical_devices("GPU")[i] for i in {text}]`'
    return (
        f"`gpus={text}` is taken for {taken}: its name says so, and no value it is given here proves it; if it holds "
        f"{holds}, pass {other} to `MirroredStrategy` instead."
    )


def _listed(tf: str, ids: str) -> str:
    """The machine's GPUs at `ids`: `MirroredStrategy(["/gpu:3"])` on a machine without GPU 3 hangs
    in `fit`; the index raises, as `multi_gpu_model` did."""
    return f'{tf}.distribute.MirroredStrategy([{tf}.config.list_logical_devices("GPU")[i] for i in {ids}])'


def _first_ids(ids: cst.List | cst.Tuple) -> int:
    """How many GPUs `ids` names when it is `0, 1, ..., k-1` (k, at least 2), else 0."""
    values = [int(e.value.value, 0) for e in ids.elements if isinstance(e.value, cst.Integer)]
    return len(values) if len(values) > 1 and values == list(range(len(values))) else 0


def _sliced(gpus: cst.BaseExpression) -> str:
    """`gpus` as a slice bound: parenthesised unless it is an atom (`n`, `args.gpus`, `cfg["n"]`, `f()`)."""
    text = code_of(gpus)
    atoms = (cst.Name, cst.Attribute, cst.Subscript, cst.Call, cst.Integer)
    return text if isinstance(gpus, atoms) or gpus.lpar else f"({text})"


def _all_ints(node: cst.List | cst.Tuple) -> bool:
    return bool(node.elements) and all(isinstance(e.value, cst.Integer) for e in node.elements)


def machine_count(node: cst.BaseExpression) -> bool:
    """`len(get_available_gpus())`, `len(tf.config.list_physical_devices("GPU"))`,
    `context.num_gpus()`: the number of GPUs the machine has, i.e. every GPU."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len":
        # `len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))`: the GPUs TensorFlow sees, i.e. every GPU;
        # not with a default for the unset variable (`.get(..., "0")`): then the script chose one GPU
        return len(node.args) == 1 and (
            machine_query(node.args[0].value) or (
                "CUDA_VISIBLE_DEVICES" in code_of(node.args[0].value) and not _env_default(node.args[0].value)
            )
        )
    return machine_query(node)


def _env_default(node: cst.BaseExpression) -> bool:
    """`os.environ.get("CUDA_VISIBLE_DEVICES", "0")`: one GPU (or a value not written here) for the
    unset variable, where the script then ran on one device, not on every GPU."""
    for call in findall(node, cst.Call):
        if not (isinstance(call.func, (cst.Attribute, cst.Name)) and len(call.args) > 1):
            continue
        if (call.func.attr if isinstance(call.func, cst.Attribute) else call.func).value not in ("get", "getenv"):
            continue
        default = call.args[1].value
        if not (isinstance(default, cst.SimpleString) and "," in str(default.evaluated_value)):
            return True
    return False


def machine_query(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.ListComp):  # `[d for d in device_lib.list_local_devices() if ...]`
        return any(machine_query(f.iter) for f in _comprehension_fors(node.for_in))
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return name in _MACHINE_QUERIES or bool(_MACHINE_QUERY.match(name))


def _comprehension_fors(first: cst.CompFor) -> list[cst.CompFor]:
    found = [first]
    while found[-1].inner_for_in is not None:
        inner = found[-1].inner_for_in
        assert inner is not None
        found.append(inner)
    return found


def count_or_list(gpus: cst.BaseExpression, guards: list[str], *, known_int: bool = False) -> str:
    """"count" when the code proves `gpus` an int (a literal, `len(...)`, arithmetic, argparse
    `type=int` via `known_int`, a guard comparing it with a number); else the guess from its
    name: "list?" (`GPU_IDS`, `gpu_list`, `devices`) or "count?" (`gpus`, `n_gpus`, `cfg["gpus"]`)."""
    if known_int or surely_int(gpus) or compared_in_guards(code_of(gpus), guards):
        return "count"
    if isinstance(gpus, (cst.List, cst.Tuple, cst.ListComp)):
        return "list"
    last = _last_name(gpus).lower().rstrip("_")
    return "list?" if last.endswith(_LIST_SUFFIXES) else "count?"


def _last_name(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Subscript) and len(node.slice) == 1:
        index = node.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            value = index.value.evaluated_value
            return value if isinstance(value, str) else ""
    return ""


def compared_in_guards(text: str, guards: list[str]) -> bool:
    """A guard orders `gpus` against a number (`gpus > 1`, `gpus % 2 == 0`): a list would raise there."""
    for guard in guards:
        try:
            tree = cst.parse_expression(guard)
        except cst.ParserSyntaxError:
            continue
        for node in walk(tree):
            if isinstance(node, cst.Comparison):
                operands = [node.left, *(c.comparator for c in node.comparisons)]
                ordered = any(
                    isinstance(c.operator, (cst.GreaterThan, cst.GreaterThanEqual, cst.LessThan, cst.LessThanEqual))
                    for c in node.comparisons
                )
                if ordered and any(code_of(o) == text for o in operands) and any(
                    isinstance(o, cst.Integer) for o in operands
                ):
                    return True
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Modulo, cst.Subtract)):
                if code_of(node.left) == text and isinstance(node.right, cst.Integer):
                    return True
    return False


def _branch(guards: list[str], single: str) -> Branch | None:
    """The guards as one `if` condition, each written as the script wrote it; a lone negated guard
    (`not (c)`, from an `else:` branch) becomes `if c:` choosing the default strategy, and so do
    only negated ones (the `else:` of an `elif` chain: `if a or b:`)."""
    if not guards:
        return None
    if len(guards) == 1:
        inner = _negated(guards[0])
        if inner is not None:
            return Branch(inner, multi_when_true=False, single=single)
        return Branch(guards[0], multi_when_true=True, single=single)
    inners = [_negated(g) for g in guards]
    if all(inner is not None for inner in inners):
        # the `else:` of an `if a: ... elif b: ...` chain: `if a or b:` chooses the default strategy,
        # the script's conditions as written, in its order (guards run from the call outwards)
        written = [_operand(inner) for inner in reversed(inners) if inner is not None]
        return Branch(" or ".join(written), multi_when_true=False, single=single)
    return Branch(" and ".join(_operand(g) for g in guards), multi_when_true=True, single=single)


def _negated(guard: str) -> str | None:
    """`c` for the codemod's `not (c)`; None for anything else."""
    try:
        node = cst.parse_expression(guard)
    except cst.ParserSyntaxError:
        return None
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not) and node.expression.lpar:
        return code_of(node.expression.with_changes(lpar=[], rpar=[]))
    return None


def _operand(guard: str) -> str:
    """`guard` as an operand of `and`: parenthesised when it is an `or`, a conditional or a lambda."""
    try:
        node = cst.parse_expression(guard)
    except cst.ParserSyntaxError:
        return f"({guard})"
    loose = isinstance(node, (cst.IfExp, cst.Lambda, cst.NamedExpr)) or (
        isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or)
    )
    return f"({guard})" if loose and not node.lpar else guard


_INT_CALLS = frozenset({"int", "len", "round"})


def surely_int(node: cst.BaseExpression, resolve: Callable[[cst.BaseExpression], bool] | None = None) -> bool:
    """An int whatever the script's variables hold: a literal, `int(...)`/`len(...)`, `getint(...)`, or
    arithmetic with an int (`n - 1`, `n // 2`: a list there fails in the old script too;
    `*` excepted, `[0] * 2` is a list)."""
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
        if node.func.value in {"min", "max"}:
            return any(surely_int(a.value, resolve) for a in node.args)
        return node.func.value in _INT_CALLS
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "getint":
        return True  # configparser's `cfg.getint("train", "gpus")` (a section's too) returns an int
    if isinstance(node, cst.UnaryOperation):
        return surely_int(node.expression, resolve)
    if isinstance(node, cst.IfExp):  # `int(sys.argv[1]) if len(sys.argv) > 1 else 2`
        return surely_int(node.body, resolve) and surely_int(node.orelse, resolve)
    if isinstance(node, cst.BinaryOperation) and not isinstance(node.operator, cst.Multiply):
        return surely_int(node.left, resolve) or surely_int(node.right, resolve)
    return resolve is not None and resolve(node)


# What the old function did without the argument: dropping one that said so changes nothing.
_DEFAULTS = {"cpu_merge": "True", "cpu_relocation": "False"}


def dropped_notes(dropped: list[str]) -> list[str]:
    """One line per dropped `cpu_merge` / `cpu_relocation` argument, saying why, for the report's
    line of the site (none for one that only restated the default, `cpu_merge=True`,
    `cpu_relocation=False`). Not a comment in the code: a reader of the migrated file never saw
    the argument, the reviewer of the diff reads the report."""
    notes = []
    for item in dropped:
        name, value = item.split("=", 1)
        if _DEFAULTS.get(name) == value.strip():
            continue
        why = _WHY_DROPPED.get(name, "MirroredStrategy has no such option")
        notes.append(f"dropped `{item}` ({why})")
    return notes

