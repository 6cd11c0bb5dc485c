"""A cell's code after the rewrite pulled it into a scope opened in an earlier cell: the
`with ...:` headers reopened at its top, dropped again where the cell builds and compiles
nothing, and its final expression left where it is still displayed. Shared by notebooks
(notebook.py) and nbconvert `.py` exports (exported_cells.py)."""

from __future__ import annotations

import ast
import re
from collections.abc import Collection
from typing import Final

__all__ = [
    "INERT_MODULES", "PLACEHOLDER_PREFIX", "builds_nothing", "cell_comments_first", "data_value",
    "display_last_expression", "drop_empty_reopen", "drop_needless_reopen", "inert", "reopen",
]

# What the names of the statements standing in for cell boundaries and IPython lines start with
# (notebook.py): the import fixer reads them as set-up lines between a notebook's imports.
PLACEHOLDER_PREFIX = "__multi_gpu_codemod_"


def drop_empty_reopen(body: list[str], count: int, indent: int) -> list[str]:
    """A cell whose code under the scope all went elsewhere (the call it held was removed, or a
    repeated compile) keeps no reopened `with ...:` header: it keeps its comments and blank
    lines, at the cell's own indentation, and its code after them as it is."""
    rest = body[count:]
    code = next((k for k, line in enumerate(rest) if line.strip() and not line.lstrip().startswith("#")), None)
    if code is not None and len(rest[code]) - len(rest[code].lstrip(" \t")) >= indent:
        return body
    # nothing of the cell is under the scope (its compile was a repeat of the last cell's): what
    # follows starts at the cell's own level
    end = len(rest) if code is None else code
    head = [line[indent:] if line[:indent].strip() == "" else line.lstrip(" \t") for line in rest[:end]]
    return [*head, *rest[end:]]


# Calls that create no TensorFlow variables: a cell holding only these (and imports, constants,
# `x.shape`) needs no strategy scope.
# built-ins called by name (not methods: `other.sum()` says nothing of what `other` is)
_INERT_BUILTINS = frozenset({"int", "float", "bool", "set", "sorted", "zip", "enumerate", "min", "max", "sum", "abs",
                             "round"})
_INERT_CALLS = frozenset({"print", "len", "display", "repr", "str", "type", "range", "list", "dict", "tuple",
                          "summary", "count_params", "plot", "show", "head", "describe", "format",
                          "save", "save_weights", "get_weights", "set_weights", "to_json",
                          # Keras callbacks hold no variables (`checkpoint.set_model(model)` neither)
                          "ModelCheckpoint", "EarlyStopping", "ReduceLROnPlateau", "TensorBoard", "CSVLogger",
                          "LearningRateScheduler", "TerminateOnNaN", "set_model",
                          # label arrays (`keras.utils.to_categorical(y, 3)`): NumPy in, NumPy out
                          "to_categorical", "pad_sequences", "ImageDataGenerator", "flow_from_directory",
                          "flow_from_dataframe", "flow"})
INERT_MODULES = frozenset({"np", "numpy", "pd", "pandas", "os", "sys", "math", "plt", "json", "time", "random",
                            "logging", "logger", "log", "colorsys", "string", "re", "itertools", "collections",
                            "glob", "csv", "pickle", "datetime"})


