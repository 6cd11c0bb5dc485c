"""Every private attribute of Keras or TensorFlow the shim touches goes through the registry.

`compat/_internals.py` declares each private internal (doctor lists them, start-up checks those it
can); the accessor modules read and write them. Elsewhere in `compat/`, an access such as
`layer._trainable_weights` or `getattr(model, "_distribute_strategy", None)` on an object that is
not the shim's own would be an internal doctor does not know about: this test finds them from the
source (no TensorFlow needed), and that every private name the accessors use is declared.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import multi_gpu_compat
from multi_gpu_compat import _internals

PACKAGE = Path(multi_gpu_compat.__file__).parent
ACCESSOR_MODULES = {"_internals.py", "_keras3_internals.py", "_keras2_internals.py", "_tf_internals.py"}
DECLARED = {i.attribute.rpartition(".")[2] for i in _internals.REGISTRY}
_ATTRIBUTE_FUNCTIONS = {"getattr", "hasattr", "setattr", "delattr"}
_REGISTRY_CALLS = {"get", "put", "_get", "_put"}  # `_internals.get(obj, "_name", stack)` and the modules' helpers


def _private(name: object) -> bool:
    return isinstance(name, str) and name.startswith("_") and not name.startswith("__") and name.isidentifier()


def _shim_defined() -> set[str]:
    """Private names the shim defines itself (module-level and class-level functions and classes)."""
    names = set()
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        bodies = [tree.body] + [n.body for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
        for body in bodies:
            names |= {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))}
    return {n for n in names if _private(n)} - DECLARED


SHIM_DEFINED = _shim_defined()


def _own_bases(tree: ast.Module) -> set[str]:
    """Names that are the shim's modules (`from . import _internals`) or the standard library's."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            names |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            names |= {a.asname or a.name for a in node.names if a.name.split(".")[0] in sys.stdlib_module_names}
    return names


def _is_own(base: ast.expr, own_bases: set[str]) -> bool:
    if isinstance(base, ast.Name):
        return base.id in {"self", "cls"} | own_bases
    return isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id == "super"


def private_accesses(source: str, accessor_module: bool) -> list[tuple[int, str]]:
    """(line, access) for each private attribute of a foreign object that `source` reaches
    outside the registry's rules."""
    tree = ast.parse(source)
    own_bases = _own_bases(tree)
    allowed = DECLARED | SHIM_DEFINED if accessor_module else SHIM_DEFINED
    found = []

    def check(line: int, base: ast.expr, name: str, text: str) -> None:
        if _is_own(base, own_bases) or name.startswith("_compat") or name in allowed:
            return
        found.append((line, text))

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            check(node.lineno, node.value, node.attr, ast.unparse(node))
        elif isinstance(node, ast.Call) and len(node.args) >= 2:
            name = node.args[1].value if isinstance(node.args[1], ast.Constant) else None
            func = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if not _private(name):
                continue
            if func in _ATTRIBUTE_FUNCTIONS:
                check(node.lineno, node.args[0], str(name), ast.unparse(node))
            elif func in _REGISTRY_CALLS and name not in DECLARED:
                found.append((node.lineno, f"{ast.unparse(node)}: not declared in the registry"))
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "__dict__"
            and isinstance(node.slice, ast.Constant)
            and _private(node.slice.value)
        ):
            check(node.lineno, node.value.value, str(node.slice.value), ast.unparse(node))
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_private_internals_are_reached_only_through_the_registry(path):
    found = private_accesses(path.read_text(), accessor_module=path.name in ACCESSOR_MODULES and path.parent == PACKAGE)
    assert not found, (
        f"{path.name} reaches private attributes of Keras / TensorFlow objects outside the registry "
        f"(declare them in _internals.REGISTRY and read them through an accessor module): {found}"
    )


@pytest.mark.parametrize(
    "code",
    [
        "layer._trainable_weights",
        "model._distribute_strategy = strategy",
        "getattr(template, '_inputs_struct', None)",
        "hasattr(optimizer, '_var_key')",
        "layer.__dict__['_moments'] = f",
        "strategy.extended._cross_device_ops",
    ],
)
def test_the_check_finds_a_private_access_outside_the_accessors(code):
    assert private_accesses(code, accessor_module=False), code


@pytest.mark.parametrize(
    "code",
    [
        "self._trainable_weights",  # a class's own attributes (the backends' subclasses)
        "super()._flatten_layers()",
        "from . import _internals\n_internals._REQUIRED",  # the shim's own modules
        "import sys\nsys._getframe(1)",
        "strategy._compat_served = True",  # the shim's own marks on Keras objects
        "parallel._init_parallel(template, strategy)",  # a method the shim defines
    ],
)
def test_the_check_leaves_the_shims_own_names_alone(code):
    assert not private_accesses(code, accessor_module=False), code


def test_accessors_may_use_only_declared_names():
    assert not private_accesses("variable._value", accessor_module=True)
    assert private_accesses("variable._not_declared_anywhere", accessor_module=True)
    assert private_accesses("_internals.get(variable, '_not_declared_anywhere', None)", accessor_module=True)


def test_get_refuses_an_undeclared_name_and_names_a_missing_one():
    from multi_gpu_compat._support import UnsupportedVersionError

    class Holder:
        pass

    with pytest.raises(LookupError, match="not declared"):
        _internals.get(Holder(), "_not_declared_anywhere", None)
    with pytest.raises(UnsupportedVersionError, match=r"`Holder\._value`"):
        _internals.get(Holder(), "_value", _internals.KERAS3)
    assert _internals.get(Holder(), "_value", _internals.KERAS3, default=7) == 7
