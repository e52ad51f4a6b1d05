"""The key-value store's incast study (``incast validate kv``): its points, their scenarios, the
kernel's stored runs and what the simulator is told.

Every point is one scenario (the cluster of ``examples/riak-emulated.toml`` at a target
utilization, capped or not) run twice with the same seed, so both backends run the same
plan of gets: once by ``incast emulate`` in namespaces, once by the simulator given the
testbed's measured RTT, its framing, protocol and NICs
(:mod:`incastlab.real.testbed.simulator`) and the Linux profile on this kernel's 4 ms tick.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from incastlab.backends import Backend
    from incastlab.result import Result
    from incastlab.scenario import Scenario

#: Target utilizations (``workload.kv_utilization``) of the sweep.
UTILIZATIONS = (0.2, 0.3, 0.4, 0.5, 0.6)
#: Sender rate caps: none, and the article's untried 80%.
CAPS = ("off", "80%")
#: The link rate 20 hosts keep up with on a 2-core machine (see the README this writes):
#: at 100 Mbps the CPUs saturate and gets leave hundreds of milliseconds late.
LINK = "25Mbps"
#: Long enough for ~900 measured gets at 20% on 20 hosts at 25 Mbps.
DURATION = "24s"
WARMUP = "4s"
SEED = 1
#: The CPU envelope: (hosts, link) run at 50% for 6 s of arrivals (2 s warm-up).
ENVELOPE = ((20, "100Mbps"), (10, "100Mbps"), (20, "50Mbps"), (20, "25Mbps"))


@dataclass(frozen=True)
class Point:
    """One scenario of the sweep."""

    utilization: float
    cap: str
    seed: int = SEED

    @property
    def key(self) -> str:
        cap = "nocap" if self.cap == "off" else "cap" + self.cap.rstrip("%")
        seed = "" if self.seed == SEED else f"-s{self.seed}"
        return f"u{round(self.utilization * 100):02d}-{cap}{seed}"

    def overrides(self, link: str) -> dict[str, Any]:
        o: dict[str, Any] = {
            "topology.link": link,
            "workload.kv_utilization": self.utilization,
            "workload.kv_duration": DURATION,
            "workload.kv_warmup": WARMUP,
            "seed": self.seed,
        }
        if self.cap != "off":
            o["topology.host_rate_cap"] = self.cap
        return o


def points(seeds: Sequence[int] = (SEED,)) -> list[Point]:
    return [Point(u, c, seed) for seed in seeds for c in CAPS for u in UTILIZATIONS]


def scenario(base: Path, point: Point, link: str, extra: dict[str, Any] | None = None) -> Scenario:
    from incastlab.scenario import apply_overrides, from_dict, read_toml

    return from_dict(apply_overrides(read_toml(base), {**point.overrides(link), **(extra or {})}))


def sim_overrides(point: Point, rtt_s: float) -> dict[str, Any]:
    """What the simulator is told about the testbed (as ``incast validate`` tells it): the
    measured RTT, tbf's framing, the block protocol's 24-byte messages, NICs that send one
    segment per packet through a two-frame bucket (the cap's own bucket when capped: one
    bucket per NIC), and the Linux profile on this kernel's 4 ms timer tick."""
    from incastlab.real.testbed.build import TBF_BURST
    from incastlab.real.testbed.simulator import FRAMING, nic, profile, protocol

    nics = nic()
    if point.cap != "off":
        nics.pop("topology.nic_burst")
        nics["topology.host_rate_burst"] = f"{TBF_BURST}B"
    return {
        "topology.rtt": f"{max(1, round(rtt_s * 1e6))}us",
        **FRAMING,
        **protocol(),
        **nics,
        **profile("linux"),
    }


def real_file(real_dir: Path, point: Point) -> Path:
    return real_dir / f"{point.key}.parquet"


def load_real(path: Path) -> Result:
    from incastlab.result.store import read_results

    (r,) = read_results(path)
    return r


def envelope_file(real_dir: Path, hosts: int, link: str) -> Path:
    return real_dir / f"envelope-{hosts}x{link}.parquet"


def envelope_scenario(base: Path, hosts: int, link: str) -> Scenario:
    from incastlab.scenario import apply_overrides, from_dict, read_toml

    o = {
        "topology.senders": hosts,
        "topology.link": link,
        "workload.kv_utilization": 0.5,
        "workload.kv_duration": "6s",
        "workload.kv_warmup": "2s",
        "seed": SEED,
    }
    return from_dict(apply_overrides(read_toml(base), o))


def run_real(
    base: Path,
    real_dir: Path,
    backend: Backend,
    link: str,
    say: Callable[[str], None],
    seeds: Sequence[int] = (SEED,),
) -> list[str]:
    """Run every point (and every envelope probe) the kernel has no stored run of; the
    failures, one line each."""
    from incastlab.validation.runs import run_missing

    real_dir.mkdir(parents=True, exist_ok=True)
    jobs = [(p.key, real_file(real_dir, p), scenario(base, p, link)) for p in points(seeds)]
    jobs += [
        (
            f"envelope {h} × {rate}",
            envelope_file(real_dir, h, rate),
            envelope_scenario(base, h, rate),
        )
        for h, rate in ENVELOPE
    ]

    def summary(r: Result) -> str:
        kv = r.report["kv"]
        return (
            f"utilization {kv['utilization']:.0%}, "
            f"{kv['drops_per_s_per_host']:.1f} drops/s/host, "
            f"p99 {kv['latency_p99'] / 1e12 * 1e3:.0f} ms, {r.report['wall_s']:.0f} s"
        )

    return run_missing(jobs, backend, say, summary)


@dataclass
class Row:
    """One point on both backends."""

    point: Point
    real: Result
    sim: Result

    def figures(self, backend: str) -> dict[str, float]:
        kv = (self.real if backend == "emulate" else self.sim).report["kv"]
        return {
            "utilization": kv["utilization"],
            "drops": kv["drops_per_s_per_host"],
            "timeouts": kv["timeouts_per_s"],
            "p50_ms": kv["latency_p50"] / 1e9,
            "p99_ms": kv["latency_p99"] / 1e9,
            "gets": kv["gets"],
            "late_p99_ms": (
                self.real.report["kv_run"]["issue_lag_us"]["p99"] / 1e3
                if backend == "emulate"
                else 0.0
            ),
        }
