"""A MapReduce job as tasks, and each task as phases.

A map task reads one HDFS block from its own disk (data locality: the scheduler runs it where a
replica lives; 0.18 and 0.20 read local blocks through the DataNode over loopback, so no switch
port is crossed), runs the map function, sorts and spills its output (io.sort.mb, io.sort.factor)
and, in a map-only job, writes its output to HDFS through the replication pipeline. A reduce
task fetches its partition of every map output (the shuffle: all the job's reducers at once,
each with at most mapred.reduce.parallel.copies hosts at once), merges what does not fit in memory
(fs.inmemory.size.mb, io.sort.factor), runs the reduce function and writes its output through
the pipeline. Network phases are shuffles and fan-ins timed by
:class:`~incastlab.jobs.network.Network` (packet level); disk and CPU phases come from
:class:`~incastlab.jobs.hadoop.Machines`.

Times are integer picoseconds; sizes bytes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from incastlab.jobs.hadoop import (
    FETCH_MESSAGES,
    FILE_CLOSE_MESSAGES,
    MACHINES,
    HadoopConfig,
    Machines,
    block_write_messages,
    seconds_ps,
)
from incastlab.jobs.network import FanIn, Load, Shuffle, Transfer


class Transfers(Protocol):
    """What times a job's transfers: :class:`~incastlab.jobs.network.Network`, or a stand-in."""

    def time_ps(self, f: Transfer) -> int: ...

    def message_sums_ps(
        self, load: Load, counts: Sequence[int], key: str, busy: float = 1.0
    ) -> list[int]: ...

    def line_rate_ps(self, nbytes: int) -> int: ...


@dataclass(frozen=True)
class Job:
    """One job of a workload: what it reads, shuffles and writes, and its task counts."""

    name: str
    submit_ps: int
    input_bytes: int
    shuffle_bytes: int
    output_bytes: int
    maps: int
    #: 0 for a map-only job (its maps write the output).
    reduces: int


@dataclass
class Task:
    """One task's phases, in picoseconds."""

    phases: dict[str, int] = field(default_factory=dict)
    #: Control messages the task waits for one after another, by the load on the port each
    #: crosses (before the copiers' parallelism hides some of them).
    messages: list[tuple[Load, int]] = field(default_factory=list)

    @property
    def duration_ps(self) -> int:
        return sum(self.phases.values())

    @property
    def network_ps(self) -> int:
        return sum(v for k, v in self.phases.items() if k in NETWORK_PHASES)


#: Phases that cross the switch (timed at packet level).
NETWORK_PHASES = frozenset({"shuffle", "shuffle_control", "hdfs_write_net", "hdfs_control"})


@dataclass
class Plan:
    """A job's tasks: every map task, then (once all maps are done) every reduce task."""

    job: Job
    maps: list[Task]
    reduces: list[Task]
    #: Before the first task may start and after the last one ends (job submission; 0.20's
    #: set-up and clean-up tasks).
    before_ps: int
    after_ps: int


def _io_ps(nbytes: float, disk_share_bps: float, cfg: HadoopConfig, m: Machines) -> int:
    """Reading or writing ``nbytes`` on a disk share, in io.file.buffer.size calls."""
    if nbytes <= 0:
        return 0
    calls = math.ceil(nbytes / cfg.io_buffer_bytes)
    return seconds_ps(nbytes / disk_share_bps + calls * m.io_call_s)


def merge_passes(segments: int, factor: int) -> int:
    """Merge passes over ``segments`` sorted runs, ``factor`` at a time (0 for one run)."""
    if segments <= 1:
        return 0
    return max(1, math.ceil(math.log(segments) / math.log(factor) - 1e-9))


def sort_buffer_bytes(cfg: HadoopConfig, m: Machines) -> int:
    """Map output a task buffers before it spills: 80% (io.sort.spill.percent) of the data part
    (95%) of io.sort.mb, or what the record metadata (5%, 16 bytes a record) indexes."""
    data = 0.8 * 0.95 * cfg.sort_bytes
    indexed = 0.8 * 0.05 * cfg.sort_bytes / 16 * m.record_bytes
    return int(min(data, indexed))