def _inert_cell(statements: list[ast.stmt]) -> bool:
    """Every statement is inert; a name an inert statement of the cell bound (`X = np.random.rand(...)`)
    is a NumPy/pandas value after it, whose methods (`X.sum(axis=1)`) create no variables either."""
    values: set[str] = set()
    for statement in statements:
        if isinstance(statement, ast.FunctionDef) and _inert_function(statement, values):
            values.add(statement.name)  # `describe(CFG)` below runs only what it says: inert too
            continue
        if isinstance(statement, ast.ClassDef) and _inert_class(statement):
            if _callback_class(statement):
                values.add(statement.name)  # `checkpointer = MyModelCheckPoint(path)`: a callback
            continue
        if not inert(statement, values):
            return False
        if isinstance(statement, ast.Assign) and data_value(statement.value, values):
            values |= {n.id for t in statement.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return True


def _inert_function(statement: ast.FunctionDef, values: Collection[str]) -> bool:
    """`def describe(cfg): for k in sorted(cfg): print(k, cfg[k])`: undecorated, with constant
    defaults, a body of inert statements. Its parameters are not data: a method called on one may
    build or compile what the caller passes (`def setup(m): m.compile(...)`, `m.build(shape)`)."""
    if statement.decorator_list:
        return False
    arguments = statement.args
    if not all(isinstance(d, ast.Constant) for d in [*arguments.defaults, *arguments.kw_defaults] if d is not None):
        return False
    parameters = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    return all(inert(s, set(values) - parameters) for s in statement.body)


def _inert_class(statement: ast.ClassDef) -> bool:
    """`class MyCallBack(Callback): def on_epoch_end(...): ...`: defining it runs only its body,
    here methods, a docstring and constants (undecorated, bases named)."""
    return not statement.decorator_list and not statement.keywords and all(
        isinstance(b, (ast.Name, ast.Attribute)) for b in statement.bases
    ) and all(
        isinstance(s, (ast.FunctionDef, ast.Pass))
        or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        or (isinstance(s, ast.Assign) and isinstance(s.value, ast.Constant))
        for s in statement.body
    )


def _callback_class(statement: ast.ClassDef) -> bool:
    """A subclass of a Keras callback (`Callback`, `ModelCheckpoint`): making one creates no variables."""
    names = {b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in statement.bases}
    return any(n == "Callback" or n in _INERT_CALLS for n in names)


def data_value(value: ast.expr, values: Collection[str]) -> bool:
    """What a NumPy/pandas call returns (`np.eye(10)[labels]`, `df["y"].values`): never an alias
    of a model (`p = model` binds no data, and `p.compile(...)` builds)."""
    if isinstance(value, (ast.BinOp, ast.Compare)):  # `np.random.rand(200) * 500000`, `X - X.mean()`, `p > 0.5`
        sides = (value.left, value.right) if isinstance(value, ast.BinOp) else (value.left, *value.comparators)
        return any(data_value(v, values) for v in sides) and all(
            isinstance(v, ast.Constant) or data_value(v, values) for v in sides
        )
    root = value
    while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):
        root = root.func if isinstance(root, ast.Call) else root.value
    if root is not value and isinstance(root, (ast.BinOp, ast.Compare)):  # `(np.random.rand(4) > 0.5).astype(int)`
        return data_value(root, values)
    return root is not value and isinstance(root, ast.Name) and (
        root.id in INERT_MODULES or root.id in values or root.id in _DATA_MAKERS
    )


# Keras's data helpers: what they return feeds `fit`, it holds no variables
# (`gen = ImageDataGenerator(...)`, then `train = gen.flow_from_directory(...)`)
_DATA_MAKERS = frozenset({"ImageDataGenerator", "to_categorical", "pad_sequences"})


def inert(statement: ast.stmt, values: Collection[str] = ()) -> bool:
    """Creates no variables and compiles nothing: an import, a constant, an inspection
    (`x.shape`, `model.summary()`, `print(...)`), a NumPy/pandas call, a method of one of
    `values` (names bound to what such calls return)."""
    if isinstance(statement, (ast.Import, ast.ImportFrom, ast.Pass)):
        return True
    if isinstance(statement, ast.If):  # `if strategy.num_replicas_in_sync > 1: print(...)`
        return _calls_inert(statement.test, values) and all(
            inert(s, values) for s in [*statement.body, *statement.orelse]
        )
    if isinstance(statement, ast.For) and not statement.orelse:  # `for layer in model.layers[15:]: ...`
        return _calls_inert(statement.iter, values) and all(
            inert(s, values) or _flag(s) for s in statement.body
        )
    if not isinstance(statement, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)):
        return False
    return _calls_inert(statement, values)


