"""What RTOmin a capture can show, given Linux's timer: RTOmin is kept in whole ticks, and
below the timeout the RTT sets in an incast (srtt + 4 x rttvar behind a full port) RTOmin no
longer decides when a flow times out. The estimate the fit's candidates give, with the range
the noise between random seeds and that floor leave.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from typing import Protocol

from incastlab.doctor.infer import COMMON_RTO_MIN_PS, Estimate


@functools.cache
def linux_tick_ps() -> int:
    """The linux profile's timer tick, picoseconds, as the simulator has it (a jiffy at
    HZ = 250, the ``tcp.timer_granularity`` the profile sets): RTOmin is kept in whole ticks
    (1 ms is 4 ms) and a timer fires a tick late."""
    from incastlab import _core

    return int(_core.rto_timer(json.dumps({"tcp": {"profile": "linux"}}))["tick"])


def shown_tick(est: dict[str, Estimate]) -> int | None:
    """The timer tick the capture showed (:func:`read_tick`), picoseconds; None: not shown,
    so the profile's."""
    e = est.get("timer_tick")
    return int(e.value) if e is not None and e.value else None


def rtt_driven_timeout(
    profile: str, buffer_bytes: int, link_bps: int, tick_ps: int | None = None
) -> int:
    """The timeout Linux sets with no RTOmin at all in an incast behind a full ``buffer_bytes``
    port, picoseconds: srtt + 4 x rttvar (``tcp_set_rto``) in whole ticks and a tick late,
    i.e. two ticks plus four queueing delays of the full buffer (rttvar's reach in an
    incast). 0 for ``classic`` (RTOmin bounds srtt + 4 x rttvar there, on a fine clock)."""
    if profile != "linux":
        return 0
    queue_ps = buffer_bytes * 8 * 10**12 // max(1, link_bps)
    return 2 * (tick_ps or linux_tick_ps()) + 4 * queue_ps


def rtt_driven_floor(
    profile: str, buffer_bytes: int, link_bps: int, tick_ps: int | None = None
) -> int:
    """The RTOmin below which, with ``profile``'s timer, RTOmin no longer sets the timeout
    and a capture cannot tell RTOmins apart (:func:`rtt_driven_timeout`): the smallest common
    RTOmin at or above that; 0 for ``classic``."""
    floor = rtt_driven_timeout(profile, buffer_bytes, link_bps, tick_ps)
    if floor == 0:
        return 0
    return next((c for c in COMMON_RTO_MIN_PS if c >= floor), COMMON_RTO_MIN_PS[-1])


#: Resends of timeouts closer than this are one burst (one tick's timers, queued), ns.
BURST_NS = 1_000_000
#: The timer ticks kernels run at (HZ = 1000, 300, 250, 100), picoseconds.
KERNEL_TICKS_PS = (1_000_000_000, 3_333_333_333, 4_000_000_000, 10_000_000_000)
#: How closely the timeouts' phases modulo a tick must agree (their mean resultant length,
#: 1 for one phase, about 1/sqrt(n) for n at random) to read as fired on it.
TICK_AGREEMENT = 0.9
#: Fewest timeouts to read a tick from: with three at a 4 ms tick, the chance that they also
#: agree modulo 10 ms is one in 25.
MIN_TICK_FIRES = 3


def phase_agreement(times_ns: Sequence[int], tick_ps: int) -> float:
    """The mean resultant length of ``times_ns`` as phases modulo ``tick_ps``."""
    angles = [2 * math.pi * (t * 1000 % tick_ps) / tick_ps for t in times_ns]
    c = sum(math.cos(a) for a in angles)
    s = sum(math.sin(a) for a in angles)
    return math.hypot(c, s) / max(1, len(angles))


def read_tick(times_ns: Sequence[int]) -> Estimate:
    """The senders' timer tick from when their timeouts' resends arrived (``incast pcap``'s
    ``timer_fires_ns``): a kernel fires its timers on its tick, so they share one phase
    modulo it (and modulo every tick that divides it): the longest kernel tick they agree
    on. Timeouts that fire on one tick queue behind one another at the port, so only the
    first of each burst (resends less than :data:`BURST_NS` apart) keeps the phase. Not
    shown with too few bursts, or where no tick holds them (fine-grained timers)."""
    ordered = sorted(times_ns)
    heads = [t for i, t in enumerate(ordered) if i == 0 or t - ordered[i - 1] >= BURST_NS]
    n = len(heads)
    if n < MIN_TICK_FIRES:
        return _no_tick(f"{n} bursts of timeouts: too few to read a tick")
    agree = {t: phase_agreement(heads, t) for t in KERNEL_TICKS_PS}
    on = [t for t, r in agree.items() if r >= TICK_AGREEMENT]
    shown = ", ".join(f"{t / 1e9:.3g} ms {r:.2f}" for t, r in agree.items())
    if not on:
        return _no_tick(
            f"{n} bursts of timeouts agree on no kernel tick ({shown}): timers finer than a tick"
        )
    tick = max(on)
    return Estimate(
        "timer_tick",
        tick,
        tick,
        tick,
        "high" if n >= 6 else "medium",
        f"{n} bursts of timeouts' resends arrived in one phase modulo {tick / 1e9:.3g} ms "
        f"(agreement modulo each kernel tick: {shown})",
    )


