"""One-command reproductions of the papers' experiments.

Each experiment is a folder under ``experiments/``: ``experiment.toml`` (title, the papers it
``cites`` by key of :mod:`incastlab.reproductions.papers`, the ``source`` within them, the
paper's numbers, which check applies) and one or more sweep specs. An experiment that
``requires`` a transport whose runs have not yet produced its reference (``expected/``) is
*awaiting*: it runs when named, but is left out of the listing of finished experiments (and of
``--all``) until ``--update-expected`` has written its reference. Reproducing one runs its
sweeps into a results directory (so a rerun resumes), draws its figure, and writes
``verdict.md``: each of the paper's claims beside incastlab's number, graded by the one rule of
:mod:`incastlab.reproductions.findings` (agrees, shape only, disagrees) with its tolerance, and
the weakest grade as the headline. The checks live in :mod:`incastlab.reproductions.checks`, one
module per paper group.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from incastlab.reproductions.checks import (
    chen,
    eqds,
    fb2009,
    hadoop_jobs,
    homa,
    kv,
    ndp,
    rdma,
    rto,
    swift,
)
from incastlab.reproductions.findings import MARKS, Findings, Grade, Runs
from incastlab.reproductions.findings import onset_of as onset_of
from incastlab.reproductions.papers import citation
from incastlab.sweep.spec import load_spec
from incastlab.sweep.store import SweepStore

if TYPE_CHECKING:
    from incastlab.series import Tracker

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

EXPERIMENTS_DIR = Path(__file__).parent / "experiments"


@dataclass
class Experiment:
    """An experiment folder."""

    name: str
    path: Path
    meta: dict[str, Any]

    @property
    def title(self) -> str:
        return str(self.meta["title"])

    @property
    def sweeps(self) -> list[Path]:
        return [self.path / s for s in self.meta.get("sweeps", ["sweep.toml"])]

    def point_count(self) -> int:
        """Points of all its sweeps (those already stored included)."""
        return sum(len(load_spec(p).points()) for p in self.sweeps)

    @property
    def requires(self) -> str:
        """The transport the experiment needs beyond TCP and NDP ("" for none)."""
        return str(self.meta.get("requires", ""))

    @property
    def awaiting(self) -> bool:
        """It needs a transport and has no reference yet (no ``expected/verdict.md``)."""
        return bool(self.requires) and not (self.path / "expected" / "verdict.md").is_file()

    @property
    def sources(self) -> list[str]:
        """The papers it reproduces, cited in full, the first with where in it."""
        cites = [citation(k) for k in self.meta.get("cites", [])]
        where = self.meta.get("source", "")
        if cites and where:
            cites[0] += f" {where[0].upper()}{where[1:]}."
        return cites


def experiments(*, awaiting: bool = False) -> dict[str, Experiment]:
    """Every experiment with its reference, by name; ``awaiting``: those still awaiting their
    transport's first reference run as well."""
    out = {}
    for d in sorted(EXPERIMENTS_DIR.iterdir()):
        f = d / "experiment.toml"
        if f.is_file():
            e = Experiment(d.name, d, tomllib.loads(f.read_text(encoding="utf-8")))
            if awaiting or not e.awaiting:
                out[d.name] = e
    return out


CHECKS: dict[str, Callable[[Runs, dict[str, Any], Path], Findings]] = {
    "ndp_incast_scaling": ndp.ndp_incast_scaling,
    "chen_table1": chen.chen_table1,
    "chen_fig2": chen.chen_fig2,
    "chen_fig3": chen.chen_fig3,
    "chen_fig4": chen.chen_fig4,
    "chen_fig5": chen.chen_fig5,
    "cmu_rto": rto.cmu_rto,
    "hafeez_table1": rto.hafeez_table1,
    "hafeez_randomization": rto.hafeez_randomization,
    "hadoop_overhead": rto.hadoop_overhead,
    "riak_utilization": kv.riak_utilization,
    "dcqcn_incast": rdma.dcqcn_incast,
    "pfc_unfairness": rdma.pfc_unfairness,
    "hpcc_incast": rdma.hpcc_incast,
    "hpcc_fct_slowdown": rdma.hpcc_fct_slowdown,
    "swift_incast": swift.swift_incast,
    "eqds_incast": eqds.eqds_incast,
    "homa_incast": homa.homa_incast,
}

#: The checks of experiments with ``runner = "jobs"``: they run the job model themselves (no
#: sweep), given the experiment's settings, its output folder, the threads and a trace.
RUNNERS: dict[str, Callable[..., Findings]] = {
    "hadoop_jobs": hadoop_jobs.hadoop_jobs,
    "fb2009_replay": fb2009.fb2009_replay,
}


