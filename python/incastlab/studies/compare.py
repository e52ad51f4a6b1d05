"""One scenario on several backends, side by side: the model's curve over the simulator's
points over real Linux TCP (the heart of incastlab, see the architecture note).

With repetitions (``repeat`` > 1) every backend that runs the scenario runs each point
``repeat`` times with seeds seed, seed + 1, … (for real TCP the seed only labels the run);
rows then give each backend's median goodput, and real TCP's min and max over repetitions:
the kernel's spread, which a simulated point should fall inside."""

from __future__ import annotations

import statistics
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
#: Backends whose spread over repetitions is reported (min and max): the measured ones.
SPREAD = ("emulate",)


def spread(values: Sequence[float]) -> tuple[float, float, float]:
    """(median, min, max) of ``values`` (at least one)."""
    return statistics.median(values), min(values), max(values)


def inside(value: float, lo: float, hi: float) -> bool:
    """Whether ``value`` lies in [lo, hi] (ends included)."""
    return lo <= value <= hi


def with_seed(sc: Scenario, seed: int) -> Scenario:
    """``sc`` with another seed."""
    from incastlab.scenario import apply_overrides, from_dict

    return from_dict(apply_overrides(sc.normalized(), {"seed": seed}), normalized=True)


@dataclass
class Comparison:
    """Each backend's results for the same sender counts."""

    senders: list[int]
    #: Backends that run the scenario (simulator, real TCP), in the order given: per point,
    #: the first repetition's result.
    runs: dict[str, list[Result]]
    #: Backends that predict it (the model): their goodput only, drawn as a curve.
    predictions: dict[str, list[Result]]
    #: Per run backend and point, every repetition (the first is ``runs``'); empty when the
    #: comparison was made without repetitions.
    repetitions: dict[str, list[list[Result]]] | None = None

    @property
    def repeat(self) -> int:
        """Runs per point of each run backend."""
        if not self.repetitions:
            return 1
        return max((len(reps) for rs in self.repetitions.values() for reps in rs), default=1)

    def all_runs(self, backend: str, i: int) -> list[Result]:
        """Every repetition of point ``i`` on ``backend``."""
        if self.repetitions and backend in self.repetitions:
            return self.repetitions[backend][i]
        return [self.runs[backend][i]]

    def goodput(self, backend: str, i: int) -> float:
        """The median goodput of point ``i`` over repetitions (the one run's without)."""
        return spread([r.goodput_bps for r in self.all_runs(backend, i)])[0]

    def rows(self) -> list[dict[str, Any]]:
        """One row per sender count: goodput and median block time per run backend, the
        predicted goodput, and each run backend's goodput against the simulator's. With
        repetitions, goodputs are medians over them, and the measured backends add their
        min and max (``emulate_goodput_min_bps``, ``…_max_bps``) and the run count."""
        repeated = self.repeat > 1
        rows = []
        for i, n in enumerate(self.senders):
            row: dict[str, Any] = {"senders": n}
            for b, rs in self.runs.items():
                if not repeated:
                    row[f"{b}_goodput_bps"] = rs[i].goodput_bps
                    row[f"{b}_block_time_median_s"] = rs[i].row()["block_time_median_s"]
                    continue
                runs = self.all_runs(b, i)
                med, lo, hi = spread([r.goodput_bps for r in runs])
                row[f"{b}_goodput_bps"] = med
                times = [t for r in runs if (t := r.row()["block_time_median_s"]) is not None]
                row[f"{b}_block_time_median_s"] = statistics.median(times) if times else None
                row[f"{b}_runs"] = len(runs)
                if b in SPREAD:
                    row[f"{b}_goodput_min_bps"] = lo
                    row[f"{b}_goodput_max_bps"] = hi
            for b, rs in self.predictions.items():
                row[f"{b}_goodput_bps"] = rs[i].goodput_bps
            if REFERENCE in self.runs:
                ref = row[f"{REFERENCE}_goodput_bps"]
                for b in self.runs:
                    if b != REFERENCE:
                        row[f"{b}_vs_{REFERENCE}"] = row[f"{b}_goodput_bps"] / ref - 1
                if repeated:
                    for b in SPREAD:
                        if b in self.runs:
                            lo, hi = row[f"{b}_goodput_min_bps"], row[f"{b}_goodput_max_bps"]
                            row[f"{REFERENCE}_inside_{b}"] = inside(ref, lo, hi)
            rows.append(row)
        return rows

    def records(self) -> list[dict[str, Any]]:
        """Every result as its record, point by point; at each point the run backends (each
        repetition, in order), then the predictions, each in the order given."""
        out = []
        for i in range(len(self.senders)):
            for b in self.runs:
                out += [r.to_json() for r in self.all_runs(b, i)]
            out += [rs[i].to_json() for rs in self.predictions.values()]
        return out

    def curves(self) -> list[tuple[int, float]]:
        """The first prediction as (senders, goodput) points; empty without one."""
        for rs in self.predictions.values():
            return [(r.senders, r.goodput_bps) for r in rs]
        return []


