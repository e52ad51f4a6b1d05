//! One end of a TCP connection: a send half (`sender.rs`, with its scoreboard and congestion
//! control) and a receive half (`receiver.rs`). Every segment carries an ACK (RFC 793), so
//! whatever the send half puts out goes through an outbox that adds the receive half's.
//!
//! There is no clock inside: every entry point receives `now` and appends segments to send to
//! `out`; [`Endpoint::poll_at`] says when the endpoint next needs to run.

use crate::config::CongestionControl;
use crate::net::ECE;
use crate::tcp::idle::Fields;
use crate::tcp::params::TcpParams;
use crate::tcp::receiver::{EcnEcho, Outbox, Receiver};
use crate::tcp::rto_policy::RtoPolicy;
use crate::tcp::rtt::RttEstimator;
use crate::tcp::scoreboard::SegPool;
use crate::tcp::segment::{Incoming, Segment};
use crate::tcp::sender::{Sender, SenderStats};
use crate::units::SimTime;

/// When an endpoint's timers are due: the caller runs [`Endpoint::on_rto`] or
/// [`Endpoint::on_delack`] then.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Deadlines {
    /// The retransmission timer, armed while data is outstanding.
    pub rto: Option<SimTime>,
    /// The delayed-ACK timer, armed while an ACK is held back.
    pub delayed_ack: Option<SimTime>,
    /// A paced sender may send again then.
    pub pace: Option<SimTime>,
}

/// One end of a connection: a send half and a receive half.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    /// The send half.
    pub(super) tx: Sender,
    /// The receive half.
    pub(super) rx: Receiver,
}

impl Endpoint {
    /// A connected endpoint. `handshake_rtt`, if given, is the RTT sample of the connection's
    /// handshake, which the estimator starts from as a real connection would.
    pub fn new(p: TcpParams, rtt: RttEstimator, handshake_rtt: Option<SimTime>) -> Endpoint {
        let mut rtt = rtt;
        if let Some(r) = handshake_rtt {
            rtt.sample_at(r, 0, 0);
        }
        let echo = if p.congestion_control == CongestionControl::Dctcp {
            EcnEcho::EachMark
        } else {
            EcnEcho::UntilCwr
        };
        let mut rx = Receiver::new(p.sack, p.delayed_ack, echo).with_quickack(p.quickack);
        if p.quickack {
            rx = rx
                .with_linux_delack(rtt.delack_max(), rtt.tick())
                .with_sack_compression(p.sack_compression);
        }
        Endpoint {
            rx,
            tx: Sender::new(p, rtt),
        }
    }

    /// Draw BBR's random choices (its PROBE_BW phase) from `rng`.
    pub fn with_cc_rng(mut self, rng: crate::rng::Rng) -> Endpoint {
        self.tx.set_cc_rng(rng);
        self
    }

    /// Draw timeouts with `policy` (RTO randomization).
    pub fn with_rto_policy(mut self, policy: RtoPolicy) -> Endpoint {
        self.tx.set_rto_policy(policy);
        self
    }

    /// Visit the fields an idle endpoint may hold differently from one as set up (see
    /// `idle.rs`).
    pub(super) fn idle_fields(&mut self, f: &mut impl Fields) {
        self.tx.idle_fields(f);
        self.rx.idle_fields(f);
    }

    /// Nothing in flight or unsent, no ACK owed, no out-of-order data, no timer due: what
    /// the compact form may hold (see `idle.rs`).
    pub(super) fn is_idle(&self) -> bool {
        let d = self.poll_at();
        self.tx.snd_una == self.tx.write_end && d == Deadlines::default() && self.rx.is_quiet()
    }

    /// Bytes delivered in order to the application so far.
    pub fn received(&self) -> u64 {
        self.rx.rcv_nxt()
    }

    /// Bytes the peer has cumulatively acknowledged.
    pub fn acked(&self) -> u64 {
        self.tx.snd_una
    }

    /// Congestion window, segments.
    pub fn cwnd(&self) -> u32 {
        self.tx.cwnd
    }

    /// Segments sent and not yet cumulatively acknowledged.
    pub fn packets_out(&self) -> u32 {
        self.tx.board.packets_out()
    }

