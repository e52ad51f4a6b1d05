//! The sections nested in `roce`: the constants of its congestion controls, `roce.dcqcn` and
//! `roce.hpcc`, with the papers' defaults, and the rules they follow.

use super::section::section;
use super::{bad, ConfigError, RoceCc, Scenario};
use crate::units::*;

section! {
    /// DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM
    /// 2015): the reaction point's constants.
    pub struct Dcqcn {
        /// Gain g of the α estimator α ← (1−g)·α + g·[CNP in the last period] (1/256).
        pub g: f64 [Plain] = 1.0 / 256.0,
        /// Period of the α update (55 µs).
        pub alpha_interval: SimTime [Time] = from_us(55),
        /// Period T of the rate-increase timer (55 µs).
        pub rate_timer: SimTime [Time] = from_us(55),
        /// Bytes B of the rate-increase byte counter (10 MB).
        pub byte_counter: u64 [Size] = 10_000_000,
        /// Fast-recovery steps F before additive increase (5).
        pub fast_recovery_steps: u32 [Plain] = 5,
        /// Additive-increase step R_AI, bits per second (5 Mbps, ConnectX's default).
        pub rate_ai: u64 [Rate] = 5_000_000,
        /// Hyper-increase step R_HAI, bits per second (50 Mbps).
        pub rate_hai: u64 [Rate] = 50_000_000,
        /// The rate a queue pair never goes below, bits per second (100 Mbps, as HPCC's ns-3).
        pub min_rate: u64 [Rate] = 100_000_000,
        /// Shortest time between two rate decreases however many CNPs arrive (4 µs).
        pub decrease_interval: SimTime [Time] = from_us(4),
    }
}

section! {
    /// HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019): the
    /// sender's constants.
    pub struct Hpcc {
        /// Target utilization η of every link (0.95).
        pub eta: f64 [Plain] = 0.95,
        /// Additive-increase rounds before a multiplicative update (maxStage, 5).
        pub max_stage: u32 [Plain] = 5,
        /// Additive-increase step W_AI, bytes; `None`: the paper's W_init·(1−η)/N with N =
        /// `ai_flows`.
        pub w_ai: Option<u64> [Size] = None,
        /// N of the W_AI formula: the flows a link is expected to share (100: at 100 Gbps and
        /// η = 0.95 a step of 50 Mbps, the additive step HPCC's ns-3 uses).
        pub ai_flows: u32 [Plain] = 100,
        /// The base RTT T of the window W = rate·T; `None`: the topology's longest round trip
        /// without queueing.
        pub base_rtt: Option<SimTime> [Time] = None,
    }
}

impl Scenario {
    /// The constants of the congestion control `roce.cc` names, in range.
    pub(super) fn validate_roce_cc(&self) -> Result<(), ConfigError> {
        match self.roce.cc {
            RoceCc::None => Ok(()),
            RoceCc::Dcqcn => self.roce.dcqcn.validate(),
            RoceCc::Hpcc => self.roce.hpcc.validate(),
        }
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
        if self.base_rtt == Some(0) || self.base_rtt.is_some_and(|t| t > PS_PER_S) {
            return Err(bad("roce.hpcc.base_rtt", "must be positive and at most 1s"));
        }
        Ok(())
    }
}
