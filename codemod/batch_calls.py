"""`train_on_batch` / `test_on_batch` / `predict_on_batch` on a model a site would migrate.

Under MirroredStrategy Keras 3 hands every replica the whole batch given to these methods (8
inputs predict 16 rows; a training step sees each sample once per replica), so a site whose
model is used this way is not rewritten (fixers/strategy_scope.py reports it, MGPU203). Read-only:
this module only finds the calls.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ._tree import Tree, walk, walk_same_scope

__all__ = ["ON_BATCH", "EFFECT", "OnBatchCall", "on_batch_calls", "uses_after"]

ON_BATCH = {
    "train_on_batch": (
        "`{model}.fit(x, y, batch_size=len(x), epochs=1, verbose=0)` (one step over the whole batch; it "
        "returns a History: what `train_on_batch` returned is `h.history[\"loss\"][-1]`, and each metric "
        "is under its own name)"
    ),
    "test_on_batch": "`{model}.evaluate(x, y, batch_size=len(x), verbose=0)`",
    "predict_on_batch": "`{model}.predict(x, batch_size=len(x), verbose=0)`",
}
# What goes wrong with each, per GPU: said of any file's count (a "2 GPUs" in a file that asks
# for 4 reads as false, round 58, az04) and of any batch, not of the file's (reviewers read
# "an 8-sample batch" as a claim about theirs).
EFFECT = {
    "train_on_batch": "each step computes on every sample of the batch once per GPU",
    "test_on_batch": "every sample of the batch is evaluated once per GPU",
    "predict_on_batch": "`predict_on_batch` returns the rows of its inputs once per GPU",
}


@dataclass(frozen=True)
class OnBatchCall:
    """`receiver.method(...)` at `call`; `through` is the call passing the model to a function, if any."""

    call: cst.Call
    receiver: str
    method: str
    through: cst.Call | None = None


def on_batch_calls(tree: Tree, call: cst.CSTNode, receivers: set[str]) -> list[OnBatchCall]:
    """The `*_on_batch` calls on `receivers` after `call` in its function (for `self.` receivers:
    in the class's other methods too, and outside the class through its instances,
    `sr.discriminator`), on names bound to them (`dis = self.parallel_dis if ... else self.dis`),
    and inside module functions the model is passed to."""
    scope = tree.enclosing_scope_node(call)
    after = tree.order(call)
    body = scope.body if isinstance(scope, cst.FunctionDef) else scope
    found: list[OnBatchCall] = []
    nodes = uses_after(tree, scope, body, receivers, after)
    named = receivers | _aliases(tree, nodes, receivers) | _through_instances(tree, scope, receivers)
    for node in [*nodes, *_module_nodes(tree, scope, receivers)]:
        if isinstance(node, cst.Attribute) and node.attr.value in ON_BATCH and tree.code(node.value) in named:
            parent = tree.parent(node)
            if isinstance(parent, cst.Call) and parent.func is node:
                found.append(OnBatchCall(parent, tree.code(node.value), node.attr.value))
    found += _through_functions(tree, receivers, body, after)
    found += _through_returns(tree, scope, receivers)
    return found


def _through_returns(tree: Tree, scope: cst.CSTNode, receivers: set[str]) -> list[OnBatchCall]:
    """`model, parallel = build(2)` then `parallel.predict_on_batch(x)` in a caller, where `build`
    (the site's function) returns the model (`return model, parallel`): the caller's name holds
    the migrated model too. Each such call, naming the call the model came through."""
    if not isinstance(scope, cst.FunctionDef):
        return []
    returned: list[set[int] | None] = []  # per `return`: the positions holding a receiver (None: the whole value)
    for node in walk_same_scope(scope.body):
        if isinstance(node, cst.Return) and node.value is not None:
            value = node.value
            if isinstance(value, cst.Tuple):
                returned.append({i for i, e in enumerate(value.elements) if tree.code(e.value) in receivers})
            elif tree.code(value) in receivers:
                returned.append(None)
    if not returned:
        return []
    found: list[OnBatchCall] = []
    for call in tree.all(cst.Call):
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == scope.name.value):
            continue
        assign = tree.parent(call)
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and assign.value is call):
            continue
        target = assign.targets[0].target
        names: set[str] = set()
        for positions in returned:
            if positions is None and isinstance(target, cst.Name):
                names.add(target.value)
            elif positions is not None and isinstance(target, (cst.Tuple, cst.List)):
                names |= {tree.code(e.value) for i, e in enumerate(target.elements) if i in positions}
        if not names:
            continue
        caller = tree.enclosing_scope_node(call)
        body = caller.body if isinstance(caller, cst.FunctionDef) else caller
        for node in walk_same_scope(body):
            if (isinstance(node, cst.Attribute) and node.attr.value in ON_BATCH and tree.code(node.value) in names
                    and tree.order(node) > tree.order(call)):
                parent = tree.parent(node)
                if isinstance(parent, cst.Call) and parent.func is node:
                    found.append(OnBatchCall(parent, tree.code(node.value), node.attr.value, call))
    return found


def _aliases(tree: Tree, nodes: list[cst.CSTNode], receivers: set[str]) -> set[str]:
    """Names bound to a receiver, or to a choice between it and another model:
    `dis = self.parallel_dis if self.gpus > 1 else self.dis`."""
    found = set()
    for node in nodes:
        if not isinstance(node, cst.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0].target
        if not isinstance(target, cst.Name):
            continue
        value = node.value
        choices = [value.body, value.orelse] if isinstance(value, cst.IfExp) else [value]
        if any(tree.code(choice) in receivers for choice in choices):
            found.add(target.value)
    return found


def _owner(tree: Tree, scope: cst.CSTNode) -> cst.ClassDef | None:
    if not isinstance(scope, cst.FunctionDef):
        return None
    owner = tree.parent(tree.parent(scope) or scope)
    return owner if isinstance(owner, cst.ClassDef) else None


def _through_instances(tree: Tree, scope: cst.CSTNode, receivers: set[str]) -> set[str]:
    """`sr.discriminator` for the receiver `self.discriminator` when `sr = SuperRes(...)` (the
    class whose method holds the site) anywhere in the module: the same model, reached from outside."""
    owner = _owner(tree, scope)
    attributes = {r.split(".", 1)[1] for r in receivers if r.startswith("self.") and r.count(".") == 1}
    if owner is None or not attributes:
        return set()
    instances = {
        target.target.value for assign in walk(tree.module) if isinstance(assign, cst.Assign)
        and isinstance(assign.value, cst.Call) and isinstance(assign.value.func, cst.Name)
        and assign.value.func.value == owner.name.value
        for target in assign.targets if isinstance(target.target, cst.Name)
    }
    return {f"{instance}.{attribute}" for instance in instances for attribute in attributes}


def _module_nodes(tree: Tree, scope: cst.CSTNode, receivers: set[str]) -> list[cst.CSTNode]:
    """Every node outside the class that holds the site, where its instances are used."""
    owner = _owner(tree, scope)
    if owner is None or not any(r.startswith("self.") for r in receivers):
        return []
    inside = {id(n) for n in walk(owner)}
    return [n for n in walk(tree.module) if id(n) not in inside]


def uses_after(
    tree: Tree, scope: cst.CSTNode, body: cst.CSTNode, receivers: set[str], after: int
) -> list[cst.CSTNode]:
    """The nodes after the site in its function, then, for `self.` receivers, every node of the
    class's other methods (`self.model.train_on_batch` in `step` runs on the migrated model too)."""
    nodes = [n for n in walk_same_scope(body) if tree.order(n) >= after]
    if isinstance(scope, cst.Module):
        # a module-level model trained in the module's functions (`def train(): disc.train_on_batch(...)`),
        # where they read it as the global (no local of that name)
        roots = {r.split(".")[0] for r in receivers}
        for function in (n for n in walk(scope) if isinstance(n, cst.FunctionDef)):
            statements = function.body.body if isinstance(function.body, cst.IndentedBlock) else []
            inner = tree.scopes.get(statements[0]) if statements else None
            if inner is not None and not any(root in inner.assignments for root in roots):
                nodes += list(walk_same_scope(function.body))
    if any(r.startswith("self.") for r in receivers) and isinstance(scope, cst.FunctionDef):
        owner = tree.parent(tree.parent(scope) or scope)
        if isinstance(owner, cst.ClassDef):
            for method in owner.body.body:
                if isinstance(method, cst.FunctionDef) and method is not scope:
                    nodes += list(walk_same_scope(method.body))
    return nodes


def _through_functions(tree: Tree, receivers: set[str], body: cst.CSTNode, after: int) -> list[OnBatchCall]:
    """`train_step(parallel, x, y)` with `def train_step(m, x, y): m.train_on_batch(x, y)` in this
    module: the call inside the function runs on the migrated model too."""
    defs = {f.name.value: f for f in tree.all(cst.FunctionDef) if isinstance(f, cst.FunctionDef)}
    found: list[OnBatchCall] = []
    for node in walk_same_scope(body):
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and tree.order(node) >= after):
            continue
        function = defs.get(node.func.value)
        if function is None:
            continue
        params = [p.name.value for p in function.params.params]
        for position, arg in enumerate(node.args):
            if arg.keyword is not None or arg.star or position >= len(params) or tree.code(arg.value) not in receivers:
                continue
            for inner in walk_same_scope(function.body):
                if (
                    isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute)
                    and isinstance(inner.func.value, cst.Name) and inner.func.value.value == params[position]
                    and inner.func.attr.value in ON_BATCH
                ):
                    found.append(OnBatchCall(inner, params[position], inner.func.attr.value, node))
    return found
