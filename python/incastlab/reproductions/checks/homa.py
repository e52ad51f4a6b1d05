"""Check of Homa's incast control (Montazeri, Li, Alizadeh, Ousterhout, SIGCOMM 2018, §3.6 and
§5.1, Figure 10): the throughput of one client receiving N concurrent 10 KB responses, with and
without the control, and the buffer a 1000-fold incast takes.

Two sweeps of Homa runs, one row per fan-in N: ``none`` (no incast control) and ``control``
(``homa.incast_threshold`` set). The columns read: ``senders``, ``goodput_bps``, ``link_bps``,
``drops``, ``timeouts`` and ``bottleneck_max_bytes``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from incastlab.plot import COLORS, save_figure
from incastlab.plot import sweep as sweep_plot
from incastlab.reproductions.findings import Findings, Row, Runs, Within, md_row


def _by_n(rows: list[Row]) -> dict[int, Row]:
    return {int(r["senders"]): r for r in rows}


def _gbps(r: Row) -> float:
    return float(r["goodput_bps"]) / 1e9


def _drops(r: Row) -> int:
    return int(r["drops"] or 0)


def _queue(r: Row) -> float:
    """The client's port at its most, bytes."""
    return float(r["bottleneck_max_bytes"] or 0)


def _control_claims(
    f: Findings, none: dict[int, Row], ctl: dict[int, Row], paper: dict[str, Any]
) -> None:
    """With the control: line rate at every N, and a bounded buffer at a 1000-fold incast."""
    ns = sorted(ctl)
    low = min(ns, key=lambda n: _gbps(ctl[n]))
    trough = min(none, key=lambda n: _gbps(none[n]))
    helps = all(_gbps(ctl[n]) >= _gbps(none[n]) for n in ns if n in none) and _gbps(
        ctl[trough]
    ) >= 1.25 * _gbps(none[trough])
    f.number(
        f"With incast control the client receives near line rate from {ns[0]} to {ns[-1]} "
        "concurrent responses (Figure 10)",
        _gbps(ctl[low]),
        float(paper["control_gbps"]),
        Within(rel=float(paper["control_rel"])),
        direction=helps,
        shown=lambda x: f"{x:.2f} Gbps",
        where=f" at its lowest (N = {low})",
    )
    n = int(paper["queue_n"])
    q, bound = _queue(ctl[n]), float(paper["queue_bytes"])
    off = f" ({q / bound:.3g}× the bound)" if q > 2 * bound else ""
    without = f" (without control {_queue(none[n]) / 1e3:.0f} KB)" if n in none else ""
    f.claim(
        f"With incast control a {n}-fold incast takes at most a few hundred KB of the "
        "switch's buffer (§3.6)",
        q <= bound,
        f"{q / 1e3:.0f} KB at the client's port{without}{off}",
        tolerance=f"at most {bound / 1e3:.0f} KB",
        direction=n in none and q < 0.5 * _queue(none[n]),
    )


def _none_claims(f: Findings, none: dict[int, Row], paper: dict[str, Any]) -> None:
    """Without the control: the onset of drops, the trough and the recovery."""
    ns = sorted(none)
    clean = [n for n in ns if _drops(none[n]) == 0]
    onset = max(clean) if clean else 0
    f.number(
        "Without incast control Homa takes about 300 concurrent responses before drops "
        "degrade it (§5.1)",
        float(onset),
        float(paper["onset"]),
        Within(factor=float(paper["onset_factor"])),
        direction=onset > 0 and any(_drops(none[n]) > 0 for n in ns if n > onset),
        shown=lambda x: f"{x:.0f}",
        where=" responses without a drop",
    )
    points = {int(k): float(v) for k, v in paper["none_gbps"].items()}
    k = float(paper["none_factor"])
    ours = {n: _gbps(none[n]) for n in points if n in none}
    worst = max(ours, key=lambda n: max(ours[n] / points[n], points[n] / ours[n]))
    within = all(Within(factor=k).holds(ours[n], points[n]) for n in ours)
    after = [n for n in ns if n > onset]
    shape = (
        onset > 0
        and bool(after)
        and _gbps(none[after[0]]) < 0.5 * _gbps(none[onset])
        and _gbps(none[after[-1]]) > _gbps(none[after[0]])
    )
    f.claim(
        "Without incast control the throughput collapses past the onset and recovers as N "
        "grows (Figure 10)",
        within and len(ours) == len(points),
        ", ".join(f"{ours[n]:.2f} Gbps at {n} (the paper's {points[n]:g})" for n in sorted(ours))
        + f"; furthest at N = {worst}",
        tolerance=f"within {k:g}× at each of N = {', '.join(str(n) for n in sorted(points))}",
        direction=shape,
    )


def homa_incast(runs: Runs, paper: dict[str, Any], out: Path) -> Findings:
    import matplotlib.pyplot as plt

    f = Findings()
    none, ctl = _by_n(runs["none"]), _by_n(runs["control"])
    _control_claims(f, none, ctl, paper)
    _none_claims(f, none, paper)
    lines = [
        "| N | no control: Gbps | drops | resend waits | peak queue | "
        "control: Gbps | drops | resend waits | peak queue |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for n in sorted(set(none) | set(ctl)):
        cells: list[object] = [n]
        for rows in (none, ctl):
            r = rows.get(n)
            cells += (
                [f"{_gbps(r):.2f}", _drops(r), int(r["timeouts"] or 0), f"{_queue(r) / 1e3:.0f} KB"]
                if r
                else ["-"] * 4
            )
        lines.append(md_row(*cells))
    f.table = "\n".join(lines) + (
        "\n\nGbps: the responses' bytes over the time from the first request to the last "
        "response (goodput). Resend waits: resend timer expiries (5 ms each). Peak queue: the "
        "client's switch port at its most (its buffer: 3 MB)."
    )
    fig, (ax, aq) = plt.subplots(1, 2, figsize=(10, 3.8))
    for i, (label, rows) in enumerate((("no incast control", none), ("incast control", ctl))):
        ns = sorted(rows)
        ax.plot(ns, [_gbps(rows[n]) for n in ns], "o-", color=COLORS[i], lw=1.8, label=label)
        aq.plot(ns, [_queue(rows[n]) / 1e3 for n in ns], "o-", color=COLORS[i], lw=1.8)
    points = {int(k): float(v) for k, v in paper["none_gbps"].items()}
    ax.plot(
        sorted(points),
        [points[n] for n in sorted(points)],
        "s",
        mfc="none",
        color=COLORS[0],
        label="paper, no control (Fig. 10)",
    )
    ax.axhline(float(paper["control_gbps"]), color=COLORS[1], lw=0.8, ls="--")
    ax.set_xlabel("concurrent responses N")
    ax.set_ylabel("throughput (Gbps)")
    ax.set_ylim(0, 10.5)
    ax.legend(fontsize=8)
    sweep_plot.style_axes(ax, "Throughput at the client")
    aq.axhline(float(paper["queue_bytes"]) / 1e3, color="0.4", lw=0.8, ls="--")
    aq.set_xlabel("concurrent responses N")
    aq.set_ylabel("peak queue at the client's port (KB)")
    sweep_plot.style_axes(aq, "Buffer taken")
    fig.tight_layout()
    f.figures.append(save_figure(fig, out / "homa_incast.png").name)
    return f
