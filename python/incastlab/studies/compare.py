"""One scenario on several backends, side by side: the model's curve over the simulator's
points over real Linux TCP (the heart of incastlab, see the architecture note)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from incastlab.backends import Backend
    from incastlab.result import Result
    from incastlab.scenario import Scenario
    from incastlab.series import Tracker

#: The backend every other measured backend is set against (``emulate_vs_sim``).
REFERENCE = "sim"


@dataclass
class Comparison:
    """Each backend's results for the same sender counts."""

    senders: list[int]
    #: Backends that run the scenario (simulator, real TCP), in the order given.
    runs: dict[str, list[Result]]
    #: Backends that predict it (the model): their goodput only, drawn as a curve.
    predictions: dict[str, list[Result]]

    def rows(self) -> list[dict[str, Any]]:
        """One row per sender count: goodput and median block time per run backend, the
        predicted goodput, and each run backend's goodput against the simulator's."""
        rows = []
        for i, n in enumerate(self.senders):
            row: dict[str, Any] = {"senders": n}
            for b, rs in self.runs.items():
                row[f"{b}_goodput_bps"] = rs[i].goodput_bps
                row[f"{b}_block_time_median_s"] = rs[i].row()["block_time_median_s"]
            for b, rs in self.predictions.items():
                row[f"{b}_goodput_bps"] = rs[i].goodput_bps
            if REFERENCE in self.runs:
                ref = self.runs[REFERENCE][i].goodput_bps
                for b, rs in self.runs.items():
                    if b != REFERENCE:
                        row[f"{b}_vs_{REFERENCE}"] = rs[i].goodput_bps / ref - 1
            rows.append(row)
        return rows

    def records(self) -> list[dict[str, Any]]:
        """Every result as its record, point by point; at each point the run backends, then
        the predictions, each in the order given."""
        every = [*self.runs.values(), *self.predictions.values()]
        return [rs[i].to_json() for i in range(len(self.senders)) for rs in every]

    def curves(self) -> list[tuple[int, float]]:
        """The first prediction as (senders, goodput) points; empty without one."""
        for rs in self.predictions.values():
            return [(r.senders, r.goodput_bps) for r in rs]
        return []


def compare(
    points: Sequence[Scenario], backends: Sequence[Backend], tracker: Tracker | None = None
) -> Comparison:
    """Run every point on every backend (each backend once, in the order given)."""
    out = Comparison([sc.senders for sc in points], {}, {})
    for b in backends:
        (out.predictions if b.predicts else out.runs)[b.name] = []
    for sc in points:
        for b in backends:
            if tracker:
                tracker.start(f"{b.name} N={sc.senders}")
            (out.predictions if b.predicts else out.runs)[b.name].append(b.run(sc))
            if tracker:
                tracker.done()
    return out
