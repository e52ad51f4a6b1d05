"""Checks of the RDMA papers' incast results: RoCE over PFC with no congestion control, DCQCN
(Zhu et al., SIGCOMM 2015) and HPCC (Li et al., SIGCOMM 2019).

Every run is a RoCE run (``transport = "roce"``), one sweep per congestion control, named
by it (``none.toml``, ``dcqcn.toml``, ``hpcc.toml``): ECN marking is configured only where
DCQCN reads it. The columns read, besides the common ones (``pfc_pauses``, ``drops``,
``bottleneck_max_bytes``, ``fct_overhead``, ``flow_completion_s``), are the flow schedule's
FCT slowdown by size: ``fct_slowdown_bucket_bytes`` and ``fct_slowdown_bucket_p95``, its
background flows sorted by size and cut into buckets of equal count, as the HPCC authors'
analysis cuts them for the paper's Figure 11 (analysis/fct_analysis.py, 5% steps).
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from incastlab.plot import COLORS, save_figure
from incastlab.plot import sweep as sweep_plot
from incastlab.reproductions.findings import Findings, Row, Runs, Within, md_row

#: How the congestion controls are named in verdicts, tables and legends.
NAMES = {"none": "no cc (PFC only)", "dcqcn": "DCQCN", "hpcc": "HPCC"}


def _by_cc(runs: Runs) -> dict[str, dict[int, list[Row]]]:
    """Rows by congestion control (the sweep's name), then by sender count (one row per
    seed)."""
    out: dict[str, dict[int, list[Row]]] = defaultdict(lambda: defaultdict(list))
    for cc, rows in runs.items():
        for r in rows:
            out[cc][int(r["senders"])].append(r)
    return out


def _mean(rows: list[Row], col: str) -> float:
    return statistics.fmean(float(r[col] or 0) for r in rows)


def on_wire(r: Row, switches: int = 1) -> float:
    """Bytes on the wire per payload byte of a RoCE run's data packets (its headers, the
    preamble and gap, and HPCC's INT record per switch); 1 for a run without the columns."""
    mtu = r.get("roce.mtu")
    if not mtu:
        return 1.0
    extra = float(r["roce.header_bytes"]) + float(r.get("tcp.phy_overhead") or 0)
    if r.get("roce.cc") == "hpcc":
        extra += switches * float(r["roce.int_hop_bytes"])
    return (float(mtu) + extra) / float(mtu)


def pct(x: float) -> str:
    """A share as a signed percentage, with no "-0.0%" for a rounding below zero."""
    return f"{100 * x:+.1f}%" if abs(x) >= 5e-4 else "+0.0%"


def late(rows: list[Row]) -> float:
    """How much later than optimal the last flow completed, optimal counted on the wire (a
    link busy from the first to the last byte is 0, whatever its frames' headers), over
    the seeds' runs of a star."""
    return statistics.fmean((1 + float(r["fct_overhead"])) / on_wire(r) - 1 for r in rows)


def jain(xs: list[float]) -> float:
    """Jain's fairness index of ``xs`` (1: all equal; 1/n: one takes everything)."""
    if not xs or not any(xs):
        return 0.0
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def rate_fairness(r: Row) -> float:
    """Jain's index of the flows' average rates in an incast of equal flows that start
    together: each flow's rate is its size over its completion, so 1/FCT ranks them alike.
    A flow that never completed counts as rate 0."""
    fcts = r.get("flow_completion_s") or []
    return jain([1.0 / t if t else 0.0 for t in fcts])


def _no_runs(f: Findings, needed: str) -> Findings:
    """The verdict when a comparison has nothing to compare (every point of a side failed)."""
    f.claim(
        "the runs behind the comparison completed",
        False,
        f"no completed run of {needed}",
        tolerance="every congestion control's run at some fan-in",
    )
    return f


def _ratio(a: float, b: float) -> float:
    """a / b, with a run of zero pauses counted as one (a ratio, not infinity)."""
    return max(a, 1.0) / max(b, 1.0)


