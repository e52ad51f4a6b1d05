"""A sweep's points on a Dask cluster whose scheduler may restart or go quiet under it.

A restarted scheduler forgets every task it held. Dask's client then reconnects to the new
one (when it comes back on the same address within its connect timeout) and cancels the
futures of the old one; a scheduler that stops answering without closing its connections
(frozen, its host gone) leaves the futures pending for ever. So the sweep does not only wait
for its futures: when none has finished for :data:`HEARTBEAT_S` it asks the scheduler who it
is. An answer from another scheduler (a new id), a future cancelled for a lost connection, or
a client that left ``running``, all mean the work was dropped: once the client is connected
again (within :data:`PATIENCE_S`) the points not yet handed back are submitted again, up to
:data:`MAX_RESTARTS` times; otherwise the sweep stops with one line (:class:`SchedulerLost`).
Every point is handed back once: what finished before the restart is stored, and only what
was not is computed again.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

#: Seconds without any point finishing before the sweep asks the scheduler whether it is
#: still there, and still the scheduler it submitted to.
HEARTBEAT_S = 5.0
#: Seconds the scheduler may go without answering (or the client without reconnecting)
#: before the sweep stops; Dask's own connect timeout is 30 s.
PATIENCE_S = 30.0
#: Scheduler restarts one sweep resubmits its points across before it stops.
MAX_RESTARTS = 3
#: How often the wait looks up (and so notices Ctrl-C), seconds.
POLL_S = 0.2

#: A job: the function a worker runs and its arguments.
Job = tuple[Callable[..., Any], tuple[Any, ...]]
#: What the sweep gets for each point: its key, and its result or the exception it raised.
Finished = tuple[str, Any, BaseException | None]


class SchedulerLost(RuntimeError):
    """The Dask scheduler went away and did not come back (one line saying so)."""


class _Dropped(Exception):
    """The scheduler dropped the work submitted to it (restarted, or its connection lost)."""


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def _identity(client: Any, timeout: float) -> dict[str, Any]:
    """The scheduler's own account of itself (its ``id`` changes when it restarts)."""
    return client.sync(client.scheduler.identity, n_workers=0, callback_timeout=timeout)  # type: ignore[no-any-return]


def _dropped(e: BaseException) -> bool:
    """Whether a future's exception says the scheduler, not the point, failed it."""
    import asyncio
    from concurrent.futures import CancelledError

    if type(e).__name__ == "KilledWorker":  # the point took down every worker it touched
        return False
    lost = (asyncio.CancelledError, asyncio.TimeoutError, CancelledError, OSError, TimeoutError)
    return isinstance(e, lost) or (type(e).__name__ == "CommClosedError")


@contextmanager
def quiet_client() -> Iterator[None]:
    """Dask's client logs a reconnection as errors with tracebacks; the sweep says what
    happened in its own line instead."""
    log = logging.getLogger("distributed.client")
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        log.setLevel(level)


def outcomes(client: Any, jobs: dict[str, Job]) -> Iterator[Finished]:
    """Run every job on the cluster; yield each key once with its result or exception, in
    the order they finish, submitting again what a restarted scheduler dropped."""
    address = client.scheduler.address
    left = dict(jobs)
    restarts = 0
    try:
        scheduler_id = _identity(client, PATIENCE_S)["id"]
    except Exception as e:  # a scheduler that does not answer: one line, not a traceback
        if not _dropped(e):
            raise
        raise SchedulerLost(
            f"the Dask scheduler at {address} did not answer within {PATIENCE_S:g} s ({e!r})"
        ) from None
    while left:
        try:
            yield from _round(client, left, scheduler_id)
            return
        except _Dropped as why:
            restarts += 1
            if restarts > MAX_RESTARTS:
                raise SchedulerLost(
                    f"the Dask scheduler at {address} dropped the work {restarts} times "
                    f"(last: {why})"
                ) from None
            scheduler_id = _reconnected(client, address, why)


def _round(client: Any, left: dict[str, Job], scheduler_id: str) -> Iterator[Finished]:
    """Submit ``left`` and hand back what finishes, removing it from ``left``; raises
    :class:`_Dropped` when the scheduler lost the work (what is left is to be submitted
    again). Whatever ends it early cancels what the cluster still holds of it."""
    futures = {client.submit(fn, *args, pure=False): key for key, (fn, args) in left.items()}
    finished: queue.SimpleQueue[Any] = queue.SimpleQueue()
    for f in futures:
        f.add_done_callback(finished.put)
    quiet_since = time.monotonic()
    workers_since = quiet_since  # when the scheduler last had a worker
    try:
        while futures:
            try:
                f = finished.get(timeout=POLL_S)
            except queue.Empty:
                now = time.monotonic()
                if client.status != "running":
                    raise _Dropped(f"the client's connection is {client.status}") from None
                if now - quiet_since >= HEARTBEAT_S:
                    quiet_since = now
                    if _check(client, scheduler_id):
                        workers_since = now
                    elif now - workers_since >= PATIENCE_S:
                        raise SchedulerLost(
                            f"the Dask scheduler at {client.scheduler.address} has had no "
                            f"worker for {PATIENCE_S:.0f} s"
                        ) from None
                continue
            workers_since = time.monotonic()
            quiet_since = time.monotonic()
            key = futures.pop(f, None)
            if key is None:
                continue
            try:
                res = f.result(timeout=PATIENCE_S)
            except (KeyboardInterrupt, SystemExit, GeneratorExit):
                raise
            except BaseException as e:
                if _dropped(e):
                    raise _Dropped(_one_line(f"{type(e).__name__}: {e}")) from None
                del left[key]
                yield key, None, e
                continue
            del left[key]
            yield key, res, None
    except BaseException:
        # Dropped work, a stop, Ctrl-C, or the sweep leaving the loop (a refused write): a
        # shared cluster does not go on with what nobody will collect.
        _forget(client, list(futures))
        raise


def _check(client: Any, scheduler_id: str) -> int:
    """Ask the scheduler who it is: how many workers it has; :class:`_Dropped` when another
    one answers, or none."""
    try:
        now = _identity(client, PATIENCE_S)
    except (OSError, TimeoutError) as e:
        why = f"it did not answer within {PATIENCE_S:.0f} s ({type(e).__name__})"
        raise _Dropped(why) from None
    except Exception as e:
        if type(e).__name__ in ("CommClosedError", "TimeoutError"):
            raise _Dropped(f"it did not answer ({type(e).__name__})") from None
        raise
    if now["id"] != scheduler_id:
        raise _Dropped("it restarted")
    return int(now.get("n_workers", 0))


def _forget(client: Any, futures: list[Any]) -> None:
    """Cancel what a scheduler that went away may still hold (best effort)."""
    # The connection may be gone: then nothing is left to free.
    with contextlib.suppress(Exception):
        client.cancel(futures)


def _reconnected(client: Any, address: str, why: _Dropped) -> str:
    """Wait (up to :data:`PATIENCE_S`) for the client to be connected to a scheduler that
    answers; its id. :class:`SchedulerLost` otherwise."""
    deadline = time.monotonic() + PATIENCE_S
    while time.monotonic() < deadline:
        if client.status in ("closing", "closed"):
            break
        if client.status == "running":
            try:
                ident: dict[str, Any] = _identity(client, max(0.1, deadline - time.monotonic()))
                return str(ident["id"])
            except Exception:  # not back yet: ask again until the deadline
                pass
        time.sleep(POLL_S)
    raise SchedulerLost(
        f"lost the Dask scheduler at {address} ({why}) and it did not come back within "
        f"{PATIENCE_S:.0f} s"
    )
