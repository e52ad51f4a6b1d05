"""Which packets the incast bottleneck drops, and why the flows sent them: the kernel's
testbed against the simulator, from captures on both sides of the port.

    python scripts/bottleneck_drops.py kernel SWITCH.pcap [--json]
    python scripts/bottleneck_drops.py sim SENDERS.pcap BOTTLENECK.pcap RECEIVER.pcap [--json]

kernel: one `tcpdump -i any -s 128 --time-stamp-precision nano -w SWITCH.pcap tcp` inside
the emulator's switch namespace (Linux "cooked" v2 records carry the direction): data
arriving from the senders (incoming), data leaving the port towards the receiver after tbf
(outgoing) and the ACKs leaving towards the senders (outgoing). One segment per GSO packet
gives every frame its own IP identification, so arrivals and departures match exactly.

sim: three captures of the same seeded run (`incast sim --pcap F --pcap-at senders`, then
`bottleneck`, then `receiver`). The simulator writes IP identification 0, so an arrival
matches the first unmatched departure of the same flow, sequence and length within
SIM_WINDOW_NS (the 32 KB port's 2.6 ms plus slack); the number of ambiguous matches is
printed.

A data frame that arrives and never leaves was dropped at the port. Each arrival is
classified from its sender's point of view (its ACKs and its own sends): new data or a
resend; a resend sent at least TIMER_GAP_NS after both the flow's last ACK and its last
send is timer-driven (the RTO if it resends the first unacknowledged byte, else a tail
probe; new data sent that way is a probe too); other resends are ACK-driven (fast
retransmit or RACK), or go-back-N resends below an RTO's recovery point. The phase of the
block: before the flow's first resend (first), after a fast resend (recovery), the RTO's
resend (rto) and everything after it (after-rto). Block 0 (the warm-up) is left out.
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import json
import statistics
import struct
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: One 1514-byte frame at 100 Mbps.
SLOT_NS = 121_120
#: A resend this long after the flow's last ACK and last send was sent by a timer.
TIMER_GAP_NS = 1_000_000
#: Kernel: every frame has its own IP identification; the window only bounds the search.
KERNEL_WINDOW_NS = 10_000_000
SIM_WINDOW_NS = 3_300_000
#: The simulator's capture points stamp a frame when its last bit leaves a link: its ACKs
#: are taken this much earlier, so a send an ACK caused never looks timer-driven.
SIM_ACK_LEAD_NS = 60_000
MSS = 1448
SERVER_PORT = 9000
LINKTYPE_ETHERNET = 1
LINKTYPE_LINUX_SLL2 = 276
PACKET_OUTGOING = 4


@dataclass
class Frame:
    t: int
    src: bytes
    dst: bytes
    sport: int
    dport: int
    ipid: int
    seq: int
    ack: int
    flags: int
    payload: int
    sacks: list[tuple[int, int]]
    outgoing: bool | None


@dataclass
class Flow:
    """One connection's data at the port and the ACKs its sender got."""

    arrivals: list[tuple[int, int, int, int]] = field(default_factory=list)
    departures: list[tuple[int, int, int, int]] = field(default_factory=list)
    #: (time, ack, SACK blocks, is a request, request's sequence number)
    acks: list[tuple[int, int, list[tuple[int, int]], bool, int]] = field(default_factory=list)


def read_pcap(path: Path) -> Iterator[Frame]:
    data = path.read_bytes()
    nano = struct.unpack_from("<I", data, 0)[0] == 0xA1B23C4D
    linktype = struct.unpack_from("<I", data, 20)[0]
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack_from("<IIII", data, off)
        rec = data[off + 16 : off + 16 + incl]
        off += 16 + incl
        t = sec * 1_000_000_000 + (frac if nano else frac * 1000)
        if linktype == LINKTYPE_LINUX_SLL2:
            proto, _, _, _, pkttype = struct.unpack_from(">HHIHB", rec, 0)
            if proto == 0x0800 and (f := tcp_frame(t, rec[20:], pkttype == PACKET_OUTGOING)):
                yield f
        elif (
            linktype == LINKTYPE_ETHERNET
            and rec[12:14] == b"\x08\x00"
            and (f := tcp_frame(t, rec[14:], None))
        ):
            yield f


