"""The analytical model against the seeds' numbers, Monte Carlo, and bad input."""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pytest

from conftest import design_path, model_path
from incastlab import model
from incastlab.model import (
    ModelError,
    burst,
    busy,
    chain,
    drift,
    loop,
    marking,
    overflow,
    port,
    probe,
    rotate,
    rounds,
    serial,
    stagger,
    straggle,
    tail,
)

TABLE_1 = {
    16_000: [1448, 2896, 5792, 5864],
    32_000: [1448, 2896, 5792, 11584, 10280],
    64_000: [1448, 2896, 5792, 11584, 23168, 19112],
    128_000: [1448, 2896, 5792, 11584, 23168, 46336, 36776],
}


@pytest.mark.parametrize("sru", sorted(TABLE_1))
def test_table_1_exactly(sru: int) -> None:
    assert model.slow_start_rounds(sru) == TABLE_1[sru]


@pytest.mark.parametrize("buffer", [64_000, 65_536])
def test_chen_onsets(buffer: int) -> None:
    """Eq. 3 with the article's extra buffering: 13, 7, 4 (and 2 for 128 KB, as the article
    says Eq. 3 predicts) with 64 KB per port; collapse well underway at N = 2 with 4 KB."""
    onsets = [model.collapse_onset(s, buffer) for s in (16_000, 32_000, 64_000, 128_000)]
    assert onsets == [13, 7, 4, 2]
    assert model.collapse_onset(256_000, 4_096) == 2


def test_eq_1_and_eq_2() -> None:
    ideal = model.ideal_goodput([1, 8], 256_000, 1e9, 1e-3)
    assert ideal[0] == pytest.approx(256_000 * 8 / (1e-3 + 256_000 * 8 / 1e9))
    assert ideal[1] > ideal[0]  # grows with N towards the link
    bound = model.rto_goodput(2, 256_000, 1e9, 100e-6, 0.2)
    assert float(bound) == pytest.approx(20.06e6, rel=1e-3)
    partial = model.rto_goodput(8, 1_024_000, 1e9, 1e-3, 0.2, a=0.6)
    assert float(partial) > float(model.rto_goodput(8, 1_024_000, 1e9, 1e-3, 0.2))


def test_prediction_switches_regime_at_the_onset() -> None:
    p = model.predict(range(1, 20), sru=16_000, buffer=64_000, link_bps=1e9, rtt=1e-3, rto=0.2)
    regimes = [x.regime for x in p]
    assert regimes.index("rto") == 12  # N = 13
    assert p[11].goodput_bps > 10 * p[12].goodput_bps
    assert p[12].timeouts_per_block == 1.0


def test_expected_max_rto_matches_monte_carlo_for_every_n_to_256() -> None:
    rng = np.random.default_rng(6)
    rto_min, delta = 0.010, 0.004
    lo, hi = rto_min - delta / 2, rto_min + delta / 2
    for n in range(1, 257):
        draws = rng.uniform(lo, hi, size=(4000, n)).max(axis=1)
        assert float(model.expected_max_rto(n, rto_min, delta)) == pytest.approx(
            draws.mean(), rel=0.01
        ), n


@pytest.mark.parametrize("n", [2, 3, 5, 8, 16, 32, 64, 128, 256])
def test_var_and_tail_of_the_max_rto_match_monte_carlo(n: int) -> None:
    rng = np.random.default_rng(n)
    rto_min, delta = 0.010, 0.004
    draws = rng.uniform(rto_min - delta / 2, rto_min + delta / 2, size=(40_000, n)).max(axis=1)
    assert float(model.var_max_rto(n, rto_min, delta)) == pytest.approx(draws.var(), rel=0.05)
    k = rto_min + delta / 4
    assert float(model.rto_exceeds(k, n, rto_min, delta)) == pytest.approx(
        (draws > k).mean(), abs=0.01
    )


def test_expected_max_rto_tends_to_the_top_of_the_interval() -> None:
    e = model.expected_max_rto([1, 10, 100, 10_000], 0.010, 0.004)
    assert e[0] == pytest.approx(0.010)
    assert np.all(np.diff(e) > 0)
    assert e[-1] == pytest.approx(0.012, rel=1e-3)


def test_tda_and_maa() -> None:
    assert model.tda_interval(0.010, 0.002, 0) == pytest.approx((0.009, 0.011))
    assert model.tda_interval(0.010, 0.002, 3) == pytest.approx((0.002, 0.018))
    assert model.maa_interval(1, 1.0) == 0
    assert model.maa_interval(256, 1.0) == 46


def test_other_closed_forms() -> None:
    assert model.dctcp_marking_threshold(10e9, 100e-6) == pytest.approx(125_000 / 7)
    assert float(model.optimal_completion(8000, 270_000, 10e9)) == pytest.approx(1.728)
    assert float(model.burst_buffer(47, 10, 1538, 1e9, 100e-6)) == pytest.approx(
        47 * 10 * 1538 - 12_500
    )
    assert model.incast_overhead(130, 100) == pytest.approx(0.3)
    assert model.amdahl_overhead(0.5, 900e6, 100e6) == pytest.approx(4.0)


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: model.expected_max_rto(4, 0.010, 0.030), "delta: must be at most 2·rto_min"),
        (lambda: model.ideal_goodput(4, 1000, 0, 1e-3), "link_bps: must be a positive number"),
        (lambda: model.ideal_goodput(0, 1000, 1e9, 1e-3), "senders: must be whole numbers"),
        (lambda: model.collapse_onset(16_000, 0), "buffer: must be a positive"),
        (lambda: model.slow_start_rounds(0), "sru: must be a positive"),
        (lambda: model.amdahl_overhead(1.5, 1, 1), "network_share: must be between 0 and 1"),
    ],
)
def test_impossible_inputs_are_named(call: object, needle: str) -> None:
    with pytest.raises(ModelError, match=needle):
        call()  # type: ignore[operator]


