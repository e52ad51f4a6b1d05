"""The shuffle study's points (``incast validate shuffle``): the shuffles, the kernels, the
scenarios on the slowed-down fabric and the article's, the kernel's stored runs and what the
simulator is told about the testbed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from incastlab.backends import Backend
    from incastlab.result import Result
    from incastlab.scenario import Scenario

#: The article's fabric is slowed down this many times (rates ÷, times ×).
SCALE = 10
#: The article's fabric: one switch, 64 KB per port, 1 Gbps, 100 µs.
LINK_BPS = 1_000_000_000
BUFFER = "64KB"
RTT_US = 100
#: The article's RTOmin values, before scaling.
RTOS_MS = (200, 1)
#: The shuffle: 10 hosts, two reducers on each, every reducer fetching from the 9 other hosts.
HOSTS = 10
REDUCERS = 20


@dataclass(frozen=True)
class Shape:
    """One shuffle: its map outputs, how many each reducer fetches from every host, and how
    many hosts a reducer fetches from at once (mapred.reduce.parallel.copies; 0: all)."""

    output: int
    outputs: int
    copies: int
    about: str


#: The job model's default shuffle fetches 1.86 MB outputs (64 MiB map inputs over 36
#: reducers) 5 at once; its tuned one 14.6 MB outputs (512 MiB inputs) from every host at once;
#: 256 KB outputs are where the model's fetch-size table says incast bites. Each with the
#: outputs per host that make a run of 10-25 s at 100 Mbps.
SHAPES: dict[str, Shape] = {
    "default": Shape(1_858_045, 4, 5, "1.86 MB outputs, 5 copies (Hadoop's defaults)"),
    "tuned": Shape(14_619_883, 1, 0, "14.6 MB outputs, every host at once (tuned)"),
    "256KB": Shape(256_000, 16, 5, "256 KB outputs, 5 copies"),
}
SEEDS = tuple(range(1, 9))


@dataclass(frozen=True)
class Kernel:
    """How the kernel runs (sysctls set in every host's namespace, scenario keys both backends
    take) and the simulator's profile for it."""

    sysctls: dict[str, str]
    scenario: dict[str, Any]
    profile: str
    about: str


#: Today's Linux as it ships, and the same kernel brought nearer to the article's 2.6.28: no
#: RACK and no tail loss probe (both came with Linux 3.x and 4.x), an initial window of 3
#: (RFC 3390, as 2.6.28; 10 came with 3.0). What this kernel cannot take back: PRR (3.2; 2.6.28
#: halved the rate), HyStart (2.6.29), TCP Small Queues (3.6). The simulator runs the
#: classic profile (2009's TCP) with CUBIC for it.
KERNELS: dict[str, Kernel] = {
    "today": Kernel({}, {}, "linux", "as it ships (RACK-TLP, IW 10)"),
    "2009": Kernel(
        {"net.ipv4.tcp_recovery": "0", "net.ipv4.tcp_early_retrans": "0"},
        {"tcp.profile": "classic", "tcp.initial_window": 3},
        "classic",
        "without RACK-TLP, IW 3 (nearer 2.6.28)",
    ),
}
#: The shapes and seeds run on the 2009-like kernel: the two of Figure 6.
KERNEL_2009_SHAPES = ("default", "tuned")
KERNEL_2009_SEEDS = SEEDS[:5]
#: The article's kernel on its own fabric: a 1 ms RTOmin needs timers of HZ = 1000 (this
#: machine's 4 ms tick, slowed down 10 times, is 0.4 ms).
ARTICLE_KERNEL = {"tcp.timer_granularity": "1ms"}


@dataclass(frozen=True)
class Point:
    """One shuffle on one RTOmin (the article's value, before scaling) and seed."""

    shape: str
    rto_ms: int
    seed: int
    kernel: str = "today"

    @property
    def key(self) -> str:
        tail = "" if self.kernel == "today" else f"-{self.kernel}"
        return f"{self.shape}-rto{self.rto_ms}ms-seed{self.seed}{tail}"