def _hdfs_write(
    task: Task,
    nbytes: int,
    writers_per_node: int,
    cfg: HadoopConfig,
    m: Machines,
    net: Transfers,
    disk_share_bps: float,
    key: str,
) -> None:
    """Write ``nbytes`` through the replication pipeline: the first replica on the local disk,
    the others on other workers. Disk and network run side by side (the pipeline streams), so
    the phase lasts as long as the slower of the two; the network part is the fan-in of the
    (replication − 1) · writers pipelines that land on each worker. Every block also waits for
    its control messages (:func:`~incastlab.jobs.hadoop.block_write_messages`), one after
    another, each crossing a port that the other writers' pipelines load."""
    if nbytes <= 0:
        return
    # Every worker's disk takes its own first replica and the other workers' extra ones.
    disk = _io_ps(nbytes * cfg.replication, disk_share_bps, cfg, m)
    net_ps = 0
    if cfg.replication > 1:
        pipelines = (cfg.replication - 1) * writers_per_node
        block = min(cfg.block_bytes, nbytes)
        net_ps = net.time_ps(
            FanIn(
                senders=min(pipelines, m.workers - 1),
                fragment=block,
                rounds=math.ceil(nbytes / block),
                tasks=1,
                window=0,
            )
        )
    task.phases["hdfs_write_disk"] = disk
    task.phases["hdfs_write_net"] = max(0, net_ps - disk)
    blocks = math.ceil(nbytes / cfg.block_bytes)
    pipelines = min((cfg.replication - 1) * writers_per_node, m.workers - 1)
    messages = blocks * block_write_messages(cfg.replication) + FILE_CLOSE_MESSAGES
    if net_ps <= disk:
        # The pipelines stream all through the write, each at the pace of the disks it
        # writes (every disk takes ``replication`` copies).
        load = Load(pipelines, round(8 * disk_share_bps / cfg.replication) if pipelines else 0)
        busy = 1.0
    else:
        # Network-bound: they fill the port while their bytes serialize, then it is idle.
        load = Load(pipelines)
        busy = min(1.0, net.line_rate_ps(pipelines * nbytes) / net_ps) if net_ps else 0.0
    task.phases["hdfs_control"] = net.message_sums_ps(load, [messages], key, busy)[0]
    task.messages.append((load, messages))


