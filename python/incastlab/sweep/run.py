"""Running a sweep's points: a local process pool or a Dask cluster, through one code path.

Workers only compute: each gets a point's normalized scenario as JSON and returns its
:class:`Result`. The parent process alone turns results into records and writes the store, one
file per point as each finishes, so an interrupted sweep keeps everything that finished and a
rerun skips it. A point that raises is recorded with its error and the others go on.
"""

from __future__ import annotations

import json
import logging
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from incastlab import _core, backends
from incastlab.parallel import Interrupted, as_finished, cores, process_pool
from incastlab.parallel import die_with_parent as die_with_parent
from incastlab.result import Result
from incastlab.sweep import cluster as cluster_mod
from incastlab.sweep.cluster import Finished, Job
from incastlab.sweep.spec import Point
from incastlab.sweep.store import SweepStore


class DaskMissing(RuntimeError):
    """--dask was asked for without Dask's distributed scheduler installed."""


class PointError(Exception):
    """A point failed in a worker (the message names the original exception)."""


class SweepStopped(RuntimeError):
    """The machines under the sweep failed it, not a point: the results disk refused a write
    (full, read-only), the Dask scheduler went away, a worker process of the pool died. The
    message is one line saying what, how many points this run stored (``stored``) and that a
    rerun completes the sweep: every point stored is whole, none is stored twice."""

    def __init__(self, what: str, stored: int) -> None:
        super().__init__(what)
        self.stored = stored


def _infrastructure(e: BaseException) -> str | None:
    """What ``e`` from a point's future says about the machines, or ``None`` for an error
    of the point itself (recorded, the sweep goes on).

    Every error of a point's own code arrives as :class:`PointError`. Dask's ``KilledWorker``
    (the point took down every worker it was tried on) is the point's too. A broken process
    pool, or a cancelled future or lost connection (which :mod:`incastlab.sweep.cluster`
    answers by submitting again; one that still arrives here) are the machines': no point is
    blamed for them."""
    import asyncio
    from concurrent.futures import CancelledError as FutureCancelled
    from concurrent.futures.process import BrokenProcessPool

    if isinstance(e, PointError) or type(e).__name__ == "KilledWorker":
        return None
    if isinstance(e, BrokenProcessPool):
        return "a worker process ended without an answer (killed, or out of memory?)"
    if isinstance(e, asyncio.CancelledError | FutureCancelled):
        return f"the Dask scheduler dropped the work (restarted, or its connection lost: {e})"
    if isinstance(e, OSError | TimeoutError) or type(e).__name__ == "CommClosedError":
        return f"lost the Dask scheduler ({type(e).__name__}: {e})"
    return None


def disk_error(e: OSError, store: SweepStore) -> str:
    """One line for a write the results directory refused."""
    return f"cannot write to {store.root}: {e.strerror or e}"


def run_point(backend: str, scenario_json: str) -> dict[str, Any]:
    """Run one point in a worker: its :class:`Result` and its wall time."""
    try:
        return _run_point(backend, scenario_json)
    except Exception as e:
        # Exceptions cross process (and machine) boundaries pickled; this one always can.
        raise PointError(f"{type(e).__name__}: {e}") from None


def _run_point(backend: str, scenario_json: str) -> dict[str, Any]:
    from incastlab import backends
    from incastlab.scenario import Scenario

    t0 = time.perf_counter()
    # The spec normalized (and so validated) every point; the engine guards its own input.
    sc = Scenario(json.loads(scenario_json))
    r = backends.get(backend).run(sc)
    return {"result": r, "wall_s": time.perf_counter() - t0}


@dataclass
class Outcome:
    """What a sweep run did."""

    total: int
    skipped: int = 0
    ran: int = 0
    failed: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    #: Point files that did not read back, computed again.
    repaired: list[str] = field(default_factory=list)
    #: Keys of the points this run stored, in the order they finished.
    stored: list[str] = field(default_factory=list)

    def summary(self, root: Path) -> dict[str, Any]:
        """What ``incast sweep --json`` prints."""
        return {
            "dir": str(root),
            "points": self.total,
            "already_done": self.skipped,
            "ran": self.ran,
            "failed": len(self.failed),
            "repaired": self.repaired,
            "wall_s": self.wall_s,
        }


Progress = Callable[[Point, bool], None]
#: Every job run: each key once with its result or the exception it raised, as they finish.
Outcomes = Callable[[dict[str, Job]], Iterator[Finished]]


@contextmanager
def _executor(workers: int, dask: str | None) -> Iterator[Outcomes]:
    """The process pool, this process or a Dask client, as :data:`Outcomes`; on Ctrl-C (or
    any exception) the work not yet done is cancelled before the exception goes on."""
    if dask is None and workers == 1:
        yield _here
        return
    if dask is None:
        with process_pool(workers) as pool:
            yield lambda jobs: _pooled(pool, jobs)
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise DaskMissing(
            "--dask needs Dask's distributed scheduler: pip install 'incastlab[cluster]'"
        ) from None
    if dask == "local":
        with (
            LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.CRITICAL,  # failures are recorded in the store
            ) as cluster,
            Client(cluster) as client,
        ):
            yield from _dask_session(client)
    else:
        try:
            client = Client(dask, timeout=cluster_mod.PATIENCE_S)
        except (OSError, TimeoutError) as e:
            raise SweepStopped(f"cannot reach the Dask scheduler at {dask}: {e}", 0) from None
        with client:
            yield from _dask_session(client)


