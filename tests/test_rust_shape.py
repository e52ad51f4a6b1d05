"""The Rust crates keep the shape the code is held to: no file over 800 lines before its
``#[cfg(test)]`` tests, no function over 150 lines, and no import circle between a crate's
modules (``use crate::…``, ``super::…`` and inline ``crate::`` paths in non-test code count; a
parent's ``pub use`` of its own child is a re-export, not a dependency)."""

from __future__ import annotations

import re
from pathlib import Path

# The same strongly-connected walk as the Python modules' circles.
from test_import_circles import circles

CRATES = Path(__file__).resolve().parents[1] / "crates"
FILE_LIMIT = 800
FN_LIMIT = 150

Module = tuple[str, ...]

_FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?fn\s+(\w+)")
_USE = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?use\s+([^;]+);", re.M)


def before_tests(text: str) -> str:
    m = re.search(r"^#\[cfg\(test\)\]", text, re.M)
    return text[: m.start()] if m else text


def _code(line: str) -> str:
    line = re.sub(r"//.*", "", line)
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    return re.sub(r"'(\\.|[^'\\])'", "''", line)


def functions(text: str) -> list[tuple[str, int, int]]:
    """(name, first line, lines) of every function with a body."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        m = _FN.match(line)
        if not m:
            continue
        depth, started = 0, False
        for j in range(i, len(lines)):
            code = _code(lines[j])
            if not started and ";" in code and "{" not in code:
                break  # a declaration without a body (a trait's)
            for ch in code:
                depth += {"{": 1, "}": -1}.get(ch, 0)
                started = started or ch == "{"
            if started and depth == 0:
                out.append((m.group(6), i + 1, j - i + 1))
                break
    return out


def module_of(src: Path, f: Path) -> Module:
    parts = f.relative_to(src).with_suffix("").parts
    return tuple(parts[:-1] if parts[-1] in ("mod", "lib", "main") else parts)


def expand(path: str) -> list[str]:
    """``crate::{a::B, c::{d, e}}`` -> ``crate::a::B``, ``crate::c::d``, ``crate::c::e``."""
    path = re.sub(r"\s+", "", re.sub(r"\s+as\s+", "@", path))  # `X as Y` -> `X@Y`
    i = path.find("{")
    if i < 0:
        return [path]
    depth, items, cur = 0, [], ""
    for j in range(i, len(path)):
        ch = path[j]
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth == 0:
            break
        if ch == "," and depth == 1:
            items.append(cur)
            cur = ""
        elif j > i:
            cur += ch
    items.append(cur)
    pre, post = path[:i], path[j + 1 :]
    return [p for it in items if it for p in expand(pre + it + post)]


def resolve(here: Module, path: str, mods: set[Module]) -> Module | None:
    segs = path.split("::")
    if segs[0] == "crate":
        base: Module = ()
        segs = segs[1:]
    elif segs[0] in ("super", "self"):
        base = here
        while segs and segs[0] in ("super", "self"):
            base = base[:-1] if segs[0] == "super" else base
            segs = segs[1:]
    else:
        return None
    full = base + tuple(s.split("@")[0] for s in segs)
    while full and full not in mods:
        full = full[:-1]
    return full


def graph(crate: Path) -> dict[Module, set[Module]]:
    src = crate / "src"
    files = {module_of(src, f): f for f in src.rglob("*.rs")}
    mods = set(files)
    g: dict[Module, set[Module]] = {m: set() for m in mods}
    for m, f in files.items():
        text = "\n".join(_code(line) for line in before_tests(f.read_text()).splitlines())
        for use in _USE.finditer(text):
            for p in expand(use.group(3)):
                r = resolve(m, p, mods)
                reexport = bool(use.group(1)) and r is not None and r[: len(m)] == m
                if r is not None and r != m and not reexport:
                    g[m].add(r)
        for inline in re.finditer(r"\b(?:crate|super)(?:::\w+)+", _USE.sub("", text)):
            r = resolve(m, inline.group(0), mods)
            if r is not None and r != m:
                g[m].add(r)
    return g


def crates() -> list[Path]:
    return sorted(c for c in CRATES.iterdir() if (c / "src").is_dir())


def test_no_rust_file_over_800_lines_before_its_tests() -> None:
    long = {
        str(f.relative_to(CRATES)): n
        for c in crates()
        for f in c.rglob("*.rs")
        if (n := len(before_tests(f.read_text()).splitlines())) > FILE_LIMIT
    }
    assert not long, long


def test_no_rust_function_over_150_lines() -> None:
    long = [
        f"{f.relative_to(CRATES)}:{line} {name} ({n} lines)"
        for c in crates()
        for f in c.rglob("*.rs")
        for name, line, n in functions(f.read_text())
        if n > FN_LIMIT
    ]
    assert not long, long


def test_no_import_circle_between_a_crates_modules() -> None:
    found = {
        c.name: sorted("::".join(m) or "crate" for m in part)
        for c in crates()
        for part in circles(graph(c))
    }
    assert not found, found


def test_the_walk_sees_circles_and_long_functions(tmp_path: Path) -> None:
    """The checks above can fail: a crate with a circle through a use group and an inline
    path, and a function of 151 lines, are found."""
    src = tmp_path / "toy" / "src"
    (src / "net").mkdir(parents=True)
    (src / "lib.rs").write_text("pub mod net;\npub mod sim;\npub use net::Link;\n")
    (src / "net" / "mod.rs").write_text("mod link;\npub use link::Link;\n")
    (src / "net" / "link.rs").write_text("use crate::{sim::{Clock}};\npub struct Link;\n")
    body = "\n".join(["    let _x = 1;"] * 149)
    (src / "sim.rs").write_text(
        f"pub struct Clock;\nfn run() {{\n{body}\n}}\nfn f() {{ crate::net::link::Link; }}\n"
    )
    assert circles(graph(tmp_path / "toy")) == [frozenset({("net", "link"), ("sim",)})]
    assert ("run", 2, 151) in functions((src / "sim.rs").read_text())
    (src / "sim.rs").write_text("pub struct Clock;\n")
    assert circles(graph(tmp_path / "toy")) == []
