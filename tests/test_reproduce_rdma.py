"""The RDMA reproductions' checks (DCQCN, HPCC), on synthetic runs that pass and runs that
fail, so they are tested before the RoCE transport produces real ones; and their
experiments' place among the others while they await their first reference run."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from incastlab.reproductions.checks import rdma
from incastlab.reproductions.findings import Findings
from incastlab.reproductions.reproduce import CHECKS, experiments

RDMA = ("dcqcn-incast", "pfc-unfairness", "hpcc-incast", "hpcc-fct-slowdown")


def _paper(name: str) -> dict[str, Any]:
    return dict(experiments(awaiting=True)[name].meta["paper"])


def _run(cc: str, n: int, **cols: Any) -> dict[str, Any]:
    base = {"drops": 0, "pfc_pauses": 0, "bottleneck_max_bytes": 0, "fct_overhead": 0.02}
    return {"params": {"topology.senders": n}, "senders": n, "cc": cc, **base, **cols}


def _runs(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Rows as reproduce hands them over: one sweep per congestion control, named by it."""
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(r["cc"], []).append(r)
    return out


def _grades(f: Findings) -> dict[str, str]:
    return {c.text: c.grade for c in f.claims}


# --- dcqcn-incast ----------------------------------------------------------------------------

NS = (2, 4, 8, 16, 32)


def _dcqcn_runs(*, dcqcn_pauses: int, unfair: bool = False, drops: int = 0) -> list[dict]:
    rows = []
    for n in NS:
        fair = [1e-3 * n] * n
        rows.append(_run("none", n, pfc_pauses=100 * n, flow_completion_s=fair, drops=drops))
        fcts = [1e-3 * n * (0.3 if unfair and i == 0 else 1.0) for i in range(n)]
        rows.append(
            _run("dcqcn", n, pfc_pauses=dcqcn_pauses, flow_completion_s=fcts, fct_overhead=0.04)
        )
    return rows


def test_dcqcn_incast_agrees_where_dcqcn_cuts_pauses_and_shares_fairly(tmp_path: Path) -> None:
    f = rdma.dcqcn_incast(_runs(_dcqcn_runs(dcqcn_pauses=20)), _paper("dcqcn-incast"), tmp_path)
    assert f.grade == "agrees", [c.line() for c in f.claims]
    assert len(f.claims) == 7
    cut = next(c for c in f.claims if "at 32:1" in c.text)
    assert cut.measured.startswith("160× fewer (3200 → 20)")
    assert (tmp_path / "dcqcn_incast.png").stat().st_size > 10_000
    assert "| 32 | 3200 | 20 |" in f.table


def test_dcqcn_incast_disagrees_where_pauses_stay_or_one_sender_hogs(tmp_path: Path) -> None:
    runs = _runs(_dcqcn_runs(dcqcn_pauses=1000, unfair=True, drops=3))
    g = _grades(rdma.dcqcn_incast(runs, _paper("dcqcn-incast"), tmp_path))
    assert g["PFC keeps RoCE lossless under incast, with or without DCQCN"] == "disagrees"
    # 3200 → 1000: fewer, but not 10× fewer: the direction holds.
    assert g["DCQCN cuts PFC pauses against no congestion control at 32:1"] == "shape only"
    # At 16:1, 1600 → 1000 is a cut of 1.6×: far below 10×, but fewer.
    assert g["DCQCN cuts PFC pauses against no congestion control at 16:1"] == "shape only"
    # One flow at 3.3× the others' rate: Jain's index 0.78 at 2:1, 0.71 at 4:1, below even
    # the shape's 0.8.
    fair = next(k for k in g if k.startswith("DCQCN gives each sender"))
    assert g[fair] == "disagrees"
    runs = _runs(_dcqcn_runs(dcqcn_pauses=20, unfair=True))
    f = rdma.dcqcn_incast(runs, _paper("dcqcn-incast"), tmp_path)
    assert f.claims[4].measured.startswith("0.711 (worst, N = 4) against a fair share's 1.000")


def test_optimal_is_counted_on_the_wire() -> None:
    # 1000 B of payload travel as 1000 + 62 + 20 B (HPCC: + 8 B of INT at the one switch).
    row = {"roce.mtu": 1000, "roce.header_bytes": 62, "tcp.phy_overhead": 20,
           "roce.int_hop_bytes": 8, "roce.cc": "none", "fct_overhead": 0.082}  # fmt: skip
    assert rdma.on_wire(row) == pytest.approx(1.082)
    assert rdma.late([row]) == pytest.approx(0.0)
    assert rdma.on_wire({**row, "roce.cc": "hpcc"}) == pytest.approx(1.09)
    assert rdma.on_wire({"fct_overhead": 0.1}) == 1.0


