"""The burst model against a random design: the design is reproducible and
stratified, the constants are held to a stored subset of the calibration design, the model
states an interval and names the key that takes a point out of its domain, and the mechanisms
added for the design's clusters (short last segments, the RTO's cap) hold alone."""

from __future__ import annotations

import dataclasses
import json
import math
from collections import Counter

import pytest

from incastlab.model import burst, design, domain, limited, port, recovery, serial


def test_design_is_a_function_of_its_seed_and_fills_every_stratum() -> None:
    a, b = design.design(40, 7), design.design(40, 7)
    assert a == b
    assert a != design.design(40, 8)
    # Latin hypercube: each of the 40 strata of an axis holds one point. Senders are drawn
    # log-uniform on 1..1024: as many points below 32 as above.
    below = sum(p["topology.senders"] < 32 for p in a)
    assert 17 <= below <= 23
    counts = Counter(p["tcp.profile"] for p in a)
    assert counts["classic"] == counts["linux"] == 20
    assert Counter(p["tcp.congestion_control"] for p in a) == {
        "reno": 10,
        "cubic": 10,
        "dctcp": 10,
        "bbr": 10,
    }
    assert design.HELD_OUT_SEED != design.CALIBRATION_SEED


def test_design_points_are_valid_scenarios_with_bounded_cost() -> None:
    pts = design.design(60)
    scs = design.scenarios(pts)
    for p, sc in zip(pts, scs, strict=True):
        s = sc.normalized()
        assert s["topology"]["receiver_link"] == s["topology"]["link"]
        blocks = s["workload"]["blocks"]
        assert 2 <= blocks <= design.BLOCKS
        if blocks > 2:
            assert s["topology"]["senders"] * s["workload"]["sru"] * blocks <= design.MAX_BYTES
        if p["tcp.congestion_control"] == "dctcp":
            assert s["topology"]["ecn_threshold"]["bytes"] == s["topology"]["buffer"]["bytes"] // 2


def test_constants_hold_on_the_stored_subset() -> None:
    """The stored points of the calibration design: the simulator still answers what it
    answered at fit time (else the constants are fitted to another simulator: run `incast
    model calibrate --random 300 --save`), and the model with the package's constants
    answers what it answered then."""
    stored = json.loads(design.SUBSET_FILE.read_text())
    assert len(stored) == design.SUBSET_POINTS
    assert len({s["outside_domain"] == [] for s in stored}) == 2  # flagged and not
    rows, _ = design.measure([s["point"] for s in stored], seeds=len(stored[0]["sim_bps_by_seed"]))
    design.score(rows)
    for r, s in zip(rows, stored, strict=True):
        assert r.by_seed == pytest.approx(s["sim_bps_by_seed"], rel=1e-9), r.point
        assert r.model_bps == pytest.approx(s["model_bps"], rel=1e-9), r.point
        assert [r.low_bps, r.high_bps] == pytest.approx(s["interval_bps"], rel=1e-9)
        assert r.flagged == s["outside_domain"]
    # Several regimes, not only the easy one.
    assert len({r.regime for r in rows}) >= 2


