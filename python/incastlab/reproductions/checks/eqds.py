"""Check of EQDS's many-to-one result (Olteanu et al., NSDI 2022, §8.2 and Figure 14): 850
senders into one 10 Gbps receiver, TCP NewReno sharing a drop-tail buffer of 1K or 100K
packets against EQDS, whose receiver credits its senders in turn.

Two sweeps: ``tcp`` (one run per ``topology.buffer``) and ``eqds`` (one run). The columns
read: ``flow_completion_s`` (each flow's completion), ``app_bytes``, ``senders``,
``link_bps``, ``goodput_bps``, ``drops`` and ``params``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from incastlab.plot import COLORS, save_figure
from incastlab.plot import sweep as sweep_plot
from incastlab.reproductions.findings import Findings, Row, Runs, md_row
from incastlab.units import parse_size


def rates_mbps(r: Row) -> list[float]:
    """Each flow's mean throughput, Mbps: its bytes over its completion time (0 unfinished)."""
    size_bits = float(r["app_bytes"]) / int(r["senders"]) * 8
    return sorted(size_bits / t / 1e6 if t else 0.0 for t in r["flow_completion_s"])


def jain(xs: list[float]) -> float:
    """Jain's fairness index: 1 when all are equal, 1/n when one has everything."""
    total, squares = sum(xs), sum(x * x for x in xs)
    return total * total / (len(xs) * squares) if squares else 0.0


def eqds_incast(runs: Runs, paper: dict[str, Any], out: Path) -> Findings:
    import matplotlib.pyplot as plt

    f = Findings()
    small, large = sorted(runs["tcp"], key=lambda r: parse_size(r["params"]["topology.buffer"]))
    eq = runs["eqds"][0]
    n = int(eq["senders"])
    fair = float(eq["link_bps"]) / n / 1e6
    rates = {
        "TCP, 1K-packet buffer": rates_mbps(small),
        "TCP, 100K-packet buffer": rates_mbps(large),
        "EQDS, 15-packet buffer": rates_mbps(eq),
    }
    r_small, r_large, r_eq = rates.values()
    spread = max(abs(r_eq[0] / fair - 1), abs(r_eq[-1] / fair - 1))
    f.claim(
        "EQDS perfectly shares the bottleneck: every flow gets the fair share",
        spread <= paper["eqds_spread"],
        f"flows' mean throughput {r_eq[0]:.2f}–{r_eq[-1]:.2f} Mbps against the fair share "
        f"{fair:.2f} Mbps (10 Gbps / {n}); Jain's index {jain(r_eq):.3f}",
        tolerance=f"every flow within ±{100 * paper['eqds_spread']:g}% of the fair share",
        direction=jain(r_eq) > max(jain(r_small), jain(r_large)),
    )
    starved = sum(x < fair / 2 for x in r_small)
    f.claim(
        "TCP with about one packet of buffer per flow: a large variance, many flows starved",
        jain(r_small) <= paper["small_buffer_jain_max"],
        f"Jain's index {jain(r_small):.3f}; flows' mean throughput {r_small[0]:.2f}–"
        f"{r_small[-1]:.1f} Mbps, {starved} of {n} below half the fair share",
        tolerance=f"Jain's index at most {paper['small_buffer_jain_max']:g} (our reading)",
        direction=jain(r_small) < jain(r_large),
    )
    low = sum(x < fair / 2 for x in r_large)
    f.claim(
        "TCP with about 100 packets of buffer per flow shares evenly, no starvation",
        jain(r_large) >= paper["large_buffer_jain_min"] and low == 0,
        f"Jain's index {jain(r_large):.3f}; slowest flow {r_large[0]:.2f} Mbps, {low} below "
        "half the fair share",
        tolerance=f"Jain's index at least {paper['large_buffer_jain_min']:g} and no flow below "
        "half the fair share (our reading)",
        direction=jain(r_large) > jain(r_small),
    )
    lines = [
        "| run | slowest flow | median | fastest | Jain's index | goodput | drops |",
        "|---|---|---|---|---|---|---|",
    ]
    for (name, xs), r in zip(rates.items(), (small, large, eq), strict=True):
        cells = [f"{xs[0]:.2f} Mbps", f"{xs[len(xs) // 2]:.2f} Mbps", f"{xs[-1]:.1f} Mbps"]
        good = float(r["goodput_bps"]) / float(r["link_bps"])
        lines.append(md_row(name, *cells, f"{jain(xs):.3f}", f"{100 * good:.1f}%", r["drops"]))
    f.table = "\n".join(lines) + (
        f"\n\n{n} senders of 1 MB each into one 10 Gbps receiver; a flow's mean throughput is "
        f"its 1 MB over its completion time (the fair share: {fair:.2f} Mbps). Goodput: the "
        "incast's bytes over its last completion, as a share of the link. Drops: TCP's "
        "dropped packets; EQDS's trimmed packets are not drops, its dropped headers are."
    )
    fig, ax = plt.subplots(figsize=(6, 3.8))
    for i, (name, xs) in enumerate(rates.items()):
        ax.plot(
            xs,
            [100 * (k + 1) / len(xs) for k in range(len(xs))],
            color=COLORS[i],
            lw=1.8,
            label=name,
        )
    ax.axvline(fair, color="0.4", lw=0.8, ls="--")
    ax.set_xscale("log")
    ticks = [t for t in (1, 2, 5, 10, 20, 50, 100, 200) if r_small[0] / 2 <= t <= r_small[-1] * 2]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("flow's mean throughput (Mbps)")
    ax.set_ylabel("CDF (%)")
    sweep_plot.style_axes(ax, f"{n} to 1 at 10 Gbps")
    ax.legend(fontsize=8)
    fig.tight_layout()
    f.figures.append(save_figure(fig, out / "eqds_incast.png").name)
    return f
