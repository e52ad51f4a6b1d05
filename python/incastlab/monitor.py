"""What ``incast monitor`` makes of a host's counters: per-second windows with the average
and peak rate at the sampling interval, the share of intervals at line rate, the kernel's TCP
counters over the second, and a verdict column, as Fritchie read his Riak cluster's switch
(S. L. Fritchie, "TCP incast: What is it? How can it affect Erlang applications?", blog
post, measurements of December 2011: one-second averages of 200-300 Mbps hiding millisecond
bursts at line rate).

The sampling is Rust (``incastlab._core.Monitor``); this module only shapes its samples.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: A window is "bursty" when its peak at the interval is this many times its average.
BURST_RATIO = 3.0
#: An interval counts as at line rate above this share of it.
LINE_SHARE = 0.9
#: Timeouts in one second that, with the link mostly idle, suggest incast.
SYNC_TIMEOUTS = 3
#: "Mostly idle": the second's average below this share of its peak.
IDLE_AVERAGE = 0.5
#: The per-sample columns, in the Parquet file's order.
SAMPLE_COLUMNS = (
    "t_ns",
    "late_ns",
    "dt_ns",
    "rx_bytes",
    "tx_bytes",
    "rx_packets",
    "tx_packets",
    "drops",
)
#: TCP counters kept (TcpExt / Tcp of /proc/net/netstat and snmp).
TCP_COUNTERS = (
    "timeouts",
    "loss_probes",
    "spurious_rtos",
    "retrans_segs",
    "delivered_ce",
    "recoveries",
)


@dataclass
class MonitorRun:
    """Everything one monitoring run gathered."""

    iface: str
    netns: str | None
    interval_ns: int
    direction: str = "rx"
    line_bps: float | None = None
    samples: dict[str, list[int]] = field(default_factory=lambda: {c: [] for c in SAMPLE_COLUMNS})
    tcp: list[dict[str, int]] = field(default_factory=list)
    #: The interface's qdisc counters read about once a second: (t_ns, drops, backlog bytes).
    qdisc: list[tuple[int, int, int]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    cpu_ns: int = 0
    realtime: bool = False
    version: str = ""

    def add(self, batch: dict[str, Any]) -> None:
        for c in SAMPLE_COLUMNS:
            self.samples[c].extend(batch["samples"][c])
        self.tcp.extend(batch["tcp"])
        self.notes.extend(batch["notes"])
        self.realtime = self.realtime or batch.get("realtime", False)
        if batch["finished"]:
            self.error = batch["error"]
            self.cpu_ns = batch["cpu_ns"]

    def rates(self) -> np.ndarray:
        """Rate of each interval, bits per second (the direction watched)."""
        b = np.asarray(self.samples[f"{self.direction}_bytes"], dtype=float)
        dt = np.asarray(self.samples["dt_ns"], dtype=float)
        rates: np.ndarray = np.divide(b * 8e9, dt, out=np.zeros_like(b), where=dt > 0)
        return rates


def qdisc_counters(iface: str, netns: str | None) -> tuple[int, int] | None:
    """Drops and backlog (bytes) summed over the interface's qdiscs, from ``tc -s -j``
    (iproute2 over netlink); None where tc is missing or says nothing."""
    import shutil
    import subprocess

    if shutil.which("tc") is None:
        return None
    argv = ["tc", "-s", "-j", "qdisc", "show", "dev", iface]
    if netns:
        argv = ["ip", "netns", "exec", netns, *argv]
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=2).stdout
        qdiscs = json.loads(out or "[]")
    except (subprocess.SubprocessError, OSError, ValueError):
        return None
    if not qdiscs:
        return None
    return sum(int(q.get("drops", 0)) for q in qdiscs), sum(
        int(q.get("backlog", 0)) for q in qdiscs
    )


def _qdisc_drops(run: MonitorRun, lo: int, hi: int) -> int | None:
    """Qdisc drops between the readings that bracket [lo, hi) nanoseconds."""
    before = [d for t, d, _ in run.qdisc if t <= lo]
    after = [d for t, d, _ in run.qdisc if t <= hi]
    if not before or not after:
        return None
    return after[-1] - before[-1]


def line_rate(iface: str) -> float | None:
    """The interface's speed from sysfs (host namespace; veths and loopback have none)."""
    try:
        mbps = int(Path(f"/sys/class/net/{iface}/speed").read_text().strip())
    except (OSError, ValueError):
        return None
    return mbps * 1e6 if mbps > 0 else None


def _tcp_delta(tcp: list[dict[str, int]], lo: int, hi: int) -> dict[str, int]:
    """Counter changes between the readings that bracket [lo, hi) nanoseconds."""
    before = [c for c in tcp if c["t_ns"] <= lo]
    after = [c for c in tcp if c["t_ns"] <= hi]
    if not before or not after:
        return {k: 0 for k in TCP_COUNTERS}
    a, b = before[-1], after[-1]
    return {k: b[k] - a[k] for k in TCP_COUNTERS}