def test_fitted_constants_carry_their_design_and_held_out_scores() -> None:
    from incastlab import _core

    k = burst.fitted()
    assert k.version == _core.__version__
    # Fitted on nine designs pooled: one design's 300 points moved the interval with their
    # draw (fitted on the first alone, the simulator landed inside it on 79.7-89.6% of ten
    # fresh designs' points; on the nine, 82.3-91.7%).
    assert k.fit["seeds"] == design.calibration_seeds(9) and k.fit["points"] >= 9 * 290
    held = k.fit["held_out"]
    assert held["points"] >= 300
    # What the fit reaches on the held-out design, with the learned correction (the targets
    # are 0.10, 0.90, 0.10, 0.80; these hold the model to what it reaches now: the held-out
    # design was read while the mechanisms were chosen, so it flatters them).
    assert held["median_error_unflagged"] <= 0.05
    assert held["within_1_5x_unflagged"] >= 0.92
    # One design's 300 points: 23 flagged since the timer-bound band starts at 25x its ideal
    # time beside the edge of a collapse and the answers resting on a fitted constant (edge.py,
    # reliance.py); the space's share is the fresh pool's, below.
    assert held["flagged"] <= 0.10
    assert held["inside_interval"] >= 0.88
    # And on ten designs drawn after the mechanisms were chosen, none of them read by a choice
    # of the mechanisms, the flags or the correction's trees (which were fitted on seeds
    # 32002-32071): the honest figure. The mechanisms alone read 87.6% within 1.5x there and
    # flagged 10.2%.
    fresh = k.fit["fresh"]
    assert len(fresh["seeds"]) == 10 and fresh["points"] >= 2990
    assert not set(fresh["seeds"]) & {design.HELD_OUT_SEED, *k.fit["seeds"]}
    assert fresh["median_error"] <= 0.05
    assert fresh["within_1_5x_unflagged"] >= 0.90
    assert fresh["flagged"] <= 0.10
    assert fresh["inside_interval"] >= 0.88
    for regime in ("ideal", "timeouts", "collapse", "flagged"):
        lo, hi = k.interval[regime]
        assert 0 < lo < 1 < hi


def _scenario(**keys: object) -> dict[str, object]:
    from incastlab.scenario import apply_overrides, from_dict

    return from_dict(apply_overrides({}, keys)).normalized()


def test_the_domain_names_the_key_that_takes_a_point_out() -> None:
    from incastlab.backends.model import burst_path

    inside = _scenario(**{"topology.senders": 16, "tcp.profile": "classic"})
    assert domain.outside(inside, burst_path(inside)) == []
    for keys, name in (
        ({"topology.senders": 2000}, "topology.senders"),
        ({"topology.buffer": "64MB"}, "topology.buffer"),
        ({"topology.rtt": "10ms"}, "topology.rtt"),
        ({"tcp.rto_min": "1s"}, "tcp.rto_min"),
        (
            {"topology.link": "400Gbps", "topology.receiver_link": "400Gbps"},
            "topology.receiver_link",
        ),
    ):
        s = _scenario(**{"tcp.profile": "classic", **keys})
        flags = domain.outside(s, burst_path(s))
        assert [f.split(":")[0] for f in flags] == [name], keys
        assert "validated on" in flags[0]


def test_linux_timer_bound_points_are_flagged_by_rack_tlp() -> None:
    """Under RACK-TLP a block a few probe waits make 25-300x its ideal time is flagged; the
    same point under the classic profile (no probes) is not. (16 x 64 KB into 8 KB at
    10 Gbps, RTOmin 20 ms: the model's linux block 36x its ideal time, the classic one 68x,
    RTO waits alike but no probe tick to fire on or not.)"""
    from incastlab.backends.model import burst_path

    keys = {"topology.senders": 16, "workload.sru": "64KB", "topology.buffer": "8KB",
            "topology.link": "10Gbps", "topology.receiver_link": "10Gbps",
            "topology.rtt": "50us", "tcp.rto_min": "20ms",
            "tcp.congestion_control": "reno"}  # fmt: skip
    c = burst.fitted()
    for profile, flagged in (("linux", True), ("classic", False)):
        s = _scenario(**keys, **{"tcp.profile": profile})
        path = burst_path(s)
        b = burst.predict(path, c)
        flags = domain.outside(s, path, b)
        assert bool(flags) == flagged, profile
        if flagged:
            assert flags[0].startswith("tcp.rack_tlp:")
            assert domain.interval(b, c, True) == pytest.approx(
                tuple(b.goodput_bps * x for x in c.interval["flagged"])
            )


