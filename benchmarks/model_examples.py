"""Five scenarios the grid-calibrated model had wrong by 2-8x: model, interval, flags
and the simulator (harmonic mean of 3 seeds, the mean block time) side by side.

    python benchmarks/model_examples.py
"""

from __future__ import annotations

import statistics

from incastlab.backends.model import predict_scenario
from incastlab.backends.sim import simulate
from incastlab.scenario import apply_overrides, from_dict

EXAMPLES: dict[str, dict[str, object]] = {
    "16 x 8KB, 128KB, 1Gbps, 50us, RTOmin 10ms, classic CUBIC": {
        "topology.senders": 16,
        "workload.sru": "8KB",
        "topology.buffer": "128KB",
        "topology.rtt": "50us",
        "tcp.rto_min": "10ms",
        "tcp.profile": "classic",
        "tcp.congestion_control": "cubic",
    },
    "128 x 16KB, 32KB, 1Gbps, linux CUBIC, RTOmin 10ms": {
        "topology.senders": 128,
        "workload.sru": "16KB",
        "topology.buffer": "32KB",
        "tcp.rto_min": "10ms",
        "tcp.profile": "linux",
        "tcp.congestion_control": "cubic",
    },
    "3 x 64KB, 32KB, 10Gbps, 50us, RTOmin 1ms, linux": {
        "topology.senders": 3,
        "workload.sru": "64KB",
        "topology.buffer": "32KB",
        "topology.link": "10Gbps",
        "topology.receiver_link": "10Gbps",
        "topology.rtt": "50us",
        "tcp.rto_min": "1ms",
        "tcp.profile": "linux",
    },
    "2 x 16KB, 16KB, 1Gbps, 500us, IW 1, RTOmin 10ms": {
        "topology.senders": 2,
        "workload.sru": "16KB",
        "topology.buffer": "16KB",
        "topology.rtt": "500us",
        "tcp.initial_window": 1,
        "tcp.rto_min": "10ms",
    },
    "12 x 16KB, 64KB, 1Gbps, 1ms, IW 1, RTOmin 200ms, classic, windows carried": {
        "topology.senders": 12,
        "workload.sru": "16KB",
        "topology.buffer": "64KB",
        "topology.rtt": "1ms",
        "tcp.initial_window": 1,
        "tcp.rto_min": "200ms",
        "tcp.profile": "classic",
        "tcp.cwnd_restart": "never",
    },
}


def main() -> None:
    for name, keys in EXAMPLES.items():
        sc = from_dict(apply_overrides({}, keys))
        runs = [
            simulate(from_dict(apply_overrides(sc.normalized(), {"seed": 1 + i}), normalized=True))
            for i in range(3)
        ]
        sim = 3 / sum(1 / r.goodput_bps for r in runs)
        mp = predict_scenario(sc, with_onset=False)
        lo, hi = mp.interval or (0.0, 0.0)
        g = mp.prediction.goodput_bps
        print(
            f"{name}: model {g / 1e6:.1f} Mbps [{lo / 1e6:.1f}, {hi / 1e6:.1f}] "
            f"sim {sim / 1e6:.1f} (seeds {', '.join(f'{r.goodput_bps / 1e6:.0f}' for r in runs)}; "
            f"spread {statistics.pstdev(r.goodput_bps for r in runs) / sim:.2f}) "
            f"ratio {g / sim:.2f}{' flagged: ' + '; '.join(mp.outside) if mp.outside else ''}"
        )


if __name__ == "__main__":
    main()
