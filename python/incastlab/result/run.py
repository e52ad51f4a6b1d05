"""One point: one scenario run by one backend (:class:`Result`), kept apart from the package's
readers so that they (``legacy`` upgrades old records into Results) can import it without
importing themselves back."""

from __future__ import annotations

import itertools
import statistics
from dataclasses import dataclass, field
from typing import Any

from incastlab.units import PS_PER_S


@dataclass(frozen=True)
class Result:
    """One point: one scenario run by one backend."""

    scenario: dict[str, Any]
    report: dict[str, Any]
    version: str
    backend: str = "sim"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def seed(self) -> int:
        return int(self.scenario["seed"])

    @property
    def senders(self) -> int:
        return int(self.report["senders"])

    @property
    def goodput_bps(self) -> float:
        return float(self.report["goodput_bps"])

    @property
    def link_bps(self) -> int:
        return int(self.report["link_bps"])

    @property
    def goodput_fraction(self) -> float:
        """Goodput as a share of the receiver's link rate (NaN when the rate is unknown)."""
        return self.goodput_bps / self.link_bps if self.link_bps else float("nan")

    @property
    def timeouts(self) -> int:
        return int(self.report.get("timeouts") or 0)

    @property
    def events(self) -> int:
        return int(self.report.get("events") or 0)

    @property
    def duration_s(self) -> float:
        return float(self.report["duration"]) / PS_PER_S

    @property
    def block_times_s(self) -> list[float]:
        return [t / PS_PER_S for t in self.report.get("block_times", [])]

    @property
    def flow_completion_s(self) -> list[float | None]:
        flows = self.report.get("flows", [])
        return [None if f.get("fct") is None else f["fct"] / PS_PER_S for f in flows]

    @property
    def query_fct_s(self) -> list[tuple[int, float]]:
        """(response bytes, completion seconds) of every query (queries workload)."""
        return [(int(b), t / PS_PER_S) for b, t in self.report.get("query_fcts", [])]

    def fct_by_size(self, classes: int = 4) -> list[dict[str, float]]:
        """Mean and 99th-percentile query completion time per size class: the size range
        split into ``classes`` bins, equal in width, or in ratio when sizes span more than
        a decade (heavy-tailed empirical distributions)."""
        q = self.query_fct_s
        if not q:
            return []
        lo, hi = min(b for b, _ in q), max(b for b, _ in q)
        if hi > 10 * lo:
            ratio = (hi / lo) ** (1 / classes)
            edges = [round(lo * ratio**k) for k in range(classes)] + [hi + 1]
        else:
            width = max(1, (hi - lo + classes) // classes)
            edges = [lo + k * width for k in range(classes)] + [hi + 1]
        out = []
        for a, b in itertools.pairwise(edges):
            times = sorted(t for size, t in q if a <= size < b)
            if times:
                out.append(
                    {
                        "size_from": a,
                        "size_to": b,
                        "queries": len(times),
                        "fct_mean_s": statistics.fmean(times),
                        "fct_p99_s": times[min(len(times) - 1, int(0.99 * len(times)))],
                    }
                )
        return out

    @property
    def optimal_s(self) -> float | None:
        """Best possible completion of the incast workload: N·bytes·8/C plus the base
        latency (the NDP paper's yardstick); ``None`` for other workloads."""
        w = self.scenario["workload"]
        if w["kind"] != "incast":
            return None
        n = self.senders * w.get("tasks", 1)
        return float(
            n * w["flow_size"] * 8 / self.link_bps + self.report["base_latency"] / PS_PER_S
        )

    @property
    def fct_overhead(self) -> float | None:
        """The last flow's completion time over optimal, minus one (0.02 = 2% late)."""
        fcts = [x for x in self.flow_completion_s if x is not None]
        opt = self.optimal_s
        if not fcts or not opt:
            return None
        return max(fcts) / opt - 1

    @property
    def drops(self) -> int:
        return int(self.report.get("drops") or 0)

    @property
    def series(self) -> dict[str, Any] | None:
        """Sampled time series (``t`` in picoseconds from the workload start, bottleneck
        ``queue_bytes``, ``cwnd[flow]`` in segments), if ``run.sample_interval`` was set."""
        s: dict[str, Any] | None = self.report.get("series")
        return s

    def record(
        self,
        *,
        key: str | None = None,
        params: dict[str, Any] | None = None,
        wall_s: float | None = None,
    ) -> dict[str, Any]:
        """This run as the one flat record of :mod:`incastlab.result.record` (``key``,
        ``params`` and ``wall_s`` for a sweep point)."""
        from incastlab.result.record import record

        return record(self, key=key, params=params, wall_s=wall_s)

    def row(self) -> dict[str, Any]:
        """The record's identity, headline numbers, transport and seed: the cells of a table.
        A figure the backend cannot know is ``None``."""
        from incastlab.result.record import IDENTITY, METRICS

        rec = self.record()
        names = [n for n, _ in (*IDENTITY, *METRICS)] + ["transport", "seed"]
        return {n: rec[n] for n in names}

    def to_json(self) -> dict[str, Any]:
        """The record, ready for ``json.dumps`` (what ``--json`` prints)."""
        return self.record()