def points(seeds: Sequence[int] = SEEDS) -> list[Point]:
    """Every point, seed after seed with both RTOmin values side by side, so that a drift of
    the machine over the kernel's runs (its load, its other tenants) falls on both alike; then
    the 2009-like kernel's."""
    today = [Point(s, r, seed) for seed in seeds for s in SHAPES for r in RTOS_MS]
    old = [
        Point(s, r, seed, "2009")
        for seed in seeds
        if seed in KERNEL_2009_SEEDS
        for s in KERNEL_2009_SHAPES
        for r in RTOS_MS
    ]
    return today + old


def scenario(point: Point, scale: int = SCALE, overrides: dict[str, Any] | None = None) -> Scenario:
    """The point's shuffle on the fabric slowed down ``scale`` times (1: the article's)."""
    from incastlab.scenario import apply_overrides, from_dict

    shape = SHAPES[point.shape]
    base = {
        "seed": point.seed,
        "topology": {
            "senders": HOSTS,
            "link": f"{LINK_BPS // scale}bps",
            "buffer": BUFFER,
            "rtt": f"{RTT_US * scale}us",
        },
        "tcp": {
            "profile": "linux",
            "congestion_control": "cubic",
            "rto_min": f"{point.rto_ms * scale}ms",
        },
        "workload": {
            "kind": "shuffle",
            "sru": f"{shape.output}B",
            "blocks": shape.outputs,
            "fanout_window": shape.copies,
            "reducers": REDUCERS,
        },
    }
    return from_dict(apply_overrides(base, {**KERNELS[point.kernel].scenario, **(overrides or {})}))


def sim_overrides(rtt_s: float, jitter_s: float = 0.0, kernel: str = "today") -> dict[str, Any]:
    """What the simulator is told about the testbed (as ``incast validate`` tells it): the
    measured RTT, the veths' timing noise (``jitter_s``, at most what the RTT allows), tbf's
    framing, the block protocol's 24-byte messages, the veths' NICs and ports
    (:func:`incastlab.real.testbed.simulator.simulator_overrides`), and the kernel's profile
    (:data:`KERNELS`) on this kernel's 4 ms tick."""
    from incastlab.real.testbed.simulator import profile, simulator_overrides

    return {**simulator_overrides(rtt_s, jitter_s), **profile(KERNELS[kernel].profile)}


def real_file(real_dir: Path, point: Point) -> Path:
    return real_dir / f"{point.key}.parquet"


def load_real(path: Path) -> Result:
    from incastlab.result.store import read_results

    (r,) = read_results(path)
    return r


def run_real(
    real_dir: Path,
    backend: Callable[[Kernel], Backend],
    say: Callable[[str], None],
    seeds: Sequence[int],
) -> list[str]:
    """Run every point the kernel has no stored run of, on ``backend(kernel)``; the failures,
    one line each."""
    from incastlab.validation.runs import run_missing

    real_dir.mkdir(parents=True, exist_ok=True)

    def summary(r: Result) -> str:
        rep = r.report
        return (
            f"{rep['duration'] / 1e12:.2f} s, {rep['timeouts']} timeouts, "
            f"{rep['drops']} drops, {rep['wall_s']:.0f} s wall"
        )

    failures = []
    for name, k in KERNELS.items():
        jobs = [
            (p.key, real_file(real_dir, p), scenario(p)) for p in points(seeds) if p.kernel == name
        ]
        failures += run_missing(jobs, backend(k), say, summary)
    return failures


@dataclass
class Run:
    """One point on the kernel and in the simulator (slowed down, and at the article's
    fabric), times in the article's seconds (the slowed-down ones divided by SCALE)."""

    point: Point
    real: Result
    sim: Result
    article: Result

    def seconds(self, which: str) -> float:
        r = getattr(self, which)
        scale = 1 if which == "article" else SCALE
        return float(r.report["duration"]) / 1e12 / scale

    def count(self, which: str, key: str) -> int:
        return int(getattr(self, which).report[key])

    def side(self, key: str) -> float:
        """A per-side count of the kernel's sockets (``map_rtos``, ``reducer_rtos``, ...);
        NaN where the kernel's TCP_INFO does not count timeouts."""
        sides = self.real.report["shuffle"].get("sides")
        return float(sides[key]) if sides else float("nan")
