//! Scenario-level tests of switch buffers as RDMA fabrics build them: a shared buffer per
//! switch on multi-switch shapes, PFC over it (lossless, pause spreading hop by hop, victim
//! flows), INT and egress ECN marking as packets leave. Written over TCP (the RoCE transport
//! comes separately); each checks the fabric's invariants at every step.

use super::fabric::{Fabric, Offered, Wire};
use super::int::{IntHop, MAX_HOPS};
use super::trim::Trimmable;
use crate::config::{
    BackgroundDestination, BackgroundSource, Placement, QueueLimit, Scenario, TopologyKind,
};
use crate::engine::{Event, EventQueue};
use crate::report::Report;
use crate::topology::{LinkId, Network};
use crate::units::from_us;

/// Run `sc` to the end, checking the invariants every 50 events.
fn run(sc: Scenario) -> Report {
    let mut s = crate::Simulation::new(sc).unwrap();
    while !s.step(50).unwrap() {
        s.check_invariants().unwrap();
    }
    s.check_invariants().unwrap();
    s.report()
}

/// A leaf-spine of three leaves of four hosts and one spine, hosts spread over the leaves:
/// the eight servers sit on every leaf (three on leaf 0), the receiver on leaf 2; every
/// cross-leaf flow shares its leaf's one uplink. With `innocent`, server 0 (leaf 0) also
/// sends a long-lived flow to server 1 (leaf 1), which never goes near the receiver's leaf.
fn two_tier(pfc: bool, innocent: bool) -> Scenario {
    let mut sc = Scenario::example(8);
    let t = &mut sc.topology;
    t.kind = TopologyKind::LeafSpine;
    t.hosts_per_leaf = 4;
    t.spines = 1;
    t.placement = Placement::Spread;
    t.buffer = QueueLimit::UNLIMITED;
    t.shared_buffer = Some(1_000_000);
    t.pfc = pfc;
    t.fabric_report = true;
    sc.workload.blocks = 2;
    if innocent {
        let bg = &mut sc.background;
        bg.flows = 1;
        bg.source = BackgroundSource::Senders;
        bg.destination = BackgroundDestination::Peers;
        bg.warmup = from_us(500);
    }
    sc
}

#[test]
fn every_switch_of_a_leaf_spine_and_a_fat_tree_has_its_own_pool() {
    let sc = two_tier(false, false);
    let net = Network::build(&sc);
    assert_eq!(net.pools.len(), 3 + 1, "three leaves, one spine");
    // Each leaf's pool serves its four host ports and its uplink; the spine's its three
    // downlinks.
    let served: Vec<usize> = (0..4).map(|p| net.pooled(p).count()).collect();
    assert_eq!(served, [5, 5, 5, 3]);
    let mut sc = Scenario::example(8);
    sc.topology.kind = TopologyKind::FatTree;
    sc.topology.shared_buffer = Some(1_000_000);
    let net = Network::build(&sc);
    // k = 4: 8 ToRs, 8 aggregation switches, 4 cores, each with k = 4 egresses.
    assert_eq!(net.pools.len(), 20);
    assert!((0..20).all(|p| net.pooled(p).count() == 4));
}

#[test]
fn a_leaf_spine_s_shared_buffer_bounds_the_congested_port_by_the_dynamic_threshold() {
    // α = 1: a port alone may take a frame while it and the frame fit in what is free, so it
    // holds at most half the pool and half a frame.
    let r = run(two_tier(false, false));
    let f = r.fabric.as_ref().expect("the fabric is reported");
    let port = r.bottleneck.stats.max_bytes;
    assert!(
        r.bottleneck.stats.drops > 0,
        "the incast overflows the threshold"
    );
    assert!(
        (400_000..=500_000 + 1_518 / 2).contains(&port),
        "half of the receiver leaf's 1 MB pool: {port}"
    );
    assert!(f.switch_buffer_max_bytes[2] >= port);
    assert_eq!((f.pause_frames, f.paused_flows, f.victim_flows), (0, 0, 0));
}

