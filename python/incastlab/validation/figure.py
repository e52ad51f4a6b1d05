"""The validation grid's figure: goodput against N, facets buffer × RTOmin, hue cc."""

from __future__ import annotations

from pathlib import Path

from incastlab.validation.grid import SIM_SEEDS
from incastlab.validation.table import Validation


def plot(v: Validation, path: Path) -> Path:
    """Goodput against N, facets buffer × RTOmin, hue cc: the kernel's min–max as a band
    (its median as dots), each profile as a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from incastlab.plot import COLORS, save_figure

    g = v.grid
    fig, axes = plt.subplots(
        len(g.buffers),
        len(g.rto_mins),
        figsize=(2.5 + 4.2 * len(g.rto_mins), 1.0 + 3.2 * len(g.buffers)),
        sharex=True,
        sharey=True,
        squeeze=False,
    )
    styles = ["--", ":", "-.", (0, (5, 1, 1, 1))]
    link = _link_mbps(g.link)
    for i, buffer in enumerate(g.buffers):
        for j, rto in enumerate(g.rto_mins):
            ax = axes[i][j]
            for k, cc in enumerate(g.ccs):
                color = COLORS[k % len(COLORS)]
                rows = sorted(
                    (
                        r
                        for r in v.rows
                        if (r.point.buffer, r.point.rto_min, r.point.cc) == (buffer, rto, cc)
                    ),
                    key=lambda r: r.point.senders,
                )
                real = [r for r in rows if r.real]
                if real:
                    n = [r.point.senders for r in real]
                    lo = [(r.real_min or 0) / 1e6 for r in real]
                    hi = [(r.real_max or 0) / 1e6 for r in real]
                    ax.fill_between(n, lo, hi, color=color, alpha=0.18, lw=0)
                    med = [(r.real_median or 0) / 1e6 for r in real]
                    ax.plot(n, med, "o", color=color, ms=4, label=f"{cc}: Linux (min–max)")
                for m, name in enumerate(v.names):
                    pts = [(r.point.senders, r.sim_median(name)) for r in rows]
                    pts = [(n_, s) for n_, s in pts if s is not None]
                    if pts:
                        xs, ys = zip(*pts, strict=True)
                        ax.plot(
                            xs,
                            [y / 1e6 for y in ys],
                            linestyle=styles[m % len(styles)],
                            color=color,
                            lw=1.5,
                            label=f"{cc}: sim {name}",
                        )
            ax.set_xscale("log", base=2)
            ax.set_xticks(list(g.senders))
            ax.set_xticklabels([str(s) for s in g.senders])
            ax.set_title(f"{buffer} port · RTOmin {rto}", fontsize=10)
            ax.grid(alpha=0.3)
            ax.spines[["top", "right"]].set_visible(False)
            if j == 0:
                ax.set_ylabel("goodput (Mbps)")
            if i == len(g.buffers) - 1:
                ax.set_xlabel("senders")
    for row in axes:
        for ax in row:
            ax.axhline(link, color="0.5", ls="--", lw=0.8)
            ax.set_ylim(0, link * 1.08)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center right", frameon=False, fontsize=9)
    fig.suptitle(
        f"Simulator vs Linux {v.kernel.get('release', '')}\n{g.link}, SRU {g.sru}, "
        f"{g.blocks} blocks, {g.repeat} kernel runs and {len(SIM_SEEDS)} seeds per point",
        fontsize=11,
    )
    fig.tight_layout(rect=(0, 0, 0.8, 1))
    return save_figure(fig, path)


def _link_mbps(link: str) -> float:
    from incastlab.units import parse_rate

    return parse_rate(link) / 1e6
