"""How long a job's network transfers take: the packet-level simulator where incast happens,
memoized, and extrapolated per byte for long transfers.

A job's shuffle is a :class:`Shuffle`, simulated all to all with the simulator's ``shuffle``
workload: every reducer of the job at once, each fetching one map output at a time from each
host holding some (Hadoop asks each host for one output at a time), at most
``mapred.reduce.parallel.copies`` hosts at once (the ``fanout_window``), the next as one
completes. Every worker is then at once a receiver (its reducers' fetches fill its port) and a
sender (its NIC serves other reducers' fetches, whose ACKs and requests cross its own full
port), and no barrier holds a copier back. RTOmin 200 ms costs it far less than it costs one
worker's isolated fan-in of the same fetches with the synchronized read's barriers, as the model
timed shuffles before (measured in ``docs/jobs.md``). An HDFS write pipeline is a
:class:`FanIn`: one worker receiving the pipelines that chose it for a replica, the simulator's
synchronized read. Every response starts in slow start (``cwnd_restart = "block"``) from the
2009 kernel's one-segment first round (the window of the article's Table 1, as in
``experiments/chen-fig4``).

Simulating a day of jobs packet by packet would take days, so :class:`Network` simulates each
distinct *shape* once, whole when it is at most :data:`SAMPLE_BYTES` (a shuffle: that much per
host running reducers, so each port carries as much as a fan-in's), and otherwise a sample:

- fragment sizes are rounded to a grid of 2^(1/4) steps (≤ 9% apart, so nearby jobs share a
  run); the time is scaled by the bytes the rounding changed (fragments of at least
  :data:`SCALE_FROM`; smaller ones take round trips and slow start, not bytes);
- a larger transfer is simulated over fewer rounds (fragments per host), and only if one round
  is still too large over smaller fragments, and its time scaled by the bytes it left out: a
  flow-level extrapolation whose rate, timeouts included, comes from the packet level. Sampling
  rounds keeps each fragment's slow start and loss pattern; shrinking fragments does not (a
  timeout in the sample is multiplied with it), so it is the last resort.

Hadoop's control exchanges (a shuffle fetch's HTTP request, an HDFS pipeline's set-up and
last acknowledgement, the NameNode's answer to ``addBlock``) are one-segment messages that cross
a worker's switch port while bulk data fills it. :meth:`Network.message_latencies` simulates
such messages at packet level, each on its own idle connection, behind a given :class:`Load` of
long-lived flows into the same port: their latency distribution (queueing, drops, the
retransmission timeout of the RTOmin under study and its back-off) is what the job model draws
from for every exchange on a task's critical path.

Results are memoized by the simulated scenario (in memory and, given a path, in a JSON file), so
a replay simulates each distinct shape once. ``tests/test_jobs.py`` checks the extrapolation
against full packet-level runs and states its error.
"""

from __future__ import annotations

import functools
import json
import math
import random
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from incastlab.units import PS_PER_S, parse_rate, parse_size, parse_time

#: Most bytes one simulated sample moves (about 2 s of simulator time on one core).
SAMPLE_BYTES = 10**9
#: Fragments below this are simulated at their grid size without scaling.
SCALE_FROM = 64_000
#: Grid steps per doubling of the fragment size.
GRID_PER_DOUBLING = 4

#: Control messages simulated per :class:`Load`: enough that the 200 ms tail (the share of
#: messages that wait out one or more timeouts, 8-25% behind 2-10 saturating flows) is sampled
#: by hundreds of messages.
MESSAGES = 2000
#: Each message has its own connection, idle since its last message (an RPC or a fresh HTTP
#: connection, never queued behind another message's retransmission): the message rate per
#: connection stays below one per 2 s even at :data:`MESSAGE_RATE`.
MESSAGE_CONNECTIONS = 500
#: Messages per second into the loaded port (about 2 s of simulated time per :class:`Load`);
#: 250 bytes each, they add 0.4% to the port's load.
MESSAGE_RATE = 1000
#: Bytes of one control message (an HTTP GET for a map output, a DataTransferProtocol op or
#: reply, an RPC answer): all fit one segment, which is what decides how a loss is repaired.
MESSAGE_BYTES = 250


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