#[test]
fn pfc_over_shared_buffers_is_lossless_and_the_pause_spreads_hop_by_hop() {
    let r = run(two_tier(true, false));
    let f = r.fabric.as_ref().unwrap();
    assert_eq!((r.drops, f.headroom_overruns), (0, 0), "lossless");
    assert!(r.timeouts == 0 && r.app_bytes == 2 * 8 * 256_000);
    let net = Network::build(&two_tier(true, false));
    let paused = |name: &str| f.paused_links.iter().find(|p| p.name == name);
    // Links 24.. are the leaf-spine pairs: leaf i → spine is 24 + 2i, back 25 + 2i.
    assert_eq!(net.name(LinkId(29)), "fabric29");
    let spine_to_rx_leaf = paused("fabric29").expect("the receiver's leaf pauses the spine");
    let leaf0_up = paused("fabric24").expect("the spine pauses leaf 0's uplink in turn");
    assert!(paused("fabric26").is_some(), "and leaf 1's");
    assert!(spine_to_rx_leaf.paused > 0 && leaf0_up.paused > 0);
    // The pause reached the servers' NICs too.
    assert!(f.paused_links.iter().any(|p| p.name.starts_with("nic")));
    assert_eq!(
        f.pause_frames,
        f.paused_links.iter().map(|p| p.pauses).sum::<u64>()
    );
    // Peak use per switch: the receiver's leaf, and the spine behind it, held the most.
    assert!(f.switch_buffer_max_bytes[2] > 50_000 && f.switch_buffer_max_bytes[3] > 50_000);
    assert_eq!(f.victim_flows, 0, "every flow goes to the receiver");
    assert!(r.flows.iter().all(|fl| fl.paused.is_some()));
}

#[test]
fn pfc_over_shared_buffers_is_lossless_on_a_fat_tree_with_the_dynamic_threshold() {
    let mut sc = Scenario::example(12);
    let t = &mut sc.topology;
    t.kind = TopologyKind::FatTree;
    t.buffer = QueueLimit::UNLIMITED;
    t.shared_buffer = Some(600_000);
    t.pfc = true;
    sc.workload.blocks = 2;
    let r = run(sc);
    let f = r.fabric.as_ref().unwrap();
    assert_eq!((r.drops, f.headroom_overruns), (0, 0));
    assert!(f.pause_frames > 0 && f.paused > 0);
    assert_eq!(
        f.switch_buffer_max_bytes.len(),
        20,
        "k = 4: 8 + 8 + 4 switches"
    );
}

#[test]
fn a_headroom_too_small_for_what_is_in_flight_overruns_and_says_so() {
    // One frame of headroom cannot hold two one-way delays of a link's traffic.
    let mut sc = two_tier(true, false);
    sc.topology.pfc_headroom = Some(sc.full_frame());
    let r = run(sc);
    let f = r.fabric.as_ref().unwrap();
    assert!(f.headroom_overruns > 0);
    assert_eq!(
        r.drops, f.headroom_overruns,
        "every drop is an overrun, counted"
    );
}

/// The "Must show": with PFC, an incast that shares an uplink with an innocent flow
/// to another receiver pauses it (a victim); without PFC it does not. Over TCP here; over
/// RoCE in `roce::schedule_tests`.
#[test]
fn victim_flows_appear_with_pfc_on_a_two_tier_fabric_and_not_without() {
    let with = run(two_tier(true, true));
    let f = with.fabric.as_ref().unwrap();
    let innocent = with.flows.iter().find(|fl| fl.background).unwrap();
    assert_eq!(f.victims, [innocent.flow], "{f:?}");
    assert_eq!(f.victim_flows, 1);
    let held = innocent.paused.unwrap();
    assert!(held > from_us(100), "the innocent flow was held {held} ps");
    // The incast's own flows were paused too, but they cross the receiver's port.
    assert!(f.paused_flows > 1);
    assert_eq!((with.drops, f.headroom_overruns), (0, 0));

    // The same with a buffer per ingress (htsim's PFC) instead of a shared one.
    let mut own = two_tier(true, true);
    own.topology.shared_buffer = None;
    own.topology.buffer = QueueLimit::bytes(64_000);
    let r = run(own);
    let f = r.fabric.as_ref().unwrap();
    let innocent = r.flows.iter().find(|fl| fl.background).unwrap();
    assert_eq!(f.victims, [innocent.flow], "{f:?}");
    assert!(innocent.paused.unwrap() > from_us(100));
    assert_eq!(r.drops, 0);

    let without = run(two_tier(false, true));
    let f = without.fabric.as_ref().unwrap();
    assert_eq!((f.pause_frames, f.victim_flows), (0, 0));
    assert!(without.flows.iter().all(|fl| fl.paused.is_none()));
}

#[test]
fn a_pfc_run_without_the_fabric_reported_keeps_its_report_as_it_was() {
    let mut sc = Scenario::example(8);
    sc.topology.pfc = true;
    let r = run(sc);
    assert!(r.pfc_pauses > 0);
    assert!(r.fabric.is_none() && r.flows.iter().all(|f| f.paused.is_none()));
    let j = serde_json::to_string(&r).unwrap();
    assert!(!j.contains("\"fabric\"") && !j.contains("\"paused\":null"));
}

