"""Rewrites TF 1.x `tf.contrib.distribute` strategies (`MirroredStrategy(num_gpus=N)`...) to `tf.distribute`.

`tf.contrib` is gone from current TensorFlow and `MirroredStrategy` no longer takes `num_gpus`:
`num_gpus=N` / `num_gpus_per_worker=N` / a literal `/gpu:K` device list become the gpus fixer's
never-hang device expression (at most the requested GPUs among those present); `OneDeviceStrategy`
maps one to one; strategies without an exact current equivalent are reported (MGPU601).
"""

from __future__ import annotations

from typing import Final

import re

import libcst as cst

from .._tree import Tree, code_of, dotted_name
from ..fix_context import FixContext
from ..strategy_expression import strategy_expression

__all__ = ["CODES", "fix", "convert", "strategy_kind"]

# The finding codes this stage reports (MIGRATION.md, "Finding codes").
CODES: Final = frozenset({"MGPU601", "MGPU605"})

_CONTRIB = ("tensorflow.contrib.distribute.",)
_TF1 = ("tensorflow.distribute.", "tensorflow.compat.v1.distribute.")
_GPU_DEVICE = re.compile(r"^/?(device:)?gpu:(\d+)$", re.IGNORECASE)
_CPU_DEVICE = re.compile(r"^/?(device:)?cpu:0$", re.IGNORECASE)
_COUNT_KEYWORDS = ("num_gpus", "num_gpus_per_worker")
_NO_MAPPING = {
    "CollectiveAllReduceStrategy": (
        "`tf.distribute.MultiWorkerMirroredStrategy()` replaces it, but it always uses every local GPU "
        "(the contrib default `num_gpus_per_worker=0` meant the CPU); create it first thing in the script, "
        "limit GPUs with `tf.config.set_visible_devices`, and see MIGRATION.md, \"Going multi-machine\""
    ),
    "MultiWorkerMirroredStrategy": (
        "use `tf.distribute.MultiWorkerMirroredStrategy()` (no GPU-count argument: it uses every local GPU; "
        "limit them with `tf.config.set_visible_devices`); see MIGRATION.md, \"Going multi-machine\""
    ),
    "ParameterServerStrategy": (
        "use `tf.distribute.experimental.ParameterServerStrategy(cluster_resolver)` with a "
        "`ClusterCoordinator`; the training loop changes, see the TensorFlow parameter-server guide"
    ),
    "TPUStrategy": "use `tf.distribute.TPUStrategy(resolver)` after `tf.tpu.experimental.initialize_tpu_system`",
}


def strategy_kind(tree: Tree, call: cst.Call) -> str | None:
    """`MirroredStrategy`, `OneDeviceStrategy`... for a legacy strategy constructor call, else None."""
    for qname in tree.qualified_names(call.func):
        if qname.startswith(_CONTRIB) and qname.endswith("Strategy"):
            return qname[len(_CONTRIB[0]):]
        if qname.startswith(_TF1) and qname.rsplit(".", 1)[-1] == "MirroredStrategy":
            if any(a.keyword is not None and a.keyword.value in _COUNT_KEYWORDS for a in call.args):
                return "MirroredStrategy"
    return None


def convert(ctx: FixContext, call: cst.Call) -> tuple[str | None, str]:
    """(source of the current strategy call, "") or (None, why it has no exact mapping)."""
    kind = strategy_kind(ctx.tree, call) or ""
    name = ctx.tree.code(call.func)
    if any(a.star for a in call.args):
        target = f"`tf.distribute.{kind}`" if kind else "the `tf.distribute` strategy"
        return None, f"`{name}` is called with */** arguments; create {target} by hand (see MIGRATION.md)."
    if kind in _NO_MAPPING:
        return None, f"`{name}` has no exact equivalent in current TensorFlow: {_NO_MAPPING[kind]}."
    positional = [a.value for a in call.args if a.keyword is None]
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    tf = ctx.tf_name()
    if kind == "OneDeviceStrategy":
        device = positional[0] if positional else keywords.pop("device", None)
        if device is None or len(positional) > 1 or keywords:
            return (
                None,
                f"`{name}` is called with arguments the codemod does not know; write "
                "`tf.distribute.OneDeviceStrategy(device)` by hand.",
            )
        return f"{tf}.distribute.OneDeviceStrategy({code_of(device)})", ""
    if kind != "MirroredStrategy":
        return (
            None,
            f"`{name}` is not a strategy the codemod knows; replace it with a `tf.distribute` strategy by hand.",
        )
    devices = positional[0] if positional else keywords.pop("devices", None)
    counts = [keywords.pop(k) for k in _COUNT_KEYWORDS if k in keywords]
    if len(positional) > 1 or keywords or (devices is not None and counts) or len(counts) > 1:
        extra = sorted(keywords) or ["devices and a GPU count"]
        return None, (
            f"`{name}` is called with {', '.join(extra)}, which current `tf.distribute.MirroredStrategy` "
            "does not take the same way; write `tf.distribute.MirroredStrategy()` (optionally with "
            "`cross_device_ops=tf.distribute.NcclAllReduce()` or `HierarchicalCopyAllReduce()`) by hand."
        )
    if devices is not None:
        return _devices(tf, name, devices)
    if not counts or (isinstance(counts[0], cst.Name) and counts[0].value == "None"):
        return f"{tf}.distribute.MirroredStrategy()", ""
    count = counts[0]
    if isinstance(count, cst.Integer) and count.evaluated_value == 0:
        return f'{tf}.distribute.MirroredStrategy(["/cpu:0"])', ""  # contrib: 0 GPUs meant the CPU
    # num_gpus is a count, never a list of ids (contrib checked it).
    return strategy_expression(tf, count, [], known_int=True), ""