# --- DCQCN: pauses and fairness under incast -----------------------------------------------


def dcqcn_incast(runs: Runs, paper: dict[str, Any], out: Path) -> Findings:
    """RoCE with and without DCQCN, N:1 incasts over PFC (Zhu et al., SIGCOMM 2015)."""
    f = Findings()
    cc = _by_cc(runs)
    none, dcqcn = cc["none"], cc["dcqcn"]
    ns = sorted(set(none) & set(dcqcn))
    if not ns:
        return _no_runs(f, "no cc and DCQCN at a common fan-in")
    lossless = [n for n in ns if _mean(none[n], "drops") == 0 and _mean(dcqcn[n], "drops") == 0]
    f.claim(
        "PFC keeps RoCE lossless under incast, with or without DCQCN",
        lossless == ns,
        f"no drop at N = {', '.join(map(str, lossless)) or 'none'} of {ns}",
        tolerance="0 drops at every N",
    )
    pauses = {n: _mean(none[n], "pfc_pauses") for n in ns}
    grow = [n for n in ns if n >= paper["pauses_from"]]
    rising = all(pauses[b] >= 0.9 * pauses[a] for a, b in itertools.pairwise(grow))
    f.claim(
        "without congestion control PFC is the only brake: pauses at every N from "
        f"{paper['pauses_from']} on, growing with N",
        rising and all(pauses[n] > 0 for n in grow),
        ", ".join(f"{pauses[n]:.0f} at {n}" for n in grow),
        tolerance="pauses > 0 at each N and none fewer than 0.9× the last N's",
        direction=pauses[grow[-1]] > pauses[grow[0]] if grow else False,
    )
    for n in paper["cut_at"]:
        cut = _ratio(pauses[n], _mean(dcqcn[n], "pfc_pauses"))
        f.claim(
            f"DCQCN cuts PFC pauses against no congestion control at {n}:1",
            cut >= paper["pause_cut"],
            f"{cut:.3g}× fewer ({pauses[n]:.0f} → {_mean(dcqcn[n], 'pfc_pauses'):.0f})",
            tolerance=f"at least {paper['pause_cut']}× fewer",
            direction=cut > 1,
        )
    fair = {n: statistics.fmean(rate_fairness(r) for r in dcqcn[n]) for n in ns}
    worst = min(fair, key=lambda n: fair[n])
    f.number(
        "DCQCN gives each sender of the incast its fair share (Jain's index of their rates)",
        fair[worst],
        1.0,
        Within(abs=1.0 - paper["jain_min"]),
        direction=fair[worst] >= paper["jain_shape"],
        shown=lambda x: f"{x:.3f}",
        where=f" (worst, N = {worst})",
        ref="a fair share's",
    )
    for name, rows in (("no cc", none), ("DCQCN", dcqcn)):
        over = {n: late(rows[n]) for n in ns}
        at = max(over, key=lambda n: over[n])
        f.claim(
            f"{name}: the receiver's link stays busy (last completion near optimal)",
            over[at] <= paper["overhead_max"],
            f"at most {pct(over[at])} over optimal (N = {at})",
            tolerance=f"at most {100 * paper['overhead_max']:.0f}% over optimal at every N",
            direction=over[at] <= 3 * paper["overhead_max"],
        )
    lines = [
        "| N | pauses, no cc | pauses, DCQCN | Jain, no cc | Jain, DCQCN | over optimal, "
        "no cc | DCQCN |",
        "|---|---|---|---|---|---|---|",
    ]
    for n in ns:
        lines.append(
            md_row(
                n,
                f"{pauses[n]:.0f}",
                f"{_mean(dcqcn[n], 'pfc_pauses'):.0f}",
                f"{statistics.fmean(rate_fairness(r) for r in none[n]):.3f}",
                f"{fair[n]:.3f}",
                pct(late(none[n])),
                pct(late(dcqcn[n])),
            )
        )
    f.table = "\n".join(lines) + (
        "\n\nOver optimal: the last completion against every flow's bytes on the wire (frames "
        "with their headers, preamble and gap) at the link's rate."
    )
    f.figures.append(_dcqcn_figure(none, dcqcn, ns, out))
    return f


