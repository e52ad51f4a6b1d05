"""What a topology file costs against the built-in topology it describes: the Riak cluster on
the leaf-spine of examples/riak-leaf-spine.toml (built-in `leaf_spine`) and of
examples/riak-leaf-spine-file.toml (the same switches and links from a topology file), and a
synchronized read of 40 senders across a 4-leaf, 4-spine fabric both ways.

    python benchmarks/topology_file.py              # 3 rounds, best CPU time of each
    python benchmarks/topology_file.py --rounds 5

Both ways process the same events (the reports are equal; the script checks it), so the
ratio of events per CPU second is the cost of the described topology's routing. Prints CPU
seconds (the simulator is single-threaded), events per CPU second and the ratio file/built-in.
"""

from __future__ import annotations

import argparse
import resource
from pathlib import Path
from typing import Any

from incastlab.backends.sim import simulate
from incastlab.scenario import Scenario, apply_overrides, from_dict, read_toml

EXAMPLES = Path(__file__).parent.parent / "examples"


def cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def fabric(leaves: int, per_leaf: int, spines: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A sync_read of every host but the last into it, on a built-in leaf-spine and on the
    same one described (12.5 us per link, 5 us per uplink, 128 KB per port)."""
    hosts = [f"h{i}" for i in range(leaves * per_leaf)]
    link = {"delay": "12.5us", "rate": "1Gbps", "buffer": "128KB"}
    links = [{"a": h, "b": f"leaf{i // per_leaf}", **link} for i, h in enumerate(hosts)]
    links += [
        {"a": f"leaf{leaf}", "b": f"spine{s}", **link, "delay": "5us"}
        for leaf in range(leaves)
        for s in range(spines)
    ]
    switches = [f"leaf{leaf}" for leaf in range(leaves)] + [f"spine{s}" for s in range(spines)]
    workload = {"sru": "256KB", "blocks": 100}
    built_in = {
        "topology": {
            "kind": "leaf_spine",
            "senders": len(hosts) - 1,
            "hosts_per_leaf": per_leaf,
            "spines": spines,
            "placement": "packed",
            "buffer": "128KB",
            "fabric_delay": "5us",
        },
        "workload": workload,
    }
    described = {
        "topology": {
            "kind": "file",
            "file": {"switches": switches, "hosts": hosts, "links": links},
        },
        "workload": workload,
    }
    return built_in, described


def kv(name: str) -> Scenario:
    return from_dict(apply_overrides(read_toml(EXAMPLES / name), {"workload.kv_duration": "2s"}))


def best(sc: Scenario, rounds: int) -> tuple[float, int, dict[str, Any]]:
    """The least CPU time of ``rounds`` runs, the events, and the record (scenario columns
    left out)."""
    times = []
    for _ in range(rounds):
        c0 = cpu_s()
        r = simulate(sc)
        times.append(cpu_s() - c0)
    rec = {k: v for k, v in r.record().items() if not k.startswith("topology") and k != "scenario"}
    rec.pop("wall_s", None)
    return min(times), r.events, rec


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    built, described = fabric(4, 10, 4)
    cases = [
        (
            "Riak leaf-spine, kv_gets 2 s",
            kv("riak-leaf-spine.toml"),
            kv("riak-leaf-spine-file.toml"),
        ),
        ("4x10 leaf-spine, 39 senders", from_dict(built), from_dict(described)),
    ]
    print(f"{'case':32} {'events':>12} {'built-in':>18} {'file':>18} {'file/built-in':>14}")
    for name, shape, file in cases:
        t0, n0, r0 = best(shape, a.rounds)
        t1, n1, r1 = best(file, a.rounds)
        same = "same report" if r0 == r1 and n0 == n1 else "REPORTS DIFFER"
        print(
            f"{name:32} {n0:>12,} {n0 / t0 / 1e6:>8.2f} M ev/CPU s {n1 / t1 / 1e6:>8.2f} M ev/CPU s"
            f" {(n1 / t1) / (n0 / t0):>13.3f}  ({t0:.2f} s vs {t1:.2f} s CPU; {same})"
        )


if __name__ == "__main__":
    main()
