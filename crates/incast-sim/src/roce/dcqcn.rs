//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015):
//! the reaction point a sender NIC runs per queue pair, and the notification point's CNP
//! pacing at the receiver NIC.
//!
//! Placeholder of the skeleton: the API the RoCE sender calls, a reaction point that keeps the
//! line rate and a pacer that lets one CNP through per interval. The DCQCN algorithm replaces
//! these bodies.

use crate::units::SimTime;

/// The reaction point of one queue pair (sender NIC).
#[derive(Debug, Clone)]
pub struct Dcqcn {
    rate: u64,
}

impl Dcqcn {
    /// A reaction point starting at `line_rate_bps` with the constants `p`.
    pub fn new(_p: &crate::config::Dcqcn, line_rate_bps: u64) -> Dcqcn {
        Dcqcn {
            rate: line_rate_bps,
        }
    }

    /// The rate the queue pair may send at now, bits per second.
    pub fn rate_bps(&self) -> u64 {
        self.rate
    }

    /// A CNP arrived.
    pub fn on_cnp(&mut self, _now: SimTime) {}

    /// The queue pair sent `bytes`.
    pub fn on_sent(&mut self, _now: SimTime, _bytes: u64) {}

    /// The earliest of its timers, if any runs.
    pub fn next_deadline(&self) -> Option<SimTime> {
        None
    }

    /// Fire the timers due at `now`.
    pub fn on_deadline(&mut self, _now: SimTime) {}
}

/// The notification point of one queue pair (receiver NIC): at most one CNP per interval.
#[derive(Debug, Clone)]
pub struct CnpPacer {
    interval: SimTime,
    last: Option<SimTime>,
}

impl CnpPacer {
    /// A pacer letting one CNP through per `interval`.
    pub fn new(interval: SimTime) -> CnpPacer {
        CnpPacer {
            interval,
            last: None,
        }
    }

    /// A CE-marked packet arrived at `now`: whether to send a CNP now.
    pub fn on_ce(&mut self, now: SimTime) -> bool {
        if self.last.is_some_and(|t| now < t + self.interval) {
            return false;
        }
        self.last = Some(now);
        true
    }
}
