"""The article's stand-alone jobs: hdfsWrite, hdfsRead, shuffle and sort of 20 GB on 20 workers.

Each stresses one part of the I/O pipeline (sort moves its data 1-1-1 through read, shuffle and
write). Built as the Hadoop examples they come from size them: randomwriter-style writers run
one map per map slot; readers, shufflers and sorters one map per HDFS block; the sort example
runs 0.9 reduce tasks per reduce slot.
"""

from __future__ import annotations

import math

from incastlab.jobs.hadoop import MACHINES, HadoopConfig, Machines
from incastlab.jobs.job import Job

#: The article's data size per job.
DATA_BYTES = 20 * 10**9
NAMES = ("hdfsWrite", "hdfsRead", "shuffle", "sort")


def job(name: str, cfg: HadoopConfig, m: Machines = MACHINES, data: int = DATA_BYTES) -> Job:
    """The stand-alone job ``name`` (one of :data:`NAMES`) under ``cfg``."""
    blocks = math.ceil(data / cfg.block_bytes)
    reduces = int(0.9 * m.workers * m.reduce_slots)
    if name == "hdfsWrite":
        return Job(name, 0, 0, 0, data, m.workers * m.map_slots, 0)
    if name == "hdfsRead":
        return Job(name, 0, data, 0, 0, blocks, 0)
    if name == "shuffle":
        return Job(name, 0, 0, data, 0, blocks, reduces)
    if name == "sort":
        return Job(name, 0, data, data, data, blocks, reduces)
    raise KeyError(f"job: one of {', '.join(NAMES)}, got {name!r}")