def test_the_edge_of_a_collapse_is_flagged_naming_its_key() -> None:
    """Where the model's answer moves more than 2x within 5% of the buffer or of the response
    size, it cannot say on which side of its edge the simulator lands. 8 x 64 KB at 1 Gbps,
    100 us, RTOmin 10 ms, classic Reno: the model reads 372 Mbps (a collapse) at 36 KB of
    buffer, 744 at 37 KB and 810 at 38 KB; the simulator (three seeds pooled) 592, 520 and 478,
    and 442 and 536 at 30 and 44 KB, where the model is on no edge."""
    from incastlab.backends.model import predict_scenario
    from incastlab.model import edge

    base = {"topology.senders": 8, "workload.sru": "64KB", "topology.link": "1Gbps",
            "topology.receiver_link": "1Gbps", "topology.rtt": "100us",
            "tcp.rto_min": "10ms", "tcp.profile": "classic",
            "tcp.congestion_control": "reno"}  # fmt: skip

    def flags(**keys: object) -> list[str]:
        from incastlab.scenario import apply_overrides, from_dict

        sc = from_dict(apply_overrides({}, {**base, **keys}))
        return predict_scenario(sc, with_onset=False).outside

    (flag,) = flags(**{"topology.buffer": "37KB"})
    assert flag.startswith("topology.buffer: the model's answer moves ")
    assert float(flag.split("moves ")[1].split("x")[0]) > edge.EDGE_JUMP
    assert flags(**{"topology.buffer": "30KB"}) == flags(**{"topology.buffer": "44KB"}) == []
    # The response size, named as the scenario gives it: per sender, or the block split.
    (flag,) = flags(**{"topology.buffer": "64KB", "workload.sru": "14KB"})
    assert flag.startswith("workload.sru: ") and "of this response size" in flag
    (flag,) = flags(**{"topology.buffer": "64KB", "workload.sru": None, "workload.block": "112KB"})
    assert flag.startswith("workload.block: ")


def test_an_answer_resting_on_a_fitted_constant_is_flagged() -> None:
    """Where one fitted constant, 1.25 times smaller or larger, moves the answer more than 2x,
    the answer rests on that figure. 16 x 400 KB into 6 KB at 200 Mbps, 20 us, RTOmin 3 ms,
    IW 3, classic BBR (windows kept across short idles): its collapse hangs on how many of
    the retransmissions sent while the port is kept full it loses (busy_loss); at 1 Gbps the
    same senders' answer does not."""
    from incastlab.backends.model import predict_scenario
    from incastlab.model import reliance
    from incastlab.scenario import apply_overrides, from_dict

    keys = {"topology.senders": 16, "workload.sru": "400KB", "topology.buffer": "6KB",
            "topology.rtt": "20us", "tcp.rto_min": "3ms", "tcp.initial_window": 3,
            "tcp.profile": "classic", "tcp.congestion_control": "bbr",
            "tcp.cwnd_restart": "idle"}  # fmt: skip

    def flags(link: str) -> list[str]:
        both = {"topology.link": link, "topology.receiver_link": link}
        return predict_scenario(
            from_dict(apply_overrides({}, {**keys, **both})), with_onset=False
        ).outside

    (flag,) = flags("200Mbps")
    assert flag.startswith("model.busy_loss: the model's answer moves ")
    assert float(flag.split("moves ")[1].split("x")[0]) > reliance.RELIANCE_JUMP
    assert "with its fitted busy_loss (" in flag and ") 0.8-1.25 times as large" in flag
    assert flags("1Gbps") == []


