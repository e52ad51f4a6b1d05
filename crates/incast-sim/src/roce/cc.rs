//! The congestion control a queue pair's sender runs, as one enum the sender calls (enum
//! dispatch: no box, no virtual call per packet): none (the rate limiter's ceiling), DCQCN's
//! reaction point, or HPCC's window.

use super::dcqcn::Dcqcn;
use super::hpcc::Hpcc;
use crate::config::{Roce, RoceCc};
use crate::net::int::IntHop;
use crate::units::SimTime;

/// One queue pair's congestion control.
#[derive(Debug, Clone)]
pub enum Cc {
    /// No congestion control: a fixed rate.
    None {
        /// The rate, bits per second.
        rate: u64,
    },
    /// DCQCN's reaction point.
    Dcqcn(Dcqcn),
    /// HPCC's window.
    Hpcc(Hpcc),
}

impl Cc {
    /// The control `roce.cc` names for a queue pair whose limiter allows `rate_bps`, on
    /// paths whose base round trip is `base_rtt`.
    pub fn new(r: &Roce, rate_bps: u64, base_rtt: SimTime) -> Cc {
        match r.cc {
            RoceCc::None => Cc::None { rate: rate_bps },
            RoceCc::Dcqcn => Cc::Dcqcn(Dcqcn::new(&r.dcqcn, rate_bps)),
            RoceCc::Hpcc => {
                let rtt = r.hpcc.base_rtt.unwrap_or(base_rtt);
                Cc::Hpcc(Hpcc::new(&r.hpcc, rate_bps, rtt, r.mtu as u32))
            }
        }
    }

    /// The rate the sender paces at now, bits per second (never 0).
    #[inline]
    pub fn rate_bps(&self) -> u64 {
        match self {
            Cc::None { rate } => *rate,
            Cc::Dcqcn(d) => d.rate_bps(),
            Cc::Hpcc(h) => h.rate_bps(),
        }
        .max(1)
    }

    /// The bytes the control lets be unacknowledged, if it bounds them.
    #[inline]
    pub fn window_bytes(&self) -> Option<u64> {
        match self {
            Cc::Hpcc(h) => Some(h.window_bytes()),
            _ => None,
        }
    }

    /// Whether data packets collect INT (HPCC reads it).
    #[inline]
    pub fn wants_int(&self) -> bool {
        matches!(self, Cc::Hpcc(_))
    }

    /// A CNP arrived (DCQCN cuts its rate).
    #[inline]
    pub fn on_cnp(&mut self, now: SimTime) {
        if let Cc::Dcqcn(d) = self {
            d.on_cnp(now);
        }
    }

    /// The sender put `bytes` of data on the wire.
    #[inline]
    pub fn on_sent(&mut self, now: SimTime, bytes: u64) {
        if let Cc::Dcqcn(d) = self {
            d.on_sent(now, bytes);
        }
    }

    /// An ACK: `acked` bytes acknowledged in all, `snd_nxt` sent, the INT it echoes.
    #[inline]
    pub fn on_ack(&mut self, now: SimTime, acked: u64, snd_nxt: u64, int: &[IntHop]) {
        if let Cc::Hpcc(h) = self {
            h.on_ack(now, acked, snd_nxt, int);
        }
    }

    /// The earliest of the control's own timers, if any runs.
    #[inline]
    pub fn next_deadline(&self) -> Option<SimTime> {
        match self {
            Cc::Dcqcn(d) => d.next_deadline(),
            _ => None,
        }
    }

    /// Fire the control's timers due at `now`.
    #[inline]
    pub fn on_deadline(&mut self, now: SimTime) {
        if let Cc::Dcqcn(d) = self {
            d.on_deadline(now);
        }
    }
}
