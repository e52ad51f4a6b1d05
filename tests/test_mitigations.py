"""Mitigations: RTO randomization (Hafeez et al.), DCTCP and ECN, RED, shared buffers, PFC,
application-level controls, and `incast mitigate`."""

from __future__ import annotations

import statistics

import pytest

import incastlab
from conftest import HAFEEZ, run, scenario, sweep


def test_uniform_randomization_trades_small_fan_in_for_large() -> None:
    """Hafeez Fig. 5: a large interval (Δ = 16 ms around RTOmin 10 ms) costs goodput at a
    small fan-in and raises it from 64 senders on. The paper sees the cost at 4-8 senders;
    here, with F-RTO undoing spurious timeouts, it shows at 16."""
    ns = [16, 64, 128, 256]
    plain = sweep(ns, **HAFEEZ)
    wide = sweep(ns, tcp__rto_randomization="uniform", tcp__rto_delta="16ms", **HAFEEZ)
    assert wide[16].goodput_bps < 0.9 * plain[16].goodput_bps
    for n in (64, 128, 256):
        assert wide[n].goodput_bps > 1.5 * plain[n].goodput_bps, n


# Two long flows beside the incast; three blocks keep the collapsed baseline short.
BUSY = dict(background__flows=2, workload__blocks=3, **HAFEEZ)


@pytest.fixture(scope="module")
def busy_baseline() -> dict[int, incastlab.Result]:
    return sweep([128, 256], **BUSY)


@pytest.mark.parametrize(("kind", "delta"), [("tda", "2ms"), ("maa", "1ms"), ("fsa", "2ms")])
def test_adaptive_randomization_rescues_large_incasts_beside_long_flows(
    kind: str, delta: str, busy_baseline: dict[int, incastlab.Result]
) -> None:
    """Hafeez Figs. 8 and 10: with two long flows in the background, TDA, MAA and FSA raise
    the goodput of 128- and 256-sender tasks by far more than 3x."""
    adaptive = sweep([128, 256], tcp__rto_randomization=kind, tcp__rto_delta=delta, **BUSY)
    for n, plain in busy_baseline.items():
        assert adaptive[n].goodput_bps > 3 * plain.goodput_bps, (kind, n)


def test_tda_raises_large_incasts_without_background_flows() -> None:
    ns = [128, 256]
    plain = sweep(ns, **HAFEEZ)
    tda = sweep(ns, tcp__rto_randomization="tda", tcp__rto_delta="2ms", **HAFEEZ)
    assert tda[128].goodput_bps > 2 * plain[128].goodput_bps
    assert tda[256].goodput_bps > 3 * plain[256].goodput_bps


def test_randomized_runs_are_deterministic_per_seed() -> None:
    kw = dict(topology__senders=64, tcp__rto_randomization="uniform", tcp__rto_delta="4ms")
    a = incastlab.simulate(scenario(seed=3, **HAFEEZ, **kw))
    b = incastlab.simulate(scenario(seed=3, **HAFEEZ, **kw))
    c = incastlab.simulate(scenario(seed=4, **HAFEEZ, **kw))
    assert a.report == b.report
    assert a.report["block_times"] != c.report["block_times"]


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (
            dict(tcp__rto_randomization="uniform", tcp__rto_delta="30ms"),
            "tcp.rto_delta: must be at most 2·tcp.rto_min",
        ),
        (dict(tcp__rto_randomization="tda"), "tcp.rto_delta: randomization needs a positive"),
        (dict(tcp__rto_omega=0.5), "tcp.rto_omega: must be between 1 and 100"),
        (dict(tcp__rto_randomization="bogus"), "tcp.rto_randomization"),
    ],
)
def test_bad_randomization_settings_name_the_field(extra: dict[str, object], needle: str) -> None:
    with pytest.raises(incastlab.ScenarioError, match=needle.replace("·", ".")):
        scenario(tcp__rto_min="10ms", **extra)


def test_mitigate_ranks_every_mitigation(tmp_path: object) -> None:
    import json
    from pathlib import Path

    from incastlab.cli import main
    from incastlab.studies.mitigate import MITIGATIONS

    png = Path(str(tmp_path)) / "m.png"
    argv = ["mitigate", "--senders", "16", "--sru", "64KB", "--blocks", "3", "--plot", str(png)]
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main([*argv, "--json"]) == 0
    rows = json.loads(buf.getvalue())
    assert {r["mitigation"] for r in rows} == {m.name for m in MITIGATIONS}
    goodputs = [r["mean_goodput_bps"] for r in rows]
    assert goodputs == sorted(goodputs, reverse=True)
    base = next(r for r in rows if r["mitigation"] == "baseline")
    fine = next(r for r in rows if r["mitigation"] == "rto-min-1ms")
    assert fine["mean_goodput_bps"] > 3 * base["mean_goodput_bps"]
    bigger = next(r for r in rows if r["mitigation"] == "buffer-x4")
    assert bigger["points"][0]["scenario"]["topology"]["buffer"]["bytes"] == 256_000
    assert png.exists()


