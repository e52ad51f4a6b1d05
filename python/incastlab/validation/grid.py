"""The validation grid: the scenarios on which the simulator is refereed by this machine's real
Linux TCP, and the simulator profiles it is compared under.

The grid (:data:`FULL`): 100 Mbps, 64 KB SRU, 32 KB and 128 KB switch ports, N = 1 … 32
senders, RTOmin 200 ms and 1 ms, CUBIC and BBR, 30 blocks per run. Each point runs

- on the real kernel (:mod:`incastlab.real.emulate`) ``repeat`` times (the seed only labels a
  repetition), every run stored as it finishes, one Parquet file per point and repetition, so
  a rerun resumes and the stored runs are the evidence (:mod:`.runs`);
- on the simulator, once per *profile* with each of :data:`SIM_SEEDS`, given the testbed's
  measured round trip (``topology.rtt``), framing, timing noise, tbf-shaped NICs and port
  (:mod:`incastlab.real.testbed.simulator`), its client's stalls (a single-flow kernel run's
  pauses per seed, and once more without them, so the summary shows what the figures owe to
  the replay) and this kernel's 4 ms timer tick (HZ = 250): ``classic`` measures RTTs on that
  clock too, as the papers' kernels did; ``linux`` measures them in µs and runs its timers on
  the tick (:func:`incastlab.real.testbed.simulator.profile`, from the engine's bundles). A
  profile is a name and the scenario overrides it stands for. A point the simulator refuses
  is recorded as missing for that profile, with the reason (:mod:`.sim`).

Per point: the kernel's median, min and max goodput over repetitions, each profile's median
over seeds, sim / real − 1, and whether the simulator's median lies inside the kernel's
min–max. The summary: per profile the median |sim / real − 1| and the share of points inside;
and at 2–16 senders with RTOmin 200 ms the ratio of BBR's goodput to CUBIC's, in the kernel
and in each profile (below 1: BBR collapses harder) (:mod:`.table`).

Everything is written under the output directory (:mod:`.report`, :mod:`.figure`):
``README.md`` (the command, the summary, the table, the points outside with a reason column
for people to fill), ``validation.png`` and ``validation.csv``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from incastlab.real.testbed.simulator import profile

if TYPE_CHECKING:
    from incastlab.scenario import Scenario

#: Seeds of the simulator per point and profile: as many as the grid's kernel runs, since
#: each seed replays a run of the testbed's client stalls drawn at random
#: (:func:`.runs.point_stalls`; two seeds may draw the same run).
SIM_SEEDS = tuple(range(1, 11))
#: The BBR-against-CUBIC question: these sender counts, with this RTOmin.
ORDERING_SENDERS = (2, 4, 8, 16)
ORDERING_RTO = "200ms"
#: BBR / CUBIC within this of 1 is a tie: neither collapses harder.
TIE = 0.05
#: Used when a point has no measured RTT (only if no stored run recorded one).
FALLBACK_RTT_S = 50e-6


@dataclass(frozen=True)
class Grid:
    """The scenarios validated: every combination of buffer, RTOmin, cc and sender count."""

    link: str = "100Mbps"
    sru: str = "64KB"
    buffers: tuple[str, ...] = ("32KB", "128KB")
    rto_mins: tuple[str, ...] = ("200ms", "1ms")
    ccs: tuple[str, ...] = ("cubic", "bbr")
    senders: tuple[int, ...] = (1, 2, 4, 8, 16, 32)
    blocks: int = 30
    #: Blocks run first and not measured, by the kernel's client and the simulator alike:
    #: the first block's slow-start overshoot belongs to no steady state.
    warmup: int = 1
    repeat: int = 10
    #: The first repetition's seed; repetition k has seed + k.
    seed: int = 1

    def points(self) -> list[Point]:
        return [
            Point(b, r, c, n)
            for b in self.buffers
            for r in self.rto_mins
            for c in self.ccs
            for n in self.senders
        ]


FULL = Grid()
#: A tiny grid to try the study (and for the tests): two points per cc, two repetitions.
QUICK = Grid(buffers=("32KB",), rto_mins=("200ms",), senders=(1, 4), blocks=5, repeat=2)


@dataclass(frozen=True)
class Point:
    buffer: str
    rto_min: str
    cc: str
    senders: int

    @property
    def key(self) -> str:
        """A file-name-safe name: ``32KB-200ms-cubic-N04``."""
        return f"{self.buffer}-{self.rto_min}-{self.cc}-N{self.senders:02d}"

    def overrides(self, grid: Grid) -> dict[str, Any]:
        return {
            "topology.senders": self.senders,
            "topology.link": grid.link,
            "topology.buffer": self.buffer,
            "tcp.rto_min": self.rto_min,
            "tcp.congestion_control": self.cc,
            "workload.sru": grid.sru,
            "workload.blocks": grid.blocks,
        }


def scenario(
    point: Point, grid: Grid, *, seed: int, extra: Mapping[str, Any] | None = None
) -> Scenario:
    """The point's scenario with ``seed`` and ``extra`` overrides (raises ScenarioError)."""
    from incastlab.scenario import apply_overrides, from_dict

    o = {**point.overrides(grid), "seed": seed, **dict(extra or {})}
    return from_dict(apply_overrides({}, o))


def profile_overrides(names: Iterable[str], sets: Iterable[str] = ()) -> dict[str, dict[str, Any]]:
    """Profiles by name: the engine's profile ``name`` on the testbed's kernel tick
    (:func:`incastlab.real.testbed.simulator.profile`), plus ``NAME:KEY=VALUE`` items of
    ``sets`` (``--profile-set``)."""
    from incastlab.series import parse_assignment

    out = {n: profile(n) for n in names}
    for item in sets:
        name, sep, assignment = item.partition(":")
        if not sep or not name:
            raise ValueError(f"--profile-set: expected NAME:KEY=VALUE, got {item!r}")
        key, value = parse_assignment(assignment, "--profile-set")
        out.setdefault(name, {})[key] = value
    if not out:
        raise ValueError("--profiles: name at least one profile (e.g. classic)")
    return out
