//! The sections nested in `roce`: the constants of its congestion controls, `roce.dcqcn` and
//! `roce.hpcc`, with the papers' defaults, and the rules they follow.

use super::section::section;
use super::{bad, ConfigError, RoceCc, Scenario};
use crate::units::*;

section! {
    /// DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM
    /// 2015): the reaction point's constants. The notification point's CNP pacing N is
    /// `roce.cnp_interval` (50 µs). Each default was checked against the paper's text: where
    /// it prints the value, its section, table or figure is given (its Figure 14 is the table
    /// of "DCQCN Parameters used in our datacenters"); R_HAI, the minimum rate and the
    /// decrease interval are not in the paper, and their sources are said beside them.
    pub struct Dcqcn {
        /// Gain g of the estimator α: a CNP sets α ← (1 − g)·α + g, a period K without one
        /// α ← (1 − g)·α. 1/256: the paper's Figure 14 and §5.2 (smaller g "leads to lower
        /// queue length and lower variation", Figure 12), against the 1/16 of its strawman.
        pub g: f64 [Plain] = 1.0 / 256.0,
        /// α before the first CNP, so the first CNP cuts the rate by α/2: 1, the paper's
        /// "Initial value of α is 1" (§3.1, footnote 1), so the first CNP halves the rate.
        /// (ConnectX starts α at 1023/1024, initial_alpha_value.)
        pub alpha_init: f64 [Plain] = 1.0,
        /// Period K of α's decay without CNPs, restarted by each CNP: 55 µs, the paper's
        /// "Our implementation uses K = 55µs" (§3.1, Eq. 2; §5.2's α update interval τ′ =
        /// 55 µs, larger than the CNP interval N = 50 µs so that α does not decay between
        /// two CNPs; 110 µs "barely slows down convergence"). The HPCC authors'
        /// "dcqcn_paper" runs use 50 µs.
        pub alpha_interval: SimTime [Time] = from_us(55),
        /// Period T of the rate-increase timer, restarted by each cut: 55 µs, the paper's
        /// Figure 14 ("Timer 55µs") and §5.2 (the timer "cannot be smaller than 50µs", the
        /// CNP interval; its strawman, QCN's, is 1.5 ms). The HPCC paper (§2.3, Fig. 2)
        /// compares it with a NIC vendor's default of 300 µs; the DCQCN authors' ns-3
        /// configures 60 µs.
        pub rate_timer: SimTime [Time] = from_us(55),
        /// Bytes B of the rate-increase byte counter: one increase step per B bytes sent while
        /// the rate recovers. 10 MB, the paper's Figure 14 ("Byte Counter 10MB") and §5.2 (with
        /// a fast timer "the byte counter should be set large, e.g., 10MB, to avoid triggering
        /// the hyper increase phase too fast"; its strawman, QCN's, is 150 KB). The DCQCN
        /// authors' ns-3 configures 300 KB; ConnectX's rpg_byte_reset is 32,767 B.
        pub byte_counter: u64 [Size] = 10_000_000,
        /// Steps F of fast recovery before additive increase, and the steps both counters
        /// must pass before hyper increase: 5, the paper's "F = 5 successive iterations"
        /// (§3.1, Eq. 3; Table 2: "fixed at 5"), so fast recovery while max(T, BC) ≤ F with
        /// the expiry counted, hyper increase once min(T, BC) > F (Figure 7). Figure 7 tests
        /// max(T, BC) < F, which would give F − 1 fast-recovery steps; the text's F is
        /// followed. ConnectX's rpg_threshold and the HPCC authors' runs use 1.
        pub fast_recovery_steps: u32 [Plain] = 5,
        /// Additive-increase step R_AI of the target rate, bits per second: 40 Mbps, the
        /// paper's Table 2 ("Rate increase step (fixed at 40Mbps)"; §3.1, Eq. 4) at 40 Gbps.
        /// ConnectX ships 5 Mbps (rpg_ai_rate), and the HPCC authors' scripts use 5 Mbps per
        /// 25 Gbps of line rate.
        pub rate_ai: u64 [Rate] = 40_000_000,
        /// Hyper-increase step R_HAI: the i-th hyper step adds i·R_HAI to the target rate,
        /// bits per second. The paper gives no value (§3.1 refers its hyper increase to QCN;
        /// its fluid model leaves it out, §5.1): 200 Mbps is the DCQCN authors' ns-3
        /// configuration (RATE_HAI, beside R_AI = 40 Mbps). ConnectX ships 50 Mbps
        /// (rpg_hai_rate).
        pub rate_hai: u64 [Rate] = 200_000_000,
        /// The rate a queue pair never goes below, bits per second (100 Mbps: the minimum rate
        /// of both the DCQCN authors' and the HPCC authors' ns-3; the paper names none).
        pub min_rate: u64 [Rate] = 100_000_000,
        /// Shortest time between two rate cuts however many CNPs arrive; a CNP within it only
        /// raises α. 4 µs: a NIC vendor's default T_d (HPCC paper §2.3; ConnectX's
        /// rate_reduce_monitor_period), which HPCC's ns-3 models (RATE_DECREASE_INTERVAL). The
        /// paper cuts at every CNP (its Figure 7; the HPCC paper credits it with T_d = 50 µs,
        /// its CNP interval); as the notification point sends at most one CNP per 50 µs per
        /// queue pair neither binds. 0: every CNP cuts.
        pub decrease_interval: SimTime [Time] = from_us(4),
    }
}

