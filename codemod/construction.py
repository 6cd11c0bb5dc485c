"""What builds a model: the statements before it that make the layers, tensors and optimizers it uses.

A strategy's scope must cover every statement that creates variables the model or its `compile`
uses; plain values (`num_classes = len(labels)`, parsed arguments) stay outside it.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from ._tree import Block, Tree, bound_names, findall, memoized

__all__ = [
    "MODEL_PARTS",
    "construction_start",
    "dependency_statements",
    "fed_data",
    "is_alias",
    "loads_data",
    "makes_layers",
    "object_reads",
    "outer_construction",
    "plain_uses",
    "stacked_arguments",
    "stacked_on",
]

# Calls that compute plain values, not layers: names bound by them do not drag their
# statement under the scope (keeps `num_classes = len(labels)` outside).
_VALUE_CALLS = {
    "len", "int", "float", "str", "bool", "range", "list", "tuple", "dict", "set", "sorted",
    "min", "max", "sum", "abs", "round", "print", "open", "getattr", "zip", "enumerate",
    "EasyDict", "edict",
}
# Modules and settings objects whose methods compute values (`np.load(...)`, `args.get(...)`).
_VALUE_ROOTS = {
    "np", "numpy", "os", "sys", "argparse", "parser", "args", "pd", "json", "math", "random", "time", "glob",
    "config", "cfg", "FLAGS", "flags", "yaml", "pickle", "configparser", "csv", "re", "shutil", "logging",
    "datetime",
}
# Methods that return settings or text whatever they are called on (`ap.parse_args()`,
# `'{}'.format(n)`): they create no variables.
_VALUE_METHODS = {
    "parse_args", "parse_known_args", "add_argument", "add_argument_group", "ArgumentParser",
    "format", "join", "split", "strip", "replace", "lower", "upper", "startswith", "endswith",
    # reductions and conversions of data (`ratings.user.max() + 1`, `df.label.nunique()`)
    "max", "min", "sum", "mean", "std", "nunique", "unique", "astype", "tolist", "item", "keys", "values",
    "items",
}
_IMPORTS = (cst.Import, cst.ImportFrom)
# Model methods whose arguments are data, and the keywords that carry it.
_FEEDING_METHODS = {
    "fit", "fit_generator", "evaluate", "evaluate_generator", "predict", "predict_generator",
    "train_on_batch", "test_on_batch", "predict_on_batch",
}
_DATA_KEYWORDS = {"x", "y", "validation_data", "generator", "sample_weight"}
# Methods that put another model or layer inside the model they are called on.
_STACKING_METHODS = {"add"}
# Attributes through which a model hands its layers/tensors to another model.
MODEL_PARTS = {"output", "outputs", "input", "inputs", "layers", "get_layer", "get_output_at", "get_input_at"}


@memoized
def makes_layers(value: cst.CSTNode) -> bool:
    """True unless every call in `value` is a plain-value call (`len(...)`, `np.load(...)`...)."""
    calls = findall(value, cst.Call)
    if not calls:
        return False
    for call in calls:
        assert isinstance(call, cst.Call)
        func = call.func
        root = func
        while isinstance(root, (cst.Attribute, cst.Call, cst.Subscript)):
            root = root.value if not isinstance(root, cst.Call) else root.func
        name = root.value if isinstance(root, cst.Name) else ""
        if isinstance(func, cst.Name) and name in _VALUE_CALLS:
            continue
        if isinstance(func, cst.Attribute) and (name in _VALUE_ROOTS or func.attr.value in _VALUE_METHODS):
            continue
        if isinstance(func, cst.Name) and func.value in _VALUE_METHODS:
            continue
        return True
    return False


def construction_start(tree: Tree, block: Block, j: int) -> int:
    """First statement of the template's construction: follows the layers/tensors it uses."""
    start = j
    wanted = plain_uses(block.body[j]) | object_reads(block.body[j])
    for k in range(j - 1, -1, -1):
        statement = block.body[k]
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) or findall(statement, _IMPORTS):
            continue
        names = bound_names(statement) & wanted
        if names and (makes_layers(statement) or is_alias(statement)) and not loads_data(tree, statement):
            start = k
            wanted |= plain_uses(statement) | object_reads(statement)
    return start


