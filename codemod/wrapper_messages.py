"""A message printed next to the removed call that announced the wrapper goes with the call.

`print("converting model to parallel")` right above `parallel = multi_gpu_model(model, gpus=G)`
said what the call did; no model is converted under the strategy, and the message would be
false in every run. Only a print or log call whose text names the old mechanics (a parallel or
multi-GPU *model*, converting or wrapping the model, the helpers by name), standing right before
or after the call in its block, with arguments that compute nothing but the text. A message
that says how many devices train ("Training using multiple GPUs..") is still true: it stays.
"""

from __future__ import annotations

import re
from typing import Final

import libcst as cst

from ._tree import Tree, findall, method_call
from .stale_prose import HELPERS

__all__ = ["MESSAGE_FUNCTIONS", "announces_wrapper", "announcing_messages", "message_text", "reworded"]

_STALE_MESSAGE: Final = re.compile(
    r"\b(?:parallel|multi[- _]?gpus?)[\s_]+models?\b|\bmodel\s+(?:in)?to\s+(?:a\s+)?(?:parallel|multi[- _]?gpu)"
    r"|\b(?:convert|wrap)\w*\b[^.!?]{0,40}\b(?:parallel|multi[- _]?gpus?|gpus)\b"
    r"|\bmulti_gpu_model\b|\bmake_parallel\b|\bModelMGPU\b|\btowers?\b",
    re.IGNORECASE,
)
_TOWERS: Final = re.compile(r"\btowers?\b", re.IGNORECASE)  # "towers built": the old helpers' per-GPU copies
_LOG_METHODS: Final = frozenset({"info", "debug", "warning", "warn"})
# a message's function called by name: `print`, or a logging callable (`def train(..., logger=print)`)
MESSAGE_FUNCTIONS: Final = frozenset({"print", "log", "logger", "_log", "_logger"})
# calls an argument may make and still compute nothing but the text
_TEXT_CALLS: Final = frozenset({"format", "str", "len"})


def announcing_messages(tree: Tree, anchor: cst.BaseStatement) -> list[cst.BaseStatement]:
    """The message statements right before and after `anchor` in its block that announce the wrapper."""
    block, index = tree.block_of(anchor)
    body = list(block.body)
    found: list[cst.BaseStatement] = []
    for step in (-1, 1):
        k = index + step
        # (over the wrapper's compile too, only for what names the towers: `make_parallel(...)`,
        # `compile(...)`, `print('towers built')`; "Saving the parallel model" there is renamed)
        compiled = False
        while 0 <= k < len(body) and (message_text(body[k]) is not None or method_call(body[k], "compile")):
            compiled = compiled or method_call(body[k], "compile") is not None
            text = message_text(body[k])
            if text is not None and announces_wrapper(body[k]) and (not compiled or _TOWERS.search(text)):
                found.append(body[k])
            k += step
    return found


def reworded(statement: cst.BaseStatement) -> cst.BaseStatement | None:
    """An announcement that carries the GPU count (`log.info('Wrapping model with multi_gpu_model
    on %d GPUs', n)`) said something still true, how many GPUs train: the same call saying
    `'Training on %d GPUs'`; None for any other message."""
    if not announces_wrapper(statement):
        return None
    call = cst.ensure_type(cst.ensure_type(cst.ensure_type(statement, cst.SimpleStatementLine).body[0], cst.Expr).value,
                           cst.Call)
    first = call.args[0].value
    literal = first.left if isinstance(first, cst.BinaryOperation) else first
    if not isinstance(literal, cst.SimpleString) or "\\" in literal.value or len(call.args) + (
        isinstance(first, cst.BinaryOperation)
    ) < 2:
        return None  # (no count given along with the text)
    quote = literal.quote
    inner = literal.value[len(literal.prefix) + len(quote):len(literal.value) - len(quote)]
    said = _COUNT_ANNOUNCED.match(inner)
    using = (_COUNT_USED.match(inner) or _HELPER_USED.match(inner)) if said is None else None
    if using is not None:  # "Using %d GPUs via multi_gpu_model": the count stays, the helper goes
        rest = _BY_HELPER.sub("", using["rest"])
        if _STALE_MESSAGE.search(rest):
            return None
        text = f"{using['lead']}{using['verb']} {using['count']} {using['gpus']}{rest}"
        return _with_text(statement, call, first, literal, text)
    setting = _COUNT_SET.match(inner) if said is None and using is None else None
    if setting is not None:  # "Creating multi-GPU model: N=%i": how many GPUs train, still true
        if _STALE_MESSAGE.search(setting["rest"]):
            return None
        verb = "Training" if setting["verb"][0].isupper() else "training"
        return _with_text(statement, call, first, literal, f"{setting['lead']}{verb} on {setting['count']} GPUs"
                          f"{setting['rest']}")
    if said is None:
        return None
    rest = _BY_HELPER.sub("", said["rest"])  # "Training on %d GPUs with multi_gpu_model"
    if _STALE_MESSAGE.search(rest):
        return None
    # ("multi_gpu_model: replicating on %d GPUs": the helper's name goes, the message starts there)
    verb = "Training" if said["verb"][0].isupper() or (said["helper"] and not said["lead"].strip()) else "training"
    text = f"{said['lead']}{verb} on {said['count']} {said['gpus']}{rest}"
    return _with_text(statement, call, first, literal, text)


