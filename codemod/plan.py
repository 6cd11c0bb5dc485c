"""The edits the fixers decide on, keyed by original nodes, and the transformer that applies them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
import ast
import re
from typing import TYPE_CHECKING, Final, TypeVar

import libcst as cst
import libcst.matchers as m

from ._tree import Block, bound_names, branch_suites, code_tokens, findall, names_in_functions, walk, zip_equal
from ._tree import RUNS, calls_method
from ._tree import method_call as _method_call
from .cell_scopes import INERT_MODULES, PLACEHOLDER_PREFIX, builds_nothing, data_value, inert
from .continuations import Continuations
from .fallthrough import stops_when_no_branch_runs
from .layout import fitted, realign_call, renamed_in, spans_lines, strategy_statements
from . import stale_comments
from .same_branches import already_holds, merged
from .stale_comments import CPU_PLACEMENT, MECHANICS
from .stale_comments import DEVICE_TOPIC as _DEVICE_TOPIC
from .fallbacks import ChainBranch, Said, message
from .replica_count import replicas_said, sliced_count
from .strategy_expression import StrategyCode, refine
from .unwrapping import SAVES

if TYPE_CHECKING:
    from ._tree import Tree

__all__ = ["Plan", "Region", "apply_plan", "cell_boundary", "data_after"]

_MODULE = cst.Module([])
_N = TypeVar("_N", bound=cst.CSTNode)


@dataclass
class Region:
    """Statements `start..end` of `block` go under `with <name>.scope():`, after the strategy line."""

    block: Block
    start: int
    end: int
    name: str
    expression: str
    notes: list[str] = field(default_factory=list)
    # plain settings the strategy line needs, assigned inside the range (`gpus = 2`): moved above it
    hoisted: list[cst.BaseStatement] = field(default_factory=list)
    # a collapsed guard's prints and logging, written in the strategy choice's branches
    said: Said | None = None
    # a strategy on GPU ids: the name the machine's GPUs are bound to above it (`gpus = ...`)
    listing: str | None = None


@dataclass
class Plan:
    regions: list[Region] = field(default_factory=list)
    # original statement -> replacement statement, or None to remove it (its comments are kept)
    statements: dict[int, cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement] | None] = field(
        default_factory=dict
    )
    unwrap: set[int] = field(default_factory=set)  # `with tf.device('/cpu:0'):` to dissolve
    calls: set[int] = field(default_factory=set)  # the statements holding a rewritten call
    moved: set[int] = field(default_factory=set)  # statements a region hoists whole (with comments)
    # statements removed whole: their own comments and the comment lines right above them go too
    deleted: set[int] = field(default_factory=set)
    nodes: dict[int, cst.CSTNode] = field(default_factory=dict)  # original expression -> replacement
    dropped_lines: set[int] = field(default_factory=set)  # comment lines (or comments) that go: stale_comments.py
    remove_imports: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    add_imports: list[tuple[str, str | None, str | None]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (
            self.regions or self.statements or self.nodes or self.unwrap or self.remove_imports or self.dropped_lines
            or self.deleted
        )


_REDONE = frozenset({"compile", "summary"})


def _sets_up_only(statement: cst.BaseStatement) -> bool:
    """A line that creates no variables and changes no object: `os.makedirs(path)`, `checkpointer =
    ModelCheckpoint(...)` (names bound, no attribute or item assigned)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.AugAssign):
            return False
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else (
            [small.target] if isinstance(small, cst.AnnAssign) else []
        )
        if not all(_plain_target(t) for t in targets):
            return False
    return builds_nothing(_MODULE.code_for_node(statement.with_changes(leading_lines=[])))


def _plain_target(target: cst.BaseExpression) -> bool:
    """`name`, `a, b`, `[a, (b, c)]`: names only."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return all(_plain_target(element.value) for element in target.elements)
    return isinstance(target, cst.Name)


def _repeats_after_rename(
    original: cst.BaseStatement, piece: cst.BaseStatement,
    previous_original: cst.BaseStatement | None, previous: cst.BaseStatement,
) -> bool:
    """`piece` is a renamed `x.compile(...)` / `x.summary()` that reads exactly as the statement
    before it, which the script wrote differently (two models then, one now): running it again
    changes nothing the script relies on (the second compile resets what the first set up, with
    nothing trained between; the summary prints the same model)."""
    if not (isinstance(piece, cst.SimpleStatementLine) and isinstance(previous, cst.SimpleStatementLine)):
        return False
    if not (isinstance(previous_original, cst.SimpleStatementLine) and isinstance(original, cst.SimpleStatementLine)):
        return False  # (a piece of a merged `if`: its own statements, not a repeat)
    if len(piece.body) != 1 or not isinstance(piece.body[0], cst.Expr):
        return False
    call = piece.body[0].value
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in _REDONE):
        return False
    def code(statement: cst.SimpleStatementLine) -> tuple[str, ...]:
        return code_tokens(_MODULE.code_for_node(statement.with_changes(leading_lines=[])))
    return code(piece) == code(previous) and code(original) != code(previous_original)


def _guarded_repeat(
    original: cst.BaseStatement, piece: cst.BaseStatement,
    previous_original: cst.BaseStatement | None, previous: cst.BaseStatement,
) -> bool:
    """`piece` is `if n_gpus > 1: model.compile(...)` (no `else`), once the wrapper's compile, that
    now reads exactly as the compile before it (round 56, au19: "compile again - multi_gpu_model
    returns an uncompiled model"): whichever way its condition, which calls nothing, goes, the model
    is compiled the same, so the `if` does nothing."""
    if not (isinstance(piece, cst.If) and isinstance(original, cst.If) and piece.orelse is None):
        return False
    if not isinstance(piece.body, cst.IndentedBlock) or len(piece.body.body) != 1:
        return False
    if any(isinstance(n, cst.Call) for n in walk(piece.test)):
        return False
    inner = piece.body.body[0]
    suite = original.body
    return isinstance(suite, cst.IndentedBlock) and any(
        _repeats_after_rename(first, inner, previous_original, previous) for first in suite.body
    )


_FITS: Final = frozenset({"fit", "fit_generator"})


def _callback_given_its_model(
    original: cst.BaseStatement, piece: cst.BaseStatement,
    later_original: Sequence[cst.BaseStatement], later: Sequence[cst.BaseStatement],
) -> bool:
    """`piece` is `callbacks[1].set_model(template)` (or `checkpoint.set_model(template)`) and a
    later `fit`, renamed to train that model, is given that callback (`callbacks=callbacks`): Keras's
    `fit` calls `set_model` on every callback it is given, with the model it trains. In the
    original the call pointed the callback at the template while the parallel model trained."""
    given = _callback_handed(piece)
    if given is None or _callback_handed(original) != given:
        return False
    return _fit_hands(later, *given) and not _fit_hands(later_original, *given)


def _callback_handed(statement: cst.BaseStatement) -> tuple[str, str, bool] | None:
    """(model, callback name, element of it) of `callbacks[1].set_model(model)`: (`model`, `callbacks`, True)."""
    if not (
        isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
    ):
        return None
    call = statement.body[0].value
    if not (
        isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "set_model"
        and len(call.args) == 1 and call.args[0].keyword is None and isinstance(call.args[0].value, cst.Name)
    ):
        return None
    receiver = call.func.value
    root = receiver.value if isinstance(receiver, cst.Subscript) else receiver
    if not isinstance(root, cst.Name):
        return None
    return call.args[0].value.value, root.value, isinstance(receiver, cst.Subscript)


def _fit_hands(later: Sequence[cst.BaseStatement], model: str, callbacks: str, element: bool) -> bool:
    """A statement of `later` runs `model.fit(..., callbacks=callbacks)` (or `callbacks=[..., callbacks]`
    for a callback not taken from a list) before anything rebinds either name."""
    for statement in later:
        for fit in findall(statement, cst.Call):
            func = fit.func
            if not (isinstance(func, cst.Attribute) and func.attr.value in _FITS and isinstance(func.value, cst.Name)
                    and func.value.value == model):
                continue
            given = next((a.value for a in fit.args if a.keyword is not None and a.keyword.value == "callbacks"), None)
            if isinstance(given, cst.Name) and given.value == callbacks:
                return True
            if not element and isinstance(given, cst.List) and any(
                isinstance(e.value, cst.Name) and e.value.value == callbacks for e in given.elements
            ):
                return True
        if bound_names(statement) & {model, callbacks}:
            return False
    return False


# a comment on the devices or the old wrapper ("# multi gpu acceleration", "# use all GPUs if any")
_MODEL_WORDS: Final = re.compile(r"\b(?:model|net(?:work)?|layers?|build|weights?|template|batch)", re.IGNORECASE)


def _setup_label(line: cst.EmptyLine) -> bool:
    """A comment on the devices only, not on the model below it: "# Multi-gpu setup:", "# use 4 GPUs"."""
    return _device_note(line) and line.comment is not None and not _MODEL_WORDS.search(line.comment.value)


# a note that only says the call named its GPUs by id: "# explicit device ids", "# gpu ids"
_IDS_NOTE: Final = re.compile(
    r"^#\s*(?:(?:explicit|specific|fixed|hard-?coded|chosen|listed)\s+)?(?:gpu|device|card)\s+(?:ids?|indices)\s*[.!]?\s*$",
    re.IGNORECASE,
)


def _device_note(line: cst.EmptyLine) -> bool:
    return line.comment is not None and bool(_DEVICE_TOPIC.search(line.comment.value)) and not _CELL_MARK.match(
        line.comment.value
    )


def cell_boundary(statement: cst.BaseStatement) -> bool:
    """The statement standing in for a notebook's cell boundary (notebook.py)."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return False
    small = statement.body[0]
    call = small.value if isinstance(small, cst.Expr) else None
    return isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value.startswith(
        PLACEHOLDER_PREFIX
    )


def _summary(statement: cst.BaseStatement) -> bool:
    """`model.summary()`: prints, builds nothing."""
    return _method_call(statement, "summary") is not None


def _names(statement: cst.CSTNode, name: str) -> bool:
    """`statement` reads or binds `name` somewhere."""
    return any(isinstance(node, cst.Name) and node.value == name for node in walk(statement))


def _one_line_repeats(original: cst.BaseStatement, piece: cst.BaseStatement) -> cst.BaseStatement:
    """`model.summary(); parallel.summary()` on one line, renamed to read the same twice: once."""
    if not (isinstance(original, cst.SimpleStatementLine) and isinstance(piece, cst.SimpleStatementLine)
            and len(original.body) == len(piece.body) > 1):
        return piece
    def code(small: cst.BaseSmallStatement) -> tuple[str, ...]:
        return code_tokens(_MODULE.code_for_node(small.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)))
    kept: list[cst.BaseSmallStatement] = [piece.body[0]]
    for k in range(1, len(piece.body)):
        small = piece.body[k]
        call = small.value if isinstance(small, cst.Expr) else None
        redone = isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in _REDONE
        if redone and code(small) == code(piece.body[k - 1]) and code(original.body[k]) != code(original.body[k - 1]):
            continue
        kept.append(small)
    if len(kept) == len(piece.body):
        return piece
    kept[-1] = kept[-1].with_changes(semicolon=piece.body[-1].semicolon)
    return piece.with_changes(body=kept)


