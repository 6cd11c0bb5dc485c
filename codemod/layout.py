"""How added and edited code is laid out: the strategy line(s) within the line limit, and calls
whose continuation lines were aligned under their parenthesis kept aligned after a rename."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from .continuations import CONTINUED

from .strategy_expression import StrategyCode

__all__ = ["fits", "realign_call", "realign_value", "renamed_in", "spans_lines", "strategy_statements"]


def _width(text: str) -> int:
    return len(text.expandtabs(4))


def fits(line: str, limit: int) -> bool:
    return _width(line) <= limit


def strategy_statements(name: str, expression: str, indent: str, unit: str, limit: int,
                        listing: str | None = None) -> cst.BaseStatement:
    """`name = expression`, or the `if`/`else` choosing it (`StrategyCode.branch`); a line over
    `limit` columns has its one argument on a line of its own (black's shape).
    `indent` is where the statement goes, `unit` the file's indentation unit. `listing`: in a
    choice, the name the machine's GPUs are bound to above a strategy on GPU ids."""
    branch = expression.branch if isinstance(expression, StrategyCode) else None
    if branch is None:
        text = _assignment(name, str(expression), indent, "", unit, limit) + "\n"
    elif listing is not None and isinstance(expression, StrategyCode) and expression.ids is not None and (
        expression.inputs is not None
    ):
        tf = expression.inputs.tf
        on_listed = _assignment(name, expression.on_listed(tf, listing), indent + unit, unit, unit, limit)
        multi = f'{listing} = {tf}.config.list_logical_devices("GPU")\n{unit}{on_listed}'
    else:
        multi = _assignment(name, str(expression), indent + unit, unit, unit, limit)
    if branch is not None:
        single = f"{name} = {branch.single}"
        first, second = (multi, single) if branch.multi_when_true else (single, multi)
        text = f"if {branch.condition}:\n{unit}{first}\nelse:\n{unit}{second}\n"
    return cst.parse_statement(text)


def _assignment(name: str, expression: str, indent: str, written_at: str, unit: str, limit: int) -> str:
    """`name = expression` at `indent`, as text to parse where the statement is at `written_at`."""
    line = f"{name} = {expression}"
    if fits(indent + line, limit):
        return line
    call = cst.parse_expression(expression)
    if not (isinstance(call, cst.Call) and len(call.args) == 1 and call.args[0].keyword is None):
        return line
    func = cst.Module([]).code_for_node(call.func)
    argument = cst.Module([]).code_for_node(call.args[0].value)
    # libcst keeps a continuation line's indentation relative to the block the statement is in.
    return f"{name} = {func}(\n{written_at}{unit}{argument}\n{written_at})"


def realign_call(
    original: cst.Call, updated: cst.Call, opening: int, block_indent: str,
    carry: Callable[[cst.SimpleWhitespace, cst.SimpleWhitespace], None] | None = None, limit: int | None = None,
) -> cst.Call:
    """`parallel_model.compile(loss=...,` / `optimizer=...)` aligned under the parenthesis, after
    `parallel_model` became `model`: the continuation lines aligned with or beyond the column
    after `(` move by as much as the parenthesis did. Hanging indents (`f(` then an indented
    line) are left as they are. `opening`: the original column (0-based) of the call's first
    character; `block_indent`: the indentation of the block the call is in. Backslash-continued
    lines (`loss=l, \\` then `optimizer=o)` under the parenthesis) move the same way; `carry` is
    told of each whitespace so replaced. `limit`: a realigned line would be wider, the lines stay
    where they were (an added line stays within the file's width before it is aligned)."""
    if isinstance(updated.whitespace_before_args, cst.ParenthesizedWhitespace):
        return updated  # a hanging indent: relative to the statement, not to `(`
    empty = cst.Module([])
    old, new = empty.code_for_node(original.func), empty.code_for_node(updated.func)
    if "\n" in old or "\n" in new or len(old) == len(new):
        return updated
    # Columns as the reader sees them (a tab is 4 wide): the line starts with the block's indent.
    column = opening - len(block_indent) + _width(block_indent) + len(old) + 1  # the first one inside `(`
    if not _aligned_under_parenthesis(updated, column, block_indent):
        return updated
    if limit is not None:
        trial = _Shift(len(new) - len(old), column, block_indent, None)
        moved = updated.with_changes(args=[cst.ensure_type(a.visit(trial), cst.Arg) for a in updated.args])
        if any(not fits(line, limit) for line in empty.code_for_node(moved).split("\n")[1:]):
            return updated
    shift = _Shift(len(new) - len(old), column, block_indent, carry)
    return updated.with_changes(args=[cst.ensure_type(a.visit(shift), cst.Arg) for a in updated.args])


def _aligned_under_parenthesis(call: cst.Call, column: int, block_indent: str) -> bool:
    """An argument starts a line at `column`, or none does (lines only under inner brackets).

    A call whose argument lines start elsewhere is not aligned under its parenthesis as the
    code reads now (an earlier step left it where it was): moving its deeper lines by the
    head's change would misalign them.
    """
    starts = [
        (_width(block_indent) if ws.indent else 0) + _width(ws.last_line.value)
        for arg in call.args
        if isinstance(arg.comma, cst.Comma)
        and isinstance(ws := arg.comma.whitespace_after, cst.ParenthesizedWhitespace)
    ]
    return not starts or column in starts


def realign_value(
    original: cst.Assign, updated: cst.Assign, value_column: int, block_indent: str, delta: int
) -> cst.Assign:
    """`template = Sequential([Dense(4),` / `Dense(1)])` aligned under the bracket, after
    `template` became `model`: the value's continuation lines at or beyond the column where the
    value started (`value_column`, 0-based) move by `delta`, as the value did."""
    if delta == 0:
        return updated
    column = value_column - len(block_indent) + _width(block_indent)
    value = updated.value.visit(_Shift(delta, column, block_indent))
    assert isinstance(value, cst.BaseExpression)
    return updated.with_changes(value=value)


def spans_lines(call: cst.Call) -> bool:
    """The call's arguments run over more than one line (only then is there anything to realign)."""
    stack: list[cst.CSTNode] = list(call.args)
    while stack:
        current = stack.pop()
        if isinstance(current, cst.ParenthesizedWhitespace):
            return True
        if isinstance(current, cst.SimpleWhitespace) and "\\" in current.value:
            return True  # a backslash-continued line
        stack.extend(current.children)
    return False


def renamed_in(node: cst.CSTNode, replaced: dict[int, cst.CSTNode]) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if id(current) in replaced:
            return True
        stack.extend(current.children)
    return False


class _Shift(cst.CSTTransformer):
    """Moves continuation lines that start at or beyond `column` by `delta` columns."""

    def __init__(
        self, delta: int, column: int, block_indent: str,
        carry: Callable[[cst.SimpleWhitespace, cst.SimpleWhitespace], None] | None = None,
    ) -> None:
        super().__init__()
        self.delta, self.column, self.block_indent, self.carry = delta, column, block_indent, carry

    def leave_ParenthesizedWhitespace(
        self, original_node: cst.ParenthesizedWhitespace, updated_node: cst.ParenthesizedWhitespace
    ) -> cst.ParenthesizedWhitespace:
        # (a comment line between the arguments, `# binary, because tags are independent`, moves
        # with the argument lines it sits among)
        comments = [
            line.with_changes(whitespace=cst.SimpleWhitespace(moved)) if line.comment is not None and (
                moved := self._moved_from(line.whitespace.value, line.indent)) is not None else line
            for line in updated_node.empty_lines
        ]
        moved = self._moved_from(updated_node.last_line.value, updated_node.indent)
        last = cst.SimpleWhitespace(moved) if moved is not None else updated_node.last_line
        return updated_node.with_changes(empty_lines=comments, last_line=last)

    def _moved_from(self, spaces: str, indented: bool) -> str | None:
        """`spaces` moved by `delta` when the line they start (after the block's indent when
        `indented`) is at or beyond `column`; None when it stays."""
        base = _width(self.block_indent) if indented else 0
        width = _width(spaces)
        if base + width < self.column or width + self.delta < 0:
            return None
        width += self.delta
        # A file aligning with tabs keeps them: as many as fit, then spaces.
        return "\t" * (width // 4) + " " * (width % 4) if "\t" in spaces else " " * width

    def leave_SimpleWhitespace(
        self, original_node: cst.SimpleWhitespace, updated_node: cst.SimpleWhitespace
    ) -> cst.SimpleWhitespace:
        if "\\" not in updated_node.value:
            return updated_node
        # After a backslash the next line's whitespace is written out in full, from column 0.
        value = CONTINUED.sub(lambda m: m.group(1) + self._moved(m.group(2)), updated_node.value)
        if value == updated_node.value:
            return updated_node
        moved = updated_node.with_changes(value=value)
        if self.carry is not None:
            self.carry(original_node, moved)
        return moved

    def _moved(self, spaces: str) -> str:
        width = _width(spaces)
        if width < self.column or width + self.delta < 0:
            return spaces
        width += self.delta
        return "\t" * (width // 4) + " " * (width % 4) if "\t" in spaces else " " * width


def fitted(statement: cst.SimpleStatementLine, indent: str, unit: str, limit: int) -> cst.SimpleStatementLine:
    """A statement that moved under the scope and no longer fits: its outermost call's arguments
    go on a line of their own, or one per line with a trailing comma (black's shapes); for a
    call of a call (`Dense(8, name="out")(x)`) the first call's arguments. A call whose
    arguments were already on several lines is rewrapped the same way when only the breaks
    between its arguments make it span lines and it holds no comment. `indent`: where the
    statement now is. Unchanged when it fits, ends in no call, or no shape fits."""
    if _fits_at(statement, indent, limit) or len(statement.body) != 1:
        return statement
    small = statement.body[0]
    call = getattr(small, "value", None)
    if not isinstance(call, cst.Call) or not call.args:
        return statement
    one_line = cst.Module([]).code_for_node(statement.with_changes(leading_lines=[])).rstrip("\n")
    if "\n" in one_line:
        if not _breaks_only_between_arguments(call) or any(isinstance(n, cst.Comment) for n in _nodes(call)):
            return statement
        call = _on_one_line(call)
    for candidate_call in _black_shapes(call, unit):
        candidate = statement.with_changes(body=[small.with_changes(value=candidate_call)])
        if _fits_at(candidate, indent, limit):
            return candidate
    return statement


def _black_shapes(call: cst.Call, unit: str) -> list[cst.Call]:
    """`call` with its arguments on a line of their own, then one per line; then the same for
    the inner call of `f(a)(b)` (its own arguments on one line)."""
    hanging = cst.ParenthesizedWhitespace(indent=True, last_line=cst.SimpleWhitespace(unit))
    closing = cst.ParenthesizedWhitespace(indent=True, last_line=cst.SimpleWhitespace(""))
    args = list(call.args)
    together = [*args[:-1], args[-1].with_changes(whitespace_after_arg=closing)]
    per_line = [
        a.with_changes(comma=cst.Comma(whitespace_after=hanging)) for a in args[:-1]
    ] + [args[-1].with_changes(comma=cst.Comma(), whitespace_after_arg=closing)]
    shapes = [call.with_changes(whitespace_before_args=hanging, args=shape) for shape in (together, per_line)]
    inner = call.func
    if isinstance(inner, cst.Call) and inner.args and "\n" not in cst.Module([]).code_for_node(call):
        shapes += [call.with_changes(func=shape) for shape in _black_shapes(inner, unit)[:2]]
    return shapes


def _nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(current.children)
    return found


def _breaks_only_between_arguments(call: cst.Call) -> bool:
    """The call spans lines only at the whitespace around its own arguments."""
    empty = cst.Module([])
    parts: list[cst.CSTNode] = [call.func]
    for arg in call.args:
        parts.append(arg.value)
        if arg.keyword is not None:
            parts.append(arg.keyword)
    return not any("\n" in empty.code_for_node(part) for part in parts) and all(
        "\n" not in empty.code_for_node(arg.equal) for arg in call.args if isinstance(arg.equal, cst.AssignEqual)
    )


def _on_one_line(call: cst.Call) -> cst.Call:
    """The call with the whitespace around its arguments made that of a one-line call."""
    args = []
    for index, arg in enumerate(call.args):
        last = index == len(call.args) - 1
        comma = arg.comma
        if isinstance(comma, cst.Comma):
            comma = cst.MaybeSentinel.DEFAULT if last else comma.with_changes(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(" ")
            )
        args.append(arg.with_changes(comma=comma, whitespace_after_arg=cst.SimpleWhitespace("")))
    return call.with_changes(whitespace_before_args=cst.SimpleWhitespace(""), args=args)


def _fits_at(statement: cst.SimpleStatementLine, indent: str, limit: int) -> bool:
    code = cst.Module([]).code_for_node(statement.with_changes(leading_lines=[]))
    return all(fits(indent + line, limit) for line in code.rstrip("\n").split("\n"))
