"""One result, one schema: the record, its Parquet files read as one table by pandas, polars and
DuckDB, `incastlab.load`, and seed aggregation in `incast results`."""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import incastlab
from incastlab.cli import main
from incastlab.result import SCHEMA_VERSION, aggregate
from incastlab.result.store import read_parquet
from incastlab.sweep.store import SweepStore

MIXED = """
[sweep]
name = "mixed"
seeds = 2
[topology]
senders = 3
[workload]
kind = ["sync_read", "incast"]
sru = "16KB"
blocks = 2
flow_size = "16KB"
"""

ONE = '[topology]\nsenders = 2\n[workload]\nsru = "16KB"\nblocks = 2\n'


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A sweep directory mixing two workloads over two seeds, and two `incast sim --out`
    files of different workloads."""
    d = tmp_path_factory.mktemp("results")
    spec = d / "mixed.toml"
    spec.write_text(MIXED)
    assert main(["sweep", str(spec), "--out", str(d / "sweep"), "--workers", "1", "-q"]) == 0
    sim = ["sim", "--senders", "2", "--blocks", "2", "-q"]
    assert main([*sim, "--sru", "16KB", "--out", str(d / "reads.parquet")]) == 0
    assert main([*sim, "--flow-size", "16KB", "--out", str(d / "incast.parquet")]) == 0
    return {"sweep": d / "sweep", "reads": d / "reads.parquet", "incast": d / "incast.parquet"}


def _all_files(files: dict[str, Path]) -> list[str]:
    points = sorted((files["sweep"] / "points").glob("*.parquet"))
    return [str(files["reads"]), str(files["incast"]), *map(str, points)]


def test_every_file_carries_the_schema_version_and_one_schema(files: dict[str, Path]) -> None:
    schemas = [pq.read_schema(f) for f in _all_files(files)]
    for s in schemas:
        assert s.metadata[b"incastlab.schema_version"] == str(SCHEMA_VERSION).encode()
        assert s.metadata[b"incastlab.version"] == incastlab.__version__.encode()
    assert {s.metadata[b"incastlab.kind"] for s in schemas} == {b"results", b"point"}
    first = schemas[0]
    assert all(s.remove_metadata() == first.remove_metadata() for s in schemas)
    # Typed even where every value is null: no null-typed column anywhere.
    assert not any(pa.types.is_null(f.type) for f in first)
    assert first.field("fct_overhead").type == pa.float64()
    assert first.field("query_fct_mean_s").type == pa.float64()
    assert first.field("topology.senders").type == pa.int64()
    assert first.field("topology.buffer.packets").type == pa.int64()
    assert first.field("background.ecn").type == pa.bool_()
    assert first.field("block_times_s").type == pa.list_(pa.float64())


def test_pandas_reads_the_mixed_files_as_one_table(files: dict[str, Path]) -> None:
    df = incastlab.load([files["reads"], files["incast"], files["sweep"]])
    assert len(df) == 2 + 4
    assert sorted(df["workload.kind"]) == ["incast"] * 3 + ["sync_read"] * 3
    assert str(df["fct_overhead"].dtype) == "float64"
    reads, incast = df[df["workload"] == "sync_read"], df[df["workload"] == "incast"]
    assert reads["fct_overhead"].isna().all() and incast["fct_overhead"].notna().all()
    assert df["query_fct_mean_s"].isna().all() and str(df["query_fct_mean_s"].dtype) == "float64"
    # Integers stay integers beside their missing values.
    assert str(df["blocks"].dtype) == "Int64" and str(df["workload.flow_size"].dtype) == "Int64"
    assert df.loc[df["backend"] == "sim", "topology.senders"].tolist() == [2, 2, 3, 3, 3, 3]
    assert (df["tcp.rto_min_s"] == 0.2).all()  # time coordinates in seconds


def test_polars_reads_the_mixed_files_as_one_table(files: dict[str, Path]) -> None:
    pl = pytest.importorskip("polars")
    df = pl.read_parquet(_all_files(files))
    assert df.height == 6
    assert df.schema["fct_overhead"] == pl.Float64 and df.schema["blocks"] == pl.Int64
    reads = df.filter(pl.col("workload") == "sync_read")
    assert reads["fct_overhead"].null_count() == reads.height == 3
    glob = pl.read_parquet(str(files["sweep"] / "points" / "*.parquet"))
    assert glob.height == 4 and glob["key"].null_count() == 0


def test_duckdb_reads_the_mixed_files_as_one_table(files: dict[str, Path]) -> None:
    duckdb = pytest.importorskip("duckdb")
    paths = ", ".join(f"'{p}'" for p in _all_files(files))
    rel = duckdb.sql(f"SELECT * FROM read_parquet([{paths}], union_by_name = true)")
    types = dict(zip(rel.columns, map(str, rel.types), strict=True))
    assert types["fct_overhead"] == "DOUBLE" and types["block_time_median_s"] == "DOUBLE"
    assert types["topology.senders"] == "BIGINT" and types["background.ecn"] == "BOOLEAN"
    counts = duckdb.sql(
        f"""SELECT workload, count(*), count(fct_overhead), count(key)
            FROM read_parquet([{paths}]) GROUP BY workload ORDER BY workload"""
    ).fetchall()
    assert counts == [("incast", 3, 3, 2), ("sync_read", 3, 0, 2)]


def test_load_takes_a_file_a_sweep_directory_or_several(files: dict[str, Path]) -> None:
    assert len(incastlab.load(files["reads"])) == 1
    assert len(incastlab.load(str(files["sweep"]))) == 4
    assert len(incastlab.load([files["reads"], files["incast"]])) == 2
    with pytest.raises(FileNotFoundError, match="no such results"):
        incastlab.load(files["sweep"] / "nothing.parquet")


def test_aggregate_gives_the_mean_and_the_student_t_interval() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(
        {
            "backend": ["sim"] * 4,
            "topology.senders": [1, 1, 1, 2],
            "seed": [1, 2, 3, 1],
            "goodput_bps": [1.0, 2.0, 4.0, 5.0],
        }
    )
    out = aggregate(df).set_index("topology.senders")
    assert out.loc[1, "n"] == 3 and out.loc[1, "goodput_bps_mean"] == pytest.approx(7 / 3)
    sd = math.sqrt(((1 - 7 / 3) ** 2 + (2 - 7 / 3) ** 2 + (4 - 7 / 3) ** 2) / 2)
    assert out.loc[1, "goodput_bps_ci95"] == pytest.approx(4.30 * sd / math.sqrt(3))
    assert out.loc[2, "n"] == 1 and math.isnan(out.loc[2, "goodput_bps_ci95"])


def test_incast_results_aggregates_over_seeds(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    records = SweepStore(files["sweep"]).rows()
    assert main(["results", str(files["sweep"]), "--json"]) == 0
    summary = {r["workload.kind"]: r for r in json.loads(capsys.readouterr().out)}
    assert set(summary) == {"sync_read", "incast"}
    for kind, row in summary.items():
        goodputs = [r["goodput_bps"] for r in records if r["workload"] == kind]
        assert row["n"] == 2
        assert row["goodput_bps_mean"] == pytest.approx(statistics.fmean(goodputs))
        half = 12.71 * statistics.stdev(goodputs) / math.sqrt(2)
        assert row["goodput_bps_ci95"] == pytest.approx(half)
    assert summary["sync_read"]["fct_overhead_mean"] is None
    assert main(["results", str(files["sweep"]), "--per-seed", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 4
    assert main(["results", str(files["sweep"])]) == 0
    assert "mean ± 95% interval over seeds" in capsys.readouterr().out


def test_json_out_and_a_sweep_point_hold_the_same_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "one.toml"
    scenario.write_text(ONE)
    assert main(["sim", str(scenario), "--json"]) == 0
    (printed,) = json.loads(capsys.readouterr().out)
    assert main(["sim", str(scenario), "-q", "--out", str(tmp_path / "one.parquet")]) == 0
    (stored,) = read_parquet(tmp_path / "one.parquet")
    assert main(["sweep", str(scenario), "--out", str(tmp_path / "sweep"), "-q"]) == 0
    (point,) = SweepStore(tmp_path / "sweep").rows()
    sweep_fields = {"key", "params", "wall_s"}

    def without(r: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in r.items() if k not in sweep_fields}

    assert printed == stored
    assert without(point) == without(printed)
    assert point["key"] and point["params"] == {} and point["wall_s"] > 0
    assert printed["schema_version"] == SCHEMA_VERSION and printed["report"]["block_times"]


def test_a_point_stored_before_the_schema_is_read_as_a_record(tmp_path: Path) -> None:
    r = incastlab.simulate({"topology": {"senders": 2}, "workload": {"sru": "8KB", "blocks": 2}})
    old = {
        "key": "k",
        "backend": "sim",
        "params": json.dumps({"topology.senders": 2}),
        **{k: v for k, v in r.row().items() if k != "schema_version"},
        "wall_s": 0.5,
        "scenario": json.dumps(r.scenario),
        "report": json.dumps(r.report),
    }
    store = SweepStore(tmp_path)
    store.create({"name": "old", "axes": ["topology.senders"]})
    pq.write_table(pa.Table.from_pylist([old]), store.points_dir / "k.parquet")
    (row,) = store.rows()
    assert row == r.record(key="k", params={"topology.senders": 2}, wall_s=0.5)
    assert len(incastlab.load(tmp_path)) == 1


def test_a_rerun_removes_the_half_written_files_of_a_killed_writer(tmp_path: Path) -> None:
    store = SweepStore(tmp_path)
    store.create({"name": "x"})
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    stale = store.points_dir / f".a.parquet.{gone.pid}.tmp"
    live = store.points_dir / f".b.parquet.{os.getpid()}.tmp"
    for f in (stale, live):
        f.write_bytes(b"half")
    store.create({"name": "x"})
    assert not stale.exists() and live.exists()


def test_a_results_file_written_before_the_schema_is_read_as_records(tmp_path: Path) -> None:
    r = incastlab.simulate({"topology": {"senders": 3}, "workload": {"sru": "8KB", "blocks": 3}})
    new = r.record()
    old_columns = [
        *("backend", "senders", "workload", "goodput_bps", "goodput_fraction", "link_bps"),
        *("duration_s", "app_bytes", "blocks", "block_time_median_s", "block_time_max_s"),
        *("blocks_with_timeouts", "timeouts", "drops", "bottleneck_drops", "events", "seed"),
        *("version", "block_times_s", "block_timeouts", "flow_completion_s", "flow_timeouts"),
    ]
    old = {k: new[k] for k in old_columns} | {"scenario": json.dumps(r.scenario)}
    path = tmp_path / "old.parquet"
    pq.write_table(pa.Table.from_pylist([old]), path)
    (row,) = read_parquet(path)
    assert row["schema_version"] == SCHEMA_VERSION and row["scenario"] == r.scenario
    for k in old_columns:
        assert row[k] == pytest.approx(new[k]), k
    assert row["topology.senders"] == 3 and row["fast_recoveries"] is None