def test_jain_index() -> None:
    assert rdma.jain([5, 5, 5, 5]) == pytest.approx(1.0)
    assert rdma.jain([1, 0, 0, 0]) == pytest.approx(0.25)
    assert rdma.jain([]) == 0.0
    assert rdma.rate_fairness({"flow_completion_s": [1.0, None]}) == pytest.approx(0.5)


# --- pfc-unfairness --------------------------------------------------------------------------


def _four(cc: str, fcts: list[float]) -> dict[str, Any]:
    # 4 × 10 MB at 40 Gbps: a quarter of the link each ends at 8 ms, half the link at 4 ms.
    return _run(cc, 4, app_bytes=40_000_000, link_bps=40e9, flow_completion_s=fcts)


def test_pfc_unfairness_agrees_where_pfc_is_port_fair_and_dcqcn_flow_fair(tmp_path: Path) -> None:
    # Port-fair: the local sender (3) at half the link ends at 4 ms; the others at 8 ms.
    runs = _runs([_four("none", [8e-3, 8e-3, 8e-3, 4e-3]), _four("dcqcn", [8e-3] * 3 + [7.6e-3])])
    f = rdma.pfc_unfairness(runs, _paper("pfc-unfairness"), tmp_path)
    assert f.grade == "agrees", [c.line() for c in f.claims]
    assert f.claims[1].measured == "50% against the port-fair share, 50%"
    assert f.claims[2].measured == "1.04× against the fair share, 1.00×"
    assert "| 3 | beside the receiver | 50.0% | 26.3% |" in f.table
    assert (tmp_path / "pfc_unfairness.png").stat().st_size > 10_000


def test_pfc_unfairness_disagrees_where_dcqcn_leaves_the_local_sender_ahead(
    tmp_path: Path,
) -> None:
    same = [8e-3, 8e-3, 8e-3, 4e-3]
    runs = _runs([_four("none", [8e-3] * 4), _four("dcqcn", same)])
    grades = [c.grade for c in rdma.pfc_unfairness(runs, _paper("pfc-unfairness"), tmp_path).claims]
    # Without cc it is flow-fair (25%): not the port's half, nor above 1.5× the fair share;
    # with DCQCN the local sender keeps 2× the flows' mean and the flows end 2× apart.
    assert grades == ["agrees", "disagrees", "disagrees", "disagrees"]


# --- hpcc-incast -----------------------------------------------------------------------------


def _hpcc_runs(*, hpcc_pauses: int, hpcc_peak: float, hpcc_over: float) -> list[dict]:
    rows = []
    for n in (16, 60):
        rows.append(_run("none", n, pfc_pauses=5000, bottleneck_max_bytes=15e6))
        rows.append(_run("dcqcn", n, pfc_pauses=800, bottleneck_max_bytes=9e6))
        rows.append(
            _run(
                "hpcc",
                n,
                pfc_pauses=hpcc_pauses,
                bottleneck_max_bytes=hpcc_peak,
                fct_overhead=hpcc_over,
            )
        )
    return rows


def test_hpcc_incast_agrees_where_hpcc_never_pauses(tmp_path: Path) -> None:
    runs = _runs(_hpcc_runs(hpcc_pauses=0, hpcc_peak=3.3e6, hpcc_over=0.06))
    f = rdma.hpcc_incast(runs, _paper("hpcc-incast"), tmp_path)
    assert f.grade == "agrees", [c.line() for c in f.claims]
    assert [c.measured for c in f.claims][:2] == [
        "0 pauses (DCQCN 800, no cc 5000)",
        "800 pauses with DCQCN, 0 with HPCC",
    ]
    assert f.claims[3].measured == "+6.0% over optimal (worst, N = 16)"
    assert f.claims[3].tolerance == "at most 1/η − 1 + 5 points = 10.3% over optimal"
    assert (tmp_path / "hpcc_incast.png").stat().st_size > 10_000


def test_hpcc_incast_disagrees_where_hpcc_pauses_like_dcqcn(tmp_path: Path) -> None:
    runs = _runs(_hpcc_runs(hpcc_pauses=900, hpcc_peak=9e6, hpcc_over=0.5))
    grades = [c.grade for c in rdma.hpcc_incast(runs, _paper("hpcc-incast"), tmp_path).claims]
    # DCQCN does pause (800), and the claims about HPCC fail: more pauses (900), a peak
    # queue as DCQCN's, and the link idle for a third of the incast.
    assert grades == ["disagrees", "agrees", "disagrees", "disagrees"]


# --- hpcc-fct-slowdown -----------------------------------------------------------------------