def _dcqcn_figure(
    none: dict[int, list[Row]], dcqcn: dict[int, list[Row]], ns: list[int], out: Path
) -> str:
    import matplotlib.pyplot as plt

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for i, (name, rows) in enumerate((("no cc (PFC only)", none), ("DCQCN", dcqcn))):
        ax.plot(
            ns, [max(_mean(rows[n], "pfc_pauses"), 0.5) for n in ns], "o-", color=COLORS[i],
            label=name,
        )  # fmt: skip
        fair = [statistics.fmean(rate_fairness(r) for r in rows[n]) for n in ns]
        ax2.plot(ns, fair, "o-", color=COLORS[i], label=name)
    for a in (ax, ax2):
        a.set_xscale("log", base=2)
        a.set_xlabel("senders (N:1 incast)")
        a.legend(frameon=False, fontsize=9)
    ax.set_yscale("log")
    ax.set_ylabel("PFC pauses sent")
    ax2.set_ylim(0, 1.05)
    ax2.set_ylabel("Jain's index of the senders' rates")
    sweep_plot.style_axes(ax, "PFC pauses under incast", "0 drawn at 0.5")
    sweep_plot.style_axes(ax2, "Fairness among the incast's senders")
    fig.tight_layout()
    return save_figure(fig, out / "dcqcn_incast.png").name


# --- PFC's unfairness, and DCQCN's cure ---------------------------------------------------


def sender_shares(r: Row) -> list[float]:
    """Each sender's average rate over its flow's life, as a share of the receiver's link
    (equal flows: app_bytes / senders each; a flow not completed counts 0)."""
    size_bits = 8 * float(r["app_bytes"]) / int(r["senders"])
    return [size_bits / t / float(r["link_bps"]) if t else 0.0 for t in r["flow_completion_s"]]


def pfc_unfairness(runs: Runs, paper: dict[str, Any], out: Path) -> Findings:
    """A sender beside the receiver against three behind one spine port, over PFC with no
    congestion control and with DCQCN (Zhu et al., SIGCOMM 2015)."""
    f = Findings()
    by = {c: rows[0] for c, rows in runs.items() if rows}
    if "none" not in by or "dcqcn" not in by:
        return _no_runs(f, "both no cc and DCQCN")
    k = int(paper["local_sender"])
    share = {c: sender_shares(by[c]) for c in ("none", "dcqcn")}
    fct = {c: [t or math.inf for t in by[c]["flow_completion_s"]] for c in ("none", "dcqcn")}
    f.claim(
        "PFC keeps the fabric lossless",
        by["none"]["drops"] == 0 and by["dcqcn"]["drops"] == 0,
        f"{by['none']['drops']} drops without cc, {by['dcqcn']['drops']} with DCQCN",
        tolerance="0 drops",
    )
    fair = paper["fair_share"]
    f.number(
        "with PFC alone the sender beside the receiver takes its port's share, half the link",
        share["none"][k],
        paper["pfc_local_share"],
        Within(rel=paper["share_rel"]),
        direction=share["none"][k] > 1.5 * fair,
        shown=lambda x: f"{100 * x:.0f}%",
        ref="the port-fair share,",
    )
    mean = {c: statistics.fmean(share[c]) for c in share}
    f.number(
        "with DCQCN it gets no more than a flow's fair share (its rate over the flows' mean)",
        share["dcqcn"][k] / mean["dcqcn"],
        1.0,
        Within(rel=paper["share_rel"]),
        direction=share["dcqcn"][k] / mean["dcqcn"] < share["none"][k] / mean["none"],
        shown=lambda x: f"{x:.2f}×",
        ref="the fair share,",
    )
    spread = {c: max(fct[c]) / min(fct[c]) for c in fct}
    f.claim(
        "with DCQCN the four flows finish together",
        spread["dcqcn"] <= paper["finish_spread"],
        f"last over first completion {spread['dcqcn']:.2f}× (without cc {spread['none']:.2f}×)",
        tolerance=f"at most {paper['finish_spread']}×",
        direction=spread["dcqcn"] < spread["none"],
    )
    lines = ["| sender | where | no cc | DCQCN |", "|---|---|---|---|"]
    for i in range(len(share["none"])):
        where = "beside the receiver" if i == k else "behind the spine"
        lines.append(
            md_row(i, where, f"{100 * share['none'][i]:.1f}%", f"{100 * share['dcqcn'][i]:.1f}%")
        )
    f.table = "\n".join(lines) + (
        "\n\nEach sender's average rate over its flow's life, as a share of the receiver's link."
    )
    f.figures.append(_shares_figure(share, k, fair, float(by["none"]["link_bps"]), out))
    return f