@dataclass(frozen=True, order=True)
class Shuffle:
    """A job's shuffle, all to all: ``reducers`` reducers on the cluster's ``hosts`` (reducer i
    on host i mod ``hosts``, as the job tracker hands them out in turn), each fetching
    ``rounds`` map outputs of ``fragment`` bytes from each of the last ``map_hosts`` hosts but
    its own, at most ``window`` hosts at once (0: all)."""

    hosts: int
    map_hosts: int
    fragment: int
    rounds: int
    reducers: int
    window: int

    @property
    def reducer_hosts(self) -> int:
        return min(self.hosts, self.reducers)

    @property
    def fetches(self) -> int:
        """Map outputs fetched per round: every (reducer, map host) pair but a reducer's own
        host, whose outputs it reads locally."""
        first_map_host = self.hosts - self.map_hosts
        local = sum(1 for r in range(self.reducers) if r % self.hosts >= first_map_host)
        return self.reducers * self.map_hosts - local

    @property
    def bytes(self) -> int:
        return self.fetches * self.fragment * self.rounds


#: What the job model times at packet level.
Transfer = FanIn | Shuffle


@dataclass(frozen=True)
class Fabric:
    """The network every transfer crosses (the article's: one switch, 1 Gbps, 64 KB per port).

    ``topology`` is any of the simulator's (``star``, ``leaf_spine``, ``fat_tree``; hosts spread
    over them as the scenario's ``placement`` default does). ``delayed_ack`` is the hosts'
    delayed-ACK timeout ("off": every segment acknowledged at once, as the ``chen-*``
    experiments run); Linux 2.6.28, the article's kernel, delays ACKs by up to 40 ms outside
    its quick-ACK mode. With a timeout the simulator's Linux delayed-ACK engine is on
    (``tcp.quickack``), which also never holds an ACK longer than RTOmin less a tick, as
    Linux does only since 6.7: it understates the spurious timeouts a 1 ms RTOmin had in 2009."""

    topology: str = "star"
    link: str = "1Gbps"
    buffer: str = "64KB"
    rtt: str = "100us"
    seed: int = 1
    delayed_ack: str = "off"

    def tcp(self, rto_min: str) -> dict[str, Any]:
        """The hosts' TCP (the 2009 kernel's one-segment first round, as the article's Table 1)
        with the RTOmin under study."""
        # The 2009 kernel: the classic profile, whatever the default profile is.
        tcp: dict[str, Any] = {"profile": "classic", "rto_min": rto_min, "initial_window": 1}
        if self.delayed_ack != "off":
            tcp.update(delayed_ack=self.delayed_ack, quickack=True)
        return tcp

    @property
    def link_bps(self) -> int:
        return parse_rate(self.link)

    @property
    def buffer_bytes(self) -> int:
        return parse_size(self.buffer)


@dataclass(frozen=True, order=True)
class Load:
    """What fills a worker's port while a control message crosses it: ``flows`` long-lived
    bulk flows into it, each limited to ``flow_bps`` by its source (0: only by the network,
    as shuffle fetches are; HDFS pipelines move at the pace of the disks they write)."""

    flows: int
    flow_bps: int = 0


#: A port nothing else crosses.
IDLE = Load(0)


def grid(fragment: int) -> int:
    """The simulated size for a fragment: the nearest 2^(1/4) step."""
    if fragment <= 0:
        return 0
    k = round(GRID_PER_DOUBLING * math.log2(fragment))
    return max(1, round(2 ** (k / GRID_PER_DOUBLING)))


def sample_of(f: Transfer) -> tuple[Transfer, float]:
    """The transfer actually simulated for ``f`` and the factor its time is scaled by."""
    if isinstance(f, Shuffle):
        return _shuffle_sample(f)
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