    /// Counters of the send half.
    pub fn stats(&self) -> &SenderStats {
        &self.tx.stats
    }

    /// When the endpoint next needs to run, timer by timer.
    #[inline]
    pub fn poll_at(&self) -> Deadlines {
        Deadlines {
            rto: self.tx.rto_at,
            delayed_ack: self.rx.delack_at(),
            pace: self.tx.pace_at,
        }
    }

    /// Idle (nothing outstanding, nothing unsent): lend the scoreboard's buffer to `pool`.
    /// Only [`Endpoint::write`] gives an idle endpoint something to send, and it takes one back.
    #[inline]
    pub(super) fn park(&mut self, pool: &mut SegPool) {
        if self.tx.snd_nxt == self.tx.write_end {
            self.tx.board.park(pool);
        }
    }

    /// [`Endpoint::write`], with a scoreboard buffer from `pool` if this endpoint lent its own.
    pub(super) fn write_from(
        &mut self,
        pool: &mut SegPool,
        now: SimTime,
        bytes: u64,
        out: &mut Vec<Segment>,
    ) {
        if bytes > 0 {
            self.tx.board.unpark(pool);
        }
        self.write(now, bytes, out);
    }

    /// The application writes `bytes` more.
    pub fn write(&mut self, now: SimTime, bytes: u64, out: &mut Vec<Segment>) {
        if bytes == 0 {
            return;
        }
        self.rx.data_sent(now);
        let mut ob = Outbox::new(out, &self.rx);
        self.tx.write(now, bytes, &mut ob);
        self.sent(ob.sent());
    }

    /// A segment from the peer arrived. Returns the bytes newly delivered in order to the
    /// application; the caller lets the application react, then calls [`Endpoint::flush_ack`].
    pub fn on_segment(&mut self, now: SimTime, seg: &Incoming<'_>, out: &mut Vec<Segment>) -> u64 {
        let prior_una = self.tx.snd_una;
        self.tx.on_ack(now, seg.ack, seg.sack, seg.len > 0);
        self.tx.on_ecn_feedback(prior_una, seg.ecn & ECE != 0);
        let srtt = self.tx.rtt.srtt().unwrap_or(0);
        let delivered = if seg.len > 0 {
            self.rx
                .on_data(now, seg.seq, seg.len, seg.ecn, self.tx.rtt.rto(0), srtt)
        } else {
            0
        };
        let mut ob = Outbox::new(out, &self.rx);
        self.tx.try_send(now, &mut ob);
        self.sent(ob.sent());
        delivered
    }

    /// Send a pure ACK if one is owed now.
    pub fn flush_ack(&mut self, out: &mut Vec<Segment>) {
        if self.rx.ack_now() {
            self.pure_ack(out);
        }
    }

    /// The delayed-ACK timer fired.
    pub fn on_delack(&mut self, out: &mut Vec<Segment>) {
        self.rx.delack_fired();
        if self.rx.ack_pending() {
            self.pure_ack(out);
        }
    }

    /// The retransmission timer fired: a timeout (RFC 6298 (5.4)-(5.6)), or, with RACK-TLP,
    /// a tail loss probe or RACK's reorder timer, whichever it was armed for.
    pub fn on_rto(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        let mut ob = Outbox::new(out, &self.rx);
        self.tx.on_timer(now, &mut ob);
        self.sent(ob.sent());
    }

    /// The pacing timer fired: a paced sender may send again.
    pub fn on_pace(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        let mut ob = Outbox::new(out, &self.rx);
        self.tx.on_pace(now, &mut ob);
        self.sent(ob.sent());
    }

    fn pure_ack(&mut self, out: &mut Vec<Segment>) {
        Outbox::new(out, &self.rx).push(self.tx.snd_nxt, 0, 0);
        self.rx.acknowledged();
    }

    /// Whatever went out acknowledged everything received.
    #[inline]
    fn sent(&mut self, any: bool) {
        if any {
            self.rx.acknowledged();
        }
    }

    /// Check the scoreboard counters against the flags (for tests).
    pub fn check_invariants(&self) -> Result<(), String> {
        self.tx.check_invariants()
    }
}
