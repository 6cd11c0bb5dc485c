"""Turns `multi_gpu_model`'s `gpus` argument into a MirroredStrategy that never hangs.

`MirroredStrategy(devices=["/gpu:3"])` on a machine without GPU 3 hangs in `fit`, so the
emitted code asks TensorFlow which GPUs exist (`list_physical_devices`, which does not
initialise the runtime) and uses at most the requested ones; with none present it passes
`None`, i.e. TensorFlow's default devices (the GPUs, or the CPU).
"""

from __future__ import annotations

import libcst as cst

__all__ = ["strategy_expression", "dropped_notes"]

_WHY_DROPPED = {
    "cpu_merge": "MirroredStrategy merges nothing on a device, it all-reduces gradients",
    "cpu_relocation": "MirroredStrategy creates every variable on each replica device itself",
}


def _code(node: cst.BaseExpression) -> str:
    return cst.Module(body=[]).code_for_node(node)


def strategy_expression(tf: str, gpus: cst.BaseExpression | None, guards: list[str]) -> str:
    """Source of the `tf.distribute.MirroredStrategy(...)` call for a `gpus` argument.

    `guards` are conditions under which the legacy code used the parallel model; when one
    is false the old script ran on one device, so the count becomes 1 there.
    """
    guard = " and ".join(f"({g})" if len(guards) > 1 else g for g in guards)
    present = f'{tf}.config.list_physical_devices("GPU")'
    if gpus is None and not guard:
        return f"{tf}.distribute.MirroredStrategy()"
    if isinstance(gpus, (cst.List, cst.Tuple)) and not guard:
        ids = _code(gpus)
        return (
            f'{tf}.distribute.MirroredStrategy([f"/gpu:{{i}}" for i in {ids} if i < len({present})] or None)'
        )
    count = "None" if gpus is None else _code(gpus)
    if isinstance(gpus, (cst.List, cst.Tuple)):
        count = f"len({count})"
    if guard:
        count = f"{count} if {guard} else 1"
    return (
        f'{tf}.distribute.MirroredStrategy([f"/gpu:{{i}}" for i in range(len({present}))][:{count}] or None)'
    )


def dropped_notes(dropped: list[str]) -> list[str]:
    """One comment per dropped `cpu_merge` / `cpu_relocation` argument, saying why."""
    notes = []
    for item in dropped:
        name = item.split("=", 1)[0]
        why = _WHY_DROPPED.get(name, "MirroredStrategy has no such option")
        notes.append(f"# multi-gpu-codemod: dropped `{item}`: {why}.")
    return notes