def test_model_cli_table_json_and_plot(tmp_path: object) -> None:
    from pathlib import Path

    from incastlab.cli import main

    png = Path(str(tmp_path)) / "fig.png"
    argv = ["model", "--senders", "1..16", "--sru", "16KB,32KB", "--initial-window", "1"]
    assert main([*argv, "--plot", str(png), "-q"]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_model_table_says_how_far_the_constants_were_validated(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Above the table, what the package's constants reached on fresh random designs (the
    record `incast model calibrate --fresh` stores with them)."""
    from incastlab.cli import main
    from incastlab.model import burst

    fresh = burst.fitted().fit["fresh"]
    assert main(["model", "--senders", "1,8", "--sru", "64KB", "--buffer", "32KB"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert f"validated on {fresh['points']:,} fresh random scenarios" in err
    assert f"on {fresh['within_1_5x_unflagged']:.0%} of the" in err


def test_model_cli_json_reports_onset_and_ignored_fields(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import json

    from incastlab.cli import main

    argv = ["model", "--senders", "1..16", "--sru", "16KB", "--initial-window", "1", "--json"]
    assert main([*argv, "--no-sack", "--uncalibrated"]) == 0
    rows = json.loads(capsys.readouterr().out)
    # Predictions print as records, like every backend's results; the model's own figures
    # are its model_* columns.
    assert [r["model_regime"] for r in rows].index("rto") == 12
    assert all(r["model_onset"] == 13 and r["backend"] == "model" for r in rows)
    assert rows[0]["model_ignored"] == ["tcp.sack"]
    assert {"senders", "goodput_bps", "model_timeouts_per_block", "scenario"} <= set(rows[0])


def test_rto_random_cli(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from incastlab.cli import main

    argv = ["model", "rto-random", "--rto-min", "10ms", "--delta", "4ms", "--senders", "1,256"]
    assert main([*argv, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["expected_max_rto_s"] == pytest.approx(0.010)
    assert rows[1]["expected_max_rto_s"] == pytest.approx(0.010 + 0.004 * 255 / 514)
    assert main(["model", "rto-random", "--rto-min", "1ms", "--delta", "4ms"]) == 2
    assert "delta: must be at most 2·rto_min" in capsys.readouterr().err


def test_calibration_fits_on_one_half_and_scores_the_other(tmp_path: object) -> None:
    from pathlib import Path

    from incastlab.model.calibrate import QUICK_GRID, QUICK_VARIANTS, SEARCH, calibrate

    cache = Path(str(tmp_path))
    c = calibrate(QUICK_GRID, blocks=3, seeds=2, cache=cache)
    s = c.summary()
    assert len(c.points) == 40 * len(QUICK_VARIANTS)
    held, fitted = c.held_out, c.fitted_on
    assert held and fitted and len(held) + len(fitted) == len(c.points)
    assert s["held_out"]["points"] == len(held)
    k = c.constants
    assert k.tail_timeout in SEARCH["tail_timeout"] and k.dispersion in SEARCH["dispersion"]
    assert k.fit["held_out_points"] == len(held)
    assert 0 <= s["held_out"]["median_error"] <= s["held_out"]["p90_error"]
    assert list(c.breakdown("senders")) == QUICK_GRID["senders"]
    # One sender is no incast: the model's transfer time with slow start is close.
    assert c.breakdown("senders")[1]["p90_error"] < 0.15
    # Each point under two seeds, pooled as one run of all their blocks (the harmonic mean
    # of the goodputs: the same bytes in the sum of the times).
    for p in c.points:
        g1, g2 = p.sim_bps_by_seed
        assert p.sim_bps == pytest.approx(2 / (1 / g1 + 1 / g2))
    assert k.fit["seeds"] == 2
    assert 0 <= s["held_out"]["seed_median_error"] <= s["held_out"]["seed_p90_error"]
    # Somewhere in the grid the seed matters (one RTO more or less in a block).
    assert any(p.seed_error and p.seed_error > 0.05 for p in c.points)
    # Every run simulated once, cached: a rerun reads the same numbers from disk.
    assert len(list(cache.glob("*.json"))) == 2 * len(c.points)
    again = calibrate(QUICK_GRID, blocks=3, seeds=2, cache=cache)
    assert [p.sim_bps for p in again.points] == [p.sim_bps for p in c.points]


def test_calibrate_cli(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from incastlab.cli import main

    argv = ["model", "calibrate", "--quick", "--blocks", "2", "--variants", "iw1-restart"]
    argv += ["--seeds", "1"]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"constants", "held_out", "fitted_on", "points", "version"} <= set(out)
    assert len(out["points"]) == 40
    assert main(["model", "calibrate", "--set", "tcp.bogus=1"]) == 2
    assert "unknown key 'tcp.bogus'" in capsys.readouterr().err
    assert main(["model", "calibrate", "--variants", "iw3"]) == 2
    assert "--variants: 'iw3' is not one of" in capsys.readouterr().err


def test_partial_rto_doubles_beyond_a_sender_count() -> None:
    kw = dict(sru=1_024_000, buffer=64_000, link_bps=1e9, rtt=1e-3, rto=0.2, a=0.6)
    once = model.predict([8, 16, 32], **kw)  # type: ignore[arg-type]
    twice = model.predict([8, 16, 32], a_doubles_at=16, **kw)  # type: ignore[arg-type]
    assert once[0] == twice[0]
    assert twice[1].timeouts_per_block == pytest.approx(1.2)
    assert twice[2].goodput_bps < once[2].goodput_bps
    with pytest.raises(ModelError, match="a_doubles_at"):
        model.predict([8], a_doubles_at=0, **kw)  # type: ignore[arg-type]


# ---------------------------------------------------------------- the burst model


def _path(**kw: object) -> burst.Path:
    base: dict[str, object] = dict(
        senders=8,
        sru=64_000,
        buffer=64_000,
        link_bps=1e9,
        rtt=100e-6,
        rto=0.2001,
        initial_window=1,
        restart="block",
        blocks=5,
    )
    path: burst.Path = model_path(**{**base, **kw})
    return path


def test_one_sender_never_overflows_a_port_as_fast_as_its_link() -> None:
    """A lone sender's bursts leave its NIC at the link rate: the port never queues them, so
    its goodput is the transfer with slow start (Chen's Eq. 1 plus the rounds)."""
    c = burst.Constants()
    for sru in (16_000, 1_024_000):
        p = burst.predict(_path(senders=1, sru=sru, buffer=4_000), c)
        assert p.regime == "ideal" and p.timeouts_per_block == 0
        assert p.goodput_bps == pytest.approx(p.ideal_bps)
    # 16 KB (12 segments) from IW 1: four rounds (1, 2, 4, 5 segments), three of them one RTT
    # plus the first segment's two hops, then the last round over both hops, and the base RTT.
    pt = 1538 * 8 / 1e9
    expected = 100e-6 + 3 * (100e-6 + 2 * pt) + 5 * pt + pt
    t = burst.transfer_time(_path(senders=1, sru=16_000), 1, 12, 1)
    assert t == pytest.approx(expected, rel=0.01)


def test_synchronized_first_round_overflows_once_it_outgrows_buffer_plus_one_burst() -> None:
    """N bursts of w packets arriving together at N times the link rate: the port drains one
    burst while they arrive, so they fit while N·w <= buffer + w (+ the requests' stagger)."""
    c = burst.Constants()
    q = 64_000 / 1518
    fits = math.floor((q + 10) / 10)  # senders of IW 10 the first round holds
    persistent = dict(restart="never", initial_window=10, sru=14_480, blocks=1)
    assert burst.predict(_path(senders=fits, **persistent), c).first.loss_round is None
    over = burst.predict(_path(senders=fits + 1, **persistent), c)
    assert over.first.loss_round == 0 and over.timeouts_per_block > 0


def test_tail_losses_time_out_unless_rack_tlp_probes_them() -> None:
    """A response that fits one round loses its tail when the round overflows: nothing comes
    after it to raise duplicate ACKs (classic), while RACK-TLP's probe repairs it after the
    probe timeout instead of the RTO."""
    c = burst.Constants(tail_timeout=0.2)
    kw = dict(senders=16, sru=14_480, initial_window=10, buffer=32_000, blocks=1)
    classic = burst.predict(_path(**kw), c)
    tlp = burst.predict(_path(rack_tlp=True, probe=0.004, **kw), c)
    assert classic.timeouts_per_block > 2 * tlp.timeouts_per_block
    # Where no sender loses its whole window the probe spares the block its RTO (at 16 some
    # do, and their RTO ends the block either way).
    few = dict(kw, senders=6)
    spared = burst.predict(_path(rack_tlp=True, probe=0.004, **few), c)
    assert burst.predict(_path(**few), c).goodput_bps < spared.goodput_bps / 10
    # The overflowing round itself: every classic sender that lost its tail times out; with
    # RACK-TLP they all wait for the probe, and only those whose whole recovery flight the
    # port drops after it wait for the RTO (model/recover.py): each lost 7.9 segments and
    # resends them in flights of 1, 2, 4 (to the cut window of 7); the port keeps 29.2 packets
    # of a round of flights (its 21 frames and a pipe of 8), so the 16 flights of 1 fit, of 2
    # 16 (1 - 29.2/32)^2 = 0.12 senders lose theirs, of 4 15.9 (1 - 29.2/63.5)^4 = 1.35.
    p = _path(probe=0.004, **kw)
    assert overflow.overflow(p, c, 16, 10, True, True, False, -1.0)[:3] == pytest.approx(
        (16.0, 0.0, 0.0)
    )
    p = _path(rack_tlp=True, probe=0.004, **kw)
    timeouts, probes, lone, _ = overflow.overflow(p, c, 16, 10, True, True, False, -1.0)
    assert (probes, lone) == pytest.approx((16.0, 0.0))
    assert timeouts == pytest.approx(1.47, abs=0.01)
    # Whole windows and tails lost: the probes go out together (on the same tick) and the
    # port keeps a buffer's worth (21 whole frames, the one it sends counted); the senders
    # whose probe it drops wait for the RTO.
    p = _path(rack_tlp=True, probe=0.004, **kw)
    timeouts, probes, _, _ = overflow.overflow(p, c, 64, 10, True, True, False, -1.0)
    assert probes == pytest.approx(64)
    assert timeouts == pytest.approx(64 - 21)
    # BBR's probes leave when its pacing lets them, not in step: of the senders that lost a
    # whole window the port keeps as many as random arrivals leave room for.
    bbr = _path(rack_tlp=True, probe=0.004, loss_blind=True, **kw)
    whole = 64 - port.round_capacity(bbr, 64, 10, True)
    q = 32_000 / 1518 + 1
    expect = whole - q * (1 - math.exp(-whole / q))
    assert probe.probe_losses(bbr, whole, 10.0) == pytest.approx(expect)


def test_first_retransmissions_are_one_burst_later_ones_drift() -> None:
    """The port keeps exactly what fits of the first retransmissions, whose timers are in
    step; later ones arrive at random: its queue takes the first of them whatever their
    order, and the rest of its room (what it drains while they arrive) is left partly
    unused."""
    assert serial.served(30.0, 22.0, 8.0, drifted=False) == 22.0
    assert serial.served(10.0, 22.0, 8.0, drifted=False) == 10.0
    assert serial.served(5.0, 22.0, 8.0, drifted=True) == 5.0
    assert serial.served(10.0, 22.0, 8.0, drifted=True) == pytest.approx(
        8 + 14 * (1 - math.exp(-2 / 14))
    )
    # No queue: the occupancy of the whole room by random arrivals.
    assert serial.served(10.0, 22.0, 0.0, drifted=True) == pytest.approx(
        22 * (1 - math.exp(-10 / 22))
    )
    # Served senders whose next round the port (buffer and pipe: 40) drops whole time out
    # again.
    assert serial.served_again(50.0, 40.0) == 10.0 and serial.served_again(30.0, 40.0) == 0


def test_the_simulator_owns_the_timers_the_model_waits() -> None:
    """RTOmin in whole timer ticks, Linux's formula and the probe timeout come from the
    simulator's estimator (``_core.rto_timer``), not from a copy of its rules."""
    from incastlab.backends.model import burst_path
    from incastlab.scenario import apply_overrides, from_dict

    def path(**keys: object) -> burst.Path:
        return burst_path(from_dict(apply_overrides({}, keys)).normalized())

    classic = path(**{"tcp.profile": "classic", "tcp.rto_min": "1ms"})
    assert classic.rto == pytest.approx(1e-3 + 100e-6)  # RTOmin + the RTT
    # Behind the port's queue (the default buffer) the estimator's RTO is longer.
    assert burst.rto_seconds(classic) > classic.rto
    linux = path(**{"tcp.profile": "linux", "tcp.rto_min": "1ms"})
    assert linux.timer_tick == pytest.approx(0.004)
    assert linux.rto == pytest.approx(0.008)  # a jiffy each, rounded up
    assert linux.probe == pytest.approx(0.004)  # 2 RTT + 2 ms in jiffies
    # The probe fires on the next tick, RACK's reorder timer marks the rest a tick later.
    assert burst.probe_seconds(linux) == pytest.approx(0.004 + 2.5 * 0.004)


def test_a_sender_times_out_on_the_rto_its_queued_round_trips_taught_it() -> None:
    """Behind a deep buffer the senders' RTT samples grow with the queue before its drops, and
    the simulator's estimator with them: 10 x 657 KB into 5.5 MB at 440 Mbps (the queue's
    99 ms; classic CUBIC, RTOmin 3.2 ms, windows carried): the blocks with timeouts take
    269-274 ms against 127 ms without."""
    from incastlab.backends.model import burst_path
    from incastlab.scenario import apply_overrides, from_dict

    keys = {"topology.senders": 10, "workload.sru": "657324B", "topology.buffer": "5456801B",
            "topology.link": "440Mbps", "topology.receiver_link": "440Mbps",
            "topology.rtt": "9561ns", "tcp.rto_min": "3164394ns", "tcp.initial_window": 3,
            "tcp.profile": "classic", "tcp.congestion_control": "cubic",
            "tcp.cwnd_restart": "never", "workload.blocks": 12}  # fmt: skip
    p = burst_path(from_dict(apply_overrides({}, keys)).normalized())
    assert p.rto == pytest.approx(3.17e-3, rel=0.01)
    assert 0.099 < burst.rto_seconds(p) < 0.14
    c = burst.fitted()
    queued = burst.predict(p, c)
    unqueued = burst.predict(dataclasses.replace(p, rto_queued=0.0), c)
    # The simulator: 322 Mbps (3 of 12 blocks with timeouts); RTOmin alone: 413.
    assert queued.goodput_bps < 0.95 * unqueued.goodput_bps
    assert 322e6 / 1.25 < queued.goodput_bps < 322e6 * 1.25


def test_stragglers_stretch_the_busy_time_of_senders_taking_turns() -> None:
    """216 x 180 KB into 24 KB at 9.8 Gbps (classic Reno, as in the simulator): senders that
    take turns restart from one segment every 15, and those backing off at the end of the
    link's time hold bytes: the block lasts longer than the backoff tail alone makes it."""
    kw = dict(senders=216, sru=180_148, buffer=24_035, link_bps=9.763e9, rtt=39.56e-6)
    p = _path(rto=278e-6, initial_window=10, restart="never", **kw)
    assert straggle.episode_segments(p) == 15
    alone = tail.backoff_tail(p, 123.0, 214.0, 530.0 / 123.0, 0.63, 47.0)
    stretched = straggle.straggler_tail(p, 123.0, 214.0, 530.0, 0.63, 47.0, 204.0, 0.99)
    assert stretched > alone + 20
    # BBR under RACK-TLP (Linux's profile) holds bytes too where the port cannot hold a
    # segment of each sender (the simulator at 601 x 87 KB into 0.58 packets a sender: blocks
    # of 4.2-8.2 s on 2.7 s of link time), and keeps the tail alone where it can.
    linux = dataclasses.replace(p, loss_blind=True, rack_tlp=True)
    assert straggle.straggler_tail(linux, 123.0, 214.0, 530.0, 0.63, 47.0, 204.0, 0.99) > alone
    roomy = tail.backoff_tail(linux, 123.0, 214.0, 530.0 / 123.0, 0.63, 216.0)
    assert straggle.straggler_tail(linux, 123.0, 214.0, 530.0, 0.63, 216.0, 204.0, 0.99) == roomy


def test_bbr_stragglers_hold_bytes_where_the_port_has_no_segment_for_each() -> None:
    """13 x 814 KB into 3.6 packets (8.6 with the pipe) at 130 Mbps (classic BBR, as in the
    simulator): a served sender sends the rest at once while the others back off, two runs of
    timeouts a sender and block (the simulator 3.0-3.4), and those still backing off at the
    end of the link's time hold bytes; with a segment of room for each sender, the tail alone."""
    kw = dict(senders=13, sru=813_980, buffer=5_452, link_bps=130e6, rtt=477.7e-6)
    p = _path(rto=11.0e-3, initial_window=4, restart="block", loss_blind=True, **kw)
    assert straggle.episode_segments(p) == pytest.approx(p.segments / 2)
    alone = tail.backoff_tail(p, 63.0, 13.0, 15.6 / 63.0, 0.7, 8.6)
    stretched = straggle.straggler_tail(p, 63.0, 13.0, 15.6, 0.7, 8.6, 10.8, 1.0)
    assert stretched > alone + 20
    roomy = straggle.straggler_tail(p, 63.0, 13.0, 15.6, 0.7, 13.0, 10.8, 1.0)
    assert roomy == tail.backoff_tail(p, 63.0, 13.0, 15.6 / 63.0, 0.7, 13.0)


def test_serial_waits_back_off_and_grow_with_senders() -> None:
    """More senders than the port holds retransmissions: the rest back off (2, 4 ... RTOs),
    so the expected waits per block grow faster than the senders do."""
    c = burst.Constants(dispersion=0.0)
    w = [burst.predict(_path(senders=n, buffer=4_000), c).rto_waits_per_block for n in (8, 32)]
    assert w[0] >= 1 and w[1] > 4 * w[0]
    # Timers on a coarse tick stay in step: at least as many waits as with drifting timers.
    drift = burst.predict(_path(senders=32, buffer=4_000), burst.Constants(dispersion=1.0))
    tick = burst.predict(
        _path(senders=32, buffer=4_000, timer_tick=0.004), burst.Constants(dispersion=1.0)
    )
    assert tick.rto_waits_per_block > drift.rto_waits_per_block


def test_retransmissions_spread_over_the_jitter_and_the_rtos_differences() -> None:
    """The port takes its buffer (whole frames, the one it sends counted) plus what it drains
    while a round of retransmissions arrives: spread over the requests' order (7 x 190 B
    requests: 0.86 packets of 1,538 B), the hosts' jitter (1 us: 8.1 packets at 100 Gbps,
    0.08 at 1 Gbps) and the RTOs' differences (dispersion x the buffer) times the RTOs
    waited; in a run's first block the RTOs are all the handshake's."""
    c = burst.Constants(dispersion=0.5)
    fast = _path(buffer=15_180, link_bps=100e9, host_jitter=1e-6)  # 10 frames of 1,518 B
    slow = _path(buffer=15_180, link_bps=1e9, host_jitter=1e-6)
    requests = 7 * 190 / 1538
    assert serial.request_spread(slow) == pytest.approx(requests)
    jitter = 1e-6 / (1538 * 8 / 100e9)
    assert drift.retransmit_capacity(fast, c.dispersion, 0) == pytest.approx(10 + jitter + requests)
    assert drift.retransmit_capacity(slow, c.dispersion, 0) == pytest.approx(
        10.0813 + requests, abs=1e-4
    )
    # After 1 + 2 RTOs the senders' RTOs 0.5 x 10 packets apart have drifted 15 packets.
    later = drift.retransmit_capacity(slow, c.dispersion, 2)
    assert later == pytest.approx(10.0813 + requests + 15, abs=1e-4)
    assert drift.retransmit_capacity(slow, c.dispersion, 2, first=True) == pytest.approx(later - 15)
    # On a coarse tick they fire together: the buffer, and the whole packets the port sends
    # over the hosts' jitter (8.1 packet times), only.
    tick = _path(buffer=15_180, link_bps=100e9, host_jitter=1e-6, timer_tick=0.004)
    assert drift.retransmit_capacity(tick, c.dispersion, 5) == pytest.approx(10 + 8)
    # Frames held whole: 2.9 frames of buffer hold two (and one at least).
    assert serial.held(_path(buffer=4_370)) == 2 and serial.held(_path(buffer=1_000)) == 1


def test_goodput_is_bytes_over_transfer_plus_the_waits() -> None:
    c = burst.fitted()
    p = burst.predict(_path(senders=32, sru=64_000, buffer=32_000), c)
    data = 32 * 64_000 * 8
    assert p.goodput_bps == pytest.approx(data / p.block_time_s)
    assert p.block_time_s == pytest.approx(sum(p.terms.values()), rel=1e-9)
    assert p.terms["delayed ACK"] == p.terms["spurious RTOs"] == 0
    assert p.regime == "collapse" and p.dominant == "RTO waits"
    assert p.rto_s == pytest.approx(0.2 + 100e-6)


def test_restart_from_iw_and_persistent_windows_differ() -> None:
    """Persistent windows grow block after block until a synchronized burst of whole
    responses overflows the port and loses every tail; restarting from IW 1 keeps each
    burst to the largest slow-start round. (The simulator, 8 x 16 KB into 64 KB: 827 Mbps
    without a timeout restarting, 12.6 Mbps with 2.2 timeouts per block persistent.)"""
    c = burst.fitted()
    kw = dict(senders=8, sru=16_000, buffer=64_000, initial_window=1)
    restart = burst.predict(_path(restart="block", **kw), c)
    carried = burst.predict(_path(restart="never", **kw), c)
    assert restart.regime == "ideal"
    assert carried.steady.window > restart.steady.window
    assert carried.regime == "collapse" and 1 < carried.timeouts_per_block < 4


def test_fitted_constants_ship_with_the_package_version() -> None:
    """The constants are fitted on a random design now (tests/test_model_design.py holds
    them to it); the grid calibration still fits and scores (above)."""
    from incastlab import _core

    k = burst.fitted()
    assert k.version == _core.__version__
    assert k.fit["held_out"]["points"] >= 300


def test_model_cli_explains_each_point(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from incastlab.cli import main

    argv = ["model", "--senders", "1,4,32", "--sru", "64KB", "--buffer", "32KB", "--json"]
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["model_regime"] == "ideal"
    assert rows[-1]["model_regime"] == "collapse"
    assert rows[-1]["model_dominant"] == "RTO waits" and rows[0]["model_dominant"] == "transfer"
    assert rows[-1]["model_timeouts_per_block"] > 1
    assert main(argv[:-1]) == 0
    text = capsys.readouterr().out
    # The header "RTOs/block" stands on two lines, its unit under its name.
    assert re.search(r"RTOs/ .*\n.* block ", text) and "dominant" in text and "collapse" in text
    assert main([*argv, "--partial-rto", "0.5"]) == 2
    assert "only with --uncalibrated" in capsys.readouterr().err


def test_model_plot_overlays_the_simulator(tmp_path: object) -> None:
    from pathlib import Path

    from incastlab.cli import main

    png = Path(str(tmp_path)) / "vs.png"
    argv = ["model", "--senders", "1,4", "--sru", "16KB", "--blocks", "2", "-q"]
    assert main([*argv, "--plot", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_spurious_rtos_loop_where_a_queue_outgrows_an_rto_it_never_sampled() -> None:
    """382 x 37 KB into 10 MB at 137 Mbps, RTOmin 0.3 ms (classic, Karn's rule): the
    interleaved burst puts each sender's ACKs 382 packets (22 times the RTO the handshake
    left) apart, the RTOs fire with nothing lost and the go-back-N duplicates keep the queue
    long. The simulator: no drop, 193,612 timeouts, 14.7% of the link (the model 21.5%).
    Timestamps (linux) sample the delay instead: the simulator with them (tcp.sack_rtt),
    82.8% of the link, timeouts in two blocks of four behind the windows the long RTOs kept
    (an idle gap shorter than the RTO restarts none)."""
    from incastlab.backends.model import burst_path
    from incastlab.scenario import apply_overrides, from_dict

    keys = {
        "topology.senders": 382,
        "workload.sru": "37336B",
        "topology.buffer": "10371019B",
        "topology.link": "137Mbps",
        "topology.receiver_link": "137Mbps",
        "topology.rtt": "511685ns",
        "tcp.rto_min": "311180ns",
        "tcp.initial_window": 2,
        "tcp.profile": "classic",
        "tcp.congestion_control": "cubic",
        "tcp.cwnd_restart": "idle",
        "workload.blocks": 4,
    }
    c = burst.fitted()
    p = burst_path(from_dict(apply_overrides({}, keys)).normalized())
    assert p.karn
    b = burst.predict(p, c)
    link = p.link_bps * p.mss / p.wire
    assert b.goodput_bps / link == pytest.approx(0.215, abs=0.005)
    assert b.dominant == "spurious RTOs" and b.regime == "collapse"
    fine = burst.predict(dataclasses.replace(p, karn=False), c)
    assert 0.828 / 1.25 < fine.goodput_bps / link < 0.828 * 1.25
    assert fine.terms["spurious RTOs"] == 0
    # Fewer senders than RTOs' worth of packets: every first ACK beats the timer. Under two
    # RTOs' worth, the half that times out cannot keep one another's ACKs an RTO apart: it
    # loops through the run's first block alone (the simulator at 126 x 56 KB, a gap of 1.56:
    # 1,588 timeouts in the first block, then 393, 74 and 14; model/loop.py).
    per_rto = p.rto_first / (p.wire * 8 / p.link_bps)
    assert burst.spurious_loop(dataclasses.replace(p, senders=int(per_rto)), c) == 0
    under = dataclasses.replace(p, senders=int(1.9 * per_rto))
    over = dataclasses.replace(p, senders=int(2.1 * per_rto))
    link = under.senders * under.segments * under.packet_time
    every_block = loop.loop_link_time(
        under.senders,
        under.segments,
        under.buffer_packets,
        under.packet_time,
        under.rto_first,
        c.loop_segments,
    )
    first_block = burst.spurious_loop(under, c)
    assert first_block - link == pytest.approx((every_block - link) / under.blocks)
    assert 0 < first_block < burst.spurious_loop(over, c)


def test_senders_an_overflow_leaves_untouched_go_on_and_overflow_again() -> None:
    """A round that overflows the port by less than a segment per sender cuts only those that
    lost one: the others lose nothing (none where some lost their whole round), and their
    next round can overflow the port once more."""
    assert rounds.untouched(10, 4, 38) == pytest.approx(8)
    assert rounds.untouched(10, 4, 30) == 0
    assert rounds.untouched(10, 1, 9) == 0
    c = burst.Constants()
    p = _path(senders=354, sru=44_111, initial_window=4, buffer=2_071_035, blocks=1)
    first = overflow.overflow(p, c, 354, 4, True, False, False, -1.0)[0]
    assert burst._burst(p, c, 354, 31, 4.0, True).timeouts > 10 * first


def test_dctcp_holds_a_window_only_once_its_queue_passed_the_threshold() -> None:
    """A block whose rounds never queue past the marking threshold marks nothing: the window
    DCTCP would hold to its share grows as Reno's and is carried whole (68 x 16 KB into
    872 KB marking at 436 KB, IW 1); a lower threshold marks and holds it."""
    kw = dict(senders=68, sru=16_012, buffer=871_930, link_bps=1.361e9, rtt=17.8e-6)
    c = burst.Constants()
    unmarked = _path(marking=435_965, initial_window=1, restart="never", blocks=2, **kw)
    assert burst.predict(unmarked, c).steady.window > 2 * marking.share_cap(unmarked)
    marked = dataclasses.replace(unmarked, marking=100_000)
    assert burst.predict(marked, c).steady.window == pytest.approx(marking.share_cap(marked))


def test_dctcps_first_marks_cut_the_windows_a_round_late() -> None:
    """7 x 693 KB into 372 KB (marking at 186 KB) at 38 Gbps, 1.75 ms, windows carried,
    classic DCTCP: the simulator's windows, cut by the marks, grow a segment a round trip
    under a pipe of 5,450 packets: 25-30 ms a block, no RTO."""
    keys = {
        "topology.senders": 7,
        "workload.sru": "692699B",
        "topology.buffer": "371998B",
        "topology.link": "38346Mbps",
        "topology.rtt": "1747169ns",
        "tcp.rto_min": "3983208ns",
        "tcp.initial_window": 10,
        "tcp.profile": "classic",
        "tcp.congestion_control": "dctcp",
        "tcp.cwnd_restart": "never",
    }
    p = design_path(keys, blocks=4)
    assert p.marking is not None
    b = burst.predict(p, burst.fitted())
    assert b.timeouts_per_block == 0 and b.terms["window sawtooth"] > 0
    # Was 8.2 ms, the windows filling the pipe; 31.6 ms with the mean sender alone, 37 ms
    # waiting for one cut twice (the simulator's senders: 72, then 45, 29, 30, 31 segments).
    assert 20e-3 < b.block_time_s < 1.5 * 30e-3


def test_a_dctcp_block_waits_for_its_slowest_sender(monkeypatch: pytest.MonkeyPatch) -> None:
    """35 x 733 KB into 3.3 MB (marking at 1.6 MB) at 93 Gbps, 1.54 ms, IW 10, linux DCTCP:
    the simulator's senders cut once are done by 9.4 ms, those cut twice (25 of 35) by
    17.4-20.5 ms, and the block waits for them. One sender is about the mean sender."""
    keys = {
        "topology.senders": 35,
        "workload.sru": "733100B",
        "topology.buffer": "3253908B",
        "topology.link": "92990Mbps",
        "topology.rtt": "1544404ns",
        "tcp.rto_min": "369154ns",
        "tcp.initial_window": 10,
        "tcp.profile": "linux",
        "tcp.congestion_control": "dctcp",
        "tcp.cwnd_restart": "block",
    }
    p = design_path(keys, blocks=4)
    b = burst.predict(p, burst.fitted())
    assert b.timeouts_per_block == 0
    assert 13.7e-3 < b.block_time_s < 30e-3  # the simulator 20.5 ms; the mean sender 10.2 ms
    # A lone sender is the mean one; no sender cut twice: the mean sender's 10.2 ms.
    lone = marking.marked_sawtooth(p, 1, 507, 10, 277, 160)[0]
    assert lone < marking.marked_sawtooth(p, 35, 507, 10, 277, 160)[0] / 1.3
    monkeypatch.setattr(marking, "TWICE_CUT", 0.0)
    assert burst.predict(p, burst.fitted()).block_time_s < 11e-3


def test_dctcp_carries_the_window_its_sawtooth_grew_back_to() -> None:
    """2 x 88 KB into 9.7 KB (marking at 4.9 KB) at 9.1 Gbps, 160 us, 118 packets of pipe,
    linux DCTCP, windows carried: the simulator's windows end a block near 9 segments (far
    under their share of the threshold and the pipe, 60), 12 round trips, 1.98 ms a block."""
    keys = {
        "topology.senders": 2,
        "workload.sru": "87901B",
        "topology.buffer": "9736B",
        "topology.link": "9088Mbps",
        "topology.rtt": "159546ns",
        "tcp.rto_min": "5718847ns",
        "tcp.initial_window": 4,
        "tcp.profile": "linux",
        "tcp.congestion_control": "dctcp",
        "tcp.cwnd_restart": "never",
    }
    b = burst.predict(design_path(keys), burst.fitted())
    assert b.steady.window < 12
    assert 1.32e-3 < b.block_time_s < 2.97e-3  # within 1.5x (was 1.18 ms, windows of 15)


def test_dctcp_marked_only_in_its_last_round_carries_its_window_whole() -> None:
    """78 x 59 KB into 2.6 MB (marking at 1.3 MB) at 94 Gbps, 50 us, classic DCTCP, windows
    carried: the first block's marks fall on its last round, which ends the responses; the
    simulator carries windows of 15-44 (27 on average) into the second block, whose first
    round drops 164 segments and waits an RTO (85 ms; 0.49 ms a block otherwise)."""
    keys = {
        "topology.senders": 78,
        "workload.sru": "59201B",
        "topology.buffer": "2618330B",
        "topology.link": "94313Mbps",
        "topology.rtt": "50119ns",
        "tcp.rto_min": "84423037ns",
        "tcp.initial_window": 3,
        "tcp.profile": "classic",
        "tcp.congestion_control": "dctcp",
        "tcp.cwnd_restart": "idle",
    }
    b = burst.predict(design_path(keys, blocks=4), burst.fitted())
    assert b.timeouts_per_block > 1
    # The simulator: 21.6 ms a block over its seeds (the model cutting the windows: 0.47 ms).
    assert 14e-3 < b.block_time_s < 33e-3


def test_a_marking_threshold_of_zero_is_dctcps_least_windows_too() -> None:
    """``topology.ecn_threshold = 0`` marks every packet: the senders that take turns at the
    least windows keep 2 each (DCTCP's), as at a threshold of one byte, not dupthresh + 1."""
    keys = {
        "topology.senders": 200,
        "workload.sru": "64KB",
        "topology.buffer": "64KB",
        "topology.link": "10Gbps",
        "topology.rtt": "20us",
        "tcp.rto_min": "1ms",
        "tcp.initial_window": 4,
        "tcp.profile": "classic",
        "tcp.congestion_control": "dctcp",
        "tcp.cwnd_restart": "block",
    }
    p, c = design_path(keys, blocks=4), burst.fitted()
    zero = burst.predict(dataclasses.replace(p, marking=0), c)
    one = burst.predict(dataclasses.replace(p, marking=1), c)
    assert zero.timeouts_per_block == pytest.approx(one.timeouts_per_block)


def test_staggered_first_bursts_get_through_whole_or_not_at_all() -> None:
    """598 x 8.2 KB into 204 packets at 47 Gbps (IW 2, classic CUBIC, design 32006): the
    requests stagger the senders' bursts, so the port's 281 packets of the first round go to
    the first senders' whole windows. The simulator: 118 senders got both packets, 45 one,
    435 none, about 446 timed out and the block took 3.4 RTOs; the interleaved split (one
    packet each for 281 senders) had 589 time out and a block of 7.4."""
    keys = {
        "topology.senders": 598,
        "workload.sru": "8204B",
        "topology.buffer": "309974B",
        "topology.link": "47066Mbps",
        "topology.rtt": "348289ns",
        "tcp.rto_min": "3049374ns",
        "tcp.initial_window": 2,
        "tcp.profile": "classic",
        "tcp.congestion_control": "cubic",
        "tcp.cwnd_restart": "never",
    }
    p = design_path(keys, blocks=1)
    c = burst.fitted()
    cap = port.round_capacity(p, 598, 2, True)
    full, partial, through = stagger.first_round(p, 598, 2, cap) or (0.0, 0.0, 0.0)
    assert 90 < full < 130 and partial < 100 and full * 2 + through == pytest.approx(cap)
    whole = stagger.split(p, 598, 2, cap, True)[0]
    assert 400 < whole < 450
    # Later rounds interleave: one packet each for as many senders as the port takes.
    assert stagger.split(p, 598, 2, cap, False)[:2] == pytest.approx((598 - cap, cap))
    timed_out = burst._burst(p, c, 598, p.segments, 2.0, True).timeouts
    # Of the 45 with one packet through, limited transmit brings most to fast retransmit
    # (model/limited.py): about 423 time out against the simulator's 446.
    assert 415 < timed_out < 500
    assert burst.predict(p, c).block_time_s / p.rto < 4
    # Bursts that all begin before the port fills interleave as before.
    few = dataclasses.replace(p, senders=20)
    assert stagger.first_round(few, 20, 2, port.round_capacity(few, 20, 2, True)) is None


def test_interleaved_first_bursts_leave_some_senders_none_through() -> None:
    """34 x 54 KB into 74 packets at 69 Gbps (IW 10, classic CUBIC, design 32010): the first
    round's 340 packets interleave and the port takes 83, but not 2.4 from each: 3-5 senders
    a block get none of theirs and time out, blocks of 1.25-1.3 RTOs (434 Mbps). The model
    with 2.4 each: no timeout, 4.1 Gbps."""
    keys = {
        "topology.senders": 34,
        "workload.sru": "54482B",
        "topology.buffer": "112940B",
        "topology.link": "68824Mbps",
        "topology.rtt": "828922ns",
        "tcp.rto_min": "25612445ns",
        "tcp.initial_window": 10,
        "tcp.profile": "classic",
        "tcp.congestion_control": "cubic",
        "tcp.cwnd_restart": "idle",
    }
    p = design_path(keys, blocks=4)
    cap = port.round_capacity(p, 34, 10, True)
    assert stagger.first_round(p, 34, 10, cap) is None  # every burst begins before it fills
    whole = stagger.split(p, 34, 10, cap, True)[0]
    assert 1 < whole < 5
    b = burst.predict(p, burst.fitted())
    assert 0.7 < b.block_time_s / b.rto_s < 1.5
    # Later rounds, and BBR's first, keep their fitted split: one packet each for cap senders.
    assert stagger.split(p, 34, 10, cap, False)[0] == 0.0
    bbr_path = dataclasses.replace(p, loss_blind=True)
    assert stagger.split(bbr_path, 34, 10, cap, True)[0] == 0.0


def test_first_block_re_timeouts_fire_between_the_backed_off_waves() -> None:
    """326 x 8.8 KB into 3.8 packets at 6.7 Gbps (classic DCTCP, design 32004): the senders a
    wave serves but whose next round the port drops time out again on a fresh timer, 1-4
    RTOs after the wave, not in the next one. The simulator's first block: 2,050 RTOs; the
    model with every re-timeout in the next wave: 21,500."""
    keys = {
        "topology.senders": 326,
        "workload.sru": "8850B",
        "topology.buffer": "5713B",
        "topology.link": "6718Mbps",
        "topology.rtt": "11001ns",
        "tcp.rto_min": "869306ns",
        "tcp.initial_window": 2,
        "tcp.profile": "classic",
        "tcp.congestion_control": "dctcp",
        "tcp.cwnd_restart": "idle",
    }
    p = design_path(keys, blocks=1)
    # One in 2^level lands in the next wave in a first block; later blocks' waves spread
    # over their drifted RTOs and take them all.
    assert serial.rejoined(p, 50.0, 10.0, 3, True) == pytest.approx(40.0 / 8)
    assert serial.rejoined(p, 50.0, 10.0, 3, False) == pytest.approx(40.0)
    waits = chain.chain(p, burst.fitted(), 326, p.segments, True, burst.rto_seconds(p))[0]
    assert 512 < waits < 4096
    assert 512 < burst.predict(p, burst.fitted()).block_time_s / p.rto < 4096


def test_senders_served_by_the_overflows_chain_do_not_take_turns_again() -> None:
    """937 x 26 KB into 95 packets at 53 Gbps (linux CUBIC, design 32005): each wave of the
    overflow's chain serves 99 senders, whose responses the link sends within the RTO; the
    simulator's blocks take 268 RTOs and 3.4 RTOs per sender, the model 513 and 7.8 where
    the senders taking turns wait a second chain. Where a wave's responses outlast the RTO
    (229 KB each at 810 Mbps) the served senders do take turns."""
    keys = {
        "topology.senders": 937,
        "workload.sru": "25939B",
        "topology.buffer": "144778B",
        "topology.link": "52577Mbps",
        "topology.rtt": "32292ns",
        "tcp.rto_min": "315898ns",
        "tcp.initial_window": 3,
        "tcp.profile": "linux",
        "tcp.congestion_control": "cubic",
        "tcp.cwnd_restart": "block",
    }
    p = design_path(keys, blocks=1)
    assert rotate.fresh_turns(p, 879.0, 718.0, 16.5, p.rto) == pytest.approx(161.0)
    b = burst.predict(p, burst.fitted())
    assert 128 < b.block_time_s / p.rto < 400
    assert b.timeouts_per_block / p.senders < 5
    slow = design_path({**keys, "workload.sru": "229069B", "topology.link": "810Mbps"}, 1)
    assert rotate.fresh_turns(slow, 879.0, 718.0, 158.0, slow.rto) == 879.0


def test_first_block_waves_into_the_busy_port_back_off_again() -> None:
    """610 x 108 KB into 13 frames at 1.6 Gbps (classic Reno, design 32001): the first wave's
    senders keep the link busy for 11 RTOs, and the waves 2 and 6 RTOs after theirs find the
    port full of their rounds. The simulator's first block: 16-17 timeouts in a row; the model
    10 backoffs without the busy port, 11 with it (12 when it timed the waves a level early)."""
    keys = {
        "topology.senders": 610,
        "workload.sru": "107820B",
        "topology.buffer": "19794B",
        "topology.link": "1597Mbps",
        "topology.rtt": "36642ns",
        "tcp.rto_min": "4629865ns",
        "tcp.initial_window": 2,
        "tcp.profile": "classic",
        "tcp.congestion_control": "reno",
        "tcp.cwnd_restart": "never",
    }
    p = design_path(keys, blocks=1)
    link_rtos = 74 * p.packet_time / burst.rto_seconds(p)
    got, after = busy.busy_wave(p, True, 0, 88.0, link_rtos, busy.IDLE)
    assert got == 88.0 and after[0] == pytest.approx(88 * link_rtos)
    # The wave 2 RTOs after theirs shares the port with the 88 senders' rounds, two each.
    got, same = busy.busy_wave(p, True, 1, 88.0, link_rtos, after)
    assert got == pytest.approx(88 * p.held_packets / 176) and same == after
    # Later blocks' waves spread over drifted RTOs.
    assert busy.busy_wave(p, False, 1, 88.0, link_rtos, after)[0] == 88.0
    assert chain.chain(p, burst.fitted(), 606, 74, True, burst.rto_seconds(p))[0] > 2040


def test_dctcp_senders_done_still_take_the_last_rounds_marks() -> None:
    """5 x 12 KB into 38 KB (marking at 19 KB) at 874 Mbps, 66 us, IW 3, classic DCTCP,
    windows carried: the marks fall on every sender's second and last round; each cuts once
    and starts the next block from 5 segments, not 12: no RTO, 0.69-0.73 ms a block."""
    keys = {
        "topology.senders": 5,
        "workload.sru": "12424B",
        "topology.buffer": "38179B",
        "topology.link": "874Mbps",
        "topology.rtt": "65957ns",
        "tcp.rto_min": "45096761ns",
        "tcp.initial_window": 3,
        "tcp.profile": "classic",
        "tcp.congestion_control": "dctcp",
        "tcp.cwnd_restart": "idle",
    }
    b = burst.predict(design_path(keys, blocks=4), burst.fitted())
    assert b.timeouts_per_block == 0
    assert b.block_time_s < 1.5 * 0.73e-3  # was 12 ms, an RTO in the second block


def test_dctcps_cut_windows_grow_at_the_acks_rate() -> None:
    """3 x 45 KB into 17 KB (marking at 8.3 KB, 5,200 packets of pipe) at 50 Gbps, 1.27 ms,
    IW 4, classic DCTCP: once cut, the windows' rounds come in at the ACKs' rate; the port's
    queue stays under 8 packets, no drop, 7.6-10.2 ms a block."""
    keys = {
        "topology.senders": 3,
        "workload.sru": "45427B",
        "topology.buffer": "16686B",
        "topology.link": "50397Mbps",
        "topology.rtt": "1268519ns",
        "tcp.rto_min": "134807689ns",
        "tcp.initial_window": 4,
        "tcp.profile": "classic",
        "tcp.congestion_control": "dctcp",
        "tcp.cwnd_restart": "block",
    }
    b = burst.predict(design_path(keys, blocks=4), burst.fitted())
    assert b.timeouts_per_block == 0
    assert b.block_time_s < 1.5 * 10.2e-3  # was 101 ms, RTOs every block
