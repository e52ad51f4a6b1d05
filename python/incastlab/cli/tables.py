"""The building blocks of the tables the commands print: numbers in the unit their column's
header states, and tables that fit the console.

A table fits the console's width (100 columns when the output is not a terminal): numeric
columns never wrap and header words stay whole; where the console is too narrow, the columns
that matter least are left out and a line under the table names them (``--wide`` prints every
column). A column of descriptions wraps in the width left over, or, under 24 columns, moves
below the table as a list; with ``--wide`` it is printed in full, on one line.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from incastlab.units import format_time

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

_RATES = (("Gbps", 1e9), ("Mbps", 1e6), ("Kbps", 1e3), ("bps", 1.0))
_TIMES = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9))

#: The narrowest a column of descriptions may be before it moves below the table.
MIN_TEXT = 24
#: Kept whatever the width: the columns that say which row is which.
ALWAYS = 9


def seconds_cell(seconds: float | None) -> str:
    """A time with its own unit (``6.58 ms``), for cells of mixed columns."""
    return format_time((seconds or 0) * 1e12)


def _num(x: float) -> str:
    """Three significant digits; whole numbers from 1000 on, with thousands separators."""
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def in_unit(values: Sequence[float | None], kind: str) -> tuple[str, Callable[[float | None], str]]:
    """The unit of a column of rates (bits per second) or times (seconds), chosen by its
    largest value (times in seconds only from 10 s), and the cell formatter in it."""
    present = [abs(v) for v in values if v is not None and math.isfinite(v)]
    top = max(present, default=0.0)
    units = _RATES if kind == "rate" else _TIMES
    floor = 10.0 if kind == "time" else 1.0
    unit, scale = next(
        ((u, k) for u, k in units if top >= k * (floor if u == units[0][0] else 1.0)),
        units[-1] if top else units[1],
    )

    def cell(v: float | None) -> str:
        return "-" if v is None or not math.isfinite(v) else _num(v / scale)

    return unit, cell


def count(n: float | None) -> str:
    """A count in at most five characters: ``4,867``, ``584k``, ``1.73M``."""
    if n is None:
        return "-"
    if abs(n) < 10_000:
        return f"{n:,.0f}" if n == int(n) else f"{n:.3g}"
    for suffix, k in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= k:
            v = n / k
            return f"{v:.0f}{suffix}" if abs(v) >= 100 else f"{v:.3g}{suffix}"
    return f"{n:.3g}"


def header(name: str, unit: str = "") -> str:
    """A column header: the name over its unit."""
    return f"{name}\n{unit}" if unit else name


def flat(head: str) -> str:
    """A header on one line, as a sentence names it (``time-\\nouts`` → ``time-outs``)."""
    return head.replace("-\n", "-").replace("\n", " ")


@dataclass
class Col:
    """One column: its header (lines split by ``\\n``), its cells, and how long it is kept
    when the console is narrow (higher: longer; :data:`ALWAYS`: never left out)."""

    head: str
    cells: list[str]
    keep: int = 5
    left: bool = False


def _build(cols: Sequence[Col], text: tuple[str, Sequence[str]] | None, room: int) -> Table:
    from incastlab.cli.common import table

    t = table()
    for c in cols:
        t.add_column(c.head, justify="left" if c.left else "right", no_wrap=True)
    if text is not None:
        if room:
            t.add_column(text[0], style="dim", max_width=room, min_width=min(room, MIN_TEXT))
        else:
            t.add_column(text[0], style="dim", no_wrap=True)
    rows = len(cols[0].cells) if cols else 0
    texts = list(text[1]) if text is not None else []
    for i in range(rows):
        t.add_row(*(c.cells[i] for c in cols), *([texts[i]] if text is not None else []))
    return t


def width_of(out: Console, t: Table) -> int:
    """The width ``t`` takes unwrapped."""
    from rich.measure import Measurement

    return Measurement.get(out, out.options.update(width=10_000), t).maximum


def print_table(
    out: Console,
    title: str,
    cols: Sequence[Col],
    *,
    wide: bool = False,
    text: tuple[str, Sequence[str]] | None = None,
) -> None:
    """``title`` (wrapped at the console's width unless ``wide``), then a table of ``cols``
    and the optional ``text`` column (header, one description per row) that fits the
    console; ``wide``: every column, the descriptions in full."""
    if wide:
        t = _build(cols, text, 0)
        if title:
            out.print(title, soft_wrap=True)
        # As wide as the table is: the console's width is its own again afterwards.
        saved = out._width
        out.width = max(out.width, width_of(out, t))
        try:
            out.print(t, crop=False)
        finally:
            out._width = saved
        return
    if title:
        out.print(wrap_title(title, out.width), soft_wrap=True)
    shown = list(cols)
    left_out: list[Col] = []
    while width_of(out, _build(shown, None, 0)) > out.width:
        droppable = [c for c in shown if c.keep < ALWAYS]
        if not droppable:
            break
        least = min(c.keep for c in droppable)
        victim = [c for c in droppable if c.keep == least][-1]
        shown.remove(victim)
        left_out.insert(0, victim)
    legend = False
    if text is None:
        out.print(_build(shown, None, 0))
    else:
        room = out.width - width_of(out, _build(shown, None, 0)) - 2
        legend = room < MIN_TEXT
        out.print(_build(shown, None if legend else text, room))
    if left_out:
        names = ", ".join(flat(c.head) for c in sorted(left_out, key=cols.index))
        out.print(f"[dim]left out at {out.width} columns: {names} (--wide shows them)[/dim]")
    if legend and text is not None:
        _print_legend(out, next((c.cells for c in shown if c.left), shown[0].cells), text)


def wrap_title(title: str, width: int) -> str:
    """``title`` (console markup) broken into lines of at most ``width`` columns between its
    `` · ``-separated parts, never inside one: a broken line ends in `` ·``, the next is
    indented by two."""
    from rich.text import Text

    lines: list[str] = []
    for raw in title.split("\n"):
        line = ""
        for part in raw.split(" · "):
            if line and Text.from_markup(f"{line} · {part} ·").cell_len > width:
                lines.append(line + " ·")
                line = "  " + part
            else:
                line = f"{line} · {part}" if line else part
        lines.append(line)
    return "\n".join(lines)


def _print_legend(out: Console, keys: Sequence[str], text: tuple[str, Sequence[str]]) -> None:
    """The descriptions under the table: each row's name, then its text, wrapped."""
    from rich.table import Table

    g = Table.grid(padding=(0, 2))
    g.add_column(no_wrap=True)
    g.add_column(style="dim")
    for k, v in zip(keys, text[1], strict=True):
        g.add_row(k, v)
    out.print(f"{text[0]}:")
    out.print(g)


def add_wide_flag(p: Any) -> None:
    """``--wide``: the table with every column and descriptions in full, however wide."""
    p.add_argument(
        "--wide",
        action="store_true",
        help="print every column of the table and descriptions in full, however wide "
        "(by default the table fits the terminal, 100 columns when piped)",
    )
