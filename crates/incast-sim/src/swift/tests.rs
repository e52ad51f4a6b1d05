//! Swift end to end: incasts and synchronized reads over drop-tail ports on a fat tree.

use crate::config::{Placement, QueueLimit, Scenario, TopologyKind, Transport, WorkloadKind};
use crate::report::Report;
use crate::units::{from_us, tx_time};

const G100: u64 = 100_000_000_000;

/// The senders htsim's gen_incast.py (seed 13) draws for 32 flows among 128 hosts, the
/// receiver (host 0) first.
const HOSTS_128_32: [u32; 33] = [
    0, 122, 35, 60, 105, 20, 75, 98, 27, 6, 50, 22, 52, 40, 54, 44, 99, 51, 8, 66, 65, 59, 21, 67,
    7, 12, 43, 120, 61, 31, 14, 64, 95,
];

/// htsim's Swift set-up: k = 8, 100 Gbps, 1 µs links, 4000 B packets with no header, 40 B
/// ACKs, no preamble or gap, drop-tail queues of `q` packets, `n` flows of 250 packets.
fn htsim_swift(n: u32, q: u64) -> Scenario {
    let mut sc = Scenario::example(n);
    sc.transport = Transport::Swift;
    let t = &mut sc.topology;
    t.kind = TopologyKind::FatTree;
    t.fat_tree_k = 8;
    t.placement = Placement::Listed;
    t.listed_hosts = HOSTS_128_32[..=n as usize].to_vec();
    t.link = G100;
    t.receiver_link = G100;
    t.link_delay = from_us(1);
    t.buffer = QueueLimit::bytes(q * 4000);
    sc.tcp.phy_overhead = 0;
    sc.swift.header_bytes = 0;
    sc.swift.ack_bytes = 40;
    sc.workload.kind = WorkloadKind::Incast;
    sc.workload.flow_size = Some(250 * 4000);
    sc
}

fn run(sc: Scenario) -> Report {
    let mut sim = crate::Simulation::new(sc).unwrap();
    while !sim.step(10_000).unwrap() {
        sim.check_invariants().unwrap();
    }
    sim.report()
}

fn last_fct(r: &Report) -> u64 {
    r.flows.iter().map(|f| f.fct.unwrap()).max().unwrap()
}

#[test]
fn one_flow_runs_at_line_rate_and_its_window_stays_open() {
    let r = run(htsim_swift(1, 512));
    assert_eq!(r.drops, 0);
    // Swift has no slow start: 15 packets (60 KB) in the first RTT of about 13 µs, where
    // 100 Gbps needs 40; the window then grows one packet per RTT, so one 1 MB flow takes
    // about twice its line-rate time (htsim's Swift alike).
    let wire = tx_time(250 * 4000, G100);
    let last = last_fct(&r);
    assert!(last > wire && last < 3 * wire, "{last}");
    let s = r.swift.unwrap();
    assert_eq!(s.data_packets, 250);
    assert_eq!(s.acks, 250);
    assert_eq!(s.paced_flows, 0);
}

#[test]
fn a_32_to_1_incast_with_a_deep_buffer_loses_nothing_and_drains_near_line_rate() {
    let r = run(htsim_swift(32, 512));
    assert_eq!((r.drops, r.timeouts, r.retx_fast), (0, 0, 0));
    assert!(r.flows.iter().all(|f| f.bytes == 1_000_000));
    // All 32 MB through the receiver's port: at least the line-rate drain, within 10% of it.
    let drain = tx_time(32 * 1_000_000, G100);
    let last = last_fct(&r);
    assert!(last > drain && (last as f64) < 1.1 * drain as f64, "{last}");
    // The first windows (32 × 15 packets) queue 1.9 MB; then the delay target holds the
    // receiver's port far below that.
    assert!(r.bottleneck.stats.max_bytes <= 32 * 15 * 4000);
    // htsim's Swift on the same hosts and queues (benchmarks/htsim_peer, swift_128_32):
    // last 2586.2 µs, mean 2429.75 µs.
    let mean = r.flows.iter().map(|f| f.fct.unwrap() as f64).sum::<f64>() / 32.0;
    assert!((last as f64 / 2_586.2e6 - 1.0).abs() < 0.03, "{last}");
    assert!((mean / 2_429.75e6 - 1.0).abs() < 0.05, "{mean}");
}

