"""Sweeps under damage and failure: checksummed points (a corrupt one named and recomputed),
failures that are never quiet, and sweeps that survive a full or read-only disk, a killed pool
or Dask worker, a restarted Dask scheduler: each stops or goes on with one clear line, and a
rerun completes it with nothing lost and nothing stored twice."""

from __future__ import annotations

import contextlib
import errno
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import incastlab
from incastlab.cli import main
from incastlab.result import schema
from incastlab.series import parse_senders
from incastlab.sweep import cluster
from incastlab.sweep import store as store_mod
from incastlab.sweep.run import SweepStopped, run_points
from incastlab.sweep.spec import parse_spec
from incastlab.sweep.store import SweepStore

SMALL = {"topology": {"senders": "1..4"}, "workload": {"sru": "16KB", "blocks": 2}}
#: Points of ~70 ms each, so that a sweep is still running when a machine is taken away.
SLOW = {"topology": {"senders": "17..32"}, "workload": {"sru": "64KB", "blocks": 20}}
#: Points of ~0.1 s each: a pool of two still holds most of them when the first is stored.
SLOWER = {"topology": {"senders": "17..32"}, "workload": {"sru": "64KB", "blocks": 150}}


def _sweep(tmp: Path, data: dict[str, Any], **kw: Any) -> tuple[SweepStore, list[Any]]:
    spec = parse_spec(data)
    points = spec.points()
    store = SweepStore(tmp)
    store.create(spec.store_meta(len(points)))
    return store, points


def _corrupt_middle(path: Path) -> None:
    """Flip one bit in the middle of the values of the file's largest column chunk, in the
    middle of the file, and leave the footer as it was. The values are the dictionary page
    where there is one (the data page then holds indices, its header a copy of the value as
    statistics, which no reader uses), else the one data page."""
    rg = pq.read_metadata(path).row_group(0)
    chunks = [rg.column(i) for i in range(rg.num_columns)]
    chunk = max(chunks, key=lambda c: c.total_compressed_size)
    if chunk.has_dictionary_page:
        at = (chunk.dictionary_page_offset + chunk.data_page_offset) // 2
    else:
        at = chunk.data_page_offset + chunk.total_compressed_size // 2
    data = bytearray(path.read_bytes())
    data[at] ^= 0x10
    path.write_bytes(bytes(data))


def _stored_once(store: SweepStore, points: list[Any]) -> None:
    """Every point stored, each once, each verified, no temporaries left."""
    good, old, bad = store.verify()
    assert not bad and not old
    assert sorted(p.stem for p in good) == sorted({p.key for p in points})
    assert not list(store.root.rglob("*.tmp"))
    assert len(store.rows()) == len(points)


#: Where multiprocessing keeps its named POSIX semaphores (Linux).
SHM = Path("/dev/shm")


def _own_semaphores() -> set[Path]:
    if not SHM.is_dir():
        return set()
    uid = os.getuid()
    out = set()
    for p in SHM.glob("sem.mp-*"):
        with contextlib.suppress(OSError):
            if p.stat().st_uid == uid:
                out.add(p)
    return out


@pytest.fixture(autouse=True)
def _no_semaphores_left_behind() -> Iterator[None]:
    """The processes these tests kill (a pool worker, Dask's scheduler and workers) die
    holding the named semaphores multiprocessing made for them, which only their own exit
    would unlink: the test removes what appeared while it ran, so the suite writes nothing
    outside its temporary directories."""
    before = _own_semaphores()
    yield
    for p in _own_semaphores() - before:
        with contextlib.suppress(OSError):
            p.unlink()


def test_a_point_damaged_in_its_data_pages_is_named_and_recomputed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store, points = _sweep(tmp_path / "s", SMALL)
    assert run_points(points, store, workers=1).ran == 4
    victim = sorted(store.points_dir.glob("*.parquet"))[1]
    _corrupt_middle(victim)
    assert pq.read_metadata(victim).num_rows == 1  # the footer alone still says "a point"
    assert main(["results", "--verify", str(store.root)]) == 1
    err = capsys.readouterr().err
    assert f"damaged {victim}" in err and "4 files: 3 verified, 1 damaged" in err
    again = run_points(points, store, workers=1)
    assert (again.ran, again.skipped, again.repaired) == (1, 3, [str(victim)])
    _stored_once(store, points)
    assert main(["results", "--verify", str(store.root)]) == 0
    assert "4 files: 4 verified, 0 damaged" in capsys.readouterr().err