section! {
    /// HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019): the
    /// sender's constants. HPCC reads the switches' INT: it needs topology.int = true.
    pub struct Hpcc {
        /// Target utilization η of every link: 95% (Li et al. §3.3 "by default" and §5.1;
        /// HPCC's ns-3 U_TARGET and htsim agree).
        pub eta: f64 [Plain] = 0.95,
        /// Additive-increase rounds before an update is multiplicative even below η, maxStage:
        /// 5 (Li et al. §3.3 and §5.1, "we tried maxStage from 0 to 5 ... all of which give
        /// similar results"). The paper's value, not its simulations' (0: the authors' results
        /// page calls the 5 "a typo for the simulation", and their ns-3 scripts set MI_THRESH
        /// 0): the additive rounds are what let flows that start unequal converge to equal
        /// shares.
        pub max_stage: u32 [Plain] = 5,
        /// Additive-increase step W_AI, bytes; `None`: the paper's W_init·(1 − η)/N with N =
        /// `ai_flows` (htsim uses one MTU).
        pub w_ai: Option<u64> [Size] = None,
        /// N of the paper's W_AI = W_init·(1 − η)/N (Li et al. §3.3): how many flows a link is
        /// expected to share, so that their steps together stay within the 1 − η headroom.
        /// 100: the paper's evaluation sets W_AI = 80 bytes, "calculated based on 100
        /// concurrent flows under 100Gbps" (§5.1, footnote 4; T = 13 µs). HPCC's ns-3 scripts
        /// add 10 Mbps per 25 Gbps of line rate per update instead (simulation/run.py), N = 125.
        pub ai_flows: u32 [Plain] = 100,
        /// The rate a queue pair never goes below, bits per second; the window never goes below
        /// its window (100 Mbps: the minimum rate of HPCC's ns-3, MIN_RATE; the paper's
        /// window only has W_AI as its floor).
        pub min_rate: u64 [Rate] = 100_000_000,
        /// The base RTT T of the window W = rate·T; `None`: the topology's longest round trip
        /// without queueing (the paper sets T "slightly greater than the maximum RTT", 13 µs
        /// for its simulations, §5.1).
        pub base_rtt: Option<SimTime> [Time] = None,
    }
}

