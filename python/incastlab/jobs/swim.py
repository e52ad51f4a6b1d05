"""SWIM workload traces: read, scale to the simulated cluster, generate.

A SWIM trace (Chen, Ganapathi, Griffith and Katz, "The Case for Evaluating MapReduce Performance
Using Workload Suites", MASCOTS 2011; the SWIM project's ``workloadSuite``) is tab-separated, one
job a line, no header::

    job_id  submit_time_s  inter_job_gap_s  map_input_bytes  shuffle_bytes  reduce_output_bytes

:func:`scale` does what SWIM's ``GenerateReplayScript`` does to replay a trace on a smaller
cluster: every data size times ``cluster / trace_cluster`` (integer arithmetic; the FB-2009
trace comes from a 600-machine cluster, so 20 workers replay it at 1/30), then at least 64 MiB of
input (one HDFS block) and 1024 bytes of shuffle and output; submit times unchanged; reducers
``round((shuffle + output) / bytes_per_reduce)``, at least 1, and ``cluster // 5`` when that
exceeds the cluster. :func:`generate` writes a small trace with the same columns from a seeded
sampler, shipped as ``swim-small.tsv`` for default runs and tests (``incast jobs swim`` writes
it, or another draw): shaped like FB-2009, not Facebook's data.

The FB-2009 day itself is not shipped. It is ``workloadSuite/FB-2009_samples_24_times_1hr_0.tsv``
of the SWIM project (https://github.com/SWIMProjectUCB/SWIM; the wiki's "Workloads repository"
page lists it): 24 one-hour samples, 5,894 jobs, synthesized from six months (May to October
2009) of a 600-machine Facebook Hadoop cluster's trace, described in the MASCOTS paper above and
in Chen, Alspaugh and Katz, "Interactive Analytical Processing in Big Data Systems: A
Cross-Industry Study of MapReduce Workloads", PVLDB 5(12), 2012. SWIM's licence is the New BSD
licence (Copyright 2011 Regents of the University of California; two Java files derived from
Hadoop are Apache 2.0). Download the file and give it to ``incast reproduce fb2009-replay
--trace``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from incastlab.jobs.job import Job
from incastlab.units import PS_PER_S

FIELDS = (
    "job_id",
    "submit_time_s",
    "inter_job_gap_s",
    "map_input_bytes",
    "shuffle_bytes",
    "reduce_output_bytes",
)
#: The small generated trace shipped with incastlab (its default replay).
SMALL_TRACE = Path(__file__).with_name("swim-small.tsv")
#: Machines of the cluster the FB-2009 trace was recorded on (SWIM's README).
FB2009_CLUSTER = 600
#: Where the FB-2009 day comes from and under which licence (said wherever it is replayed).
FB2009_SOURCE = (
    "SWIM's FB-2009_samples_24_times_1hr_0.tsv, https://github.com/SWIMProjectUCB/SWIM, "
    "New BSD licence"
)
#: SWIM's floors after scaling: one 64 MiB block of input, 1 KiB of shuffle and output.
MIN_INPUT = 67108864
MIN_SHUFFLE = 1024
MIN_OUTPUT = 1024
#: Data per reduce task (SWIM's README: about an HDFS block).
BYTES_PER_REDUCE = 67108864


class TraceError(ValueError):
    """A trace that cannot be read: the message names the line and the field."""


@dataclass(frozen=True)
class Record:
    """One line of a SWIM trace."""

    job_id: str
    submit_s: float
    gap_s: float
    input_bytes: int
    shuffle_bytes: int
    output_bytes: int


def _number(text: str, where: str, field: str, *, whole: bool) -> float:
    try:
        v = int(text) if whole else float(text)
    except ValueError:
        kind = "a whole number of bytes" if whole else "a number of seconds"
        raise TraceError(f"{where}: {field}: expected {kind}, got {text[:40]!r}") from None
    if not math.isfinite(v) or v < 0:
        raise TraceError(f"{where}: {field}: must be a finite number >= 0, got {text[:40]!r}")
    return v


def parse(text: str, source: str = "trace") -> list[Record]:
    """The records of a SWIM trace; blank lines and ``#`` comments are skipped."""
    out: list[Record] = []
    last = 0.0
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cells = line.rstrip("\r\n").split("\t")
        where = f"{source} line {n}"
        if len(cells) != len(FIELDS):
            raise TraceError(
                f"{where}: expected {len(FIELDS)} tab-separated fields "
                f"({', '.join(FIELDS)}), got {len(cells)}"
            )
        if not cells[0].strip():
            raise TraceError(f"{where}: job_id: empty")
        submit = _number(cells[1], where, "submit_time_s", whole=False)
        gap = _number(cells[2], where, "inter_job_gap_s", whole=False)
        sizes = [int(_number(cells[i], where, FIELDS[i], whole=True)) for i in (3, 4, 5)]
        if submit < last:
            raise TraceError(
                f"{where}: submit_time_s: {cells[1]} is before the previous job's {last:g}"
                " (a trace is in submission order)"
            )
        last = submit
        out.append(Record(cells[0].strip(), submit, gap, *sizes))
    if not out:
        raise TraceError(
            f"{source}: no jobs (an empty trace); a SWIM trace has one job a line: "
            + "\t".join(FIELDS)
        )
    return out


