"""Which comments describe code the migration removes, and go with it.

The codemod keeps every comment it does not need to touch. These it must: they describe the
old multi-GPU mechanics that are gone after the rewrite, and would now say something false.

- CPU placement: a comment on a dissolved `with tf.device('/cpu:0'):` block (above it, on its
  line, above its first statement) or on the removed call (`# merge outputs on the CPU as well`)
  that mentions the CPU or the host ("build the template on the CPU").
- A removed argument: the comment on a `cpu_merge=` / `cpu_relocation=` argument's line or right
  above it, and a comment on the call about what the argument chose ("merge on the GPU").
- The device scope: a comment on the first statement the strategy's scope holds that speaks of the
  device scope ("Not needed to change the device scope for model definition:").
- The wrapper: a comment right above a statement whose lookup of the template in the wrapper
  (`parallel.layers[-2]`) became the model itself, mentioning the wrapper, its merge layers or
  the template ("the template sits before the two merge layers").

A comment goes with its paragraph (the comment lines around it with no blank line between), so
no half sentence is left. Read-only: plan.py and template_recovery drop what these select.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Sequence
from typing import Final

import libcst as cst

__all__ = [
    "CELL_MARKER", "CPU_PLACEMENT", "DEVICE_SCOPE", "DEVICE_TOPIC", "MECHANICS", "STALE", "WRAPPER",
    "argument_comments",
    "argument_topics", "commented_block", "commented_code", "without",
]

# a note on the devices ("# multi gpu acceleration", "# use 4 GPUs"), not on what the model does
DEVICE_TOPIC: Final = re.compile(r"\bgpus?\b|multi[- _]?gpu|\bparallel|\bdevices?\b|\breplica", re.IGNORECASE)
CPU_PLACEMENT: Final = re.compile(r"\bcpus?\b|\bhost\b", re.IGNORECASE)
WRAPPER: Final = re.compile(
    r"\bwrapper\b|\bmerge layers?\b|\btemplate\b|\bparallel[ _]model\b|\bserial[ _]model\b|\bmulti[- _]?gpu[ _]model\b"
    r"|\bsingle[- ](?:device|gpu) model\b|\bserial\s+and\s+parallel\s+models\b",
    re.IGNORECASE,
)
# The old call's own mechanics, in a comment on the call: the helper it went through, the
# wrapper, the merge of the replicas' outputs ("outputs are concatenated per head"), how its
# arguments were written ("# positional gpus arg", round 46, ac14: no such argument is left),
# how it failed ("# will raise on a 1-GPU box", round 49, ai11: the strategy line never raises).
MECHANICS: Final = re.compile(
    f"{WRAPPER.pattern}|\\bModelMGPU\\b|\\bmake_parallel\\b|\\bto_multi_gpu\\b|\\bconcatenat"
    "|\\b(?:positional|keyword)\\s+(?:\\w+\\s+)?(?:arg|args|argument|arguments|kwarg|kwargs)\\b"
    "|\\b(?:will|would|may|might|could|can)\\s+(?:raise|throw|fail|crash|error)\\b|\\b(?:raises|throws|crashes)\\b",
    re.IGNORECASE,
)
# "Not needed to change the device scope for model definition:" (the Keras docs' example): the
# strategy's scope is where the model is built now
DEVICE_SCOPE: Final = re.compile(r"\bdevice[\s_-]+scope\b", re.IGNORECASE)
# every comment this module may select (the tests' "no comment lost" check allows these)
STALE: Final = re.compile(
    f"{CPU_PLACEMENT.pattern}|{MECHANICS.pattern}|{DEVICE_SCOPE.pattern}|\\bmerg|\\breloca", re.IGNORECASE
)
# `multi_gpu_model` arguments the rewrite drops, whose line comments go with them
_DROPPED_ARGUMENTS: Final = frozenset({"cpu_merge", "cpu_relocation"})


# an exported notebook's cell marker: `# In[3]:`, `# %%` (`# %% [markdown]`)
CELL_MARKER: Final = re.compile(r"^#\s*(?:In\[[ \d]*\]:|%%)")


def commented_code(comment: str) -> bool:
    """`# parallel = multi_gpu_model(model, gpus=2)`: a statement that calls or binds, commented out."""
    try:
        tree = ast.parse(comment.lstrip("#").strip())
    except (SyntaxError, ValueError):
        return False
    code = (ast.Call, ast.Assign, ast.AugAssign, ast.Import, ast.ImportFrom)
    return any(isinstance(node, code) for node in ast.walk(tree))


def commented_block(comments: Sequence[str]) -> bool:
    """`#try:` / `#    vae = multi_gpu_model(vae, gpus=2)` / `#except ValueError:` / ...: lines that,
    uncommented, are one block of code with a compound statement (a line of it alone is no code)."""
    if len(comments) < 2 or not all(c.startswith("#") for c in comments):
        return False
    body = [c[1:] for c in comments]
    if all(line.startswith(" ") for line in body if line.strip()):
        body = [line[1:] for line in body]
    try:
        tree = ast.parse(textwrap.dedent("\n".join(body)))
    except (SyntaxError, ValueError):
        return False
    compound = (ast.Try, ast.If, ast.For, ast.While, ast.With, ast.FunctionDef, ast.ClassDef)
    return any(isinstance(node, compound) for node in tree.body)


def without(lines: Sequence[cst.EmptyLine], pattern: re.Pattern[str], *, headings: bool = False) -> list[cst.EmptyLine]:
    """`lines` less each comment paragraph that has a line matching `pattern`; where only lines of
    commented-out code match (`# net = multi_gpu_model(net, gpus=2)`), only those lines.
    `headings`: the lines stay above a statement that stays, so an exported markdown heading opening
    such a paragraph stays (`_heading_kept`)."""
    kept: list[cst.EmptyLine] = []
    paragraph: list[cst.EmptyLine] = []

    def close() -> None:
        matching = [line for line in paragraph if line.comment is not None and pattern.search(line.comment.value)]
        if not matching:
            kept.extend(paragraph)
        elif all(line.comment is not None and commented_code(line.comment.value) for line in matching):
            # (a commented-out block holding the line goes whole: its `#try:` alone would be no code)
            if not commented_block([line.comment.value for line in paragraph if line.comment is not None]):
                kept.extend(line for line in paragraph if not any(line is m for m in matching))
        else:  # a notebook cell's marker (`# %%`, `# In[3]:`) is no comment: it stays
            # and so does an exported markdown cell's heading over the text that goes ("# ## Save" /
            # "# " / "# Save the CPU template, not `model`"): it heads the code cell below it still
            # (round 60, bc16), unless it heads notes on the old set-up ("# ### Multi-GPU notes")
            headed = _heading_kept(paragraph, pattern) if headings else None
            kept.extend(line for line in paragraph
                        if line.comment is not None and CELL_MARKER.match(line.comment.value) or line is headed)
        paragraph.clear()

    for line in lines:
        if line.comment is None:
            close()
            kept.append(line)
        else:
            paragraph.append(line)
    close()
    return kept


# an exported markdown cell's heading (`# ## Save`), and the headings over notes rather than code
_EXPORTED_HEADING: Final = re.compile(r"^#[ \t]*#{1,6}[ \t]+\S")
_HEADS_NOTES: Final = re.compile(
    r"\b(?:notes?|remarks?|caveats?|explanation|background|why|about|details|helpers?|wrappers?|wrap\w*)\b",
    re.IGNORECASE,
)


def _heading_kept(paragraph: Sequence[cst.EmptyLine], pattern: re.Pattern[str]) -> cst.EmptyLine | None:
    """The paragraph's first line when it is an exported markdown heading that says nothing of the
    old mechanics itself and no other heading follows it in the paragraph."""
    first = paragraph[0].comment.value if paragraph and paragraph[0].comment is not None else ""
    if not _EXPORTED_HEADING.match(first) or pattern.search(first) or _HEADS_NOTES.search(first):
        return None
    if any(line.comment is not None and _EXPORTED_HEADING.match(line.comment.value) for line in paragraph[1:]):
        return None
    return paragraph[0]


# what a comment on the call says about a dropped argument ("merge on GPU, faster on NVLink")
_ARGUMENT_TOPICS: Final = {"cpu_merge": r"\bmerg(?:e|es|ed|ing)\b", "cpu_relocation": r"\breloca"}


def argument_topics(call: cst.CSTNode) -> re.Pattern[str] | None:
    """What a comment on `call` would say about its dropped `cpu_merge=` / `cpu_relocation=`."""
    if not isinstance(call, cst.Call):
        return None
    topics = [_ARGUMENT_TOPICS[a.keyword.value] for a in call.args
              if a.keyword is not None and a.keyword.value in _ARGUMENT_TOPICS]
    return re.compile("|".join(topics), re.IGNORECASE) if topics else None


def argument_comments(call: cst.CSTNode, statement: cst.CSTNode | None = None) -> set[int]:
    """The comments on the lines of `cpu_merge=` / `cpu_relocation=` arguments of `call`, and the
    comment lines right above such an argument (by id);
    with `statement` (a line holding the call), its end-of-line comment too when such an
    argument is the last one, on a line of its own (`cpu_merge=False)  # merge on GPU`)."""
    found: set[int] = set()
    if not isinstance(call, cst.Call):
        return found
    for k, arg in enumerate(call.args):
        if arg.keyword is None or arg.keyword.value not in _DROPPED_ARGUMENTS:
            continue
        own_line = k > 0 and isinstance(call.args[k - 1].comma, cst.Comma) and isinstance(
            cst.ensure_type(call.args[k - 1].comma, cst.Comma).whitespace_after, cst.ParenthesizedWhitespace
        )
        closes_line = not isinstance(arg.whitespace_after_arg, cst.ParenthesizedWhitespace) and not (
            isinstance(arg.comma, cst.Comma) and isinstance(arg.comma.whitespace_after, cst.ParenthesizedWhitespace)
        )  # `cpu_merge=False)  # why`: the `)` on its line
        if (
            own_line and closes_line and k == len(call.args) - 1 and isinstance(statement, cst.SimpleStatementLine)
            and statement.trailing_whitespace.comment is not None
        ):
            found.add(id(statement.trailing_whitespace.comment))
        if own_line:  # the comment lines right above the argument describe it
            above = cst.ensure_type(cst.ensure_type(call.args[k - 1].comma, cst.Comma).whitespace_after,
                                    cst.ParenthesizedWhitespace).empty_lines
            for line in reversed(above):
                if line.comment is None:
                    break
                found.add(id(line.comment))
        stack: list[cst.CSTNode] = [arg]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Comment):
                found.add(id(node))
            stack.extend(node.children)
    return found
