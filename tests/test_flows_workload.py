"""The flow schedule (workload.kind = "flows"): HPCC-style background load and incast bursts
over TCP, its CDF files and keys refused in one line, and the FCT slowdown the table shows."""

from __future__ import annotations

from pathlib import Path

import pytest

import incastlab
from incastlab.cli import main
from incastlab.scenario import from_dict, load

#: 16 hosts on a 10 Gbps leaf-spine, a short schedule with 8:1 bursts of 64 KB.
SMALL = {
    "topology": {
        "kind": "leaf_spine",
        "senders": 16,
        "hosts_per_leaf": 8,
        "spines": 2,
        "link": "10Gbps",
        "rtt": "20us",
    },
    "tcp": {"rto_min": "1ms"},
    "workload": {"kind": "flows"},
    "flows": {"duration": "5ms", "incast_fan_in": 8, "incast_size": "64KB"},
}


def test_a_schedule_runs_over_tcp_and_reports_slowdowns_by_size() -> None:
    r = incastlab.simulate(SMALL)
    s = r.report["fct_slowdown"]
    assert s["unfinished"] == 0 and s["background"] and s["incast"]
    for b in s["background"] + s["incast"]:
        assert 1.0 <= b["p50"] <= b["p95"] <= b["p99"]
    # Background and burst flows apart; every burst flow names its burst.
    bursts = [f for f in r.report["flows"] if "burst" in f]
    assert bursts and all(f["bytes"] == 64_000 for f in bursts)
    assert sum(b["flows"] for b in s["background"]) == len(r.report["flows"]) - len(bursts)
    row = r.record()
    assert row["fct_slowdown_background_p50"] == s["background_p50"]
    assert row["fct_slowdown_bucket_bytes"] == [b["max_bytes"] for b in s["background"]]


def test_a_cdf_file_beside_the_scenario_is_read_and_its_points_kept(tmp_path: Path) -> None:
    (tmp_path / "mine.cdf").write_text("# bytes p\n1000 0.5\n100000 1\n")
    (tmp_path / "f.toml").write_text(
        '[workload]\nkind = "flows"\n[topology]\nsenders = 4\n'
        '[flows]\nincast_load = 0\nsize_cdf = "mine.cdf"\n'
    )
    sc = load(tmp_path / "f.toml")
    assert sc.normalized()["flows"]["size_cdf"] == [[1000, 0.5], [100000, 1.0]]
    again = from_dict(sc.normalized(), normalized=True)
    assert again.normalized() == sc.normalized()


def test_both_cdf_keys_read_one_format_units_and_percentages_included(tmp_path: Path) -> None:
    """flows.size_cdf and workload.query_size_cdf take the same files and points, read by
    the core's one parser: sizes with units or in bytes, percentages or fractions."""
    (tmp_path / "rich.cdf").write_text("# size percent\n2KB 60\n100KB, 90\n1MB 100\n")
    want = [[2000, 0.6], [100_000, 0.9], [1_000_000, 1.0]]
    points = [["2KB", 60], [100000, "90"], ["1MB", 100]]
    for value in (str(tmp_path / "rich.cdf"), points):
        flows = from_dict({**SMALL, "flows": {**SMALL["flows"], "size_cdf": value}})
        assert flows.normalized()["flows"]["size_cdf"] == want
        queries = from_dict({"workload": {"kind": "queries", "query_size_cdf": value}})
        assert queries.normalized()["workload"]["query_size_cdf"] == want
    with pytest.raises(incastlab.ScenarioError, match=r"^flows.size_cdf: point 1: unknown size"):
        from_dict({"flows": {"size_cdf": [[1000, 0.5], ["2 parsecs", 1]]}})


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("100 0.5\n90 1\n", "flows.size_cdf: bad.cdf, line 2: sizes must increase: 90 after 100"),
        (
            "# p drops\n100 0.6\n200 0.5\n300 1\n",
            "flows.size_cdf: bad.cdf, line 3: probabilities must not decrease",
        ),
        ("100 1.2\n", r"flows.size_cdf: bad.cdf, line 1: probability must be in \[0, 1\]"),
        ("100 0.5\n200 0.9\n", "flows.size_cdf: bad.cdf, line 2: the last probability must be 1"),
    ],
)
def test_a_bad_cdf_file_is_refused_naming_the_key_and_line(
    tmp_path: Path, text: str, needle: str
) -> None:
    (tmp_path / "bad.cdf").write_text(text)
    sc = {"workload": {"kind": "flows"}, "topology": {"senders": 4}}
    sc["flows"] = {"incast_load": 0, "size_cdf": str(tmp_path / "bad.cdf")}
    with pytest.raises(incastlab.ScenarioError, match=needle) as e:
        from_dict(sc)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("flows", "needle"),
    [
        ({"size_cdf": "websarch"}, "flows.size_cdf: 'websarch' is neither a built-in"),
        ({"incast_fan_in": 60}, "flows.incast_fan_in: senders per burst must be 1..15"),
        ({"load": 1.5}, r"flows.load: a share of the link, 0 ≤ load < 1, got 1.5"),
        ({"lod": 0.3}, "unknown key 'flows.lod' \\(did you mean 'flows.load'\\?\\)"),
    ],
)
def test_bad_keys_are_refused_in_one_line(flows: dict[str, object], needle: str) -> None:
    sc = {"workload": {"kind": "flows"}, "topology": {"senders": 16}, "flows": flows}
    with pytest.raises(incastlab.ScenarioError, match=needle) as e:
        from_dict(sc)
    assert "\n" not in str(e.value)


def test_the_sim_table_shows_the_schedule_and_its_slowdowns(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["sim", "--workload", "flows", "--senders", "16", "--link", "10Gbps"]
    argv += ["--set", "flows.duration=2ms", "--set", "flows.incast_fan_in=8"]
    argv += ["--set", "flows.incast_size=64KB", "--set", "flows.size_cdf=hadoop"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "flows, 16 hosts, 30% load of hadoop + 2% in 8:1 bursts of 64 KB" in " ".join(
        out.split()
    )
    assert "slowdown" in out and "incast" in out