def verdict(avg: float, peak: float, at_line: float | None, timeouts: int) -> str:
    """The verdict column: synchronized timeouts over an idle link first, then bursts."""
    if timeouts >= SYNC_TIMEOUTS and peak > 0 and avg < IDLE_AVERAGE * peak:
        return "synchronized timeouts: incast suspected"
    bursty = avg > 0 and peak >= BURST_RATIO * avg
    if bursty and (at_line is None or at_line > 0):
        return "microbursts"
    return ""


def windows(run: MonitorRun, width_ns: int = 1_000_000_000) -> list[dict[str, Any]]:
    """One row per ``width_ns`` of the run."""
    t = np.asarray(run.samples["t_ns"], dtype=np.int64)
    if len(t) == 0:
        return []
    rates = run.rates()
    b = np.asarray(run.samples[f"{run.direction}_bytes"], dtype=float)
    dt = np.asarray(run.samples["dt_ns"], dtype=float)
    drops = np.asarray(run.samples["drops"], dtype=np.int64)
    rows = []
    for lo in range(0, int(t[-1]) + 1, width_ns):
        m = (t > lo) & (t <= lo + width_ns)
        if not m.any():
            continue
        span = dt[m].sum()
        avg = float(b[m].sum() * 8e9 / span) if span else 0.0
        peak = float(rates[m].max())
        at_line = float((rates[m] >= LINE_SHARE * run.line_bps).mean()) if run.line_bps else None
        tcp = _tcp_delta(run.tcp, lo, lo + width_ns)
        rows.append(
            {
                "t_s": (lo + width_ns) / 1e9,
                "avg_bps": avg,
                "peak_bps": peak,
                "peak_to_avg": peak / avg if avg else 0.0,
                "at_line_rate": at_line,
                "drops": int(drops[m].sum()),
                "qdisc_drops": _qdisc_drops(run, lo, lo + width_ns),
                **tcp,
                "verdict": verdict(avg, peak, at_line, tcp["timeouts"]),
            }
        )
    return rows


def peak_to_average(run: MonitorRun) -> list[dict[str, float]]:
    """Peak over average of the rate in windows of the interval, 1 ms, 10 ms, 100 ms and 1 s
    (those at least one interval long and shorter than the run): how much a coarser
    average hides."""
    b = np.asarray(run.samples[f"{run.direction}_bytes"], dtype=float)
    dt = np.asarray(run.samples["dt_ns"], dtype=float)
    t = np.asarray(run.samples["t_ns"], dtype=np.int64)
    if len(t) == 0 or dt.sum() == 0:
        return []
    avg = b.sum() * 8e9 / dt.sum()
    out = []
    for w in sorted({run.interval_ns, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000}):
        if w < run.interval_ns or w > t[-1]:
            continue
        k = t // w
        sums = np.bincount(k, weights=b)
        spans = np.bincount(k, weights=dt)
        full = spans >= 0.5 * w
        if not full.any():
            continue
        peak = float((sums[full] * 8e9 / spans[full]).max())
        out.append({"window_ns": w, "peak_bps": peak, "peak_to_avg": peak / avg if avg else 0.0})
    return out


def summary(run: MonitorRun) -> dict[str, Any]:
    """The whole run: rates at the interval, jitter, CPU, TCP counters, verdict."""
    t = np.asarray(run.samples["t_ns"], dtype=float)
    rates = run.rates()
    late = np.asarray(run.samples["late_ns"], dtype=float)
    b = np.asarray(run.samples[f"{run.direction}_bytes"], dtype=float)
    dt = np.asarray(run.samples["dt_ns"], dtype=float)
    duration = float(t[-1]) if len(t) else 0.0
    avg = float(b.sum() * 8e9 / dt.sum()) if dt.sum() else 0.0
    peak = float(rates.max()) if len(rates) else 0.0
    at_line = float((rates >= LINE_SHARE * run.line_bps).mean()) if run.line_bps else None
    tcp = {k: run.tcp[-1][k] - run.tcp[0][k] for k in TCP_COUNTERS} if run.tcp else {}
    rows = windows(run)
    suspected = [r for r in rows if r["verdict"].startswith("synchronized")]
    bursts = [r for r in rows if r["verdict"] == "microbursts"]
    if suspected:
        line = f"incast suspected: synchronized timeouts in {len(suspected)} of {len(rows)} s"
    elif bursts:
        line = f"microbursts in {len(bursts)} of {len(rows)} s, no synchronized timeouts"
    else:
        line = "no microbursts, no synchronized timeouts"
    return {
        "iface": run.iface,
        "netns": run.netns,
        "direction": run.direction,
        "interval_ns": run.interval_ns,
        "samples": len(t),
        "duration_s": duration / 1e9,
        "avg_bps": avg,
        "peak_bps": peak,
        "peak_to_avg": peak / avg if avg else 0.0,
        "line_bps": run.line_bps,
        "at_line_rate": at_line,
        "jitter_median_ns": float(np.median(late)) if len(late) else None,
        "jitter_p99_ns": float(np.percentile(late, 99)) if len(late) else None,
        "cpu_share": run.cpu_ns / duration if duration else 0.0,
        "realtime": run.realtime,
        "peak_to_avg_by_window": peak_to_average(run),
        **{f"tcp_{k}": v for k, v in tcp.items()},
        "qdisc_drops": run.qdisc[-1][1] - run.qdisc[0][1] if run.qdisc else None,
        "qdisc_backlog_max": max((b for _, _, b in run.qdisc), default=None),
        "notes": run.notes,
        "error": run.error,
        "verdict": line,
        "version": run.version,
    }


