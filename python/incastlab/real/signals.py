"""Signal handling shared by the real-TCP processes and the commands that run them."""

from __future__ import annotations

import signal
import subprocess


def sigterm_as_interrupt() -> None:
    """Let SIGTERM stop a run the way Ctrl-C does (through KeyboardInterrupt), so that the
    ``finally`` blocks that remove testbeds and close sockets run."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


def run_watching_signals(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(argv, capture_output=True, text=True)``, but woken every 100 ms.

    Python runs a signal's handler only when the main thread runs bytecode; the kernel may
    hand SIGTERM to any thread (a sampler's, the servers'), and a main thread blocked in
    ``select`` on a long client's pipes would then sit out the whole run with the handler
    pending (seen: a SIGTERM 0.75 s into a 32 s run stopped nothing). Waking up lets the
    handler raise; the client is killed on the way out."""
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            while True:
                try:
                    out, err = proc.communicate(timeout=0.1)
                    break
                except subprocess.TimeoutExpired:
                    continue
        except BaseException:
            proc.kill()
            raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)
