//! Congestion control: how cwnd answers losses, ACKs and ECN echoes. Reno (RFC 5681) is the
//! default behaviour of every hook; CUBIC (RFC 9438) replaces the loss response and the growth
//! in congestion avoidance, DCTCP (RFC 8257) the response to ECN echoes. The sender keeps the
//! window itself (slow start, recovery, PRR, F-RTO undo) and asks its controller only these.
//!
//! BBR (`bbr.rs`) is the other kind, Linux's `cong_control`: it sets cwnd and the pacing rate
//! itself from delivery-rate samples (`rate.rs`), so the sender's own window rules stand aside
//! ([`Controller::sets_cwnd`]) and it answers the hooks a model needs instead.

mod bbr;
mod cubic;
mod cubic_linux;
pub use cubic_linux::linux_cubic_hold;
mod dctcp;
pub(crate) mod hystart;
mod reno;

pub(crate) use bbr::Bbr;
pub(crate) use cubic::Cubic;
pub(crate) use cubic_linux::LinuxCubic;
pub(crate) use dctcp::Dctcp;
pub(crate) use reno::Reno;

use crate::config::{CongestionControl, CubicUpdate};
use crate::rng::Rng;
use crate::tcp::idle::Fields;
use crate::tcp::params::TcpParams;
use crate::tcp::rate::RateSample;
use crate::tcp::rtt::RttEstimator;
use crate::units::SimTime;

/// Linux's `GSO_MAX_SIZE`: the largest segmentation-offload burst a socket hands down, bytes.
pub(crate) const GSO_MAX_SIZE: u64 = 65536;
/// Largest TSO/GSO burst of payload, bytes (`GSO_MAX_SIZE - 1 - MAX_TCP_HEADER`).
pub(crate) const GSO_MAX_BYTES: u64 = GSO_MAX_SIZE - 1 - 320;
/// Linux's `sk_pacing_shift`: a TSO burst holds about 2^-10 s (1 ms) of the pacing rate.
pub(crate) const PACING_SHIFT: u32 = 10;
/// Largest congestion window, segments (keeps arithmetic far from overflow); also the
/// infinite ssthresh a connection starts with (Linux's `TCP_INFINITE_SSTHRESH`).
pub(crate) const MAX_CWND: u32 = 1 << 24;

/// Congestion-control state (Linux's `icsk_ca_state`, without Disorder and CWR), in Linux's
/// order (BBR compares them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum CaState {
    /// Normal sending.
    Open,
    /// Fast recovery until `high_seq` is acknowledged.
    Recovery,
    /// After a retransmission timeout, until `high_seq` is acknowledged.
    Loss,
}

/// The connection's state at an ACK, a timeout or an undo, as a controller that sets cwnd
/// itself reads it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AckState {
    /// Now.
    pub(crate) now: SimTime,
    /// cwnd, segments.
    pub(crate) cwnd: u32,
    /// Packets in flight after the ACK.
    pub(crate) in_flight: u32,
    /// Segments delivered so far.
    pub(crate) delivered: u64,
    /// When `delivered` last grew.
    pub(crate) delivered_at: SimTime,
    /// The loss-recovery state.
    pub(crate) ca: CaState,
    /// Bytes per segment.
    pub(crate) mss: u64,
    /// The earliest departure time of the next segment (pacing).
    pub(crate) next_send: SimTime,
    /// The smoothed RTT, if measured.
    pub(crate) srtt: Option<SimTime>,
    /// Segments ever marked lost.
    pub(crate) lost_total: u64,
}

