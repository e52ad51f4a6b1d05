"""EQDS's cases for benchmarks/htsim_peer.py: incastlab's `--transport eqds` beside htsim's
EQDS (`htsim_eqds`, `main_eqds.cpp`) with htsim's defaults, read from its source:

- packets of 4150 B on the wire (`-mtu 4150`), 64 B of them headers, so 4086 B of payload;
  htsim sends whole packets, so each flow is padded to whole packets on both sides;
- trimming switch ports (`CompositeQueue`): 35 data packets (`-q 35`), then trim; headers up
  to 2 × 35 × 4150 B, then dropped (no return to sender); headers strictly first;
- an unsolicited first window of 50 packets (`-cwnd 50`);
- per-packet spraying over 64 path entropies (`-paths 64`);
- one 4096 B credit per 0.99 × (4160 + 38) B at the link rate: htsim's pull pacer uses its
  static default MTU, not the run's, so its credit rate is 4150 / (0.99 × 4198) = 0.9986 of
  one 4150 B packet per packet time;
- retransmission timeout 150 µs + 6 × 35 × 4150 B at the link rate;
- 1 µs per link, no preamble or gap, the receiver host 0 and the senders htsim's
  gen_incast.py (seed 13) picks.

Expect the 256:1 mean and the 1000:1 last and mean completion outside 10% against a stock htsim:
its sender states a new pull target only with new data, so a sender whose credit all went to
resends after a timeout gets no more credit until its receiver owes no one else. Rebuilt with
retransmissions stating a fresh pull target too (that one change), htsim agrees within 5% on
all four cases (docs/htsim.md, "EQDS").
"""

from __future__ import annotations

import json

PAYLOAD = 4086  # 4150 B on the wire less 64 B of headers
PULL_RATE = 0.9986  # 4150 / (0.99 × 4198)


def padded(size: int) -> int:
    """htsim's EQDS sends whole packets."""
    return -(-size // PAYLOAD) * PAYLOAD


def scenario(
    name: str, hosts: int, k: int, senders: int, size: int, gbps: int, src: list[int]
) -> str:
    """The incastlab scenario of an EQDS case, as TOML."""
    lines = [
        f"# {name}: EQDS, {senders}:1 incast of {size:,} B (padded to whole 4086 B packets) on",
        f"# htsim's {hosts}-host 3-tier fat tree (k = {k}) at {gbps} Gbps, as htsim's main_eqds",
        "# runs it with its defaults (benchmarks/htsim_peer.py, benchmarks/htsim_peer_eqds.py).",
        "# The receiver is host 0, the senders the hosts htsim's gen_incast.py (seed 13) picks.",
        f"#   incast sim benchmarks/htsim_peer/{name}.toml",
        "seed = 1",
        'transport = "eqds"',
        "",
        "[topology]",
        'kind = "fat_tree"',
        f"fat_tree_k = {k}",
        f"senders = {senders}",
        'placement = "listed"',
        f"listed_hosts = {json.dumps([0, *src])}",
        f'link = "{gbps}Gbps"',
        f'receiver_link = "{gbps}Gbps"',
        'link_delay = "1us"',
        "",
        "[tcp]",
        'phy_overhead = "0B"',
        "",
        "[eqds]",
        f'mtu = "{PAYLOAD}B"',
        'header_bytes = "64B"',
        "initial_window = 50",
        "data_queue = 35",
        'header_queue = "290500B"',
        "header_weight = 100000",
        "return_to_sender = false",
        "paths = 64",
        f"pull_rate = {PULL_RATE}",
        'rto_base = "150us"',
        "rto_queues = 6",
        "",
        "[workload]",
        'kind = "incast"',
        f'flow_size = "{padded(size)}B"',
        "",
    ]
    return "\n".join(lines)


def htsim_command(binary: str, out: str, hosts: int, cm: str, gbps: int, end_us: int) -> list[str]:
    """htsim's EQDS run of a case, with its defaults spelled out."""
    cmd = [binary, "-o", out, "-nodes", str(hosts), "-tm", cm, "-strat", "ecmp_host"]
    cmd += ["-paths", "64", "-seed", "13", "-linkspeed", str(gbps * 1000), "-end", str(end_us)]
    return cmd
