"""Turns `multi_gpu_model`'s `gpus` argument into a MirroredStrategy that never hangs.

`MirroredStrategy(devices=["/gpu:3"])` on a machine without GPU 3 hangs in `fit`, so the
emitted code asks TensorFlow which GPUs exist (`list_physical_devices`, which does not
initialise the runtime) and uses at most the requested ones; with none present it passes
`None`, i.e. TensorFlow's default devices (the GPUs, or the CPU).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ._tree import code_of

__all__ = ["strategy_expression", "dropped_notes", "surely_int"]

_WHY_DROPPED = {
    "cpu_merge": "MirroredStrategy merges nothing on a device, it all-reduces gradients",
    "cpu_relocation": "MirroredStrategy creates every variable on each replica device itself",
}


def strategy_expression(tf: str, gpus: cst.BaseExpression | None, guards: list[str], *, known_int: bool = False) -> str:
    """Source of the `tf.distribute.MirroredStrategy(...)` call for a `gpus` argument.

    `guards` are conditions under which the legacy code used the parallel model; when one
    is false the old script ran on one device, so the count becomes 1 there.
    """
    guard = " and ".join(f"({g})" if len(guards) > 1 else g for g in guards)
    present = f'{tf}.config.list_physical_devices("GPU")'
    if gpus is None and not guard:
        return f"{tf}.distribute.MirroredStrategy()"
    if isinstance(gpus, (cst.List, cst.Tuple)) and not guard:
        ids = code_of(gpus)
        return (
            f'{tf}.distribute.MirroredStrategy([f"/gpu:{{i}}" for i in {ids} if i < len({present})] or None)'
        )
    count = "None" if gpus is None else code_of(gpus)
    if isinstance(gpus, (cst.List, cst.Tuple)):
        count = f"len({count})"
    elif gpus is not None and not known_int and not surely_int(gpus):
        # A variable (`gpus=GPU_IDS`, `args.gpus`) may hold a count or a list of ids: the
        # emitted code takes either, evaluating the expression once.
        value = f"{count} if {guard} else 1" if guard else count
        return (
            f'{tf}.distribute.MirroredStrategy([f"/gpu:{{i}}" for g in [{value}] '
            f"for i in (g if isinstance(g, (list, tuple)) else range(g)) if i < len({present})] or None)"
        )
    if guard:
        count = f"{count} if {guard} else 1"
    return (
        f'{tf}.distribute.MirroredStrategy([f"/gpu:{{i}}" for i in range(len({present}))][:{count}] or None)'
    )


_INT_CALLS = frozenset({"int", "len", "round"})


def surely_int(node: cst.BaseExpression, resolve: Callable[[cst.BaseExpression], bool] | None = None) -> bool:
    """An int whatever the script's variables hold: a literal, `int(...)`/`len(...)`, or
    arithmetic with an int (`n - 1`, `n // 2`: a list there fails in the old script too;
    `*` excepted, `[0] * 2` is a list)."""
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
        if node.func.value in {"min", "max"}:
            return any(surely_int(a.value, resolve) for a in node.args)
        return node.func.value in _INT_CALLS
    if isinstance(node, cst.UnaryOperation):
        return surely_int(node.expression, resolve)
    if isinstance(node, cst.BinaryOperation) and not isinstance(node.operator, cst.Multiply):
        return surely_int(node.left, resolve) or surely_int(node.right, resolve)
    return resolve is not None and resolve(node)


def dropped_notes(dropped: list[str]) -> list[str]:
    """One comment per dropped `cpu_merge` / `cpu_relocation` argument, saying why."""
    notes = []
    for item in dropped:
        name = item.split("=", 1)[0]
        why = _WHY_DROPPED.get(name, "MirroredStrategy has no such option")
        notes.append(f"# multi-gpu-codemod: dropped `{item}`: {why}.")
    return notes
