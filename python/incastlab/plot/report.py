"""A self-contained HTML report of a sweep: what was run, its figures and its table.

Figures are embedded as PNG data, so the file can be mailed or attached as it is.
"""

from __future__ import annotations

import base64
import html
import json
import tempfile
from pathlib import Path
from typing import Any

from incastlab.plot import sweep as sweep_plot
from incastlab.plot import transport_label
from incastlab.plot.facets import axis_label
from incastlab.sweep.store import SweepStore
from incastlab.units import format_rate, format_time

CSS = """
body { font: 15px/1.45 system-ui, sans-serif; max-width: 1000px; margin: 2em auto;
       color: #1f2328; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: .2em; } .sub { color: #59636e; margin-top: 0; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: 1em 0; }
th, td { padding: .25em .7em; border-bottom: 1px solid #d1d9e0; text-align: right; }
th { background: #f6f8fa; } td.bad { color: #d1242f; } td.mid { color: #9a6700; }
td.good { color: #1a7f37; } pre { background: #f6f8fa; padding: 1em; overflow-x: auto; }
img { max-width: 100%; margin: .5em 0; } .fail { color: #d1242f; }
"""


def img_tag(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    return f'<img alt="{html.escape(path.stem)}" src="data:image/png;base64,{data}">'


def _spec_text(spec: dict[str, Any]) -> str:
    return json.dumps(spec, indent=1, sort_keys=False, default=str)


def write_report(
    root: str | Path,
    path: str | Path,
    *,
    rows: list[dict[str, Any]] | None = None,
    filters: list[str] | None = None,
    pool: list[str] | None = None,
) -> Path:
    """Write the HTML report of the sweep in ``root`` (or of its ``rows`` that passed
    ``filters``, named in the captions) to ``path``. Goodput is drawn against the senders
    (else the first coordinate), one line per value of the next coordinate, a panel per
    value of the others; block times and timeouts at the largest sender count.
    :class:`~incastlab.plot.facets.FigureRefused` when the panels would not fit."""
    store = SweepStore(root)
    meta = store.meta()
    stored = store.rows()  # also finds the point files that do not read back
    rows = sorted(
        stored if rows is None else rows,
        key=lambda r: [sweep_plot.natural_key(v) for v in r["params"].values()],
    )
    if not rows:
        raise ValueError(f"{root}: no stored points to report")
    varied = [
        k
        for k in meta.get("axes", [])
        if k != "seed" and len({repr(r["params"].get(k)) for r in rows}) > 1
    ]
    x = "topology.senders" if "topology.senders" in varied else (varied[0] if varied else None)
    hue = next((k for k in varied if k != x), None)
    filters, pool = list(filters or []), list(pool or [])
    figures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        if x is not None:
            model = meta.get("backend") == "sim" and rows[0]["workload"] == "sync_read"
            figures.append(
                img_tag(
                    sweep_plot.line(
                        rows,
                        t / "goodput.png",
                        x=x,
                        hue=hue,
                        model=model,
                        filters=filters,
                        pool=pool,
                    )
                )
            )
        # One sender count: the distribution of a collapsed point, not a mix of all.
        last = rows
        if x == "topology.senders":
            most = max(r["params"][x] for r in rows)
            last = [r for r in rows if r["params"][x] == most]
            filters = [*filters, f"senders = {most} (the most)"]
        if any(r.get("report", {}).get("block_times") for r in last):
            figures.append(
                img_tag(
                    sweep_plot.block_cdf(
                        last, t / "blocks.png", hue=hue, filters=filters, pool=pool
                    )
                )
            )
        if any(sum(r.get("report", {}).get("timeout_runs", [])) for r in last):
            figures.append(
                img_tag(
                    sweep_plot.timeout_histogram(
                        last, t / "timeouts.png", hue=hue, filters=filters, pool=pool
                    )
                )
            )
    head = "".join(f"<th>{html.escape(axis_label(k))}</th>" for k in meta.get("axes", []))
    head += "<th>goodput</th><th>% link</th><th>block p50</th><th>timeouts</th><th>wall</th>"
    body = []
    for r in rows:
        pct = 100 * (r.get("goodput_fraction") or 0.0)
        cls = "bad" if pct < 40 else ("mid" if pct < 70 else "good")
        median = r.get("block_time_median_s") or r.get("model_block_time_s")
        cells = "".join(
            f"<td>{html.escape(str(r['params'].get(k, '')))}</td>" for k in meta.get("axes", [])
        )
        cells += (
            f"<td>{format_rate(r['goodput_bps'])}</td><td class={cls}>{pct:.1f}%</td>"
            f"<td>{format_time(median * 1e12) if median else '-'}</td>"
            f"<td>{r.get('timeouts', '-')}</td><td>{r['wall_s']:.2f} s</td>"
        )
        body.append(f"<tr>{cells}</tr>")
    failures = store.failures()
    fail_html = "".join(
        f"<li class=fail>{html.escape(json.dumps(f['params']))}: {html.escape(f['error'])}</li>"
        for f in failures
    ) + "".join(
        f"<li class=fail>{html.escape(p.name)}: unreadable point file, skipped (a rerun of the "
        "sweep computes it again)</li>"
        for p in store.unreadable
    )
    version = rows[0].get("version", "")
    doc = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{html.escape(meta.get("name", "sweep"))}</title>
<style>{CSS}</style></head><body>
<h1>{html.escape(meta.get("name", "sweep"))}</h1>
<p class=sub>{len(rows)} of {meta.get("points")} points · backend {meta.get("backend")} ·
{html.escape(transport_label([r["scenario"] for r in rows if r.get("scenario")]))} ·
incastlab {html.escape(str(version))}</p>
{"".join(figures)}
<h2>Points</h2>
<table><tr>{head}</tr>{"".join(body)}</table>
{f"<h2>Failed points</h2><ul>{fail_html}</ul>" if fail_html else ""}
<h2>Sweep spec</h2>
<pre>{html.escape(_spec_text(meta.get("spec", {})))}</pre>
<p class=sub>Every stored point carries its normalized scenario, seed and version; see
<code>incast results</code> for CSV and JSON.</p>
</body></html>
"""
    out = Path(path)
    out.write_text(doc, encoding="utf-8")
    return out