def _summary_receiver(statement: cst.BaseStatement) -> cst.Name | None:
    """`model` in a statement that is only `model.summary()`."""
    call = _method_call(statement, "summary")
    if call is None:
        return None
    receiver = cst.ensure_type(call.func, cst.Attribute).value
    return receiver if isinstance(receiver, cst.Name) and not call.args else None


def _compiles(statement: cst.BaseStatement) -> bool:
    """A statement that is only `x.compile(...)`."""
    return _method_call(statement, "compile") is not None


# "# and one replica per GPU" under "# keep the master copy of the weights on the CPU" (round 62,
# bg13): the call's comment went on from the one above the statement before it
_JOINED: Final = re.compile(r"^(?P<hash>#+\s*)(?:and|then|plus)\s+(?=[a-z])")
_TOWERS: Final = re.compile(r"\btowers?\b")
# "# wrap the fresh model for data-parallel training on N_GPUS cards" (round 61, bf05): over the
# strategy line, what the wrapping was for
_WRAPPED_FOR: Final = re.compile(
    r"^(?P<hash>#+\s*)wrap(?:s|ping)?\s+(?:(?:the|a|our|this|it)\s+)?(?:[\w-]+\s+){0,2}?"
    r"(?:(?:model|net|network)\s+)?for\s+(?=(?:data[- ]?parallel|multi[- ]?gpu|parallel)\b[^;]*\s\w[^;]*$)",
    re.IGNORECASE,
)


def _unjoined(lines: Sequence[cst.EmptyLine]) -> list[cst.EmptyLine]:
    """A removed call's comment lines, the first one no longer joined to a comment the rewrite
    moved away from it: they head the strategy line, or what follows, alone."""
    out = list(lines)
    first = next((k for k, line in enumerate(out) if line.comment is not None), None)
    if first is not None:
        comment = out[first].comment
        assert comment is not None
        text = _WRAPPED_FOR.sub(lambda m: m["hash"], _JOINED.sub(lambda m: m["hash"], comment.value))
        # "# two towers, one per GPU" over the strategy line: its replicas (round 63, bi20)
        text = _TOWERS.sub(lambda m: "replica" + m[0][len("tower"):], text)
        if text != comment.value:
            out[first] = out[first].with_changes(comment=comment.with_changes(value=text))
    return out


def _leading_lines(statement: cst.BaseStatement) -> Sequence[cst.EmptyLine]:
    """A statement's own leading lines (every concrete statement has them, the base class does not say so)."""
    assert isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
    return statement.leading_lines


def _comment_lines(statement: cst.BaseStatement) -> list[cst.EmptyLine]:
    """The comments a removed statement carried: its leading lines, then every comment inside
    it (`gpus=n,  # how many` in a multi-line call, `except ValueError:  # one GPU`), in order,
    each as a line of its own where the statement was."""
    return [*_leading_lines(statement), *_inner_comments(statement)]


def _inner_comments(statement: cst.BaseStatement) -> list[cst.EmptyLine]:
    """Every comment inside `statement` but its leading lines, as standalone comment lines."""
    skip = {id(line) for line in _leading_lines(statement)}
    found: list[cst.EmptyLine] = []
    stack: list[cst.CSTNode] = [statement]
    while stack:
        node = stack.pop()
        if id(node) in skip:
            continue
        if isinstance(node, cst.Comment):
            # an arrow pointed at the line it ended ("# <- the only multi-gpu line", round 47, ae04):
            # on a line of its own it points at nothing
            # (the same node where there is none: comments are told apart by identity elsewhere)
            pointed = node.with_changes(value=_ARROW.sub("# ", node.value)) if _ARROW.match(node.value) else node
            found.append(cst.EmptyLine(comment=pointed))
            continue
        stack.extend(reversed(node.children))
    return found


_ARROW: Final = re.compile(r"^#\s*(?:<-+|<=+|←|\^+)\s*")


def _handler_notes(statement: cst.BaseStatement) -> set[int]:
    """The comments on a replaced `try`'s `except ...:` lines (`# fewer GPUs than requested`): they
    said when the one-device path ran, which the handler no longer is (an `else:` the replacement
    keeps carries its own)."""
    if not isinstance(statement, cst.Try):
        return set()
    return {
        id(h.body.header.comment) for h in statement.handlers
        if isinstance(h.body, cst.IndentedBlock) and h.body.header.comment is not None
    }


def _walk_comments(node: cst.CSTNode) -> list[cst.Comment]:
    return [n for n in walk(node) if isinstance(n, cst.Comment)]


def _with_leading(statement: cst.BaseStatement, lines: list[cst.EmptyLine]) -> cst.BaseStatement:
    if not lines:
        return statement
    return statement.with_changes(leading_lines=[*lines, *_leading_lines(statement)])


class _FlatBlankLines(cst.CSTTransformer):
    def leave_EmptyLine(self, original_node: cst.EmptyLine, updated_node: cst.EmptyLine) -> cst.EmptyLine:
        if updated_node.comment is None and updated_node.indent:
            return updated_node.with_changes(indent=False)
        return updated_node


def _above_cell_marker(lines: Sequence[cst.EmptyLine]) -> tuple[list[cst.EmptyLine], list[cst.EmptyLine]]:
    """`lines` split at a notebook export's last cell marker (`# In[4]:`): the lines above it (the
    cell before's markdown text), and the marker with what follows it."""
    marks = [k for k, line in enumerate(lines)
             if line.comment is not None and stale_comments.CELL_MARKER.match(line.comment.value)]
    return (list(lines[:marks[-1]]), list(lines[marks[-1]:])) if marks else ([], list(lines))


def _replicas_elif(original: cst.If, orelse: cst.Else, plan: Plan) -> cst.If | None:
    """`else:` holding only the `if <strategy>.num_replicas_in_sync > 1:` that took the place of a
    `try` announcing the path (announcement.py) as `elif ...:` (round 59, bb06), where no comment
    sits on the `else:` or above the `if`."""
    before = original.orelse.body.body if isinstance(original.orelse, cst.Else) and isinstance(
        original.orelse.body, cst.IndentedBlock) else ()
    body = orelse.body.body if isinstance(orelse.body, cst.IndentedBlock) else ()
    if len(before) != 1 or not isinstance(before[0], cst.Try) or id(before[0]) not in plan.statements:
        return None
    if len(body) != 1 or not isinstance(inner := body[0], cst.If) or not _REPLICAS_TEST.fullmatch(
        cst.Module([]).code_for_node(inner.test)
    ):
        return None
    block = cst.ensure_type(orelse.body, cst.IndentedBlock)
    if any(line.comment is not None for line in [*orelse.leading_lines, *inner.leading_lines]) or (
        block.header.comment is not None or any(line.comment is not None for line in block.footer)
    ):
        return None
    return inner.with_changes(leading_lines=[])


_REPLICAS_TEST = re.compile(r"\w+\.num_replicas_in_sync > 1")


def _blank_line_after_scope(
    scope: cst.With, following: cst.BaseStatement
) -> tuple[cst.With, cst.BaseStatement]:
    """`with strategy.scope():` / `model = build()` / (blank) / `model.compile(...)` straight
    followed by `model.fit(...)`: the blank line that set the removed call apart from the build
    goes after the block, between building and training (as many blank lines as before). Where
    blank lines already set the block apart, the build and the compile read as one unit: the
    compile loses the blank lines above it, but after a compound statement (round 59, bb04)."""
    body = list(cst.ensure_type(scope.body, cst.IndentedBlock).body)
    lines = list(_leading_lines(body[-1])) if len(body) > 1 else []
    blanks = next((k for k, line in enumerate(lines) if line.comment is not None), len(lines))
    after = _leading_lines(following)
    if not blanks or blanks < len(lines) or any(cell_boundary(s) for s in (*body, following)):
        # (a blank line above a comment sets the comment apart; a notebook cell ends on its code)
        return scope, following
    if any(line.comment is None for line in after):
        if not isinstance(body[-2], cst.SimpleStatementLine):
            return scope, following  # (after a block, `for layer in ...:`, the blank line stays)
        body[-1] = body[-1].with_changes(leading_lines=[])
        return scope.with_changes(body=scope.body.with_changes(body=body)), following
    body[-1] = body[-1].with_changes(leading_lines=lines[blanks:])
    gap = [cst.EmptyLine(indent=False) for _ in range(blanks)]
    return (
        scope.with_changes(body=scope.body.with_changes(body=body)),
        following.with_changes(leading_lines=[*gap, *after]),
    )


def _compile_joins_build(scope: cst.With) -> cst.With:
    """A scope that ends its block or file: the compile it ends with joins the build above it,
    without the blank line that set the removed call apart (as `_blank_line_after_scope` does
    where a statement follows; round 61, be07, be12)."""
    body = list(cst.ensure_type(scope.body, cst.IndentedBlock).body)
    if len(body) < 2 or not isinstance(body[-2], cst.SimpleStatementLine) or not _compiles(body[-1]):
        return scope
    lines = _leading_lines(body[-1])
    if not lines or any(line.comment is not None for line in lines) or cell_boundary(body[-1]):
        return scope
    body[-1] = body[-1].with_changes(leading_lines=[])
    return scope.with_changes(body=scope.body.with_changes(body=body))