def _shares_figure(
    share: dict[str, list[float]], k: int, fair: float, link: float, out: Path
) -> str:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    n = len(share["none"])
    for i, c in enumerate(("none", "dcqcn")):
        xs = [j + (i - 0.5) * 0.4 for j in range(n)]
        ax.bar(xs, [link * x / 1e9 for x in share[c]], 0.4, color=COLORS[i], label=NAMES[c])
    ax.axhline(link * fair / 1e9, color="0.4", lw=0.8, ls="--")
    ax.set_xticks(range(n), [f"sender {j}" + (" (local)" if j == k else "") for j in range(n)])
    ax.set_ylabel("average rate (Gbps)")
    sweep_plot.style_axes(ax, "PFC is port-fair, DCQCN flow-fair", "dashed: the fair share")
    ax.legend(frameon=False, fontsize=9)
    fig.tight_layout()
    return save_figure(fig, out / "pfc_unfairness.png").name


# --- HPCC: the incast microbenchmark ------------------------------------------------------


def hpcc_incast(runs: Runs, paper: dict[str, Any], out: Path) -> Findings:
    """N:1 incasts of the HPCC paper's incast flows: HPCC against DCQCN and no cc."""
    f = Findings()
    cc = _by_cc(runs)
    ns = sorted(set(cc["hpcc"]) & set(cc["dcqcn"]) & set(cc["none"]))
    if not ns:
        return _no_runs(f, "no cc, DCQCN and HPCC at a common fan-in")
    big = max(ns)
    pause = {c: {n: _mean(cc[c][n], "pfc_pauses") for n in ns} for c in NAMES}
    peak = {c: {n: _mean(cc[c][n], "bottleneck_max_bytes") for n in ns} for c in NAMES}
    over = {c: {n: late(cc[c][n]) for n in ns} for c in NAMES}
    h, d, z = pause["hpcc"][big], pause["dcqcn"][big], pause["none"][big]
    f.claim(
        f"HPCC absorbs a {big}:1 incast with (almost) no PFC pause",
        h <= paper["hpcc_pause_share"] * max(z, 1.0),
        f"{h:.0f} pauses (DCQCN {d:.0f}, no cc {z:.0f})",
        tolerance=f"at most {100 * paper['hpcc_pause_share']:g}% of no cc's pauses",
        direction=h < d,
    )
    f.claim(
        f"DCQCN, reacting to ECN a round trip late, does pause the fabric at {big}:1",
        d > 0,
        f"{d:.0f} pauses with DCQCN, {h:.0f} with HPCC",
        tolerance="at least one pause",
        direction=d > h,
    )
    cut = max(peak["dcqcn"][big], 1.0) / max(peak["hpcc"][big], 1.0)
    f.claim(
        f"HPCC's peak queue at the incast port is far below DCQCN's at {big}:1",
        cut >= paper["queue_cut"],
        f"{peak['hpcc'][big] / 1e6:.3g} MB against {peak['dcqcn'][big] / 1e6:.3g} MB "
        f"({cut:.3g}× lower)",
        tolerance=f"at least {paper['queue_cut']}× lower",
        direction=cut > 1,
    )
    worst = max(ns, key=lambda n: over["hpcc"][n])
    # HPCC aims at η of the link; at worst an incast's link runs at η throughout.
    aim = 1.0 / paper["eta"] - 1.0
    f.claim(
        "HPCC keeps the receiver's link busy through the incast (at least η of it)",
        over["hpcc"][worst] <= aim + paper["overhead_slack"],
        f"{pct(over['hpcc'][worst])} over optimal (worst, N = {worst})",
        tolerance=f"at most 1/η − 1 + {100 * paper['overhead_slack']:g} points = "
        f"{100 * (aim + paper['overhead_slack']):.1f}% over optimal",
        direction=over["hpcc"][worst] <= aim + 3 * paper["overhead_slack"],
    )
    lines = ["| N | cc | PFC pauses | peak queue | over optimal |", "|---|---|---|---|---|"]
    for n in ns:
        for c in NAMES:
            lines.append(
                md_row(
                    n,
                    NAMES[c],
                    f"{pause[c][n]:.0f}",
                    f"{peak[c][n] / 1e3:.0f} KB",
                    pct(over[c][n]),
                )
            )
    f.table = "\n".join(lines)
    f.figures.append(_bars_figure(ns, pause, peak, over, out))
    return f


