"""What `incast emulate --pcap` and `--monitor` add to a run: tcpdump on the bottleneck
port and on the receiver (inside their namespaces), and the receiver's interface sampled as
`incast monitor` samples it, each stored with the result.

The captures keep the first 128 bytes of each frame (every header); `incast pcap` reads the
bottleneck's afterwards, so the result carries the kernel's timeout count and the one the
capture shows side by side.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from incastlab import _core

if TYPE_CHECKING:
    from incastlab.real.testbed.build import Testbed

#: Bytes of each frame tcpdump keeps: Ethernet, IPv4 and TCP with options fit.
SNAPLEN = 128
#: How long the idle testbed is left before tcpdump is stopped: a stopped tcpdump never
#: reads what the kernel still holds for it. Without --immediate-mode libpcap hands over
#: the ring a block at a time, when it fills or after 1 s, and the last second of a run went
#: missing from the file (seen: a run's last 170 ms, four of the kernel's 34 timeouts,
#: absent from the bottleneck's capture while the receiver's had them).
CAPTURE_DRAIN_S = 1.2
#: The kernel's capture buffer per tcpdump, KiB (-B; libpcap's default is 2 MiB).
CAPTURE_BUFFER_KIB = 16384


class ObserveError(RuntimeError):
    """A capture or the monitor could not start (one line)."""


@dataclass
class Captures:
    """tcpdump processes running in a testbed and the files they write."""

    files: dict[str, Path]
    procs: dict[str, subprocess.Popen[str]] = field(default_factory=dict)


def start_captures(tb: Testbed, directory: Path, label: str, senders: int = 0) -> Captures:
    """tcpdump on the switch's port towards the receiver (the bottleneck), on the receiver's
    eth0 and on the eth0 of the first ``senders`` senders (``sender0``, …: what a sender's
    TCP sends and when its ACKs arrive, before the bottleneck drops anything); returns once
    every one is listening."""
    if shutil.which("tcpdump") is None:
        raise ObserveError("--pcap: tcpdump is not installed (apt-get install tcpdump)")
    directory.mkdir(parents=True, exist_ok=True)
    points = {"bottleneck": (tb.switch, "pr"), "receiver": (tb.receiver, "eth0")}
    points.update({f"sender{i}": (ns, "eth0") for i, ns in enumerate(tb.sender_ns[:senders])})
    c = Captures({k: directory / f"{label}-{k}.pcap" for k in points})
    for what, (ns, dev) in points.items():
        argv = ["ip", "netns", "exec", ns, "tcpdump", "-i", dev, "-n", "-s", str(SNAPLEN)]
        # Each frame handed to tcpdump as it comes rather than a ring block at a time, and a
        # ring deep enough for seconds of a busy machine: a CI run on 2 loaded cores once had
        # the bottleneck's capture 6 of the kernel's 40 timeouts short.
        argv += ["--immediate-mode", "-B", str(CAPTURE_BUFFER_KIB)]
        argv += ["-w", str(c.files[what]), "tcp"]
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        c.procs[what] = p
        assert p.stderr is not None
        line = p.stderr.readline()
        if "listening on" not in line:
            stop_captures(c)
            raise ObserveError(f"--pcap: tcpdump on {what} did not start: {line.strip()}")
    return c


def stop_captures(c: Captures) -> dict[str, Any]:
    """Stop tcpdump once its ring has drained; per point the file and what tcpdump says it
    captured and dropped."""
    out: dict[str, Any] = {}
    if any(p.poll() is None for p in c.procs.values()):
        time.sleep(CAPTURE_DRAIN_S)
    for what, p in c.procs.items():
        p.send_signal(signal.SIGINT)
        try:
            _, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
        counts = {
            k: int(m.group(1))
            for k in ("captured", "dropped by kernel")
            if (m := re.search(rf"(\d+) packets? {k}", err or ""))
        }
        out[what] = {
            "file": str(c.files[what]),
            "packets": counts.get("captured"),
            "dropped_by_kernel": counts.get("dropped by kernel"),
        }
    return out


def analyze_capture(path: str, receiver: str, rto_min_ps: int) -> dict[str, Any]:
    """`incast pcap`'s findings on a capture: timeouts, resends by cause, the verdict."""
    from incastlab.trace import TraceOptions, analyze

    try:
        r = analyze(path, TraceOptions(receiver=receiver, rto_min=rto_min_ps)).report
    except _core.TraceError as e:
        return {"error": str(e)}
    keys = ["frames", "rtos", "rtos_backed_off", "retx_fast", "retx_rto", "retx_tlp"]
    keys += ["goodput_bps", "incast", "probe_stalls"]
    return {
        **{k: r[k] for k in keys},
        # Per block as the capture shows them (warm-up blocks first), for the run's own count.
        "block_probe_stalls": [b["probe_stalls"] for b in r["blocks"]],
        "verdict": r["verdict"],
        "rates": r["rates"],
    }


def start_monitor(tb: Testbed, interval_ns: int) -> _core.Monitor:
    """The receiver's eth0 sampled every ``interval_ns`` from inside its namespace."""
    try:
        return _core.Monitor("eth0", interval_ns, netns=tb.receiver)
    except _core.MonitorError as e:
        raise ObserveError(f"--monitor: {e}") from None


def stop_monitor(
    mon: _core.Monitor, interval_ns: int, line_bps: float, record: Path | None = None
) -> dict[str, Any]:
    """The monitor's summary and per-second rows of the run; with ``record``, the recording
    too (what ``incast monitor --record`` writes, for ``incast doctor``)."""
    from incastlab.monitor import MonitorRun, summary, windows, write_parquet

    run = MonitorRun("eth0 (receiver)", None, interval_ns, "rx", line_bps)
    run.version = _core.__version__
    run.add(json.loads(mon.stop()))
    out = {**summary(run), "seconds": windows(run)}
    if record is not None:
        out["recording"] = str(write_parquet(run, record))
    return out