def _with_text(
    statement: cst.BaseStatement, call: cst.Call, first: cst.BaseExpression, literal: cst.SimpleString, text: str
) -> cst.BaseStatement:
    """The message call with its literal saying `text` (its quotes, prefix and `%` operand kept)."""
    quote = literal.quote
    new_literal = literal.with_changes(value=f"{literal.prefix}{quote}{text}{quote}")
    new_first = first.with_changes(left=new_literal) if isinstance(first, cst.BinaryOperation) else new_literal
    args = [call.args[0].with_changes(value=new_first), *call.args[1:]]
    small = cst.Expr(value=call.with_changes(args=args))
    return cst.ensure_type(statement, cst.SimpleStatementLine).with_changes(body=[small])


# "Wrapping model with multi_gpu_model on %d GPUs", "[INFO] creating multi-GPU model for {} GPUs...",
# "[info] wrapped model for %d GPUs",
# "multi_gpu_model: replicating on %d GPUs"
_COUNT_ANNOUNCED: Final = re.compile(
    r"^(?P<lead>\s*(?:\[\w+\]\s*)?)(?P<helper>(?:" + "|".join(HELPERS) + r")\s*[:-]\s*)?"
    r"(?P<verb>wrapping|converting|creating|making|building|replicating|training|wrapped|converted|replicated)\b[^%{]*?"
    r"\b(?:on|for|with|across|to|over)\s+(?P<count>%[dis]|\{[^{}]*\})\s+(?P<gpus>GPUs?|gpus?|cards|devices)"
    r"(?P<rest>[^%{]*)$",
    re.IGNORECASE,
)


# "Creating multi-GPU model: N=%i" (round 58, ay09): the count as a setting, after the model
_COUNT_SET: Final = re.compile(
    r"^(?P<lead>\s*(?:\[\w+\]\s*)?)(?P<verb>wrapping|converting|creating|making|building|replicating)\s+"
    r"(?:a\s+|the\s+)?(?:multi[- _]?gpu|parallel)\s+model\s*[:,(]?\s*(?:n|g|gpus|ngpus|n_gpus|num_gpus)\s*=\s*"
    r"(?P<count>%[dis]|\{[^{}]*\})\)?(?P<rest>[^%{]*)$",
    re.IGNORECASE,
)


# "Using %d GPUs via multi_gpu_model", "[INFO] using {} GPUs with make_parallel"
_COUNT_USED: Final = re.compile(
    r"^(?P<lead>\s*(?:\[\w+\]\s*)?)(?P<verb>using|use|with)\s+(?P<count>%[dis]|\{[^{}]*\})\s+"
    r"(?P<gpus>GPUs?|gpus?|cards|devices)(?P<rest>[^%{]*)$",
    re.IGNORECASE,
)


# "[kws] using multi_gpu_model with %d GPUs": the helper first, then the count ("[kws] using %d GPUs")
_HELPER_USED: Final = re.compile(
    r"^(?P<lead>\s*(?:\[\w+\]\s*)?)(?P<verb>using|use)\s+(?:the\s+)?`?(?:[\w.]+\.)?(?:" + "|".join(HELPERS) + r")`?"
    r"\s+(?:with|on|for|across|over)\s+(?P<count>%[dis]|\{[^{}]*\})\s+(?P<gpus>GPUs?|gpus?|cards|devices)"
    r"(?P<rest>[^%{]*)$",
    re.IGNORECASE,
)


# "... with multi_gpu_model": the helper named as the tool, at the message's end
_BY_HELPER: Final = re.compile(
    r"\s+(?:with|via|using|through)\s+(?:the\s+)?`?(?:[\w.]+\.)?(?:" + "|".join(HELPERS) + r")`?"
    r"(?:\s+(?:wrapper|helper))?(?=\s*[.!:]*\s*$)",
    re.IGNORECASE,
)


def announces_wrapper(statement: cst.BaseStatement) -> bool:
    """`print("converting model to parallel")`: a message about the wrapper, false without it."""
    return bool(_STALE_MESSAGE.search(message_text(statement) or ""))


def message_text(statement: cst.BaseStatement) -> str | None:
    """The literal text of `print(...)` / `logger.info(...)` alone on its line, else None."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    small = statement.body[0]
    if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
        return None
    call = small.value
    func = call.func
    if not (
        (isinstance(func, cst.Name) and func.value in MESSAGE_FUNCTIONS)
        or (isinstance(func, cst.Attribute) and func.attr.value in _LOG_METHODS)
    ) or not call.args:
        return None
    for inner in findall(call, cst.Call):
        if inner is call:
            continue
        name = inner.func.attr.value if isinstance(inner.func, cst.Attribute) else (
            inner.func.value if isinstance(inner.func, cst.Name) else ""
        )
        if name not in _TEXT_CALLS:
            return None
    texts = [
        s.evaluated_value if isinstance(s, cst.SimpleString) else s.value
        for s in findall(call.args[0].value, (cst.SimpleString, cst.FormattedStringText))
    ]
    return " ".join(t for t in texts if isinstance(t, str)) or None