def _devices(tf: str, name: str, devices: cst.BaseExpression) -> tuple[str | None, str]:
    strings: list[str] = []
    if isinstance(devices, (cst.List, cst.Tuple)):
        for element in devices.elements:
            if not isinstance(element.value, cst.SimpleString):
                strings = []
                break
            strings.append(str(element.value.evaluated_value).strip())
    if strings and all(_CPU_DEVICE.match(s) for s in strings):
        return f"{tf}.distribute.MirroredStrategy({code_of(devices)})", ""
    ids = [_GPU_DEVICE.match(s) for s in strings]
    if strings and all(ids):
        listed = cst.parse_expression("[" + ", ".join(str(int(i.group(2))) for i in ids if i) + "]")
        return strategy_expression(tf, listed, []), ""
    return None, (
        f"`{name}` gets a device list the codemod cannot read; `tf.distribute.MirroredStrategy(devices)` "
        "hangs on devices that do not exist: pass GPUs this machine has, e.g. "
        '`tf.config.list_logical_devices("GPU")[:n]`.'
    )


def fix(ctx: FixContext) -> None:
    tree = ctx.tree
    found = False
    lines: list[str] | None = None  # the source's lines, read once a call is replaced
    for call in tree.all(cst.Call):
        assert isinstance(call, cst.Call)
        if strategy_kind(tree, call) is None:
            continue
        config = _feeds_estimator(tree, call)
        if config is not None:
            ctx.report(call, "MGPU605", (
                f"`{tree.code(call.func)}` feeds `{tree.code(config.func)}` (line {tree.position(config)[0]}) of a "
                "`tf.estimator` model: `tf.estimator` is gone in TensorFlow 2.16 and later, so replacing the strategy "
                "alone would not make this file run. Port the model function to a Keras model built and compiled "
                "under `tf.distribute.MirroredStrategy().scope()` and train it with `fit` (see MIGRATION.md, "
                "\"Estimator: model_to_estimator with train_distribute\"), or stay on TensorFlow 2.15 with "
                "`tf.distribute.MirroredStrategy()` in place of this call; it is left as it is."
            ))
            continue
        found = True
        expression, problem = convert(ctx, call)
        if expression is None:
            ctx.report(call, "MGPU601", problem)
        else:
            if lines is None:
                lines = tree.module.code.splitlines()
            ctx.plan.nodes[id(call)] = cst.parse_expression(_laid_out(tree, call, expression, lines))
    if found:
        _drop_contrib_imports(ctx)


def _laid_out(tree: Tree, call: cst.Call, expression: str, lines: list[str]) -> str:
    """`expression` as it replaces `call` in place: on the call's line when that line stays within
    100 columns (or the file's widest line), else with its one argument on a line of its own
    (black's shape; libcst keeps continuation lines relative to the statement's block)."""
    limit = max([100, *(_width(line) for line in lines)])
    line, column = tree.position(call)
    original = tree.code(call)
    text = lines[line - 1] if line <= len(lines) else ""
    before = text[:column - 1]
    after = "" if "\n" in original else text[column - 1 + len(original):]
    if _width(before + expression + after) <= limit:
        return expression
    node = cst.parse_expression(expression)
    if not (isinstance(node, cst.Call) and len(node.args) == 1 and node.args[0].keyword is None):
        return expression
    unit = tree.module.default_indent
    return f"{code_of(node.func)}(\n{unit}{code_of(node.args[0].value)}\n)"


def _width(line: str) -> int:
    return len(line.expandtabs(4))


def _feeds_estimator(tree: Tree, call: cst.Call) -> cst.Call | None:
    """The `RunConfig(train_distribute=...)` this strategy call reaches (directly, or through the
    name it is assigned to), when no `model_to_estimator` in the file (fixers/estimator.py
    rewrites that pattern whole) turns it into Keras code."""
    if any(dotted_name(c.func).endswith("model_to_estimator") for c in tree.all(cst.Call) if isinstance(c, cst.Call)):
        return None
    names = {tree.code(call)}
    parent = tree.parent(call)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
        names.add(tree.code(parent.targets[0].target))
    for config in tree.all(cst.Call):
        assert isinstance(config, cst.Call)
        if not dotted_name(config.func).endswith("RunConfig"):
            continue
        for arg in config.args:
            if arg.keyword is not None and arg.keyword.value.endswith("_distribute") and tree.code(arg.value) in names:
                return config
    return None


def _drop_contrib_imports(ctx: FixContext) -> None:
    """contrib imports fail on current TensorFlow: dropped once nothing uses them any more."""
    for node in ctx.tree.all(cst.Import, cst.ImportFrom):
        if isinstance(node, cst.ImportFrom) and node.module is not None and not node.relative:
            module = code_of(node.module)
            if not isinstance(node.names, cst.ImportStar) and (
                module == "tensorflow.contrib.distribute" or module == "tensorflow.contrib"
            ):
                for alias in node.names:
                    name = code_of(alias.name)
                    if module == "tensorflow.contrib" and name != "distribute":
                        continue
                    asname = alias.evaluated_alias
                    ctx.plan.remove_imports.append((module, name, asname))
        elif isinstance(node, cst.Import):
            for alias in node.names:
                if code_of(alias.name) == "tensorflow.contrib.distribute" and alias.asname is not None:
                    ctx.plan.remove_imports.append(("tensorflow.contrib.distribute", None, alias.evaluated_alias))