def _flat_blank_lines(statement: cst.BaseStatement) -> cst.BaseStatement:
    """Blank lines moved one block deeper must not gain trailing indentation: the statement's own
    and those inside it (before an `else:`, between the statements of its body)."""
    flat = statement.visit(_FlatBlankLines())
    assert isinstance(flat, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
    return flat


def _one_blank_line(statement: cst.BaseStatement) -> cst.BaseStatement:
    """At most one blank line before `statement`: two set a `def` apart, not statements in a block."""
    lines = list(_leading_lines(statement))
    blanks = 0
    while blanks < len(lines) and lines[blanks].comment is None:
        blanks += 1
    if blanks <= 1 or isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return statement
    return statement.with_changes(leading_lines=lines[blanks - 1:])


class _Applier(cst.CSTTransformer):
    def __init__(
        self, plan: Plan, paths: set[int] | None = None, tree: Tree | None = None,
        continued: Continuations | None = None,
    ) -> None:
        super().__init__()
        self.plan = plan
        self.tree = tree
        self.continued = continued
        self.paths = paths
        self.regions: dict[int, list[Region]] = {}
        self.moved: dict[int, cst.BaseStatement] = {}
        self.unit = "    "  # the module's indentation unit
        self.indents: list[tuple[int, str]] = []  # (id, indent) of the blocks being visited
        self.limit = 100  # added lines stay within 100 columns, or within the file's widest line
        self.choice_comments: dict[int, list[cst.EmptyLine]] = {}  # region -> comments for its strategy line
        self.merged_guards: set[int] = set()  # `if`s whose branches read the same, written once
        self.scopes: set[int] = set()  # the `with strategy.scope():` blocks written
        self.call_regions: dict[int, Region] = {}  # a removed call in a branch -> the region around it
        self._function_names: frozenset[str] | None = None
        self.emptied: set[int] = set()  # the `pass` of each block whose every statement went
        self._scopes_made: set[int] = set()  # the `with <strategy>.scope():` blocks this pass wrote
        # a build -> the commented-out code on its model that sat right under it (it stays there)
        self.follow_build: dict[int, list[cst.EmptyLine]] = {}
        for region in plan.regions:
            self.regions.setdefault(id(region.block), []).append(region)
            for statement in region.block.body[region.start:region.end + 1]:
                for node in walk(statement):
                    if id(node) in plan.calls:
                        self.call_regions[id(node)] = region

    def _read_in_functions(self, block: Block) -> frozenset[str]:
        """Every name a function that could read what `block` binds names: at module level any
        function of the module (globals), inside a function the functions nested in `block`
        (closures). A statement binding one stays where it is."""
        if not isinstance(block, cst.Module):
            return names_in_functions(block)
        if self._function_names is None:
            names: set[str] = set()
            if self.tree is not None:
                for function in self.tree.all(cst.FunctionDef):
                    names |= {n.value for n in walk(function) if isinstance(n, cst.Name)}
            self._function_names = frozenset(names)
        return self._function_names

    def on_visit(self, node: cst.CSTNode) -> bool:
        # Only nodes on the way to an edit are descended into: everything else stays as it is.
        visit = self.paths is None or id(node) in self.paths
        if isinstance(node, cst.Module):
            self.unit = node.default_indent
            self.limit = max([100, *(_width(line) for line in node.code.splitlines())])
        elif visit and isinstance(node, cst.IndentedBlock):
            self.indents.append((id(node), self.unit if node.indent is None else node.indent))
        return visit

    # libcst types the result as the node's own type; a planned replacement may be of another.
    def on_leave(  # type: ignore[override]
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode]:
        replacement = self.plan.nodes.get(id(original_node))
        if replacement is not None:
            return replacement
        if id(original_node) in self.plan.dropped_lines:
            return cst.RemovalSentinel.REMOVE
        updated = super().on_leave(original_node, updated_node)
        orelse = updated.orelse if isinstance(updated, cst.If) else None
        if isinstance(updated, cst.If) and isinstance(orelse, cst.Else) and _only(orelse.body, self.emptied):
            return updated.with_changes(orelse=None)  # (`else: parallel = model` went: no `else: pass`)
        if isinstance(original_node, cst.If) and isinstance(updated, cst.If) and isinstance(orelse, cst.Else):
            chained = _replicas_elif(original_node, orelse, self.plan)
            if chained is not None:
                return updated.with_changes(orelse=chained)
        if isinstance(original_node, cst.SimpleStatementLine) and isinstance(updated, cst.SimpleStatementLine):
            return self._comment_above_if_too_wide(original_node, updated)
        if (
            isinstance(original_node, cst.Call)
            and isinstance(updated, cst.Call)
            and self.tree is not None
            and renamed_in(original_node.func, self.plan.nodes)
            and spans_lines(original_node)
        ):
            opening = self.tree.position(original_node)[1] - 1
            indent = "".join(i for _, i in self.indents)
            carry = self.continued.carry if self.continued is not None else None
            return realign_call(original_node, updated, opening, indent, carry, self.limit)
        if isinstance(original_node, (cst.Module, cst.IndentedBlock)) and isinstance(
            updated, (cst.Module, cst.IndentedBlock)
        ):
            rebuilt = self._rebuild(original_node, updated)
            if self.indents and self.indents[-1][0] == id(original_node):
                self.indents.pop()
            return rebuilt
        return updated

    def _comment_above_if_too_wide(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine:
        """A one-line statement the rewrite lengthened past the limit only by its trailing comment
        (`.batch(8)  # why` -> `.batch(8 * strategy.num_replicas_in_sync)  # why`): the comment goes
        on a line of its own above it, where black's users put a comment that does not fit."""
        comment = updated.trailing_whitespace.comment
        if updated is original or comment is None:
            return updated
        indent = "".join(i for _, i in self.indents)
        code = cst.Module(body=[updated.with_changes(leading_lines=[])]).code.rstrip("\n")
        bare = cst.Module(body=[updated.with_changes(
            leading_lines=[], trailing_whitespace=cst.TrailingWhitespace())]).code.rstrip("\n")
        if "\n" in code or _width(indent + code) <= self.limit or _width(indent + bare) > self.limit:
            return updated
        return updated.with_changes(
            leading_lines=[*updated.leading_lines, cst.EmptyLine(indent=True, comment=comment)],
            trailing_whitespace=cst.TrailingWhitespace(newline=updated.trailing_whitespace.newline),
        )

    def _pieces(
        self, original: cst.BaseStatement, updated: cst.BaseStatement
    ) -> tuple[list[cst.BaseStatement], list[cst.EmptyLine]]:
        """What one statement becomes, plus comments to hand to the next statement."""
        key = id(original)
        if key in self.plan.moved:
            self.moved[key] = updated  # emitted by the region's `_wrap`, with its own edits
            return [], []
        if key in self.plan.deleted:
            lines = list(_leading_lines(updated))
            while lines and lines[-1].comment is not None:  # its own paragraph, right above it
                if _CELL_MARK.match(lines[-1].comment.value):
                    break  # ... but a notebook export's `# %%` starts the cell, whatever goes from it
                lines.pop()
            return [], lines
        if key in self.plan.statements:
            replacement = self.plan.statements[key]
            if replacement is None:
                notes = _handler_notes(updated)
                inner = [line for line in _inner_comments(updated) if id(line.comment) not in notes]
                return [], self._call_comments(key, _leading_lines(updated), inner, updated)
            # several statements (`cst.FlattenSentinel`): the first takes the leading lines
            replaced = list(replacement.nodes) if isinstance(replacement, cst.FlattenSentinel) else [replacement]
            # comments the replacement does not carry itself go above it
            carried = {c.value for r in replaced for c in _walk_comments(r.with_changes(leading_lines=[]))}
            notes = _handler_notes(updated)
            inner = [
                line for line in _inner_comments(updated)
                if line.comment and line.comment.value not in carried and id(line.comment) not in notes
            ]
            lines = self._call_comments(key, _leading_lines(updated), inner, updated)
            replaced[0] = replaced[0].with_changes(leading_lines=lines)
            return replaced, []
        if key in self.plan.unwrap and isinstance(updated, cst.With):
            suite = cst.ensure_type(updated.body, cst.IndentedBlock)
            body = list(suite.body)
            # what said the block placed its code on the CPU goes with the block (stale_comments.py),
            # but for the markdown cell above an export's cell marker: text judged sentence by
            # sentence (stale_prose.py; round 61, be14)
            before, own = _above_cell_marker(updated.leading_lines)
            lines = [*before, *stale_comments.without(own, CPU_PLACEMENT)]
            header = suite.header.comment
            if header is not None and not CPU_PLACEMENT.search(header.value):
                lines.append(cst.EmptyLine(comment=header))
            # Comments after the block's last statement (its footer) go to what follows it.
            footer = [line for line in suite.footer if line.comment is not None]
            if body:
                first = body[0].with_changes(
                    leading_lines=stale_comments.without(_leading_lines(body[0]), CPU_PLACEMENT)
                )
                body[0] = _with_leading(first, lines)
                return body, footer
            return [], lines + footer
        if isinstance(updated, (cst.If, cst.Try)) and self._touched(original):
            stops = isinstance(original, cst.If) and self.tree is not None and stops_when_no_branch_runs(
                self.tree, original
            )
            shared = merged(updated, no_branch_stops=stops)
            if shared is not None:
                self.merged_guards.add(id(original))
                return shared, []
        return [updated], []

    def _call_comments(
        self, key: int, leading: Sequence[cst.EmptyLine], inner: Sequence[cst.EmptyLine], updated: cst.BaseStatement
    ) -> list[cst.EmptyLine]:
        """The comments of a statement the plan removes or replaces (the lines above it, then
        those inside it); for a rewritten call's, less those about the CPU placement (a
        paragraph above it; a line inside it) and the dropped `cpu_merge=` / `cpu_relocation=`."""
        if key not in self.plan.calls:
            return [*leading, *inner]
        dropped: set[int] = set()
        topics: list[re.Pattern[str]] = []
        for call in walk(updated):
            dropped |= stale_comments.argument_comments(call, updated)
            topic = stale_comments.argument_topics(call)
            topics += [topic] if topic is not None else []
        # the call's own lines name its mechanics (inside a collapsed `if`, too); the comments
        # above that `if` explain its condition
        mechanics = MECHANICS if isinstance(updated, cst.SimpleStatementLine) else None
        # (a paragraph goes whole: "... and the results are" / "# concatenated on the CPU." leaves
        # no half sentence)
        inside = [line for line in inner if line.comment is None or id(line.comment) not in dropped]
        inside = [
            line for line in stale_comments.without(stale_comments.without(inside, CPU_PLACEMENT), MECHANICS)
            if line.comment is not None
        ]
        # (above a notebook export's cell marker, `# In[4]:`, the lines are the cell before's: a
        # markdown cell's text, which stale_prose.py judges sentence by sentence; round 60, bc15)
        before, leading = _above_cell_marker(leading)
        leading = stale_comments.without(leading, CPU_PLACEMENT)
        for topic in topics:
            leading = stale_comments.without(leading, topic)
            inside = [line for line in inside if line.comment is None or not topic.search(line.comment.value)]
        leading = stale_comments.without(leading, mechanics) if mechanics is not None else leading
        return [*before, *_unjoined(leading), *inside]

    def _touched(self, statement: cst.BaseStatement) -> bool:
        """An `if`/`try` with a statement the plan replaces or removes directly in one of its
        branches, or a name it renames (`parallel_model.fit(...)` in one branch, `model.fit(...)`
        in the other read the same after the rename)."""
        if not isinstance(statement, (cst.If, cst.Try)):
            return False
        blocks = [suite for suite in branch_suites(statement) if isinstance(suite, cst.IndentedBlock)]
        if any(id(s) in self.plan.statements or id(s) in self.plan.unwrap for block in blocks for s in block.body):
            return True
        if not self.plan.nodes:
            return False
        if self.paths is not None:  # the nodes on the way to an edit, known already
            return id(statement) in self.paths
        return any(id(n) in self.plan.nodes for n in walk(statement))

    def _rebuild(self, original: Block, updated: Block) -> Block:
        regions = sorted(self.regions.get(id(original), []), key=lambda r: r.start)
        if not regions and not any(
            id(s) in self.plan.statements or id(s) in self.plan.unwrap or id(s) in self.plan.moved
            or id(s) in self.plan.deleted or self._touched(s)
            for s in original.body
        ):
            return updated
        out: list[cst.BaseStatement] = []
        buffer: list[cst.BaseStatement] | None = None
        pending: list[cst.EmptyLine] = []
        region_iter = iter(regions)
        region = next(region_iter, None)
        origin: dict[int, cst.BaseStatement] = {}  # emitted statement -> the original it came from
        printed_again = self._summaries_printed_again(original.body)
        for index, (orig, upd) in enumerate(zip_equal(original.body, updated.body)):
            pieces, comments = self._pieces(orig, upd)
            pieces = [_one_line_repeats(orig, piece) for piece in pieces]
            if id(orig) in printed_again and len(pieces) == 1:
                # `model.summary()` above `parallel.summary()`, which now prints the same model once
                # the compile is done: one summary, after the scope (that keeps only what builds)
                pieces, comments = [], [*comments, *_comment_lines(pieces[0])]
            emitted = buffer if buffer is not None else out
            if len(pieces) == 1 and isinstance(pieces[0], cst.If) and self._touched(orig) and already_holds(
                pieces[0], emitted
            ):
                # `if c: parallel = model` right after `parallel = model`: it changes nothing.
                pieces, comments = [], [line for line in _comment_lines(pieces[0]) if line.comment is not None]
            if len(pieces) == 1 and isinstance(pieces[0], cst.If) and self._touched(orig) and _emptied_if(
                pieces[0], self.emptied
            ):
                # `if n_gpu > 1: pass`, all its branch held gone (the call, the `callback_model` hack)
                pieces, comments = [], [line for line in _comment_lines(pieces[0]) if line.comment is not None]
            # the statement before, past prints and logging (they train nothing)
            # (and past a notebook's cell boundary: a compile repeated in the next cell is a repeat)
            # (and past a line that only sets up files or callbacks: `os.makedirs(...)`,
            # `checkpointer = ModelCheckpoint(...)`; never past one that changes an attribute, such
            # as a layer's `trainable`, which a recompile is there to apply)
            skipped = (
                (lambda s: message(s) or _summary(s) or cell_boundary(s) or _sets_up_only(s))
                if pieces and not _summary(pieces[0]) else (lambda s: message(s) or cell_boundary(s))
            )
            before = next((s for s in reversed(emitted) if not skipped(s)), None)
            before_original = origin.get(id(before)) if before is not None else None
            if isinstance(before_original, cst.With) and id(before_original) in self.plan.unwrap:
                # the last statement of a dissolved `with tf.device('/cpu:0'):` block, the template's
                # compile in it (round 47, af10: compiled again, the same, after the wrap)
                inner = cst.ensure_type(before_original.body, cst.IndentedBlock).body
                last = inner[-1] if inner else None
                before_original = last if last is not None and before is not None and code_tokens(
                    _MODULE.code_for_node(last.with_changes(leading_lines=[]))
                ) == code_tokens(_MODULE.code_for_node(before.with_changes(leading_lines=[]))) else None
            if (
                len(pieces) == 1 and before is not None and not (region is not None and index == region.start)
                and (_repeats_after_rename(orig, pieces[0], before_original, before)
                     or _guarded_repeat(orig, pieces[0], before_original, before))
            ):
                # `model.compile(...)` then `parallel_model.compile(...)` with the same arguments
                # read the same once renamed: the second compile would only redo the first.
                pieces, comments = [], [*comments, *_comment_lines(pieces[0])]
            if len(pieces) == 1 and _callback_given_its_model(
                orig, pieces[0], original.body[index + 1:], updated.body[index + 1:]
            ):
                # `callbacks[1].set_model(template)` pointed a checkpoint at the template while the
                # parallel model trained; renamed, it hands `fit` the model `fit` hands it anyway
                pieces, comments = [], [*comments, *_comment_lines(pieces[0])]
            around = region if region is not None and region.start <= index <= region.end else None
            around = self.call_regions.get(id(orig), around)
            if around is not None and _removed_choice(orig, self.plan):
                # The comments of a removed `if`/`try` that chose the model (`# For more GPUs`), or
                # of the call, are about the choice the strategy line now makes: they go above it.
                if id(orig) in self.plan.calls:
                    # only the call's own comments: those right above it (no blank line between),
                    # after it and inside it; a comment further up (`# In[5]:`) and the blank
                    # lines stay to set apart what follows
                    lines = list(_leading_lines(orig))
                    apart = max((i for i, line in enumerate(lines) if line.comment is None), default=-1) + 1
                    comments, moved = comments[:apart], comments[apart:]
                    own = [line for line in lines[apart:] if line.comment is not None]
                    if isinstance(orig, cst.SimpleStatementLine) and own and all(
                        _STAGE_HEADING.search(line.comment.value) for line in own if line.comment
                    ):
                        # `# phase 1: train the new head`: about the code that follows, not the
                        # choice of devices; it stays where it was, above what comes next
                        comments = [*comments, *[c for c in moved if any(c is line for line in own)]]
                        moved = [c for c in moved if not any(c is line for line in own)]
                    # commented-out code on the template (`# model.load_weights('prev.h5')`, round
                    # 46, ac03) is no note on the devices: above the strategy line it would come
                    # before the model exists; it stays with what follows the call, under the scope
                    code = [line for line in own if line.comment is not None
                            and stale_comments.commented_code(line.comment.value)
                            and not MECHANICS.search(line.comment.value) and "multi_gpu" not in line.comment.value]
                    if code:
                        comments = [*comments, *[c for c in moved if any(c is line for line in code)]]
                        moved = [c for c in moved if not any(c is line for line in code)]
                else:
                    moved, comments = comments, []
                # a notebook cell's marker (`# %%`, `# In[5]:`) and what follows it stay: the cell
                # starts there whatever moves
                mark = next((k for k, line in enumerate(moved)
                             if line.comment is not None and _CELL_MARK.match(line.comment.value)), len(moved))
                # ... but the call's own note on the devices right above it ("# Replicate on 4 GPUs")
                # goes up with the choice it described
                start = len(moved)
                while start > mark + 1 and _device_note(moved[start - 1]):
                    start -= 1
                moved, comments = [*moved[:mark], *moved[start:]], [*comments, *moved[mark:start]]
                self.choice_comments.setdefault(id(around), []).extend(c for c in moved if c.comment is not None)
            elif around is not None and id(orig) in self.plan.calls and len(pieces) == 1 and self.plan.statements.get(
                id(orig)
            ) is not None:
                # the call left as an alias (`parallel = model`): its own comments (`# replicate on
                # all cards`) are about what the strategy line does now, and go above it too
                lines = list(_leading_lines(pieces[0]))
                apart = max((i for i, line in enumerate(lines) if line.comment is None), default=-1) + 1
                self.choice_comments.setdefault(id(around), []).extend(lines[apart:])
                pieces[0] = pieces[0].with_changes(leading_lines=lines[:apart])
            if (
                not pieces and id(orig) in self.plan.calls and buffer and region is not None
                and region.start < index <= region.end and origin.get(id(buffer[-1])) is original.body[index - 1]
            ):
                # commented-out code on the model right under its build (`#base_model.load_weights(
                # 'best.h5')`) is the build's: it follows it into the scope, not the strategy line
                # (round 58, ay19); only lines that stayed here (none the strategy line took)
                follows = _commented_code_on(_leading_lines(orig), bound_names(original.body[index - 1]))
                own = [line for line in _leading_lines(orig)[:follows] if any(line is c for c in comments)]
                if own and len(own) == follows:
                    self.follow_build[id(buffer[-1])] = own
                    comments = [c for c in comments if not any(c is line for line in own)]
            if around is not None and pieces and id(orig) in self.merged_guards and not any(
                isinstance(piece, cst.If) for piece in pieces
            ):
                # `# multi gpu acceleration` over `if gpus > 1: ...`: about the choice the strategy
                # line makes now, not about the statements left of the branches
                lines = list(_leading_lines(pieces[0]))
                apart = max((i for i, line in enumerate(lines) if line.comment is None), default=-1) + 1
                notes = [line.comment.value for line in lines[apart:] if line.comment is not None]
                if notes and all(_DEVICE_TOPIC.search(c) and not _CELL_MARK.match(c) for c in notes):
                    self.choice_comments.setdefault(id(around), []).extend(lines[apart:])
                    pieces[0] = pieces[0].with_changes(leading_lines=lines[:apart])
            if pieces:
                first_lines = _leading_lines(pieces[0])
                if first_lines and first_lines[0].comment is None:
                    # the wider of the two gaps, not both: two blank lines under an exported
                    # `# In[5]:` stay two when the statement below had one
                    gap = next((k for k, line in enumerate(first_lines) if line.comment is not None), len(first_lines))
                    removed = 0
                    while pending and pending[-1].comment is None:
                        pending.pop()
                        removed += 1
                    if pending and removed > gap:
                        pending += [cst.EmptyLine(indent=False)] * (removed - gap)
                pieces[0] = _with_leading(pieces[0], pending)
                pending = []
            if pending and pending[-1].comment is None and comments and comments[0].comment is None:
                comments = comments[1:]  # two removed statements' blank lines in a row: one is enough
            pending.extend(comments)
            if region is not None and index == region.start:
                buffer = []
            if buffer is not None:
                pieces = [_flat_blank_lines(p) for p in pieces]
                if pieces and index > 0 and id(original.body[index - 1]) in self.plan.moved:
                    pieces[0] = _one_blank_line(pieces[0])  # the moved `def` took its own spacing along
            elif pieces and out and isinstance(out[-1], cst.With) and id(out[-1]) in self.scopes:
                out[-1], pieces[0] = _blank_line_after_scope(out[-1], pieces[0])
            (buffer if buffer is not None else out).extend(pieces)
            origin.update((id(piece), orig) for piece in pieces)
            if region is not None and index == region.end:
                out.extend(self._wrap(region, buffer or []))
                self.scopes.update(id(s) for s in out if isinstance(s, cst.With))
                buffer = None
                region = next(region_iter, None)
        if not out:
            out = [cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=pending)]
            if not pending:
                self.emptied.add(id(out[0]))
            pending = []
        # no blank line left to end the file or the block: it set apart a statement that is gone
        while pending and pending[-1].comment is None:
            pending.pop()
        if not pending and isinstance(out[-1], cst.With) and id(out[-1]) in self._scopes_made:
            out[-1] = _compile_joins_build(out[-1])
        if pending:
            return updated.with_changes(body=out, footer=[*pending, *updated.footer])
        return updated.with_changes(body=out)

    def _summaries_printed_again(self, body: Sequence[cst.BaseStatement]) -> set[int]:
        """The template's `model.summary()` before any compile, followed in the same block by a compile
        and `parallel.summary()`, renamed to read the same, with nothing between but the removed
        call, compiles, messages and statements that do not name the model (it would print the
        model twice, once inside the scope)."""
        found: set[int] = set()
        compiled = False
        for index, statement in enumerate(body):
            compiled = compiled or _compiles(statement)
            receiver = _summary_receiver(statement)
            if compiled or receiver is None or id(receiver) in self.plan.nodes:
                continue
            between: list[cst.BaseStatement] = []
            for later in body[index + 1:]:
                other = _summary_receiver(later)
                if other is not None:
                    replacement = self.plan.nodes.get(id(other))
                    if isinstance(replacement, cst.Name) and replacement.deep_equals(receiver) and any(
                        _compiles(s) for s in between
                    ):
                        found.add(id(statement))
                    break
                if not (self.plan.statements.get(id(later), 0) is None or message(later) or _compiles(later)
                        or not _names(later, receiver.value)):  # (`optimizer = Adam(...)` builds no model)
                    break
                between.append(later)
        return found

    def _builds_followed(
        self, statements: list[cst.BaseStatement]
    ) -> tuple[list[cst.BaseStatement], list[cst.EmptyLine]]:
        """`statements` with the commented-out code that sat under a build put back right under it
        (above the statement now following it), and the lines of a build that ends them."""
        statements = list(statements)
        for k, statement in enumerate(statements):
            lines = self.follow_build.pop(id(statement), None)
            if lines is None:
                continue
            if k + 1 == len(statements):
                return statements, lines
            statements[k + 1] = _with_leading(statements[k + 1], lines)
        return statements, []

    def _wrap(self, region: Region, body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        lines: list[cst.EmptyLine] = []
        # data made before the model (`X = rng.randn(400, 12)` that `build(X.shape[1])` reads) stay
        # above the strategy line, where they were: they create no variable (round 41, fa08)
        head, body = _data_before(body)
        if body:
            # The comment lines right above the first statement (no blank line between) are its
            # own (`# two inputs: ...` above `user_in = Input(...)`): they stay with it, under the
            # scope; blank lines and comments set apart by them go above the strategy line.
            lines = stale_comments.without(_leading_lines(body[0]), stale_comments.DEVICE_SCOPE)
            attached = _own_comments_start(lines)
            if isinstance(body[0], cst.SimpleStatementLine) and attached < len(lines) and all(
                _setup_label(line) for line in lines[attached:]
            ):
                # "# Multi-gpu setup:" over the build the wrap followed labels what the strategy
                # line and its scope do now: it goes above them (round 56, au01)
                attached = len(lines)
            first = body[0]
            body[0] = body[0].with_changes(leading_lines=lines[attached:])
            if id(first) in self.follow_build:
                self.follow_build[id(body[0])] = self.follow_build.pop(id(first))
            lines = lines[:attached]
        # what the strategy line now does (the call's and the collapsed choice's comments, the
        # notes on dropped arguments) goes right above it, past anything hoisted above it
        choice = list(self.choice_comments.get(id(region), []))
        expression = refine(region.expression, self.tree) if self.tree is not None else region.expression
        ids = expression.ids if isinstance(expression, StrategyCode) else None
        if ids is None:
            # "# explicit device ids" on `gpus=[0, 1]`: the strategy line takes the first two GPUs
            # now, it names no ids (round 58, ay12)
            choice = [line for line in choice if line.comment is None or not _IDS_NOTE.match(line.comment.value)]
        choice += [cst.EmptyLine(comment=cst.Comment(note)) for note in region.notes]
        if not region.hoisted:
            lines, choice = [*lines, *choice], []
        # `_wrap` runs while the region's block is the innermost block visited.
        indent = "".join(i for _, i in self.indents) if isinstance(region.block, cst.IndentedBlock) else ""
        listing: list[cst.BaseStatement] = []
        if region.listing is not None and isinstance(expression, StrategyCode) and ids is not None and (
            expression.inputs is not None and expression.branch is None
        ):
            # `gpus = tf.config.list_logical_devices("GPU")` / `MirroredStrategy([gpus[2], gpus[3]])`:
            # the ids read as written; an id the machine lacks raises, as the old call did
            tf = expression.inputs.tf
            listing = [cst.parse_statement(f'{region.listing} = {tf}.config.list_logical_devices("GPU")\n')]
            strategy = strategy_statements(region.name, expression.on_listed(tf, region.listing), indent, self.unit,
                                           self.limit)
        else:  # (in a choice, the GPUs are bound in its branch: `listing`)
            strategy = strategy_statements(region.name, expression, indent, self.unit, self.limit, region.listing)
        announced: list[cst.BaseStatement] = []
        if region.said is not None:
            # the call's and the `else:`'s comments go into the branches only if they were kept here
            kept = {line.comment.value for line in [*lines, *choice] if line.comment is not None}
            said_here = replace(
                region.said,
                call_leading=[line for line in region.said.call_leading if line.comment and line.comment.value in kept],
                else_leading=[line for line in region.said.else_leading if line.comment and line.comment.value in kept],
            )
            strategy, announced = _with_said(strategy, region.name, expression, said_here)
            said = {c.value for s in announced for c in _walk_comments(s)}
            said |= {c.value for c in _walk_comments(strategy)}
            lines = [line for line in lines if line.comment is None or line.comment.value not in said]
            choice = [line for line in choice if line.comment is None or line.comment.value not in said]
        # (a hoisted count carries the edits planned inside it: `len(K.tensorflow_backend.
        # _get_available_gpus())` in public TensorFlow)
        region.hoisted = [self.moved.get(id(h)) or _with_node_edits(h, self.plan.nodes) for h in region.hoisted]
        if region.hoisted:
            first = region.hoisted[0]
            if head:  # (the data come between: the build's lines go above the strategy line)
                lines, choice = [], [*lines, *choice]
            if isinstance(first, (cst.FunctionDef, cst.ClassDef)) and any(
                line.comment is None for line in first.leading_lines
            ):
                # its own blank lines suffice below what goes above it, but a heading over the build
                # keeps the blank line that set it apart from the code above ("epochs = 2", blank
                # line, "# ---- VAE ----": round 57, aw17)
                end = max((k for k, line in enumerate(lines) if line.comment is not None), default=-1) + 1
                lines = lines[:end]
            region.hoisted[0] = _with_leading(first, lines)
            last = region.hoisted[-1]
            if isinstance(last, (cst.FunctionDef, cst.ClassDef)):
                # After a moved definition, the same blank lines that set it apart.
                blanks = [line for line in last.leading_lines if line.comment is None][-2:]
                blanks = [b.with_changes(indent=False) for b in blanks]
                strategy = strategy.with_changes(leading_lines=[*blanks, *_leading_lines(strategy)])
            elif isinstance(last, cst.BaseCompoundStatement) and not _leading_lines(strategy):
                # after a moved block (`for g in gpus: set_memory_growth(g, True)`), a blank line
                strategy = strategy.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
            strategy = strategy.with_changes(leading_lines=[*_leading_lines(strategy), *choice])
        else:
            strategy = strategy.with_changes(leading_lines=_once([*lines, *_leading_lines(strategy)]))
        out: list[cst.BaseStatement] = []
        left: list[cst.EmptyLine] = []  # the commented-out code of a build that ended a part
        for inside, statements in _scoped_parts(body, text_cells=isinstance(region.block, cst.Module)):
            if left and statements:
                statements[0] = _with_leading(statements[0], left)
                left = []
            statements, left = self._builds_followed(statements)
            if not inside:
                if out and isinstance(out[-1], cst.With) and statements:
                    out[-1], statements[0] = _blank_line_after_scope(out[-1], statements[0])
                out.extend(statements)
                continue
            statements, data = data_after(statements, self._read_in_functions(region.block))
            statements = [_fitted_lines(s, indent + self.unit, self.unit, self.limit) for s in statements]
            lead: Sequence[cst.EmptyLine] = []
            if out:  # a later scope: the first statement's lines go above its `with`, but for
                # the comment lines right above it (its own: they stay with it, under the scope)
                lines = list(_leading_lines(statements[0]))
                attached = _own_comments_start(lines)
                lead = lines[:attached]
                statements[0] = statements[0].with_changes(leading_lines=lines[attached:])
            out.append(cst.With(
                items=[cst.WithItem(item=cst.parse_expression(f"{region.name}.scope()"))],
                body=cst.IndentedBlock(
                    body=statements or [cst.SimpleStatementLine(body=[cst.Pass()])],
                    footer=[line.with_changes(indent=True) for line in left],
                ),
                leading_lines=lead,
            ))
            self._scopes_made.add(id(out[-1]))
            left = []
            if data:
                # the data moved after the block are set apart from it by a blank line: the one that
                # set the removed call apart from the build, or a new one
                scope, first = _blank_line_after_scope(cst.ensure_type(out[-1], cst.With), data[0])
                lines = list(_leading_lines(first))
                if not lines or lines[0].comment is not None:
                    first = first.with_changes(leading_lines=[cst.EmptyLine(indent=False), *lines])
                out[-1], data = scope, [first, *data[1:]]
            out.extend(data)
        # after a choice written with blank lines between its parts (pyimagesearch's `if G <= 1:` ...
        # `# otherwise, ...` `else:`), a blank line sets the scope apart from it (round 56, au08,
        # av04); a compact `if`/`else` stays right above its `with`
        out = _scope_set_apart([strategy, *announced, *out])[1 + len(announced):]
        if listing:  # (the strategy line's comments go above the two lines)
            listing = [listing[0].with_changes(leading_lines=_leading_lines(strategy))]
            strategy = strategy.with_changes(leading_lines=[])
        emitted = [*region.hoisted, *head, *listing, strategy, *announced, *out]
        if region.start == 0 and isinstance(region.block, cst.IndentedBlock):
            # a block's first statement starts right below its header (a hoisted `def` brings its
            # blank lines along)
            lines = list(_leading_lines(emitted[0]))
            while lines and lines[0].comment is None:
                lines.pop(0)
            emitted[0] = emitted[0].with_changes(leading_lines=lines)
        return emitted


# `# --- phase 1: autoencoder ---`, `##### Model #####`, `# %%`: a section's heading, not a line's comment
_SECTION_HEADING: Final = re.compile(r"^#+\s*(?:[-=#*~_]{3,}|%%)|[-=#*~_]{3,}\s*$")


def _own_comments_start(lines: Sequence[cst.EmptyLine]) -> int:
    """Where the comment lines right above a statement start (no blank line between): its own,
    they stay with it under the scope. A section heading among them heads the whole section,
    the strategy line too: then none is its own."""
    attached = len(lines)
    while attached > 0 and lines[attached - 1].comment is not None:
        attached -= 1
    if any(_SECTION_HEADING.search(line.comment.value) for line in lines[attached:] if line.comment is not None):
        return len(lines)
    # an exported notebook's `# In[2]:` right above the code starts the cell: it stays above the
    # strategy line, and so does what comes before it (round 49, a cell marker with no blank line)
    marks = [k for k in range(attached, len(lines)) if _CELL_MARK.match(lines[k].comment.value)]  # type: ignore[union-attr]
    return marks[-1] + 1 if marks else attached


# a comment on the removed call that heads the stage it starts (`# phase 1: train the new head`),
# not the choice of devices the strategy line makes
_STAGE_HEADING: Final = re.compile(r"^#+\s*(?:phase|stage|step|part|round)\s*\d", re.IGNORECASE)
_CELL_MARK: Final = re.compile(r"^#\s*(?:In\[[ \d]*\]:|%%)")


def _emptied_if(statement: cst.If, emptied: set[int]) -> bool:
    """An `if` (no `elif`/`else`) left holding only the `pass` the plan put where all its
    statements went, whose condition calls nothing: it does nothing."""
    return statement.orelse is None and _only(statement.body, emptied) and not any(
        isinstance(n, cst.Call) for n in walk(statement.test)
    )


def _only(block: cst.BaseSuite, emptied: set[int]) -> bool:
    """The block holds only the `pass` the plan put where all its statements went, and no comment."""
    return isinstance(block, cst.IndentedBlock) and len(block.body) == 1 and id(block.body[0]) in emptied and not any(
        line.comment is not None for line in block.footer
    )


def _once(lines: list[cst.EmptyLine]) -> list[cst.EmptyLine]:
    """Comment lines less one repeating the comment right above it (two cells' `# --- cell ---`
    headings, brought together above the strategy line)."""
    kept: list[cst.EmptyLine] = []
    for line in lines:
        if line.comment is not None and kept and kept[-1].comment is not None and (
            kept[-1].comment.value == line.comment.value and line.comment.value.strip("# ")
        ):
            continue
        kept.append(line)
    return kept


def data_after(
    statements: list[cst.BaseStatement], read_in_functions: frozenset[str]
) -> tuple[list[cst.BaseStatement], list[cst.BaseStatement]]:
    """The scope's statements, less a run of data assignments between what builds and compiles
    (`imgs = np.random.rand(...)` under the model): those go after the scope, in their order.

    They create no variables, and moving them later changes nothing: no later statement of the
    scope names anything they name, no function reads what they bind, and they bind plain names."""
    codes = [_MODULE.code_for_node(s.with_changes(leading_lines=[])) for s in statements]
    if any(code.startswith(PLACEHOLDER_PREFIX) for code in codes):
        return statements, []  # (a notebook's cells: nothing moves across a cell boundary)
    parsed = [_one_statement(code) for code in codes]
    values: set[str] = set()
    data = []
    for statement in parsed:
        is_data = statement is not None and _data_assignment(statement, values)
        data.append(is_data or _callback(statement))
        if is_data:
            assert statement is not None
            values |= _assigned_names(statement)
    start = next((i for i, d in enumerate(data) if d), None)
    if start is None or start == 0:
        return statements, []
    end = start
    while end < len(data) and data[end]:
        end += 1
    if end == len(data) or any(p is None for p in parsed):
        return statements, []
    if any(_CELL_MARK.match(line.comment.value) for s in statements[start:] for line in _leading_lines(s)
           if line.comment is not None):
        return statements, []  # (an exported notebook's cells: `# In[3]:`)
    bound = set().union(*(_assigned_names(parsed[i]) for i in range(start, end)))
    moved_reads = set().union(*(_names_in(parsed[i]) for i in range(start, end))) - bound
    later_names = set().union(*(_names_in(parsed[i]) for i in range(end, len(parsed))))
    if not any("random" in codes[i] or "seed" in codes[i] for i in range(end, len(codes))):
        moved_reads -= INERT_MODULES  # `np` named on both sides: its random state is all they could share
    # what a later statement may change: what it binds, and what it calls (or calls a method of),
    # `compile` aside (it sets the optimizer and loss, which nothing moved reads)
    later_changed = set().union(*(_changed_in(parsed[i]) for i in range(end, len(parsed))))
    if bound & later_names or moved_reads & later_changed or bound & read_in_functions:
        return statements, []
    moved = list(statements[start:end])
    kept = [*statements[:start], *statements[end:]]
    return kept, moved


def _data_before(statements: list[cst.BaseStatement]) -> tuple[list[cst.BaseStatement], list[cst.BaseStatement]]:
    """The scope's first statements that only make data (`rng = np.random.RandomState(8)`, `X =
    rng.randn(400, 12)`, `n = X.shape[1]`), and the rest; nothing moves, the scope starts later. A
    notebook's cell boundary, or a statement of any other kind, ends them."""
    values: set[str] = set()
    count = 0
    for statement in statements[:-1]:  # (never all of them: the scope holds the model)
        if cell_boundary(statement) or _under_cell_marker(statement):
            break
        parsed = _one_statement(_MODULE.code_for_node(statement.with_changes(leading_lines=[])))
        if parsed is None or not _data_assignment(parsed, values):
            break
        values |= _assigned_names(parsed)
        count += 1
    return [*statements[:count]], [*statements[count:]]


def _under_cell_marker(statement: cst.BaseStatement) -> bool:
    """An exported notebook's cell starts here (`# In[3]:` or `# %%` right above the statement)."""
    return any(line.comment is not None and _CELL_MARK.match(line.comment.value) for line in _leading_lines(statement))


def _data_assignment(statement: ast.stmt, values: set[str]) -> bool:
    """`x = np.random.rand(8)`, `batch = args.batch * gpus`; or an `if` whose condition calls
    nothing (but `len(gpus)`-like built-ins) and whose branches hold only such assignments (`if G >
    1: bs = 64 * G` / `else: bs = 64`)."""
    if isinstance(statement, ast.If):
        branches = [*statement.body, *statement.orelse]
        # (a call only to a built-in that counts: `if len(gpus) >= 2:`)
        calls = [n for n in ast.walk(statement.test) if isinstance(n, ast.Call)]
        return all(_operand(c) for c in calls) and all(_data_assignment(s, values) for s in branches)
    if isinstance(statement, ast.AugAssign):  # `batch_size *= 2`, `BATCH *= n_gpus` (round 44, ba11, ba15)
        return isinstance(statement.target, ast.Name) and (_arithmetic(statement.value) or _operand(statement.value))
    return (
        isinstance(statement, ast.Assign) and all(isinstance(t, ast.Name) for t in statement.targets)
        and inert(statement, values) and (data_value(statement.value, values) or _arithmetic(statement.value))
    )


def _assigned_names(statement: ast.stmt | None) -> set[str]:
    """The names a data assignment (or the branches of a data `if`) binds."""
    if isinstance(statement, ast.If):
        return set().union(*(_assigned_names(s) for s in [*statement.body, *statement.orelse]))
    if isinstance(statement, ast.Assign):
        return {t.id for t in statement.targets if isinstance(t, ast.Name)}
    if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
        return {statement.target.id}
    return set()


def _arithmetic(value: ast.expr) -> bool:
    """`args.batch_size * gpus`, `n // 2 + 1`, `64`, `BASE_BATCH`: arithmetic on names, attributes
    and constants, with no call anywhere (nothing it evaluates can create a variable)."""
    if isinstance(value, ast.BinOp):
        return all(_arithmetic(v) or _operand(v) for v in (value.left, value.right))
    if isinstance(value, ast.Constant) or (isinstance(value, ast.Name) and value.id.isupper()):
        return True  # `bs = 64`, `bs = BASE_BATCH` (a constant's name: no model is named so)
    return isinstance(value, ast.UnaryOp) and (_arithmetic(value.operand) or _operand(value.operand))


def _operand(value: ast.expr) -> bool:
    """A constant, a name, or an attribute/item of a name (`args.batch_size`, `cfg['bs']`), or a
    built-in of such that makes a number (`len(gpus)`, `max(n, 1)`, `int(cfg['bs'])`)."""
    if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in _NUMBER_BUILTINS
            and not value.keywords and value.args and all(_operand(a) for a in value.args)):
        return True
    while isinstance(value, (ast.Attribute, ast.Subscript)):
        if isinstance(value, ast.Subscript) and not isinstance(value.slice, (ast.Constant, ast.Name)):
            return False
        value = value.value
    return isinstance(value, (ast.Constant, ast.Name))


# built-ins that make a number of their arguments and nothing else
_NUMBER_BUILTINS: Final = frozenset({"len", "max", "min", "int", "float", "abs", "round"})
# Keras callbacks: constructing one creates no variables (`early = EarlyStopping(patience=3)`)
_CALLBACKS: Final = frozenset({"ModelCheckpoint", "EarlyStopping", "ReduceLROnPlateau", "TensorBoard", "CSVLogger",
                               "LearningRateScheduler", "TerminateOnNaN"})


# Calls a callback's arguments may make and still create nothing: paths and strings
# (`ModelCheckpoint(os.path.join(log_dir, "best.h5"))`, `"w.{}.h5".format(name)`).
_TEXT_CALLS: Final = frozenset({"join", "format", "str", "int", "float", "len", "max", "min", "round", "abspath",
                                "dirname", "basename", "expanduser"})


def _callback(statement: ast.stmt | None) -> bool:
    """`early = EarlyStopping(monitor='val_acc', patience=self.patience)`, or a list of Keras callbacks
    (`callbacks = [EarlyStopping(...), ModelCheckpoint(os.path.join(out, "best.h5"))]`)."""
    if not (isinstance(statement, ast.Assign) and all(isinstance(t, ast.Name) for t in statement.targets)):
        return False
    value = statement.value
    made = value.elts if isinstance(value, (ast.List, ast.Tuple)) and value.elts else [value]
    return all(_keras_callback(v) for v in made)


def _keras_callback(value: ast.expr) -> bool:
    if not isinstance(value, ast.Call):
        return False
    name = value.func.id if isinstance(value.func, ast.Name) else (
        value.func.attr if isinstance(value.func, ast.Attribute) else ""
    )
    inner = [n for n in ast.walk(value) if n is not value]
    return name in _CALLBACKS and not any(isinstance(n, (ast.Lambda, ast.NamedExpr, ast.Await)) for n in inner) and all(
        (n.func.id if isinstance(n.func, ast.Name) else getattr(n.func, "attr", "")) in _TEXT_CALLS
        for n in inner if isinstance(n, ast.Call)
    )


def _changed_in(statement: ast.stmt | None) -> set[str]:
    """Names `statement` binds (roots of attribute and item targets too) or calls or calls a method
    of; `compile` calls aside."""
    if statement is None:
        return set()
    found: set[str] = set()
    for node in ast.walk(statement):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)):
            targets = [node.target]
        elif isinstance(node, ast.Call) and not (isinstance(node.func, ast.Attribute) and node.func.attr == "compile"):
            targets = [node.func]
        for target in targets:
            found |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return found


