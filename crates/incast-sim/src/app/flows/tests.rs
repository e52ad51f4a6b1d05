use super::*;
use crate::config::{TopologyKind, WorkloadKind};
use crate::units::{from_ms, PS_PER_S};
use crate::Simulation;

/// `hosts` hosts at 10 Gbps on a leaf-spine, a flow schedule at `load` of web-search flows
/// with bursts of 8 × 64 KB at 2% for `ms` milliseconds.
fn scenario(hosts: u32, load: f64, ms: u64) -> Scenario {
    let mut sc = Scenario::example(hosts);
    sc.workload.kind = WorkloadKind::Flows;
    sc.topology.kind = TopologyKind::LeafSpine;
    sc.topology.hosts_per_leaf = 8;
    sc.topology.spines = 2;
    sc.topology.link = 10_000_000_000;
    sc.topology.receiver_link = 10_000_000_000;
    sc.topology.buffer = crate::config::QueueLimit::bytes(256_000);
    sc.topology.rtt = 20_000_000; // 20 us
    sc.tcp.rto_min = from_ms(1);
    sc.flows.load = load;
    sc.flows.duration = from_ms(ms);
    sc.flows.incast_fan_in = 8;
    sc.flows.incast_size = 64_000;
    sc
}

#[test]
fn the_schedule_is_drawn_from_the_seed_through_named_streams() {
    let sc = scenario(16, 0.3, 20);
    sc.validate().unwrap();
    let a = schedule(&sc);
    assert!(a.len() > 50, "{}", a.len());
    assert_eq!(a, schedule(&sc));
    let other = Scenario {
        seed: 2,
        ..sc.clone()
    };
    assert_ne!(a, schedule(&other));
    assert!(a.iter().any(|f| f.class == Class::Background));
    assert!(a.iter().any(|f| matches!(f.class, Class::Incast(_))));
    // The count instead of a duration: exactly that many background flows.
    let mut counted = sc.clone();
    counted.flows.count = 40;
    let n = schedule(&counted)
        .iter()
        .filter(|f| f.class == Class::Background)
        .count();
    assert_eq!(n, 40);
}

#[test]
fn the_ideal_fct_is_the_first_frame_across_the_path_then_the_rest_at_the_bottleneck() {
    let sc = scenario(16, 0.3, 1);
    let net = crate::topology::Network::build(&sc);
    let (a, b) = (net.host(0), net.host(9)); // different leaves: 4 hops
    let (mss, hdr) = (sc.tcp.mss, sc.tcp.header_bytes);
    let one = ideal_fct(&net, a, b, 100, mss, hdr);
    assert_eq!(one, net.latency_between(a, b, 100 + hdr));
    // Two full segments: one more frame (with its preamble and gap) at 10 Gbps.
    let two = ideal_fct(&net, a, b, 2 * mss, mss, hdr);
    let phy = net.links[net.hop_via(a, b, 0, 0).unwrap()].phy_overhead;
    assert_eq!(
        two - net.latency_between(a, b, mss + hdr),
        tx_time(mss + hdr + phy, 10_000_000_000)
    );
    // A megabyte: its serialization dominates (0.8 ms at 10 Gbps, plus headers).
    let mb = ideal_fct(&net, a, b, 1_000_000, mss, hdr) as f64 / PS_PER_S as f64;
    assert!((8.0e-4..8.9e-4).contains(&mb), "{mb}");
    // The same leaf: a shorter path, a shorter ideal.
    assert!(ideal_fct(&net, a, net.host(8), 100, mss, hdr) < one);
}

