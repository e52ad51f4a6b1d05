"""incast doctor reads the senders' timer tick from when their timeouts' resends reach an idle
port: a kernel fires its timers on its tick, so they share one phase modulo it; and runs the
replica on that tick."""

from __future__ import annotations

from pathlib import Path

import pytest

from incastlab.backends.sim import simulate
from incastlab.doctor.evidence import read_capture
from incastlab.doctor.infer import Estimate
from incastlab.doctor.replica import scenario_dict
from incastlab.doctor.timer import phase_agreement, read_tick

MS = 10**9


def test_phases_on_one_tick_agree_and_spread_ones_do_not() -> None:
    on_4ms = [216_281_000 + 4_000_000 * k for k in (0, 55, 106, 163)]
    assert phase_agreement(on_4ms, 4 * MS) > 0.99
    assert phase_agreement(on_4ms, 1 * MS) > 0.99  # 1 ms divides 4 ms
    assert phase_agreement(on_4ms, 10 * MS) < 0.9
    e = read_tick(on_4ms)
    assert (e.value, e.confidence) == (4 * MS, "medium")
    assert read_tick(on_4ms[:2]).value is None, "two bursts are too few"
    # A burst of timeouts fired on one tick counts once.
    assert read_tick([216_000_000, 216_100_000, 216_300_000]).value is None


@pytest.mark.parametrize("tick", ["4ms", "10ms"])
def test_a_capture_shows_the_senders_tick(tmp_path: Path, tick: str) -> None:
    # A shorter tick than 4 ms is not told here: the simulator's synchronized blocks repeat
    # in whole multiples of 8 ms, so a 1 ms tick's timeouts agree modulo 4 ms as well.
    path = tmp_path / f"{tick}.pcap"
    simulate(
        {
            "seed": 7,
            "topology": {"senders": 16, "link": "100Mbps", "buffer": "32KB", "rtt": "100us"},
            "tcp": {"profile": "linux", "rto_min": "200ms", "timer_granularity": tick},
            # Servers answering up to 3 ms late keep the blocks from repeating one period,
            # whose own multiple of a tick would pass for one.
            "workload": {"kind": "sync_read", "sru": "64KB", "blocks": 8, "jitter": "3ms"},
        },
        pcap=path,
    )
    e = read_tick(read_capture(str(path)).report["timer_fires_ns"])
    assert e.value == int(tick.removesuffix("ms")) * MS, e
    est = {
        "senders": Estimate("senders", 16, 16, 16, "exact", ""),
        "workload": Estimate("workload", "sync_read", None, None, "high", ""),
        "response": Estimate("response", 64_000, 64_000, 64_000, "high", ""),
        "rounds": Estimate("rounds", 8, 8, 8, "exact", ""),
        "link": Estimate("link", 10**8, 10**8, 10**8, "high", ""),
        "rtt": Estimate("rtt", 100_000_000, None, None, "medium", ""),
        "timer_tick": e,
    }
    sc = scenario_dict(est, 32_000, 200 * MS, "linux")
    assert sc["tcp"]["timer_granularity"] == tick


def test_the_capture_s_tick_sets_which_rto_mins_are_one() -> None:
    from incastlab.doctor.timer import one_per_tick

    candidates = [1 * MS, 4 * MS, 5 * MS, 10 * MS, 20 * MS]
    assert one_per_tick(candidates, "linux") == [1 * MS, 5 * MS, 10 * MS, 20 * MS]
    # At HZ = 100 1, 4, 5 and 10 ms are all one 10 ms tick.
    assert one_per_tick(candidates, "linux", 10 * MS) == [1 * MS, 20 * MS]