def test_a_block_the_delayed_ack_makes_long_is_not_flagged() -> None:
    """The flag counts the probe and RTO waits, whose firing or not moves the simulator; a
    lone first segment's delayed ACK (40 ms at most RTOmin less a tick) is not one of them.
    (The simulator at 1 x 13.9 KB from IW 1 into 8.7 KB at 477 Mbps, 97 us, RTOmin 14.7 ms,
    linux BBR: no RTO, the model within 1.1x.)"""
    from incastlab.backends.model import burst_path

    keys = {"topology.senders": 1, "workload.sru": "13869B", "topology.buffer": "8730B",
            "topology.link": "477Mbps", "topology.receiver_link": "477Mbps",
            "topology.rtt": "96620ns", "tcp.rto_min": "14675424ns", "tcp.initial_window": 1,
            "tcp.profile": "linux", "tcp.congestion_control": "bbr",
            "tcp.cwnd_restart": "block"}  # fmt: skip
    s = _scenario(**keys)
    path = burst_path(s)
    b = burst.predict(path, burst.fitted())
    ideal = path.senders * path.sru * 8 / b.ideal_bps
    assert b.dominant == "delayed ACK" and b.block_time_s > 5 * ideal
    assert domain.outside(s, path, b) == []


def test_model_json_carries_the_interval_and_the_flags(capsys: pytest.CaptureFixture[str]) -> None:
    """Reno at the timer-bound point above, flagged; the JSON carries the mechanisms' answer
    beside the corrected one."""
    from incastlab.cli import main

    argv = ["model", "--senders", "2,16", "--sru", "64KB", "--buffer", "8KB", "--link", "10Gbps",
            "--rtt", "50us", "--rto-min", "20ms", "--cc", "reno", "--json"]  # fmt: skip
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    for row in rows:
        m = row["report"]["model"]
        lo, hi = m["interval_bps"]
        assert lo < row["goodput_bps"] < hi
        assert isinstance(m["outside_domain"], list)
    assert any(r["report"]["model"]["outside_domain"] for r in rows)
    for row in rows:
        m = row["report"]["model"]
        assert row["goodput_bps"] == pytest.approx(m["mechanisms_bps"] * m["correction"])
    assert main(argv[:-1]) == 0
    text = capsys.readouterr()
    assert "sim 10-90%" in text.out
    assert "tcp.rack_tlp" in text.err


def test_random_calibration_refuses_grid_flags(capsys: pytest.CaptureFixture[str]) -> None:
    from incastlab.cli import main

    assert main(["model", "calibrate", "--random", "20", "--quick"]) == 2
    assert "--random" in capsys.readouterr().err


def test_fresh_designs_are_neither_fitted_on_nor_the_held_out_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A fresh design is one no fit and no report has read: the held-out design's seed and a
    calibration design's are refused, naming the flag; the two flags need --random."""
    from incastlab.cli import main
    from incastlab.cli.model import build_calibrate_parser

    assert design.HELD_OUT_SEED not in design.calibration_seeds(20)
    assert design.calibration_seeds(3) == [design.CALIBRATION_SEED + i for i in range(3)]
    for seed in (design.HELD_OUT_SEED, design.CALIBRATION_SEED + 2):
        argv = ["model", "calibrate", "--random", "20", "--designs", "3", "--fresh", str(seed)]
        assert main(argv) == 2
        assert "--fresh" in capsys.readouterr().err
    assert main(["model", "calibrate", "--quick", "--designs", "2"]) == 2
    assert "--random" in capsys.readouterr().err
    # A range of seeds names each; a reversed or huge one is refused.
    parsed = build_calibrate_parser().parse_args(["--random", "20", "--fresh", "7..9"])
    assert parsed.fresh == [7, 8, 9]
    for bad in ("9..7", "1..1000", "x"):
        with pytest.raises(SystemExit):
            build_calibrate_parser().parse_args(["--random", "20", "--fresh", bad])
        assert "--fresh" in capsys.readouterr().err


def test_fit_interval_is_the_ratio_quantiles() -> None:
    lo, hi = domain.quantiles([0.5, 1.0, 1.0, 1.0, 2.0], 0.0, 1.0)
    assert (lo, hi) == pytest.approx((0.5, 2.0))
    lo, hi = domain.quantiles([1.0, 4.0], 0.5, 0.5)
    assert lo == pytest.approx(2.0)  # halfway in log