def tcp_frame(t: int, ip: bytes, outgoing: bool | None) -> Frame | None:
    if len(ip) < 40 or ip[9] != 6:
        return None
    ihl = (ip[0] & 15) * 4
    total, ipid = struct.unpack_from(">HH", ip, 2)
    th = ip[ihl:]
    sport, dport, seq, ack, doff = struct.unpack_from(">HHIIB", th, 0)
    doff = (doff >> 4) * 4
    sacks = []
    opts, i = th[20:doff], 0
    while i < len(opts) and opts[i] != 0:
        if opts[i] == 1:
            i += 1
            continue
        if i + 1 >= len(opts) or opts[i + 1] < 2:
            break
        if opts[i] == 5:
            sacks += [struct.unpack_from(">II", opts, j) for j in range(i + 2, i + opts[i + 1], 8)]
        i += opts[i + 1]
    return Frame(
        t, ip[12:16], ip[16:20], sport, dport, ipid, seq, ack, th[13], total - ihl - doff,
        sacks, outgoing,
    )  # fmt: skip


def add_ack(flows: dict[Any, Flow], f: Frame, t: int) -> None:
    flows[(f.dst, f.src, f.sport)].acks.append((t, f.ack, f.sacks, f.payload > 0, f.seq))


def load_kernel(switch: Path) -> dict[Any, Flow]:
    flows: dict[Any, Flow] = defaultdict(Flow)
    for f in read_pcap(switch):
        if f.flags & 0x02:
            continue
        if f.sport == SERVER_PORT and f.payload > 0:
            side = flows[(f.src, f.dst, f.dport)]
            rows = side.departures if f.outgoing else side.arrivals
            rows.append((f.t, f.seq, f.payload, f.ipid))
        elif f.dport == SERVER_PORT and f.outgoing:
            add_ack(flows, f, f.t)
    return flows


def load_sim(senders: Path, bottleneck: Path, receiver: Path) -> dict[Any, Flow]:
    flows: dict[Any, Flow] = defaultdict(Flow)
    for path, rows in ((senders, "arrivals"), (bottleneck, "departures")):
        for f in read_pcap(path):
            if f.sport == SERVER_PORT and f.payload > 0:
                side = flows[(f.src, f.dst, f.dport)]
                getattr(side, rows).append((f.t, f.seq, f.payload, f.ipid))
    for f in read_pcap(receiver):
        if f.dport == SERVER_PORT and not f.flags & 0x02:
            add_ack(flows, f, f.t - SIM_ACK_LEAD_NS)
    return flows


def match(fl: Flow, window_ns: int, by_ipid: bool) -> tuple[list[int | None], int]:
    """Per arrival its departure time (None: dropped), and the ambiguous matches."""
    cand: dict[tuple[int, int, int], list[int]] = defaultdict(list)
    for i, (_, seq, ln, ipid) in enumerate(fl.arrivals):
        cand[(seq, ln, ipid if by_ipid else 0)].append(i)
    out: list[int | None] = [None] * len(fl.arrivals)
    ambiguous = 0
    for td, seq, ln, ipid in fl.departures:
        ok = [
            i
            for i in cand.get((seq, ln, ipid if by_ipid else 0), [])
            if out[i] is None and td - window_ns <= fl.arrivals[i][0] <= td
        ]
        if ok:
            ambiguous += len(ok) > 1
            out[ok[0]] = td
    return out, ambiguous


