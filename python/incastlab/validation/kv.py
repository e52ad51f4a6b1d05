"""The key-value store's incast on real Linux TCP beside the simulator (``incast validate kv``):
drops per second per host and get latency against utilization, with and without the 80% sender
rate cap.

Every point (:mod:`.kv_points`) is one scenario run twice with the same seed, once by the
kernel in namespaces and once by the simulator told about the testbed; the question is the
direction: do drops and p99 latency rise with utilization on both, and does the cap move
them the same way on both (:mod:`.kv_report`).

    sudo incast validate kv --out docs/validation/kv --seeds 1,2
    incast validate kv --skip-real        # the stored kernel runs only, no root

The kernel's runs are kept (``real/<point>.parquet``) and only missing ones are run again;
the simulator's are rerun every time (seconds).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from incastlab.validation.kv_points import (
    Row,
    load_real,
    points,
    real_file,
    run_real,
    scenario,
    sim_overrides,
)
from incastlab.validation.kv_report import ENVELOPE_TEXT, envelope_table, plot, write_readme

if TYPE_CHECKING:
    from incastlab.backends import Backend


def run(
    out: Path,
    base: Path,
    link: str,
    seeds: Sequence[int],
    *,
    emulation: Backend | None,
    say: Callable[[str], None] = lambda _m: None,
) -> tuple[Path | None, list[str]]:
    """Run the points the kernel has no stored run of on ``emulation`` (none: only the stored
    runs, no root needed), simulate every stored one and write the figure and the README under
    ``out``; the README (None when no kernel run is stored) and the kernel's failures."""
    from incastlab import simulate

    real_dir = out / "real"
    failures = [] if emulation is None else run_real(base, real_dir, emulation, link, say, seeds)
    rows = []
    for pt in points(seeds):
        if not real_file(real_dir, pt).exists():
            continue
        real = load_real(real_file(real_dir, pt))
        rtt = real.report["emulated"]["rtt_measured_s"] or 50e-6
        sim = simulate(scenario(base, pt, link, sim_overrides(pt, rtt)))
        rows.append(Row(pt, real, sim))
    if not rows:
        return None, failures
    lags = [r.real.report["kv_run"]["issue_lag_us"]["p99"] for r in rows]
    busy = [r.real.report["machine"].get("cpu_busy", math.nan) for r in rows]
    notes = {
        "envelope": [
            f"Runs here: 20 hosts at {link}. Across them the gets left a median "
            f"{statistics.median(lags) / 1e3:.1f} ms late at the 99th percentile "
            f"(the loop's timers and the shared CPUs), and the CPUs were "
            f"{statistics.median(busy):.0%} busy (median; other work on the machine "
            "included).",
            "",
            "Probes at 50% with 6 s of arrivals (2 s warm-up), stored beside the sweep "
            "(`real/envelope-*.parquet`):",
            "",
            *envelope_table(real_dir),
            "",
            *ENVELOPE_TEXT,
        ]
    }
    plot(
        rows,
        out / "kv.png",
        f"20 hosts at {link}, R = 3, 100 KB values, RTOmin 200 ms, "
        "125 KB per port: simulator (squares) and real Linux TCP (circles), means over seeds",
    )
    return write_readme(out, rows, base, link, notes), failures