def load(path: str | Path) -> list[Record]:
    """Read a SWIM trace file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TraceError(f"{p}: no such trace file") from None
    except UnicodeDecodeError:
        raise TraceError(f"{p}: not a text file (a SWIM trace is tab-separated text)") from None
    return parse(text, p.name)


def scale_factor(cluster: int, trace_cluster: int = FB2009_CLUSTER) -> float:
    return cluster / trace_cluster


def scale(
    records: list[Record],
    *,
    cluster: int,
    block_bytes: int,
    trace_cluster: int = FB2009_CLUSTER,
    bytes_per_reduce: int = BYTES_PER_REDUCE,
) -> list[Job]:
    """The trace's jobs on ``cluster`` workers, as SWIM's replay scripts size them."""
    jobs = []
    for r in records:
        inp = max(MIN_INPUT, r.input_bytes * cluster // trace_cluster)
        shuffle = max(MIN_SHUFFLE, r.shuffle_bytes * cluster // trace_cluster)
        output = max(MIN_OUTPUT, r.output_bytes * cluster // trace_cluster)
        reduces = max(1, round((shuffle + output) / bytes_per_reduce))
        if reduces > cluster:
            reduces = cluster // 5
        jobs.append(
            Job(
                name=r.job_id,
                submit_ps=round(r.submit_s * PS_PER_S),
                input_bytes=inp,
                shuffle_bytes=shuffle,
                output_bytes=output,
                maps=math.ceil(inp / block_bytes),
                reduces=reduces,
            )
        )
    return jobs


def generate(jobs: int = 150, seed: int = 2009, mean_gap_s: float = 15.0) -> str:
    """A SWIM-format trace drawn from a seeded sampler shaped like FB-2009 (at its 600-machine
    scale): exponential submission gaps (FB-2009: 5,894 jobs a day, one every 14.7 s) and
    log-normal sizes in three classes: most jobs read KB to MB, a fifth GB, a few hundreds of GB.
    Same seed, same bytes."""
    import numpy as np

    rng = np.random.default_rng(seed)
    lines = []
    t = 0
    for i in range(jobs):
        gap = max(1, round(rng.exponential(mean_gap_s)))
        t += gap
        u = rng.random()
        # (median input bytes, sigma of its log): small, medium, large classes.
        median, sigma = (2e5, 2.5) if u < 0.75 else (3e9, 1.0) if u < 0.96 else (2e11, 0.7)
        inp = int(median * math.exp(sigma * rng.standard_normal()))
        shuffle = 0 if rng.random() < 0.4 else int(inp * math.exp(rng.normal(-0.5, 1.0)))
        out = int(max(inp, shuffle) * math.exp(rng.normal(-1.5, 1.0)))
        lines.append(f"job{i}\t{t}\t{gap}\t{inp}\t{shuffle}\t{out}")
    return "\n".join(lines) + "\n"
