"""How one sender's ACKs arrive: their spacing, and how fast a pair of them reports delivery.

    python scripts/ack_spacing.py kernel SENDER.pcap [--switch SWITCH.pcap] [--json]
    python scripts/ack_spacing.py sim HOST.pcap [--json]

kernel: one `tcpdump -i any -s 128 --time-stamp-precision nano -w SENDER.pcap tcp` inside ONE
sender's namespace during `incast emulate` (the block server listens on port 9000); with
--switch, the same capture inside the switch's namespace, whose data frames give their time
through the bottleneck port (ingress to egress).
sim: a capture of the same sender in the simulator (`incast sim --pcap F --pcap-at host0`),
which stamps each delivered packet when it reaches the host.

Printed: the gaps between consecutive ACKs (percentiles and the share under 10, 30 and 60 µs;
ACK bunching by the receive path would show as gaps of a few µs); per consecutive pair, the
bytes the later ACK newly covers (cumulative ACK and SACK blocks, against every earlier ACK)
over the gap, the fastest "ACK phase" a delivery-rate sample (Linux's tcp_rate.c) could have;
and with --switch the share of data frames that crossed the bottleneck port in under one
frame time (a token bucket with tokens passes a lone frame at once, a wire does not).
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bottleneck_drops import MSS, SERVER_PORT, SLOT_NS, Frame, read_pcap

#: Gaps longer than this are between blocks, not within one.
IDLE_NS = 2_000_000
#: A pair's later ACK covering this much or more is the connection's first (no base yet).
FIRST_ACK_BYTES = 1 << 24


def sender_acks(frames: list[Frame], kernel: bool) -> list[Frame]:
    """The ACKs (and requests) one sender's data connection receives."""
    if kernel:
        ip = next(f.src for f in frames if f.sport == SERVER_PORT and f.payload > 0)
        return [f for f in frames if f.dst == ip and f.dport == SERVER_PORT and not f.outgoing]
    first = next(f for f in frames if f.payload == MSS)
    return [f for f in frames if f.dst == first.src and f.dport == first.sport and f.payload < MSS]


def newly_covered(acks: list[Frame]) -> list[int]:
    """Per ACK, the sequence space it covers (cumulatively or by SACK) that no earlier one did."""
    covered: list[tuple[int, int]] = []
    base = acks[0].ack if acks else 0
    out = []
    for f in acks:
        before = sum(b - a for a, b in covered)
        spans = [(0, (f.ack - base) % 2**32)]
        spans += [((s - base) % 2**32, (e - base) % 2**32) for s, e in f.sacks]
        merged: list[tuple[int, int]] = []
        for a, b in sorted(covered + spans):
            if merged and a <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], b))
            else:
                merged.append((a, b))
        covered = merged
        out.append(sum(b - a for a, b in covered) - before)
    return out


def share(values: Sequence[float], below: float) -> float:
    return sum(v < below for v in values) / len(values) if values else 0.0


def pct(values: Sequence[float], qs: tuple[int, ...]) -> list[float]:
    if len(values) < 2:
        return []
    cuts = statistics.quantiles(values, n=100)
    return [cuts[q - 1] for q in qs]


def analyze(frames: list[Frame], kernel: bool) -> dict[str, Any]:
    acks = sender_acks(frames, kernel)
    gaps = [b.t - a.t for a, b in itertools.pairwise(acks) if b.t - a.t < IDLE_NS]
    new = newly_covered(acks)
    rates = [
        new[i] * 8 / ((acks[i].t - acks[i - 1].t) / 1e9) / 1e6
        for i in range(2, len(acks))
        if 0 < new[i] < FIRST_ACK_BYTES and 0 < acks[i].t - acks[i - 1].t < IDLE_NS
    ]
    return {
        "acks": len(acks),
        "gap_us_p5_p25_p50_p75_p95": [g / 1e3 for g in pct(gaps, (5, 25, 50, 75, 95))],
        "gap_share_under_us": {us: share(gaps, us * 1e3) for us in (10, 30, 60)},
        "pair_rate_mbps_p50_p90_p99": pct(rates, (50, 90, 99)),
        "pair_rate_mbps_max": max(rates, default=0.0),
        "pair_rate_share_over_mbps": {m: 1 - share(rates, m) for m in (110, 236)},
    }


def bottleneck_transit(frames: list[Frame]) -> dict[str, Any]:
    """Data frames' time from the switch's ingress to its egress (same source and IP id)."""
    seen: dict[tuple[bytes, int], int] = {}
    transit = []
    for f in frames:
        if f.sport != SERVER_PORT or f.payload < MSS:
            continue
        key = (f.src, f.ipid)
        if f.outgoing is False:
            seen[key] = f.t
        elif f.outgoing and key in seen:
            transit.append(f.t - seen.pop(key))
    return {
        "data_frames": len(transit),
        "share_under_30us": share(transit, 30e3),
        "share_under_one_frame_time": share(transit, SLOT_NS),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("world", choices=("kernel", "sim"))
    ap.add_argument("capture", type=Path)
    ap.add_argument("--switch", type=Path, help="kernel: the switch namespace's capture")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    out = analyze(list(read_pcap(a.capture)), a.world == "kernel")
    if a.switch:
        out["bottleneck_transit"] = bottleneck_transit(list(read_pcap(a.switch)))
    if a.json:
        print(json.dumps(out, indent=1))
        return
    g = out["gap_us_p5_p25_p50_p75_p95"]
    print(f"ACKs at the sender: {out['acks']}")
    print("  gaps (µs) p5/p25/p50/p75/p95: " + " / ".join(f"{x:.1f}" for x in g))
    print(
        "  gaps under 10/30/60 µs: "
        + " / ".join(f"{100 * v:.1f}%" for v in out["gap_share_under_us"].values())
    )
    r = out["pair_rate_mbps_p50_p90_p99"]
    print(
        "  delivery newly reported per ACK pair (Mbps) p50/p90/p99/max: "
        + " / ".join(f"{x:.0f}" for x in [*r, out["pair_rate_mbps_max"]])
    )
    over = out["pair_rate_share_over_mbps"]
    print(f"  pairs over 110 Mbps: {100 * over[110]:.1f}%, over 236 Mbps: {100 * over[236]:.1f}%")
    if t := out.get("bottleneck_transit"):
        print(
            f"data frames through the bottleneck port: {t['data_frames']}, "
            f"under 30 µs: {100 * t['share_under_30us']:.1f}%, "
            f"under one frame time: {100 * t['share_under_one_frame_time']:.1f}%"
        )


if __name__ == "__main__":
    main()
