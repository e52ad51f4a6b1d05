"""``incast doctor --html``: the diagnosis as one self-contained page a person can forward:
the verdict, what the evidence shows (each value with its range, confidence and source), the
capture beside its replica with their completion times drawn, the remedies ranked on the
replica, and the replica's scenario file. Figures are embedded as PNG data.
"""

from __future__ import annotations

import html
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from incastlab.doctor.infer import shown
from incastlab.plot.report import CSS, img_tag
from incastlab.units import format_rate

if TYPE_CHECKING:
    from incastlab.doctor import Diagnosis, Estimate
    from incastlab.doctor.recording import RecordingDiagnosis


def _estimates(estimates: dict[str, Estimate]) -> str:
    rows = []
    for name, e in estimates.items():
        lo, hi = shown(name, e.lo), shown(name, e.hi) if e.hi is not None else "∞"
        span = "" if e.lo == e.hi else f"≤ {hi}" if e.lo == 0 else f"{lo}..{hi}"
        rows.append(
            f"<tr><td>{html.escape(name)}</td><td>{html.escape(shown(name, e.value))}</td>"
            f'<td style="white-space:nowrap">{html.escape(span)}</td>'
            f"<td>{html.escape(e.confidence)}</td>"
            f'<td style="text-align:left">{html.escape(e.evidence)}</td></tr>'
        )
    head = (
        "<tr><th>value</th><th>estimate</th><th>range</th><th>confidence</th>"
        '<th style="text-align:left">from</th>'
    )
    return f"<table>{head}</tr>{''.join(rows)}</table>"


def _side_by_side(d: Diagnosis) -> str:
    rows = []
    for label, f in (("capture", d.capture), (f"replica ({len(d.seeds)} seeds)", d.replica)):
        rows.append(
            f"<tr><td>{html.escape(label)}</td><td>{format_rate(f.goodput_bps)}</td>"
            f"<td>{f.quantile(0.5) * 1e3:,.2f} ms</td><td>{f.quantile(0.99) * 1e3:,.2f} ms</td>"
            f"<td>{f.timeouts_per_block:.2f}</td><td>{f.stalls_per_block:.2f}</td>"
            f"<td>{f.blocks}</td></tr>"
        )
    head = (
        "<tr><th></th><th>goodput</th><th>p50</th><th>p99</th><th>timeouts/block</th>"
        "<th>stalls/block</th><th>blocks</th></tr>"
    )
    return f"<table>{head}{''.join(rows)}</table>"


def _cdf(d: Diagnosis, out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.6), dpi=110)
    for label, f, color in (
        ("capture", d.capture, "#1f2328"),
        (_seeds(len(d.seeds)), d.replica, "#0969da"),
    ):
        xs = sorted(t * 1e3 for t in f.times)
        if xs:
            ys = [(i + 1) / len(xs) for i in range(len(xs))]
            ax.step(xs, ys, where="post", label=label, color=color, lw=1.8)
    unit = "block" if d.estimates["workload"].value == "sync_read" else "flow"
    ax.set_xlabel(f"{unit} completion time (ms)")
    ax.set_ylabel("share of the capture's and\nthe replica's " + unit + "s")
    ax.set_xscale("log")
    from matplotlib.ticker import FuncFormatter

    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    ax.grid(alpha=0.3, which="both")
    ax.legend(frameon=False)
    ax.set_title(f"{unit} times: the capture and its replica", loc="left", fontsize=11)
    fig.tight_layout()
    path = out / "times.png"
    fig.savefig(path)
    plt.close(fig)
    return path


def _seeds(k: int) -> str:
    return "replica, one seed" if k == 1 else f"replica, {k} seeds pooled"


def _remedies(d: Diagnosis) -> str:
    if d.remedies is None:
        return "<p>No remedies ranked" + (" (not asked for)." if d.incast else ": no incast.")
    rows = []
    for i, r in enumerate(d.remedies.to_json(), 1):
        if "skipped" in r:
            continue
        rows.append(
            f"<tr><td>{i}</td><td>{html.escape(r['mitigation'])}</td>"
            f"<td>{format_rate(r['mean_goodput_bps'])}</td>"
            f"<td>{r['block_time_p99_s'] * 1e3:,.1f} ms</td>"
            f"<td>{r['timeouts_per_block']:.2f}</td>"
            f'<td style="text-align:left">{html.escape(r["what"])}</td></tr>'
        )
    head = (
        "<tr><th>#</th><th>remedy</th><th>goodput</th><th>block p99</th>"
        '<th>timeouts/block</th><th style="text-align:left">what</th></tr>'
    )
    return f"<table>{head}{''.join(rows)}</table>"


def _recording(rec: RecordingDiagnosis | None) -> str:
    if rec is None:
        return ""
    f = rec.figures
    counts = ", ".join(
        f"{k.replace('_', ' ')} {f[k]:,}"
        for k in ("timeouts", "loss_probes", "retrans_segs", "nic_drops", "qdisc_drops")
        if k in f
    )
    return (
        f"<h2>The host's recording</h2><p>{html.escape(rec.path)} · {html.escape(rec.why)}</p>"
        + _estimates(rec.estimates)
        + f"<p>Over {f['duration_s']:,.1f} s: average {format_rate(f['avg_bps'])}, peak "
        f"{format_rate(f['peak_bps'])}; {html.escape(counts)}.</p>"
    )


def write_doctor_html(d: Diagnosis, path: str | Path, scenario_toml: str) -> Path:
    """Write the diagnosis ``d`` as one HTML page at ``path``; ``scenario_toml`` is the
    replica's scenario file as written by ``--out``."""
    verdict = ("<b class='fail'>incast</b>: " if d.incast else "") + html.escape(d.why)
    with tempfile.TemporaryDirectory(prefix="incast-doctor-html-") as tmp:
        figure = img_tag(_cdf(d, Path(tmp)))
    page = f"""<!doctype html><html><head><meta charset="utf-8">
<title>incast doctor · {html.escape(d.path)}</title>
<style>{CSS}</style></head><body>
<h1>incast doctor</h1>
<p class="sub">{html.escape(d.path)} · receiver {html.escape(str(d.trace.report["receiver"]))}
· incastlab {html.escape(d.trace.version)}</p>
<p>{verdict}</p>
<h2>What the evidence shows</h2>{_estimates(d.estimates)}
<h2>The capture beside its replica</h2>{_side_by_side(d)}{figure}
<h2>Remedies, ranked on the replica</h2>{_remedies(d)}
{_recording(d.recording)}
<h2>The replica (edit and rerun: <code>incast sim replica.toml</code>)</h2>
<pre>{html.escape(scenario_toml)}</pre>
</body></html>
"""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(page, encoding="utf-8")
    return p
