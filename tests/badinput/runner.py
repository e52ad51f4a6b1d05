"""Run ``incast`` command lines in forked children of one warm process, each bounded in time
and memory, and tell how each ended: exit code, what it printed, a Python traceback, a Rust
panic, a hang (killed at the time limit), its peak memory.

A child per case, forked from a process that has already imported incastlab, costs a few
milliseconds instead of an interpreter start, so hundreds of cases run in seconds.

Protocol: one JSON object per line on stdin (``{"argv": [...], "cwd": "...", "timeout": s}``),
one JSON object per line on stdout (``{"code", "signal", "stderr", "stdout", "seconds",
"rss_mb"}``). Run as ``python runner.py``; an empty line or end of input stops it.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import sys
import tempfile
import time
import traceback
from typing import Any

#: Most of an output kept in a report (a case that echoes megabytes is itself a finding).
KEEP = 20_000
#: Address space a case may add to the runner's own (a runaway allocation fails there).
EXTRA_ADDRESS_SPACE = 3 << 30


def _vm_size() -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0  # pragma: no cover - Linux only


def _child(argv: list[str], cwd: str, timeout: float, out: int, err: int) -> None:
    from incastlab.cli import main

    os.setpgid(0, 0)  # its own group: the parent can kill whatever it starts
    os.chdir(cwd)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    sys.stdout = os.fdopen(1, "w", closefd=False)
    sys.stderr = os.fdopen(2, "w", closefd=False)
    limit = _vm_size() + EXTRA_ADDRESS_SPACE
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    signal.alarm(max(1, int(timeout)))
    try:
        code: Any = main(argv)
    except SystemExit as e:
        code = e.code
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    if code is None:
        code = 0
    os._exit(code if isinstance(code, int) else 1)


def _read(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    data = b""
    while chunk := os.read(fd, 1 << 16):
        data += chunk
        if len(data) > KEEP:
            break
    return data.decode("utf-8", "replace")


def run_case(argv: list[str], cwd: str, timeout: float) -> dict[str, Any]:
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        t0 = time.monotonic()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                _child(argv, cwd, timeout, fo.fileno(), fe.fileno())
            finally:
                os._exit(99)
        _, status, usage = os.wait4(pid, 0)
        seconds = time.monotonic() - t0
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)  # anything it left running
        return {
            "code": os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "stdout": _read(fo.fileno()),
            "stderr": _read(fe.fileno()),
            "seconds": round(seconds, 3),
            "rss_mb": round(usage.ru_maxrss / 1024, 1),
        }


def main() -> None:
    # Warm the imports every command shares; heavy ones stay in the children that need them.
    import rich.console  # noqa: F401

    import incastlab.cli
    import incastlab.scenario
    import incastlab.series  # noqa: F401

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"ready": True, "base_rss_mb": round(base, 1)}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            break
        case = json.loads(line)
        report = run_case(case["argv"], case.get("cwd", "."), case.get("timeout", 30.0))
        print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
