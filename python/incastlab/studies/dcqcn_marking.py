"""DCQCN's egress ECN marking, the one place the RDMA remedies (``incast mitigate`` on an RDMA
scenario) and the transport ranking (``incast mitigate --transports``) take it from."""

from __future__ import annotations

from typing import Any

#: DCQCN's marking (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
#: SIGCOMM 2015): Kmin 5 KB, Kmax 200 KB, Pmax 1% at its 40 Gbps, the paper's §5.2 and its
#: Figure 14 (the parameters of its deployment), as `dcqcn-incast` and `pfc-unfairness` use it.
#: (Its strawman, §5.2, marks DCTCP-like at Kmin = Kmax = 40 KB, Pmax 1.) It is neither of these:
#: the HPCC paper's DCQCN setting (Li et al., SIGCOMM 2019, §5.1: Kmin 100 KB, Kmax 400 KB per
#: 25 Gbps of link rate, "according to our experiences") nor the DCQCN authors' ns-3
#: configuration (ns3-rdma, mix/config.txt: KMIN 40, KMAX 1000 cells of 1,030 B, PMAX 1).
#: The remedy scales Kmin and Kmax with the link's rate, as the HPCC paper and HPCC's ns-3 do,
#: when the scenario marks nothing.
DCQCN_KMIN, DCQCN_KMAX, DCQCN_PMAX, DCQCN_RATE = 5_000, 200_000, 0.01, 40e9


def dcqcn_marking(topology: dict[str, Any]) -> dict[str, Any]:
    """The egress ECN keys DCQCN gets where a scenario marks nothing: its Kmin/Kmax/Pmax at
    40 Gbps, scaled to the scenario's link rate."""
    scale = topology["link"] / DCQCN_RATE
    return {
        "topology.ecn_kmin": f"{round(DCQCN_KMIN * scale)}B",
        "topology.ecn_kmax": f"{round(DCQCN_KMAX * scale)}B",
        "topology.ecn_pmax": DCQCN_PMAX,
    }
