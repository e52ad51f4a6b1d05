"""The transport comparison as a table (``incast mitigate --transports``) and as a bar chart
(``--plot``): :mod:`incastlab.studies.transports` runs it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from incastlab.studies.transports import Row, TransportRanking, short_na, short_rule

if TYPE_CHECKING:
    from rich.console import Console


#: How the rows are made comparable, printed under the table.
FAIR = (
    "Same bytes per flow, links, RTT and buffer bytes per port for every row; each transport "
    "keeps its own MTU and initial window, and gets the switch feature it needs."
)


def fabric_line(o: Row) -> str:
    """The fabric and workload every row shares (from the yardstick's run), no transport."""
    from incastlab.plot import scenario_line

    parts = scenario_line(o.results[0], omit="transport").split(" · ")
    shared = " · ".join(p for p in parts if not p.startswith("RTOmin"))
    return f"N = {','.join(str(r.senders) for r in o.results)} · {shared}"


def _last_name(o: Row) -> str:
    """What the ranking's time is: a synchronized read ends with its last block."""
    return "read end" if o.block_p99_s is not None else "last flow"


def _kb(b: float | None) -> float | None:
    return None if b is None else round(b / 1000)


def print_transport_ranking(
    out: Console, err: Console, ranking: TransportRanking, *, wide: bool = False
) -> None:
    """The transports, earliest last flow first: the last flow's completion against the
    scenario's TCP, goodput (and the blocks' 99th percentile for a synchronized read), drops,
    timeouts, trims, PFC pauses, the incast port's peak and the short flows' tail; then each
    row's keys and fabric; a refused transport's row says so, and why under the table."""
    from incastlab.cli.tables import ALWAYS, Col, count, header, in_unit, print_table

    ranked, base = ranking.ranked, ranking.yardstick
    nums = [o.numbers() for o in ranked]
    last = [n["last_completion_s"] for n in nums]
    unit, cell = in_unit(last, "time")
    g_unit, g_cell = in_unit([n["goodput_bps"] for n in nums], "rate")
    base_last = base.last_s

    def vs(o: Row) -> str:
        if not o.last_s or not base_last:
            return "-"
        x = o.last_s / base_last
        return f"{x:.3g}×" if x >= 0.995 else f"1/{1 / x:.3g}"

    cols = [
        Col("#", [str(i) for i in range(1, len(ranked) + 1)], ALWAYS),
        Col("transport", [o.entry.name for o in ranked], ALWAYS, left=True),
        Col(header(_last_name(base), unit), [cell(v) for v in last], ALWAYS),
        Col(header("vs", base.entry.name), [vs(o) for o in ranked], 6),
        Col(header("goodput", g_unit), [g_cell(n["goodput_bps"]) for n in nums], 7),
    ]
    p99 = [n["block_time_p99_s"] for n in nums]
    if any(v is not None for v in p99):
        b_unit, b_cell = in_unit(p99, "time")
        cols.append(Col(header("block p99", b_unit), [b_cell(v) for v in p99], 7))
    if any(o.unfinished for o in ranked):
        cols.append(Col("unfinished", [count(o.unfinished) for o in ranked], 8))

    def whole(key: str) -> list[str]:
        """A count column; a mean over sender counts rounds to a whole number."""
        return [count(None if n[key] is None else round(n[key])) for n in nums]

    cols += [
        Col("drops", whole("drops"), 8),
        Col(header("time-", "outs"), whole("timeouts"), 8),
        Col("trims", whole("trims"), 6),
        Col("pauses", whole("pfc_pauses"), 6),
        Col(header("peak", "KB"), [count(_kb(n["peak_buffer_bytes"])) for n in nums], 6),
    ]
    short = [n["short_flow_p99_s"] for n in nums]
    left = [n["short_flow_unfinished"] for n in nums]
    s_unit, s_cell = in_unit(short, "time")
    # A short flow still running at the end counts at its age then: the tail is a lower bound.
    pairs = zip(short, left, strict=True)
    cells = [("≥" if k else "") + s_cell(v) if v else "n/a" for v, k in pairs]
    cols.append(Col(header("short p99", s_unit), cells, 5))
    if any(left):
        cols.append(Col(header("short", "unfin."), [count(k) for k in left], 6))
    # A refused transport keeps its row, at the bottom, its reason under the table.
    for i, c in enumerate(cols):
        fill = ["-", "", "refused"][i] if i < 3 else ""
        c.cells += [e.name if i == 1 else fill for e, _ in ranking.refused]
    title = f"[bold]incast mitigate --transports[/bold] · {fabric_line(base)}"
    if len(base.results) > 1:
        title += " · means over the sender counts"
    print_table(out, title, cols, wide=wide)
    for o in ranked:
        out.print(f"[bold]{o.entry.name}[/bold] · {o.entry.what} · {o.entry.fabric}")
        out.print(f"  [dim]{o.keys()}[/dim]")
        if o.cc_note():
            out.print(f"  [yellow]{o.cc_note()}[/yellow]")
    out.print(f"[dim]{FAIR}[/dim]")
    rule = short_rule(base.results[0].scenario)
    if rule:
        out.print(f"[dim]{rule}.[/dim]")
    if all(v is None for v in short):
        out.print(f"[dim]short p99 n/a: {short_na(base.results[0])}.[/dim]")
    for o in ranked:
        if rule and o.numbers()["short_flow_p99_s"] is None:
            out.print(f"[dim]{o.entry.name}: short p99 n/a, {short_na(o.results[0], True)}.[/dim]")
    for e, why in ranking.refused:
        out.print(f"[bold]{e.name}[/bold] · {e.what} · [yellow]refused:[/yellow] {why}")


def transport_bars(ranking: TransportRanking, path: str | Path) -> Path:
    """One bar per transport, earliest last flow on top: the last flow's completion (on a log
    axis when TCP's timeouts put it decades beyond the rest), each bar labelled with its value
    and its drops, timeouts, trims and pauses; the scenario's TCP hatched."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from incastlab.plot import save_figure
    from incastlab.plot.mitigations import _time_unit, distinct_colors
    from incastlab.plot.ticks import log_axis

    ranked = ranking.ranked
    nums = [o.numbers() for o in ranked]
    last = [n["last_completion_s"] for n in nums]
    k, unit = _time_unit([v for v in last if v is not None])
    drawn = [v * k if v is not None else 0.0 for v in last]
    colors = distinct_colors(len(ranked))
    height = 0.42 * len(ranked) + 1.6
    fig, ax = plt.subplots(figsize=(9, height))
    fig.subplots_adjust(left=0.16, right=0.97, top=1 - 0.8 / height, bottom=0.55 / height)
    ys = list(range(len(ranked)))[::-1]
    hatch = ["//" if o.entry.name == "tcp" else "" for o in ranked]
    ax.barh(ys, drawn, color=colors, hatch=hatch, edgecolor="white", lw=0.5)
    positive = [v for v in drawn if v > 0]
    log = len(positive) > 1 and max(positive) > 10 * min(positive)
    if log:
        ax.set_xscale("log")
        log_axis(ax.xaxis)
        ax.set_xlim(min(positive) / 2, max(positive) * 12)
    else:
        ax.set_xlim(0, max(drawn, default=1.0) * 1.6 or 1.0)
    left = ax.get_xlim()[0]
    for y, v, n in zip(ys, drawn, nums, strict=True):
        ax.text(max(v, left), y, f" {v:,.3g} {unit} · {_events(n)}", va="center", fontsize=7.5)
    ax.set_yticks(ys, [o.entry.name for o in ranked])
    scale = ", log scale" if log else ""
    what = "the read's end" if ranking.yardstick.block_p99_s is not None else "the last flow"
    ax.set_xlabel(f"completion of {what} ({unit}{scale})")
    ax.grid(alpha=0.3, axis="x", which="both" if log else "major")
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_title(f"Transports on one fabric · {fabric_line(ranking.yardstick)}", fontsize=9)
    return save_figure(fig, path)


def _events(n: dict[str, float | None]) -> str:
    """The drops and the other stalls of a row, for its bar's label."""
    parts = [f"{n['drops'] or 0:,.0f} drops"]
    for key, name in (("timeouts", "timeouts"), ("trims", "trims"), ("pfc_pauses", "pauses")):
        if n.get(key):
            parts.append(f"{n[key]:,.0f} {name}")
    return ", ".join(parts)
