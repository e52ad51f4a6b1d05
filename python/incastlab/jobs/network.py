"""How long a job's network transfers take: the packet-level simulator where incast happens,
memoized, and extrapolated per byte for long transfers.

Every transfer of the job model is a *fan-in*: one worker receives fragments from several hosts
at once. A reducer's shuffle is exactly the simulator's synchronized read: it fetches one map
output from each host holding some (Hadoop asks each host for one output at a time), at most
``mapred.reduce.parallel.copies`` hosts at once (the ``fanout_window``), the worker's reducers
reading side by side (``tasks``). An HDFS write pipeline is a fan-in of the pipelines that chose
this worker for a replica. Each fetch is a new HTTP connection, so every fragment starts in slow
start (``cwnd_restart = "block"``) from the 2009 kernel's one-segment first round (the window of
the article's Table 1, as in ``experiments/chen-fig4``).

Simulating a day of jobs packet by packet would take days, so :class:`Network` simulates each
distinct *shape* once, whole when it is at most :data:`SAMPLE_BYTES`, and otherwise a sample:

- fragment sizes are rounded to a grid of 2^(1/4) steps (≤ 9% apart, so nearby jobs share a
  run); the time is scaled by the bytes the rounding changed (fragments of at least
  :data:`SCALE_FROM`; smaller ones take round trips and slow start, not bytes);
- a larger transfer is simulated over fewer rounds (fragments per host), and only if one round
  is still too large over smaller fragments, and its time scaled by the bytes it left out: a
  flow-level extrapolation whose rate, timeouts included, comes from the packet level. Sampling
  rounds keeps each fragment's slow start and loss pattern; shrinking fragments does not (a
  timeout in the sample is multiplied with it), so it is the last resort.

Results are memoized by the simulated scenario (in memory and, given a path, in a JSON file), so
a replay simulates each distinct shape once. ``tests/test_jobs.py`` checks the extrapolation
against full packet-level runs and states its error.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from incastlab.units import PS_PER_S, parse_rate, parse_size, parse_time

#: Most bytes one simulated sample moves (about 2 s of simulator time on this machine).
SAMPLE_BYTES = 10**9
#: Fragments below this are simulated at their grid size without scaling.
SCALE_FROM = 64_000
#: Grid steps per doubling of the fragment size.
GRID_PER_DOUBLING = 4


@dataclass(frozen=True, order=True)
class FanIn:
    """One worker receiving ``rounds`` fragments of ``fragment`` bytes from each of ``senders``
    hosts, at most ``window`` hosts at once (0: all), for ``tasks`` readers side by side."""

    senders: int
    fragment: int
    rounds: int
    tasks: int
    window: int

    @property
    def bytes(self) -> int:
        return self.senders * self.fragment * self.rounds * self.tasks


@dataclass(frozen=True)
class Fabric:
    """The network every transfer crosses (the article's: one switch, 1 Gbps, 64 KB per port).

    ``topology`` is any of the simulator's (``star``, ``leaf_spine``, ``fat_tree``; hosts spread
    over them as the scenario's ``placement`` default does)."""

    topology: str = "star"
    link: str = "1Gbps"
    buffer: str = "64KB"
    rtt: str = "100us"
    seed: int = 1

    @property
    def link_bps(self) -> int:
        return parse_rate(self.link)

    @property
    def buffer_bytes(self) -> int:
        return parse_size(self.buffer)


def grid(fragment: int) -> int:
    """The simulated size for a fragment: the nearest 2^(1/4) step."""
    if fragment <= 0:
        return 0
    k = round(GRID_PER_DOUBLING * math.log2(fragment))
    return max(1, round(2 ** (k / GRID_PER_DOUBLING)))


def sample_of(f: FanIn) -> tuple[FanIn, float]:
    """The fan-in actually simulated for ``f`` and the factor its time is scaled by."""
    frag = grid(f.fragment)
    per_round = f.senders * f.tasks * frag
    rounds = max(1, min(f.rounds, SAMPLE_BYTES // max(1, per_round)))
    scale = f.rounds / rounds
    if per_round > SAMPLE_BYTES:
        frag = grid(SAMPLE_BYTES // (f.senders * f.tasks))
    if f.fragment >= SCALE_FROM:
        scale *= f.fragment / frag
    window = 0 if f.window >= f.senders else f.window
    return FanIn(f.senders, frag, rounds, f.tasks, window), scale


def scenario_of(f: FanIn, rto_min: str, fabric: Fabric) -> dict[str, Any]:
    """The simulator scenario of a (sampled) fan-in."""
    return {
        "seed": fabric.seed,
        "topology": {
            "kind": fabric.topology,
            "senders": f.senders,
            "link": fabric.link,
            "buffer": fabric.buffer,
            "rtt": fabric.rtt,
        },
        "tcp": {"rto_min": rto_min, "initial_window": 1, "cwnd_restart": "block"},
        "workload": {
            "kind": "sync_read",
            "sru": f"{f.fragment}B",
            "blocks": f.rounds,
            "fanout_window": f.window,
            "tasks": f.tasks,
        },
    }


def packet_level_ps(f: FanIn, rto_min: str, fabric: Fabric) -> int:
    """Simulate ``f`` whole, without sampling: its completion time in picoseconds."""
    from incastlab.backends.sim import simulate

    r = simulate(scenario_of(f, rto_min, fabric))
    return round(r.duration_s * PS_PER_S)


def payload_bps(fabric: Fabric) -> float:
    """Goodput of one saturated link: the payload share of each frame on the wire."""
    from incastlab import scenario as sc_mod

    tcp = sc_mod.from_dict({}).normalized()["tcp"]
    mss = int(tcp["mss"])
    return fabric.link_bps * mss / (mss + int(tcp["header_bytes"]) + int(tcp["phy_overhead"]))


def flow_level_ps(nbytes: int, fabric: Fabric) -> int:
    """The flow-level time of ``nbytes`` into one link: serialization at the payload rate plus
    one round trip (no losses, no timeouts)."""
    if nbytes <= 0:
        return 0
    return round(nbytes * 8 / payload_bps(fabric) * PS_PER_S) + parse_time(fabric.rtt)


class Network:
    """Memoized fan-in times for one RTOmin on one fabric."""

    def __init__(self, rto_min: str, fabric: Fabric | None = None, cache: Path | None = None):
        self.rto_min = rto_min
        self.fabric = fabric or Fabric()
        self._cache_path = cache
        self._times: dict[str, int] = {}
        self._lock = threading.Lock()
        self.simulated = 0
        if cache is not None and cache.is_file():
            self._times = {k: int(v) for k, v in json.loads(cache.read_text()).items()}

    def _key(self, sample: FanIn) -> str:
        from incastlab import __version__

        sc = scenario_of(sample, self.rto_min, self.fabric)
        return json.dumps([__version__, sc], sort_keys=True, separators=(",", ":"))

    def _sampled_ps(self, sample: FanIn) -> int:
        key = self._key(sample)
        with self._lock:
            hit = self._times.get(key)
        if hit is not None:
            return hit
        t = packet_level_ps(sample, self.rto_min, self.fabric)
        with self._lock:
            self._times[key] = t
            self.simulated += 1
        return t

    def time_ps(self, f: FanIn) -> int:
        """How long ``f`` takes, in picoseconds (0 for no bytes)."""
        if f.bytes <= 0:
            return 0
        sample, scale = sample_of(f)
        return round(self._sampled_ps(sample) * scale)

    def prepare(
        self,
        fanins: Iterable[FanIn],
        *,
        workers: int = 1,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Simulate every sample ``fanins`` need that is not cached yet, ``workers`` at once
        (threads: the simulator releases the GIL). Returns how many were simulated."""
        todo = sorted({sample_of(f)[0] for f in fanins if f.bytes > 0})
        todo = [s for s in todo if self._key(s) not in self._times]
        # The largest first, so the pool does not end on one long run.
        todo.sort(key=lambda s: -s.bytes)
        done = 0
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            for _ in pool.map(self._sampled_ps, todo):
                done += 1
                if progress:
                    progress(done, len(todo))
        self.save()
        return len(todo)

    def save(self) -> None:
        if self._cache_path is None:
            return
        self._cache_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self._cache_path.with_suffix(".tmp")
        with self._lock:
            tmp.write_text(json.dumps(self._times, sort_keys=True))
        tmp.replace(self._cache_path)