/// The hooks a congestion control answers (Linux's `tcp_congestion_ops`). The window hooks'
/// defaults are Reno's; the hooks from [`sets_cwnd`] on serve a controller that sets cwnd
/// itself, and their defaults do nothing.
///
/// [`sets_cwnd`]: Controller::sets_cwnd
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

    /// A retransmission timeout put the connection, at `st`, in the Loss state (Linux's
    /// `set_state`).
    fn on_timeout(&mut self, _st: &AckState) {}

    /// Sending resumes at `now` with nothing in flight, the last send having been at
    /// `last_send`; `app_limited`: delivery-rate samples are marked application-limited
    /// (Linux's `CA_EVENT_TX_START`).
    fn on_tx_start(&mut self, _now: SimTime, _last_send: SimTime, _app_limited: bool) {}

    /// An RTT sample `rtt` from an ACK at `now` (Linux's `pkts_acked`).
    fn on_rtt(&mut self, _now: SimTime, _rtt: SimTime) {}

    /// Whether credits for growth earned at a larger `acks_per_increment` are applied one
    /// segment at a time when it falls (Linux 4.0 on, `tcp_cong_avoid_ai`), rather than all
    /// at once. Only a controller whose increment can fall between ACKs needs the rule.
    fn gentle_credits(&self) -> bool {
        false
    }

    /// Whether the controller sets cwnd and the pacing rate itself from delivery-rate samples
    /// (Linux's `cong_control` hook). Then the sender samples delivery rates, paces every
    /// segment, and its own window rules stand aside: slow start and congestion avoidance,
    /// PRR and the cuts on entering recovery, on ECN echoes and after idleness.
    fn sets_cwnd(&self) -> bool {
        false
    }

    /// The rate sample `rs` of an ACK, after loss recovery has looked at it, with the
    /// connection at `st`: the new cwnd (Linux's `cong_control`). Only for [`sets_cwnd`].
    ///
    /// [`sets_cwnd`]: Controller::sets_cwnd
    fn on_rate_sample(&mut self, _rs: &RateSample, st: &AckState) -> u32 {
        st.cwnd
    }

    /// The pacing rate the controller sets, bytes per second, if it sets one.
    fn pacing_rate(&self) -> Option<u64> {
        None
    }

    /// Segments per TSO burst the controller wants for `mss`-byte segments, if it has a say
    /// (Linux's `tso_segs` hook).
    fn tso_segs(&self, _mss: u64) -> Option<u32> {
        None
    }

    /// A window reduction turned out spurious, the connection now at `st` (Linux's
    /// `undo_cwnd`; the sender restores cwnd and ssthresh itself).
    fn on_undo(&mut self, _st: &AckState) {}

    /// Draw the controller's random choices from `rng` (before the connection starts).
    fn seed(&mut self, _rng: Rng) {}
}

/// One connection's congestion control, dispatched without a `Box<dyn>`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AnyController {
    /// Reno / NewReno.
    Reno(Reno),
    /// CUBIC, recomputed on every ACK (RFC 9438).
    Cubic(Cubic),
    /// CUBIC as Linux computes it.
    LinuxCubic(LinuxCubic),
    /// DCTCP.
    Dctcp(Dctcp),
    /// BBR v1 (boxed: its model is large, and most connections are not BBR's).
    Bbr(Box<Bbr>),
}

impl AnyController {
    /// Visit the controller's state (see `idle.rs`). Reno has none; CUBIC's RFC form (its
    /// floats) and BBR are not visited: an idle endpoint with either stays whole.
    pub(crate) fn idle_fields(&mut self, f: &mut impl Fields) {
        match self {
            AnyController::LinuxCubic(c) => c.idle_fields(f),
            AnyController::Dctcp(c) => c.idle_fields(f),
            AnyController::Reno(_) | AnyController::Cubic(_) | AnyController::Bbr(_) => {}
        }
    }

    /// Whether an idle endpoint with this controller can be held compact: not with the state
    /// `idle_fields` does not visit (RFC CUBIC's floats, BBR's model), whose check would fail
    /// on every idle moment once that state has moved.
    pub(crate) fn compactable(&self) -> bool {
        !matches!(self, AnyController::Cubic(_) | AnyController::Bbr(_))
    }

