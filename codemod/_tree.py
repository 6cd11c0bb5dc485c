"""Tree helpers shared by the fixers: parents, blocks, bindings, source text."""

from __future__ import annotations

import functools
import io
import re
import tokenize
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Callable, TypeVar, Union, overload

import libcst as cst
from libcst.metadata import (
    CodeRange,
    MetadataWrapper,
    PositionProvider,
    ScopeProvider,
)

from .cell_scopes import PLACEHOLDER_PREFIX
from .exported_cells import is_export

Block = Union[cst.Module, cst.IndentedBlock]  # not `X | Y`: the codemod runs on Python 3.9
_SCOPE_NODES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_CPU_DEVICE = re.compile(r"^/?(device:)?cpu(:0)?$", re.IGNORECASE)
# What `tf.device` resolves to, in every TensorFlow namespace the era used.
TF_DEVICE = frozenset({"tensorflow.device", "tensorflow.compat.v1.device", "tensorflow.compat.v2.device"})
_EMPTY_MODULE = cst.Module(body=[])
_N = TypeVar("_N", bound=cst.CSTNode)
_INDEXED = frozenset({cst.Call, cst.ClassDef, cst.FunctionDef, cst.Import, cst.ImportFrom})


def code_of(node: cst.CSTNode) -> str:
    """The source of `node` on its own (an empty module's defaults: 4-space indent, LF)."""
    return _EMPTY_MODULE.code_for_node(node)


