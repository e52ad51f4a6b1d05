"""How long `incast` takes to stop after Ctrl-C, as a terminal delivers it: SIGINT to the
whole foreground process group (the command and its worker processes), sent once the
command has used some CPU seconds (a run under way, not start-up).

    python benchmarks/ctrl_c.py [--cpu 4] [--only sweep,reproduce,sim]

Prints per command the seconds from the signal to the exit, the exit code and the last
lines it printed (what it kept, and how to resume). The machine is shared: its load average
is printed too.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPEC = """\
[topology]
senders = "1..40"
[workload]
sru = "256KB"
blocks = 300
[sweep]
seeds = 2
"""


def commands(tmp: Path) -> dict[str, list[str]]:
    spec = tmp / "long.toml"
    spec.write_text(SPEC)
    incast = [sys.executable, "-m", "incastlab.cli"]
    return {
        "sweep": [*incast, "sweep", str(spec), "--out", str(tmp / "sweep")],
        "reproduce": [*incast, "reproduce", "ndp-incast-scaling", "--out", str(tmp / "repro")],
        "sim": [*incast, "sim", "--senders", "1..47", "--blocks", "200"],
    }


def _tree_cpu(pid: int) -> float:
    """CPU seconds used by ``pid`` and its live children (Linux's /proc)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        f = text.rsplit(")", 1)[1].split()
        if int(stat.parent.name) == pid or int(f[1]) == pid:
            total += (int(f[11]) + int(f[12])) / tick
    return total


def measure(argv: list[str], cpu: float) -> tuple[float, int, str]:
    """Seconds from Ctrl-C to exit, the exit code, stdout+stderr's last lines."""
    p = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
        # A shell's background job inherits SIGINT ignored; a terminal's does not.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 300
    while _tree_cpu(p.pid) < cpu and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    t0 = time.monotonic()
    os.killpg(p.pid, signal.SIGINT)
    try:
        out, _ = p.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
    took = time.monotonic() - t0
    tail = "\n".join(out.strip().splitlines()[-6:])
    return took, p.returncode, tail


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu", type=float, default=4.0, help="CPU seconds before Ctrl-C")
    ap.add_argument("--only", help="comma-separated: sweep, reproduce, sim")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cmds = commands(Path(tmp))
        names = a.only.split(",") if a.only else list(cmds)
        for name in names:
            took, code, tail = measure(cmds[name], a.cpu)
            print(f"{name}: exit {code} {took:.2f} s after Ctrl-C")
            print("    " + tail.replace("\n", "\n    "))
    print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
