"""The Hadoop cluster a job runs on: Chen et al.'s Table 2 settings and the machine constants.

Table 2 of Chen, Griffith, Zats and Katz, "Understanding TCP Incast and Its Implications for Big
Data Workloads" (UC Berkeley tech report UCB/EECS-2012-40, 2012) lists, for each Hadoop setting,
the default value first and the tuned value second. :data:`DEFAULT` and :data:`TUNED` are those
two columns; :class:`Machines` holds what the table does not say (disk and CPU rates, task
start-up), each constant with the reason for its value. This module is the one owner of all of
them: the job model, the stand-alone jobs and the replay ask here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from incastlab.units import PS_PER_S

Version = Literal["0.18.2", "0.20.2"]


@dataclass(frozen=True)
class HadoopConfig:
    """One column of Table 2 (the Hadoop settings that change between default and tuned)."""

    #: Name shown in tables ("default", "tuned").
    name: str
    #: fs.inmemory.size.mb: the reducer's in-memory buffer for fetched map outputs, bytes.
    inmemory_bytes: int
    #: io.file.buffer.size: bytes per read/write call on HDFS and local files.
    io_buffer_bytes: int
    #: io.sort.mb: the map task's sort buffer, bytes.
    sort_bytes: int
    #: io.sort.factor: segments merged at once (map-side spills, reduce-side files).
    sort_factor: int
    #: dfs.block.size: HDFS block, and so the input of one map task, bytes.
    block_bytes: int
    #: dfs.replication: copies of every HDFS block written.
    replication: int
    #: mapred.reduce.parallel.copies: map outputs a reducer fetches at once (one per host).
    parallel_copies: int
    #: mapred.child.java.opts -Xmx: heap of each task JVM, bytes.
    heap_bytes: int
    #: Hadoop version: 0.20.2 adds a job set-up and a clean-up task to every job.
    version: Version = "0.18.2"

    def with_version(self, version: Version) -> HadoopConfig:
        return replace(self, version=version)


MB = 10**6
MiB = 2**20

#: Table 2's first values: Hadoop's defaults.
DEFAULT = HadoopConfig(
    name="default",
    inmemory_bytes=75 * MiB,
    io_buffer_bytes=4096,
    sort_bytes=100 * MiB,
    sort_factor=10,
    block_bytes=67108864,
    replication=3,
    parallel_copies=5,
    heap_bytes=200 * MiB,
)

#: Table 2's second values: tuned after the Hadoop sort benchmark and vendors' advice.
TUNED = HadoopConfig(
    name="tuned",
    inmemory_bytes=200 * MiB,
    io_buffer_bytes=131072,
    sort_bytes=200 * MiB,
    sort_factor=100,
    block_bytes=536870912,
    replication=1,
    parallel_copies=20,
    heap_bytes=512 * MiB,
)

CONFIGS = {c.name: c for c in (DEFAULT, TUNED)}


@dataclass(frozen=True)
class Machines:
    """The workers and what one of their tasks costs outside the network.

    The article's testbed: 20 workers and a master on DETER (3 GHz dual-core Xeon, one disk,
    1 Gbps to an HP Procurve 5412 with 64 KB per port). Where the article gives no number, the
    value below is a stated assumption of a 2009 machine; the verdicts report how much of each
    job is network so the reader can judge what these constants weigh.
    """

    #: Worker machines (the master runs no tasks).
    workers: int = 20
    #: Map slots per worker (mapred.tasktracker.map.tasks.maximum, default 2 = the two cores).
    map_slots: int = 2
    #: Reduce slots per worker (mapred.tasktracker.reduce.tasks.maximum, default 2).
    reduce_slots: int = 2
    #: Sequential rate of a worker's one SATA disk, bytes/s, shared by its running tasks.
    disk_bps: float = 70e6
    #: Map function throughput of one task on one 3 GHz core (terasort records), bytes/s.
    map_cpu_bps: float = 40e6
    #: Reduce function plus merge throughput of one task, bytes/s.
    reduce_cpu_bps: float = 40e6
    #: Cost of one read/write call of io.file.buffer.size bytes (system call plus the HDFS
    #: checksum per call): 4 KB calls cost 5 ms per MB, 128 KB calls 0.15 ms.
    io_call_s: float = 20e-6
    #: Start-up of a task: half of the 3 s TaskTracker heartbeat that hands it out (one task
    #: per heartbeat in 0.18 and 0.20) plus a fresh JVM (about 1 s).
    task_startup_s: float = 2.5
    #: A job's submission: splits computed, first heartbeat, final status poll.
    job_startup_s: float = 3.0
    #: 0.20.2's extra set-up and clean-up tasks (each a heartbeat and a JVM), which the
    #: article measures as "around 10 seconds" on every tuned job.
    setup_cleanup_s: float = 10.0
    #: Terasort record size: the sort buffer's record metadata (16 bytes each, 5% of
    #: io.sort.mb) fills before its data does for 100-byte records.
    record_bytes: int = 100


MACHINES = Machines()


def block_write_messages(replication: int) -> int:
    """Control messages one HDFS block's write waits for, each crossing a worker's switch port
    on its own (Hadoop 0.18 and 0.20's DFSClient and DataTransferProtocol): the NameNode's
    answer to ``addBlock`` (into the writer's port); per replica beyond the local first one,
    the WRITE_BLOCK op into its DataNode, that DataNode's pipeline set-up reply to the one
    upstream, and its acknowledgement of the block's last packet (an ack in mid-block is
    followed by the next packet's, so a lost one is repaired by duplicate ACKs under the
    80-packet window; the last one has nothing behind it)."""
    return 1 + 3 * (replication - 1)


#: Messages a write waits for once per file: the NameNode's answer to ``complete``.
FILE_CLOSE_MESSAGES = 1
#: Messages a shuffle fetch waits for before its data flows: the HTTP GET for the map output,
#: into the map host's port, which that host's own reducers' fetches keep full.
FETCH_MESSAGES = 1


def seconds_ps(s: float) -> int:
    """Seconds as integer picoseconds (the project's time unit)."""
    return round(s * PS_PER_S)