def test_mitigate_rejects_unknown_names(capsys: pytest.CaptureFixture[str]) -> None:
    from incastlab.cli import main

    assert main(["mitigate", "--only", "rto-tda,warp-drive"]) == 2
    assert "unknown mitigation 'warp-drive'" in capsys.readouterr().err


def test_dctcp_holds_the_queue_near_k_without_the_timeouts_of_newreno() -> None:
    """A 10:1 incast of 100 KB responses into a 160 KB port: NewReno overflows the buffer and
    times out; DCTCP with K = 30 KB keeps the queue around K and does not time out (a few
    packets of the first synchronized initial windows, 152 KB together, still drop)."""
    import statistics

    common = dict(
        topology__senders=10,
        topology__buffer="160KB",
        workload__sru="100KB",
        run__sample_interval="20us",
    )
    reno = incastlab.simulate(scenario(tcp__sack=False, **common))
    dctcp = incastlab.simulate(
        scenario(tcp__congestion_control="dctcp", topology__ecn_threshold="30KB", **common)
    )
    assert reno.timeouts >= 1
    assert dctcp.timeouts == 0 and dctcp.drops < reno.drops / 10
    assert dctcp.report["ecn_reductions"] > 0 and dctcp.report["bottleneck"]["marks"] > 0
    busy = [q for q in dctcp.series["queue_bytes"] if q > 0]  # type: ignore[index]
    assert abs(statistics.median(busy) - 30_000) < 10_000
    assert dctcp.goodput_bps > 2 * reno.goodput_bps


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (dict(tcp__congestion_control="dctcp"), "tcp.congestion_control: dctcp needs ECN marking"),
        (
            dict(topology__ecn_threshold="64KB"),
            "topology.ecn_threshold: 64000 bytes must be below topology.buffer",
        ),
        (dict(tcp__dctcp_g=0), "tcp.dctcp_g: must be in"),
    ],
)
def test_bad_dctcp_settings_name_the_field(extra: dict[str, object], needle: str) -> None:
    with pytest.raises(incastlab.ScenarioError, match=needle):
        scenario(**extra)


def test_microsecond_timers_with_a_200us_rto_min_hold_three_quarters_of_the_link() -> None:
    """CMU's microsecond retransmissions: RTOmin 200 µs on a 1 µs clock, 47 servers, 256 KB
    SRUs, 64 KB per port. Queueing alone exceeds the RTO at times; F-RTO undoes those
    spurious timeouts, and goodput stays at or above 75% of the link."""
    r = incastlab.simulate(
        scenario(
            topology__senders=47,
            workload__sru="256KB",
            tcp__rto_min="200us",
            tcp__clock_granularity="1us",
        )
    )
    assert r.goodput_fraction >= 0.75, r.goodput_bps


def test_a_fanout_window_trades_parallelism_for_fewer_timeouts() -> None:
    kw = dict(topology__senders=32, workload__sru="256KB", workload__blocks=10)
    wide = incastlab.simulate(scenario(**kw))
    windowed = incastlab.simulate(scenario(workload__fanout_window=4, **kw))
    assert windowed.timeouts < wide.timeouts / 4
    assert windowed.goodput_bps > wide.goodput_bps


def test_cubic_runs_the_workload_and_keeps_more_window_than_reno_after_losses() -> None:
    """CUBIC (Linux's default) keeps 70% of the window on a loss where Reno keeps half: two
    long flows sharing the receiver with an incast keep the link busier."""
    kw = dict(topology__senders=8, workload__sru="64KB", background__flows=2)
    reno = incastlab.simulate(scenario(**kw))
    cubic = incastlab.simulate(scenario(tcp__congestion_control="cubic", **kw))
    assert cubic.report["app_bytes"] == reno.report["app_bytes"] == 8 * 64_000 * 20
    assert cubic.report["bottleneck_utilization"] >= reno.report["bottleneck_utilization"]


