"""One column naming: CSV headers, ``--where`` (of `incast results`, `plot` and `report`) and
the Parquet files all name a coordinate by its record column, in base units
(``topology.buffer.bytes`` = 32000, ``tcp.rto_min_s`` = 0.001); and the Parquet files keep
their integer and boolean columns typed when plain pandas reads them."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from incastlab.cli import main
from incastlab.result import record, schema
from incastlab.sweep.store import SweepStore

SPEC = """\
[sweep]
seeds = 2
[topology]
senders = [2]
buffer = ["32KB", "64KB"]
[tcp]
rto_min = ["200ms", "1ms"]
[workload]
sru = "32KB"
blocks = 2
"""


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("columns")
    (root / "s.toml").write_text(SPEC)
    assert main(["sweep", str(root / "s.toml"), "--out", str(root / "s"), "-q"]) == 0
    return root / "s"


def _csv(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[dict[str, str]]:
    capsys.readouterr()
    assert main([*argv, "--csv", "-"]) == 0
    return list(csv.DictReader(io.StringIO(capsys.readouterr().out)))


def test_the_csv_names_coordinates_as_the_parquet_does_in_base_units(
    sweep: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _csv(["results", str(sweep)], capsys)
    assert len(rows) == 4
    coords = ["topology.senders", "topology.buffer.bytes", "tcp.rto_min_s"]
    assert list(rows[0])[:4] == [*coords, "n"]
    assert "topology.buffer" not in rows[0] and "tcp.rto_min" not in rows[0]
    assert {(r["topology.buffer.bytes"], r["tcp.rto_min_s"]) for r in rows} == {
        ("32000", "0.2"),
        ("32000", "0.001"),
        ("64000", "0.2"),
        ("64000", "0.001"),
    }
    # The same names and values as the stored points' Parquet columns.
    points = pd.concat([pd.read_parquet(p) for p in (sweep / "points").glob("*.parquet")])
    assert set(points["topology.buffer.bytes"]) == {32000, 64000}
    assert set(points["tcp.rto_min_s"]) == {0.2, 0.001}
    per_seed = _csv(["results", str(sweep), "--per-seed"], capsys)
    assert len(per_seed) == 8 and {r["topology.buffer.bytes"] for r in per_seed} == {
        "32000",
        "64000",
    }


@pytest.mark.parametrize(
    "where",
    [
        ["topology.buffer.bytes=32KB", "tcp.rto_min_s=1ms"],
        ["topology.buffer.bytes=32000", "tcp.rto_min_s=0.001"],
        ["buffer.bytes=32000", "rto_min_s=1000us"],
    ],
)
def test_where_takes_a_column_with_base_units_or_a_unit_string(
    sweep: Path, capsys: pytest.CaptureFixture[str], where: list[str]
) -> None:
    argv = ["results", str(sweep)]
    for w in where:
        argv += ["--where", w]
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["topology.buffer.bytes"], row["tcp.rto_min_s"], row["n"]) == (32000, 0.001, 2)


@pytest.mark.parametrize(
    ("given", "meant"),
    [
        ("topology.buffer=32KB", "topology.buffer.bytes=32KB"),
        ("buffer=32KB", "topology.buffer.bytes=32KB"),
        ("tcp.rto_min=1ms", "tcp.rto_min_s=1ms"),
    ],
)
@pytest.mark.parametrize("command", ["results", "plot", "report"])
def test_a_spec_key_in_where_is_refused_with_the_column_it_means(
    sweep: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    given: str,
    meant: str,
    command: str,
) -> None:
    out = ["--out", str(tmp_path / ("f.png" if command == "plot" else "r.html"))]
    argv = [command, str(sweep), "--where", given, *(out if command != "results" else [])]
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"did you mean {meant}?" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "f.png").exists() and not (tmp_path / "r.html").exists()


def test_a_value_the_column_cannot_hold_is_named(
    sweep: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["results", str(sweep), "--where", "tcp.rto_min_s=soon"]) == 2
    assert "'soon' is not a value of tcp.rto_min_s" in capsys.readouterr().err


def test_plot_where_keeps_the_points_of_the_column_value(
    sweep: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    png = tmp_path / "f.png"
    argv = ["plot", str(sweep), "--hue", "tcp.rto_min", "--x", "senders", "--out", str(png)]
    assert main([*argv, "--where", "topology.buffer.bytes=64KB"]) == 0 and png.exists()


def _kinds() -> dict[str, str]:
    return dict(record.columns())


def _assert_typed(frame: pd.DataFrame) -> None:
    kinds = _kinds()
    ints = [c for c, k in kinds.items() if k == record.INT]
    bools = [c for c, k in kinds.items() if k == record.BOOL]
    assert ints and bools
    for c in ints:
        assert pd.api.types.is_integer_dtype(frame[c].dtype), (c, frame[c].dtype)
    for c in bools:
        assert pd.api.types.is_bool_dtype(frame[c].dtype), (c, frame[c].dtype)
    # Some of them are null in these runs, all-null ones included: still typed.
    assert any(frame[c].isna().all() for c in bools)
    assert any(frame[c].isna().all() for c in ints)


def test_plain_pandas_reads_int_and_bool_columns_typed(
    sweep: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.parquet"
    assert main(["sim", "--senders", "4", "--blocks", "2", "-q", "--out", str(out)]) == 0
    _assert_typed(pd.read_parquet(out))
    point = sorted((sweep / "points").glob("*.parquet"))[0]
    _assert_typed(pd.read_parquet(point))


def test_a_file_written_without_pandas_metadata_still_reads(sweep: Path, tmp_path: Path) -> None:
    point = sorted((sweep / "points").glob("*.parquet"))[0]
    table = pq.read_table(point)
    meta = {k: v for k, v in (table.schema.metadata or {}).items() if k != b"pandas"}
    older = tmp_path / "older.parquet"
    pq.write_table(table.replace_schema_metadata(meta), older)
    assert schema.read_records(older) == schema.read_records(point)
    assert SweepStore(sweep).rows()


def test_a_figure_caption_names_a_filter_by_its_key_with_units() -> None:
    from incastlab.cli.stored import where_caption

    where = [
        ("topology.buffer.bytes", "64KB"),
        ("tcp.rto_min_s", "0.001"),
        ("topology.buffer.packets", "100"),
        ("topology.senders", "16"),
    ]
    assert where_caption(where) == [
        "buffer = 64KB",
        "rto min = 0.001 s",
        "buffer = 100 packets",
        "senders = 16",
    ]
