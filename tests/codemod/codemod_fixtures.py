"""Fixture discovery shared by the per-fixer tests: fixtures/codemod/<fixer>/<case>.{before,after,unchanged}.py."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from multi_gpu_codemod import transform_source
from multi_gpu_codemod.fixers.imports import PRAGMA
from multi_gpu_codemod.stale_comments import STALE
from multi_gpu_codemod.stale_prose import MECHANICS

ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "codemod"

# The codemod needs libcst alone; tests that run a migrated script need TensorFlow too.
needs_tensorflow = pytest.mark.skipif(
    importlib.util.find_spec("tensorflow") is None,
    reason="runs the migrated script: TensorFlow is not installed (codemod-only environment)",
)


def pairs(fixer: str) -> list[Path]:
    return sorted((ROOT / fixer).glob("*.before.py"))


def unchanged(fixer: str) -> list[Path]:
    return sorted((ROOT / fixer).glob("*.unchanged.py"))


def check_pair(before: Path, strategy: str = "mirrored") -> list[str]:
    """Rewrites `before`, compares with `after`, checks the contract; returns the finding codes."""
    expected = before.with_name(before.name.replace(".before.py", ".after.py")).read_bytes()
    return check_rewrite(before.read_bytes(), expected, before.name, strategy=strategy)


def check_source_pair(before: str, after: str, strategy: str = "mirrored") -> list[str]:
    """`check_pair` for a before/after table in a test: the source strings, UTF-8."""
    return check_rewrite(before.encode(), after.encode(), "table.py", strategy=strategy)


def check_rewrite(source: bytes, expected: bytes, name: str, strategy: str = "mirrored") -> list[str]:
    """The rewrite contract: exactly `expected`, parses, a second run changes nothing, no comment lost."""
    result = transform_source(source, name, strategy=strategy)
    assert result.output.decode(errors="replace") == expected.decode(errors="replace")  # a readable diff
    assert result.output == expected
    assert result.changed and not result.failed
    ast.parse(result.output)
    again = transform_source(result.output, name, strategy=strategy)
    assert again.output == result.output, "a second run must change nothing"
    assert_comments_kept(source, result.output)
    return [f.code for f in result.findings]


def check_unchanged(path: Path) -> list[str]:
    source = path.read_bytes()
    result = transform_source(source, path.name)
    assert result.output == source
    assert result.findings, "a site left unchanged must be reported"
    return [f.code for f in result.findings]


def reported(source: bytes, name: str = "table.py") -> list[str]:
    """Findings for a source the codemod must leave byte-identical, each as the command line prints it."""
    result = transform_source(source, name)
    assert result.output == source
    return [f.format() for f in result.findings]


def deleted_definition_lines(before: bytes | str, after: bytes | str) -> set[int]:
    """The lines of top-level `def`s and `class`es of `before` that `after` no longer defines (a
    copied helper the codemod deleted), with the comment lines right above each: their comments
    go with them."""
    import ast

    text = before.decode("utf-8", "replace") if isinstance(before, bytes) else before
    later = after.decode("utf-8", "replace") if isinstance(after, bytes) else after
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set()
    lines = text.splitlines()
    gone: set[int] = set()
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            continue
        keyword = "class" if isinstance(node, ast.ClassDef) else "def"
        if f"{keyword} {node.name}" in later:
            continue
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        while first > 1 and lines[first - 2].lstrip().startswith("#"):
            first -= 1
        gone |= set(range(first, (node.end_lineno or node.lineno) + 1))
    return gone


def lost_comments(before: str, after: str, gone: set[int] | None = None) -> list[str]:
    """The comments of `before` (outside the lines `gone`) that `after` lost, less those the
    migration may drop: a comment on a removed import line (a pragma, or why it was there); a
    comment on the CPU placement or the wrapper (stale_comments.py), in its paragraph; one on a
    dropped `cpu_merge=` / `cpu_relocation=` argument; one naming an identifier (`gpu_model`) the
    code no longer has (stale_prose.py); one on the `except ...:` line of a handler the rewrite
    removed (plan.py); one labelling an `elif`/`else` branch (above it or on its line) where the
    migration wrote the branches once (settled_branches.py)."""
    import io
    import re
    import tokenize

    def tokens(text: str) -> list[tokenize.TokenInfo]:
        return list(tokenize.generate_tokens(io.StringIO(text).readline))

    old_tokens, new_tokens = tokens(before), tokens(after)
    new = [t.string for t in new_tokens if t.type == tokenize.COMMENT]
    removed_names = {t.string for t in old_tokens if t.type == tokenize.NAME and "_" in t.string.strip("_")} - {
        t.string for t in new_tokens if t.type == tokenize.NAME
    }
    comments = [t for t in old_tokens if t.type == tokenize.COMMENT and t.start[0] not in (gone or set())]
    old_lines = before.splitlines()

    def branch_header(line: str) -> bool:
        return bool(re.match(r"\s*(?:else\s*:|elif\b)", line))

    branches_gone = sum(map(branch_header, old_lines)) > sum(map(branch_header, after.splitlines()))

    def labels_a_branch(c: tokenize.TokenInfo) -> bool:
        below = c.start[0]  # (1-based: the index of the line after the comment's)
        while below < len(old_lines) and old_lines[below].strip().startswith("#"):
            below += 1
        own = c.line.strip().startswith("#")
        return branches_gone and branch_header(old_lines[below] if own and below < len(old_lines) else c.line)

    def droppable(c: tokenize.TokenInfo) -> bool:
        return bool(
            STALE.search(c.string) or MECHANICS.search(c.string) or re.search(r"cpu_(merge|relocation)=", c.line)
            or re.match(r"\s*except\b", c.line)  # when the one-device path ran: gone with the handler
            # (on an import line that went: it spoke of that line)
            or (re.match(r"\s*(?:from\s+\S+\s+)?import\s", c.line) and c.line.split("#")[0].strip() not in after)
            or any(re.search(rf"\b{re.escape(n)}\b", c.string) for n in removed_names)
            or labels_a_branch(c)
        )

    # a paragraph (consecutive comment lines) goes or stays whole
    paragraph_of: dict[int, int] = {}
    for k, c in enumerate(comments):
        same = k and comments[k - 1].start[0] == c.start[0] - 1 and c.line.strip().startswith("#")
        paragraph_of[k] = paragraph_of[k - 1] if same else k
    stale_paragraphs = {paragraph_of[k] for k, c in enumerate(comments) if droppable(c)}
    # (a removed call's "# two towers" reads "# two replicas" over the strategy line: plan._unjoined)
    said = {re.sub(r"\btower(s?)\b", r"replica\1", c) for c in new} | set(new)
    return [
        c.string for k, c in enumerate(comments)
        if re.sub(r"\btower(s?)\b", r"replica\1", c.string) not in said and c.string not in new
        and not PRAGMA.match(c.string) and paragraph_of[k] not in stale_paragraphs
    ]


def assert_comments_kept(before: bytes, after: bytes) -> None:
    missing = lost_comments(before.decode("utf-8", "replace"), after.decode("utf-8", "replace"),
                            deleted_definition_lines(before, after))
    assert not missing, f"comments lost: {missing}"


def strategy_devices(code: str, present: int, **names: object) -> list[str] | str | None:
    """The devices the strategy statement in migrated `code` (the lines just above the first
    `with <name>.scope():`, an `if`/`else` choosing it included) selects when `present` GPUs exist
    and the script's variables hold `names`: a list of device names, None for TensorFlow's default
    devices (`MirroredStrategy()` or an empty list: every GPU, else the CPU), or "one device" for
    `tf.distribute.get_strategy()` (the default strategy, as a plain model ran)."""
    import re
    import textwrap
    import types

    lines = code.splitlines()
    end = next(i for i, line in enumerate(lines) if re.match(r"\s*with \w+\.scope\(\):", line))
    indent = len(lines[end]) - len(lines[end].lstrip())
    name = re.match(r"\s*with (\w+)\.scope", lines[end]).group(1)
    # back to the last assignment of the strategy, then out to the `if` choosing it, if any (what
    # lies between, such as an `if` that only prints which path ran, runs too: it only prints)
    start = max(i for i in range(end) if re.match(rf"\s*{name} = ", lines[i]))
    while len(lines[start]) - len(lines[start].lstrip()) > indent:
        start -= 1
        line = lines[start]
        if len(line) - len(line.lstrip()) == indent and line.strip().startswith(("else:", "elif ")):
            start -= 1  # (its `if`: further up at the same depth)
            while len(lines[start]) - len(lines[start].lstrip()) != indent or not lines[start].strip():
                start -= 1
            start += 1
    if start and re.match(r"\s*\w+ = tf\.config\.list_logical_devices\(", lines[start - 1]):
        start -= 1  # (the machine's GPUs bound above a strategy on ids: `gpus = ...`)
    config = types.SimpleNamespace(list_logical_devices=lambda kind: [f"/gpu:{i}" for i in range(present)])
    distribute = types.SimpleNamespace(MirroredStrategy=lambda devices=None: list(devices) or None if devices else None,
                                       get_strategy=lambda: "one device")
    namespace: dict[str, object] = {"tf": types.SimpleNamespace(config=config, distribute=distribute), **names}
    exec(textwrap.dedent("\n".join(lines[start:end])), namespace)
    return namespace[name]  # type: ignore[return-value]