def test_a_short_last_segment_takes_its_bytes_of_the_buffer() -> None:
    """16 x 8 KB into 128 KB: six segments each, the last of 760 bytes; in frames 16 x 6 =
    96 overflow the 84 the port holds, in bytes (16 x 5.55 frames, less what drains while
    they arrive) they fit. The simulator: 884 Mbps, no timeout."""
    from incastlab.backends.model import burst_path

    s = _scenario(**{"topology.senders": 16, "workload.sru": "8KB", "topology.buffer": "128KB",
                     "topology.rtt": "50us", "tcp.rto_min": "10ms", "tcp.profile": "classic",
                     "tcp.congestion_control": "cubic"})  # fmt: skip
    p = burst_path(s)
    assert burst._short_tail(p) == pytest.approx(1 - (8000 - 5 * 1448 + 70) / 1518)
    b = burst.predict(p, burst.fitted())
    assert b.regime == "ideal" and b.timeouts_per_block == 0
    # One byte more per sender and the round is one frame fuller each: still whole
    # segments, no short tail saved.
    whole = burst_path(_scenario(**{"workload.sru": f"{6 * 1448}B"}))
    assert burst._short_tail(whole) == 0


def test_backoff_stops_at_rto_max() -> None:
    from incastlab.backends.model import burst_path

    p = burst_path(_scenario(**{"tcp.rto_min": "200ms"}))
    assert p.rto_max == pytest.approx(120.0)
    assert [serial.backoff(p, k) for k in (0, 1, 9)] == [1, 2, 512]
    cap = p.rto_max / p.rto
    assert serial.backoff(p, 10) == pytest.approx(cap) and cap < 1024
    assert serial.backoff(p, 300) == pytest.approx(cap)
    big = burst_path(_scenario(**{"topology.senders": 1000, "topology.buffer": "4KB"}))
    assert math.isfinite(burst.predict(big, burst.fitted()).goodput_bps)


def test_a_loss_with_fewer_than_dupthresh_segments_after_it_is_a_lost_tail() -> None:
    """2 x 16 KB (12 segments) from a carried window of 11: the round that overflows leaves
    one segment, one duplicate ACK at most, so its senders wait for the probe (RACK-TLP) or
    the RTO as for a lost tail; with 20 segments (9 after the round) fast retransmit repairs
    most of them. (The simulator, linux: probe stalls of 15 ms in most blocks, 37 Mbps.)"""
    c = burst.Constants(tail_timeout=0.1)
    kw = dict(buffer=16_000, link_bps=1e9, rtt=500e-6, rto=0.016, timer_tick=0.0, mss=1448,
              frame=1518, wire=1538, request_wire=190, initial_window=11, restart="never",
              blocks=1)  # fmt: skip
    short = burst.Path(senders=2, sru=12 * 1448, **kw)  # type: ignore[arg-type]
    longer = burst.Path(senders=2, sru=20 * 1448, **kw)  # type: ignore[arg-type]
    k1, m1, *_ = burst._burst(short, c, 2, 12, 11.0, True)
    k2, m2, *_ = burst._burst(longer, c, 2, 20, 11.0, True)
    assert k1 == k2 == 0
    # Every sender that lost a segment of the round times out (its tail), as many as lost.
    lost = 2 * 11 - port.round_capacity(short, 2, 11, True)
    assert 0 < lost < 2
    assert m1 == pytest.approx(lost)
    assert 0 < m2 < 0.5 * m1