def _flag(statement: ast.stmt) -> bool:
    """`layer.trainable = True`: an attribute set to a constant."""
    return (
        isinstance(statement, ast.Assign) and all(isinstance(t, ast.Attribute) for t in statement.targets)
        and isinstance(statement.value, ast.Constant)
    )


def builds_nothing(code: str) -> bool:
    """Every statement of `code` creates no variables and compiles nothing (as for a cell)."""
    tree = _parsed([code])
    return tree is not None and _inert_cell(tree.body)


def _calls_inert(tree: ast.AST, values: Collection[str]) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Lambda, ast.Await, ast.Yield, ast.YieldFrom)):
            return False
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            root = func
            while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):  # `np.random.rand(4).astype(...)`
                root = root.func if isinstance(root, ast.Call) else root.value
            module = root.id if isinstance(root, ast.Name) and root is not func else ""
            inert = name in _INERT_CALLS or module in INERT_MODULES or module in values or (
                isinstance(func, ast.Name) and (name in _INERT_BUILTINS or name in values)
            )
            # a method of computed data: `(np.random.rand(4) > 0.5).astype(int)`
            inert = inert or (isinstance(root, (ast.BinOp, ast.Compare)) and data_value(root, values))
            inert = inert or name.startswith(PLACEHOLDER_PREFIX + "cell_boundary")  # a notebook's cell boundary
            if name.startswith(PLACEHOLDER_PREFIX + "magic_") or not inert:
                return False
    return True


def _parsed(lines: list[str]) -> ast.Module | None:
    try:
        return ast.parse("\n".join(lines) + "\n")
    except SyntaxError:
        return None


def drop_needless_reopen(body: list[str], count: int, indent: int) -> list[str]:
    """A later cell that only reads or prints (`x.shape`, `BATCH = 32`, imports) keeps its code as
    it was, without a reopened `with ...scope():`: only cells that build or compile need one."""
    if len(body) < count or not all(line.lstrip().startswith("with ") for line in body[:count]):
        return body
    rest = [line[indent:] if line[:indent].strip() == "" else line.lstrip(" \t") for line in body[count:]]
    tree = _parsed(rest)
    if tree is None or not tree.body or not _inert_cell(tree.body):
        return body
    return rest


def cell_comments_first(body: list[str]) -> list[str]:
    """A cell opening with `with ...scope():` keeps the comment lines its code opened with
    (`# stage 1: head only`) at its head, above that header, at the cell's own level: they
    describe the cell, not its scope."""
    if len(body) < 3 or not _SCOPE_HEADER.match(body[0]):
        return body
    indent = len(body[1]) - len(body[1].lstrip(" \t"))
    end = 1
    while end < len(body) and body[end].lstrip(" \t").startswith("#") and indent and body[end][:indent].strip() == "":
        end += 1
    if end == 1 or end == len(body) or not body[end].strip():
        return body  # (no comment, nothing after it, or a blank line: the comment is set apart)
    return [*(line[indent:] for line in body[1:end]), body[0], *body[end:]]


# `with strategy.scope():` opening a cell, at its own level
_SCOPE_HEADER: Final = re.compile(r"^with\s+[\w.]+\.scope\(\)\s*:\s*$")


def display_last_expression(body: list[str]) -> list[str]:
    """A changed cell keeps under its `with strategy.scope():` blocks only what builds or compiles:
    the inert statements a block began with (`if strategy.num_replicas_in_sync > 1: print(...)`)
    move above its header, those it ended with (a `trainable` loop, `X = np.random.rand(...)`,
    `model.summary()`) below it, so a final expression (`model`, `x.shape`) is displayed again."""
    body = _no_blank_under_headers(body)
    tree = _parsed(body)
    if tree is None:
        return body
    for block in reversed(tree.body):  # from the bottom up: the line numbers above stay true
        if isinstance(block, ast.With) and _scope_block(block) and len(block.body) > 1:
            body = _inert_head(_inert_tail(body, block), block)
    return body


