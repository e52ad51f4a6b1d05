"""What a capture shows, read by ``incast pcap``'s analyzer: this module only chooses its
options and refuses, in one line each, captures from which no scenario can be inferred."""

from __future__ import annotations

from collections.abc import Callable

from incastlab.trace import TraceOptions, TraceReport, analyze

#: Width of the per-interval rows; fine enough for 1 ms RTOs.
INTERVAL_PS = 100_000_000


class EvidenceError(ValueError):
    """A capture no scenario can be inferred from; the message says why, in one line."""


def read_capture(
    path: str,
    receiver: str | None = None,
    rto_min_ps: int = TraceOptions.rto_min,
    progress: Callable[[int], None] | None = None,
) -> TraceReport:
    """Read ``path`` with timeouts counted against ``rto_min_ps``. Raises
    :class:`EvidenceError` for a capture without TCP, with one flow into the receiver, with
    no receiver to infer, or cut short before any data."""
    t = analyze(path, TraceOptions(receiver, rto_min_ps, min(INTERVAL_PS, rto_min_ps)), progress)
    _refuse_useless(path, t)
    return t


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