def loads_data(tree: Tree, statement: cst.BaseStatement) -> bool:
    """`x, y, n_classes = load(path)` where `x` or `y` is later fed to `fit`/`predict`: a statement
    that binds training data loads it; the sizes it also returns are plain values, not layers."""
    return bool(bound_names(statement) & fed_data(tree.module)) and not is_alias(statement)


@memoized
def fed_data(module: cst.CSTNode) -> set[str]:
    """Names given as data to a model (`model.fit(x_train, y_train, validation_data=(x_val,
    y_val))`, `model.predict(x=batch)`), anywhere in `module`."""
    names: set[str] = set()
    for call in findall(module, cst.Call):
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in _FEEDING_METHODS):
            continue
        for arg in call.args:
            if arg.keyword is None or arg.keyword.value in _DATA_KEYWORDS:
                value = arg.value
                parts = [e.value for e in value.elements] if isinstance(value, (cst.List, cst.Tuple)) else [value]
                names |= {part.value for part in parts if isinstance(part, cst.Name)}
    return names


def stacked_on(tree: Tree, block: Block, j: int) -> list[cst.BaseStatement]:
    """The statements after `block.body[j]` (until one rebinds what it built) that stack models or
    layers on it: `autoencoder.add(encoder)`, `for layer in base.layers: model.add(layer)`. What
    they add is part of the model as much as the arguments of `Sequential([encoder, decoder])`."""
    built = _assigned_codes(tree, block.body[j])
    if not built:
        return []
    found: list[cst.BaseStatement] = []
    for statement in block.body[j + 1:]:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        if _stacking_calls(tree, statement, built):
            found.append(statement)
        if _assigned_codes(tree, statement) & built:
            break
    return found


def stacked_arguments(tree: Tree, statement: cst.CSTNode, template: str) -> list[cst.BaseExpression]:
    """What `statement` stacks on `template`: `encoder` in `template.add(encoder)`."""
    return [arg.value for call in _stacking_calls(tree, statement, {template}) for arg in call.args]


def _stacking_calls(tree: Tree, statement: cst.CSTNode, built: set[str]) -> list[cst.Call]:
    """`model.add(...)` calls under `statement` whose receiver is one of `built`."""
    return [
        call for call in findall(statement, cst.Call)
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in _STACKING_METHODS
        and tree.code(call.func.value) in built
    ]


def _assigned_codes(tree: Tree, statement: cst.CSTNode) -> set[str]:
    """What a statement assigns, as written: `model`, `self.model`."""
    return {
        tree.code(target.target) for assign in findall(statement, cst.Assign) for target in assign.targets
        if isinstance(target.target, (cst.Name, cst.Attribute))
    }


def is_alias(statement: cst.CSTNode) -> bool:
    """`serial = net`, `self._original_model = self.model`: one name passed on under another (not
    `MODEL = None`, a constant)."""
    if not m.matches(statement, m.SimpleStatementLine(body=[m.Assign()])):
        return False
    value = cst.ensure_type(cst.ensure_type(statement, cst.SimpleStatementLine).body[0], cst.Assign).value
    if isinstance(value, cst.Name):
        return value.value not in ("None", "True", "False")
    return m.matches(value, m.Attribute(value=m.Name("self"), attr=m.Name()))


def outer_construction(tree: Tree, block: Block, start: int, j: int, template: str) -> list[cst.BaseStatement]:
    """Statements in the blocks around a construction made inside an `if`/`try`/`with` that build
    what it uses (`inp = Input(...)` above an `if` whose branch builds `Model(inp, out)`), or an
    earlier template the branch may not replace (`model = Model(...)` above a `try` that reloads it).
    Variables they create must exist under the scope too."""
    wanted = {template}
    for statement in block.body[start:j + 1]:
        wanted |= plain_uses(statement) | object_reads(statement)
    found: list[cst.BaseStatement] = []
    for outer, index in tree.block_chain(block.body[start])[1:]:
        for k in range(index - 1, -1, -1):
            statement = outer.body[k]
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) or findall(statement, _IMPORTS):
                continue
            if (
                bound_names(statement) & wanted
                and (makes_layers(statement) or is_alias(statement))
                and not loads_data(tree, statement)
            ):
                found.append(statement)
                wanted |= plain_uses(statement) | object_reads(statement)
    return found