def _bars_figure(
    ns: list[int],
    pause: dict[str, dict[int, float]],
    peak: dict[str, dict[int, float]],
    late: dict[str, dict[int, float]],
    out: Path,
) -> str:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8))
    width = 0.8 / len(NAMES)
    for i, c in enumerate(NAMES):
        xs = [j + (i - 1) * width for j in range(len(ns))]
        axes[0].bar(xs, [max(pause[c][n], 0.5) for n in ns], width, color=COLORS[i], label=NAMES[c])
        axes[1].bar(xs, [peak[c][n] / 1e6 for n in ns], width, color=COLORS[i])
        busy = [min(100.0, 100 / (1 + late[c][n])) for n in ns]
        axes[2].bar(xs, busy, width, color=COLORS[i])
    for ax, (title, unit) in zip(
        axes,
        (("PFC pauses", "pauses (0 drawn at 0.5)"), ("Peak incast-port queue", "MB"),
         ("Receiver's link busy", "% of the incast")),
        strict=True,
    ):  # fmt: skip
        ax.set_xticks(range(len(ns)), [f"{n}:1" for n in ns])
        ax.set_ylabel(unit)
        sweep_plot.style_axes(ax, title)
    axes[0].set_yscale("log")
    axes[2].set_ylim(0, 105)
    axes[0].legend(frameon=False, fontsize=8)
    fig.tight_layout()
    return save_figure(fig, out / "hpcc_incast.png").name


# --- HPCC: FCT slowdown by flow size, background plus incast -------------------------------


def p95_by_size(rows: list[Row]) -> list[tuple[int, float]]:
    """(largest flow, 95th-percentile slowdown) of each background size bucket, the buckets'
    slowdowns averaged over the seeds' runs."""
    if not rows:
        return []
    tops = [int(b) for b in rows[0]["fct_slowdown_bucket_bytes"]]
    p95s = [[float(v) for v in r["fct_slowdown_bucket_p95"]] for r in rows]
    return [(t, statistics.fmean(p[i] for p in p95s)) for i, t in enumerate(tops)]


