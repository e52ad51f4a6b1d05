//! Factories for the TCP tests: one endpoint per state, time always explicit.

use crate::config::{
    AckOrder, CongestionControl, CubicUpdate, CwndLimited, CwndRestart, RecoveryCwnd,
};
use crate::tcp::{Endpoint, Incoming, RttEstimator, Segment, TcpParams};
use crate::units::{from_ms, from_us, SimTime, PS_PER_S};

/// Segment size of the tests, bytes.
pub(crate) const MSS: u64 = 1000;

/// Reno with SACK (or NewReno without), IW 10, PRR, limited transmit, no delayed ACKs.
pub(crate) fn params(sack: bool) -> TcpParams {
    TcpParams {
        mss: MSS,
        initial_window: 10,
        dupthresh: 3,
        sack,
        rescue_retransmit: true,
        limited_transmit: true,
        receive_window: 1 << 30,
        delayed_ack: 0,
        cwnd_restart: CwndRestart::Never,
        recovery_cwnd: RecoveryCwnd::Prr,
        ack_order: AckOrder::GrowFirst,
        cwnd_limited: CwndLimited::LastSend,
        congestion_control: CongestionControl::Reno,
        frto: false,
        frto_recurring: false,
        ecn: false,
        dctcp_g: 1.0 / 16.0,
        rack_tlp: false,
        quickack: false,
        sack_compression: false,
        sack_rtt: false,
        hystart: false,
        cubic_update: CubicUpdate::PerAck,
        pacing: false,
        tso: false,
    }
}

/// [`params`] with RACK-TLP (and SACK).
pub(crate) fn rack_params() -> TcpParams {
    TcpParams {
        rack_tlp: true,
        ..params(true)
    }
}

/// A segment from the peer without ECN bits.
pub(crate) fn seg(seq: u64, len: u32, ack: u64, sack: &[(u64, u64)]) -> Incoming<'_> {
    Incoming {
        seq,
        len,
        ack,
        sack,
        ecn: 0,
    }
}

/// A connected endpoint whose RTT estimator has a 100 us sample, RTOmin 200 ms, 1 us clock.
pub(crate) fn endpoint(p: TcpParams) -> Endpoint {
    let rtt = RttEstimator::new(from_ms(200), 120 * PS_PER_S, PS_PER_S, from_us(1));
    Endpoint::new(p, rtt, Some(from_us(100)))
}

/// An endpoint of parameters `p` that has sent `n` full segments at t = 0.
pub(crate) fn with_flight(p: TcpParams, n: u64) -> (Endpoint, Vec<Segment>) {
    let mut e = endpoint(p);
    let mut out = Vec::new();
    e.write(0, n * MSS, &mut out);
    (e, out)
}

/// [`with_flight`] under the classic parameters, with SACK or without.
pub(crate) fn sender_with_flight(sack: bool, n: u64) -> (Endpoint, Vec<Segment>) {
    with_flight(params(sack), n)
}

/// A pure ACK (`ack`, `sack`) reaches `e` at `now`: what it sends in answer, its scoreboard
/// checked.
pub(crate) fn ack(e: &mut Endpoint, now: SimTime, ack: u64, sack: &[(u64, u64)]) -> Vec<Segment> {
    let mut out = Vec::new();
    e.on_segment(now, &seg(0, 0, ack, sack), &mut out);
    e.check_invariants().unwrap();
    out
}

/// When `e`'s retransmission timer is due.
pub(crate) fn rto_at(e: &Endpoint) -> Option<SimTime> {
    e.poll_at().rto
}