def compare(
    points: Sequence[Scenario],
    backends: Sequence[Backend],
    tracker: Tracker | None = None,
    *,
    repeat: int = 1,
    workers: int | None = None,
) -> Comparison:
    """Run every point on every backend; each backend that runs the scenario (not a
    prediction) ``repeat`` times with seeds seed, seed + 1, … The simulator's runs go first,
    on every core; real TCP's after them, one at a time (it must not share the CPUs);
    predictions here. The results are in the order given, whatever order they ran in."""
    from incastlab.series import run_many

    if repeat < 1:
        raise ValueError("repeat: at least 1")
    out = Comparison([sc.senders for sc in points], {}, {})
    if repeat > 1:
        out.repetitions = {b.name: [] for b in backends if not b.predicts}
    # Parallel backends first, so that none of their runs overlaps real TCP's.
    order = sorted(backends, key=lambda b: (b.predicts, not b.parallel))
    answers: dict[str, list[list[Result]]] = {}
    for b in order:
        times = 1 if b.predicts else repeat
        scs = [sc if k == 0 else with_seed(sc, sc.seed + k) for sc in points for k in range(times)]
        labels = [
            f"{b.name} N={sc.senders}" + (f" #{k + 1}" if times > 1 else "")
            for sc in points
            for k in range(times)
        ]
        runs = run_many(b, scs, labels, tracker, workers=1 if b.predicts else workers)
        answers[b.name] = [
            [r for r, _ in runs[i * times : (i + 1) * times]] for i in range(len(points))
        ]
    for b in backends:
        reps = answers[b.name]
        (out.predictions if b.predicts else out.runs)[b.name] = [r[0] for r in reps]
        if out.repetitions is not None and not b.predicts:
            out.repetitions[b.name] = reps
    return out


def plot(c: Comparison, titles: dict[str, str], path: str, *, title: str, model_label: str) -> str:
    """Goodput against senders: each run backend's median (o-), the measured backends'
    min–max over repetitions as a band, the first prediction as a dashed curve."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from incastlab.plot import COLORS, save_figure, scenario_line

    fig, ax = plt.subplots(figsize=(8, 4.8))
    n = c.senders
    link = None
    for k, b in enumerate(c.runs):
        color = COLORS[k % len(COLORS)]
        med = [c.goodput(b, i) / 1e6 for i in range(len(n))]
        label = titles.get(b, b) + (f" (median of {c.repeat})" if c.repeat > 1 else "")
        ax.plot(n, med, "o-", color=color, lw=2, ms=5, label=label)
        if b in SPREAD and c.repeat > 1:
            lo = [min(r.goodput_bps for r in c.all_runs(b, i)) / 1e6 for i in range(len(n))]
            hi = [max(r.goodput_bps for r in c.all_runs(b, i)) / 1e6 for i in range(len(n))]
            ax.fill_between(n, lo, hi, color=color, alpha=0.2, lw=0, label=f"{b}: min–max")
        link = c.runs[b][0].link_bps
    curve = c.curves()
    if curve:
        mn, mg = zip(*sorted(curve), strict=True)
        ax.plot(mn, [g / 1e6 for g in mg], "--", color="0.3", lw=1.2, label=model_label)
    if link:
        ax.axhline(link / 1e6, color="0.4", ls="--", lw=1)
        ax.set_ylim(0, link / 1e6 * 1.08)
    ax.set_xlabel("number of senders")
    ax.set_ylabel("goodput (Mbps)")
    ax.set_title(title, fontsize=13, loc="left", fontweight="bold", pad=20)
    first = next((rs[0] for rs in c.runs.values() if rs), None)
    if first is not None:
        ax.text(0, 1.025, scenario_line(first), transform=ax.transAxes, fontsize=8.5, color="0.35")
    ax.grid(alpha=0.3)
    ax.legend(frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return str(save_figure(fig, path))
