"""Figures: goodput versus the number of senders, the picture of incast collapse."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

from incastlab.result import Result
from incastlab.units import format_rate, format_size, format_time

COLORS = ["#1f6feb", "#d1242f", "#1a7f37", "#9a6700", "#8250df", "#bf3989"]


#: A topology file's tables, as its size is told: (table, one of them).
_PARTS = (("switches", "switch"), ("hosts", "host"), ("links", "link"))


def transport_label(scenarios: Sequence[dict[str, Any]], omit: str = "") -> str:
    """Which transport ran, from normalized scenarios: ``tcp (classic profile, reno)``,
    ``ndp``, ``roce (cc dcqcn, go-back-n, lossless)``; values that differ between the
    scenarios joined by ``|``. ``omit`` leaves out a key that varies between series
    (``congestion_control`` or ``cc``, ``profile``, ``transport``)."""

    def values(get: Any, among: Sequence[dict[str, Any]]) -> str:
        return "|".join(dict.fromkeys(str(get(s)) for s in among))

    tcp = [s for s in scenarios if s.get("transport", "tcp") == "tcp"]
    parts = []
    if tcp:
        inner = []
        if omit != "profile":
            inner.append(values(lambda s: s["tcp"]["profile"], tcp) + " profile")
        if omit != "congestion_control":
            inner.append(values(lambda s: s["tcp"]["congestion_control"], tcp))
        parts.append("tcp" + (f" ({', '.join(inner)})" if inner else ""))
    if any(s.get("transport") == "ndp" for s in scenarios):
        parts.append("ndp")
    roce = [s for s in scenarios if s.get("transport") == "roce"]
    if roce:
        varied = omit in ("congestion_control", "cc")
        inner = [] if varied else [values(lambda s: "cc " + s["roce"]["cc"], roce)]
        inner.append(values(lambda s: s["roce"]["recovery"].replace("_", "-"), roce))
        fabric = values(lambda s: "lossless" if s["roce"]["lossless"] else "lossy", roce)
        parts.append(f"roce ({', '.join([*inner, fabric])})")
    swift = [s for s in scenarios if s.get("transport") == "swift"]
    if swift:
        w0 = values(lambda s: f"{s['swift']['initial_window']:g}", swift)
        parts.append(f"swift (W0 {w0} pkts, MTU {values(lambda s: s['swift']['mtu'], swift)} B)")
    homa = [s for s in scenarios if s.get("transport") == "homa"]
    if homa:
        levels = values(lambda s: s["homa"]["priorities"], homa)
        incast = values(lambda s: s["homa"]["incast_threshold"] or "off", homa)
        parts.append(f"homa ({levels} levels, incast optimization {incast})")
    return "" if omit == "transport" else " and ".join(parts)


def flows_line(s: dict[str, Any]) -> str:
    """A flow schedule in a few words: hosts, load and sizes, bursts."""
    f = s["flows"]
    sizes = f["size_cdf"] if isinstance(f["size_cdf"], str) else "own CDF"
    what = f"flows, {s['topology']['senders']} hosts, {100 * f['load']:.0f}% load of {sizes}"
    if f["incast_load"]:
        what += (
            f" + {100 * f['incast_load']:g}% in {f['incast_fan_in']}:1 bursts of "
            f"{format_size(f['incast_size'])}"
        )
    return what


def scenario_line(r: Result, omit: str = "") -> str:
    """One line describing the scenario: its transport, TCP profile and congestion control
    first; ``omit`` names a key that varies between series."""
    s = r.scenario
    t, tcp, w = s["topology"], s["tcp"], s["workload"]
    if w["kind"] == "queries":
        what = (
            f"{w['queries']} Poisson queries of {format_size(w['query_size_min'])}–"
            f"{format_size(w['query_size_max'])} at {100 * w['query_load']:.0f}% load"
        )
    elif w["kind"] == "kv_gets":
        quorum = w["kv_quorum"] or w["kv_replicas"]
        load = (
            f"{w['kv_rate']:g} gets/s per host"
            if w["kv_rate"]
            else f"{100 * w['kv_utilization']:.0f}% utilization"
        )
        what = (
            f"key-value gets, {t['senders']} hosts, R = {w['kv_replicas']}"
            + (f" (quorum {quorum})" if quorum != w["kv_replicas"] else "")
            + f", {format_size(w['value_size'])} values, {load}"
        )
    elif w["kind"] == "shuffle":
        reducers = w["reducers"] or t["senders"]
        window = w["fanout_window"] or "all"
        what = (
            f"shuffle, {t['senders']} hosts, {reducers} reducers, {w['blocks']} map outputs of "
            f"{format_size(w['sru'])} per host and reducer, {window} at once"
        )
    elif w["kind"] == "flows":
        what = flows_line(s)
    elif w["kind"] == "sync_read" and omit in ("sru", "block"):
        what = f"synchronized reads, {w['blocks']} blocks"
    elif w["kind"] == "sync_read":
        unit = f"SRU {format_size(w['sru'])}" if w["sru"] else f"block {format_size(w['block'])}"
        what = f"synchronized reads, {unit}, {w['blocks']} blocks"
    else:
        what = f"incast, {format_size(w['flow_size'])} per flow"
    buf = t["buffer"]
    buffer = format_size(buf["bytes"]) if buf["bytes"] else f"{buf['packets']} pkt"
    if t.get("shared_buffer"):
        buffer = f"{format_size(t['shared_buffer'])} shared"
    elif buf["bytes"] is None and buf["packets"] is None:
        buffer = "unlimited"
    else:
        buffer += "/port"
    parts = {
        "transport": transport_label([s], omit),
        "workload": what,
        "link": format_rate(t["receiver_link"]),
        "rtt": latency_label(r),
        "buffer": buffer,
        "rto_min": f"RTOmin {format_time(tcp['rto_min'])}",
    }
    if s.get("transport") == "ndp":
        nd = s["ndp"]
        parts["buffer"] = f"IW {nd['initial_window']}, {nd['data_queue']}-packet data queues"
        del parts["rto_min"]
    if s.get("transport") in ("roce", "homa"):
        parts["buffer"] += f", MTU {format_size(s[s['transport']]['mtu'])}"
        del parts["rto_min"]
    if s.get("transport") == "swift":
        parts["rto_min"] = f"RTOmin {format_time(s['swift']['rto_min'])}"
    if t.get("kind", "star") != "star":
        parts["link"] += f" · {t['kind'].replace('_', ' ')}"
    if t.get("kind") == "file" and t.get("file"):
        # The file's links carry their own delays and buffers: name its size instead.
        f = t["file"]
        sizes = [(len(f[many]), many, one) for many, one in _PARTS]
        parts["buffer"] = ", ".join(f"{n} {one if n == 1 else many}" for n, many, one in sizes)
    return " · ".join(v for k, v in parts.items() if k != omit and v)


def latency_label(r: Result) -> str:
    """The run's base latency as it was set: the RTT of a star, the longest RTT of a fabric
    that spreads it over its links, and where every link has its own delay the unloaded
    one-way latency the run measured (``topology.rtt`` does not apply there)."""
    t = r.scenario["topology"]
    if t.get("link_delay") or t.get("kind") == "file":
        one_way = r.report.get("base_latency")
        return f"one-way {format_time(one_way)} unloaded" if one_way else "per-link delays"
    if t.get("kind", "star") != "star":
        return f"longest RTT {format_time(t['rtt'])}"
    return f"RTT {format_time(t['rtt'])}"


def _pretty(label: str) -> str:
    return label.replace("sru ", "SRU ").replace("rto_min ", "RTOmin ")


def goodput_vs_senders(
    series: Sequence[tuple[str, Sequence[Result]]],
    path: str | Path,
    *,
    title: str = "Incast goodput collapse",
    varied: str = "",
    model: Sequence[Sequence[tuple[float, ...]]] | None = None,
    model_label: str | None = None,
) -> Path:
    """Goodput (top) and block or flow completion time (bottom) against senders, one line
    per labelled series; ``model[i]``, if given, is the analytical model's (senders, bits per
    second[, the 10% and 90% ends of its interval]) for series i, drawn dashed over the
    simulated points, its interval shaded."""
    fig, (ax, ax2) = plt.subplots(
        2, 1, figsize=(8, 6.4), sharex=True, gridspec_kw={"height_ratios": [3, 2]}
    )
    link = None
    for i, (label, results) in enumerate(series):
        pts = sorted(results, key=lambda r: r.senders)
        if not pts:
            continue
        color = COLORS[i % len(COLORS)]
        n = [r.senders for r in pts]
        label = _pretty(label)
        ax.plot(n, [r.goodput_bps / 1e6 for r in pts], "o-", color=color, lw=2, ms=5, label=label)
        if model is not None and i < len(model) and model[i]:
            rows = sorted(model[i])
            mn, mg = [r[0] for r in rows], [r[1] / 1e6 for r in rows]
            banded = all(len(r) == 4 for r in rows)
            default = "model (10-90% shaded)" if banded else "model"
            name = model_label or (f"{label}: model" if label else default)
            ax.plot(mn, mg, "--", color=color, lw=1.2, alpha=0.8, label=name)
            if banded:
                lo, hi = [r[2] / 1e6 for r in rows], [r[3] / 1e6 for r in rows]
                ax.fill_between(mn, lo, hi, color=color, alpha=0.1, lw=0)
        link = pts[0].link_bps
        times = []
        for r in pts:
            b = r.block_times_s or [x for x in r.flow_completion_s if x is not None]
            times.append(1e3 * (sum(b) / len(b) if b else float("nan")))
        ax2.plot(n, times, "o-", color=color, lw=1.5, ms=4)
        to = [r.timeouts for r in pts]
        if any(to):
            hit = [(x, y) for x, y, k in zip(n, times, to, strict=True) if k > 0]
            ax2.scatter(*zip(*hit, strict=True), marker="x", color=color, s=30, zorder=3)
    if link:
        ax.axhline(link / 1e6, color="0.4", ls="--", lw=1)
        ax.text(
            ax.get_xlim()[1], link / 1e6, " link", va="center", ha="left", color="0.4", fontsize=9
        )
        ax.set_ylim(0, link / 1e6 * 1.08)
    ax.set_ylabel("goodput (Mbps)")
    ax.set_title(title, fontsize=13, loc="left", fontweight="bold", pad=20)
    first = next((r for _, rs in series for r in rs), None)
    if first is not None:
        line = scenario_line(first, varied)
        ax.text(0, 1.025, line, transform=ax.transAxes, fontsize=8.5, color="0.35")
    ax.grid(alpha=0.3)
    if len(series) > 1 or series[0][0] or model:
        ax.legend(frameon=False)
    from incastlab.plot.ticks import log_axis

    ax2.set_yscale("log")
    log_axis(ax2.yaxis)
    ax2.set_ylabel("mean block / flow time (ms)\n× = with timeouts", fontsize=9)
    ax2.set_xlabel("number of senders")
    ax2.grid(alpha=0.3, which="both")
    ax2.xaxis.set_major_locator(MaxNLocator(integer=True))
    for a in (ax, ax2):
        a.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return save_figure(fig, path)


def model_curves(series: Sequence[tuple[str, Sequence[Any]]], path: str | Path) -> Path:
    """Chen Figure 2: per SRU, Eq. 1 (ideal, solid) and Eq. 2 (one RTO per block, dotted)
    against senders, the predicted curve in markers and the onset (Eq. 3) marked."""
    from incastlab import model
    from incastlab.backends.model import rtt_and_rto

    fig, ax = plt.subplots(figsize=(8, 5))
    link = None
    for i, (label, pts) in enumerate(series):
        if not pts:
            continue
        color = COLORS[i % len(COLORS)]
        rtt, rto = rtt_and_rto(pts[0].scenario)
        link = pts[0].link_bps
        n = [p.senders for p in pts]
        ideal = [float(model.ideal_goodput(p.senders, p.sru, link, rtt)) / 1e6 for p in pts]
        bound = [float(model.rto_goodput(p.senders, p.sru, link, rtt, rto)) / 1e6 for p in pts]
        name = label.replace("sru ", "SRU ") if label else f"SRU {format_size(pts[0].sru)}"
        ax.plot(n, ideal, "-", color=color, lw=2, label=f"{name}: ideal (Eq. 1)")
        ax.plot(n, bound, ":", color=color, lw=2, label=f"{name}: RTO-bound (Eq. 2)")
        ax.plot(n, [p.prediction.goodput_bps / 1e6 for p in pts], "o", color=color, ms=4)
        onset = pts[0].onset
        if n[0] <= onset <= n[-1]:
            ax.axvline(onset, color=color, lw=0.8, ls="--", alpha=0.6)
            ax.text(
                onset,
                1.01 + 0.045 * i,
                f" N={onset}",
                color=color,
                fontsize=8,
                transform=ax.get_xaxis_transform(),
            )
    _goodput_axes(ax, link, "Flow-rate model of incast (Chen et al.)", pad=24 + 10 * len(series))
    first = next((p for _, ps in series for p in ps), None)
    if first is not None:
        t, tcp = first.scenario["topology"], first.scenario["tcp"]
        sub = (
            f"{format_rate(t['receiver_link'])} · RTT {format_time(t['rtt'])} · "
            f"RTOmin {format_time(tcp['rto_min'])} · dashed: predicted onset (Eq. 3)"
        )
        ax.text(
            0, 1.03 + 0.045 * len(series), sub, transform=ax.transAxes, fontsize=8.5, color="0.35"
        )
    return _finish_goodput_figure(fig, ax, path)


def expected_max_rto(
    senders: Sequence[int], rto_min: float, delta: float, path: str | Path
) -> Path:
    """Hafeez Figure 4: E[X] (Eq. 6) against senders, ±1 standard deviation (Eq. 7)."""
    import numpy as np

    from incastlab import model

    n = np.asarray(senders)
    ex = model.expected_max_rto(n, rto_min, delta) * 1e3
    sd = np.sqrt(model.var_max_rto(n, rto_min, delta)) * 1e3
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.fill_between(n, ex - sd, ex + sd, color=COLORS[0], alpha=0.15, lw=0, label="± sd (Eq. 7)")
    ax.plot(n, ex, "o-", color=COLORS[0], lw=2, ms=3, label="E[X] (Eq. 6)")
    ax.axhline((rto_min + delta / 2) * 1e3, color="0.4", ls="--", lw=1, label="RTOmin + Δ/2")
    ax.axhline(rto_min * 1e3, color="0.6", ls=":", lw=1, label="RTOmin")
    from incastlab.plot.ticks import log_axis

    ax.set_xscale("log", base=2)
    log_axis(ax.xaxis, base=2)
    ax.set_xlabel("number of senders")
    ax.set_ylabel("largest RTO among senders (ms)")
    ax.set_title(
        f"RTO randomization: RTOmin {rto_min * 1e3:g} ms, Δ {delta * 1e3:g} ms",
        loc="left",
        fontweight="bold",
    )
    ax.grid(alpha=0.3)
    ax.legend(frameon=False, fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return save_figure(fig, path)


def model_vs_sim(
    series: Sequence[tuple[str, Sequence[Any]]],
    simulated: Sequence[Sequence[float]],
    path: str | Path,
) -> Path:
    """The burst model (line) over the simulator's points (markers) against senders, per
    series, with the band between them shaded: where the model disagrees, and by how much."""
    fig, ax = plt.subplots(figsize=(8, 5))
    link = None
    for i, ((label, pts), sim) in enumerate(zip(series, simulated, strict=True)):
        if not pts:
            continue
        color = COLORS[i % len(COLORS)]
        link = pts[0].link_bps
        n = [p.senders for p in pts]
        mod = [p.prediction.goodput_bps / 1e6 for p in pts]
        obs = [g / 1e6 for g in sim]
        name = label.replace("sru ", "SRU ") if label else f"SRU {format_size(pts[0].sru)}"
        ax.plot(n, mod, "-", color=color, lw=2, label=f"{name}: model")
        ax.plot(n, obs, "o", color=color, ms=5, label=f"{name}: simulator")
        ax.fill_between(n, mod, obs, color=color, alpha=0.15, lw=0)
        ends = [p.interval for p in pts]
        if all(e is not None for e in ends):
            lo = [e[0] / 1e6 for e in ends if e is not None]
            hi = [e[1] / 1e6 for e in ends if e is not None]
            ax.plot(n, lo, ":", color=color, lw=1)
            ax.plot(n, hi, ":", color=color, lw=1)
    _goodput_axes(
        ax,
        link,
        "Burst model vs simulator (shaded: gap, dotted: 10-90%)",
        pad=24,
    )
    first = next((p for _, ps in series for p in ps), None)
    if first is not None:
        t, tcp = first.scenario["topology"], first.scenario["tcp"]
        sub = (
            f"{format_rate(t['receiver_link'])} · RTT {format_time(t['rtt'])} · "
            f"RTOmin {format_time(tcp['rto_min'])} · IW {tcp['initial_window']} · "
            f"restart {tcp['cwnd_restart']}"
        )
        ax.text(0, 1.03, sub, transform=ax.transAxes, fontsize=8.5, color="0.35")
    return _finish_goodput_figure(fig, ax, path)


def _goodput_axes(ax: Any, link: float | None, title: str, pad: float) -> None:
    """The model figures' goodput axes: log scale in Mbps against senders, the link's rate
    dashed, the title on the left."""
    if link:
        ax.axhline(link / 1e6, color="0.4", ls="--", lw=1)
    from incastlab.plot.ticks import log_axis

    ax.set_yscale("log")
    log_axis(ax.yaxis)
    ax.set_xlabel("number of senders")
    ax.set_ylabel("goodput (Mbps)")
    ax.set_title(title, loc="left", fontweight="bold", pad=pad)


def _finish_goodput_figure(fig: Any, ax: Any, path: str | Path) -> Path:
    ax.grid(alpha=0.3, which="both")
    ax.legend(frameon=False, fontsize=8)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return save_figure(fig, path)


def save_figure(fig: Any, path: str | Path) -> Path:
    p = Path(path)
    if p.parent and not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p, dpi=130)
    plt.close(fig)
    return p
