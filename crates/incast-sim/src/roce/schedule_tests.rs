//! RoCE on the RDMA fabric and under the flow schedule: victim flows under PFC when an
//! incast shares an uplink with an innocent queue pair, a schedule of web-search flows and
//! incast bursts run to the end with its slowdowns, under each congestion control.

use crate::config::{
    BackgroundDestination, BackgroundSource, Placement, QueueLimit, RoceCc, Scenario, TopologyKind,
    Transport, WorkloadKind,
};
use crate::report::Report;
use crate::units::{from_ms, from_us};

/// Run `sc` to the end, checking the invariants every 2000 events.
fn run(sc: Scenario) -> Report {
    let mut sim = crate::Simulation::new(sc).unwrap();
    while !sim.step(2_000).unwrap() {
        sim.check_invariants().unwrap();
    }
    sim.check_invariants().unwrap();
    sim.report()
}

/// The fabric tests' two-tier shape over RoCE: three leaves of four hosts, one spine, hosts
/// spread over the leaves (three of the eight servers on leaf 0, the receiver on leaf 2), a
/// 1 MB shared buffer per switch. Server 0 (leaf 0) also runs a background queue pair to
/// server 1 (leaf 1), which never goes near the receiver's leaf but shares leaf 0's uplink
/// with the incast.
fn two_tier(pfc: bool) -> Scenario {
    let mut sc = Scenario::example(8);
    sc.transport = Transport::Roce;
    sc.roce.lossless = pfc;
    sc.workload.kind = WorkloadKind::Incast;
    sc.workload.flow_size = Some(512_000);
    let t = &mut sc.topology;
    t.kind = TopologyKind::LeafSpine;
    t.hosts_per_leaf = 4;
    t.spines = 1;
    t.placement = Placement::Spread;
    t.buffer = QueueLimit::UNLIMITED;
    t.shared_buffer = Some(1_000_000);
    t.pfc = pfc;
    t.fabric_report = true;
    // Lossy: jitter breaks the line-rate senders' phase lock at a full queue.
    t.link_jitter = if pfc { 0 } else { 200_000 };
    let bg = &mut sc.background;
    bg.flows = 1;
    bg.source = BackgroundSource::Senders;
    bg.destination = BackgroundDestination::Peers;
    bg.warmup = from_us(500);
    sc
}

#[test]
fn victim_flows_appear_with_pfc_on_a_two_tier_fabric_and_not_without() {
    let with = run(two_tier(true));
    let f = with
        .fabric
        .as_ref()
        .expect("RoCE over PFC reports the fabric");
    let innocent = with.flows.iter().find(|fl| fl.background).unwrap();
    assert_eq!(innocent.flow, 8, "the queue pair after the incast's eight");
    assert_eq!(f.victims, [innocent.flow], "{f:?}");
    assert_eq!(f.victim_flows, 1);
    let held = innocent.paused.unwrap();
    assert!(held > from_us(100), "the innocent flow was held {held} ps");
    // The incast's queue pairs were paused too, but they cross the receiver's port.
    let incast = with.flows.iter().filter(|fl| !fl.background);
    assert!(incast
        .clone()
        .all(|fl| fl.bytes == 512_000 && fl.fct.is_some()));
    let paused = incast.filter(|fl| fl.paused.unwrap() > 0).count();
    assert!(paused > 1 && f.paused_flows as usize == paused + 1, "{f:?}");
    assert_eq!((with.drops, f.headroom_overruns), (0, 0), "lossless");
    assert!(innocent.bytes > 0 && innocent.fct.is_none());
    eprintln!(
        "RoCE victim: innocent held {} us, {paused} of 8 incast queue pairs paused, {} pause frames, last FCT {} us",
        held / 1_000_000,
        f.pause_frames,
        with.flows.iter().filter_map(|fl| fl.fct).max().unwrap() / 1_000_000
    );

    // Lossy RoCE: no pauses, no victims; the incast recovers its losses by go-back-N.
    let without = run(two_tier(false));
    let f = without.fabric.as_ref().unwrap();
    assert_eq!((f.pause_frames, f.victim_flows), (0, 0));
    assert!(without.flows.iter().all(|fl| fl.paused.is_none()));
    assert!(without
        .flows
        .iter()
        .filter(|fl| !fl.background)
        .all(|fl| fl.bytes == 512_000));
}

