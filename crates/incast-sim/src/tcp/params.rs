//! The TCP parameters of one connection, copied from the scenario's `tcp` section.

use crate::config::{
    AckOrder, CongestionControl, CubicUpdate, CwndLimited, CwndRestart, RecoveryCwnd, Tcp,
};
use crate::units::SimTime;

/// The TCP parameters an endpoint uses, copied from the scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct TcpParams {
    /// Maximum segment size, bytes.
    pub mss: u64,
    /// Initial window, segments.
    pub initial_window: u32,
    /// Duplicate-ACK threshold.
    pub dupthresh: u32,
    /// SACK on (RFC 6675) or off (NewReno).
    pub sack: bool,
    /// RFC 6675's rescue retransmission in fast recovery (off: Linux's, only what is lost).
    pub rescue_retransmit: bool,
    /// Limited transmit (RFC 3042).
    pub limited_transmit: bool,
    /// Peer's receive window, bytes.
    pub receive_window: u64,
    /// Delayed-ACK timeout; 0 = off.
    pub delayed_ack: SimTime,
    /// cwnd restart policy.
    pub cwnd_restart: CwndRestart,
    /// cwnd reduction during fast recovery.
    pub recovery_cwnd: RecoveryCwnd,
    /// Whether cwnd grows before or after loss recovery looks at an ACK.
    pub ack_order: AckOrder,
    /// When cwnd counts as limiting the sender.
    pub cwnd_limited: CwndLimited,
    /// Congestion control.
    pub congestion_control: CongestionControl,
    /// F-RTO after timeouts.
    pub frto: bool,
    /// F-RTO as Linux 4.x on starts it: not from fast recovery, again on recurring timeouts.
    pub frto_recurring: bool,
    /// ECN was negotiated for this connection (both ends enabled it): data is ECT.
    pub ecn: bool,
    /// DCTCP's gain g.
    pub dctcp_g: f64,
    /// RACK-TLP loss detection and tail loss probes (RFC 8985).
    pub rack_tlp: bool,
    /// Linux's delayed-ACK engine for the receive half (quick ACKs, pushed reads, delack_max).
    pub quickack: bool,
    /// Linux's SACK compression in the receive half (with `quickack`).
    pub sack_compression: bool,
    /// RTT samples from SACKs and timestamp echoes where Karn's rule gives none (Linux).
    pub sack_rtt: bool,
    /// HyStart for CUBIC.
    pub hystart: bool,
    /// How CUBIC computes its increase.
    pub cubic_update: CubicUpdate,
    /// Pace every congestion control (BBR always paces).
    pub pacing: bool,
    /// Paced senders release TSO-sized bursts.
    pub tso: bool,
}

impl From<&Tcp> for TcpParams {
    fn from(t: &Tcp) -> Self {
        TcpParams {
            mss: t.mss,
            initial_window: t.initial_window,
            dupthresh: t.dupthresh,
            sack: t.sack,
            rescue_retransmit: t.rescue_retransmit,
            limited_transmit: t.limited_transmit,
            receive_window: t.receive_window,
            delayed_ack: t.delayed_ack,
            cwnd_restart: t.cwnd_restart,
            recovery_cwnd: t.recovery_cwnd,
            ack_order: t.ack_order,
            cwnd_limited: t.cwnd_limited,
            congestion_control: t.congestion_control,
            frto: t.frto,
            frto_recurring: t.frto_recurring,
            ecn: t.ecn,
            dctcp_g: t.dctcp_g,
            rack_tlp: t.rack_tlp,
            quickack: t.quickack,
            sack_compression: t.sack_compression,
            sack_rtt: t.sack_rtt,
            hystart: t.hystart,
            cubic_update: t.cubic_update,
            pacing: t.pacing,
            tso: t.tso,
        }
    }
}
