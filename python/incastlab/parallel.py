"""Independent runs on every core: the one process pool behind sweeps, reproductions, ``sim``,
``mitigate``, ``compare`` and ``model calibrate``, and what Ctrl-C does to it.

Workers only compute. Ctrl-C belongs to the parent: workers are started with SIGINT held
back and then ignore it, so a terminal's Ctrl-C (sent to the whole process group) reaches
the parent alone, which cancels the runs not yet started, ends the workers at once (a run
under way is lost; every finished one was already handed back) and raises
:class:`Interrupted` carrying the finished results. Results come back in the jobs' order,
whatever order they finish in: the output does not depend on the number of workers.
"""

from __future__ import annotations

import os
import queue
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # A pool's machinery (multiprocessing, concurrent.futures: pickle, socket, logging) is
    # imported when a pool starts: one run, as `incast sim` mostly makes, runs here without it.
    import concurrent.futures as cf

#: How often a parent waiting on workers looks up (and so notices Ctrl-C), seconds.
POLL_S = 0.2


class WorkerDied(RuntimeError):
    """A worker process ended without an answer (killed, out of memory)."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped the work; ``done`` maps each finished job (its index, or its key) to
    its result."""

    def __init__(self, done: dict[Any, Any] | None = None, total: int = 0) -> None:
        super().__init__()
        self.done = dict(done or {})
        self.total = total


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def crosses(obj: Any) -> bool:
    """Whether ``obj`` can be sent to a worker process (pickled)."""
    import pickle

    try:
        pickle.dumps(obj)
    except (pickle.PicklingError, AttributeError, TypeError):
        return False
    return True


def die_with_parent() -> None:
    """Make this worker process die when the process that started it dies, even by SIGKILL
    (Linux's parent-death signal), instead of living on as an orphan."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the pool's own shutdown still applies
        return
    if os.getppid() == 1:  # the parent died before the signal was armed
        os._exit(1)


def _start_worker() -> None:
    """A worker's first act: ignore Ctrl-C (the parent answers it) and release the SIGINT it
    inherited held back; die with the parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    die_with_parent()


@contextmanager
def _sigint_held() -> Iterator[None]:
    """SIGINT blocked (held, not lost) in this thread while it starts workers: a worker
    inherits the block, so Ctrl-C during its start-up cannot kill it with a traceback; the
    parent gets the signal when the block ends."""
    main = threading.current_thread() is threading.main_thread()
    if not main or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class Pool:
    """A process pool whose workers ignore Ctrl-C, and which stops at once when asked."""

    def __init__(self, workers: int) -> None:
        import concurrent.futures as cf
        import multiprocessing

        # Spawned, not forked: the parent may hold threads (the progress bar) and a fork
        # would copy their locks.
        self._pool = cf.ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
        )

    def submit(self, fn: Callable[..., Any], *args: Any) -> cf.Future[Any]:
        # Workers are started on demand, inside submit.
        with _sigint_held():
            return self._pool.submit(fn, *args)

    def stop(self) -> None:
        """Cancel every job not started and end the workers now."""
        procs = list((getattr(self._pool, "_processes", None) or {}).values())
        # Taken before `shutdown`, which lets go of it.
        manager = getattr(self._pool, "_executor_manager_thread", None)
        self._pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            if p.is_alive():
                p.kill()
        for p in procs:
            p.join(timeout=1)
        # Let the pool's manager thread finish closing its wake-up pipe now: left running, it
        # races the interpreter's exit hook, which writes to that pipe ("Exception ignored
        # ... OSError: Bad file descriptor" after a Ctrl-C).
        if manager is not None and manager is not threading.current_thread():
            manager.join(timeout=5)
            # Forget its pipe even if it is still closing (a loaded machine): `shutdown` has
            # already woken it, and the exit hook's second wake-up could land on the pipe as it
            # closes. The interpreter's exit still joins the thread.
            import concurrent.futures.process

            wakeups = getattr(concurrent.futures.process, "_threads_wakeups", None)
            if wakeups is not None:
                wakeups.pop(manager, None)

    def close(self) -> None:
        self._pool.shutdown(wait=True)


@contextmanager
def process_pool(workers: int) -> Iterator[Pool]:
    """A :class:`Pool` of ``workers`` processes; on any exception (Ctrl-C included) its
    pending jobs are cancelled and its workers ended before the exception goes on."""
    pool = Pool(workers)
    try:
        yield pool
    except BaseException:
        pool.stop()
        raise
    pool.close()


def as_finished(futures: Sequence[cf.Future[Any]]) -> Iterator[cf.Future[Any]]:
    """``futures`` in the order they finish, looking up every :data:`POLL_S` so that Ctrl-C is
    noticed even when the signal lands on another thread of this process.

    Each future reports to a lock-free queue (``add_done_callback``). ``concurrent.futures.wait``
    takes every future's lock in turn; a Ctrl-C landing in that loop left some held, and the
    pool's manager thread then hung cancelling those futures, and the interpreter's exit with
    it (about one Ctrl-C of a reproduction in twenty)."""
    finished: queue.SimpleQueue[cf.Future[Any]] = queue.SimpleQueue()
    for f in futures:
        f.add_done_callback(finished.put)
    for _ in range(len(futures)):
        while True:
            try:
                yield finished.get(timeout=POLL_S)
                break
            except queue.Empty:
                continue


def run_all(
    fn: Callable[..., Any],
    jobs: Sequence[tuple[Any, ...]],
    *,
    workers: int | None = None,
    on_start: Callable[[int], Any] | None = None,
    on_done: Callable[[int, Any], None] | None = None,
) -> list[Any]:
    """``fn(*job)`` for every job, in job order. Several jobs run in worker processes (up to
    ``workers``, default every core), started in job order so that the first finish first
    (an interrupted run keeps them); one job, or one worker, runs here, where
    ``on_start(i)`` may hand it a ``progress`` keyword.
    ``on_done(i, result)`` is called as each finishes. A job that raises stops the others
    and its exception goes on; Ctrl-C raises :class:`Interrupted` with the finished results.
    """
    n = min(workers or cores(), len(jobs))
    done: dict[int, Any] = {}
    if n <= 1:
        try:
            for i, job in enumerate(jobs):
                extra = on_start(i) if on_start else None
                r = fn(*job, progress=extra) if extra is not None else fn(*job)
                done[i] = r
                if on_done:
                    on_done(i, r)
        except KeyboardInterrupt:
            raise Interrupted(done, len(jobs)) from None
        return [done[i] for i in range(len(jobs))]
    from concurrent.futures.process import BrokenProcessPool

    try:
        with process_pool(n) as pool:
            futures = {pool.submit(fn, *job): i for i, job in enumerate(jobs)}
            for fut in as_finished(list(futures)):
                i = futures[fut]
                try:
                    done[i] = fut.result()
                except BrokenProcessPool:
                    raise WorkerDied(
                        "a worker process ended without an answer (killed, or out of memory?); "
                        f"{len(done)} of {len(jobs)} runs had finished"
                    ) from None
                if on_done:
                    on_done(i, done[i])
    except KeyboardInterrupt:
        raise Interrupted(done, len(jobs)) from None
    return [done[i] for i in range(len(jobs))]
