"""Figures of a capture: the receiver's ingress at 1 ms, 10 ms and 1 s (the averages that
hide the bursts), and each flow's sequence over time in the longest block."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from incastlab.plot import COLORS
from incastlab.trace import TraceReport
from incastlab.units import format_rate


def _window_rates(wire: np.ndarray, step_ns: int, window_ns: int) -> tuple[np.ndarray, np.ndarray]:
    """Rates over aligned windows of ``window_ns``; the last, partial one over its own length."""
    k = max(1, window_ns // step_ns)
    pad = -len(wire) % k
    sums = np.concatenate([wire, np.zeros(pad)]).reshape(-1, k).sum(axis=1)
    lengths = np.full(len(sums), k, dtype=float)
    if pad:
        lengths[-1] = k - pad
    t = np.arange(len(sums)) * (k * step_ns) / 1e9
    return t, sums * 8e9 / (lengths * step_ns)


def trace_figure(t: TraceReport, path: str | Path) -> Path:
    """Two panels: ingress rate over time at three averaging windows; the worst block's
    per-flow sequence/time plot, resends in red."""
    r = t.report
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 8), constrained_layout=True)
    wire = np.asarray(r["intervals"]["wire_bytes"], dtype=float)
    step = int(r["interval_ns"])
    for (window, label), color in zip(
        [(1_000_000, "1 ms"), (10_000_000, "10 ms"), (1_000_000_000, "1 s")], COLORS, strict=False
    ):
        if window < step:
            continue
        x, y = _window_rates(wire, step, window)
        # Each window's value held to its end, the last one's included.
        end = min(x[-1] + window / 1e9, len(wire) * step / 1e9)
        x, y = np.append(x, end), np.append(y, y[-1])
        top.step(x, y / 1e6, where="post", color=color, label=f"{label} average", lw=1.0)
    peaks = ", ".join(
        f"{row['window_ns'] / 1e6:g} ms peak/avg {row['peak_to_avg']:.1f}" for row in r["rates"]
    )
    top.set_title(f"ingress into {r['receiver']}: {peaks}", fontsize=10)
    top.set_xlabel("time from the first frame (s)")
    top.set_ylabel("Mbps")
    top.legend(loc="upper right", fontsize=8)
    w = r.get("worst_block")
    if w and w["t_ns"]:
        tt = np.asarray(w["t_ns"], dtype=float) / 1e6
        seq = np.asarray(w["seq"], dtype=float) / 1e3
        flow = np.asarray(w["flow"])
        retx = np.asarray(w["retx"], dtype=bool)
        flows = np.unique(flow)
        for i, f in enumerate(flows):
            m = flow == f
            bottom.plot(tt[m & ~retx], seq[m & ~retx], ".", ms=2, color=COLORS[i % len(COLORS)])
        bottom.plot(tt[retx], seq[retx], "x", ms=4, color="#d1242f", label="resent")
        block = next((b for b in r["blocks"] if b["block"] == w["block"]), None)
        what = (
            f"block {w['block']}: {block['duration_ns'] / 1e6:.1f} ms, {block['rtos']} timeouts, "
            f"{format_rate(block['goodput_bps'])}"
            if block
            else f"block {w['block']}"
        )
        bottom.set_title(f"longest {what}; {len(flows)} flows", fontsize=10)
        if retx.any():
            bottom.legend(loc="lower right", fontsize=8)
    bottom.set_xlabel("time from the block's first request (ms)")
    bottom.set_ylabel("sequence offset (KB)")
    fig.suptitle(r["verdict"], fontsize=9, wrap=True)
    out = Path(path)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out