def test_the_cli_says_a_damaged_point_was_computed_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text('[topology]\nsenders = "1,2"\n[workload]\nsru = "16KB"\nblocks = 2\n')
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--out", str(out), "-q"]) == 0
    victim = sorted((out / "points").glob("*.parquet"))[0]
    _corrupt_middle(victim)
    assert main(["sweep", str(spec), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"{victim} was damaged" in err and "computed that point again" in err
    assert "1 run (1 of them damaged before), 1 already stored, 0 failed" in err


def test_a_point_written_before_checksums_is_unverified_not_damaged(tmp_path: Path) -> None:
    store, points = _sweep(tmp_path / "s", SMALL)
    run_points(points, store, workers=1)
    old = sorted(store.points_dir.glob("*.parquet"))[0]
    table = pq.read_table(old)
    meta = {k: v for k, v in table.schema.metadata.items() if k != schema.CHECKSUM_KEY}
    pq.write_table(table.replace_schema_metadata(meta), old)
    good, unverified, bad = store.verify()
    assert (len(good), unverified, bad) == (3, [old], [])
    assert store.done() == {p.key for p in points}
    assert len(store.rows()) == 4


def test_load_names_a_damaged_results_file(tmp_path: Path) -> None:
    out = tmp_path / "run.parquet"
    assert main(["sim", "--senders", "2", "--sru", "16KB", "--blocks", "2", "--out", str(out)]) == 0
    assert schema.verify(out) is True
    assert len(incastlab.load(out)) == 1
    _corrupt_middle(out)
    with pytest.raises(schema.DamagedResultFile, match=f"^{out}: "):
        incastlab.load(out)


def test_quiet_prints_each_failure_and_the_exit_status_counts_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "f.toml"
    spec.write_text(
        '[topology]\nsenders = "1,2"\n[workload]\nsru = "16KB"\nblocks = 2\n'
        '[run]\nmax_time = ["1us", "1s"]\n'
    )
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--out", str(out), "-q", "--workers", "1"]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert captured.out == ""
    assert [ln.split(":")[0] for ln in lines[:2]] == [
        "failed max_time=1us senders=1",
        "failed max_time=1us senders=2",
    ]
    assert "run.max_time" in lines[0]
    assert lines[2] == f"2 of 4 points failed → {out}"


@pytest.mark.parametrize("senders", ["1,2", "1..4,8", "4..16:4", "7", 3, [1, 5]])
def test_a_spec_reads_senders_as_sim_does(senders: Any) -> None:
    points = parse_spec({"topology": {"senders": senders}}).points()
    want = parse_senders(senders) if isinstance(senders, str) else senders
    want = want if isinstance(want, list) else [want]
    assert [p.scenario.topology.senders for p in points] == want


def test_a_spec_refuses_bad_senders_as_sim_does() -> None:
    from incastlab.scenario import ScenarioError

    with pytest.raises(ScenarioError, match=r"^topology\.senders: '-2' in '1,-2' is negative"):
        parse_spec({"topology": {"senders": "1,-2"}})


# --- the disk: full, read-only -------------------------------------------------------------


@contextlib.contextmanager
def _mounted(
    where: Path, *options: str, kind: str = "tmpfs", source: str = "tmpfs", want: bool = True
) -> Iterator[bool]:
    """A mount at ``where`` as root where mounting is allowed and ``want`` (yields ``True``,
    unmounted after), else nothing (``False``: the caller simulates the failure instead)."""
    where.mkdir(parents=True, exist_ok=True)
    if not want or os.geteuid() != 0:
        yield False
        return
    cmd = ["mount", "-t", kind, "-o", ",".join(options), source, str(where)]
    if kind == "bind":
        cmd = ["mount", "--bind", source, str(where)]
    try:
        ok = subprocess.run(cmd, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    try:
        yield ok
    finally:
        if ok:
            subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=10)


def _refuse_after(monkeypatch: pytest.MonkeyPatch, writes: int, code: int) -> Callable[[], None]:
    """Make the store's Parquet writes fail with ``code`` after ``writes`` succeeded, as a
    full or read-only disk would; returns the undo."""
    real = store_mod.pq.write_table
    count = [0]

    def write_table(table: Any, where: Any, **kw: Any) -> None:
        count[0] += 1
        if count[0] > writes:
            Path(where).write_bytes(b"PAR1 half")  # a half-written temporary, to be removed
            raise OSError(code, os.strerror(code), str(where))
        real(table, where, **kw)

    monkeypatch.setattr(store_mod.pq, "write_table", write_table)
    return monkeypatch.undo


@pytest.mark.parametrize("disk", ["tmpfs", "simulated"])
def test_a_full_disk_stops_the_sweep_and_a_rerun_completes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, disk: str
) -> None:
    # A real 600 KB tmpfs holds three points (as root, where mounting is allowed); otherwise
    # the store's writes are made to fail with ENOSPC after three.
    with _mounted(tmp_path / "disk", "size=600k", "mode=0777", want=disk == "tmpfs") as real:
        if disk == "tmpfs" and not real:
            pytest.skip("a tmpfs needs root and a mount this machine allows")
        store, points = _sweep(tmp_path / "disk" / "s", SMALL)
        undo = (lambda: None) if real else _refuse_after(monkeypatch, 2, errno.ENOSPC)
        with pytest.raises(SweepStopped, match="No space left on device") as stop:
            run_points(points, store, workers=1)
        assert str(stop.value).startswith(f"cannot write to {store.root}: ")
        assert 1 <= stop.value.stored < len(points)
        assert not list(store.root.rglob("*.tmp"))  # nothing half-written left
        assert len(store.done()) == stop.value.stored and not store.unreadable
        if real:
            subprocess.run(["mount", "-o", "remount,size=8m", str(tmp_path / "disk")], check=True)
        undo()
        again = run_points(points, store, workers=1)
        assert (again.ran, again.skipped) == (len(points) - stop.value.stored, stop.value.stored)
        _stored_once(store, points)


@pytest.mark.parametrize("disk", ["mount", "simulated"])
def test_a_read_only_results_dir_stops_the_sweep_in_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    disk: str,
) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text('[topology]\nsenders = "1..4"\n[workload]\nsru = "16KB"\nblocks = 2\n')
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--out", str(out), "-q"]) == 0
    for p in sorted((out / "points").glob("*.parquet"))[:2]:
        p.unlink()
    # Read-only: a read-only bind mount ("mount", as root where allowed); simulated, chmod as
    # a user (root ignores modes), as root the store's writes refused with EROFS.
    with _mounted(out, kind="bind", source=str(out), want=disk == "mount") as bound:
        if disk == "mount" and not bound:
            pytest.skip("a read-only bind mount needs root and a mount this machine allows")
        undo: Callable[[], None] = lambda: None  # noqa: E731
        if bound:
            subprocess.run(["mount", "-o", "remount,ro,bind", str(out)], check=True)
        elif os.geteuid() != 0:
            (out / "points").chmod(0o555)
            undo = lambda: (out / "points").chmod(0o755)  # noqa: E731
        else:
            undo = _refuse_after(monkeypatch, 0, errno.EROFS)
        try:
            status = main(["sweep", str(spec), "--out", str(out), "-q"])
        finally:
            undo()
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 75
    assert len(err) == 1 and err[0].startswith("incast: sweep stopped: cannot write to ")
    assert "ermission denied" in err[0] or "ead-only file system" in err[0]
    assert "rerun `incast sweep" in err[0]
    assert main(["sweep", str(spec), "--out", str(out), "-q"]) == 0
    store = SweepStore(out)
    _stored_once(store, parse_spec({**SMALL}).points())


