"""Check of the key-value store's incast: Fritchie's Riak cluster (drops per host against
average utilization, the 80% sender cap, the article's remedies at 50%)."""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from incastlab.reproductions.findings import Findings, Row, Runs, md_row

#: The remedies' sweep files, in the table's order: (file stem, name, what it costs).
REMEDIES: tuple[tuple[str, str, str], ...] = (
    ("remedy-baseline", "none (as deployed)", "-"),
    ("remedy-rate-cap", "80% egress cap", "no host sends above 800 Mbps"),
    ("remedy-pause-frames", "pause frames (802.3x)", "senders paused; head-of-line blocking"),
    ("remedy-rto-min", "RTOmin 1 ms", "spurious timeouts; a kernel that honours it"),
    ("remedy-dctcp", "DCTCP (K = 30 KB)", "ECN in every switch and host"),
)


def _capped(r: Row) -> bool:
    return r["params"].get("topology.host_rate_cap") not in (None, "off")


def _in(rows: Sequence[Row], lo: float, hi: float) -> list[Row]:
    """Points whose measured average utilization lies in [lo, hi]."""
    return [r for r in rows if lo <= r["kv_utilization"] <= hi]


def _median(rows: Sequence[Row], col: str) -> float | None:
    vals = [float(r[col]) for r in rows if r.get(col) is not None]
    return statistics.median(vals) if vals else None


def _within(x: float | None, lo: float, hi: float, factor: float) -> bool:
    return x is not None and lo / factor <= x <= hi * factor


def _ms(s: float | None) -> str:
    return "-" if s is None else f"{1e3 * s:.0f} ms" if s >= 0.01 else f"{1e3 * s:.2f} ms"


def knee(rows: Sequence[Row], drops: float = 100.0) -> float | None:
    """Measured utilization at which drops per host first reach ``drops`` per second
    (linear between the points around it)."""
    pts = sorted((r["kv_utilization"], r["kv_drops_per_s_per_host"]) for r in rows)
    for (u0, d0), (u1, d1) in itertools.pairwise(pts):
        if d0 < drops <= d1:
            return float(u0 + (u1 - u0) * (drops - d0) / (d1 - d0))
    return None