def test_a_partial_loss_times_out_when_too_few_segments_after_it_get_through() -> None:
    """A sender that lost part of its round times out when fewer than dupthresh of the next
    round's segments get through the port after the hole (a Poisson count around its share
    of the port), not a share 3/w of all such senders: with 16 through per sender none do
    (13 x 630 KB into 287 KB at 2.8 Gbps, Reno: 460-570 drops, no RTO), with 2 most. Under
    RACK-TLP one SACKed segment is enough, after the reorder timer (counted in units of the
    probe's wait). tail_timeout only adds the retransmissions lost to a queue that senders
    which do not cut their window (BBR) keep full."""
    kw = dict(sru=400 * 1448, link_bps=10e9, rtt=50e-6, rto=0.01, timer_tick=0.0, mss=1448,
              frame=1518, wire=1538, request_wire=190, initial_window=10, restart="never",
              blocks=1)  # fmt: skip
    deep = burst.Path(senders=4, buffer=40 * 1518, **kw)  # type: ignore[arg-type]
    shallow = burst.Path(senders=4, buffer=4 * 1518, **kw)  # type: ignore[arg-type]
    lo, hi = burst.Constants(tail_timeout=0.1), burst.Constants(tail_timeout=1.0)

    def share(p: burst.Path, c: burst.Constants, delivered: float) -> float:
        return recovery.timeout_share(p, c, 4, delivered, False, True)

    after = port.round_capacity(shallow, 4, 4, False) / 4  # 2 segments each
    # Limited transmit: each SACK releases a new segment, so one through can be enough
    # (model/limited.py), fewer than a Poisson count short of dupthresh.
    assert share(shallow, lo, 2) == pytest.approx(limited.stalled(4, after, 3))
    assert share(shallow, lo, 2) < math.exp(-after) * (1 + after + after**2 / 2)
    assert share(deep, lo, 20) < 1e-4
    for p in (deep, shallow):
        assert share(p, lo, 10) == share(p, hi, 10)
        blind = dataclasses.replace(p, loss_blind=True)
        assert share(p, lo, 10) < share(blind, lo, 10) < share(blind, hi, 10)
    rack = dataclasses.replace(shallow, rack_tlp=True, probe=0.004, timer_tick=0.004)
    assert math.exp(-after) < share(rack, lo, 2) < math.exp(-after) * (1 + after + after**2 / 2)


def test_bbr_overflows_the_port_every_round_until_its_responses_are_through() -> None:
    """BBR keeps its rate and window through a loss: the senders that overflowed the port
    overflow it every round after, each with the same chance of a timeout. The simulator at
    13 x 630 KB into 287 KB at 2.8 Gbps, RTOmin 104 ms (classic): BBR 552-561 Mbps with
    10-12 RTOs and 7,800-9,300 drops a run, an RTO in every block; Reno 2.6 Gbps, none.
    Under RACK-TLP (Linux's profile) lost retransmissions are found by time, but for a whole
    round lost in recovery, where no probe is armed (bbr.unprobed_recovery), which recurs
    over the rounds the responses take (bbr_rack.recovery_timeouts): fewer. The simulator there:
    438-489 Mbps, 16-21 RTOs a run (3-5 a block); the model 2.8 a block."""
    from incastlab.backends.model import burst_path
    from incastlab.model.window import repeated_timeouts

    assert repeated_timeouts(13, 0.0, 400, 10) == 0
    assert repeated_timeouts(13, 1.0, 0, 10) == pytest.approx(1.0)
    assert repeated_timeouts(13, 1.0, 10, 10) == pytest.approx(13 * (1 - (12 / 13) ** 2))
    keys = {"topology.senders": 13, "workload.sru": "630221B", "topology.buffer": "287494B",
            "topology.link": "2771Mbps", "topology.receiver_link": "2771Mbps",
            "topology.rtt": "80894ns", "tcp.rto_min": "104113576ns", "tcp.initial_window": 10,
            "tcp.cwnd_restart": "idle", "workload.blocks": 4}  # fmt: skip
    c = burst.fitted()

    def goodput(profile: str, cc: str) -> float:
        s = _scenario(**keys, **{"tcp.profile": profile, "tcp.congestion_control": cc})
        return burst.predict(burst_path(s), c).goodput_bps

    assert 552e6 / 1.5 < goodput("classic", "bbr") < 561e6 * 1.5
    assert goodput("classic", "reno") > 2e9
    s = _scenario(**keys, **{"tcp.profile": "linux", "tcp.congestion_control": "bbr"})
    p = burst_path(s)
    assert p.loss_blind
    blind = burst.predict(p, c).timeouts_per_block
    classic_bbr = {"tcp.profile": "classic", "tcp.congestion_control": "bbr"}
    classic = burst.predict(burst_path(_scenario(**keys, **classic_bbr)), c)
    assert burst.predict(dataclasses.replace(p, loss_blind=False), c).timeouts_per_block <= blind
    assert 16 / 4 / 1.5 < blind < classic.timeouts_per_block
    assert 438e6 / 1.5 < burst.predict(p, c).goodput_bps < 489e6 * 1.5


