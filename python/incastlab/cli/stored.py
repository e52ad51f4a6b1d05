"""The stored points of a sweep directory as `incast results`, `plot` and `report` select them:
``--where`` filters matched by meaning, coordinates named in full or by their last part,
files that do not read back named."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from incastlab.cli.common import UsageError, plain

if TYPE_CHECKING:
    from rich.console import Console

    from incastlab.sweep.store import SweepStore


def point_label(params: dict[str, Any]) -> str:
    """A point's coordinates in a line: ``senders=16 rto_min=1ms``."""
    return " ".join(f"{k.split('.')[-1]}={v}" for k, v in params.items())


def parse_where(items: list[str]) -> list[tuple[str, str]]:
    """The ``--where KEY=VALUE`` flags as pairs, as given (:func:`resolve` names the keys)."""
    out = []
    for item in items:
        if "=" not in item:
            raise UsageError(f"--where: expected KEY=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        out.append((k.strip(), v.strip()))
    return out


def resolve(flag: str, key: str, axes: set[str]) -> str:
    """A coordinate named in full (``topology.senders``) or by its last part (``senders``)."""
    if key in axes:
        return key
    matches = [a for a in axes if a.rsplit(".", 1)[-1] == key]
    if len(matches) == 1:
        return matches[0]
    what = "is ambiguous" if matches else "is not a coordinate of this sweep"
    raise UsageError(f"{flag}: {key!r} {what}: {', '.join(sorted(axes))}")


def open_sweep(path: str) -> tuple[SweepStore, dict[str, Any]]:
    """A sweep directory and its metadata; a usage error if it is none."""
    from incastlab.sweep.store import SweepDirError, SweepStore

    store = SweepStore(path)
    try:
        return store, store.meta()
    except SweepDirError as e:
        raise UsageError(str(e)) from None


def warn_unreadable(store: SweepStore, err: Console) -> None:
    """Name the point files that did not read back (skipped here, recomputed by a rerun)."""
    for p in store.unreadable:
        err.print(
            f"[yellow]warning:[/yellow] {plain(str(p))} does not read back; skipped "
            "(rerun the sweep to compute that point again)",
            soft_wrap=True,
        )


def selected(
    store: SweepStore, where: list[tuple[str, str]], err: Console | None = None
) -> list[dict[str, Any]]:
    rows = store.rows()
    if err is not None:
        warn_unreadable(store, err)
    keys = set().union(*(r["params"].keys() for r in rows)) if rows else set()
    if rows:
        where = [(resolve("--where", k, keys), v) for k, v in where]
    tests = [(k, _matcher(k, v)) for k, v in where]
    return [r for r in rows if all(t(r["params"].get(k)) for k, t in tests)]


def _matcher(key: str, text: str) -> Any:
    """A test of a coordinate's stored value against ``--where KEY=TEXT`` by meaning
    (``1000us`` is ``1ms``) for a scenario key, by its text for anything else."""
    from incastlab.scenario import ScenarioError, value_of
    from incastlab.series import parse_assignment

    wanted_raw = parse_assignment(f"{key}={text}", "--where")[1]
    try:
        wanted = value_of(key, wanted_raw)
    except ScenarioError:
        return lambda v: str(v) == text
    seen: dict[str, bool] = {}

    def test(v: Any) -> bool:
        k = repr(v)
        if k not in seen:
            try:
                seen[k] = value_of(key, v) == wanted
            except ScenarioError:
                seen[k] = str(v) == text
        return seen[k]

    return test


def where_caption(where: list[tuple[str, str]]) -> list[str]:
    """The filters as a caption names them: ``rto_min = 1ms``."""
    from incastlab.plot.facets import axis_label

    return [f"{axis_label(k)} = {v}" for k, v in where]
