//! Today's Linux TCP in the simulator: BBR on a single flow, the profile's effect on a small
//! fan-in, and determinism with every new option.

use incast_sim::config::{CongestionControl, Profile, WorkloadKind};
use incast_sim::units::{from_ms, from_us};
use incast_sim::{Scenario, Simulation};

/// One long flow of `bytes` over a 1 Gbps star with a deep port.
fn one_flow(cc: CongestionControl, bytes: u64) -> Scenario {
    let mut s = Scenario::example(1);
    s.tcp.congestion_control = cc;
    s.tcp.rack_tlp = true;
    s.tcp.tso = true;
    s.topology.buffer.bytes = Some(1_000_000);
    s.topology.rtt = from_us(100);
    s.workload.kind = WorkloadKind::Incast;
    s.workload.flow_size = Some(bytes);
    s
}

#[test]
fn bbr_alone_on_a_1gbps_link_fills_it() {
    let s = one_flow(CongestionControl::Bbr, 100_000_000);
    let payload_share =
        s.tcp.mss as f64 / (s.tcp.mss + s.tcp.header_bytes + s.tcp.phy_overhead) as f64;
    let r = Simulation::new(s).unwrap().run().unwrap();
    let of_line_rate = r.goodput_bps / (1e9 * payload_share);
    assert!(
        of_line_rate >= 0.95,
        "BBR reached {:.1}% of the line rate",
        100.0 * of_line_rate
    );
}

#[test]
fn same_seed_same_bytes_with_every_new_option() {
    let mut s = Scenario::example(8);
    s.tcp.profile = Profile::Linux;
    s.tcp.rack_tlp = true;
    s.tcp.quickack = true;
    s.tcp.hystart = true;
    s.tcp.pacing = true;
    s.tcp.tso = true;
    s.tcp.delayed_ack = from_ms(40);
    s.tcp.timer_granularity = Some(from_ms(4));
    s.topology.buffer.bytes = Some(32_000);
    s.workload.blocks = 5;
    s.workload.think_times = vec![from_us(300), 0, from_ms(3)];
    s.tcp.timer_wheel = true;
    s.topology.nic_burst = 2 * (s.full_frame() + s.tcp.phy_overhead);
    s.topology.port_burst = s.topology.nic_burst;
    s.topology.link_jitter = from_us(10);
    for cc in [CongestionControl::Cubic, CongestionControl::Bbr] {
        s.tcp.congestion_control = cc;
        let a = Simulation::new(s.clone()).unwrap().run().unwrap();
        let b = Simulation::new(s.clone()).unwrap().run().unwrap();
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&b).unwrap(),
            "{cc:?}"
        );
    }
}

#[test]
fn the_linux_profile_repairs_small_fan_in_tail_losses_without_timeouts() {
    // Two senders of 64 KB into a 32 KB port at 100 Mbps, RTOmin 200 ms: the papers' kernels
    // wait out RTOs; RACK-TLP repairs the tails.
    let scenario = |profile: &str| {
        let text = format!(
            r#"{{"topology": {{"senders": 2, "link": 100000000, "buffer": {{"bytes": 32000}},
                 "rtt": 50000000}},
                 "tcp": {{"profile": "{profile}", "congestion_control": "cubic"}},
                 "workload": {{"sru": 64000, "blocks": 30}}}}"#
        );
        Scenario::from_json(&text).unwrap()
    };
    let classic = Simulation::new(scenario("classic")).unwrap().run().unwrap();
    let linux = Simulation::new(scenario("linux")).unwrap().run().unwrap();
    assert!(
        classic.timeouts > 5,
        "classic: {} timeouts",
        classic.timeouts
    );
    assert!(
        linux.timeouts < classic.timeouts / 2,
        "linux: {} timeouts",
        linux.timeouts
    );
    assert!(linux.loss_probes > 0);
    assert!(
        linux.goodput_bps > 2.0 * classic.goodput_bps,
        "{} vs {}",
        linux.goodput_bps,
        classic.goodput_bps
    );
}

#[test]
fn the_linux_profile_fills_defaults_the_scenario_leaves_unset() {
    let s = Scenario::from_json(r#"{"tcp": {"profile": "linux", "delayed_ack": 0}}"#).unwrap();
    assert!(s.tcp.rack_tlp && s.tcp.quickack && s.tcp.hystart);
    assert_eq!(s.tcp.congestion_control, CongestionControl::Cubic);
    assert_eq!(s.tcp.timer_granularity, Some(from_ms(4)));
    assert_eq!(s.tcp.delayed_ack, 0, "a key the scenario sets wins");
    // A scenario that names no profile gets today's Linux; the papers' stack is named.
    let default = Scenario::from_json("{}").unwrap();
    assert!(default.tcp.rack_tlp);
    assert_eq!(default.tcp.congestion_control, CongestionControl::Cubic);
    let classic = Scenario::from_json(r#"{"tcp": {"profile": "classic"}}"#).unwrap();
    assert!(!classic.tcp.rack_tlp);
    assert_eq!(classic.tcp.congestion_control, CongestionControl::Reno);
}