#[test]
fn with_htsims_8_packet_queues_swift_loses_packets_but_every_flow_completes() {
    let r = run(htsim_swift(32, 8));
    assert!(r.drops > 0);
    assert!(r.retx_fast + r.retx_timeout > 0);
    assert!(r
        .flows
        .iter()
        .all(|f| f.fct.is_some() && f.bytes == 1_000_000));
    assert!(r.bottleneck.stats.max_bytes <= 8 * 4000);
}

#[test]
fn the_same_scenario_gives_the_same_report() {
    let a = run(htsim_swift(16, 8));
    let b = run(htsim_swift(16, 8));
    assert_eq!(a, b);
}

#[test]
fn a_synchronized_read_runs_its_blocks_with_requests_both_ways() {
    let mut sc = Scenario::example(16);
    sc.transport = Transport::Swift;
    sc.topology.link = 10_000_000_000;
    sc.topology.receiver_link = 10_000_000_000;
    sc.topology.rtt = from_us(10);
    sc.workload.kind = WorkloadKind::SyncRead;
    sc.workload.blocks = 3;
    let sru = sc.sru_of(0);
    let r = run(sc);
    assert_eq!(r.block_times.len(), 3);
    assert_eq!(r.app_bytes, 3 * 16 * sru);
    assert!(r.goodput_bps > 0.0);
}

#[test]
fn bad_swift_scenarios_name_the_key() {
    let mut sc = htsim_swift(4, 8);
    sc.workload.kind = WorkloadKind::Queries;
    assert_eq!(sc.validate().unwrap_err().field, "workload.kind");
    // The default 1 Gbps star with a 100 µs RTT: no window could ever grow.
    let mut sc = Scenario::example(4);
    sc.transport = Transport::Swift;
    assert_eq!(sc.validate().unwrap_err().field, "swift.base_target");
    sc.swift.base_target = from_us(200);
    sc.validate().unwrap();
    type Spoil = fn(&mut Scenario);
    let cases: [(&str, Spoil); 10] = [
        ("swift.rto_jitter", |s| s.swift.rto_jitter = 1.5),
        ("swift.rto_jitter", |s| s.swift.rto_jitter = f64::NAN),
        ("swift.beta", |s| s.swift.beta = 1.5),
        ("swift.max_mdf", |s| s.swift.max_mdf = 0.0),
        ("swift.min_cwnd", |s| s.swift.min_cwnd = 0.0),
        ("swift.fs_min_cwnd", |s| s.swift.fs_min_cwnd = 200.0),
        ("swift.initial_window", |s| s.swift.initial_window = 1e7),
        ("swift.rto_min", |s| s.swift.rto_min = s.swift.rto_max + 1),
        ("swift.mtu", |s| s.swift.mtu = 10),
        ("topology.pfc", |s| s.topology.pfc = true),
    ];
    for (key, spoil) in cases {
        let mut sc = htsim_swift(4, 8);
        spoil(&mut sc);
        assert_eq!(sc.validate().unwrap_err().field, key);
    }
}

#[test]
fn randomized_timers_break_the_lock_step_of_flows_that_lost_their_first_windows_together() {
    // 32 flows of 16 packets into 4-packet queues: most first windows are lost at once, and
    // with exact timers the flows without an RTT sample time out at the same instants
    // (rto_initial, then doubled alike) and collide again: the last flow ends at 15.2 ms.
    let incast = |jitter: f64| {
        let mut sc = htsim_swift(32, 4);
        sc.workload.flow_size = Some(16 * 4000);
        sc.swift.rto_jitter = jitter;
        run(sc)
    };
    let exact = incast(0.0);
    let spread = incast(0.5);
    assert!(last_fct(&exact) > from_us(10_000), "{}", last_fct(&exact));
    // Each timer stretched by up to half itself: the resends spread and get through.
    assert!(last_fct(&spread) < from_us(2_000), "{}", last_fct(&spread));
    assert!(spread.timeouts < exact.timeouts / 2);
    assert!(spread.flows.iter().all(|f| f.bytes == 16 * 4000));
    // Deterministic: the draws come from the run's seed.
    assert_eq!(spread, incast(0.5));
}
