"""`_core.pyi` against the binding it describes: every public name of `incastlab._core` has a
stub and every stub a name, classes method for method, and each parameter list (names, order,
defaults) as the binding's text signature has it, where PyO3 provides one. The stub is written
by hand (mypy reads it; the binding carries no annotations); this test keeps it true."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import pytest

from incastlab import _core

STUB = Path(_core.__file__).with_name("_core.pyi")
_ABSENT = object()


def _stub() -> ast.Module:
    return ast.parse(STUB.read_text(), str(STUB))


def _names(body: list[ast.stmt]) -> dict[str, ast.stmt]:
    """The names a stub body declares: functions, classes, annotated and plain assignments."""
    out: dict[str, ast.stmt] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            out[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
        elif isinstance(node, ast.Assign):
            out.update({t.id: node for t in node.targets if isinstance(t, ast.Name)})
    return out


def _public(names: list[str]) -> set[str]:
    return {n for n in names if not n.startswith("_")}


def _stub_params(fn: ast.FunctionDef) -> list[tuple[str, Any]]:
    """(name, default or _ABSENT) of a stub function's parameters, ``self`` left out."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    defaults = [_ABSENT] * (len(positional) - len(a.defaults)) + [_literal(d) for d in a.defaults]
    params = list(zip((p.arg for p in positional), defaults, strict=True))
    params += [
        (p.arg, _ABSENT if d is None else _literal(d))
        for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)
    ]
    return [p for p in params if p[0] != "self"]


def _literal(node: ast.expr) -> Any:
    # Constants and constant arithmetic (``64 << 20``), nothing else.
    return eval(compile(ast.Expression(node), str(STUB), "eval"), {"__builtins__": {}})


def _binding_params(obj: Any) -> list[tuple[str, Any]] | None:
    """(name, default or _ABSENT) of the binding's parameters from its text signature, or
    None where PyO3 gives none."""
    if getattr(obj, "__text_signature__", None) is None:
        return None
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    return [
        (p.name, _ABSENT if p.default is inspect.Parameter.empty else p.default)
        for p in sig.parameters.values()
        if p.name not in ("self", "$self", "cls", "$cls")
    ]


def _functions() -> list[tuple[str, ast.FunctionDef, Any]]:
    """(qualified name, stub, binding object) of every stub function and method."""
    out = []
    for name, node in _names(_stub().body).items():
        if isinstance(node, ast.FunctionDef):
            out.append((name, node, getattr(_core, name, None)))
        elif isinstance(node, ast.ClassDef):
            cls = getattr(_core, name, None)
            for meth, m in _names(node.body).items():
                if isinstance(m, ast.FunctionDef):
                    # The constructor's signature is the class's (PyO3's #[new]).
                    target = cls if meth == "__init__" else getattr(cls, meth, None)
                    out.append((f"{name}.{meth}", m, target))
    return out


def test_every_public_name_of_the_binding_has_a_stub_and_every_stub_a_name() -> None:
    stubbed = _names(_stub().body)
    missing = _public(dir(_core)) - set(stubbed)
    assert not missing, f"_core.pyi lacks {sorted(missing)}"
    extra = [n for n in stubbed if not hasattr(_core, n)]
    assert not extra, f"_core.pyi declares {extra}, which incastlab._core does not have"


def test_every_class_has_its_methods_in_the_stub_and_no_others() -> None:
    for name, node in _names(_stub().body).items():
        if not isinstance(node, ast.ClassDef):
            continue
        cls = getattr(_core, name)
        stubbed = _names(node.body)
        missing = _public(list(vars(cls))) - set(stubbed)
        assert not missing, f"_core.pyi: {name} lacks {sorted(missing)}"
        extra = [m for m in stubbed if m != "__init__" and not hasattr(cls, m)]
        assert not extra, f"_core.pyi: {name} declares {extra}, which the binding lacks"


@pytest.mark.parametrize("name,stub,target", _functions(), ids=[f[0] for f in _functions()])
def test_parameters_match_the_binding_text_signature(
    name: str, stub: ast.FunctionDef, target: Any
) -> None:
    binding = _binding_params(target)
    if binding is None:
        pytest.skip(f"{name}: PyO3 gives no text signature")
    stubbed = _stub_params(stub)
    # PyO3 writes a default it cannot render as a literal (``64 << 20``) as ``...``: then
    # only that there is one is checked.
    stubbed = [
        (n, d) if b is not Ellipsis else (n, Ellipsis if d is not _ABSENT else d)
        for (n, d), (_, b) in zip(stubbed, binding, strict=False)
    ] + stubbed[len(binding) :]
    assert stubbed == binding, f"_core.pyi: {name}'s parameters"


def test_most_functions_are_checked_against_a_signature() -> None:
    # If PyO3 stopped providing text signatures the test above would skip everything.
    checked = [n for n, _, t in _functions() if _binding_params(t) is not None]
    assert len(checked) >= len(_functions()) // 2, checked
