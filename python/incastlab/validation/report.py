"""What the validation grid writes: ``README.md`` (the command, the summary, the table, the
points outside with people's reasons), ``validation.csv`` and the figure (:mod:`.figure`)."""

from __future__ import annotations

import csv
import math
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from incastlab.real.testbed.simulator import FRAMING, KERNEL_CLOCK, nic, port, protocol
from incastlab.validation.figure import plot
from incastlab.validation.grid import (
    FULL,
    ORDERING_RTO,
    ORDERING_SENDERS,
    QUICK,
    SIM_SEEDS,
    TIE,
    Grid,
    Point,
)
from incastlab.validation.runs import stalls_text
from incastlab.validation.table import (
    NEAR_RANGE,
    Validation,
    harder,
    median_int,
    ordering_summary,
    summarize,
)


def _mbps(x: float | None, digits: int = 1) -> str:
    return "-" if x is None or math.isnan(x) else f"{x / 1e6:.{digits}f}"


def _share(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:+.0f}%"


def write_csv(v: Validation, path: Path) -> Path:
    records = [r.record(v.names) for r in v.rows]
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(records[0]) if records else ["buffer"])
        w.writeheader()
        w.writerows(records)
    return path


def command_line(grid: Grid, profiles: Sequence[str], real_dir: str, out: str) -> str:
    """The command that regenerates the study."""
    parts = ["sudo incast validate", f"--real-dir {real_dir}", f"--out {out}"]
    if grid == QUICK:
        parts.append("--quick")
    else:
        if grid.repeat != FULL.repeat:
            parts.append(f"--repeat {grid.repeat}")
        if grid.blocks != FULL.blocks:
            parts.append(f"--blocks {grid.blocks}")
        if grid.warmup != FULL.warmup:
            parts.append(f"--warmup {grid.warmup}")
    parts.append(f"--profiles {','.join(profiles)}")
    return " ".join(parts)


def read_reasons(path: Path) -> dict[tuple[str, str], str]:
    """People's explanations of points outside the kernel's min–max: a CSV with columns
    profile (``*``: every profile), buffer, rto_min, cc, senders and why; keyed by
    (profile, point key)."""
    if not path.exists():
        return {}
    out = {}
    with path.open(encoding="utf-8", newline="") as f:
        for rec in csv.DictReader(f):
            p = Point(rec["buffer"], rec["rto_min"], rec["cc"], int(rec["senders"]))
            out[(rec["profile"], p.key)] = rec["why"].strip()
    return out


