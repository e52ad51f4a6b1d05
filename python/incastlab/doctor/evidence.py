"""What a capture shows, read twice: once to find the timeouts' silences (RTOmin unknown), once
with the RTOmin those silences give, so timeouts are counted as ``incast pcap`` counts them.

The Rust analyzer (``incast pcap``) does the reading; this module only chooses its options and
refuses, in one line each, captures from which no scenario can be inferred.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from incastlab.trace import TraceOptions, TraceReport, analyze

#: The first reading's RTOmin: a retransmission after half a millisecond of silence counts as
#: a timeout, so timers from 1 ms (data-centre RTOs) to seconds all show their silences.
PROBE_RTO_MIN_PS = 1_000_000_000
PROBE_RTO_GAP = 0.5
#: Width of the per-interval rows; fine enough for 1 ms RTOs.
INTERVAL_PS = 100_000_000


class EvidenceError(ValueError):
    """A capture no scenario can be inferred from; the message says why, in one line."""


@dataclass(frozen=True)
class Evidence:
    """The two readings of one capture."""

    path: str
    probe: TraceReport
    final: TraceReport


def read_capture(
    path: str,
    receiver: str | None = None,
    rto_min_ps: Callable[[TraceReport], int | None] | None = None,
    progress: Callable[[int], None] | None = None,
) -> Evidence:
    """Read ``path`` twice: a probe with a 1 ms RTOmin, then with ``rto_min_ps(probe)`` (or
    200 ms where it gives none). Raises :class:`EvidenceError` for a capture without TCP,
    with one flow into the receiver, or with no receiver to infer."""
    probe = analyze(path, TraceOptions(receiver, PROBE_RTO_MIN_PS, INTERVAL_PS, PROBE_RTO_GAP))
    _refuse_useless(path, probe)
    rto = (rto_min_ps(probe) if rto_min_ps else None) or TraceOptions.rto_min
    interval = min(INTERVAL_PS, rto)
    final = analyze(path, TraceOptions(probe.report["receiver"], rto, interval), progress)
    return Evidence(path, probe, final)


def _refuse_useless(path: str, t: TraceReport) -> None:
    r = t.report
    if not r["tcp_segments"]:
        raise EvidenceError(f"{path}: no TCP segments in the capture; nothing to diagnose")
    if not r["receiver"]:
        raise EvidenceError(
            f"{path}: no receiver to infer (no host receives data from several others); "
            "name it with --receiver IP"
        )
    flows = r["flows"]
    if len(flows) < 2:
        raise EvidenceError(
            f"{path}: {len(flows)} flow into {r['receiver']}; an incast needs several senders"
        )
    if r["truncated"] and not r["goodput_bytes"]:
        raise EvidenceError(f"{path}: truncated before any data reached the receiver")
