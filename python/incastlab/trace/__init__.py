"""Packet captures: what ``incast pcap`` finds in one (the Rust analyzer in
``incastlab._core.analyze_pcap``), as plain data, Parquet tables and figures.

The analysis streams the capture in Rust; this layer only shapes its report.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from incastlab import _core

#: The report's per-interval columns, in the Parquet file's order.
INTERVAL_COLUMNS = ("wire_bytes", "goodput_bytes", "retx", "rtos")


@dataclass(frozen=True)
class TraceOptions:
    """What the analysis needs beyond the file: integers in base units (picoseconds)."""

    receiver: str | None = None
    rto_min: int = 200_000_000_000
    interval: int = 1_000_000_000
    rto_gap: float = 0.8
    min_flows: int = 3

    def to_json(self) -> dict[str, Any]:
        return {
            "receiver": self.receiver,
            "rto_min_ps": self.rto_min,
            "interval_ps": self.interval,
            "rto_gap": self.rto_gap,
            "min_flows": self.min_flows,
        }


@dataclass(frozen=True)
class TraceReport:
    """The analysis of one capture: the Rust report (times in nanoseconds) and its source."""

    path: str
    options: TraceOptions
    report: dict[str, Any]
    version: str

    @property
    def verdict(self) -> str:
        return str(self.report["verdict"])

    @property
    def incast(self) -> bool:
        return bool(self.report["incast"])

    def to_json(self) -> dict[str, Any]:
        return {
            "capture": self.path,
            "options": self.options.to_json(),
            "version": self.version,
            **self.report,
        }


def analyze(
    path: str | Path, options: TraceOptions, progress: Callable[[int], None] | None = None
) -> TraceReport:
    """Analyze the capture at ``path``; ``progress(bytes_read)`` is called now and then.

    Raises ``_core.TraceError`` (one line) for a file that is not a readable capture.
    """
    text = _core.analyze_pcap(
        str(path),
        receiver=options.receiver,
        rto_min=options.rto_min,
        interval=options.interval,
        rto_gap=options.rto_gap,
        min_flows=options.min_flows,
        progress=progress,
    )
    return TraceReport(str(path), options, json.loads(text), _core.__version__)


def write_parquet(t: TraceReport, directory: str | Path) -> list[Path]:
    """``flows.parquet`` (one row per flow into the receiver), ``intervals.parquet`` (one
    row per interval of the receiver's ingress) and ``blocks.parquet`` in ``directory``, each
    carrying the capture, the options and the incastlab version as metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    meta = {
        b"incastlab.kind": b"pcap",
        b"incastlab.version": t.version.encode(),
        b"incastlab.capture": t.path.encode(),
        b"incastlab.options": json.dumps(t.options.to_json()).encode(),
        b"incastlab.verdict": t.verdict.encode(),
    }
    r = t.report
    iv = r["intervals"]
    n = len(iv["wire_bytes"])
    step = r["interval_ns"]
    intervals = {
        "t_s": [k * step / 1e9 for k in range(n)],
        **{c: iv[c] for c in INTERVAL_COLUMNS},
        "ingress_bps": [b * 8e9 / step for b in iv["wire_bytes"]],
        "goodput_bps": [b * 8e9 / step for b in iv["goodput_bytes"]],
    }
    tables = {
        "flows": pa.Table.from_pylist(r["flows"]) if r["flows"] else pa.table({"flow": []}),
        "intervals": pa.table(intervals),
        "blocks": pa.Table.from_pylist(r["blocks"]) if r["blocks"] else pa.table({"block": []}),
    }
    out = []
    for name, table in tables.items():
        p = d / f"{name}.parquet"
        pq.write_table(table.replace_schema_metadata(meta), p)
        out.append(p)
    return out