def markdown(
    v: Validation, command: str, reasons: Mapping[tuple[str, str], str] | None = None
) -> str:
    g, names, kernel = v.grid, v.names, v.kernel
    reasons = reasons or {}
    half = max((s.half_runs for s in v.summary()), default=0)
    lines = [
        "# Validation: the simulator against real Linux TCP",
        "",
        f"The simulator's goodput against this machine's Linux {kernel.get('release', '?')} "
        f"(HZ = {kernel.get('hz', '?')}) in network namespaces (`incast emulate`): "
        f"{g.link}, SRU {g.sru}, ports of {' and '.join(g.buffers)}, "
        f"N = {', '.join(map(str, g.senders))}, RTOmin {' and '.join(g.rto_mins)}, "
        f"{' and '.join(g.ccs)}, {g.blocks} blocks per run, {g.repeat} kernel runs per point, "
        f"{len(SIM_SEEDS)} simulator seeds per point and profile.",
        "",
        "Regenerate (the kernel's runs are stored under the real directory, one Parquet file "
        "per point and repetition; a rerun runs only what is missing):",
        "",
        "```sh",
        command,
        "```",
        "",
        "The simulator is given the testbed's measured base RTT (the median of 20 ICMP echoes "
        "on the idle testbed, timed by the kernel; `rtt_us` below) and the kernel's "
        f"{KERNEL_CLOCK} timer tick (HZ = {kernel.get('hz', '?')}), as each profile takes it, "
        "and the shaper's "
        "framing: tbf charges each packet the 1514 bytes the veth sends for 1448 bytes of "
        "payload, with no FCS, preamble or gap ("
        + ", ".join(f"`{k} = {v!r}`" for k, v in FRAMING.items())
        + "), and its timing noise: packets cross the testbed's veth pairs through softirqs, "
        "not at fixed delays, so every link's delay varies uniformly by "
        f"±{v.jitter_s * 1e6 / 2:.1f} µs (`topology.link_jitter = "
        f"'{v.jitter_s * 1e6:.1f}us'`, at most RTT / 2 at a point), the spread of the "
        "probes' RTTs (their range over 20 echoes ÷ d2, the median over runs, × √3 for "
        "four crossings). With fixed delays two senders at line rate lock each other out of "
        'the drop-tail port (the phase effect of S. Floyd and V. Jacobson, "On Traffic Phase '
        'Effects in Packet-Switched Gateways", Internetworking: Research and Experience, '
        "1992), which the kernel does not show. The block protocol's requests and response "
        "headers are given too ("
        + ", ".join(f"`{k} = {v!r}`" for k, v in protocol().items())
        + "): a response's 24-byte header leaves as a segment of its own, so the receiver, "
        "which ACKs every second segment, has not yet ACKed the last full segment when the "
        "short last one is lost, and the probe for two outstanding segments comes after "
        "2·SRTT instead of at the RTO's time. So are its NICs, one segment per GSO packet ("
        + ", ".join(f"`{k} = {v!r}`" for k, v in nic().items())
        + "), and its switch port towards the receiver, tbf with the same two-frame bucket, "
        "which lets two frames reach the receiver back to back, so a delivery-rate sample over "
        "them (BBR's) reads above the link (the simulator shapes every port towards a host so; "
        "the testbed's ports towards the senders are plain veths, and carry only requests and "
        "ACKs: "
        + ", ".join(f"`{k} = {v!r}`" for k, v in port().items())
        + "). "
        + stalls_text(v.stalls)
        + " Profiles: "
        + ", ".join(f"`{n}` ({_overrides_text(o)})" for n, o in v.profiles.items())
        + ".",
        "",
        "![validation](validation.png)",
        "",
        "Shaded: the kernel's min–max over runs (dots: its median); lines: the simulator's "
        "median over seeds, one line style per profile.",
        "",
        "## Summary",
        "",
        f"| profile | points | missing | median \\|sim/real − 1\\| | inside the kernel's min–max "
        f"({v.grid.repeat} runs) | inside the first {half} runs' min–max | "
        f"inside or within {100 * NEAR_RANGE:.0f}% of it |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in v.summary():
        lines.append(
            f"| {s.profile} | {s.points} | {s.missing} | "
            f"{'-' if s.median_abs_error is None else f'{100 * s.median_abs_error:.0f}%'} | "
            f"{_share(s.inside_share)} | {_share(s.inside_share_half)} | "
            f"{_share(s.near_share)} |"
        )
    missing = sorted({why for r in v.rows for why in r.missing.values()})
    if missing:
        lines += ["", "Missing: " + "; ".join(f"`{m}`" for m in missing) + "."]
    ords = v.orderings()
    if ords:
        osum = ordering_summary(ords, names)
        lines += [
            "",
            f"## BBR against CUBIC ({ORDERING_RTO} RTOmin, "
            f"N = {', '.join(map(str, ORDERING_SENDERS))})",
            "",
            f"BBR's goodput over CUBIC's (medians); below 1, BBR collapses harder (within "
            f"{100 * TIE:.0f}% of 1: neither). The kernel: "
            f"median ratio {_ratio(osum['real'])} ({harder(osum['real'])} collapses harder).",
            "",
            "| buffer | N | real | " + " | ".join(f"sim {n}" for n in names) + " |",
            "|---|---|---|" + "---|" * len(names),
        ]
        for o in ords:
            sims = " | ".join(_ratio(o.sim[n]) for n in names)
            lines.append(f"| {o.buffer} | {o.senders} | {_ratio(o.real)} | {sims} |")
        for n in names:
            po = osum["profiles"][n]
            if po["points"]:
                lines.append(
                    f"\n`{n}`: median ratio {_ratio(po['median'])}; names the same cc as "
                    f"collapsing harder at {100 * po['same_order']:.0f}% of {po['points']} "
                    "points."
                )
            else:
                lines.append(f"\n`{n}`: no BBR runs (the simulator does not run BBR).")
    lines += [
        "",
        "## Every point",
        "",
        "Goodput in Mbps: the kernel's median [min–max] over runs; each profile's median over "
        "seeds and sim / real − 1 (✓: inside the kernel's min–max).",
        "",
        "| buffer | RTOmin | cc | N | RTT µs | real | " + " | ".join(names) + " |",
        "|---|---|---|---|---|---|" + "---|" * len(names),
    ]
    for r in v.rows:
        cells = []
        for n in names:
            if n in r.missing:
                cells.append("missing")
                continue
            mark = " ✓" if r.inside(n) else ""
            cells.append(f"{_mbps(r.sim_median(n))} ({_pct(r.error(n))}){mark}")
        real = f"{_mbps(r.real_median)} [{_mbps(r.real_min)}–{_mbps(r.real_max)}]"
        rtt = "-" if r.rtt_s is None else f"{r.rtt_s * 1e6:.0f}"
        p = r.point
        lines.append(
            f"| {p.buffer} | {p.rto_min} | {p.cc} | {p.senders} | {rtt} | {real} | "
            + " | ".join(cells)
            + " |"
        )
    for s in summarize(v.rows, v.names):  # the profiles as run, stalls replayed
        if not s.outside:
            continue
        lines += [
            "",
            f"## Points outside the kernel's min–max: `{s.profile}`",
            "",
            "Off the range: how far the simulator's median lies beyond the nearer end of the "
            "kernel's min–max. RTOs per run (medians): the kernel's, with its tail-loss probes "
            "after the slash, and the simulator's. Why: from `reasons.csv` beside this file, "
            "written by people (kept when the study is rerun).",
            "",
            "| buffer | RTOmin | cc | N | real [min–max] | sim | sim / real − 1 | off the range | "
            "RTOs real / TLP | RTOs sim | why |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in s.outside:
            p = r.point
            lines.append(
                f"| {p.buffer} | {p.rto_min} | {p.cc} | {p.senders} | "
                f"{_mbps(r.real_median)} [{_mbps(r.real_min)}–{_mbps(r.real_max)}] | "
                f"{_mbps(r.sim_median(s.profile))} | {_pct(r.error(s.profile))} | "
                f"{_pct_fine(r.beyond_range(s.profile))} | "
                f"{_num(median_int(r.real_timeouts))} / {_num(median_int(r.real_probes))} | "
                f"{_num(median_int(r.sim_timeouts.get(s.profile, [])))} | "
                + (reasons.get((s.profile, p.key)) or reasons.get(("*", p.key)) or "")
                + " |"
            )
    lines += ["", "## Notes on the testbed", "", *NOTES]
    if kernel:
        sysctls = kernel.get("sysctls", {})
        lines += [
            "",
            "## What the kernel ran",
            "",
            "Recorded by every run (`report.emulated.kernel`); the first run's:",
            "",
            "- servers' congestion control read back from their sockets (`ss -tin`): "
            f"`{kernel.get('servers_congestion_control')}` (per point: the point's cc)",
            "- sysctls of the sender namespaces: "
            + ", ".join(f"`{k.removeprefix('net.ipv4.')}={v_}`" for k, v_ in sysctls.items())
            + " (`tcp_congestion_control` and `tcp_rto_min_us` are the namespaces' defaults; "
            "the routes' `congctl` and `rto_min` and the sockets' TCP_CONGESTION override them)",
            "- offloads of a sender's veth: "
            + _offloads_text(kernel.get("offloads", {}).get("sender eth0", {})),
        ]
    if v.by_repetition:
        lines.append(
            "- the machine during each repetition of the grid (medians over the points; "
            "`report.machine.cpu_busy`, `report.emulated.rtt_measured_s`): "
            + "; ".join(
                f"run {rep + 1}: CPUs {_share(b)} busy, RTT "
                + ("-" if t is None else f"{t * 1e6:.0f} µs")
                for rep, b, t in v.by_repetition
            )
        )
    if v.other_load:
        lines.append(
            "- other work on the machine's CPUs during the kernel's runs (`report.machine`, "
            f"niced): median {100 * statistics.median(v.other_load):.0f}%, "
            f"max {100 * max(v.other_load):.0f}% of CPU time"
        )
    return "\n".join(lines) + "\n"


#: What a reader of the table should know about the kernel's runs.
NOTES = [
    "- No netem on this machine: the base RTT is the veths' and the CPUs' (tens of µs), "
    "measured per run and given to the simulator; the shapers are tbf (2-frame bucket) on "
    "every NIC and on the switch port towards the receiver, whose byte limit is the port "
    "buffer. The hosts' NICs take one segment per GSO packet (`gso_max_segs 1`): tbf keeps "
    "a GSO packet within its bucket whole, so two-segment packets crossed the port as one "
    "queue entry, dropped or kept together, as no switch treats a NIC's frames.",
    "- Every socket runs the point's congestion control from its first segment: it is a "
    "route metric (`congctl`) as well as TCP_CONGESTION. A socket that starts with the "
    "host's default (bbr on this machine) and is switched by TCP_CONGESTION keeps the "
    "pacing BBR asked for (the kernel's `tcp_reinit_congestion_control` leaves "
    "`sk_pacing_status` set): such a CUBIC is paced. In an A/B at N = 16, 32 KB, RTOmin "
    "200 ms it dropped about 28% fewer packets and took about 25% fewer RTOs, at the same "
    "goodput.",
    "- The kernel's RTO counter (`TCPTimeouts`) misses stalls of a tail-loss probe: with one "
    "segment outstanding, Linux arms the probe for 2·SRTT + RTOmin, capped at the RTO, so "
    "a lost last segment costs about an RTO's time counted as a probe (`TCPLossProbes`). At "
    "RTOmin 200 ms one such stall costs a 30-block run of a small fan-in up to 40% of its "
    "goodput with no RTO counted.",
    "- An RTOmin of 1 ms is 4 ms on this kernel: a route's `rto_min` is kept in jiffies "
    "(`dst_metric_rtt`), one jiffy at HZ = 250. The simulator keeps RTOmin in whole timer "
    "ticks the same way (`tcp.timer_granularity = '4ms'` here).",
    "- The machine has 2 cores, shared with other work (builds) during the runs; each run "
    "records the share of CPU time that other work took (`report.machine`).",
]


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:g}"


def _pct_fine(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:+.1f}%"


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _overrides_text(o: Mapping[str, Any]) -> str:
    return ", ".join(f"`{k} = {v!r}`" for k, v in o.items()) or "no overrides"


def _offloads_text(o: Mapping[str, Any]) -> str:
    eth = o.get("ethtool", {})
    keys = (
        "tcp-segmentation-offload",
        "generic-segmentation-offload",
        "generic-receive-offload",
        "large-receive-offload",
    )
    parts = [f"{k} {eth[k]}" for k in keys if k in eth]
    parts += [f"{k} {o[k]}" for k in ("gso_max_size", "tso_max_size") if k in o]
    return ", ".join(parts) or "not recorded"


def write(v: Validation, out: Path, command: str) -> list[Path]:
    """README.md, validation.csv and validation.png under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    readme = out / "README.md"
    reasons = read_reasons(out / "reasons.csv")
    readme.write_text(markdown(v, command, reasons), encoding="utf-8")
    return [readme, write_csv(v, out / "validation.csv"), plot(v, out / "validation.png")]