def test_windows_cut_below_the_pipe_leave_the_link_idle_until_they_grow_back() -> None:
    """After the loss the rest of the block goes in congestion avoidance: where the buffer is
    far short of the pipe, the cut windows fill less than the link and grow a segment per
    round trip (CUBIC: its Reno-friendly 0.53, the cubic curve's seconds being thousands of
    round trips here) until they overflow it again. The simulator at 8 x 908 KB into 27 KB
    at 80 Gbps, 174 us (18 packets of buffer, 1,120 of pipe), linux CUBIC: 3.0-3.9 Gbps, no
    RTO; the model said 8.9 Gbps with a full link after the loss."""
    from incastlab.backends.model import burst_path
    from incastlab.model.window import avoidance, round_trips

    grow = avoidance(2, 1.0, 0.5, 10)
    assert [grow(4), grow(5), grow(6)] == [5, 6, 3]
    # Two senders, 6 segments each from a window of 2, RTT 10 (packet time 1): rounds of 2,
    # 3 and the last segment.
    assert round_trips(2, 6, 2, 10, 1, grow) == (10 + 2) * 2 + 2 * 1 + 1
    keys = {"topology.senders": 8, "workload.sru": "908030B", "topology.buffer": "26719B",
            "topology.link": "79654Mbps", "topology.receiver_link": "79654Mbps",
            "topology.rtt": "173588ns", "tcp.rto_min": "993270ns", "tcp.initial_window": 4,
            "tcp.profile": "linux", "tcp.congestion_control": "cubic",
            "tcp.cwnd_restart": "block", "workload.blocks": 4}  # fmt: skip
    c = burst.fitted()
    p = burst_path(_scenario(**keys))
    assert p.growth == pytest.approx(0.53, abs=0.005)
    b = burst.predict(p, c)
    assert b.dominant == "window sawtooth"
    assert 3.02e9 / 1.5 < b.goodput_bps < 3.90e9 * 1.5
    assert burst.predict(dataclasses.replace(p, growth=1.0), c).goodput_bps > b.goodput_bps
    # A buffer as deep as the pipe: the cut windows still fill the link.
    deep = burst.predict(burst_path(_scenario(**{**keys, "topology.buffer": "4MB"})), c)
    assert deep.terms["window sawtooth"] == 0