def _shuffle_sample(s: Shuffle) -> tuple[Shuffle, float]:
    """As for a fan-in, with :data:`SAMPLE_BYTES` for each host running reducers."""
    frag = grid(s.fragment)
    fetches = max(1, s.fetches)
    budget = SAMPLE_BYTES * s.reducer_hosts
    per_round = fetches * frag
    rounds = max(1, min(s.rounds, budget // per_round))
    scale = s.rounds / rounds
    if per_round > budget:
        frag = grid(budget // fetches)
    if s.fragment >= SCALE_FROM:
        scale *= s.fragment / frag
    window = 0 if s.window >= s.map_hosts else s.window
    return Shuffle(s.hosts, s.map_hosts, frag, rounds, s.reducers, window), scale


def scenario_of(f: Transfer, rto_min: str, fabric: Fabric) -> dict[str, Any]:
    """The simulator scenario of a (sampled) transfer."""
    if isinstance(f, Shuffle):
        return {
            "seed": fabric.seed,
            "topology": {
                "kind": fabric.topology,
                "senders": f.hosts,
                "link": fabric.link,
                "buffer": fabric.buffer,
                "rtt": fabric.rtt,
            },
            "tcp": {**fabric.tcp(rto_min), "cwnd_restart": "block"},
            "workload": {
                "kind": "shuffle",
                "sru": f"{f.fragment}B",
                "blocks": f.rounds,
                "fanout_window": f.window,
                "reducers": f.reducers,
                "map_hosts": 0 if f.map_hosts >= f.hosts else f.map_hosts,
            },
        }
    return {
        "seed": fabric.seed,
        "topology": {
            "kind": fabric.topology,
            "senders": f.senders,
            "link": fabric.link,
            "buffer": fabric.buffer,
            "rtt": fabric.rtt,
        },
        "tcp": {**fabric.tcp(rto_min), "cwnd_restart": "block"},
        "workload": {
            "kind": "sync_read",
            "sru": f"{f.fragment}B",
            "blocks": f.rounds,
            "fanout_window": f.window,
            "tasks": f.tasks,
        },
    }


def message_scenario(load: Load, rto_min: str, fabric: Fabric) -> dict[str, Any]:
    """The simulator scenario that measures control messages behind ``load``: the ``queries``
    workload (one-segment request, one-segment answer, each pair on one of
    :data:`MESSAGE_CONNECTIONS` idle connections) into the receiver whose port ``load.flows``
    background flows keep busy from their own hosts."""
    sc: dict[str, Any] = {
        "seed": fabric.seed,
        "topology": {
            "kind": fabric.topology,
            "senders": MESSAGE_CONNECTIONS,
            "link": fabric.link,
            "buffer": fabric.buffer,
            "rtt": fabric.rtt,
        },
        "tcp": fabric.tcp(rto_min),
        "workload": {
            "kind": "queries",
            "queries": MESSAGES,
            "query_load": MESSAGE_RATE * MESSAGE_BYTES * 8 / fabric.link_bps,
            "request_size": f"{MESSAGE_BYTES}B",
            "query_size_min": f"{MESSAGE_BYTES}B",
            "query_size_max": f"{MESSAGE_BYTES}B",
        },
        "background": {"flows": load.flows, "source": "own_hosts", "destination": "receiver"},
    }
    if load.flows and load.flow_bps:
        # Every host is capped; the messages' hosts send a segment now and then, far below it.
        sc["topology"]["host_rate_cap"] = f"{load.flow_bps}bps"
    return sc


def message_latencies_ps(load: Load, rto_min: str, fabric: Fabric) -> list[int]:
    """Simulate control messages behind ``load``: each one's latency (request written to
    answer read), sorted, in picoseconds."""
    from incastlab.backends.sim import simulate

    r = simulate(message_scenario(load, rto_min, fabric))
    return sorted(int(t) for _, t in r.report["query_fcts"])


def packet_level_ps(f: Transfer, rto_min: str, fabric: Fabric) -> int:
    """Simulate ``f`` whole, without sampling: its completion time in picoseconds (a
    shuffle's: until its last reducer has every map output)."""
    from incastlab.backends.sim import simulate

    r = simulate(scenario_of(f, rto_min, fabric))
    return round(r.duration_s * PS_PER_S)


@functools.cache
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
    """Memoized transfer times for one RTOmin on one fabric."""

    def __init__(self, rto_min: str, fabric: Fabric | None = None, cache: Path | None = None):
        self.rto_min = rto_min
        self.fabric = fabric or Fabric()
        self._cache_path = cache
        self._times: dict[str, int] = {}
        self._messages: dict[str, list[int]] = {}
        self._lock = threading.Lock()
        self.simulated = 0
        if cache is not None and cache.is_file():
            self._times = {k: int(v) for k, v in json.loads(cache.read_text()).items()}
        if self._messages_path is not None and self._messages_path.is_file():
            self._messages = json.loads(self._messages_path.read_text())

    @property
    def _messages_path(self) -> Path | None:
        """Where the control-message samples are kept, beside the fan-in times."""
        if self._cache_path is None:
            return None
        return self._cache_path.with_name(self._cache_path.stem + "-messages.json")

    def _key(self, sample: Transfer) -> str:
        from incastlab import __version__

        sc = scenario_of(sample, self.rto_min, self.fabric)
        return json.dumps([__version__, sc], sort_keys=True, separators=(",", ":"))

    def _sampled_ps(self, sample: Transfer) -> int:
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

    def _message_key(self, load: Load) -> str:
        from incastlab import __version__

        sc = message_scenario(load, self.rto_min, self.fabric)
        return json.dumps([__version__, sc], sort_keys=True, separators=(",", ":"))

    def message_latencies(self, load: Load) -> list[int]:
        """Latencies of control messages behind ``load`` (sorted, picoseconds): simulated once
        per load, then memoized."""
        key = self._message_key(load)
        with self._lock:
            hit = self._messages.get(key)
        if hit is not None:
            return hit
        lat = message_latencies_ps(load, self.rto_min, self.fabric)
        with self._lock:
            self._messages[key] = lat
            self.simulated += 1
        return lat

    def messages_ps(self, load: Load, u: Sequence[float]) -> list[int]:
        """The latency of one message behind ``load`` for each uniform draw in ``u``: the
        draw's quantile of the simulated sample (the same draws under both RTOmin values
        compare like with like)."""
        lat = self.message_latencies(load)
        n = len(lat)
        return [lat[min(n - 1, int(x * n))] for x in u]

    def message_sums_ps(
        self, load: Load, counts: Sequence[int], key: str, busy: float = 1.0
    ) -> list[int]:
        """For each ``count``, the summed latency of that many control messages, one after
        another, each meeting ``load`` with probability ``busy`` (the share of the time its
        port carries it) and an idle port otherwise. The draws are seeded by the fabric's seed
        and ``key`` (the task asking), so both RTOmin values see the same draws, each through
        its own sample."""
        rng = random.Random(f"{self.fabric.seed}:{key}")
        idle = IDLE if busy < 1 else load
        out = []
        for c in counts:
            draws = [(rng.random(), rng.random()) for _ in range(c)]
            behind = [u for b, u in draws if b < busy]
            alone = [u for b, u in draws if b >= busy]
            out.append(sum(self.messages_ps(load, behind)) + sum(self.messages_ps(idle, alone)))
        return out

    def line_rate_ps(self, nbytes: int) -> int:
        """``nbytes`` serialized at the payload rate of one link (no round trip)."""
        return round(nbytes * 8 / payload_bps(self.fabric) * PS_PER_S)

    def time_ps(self, f: Transfer) -> int:
        """How long ``f`` takes, in picoseconds (0 for no bytes)."""
        if f.bytes <= 0:
            return 0
        sample, scale = sample_of(f)
        return round(self._sampled_ps(sample) * scale)

    def prepare(
        self,
        fanins: Iterable[Transfer],
        loads: Iterable[Load] = (),
        *,
        workers: int = 1,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Simulate every sample the transfers ``fanins`` need and every control-message
        ``loads`` that is not cached yet, ``workers`` at once (threads: the simulator releases
        the GIL). Returns how many were simulated."""
        samples = {sample_of(f)[0] for f in fanins if f.bytes > 0}
        # The largest first, so the pool does not end on one long run; all to all costs about
        # twice a fan-in's wall time per byte.
        todo = sorted(
            (s for s in samples if self._key(s) not in self._times),
            key=lambda s: (-s.bytes * (2 if isinstance(s, Shuffle) else 1), repr(s)),
        )
        loads = sorted({x for x in loads if self._message_key(x) not in self._messages})
        runs: list[Callable[[], object]] = [
            *(lambda s=s: self._sampled_ps(s) for s in todo),
            *(lambda x=x: self.message_latencies(x) for x in loads),
        ]
        done = 0
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            for _ in pool.map(lambda run: run(), runs):
                done += 1
                if progress:
                    progress(done, len(runs))
        self.save()
        return len(runs)

    def save(self) -> None:
        if self._cache_path is None:
            return
        self._cache_path.parent.mkdir(parents=True, exist_ok=True)
        for path, data in ((self._cache_path, self._times), (self._messages_path, self._messages)):
            assert path is not None
            tmp = path.with_suffix(".tmp")
            with self._lock:
                tmp.write_text(json.dumps(data, sort_keys=True))
            tmp.replace(path)