def _scope_block(statement: ast.With) -> bool:
    """`with strategy.scope():` (one item)."""
    if len(statement.items) != 1:
        return False
    item = statement.items[0].context_expr
    return isinstance(item, ast.Call) and isinstance(item.func, ast.Attribute) and item.func.attr == "scope"


def _no_blank_under_headers(body: list[str]) -> list[str]:
    """A scope's `with` line followed by blank lines (those of a statement removed from the top of
    the block): the blank lines go, the block starts right under its header."""
    tree = _parsed(body)
    if tree is None:
        return body
    for block in reversed(tree.body):
        if not (isinstance(block, ast.With) and _scope_block(block)) or block.body[0].lineno <= block.lineno + 1:
            continue
        blank = block.lineno  # index of the line after the header
        while blank < block.body[0].lineno - 1 and not body[blank].strip():
            blank += 1
        body = [*body[:block.lineno], *body[blank:]]
    return body


def _inert_tail(body: list[str], block: ast.With) -> list[str]:
    first = next((k for k in range(1, len(block.body)) if _inert_cell(block.body[k:])), len(block.body))
    final = block.body[-1]
    if first == len(block.body) or final.end_lineno is None:
        return body
    if (block.body[first - 1].end_lineno or 0) >= block.body[first].lineno:
        return body  # (`model = build(); X = np.ones(3)` on one line: left as written)
    if any(_multiline_string(statement) for statement in block.body[first:]):
        return body
    end = block.body[first - 1].end_lineno or 0  # the moved lines start after the last one kept
    shift = block.body[first].col_offset - block.col_offset
    moved = [line[shift:] if line[:shift].strip() == "" else line for line in body[end:final.end_lineno]]
    return [*body[:end], *moved, *body[final.end_lineno:]]


def _inert_head(body: list[str], block: ast.With) -> list[str]:
    count = next((k for k in range(len(block.body) - 1, 0, -1) if _inert_cell(block.body[:k])), 0)
    if not count or block.body[0].lineno != block.lineno + 1 or block.end_lineno is None:
        return body  # (a header over more than one line, or comments under it: left as written)
    if any(_multiline_string(statement) for statement in block.body[:count]):
        return body
    kept = block.body[count]
    if (block.body[count - 1].end_lineno or 0) >= kept.lineno:
        return body  # (on one line with what it keeps: left as written)
    # the lines before the first statement kept: the moved ones with the blank lines after them;
    # the comment lines right above that statement stay with it
    stop = kept.lineno - 1
    while stop > (block.body[count - 1].end_lineno or 0) and body[stop - 1].lstrip().startswith("#"):
        stop -= 1
    shift = block.body[0].col_offset - block.col_offset
    moved = [line[shift:] if line[:shift].strip() == "" else line for line in body[block.lineno:stop]]
    while moved and not moved[-1].strip():  # the blank lines go above the header, the header right above
        moved = moved[:-1]
    blanks = body[block.lineno + len(moved):stop]
    return [*body[:block.lineno - 1], *moved, *blanks, body[block.lineno - 1], *body[stop:]]


def _multiline_string(statement: ast.stmt) -> bool:
    """A string spanning lines, whose text would change with the indentation."""
    return any(
        isinstance(node, (ast.Constant, ast.JoinedStr)) and node.end_lineno != node.lineno
        for node in ast.walk(statement)
    )


def reopen(before: list[str], indent: int) -> list[str]:
    """The `with ...:` headers enclosing a line indented by `indent`, outermost first."""
    headers = []
    for line in reversed(before):
        stripped = line.lstrip(" \t")
        width = len(line) - len(stripped)
        if stripped and not stripped.startswith("#") and width < indent:
            if not (stripped.startswith("with ") and stripped.rstrip().endswith(":")):
                raise ValueError(f"a cell would start inside `{stripped.strip()}`")
            headers.append(line)
            indent = width
            if indent == 0:
                break
    return list(reversed(headers))
