//! HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019): the sender's
//! window from the in-band telemetry its ACKs echo.
//!
//! Placeholder of the skeleton: the API the RoCE sender calls, with the window fixed at the
//! bandwidth-delay product. The HPCC algorithm replaces these bodies.

use crate::net::int::IntHop;
use crate::units::SimTime;

/// The HPCC state of one queue pair.
#[derive(Debug, Clone)]
pub struct Hpcc {
    line_rate: u64,
    base_rtt: SimTime,
    window: u64,
}

impl Hpcc {
    /// A sender at line rate with the window of one base RTT at it.
    pub fn new(_p: &crate::config::Hpcc, line_rate_bps: u64, base_rtt: SimTime, mtu: u32) -> Hpcc {
        let bdp = (u128::from(line_rate_bps) * u128::from(base_rtt) / 8 / 1_000_000_000_000) as u64;
        Hpcc {
            line_rate: line_rate_bps,
            base_rtt,
            window: bdp.max(u64::from(mtu)),
        }
    }

    /// Bytes the queue pair may have unacknowledged.
    pub fn window_bytes(&self) -> u64 {
        self.window
    }

    /// The pacing rate: window / base RTT, at most the line rate.
    pub fn rate_bps(&self) -> u64 {
        let r = u128::from(self.window) * 8 * 1_000_000_000_000 / u128::from(self.base_rtt.max(1));
        (r as u64).min(self.line_rate)
    }

    /// An ACK of `acked` bytes (cumulative) arrived while `snd_nxt` were sent, echoing `int`.
    pub fn on_ack(&mut self, _now: SimTime, _acked: u64, _snd_nxt: u64, _int: &[IntHop]) {}
}