def zip_equal(*iterables: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
    """`zip(..., strict=True)` for Python 3.9: pairs items, raising if the lengths differ."""
    lists = [list(items) for items in iterables]
    if len({len(items) for items in lists}) > 1:
        raise ValueError(f"zip_equal: lengths differ: {[len(items) for items in lists]}")
    return zip(*lists)


class Tree:
    """A parsed module with the metadata every fixer needs, resolved once."""

    def __init__(self, module: cst.Module, keep: list[bool] | None = None) -> None:
        """`keep`: top-level statements the scope analysis sees (None: all). The others are
        neither walked nor analysed: their nodes have no scope, parent map entries stop at them."""
        skipped: set[int] = set()
        analysed = module
        if keep is not None and not all(keep):
            skipped = {id(s) for s, k in zip_equal(module.body, keep) if not k}
            analysed = module.with_changes(body=[s for s, k in zip_equal(module.body, keep) if k])
        self.wrapper = MetadataWrapper(analysed, unsafe_skip_copy=True)
        self._full_wrapper = self.wrapper if analysed is module else None
        self.module = module
        # One walk gives parents and the nodes the fixers look for, in source (pre-)order:
        # cheaper than ParentNodeProvider plus a findall pass per fixer.
        self._parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self._indexed: list[cst.CSTNode] = []
        parents, indexed = self._parents, self._indexed
        self._order: dict[cst.CSTNode, int] = {}
        order = self._order
        stack: list[cst.CSTNode] = [module]
        while stack:
            node = stack.pop()
            order[node] = len(order)
            if skipped and id(node) in skipped:
                continue
            if type(node) in _INDEXED:
                indexed.append(node)
            children = children_of(node)
            for child in children:
                parents[child] = node
            stack.extend(reversed(children))
        # QualifiedNameProvider only wraps `scope.get_qualified_names_for` in a lazy value for
        # every node; asking the scope directly for the few nodes looked at skips that pass.
        self.scopes = self.wrapper.resolve(ScopeProvider)
        self._positions_cache: Mapping[cst.CSTNode, CodeRange] | None = None

    @property
    def _positions(self) -> Mapping[cst.CSTNode, CodeRange]:
        """Positions are resolved on first use (a codegen pass over the module)."""
        if self._positions_cache is None:
            if self._full_wrapper is None:
                self._full_wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
            self._positions_cache = self._full_wrapper.resolve(PositionProvider)
        return self._positions_cache

    def all_nodes(self) -> Iterator[cst.CSTNode]:
        """Every node but the module itself."""
        return iter(self._parents)

    def all(self, *types: type) -> list[cst.CSTNode]:
        """Every node of these (exact, indexed) types, in source order."""
        assert all(t in _INDEXED for t in types)
        return [n for n in self._indexed if type(n) in types]

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node).strip()

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self._parents.get(node)
        while current is not None:
            yield current
            current = self._parents.get(current)

    def order(self, node: cst.CSTNode) -> int:
        """The node's index in source (pre-)order: compares like positions without resolving them."""
        return self._order[node]

    def position(self, node: cst.CSTNode) -> tuple[int, int]:
        start = self._positions[node].start
        return start.line, start.column + 1

    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        scope = self.scopes.get(node)
        if not scope:  # as QualifiedNameProvider does
            return set()
        names = {q.name for q in scope.get_qualified_names_for(node)}
        if not names and self._unbound_tf(node):
            # `tf.device(...)` in a notebook that never imports `tf` (a cell lost, or run in a kernel
            # that had it): the conventional alias, as its author meant it
            return {"tensorflow" + code_of(node)[2:]}
        return names

    def _unbound_tf(self, node: cst.CSTNode) -> bool:
        """`node` is `tf` or `tf.<attr>...`, and no scope of the module binds `tf`."""
        root = node
        while isinstance(root, cst.Attribute):
            root = root.value
        if not (isinstance(root, cst.Name) and root.value == "tf"):
            return False
        if not hasattr(self, "_tf_bound"):
            self._tf_bound = self.binds("tf")  # (asked once per `tf.` name: answered once)
        return not self._tf_bound

    def binds(self, name: str) -> bool:
        """Some scope of the (analysed) module binds `name`."""
        return any(name in s.assignments for s in set(self.scopes.values()) if s is not None)

    def statement_of(self, node: cst.CSTNode) -> cst.BaseStatement | None:
        """The statement directly inside a block that contains `node`."""
        current: cst.CSTNode | None = node
        while current is not None:
            parent = self._parents.get(current)
            if isinstance(parent, (cst.Module, cst.IndentedBlock)) and isinstance(
                current, cst.BaseStatement
            ):
                return current
            current = parent
        return None

    def block_of(self, statement: cst.BaseStatement) -> tuple[Block, int]:
        block = self._parents[statement]
        assert isinstance(block, (cst.Module, cst.IndentedBlock))
        return block, _index(block, statement)

    def block_chain(self, statement: cst.BaseStatement) -> list[tuple[Block, int]]:
        """(block, index) from `statement` outwards, stopping at the enclosing function/class."""
        chain = []
        current: cst.BaseStatement | None = statement
        while current is not None:
            block, index = self.block_of(current)
            chain.append((block, index))
            owner = self._parents.get(block)
            if block is self.module or isinstance(owner, _SCOPE_NODES) or owner is None:
                break
            current = self.statement_of(owner)
        return chain

    def enclosing_scope_node(self, node: cst.CSTNode) -> cst.CSTNode:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, _SCOPE_NODES):
                return ancestor
        return self.module

    def is_cpu_device_with(self, statement: cst.CSTNode) -> bool:
        """`with tf.device('/cpu:0'):` (one item, no `as`), the legacy home of templates."""
        if not isinstance(statement, cst.With) or len(statement.items) != 1:
            return False
        item = statement.items[0]
        call = item.item
        if item.asname is not None or not isinstance(call, cst.Call) or len(call.args) != 1:
            return False
        arg = call.args[0].value
        # A bytes literal is no device name: TensorFlow refuses `tf.device(b"/cpu:0")`.
        device = arg.evaluated_value if isinstance(arg, cst.SimpleString) else None
        return (
            bool(self.qualified_names(call.func) & TF_DEVICE)
            and isinstance(device, str)
            and bool(_CPU_DEVICE.match(device.strip()))
        )


def _index(block: Block, statement: cst.BaseStatement) -> int:
    for i, candidate in enumerate(block.body):
        if candidate is statement:
            return i
    raise ValueError("statement not in block")


def children_of(node: cst.CSTNode) -> Sequence[cst.CSTNode]:
    """`node.children`, remembered for the file being rewritten: libcst computes it with a visit
    every time it is asked, and the fixers walk the same statements many times."""
    known = _CHILDREN.get(node)
    if known is None:
        known = _CHILDREN[node] = node.children
    return known


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under `node` (itself first, nested scopes included), in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children_of(current)))