# --- a worker of the process pool killed ---------------------------------------------------


def test_a_killed_pool_worker_stops_the_sweep_in_one_line_and_a_rerun_completes_it(
    tmp_path: Path,
) -> None:
    store, points = _sweep(tmp_path / "s", SLOWER)
    killed: list[int] = []

    def progress(point: Any, ok: bool) -> None:
        if not killed:  # the first point is in: take a pool worker away by its pid
            pids = [p.pid for p in multiprocessing.active_children() if p.pid]
            assert pids
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])

    with pytest.raises(SweepStopped) as stop:
        run_points(points, store, workers=2, progress=progress)
    assert str(stop.value) == "a worker process ended without an answer (killed, or out of memory?)"
    assert 1 <= stop.value.stored < len(points)
    assert len(store.done()) == stop.value.stored and not store.unreadable
    again = run_points(points, store, workers=2)
    assert (again.ran, again.skipped) == (len(points) - stop.value.stored, stop.value.stored)
    _stored_once(store, points)


# --- Dask: a worker killed, the scheduler restarted ----------------------------------------

distributed = pytest.importorskip("distributed")


def test_a_killed_dask_worker_loses_and_repeats_nothing(tmp_path: Path) -> None:
    store, points = _sweep(tmp_path / "s", SLOW)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        pids = list(client.run(os.getpid).values())
        assert len(pids) == 2 and os.getpid() not in pids
        killed: list[int] = []

        def progress(point: Any, ok: bool) -> None:
            if not killed:  # the first point is in: take a worker away by its pid
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])

        try:
            first = run_points(points, store, dask=cluster.scheduler_address, progress=progress)
            assert first.ran + first.skipped == len(points) and not first.failed
        except SweepStopped:  # allowed, as long as the rerun completes the sweep
            pass
        assert killed
        again = run_points(points, store, dask=cluster.scheduler_address)
        assert again.skipped + again.ran == len(points) and not again.failed
    _stored_once(store, points)