def test_a_shared_buffer_lends_the_congested_port_more_than_its_static_share() -> None:
    """A 1 MB buffer shared by the 17 ports with α = 1 lets the receiver's port grow to about
    half of it, where a static split gives it 64 KB: fewer timeouts for a 32-way incast."""
    kw = dict(topology__senders=32, workload__sru="256KB", workload__blocks=10)
    static = incastlab.simulate(scenario(**kw))
    shared = incastlab.simulate(
        scenario(topology__buffer="unlimited", topology__shared_buffer="1MB", **kw)
    )
    bn = shared.report["bottleneck"]
    assert 64_000 < bn["max_bytes"] <= 500_000 + 1518
    assert shared.report["shared_buffer_max_bytes"] <= 1_000_000
    assert shared.timeouts < static.timeouts
    assert shared.goodput_bps > static.goodput_bps


def test_red_holds_a_long_flow_between_its_thresholds_and_does_not_cure_incast() -> None:
    # Two long flows (one alone never queues: its NIC runs at the port's rate).
    long_flow = dict(topology__senders=2, workload__kind="incast", workload__flow_size="10MB")
    tail = incastlab.simulate(scenario(**long_flow))
    red = dict(topology__red_min="20KB", topology__red_max="40KB", topology__red_weight=1.0)
    early = incastlab.simulate(scenario(**red, **long_flow))
    assert tail.report["bottleneck"]["max_bytes"] > 60_000
    assert early.report["bottleneck"]["max_bytes"] <= 40_000 + 1518
    # Phanishayee et al. (FAST'08): RED does not prevent the incast collapse; with ECN and
    # DCTCP the same signals become marks instead of drops.
    incast = dict(topology__senders=16, workload__sru="64KB")
    red_incast = incastlab.simulate(scenario(**red, **incast))
    assert red_incast.timeouts > 0 and red_incast.goodput_fraction < 0.4
    marking = incastlab.simulate(
        scenario(**red, **incast, topology__red_ecn=True, tcp__congestion_control="dctcp")
    )
    assert marking.report["bottleneck"]["marks"] > 0
    assert marking.drops < red_incast.drops


def test_bad_red_settings_name_the_field() -> None:
    with pytest.raises(incastlab.ScenarioError, match=r"topology\.red_min: 50000 bytes must be"):
        scenario(topology__red_min="50KB", topology__red_max="40KB")
    with pytest.raises(incastlab.ScenarioError, match=r"topology\.red_max: must be at most"):
        scenario(topology__red_min="10KB", topology__red_max="100KB")


#: Sixteen servers answer 256 KB each into 64 KB per port, RTOmin 200 ms: a collapsing incast.
COLLAPSE = dict(topology__senders=16, workload__sru="256KB", workload__blocks=10)
#: Sixteen long flows from the same servers to a host of their own: they never cross the
#: incast's port, but they share the servers' NICs with the incast's responses.
VICTIMS = dict(background__flows=16, background__source="senders", background__destination="sink")


def test_pfc_makes_the_incast_lossless() -> None:
    base = run(**COLLAPSE)
    pfc = run(topology__pfc=True, **COLLAPSE)
    assert base.report["bottleneck"]["drops"] > 1000 and base.timeouts > 10
    assert base.goodput_fraction < 0.2
    assert pfc.report["bottleneck"]["drops"] == 0 and pfc.drops == 0
    assert pfc.timeouts == 0 and pfc.goodput_fraction > 0.9
    assert pfc.report["pfc_pauses"] > 100
    # Lossless because the bottleneck queue grows past the port's 64 KB: each server's
    # ingress holds up to XOFF plus what is in flight when its pause lands.
    assert pfc.report["bottleneck"]["max_bytes"] > 10 * 64_000
    assert pfc.scenario["topology"]["pfc_xoff"] is None  # derived: 54 674 bytes