@overload
def findall(node: cst.CSTNode, types: type[_N]) -> list[_N]: ...
@overload
def findall(node: cst.CSTNode, types: tuple[type, ...]) -> list[Any]: ...
def findall(node: cst.CSTNode, types: type | tuple[type, ...]) -> list[Any]:
    """The nodes of `types` under `node` (itself included), in source order: `m.findall` for a
    type test, without building a matcher visitor."""
    return [n for n in walk(node) if isinstance(n, types)]


def names_in_functions(node: cst.CSTNode) -> frozenset[str]:
    """Every name a function defined under `node` names: what such a function may read (a global,
    a closure's variable), so a statement binding one stays where it is."""
    return frozenset(n.value for f in findall(node, cst.FunctionDef) for n in walk(f) if isinstance(n, cst.Name))


def scope_owner(statement: cst.CSTNode) -> str | None:
    """`strategy` of `with strategy.scope():`, its only item; None for any other statement."""
    if not isinstance(statement, cst.With) or len(statement.items) != 1 or statement.items[0].asname is not None:
        return None
    item = statement.items[0].item
    if (isinstance(item, cst.Call) and not item.args and isinstance(item.func, cst.Attribute)
            and item.func.attr.value == "scope" and isinstance(item.func.value, cst.Name)):
        return item.func.value.value
    return None


