"""NDP and multi-switch fabrics: the NDP seed's incast-scaling claims on the 8192-host fat tree
(a subset of the sender counts; `incast reproduce ndp-incast-scaling` runs them all), TCP on the
same tree, leaf-spine, and clear errors for impossible sizes."""

from __future__ import annotations

import functools

import pytest

import incastlab
from conftest import run, scenario

#: The seed's setup: 270000-byte flows into one receiver of an 8192-host k = 32 fat tree,
#: 10 Gbps links of 1 µs.
TREE = dict(
    topology__kind="fat_tree",
    topology__hosts=8192,
    topology__link="10Gbps",
    topology__link_delay="1us",
    workload__kind="incast",
    workload__flow_size="270000B",
)


@functools.cache
def ndp(n: int, iw: int) -> incastlab.Result:
    """One NDP incast on the tree (cached: several tests look at the same runs)."""
    return run(transport="ndp", ndp__initial_window=iw, topology__senders=n, **TREE)


def test_ndp_iw_10_and_23_stay_within_a_few_percent_of_optimal_from_8_senders() -> None:
    for iw in (10, 23):
        for n in (8, 64, 512, 2000):
            r = ndp(n, iw)
            assert r.fct_overhead is not None and r.fct_overhead < 0.05, (iw, n, r.fct_overhead)
            assert r.report["app_bytes"] == n * 270_000
    big = ndp(2000, 23).report["ndp"]
    # With so many senders most of the first windows are trimmed and many headers bounce;
    # every one of those packets is sent again on a pull.
    assert big["trimmed"] > 10_000 and big["bounced"] > 1000
    assert big["retx_bounce"] == big["bounced"]


def test_ndp_iw_1_is_far_from_optimal_below_8_senders() -> None:
    for n in (1, 2, 4):
        assert ndp(n, 1).fct_overhead > 0.5  # type: ignore[operator]
    assert ndp(8, 1).fct_overhead < 0.05  # type: ignore[operator]


def test_tcp_on_the_same_fat_tree_fails_where_ndp_holds() -> None:
    tcp = run(
        topology__senders=64,
        topology__buffer="72KB",
        tcp__mss="8936B",
        tcp__rto_min="1ms",
        **TREE,
    )
    assert tcp.timeouts > 10
    assert tcp.fct_overhead > 10 * ndp(64, 10).fct_overhead  # type: ignore[operator]


def test_leaf_spine_runs_tcp_and_ndp_across_its_spines() -> None:
    common = dict(
        topology__kind="leaf_spine",
        topology__hosts_per_leaf=8,
        topology__spines=4,
        topology__senders=24,
    )
    tcp = run(workload__sru="64KB", workload__blocks=5, **common)
    assert len(tcp.block_times_s) == 5 and tcp.goodput_bps > 0
    fabric = next(q for q in tcp.report["queues"] if q["name"] == "ports-to-senders")
    assert fabric["tx_packets"] > 0  # spine ports carried the responses
    n = run(transport="ndp", workload__kind="incast", workload__flow_size="100KB", **common)
    assert n.report["app_bytes"] == 24 * 100_000 and n.fct_overhead < 0.1  # type: ignore[operator]


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (
            dict(topology__kind="fat_tree", topology__fat_tree_k=5),
            "topology.fat_tree_k: must be even",
        ),
        (
            dict(topology__kind="fat_tree", topology__fat_tree_k=4, topology__senders=20),
            "topology.hosts: a k = 4 fat tree holds 16 hosts, but 21 are asked for",
        ),
        (
            dict(topology__kind="fat_tree", topology__hosts=3, topology__senders=4),
            "topology.hosts: 3 hosts cannot hold 5",
        ),
        (dict(topology__kind="leaf_spine", topology__hosts_per_leaf=0), "topology.hosts_per_leaf"),
        (
            dict(
                topology__kind="fat_tree",
                topology__fat_tree_k=4,
                topology__shared_buffer="1MB",
                topology__pfc=True,
                topology__pfc_headroom="300KB",
            ),
            "topology.pfc_headroom: 4 ingresses × 300000 bytes of headroom leave no pool",
        ),
        (dict(transport="ndp"), r"workload.kind: NDP runs the incast workload"),
        (
            dict(
                transport="ndp",
                workload__kind="incast",
                workload__flow_size="1KB",
                ndp__initial_window=0,
            ),
            "ndp.initial_window",
        ),
    ],
)
def test_impossible_fabrics_and_ndp_settings_name_the_field(
    extra: dict[str, object], needle: str
) -> None:
    with pytest.raises(incastlab.ScenarioError, match=needle):
        scenario(**extra)


def test_ndp_runs_are_deterministic() -> None:
    assert ndp(300, 10).report == ndp(300, 10).report