def riak_utilization(runs: Runs, paper: dict[str, Any], out: Path) -> Findings:
    f = Findings()
    rows = runs["sweep"]
    plain = sorted((r for r in rows if not _capped(r)), key=lambda r: r["kv_utilization"])
    capped = sorted((r for r in rows if _capped(r)), key=lambda r: r["kv_utilization"])
    tol = float(paper["tolerance"])
    lo_u, hi_u = paper["low_utilization"], paper["high_utilization"]
    low = _median(_in(plain, *lo_u), "kv_drops_per_s_per_host")
    high = _median(_in(plain, *hi_u), "kv_drops_per_s_per_host")
    span = f"within {tol:g}× of the article's range"
    f.claim(
        f"at {100 * lo_u[0]:.0f}–{100 * lo_u[1]:.0f}% utilization, "
        f"{paper['low_drops'][0]}–{paper['low_drops'][1]} drops/s per host",
        _within(low, paper["low_drops"][0], paper["low_drops"][1], tol),
        "no point in range" if low is None else f"median {low:.0f} drops/s per host",
        tolerance=span,
        direction=low is not None and low > 0,
    )
    f.claim(
        f"at {100 * hi_u[0]:.0f}–{100 * hi_u[1]:.0f}% utilization, "
        f"{paper['high_drops'][0]}–{paper['high_drops'][1]} drops/s per host",
        _within(high, paper["high_drops"][0], paper["high_drops"][1], tol),
        "no point in range" if high is None else f"median {high:.0f} drops/s per host",
        tolerance=span,
        direction=high is not None and low is not None and high > low,
    )
    f.claim(
        "drops rise steeply from the lower range to the upper (the article's ranges: 1–12×)",
        low is not None and high is not None and high >= 2 * max(low, 1.0),
        "-" if low is None or high is None else f"{high / max(low, 1.0):.0f}×",
        tolerance="at least 2×",
        direction=low is not None and high is not None and high > low,
    )
    ceiling = _in(plain, *paper["ceiling_utilization"])
    p99 = _median(ceiling, "kv_latency_p99_s")
    rto = plain[0]["scenario"]["tcp"]["rto_min"] / 1e12 if plain else 0.2
    f.claim(
        "the cluster can barely run above 50–60%: there, gets wait out retransmission timeouts",
        p99 is not None and p99 >= rto / 2,
        f"median p99 {_ms(p99)} at {100 * paper['ceiling_utilization'][0]:.0f}–"
        f"{100 * paper['ceiling_utilization'][1]:.0f}%",
        tolerance=f"p99 get latency at least RTOmin/2 = {_ms(rto / 2)}",
    )
    # The cap against no cap at the same offered load (the params' target utilization).
    by_target = {r["params"]["workload.kv_utilization"]: r for r in plain}
    pairs = [
        (by_target[t], r)
        for r in capped
        if (t := r["params"]["workload.kv_utilization"]) in by_target and hi_u[0] <= t <= hi_u[1]
    ]
    before = sum(a["kv_drops_per_s_per_host"] for a, _ in pairs)
    after = sum(b["kv_drops_per_s_per_host"] for _, b in pairs)
    f.claim(
        "capping every host's egress at 80% might reduce the drops (the article's untried "
        "remedy), but is no cure",
        bool(pairs) and 0.5 * before < after <= 1.05 * before,
        "-"
        if not pairs or not before
        else f"{before / len(pairs):.0f} → {after / len(pairs):.0f} drops/s per host "
        f"({100 * (after / before - 1):+.0f}%): three capped replies still arrive at 2.4× "
        "the coordinator's link",
        tolerance="at 45–55% and the same offered load at most 5% more drops than without the "
        "cap, and more than half of them remain",
    )
    k_plain, k_cap = knee(plain), knee(capped)
    lines = [
        f"Simulated knee (100 drops/s per host): {_pct(k_plain)} average utilization without "
        f"a cap, {_pct(k_cap)} with the 80% cap; the article's 100 drops/s lie between 35% and "
        "45%.",
        "",
        *_misses(low, high, paper),
        "Utilization is measured: the share of time each host's switch port spent sending to "
        "it (every frame, headers and ACKs included), as the article's 1 s interface counters "
        "see it; figures are taken after a warm-up that lets every connection learn its "
        "slow-start threshold.",
        "",
        "| utilization | drops/s/host | timeouts/s | get p50 | get p99 | "
        "80% cap: utilization | drops/s/host | get p99 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for a, b in zip(plain, capped, strict=False):
        lines.append(
            md_row(
                _pct(a["kv_utilization"]),
                f"{a['kv_drops_per_s_per_host']:.0f}",
                f"{a['kv_timeouts_per_s']:.1f}",
                _ms(a["kv_latency_p50_s"]),
                _ms(a["kv_latency_p99_s"]),
                _pct(b["kv_utilization"]),
                f"{b['kv_drops_per_s_per_host']:.0f}",
                _ms(b["kv_latency_p99_s"]),
            )
        )
    lines += ["", *remedies_table(runs)]
    f.table = "\n".join(lines)
    from incastlab.plot.kv import drops_and_latency

    f.figures.append(drops_and_latency(plain, capped, paper, out / "riak.png").name)
    return f


def _misses(low: float | None, high: float | None, paper: dict[str, Any]) -> list[str]:
    """A sentence for each range the simulated median misses by more than 2×."""
    out = []
    for name, x, (lo, hi) in (
        ("25–35%", low, paper["low_drops"]),
        ("45–55%", high, paper["high_drops"]),
    ):
        if x is not None and x < lo / 2:
            out += [
                f"At {name} the median ({x:.0f}) is {lo / max(x, 1e-9):.1f}× below the "
                f"article's lower bound ({lo}): the simulated knee is sharper.",
                "",
            ]
        elif x is not None and x > 2 * hi:
            out += [
                f"At {name} the median ({x:.0f}) is {x / hi:.1f}× above the article's "
                f"upper bound ({hi}).",
                "",
            ]
    return out


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def remedies_table(runs: Runs) -> list[str]:
    """The article's remedies at 50% utilization, one row each, as Markdown lines."""
    lines = [
        "Remedies at 50% utilization:",
        "",
        "| remedy | utilization | drops/s/host | timeouts/s | get p50 | get p99 | goodput | "
        "cost (measured) | cost (what it needs) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for stem, name, needs in REMEDIES:
        got = runs.get(stem) or []
        if not got:
            continue
        r = got[0]
        lines.append(
            md_row(
                name,
                _pct(r["kv_utilization"]),
                f"{r['kv_drops_per_s_per_host']:.0f}",
                f"{r['kv_timeouts_per_s']:.1f}",
                _ms(r["kv_latency_p50_s"]),
                _ms(r["kv_latency_p99_s"]),
                f"{r['kv_goodput_bps'] / 1e9:.2f} Gbps",
                _measured_cost(r),
                needs,
            )
        )
    return lines


def _measured_cost(r: Row) -> str:
    """What a remedy costs that the run measured: pauses, spurious timeouts, marks."""
    rep = r["report"]
    secs = max(r["duration_s"] or 0.0, 1e-12)
    parts = []
    if rep.get("pfc_pauses"):
        parts.append(f"{rep['pfc_pauses'] / secs:,.0f} pauses/s")
    spurious = sum(fl.get("spurious_timeouts", 0) for fl in rep.get("flows", []))
    if spurious:
        parts.append(f"{spurious / secs:,.1f} spurious timeouts/s")
    if r.get("ecn_reductions"):
        parts.append(f"{r['ecn_reductions'] / secs:,.0f} ECN window cuts/s")
    return ", ".join(parts) or "-"
