//! PFC, the shared buffer and egress ECN on a described topology (`topology.kind = "file"`),
//! as on the built-in shapes: each ingress with its own link's buffer and headroom, or a
//! share of its switch's buffer; lossless under an incast over RoCE and over TCP; impossible
//! buffers refused naming the link.

use super::described_tests::{described, leaf_spine};
use crate::config::{Graph, QueueLimit, RoceCc, Scenario, Transport, WorkloadKind};
use crate::report::Report;

/// Run `sc` to the end, checking the invariants every 200 events.
fn run(sc: Scenario) -> Report {
    let mut s = crate::Simulation::new(sc).unwrap();
    while !s.step(200).unwrap() {
        s.check_invariants().unwrap();
    }
    s.check_invariants().unwrap();
    s.report()
}

/// Two leaves of three hosts and one spine (1 Gbps, 64 KB per host port, 256 KB per uplink
/// port), the receiver h5 on leaf 1: a 4:1 incast of 256 KB per sender over lossless RoCE,
/// so senders h0–h2 (leaf 0) cross the uplink and h3 shares the receiver's leaf.
fn roce_incast(g: Graph) -> Scenario {
    let mut sc = described(g, 4);
    sc.transport = Transport::Roce;
    sc.roce.lossless = true;
    sc.topology.pfc = true;
    sc.workload.kind = WorkloadKind::Incast;
    sc.workload.flow_size = Some(256_000);
    sc
}

fn lossless(r: &Report) -> (u64, u64) {
    let f = r.fabric.as_ref().expect("RoCE over PFC reports the fabric");
    assert_eq!((r.drops, f.headroom_overruns), (0, 0), "lossless: {f:?}");
    assert!(r
        .flows
        .iter()
        .all(|fl| fl.bytes == 256_000 && fl.fct.is_some()));
    (f.pause_frames, f.paused)
}

#[test]
fn a_four_to_one_incast_over_lossless_roce_on_a_topology_file_pauses_and_never_drops() {
    let sc = roce_incast(leaf_spine(2, 3, 1));
    sc.validate().unwrap();
    let r = run(sc.clone());
    let (pauses, paused) = lossless(&r);
    assert!(pauses > 0 && paused > 0, "{pauses} pauses");
    // Each ingress has its own link's buffer: the host links' 64 KB, less the headroom of
    // their own rate and delay, is where they pause.
    let net = super::Network::build(&sc);
    let pfc = net.pfc.as_ref().unwrap();
    let (xoff, xon, limit) = pfc.own_of(0);
    let headroom = sc.pfc_headroom_of(1_000_000_000, 12_500_000);
    assert_eq!((xoff, limit), (64_000 - headroom, 64_000));
    assert!(xon < xoff);
    // An uplink's ingress at the spine has its 256 KB.
    let up = 2 * 6;
    assert_eq!(pfc.own_of(up).2, 256_000);
    // The switch ports take no limit of their own under PFC.
    assert!(net.links[1].limit().bytes.is_none());
    // Without PFC, the same incast over lossy RoCE drops at the receiver's 64 KB port.
    let mut lossy = sc;
    lossy.roce.lossless = false;
    lossy.topology.pfc = false;
    lossy.roce.recovery = crate::config::RoceRecovery::GoBackN;
    let r = run(lossy);
    assert!(r.drops > 0 && r.fabric.is_none());
}

