"""A child process's wall time, CPU time and peak resident memory, measured so that the peak
is the child's own.

``os.wait4`` on a child that Python started reads a peak that includes the Python parent's
image: ``subprocess`` starts the child with ``vfork``/``posix_spawn``, so until it calls
``exec`` it runs in the parent's address space, and Linux carries that address space's
high-water mark into the child's ``ru_maxrss`` across ``exec`` (``/bin/true`` started from a
500 MB Python reads 490 MB). GNU time forks its child from its own small image and reads that
child's ``wait4``, so its peak is the measured program's (plus GNU time's ~2 MB). Where GNU time
is missing (``apt install time``) the reading falls back to ``wait4`` and says it is an upper
bound.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

GNU_TIME = "/usr/bin/time"


@dataclass(frozen=True)
class Usage:
    """What one run of a child cost. `peak_exact` is False where the peak came from ``wait4``
    (it then includes the Python parent's image, an upper bound)."""

    wall_s: float
    cpu_s: float
    peak_mb: float
    peak_exact: bool
    exit_code: int
    timed_out: bool = False


@functools.cache
def gnu_time() -> str | None:
    """GNU time's path, or None (busybox's and the shell's keyword do not take ``-f``/``-o``),
    found once a process; where it is missing, says once that peaks are upper bounds."""
    path = shutil.which("time") or (GNU_TIME if os.path.exists(GNU_TIME) else None)
    if path is not None:
        probe = subprocess.run(
            [path, "-f", "%M", "-o", os.devnull, "true"], capture_output=True, check=False
        )
        if probe.returncode == 0:
            return path
    print(
        "note: no GNU time (apt install time): peak memory from wait4, an upper bound that "
        "counts this Python process's image",
        file=sys.stderr,
    )
    return None


def run_measured(
    cmd: list[str],
    *,
    stdin: IO[Any] | int | None = None,
    stdout: IO[Any] | int | None = subprocess.DEVNULL,
    stderr: IO[Any] | int | None = subprocess.DEVNULL,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
) -> Usage:
    """Run `cmd` to its end (or kill its process group after `timeout` seconds) and return
    its usage. Output goes where `stdout` says (a file, a pipe the caller must not leave
    unread: prefer a file)."""
    timer = gnu_time()
    with tempfile.NamedTemporaryFile("r", suffix=".usage") as usage_file:
        full = [timer, "-f", "%M", "-o", usage_file.name, "--", *cmd] if timer else cmd
        t0 = time.monotonic()
        p = subprocess.Popen(
            full,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            cwd=cwd,
            env=env,
            start_new_session=timeout is not None,
        )
        fired = threading.Event()

        def kill() -> None:
            fired.set()
            os.killpg(p.pid, signal.SIGKILL)

        killer = threading.Timer(timeout, kill) if timeout is not None else None
        if killer is not None:
            killer.start()
        _, status, ru = os.wait4(p.pid, 0)
        if killer is not None:
            killer.cancel()
        wall = time.monotonic() - t0
        p.returncode = code = os.waitstatus_to_exitcode(status)
        # CPU from wait4 either way: it counts GNU time's waited-for child, to the
        # microsecond (GNU time's own %U/%S print hundredths).
        cpu = ru.ru_utime + ru.ru_stime
        if fired.is_set() or timer is None:
            return Usage(wall, cpu, ru.ru_maxrss / 1024, False, code, fired.is_set())
        # GNU time writes "Command exited with non-zero status N" before the figure.
        peak_kb = float(usage_file.read().split()[-1])
        return Usage(wall, cpu, peak_kb / 1024, True, code)


def run_text(
    cmd: list[str],
    *,
    stdin_text: str | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float | None = None,
) -> tuple[str, Usage]:
    """Run `cmd` to its end (or `timeout` seconds: then ``Usage.timed_out``), `stdin_text` (if
    any) on its standard input: its standard output and its usage; a clear exit where it
    failed."""
    with tempfile.TemporaryFile("w+") as stdin, tempfile.TemporaryFile("w+b") as out:
        if stdin_text is not None:
            stdin.write(stdin_text)
            stdin.seek(0)
        use = run_measured(cmd, stdin=stdin, stdout=out, env=env, cwd=cwd, timeout=timeout)
        if use.exit_code and not use.timed_out:
            raise SystemExit(f"{' '.join(cmd[:4])} … failed with status {use.exit_code}")
        out.seek(0)
        return out.read().decode(errors="replace"), use