#[test]
fn egress_marking_signals_dctcp_senders_in_an_incast() {
    let mut sc = Scenario::example(16);
    sc.tcp.congestion_control = crate::config::CongestionControl::Dctcp;
    sc.tcp.ecn = true;
    sc.topology.ecn_kmin = Some(5_000);
    sc.topology.ecn_kmax = 40_000;
    sc.topology.ecn_pmax = 0.1;
    sc.workload.blocks = 2;
    let r = run(sc);
    let f = r
        .fabric
        .as_ref()
        .expect("egress marking reports the fabric");
    assert!(f.ecn_marks > 0 && r.ecn_reductions > 0, "{f:?}");
    assert_eq!(
        f.ecn_marks,
        r.bottleneck.stats.marks + r.queues[1].stats.marks
    );
}

/// A probe that asks for INT: a stack of hops, ECN-capable.
#[derive(Debug, Clone, Copy)]
struct Probe {
    route: u32,
    hop: u16,
    ce: bool,
    hops: [IntHop; MAX_HOPS],
    n: usize,
}

impl Trimmable for Probe {
    fn is_data(&self) -> bool {
        true
    }
    fn frame(&self) -> u32 {
        1_000
    }
    fn trim(&mut self, _header_bytes: u32) {}
}

impl Wire for Probe {
    fn hop(&self) -> u16 {
        self.hop
    }
    fn advance(&mut self) {
        self.hop += 1;
    }
    fn link_at(&self, net: &Network, hop: u16) -> Option<LinkId> {
        net.hop(self.route, hop)
    }
    fn ect(&self) -> bool {
        true
    }
    fn mark_ce(&mut self) {
        self.ce = true;
    }
    fn wants_int(&self) -> bool {
        true
    }
    fn int_push(&mut self, hop: IntHop) {
        if self.n < MAX_HOPS {
            self.hops[self.n] = hop;
            self.n += 1;
        }
    }
}

/// Three probes from one server through a star's switch; the events run by hand.
fn probes_through(sc: &Scenario) -> (Vec<Probe>, u64) {
    let mut fabric = Fabric::<Probe>::new(Network::build(sc));
    let mut events = EventQueue::default();
    let (src, dst) = (fabric.net.host(0), fabric.net.receiver);
    let route = fabric.net.add_route(src, dst, 0);
    let nic = fabric.net.hop(route, 0).unwrap();
    for _ in 0..3 {
        let p = Probe {
            route,
            hop: 0,
            ce: false,
            hops: [IntHop::default(); MAX_HOPS],
            n: 0,
        };
        let id = fabric.pkts.alloc(p);
        assert_eq!(fabric.offer(&mut events, 0, nic, id), Offered::Queued);
    }
    let mut done = Vec::new();
    let mut rate = 0;
    while let Some((now, ev)) = events.pop() {
        match ev {
            Event::TxDone(l) => {
                fabric.tx_done(&mut events, now, l);
            }
            Event::Arrive(l, _, known) => match fabric.arrive(&mut events, l, known) {
                (id, Some(next)) => {
                    rate = fabric.net.links[next].rate;
                    assert_eq!(fabric.offer(&mut events, now, next, id), Offered::Queued);
                }
                (id, None) => done.push(*fabric.pkts.get(id)),
            },
            other => unreachable!("{other:?}"),
        }
    }
    (done, rate)
}

#[test]
fn int_records_each_switch_egress_a_probe_leaves_and_nothing_when_off() {
    let mut sc = Scenario::example(1);
    sc.topology.int = true;
    let (probes, rate) = probes_through(&sc);
    assert_eq!(probes.len(), 3);
    for (k, p) in probes.iter().enumerate() {
        // The NIC is no switch port: one hop recorded, the switch's port towards the receiver.
        assert_eq!(p.n, 1);
        let h = p.hops[0];
        assert_eq!(h.rate_bps, rate);
        assert_eq!(h.tx_bytes, 1_000 * (k as u64 + 1), "this packet included");
        // The NIC serializes at the port's rate, so each probe finds the port idle.
        assert_eq!(h.qlen, 0);
        if k > 0 {
            assert!(h.ts > probes[k - 1].hops[0].ts);
        }
    }
    sc.topology.int = false;
    let (probes, _) = probes_through(&sc);
    assert!(probes.iter().all(|p| p.n == 0));
}

#[test]
fn int_reports_the_bytes_queued_behind_a_probe_as_it_starts_to_leave() {
    // A slower receiver link: the probes queue at the switch's port behind one another.
    let mut sc = Scenario::example(1);
    sc.topology.int = true;
    sc.topology.receiver_link = 100_000_000;
    let (probes, _) = probes_through(&sc);
    let q: Vec<u64> = probes.iter().map(|p| p.hops[0].qlen).collect();
    // The first leaves at once; the second, when the first has gone, has the third behind it;
    // the third leaves last, alone.
    assert_eq!(q, [0, 1_000, 0]);
    // htsim's way: the departing probe counted too.
    sc.topology.int_qlen_with_packet = true;
    let (probes, _) = probes_through(&sc);
    let q: Vec<u64> = probes.iter().map(|p| p.hops[0].qlen).collect();
    assert_eq!(q, [1_000, 2_000, 1_000]);
}

