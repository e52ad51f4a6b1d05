"""What RTOmin costs a MapReduce shuffle on real Linux TCP, beside the simulator
(``incast validate shuffle``).

The job model (:mod:`incastlab.jobs`) times every shuffle with the simulator's ``shuffle``
workload: all of a job's reducers fetching at once, every host a receiver and a sender. Its
verdict rests on how much a long RTOmin costs such a shuffle. This study runs the same
shuffles on the kernel (``incast emulate``, the simulator's fetches in the simulator's order)
and in the simulator, under a long and a short RTOmin, and compares Chen et al.'s Eq. 5 (the
long RTOmin's extra time over the short one's) on both.

A 2-core machine cannot shape 10 hosts at 1 Gbps, so the article's fabric is slowed down
:data:`~.shuffle_points.SCALE` times: the links run at 1 Gbps / SCALE and every RTOmin is SCALE
times longer (200 ms → 2 s, 1 ms → 10 ms), while bytes, packets, the port buffer and the flows
per port stay the article's. A fetch then takes SCALE times as long and so does each timeout,
so a timeout costs a fetch the same share as at 1 Gbps. Two things do not scale: the testbed's
base RTT (the veths', about 30 µs, where the article's 100 µs would become 1 ms) and the
kernel's fixed timers (the 4 ms tick, delayed ACKs of at least 40 ms). The simulator runs the
slowed-down shuffle with the testbed's measured RTT and framing (as ``incast validate`` tells
it), and the article's own fabric too, so the table shows what the slowing down changed.

    sudo incast validate shuffle --out docs/validation/shuffle
    incast validate shuffle --skip-real       # the stored kernel runs only, no root

The kernel's runs are kept (``real/<point>.parquet``) and only missing ones are run again;
the simulator's are rerun every time (seconds).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from incastlab.real.testbed.simulator import jitter_from_probes
from incastlab.validation.shuffle_points import (
    ARTICLE_KERNEL,
    Kernel,
    Run,
    load_real,
    points,
    real_file,
    run_real,
    scenario,
    sim_overrides,
)
from incastlab.validation.shuffle_report import plot, write_readme

if TYPE_CHECKING:
    from incastlab.backends import Backend


def run(
    out: Path,
    seeds: Sequence[int],
    *,
    emulation: Callable[[Kernel], Backend] | None,
    say: Callable[[str], None] = lambda _m: None,
) -> tuple[Path | None, list[str]]:
    """Run the points the kernel has no stored run of on ``emulation(kernel)`` (none: only
    the stored runs, no root needed), simulate every stored one on the same testbed and on
    the article's fabric, and write the figure and the README under ``out``; the README
    (None when no kernel run is stored) and the kernel's failures."""
    from incastlab import simulate

    real_dir = out / "real"
    failures = [] if emulation is None else run_real(real_dir, emulation, say, seeds)
    stored = {
        pt: load_real(real_file(real_dir, pt))
        for pt in points(seeds)
        if real_file(real_dir, pt).exists()
    }
    # The veths' timing noise, from every run's RTT probe (the testbed is the same for all).
    jitter = jitter_from_probes(list(stored.values())) or 0.0
    runs = []
    for pt, real in stored.items():
        rtt = real.report["emulated"]["rtt_measured_s"] or 30e-6
        sim = simulate(scenario(pt, overrides=sim_overrides(rtt, jitter, pt.kernel)))
        article = simulate(scenario(pt, scale=1, overrides=ARTICLE_KERNEL))
        runs.append(Run(pt, real, sim, article))
    if not runs:
        return None, failures
    plot(runs, out / "shuffle.png")
    return write_readme(out, runs, jitter), failures
