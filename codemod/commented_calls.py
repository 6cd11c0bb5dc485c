"""Commented-out training on the removed wrapper reads the model, as the live call now does.

`parallel_model.fit_generator(train, epochs=20)` becomes `model.fit_generator(train, epochs=20)`;
the same line commented out, `# parallel_model.fit_generator(train, epochs=20)`, is the author's
note of how to run it. Deleted, the note is lost; left, it names a model that no longer exists
(round 64: bl13, bl17, bl18). So a comment that is only such a call, on the wrapper's name the
migration removed (`fit`, `fit_generator`, `evaluate`, `predict` and their generator forms), names
the model the call now trains. Anything else commented out on the wrapper (`# parallel =
multi_gpu_model(...)`, `# parallel.save(p)  # don't!`) is left to stale_prose.py, which drops it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import libcst as cst

from ._tree import RUNS, walk

__all__ = ["renamed"]


def renamed(
    new: cst.Module, pairs: Iterable[tuple[str, str]], plain: Iterable[tuple[str, str]] = ()
) -> cst.Module:
    """`new` with `# <wrapper>.fit(...)` read `# <template>.fit(...)` for each (template, wrapper)
    pair whose wrapper name the migrated code no longer has; `plain`: the (old, new) names the
    templates took since (template_names.py: `template` read as `model`)."""
    present = {n.value for n in walk(new) if isinstance(n, cst.Name)}
    now = dict(plain)
    names = {
        wrapper: now.get(template, template) for template, wrapper in pairs
        if wrapper not in present and now.get(template, template) in present and template != wrapper
    }
    if not names:
        return new
    call = re.compile(
        rf"^(?P<lead>#\s*)(?P<name>{'|'.join(map(re.escape, sorted(names, key=len, reverse=True)))})"
        rf"(?P<rest>\.(?:{'|'.join(sorted(RUNS))})\((?:(?!#).)*\)\s*)$"
    )
    return new.visit(_Renamed(call, names))


class _Renamed(cst.CSTTransformer):
    def __init__(self, call: re.Pattern[str], names: dict[str, str]) -> None:
        super().__init__()
        self.call, self.names = call, names

    def leave_Comment(self, original_node: cst.Comment, updated_node: cst.Comment) -> cst.Comment:
        match = self.call.match(updated_node.value)
        if match is None:
            return updated_node
        return updated_node.with_changes(value=f"{match['lead']}{self.names[match['name']]}{match['rest']}")
