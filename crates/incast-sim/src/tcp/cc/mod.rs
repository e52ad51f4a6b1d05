//! Congestion control: how cwnd answers losses, ACKs and ECN echoes. Reno (RFC 5681) is the
//! default behaviour of every hook; CUBIC (RFC 9438) replaces the loss response and the growth
//! in congestion avoidance, DCTCP (RFC 8257) the response to ECN echoes. The sender keeps the
//! window itself (slow start, recovery, PRR, F-RTO undo) and asks its controller only these.

pub(crate) mod bbr;
mod cubic;
mod cubic_linux;
mod dctcp;
pub(crate) mod hystart;
mod reno;

pub(crate) use cubic::Cubic;
pub(crate) use cubic_linux::LinuxCubic;
pub(crate) use dctcp::Dctcp;
pub(crate) use reno::Reno;

use crate::config::{CongestionControl, CubicUpdate};

/// Linux's `GSO_MAX_SIZE`: the largest segmentation-offload burst a socket hands down, bytes.
pub(crate) const GSO_MAX_SIZE: u64 = 65536;
/// Largest TSO/GSO burst of payload, bytes (`GSO_MAX_SIZE - 1 - MAX_TCP_HEADER`).
pub(crate) const GSO_MAX_BYTES: u64 = GSO_MAX_SIZE - 1 - 320;
/// Linux's `sk_pacing_shift`: a TSO burst holds about 2^-10 s (1 ms) of the pacing rate.
pub(crate) const PACING_SHIFT: u32 = 10;
use crate::units::SimTime;

/// The hooks a congestion control answers; the defaults are Reno's.
pub(crate) trait Controller {
    /// ssthresh after a loss with the window at `cwnd` segments: half of it, at least 2
    /// (RFC 5681 (4), counted in the window as Linux does).
    fn ssthresh_after_loss(&mut self, cwnd: u32) -> u32 {
        (cwnd / 2).max(2)
    }

    /// Segments to be acknowledged per one-segment increase of cwnd in congestion avoidance
    /// (Linux's `snd_cwnd_cnt` threshold); Reno's is cwnd: one segment per round trip.
    fn acks_per_increment(
        &mut self,
        _now: SimTime,
        cwnd: u32,
        _min_rtt: SimTime,
        _acked: u32,
    ) -> u32 {
        cwnd
    }

    /// An ACK arrived that acknowledged `acked` new bytes, carrying ECE or not; `snd_una` and
    /// `snd_nxt` are the sender's after it.
    fn on_ack(&mut self, _acked: u64, _ece: bool, _snd_una: u64, _snd_nxt: u64) {}

    /// ssthresh after an ECN echo with the window at `cwnd`: as after a loss (RFC 3168 6.1.2).
    fn ssthresh_after_ecn(&mut self, cwnd: u32) -> u32 {
        self.ssthresh_after_loss(cwnd)
    }

    /// A retransmission timeout put the connection in the Loss state (Linux's `set_state`).
    fn on_timeout(&mut self) {}

    /// Sending resumes at `now` with nothing in flight, the last send having been at
    /// `last_send` (Linux's `CA_EVENT_TX_START`).
    fn on_tx_start(&mut self, _now: SimTime, _last_send: SimTime) {}

    /// An RTT sample `rtt` from an ACK at `now` (Linux's `pkts_acked`).
    fn on_rtt(&mut self, _now: SimTime, _rtt: SimTime) {}

    /// Whether credits for growth earned at a larger `acks_per_increment` are applied one
    /// segment at a time when it falls (Linux 4.0 on, `tcp_cong_avoid_ai`), rather than all
    /// at once. Only a controller whose increment can fall between ACKs needs the rule.
    fn gentle_credits(&self) -> bool {
        false
    }
}

/// One connection's congestion control, dispatched without a `Box<dyn>`.
#[derive(Debug, Clone)]
pub(crate) enum AnyController {
    /// Reno / NewReno.
    Reno(Reno),
    /// CUBIC, recomputed on every ACK (RFC 9438).
    Cubic(Cubic),
    /// CUBIC as Linux computes it.
    LinuxCubic(LinuxCubic),
    /// DCTCP.
    Dctcp(Dctcp),
}

impl AnyController {
    /// The controller `kind` names; `dctcp_g` is DCTCP's gain g; `cubic` how CUBIC is
    /// computed, on a jiffy of `tick`.
    pub(crate) fn new(
        kind: CongestionControl,
        dctcp_g: f64,
        cubic: CubicUpdate,
        tick: SimTime,
    ) -> AnyController {
        match (kind, cubic) {
            (CongestionControl::Reno, _) => AnyController::Reno(Reno),
            (CongestionControl::Cubic, CubicUpdate::PerAck) => {
                AnyController::Cubic(Cubic::default())
            }
            (CongestionControl::Cubic, CubicUpdate::Linux) => {
                AnyController::LinuxCubic(LinuxCubic::new(tick))
            }
            (CongestionControl::Dctcp, _) => AnyController::Dctcp(Dctcp::new(dctcp_g)),
            // BBR sets cwnd and the pacing rate itself (`bbr.rs`, driven by the sender); its
            // controller slot keeps Reno's defaults, which BBR never reaches.
            (CongestionControl::Bbr, _) => AnyController::Reno(Reno),
        }
    }

    /// DCTCP answers every echo by α and needs no CWR; the others are classic ECN.
    pub(crate) fn is_dctcp(&self) -> bool {
        matches!(self, AnyController::Dctcp(_))
    }
}

/// Calls `$call` on whichever controller `$self` holds (static dispatch).
macro_rules! dispatch {
    ($self:ident, $c:ident => $call:expr) => {
        match $self {
            AnyController::Reno($c) => $call,
            AnyController::Cubic($c) => $call,
            AnyController::LinuxCubic($c) => $call,
            AnyController::Dctcp($c) => $call,
        }
    };
}

impl Controller for AnyController {
    #[inline]
    fn ssthresh_after_loss(&mut self, cwnd: u32) -> u32 {
        dispatch!(self, c => c.ssthresh_after_loss(cwnd))
    }

    #[inline]
    fn acks_per_increment(&mut self, now: SimTime, cwnd: u32, min_rtt: SimTime, acked: u32) -> u32 {
        dispatch!(self, c => c.acks_per_increment(now, cwnd, min_rtt, acked))
    }

    #[inline]
    fn on_ack(&mut self, acked: u64, ece: bool, snd_una: u64, snd_nxt: u64) {
        dispatch!(self, c => c.on_ack(acked, ece, snd_una, snd_nxt))
    }

    #[inline]
    fn ssthresh_after_ecn(&mut self, cwnd: u32) -> u32 {
        dispatch!(self, c => c.ssthresh_after_ecn(cwnd))
    }

    #[inline]
    fn on_timeout(&mut self) {
        dispatch!(self, c => c.on_timeout())
    }

    #[inline]
    fn on_tx_start(&mut self, now: SimTime, last_send: SimTime) {
        dispatch!(self, c => c.on_tx_start(now, last_send))
    }

    #[inline]
    fn on_rtt(&mut self, now: SimTime, rtt: SimTime) {
        dispatch!(self, c => c.on_rtt(now, rtt))
    }

    #[inline]
    fn gentle_credits(&self) -> bool {
        dispatch!(self, c => c.gentle_credits())
    }
}
