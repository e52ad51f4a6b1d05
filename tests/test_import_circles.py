"""No import circle among incastlab's Python modules, counting the imports made inside functions
too (a lazy import still ties two modules together; only ``if TYPE_CHECKING:`` blocks are free),
and no module over 500 lines."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

import incastlab

ROOT = Path(incastlab.__file__).resolve().parent
LIMIT = 500
N = TypeVar("N")  # a module's name: dotted here, a path tuple for the Rust crates


def modules() -> dict[str, Path]:
    """Every module by its dotted name (``incastlab.plot.sweep``; a package by its
    ``__init__``)."""
    out = {}
    for f in ROOT.rglob("*.py"):
        parts = ("incastlab", *f.relative_to(ROOT).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


def _type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _import_nodes(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import in ``node``, in functions too, none under ``if TYPE_CHECKING:``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        elif isinstance(child, ast.If) and _type_checking(child):
            for other in child.orelse:
                yield from _import_nodes(other)
        else:
            yield from _import_nodes(child)


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The incastlab modules that module ``name`` (at ``path``) imports, wherever in it."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = set()
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            wanted = [a.name for a in node.names]
        else:
            parts = package[: len(package) - node.level + 1] if node.level else []
            base = ".".join([*parts, *([node.module] if node.module else [])])
            # `from incastlab.plot import sweep` imports a module; `import COLORS`, its package.
            wanted = [f"{base}.{a.name}" for a in node.names] + [base]
            wanted = [w for w in wanted if w in known] or [base]
        for w in wanted:
            while w and w not in known:
                w = w.rpartition(".")[0]
            if w and w != name:
                out.add(w)
    return out


def circles(graph: dict[N, set[N]]) -> list[frozenset[N]]:
    """The strongly connected parts of more than one module (Tarjan)."""
    index: dict[N, int] = {}
    low: dict[N, int] = {}
    stack: list[N] = []
    found = []

    def visit(v: N) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = set()
            while True:
                w = stack.pop()
                part.add(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(frozenset(part))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_itself_back() -> None:
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    assert "incastlab.plot.facets" in graph["incastlab.plot.sweep"]  # the walk sees imports
    assert "incastlab.plot.sweep" not in graph["incastlab.plot.facets"]
    found = [sorted(c) for c in circles(graph)]
    assert not found, f"import circles: {found}"


def test_no_module_over_500_lines() -> None:
    long = {
        str(f.relative_to(ROOT)): n
        for f in ROOT.rglob("*.py")
        if (n := len(f.read_text(encoding="utf-8").splitlines())) > LIMIT
    }
    assert not long, long