impl Scenario {
    /// The constants of the congestion control `roce.cc` names, in range.
    pub(super) fn validate_roce_cc(&self) -> Result<(), ConfigError> {
        let (min_rate, field) = match self.roce.cc {
            RoceCc::None => return Ok(()),
            RoceCc::Dcqcn => {
                self.roce.dcqcn.validate()?;
                (self.roce.dcqcn.min_rate, "roce.dcqcn.min_rate")
            }
            RoceCc::Hpcc => {
                self.roce.hpcc.validate()?;
                (self.roce.hpcc.min_rate, "roce.hpcc.min_rate")
            }
        };
        if min_rate > self.topology.link {
            return Err(bad(
                field,
                format!(
                    "must be at most the hosts' link rate (topology.link, {} bit/s), got {min_rate}",
                    self.topology.link
                ),
            ));
        }
        Ok(())
    }
}

impl Dcqcn {
    fn validate(&self) -> Result<(), ConfigError> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(bad(
                "roce.dcqcn.g",
                format!("must be in (0, 1], got {}", self.g),
            ));
        }
        for (k, v) in [
            ("roce.dcqcn.alpha_interval", self.alpha_interval),
            ("roce.dcqcn.rate_timer", self.rate_timer),
        ] {
            if v == 0 || v > PS_PER_S {
                return Err(bad(k, "must be positive and at most 1s"));
            }
        }
        if !(0.0..=1.0).contains(&self.alpha_init) {
            return Err(bad(
                "roce.dcqcn.alpha_init",
                format!("must be in [0, 1], got {}", self.alpha_init),
            ));
        }
        if self.byte_counter == 0 {
            return Err(bad("roce.dcqcn.byte_counter", "must be positive"));
        }
        if self.fast_recovery_steps > 1000 {
            return Err(bad("roce.dcqcn.fast_recovery_steps", "must be 0..1000"));
        }
        if self.min_rate == 0 {
            return Err(bad("roce.dcqcn.min_rate", "must be positive"));
        }
        if self.decrease_interval > PS_PER_S {
            return Err(bad("roce.dcqcn.decrease_interval", "must be at most 1s"));
        }
        Ok(())
    }
}

