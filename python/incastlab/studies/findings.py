"""What a reproduction check concludes (claims, a table, figures) and the helpers the checks
share: means over seeds, collapse onsets, Markdown rows."""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

Row = dict[str, Any]
Runs = dict[str, list[Row]]


@dataclass
class Claim:
    """One statement of the paper and what incastlab measured."""

    text: str
    ok: bool
    measured: str


@dataclass
class Findings:
    """What a check concluded: its claims, a comparison table (Markdown) and figures."""

    claims: list[Claim] = field(default_factory=list)
    table: str = ""
    figures: list[str] = field(default_factory=list)

    def claim(self, text: str, ok: bool, measured: str) -> None:
        self.claims.append(Claim(text, bool(ok), measured))


def mean_by(rows: list[Row], *keys: str, col: str = "goodput_bps") -> dict[tuple[Any, ...], float]:
    acc: dict[tuple[Any, ...], list[float]] = defaultdict(list)
    for r in rows:
        if r.get(col) is not None:
            acc[tuple(r["params"].get(k) for k in keys)].append(float(r[col]))
    return {k: statistics.fmean(v) for k, v in acc.items()}


def mbps(bps: float) -> str:
    return f"{bps / 1e6:.3g}" if bps < 1e8 else f"{bps / 1e6:.0f}"


def onset_of(goodputs: dict[int, float]) -> int | None:
    """First sender count whose goodput is below half the best of fewer senders."""
    best = 0.0
    for n in sorted(goodputs):
        if best and goodputs[n] < 0.5 * best:
            return n
        best = max(best, goodputs[n])
    return None


def md_row(*cells: object) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"