class _DaskProcesses:
    """A ``dask scheduler`` and ``dask worker`` as processes of their own, on a fixed port so
    that the scheduler can be killed and started again where its clients look for it (as a
    supervisor restarting it would)."""

    def __init__(self, tmp: Path) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.log = (tmp / "dask.log").open("ab")
        self.procs: list[subprocess.Popen[bytes]] = []
        self.scheduler = self._start("dask_scheduler", "--host", "127.0.0.1", "--port")

    def _start(self, cli: str, *args: str) -> subprocess.Popen[bytes]:
        cmd = [sys.executable, "-m", f"distributed.cli.{cli}", *args]
        cmd += [str(self.port)] if cli == "dask_scheduler" else [self.address]
        cmd += ["--no-dashboard"]
        p = subprocess.Popen(cmd, stdout=self.log, stderr=self.log, start_new_session=True)
        self.procs.append(p)
        return p

    def workers(self, n: int) -> None:
        """Start ``n`` workers and wait until the scheduler has them."""
        self._start("dask_worker", "--nworkers", str(n), "--nthreads", "1")
        with distributed.Client(self.address, timeout=30) as c:
            c.wait_for_workers(n, timeout=60)

    def restart_scheduler(self) -> None:
        """Kill the scheduler (its workers end with it, as Dask's do) and start another on the
        same port."""
        self.scheduler.kill()
        self.scheduler.wait()
        self.scheduler = self._start("dask_scheduler", "--host", "127.0.0.1", "--port")

    def close(self) -> None:
        for p in self.procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        self.log.close()


@pytest.fixture
def dask_processes(tmp_path: Path) -> Iterator[_DaskProcesses]:
    d = _DaskProcesses(tmp_path)
    try:
        yield d
    finally:
        d.close()


def test_a_restarted_dask_scheduler_gets_the_points_it_dropped_again(
    tmp_path: Path, dask_processes: _DaskProcesses, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cluster, "HEARTBEAT_S", 0.5)
    store, points = _sweep(tmp_path / "s", SLOWER)
    dask_processes.workers(2)
    restarted: list[float] = []
    submitted: list[int] = []  # how many points each round submitted
    real_round = cluster._round

    def counted(client: Any, left: dict[str, Any], scheduler_id: str) -> Any:
        submitted.append(len(left))
        return real_round(client, left, scheduler_id)

    monkeypatch.setattr(cluster, "_round", counted)

    def progress(point: Any, ok: bool) -> None:
        if not restarted:  # the first point is in: restart the scheduler under the sweep
            restarted.append(time.monotonic())
            dask_processes.restart_scheduler()
            dask_processes.workers(2)  # as their supervisor would start them again

    first = run_points(points, store, dask=dask_processes.address, progress=progress)
    assert restarted
    # Submitted again: exactly what was not handed back before the restart, not one more.
    assert len(submitted) == 2 and submitted[0] == len(points)
    assert 1 <= len(points) - submitted[1] < len(points)
    assert (first.ran, first.skipped, first.failed) == (len(points), 0, [])
    assert len(first.stored) == len(set(first.stored)) == len(points)
    _stored_once(store, points)
    again = run_points(points, store, dask=dask_processes.address)
    assert (again.ran, again.skipped) == (0, len(points))


def test_a_scheduler_back_without_workers_stops_the_sweep_in_one_line(
    tmp_path: Path,
    dask_processes: _DaskProcesses,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(cluster, "HEARTBEAT_S", 0.5)
    monkeypatch.setattr(cluster, "PATIENCE_S", 3.0)
    spec = tmp_path / "s.toml"
    spec.write_text('[topology]\nsenders = "17..32"\n[workload]\nsru = "64KB"\nblocks = 150\n')
    out = tmp_path / "out"
    dask_processes.workers(2)
    real = run_points

    def progress_restarting(*a: Any, **kw: Any) -> Any:
        inner = kw.pop("progress")
        restarted: list[bool] = []

        def progress(point: Any, ok: bool) -> None:
            inner(point, ok)
            if not restarted:
                restarted.append(True)
                dask_processes.restart_scheduler()  # and no worker comes back

        return real(*a, progress=progress, **kw)

    monkeypatch.setattr("incastlab.sweep.run.run_points", progress_restarting)
    argv = ["sweep", str(spec), "--out", str(out), "-q", "--dask", dask_processes.address]
    status = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 75
    assert len(err) == 1, err
    assert err[0].startswith(
        f"incast: sweep stopped: the Dask scheduler at {dask_processes.address} has had no "
        "worker for 3 s; this run stored "
    )
    assert "rerun `incast sweep" in err[0]
    monkeypatch.undo()
    dask_processes.workers(2)
    assert (
        main(["sweep", str(spec), "--out", str(out), "-q", "--dask", dask_processes.address]) == 0
    )
    _stored_once(SweepStore(out), parse_spec({**SLOWER}).points())