#[test]
fn roce_over_pfc_reports_the_fabric_and_lossy_roce_without_asking_does_not() {
    let mut sc = two_tier(true);
    sc.topology.fabric_report = false;
    sc.topology.shared_buffer = None;
    sc.topology.buffer = QueueLimit::bytes(64_000);
    sc.background.flows = 0;
    let r = run(sc.clone());
    assert!(r.fabric.is_some() && r.flows.iter().all(|f| f.paused.is_some()));
    assert_eq!(
        r.fabric.unwrap().victim_flows,
        0,
        "every flow goes to the receiver"
    );
    sc.topology.pfc = false;
    sc.roce.lossless = false;
    sc.topology.link_jitter = 200_000;
    let r = run(sc);
    assert!(r.fabric.is_none() && r.flows.iter().all(|f| f.paused.is_none()));
}

/// 16 hosts at 10 Gbps on a leaf-spine (two leaves of eight, two spines), lossless RoCE
/// under `cc`, a flow schedule of web-search flows at 30% load with bursts of 8 × 64 KB at
/// 2% for `ms` milliseconds.
fn flows(cc: RoceCc, ms: u64) -> Scenario {
    let mut sc = Scenario::example(16);
    sc.transport = Transport::Roce;
    sc.roce.cc = cc;
    sc.workload.kind = WorkloadKind::Flows;
    let t = &mut sc.topology;
    t.kind = TopologyKind::LeafSpine;
    t.hosts_per_leaf = 8;
    t.spines = 2;
    t.link = 10_000_000_000;
    t.receiver_link = 10_000_000_000;
    t.buffer = QueueLimit::UNLIMITED;
    t.shared_buffer = Some(2_000_000);
    t.pfc = true;
    t.rtt = from_us(20);
    t.int = cc == RoceCc::Hpcc;
    if cc == RoceCc::Dcqcn {
        t.ecn_kmin = Some(5_000);
        t.ecn_kmax = 200_000;
        t.ecn_pmax = 0.01;
    }
    sc.flows.load = 0.3;
    sc.flows.duration = from_ms(ms);
    sc.flows.incast_fan_in = 8;
    sc.flows.incast_size = 64_000;
    sc
}

#[test]
fn a_roce_run_of_web_search_flows_and_bursts_finishes_every_flow_no_faster_than_alone() {
    let sc = flows(RoceCc::None, 3);
    let schedule = crate::app::flows::schedule(&sc);
    let r = run(sc.clone());
    assert_eq!(r.workload, WorkloadKind::Flows);
    assert_eq!(r.flows.len(), schedule.len());
    assert!(r.flows.len() > 15, "{}", r.flows.len());
    for (f, s) in r.flows.iter().zip(&schedule) {
        assert_eq!(f.bytes, s.bytes, "flow {} finished", f.flow);
        let (fct, ideal) = (f.fct.unwrap(), f.ideal_fct.unwrap());
        assert!(fct >= ideal, "flow {}: {fct} < ideal {ideal}", f.flow);
        let burst = match s.class {
            incast_workload::flows::Class::Background => None,
            incast_workload::flows::Class::Incast(id) => Some(id),
        };
        assert_eq!(f.burst, burst);
    }
    assert!(r.flows.iter().any(|f| f.burst.is_some()));
    let s = r
        .fct_slowdown
        .as_ref()
        .expect("a schedule reports slowdowns");
    assert!(r.drops == 0 && r.fabric.is_some());
    let again = run(sc);
    assert_eq!(
        serde_json::to_string(&r).unwrap(),
        serde_json::to_string(&again).unwrap(),
        "deterministic"
    );
    eprintln!("RoCE flows: {} flows, {s:?}", r.flows.len());
}

