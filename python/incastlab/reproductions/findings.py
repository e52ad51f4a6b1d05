"""What a reproduction check concludes (graded claims, a table, figures) and the helpers the
checks share: the one grading rule, tolerances, means over seeds, collapse onsets, Markdown
rows.

Every claim is graded by :func:`grade`, and nowhere else:

- **agrees**: incastlab's number is within the tolerance stated next to the claim;
- **shape only**: outside it, but the direction holds (a collapse, a rise, an order); where
  the number misses the paper's by more than 2× the claim says so;
- **disagrees**: otherwise.

An experiment's headline is the weakest grade of its claims (:func:`weakest`).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

Row = dict[str, Any]
Runs = dict[str, list[Row]]

Grade = Literal["agrees", "shape only", "disagrees"]
#: The grades, weakest first.
GRADES: tuple[Grade, ...] = ("disagrees", "shape only", "agrees")
#: How each grade is marked in a verdict.
MARKS: dict[Grade, str] = {"agrees": "✓", "shape only": "≈", "disagrees": "✗"}
#: A number further than this factor from the paper's is called out as such.
CALL_OUT = 2.0


def grade(within: bool, direction: bool | None = None) -> Grade:
    """The one grading rule: ``within`` the claim's tolerance agrees; outside it, the claim
    keeps its shape if ``direction`` (the qualitative statement) holds."""
    if within:
        return "agrees"
    return "shape only" if direction else "disagrees"


def weakest(grades: Iterable[Grade]) -> Grade:
    """The weakest of ``grades`` (``agrees`` for none)."""
    return min(grades, key=GRADES.index, default="agrees")


def factor(measured: float, paper: float) -> float:
    """How many times apart two positive numbers are (at least 1); inf if one is 0."""
    if measured <= 0 or paper <= 0:
        return math.inf if measured != paper else 1.0
    return max(measured / paper, paper / measured)


@dataclass(frozen=True)
class Within:
    """A tolerance around the paper's number (or inside its range): ``factor`` (× either
    way), ``rel`` (a share of it), ``abs`` (in the claim's own unit); the first given."""

    factor: float | None = None
    rel: float | None = None
    abs: float | None = None
    unit: str = ""

    def holds(self, measured: float, paper: float | tuple[float, float]) -> bool:
        lo, hi = paper if isinstance(paper, tuple) else (paper, paper)
        if self.factor is not None:
            return lo / self.factor <= measured <= hi * self.factor
        if self.rel is not None:
            return lo - self.rel * abs(lo) <= measured <= hi + self.rel * abs(hi)
        d = self.abs or 0.0
        return lo - d <= measured <= hi + d

    def __str__(self) -> str:
        if self.factor is not None:
            return f"within {self.factor:g}×"
        if self.rel is not None:
            return f"within ±{100 * self.rel:g}%"
        if self.abs:
            return f"within ±{self.abs:g}{self.unit and ' ' + self.unit}"
        return "exact"


def _miss(measured: float, paper: float | tuple[float, float]) -> str:
    """`` (4.1× the paper's)`` when ``measured`` misses the paper by more than 2×."""
    lo, hi = paper if isinstance(paper, tuple) else (paper, paper)
    off = factor(measured, lo if measured < lo else hi) if not lo <= measured <= hi else 1.0
    if off <= CALL_OUT:
        return ""
    return " (off by more than 1000×)" if off > 1000 else f" ({off:.3g}× off)"


@dataclass
class Claim:
    """One statement of the paper, incastlab's number and its grade."""

    text: str
    grade: Grade
    measured: str
    #: What "agrees" means for this claim ("within ±1 sender", "exact").
    tolerance: str

    @property
    def ok(self) -> bool:
        return self.grade == "agrees"

    def line(self) -> str:
        """The claim as one Markdown list item."""
        return (
            f"- {MARKS[self.grade]} **{self.grade}** · {self.text}: {self.measured} "
            f"(agrees if {self.tolerance})"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "grade": self.grade,
            "ok": self.ok,
            "measured": self.measured,
            "tolerance": self.tolerance,
        }


@dataclass
class Findings:
    """What a check concluded: its claims, a comparison table (Markdown) and figures."""

    claims: list[Claim] = field(default_factory=list)
    table: str = ""
    figures: list[str] = field(default_factory=list)

    def claim(
        self,
        text: str,
        ok: bool,
        measured: str,
        *,
        tolerance: str,
        direction: bool | None = None,
    ) -> Claim:
        """A claim judged by the check itself: ``ok`` within ``tolerance`` (said in words),
        ``direction`` whether its qualitative statement holds when ``ok`` does not."""
        c = Claim(text, grade(bool(ok), direction), measured, tolerance)
        self.claims.append(c)
        return c

    def number(
        self,
        text: str,
        measured: float,
        paper: float | tuple[float, float],
        within: Within,
        *,
        direction: bool | None = None,
        shown: Callable[[float], str] = lambda x: f"{x:.3g}",
        where: str = "",
        ref: str = "the paper's",
    ) -> Claim:
        """A claim about one number against the paper's (or its range; ``ref`` names whose
        it is when it comes from the paper's equation): graded by ``within``, the miss
        called out beyond 2×."""
        ok = within.holds(measured, paper)
        theirs = (
            f"{shown(paper[0])}–{shown(paper[1])}" if isinstance(paper, tuple) else shown(paper)
        )
        said = f"{shown(measured)}{where} against {ref} {theirs}"
        tol = str(within)
        if isinstance(paper, tuple) and tol == "exact":
            tol = "inside the paper's range"
        return self.claim(
            text, ok, said + _miss(measured, paper), tolerance=tol, direction=direction
        )

    @property
    def grade(self) -> Grade:
        return weakest(c.grade for c in self.claims)


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