@memoized
def plain_uses(node: cst.CSTNode) -> set[str]:
    """Names used bare (not `args.x`), as call arguments or callees, or assigned on (`serial =
    net`): where layers/tensors flow."""
    names = set()
    for call in findall(node, cst.Call):
        for arg in call.args:
            names |= {n.value for n in findall(arg.value, cst.Name) if not _is_attr_value(arg.value, n)}
        if isinstance(call.func, cst.Name):
            names.add(call.func.value)
    for assign in findall(node, cst.Assign):
        if isinstance(assign.value, cst.Name):
            names.add(assign.value.value)
    return names


@memoized
def object_reads(node: cst.CSTNode) -> set[str]:
    """Names whose model parts are read (`backbone.output`, `base.layers[-1]`,
    `enc.get_layer('x')`), or that are stacked into a model (`model.add(encoder)`,
    `self.model.add(self.encoder)`, given as `self.encoder`): the model they name owns layers the
    template uses. Data read the same way (`x_train.shape`) is not followed."""
    names = set()
    for attribute in findall(node, cst.Attribute):
        if not isinstance(attribute.value, cst.Name):
            continue
        root = attribute.value.value
        if root not in _VALUE_ROOTS and attribute.attr.value in MODEL_PARTS:
            names.add(root)
    for call in findall(node, cst.Call):
        stacked = _stacked_part(call)
        if stacked is not None:
            names.add(stacked)
    return names


def _stacked_part(call: cst.Call) -> str | None:
    """`encoder` in `model.add(encoder)`, `self.encoder` in `self.model.add(self.encoder)`: one
    positional argument of `.add` on a model's name (not `tf.add(a, b)`, not `np`, `args`...)."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in _STACKING_METHODS):
        return None
    receiver = func.value
    if isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name) and receiver.value.value == "self":
        pass
    elif not (isinstance(receiver, cst.Name) and receiver.value not in _VALUE_ROOTS):
        return None
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    value = call.args[0].value
    if isinstance(value, cst.Name):
        return value.value
    if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and value.value.value == "self":
        return f"self.{value.attr.value}"
    return None


def _is_attr_value(root: cst.CSTNode, name: cst.Name) -> bool:
    """`args.x` or `cfg['classes']`: a setting read from `name`, not a layer or tensor flowing."""
    for node in findall(root, (cst.Attribute, cst.Subscript)):
        value = node.value
        if not isinstance(value, cst.Name) or value.value != name.value:
            continue
        if isinstance(node, cst.Attribute):
            return True
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) and isinstance(
            node.slice[0].slice.value, cst.SimpleString
        ):
            return True
    return False


def dependency_statements(tree: Tree, statement: cst.BaseStatement, call: cst.Call) -> list[cst.BaseStatement]:
    """Statements before a compile, in its block, that build the optimizer/metrics it is given
    (not a plain value it reads: `cfg = load_config(path)` for `Adam(lr=cfg["lr"])`)."""
    from .devices import creates_no_variables  # (devices.py reads this module's makes_layers)

    wanted = set()
    for arg in call.args:
        wanted |= _value_names(arg.value)
    found = []
    # Climbing out of the `if`/`try` the compile sits in: `opt = Adam()` above the `if` counts too.
    for block, index in tree.block_chain(statement):
        for k in range(index - 1, -1, -1):
            candidate = block.body[k]
            if isinstance(candidate, (cst.FunctionDef, cst.ClassDef)):
                continue
            if (
                bound_names(candidate) & wanted
                and makes_layers(candidate)
                and not creates_no_variables(tree, candidate)
                and not findall(candidate, _IMPORTS)
            ):
                found.append(candidate)
                wanted |= _value_names(candidate)
    return found


def _value_names(node: cst.CSTNode) -> set[str]:
    """Names `node` reads as values: not a keyword argument's name (`lr` in `Adam(lr=best['lr'])`,
    which a loop `for lr in ...` binding `lr` has nothing to do with) nor an attribute's."""
    skipped = {id(a.keyword) for a in findall(node, cst.Arg) if isinstance(a, cst.Arg) and a.keyword is not None}
    skipped |= {id(a.attr) for a in findall(node, cst.Attribute) if isinstance(a, cst.Attribute)}
    return {n.value for n in findall(node, cst.Name) if isinstance(n, cst.Name) and id(n) not in skipped}
