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


def _results_file(path: Any) -> bool:
    """Whether a Parquet file that reads back is incastlab's: its metadata, or (written before
    the metadata existed) a scenario column."""
    import pyarrow.parquet as pq

    from incastlab.result import schema

    found = pq.read_schema(path)
    return schema.SCHEMA_VERSION_KEY in (found.metadata or {}) or "scenario" in found.names


def verify(path: str, as_json: bool, out: Console, err: Console) -> int:
    """``incast results --verify``: every point of a sweep directory (or one results file)
    read in full and checked against its checksum; the damaged named one a line each. Exit
    1 if any is damaged. Files written before checksums are counted as unverified."""
    from pathlib import Path

    from incastlab.result import schema

    p = Path(path)
    if p.is_file():
        files = [p]
        good: list[Path] = []
        old: list[Path] = []
        bad: list[tuple[Path, str]] = []
        try:
            checked = schema.verify(p)
        except schema.DamagedResultFile as e:
            bad.append((p, str(e)))
        else:
            if not checked and not _results_file(p):
                raise UsageError(
                    f"{path}: not an incastlab results file (a Parquet file without "
                    "incastlab's metadata or a scenario column)"
                )
            (good if checked else old).append(p)
    else:
        store, _ = open_sweep(path)
        good, old, bad = store.verify()
        files = [*good, *old, *(b for b, _ in bad)]
    if as_json:
        import json

        print(
            json.dumps(
                {
                    "files": len(files),
                    "verified": len(good),
                    "unverified": [str(f) for f in old],
                    "damaged": [{"file": str(f), "error": why} for f, why in bad],
                },
                indent=1,
            )
        )
    for _, why in bad:
        err.print(f"[red]damaged[/red] {plain(why)}", soft_wrap=True, highlight=False)
    if p.is_file():  # one file: its one line says it all
        if not bad:
            state = "verified" if good else "unverified (written before checksums)"
            err.print(f"{plain(str(p))}: {state}", soft_wrap=True, highlight=False)
        return 1 if bad else 0
    unverified = f", {len(old)} unverified (written before checksums)" if old else ""
    rerun = "; rerun the sweep to compute them again" if bad else ""
    err.print(
        f"{len(files)} file{'s' if len(files) != 1 else ''}: {len(good)} verified{unverified}, "
        f"{len(bad)} damaged{rerun}",
        highlight=False,
    )
    return 1 if bad else 0


def where_column(key: str, text: str, columns: list[str]) -> str:
    """The column ``--where KEY=TEXT`` names: a column in full (any scenario column) or by its
    end (``senders``, ``buffer.bytes``, ``rto_min_s``) among the sweep's ``columns``. A
    scenario key's own name (``topology.buffer``, ``rto_min``) is refused with the column it
    means, since CSV, Parquet and ``--where`` share one naming."""
    from incastlab.scenario.columns import columns as all_columns
    from incastlab.scenario.columns import of_key

    if key in columns or key in {c for c, _ in all_columns()}:
        return key
    ends = [c for c in columns if c.endswith(f".{key}")]
    if len(ends) == 1:
        return ends[0]
    if len(ends) > 1:
        raise UsageError(f"--where: {key!r} is ambiguous: {', '.join(ends)}")
    keys = [key] if of_key(key) else []
    owners = sorted({k for c in columns if (k := _key_of(c))})
    keys += [k for k in owners if k.endswith(f".{key}")]
    meant = [c for k in dict.fromkeys(keys) for c in of_key(k)]
    if meant:
        col = next((c for c in meant if _parses(c, text)), meant[0])
        raise UsageError(
            f"--where: {key!r} is no column; did you mean {col}={text}? "
            "(--where names the columns of the CSV and Parquet output)"
        )
    raise UsageError(f"--where: {key!r} is not a coordinate of this sweep: {', '.join(columns)}")


def _parses(column: str, text: str) -> bool:
    from incastlab.scenario.columns import value

    try:
        value(column, text)
    except ValueError:
        return False
    return True


def _key_of(column: str) -> str | None:
    from incastlab.scenario.columns import key_of

    return key_of(column)


def selected(
    store: SweepStore, where: list[tuple[str, str]], err: Console | None = None
) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """The stored points that pass every ``--where`` filter, and the filters with their
    columns named in full."""
    rows = store.rows()
    if err is not None:
        warn_unreadable(store, err)
    if rows:
        from incastlab.sweep.store import coordinate_columns

        axes = list(dict.fromkeys(k for r in rows for k in r["params"]))
        cols = coordinate_columns(rows, axes)
        where = [(where_column(k, v, cols), v) for k, v in where]
    tests = [(k, _matcher(k, v)) for k, v in where]
    return [r for r in rows if all(t(_cell(r, k)) for k, t in tests)], where


def _cell(row: dict[str, Any], column: str) -> Any:
    return row[column] if column in row else row["params"].get(column)


def _matcher(column: str, text: str) -> Any:
    """A test of a point's value in ``column`` against ``--where COLUMN=TEXT``: by number in
    the column's base unit (``32KB`` is 32000 in ``topology.buffer.bytes``, ``1000us`` and
    ``0.001`` are both 0.001 in ``tcp.rto_min_s``), by text for anything else."""
    import math

    from incastlab.scenario.columns import value

    try:
        wanted = value(column, text)
    except ValueError as e:
        if _key_of(column) is not None:
            raise UsageError(f"--where: {e}") from None
        return lambda v: str(v) == text

    def test(v: Any) -> bool:
        if isinstance(wanted, float) and isinstance(v, int | float) and not isinstance(v, bool):
            return math.isclose(v, wanted, rel_tol=1e-9, abs_tol=1e-15)
        return bool(v == wanted) or (isinstance(v, str) and v == text)

    return test


def where_caption(where: list[tuple[str, str]]) -> list[str]:
    """The filters as a caption names them: ``rto min = 1ms``, ``buffer = 32000 B`` (a
    column by its scenario key, a number in base units with its unit)."""
    from incastlab.plot.facets import axis_label

    units = {"_s": " s", ".bytes": " B", ".bps": " bps", ".packets": " packets"}
    out = []
    for k, v in where:
        unit = next((u for end, u in units.items() if k.endswith(end)), "")
        try:
            float(v)
        except ValueError:
            unit = ""
        out.append(f"{axis_label(_key_of(k) or k)} = {v}{unit}")
    return out