#[test]
fn egress_marking_marks_above_kmax_and_never_at_or_below_kmin() {
    let mut sc = Scenario::example(1);
    sc.topology.receiver_link = 100_000_000;
    sc.topology.ecn_kmin = Some(500);
    sc.topology.ecn_kmax = 999;
    let (probes, _) = probes_through(&sc);
    let ce: Vec<bool> = probes.iter().map(|p| p.ce).collect();
    assert_eq!(ce, [false, true, false], "1000 bytes behind the second");
    sc.topology.ecn_kmin = Some(1_000);
    sc.topology.ecn_kmax = 2_000;
    let (probes, _) = probes_through(&sc);
    assert!(probes.iter().all(|p| !p.ce));
}

#[test]
fn red_never_drops_a_lossless_class_it_cannot_mark() {
    // Reno's packets are not ECN-capable, so RED that marks would drop them; under PFC the
    // class is lossless: they pass, and PFC bounds the queues instead.
    let red = |pfc: bool| {
        let mut sc = Scenario::example(16);
        sc.topology.pfc = pfc;
        sc.topology.buffer = QueueLimit::bytes(200_000);
        sc.topology.red_min = Some(20_000);
        sc.topology.red_max = 60_000;
        sc.topology.red_ecn = true;
        sc.workload.blocks = 2;
        run(sc)
    };
    let lossless = red(true);
    assert_eq!(lossless.drops, 0);
    assert!(lossless.pfc_pauses > 0, "PFC bounded the queue");
    assert!(
        red(false).drops > 0,
        "without PFC, RED drops what it cannot mark"
    );
}

/// A flow schedule on the two-tier fabric over lossless RoCE (three leaves of four hosts, one
/// spine, every cross-leaf flow on its leaf's one uplink): 200 KB background flows at 30%
/// load and 6 × 256 KB incast bursts at 30%, for 3 ms, seed 8. Its schedule starts a
/// background flow from host 1 (leaf 0) to host 5 (leaf 1), then a burst to host 8 (leaf 2)
/// from hosts 0 and 2 on leaf 0 among others: the burst's receiver port pauses back to leaf
/// 0's uplink, which holds the background flow there.
#[test]
fn in_a_flow_schedule_each_flow_is_judged_against_its_own_path() {
    use crate::config::{FlowSizes, Transport, WorkloadKind};
    use incast_workload::flows::Class;
    let mut sc = two_tier(true, false);
    sc.topology.senders = 12;
    sc.seed = 8;
    sc.transport = Transport::Roce;
    sc.workload.kind = WorkloadKind::Flows;
    sc.flows.load = 0.3;
    sc.flows.size_cdf = FlowSizes::Points(vec![(200_000, 1.0)]);
    sc.flows.incast_load = 0.3;
    sc.flows.incast_fan_in = 6;
    sc.flows.incast_size = 256_000;
    sc.flows.duration = crate::units::from_ms(3);
    let schedule = crate::app::flows::schedule(&sc);
    let net = Network::build(&sc);
    let ends = |i: usize| (net.host(schedule[i].src), net.host(schedule[i].dst));
    assert_eq!(ends(0), (1, 5), "{schedule:?}");
    assert_eq!(schedule[0].class, Class::Background);
    let burst: Vec<usize> = (0..schedule.len())
        .filter(|&i| schedule[i].class == Class::Incast(0))
        .collect();
    assert_eq!(burst.len(), 6);
    assert!(burst.iter().all(|&i| ends(i).1 == 8));
    assert!([0, 2]
        .iter()
        .all(|&s| burst.iter().any(|&i| ends(i).0 == s)));
    let r = run(sc);
    let f = r.fabric.as_ref().unwrap();
    let flow = |i: usize| &r.flows[i];
    // The background flow was held by the burst's congestion, on a path that never goes
    // near host 8: a victim.
    assert!(flow(0).paused.unwrap() > from_us(100), "{:?}", flow(0));
    assert!(f.victims.contains(&flow(0).flow), "{f:?}");
    // The burst's flows were held too, by their own receiver's port: none is a victim,
    // though none crosses the main receiver's port (the test the old rule made).
    for &i in &burst {
        assert!(flow(i).paused.unwrap() > 0, "{:?}", flow(i));
        assert!(!f.victims.contains(&flow(i).flow), "burst flow {i}: {f:?}");
        let (a, b) = ends(i);
        let route: Vec<LinkId> = (0..net.path_len(a, b))
            .filter_map(|h| net.hop_via(a, b, 0, h))
            .collect();
        assert!(!route.contains(&net.bottleneck));
    }
    assert_eq!((r.drops, f.headroom_overruns), (0, 0));
}