def _cast_assign(statement: ast.stmt | None) -> ast.Assign:
    assert isinstance(statement, ast.Assign)
    return statement


def _one_statement(code: str) -> ast.stmt | None:
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return None
    return body[0] if len(body) == 1 else None


def _names_in(statement: ast.stmt | None) -> set[str]:
    return {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)} if statement is not None else set()


def _runs_model(statement: cst.BaseStatement) -> bool:
    """`model.fit(...)`, `history = model.fit_generator(...)`: trains or runs, creates nothing; or an
    `if` whose every branch only does that (`if gpus > 1: h = model.fit(x, y, batch_size=64)` /
    `else: h = model.fit(x, y, batch_size=32)`), with a condition that calls nothing."""
    if isinstance(statement, cst.If):
        # (a kept `if gpus > 1:` may also save or say what it did: `model.save(path)` creates nothing)
        return _every_branch(statement, lambda s: _runs_model(s) or calls_method(s, SAVES) or message(s)) and any(
            _runs_model(s) for suite in branch_suites(statement) for s in getattr(suite, "body", ())
        )
    return calls_method(statement, RUNS)


def trains_or_builds_nothing(statement: cst.BaseStatement) -> bool:
    """`model.fit(x, y)`, a print, plain data: a statement that needs no scope (a notebook's cell
    boundary does not count: a scope does not run on across it)."""
    if cell_boundary(statement):
        return False
    return _runs_model(statement) or builds_nothing(_MODULE.code_for_node(statement.with_changes(leading_lines=[])))


