//! Random small scenarios: the engine's invariants hold at every step, every requested byte
//! is delivered, and the run terminates.

use incast_sim::config::{
    BackgroundDestination, BackgroundSource, CongestionControl, CwndRestart, QueueLimit,
    TopologyKind, Transport, WorkloadKind,
};
use incast_sim::units::{from_ms, from_us, PS_PER_S};
use incast_sim::{Scenario, Simulation};
use proptest::prelude::*;

fn scenario() -> impl Strategy<Value = Scenario> {
    (
        1u32..16,
        1u64..100_000,
        1u32..4,
        prop_oneof![
            Just(Some(3_000u64)),
            Just(Some(16_000)),
            Just(Some(64_000)),
            Just(None)
        ],
        prop_oneof![Just(1u64), Just(10), Just(200)],
        1u32..12,
        any::<bool>(),
        prop_oneof![Just(0u64), Just(from_ms(1))],
        prop_oneof![
            Just(CwndRestart::Idle),
            Just(CwndRestart::Block),
            Just(CwndRestart::Never)
        ],
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(
            |(n, sru, blocks, buffer, rto_ms, iw, sack, delack, restart, incast, seed)| {
                let mut s = Scenario::example(n);
                s.seed = seed;
                s.topology.buffer = match buffer {
                    Some(b) => QueueLimit {
                        bytes: Some(b),
                        packets: None,
                    },
                    None => QueueLimit {
                        bytes: None,
                        packets: Some(4),
                    },
                };
                if seed % 3 == 0 {
                    // A buffer shared by the switch's ports, with a dynamic threshold.
                    s.topology.shared_buffer = Some(64_000);
                    s.topology.buffer = QueueLimit::UNLIMITED;
                } else if seed % 3 == 1 && buffer.is_some_and(|b| b >= 16_000) {
                    // PFC: lossless ingresses with the default thresholds.
                    s.topology.pfc = true;
                }
                if seed % 5 == 0 {
                    s.workload.tasks = 2;
                }
                if seed % 7 < 2 && buffer.is_some_and(|b| b >= 16_000) {
                    // ECN-capable flows marked at 8 KB: DCTCP or RFC 3168 Reno.
                    s.tcp.ecn = true;
                    s.topology.ecn_threshold.bytes = Some(8_000);
                    if seed % 7 == 0 {
                        s.tcp.congestion_control = CongestionControl::Dctcp;
                    }
                }
                if seed % 4 == 0 {
                    // A long flow from a server to a sink of its own, through the same NIC.
                    s.background.flows = 1;
                    s.background.source = BackgroundSource::Senders;
                    s.background.destination = BackgroundDestination::Sink;
                    s.background.warmup = from_us(100);
                }
                s.tcp.rto_min = from_ms(rto_ms);
                s.tcp.initial_window = iw;
                s.tcp.sack = sack;
                s.tcp.delayed_ack = delack;
                s.tcp.cwnd_restart = restart;
                if seed % 11 < 4 {
                    // Today's Linux: RACK-TLP, quick ACKs, HyStart, jiffy timers; BBR or
                    // CUBIC, paced or not, in TSO bursts.
                    s.tcp.rack_tlp = true;
                    s.tcp.quickack = true;
                    s.tcp.hystart = true;
                    s.tcp.timer_granularity = Some(from_ms(4));
                    s.tcp.pacing = seed % 13 < 6;
                    s.tcp.tso = seed % 17 < 8;
                    if s.tcp.congestion_control != CongestionControl::Dctcp {
                        s.tcp.congestion_control = if seed % 11 < 2 {
                            CongestionControl::Bbr
                        } else {
                            CongestionControl::Cubic
                        };
                    }
                }
                s.workload.sru = Some(sru);
                s.workload.blocks = blocks;
                s.workload.jitter = from_us(20);
                if incast {
                    s.workload.kind = WorkloadKind::Incast;
                    s.workload.flow_size = Some(sru);
                }
                s.run.max_time = 100_000 * PS_PER_S;
                s
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn invariants_hold_at_every_step_and_every_byte_arrives(sc in scenario()) {
        let n = sc.topology.senders as u64 * sc.workload.tasks as u64;
        let lossless = sc.topology.pfc;
        let expected = sc.workload.sru.unwrap() * match sc.workload.kind {
            WorkloadKind::SyncRead => sc.workload.blocks as u64,
            WorkloadKind::Incast
            | WorkloadKind::Queries
            | WorkloadKind::KvGets
            | WorkloadKind::Shuffle
            | WorkloadKind::Flows => 1,
        };
        let mut sim = Simulation::new(sc).unwrap();
        let mut last = 0;
        loop {
            let done = sim.step(50).unwrap();
            prop_assert!(sim.now() >= last, "time went backwards");
            last = sim.now();
            if let Err(e) = sim.check_invariants() {
                prop_assert!(false, "{}", e);
            }
            if done {
                break;
            }
        }
        let r = sim.report();
        prop_assert_eq!(r.app_bytes, expected * n);
        for f in r.flows.iter().filter(|f| !f.background) {
            prop_assert_eq!(f.bytes, expected);
        }
        if lossless {
            prop_assert_eq!(r.queues[0].stats.drops + r.queues[1].stats.drops, 0);
        }
    }
}

fn ndp_scenario() -> impl Strategy<Value = Scenario> {
    (
        1u32..40,
        1u64..200_000,
        prop_oneof![Just(1u32), Just(10), Just(23)],
        prop_oneof![Just(2u32), Just(8)],
        prop_oneof![Just(300u64), Just(72_000)],
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(|(n, size, iw, dq, hq, leaf_spine, seed)| {
            let mut s = Scenario::example(n);
            s.seed = seed;
            s.transport = Transport::Ndp;
            s.topology.kind = if leaf_spine {
                TopologyKind::LeafSpine
            } else {
                TopologyKind::FatTree
            };
            s.topology.hosts_per_leaf = 4;
            s.topology.spines = 3;
            s.topology.link = 10_000_000_000;
            s.topology.receiver_link = 10_000_000_000;
            s.topology.link_delay = from_us(1);
            s.ndp.initial_window = iw;
            s.ndp.data_queue = dq;
            // A tiny header queue forces bounces and drops of control packets.
            s.ndp.header_queue = hq;
            s.workload.kind = WorkloadKind::Incast;
            s.workload.flow_size = Some(size);
            s.run.max_time = 100 * PS_PER_S;
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// NDP: trims, bounces and lost control packets never lose a byte or a packet.
    #[test]
    fn ndp_delivers_every_byte_once_whatever_is_trimmed_or_bounced(sc in ndp_scenario()) {
        let n = sc.topology.senders as u64;
        let size = sc.workload.flow_size.unwrap();
        let mut sim = Simulation::new(sc).unwrap();
        loop {
            let done = sim.step(100).unwrap();
            if let Err(e) = sim.check_invariants() {
                prop_assert!(false, "{}", e);
            }
            if done {
                break;
            }
        }
        let r = sim.report();
        prop_assert_eq!(r.app_bytes, n * size);
        prop_assert!(r.flows.iter().all(|f| f.fct.is_some() && f.bytes == size));
    }
}

fn shuffle_scenario() -> impl Strategy<Value = Scenario> {
    (
        2u32..8,
        1u32..12,
        0u32..8,
        1u32..3,
        0u32..4,
        1u64..100_000,
        prop_oneof![Just(Some(16_000u64)), Just(Some(64_000)), Just(None)],
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(
            |(hosts, reducers, map_hosts, blocks, window, sru, buffer, sack, seed)| {
                let mut s = Scenario::example(hosts);
                s.seed = seed;
                s.topology.buffer = match buffer {
                    Some(b) => QueueLimit::bytes(b),
                    None => QueueLimit {
                        bytes: None,
                        packets: Some(4),
                    },
                };
                s.tcp.rto_min = from_ms(if seed % 2 == 0 { 1 } else { 10 });
                s.tcp.sack = sack;
                s.tcp.initial_window = 1 + (seed % 3) as u32;
                s.workload.kind = WorkloadKind::Shuffle;
                s.workload.reducers = reducers;
                s.workload.reducer_hosts = (seed % 3) as u32 % hosts;
                s.workload.map_hosts = map_hosts % (hosts + 1);
                s.workload.blocks = blocks;
                s.workload.fanout_window = window;
                s.workload.sru = Some(sru);
                s.run.max_time = 100_000 * PS_PER_S;
                s
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// A shuffle: every reducer gets every output it does not hold locally, whatever drops.
    #[test]
    fn a_shuffle_delivers_every_map_output_to_every_reducer(sc in shuffle_scenario()) {
        let h = sc.topology.senders;
        let m = if sc.workload.map_hosts == 0 { h } else { sc.workload.map_hosts };
        let on = if sc.workload.reducer_hosts == 0 { h } else { sc.workload.reducer_hosts };
        let fetches: u64 = (0..sc.workload.reducers)
            .map(|r| (m - u32::from(r % on >= h - m)) as u64)
            .sum();
        let expected = fetches * sc.workload.blocks as u64 * sc.workload.sru.unwrap();
        let mut sim = Simulation::new(sc).unwrap();
        loop {
            let done = sim.step(50).unwrap();
            if let Err(e) = sim.check_invariants() {
                prop_assert!(false, "{}", e);
            }
            if done {
                break;
            }
        }
        let r = sim.report();
        prop_assert_eq!(r.app_bytes, expected);
        let sh = r.shuffle.clone().unwrap();
        prop_assert_eq!(sh.data_drops + sh.ack_drops + sh.request_drops, r.drops);
        prop_assert!(sh.reducer_times.iter().all(|&t| t <= r.duration));
    }
}
