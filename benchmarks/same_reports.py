"""Are two builds of the simulator the same? Runs one scenario per engine feature (35: Reno,
CUBIC, DCTCP, BBR, the linux profile with its timer wheel, ECN, RED, PFC, shared buffer, the four
RTO randomizations, NewReno, delayed ACK, queries, tasks, kv_gets, a shuffle, rate caps, tbf
ports, leaf-spine, fat tree, a topology file, NDP, time series...) through two
builds of the `one` example and compares their reports byte for byte: the check behind a
refactor that must not change a result.

    cargo build --release -p incast-sim --example one      # in each checkout
    python benchmarks/same_reports.py OLD/target/release/examples/one target/release/examples/one

Prints one line per scenario (same / DIFF) and exits 1 if any differs. Both builds must take
the scenario keys of the incastlab installed here (a build from before a key was added refuses
the normalized scenario that carries it).
"""

from __future__ import annotations

import subprocess
import sys

from incastlab.scenario import from_dict

SCENARIOS = {
    "reno16": {"topology": {"senders": 16}, "workload": {"blocks": 5}},
    "reno47_rto1ms": {
        "topology": {"senders": 47},
        "tcp": {"rto_min": "1ms", "clock_granularity": "1us"},
        "workload": {"blocks": 5},
    },
    "cubic8": {
        "topology": {"senders": 8, "buffer": "32KB"},
        "tcp": {"congestion_control": "cubic"},
        "workload": {"blocks": 5},
    },
    "linux_cubic12": {
        "topology": {"senders": 12, "buffer": "32KB"},
        "tcp": {"profile": "linux"},
        "workload": {"blocks": 5},
    },
    "linux_bbr8": {
        "topology": {"senders": 8, "buffer": "32KB"},
        "tcp": {"profile": "linux", "congestion_control": "bbr"},
        "workload": {"blocks": 5},
    },
    "classic_bbr8": {
        "topology": {"senders": 8},
        "tcp": {"congestion_control": "bbr"},
        "workload": {"blocks": 4},
    },
    # The kernel validation's testbed: tbf ports, a jiffy timer wheel.
    "linux_wheel_tbf_ports": {
        "topology": {
            "senders": 6,
            "buffer": "32KB",
            "port_burst": "3KB",
            "link": "100Mbps",
            "receiver_link": "100Mbps",
        },
        "tcp": {"profile": "linux", "timer_wheel": True, "rto_min": "10ms"},
        "workload": {"blocks": 3},
    },
    "dctcp16": {
        "topology": {"senders": 16, "ecn_threshold": "20KB"},
        "tcp": {"congestion_control": "dctcp"},
        "workload": {"blocks": 5},
    },
    "ecn_reno": {
        "topology": {"senders": 10, "buffer": "160KB", "ecn_threshold": "30KB"},
        "tcp": {"ecn": True},
        "workload": {"sru": "100KB", "blocks": 5},
    },
    "red": {
        "topology": {"senders": 12, "red_min": "20KB", "red_max": "60KB"},
        "workload": {"blocks": 4},
    },
    "red_ecn": {
        "topology": {"senders": 12, "red_min": "20KB", "red_max": "60KB", "red_ecn": True},
        "tcp": {"ecn": True},
        "workload": {"blocks": 4},
    },
    "pfc": {"topology": {"senders": 16, "pfc": True}, "workload": {"blocks": 4}},
    "pfc_bg_sink": {
        "topology": {"senders": 8, "pfc": True},
        "background": {"flows": 8, "source": "senders", "destination": "sink"},
        "workload": {"blocks": 3},
    },
    "shared": {"topology": {"senders": 20, "shared_buffer": "1MB"}, "workload": {"blocks": 4}},
    "rand_uniform": {
        "topology": {"senders": 64, "buffer": "32KB"},
        "tcp": {"rto_min": "10ms", "rto_randomization": "uniform", "rto_delta": "4ms"},
        "workload": {"block": "1MB", "blocks": 4},
    },
    "rand_tda": {
        "topology": {"senders": 32, "buffer": "32KB"},
        "tcp": {"rto_min": "10ms", "rto_randomization": "tda", "rto_delta": "4ms"},
        "workload": {"block": "1MB", "blocks": 4},
    },
    "rand_maa": {
        "topology": {"senders": 32, "buffer": "32KB"},
        "tcp": {"rto_min": "10ms", "rto_randomization": "maa", "rto_delta": "1ms"},
        "workload": {"block": "1MB", "blocks": 4},
    },
    "rand_fsa_bg": {
        "topology": {"senders": 16, "buffer": "32KB"},
        "tcp": {"rto_min": "10ms", "rto_randomization": "fsa", "rto_delta": "4ms"},
        "background": {"flows": 2},
        "workload": {"block": "1MB", "blocks": 3},
    },
    "newreno_nosack": {
        "topology": {"senders": 8},
        "tcp": {
            "sack": False,
            "limited_transmit": False,
            "recovery_cwnd": "halve",
            "rto_formula": "rfc6298",
        },
        "workload": {"blocks": 4},
    },
    "delack_block_restart": {
        "topology": {"senders": 6},
        "tcp": {"delayed_ack": "40ms", "cwnd_restart": "block", "frto": False},
        "workload": {"blocks": 4},
    },
    "incast_flows": {
        "topology": {"senders": 30, "link": "10Gbps"},
        "workload": {"kind": "incast", "flow_size": "270000B", "sru": None},
    },
    "queries_cdf": {
        "topology": {"senders": 8},
        "tcp": {"rto_min": "1ms"},
        "workload": {
            "kind": "queries",
            "queries": 200,
            "query_size_cdf": [["2KB", 0.6], ["100KB", 0.9], ["1MB", 1.0]],
        },
    },
    "queries_uniform": {
        "topology": {"senders": 4},
        "workload": {"kind": "queries", "queries": 150},
    },
    "tasks_fanout_stagger": {
        "topology": {"senders": 8},
        "workload": {
            "tasks": 2,
            "fanout_window": 3,
            "request_stagger": "20us",
            "jitter": "50us",
            "blocks": 3,
        },
    },
    "leaf_spine": {
        "topology": {"kind": "leaf_spine", "senders": 20, "hosts_per_leaf": 8, "spines": 2},
        "workload": {"blocks": 3},
    },
    "fat_tree_tcp": {
        "topology": {
            "kind": "fat_tree",
            "senders": 40,
            "fat_tree_k": 8,
            "link": "10Gbps",
            "link_delay": "1us",
        },
        "workload": {"kind": "incast", "flow_size": "270000B", "sru": None},
    },
    "ndp_star": {
        "transport": "ndp",
        "topology": {"senders": 50, "link": "10Gbps"},
        "workload": {"kind": "incast", "flow_size": "270000B", "sru": None},
    },
    "ndp_fat_tree": {
        "transport": "ndp",
        "topology": {
            "kind": "fat_tree",
            "senders": 200,
            "fat_tree_k": 16,
            "link": "10Gbps",
            "link_delay": "1us",
        },
        "workload": {"kind": "incast", "flow_size": "270000B", "sru": None},
    },
    "ndp_iw1_nobounce": {
        "transport": "ndp",
        "ndp": {"initial_window": 1, "return_to_sender": False, "header_queue": "2KB"},
        "topology": {"senders": 100, "link": "10Gbps"},
        "workload": {"kind": "incast", "flow_size": "270000B", "sru": None},
    },
    "series": {
        "topology": {"senders": 8},
        "workload": {"blocks": 2},
        "run": {"sample_interval": "100us"},
    },
    "pkt_buffer_nic": {
        "topology": {
            "senders": 8,
            "buffer": "42pkt",
            "nic_buffer": "100pkt",
            "receiver_link": "10Gbps",
            "host_jitter": "0us",
        },
        "workload": {"blocks": 3},
    },
    "kv_gets_hol": {
        "topology": {"senders": 8, "buffer": "unlimited", "shared_buffer": "1MB"},
        "workload": {
            "kind": "kv_gets",
            "kv_utilization": 0.5,
            "kv_duration": "200ms",
            "kv_warmup": "50ms",
            "jitter": "20us",
            "kv_hol_blocking": True,
        },
    },
    "rate_cap": {
        "topology": {"senders": 8, "host_rate_cap": "80%", "host_rate_burst": "6KB"},
        "workload": {"blocks": 5},
    },
    # Two shared-buffer switches, a 1 Gbps trunk (ECMP over two), a key-value cluster across.
    "file_two_switches": {
        "topology": {
            "kind": "file",
            "file": {
                "switches": [
                    {"name": "s1", "shared_buffer": "500KB"},
                    {"name": "s2", "shared_buffer": "500KB"},
                ],
                "hosts": [f"h{i}" for i in range(8)],
                "links": [
                    {
                        "a": f"h{i}",
                        "b": f"s{1 + i // 4}",
                        "rate": "1Gbps",
                        "delay": "25us",
                        "buffer": "unlimited",
                    }
                    for i in range(8)
                ]
                + [{"a": "s1", "b": "s2", "rate": "1Gbps", "delay": "5us", "buffer": "256KB"}] * 2,
            },
        },
        "workload": {"kind": "kv_gets", "kv_utilization": 0.3, "kv_duration": "200ms"},
    },
    "shuffle": {
        "topology": {"senders": 6, "buffer": "32KB"},
        "workload": {
            "kind": "shuffle",
            "sru": "64KB",
            "blocks": 2,
            "reducers": 8,
            "fanout_window": 3,
            "response_header": "24B",
        },
    },
}


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    old, new = sys.argv[1:]
    differ = 0
    for name, d in SCENARIOS.items():
        # The set was written when `classic` was the default profile: a scenario that names
        # none keeps it, so both profiles stay covered (several name `linux`).
        d = {**d, "tcp": {"profile": "classic", **d.get("tcp", {})}}
        sc = from_dict(d)
        text = sc.to_json()
        n = str(sc.topology.senders)
        a, b = (
            subprocess.run([exe, n], input=text, capture_output=True, text=True, check=True).stdout
            for exe in (old, new)
        )
        same = a == b
        differ += not same
        print(f"{'same' if same else 'DIFF'}  {name}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