def _only_says(statement: cst.BaseStatement) -> bool:
    """`print(...)` / `logger.info(...)` / `model.summary()`, or an `if`/`elif`/`else` whose
    conditions call nothing and whose every branch only prints (`if G <= 1: print("1 GPU")` / `else: print(...)`)."""
    if message(statement) or _summary(statement):
        return True
    return isinstance(statement, cst.If) and _every_branch(statement, message)


def _every_branch(statement: cst.If, does: Callable[[cst.BaseStatement], bool]) -> bool:
    """The `if`/`elif`/`else` chain's conditions call nothing (but `len`: `if len(gpus) > 1:`) and
    every statement of every branch `does`."""
    tests: list[cst.BaseExpression] = []
    current: cst.CSTNode | None = statement
    while isinstance(current, cst.If):
        tests.append(current.test)
        current = current.orelse
    calls = [n for t in tests for n in walk(t) if isinstance(n, cst.Call)]
    return not any(not m.matches(c.func, m.Name("len")) for c in calls) and all(
        isinstance(suite, cst.IndentedBlock) and all(does(s) for s in suite.body)
        for suite in branch_suites(statement)
    )


def _after_the_model(statement: cst.BaseStatement) -> bool:
    """A statement ending the covered range that builds nothing (`hsv = [...]`, `self.colors =
    [...]` after a `load_model`): it stays below the `with`, as a person would write it."""
    if cell_boundary(statement) or any(
        line.comment is not None and _CELL_MARK.match(line.comment.value) for line in _leading_lines(statement)
    ):
        return False
    return builds_nothing(_MODULE.code_for_node(statement.with_changes(leading_lines=[])))