def walk_same_scope(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under `node`, not descending into nested functions, classes or lambdas."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in reversed(children_of(current)):
            if not isinstance(child, _SCOPE_NODES):
                stack.append(child)


def _target_nodes(statement: cst.CSTNode) -> Iterator[cst.CSTNode]:
    for node in walk_same_scope(statement):
        if isinstance(node, cst.AssignTarget):
            yield from _flatten_target(node.target)
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            yield node.target
        elif isinstance(node, (cst.For, cst.CompFor)):
            yield from _flatten_target(node.target)
        elif isinstance(node, cst.AsName):
            yield from _flatten_target(node.name)
        elif isinstance(node, cst.NamedExpr):
            yield node.target


def _flatten_target(target: cst.CSTNode) -> Iterator[cst.CSTNode]:
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _flatten_target(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _flatten_target(target.value)
    else:
        yield target


def binds(statement: cst.CSTNode, target_code: str, tree: Tree) -> bool:
    """True when `statement` assigns the expression spelled `target_code` (a name or `self.x`)."""
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return statement.name.value == target_code
    return any(tree.code(t) == target_code for t in _target_nodes(statement))


# bound_names per node for the file being rewritten (core.py clears it after each file): the
# fixers ask it for the same statements many times. Keyed by id, holding the node (no id reuse).
_BOUND: dict[int, tuple[cst.CSTNode, frozenset[str]]] = {}
# children_of per node (nodes hash by identity; holding them as keys rules out id reuse).
_CHILDREN: dict[cst.CSTNode, Sequence[cst.CSTNode]] = {}


_MEMOS: list[dict[cst.CSTNode, Any]] = []
_R = TypeVar("_R", bool, set[str])


def clear_caches() -> None:
    """Forget the per-file caches (called once a file's rewrite is done)."""
    _BOUND.clear()
    _CHILDREN.clear()
    for memo in _MEMOS:
        memo.clear()


def memoized(function: Callable[[cst.CSTNode], _R]) -> Callable[[cst.CSTNode], _R]:
    """Remember a pure question about one node for the file being rewritten (nodes never change;
    the fixers ask the same statements many times). Sets are handed out as copies."""
    memo: dict[cst.CSTNode, Any] = {}
    _MEMOS.append(memo)

    @functools.wraps(function)
    def wrapper(node: cst.CSTNode) -> _R:
        known = memo.get(node)
        if known is None:
            known = memo[node] = function(node)
        return set(known) if isinstance(known, set) else known  # type: ignore[return-value]

    return wrapper


def bound_names(statement: cst.CSTNode) -> set[str]:
    """Plain names a statement assigns (same scope)."""
    known = _BOUND.get(id(statement))
    if known is not None and known[0] is statement:
        return set(known[1])
    names = _bound_names(statement)
    _BOUND[id(statement)] = (statement, frozenset(names))
    return names


def _bound_names(statement: cst.CSTNode) -> set[str]:
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return {statement.name.value}
    names = {t.value for t in _target_nodes(statement) if isinstance(t, cst.Name)}
    for node in walk_same_scope(statement):
        if isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(
            node.names, cst.ImportStar
        ):
            for alias in node.names:
                if alias.asname is not None:
                    names.add(cst.ensure_type(alias.asname.name, cst.Name).value)
                else:
                    names.add(dotted_name(alias.name).split(".")[0])
    return names


def used_names(node: cst.CSTNode) -> set[str]:
    """Plain names read anywhere under `node` (including nested scopes, conservatively)."""
    return {n.value for n in walk(node) if isinstance(n, cst.Name)}


def dotted_name(node: cst.CSTNode) -> str:
    """`a.b.c` for a Name/Attribute chain, "" for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{dotted_name(node.value)}.{node.attr.value}"
    return ""


def method_call(statement: cst.BaseStatement, method: str) -> cst.Call | None:
    """The call of a statement that is only `x.<method>(...)`."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    small = statement.body[0]
    call = small.value if isinstance(small, cst.Expr) else None
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == method:
        return call
    return None


# what runs a model and creates nothing: it needs no strategy scope
RUNS = frozenset({"fit", "fit_generator", "evaluate", "evaluate_generator", "predict", "predict_generator"})


def calls_method(statement: cst.BaseStatement, methods: frozenset[str]) -> bool:
    """`x.m(...)` or `name = x.m(...)`, alone on its line, for a method `m` of `methods`."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    value = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
    return (
        isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in methods
    )


def branch_suites(statement: cst.CSTNode) -> list[cst.BaseSuite]:
    """The suites of every branch of an `if`/`elif`/`else` chain, or of a `try` and its handlers."""
    suites: list[cst.BaseSuite] = []
    current: cst.CSTNode | None = statement
    while isinstance(current, cst.If):
        suites.append(current.body)
        current = current.orelse
    if isinstance(current, cst.Else):
        suites.append(current.body)
    if isinstance(statement, cst.Try):
        suites += [statement.body, *(h.body for h in statement.handlers)]
    return suites


def runs_as_script(module: cst.Module) -> bool:
    """Nothing imports the file's names: it runs as a program (`if __name__ == "__main__":`), trains
    at module level (`model.fit(...)`), or is a notebook or a notebook saved as a script (its cells
    run top to bottom: `trainer.train(...)` in the last one)."""
    if PLACEHOLDER_PREFIX + "cell_boundary__" in module.code or is_export(module.code):
        return True
    for statement in module.body:
        if isinstance(statement, cst.If) and "__main__" in code_of(statement.test):
            return True
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        for call in findall(statement, cst.Call):
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("fit", "fit_generator"):
                return True
    return False


def code_tokens(code: str, renamed: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """`code`'s tokens, layout and comments aside, with `renamed` names (dotted too) replaced:
    two statements that differ only in alignment or the parallel model's name compare equal."""
    skipped = (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT, tokenize.ENDMARKER)
    try:
        found = tokenize.generate_tokens(io.StringIO(code.strip() + "\n").readline)
        tokens = [t.string for t in found if t.type not in skipped]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return (code,)
    for old, new in (renamed or {}).items():
        old_parts, new_parts = _dotted_tokens(old), _dotted_tokens(new)
        out: list[str] = []
        i = 0
        while i < len(tokens):
            if tokens[i:i + len(old_parts)] == old_parts and (not out or out[-1] != "."):
                out += new_parts
                i += len(old_parts)
            else:
                out.append(tokens[i])
                i += 1
        tokens = out
    return tuple(tokens)


def _dotted_tokens(name: str) -> list[str]:
    parts = name.split(".")
    return [t for i, part in enumerate(parts) for t in ([part] if i == 0 else [".", part])]
