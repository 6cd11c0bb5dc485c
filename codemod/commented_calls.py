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
from collections.abc import Iterable, Sequence

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
    alternatives = "|".join(map(re.escape, sorted(names, key=len, reverse=True)))
    call = re.compile(
        rf"^(?P<lead>#\s*)(?P<name>{alternatives})(?P<rest>\.(?:{'|'.join(sorted(RUNS))})\((?:(?!#).)*\)\s*)$"
    )
    return new.visit(_Renamed(call, re.compile(rf"(?<![\w.])(?:{alternatives})\b"), names))


class _Renamed(cst.CSTTransformer):
    """Each paragraph of comment lines (no blank line between) whose every line naming a wrapper is
    such a call: a commented-out block that also binds it (`# gpu_model = net` / `#
    gpu_model.fit(x)`) goes whole with stale_prose.py, never renamed line by line."""

    def __init__(self, call: re.Pattern[str], named: re.Pattern[str], names: dict[str, str]) -> None:
        super().__init__()
        self.call, self.named, self.names = call, named, names

    def _lines(self, lines: Sequence[cst.EmptyLine]) -> list[cst.EmptyLine]:
        out = list(lines)
        paragraphs: list[list[int]] = [[]]
        for k, line in enumerate(out):
            if line.comment is None:
                paragraphs.append([])
            else:
                paragraphs[-1].append(k)
        for paragraph in paragraphs:
            naming = [k for k in paragraph if self.named.search(out[k].comment.value)]  # type: ignore[union-attr]
            matches = [self.call.match(out[k].comment.value) for k in naming]  # type: ignore[union-attr]
            if not naming or not all(matches):
                continue
            for k, match in zip(naming, matches):
                assert match is not None and out[k].comment is not None
                value = f"{match['lead']}{self.names[match['name']]}{match['rest']}"
                out[k] = out[k].with_changes(comment=out[k].comment.with_changes(value=value))  # type: ignore[union-attr]
        return out

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> cst.CSTNode:  # type: ignore[override]
        node = super().on_leave(original_node, updated_node)
        if isinstance(node, cst.Module):
            return node.with_changes(header=self._lines(node.header), footer=self._lines(node.footer))
        if isinstance(node, cst.IndentedBlock):
            return node.with_changes(footer=self._lines(node.footer))
        lines = getattr(node, "leading_lines", None)
        if isinstance(node, cst.CSTNode) and lines:
            return node.with_changes(leading_lines=self._lines(lines))
        return node  # type: ignore[return-value]