def _here(jobs: dict[str, Job]) -> Iterator[Finished]:
    """Each job run in this process, in turn: real TCP's points (whose clean-up must see
    Ctrl-C), and any sweep given one worker."""
    for key, (fn, args) in jobs.items():
        try:
            res = fn(*args)
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException as e:
            yield key, None, e
            continue
        yield key, res, None


def _pooled(pool: Any, jobs: dict[str, Job]) -> Iterator[Finished]:
    futures = {pool.submit(fn, *args): key for key, (fn, args) in jobs.items()}
    for fut in as_finished(list(futures)):
        try:
            res = fut.result()
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException as e:
            yield futures[fut], None, e
            continue
        yield futures[fut], res, None


def _dask_session(client: Any) -> Iterator[Outcomes]:
    """:data:`Outcomes` on a Dask client (which cancels what it submitted when the sweep
    stops early, so a shared cluster does not go on with an abandoned sweep)."""
    with cluster_mod.quiet_client():
        yield lambda jobs: cluster_mod.outcomes(client, jobs)


def run_points(
    points: Sequence[Point],
    store: SweepStore,
    *,
    workers: int | None = None,
    dask: str | None = None,
    progress: Progress | None = None,
) -> Outcome:
    """Run every point not yet in ``store`` and store each as it finishes. Ctrl-C raises
    :class:`~incastlab.parallel.Interrupted` at once, its ``done`` the keys stored by this
    run (every point finished before it is in the store)."""
    t0 = time.perf_counter()
    try:
        store.remove_stale_temporaries()
    except OSError as e:
        raise SweepStopped(disk_error(e, store), 0) from None
    done = store.done()
    todo: dict[str, Point] = {}
    for p in points:
        if p.key not in done:
            todo.setdefault(p.key, p)
    out = Outcome(total=len(points), skipped=len(points) - len(todo))
    out.repaired = [str(p) for p in store.unreadable]
    if not todo:
        return out
    n = workers or cores()
    if not all(backends.get(b).parallel for b in {p.backend for p in todo.values()}):
        # Real TCP shares this machine's CPUs and kernel: one point at a time, here.
        n, dask = 1, None
    try:
        _run(todo, store, out, min(n, len(todo)), dask, progress)
    except KeyboardInterrupt:
        out.wall_s = time.perf_counter() - t0
        raise Interrupted({k: k for k in out.stored}, out.total) from None
    except SweepStopped:
        out.wall_s = time.perf_counter() - t0
        raise
    out.wall_s = time.perf_counter() - t0
    return out


def _run(
    todo: dict[str, Point],
    store: SweepStore,
    out: Outcome,
    workers: int,
    dask: str | None,
    progress: Progress | None,
) -> None:
    jobs: dict[str, Job] = {
        key: (run_point, (p.backend, p.scenario.to_json())) for key, p in todo.items()
    }
    with _executor(workers, dask) as outcomes:
        try:
            for key, res, err in outcomes(jobs):
                point = todo[key]
                if err is None:
                    _write(store, store.write_point, out, key, _stored_record(key, point, res))
                    out.ran += 1
                    out.stored.append(key)
                elif (lost := _infrastructure(err)) is not None:
                    # Leaving the executor cancels what is still queued on the cluster.
                    raise SweepStopped(lost, len(out.stored)) from None
                else:  # a failing point is recorded, the others go on
                    _write(store, store.write_failure, out, key, _failure(key, point, err))
                    out.failed.append(key)
                if progress:
                    progress(point, err is None)
        except cluster_mod.SchedulerLost as e:
            raise SweepStopped(str(e), len(out.stored)) from None


def _failure(key: str, point: Point, e: BaseException) -> dict[str, Any]:
    return {
        "key": key,
        "params": point.params,
        "error": str(e) if isinstance(e, PointError) else f"{type(e).__name__}: {e}",
        "traceback": "".join(traceback.format_exception(e))[-4000:],
        "scenario": point.scenario.normalized(),
        "version": _core.__version__,
    }


def _write(
    store: SweepStore,
    write: Callable[[str, dict[str, Any]], None],
    out: Outcome,
    key: str,
    data: Any,
) -> None:
    """``write(key, data)`` into the store; a refused write (a full or read-only disk, a
    quota, an I/O error) stops the sweep with one line, since every point after it would be
    refused alike (the store's atomic writes leave nothing half-written behind)."""
    try:
        write(key, data)
    except OSError as e:
        raise SweepStopped(disk_error(e, store), len(out.stored)) from None


def _stored_record(key: str, point: Point, res: dict[str, Any]) -> dict[str, Any]:
    r: Result = res["result"]
    return r.record(key=key, params=point.params, wall_s=res["wall_s"])