def _flows(cc: str, short: float, long: float, pauses: int) -> dict[str, Any]:
    """20 background size buckets, 10 KB to 10 MB: slowdown `short` up to 100 KB, `long`
    above (the flow schedule's report)."""
    tops = [10_000 * 2 ** (i / 2) for i in range(20)]
    return _run(
        cc,
        64,
        pfc_pauses=pauses,
        fct_slowdown_bucket_bytes=[int(t) for t in tops],
        fct_slowdown_bucket_p95=[short if t <= 100_000 else long for t in tops],
    )


def test_hpcc_fct_slowdown_agrees_where_hpcc_cuts_short_flows_tails(tmp_path: Path) -> None:
    runs = _runs([_flows("dcqcn", 60.0, 4.0, 500), _flows("hpcc", 2.0, 4.4, 0)])
    f = rdma.hpcc_fct_slowdown(runs, _paper("hpcc-fct-slowdown"), tmp_path)
    assert f.grade == "agrees", [c.line() for c in f.claims]
    assert f.claims[0].measured == (
        "97% shorter (60 → 2 for flows ≤ 10 KB) against the paper's up to 95%"
    )
    assert f.table.count("\n") == 21 and "| 10 KB | 60 | 2 |" in f.table
    assert (tmp_path / "fct_slowdown.png").stat().st_size > 10_000


def test_hpcc_fct_slowdown_averages_seeds_bucket_by_bucket() -> None:
    rows = [_flows("hpcc", 2.0, 4.0, 0), _flows("hpcc", 4.0, 8.0, 0)]
    curve = rdma.p95_by_size(rows)
    assert curve[0] == (10_000, 3.0) and curve[-1][1] == 6.0 and len(curve) == 20


def test_hpcc_fct_slowdown_disagrees_where_hpcc_is_no_better(tmp_path: Path) -> None:
    runs = _runs([_flows("dcqcn", 6.0, 4.0, 500), _flows("hpcc", 8.0, 20.0, 400)])
    f = rdma.hpcc_fct_slowdown(runs, _paper("hpcc-fct-slowdown"), tmp_path)
    assert [c.grade for c in f.claims] == ["disagrees", "disagrees", "shape only"]


# --- the experiments -------------------------------------------------------------------------


def test_rdma_experiments_await_their_reference_and_cite_their_papers() -> None:
    every = experiments(awaiting=True)
    finished = experiments()
    for name in RDMA:
        e = every[name]
        assert e.requires == "roce" and e.meta["check"] in CHECKS
        assert e.meta["cites"][0] in ("zhu2015", "li2019")
        assert re.search(r"(19|20)\d\d", e.sources[0])
        # Until `--update-expected` writes its reference, it runs when named only.
        assert (name in finished) == (not e.awaiting)


@pytest.mark.parametrize("name", RDMA)
def test_rdma_experiments_parse_once_the_roce_transport_knows_their_keys(name: str) -> None:
    from incastlab.scenario import ScenarioError
    from incastlab.sweep.spec import load_spec

    for spec in experiments(awaiting=True)[name].sweeps:
        try:
            points = load_spec(spec).points()
        except ScenarioError as e:
            # An experiment awaiting its reference may wait for a workload over RoCE.
            awaiting = experiments(awaiting=True)[name].awaiting
            if re.search(r"unknown key '(roce|flows)'", str(e)) or (
                awaiting and "RoCE runs the incast and sync_read workloads" in str(e)
            ):
                pytest.skip(f"this build has no RoCE transport or flow schedule yet: {e}")
            raise
        assert points, spec


def test_every_check_disagrees_when_its_runs_failed(tmp_path: Path) -> None:
    # The points that failed leave no rows (reproduce counts them as failures).
    for name, check in (
        ("dcqcn-incast", rdma.dcqcn_incast),
        ("pfc-unfairness", rdma.pfc_unfairness),
        ("hpcc-incast", rdma.hpcc_incast),
        ("hpcc-fct-slowdown", rdma.hpcc_fct_slowdown),
    ):
        f = check(_runs([_run("none", 4)]), _paper(name), tmp_path)
        assert [c.grade for c in f.claims] == ["disagrees"], name
        assert f.claims[0].measured.startswith("no completed run of"), name


def test_the_listing_marks_experiments_awaiting_their_transport(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from incastlab.cli import main

    monkeypatch.setenv("COLUMNS", "300")  # one row per experiment, its note unwrapped
    assert main(["reproduce", "--list"]) == 0
    listing = " ".join(capsys.readouterr().out.split())
    for name in RDMA:
        assert name in listing
    waiting = [n for n in RDMA if experiments(awaiting=True)[n].awaiting]
    assert listing.count("no reference run yet") == len(waiting)
