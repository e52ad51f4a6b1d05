"""Readable ticks on logarithmic axes.

Matplotlib labels only the powers of the base on a log axis, so a range inside one decade
(300 ms to 2 s) shows a single "1000". :func:`log_axis` labels plain numbers at the sparsest
of 1·10^k, 1-2-5·10^k, 1-1.5-2-3-5-7·10^k (or, for base 2, the powers of two and their
halves) that puts at least three ticks in view, and evenly spaced round numbers where even
those do not; minor ticks keep their grid lines and lose their labels.
"""

from __future__ import annotations

import math
from typing import Any

from matplotlib.ticker import FuncFormatter, Locator, LogLocator, MaxNLocator, NullFormatter

#: At least this many labelled ticks in view.
MIN_TICKS = 3
#: At most this many: past it, a sparser set is taken.
MAX_TICKS = 9

_SUBS = {
    10: ((1.0,), (1.0, 2.0, 5.0), (1.0, 1.5, 2.0, 3.0, 5.0, 7.0)),
    2: ((1.0,), (1.0, 1.5)),
}


def plain(v: float, _pos: Any = None) -> str:
    """A tick label as a person writes it: ``0.5``, ``20``, ``1000``, ``1e+06``."""
    return f"{v:g}"


class ReadableLogLocator(Locator):
    """Major ticks of a log axis: the sparsest candidate set with at least
    :data:`MIN_TICKS` in view; round linear steps when the view spans too little for any."""

    def __init__(self, base: float = 10) -> None:
        self.base = base

    def __call__(self) -> Any:
        if self.axis is None:
            return []
        lo, hi = self.axis.get_view_interval()
        return self.tick_values(lo, hi)

    def tick_values(self, vmin: float, vmax: float) -> Any:
        lo, hi = sorted((vmin, vmax))
        if hi <= 0:
            return []
        lo = max(lo, hi * 1e-12)
        base = self.base
        first = math.floor(math.log(lo, base)) - 1
        last = math.ceil(math.log(hi, base)) + 1
        decades = range(first, last + 1)
        for subs in _SUBS.get(int(base), ((1.0,),)):
            ticks = [m * base**k for k in decades for m in subs]
            if sum(lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9) for t in ticks) >= MIN_TICKS:
                if subs == (1.0,) and len(decades) > MAX_TICKS + 2:
                    step = math.ceil(len(decades) / MAX_TICKS)
                    ticks = [base**k for k in decades if k % step == 0]
                return ticks
        steps = MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10], min_n_ticks=MIN_TICKS).tick_values(
            lo, hi
        )
        return [t for t in steps if t > 0]


def log_axis(axis: Any, base: float = 10) -> None:
    """Put ``axis`` (``ax.xaxis`` or ``ax.yaxis``, already on a log scale) on readable
    ticks: several labelled ones over any range, plain numbers, unlabelled minors."""
    axis.set_major_locator(ReadableLogLocator(base))
    axis.set_major_formatter(FuncFormatter(plain))
    axis.set_minor_locator(LogLocator(base=base, subs="auto"))
    axis.set_minor_formatter(NullFormatter())


def labelled(axis: Any) -> list[str]:
    """The labels of ``axis``'s major ticks inside its view, after a draw."""
    lo, hi = sorted(axis.get_view_interval())
    return [
        t.get_text()
        for t, v in zip(axis.get_majorticklabels(), axis.get_majorticklocs(), strict=False)
        if t.get_text() and lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9)
    ]
