//! The order in which a scenario's rules run. Each rule lives beside the keys it checks (in
//! `tcp.rs`, `topology.rs`, `graph/scenario.rs`, `workload.rs`); this is the one list of their
//! steps, and its order decides which error a scenario with several wrong keys gets.

use super::*;

impl Scenario {
    /// Check every invariant the engine relies on; the first rule broken is the error.
    pub fn validate(&self) -> Result<(), ConfigError> {
        // The frame's parts first: the checks of buffers and bursts measure in frames.
        self.tcp.validate_frame()?;
        self.topology.validate_hosts_and_rates()?;
        // The shape bounds the per-link delay, so the jitter test after it cannot overflow.
        self.validate_shape()?;
        self.validate_link_jitter()?;
        match self.transport {
            Transport::Tcp => {}
            Transport::Ndp => self.validate_ndp()?,
            Transport::Roce => self.validate_roce()?,
            Transport::Swift => self.validate_swift()?,
            Transport::Eqds => self.validate_eqds()?,
            Transport::Homa => self.validate_homa()?,
        }
        self.validate_bursts()?;
        self.validate_buffers()?;
        self.tcp.validate_timers()?;
        self.validate_shared_buffer_and_red()?;
        self.validate_dctcp_marking()?;
        self.topology.validate_ecn_threshold()?;
        self.validate_ecn_marking()?;
        self.tcp.validate_ecn()?;
        if self.topology.pfc {
            self.validate_pfc()?;
        }
        self.tcp.validate_window()?;
        self.validate_workload()?;
        self.topology.validate_host_rate_cap()?;
        self.validate_tasks_and_timing()?;
        self.validate_background()?;
        self.run.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{from_ms, from_us, PS_PER_S};

    #[test]
    fn example_is_valid_and_round_trips_through_json() {
        let s = Scenario::example(8);
        s.validate().unwrap();
        let j = serde_json::to_string(&s).unwrap();
        assert_eq!(Scenario::from_json(&j).unwrap(), s);
    }

    /// One wrong key for each of thirteen steps, put right in turn: every error names the key
    /// of the first step still wrong, in the order `validate` lists the steps.
    #[test]
    fn with_several_keys_wrong_the_first_step_in_order_names_its_key() {
        type Fix = fn(&mut Scenario, &Scenario);
        let wrong: [(&str, Fix, Fix); 13] = [
            (
                "tcp.mss",
                |s, _| s.tcp.mss = 0,
                |s, d| s.tcp.mss = d.tcp.mss,
            ),
            (
                "topology.rtt",
                |s, _| s.topology.rtt = 11 * PS_PER_S,
                |s, d| s.topology.rtt = d.topology.rtt,
            ),
            (
                "topology.link_jitter",
                |s, _| s.topology.link_jitter = AN_HOUR,
                |s, d| s.topology.link_jitter = d.topology.link_jitter,
            ),
            (
                "topology.nic_buffer",
                |s, _| s.topology.nic_buffer.packets = Some(0),
                |s, d| s.topology.nic_buffer = d.topology.nic_buffer,
            ),
            (
                "tcp.rto_min",
                |s, _| s.tcp.rto_min = 0,
                |s, d| s.tcp.rto_min = d.tcp.rto_min,
            ),
            (
                "topology.buffer_alpha",
                |s, _| s.topology.buffer_alpha = 0.0,
                |s, d| s.topology.buffer_alpha = d.topology.buffer_alpha,
            ),
            (
                "topology.ecn_threshold",
                |s, _| s.topology.ecn_threshold = QueueLimit::bytes(70_000),
                |s, d| s.topology.ecn_threshold = d.topology.ecn_threshold,
            ),
            (
                "tcp.dupthresh",
                |s, _| s.tcp.dupthresh = 0,
                |s, d| s.tcp.dupthresh = d.tcp.dupthresh,
            ),
            (
                "workload.blocks",
                |s, _| s.workload.blocks = 0,
                |s, d| s.workload.blocks = d.workload.blocks,
            ),
            (
                "topology.host_rate_burst",
                |s, _| s.topology.host_rate_burst = (1 << 30) + 1,
                |s, d| s.topology.host_rate_burst = d.topology.host_rate_burst,
            ),
            (
                "workload.jitter",
                |s, _| s.workload.jitter = AN_HOUR + 1,
                |s, d| s.workload.jitter = d.workload.jitter,
            ),
            (
                "background.flows",
                |s, _| s.background.flows = 20_000,
                |s, d| s.background.flows = d.background.flows,
            ),
            (
                "run.max_time",
                |s, _| s.run.max_time = 0,
                |s, d| s.run.max_time = d.run.max_time,
            ),
        ];
        let d = Scenario::example(4);
        let mut s = d.clone();
        for (_, break_it, _) in &wrong {
            break_it(&mut s, &d);
        }
        for (field, _, fix) in &wrong {
            assert_eq!(s.validate().unwrap_err().field, *field);
            fix(&mut s, &d);
        }
        s.validate().unwrap();
    }

    #[test]
    fn a_receive_window_beyond_tcp_s_largest_is_rejected_by_name() {
        let mut s = Scenario::example(4);
        s.tcp.receive_window = crate::config::MAX_WINDOW;
        s.validate().unwrap();
        s.tcp.receive_window += 1;
        let e = s.validate().unwrap_err();
        assert_eq!(e.field, "tcp.receive_window");
        assert!(e.message.contains("at most 1GiB"), "{}", e.message);
    }

    #[test]
    fn buffer_smaller_than_a_packet_is_rejected_by_name() {
        let mut s = Scenario::example(4);
        s.topology.buffer.bytes = Some(1000);
        let e = s.validate().unwrap_err();
        assert_eq!(e.field, "topology.buffer");
        s.topology.buffer.bytes = Some(64_000);
        s.topology.receiver_buffer = Some(QueueLimit::bytes(1000));
        assert_eq!(s.validate().unwrap_err().field, "topology.receiver_buffer");
    }

    #[test]
    fn zero_senders_and_zero_rate_are_rejected() {
        let mut s = Scenario::example(0);
        assert_eq!(s.validate().unwrap_err().field, "topology.senders");
        s.topology.senders = 2;
        s.topology.link = 0;
        assert_eq!(s.validate().unwrap_err().field, "topology.link");
    }

    #[test]
    fn striped_block_spreads_the_remainder() {
        let mut s = Scenario::example(3);
        s.workload.sru = None;
        s.workload.block = Some(10);
        assert_eq!((s.sru_of(0), s.sru_of(1), s.sru_of(2)), (4, 3, 3));
    }

    #[test]
    fn pfc_thresholds_default_below_the_buffer_and_xon_above_xoff_is_rejected() {
        let mut s = Scenario::example(4);
        s.topology.pfc = true;
        // 64 KB less 2 × 25 us at 1 Gbps (6250 B) and two 1538-byte frames.
        assert_eq!(s.pfc_thresholds(), Some((54_674, 51_598)));
        s.validate().unwrap();
        s.topology.pfc_xoff = Some(40_000);
        s.topology.pfc_xon = Some(50_000);
        assert_eq!(s.validate().unwrap_err().field, "topology.pfc_xon");
        s.topology.pfc_xoff = Some(70_000);
        assert_eq!(s.validate().unwrap_err().field, "topology.pfc_xoff");
        s.topology.pfc_xoff = None;
        s.topology.receiver_buffer = Some(QueueLimit::bytes(200_000));
        assert_eq!(s.validate().unwrap_err().field, "topology.receiver_buffer");
        s.topology.receiver_buffer = None;
        s.topology.pfc_xon = None;
        s.topology.buffer.bytes = Some(8_000);
        assert_eq!(s.validate().unwrap_err().field, "topology.buffer");
    }

    #[test]
    fn bad_cdfs_are_rejected_by_name() {
        let mut s = Scenario::example(4);
        s.workload.kind = WorkloadKind::Queries;
        for cdf in [
            vec![(100, 0.5)],
            vec![(100, 0.5), (50, 1.0)],
            vec![(100, 0.7), (200, 0.5), (300, 1.0)],
            vec![(0, 1.0)],
        ] {
            s.workload.query_size_cdf = cdf;
            assert_eq!(s.validate().unwrap_err().field, "workload.query_size_cdf");
        }
        s.workload.query_size_cdf = vec![(100, 0.0), (1000, 1.0)];
        s.validate().unwrap();
    }

    #[test]
    fn a_shapers_bucket_holds_a_full_frame_and_at_most_a_second_of_the_link() {
        type Burst = fn(&mut Scenario) -> &mut u64;
        let keys: [(&str, Burst); 2] = [
            ("topology.nic_burst", |s| &mut s.topology.nic_burst),
            ("topology.port_burst", |s| &mut s.topology.port_burst),
        ];
        for (field, burst) in keys {
            let mut s = Scenario::example(4);
            *burst(&mut s) = s.full_frame() + s.tcp.phy_overhead;
            assert!(s.validate().is_ok());
            *burst(&mut s) -= 1;
            let e = s.validate().unwrap_err();
            assert_eq!(e.field, field);
            assert!(e.to_string().contains("one full frame"), "{e}");
            s.topology.link = 1_000_000;
            *burst(&mut s) = 125_000;
            assert!(s.validate().is_ok());
            *burst(&mut s) = 125_001;
            let e = s.validate().unwrap_err();
            assert_eq!(e.field, field);
            assert!(e.to_string().contains("one second"), "{e}");
        }
    }

    #[test]
    fn the_timer_wheel_needs_a_jiffy_tick() {
        let mut s = Scenario::example(4);
        s.tcp.timer_wheel = true;
        s.tcp.clock_granularity = from_us(1);
        let e = s.validate().unwrap_err();
        assert_eq!(e.field, "tcp.timer_wheel");
        s.tcp.timer_granularity = Some(from_ms(4));
        assert!(s.validate().is_ok());
        s.tcp.timer_granularity = Some(from_ms(11));
        assert_eq!(s.validate().unwrap_err().field, "tcp.timer_wheel");
    }

    #[test]
    fn think_times_are_for_sync_read_and_bounded() {
        let mut s = Scenario::example(4);
        s.workload.think_times = vec![from_us(100), AN_HOUR];
        assert!(s.validate().is_ok());
        s.workload.think_times.push(AN_HOUR + 1);
        let e = s.validate().unwrap_err();
        assert_eq!(e.field, "workload.think_times");
        assert!(
            e.message.contains("item 2") && e.message.contains("3600s"),
            "{}",
            e.message
        );
        s.workload.think_times = vec![0; MAX_THINK_TIMES + 1];
        assert_eq!(s.validate().unwrap_err().field, "workload.think_times");
        s.workload.think_times = vec![from_us(100)];
        s.workload.kind = WorkloadKind::Incast;
        s.workload.flow_size = Some(1000);
        let e = s.validate().unwrap_err();
        assert_eq!(e.field, "workload.think_times");
        assert!(e.message.contains("sync_read"), "{}", e.message);
    }

    #[test]
    fn link_jitter_is_at_most_twice_the_per_link_delay() {
        let mut s = Scenario::example(4);
        s.topology.rtt = from_us(100); // a star: 25 us per link
        s.topology.link_jitter = from_us(50);
        s.validate().unwrap();
        s.topology.link_jitter = from_us(50) + 1;
        let e = s.validate().unwrap_err();
        assert_eq!(e.field, "topology.link_jitter");
        assert!(e.message.contains("25.000us"), "{}", e.message);
    }

    #[test]
    fn unknown_json_key_is_an_error_not_a_panic() {
        let e = Scenario::from_json(r#"{"seed": 1, "bogus": 2}"#).unwrap_err();
        assert_eq!(e.field, "bogus");
        let e = Scenario::from_json(r#"{"tcp": {"sack": "yes"}}"#).unwrap_err();
        assert_eq!(e.field, "tcp.sack");
        let e = Scenario::from_json(r#"{"topology": 5}"#).unwrap_err();
        assert_eq!(e.field, "topology");
        let e = Scenario::from_json("[1]").unwrap_err();
        assert_eq!(e.field, "scenario");
    }

    #[test]
    fn a_partial_scenario_gets_every_default() {
        let classic = r#""tcp": {"profile": "classic"}"#;
        let s = Scenario::from_json(&format!(r#"{{"topology": {{"senders": 4}}, {classic}}}"#));
        assert_eq!(s.unwrap(), Scenario::example(4));
        let s = Scenario::from_json(&format!("{{{classic}}}")).unwrap();
        assert_eq!(s, Scenario::default());
        // Naming no profile is today's Linux: its bundle fills the keys, also without a `tcp`
        // section; a key the scenario sets wins.
        for text in ["{}", r#"{"tcp": {}}"#, r#"{"tcp": {"profile": null}}"#] {
            let s = Scenario::from_json(text).unwrap();
            assert_eq!(s.tcp.profile, Profile::Linux, "{text}");
            assert_eq!(s.tcp.congestion_control, CongestionControl::Cubic, "{text}");
            assert!(s.tcp.rack_tlp, "{text}");
        }
        let s = Scenario::from_json(r#"{"tcp": {"congestion_control": "bbr"}}"#).unwrap();
        assert_eq!(
            (s.tcp.profile, s.tcp.congestion_control),
            (Profile::Linux, CongestionControl::Bbr)
        );
    }

    #[test]
    fn derived_defaults_follow_the_keys_they_derive_from() {
        let s = Scenario::from_json(
            r#"{"topology": {"link": 10000000000, "ecn_threshold": {"bytes": 30000, "packets": null}},
                "tcp": {"congestion_control": "dctcp"}}"#,
        )
        .unwrap();
        assert_eq!(s.topology.receiver_link, 10_000_000_000);
        assert!(s.tcp.ecn);
        assert_eq!(s.background.ecn, None);
        let s = Scenario::from_json(
            r#"{"topology": {"receiver_link": null}, "tcp": {"ecn": null, "profile": "classic"}}"#,
        )
        .unwrap();
        assert_eq!(s, Scenario::default());
        let s = Scenario::from_json(r#"{"workload": {"block": 1000000}}"#).unwrap();
        assert_eq!((s.workload.sru, s.workload.block), (None, Some(1_000_000)));
        // Given explicitly, a derived key keeps its value.
        let s = Scenario::from_json(r#"{"topology": {"link": 10, "receiver_link": 5}}"#).unwrap();
        assert_eq!(s.topology.receiver_link, 5);
    }

    #[test]
    fn the_normalized_form_is_complete_and_loads_back_unchanged() {
        let mut s = Scenario::example(8);
        s.workload.query_size_cdf = vec![(100, 0.5), (200, 1.0)];
        let v: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
        let described: serde_json::Value = serde_json::from_str(&Scenario::describe()).unwrap();
        for (section, keys) in v.as_object().unwrap() {
            if let Some(table) = keys.as_object() {
                assert_eq!(
                    table.len(),
                    described[section]["keys"].as_object().unwrap().len()
                );
            }
        }
        assert_eq!(Scenario::from_json(&s.to_json()).unwrap(), s);
    }

    #[test]
    fn block_shares_add_up_and_differ_by_at_most_one() {
        for (block, n) in [(10u64, 3u32), (1_000_000, 7), (5, 5), (6, 4)] {
            let shares: Vec<u64> = (0..n).map(|i| block_share(block, n, i)).collect();
            assert_eq!(shares.iter().sum::<u64>(), block);
            assert!(shares.iter().max().unwrap() - shares.iter().min().unwrap() <= 1);
            assert!(shares.windows(2).all(|w| w[0] >= w[1]));
        }
    }
}