def classify(
    flows: dict[Any, Flow], window_ns: int, by_ipid: bool
) -> tuple[list[dict[str, Any]], int]:
    """One record per data arrival: flow, block, kind, phase, dropped, flight, times."""
    recs: list[dict[str, Any]] = []
    ambiguous = 0
    for fi, (_, fl) in enumerate(sorted(flows.items())):
        if not fl.arrivals:
            continue
        dep, a = match(fl, window_ns, by_ipid)
        ambiguous += a
        base = fl.arrivals[0][1]

        def rel(s: int, base: int = base) -> int:
            d = (s - base) & 0xFFFFFFFF
            return d if d < 1 << 31 else d - (1 << 32)

        events = sorted(
            [(t, 1, i) for i, (t, *_) in enumerate(fl.arrivals)]
            + [(t, 0, i) for i, (t, *_) in enumerate(fl.acks)]
        )
        snd_max = snd_una = 0
        last_ack = last_data = None
        block, block_start, recover, phase, request = -1, 0, -1, "first", None
        for t, is_data, i in events:
            if not is_data:
                _, ack, _, is_request, req_seq = fl.acks[i]
                if is_request and req_seq != request:  # not the client's resend of it
                    request, block, block_start = req_seq, block + 1, t
                    recover, phase = -1, "first"
                snd_una = max(snd_una, rel(ack))
                last_ack = t
                continue
            _, seq, ln, _ = fl.arrivals[i]
            s = rel(seq)
            since = t - max(last_ack or 0, last_data or 0)
            timer = last_data is not None and since >= TIMER_GAP_NS
            if s >= snd_max:
                kind = "probe-new" if timer and snd_una < snd_max else "new"
            elif timer:
                kind = "rto" if s == snd_una else "probe-tail"
            else:
                kind = "after-rto" if s < recover else "fast"
            if kind == "rto":
                recover, phase = snd_max, "after-rto"
            elif kind in ("fast", "probe-tail") and phase == "first":
                phase = "recovery"
            recs.append(
                {
                    "t": t, "flow": fi, "block": block, "kind": kind, "seq": s,
                    "phase": "rto" if kind == "rto" else phase, "dep": dep[i],
                    "dropped": dep[i] is None, "flight": (snd_max - snd_una) // MSS,
                    "since_block": t - block_start, "gap": since,
                }
            )  # fmt: skip
            snd_max, last_data = max(snd_max, s + ln), t
    return recs, ambiguous


def quantiles(xs: list[float], scale: float = 1.0) -> list[float] | None:
    if not xs:
        return None
    xs = sorted(xs)
    return [round(xs[min(len(xs) - 1, int(p * len(xs)))] / scale, 2) for p in (0.1, 0.5, 0.9)]