def _copier_excess(
    task: Task, fetch: Shuffle, shuffle_ps: int, cfg: HadoopConfig, net: Transfers, key: str
) -> int:
    """How much a reducer's copiers' control messages lengthen its shuffle beyond the
    simulated one.

    Each fetch first sends its GET into the map host's port, which that host's own reducers'
    fetches (reducers per host · copiers flows) keep full while they stream. A lost GET stalls
    only its copier: the other copiers' flows keep the reducer's link busy, so the shuffle lasts
    the longer of the simulated one (bandwidth-bound) and its slowest copier's chain of GETs
    (each with its round trip) and map outputs serialized at line rate (latency-bound)."""
    senders = max(1, math.ceil(fetch.fetches / fetch.reducers))
    per_host = math.ceil(fetch.reducers / fetch.hosts)
    copiers = min(cfg.parallel_copies, senders)
    fetches = senders * fetch.rounds
    counts = [fetches // copiers + (1 if c < fetches % copiers else 0) for c in range(copiers)]
    load = Load(per_host * copiers)
    # The map hosts' ports are busy while their own reducers' fetches stream: the share of the
    # shuffle that is serialization at line rate of the bytes into the busiest port (small
    # fetches leave the ports mostly idle).
    port_bytes = per_host * fetches * fetch.fragment
    busy = min(1.0, net.line_rate_ps(port_bytes) / shuffle_ps) if shuffle_ps else 0.0
    waits = net.message_sums_ps(load, [n * FETCH_MESSAGES for n in counts], key, busy)
    task.messages.append((load, max(counts) * FETCH_MESSAGES))
    data = net.line_rate_ps(fetch.fragment)
    chain = max(w + n * data for w, n in zip(waits, counts, strict=True))
    return max(0, chain - shuffle_ps)


def plan(job: Job, cfg: HadoopConfig, net: Transfers, m: Machines = MACHINES) -> Plan:
    """The tasks of ``job`` under ``cfg`` on ``m``'s workers, network phases timed by ``net``."""
    maps = max(1, job.maps)
    reduces = job.reduces
    map_disk = m.disk_bps / m.map_slots
    red_disk = m.disk_bps / m.reduce_slots
    startup = seconds_ps(m.task_startup_s)

    map_tasks = []
    left = job.input_bytes
    for i in range(maps):
        t = Task({"startup": startup})
        read = min(left, cfg.block_bytes) if job.input_bytes else 0
        left -= read
        t.phases["read"] = _io_ps(read, map_disk, cfg, m)
        out = job.shuffle_bytes / maps if reduces else 0.0
        # A map with no input generates its records (the shuffle job); either way the map
        # function touches every byte it reads or emits.
        t.phases["map"] = seconds_ps(max(read, out) / m.map_cpu_bps)
        if out > 0:
            spills = math.ceil(out / sort_buffer_bytes(cfg, m))
            passes = merge_passes(spills, cfg.sort_factor)
            t.phases["spill"] = _io_ps(out * (1 + 2 * passes), map_disk, cfg, m)
        if not reduces and job.output_bytes:
            writers = min(m.map_slots, math.ceil(maps / m.workers))
            key = f"{job.name}:{job.submit_ps}:map{i}"
            _hdfs_write(t, job.output_bytes // maps, writers, cfg, m, net, map_disk, key)
        map_tasks.append(t)

    reduce_tasks = []
    if reduces:
        per_reduce = job.shuffle_bytes / reduces
        side_by_side = min(m.reduce_slots, math.ceil(reduces / m.workers))
        map_hosts = min(m.workers, maps)
        # Every reducer that holds a slot fetches at once, all to all (later waves, if any,
        # are taken to meet the same network).
        fetch = Shuffle(
            hosts=m.workers,
            map_hosts=map_hosts,
            fragment=math.ceil(job.shuffle_bytes / (maps * reduces)),
            rounds=math.ceil(maps / map_hosts),
            reducers=min(reduces, m.workers * m.reduce_slots),
            window=cfg.parallel_copies,
        )
        senders = fetch.fetches
        shuffle_ps = net.time_ps(fetch) if senders > 0 else 0
        inmem = cfg.inmemory_bytes if cfg.version == "0.18.2" else int(0.7 * cfg.heap_bytes)
        for r in range(reduces):
            key = f"{job.name}:{job.submit_ps}:reduce{r}"
            t = Task({"startup": startup, "shuffle": shuffle_ps})
            if senders > 0:
                t.phases["shuffle_control"] = _copier_excess(t, fetch, shuffle_ps, cfg, net, key)
            if per_reduce > inmem:
                # Spilled in memory-sized runs, merged sort_factor at a time, read once more.
                passes = merge_passes(math.ceil(per_reduce / inmem), cfg.sort_factor)
                t.phases["merge"] = _io_ps(per_reduce * 2 * passes, red_disk, cfg, m)
            t.phases["reduce"] = seconds_ps(per_reduce / m.reduce_cpu_bps)
            _hdfs_write(
                t, job.output_bytes // reduces, side_by_side, cfg, m, net, red_disk, key + ":out"
            )
            reduce_tasks.append(t)

    before = seconds_ps(m.job_startup_s)
    after = 0
    if cfg.version == "0.20.2":
        before += seconds_ps(m.setup_cleanup_s / 2)
        after += seconds_ps(m.setup_cleanup_s / 2)
    return Plan(job, map_tasks, reduce_tasks, before, after)