#[test]
fn the_ideal_fct_charges_a_short_last_frame_at_each_links_own_rate_after_a_slow_link() {
    // A star: the sender's 10 Gbps link, then the receiver's 100 Gbps one. A full frame and
    // a 1-byte one: the short frame leaves the slow link before the full one has left the
    // fast link, so it waits for it there and crosses the fast link at the fast rate.
    let mut sc = Scenario::example(2);
    sc.topology.link = 10_000_000_000;
    sc.topology.receiver_link = 100_000_000_000;
    let net = crate::topology::Network::build(&sc);
    let (a, b) = (net.host(0), net.receiver);
    let (mss, hdr) = (sc.tcp.mss, sc.tcp.header_bytes);
    let l1 = &net.links[net.hop_via(a, b, 0, 0).unwrap()];
    let l2 = &net.links[net.hop_via(a, b, 0, 1).unwrap()];
    let t = |frame: u64, l: &crate::net::Link| tx_time(frame + l.phy_overhead, l.rate);
    let (full, short) = (mss + hdr, 1 + hdr);
    assert!(t(short, l1) < t(full, l2), "the case this test is about");
    let exact = t(full, l1) + l1.delay + t(full, l2) + t(short, l2) + l2.delay;
    assert_eq!(ideal_fct(&net, a, b, mss + 1, mss, hdr), exact);
    // Charging the short frame at the slowest link after the first frame's crossing (the
    // formula before) gave more than the schedule itself: a slowdown below 1.
    let before = net.latency_between(a, b, full) + t(short, l1);
    assert!(before > exact);
    // With the slow link last, the frames queue there: the old and the exact agree.
    sc.topology.link = 100_000_000_000;
    sc.topology.receiver_link = 10_000_000_000;
    let net = crate::topology::Network::build(&sc);
    let l2 = &net.links[net.hop_via(a, b, 0, 1).unwrap()];
    assert_eq!(
        ideal_fct(&net, a, b, 3 * mss + 1, mss, hdr),
        net.latency_between(a, b, full) + 2 * t(full, l2) + t(short, l2)
    );
}

/// Run `sc` and return its report.
fn run(sc: Scenario) -> Report {
    Simulation::new(sc).and_then(|s| s.run()).unwrap()
}

#[test]
fn a_tcp_run_of_web_search_flows_and_bursts_completes_with_sane_slowdowns() {
    let r = run(scenario(16, 0.3, 10));
    assert_eq!(r.workload, WorkloadKind::Flows);
    let n = r.flows.len();
    assert!(n > 40, "{n} flows");
    assert!(r
        .flows
        .iter()
        .all(|f| f.fct.is_some() && f.ideal_fct.is_some()));
    let slow = r.fct_slowdown.as_ref().unwrap();
    assert_eq!(slow.unfinished, 0);
    // No flow beats its ideal: every bucket's median is at least 1.
    for b in slow.background.iter().chain(&slow.incast) {
        assert!(b.p50 >= 1.0 && b.p50 <= b.p95 && b.p95 <= b.p99, "{b:?}");
    }
    let min = r
        .flows
        .iter()
        .map(|f| f.fct.unwrap() as f64 / f.ideal_fct.unwrap() as f64)
        .fold(f64::MAX, f64::min);
    assert!(min >= 1.0, "a flow beat its ideal: {min}");
    assert!(slow.incast_p50.unwrap() > 1.0);
    let bursts = r.flows.iter().filter(|f| f.burst.is_some()).count();
    assert!(bursts > 0 && bursts % 8 == 0, "{bursts} burst flows");
    // Every byte of every flow arrived.
    let bytes: u64 = schedule(&scenario(16, 0.3, 10))
        .iter()
        .map(|f| f.bytes)
        .sum();
    assert_eq!(r.app_bytes, bytes);
}

#[test]
fn at_low_load_the_small_flows_complete_near_their_ideal() {
    let mut sc = scenario(16, 0.05, 20);
    sc.flows.incast_load = 0.0;
    let r = run(sc);
    let slow = r.fct_slowdown.unwrap();
    assert!(slow.incast.is_empty());
    // The smallest fifth of the flows (a few to tens of KB): one window, no queue to speak of.
    let small = &slow.background[0];
    assert!(small.p50 < 1.5, "{small:?}");
}

#[test]
fn the_same_scenario_runs_to_the_same_report() {
    let a = serde_json::to_string(&run(scenario(16, 0.3, 3))).unwrap();
    let b = serde_json::to_string(&run(scenario(16, 0.3, 3))).unwrap();
    assert_eq!(a, b);
}