#[test]
fn shared_buffers_of_a_topology_file_carry_pfc_with_headroom_carved_out() {
    let mut g = leaf_spine(2, 3, 1);
    for s in &mut g.switches {
        s.shared_buffer = Some(400_000);
    }
    let sc = roce_incast(g);
    sc.validate().unwrap();
    let net = super::Network::build(&sc);
    // Leaf 0: three host ingresses and the uplink's; each carved at its own rate and delay.
    let host = sc.pfc_headroom_of(1_000_000_000, 12_500_000);
    let uplink = sc.pfc_headroom_of(1_000_000_000, crate::units::from_us(5));
    assert_eq!(net.pools[0].total(), 400_000 - 3 * host - uplink);
    assert_eq!(net.pools[2].total(), 400_000 - 2 * uplink, "the spine");
    let r = run(sc);
    let (pauses, _) = lossless(&r);
    assert!(pauses > 0);
    let f = r.fabric.as_ref().unwrap();
    assert_eq!(f.switch_buffer_max_bytes.len(), 3);
    assert!(f.switch_buffer_max_bytes.iter().any(|&b| b > 0));
}

#[test]
fn tcp_over_pfc_and_dcqcn_over_egress_ecn_run_on_a_topology_file() {
    // TCP over PFC: lossless too.
    let mut sc = described(leaf_spine(2, 3, 1), 4);
    sc.topology.pfc = true;
    sc.topology.fabric_report = true;
    sc.workload.blocks = 2;
    let r = run(sc);
    let f = r.fabric.as_ref().unwrap();
    assert!(f.pause_frames > 0 && r.drops == 0, "{f:?}");
    // DCQCN: the switches mark on egress, the senders receive CNPs.
    let mut sc = roce_incast(leaf_spine(2, 3, 1));
    sc.roce.cc = RoceCc::Dcqcn;
    sc.topology.ecn_kmin = Some(5_000);
    sc.topology.ecn_kmax = 40_000;
    sc.topology.ecn_pmax = 0.1;
    let r = run(sc);
    assert!(r.fabric.as_ref().unwrap().ecn_marks > 0);
    assert!(r.roce.as_ref().unwrap().cnps_received > 0);
    lossless(&r);
}

#[track_caller]
fn err(sc: &Scenario) -> crate::config::ConfigError {
    sc.validate().unwrap_err()
}

#[test]
fn impossible_pfc_buffers_of_a_topology_file_are_refused_naming_the_link() {
    // A host link's 4 KB cannot hold the headroom.
    let mut g = leaf_spine(2, 3, 1);
    g.links[1].buffer = QueueLimit::bytes(4_000);
    let e = err(&roce_incast(g));
    assert_eq!(e.field, "topology.file");
    assert!(
        e.to_string()
            .contains("link 1 (h1–leaf0) into switch leaf0"),
        "{e}"
    );
    // No byte buffer at all, and no shared one.
    let mut g = leaf_spine(2, 3, 1);
    g.links[7].buffer = QueueLimit::UNLIMITED;
    let e = err(&roce_incast(g));
    assert!(
        e.field == "topology.file" && e.to_string().contains("link 7"),
        "{e}"
    );
    // A shared buffer too small for its ingresses' headrooms.
    let mut g = leaf_spine(2, 3, 1);
    g.switches[2].shared_buffer = Some(6_000);
    let e = err(&roce_incast(g));
    assert!(
        e.field == "topology.pfc_headroom" && e.to_string().contains("spine0"),
        "{e}"
    );
    // Thresholds beyond a link's buffer, XON above XOFF, α without a shared buffer.
    let mut sc = roce_incast(leaf_spine(2, 3, 1));
    sc.topology.pfc_xoff = Some(100_000);
    assert_eq!(err(&sc).field, "topology.pfc_xoff");
    sc.topology.pfc_xoff = Some(30_000);
    sc.topology.pfc_xon = Some(40_000);
    assert_eq!(err(&sc).field, "topology.pfc_xon");
    let mut sc = roce_incast(leaf_spine(2, 3, 1));
    sc.topology.pfc_alpha = 0.5;
    assert_eq!(err(&sc).field, "topology.pfc_alpha");
    // NDP still sprays over the built-in shapes only.
    let mut sc = described(leaf_spine(2, 3, 1), 4);
    sc.transport = Transport::Ndp;
    assert_eq!(err(&sc).field, "transport");
}