def test_pfc_head_of_line_blocking_spreads_other_congestion_to_the_incast() -> None:
    """The long flows congest the sink's port. Without PFC that costs the incast nothing. With
    PFC the sink's port pauses the servers' NICs, and the incast's responses wait behind them:
    goodput falls from 94% (PFC, no long flows) to a few percent, below even the
    no-PFC collapse. DCTCP keeps queues below XOFF, so no pause is ever sent."""
    alone = run(topology__pfc=True, **COLLAPSE)
    without = run(**VICTIMS, **COLLAPSE)
    blocked = run(topology__pfc=True, **VICTIMS, **COLLAPSE)
    assert blocked.goodput_bps < 0.1 * alone.goodput_bps
    assert blocked.goodput_bps < without.goodput_bps
    assert statistics.median(blocked.block_times_s) > 0.5  # RTOmin is 0.2 s: no timeouts cause it
    assert blocked.report["bottleneck"]["drops"] == 0
    # The same long flows from hosts of their own: nothing shares a paused link.
    own = run(
        topology__pfc=True,
        background__flows=16,
        background__destination="sink",
        **COLLAPSE,
    )
    assert own.goodput_fraction > 0.9
    dctcp = run(
        topology__pfc=True,
        tcp__congestion_control="dctcp",
        topology__ecn_threshold="20KB",
        **VICTIMS,
        **COLLAPSE,
    )
    assert dctcp.report["pfc_pauses"] == 0 and dctcp.goodput_fraction > 0.9
    assert dctcp.report["background_bps"] > 0.9e9


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (
            dict(topology__pfc_xoff="40KB", topology__pfc_xon="50KB"),
            r"topology.pfc_xon: XON \(50000 bytes\) must be at or below XOFF \(40000 bytes\)",
        ),
        (dict(topology__pfc_xoff="70KB"), "topology.pfc_xoff: must be between one full frame"),
        (dict(topology__buffer="8KB"), "topology.buffer: 8000 bytes leave no room for PFC"),
        (dict(topology__buffer="40pkt"), "topology.buffer: PFC needs a byte limit"),
        (
            dict(topology__shared_buffer="1MB", topology__pfc_headroom="1MB"),
            "topology.pfc_headroom: 2 ingresses × 1000000 bytes of headroom leave no pool",
        ),
        (dict(topology__pfc_alpha=0.5), "topology.pfc_alpha: applies to PFC over a shared buffer"),
        (
            dict(topology__red_min="10KB", topology__red_max="30KB"),
            "topology.red_ecn: PFC is lossless",
        ),
    ],
)
def test_bad_pfc_settings_name_the_field(extra: dict[str, object], needle: str) -> None:
    with pytest.raises(incastlab.ScenarioError, match=needle):
        scenario(topology__pfc=True, **extra)


def test_classic_ecn_lets_reno_and_cubic_back_off_before_the_buffer_overflows() -> None:
    """RFC 3168 for the loss-based controls: the 10:1 incast of 100 KB responses into 160 KB
    drops over a hundred packets without ECN; with marking at 30 KB and ECN negotiated, only
    the first synchronized windows overflow, and each flow halves (CUBIC: ×0.7) on echoes."""
    common = dict(
        topology__senders=10,
        topology__buffer="160KB",
        workload__kind="incast",
        workload__flow_size="100KB",
    )
    for cc in ("reno", "cubic"):
        plain = run(tcp__congestion_control=cc, **common)
        ecn = run(
            tcp__congestion_control=cc, tcp__ecn=True, topology__ecn_threshold="30KB", **common
        )
        assert plain.drops > 100 and plain.report["ecn_reductions"] == 0
        assert ecn.drops < plain.drops / 10
        assert ecn.report["ecn_reductions"] >= 10 and ecn.report["bottleneck"]["marks"] > 100
        # Without ECN negotiated, marking does nothing: packets are not ECN-capable.
        unnegotiated = run(tcp__congestion_control=cc, topology__ecn_threshold="30KB", **common)
        assert unnegotiated.report["bottleneck"]["marks"] == 0


def test_ecn_is_negotiated_per_flow_and_non_ecn_flows_fill_the_queue() -> None:
    """One workload flow beside one long flow, marking at 30 KB of a 160 KB port. When both
    negotiate ECN they share the link; when the long flow's host does not, its packets are
    not ECN-capable, so they are queued up to the drop-tail limit while the ECN flow is told
    to back off at 30 KB: it starves."""
    common = dict(
        topology__senders=1,
        topology__buffer="160KB",
        topology__ecn_threshold="30KB",
        workload__sru="10MB",
        workload__blocks=1,
        background__flows=1,
        tcp__ecn=True,
    )
    both = run(**common)
    mixed = run(background__ecn=False, **common)
    assert 0.5 < both.goodput_bps / both.report["background_bps"] < 2
    assert mixed.goodput_bps < 0.1 * mixed.report["background_bps"]
    assert mixed.report["flows"][1]["ecn_reductions"] == 0


def test_ecn_off_with_dctcp_is_an_error() -> None:
    with pytest.raises(incastlab.ScenarioError, match=r"tcp\.ecn: dctcp needs ECN"):
        scenario(tcp__congestion_control="dctcp", topology__ecn_threshold="30KB", tcp__ecn=False)
