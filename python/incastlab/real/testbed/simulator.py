"""The testbed as the simulator should be told it: what a simulation of a scenario needs beside
the scenario to stand for a run on this testbed (its measured round trip and timing noise,
tbf's framing, the block protocol's messages, the veths' NICs and ports, the kernel's timer
tick), owned here beside the testbed so that every study tells the simulator the same.

The TCP a profile stands for is the engine's (``tcp.profile``, its bundle of defaults); this
module only says how a profile takes this kernel's tick (:func:`profile`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from incastlab.real.testbed.build import GSO_MAX_SEGS, TBF_BURST

if TYPE_CHECKING:
    from incastlab.result import Result

#: The testbed kernel's timer tick (HZ = 250), which the simulator is always given.
KERNEL_CLOCK = "4ms"
#: The testbed's framing, given to the simulator like its RTT: tbf charges a packet its
#: length as the veth sends it, a 1514-byte frame for 1448 bytes of payload (Ethernet 14,
#: IP 20, TCP with timestamps 32; no FCS, preamble or inter-frame gap).
FRAMING = {"tcp.header_bytes": "66B", "tcp.phy_overhead": "0B"}


def nic() -> dict[str, Any]:
    """The testbed's NICs as the simulator takes them: one segment per GSO packet (the
    testbed's :data:`GSO_MAX_SEGS`) means no TSO bursts, whatever the profile's default; and
    each NIC is a veth shaped by tbf (:data:`TBF_BURST`), not a wire: after an idle spell two
    frames leave at once where a wire spaces them a frame time apart. The pair decides which
    packet gets the slot the bottleneck port just freed: with wires, at 16 senders the
    simulator lost fast retransmissions more often than new data (17% vs 14%) and took twice
    the kernel's RTOs, where the kernel lost them less often (11%)."""
    return {"tcp.tso": GSO_MAX_SEGS > 1, "topology.nic_burst": f"{TBF_BURST}B"}


def port() -> dict[str, Any]:
    """The testbed's switch port as the simulator takes it: the port towards the receiver is
    a veth shaped by tbf with the NICs' two-frame bucket (:data:`TBF_BURST`), not a wire, so
    two frames can reach the receiver back to back, and a delivery-rate sample over such a
    pair (BBR's) reads far above the link. ``topology.port_burst`` shapes every port towards
    a host; the testbed's others are plain veths that carry only requests and ACKs. Like the
    validation's stall replay, it was kept for its effect on the validation grid's own points
    (an earlier trial, before the stall replay and the timer wheel, moved the grid away)."""
    return {"topology.port_burst": f"{TBF_BURST}B"}


def protocol() -> dict[str, str]:
    """The testbed's application protocol, given to the simulator like its framing: requests
    and response headers of the block protocol's header size. The header decides which
    segment ends a response and so whether a lost last segment leaves one packet or two
    outstanding: a probe after 2·SRTT, or one at the RTO's time."""
    from incastlab import _core

    size = f"{_core.PROTOCOL_HEADER_BYTES}B"
    return {"workload.request_size": size, "workload.response_header": size}


def simulator_overrides(rtt_s: float, jitter_s: float) -> dict[str, Any]:
    """What the simulator is told about this testbed for a run whose idle RTT was ``rtt_s``:
    that RTT, the veths' timing noise (``jitter_s``, as far as the RTT allows; see
    :func:`jitter_from_probes`), tbf's framing, the block protocol's messages, and the NICs
    and ports as tbf shapes them."""
    rtt_us = max(1, round(rtt_s * 1e6))
    return {
        "topology.rtt": f"{rtt_us}us",
        **protocol(),
        **nic(),
        **port(),
        "topology.link_jitter": f"{math.floor(point_jitter_s(jitter_s, rtt_us * 1e-6) * 1e9)}ns",
        **FRAMING,
    }


def point_jitter_s(jitter_s: float, rtt_s: float) -> float:
    """``jitter_s`` as a point with ``rtt_s`` can take it: at most twice the star's
    per-link delay (RTT / 4), so no crossing's delay is negative."""
    return min(jitter_s, rtt_s / 2)


def profile(name: str, tick: str = KERNEL_CLOCK) -> dict[str, Any]:
    """The simulator's TCP profile ``name`` on a kernel ticking every ``tick``, as scenario
    overrides: ``tcp.profile = <name>`` (the engine's bundle, read, not restated), with the
    bundle's timers on the tick. A bundle whose timers have a clock of their own (it sets
    ``tcp.timer_granularity``: Linux 5.x/6.x, RTTs in µs and timers on jiffies) gets the
    tick for them; one with a single clock for RTTs and timers (the incast papers' kernels
    measured RTTs on the jiffy clock too) gets it for that clock. A name the engine does not
    know stays ``tcp.profile = <name>``, for the simulator to refuse."""
    from incastlab.scenario import ScenarioError, from_dict

    try:
        bundle = from_dict({"tcp": {"profile": name}}).normalized()["tcp"]
    except ScenarioError:
        return {"tcp.profile": name}
    own_timers = bundle["timer_granularity"] is not None
    return {"tcp.profile": name, f"tcp.{'timer' if own_timers else 'clock'}_granularity": tick}


def check_kernel_clock(kernel: dict[str, Any]) -> None:
    """Raise ValueError if runs recorded on a kernel (``report.emulated.kernel``) ticked at
    another HZ than :data:`KERNEL_CLOCK`, the tick the profiles give the simulator (its
    RTOmin rounding and timers depend on it)."""
    from incastlab.units import PS_PER_S, parse_time

    hz = kernel.get("hz")
    if hz and parse_time(KERNEL_CLOCK) * int(hz) != PS_PER_S:
        raise ValueError(
            f"the kernel runs ticked at HZ = {hz}, but the simulator is given {KERNEL_CLOCK} "
            "ticks (real.testbed.simulator.KERNEL_CLOCK): rerun the kernel's runs on a HZ = "
            f"{PS_PER_S // parse_time(KERNEL_CLOCK)} kernel or change the constant"
        )


def expected_normal_range(n: int) -> float:
    """d2(n): the expected range of ``n`` draws of a standard normal (the control-chart
    constant; 3.735 for n = 20), integrated numerically: E[R] = ∫ 1 − Φⁿ − (1 − Φ)ⁿ dx."""
    if n < 2:
        raise ValueError("a range needs at least two samples")
    step, total, x = 0.01, 0.0, -8.0
    while x <= 8.0:
        phi = 0.5 * (1 + math.erf(x / math.sqrt(2)))
        total += (1 - phi**n - (1 - phi) ** n) * step
        x += step
    return total


def jitter_from_probes(results: Sequence[Result]) -> float | None:
    """The testbed's per-link timing noise, as the simulator's ``topology.link_jitter``
    (each crossing uniform in delay ± J/2): an ICMP echo crosses four links, so its RTT's
    standard deviation is J/√3; each run's probe gives a standard deviation from its range
    (max − min over its samples, divided by d2), and the median over runs is taken, since
    the testbed is the same for every run. None without probes."""
    sigmas = []
    for r in results:
        probe = r.report.get("emulated", {}).get("rtt_probe") or {}
        n = int(probe.get("samples", 0))
        if n >= 2 and "max_s" in probe and "min_s" in probe:
            sigmas.append((probe["max_s"] - probe["min_s"]) / expected_normal_range(n))
    return math.sqrt(3) * statistics.median(sigmas) if sigmas else None