def test_linux_delays_the_ack_of_a_lone_segment_after_the_first_block() -> None:
    """Linux's receiver in a synchronized read answers every block with a request, so it is
    in ping-pong mode: the lone first segment of a block restarting from IW 1 waits for the
    delayed-ACK timer, 40 ms at most RTOmin less a tick (armed on a tick). The connection's
    first block is in quick-ACK mode. (The simulator, 2 x 9.5 KB at RTOmin 24 ms: 21 ms
    blocks where 0.2 ms would do.)"""
    from incastlab.backends.model import burst_path

    keys = {"topology.senders": 2, "workload.sru": "9513B", "topology.buffer": "1MB",
            "tcp.initial_window": 1, "tcp.cwnd_restart": "block",
            "tcp.rto_min": "24ms"}  # fmt: skip
    p = burst_path(_scenario(**keys, **{"tcp.profile": "linux"}))
    assert p.delack_max == pytest.approx(0.024 - 0.004)
    b = burst.predict(p, burst.fitted())
    assert b.first.delack_s == 0
    assert b.steady.delack_s == pytest.approx(0.020 + 0.002)
    # RTOmin 200 ms: the 40 ms timer itself.
    slow = burst_path(_scenario(**{**keys, "tcp.profile": "linux", "tcp.rto_min": "200ms"}))
    assert burst.predict(slow, burst.fitted()).steady.delack_s == pytest.approx(0.042)
    # Classic: no delayed ACKs at all.
    classic = burst_path(_scenario(**keys, **{"tcp.profile": "classic"}))
    assert burst.predict(classic, burst.fitted()).steady.delack_s == 0


def test_a_regime_with_too_few_calibration_points_takes_the_overall_interval() -> None:
    """Twelve calibration points: every regime has fewer than MIN_GROUP, so none gets its own
    interval (one point would make a zero-width one) and all take the overall one."""
    from incastlab.backends.model import burst_path
    from incastlab.model.fit import MIN_GROUP, fit_design

    rows, _ = design.measure([s["point"] for s in json.loads(design.SUBSET_FILE.read_text())])
    assert MIN_GROUP <= len(rows) < 2 * MIN_GROUP
    c = fit_design(rows)
    assert list(c.interval) == ["all"]
    lo, hi = c.interval["all"]
    assert lo < hi
    b = burst.predict(burst_path(rows[0].scenario), c)
    assert domain.interval(b, c) == pytest.approx((b.goodput_bps * lo, b.goodput_bps * hi))


def test_senders_that_timed_out_send_the_rest_in_slow_start_from_one() -> None:
    """After the RTO a sender sends the rest of its response from a window of one, doubling a
    round trip up to half the window the timer fired on: rounds short of the link. The
    simulator at 4 x 124 KB into 153 packets at 39 Gbps, 181 us (classic Reno, windows
    carried): the block whose windows of 96 overflow the port, all four time out and it takes
    1.86 ms, the RTO 0.45 ms; the run 4.0 Gbps (the model 6.8 with the rest at the link's
    rate after the RTO)."""
    from incastlab.backends.model import burst_path
    from incastlab.model.window import restart_time

    p = burst.Path(senders=2, sru=20 * 1448, buffer=40 * 1518, link_bps=1e9, rtt=1e-3,
                   rto=5e-3, timer_tick=0.0, mss=1448, frame=1518, wire=1538,
                   request_wire=190, initial_window=2, restart="block", blocks=2)  # fmt: skip
    # 10 segments from a window of 1, ssthresh 4: rounds of 1, 2, 4 and 3 (the last one's
    # segments cross the link, 2 x 3 packet times, and one more).
    assert restart_time(p, 2, 10, 4, 1e9) == pytest.approx(
        3 * (1e-3 + 2 * p.packet_time) + 7 * p.packet_time
    )
    keys = {"topology.senders": 4, "workload.sru": "123850B", "topology.buffer": "232319B",
            "topology.link": "38838Mbps", "topology.receiver_link": "38838Mbps",
            "topology.rtt": "181076ns", "tcp.rto_min": "233304ns", "tcp.initial_window": 10,
            "tcp.profile": "classic", "tcp.congestion_control": "reno",
            "tcp.cwnd_restart": "idle", "workload.blocks": 4}  # fmt: skip
    b = burst.predict(burst_path(_scenario(**keys)), burst.fitted())
    assert b.timeouts_per_block == pytest.approx(1.0)
    assert 4.0e9 / 1.5 < b.goodput_bps < 4.0e9 * 1.5