def write_parquet(run: MonitorRun, path: str | Path) -> Path:
    """One row per interval (the counters' deltas and the rate), with the run's settings and
    the incastlab version as metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols: dict[str, Any] = {c: run.samples[c] for c in SAMPLE_COLUMNS}
    cols["rate_bps"] = run.rates()
    meta = {
        b"incastlab.kind": b"monitor",
        b"incastlab.version": run.version.encode(),
        b"incastlab.monitor": json.dumps(
            {k: v for k, v in summary(run).items() if k != "notes"}
        ).encode(),
        b"incastlab.tcp": json.dumps(run.tcp).encode(),
        b"incastlab.qdisc": json.dumps(run.qdisc).encode(),
    }
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(cols).replace_schema_metadata(meta), p)
    return p


class RecordingError(ValueError):
    """A file that is not a recording of ``incast monitor``; the message says why."""


def read_parquet(path: str | Path) -> MonitorRun:
    """A recording written by :func:`write_parquet` (``incast monitor --record``), back as
    the run it was. Raises :class:`RecordingError` for any other file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as e:
        raise RecordingError(f"{path}: not a Parquet file ({e})") from None
    meta = table.schema.metadata or {}
    if meta.get(b"incastlab.kind") != b"monitor":
        raise RecordingError(f"{path}: not a recording of incast monitor (no monitor metadata)")
    try:
        summ = json.loads(meta[b"incastlab.monitor"])
        run = MonitorRun(
            summ["iface"],
            summ["netns"],
            int(summ["interval_ns"]),
            summ["direction"],
            summ["line_bps"],
            version=meta.get(b"incastlab.version", b"").decode(),
        )
        for c in SAMPLE_COLUMNS:
            run.samples[c] = [int(x) for x in table.column(c).to_pylist()]
        run.tcp = json.loads(meta.get(b"incastlab.tcp", b"[]"))
        run.qdisc = [tuple(q) for q in json.loads(meta.get(b"incastlab.qdisc", b"[]"))]
    except (KeyError, ValueError, TypeError) as e:
        raise RecordingError(f"{path}: a monitor recording missing {e}") from None
    return run


def plot(run: MonitorRun, path: str | Path) -> Path:
    """The rate at the interval and its one-second average, timeouts marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from incastlab.plot import COLORS

    t = np.asarray(run.samples["t_ns"], dtype=float) / 1e9
    fig, ax = plt.subplots(figsize=(10, 4), constrained_layout=True)
    step = run.interval_ns / 1e6
    ax.plot(t, run.rates() / 1e6, lw=0.6, color=COLORS[0], label=f"every {step:g} ms")
    rows = windows(run)
    if rows:
        ax.step(
            [r["t_s"] - 1 for r in rows] + [rows[-1]["t_s"]],
            [r["avg_bps"] / 1e6 for r in rows] + [rows[-1]["avg_bps"] / 1e6],
            where="post",
            color=COLORS[1],
            label="1 s average",
        )
        for r in rows:
            if r["timeouts"]:
                ax.axvline(r["t_s"] - 0.5, color=COLORS[2], lw=0.8, ls=":")
    if run.line_bps:
        ax.axhline(run.line_bps / 1e6, color="grey", lw=0.6, ls="--", label="line rate")
    s = summary(run)
    ax.set_title(
        f"{run.iface} {run.direction}: peak/avg {s['peak_to_avg']:.1f} at {step:g} ms · "
        f"{s['verdict']}",
        fontsize=9,
    )
    ax.set_xlabel("time (s)")
    ax.set_ylabel("Mbps")
    ax.legend(loc="upper right", fontsize=8)
    out = Path(path)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out