@dataclass
class Reproduction:
    """The outcome of reproducing one experiment."""

    experiment: Experiment
    findings: Findings
    wall_s: float
    out: Path
    failed_points: int

    @property
    def grade(self) -> Grade:
        """The headline: the weakest grade of the claims; a failed point leaves the
        reproduction unproven ("disagrees")."""
        return "disagrees" if self.failed_points else self.findings.grade

    @property
    def agrees(self) -> bool:
        return self.grade == "agrees"

    def to_json(self) -> dict[str, Any]:
        """The verdict as `incast reproduce --json` prints it."""
        return {
            "name": self.experiment.name,
            "grade": self.grade,
            "agrees": self.agrees,
            "wall_s": self.wall_s,
            "failed_points": self.failed_points,
            "claims": [c.to_json() for c in self.findings.claims],
            "verdict": str(self.out / "verdict.md"),
        }

    def verdict_md(self) -> str:
        e, f = self.experiment, self.findings
        counts = {g: sum(c.grade == g for c in f.claims) for g in MARKS}
        tally = ", ".join(f"{g}: {n}" for g, n in counts.items() if n)
        sources = e.sources
        lines = [f"# {e.title}", ""]
        lines += [f"Source: {sources[0]}" if len(sources) == 1 else "Sources:"]
        lines += [f"- {c}" for c in sources] if len(sources) > 1 else []
        lines += [
            "",
            f"**Verdict: {self.grade}** (the weakest of {len(f.claims)} claims: {tally}). "
            f"({self.wall_s:.1f} s on this machine)",
            "",
            "Each claim agrees within the tolerance stated after it; shape only: outside it, "
            "but the direction holds; disagrees: neither.",
            "",
        ]
        lines += [c.line() for c in f.claims]
        if self.grade != "agrees" and e.meta.get("differs"):
            lines += ["", "Why it differs: " + " ".join(str(e.meta["differs"]).split())]
        if self.failed_points:
            lines.append(
                f"- ✗ {self.failed_points} sweep points failed (see failed/ in the results)"
            )
        lines += ["", f.table, ""]
        lines += [f"![{name}]({name})" for name in f.figures]
        return "\n".join(lines) + "\n"


def reproduce(
    name: str,
    out_root: str | Path,
    *,
    workers: int | None = None,
    update_expected: bool = False,
    tracker: Tracker | None = None,
    trace: str | Path | None = None,
) -> Reproduction:
    """Run an experiment's sweeps, check them, draw its figures and write its verdict.
    ``tracker`` is told of every point (stored ones at once). Ctrl-C raises
    :class:`~incastlab.parallel.Interrupted`; every finished point stays stored, and a
    rerun resumes from them.

    Experiments with ``runner = "jobs"`` run the job model instead of sweeps; ``trace`` is the
    SWIM trace of those that replay one (``takes_trace``)."""
    from incastlab.sweep.run import run_points

    exps = experiments(awaiting=True)
    if name not in exps:
        raise KeyError(f"unknown experiment {name!r}; known: {', '.join(exps)}")
    e = exps[name]
    out = Path(out_root) / name
    t0 = time.perf_counter()
    if e.meta.get("runner") == "jobs":

        def said(message: str) -> None:
            if tracker:
                tracker.start(message)

        out.mkdir(parents=True, exist_ok=True)
        findings = RUNNERS[e.meta["check"]](
            e.meta,
            out,
            workers=workers or os.cpu_count() or 1,
            say=said if tracker else None,
            trace=None if trace is None else str(trace),
        )
        return _finish(e, findings, time.perf_counter() - t0, out, 0, update_expected)
    runs: Runs = {}
    failed = 0
    for path in e.sweeps:
        spec = load_spec(path)
        points = spec.points()
        store = SweepStore(out / "results" / path.stem)
        store.create(spec.store_meta(len(points), name=f"{name}/{path.stem}"))
        stored = len(store.done() & {p.key for p in points})
        if tracker:
            tracker.done(stored, what=f"{name}/{path.stem}")

        def progress(p: Any, ok: bool, where: str = f"{name}/{path.stem}") -> None:
            if tracker:
                tracker.done(what=where)

        res = run_points(points, store, workers=workers, progress=progress)
        failed += len(res.failed)
        keys = {p.key for p in points}
        runs[path.stem] = [r for r in store.rows() if r["key"] in keys]
    if e.meta["check"] == "hafeez_table1":
        failed = 0  # stalled background points are the finding, not a failure
    findings = CHECKS[e.meta["check"]](runs, e.meta.get("paper", {}), out)
    return _finish(e, findings, time.perf_counter() - t0, out, failed, update_expected)


def _finish(
    e: Experiment,
    findings: Findings,
    wall_s: float,
    out: Path,
    failed: int,
    update_expected: bool,
) -> Reproduction:
    """Write the verdict (and, if asked, the expected copy) of a finished experiment."""
    rep = Reproduction(e, findings, wall_s, out, failed)
    (out / "verdict.md").write_text(rep.verdict_md(), encoding="utf-8")
    if update_expected:
        exp = e.path / "expected"
        exp.mkdir(exist_ok=True)
        for fig in findings.figures:
            shutil.copy(out / fig, exp / fig)
        # The wall time differs from run to run; the reference keeps the rest.
        (exp / "verdict.md").write_text(_without_wall(rep.verdict_md()), encoding="utf-8")
    return rep


def _without_wall(md: str) -> str:
    return re.sub(r" \(\d+\.\d s on this machine\)", "", md)