def summarize(recs: list[dict[str, Any]], ambiguous: int) -> dict[str, Any]:
    delivered = [r for r in recs if not r["dropped"]]
    arrived = sorted(r["t"] for r in delivered)
    departed = sorted(r["dep"] for r in delivered)
    for r in recs:  # delivered frames in the queue when r arrived
        r["q"] = bisect.bisect_left(arrived, r["t"]) - bisect.bisect_right(departed, r["t"])
    recs = [r for r in recs if r["block"] >= 1]
    drops = [r for r in recs if r["dropped"]]
    sent, lost = Counter(r["kind"] for r in recs), Counter(r["kind"] for r in drops)
    sent_ph, lost_ph = Counter(r["phase"] for r in recs), Counter(r["phase"] for r in drops)
    by_fb: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
    for r in recs:
        by_fb[(r["flow"], r["block"])].append(r)
    repaired: Counter[str] = Counter()
    starts: dict[int, list[int]] = defaultdict(list)
    first_loss = []
    for (_, b), rs in by_fb.items():
        starts[b].append(rs[0]["t"])
        if fl := next((r for r in rs if r["dropped"]), None):
            first_loss.append(fl)
        for j, r in enumerate(rs):
            if r["dropped"]:
                nxt = next((x["kind"] for x in rs[j + 1 :] if x["seq"] == r["seq"]), "never")
                repaired[f"{r['kind']}->{nxt}"] += 1
    # Timer-driven resends of many flows in one jiffy.
    rto_t = sorted(r["t"] for r in recs if r["kind"] == "rto")
    clusters: Counter[int] = Counter()
    size = 1
    for a, b in itertools.pairwise(rto_t):
        if b - a < 500_000:
            size += 1
        else:
            clusters[size] += 1
            size = 1
    if rto_t:
        clusters[size] += 1
    # Arrivals per departure slot while the queue is nearly full.
    busy = [r for r in recs if r["q"] >= 15]
    slots = sum(
        1
        for t in range(arrived[0], departed[-1], SLOT_NS)
        if bisect.bisect_left(arrived, t) - bisect.bisect_right(departed, t) >= 15
    )
    return {
        "arrivals": len(recs),
        "drops": len(drops),
        "ambiguous_matches": ambiguous,
        "sent_by_kind": dict(sent),
        "drop_rate_by_kind": {k: round(lost[k] / v, 3) for k, v in sent.items()},
        "drops_by_phase": dict(lost_ph),
        "drop_rate_by_phase": {k: round(lost_ph[k] / v, 3) for k, v in sent_ph.items()},
        "dropped_then_resent_as": dict(repaired.most_common()),
        "queue_at_drop_median": statistics.median(r["q"] for r in drops) if drops else None,
        "arrivals_per_slot_queue_ge_15": round(len(busy) / slots, 3) if slots else None,
        "first_frames_spread_ms_p10_p50_p90": quantiles(
            [max(v) - min(v) for v in starts.values()], 1e6
        ),
        "first_loss_ms_into_block_p10_p50_p90": quantiles(
            [r["since_block"] for r in first_loss], 1e6
        ),
        "first_loss_flight_p10_p50_p90": quantiles([r["flight"] for r in first_loss]),
        "rto_clusters_by_size": {k: clusters[k] for k in sorted(clusters)},
        "timer_gaps_ms_p10_p50_p90": {
            k: quantiles([r["gap"] for r in recs if r["kind"] == k], 1e6)
            for k in ("rto", "probe-new")
        },
    }


def ack_pattern(flows: dict[Any, Flow]) -> dict[str, float]:
    """How the receiver acknowledged: ACKs per delivered frame, and the share of ACKs that
    advance by one full segment without SACK blocks (quick-ACK mode, or a lone segment)."""
    acks = advancing = single = delivered = 0
    for fl in flows.values():
        delivered += len(fl.departures)
        una = None
        for _, ack, sacks, is_request, _ in fl.acks:
            if is_request:
                continue
            acks += 1
            if una is not None and 0 < (ack - una) & 0xFFFFFFFF < 1 << 30:
                advancing += 1
                single += not sacks and (ack - una) & 0xFFFFFFFF == MSS
            una = ack if una is None or 0 < (ack - una) & 0xFFFFFFFF < 1 << 30 else una
    return {
        "acks_per_delivered_frame": round(acks / max(1, delivered), 3),
        "one_segment_share_of_advancing_acks": round(single / max(1, advancing), 3),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("world", choices=["kernel", "sim"])
    p.add_argument("pcaps", nargs="+", type=Path)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    a = p.parse_args()
    want = 1 if a.world == "kernel" else 3
    if len(a.pcaps) != want:
        p.error(f"{a.world} takes {want} capture file(s), got {len(a.pcaps)}")
    if a.world == "kernel":
        flows = load_kernel(a.pcaps[0])
        recs, ambiguous = classify(flows, KERNEL_WINDOW_NS, True)
    else:
        flows = load_sim(*a.pcaps)
        recs, ambiguous = classify(flows, SIM_WINDOW_NS, False)
    if not recs:
        print("no data frames from port 9000 in the capture(s)", file=sys.stderr)
        return 1
    out = {**summarize(recs, ambiguous), **ack_pattern(flows)}
    if a.json:
        print(json.dumps(out, indent=1))
    else:
        for k, v in out.items():
            print(f"{k:38} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
