"""What the job-level checks (:mod:`.hadoop_jobs`, :mod:`.fb2009`) share: the two RTOmin values
a replay runs under, a job's overhead (Eq. 5) and transfer share, and a replay stored as Parquet.

Unlike the other checks these run no scenario sweep: they drive the job model of
:mod:`incastlab.jobs`, which simulates its network phases itself."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from incastlab import model
from incastlab.jobs import hadoop
from incastlab.jobs.replay import RTO_MINS, Replay

#: How a check tells the user what it is simulating.
Say = Callable[[str], None]
#: The RTOmin values every replay runs under: Linux's default and the 1 ms fix.
DEFAULT_RTO, SMALL_RTO = RTO_MINS


def overhead(r: Replay, i: int) -> float:
    """Job ``i``'s incast overhead (Eq. 5): how much longer it takes with the default RTOmin
    than with 1 ms, as a share of the latter."""
    return model.incast_overhead(
        r.outcomes[DEFAULT_RTO][i].completion_ps, r.outcomes[SMALL_RTO][i].completion_ps
    )


def transfer_share(r: Replay, i: int) -> float:
    """The simulated transfer share of a job with the 1 ms RTOmin: the part of its completion
    time a network that moved bytes in no time would save."""
    t = r.outcomes[SMALL_RTO][i].completion_ps
    return (t - r.unloaded[i].completion_ps) / t


def save_replay(r: Replay, path: Path, extra: dict[str, Any]) -> None:
    """Every job's outcome as Parquet, with the settings, fabric, seed and version."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from incastlab import __version__

    cols: dict[str, list[Any]] = {
        "job": [j.name for j in r.jobs],
        "submit_s": [j.submit_ps / 1e12 for j in r.jobs],
        "input_bytes": [j.input_bytes for j in r.jobs],
        "shuffle_bytes": [j.shuffle_bytes for j in r.jobs],
        "output_bytes": [j.output_bytes for j in r.jobs],
        "maps": [j.maps for j in r.jobs],
        "reduces": [j.reduces for j in r.jobs],
        "unloaded_s": [o.completion_ps / 1e12 for o in r.unloaded],
    }
    for rto, outs in r.outcomes.items():
        cols[f"completion_s_{rto}"] = [o.completion_ps / 1e12 for o in outs]
        cols[f"network_s_{rto}"] = [o.network_ps / 1e12 for o in outs]
    meta = {
        "config": {k: v for k, v in vars(r.config).items()},
        "machines": vars(hadoop.MACHINES),
        "fabric": vars(r.fabric),
        "seed": r.fabric.seed,
        "policy": r.policy,
        "incastlab_version": __version__,
        **extra,
    }
    table = pa.table(cols).replace_schema_metadata({"incastlab": json.dumps(meta, default=str)})
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