#[test]
fn dcqcn_and_hpcc_run_the_schedule_too() {
    for cc in [RoceCc::Dcqcn, RoceCc::Hpcc] {
        let r = run(flows(cc, 2));
        assert!(
            r.flows
                .iter()
                .all(|f| f.fct.unwrap() >= f.ideal_fct.unwrap()),
            "{cc:?}"
        );
        assert!(r.fct_slowdown.is_some() && r.drops == 0, "{cc:?}");
        let s = r.roce.as_ref().unwrap();
        match cc {
            RoceCc::Dcqcn => assert!(s.cnps_received > 0, "{s:?}"),
            _ => assert_eq!(s.cnps_received, 0),
        }
    }
}

#[test]
fn a_flow_alone_completes_exactly_in_its_ideal_time_to_the_last_ack() {
    // One web-search flow on the idle fabric: line-rate start, no queue but its own NIC's,
    // so its completion is the ideal's definition (last byte at the receiver, then the
    // ACK's way back), to the picosecond.
    for bytes in [500, 64_000, 1_000_000] {
        let mut sc = flows(RoceCc::None, 1);
        sc.flows.count = 1;
        sc.flows.incast_load = 0.0;
        sc.flows.size_cdf = crate::config::FlowSizes::Points(vec![(bytes, 1.0)]);
        let r = run(sc);
        let f = &r.flows[0];
        assert_eq!(f.fct, f.ideal_fct, "{bytes} bytes");
        assert_eq!(r.fct_slowdown.unwrap().background_p50, Some(1.0));
    }
}

#[test]
fn roce_takes_a_schedule_and_background_flows_where_they_fit_and_names_the_key_elsewhere() {
    flows(RoceCc::None, 1).validate().unwrap();
    two_tier(true).validate().unwrap();
    let mut sync = two_tier(true);
    sync.workload.kind = WorkloadKind::SyncRead;
    sync.validate().unwrap();
    // A schedule draws its own background (flows.load), over TCP or RoCE only.
    let mut sc = flows(RoceCc::None, 1);
    sc.background.flows = 1;
    assert_eq!(sc.validate().unwrap_err().field, "background.flows");
    let mut sc = flows(RoceCc::None, 1);
    sc.transport = Transport::Ndp;
    // (NDP's own rule refuses the workload first.)
    let e = sc.validate().unwrap_err().to_string();
    assert!(
        e.starts_with("workload.kind") || e.contains("TCP or RoCE"),
        "{e}"
    );
    let mut sc = two_tier(true);
    sc.workload.kind = WorkloadKind::Queries;
    let e = sc.validate().unwrap_err();
    assert!(
        e.field == "workload.kind" && e.to_string().contains("flows"),
        "{e}"
    );
}

#[test]
fn a_background_queue_pair_starts_at_once_and_the_workload_after_its_warm_up() {
    let r = run(two_tier(true));
    // The workload's messages were posted at the warm-up's end: the run's span starts there.
    assert_eq!(r.start, from_us(500));
    let innocent = r.flows.iter().find(|f| f.background).unwrap();
    // It sent through the warm-up and the incast at up to its 1 Gbps line rate.
    let span = r.end as f64 / 1e12;
    let delivered = innocent.bytes as f64 * 8.0 / span;
    assert!(delivered > 0.05e9 && delivered < 1e9, "{delivered} bit/s");
    // Not the workload's: its bytes are not in the application's, but the background's
    // rate during the workload (the incast shares its uplink: well under its line rate).
    assert_eq!(r.app_bytes, 8 * 512_000);
    assert!(
        r.background_bps > 1e6 && r.background_bps < 0.9e9,
        "{}",
        r.background_bps
    );
}