def _no_tick(why: str) -> Estimate:
    return Estimate("timer_tick", None, None, None, "not shown", why)


#: An RTOmin within this factor of the RTT-driven timeout is not told from it: the timeout
#: is estimated from the fitted buffer (rttvar's reach is a rule of thumb), and on real
#: Linux a 1 ms RTOmin at 100 Mbps fitted best at 50 ms against an estimate of 32 ms.
NEAR_TIMEOUT = 2


class Scored(Protocol):
    """A candidate RTOmin and how close its replica came to the capture."""

    @property
    def rto_min_ps(self) -> int: ...

    @property
    def distance(self) -> float: ...


def one_per_tick(candidates: Sequence[int], profile: str, tick_ps: int | None = None) -> list[int]:
    """Linux keeps RTOmin in whole jiffies: 1, 2 and 4 ms are all one 4 ms tick, so the
    smallest of each tick stands for the rest (the estimate then says "at most"). The tick
    is the capture's where it showed one (``tick_ps``), else the profile's."""
    if profile != "linux":
        return list(candidates)
    tick = tick_ps or linux_tick_ps()
    ticks = [-(-c // tick) for c in candidates]
    return [c for i, c in enumerate(candidates) if ticks[i] not in ticks[:i]]


def rto_estimate(
    fits: Sequence[Scored],
    noise: dict[int, float],
    floor_ps: int,
    lowest_ps: int,
    timeout_ps: int = 0,
) -> Estimate:
    """RTOmin from the candidates' ``fits`` (sorted, best first): the range of those whose
    replicas come within seed ``noise`` of the best (a fixed margin with one seed). Where
    the best is at or under the RTT-driven ``floor_ps`` (:func:`rtt_driven_floor`) or
    within :data:`NEAR_TIMEOUT` of the RTT-driven timeout ``timeout_ps``
    (:func:`rtt_driven_timeout`), where a candidate under the floor fits within noise
    (every RTOmin below the floor times out alike), and where the lowest candidate tried
    (``lowest_ps``) fits as well as the best, nothing below is excluded: then RTOmin is
    bounded from above only."""
    best = fits[0]
    tol = max(2 * noise.get(best.rto_min_ps, 0.0), 0.25 * best.distance, 0.05)
    near = sorted(
        f.rto_min_ps
        for f in fits
        if f.distance <= best.distance + tol + 2 * noise.get(f.rto_min_ps, 0.0)
    )
    under = best.rto_min_ps <= max(floor_ps, NEAR_TIMEOUT * timeout_ps)
    lo = 0 if under or near[0] == lowest_ps or near[0] <= floor_ps else near[0]
    hi = max(near[-1], floor_ps) if under else near[-1]
    bounded = lo != hi
    runner = fits[1] if len(fits) > 1 else None
    if under:
        why = (
            "the best fit lies under the floor of this profile's RTT-driven timeout "
            f"({floor_ps / 1e9:g} ms) or within {NEAR_TIMEOUT}x of the timeout itself (srtt + "
            f"4 x rttvar in 4 ms ticks, about {timeout_ps / 1e9:.3g} ms here), where RTOmin "
            "competes with it: not identified"
        )
    else:
        why = f"{len(near)} of {len(fits)} RTOmin values tried fit within seed noise of the best"
    head = ""
    if bounded:
        head = "at most " if lo == 0 else f"{lo / 1e9:g}.."
        head = f"bounded: {head}{hi / 1e9:g} ms ({why}); "
    conf = "bound" if bounded else ("high" if runner is None or len(near) == 1 else "medium")
    return Estimate(
        "rto_min",
        best.rto_min_ps,
        lo,
        hi,
        conf,
        head + "fitted by simulation: completion times, goodput, timeouts and pauses before "
        f"resends closest to the capture's among {len(fits)} RTOmin values (distance "
        f"{best.distance:.2f}, seed noise {noise.get(best.rto_min_ps, 0.0):.2f}"
        + (f"; next {runner.rto_min_ps / 1e9:g} ms at {runner.distance:.2f})" if runner else ")"),
    )