def _choice_messages_first(body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """`body` with a messages-only `if` that says which device path runs (`if gpus > 1:
    log.info('%d GPUs', gpus)` / `else: log.info('one device')`, left by a collapsed guard among
    the statements the scope covers), or a message on the devices (`print("Using %i GPUs" % n)`),
    moved to its front, so that it stays above the `with`, by the strategy line: it creates
    nothing. Only when nothing before it binds or changes a name it reads and no cell boundary
    lies between."""
    if any(cell_boundary(s) for s in body):
        return body
    moved: list[int] = []
    for index, statement in enumerate(body):
        # (or a message on the GPU count: `print("Using %i GPUs" % ngpus)` over the guard that went)
        counted = message(statement) and bool(
            _DEVICE_TOPIC.search(_MODULE.code_for_node(statement.with_changes(leading_lines=[])))
        )
        if index == 0 or not (isinstance(statement, cst.If) and _only_says(statement) or counted):
            continue
        if any(_CELL_MARK.match(line.comment.value) for s in body[1:index + 1] for line in _leading_lines(s)
               if line.comment is not None):
            break
        parsed = _one_statement(_MODULE.code_for_node(statement.with_changes(leading_lines=[])))
        earlier = [_one_statement(_MODULE.code_for_node(s.with_changes(leading_lines=[]))) for s in body[:index]]
        if parsed is None or any(e is None for e in earlier):
            continue
        changed = set().union(*(_changed_in(e) for e in earlier))
        if not _names_in(parsed) & changed:
            moved.append(index)
    if not moved:
        return body
    return [*(body[i] for i in moved), *(s for i, s in enumerate(body) if i not in moved)]


def _scope_set_apart(statements: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """`statements` with a blank line above each `with` right after an `if` holding blank lines."""
    out = list(statements)
    for k in range(1, len(out)):
        scope, before = out[k], out[k - 1]
        if isinstance(scope, cst.With) and not scope.leading_lines and isinstance(before, cst.If) and (
            "\n\n" in _MODULE.code_for_node(before.with_changes(leading_lines=[])).rstrip("\n")
        ):
            out[k] = scope.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
    return out


def _text_cell(statement: cst.BaseStatement) -> bool:
    """A bare string statement: in a module after its docstring, an exported Colab text cell."""
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and m.matches(
        statement.body[0], m.Expr(value=m.SimpleString() | m.ConcatenatedString())
    )


def _needing_scope(
    body: list[cst.BaseStatement], text_cells: bool = False
) -> list[tuple[bool, list[cst.BaseStatement]]]:
    """`_scoped_parts` of `body`, or `body` left as written when nothing in it builds or compiles."""
    if all(builds_nothing(_MODULE.code_for_node(s.with_changes(leading_lines=[]))) for s in body):
        return [(False, body)] if body else []
    return _scoped_parts(body, text_cells=text_cells)


def _scoped_parts(
    body: list[cst.BaseStatement], text_cells: bool = False
) -> list[tuple[bool, list[cst.BaseStatement]]]:
    """The scope's statements as (under a scope?, statements): one scope, unless the model is
    trained among them (`fit` before a second `compile` of a fine-tuning stage, or after the
    compile in a dissolved `with tf.device(...)` block). Then each stretch that builds or
    compiles gets a `with` of its own, and what lies between and after (the `fit`, the data it
    reads, `layer.trainable = True`) stays at the block's level, as written."""
    body = _choice_messages_first(body)
    cut = next((i for i, s in enumerate(body) if text_cells and 0 < i < len(body) - 1 and _text_cell(s)), None)
    if cut is not None:
        # a Colab text cell (`"""## Parallelise ..."""` between the build and the compile) stays at
        # the module's level, between two cells, as the export had it; each side that builds or
        # compiles gets its own scope (round 55, at15)
        return [*_needing_scope(body[:cut]), (False, [body[cut]]), *_needing_scope(body[cut + 1:], text_cells=True)]
    lead = next((i for i, s in enumerate(body) if not _only_says(s)), len(body))
    trail = next((i for i, s in enumerate(reversed(body)) if not _only_says(s) and not _after_the_model(s)), len(body))
    if 0 < lead + trail < len(body):
        # messages before the construction or after the compile create nothing: left out, as written
        core = _scoped_parts(body[lead:len(body) - trail], text_cells=text_cells)
        return [*([(False, body[:lead])] if lead else []), *core, *([(False, body[-trail:])] if trail else [])]
    runs = [i for i, s in enumerate(body) if _runs_model(s)]
    if not runs:
        return [(True, body)]
    needs = [
        not _runs_model(s) and not builds_nothing(_MODULE.code_for_node(s.with_changes(leading_lines=[])))
        for s in body
    ]
    if not any(needs):
        return [(True, body)]
    parts: list[tuple[bool, list[cst.BaseStatement]]] = []
    index = 0
    while index < len(body):
        later = [i for i in range(index, len(body)) if needs[i]]
        if not later:
            parts.append((False, body[index:]))
            break
        start = later[0]
        stop = next((r for r in runs if r > start), len(body))
        end = max(i for i in range(start, stop) if needs[i]) + 1
        if start > index:
            parts.append((False, body[index:start]))
        parts.append((True, body[start:end]))
        index = end
    return parts


def _fitted_lines(node: _N, indent: str, unit: str, limit: int) -> _N:
    """`node` (a statement, or an `else`/`except` clause of one), moved one level in under the
    scope, with its one-line statements that no longer fit within `limit` rewrapped
    (layout.fitted); `indent`: where it now is."""
    if isinstance(node, cst.SimpleStatementLine):
        return fitted(node, indent, unit, limit)  # type: ignore[return-value]
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return node  # a definition keeps its lines as written
    changes: dict[str, object] = {}
    for name in ("body", "orelse", "finalbody", "handlers"):
        part = getattr(node, name, None)
        if isinstance(part, cst.IndentedBlock):
            inner = indent + (part.indent if part.indent is not None else unit)
            changes[name] = part.with_changes(body=[_fitted_lines(s, inner, unit, limit) for s in part.body])
        elif isinstance(part, (cst.Else, cst.Finally, cst.If)):
            changes[name] = _fitted_lines(part, indent, unit, limit)
        elif isinstance(part, (tuple, list)):
            changes[name] = [_fitted_lines(h, indent, unit, limit) for h in part]
    return node.with_changes(**changes) if changes else node


def _with_said(
    strategy: cst.BaseStatement, name: str, expression: str, said: Said
) -> tuple[cst.BaseStatement, list[cst.BaseStatement]]:
    """The strategy choice with the guard's messages in its branches (before and after the
    assignment, as around the call); with no choice left (the guard only said "more than one
    GPU"), an `if <name>.num_replicas_in_sync > 1:` after the strategy line says them."""
    if said.chain is not None:
        return _chosen_in_chain(strategy, name, expression, said.chain), []
    count = sliced_count(expression)
    if said.replicas is not None:
        several, one = ([_message_line(s) for s in group] for group in said.replicas)
        one = [_with_leading(one[0], said.else_leading), *one[1:]] if one else one
        replicas = (several, one)
    if said.replicas is not None and said.replicas_for_both:
        return strategy, [_replicas_if(name, several, one, count)] if several or one else []
    groups = (said.before, said.after, said.otherwise, said.otherwise_after)
    before, after, otherwise, otherwise_after = ([_message_line(s) for s in group] for group in groups)
    if count is not None:  # said after the strategy line, on the GPUs it holds
        after = [replicas_said(s, count, name) for s in after]
    if said.replicas is not None:
        several, one = replicas
        after = [*after, _replicas_if(name, several, one, count)] if several or one else after
    branch = expression.branch if isinstance(expression, StrategyCode) else None
    if isinstance(strategy, cst.If) and branch is not None:
        multi, single = (strategy.body, strategy.orelse) if branch.multi_when_true else (
            cst.ensure_type(strategy.orelse, cst.Else).body, strategy.body
        )
        multi = cst.ensure_type(multi, cst.IndentedBlock)
        chosen = [_with_leading(multi.body[0], said.call_leading), *multi.body[1:]] if multi.body else []
        new_multi = multi.with_changes(body=[*before, *chosen, *after])
        single_block = cst.ensure_type(single.body if isinstance(single, cst.Else) else single, cst.IndentedBlock)
        new_single = single_block.with_changes(body=[*otherwise, *single_block.body, *otherwise_after])
        orelse = cst.ensure_type(strategy.orelse, cst.Else).with_changes(leading_lines=said.else_leading)
        if branch.multi_when_true:
            return strategy.with_changes(body=new_multi, orelse=orelse.with_changes(body=new_single)), []
        return strategy.with_changes(body=new_single, orelse=orelse.with_changes(body=new_multi)), []
    if said.replicas is not None and not (before or otherwise or otherwise_after):
        return strategy, after  # only the `try`'s messages: its `if` on the replica count as it is
    if not (before or after or otherwise or otherwise_after):
        return strategy, []  # (every message went: no `if ...: pass` is left to say nothing)
    return strategy, [_replicas_if(name, [*before, *after], [*otherwise, *otherwise_after], count)]


def _chosen_in_chain(
    strategy: cst.BaseStatement, name: str, expression: str, chain: list[ChainBranch]
) -> cst.BaseStatement:
    """The `if`/`elif`/`else` that picked the model, choosing the strategy instead: the call's
    branch gets `strategy`, the others TensorFlow's default (one device), messages kept."""
    tf = str(expression).split(".distribute.")[0]
    single = cst.parse_statement(f"{name} = {tf}.distribute.get_strategy()\n")
    chosen: cst.If | cst.Else | None = None
    for branch in reversed(chain):
        body = cst.IndentedBlock(body=[
            *(_message_line(s) for s in branch.before), strategy if branch.several else single,
            *(_message_line(s) for s in branch.after),
        ])
        chosen = (
            cst.Else(body=body, leading_lines=branch.leading) if branch.test is None
            else cst.If(test=branch.test, body=body, orelse=chosen, leading_lines=branch.leading)
        )
    assert isinstance(chosen, cst.If)
    return chosen


def _replicas_if(
    name: str, several: list[cst.BaseStatement], one: list[cst.BaseStatement], count: str | None = None
) -> cst.If:
    """`if <name>.num_replicas_in_sync > 1: several else: one` (no `else` when `one` is empty;
    `if <name>.num_replicas_in_sync == 1: one` when `several` is). `several` print the replica
    count where they printed `count`, the most GPUs the strategy takes (replica_count.py)."""
    if count is not None:
        several = [replicas_said(s, count, name) for s in several]
    if not several:
        return cst.If(test=cst.parse_expression(f"{name}.num_replicas_in_sync == 1"), body=cst.IndentedBlock(body=one))
    return cst.If(
        test=cst.parse_expression(f"{name}.num_replicas_in_sync > 1"), body=cst.IndentedBlock(body=several),
        orelse=cst.Else(body=cst.IndentedBlock(body=one)) if one else None,
    )


class _NodeEdits(cst.CSTTransformer):
    def __init__(self, nodes: Mapping[int, cst.CSTNode]) -> None:
        super().__init__()
        self.nodes = nodes

    def on_leave(  # type: ignore[override]
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> cst.CSTNode:
        return self.nodes.get(id(original_node), updated_node)


def _with_node_edits(statement: cst.BaseStatement, nodes: Mapping[int, cst.CSTNode]) -> cst.BaseStatement:
    """`statement` (a copy of a statement the plan moves, sharing its nodes) with the replacements
    planned for those nodes."""
    if not nodes:
        return statement
    edited = statement.visit(_NodeEdits(nodes))
    assert isinstance(edited, cst.BaseStatement)
    return edited


def _message_line(statement: cst.BaseStatement) -> cst.BaseStatement:
    """A moved message with its comment lines (not its blank lines)."""
    assert isinstance(statement, cst.SimpleStatementLine)
    return statement.with_changes(leading_lines=[line for line in statement.leading_lines if line.comment])


def _commented_code_on(lines: Sequence[cst.EmptyLine], names: Iterable[str]) -> int:
    """How many of `lines`, from the first, are commented-out code on one of `names`
    (`#base_model.load_weights('best.h5')`) with no blank line before or between them."""
    pattern = re.compile(r"#\s*(?:%s)\b" % "|".join(re.escape(n) for n in sorted(names)))
    count = 0
    for line in lines:
        text = line.comment.value if line.comment is not None else ""
        if not names or not pattern.match(text) or not stale_comments.commented_code(text) or "multi_gpu" in text:
            break
        count += 1
    return count


def _removed_choice(statement: cst.BaseStatement, plan: Plan) -> bool:
    """An `if`/`try` the plan removes (a fallback collapsed into the strategy line), or the call
    itself (`parallel = multi_gpu_model(model, gpus=[0, 1])  # keep GPUs 2-3 free`)."""
    removed = id(statement) in plan.statements and plan.statements[id(statement)] is None
    return removed and (isinstance(statement, (cst.If, cst.Try)) or id(statement) in plan.calls)


def _width(line: str) -> int:
    return len(line.expandtabs(4))


def apply_plan(
    module: cst.Module, plan: Plan, tree: "Tree | None" = None, continued: Continuations | None = None
) -> cst.Module:
    """Applies `plan`. Given the parsed `tree` (its parent map), only the paths from the module to
    the edited nodes and region blocks are visited; everything else is reused as it is.
    `continued`: told of backslash continuations realigned after a rename (continuations.py)."""
    paths: set[int] | None = None
    if tree is not None:
        keys = set(plan.statements) | plan.unwrap | set(plan.nodes) | plan.dropped_lines | plan.deleted
        targets: list[cst.CSTNode] = [r.block for r in plan.regions]
        targets += [n for n in tree.all_nodes() if id(n) in keys]
        paths = {id(module)}
        for node in targets:
            current: cst.CSTNode | None = node
            while current is not None and id(current) not in paths:
                paths.add(id(current))
                current = tree.parent(current)
    return module.visit(_Applier(plan, paths, tree, continued))