impl Hpcc {
    fn validate(&self) -> Result<(), ConfigError> {
        if !(self.eta > 0.0 && self.eta <= 1.0) {
            return Err(bad(
                "roce.hpcc.eta",
                format!("must be in (0, 1], got {}", self.eta),
            ));
        }
        if self.max_stage > 1000 {
            return Err(bad("roce.hpcc.max_stage", "must be 0..1000"));
        }
        if self.w_ai == Some(0) {
            return Err(bad("roce.hpcc.w_ai", "must be positive"));
        }
        if self.ai_flows == 0 {
            return Err(bad("roce.hpcc.ai_flows", "must be positive"));
        }
        if self.min_rate == 0 {
            return Err(bad("roce.hpcc.min_rate", "must be positive"));
        }
        if self.base_rtt == Some(0) || self.base_rtt.is_some_and(|t| t > PS_PER_S) {
            return Err(bad("roce.hpcc.base_rtt", "must be positive and at most 1s"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Transport;

    /// A valid RoCE scenario running `cc`.
    fn roce(cc: RoceCc) -> Scenario {
        let mut s = Scenario::example(4);
        s.transport = Transport::Roce;
        s.topology.pfc = true;
        s.topology.int = cc == RoceCc::Hpcc;
        s.roce.cc = cc;
        s
    }

    #[test]
    fn the_defaults_are_the_papers_and_valid() {
        let d = Dcqcn::default();
        assert_eq!(d.g, 1.0 / 256.0);
        assert_eq!((d.alpha_interval, d.rate_timer), (from_us(55), from_us(55)));
        assert_eq!((d.byte_counter, d.fast_recovery_steps), (10_000_000, 5));
        assert_eq!((d.rate_ai, d.rate_hai), (40_000_000, 200_000_000));
        let h = Hpcc::default();
        assert_eq!(
            (h.eta, h.max_stage, h.w_ai, h.ai_flows),
            (0.95, 5, None, 100)
        );
        for cc in [RoceCc::None, RoceCc::Dcqcn, RoceCc::Hpcc] {
            roce(cc).validate().unwrap();
        }
    }

    #[test]
    fn hpcc_without_int_capable_switches_is_refused_naming_topology_int() {
        let mut s = roce(RoceCc::Hpcc);
        s.topology.int = false;
        let e = s.validate().unwrap_err();
        assert_eq!(e.field, "topology.int");
        assert!(e.message.contains("topology.int = true"), "{e}");
        assert!(!e.to_string().contains('\n'));
    }

    #[test]
    fn each_constant_out_of_range_is_refused_by_its_key() {
        type Break = fn(&mut Scenario);
        let cases: [(RoceCc, &str, Break); 13] = [
            (RoceCc::Dcqcn, "roce.dcqcn.g", |s| s.roce.dcqcn.g = 0.0),
            (RoceCc::Dcqcn, "roce.dcqcn.g", |s| s.roce.dcqcn.g = 1.5),
            (RoceCc::Dcqcn, "roce.dcqcn.alpha_init", |s| {
                s.roce.dcqcn.alpha_init = -0.1
            }),
            (RoceCc::Dcqcn, "roce.dcqcn.alpha_interval", |s| {
                s.roce.dcqcn.alpha_interval = 0
            }),
            (RoceCc::Dcqcn, "roce.dcqcn.rate_timer", |s| {
                s.roce.dcqcn.rate_timer = 2 * PS_PER_S
            }),
            (RoceCc::Dcqcn, "roce.dcqcn.byte_counter", |s| {
                s.roce.dcqcn.byte_counter = 0
            }),
            (RoceCc::Dcqcn, "roce.dcqcn.min_rate", |s| {
                s.roce.dcqcn.min_rate = 0
            }),
            (RoceCc::Dcqcn, "roce.dcqcn.min_rate", |s| {
                s.roce.dcqcn.min_rate = s.topology.link + 1
            }),
            (RoceCc::Hpcc, "roce.hpcc.eta", |s| s.roce.hpcc.eta = 0.0),
            (RoceCc::Hpcc, "roce.hpcc.w_ai", |s| {
                s.roce.hpcc.w_ai = Some(0)
            }),
            (RoceCc::Hpcc, "roce.hpcc.ai_flows", |s| {
                s.roce.hpcc.ai_flows = 0
            }),
            (RoceCc::Hpcc, "roce.hpcc.min_rate", |s| {
                s.roce.hpcc.min_rate = s.topology.link + 1
            }),
            (RoceCc::Hpcc, "roce.hpcc.base_rtt", |s| {
                s.roce.hpcc.base_rtt = Some(0)
            }),
        ];
        for (cc, field, break_it) in cases {
            let mut s = roce(cc);
            break_it(&mut s);
            assert_eq!(s.validate().unwrap_err().field, field);
        }
        // Another control's constants are not checked.
        let mut s = roce(RoceCc::Hpcc);
        s.roce.dcqcn.g = 0.0;
        s.validate().unwrap();
    }

    #[test]
    fn the_keys_load_from_json_by_their_dotted_names() {
        let s = Scenario::from_json(
            r#"{"transport": "roce", "topology": {"pfc": true, "senders": 4},
                "roce": {"cc": "dcqcn", "dcqcn": {"rate_ai": 5000000, "g": 0.0625}}}"#,
        )
        .unwrap();
        assert_eq!((s.roce.dcqcn.rate_ai, s.roce.dcqcn.g), (5_000_000, 0.0625));
        let e = Scenario::from_json(r#"{"roce": {"hpcc": {"eta": "high"}}}"#).unwrap_err();
        assert_eq!(e.field, "roce.hpcc.eta");
        let e = Scenario::from_json(r#"{"roce": {"dcqcn": {"bogus": 1}}}"#).unwrap_err();
        assert_eq!(e.field, "roce.dcqcn.bogus");
    }
}