def hpcc_fct_slowdown(runs: Runs, paper: dict[str, Any], out: Path) -> Findings:
    """Background flows' 95th-percentile FCT slowdown by size with Poisson incasts added,
    HPCC against DCQCN (Li et al., SIGCOMM 2019, Figure 11a)."""
    f = Findings()
    by = {c: runs.get(c, []) for c in NAMES}
    if not by["dcqcn"] or not by["hpcc"]:
        return _no_runs(f, "both DCQCN and HPCC")
    curves = {c: p95_by_size(by[c]) for c in ("dcqcn", "hpcc")}
    short = [
        (top, d, h)
        for (top, d), (_, h) in zip(curves["dcqcn"], curves["hpcc"], strict=True)
        if top <= paper["short_bytes"]
    ]
    top, d, h = max(short, key=lambda t: t[1]) if short else (0, math.nan, math.nan)
    cut = 1.0 - h / d if short else 0.0
    floor = paper["short_cut"] - paper["short_cut_slack"]
    f.claim(
        f"HPCC shortens the short flows' (≤ {paper['short_bytes'] // 1000} KB) p95 "
        "completion against DCQCN (where DCQCN is worst)",
        cut >= floor,
        f"{100 * cut:.0f}% shorter ({d:.3g} → {h:.3g} for flows ≤ {_kb(top)}) against "
        f"the paper's up to {100 * paper['short_cut']:.0f}%",
        tolerance=f"at least {100 * floor:.0f}% shorter",
        direction=cut > 0,
    )
    (_, dl), (_, hl) = curves["dcqcn"][-1], curves["hpcc"][-1]
    f.number(
        "HPCC does not starve the longest flows (p95 slowdown, HPCC over DCQCN)",
        hl / dl,
        1.0,
        Within(factor=paper["long_factor"]),
        direction=hl / dl <= 2 * paper["long_factor"],
        shown=lambda x: f"{x:.2f}×",
        where=f" ({dl:.3g} → {hl:.3g})",
        ref="parity,",
    )
    hp, dp = _mean(by["hpcc"], "pfc_pauses"), _mean(by["dcqcn"], "pfc_pauses")
    f.claim(
        "the incasts pause DCQCN's fabric, hardly HPCC's",
        hp <= paper["hpcc_pause_share"] * max(dp, 1.0),
        f"{hp:.0f} PFC pauses with HPCC, {dp:.0f} with DCQCN",
        tolerance=f"HPCC's at most {100 * paper['hpcc_pause_share']:g}% of DCQCN's",
        direction=hp < dp,
    )
    lines = ["| flows up to | DCQCN p95 | HPCC p95 |", "|---|---|---|"]
    for (t, dv), (_, hv) in zip(curves["dcqcn"], curves["hpcc"], strict=True):
        lines.append(md_row(_kb(t), f"{dv:.3g}", f"{hv:.3g}"))
    f.table = "\n".join(lines)
    f.figures.append(_slowdown_figure(curves, out))
    return f


def _slowdown_figure(curves: dict[str, list[tuple[int, float]]], out: Path) -> str:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.2))
    for i, c in enumerate(("dcqcn", "hpcc")):
        pts = curves[c]
        ax.plot(range(len(pts)), [v for _, v in pts], "o-", color=COLORS[i + 1], label=NAMES[c])
    pts = curves["dcqcn"]
    ax.set_xticks(range(len(pts)), [_size(t) for t, _ in pts], rotation=60, fontsize=7)
    ax.set_yscale("log")
    ax.set_xlabel("flow size (each tick: the largest of an equal share of the flows)")
    ax.set_ylabel("95th-percentile FCT slowdown")
    sweep_plot.style_axes(ax, "Background flows' slowdown with incasts added")
    ax.legend(frameon=False, fontsize=9)
    fig.tight_layout()
    return save_figure(fig, out / "fct_slowdown.png").name


def _kb(b: int) -> str:
    """A flow size in KB, with a digit or two below 10 KB (Hadoop's groups of short flows
    end at a few hundred bytes)."""
    return f"{b / 1e3:,.0f} KB" if b >= 10_000 else f"{b / 1e3:.2g} KB"


def _size(b: int) -> str:
    return f"{b / 1e6:.3g}M" if b >= 1e6 else f"{b / 1e3:.3g}K"