    /// The controller `p` names (with DCTCP's gain g and how CUBIC is computed), for a
    /// connection whose RTT estimator is `rtt` (its clock's tick, the handshake's RTT).
    pub(crate) fn new(p: &TcpParams, rtt: &RttEstimator) -> AnyController {
        match (p.congestion_control, p.cubic_update) {
            (CongestionControl::Reno, _) => AnyController::Reno(Reno),
            (CongestionControl::Cubic, CubicUpdate::PerAck) => {
                AnyController::Cubic(Cubic::default())
            }
            (CongestionControl::Cubic, CubicUpdate::Linux) => {
                AnyController::LinuxCubic(LinuxCubic::new(rtt.tick()))
            }
            (CongestionControl::Dctcp, _) => AnyController::Dctcp(Dctcp::new(p.dctcp_g)),
            (CongestionControl::Bbr, _) => AnyController::Bbr(Box::new(Bbr::new(
                p.initial_window,
                p.mss,
                rtt.srtt(),
                Rng::new(0, 0),
            ))),
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
            AnyController::Bbr($c) => $call,
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
    fn on_timeout(&mut self, st: &AckState) {
        dispatch!(self, c => c.on_timeout(st))
    }

    #[inline]
    fn on_tx_start(&mut self, now: SimTime, last_send: SimTime, app_limited: bool) {
        dispatch!(self, c => c.on_tx_start(now, last_send, app_limited))
    }

    #[inline]
    fn on_rtt(&mut self, now: SimTime, rtt: SimTime) {
        dispatch!(self, c => c.on_rtt(now, rtt))
    }

    #[inline]
    fn gentle_credits(&self) -> bool {
        dispatch!(self, c => c.gentle_credits())
    }

    #[inline]
    fn sets_cwnd(&self) -> bool {
        dispatch!(self, c => c.sets_cwnd())
    }

    #[inline]
    fn on_rate_sample(&mut self, rs: &RateSample, st: &AckState) -> u32 {
        dispatch!(self, c => c.on_rate_sample(rs, st))
    }

    #[inline]
    fn pacing_rate(&self) -> Option<u64> {
        dispatch!(self, c => c.pacing_rate())
    }

    #[inline]
    fn tso_segs(&self, mss: u64) -> Option<u32> {
        dispatch!(self, c => c.tso_segs(mss))
    }

    #[inline]
    fn on_undo(&mut self, st: &AckState) {
        dispatch!(self, c => c.on_undo(st))
    }

    #[inline]
    fn seed(&mut self, rng: Rng) {
        dispatch!(self, c => c.seed(rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::testing::params;
    use crate::units::{from_ms, from_us, PS_PER_S};

    #[test]
    fn only_bbr_sets_cwnd_and_paces_and_its_ssthresh_stays_infinite() {
        let mut rtt = RttEstimator::new(from_ms(200), 120 * PS_PER_S, PS_PER_S, from_us(1));
        rtt.sample_at(from_us(100), 0, 0);
        for kind in [
            CongestionControl::Reno,
            CongestionControl::Cubic,
            CongestionControl::Dctcp,
            CongestionControl::Bbr,
        ] {
            let p = TcpParams {
                congestion_control: kind,
                ..params(true)
            };
            let mut c = AnyController::new(&p, &rtt);
            let bbr = kind == CongestionControl::Bbr;
            assert_eq!(c.sets_cwnd(), bbr, "{kind:?}");
            assert_eq!(c.pacing_rate().is_some(), bbr, "{kind:?}");
            assert_eq!(c.tso_segs(p.mss).is_some(), bbr, "{kind:?}");
            let ssthresh = c.ssthresh_after_loss(40);
            if bbr {
                assert_eq!(ssthresh, MAX_CWND, "bbr_ssthresh keeps it infinite");
            } else {
                assert!(ssthresh < 40, "{kind:?}: {ssthresh}");
            }
        }
    }
}
