//! One end of a TCP connection.
//!
//! The send half keeps a scoreboard of segments sent and not yet cumulatively acknowledged,
//! each flagged SACKED, LOST and RETRANS, and counts packets in flight the way Linux does:
//! `packets_out - sacked_out - lost_out + retrans_out`. The same count drives normal sending,
//! limited transmit (a dup ACK or SACK takes a packet out of flight), RFC 6675 recovery and
//! recovery after a timeout. Without SACK, duplicate ACKs stand in for SACKed packets (as in
//! Linux's Reno emulation) and partial ACKs mark the next hole lost (NewReno). A segment
//! resent by RFC 6675's rule 3 is RETRANS without LOST: it counts twice, original and copy.
//!
//! Congestion control is Reno, CUBIC (see `cubic.rs`) or DCTCP (α from ECN echoes); after a
//! timeout F-RTO decides whether it was spurious and undoes the cut if so.
//!
//! There is no clock inside: every entry point receives `now`, appends segments to send to
//! `out`, and leaves its timers' deadlines in `rto_timer` and `delack_timer`.

use std::collections::VecDeque;

use crate::config::{CongestionControl, CwndRestart, RecoveryCwnd, Tcp};
use crate::engine::Timer;
use crate::net::{CE, CWR, ECE, ECT, MAX_SACK_BLOCKS};
use crate::tcp::cubic::Cubic;
use crate::tcp::rto_policy::RtoPolicy;
use crate::tcp::rtt::RttEstimator;
use crate::units::SimTime;

const SACKED: u8 = 1;
const LOST: u8 = 2;
const RETRANS: u8 = 4;
const EVER_RETX: u8 = 8;

/// Largest congestion window, segments (keeps arithmetic far from overflow).
const MAX_CWND: u32 = 1 << 24;
/// Bytes-per-round entries kept for the first transfer.
const MAX_ROUNDS: usize = 32;
/// Successive-timeout runs longer than this are counted in the last bucket.
pub const TIMEOUT_RUN_BUCKETS: usize = 16;

/// The TCP parameters an endpoint uses, copied from the scenario.
#[derive(Debug, Clone)]
pub struct TcpParams {
    /// Maximum segment size, bytes.
    pub mss: u64,
    /// Initial window, segments.
    pub initial_window: u32,
    /// Duplicate-ACK threshold.
    pub dupthresh: u32,
    /// SACK on (RFC 6675) or off (NewReno).
    pub sack: bool,
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
    /// Congestion control.
    pub congestion_control: CongestionControl,
    /// F-RTO after timeouts.
    pub frto: bool,
    /// ECN was negotiated for this connection (both ends enabled it): data is ECT.
    pub ecn: bool,
    /// DCTCP's gain g.
    pub dctcp_g: f64,
}

impl From<&Tcp> for TcpParams {
    fn from(t: &Tcp) -> Self {
        TcpParams {
            mss: t.mss,
            initial_window: t.initial_window,
            dupthresh: t.dupthresh,
            sack: t.sack,
            limited_transmit: t.limited_transmit,
            receive_window: t.receive_window,
            delayed_ack: t.delayed_ack,
            cwnd_restart: t.cwnd_restart,
            recovery_cwnd: t.recovery_cwnd,
            congestion_control: t.congestion_control,
            frto: t.frto,
            ecn: t.ecn,
            dctcp_g: t.dctcp_g,
        }
    }
}

/// A segment arriving from the peer.
#[derive(Debug, Clone, Copy)]
pub struct Incoming<'a> {
    /// First payload byte.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Cumulative ACK.
    pub ack: u64,
    /// SACK blocks.
    pub sack: &'a [(u64, u64)],
    /// ECN bits ([`ECT`], [`CE`], [`ECE`]).
    pub ecn: u8,
}

/// A segment to put on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// First payload byte (for a pure ACK, the next byte to send).
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Cumulative ACK.
    pub ack: u64,
    /// Valid SACK blocks.
    pub nsack: u8,
    /// SACK blocks, most recent first.
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
    /// ECN bits: ECT on data of ECN-capable connections, ECE echoing CE marks, CWR.
    pub ecn: u8,
}

/// A sent segment awaiting its cumulative ACK.
#[derive(Debug, Clone, Copy)]
struct Seg {
    seq: u64,
    len: u32,
    flags: u8,
    /// Last (re)transmission time.
    sent: SimTime,
    /// `snd_nxt` when last retransmitted: a SACK beyond it proves the retransmission lost.
    retx_nxt: u64,
}

impl Seg {
    fn end(&self) -> u64 {
        self.seq + self.len as u64
    }
    fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// Congestion-control state (Linux's `icsk_ca_state`, without Disorder and CWR).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CaState {
    Open,
    /// Fast recovery until `high_seq` is acknowledged.
    Recovery,
    /// After a retransmission timeout, until `high_seq` is acknowledged.
    Loss,
}

/// What the send half did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Retransmission timeouts.
    pub timeouts: u32,
    /// Entries into fast recovery.
    pub recoveries: u32,
    /// Segments retransmitted during fast recovery.
    pub retx_fast: u32,
    /// Segments retransmitted after a timeout.
    pub retx_timeout: u32,
    /// Data segments sent, retransmissions included.
    pub segments: u64,
    /// `runs[k-1]`: times that k timeouts in a row hit before an ACK made progress.
    pub timeout_runs: [u32; TIMEOUT_RUN_BUCKETS],
    /// Longest run of successive timeouts.
    pub max_timeout_run: u32,
    /// Bytes sent in each slow-start round of the first transfer, until its first loss.
    pub rounds: Vec<u64>,
    /// cwnd reductions in response to ECN echoes (DCTCP).
    pub ecn_reductions: u32,
    /// Timeouts F-RTO found spurious (their window cut undone).
    pub spurious_timeouts: u32,
}

/// One end of a connection: a send half and a receive half.
#[derive(Debug, Clone)]
pub struct Endpoint {
    p: TcpParams,
    // ---- send half ----
    /// Oldest unacknowledged byte.
    snd_una: u64,
    /// Next new byte to send.
    snd_nxt: u64,
    /// End of the data the application has written.
    write_end: u64,
    /// Sent segments not yet cumulatively acknowledged, in sequence order.
    segs: VecDeque<Seg>,
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    /// Segments marked LOST and not yet retransmitted.
    lost_pending: u32,
    /// No LOST-and-unsent segment starts below this sequence number.
    retx_hint: u64,
    /// Duplicate ACKs since the last new ACK (without SACK, also the stand-in for sacked_out).
    dupacks: u32,
    /// Congestion window, segments.
    cwnd: u32,
    /// Fractional growth in congestion avoidance.
    cwnd_cnt: u32,
    /// Slow-start threshold, segments.
    ssthresh: u32,
    ca: CaState,
    /// Recovery point: `snd_nxt` when recovery or loss state was entered.
    high_seq: u64,
    /// End of the highest segment retransmitted in this recovery (RFC 6675 HighRxt).
    high_rxt: u64,
    /// Retransmit the first lost segment regardless of cwnd (fast retransmit).
    force_retx: bool,
    /// F-RTO in progress: after the head's retransmission, only new data goes out until an
    /// ACK shows whether the timeout was spurious.
    frto: bool,
    /// The head has been retransmitted since the timeout that started F-RTO.
    frto_head_sent: bool,
    /// cwnd and ssthresh before the timeout, restored if it was spurious.
    undo_cwnd: u32,
    undo_ssthresh: u32,
    /// This ACK delivered (acked or SACKed) a segment that was never retransmitted.
    orig_delivered: bool,
    /// PRR (RFC 6937): cwnd when recovery began, segments delivered and sent since.
    prior_cwnd: u32,
    prr_delivered: u32,
    prr_out: u32,
    /// Whether the last send attempt stopped because of cwnd.
    cwnd_limited: bool,
    /// Most packets outstanding in the current window (cwnd validation).
    max_packets_out: u32,
    max_packets_seq: u64,
    rtt: RttEstimator,
    /// How the timeout is drawn (randomization), if not the estimator's alone.
    rto_policy: Option<RtoPolicy>,
    /// Successive RTO doublings.
    backoff: u32,
    /// Timeouts since the last ACK of new data.
    timeout_run: u32,
    /// Last time new data or a retransmission was sent.
    last_send: SimTime,
    /// Retransmission timer.
    pub rto_timer: Timer,
    round_end: u64,
    round_start: u64,
    rounds_open: bool,
    first_end: u64,
    /// Counters of the send half.
    pub stats: SenderStats,
    // ---- receive half ----
    /// Next byte expected.
    rcv_nxt: u64,
    /// Out-of-order ranges received, sorted, disjoint.
    ooo: Vec<(u64, u64)>,
    /// Start of the most recently received out-of-order segment (first SACK block).
    last_ooo: u64,
    /// In-order segments not yet acknowledged.
    pending_acks: u32,
    /// An ACK must go out now.
    ack_now: bool,
    /// Delayed-ACK timer.
    pub delack_timer: Timer,
    /// Whether ACKs carry ECE: DCTCP echoes the last data segment's CE mark; classic ECN
    /// (RFC 3168) latches it from a CE mark until the sender's CWR.
    ce_state: bool,
    /// Classic ECN sender: the next data segment carries CWR.
    send_cwr: bool,
    /// CUBIC's state, when it is the congestion control.
    cubic: Option<Cubic>,
    /// Smallest RTT sample seen.
    min_rtt: SimTime,
    // ---- DCTCP (RFC 8257) ----
    /// Estimated fraction of marked bytes, α.
    dctcp_alpha: f64,
    /// Bytes acknowledged, and of those acknowledged with ECE, in this observation window.
    dctcp_acked: u64,
    dctcp_marked: u64,
    /// The observation window ends when this byte is acknowledged.
    dctcp_window_end: u64,
    /// No new ECN reduction until this byte is acknowledged (one per window).
    cwr_end: u64,
}

impl Endpoint {
    /// A connected endpoint. `handshake_rtt`, if given, is the RTT sample of the connection's
    /// handshake, which the estimator starts from as a real connection would.
    pub fn new(p: TcpParams, rtt: RttEstimator, handshake_rtt: Option<SimTime>) -> Endpoint {
        let mut rtt = rtt;
        if let Some(r) = handshake_rtt {
            rtt.sample_at(r, 0, 0);
        }
        let cubic = (p.congestion_control == CongestionControl::Cubic).then(Cubic::default);
        Endpoint {
            cwnd: p.initial_window,
            p,
            snd_una: 0,
            snd_nxt: 0,
            write_end: 0,
            segs: VecDeque::new(),
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            lost_pending: 0,
            retx_hint: 0,
            dupacks: 0,
            cwnd_cnt: 0,
            ssthresh: MAX_CWND,
            ca: CaState::Open,
            high_seq: 0,
            high_rxt: 0,
            force_retx: false,
            frto: false,
            frto_head_sent: false,
            undo_cwnd: 0,
            undo_ssthresh: 0,
            orig_delivered: false,
            prior_cwnd: 0,
            prr_delivered: 0,
            prr_out: 0,
            cwnd_limited: false,
            max_packets_out: 0,
            max_packets_seq: 0,
            rtt,
            rto_policy: None,
            backoff: 0,
            timeout_run: 0,
            last_send: 0,
            rto_timer: Timer::default(),
            round_end: 0,
            round_start: 0,
            rounds_open: false,
            first_end: 0,
            stats: SenderStats::default(),
            rcv_nxt: 0,
            ooo: Vec::new(),
            last_ooo: 0,
            pending_acks: 0,
            ack_now: false,
            delack_timer: Timer::default(),
            ce_state: false,
            send_cwr: false,
            cubic,
            min_rtt: SimTime::MAX,
            dctcp_alpha: 1.0,
            dctcp_acked: 0,
            dctcp_marked: 0,
            dctcp_window_end: 0,
            cwr_end: 0,
        }
    }

    /// Draw timeouts with `policy` (RTO randomization).
    pub fn with_rto_policy(mut self, policy: RtoPolicy) -> Endpoint {
        self.rto_policy = Some(policy);
        self
    }

    /// Bytes delivered in order to the application so far.
    pub fn received(&self) -> u64 {
        self.rcv_nxt
    }

    /// Bytes the peer has cumulatively acknowledged.
    pub fn acked(&self) -> u64 {
        self.snd_una
    }

    /// Congestion window, segments.
    pub fn cwnd(&self) -> u32 {
        self.cwnd
    }

    /// Segments sent and not yet cumulatively acknowledged.
    pub fn packets_out(&self) -> u32 {
        self.segs.len() as u32
    }

    /// The application writes `bytes` more.
    pub fn write(&mut self, now: SimTime, bytes: u64, out: &mut Vec<Segment>) {
        if bytes == 0 {
            return;
        }
        if self.segs.is_empty() {
            self.restart_after_idle(now);
        }
        if self.write_end == 0 {
            self.rounds_open = true;
            self.first_end = bytes;
        }
        self.write_end += bytes;
        self.try_send(now, out);
    }

    /// A segment from the peer arrived. Returns the bytes newly delivered in order to the
    /// application; the caller lets the application react, then calls [`Endpoint::flush_ack`].
    pub fn on_segment(&mut self, now: SimTime, seg: &Incoming<'_>, out: &mut Vec<Segment>) -> u64 {
        let prior_una = self.snd_una;
        self.process_ack(now, seg.ack, seg.sack, seg.len > 0);
        let dctcp = self.p.congestion_control == CongestionControl::Dctcp;
        if dctcp {
            self.dctcp_on_ack(prior_una, seg.ecn & ECE != 0);
        } else if self.p.ecn && seg.ecn & ECE != 0 {
            self.classic_ecn_response();
        }
        let delivered = if seg.len > 0 {
            let ce = seg.ecn & CE != 0;
            if !dctcp {
                // RFC 3168 6.1.3: echo from a CE mark until a CWR arrives (and again if the
                // CWR segment is itself marked).
                if seg.ecn & CWR != 0 {
                    self.ce_state = false;
                }
                if ce {
                    self.ce_state = true;
                }
            } else if ce != self.ce_state {
                // RFC 8257 3.2: acknowledge at once when the CE state changes, so the echo
                // tracks the marks exactly even with delayed ACKs.
                if self.pending_acks > 0 {
                    self.ack_now = true;
                }
                self.ce_state = ce;
            }
            self.receive_data(now, seg.seq, seg.len)
        } else {
            0
        };
        self.try_send(now, out);
        delivered
    }

    /// Send a pure ACK if one is owed now.
    pub fn flush_ack(&mut self, out: &mut Vec<Segment>) {
        if self.ack_now {
            self.emit(self.snd_nxt, 0, out);
        }
    }

    /// The delayed-ACK timer fired.
    pub fn on_delack(&mut self, out: &mut Vec<Segment>) {
        if self.pending_acks > 0 {
            self.emit(self.snd_nxt, 0, out);
        }
    }

    /// The retransmission timer fired (RFC 6298 (5.4)-(5.6)).
    pub fn on_rto(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        if self.segs.is_empty() {
            return;
        }
        self.stats.timeouts += 1;
        self.timeout_run += 1;
        self.rounds_open = false;
        let first = self.ca != CaState::Loss;
        if first {
            self.undo_cwnd = self.cwnd;
            self.undo_ssthresh = self.ssthresh;
        }
        // F-RTO starts only from a timeout that follows progress (not a repeated one).
        self.frto = self.p.frto && first;
        self.frto_head_sent = false;
        if self.ca == CaState::Open {
            // Linux's tcp_enter_loss: recovery or an earlier timeout already set ssthresh.
            self.ssthresh = self.loss_ssthresh();
        }
        self.cwnd = 1;
        self.cwnd_cnt = 0;
        // Everything not SACKed is presumed lost, retransmissions included (RFC 6675 5.1).
        self.lost_pending = 0;
        for s in self.segs.iter_mut() {
            if s.has(SACKED) {
                continue;
            }
            if !s.has(LOST) {
                s.flags |= LOST;
                self.lost_out += 1;
            }
            if s.has(RETRANS) {
                s.flags &= !RETRANS;
                self.retrans_out -= 1;
            }
            self.lost_pending += 1;
        }
        self.retx_hint = self.snd_una;
        self.dupacks = 0;
        self.force_retx = false;
        self.ca = CaState::Loss;
        self.high_seq = self.snd_nxt;
        self.backoff = (self.backoff + 1).min(62);
        self.rto_timer.clear();
        self.try_send(now, out);
        self.arm_rto(now);
    }

    // ------------------------------------------------------------------ send half

    fn in_flight(&self) -> u32 {
        let left = if !self.p.sack {
            // Reno: each duplicate ACK means one segment has left the network.
            self.dupacks.min(self.packets_out())
        } else {
            self.sacked_out
        };
        let left = if self.ca == CaState::Open && !self.p.limited_transmit {
            0
        } else {
            left
        };
        (self.packets_out() + self.retrans_out).saturating_sub(left + self.lost_out)
    }

    fn try_send(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        if self.force_retx {
            self.force_retx = false;
            if let Some(i) = self.next_lost() {
                self.retransmit(i, now, out);
            }
        }
        loop {
            if self.in_flight() >= self.cwnd {
                self.cwnd_limited = self.lost_pending > 0 || self.snd_nxt < self.write_end;
                break;
            }
            if self.lost_pending > 0 && !(self.frto && self.frto_head_sent) {
                if let Some(i) = self.next_lost() {
                    self.frto_head_sent |= self.frto;
                    self.retransmit(i, now, out);
                    continue;
                }
                self.lost_pending = 0;
            }
            let len = self.p.mss.min(self.write_end.saturating_sub(self.snd_nxt));
            if len == 0 || self.snd_nxt + len > self.snd_una + self.p.receive_window {
                // Nothing new may go out: RFC 6675 NextSeg rule 3 resends the first segment
                // above HighRxt that is neither SACKed nor yet deemed lost.
                if let Some(i) = self.rescue_candidate() {
                    self.retransmit(i, now, out);
                    continue;
                }
                self.cwnd_limited = false;
                break;
            }
            self.segs.push_back(Seg {
                seq: self.snd_nxt,
                len: len as u32,
                flags: 0,
                sent: now,
                retx_nxt: 0,
            });
            self.emit(self.snd_nxt, len as u32, out);
            self.snd_nxt += len;
            self.sent_data(now);
        }
        self.validate_cwnd();
        if self.rounds_open && self.snd_nxt >= self.first_end {
            // The first transfer is all sent: its current round is its last.
            self.stats.rounds.push(self.snd_nxt - self.round_start);
            self.rounds_open = false;
        }
    }

    /// Linux's `tcp_cwnd_validate`: remember the most packets outstanding per window.
    fn validate_cwnd(&mut self) {
        let out = self.packets_out();
        if self.snd_una >= self.max_packets_seq || out > self.max_packets_out || self.cwnd_limited {
            self.max_packets_out = out;
            self.max_packets_seq = self.snd_nxt;
        }
    }

    fn sent_data(&mut self, now: SimTime) {
        self.stats.segments += 1;
        if self.ca == CaState::Recovery {
            self.prr_out += 1;
        }
        self.last_send = now;
        if !self.rto_timer.is_armed() {
            self.arm_rto(now);
        }
    }

    fn arm_rto(&mut self, now: SimTime) {
        let timeout = match self.rto_policy.as_mut() {
            None => self.rtt.rto(self.backoff),
            Some(p) => p.timeout(
                self.rtt.rto(0),
                self.backoff,
                self.timeout_run,
                self.snd_nxt,
            ),
        };
        let at = self.rtt.to_tick(now.saturating_add(timeout));
        self.rto_timer.set(at);
    }

    fn next_lost(&mut self) -> Option<usize> {
        let start = self.segs.partition_point(|s| s.end() <= self.retx_hint);
        for i in start..self.segs.len() {
            let s = &self.segs[i];
            if s.has(LOST) && !s.has(RETRANS) && !s.has(SACKED) {
                self.retx_hint = s.seq;
                return Some(i);
            }
        }
        None
    }

    fn retransmit(&mut self, i: usize, now: SimTime, out: &mut Vec<Segment>) {
        let s = &mut self.segs[i];
        s.flags |= RETRANS | EVER_RETX;
        s.sent = now;
        s.retx_nxt = self.snd_nxt;
        let (seq, len, lost) = (s.seq, s.len, s.has(LOST));
        self.high_rxt = self.high_rxt.max(seq + len as u64);
        self.retrans_out += 1;
        if lost {
            self.lost_pending -= 1;
        }
        if self.ca == CaState::Loss {
            self.stats.retx_timeout += 1;
        } else {
            self.stats.retx_fast += 1;
        }
        self.emit(seq, len, out);
        self.sent_data(now);
        if i == 0 {
            // Linux restarts the retransmission timer when it resends the head.
            self.arm_rto(now);
        }
    }

    fn rescue_candidate(&self) -> Option<usize> {
        if self.ca != CaState::Recovery || !self.p.sack {
            return None;
        }
        let start = self.segs.partition_point(|s| s.end() <= self.high_rxt);
        (start..self.segs.len()).find(|&i| self.segs[i].flags & (SACKED | LOST | RETRANS) == 0)
    }

    fn mark_lost(&mut self, i: usize) {
        let s = &mut self.segs[i];
        if s.has(SACKED) || s.has(LOST) {
            return;
        }
        s.flags |= LOST;
        let (seq, in_flight_again) = (s.seq, s.has(RETRANS));
        self.lost_out += 1;
        if !in_flight_again {
            // A rescue retransmission is still out: only its original is now deemed lost.
            self.lost_pending += 1;
        }
        self.retx_hint = self.retx_hint.min(seq);
    }

    /// RFC 6675 IsLost: a segment with at least DupThresh SACKed segments above it is lost.
    fn mark_lost_by_sack(&mut self) {
        let mut above = 0u32;
        for i in (0..self.segs.len()).rev() {
            if self.segs[i].has(SACKED) {
                above += 1;
            } else if above >= self.p.dupthresh {
                self.mark_lost(i);
            }
        }
    }

    fn head_lost_by_sack(&self) -> bool {
        // Every SACKed segment lies above an un-SACKed head.
        self.sacked_out >= self.p.dupthresh && self.segs.front().is_some_and(|s| !s.has(SACKED))
    }

    /// Linux's `tcp_mark_lost_retrans`: a retransmission is lost if the receiver has SACKed
    /// data first sent after it (that data would have arrived later). Saves a timeout.
    fn mark_lost_retransmissions(&mut self, highest_sacked: u64) {
        if self.retrans_out == 0 {
            return;
        }
        for s in self.segs.iter_mut() {
            if s.has(RETRANS) && !s.has(SACKED) && highest_sacked > s.retx_nxt {
                s.flags &= !RETRANS;
                self.retrans_out -= 1;
                if !s.has(LOST) {
                    // A rescue retransmission (RFC 6675 rule 3): the original is lost too.
                    s.flags |= LOST;
                    self.lost_out += 1;
                }
                self.lost_pending += 1;
                self.retx_hint = self.retx_hint.min(s.seq);
            }
        }
    }

    /// Counters for a segment leaving the scoreboard's lost/retransmitted sets.
    fn forget(&mut self, lost: bool, retrans: bool) {
        if lost {
            self.lost_out -= 1;
            if !retrans {
                self.lost_pending -= 1;
            }
        }
        if retrans {
            self.retrans_out -= 1;
        }
    }

    fn mark_sacked(&mut self, start: u64, end: u64) -> u32 {
        let mut n = 0;
        let first = self.segs.partition_point(|s| s.seq < start);
        for i in first..self.segs.len() {
            let s = &mut self.segs[i];
            if s.end() > end {
                break;
            }
            if s.has(SACKED) {
                continue;
            }
            s.flags |= SACKED;
            self.sacked_out += 1;
            self.orig_delivered |= !s.has(EVER_RETX) && s.end() <= self.high_seq;
            let (lost, retrans) = (s.has(LOST), s.has(RETRANS));
            s.flags &= !(LOST | RETRANS);
            self.forget(lost, retrans);
            n += 1;
        }
        n
    }

    fn process_ack(&mut self, now: SimTime, ack: u64, sack: &[(u64, u64)], has_data: bool) {
        if ack > self.snd_nxt {
            return; // acknowledges data never sent: ignore (RFC 793)
        }
        self.orig_delivered = false;
        let mut newly_sacked = 0;
        if self.p.sack {
            let mut highest = 0;
            for &(s, e) in sack {
                if e > ack.max(self.snd_una) {
                    newly_sacked += self.mark_sacked(s.max(ack), e);
                    highest = highest.max(e);
                }
            }
            if newly_sacked > 0 && self.ca != CaState::Open {
                self.mark_lost_retransmissions(highest);
            }
        }
        let prior_una = self.snd_una;
        let mut acked = 0u32;
        let mut reno_delivered = 0u32;
        if ack > self.snd_una {
            // Linux's tcp_clean_rtx_queue: the RTT of the oldest segment this ACK newly
            // covers; Karn's algorithm: none at all if any covered segment was retransmitted.
            let mut first_sent = None;
            let mut retransmitted = false;
            while let Some(f) = self.segs.front() {
                if f.end() > ack {
                    break;
                }
                let s = self.segs.pop_front().expect("front exists");
                if s.has(SACKED) {
                    self.sacked_out -= 1;
                } else {
                    acked += 1;
                }
                self.forget(s.has(LOST), s.has(RETRANS));
                retransmitted |= s.has(EVER_RETX);
                self.orig_delivered |=
                    !s.has(EVER_RETX) && !s.has(SACKED) && s.end() <= self.high_seq;
                if !s.has(SACKED) && first_sent.is_none() {
                    first_sent = Some(s.sent);
                }
            }
            self.snd_una = ack;
            if let (Some(sent), false) = (first_sent, retransmitted) {
                let r = self.rtt.measure(sent, now);
                self.rtt.sample_at(r, ack, self.snd_nxt);
                self.min_rtt = self.min_rtt.min(r);
            }
            self.backoff = 0;
            if self.timeout_run > 0 {
                let k = self.timeout_run as usize;
                self.stats.timeout_runs[k.min(TIMEOUT_RUN_BUCKETS) - 1] += 1;
                self.stats.max_timeout_run = self.stats.max_timeout_run.max(self.timeout_run);
                self.timeout_run = 0;
            }
            if !self.p.sack && self.ca != CaState::Open {
                // Linux's tcp_remove_reno_sacks: one ACKed segment filled the hole, the rest
                // had already been counted by duplicate ACKs.
                reno_delivered = acked.saturating_sub(self.dupacks).max(1);
                self.dupacks = self.dupacks.saturating_sub(acked.saturating_sub(1));
            } else {
                self.dupacks = 0;
            }
            self.track_round(ack);
            if self.segs.is_empty() {
                self.rto_timer.clear();
            } else {
                self.arm_rto(now);
            }
        } else if ack == self.snd_una
            && !has_data
            && !self.segs.is_empty()
            && (!self.p.sack || newly_sacked > 0)
        {
            // RFC 6675: with SACK, a duplicate ACK counts only if it SACKs new data.
            self.dupacks += 1;
        }
        // Without SACK a duplicate ACK stands for one segment delivered.
        let reno_dup = !self.p.sack && ack == prior_una && !has_data && !self.segs.is_empty();
        let delivered = if !self.p.sack && ack > prior_una && self.ca != CaState::Open {
            reno_delivered
        } else {
            acked + newly_sacked + u32::from(reno_dup)
        };
        match self.ca {
            CaState::Open => {
                if ack > prior_una {
                    self.grow(delivered, now);
                }
                let enter = self.dupacks >= self.p.dupthresh
                    || (self.p.sack && newly_sacked > 0 && self.head_lost_by_sack());
                if enter && !self.segs.is_empty() {
                    self.enter_recovery();
                    self.reduce_cwnd(delivered, ack > prior_una);
                }
            }
            CaState::Recovery => {
                if self.snd_una >= self.high_seq {
                    self.ca = CaState::Open;
                    self.cwnd = self.ssthresh;
                    self.dupacks = 0;
                } else if !self.p.sack {
                    if ack > prior_una {
                        // NewReno (RFC 6582 3.2 step 3): a partial ACK reveals the next hole;
                        // retransmit it at once.
                        self.mark_lost(0);
                        self.force_retx = true;
                    }
                } else if newly_sacked > 0 || ack > prior_una {
                    self.mark_lost_by_sack();
                }
                if self.ca == CaState::Recovery {
                    self.reduce_cwnd(delivered, ack > prior_una);
                }
            }
            CaState::Loss if self.frto && self.orig_delivered => self.undo_spurious_timeout(),
            CaState::Loss => {
                if self.frto {
                    if self.snd_nxt > self.high_seq {
                        // Step 3a: new data went out and the peer still reports holes.
                        if newly_sacked > 0 || self.dupacks > 0 {
                            self.frto = false;
                        }
                    } else if ack > prior_una && self.snd_una < self.high_seq {
                        // Step 2b: the head's retransmission came back; send new data next
                        // (the window's original data, if it arrives, proves the timeout
                        // spurious), or fall back to resending everything if there is none.
                        self.high_seq = self.snd_nxt;
                        self.frto = self.snd_nxt < self.write_end
                            && self.snd_nxt < self.snd_una + self.p.receive_window;
                    }
                }
                if ack > prior_una {
                    self.grow(delivered, now);
                }
                if self.snd_una >= self.high_seq {
                    self.ca = CaState::Open;
                    self.dupacks = 0;
                }
            }
        }
    }

    /// DCTCP's sender (RFC 8257 3.3): update α once per window of data from the share of
    /// bytes acknowledged with ECE, and on an echo cut cwnd by α/2, at most once per window.
    fn dctcp_on_ack(&mut self, prior_una: u64, ece: bool) {
        let acked = self.snd_una.saturating_sub(prior_una);
        self.dctcp_acked += acked;
        if ece {
            self.dctcp_marked += acked;
        }
        if acked > 0 && self.snd_una > self.dctcp_window_end {
            if self.dctcp_acked > 0 {
                let f = self.dctcp_marked as f64 / self.dctcp_acked as f64;
                self.dctcp_alpha = (1.0 - self.p.dctcp_g) * self.dctcp_alpha + self.p.dctcp_g * f;
            }
            self.dctcp_acked = 0;
            self.dctcp_marked = 0;
            self.dctcp_window_end = self.snd_nxt;
        }
        if ece && self.ca == CaState::Open && self.snd_una >= self.cwr_end && !self.segs.is_empty()
        {
            let reduced = (self.cwnd as f64 * (1.0 - self.dctcp_alpha / 2.0)) as u32;
            self.ssthresh = reduced.max(2);
            self.cwnd = self.ssthresh;
            self.cwnd_cnt = 0;
            self.cwr_end = self.snd_nxt;
            self.stats.ecn_reductions += 1;
        }
    }

    /// Classic ECN's sender (RFC 3168 6.1.2): an echo is treated as a loss for the window (Reno
    /// halves, CUBIC keeps 70%), at most once per window and not during loss recovery, and
    /// the next data segment tells the receiver with CWR.
    fn classic_ecn_response(&mut self) {
        if self.ca != CaState::Open || self.snd_una < self.cwr_end || self.segs.is_empty() {
            return;
        }
        self.ssthresh = self.loss_ssthresh();
        self.cwnd = self.ssthresh;
        self.cwnd_cnt = 0;
        self.cwr_end = self.snd_nxt;
        self.send_cwr = true;
        self.stats.ecn_reductions += 1;
    }

    /// F-RTO found the timeout spurious: data never retransmitted has arrived. Restore the
    /// window (Linux's `tcp_undo_cwnd_reduction`), forget the loss marks, carry on.
    fn undo_spurious_timeout(&mut self) {
        self.stats.spurious_timeouts += 1;
        self.cwnd = self.cwnd.max(self.undo_cwnd);
        self.ssthresh = self.ssthresh.max(self.undo_ssthresh);
        for s in self.segs.iter_mut() {
            if s.has(LOST) {
                s.flags &= !LOST;
                self.lost_out -= 1;
                if !s.has(RETRANS) {
                    self.lost_pending -= 1;
                }
            }
        }
        self.ca = CaState::Open;
        self.frto = false;
        self.dupacks = 0;
        self.backoff = 0;
    }

    fn enter_recovery(&mut self) {
        self.stats.recoveries += 1;
        self.rounds_open = false;
        self.ca = CaState::Recovery;
        self.high_seq = self.snd_nxt;
        self.high_rxt = self.snd_una;
        self.prior_cwnd = self.cwnd.max(1);
        self.ssthresh = self.loss_ssthresh();
        self.cwnd_cnt = 0;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.mark_lost(0);
        if self.p.sack {
            self.mark_lost_by_sack();
        }
        match self.p.recovery_cwnd {
            // PRR's first step allows the fast retransmit itself.
            RecoveryCwnd::Prr => {}
            RecoveryCwnd::Halve => {
                self.cwnd = self.ssthresh;
                self.force_retx = true;
            }
        }
    }

    /// Proportional rate reduction (RFC 6937, as Linux's `tcp_cwnd_reduction`): after
    /// `delivered` more segments left the network, allow sending so that, by the end of
    /// recovery, cwnd has come down to ssthresh at the pace of the ACKs.
    fn reduce_cwnd(&mut self, delivered: u32, una_advanced: bool) {
        if self.p.recovery_cwnd != RecoveryCwnd::Prr || delivered == 0 {
            return;
        }
        self.prr_delivered += delivered;
        let in_flight = self.in_flight() as i64;
        let delta = self.ssthresh as i64 - in_flight;
        let mut sndcnt = if delta < 0 {
            let target =
                (self.ssthresh as u64 * self.prr_delivered as u64).div_ceil(self.prior_cwnd as u64);
            target as i64 - self.prr_out as i64
        } else {
            // Slow-start reduction bound: grow back towards ssthresh, at most as fast as
            // slow start.
            let s = (self.prr_delivered as i64 - self.prr_out as i64).max(delivered as i64)
                + i64::from(una_advanced);
            s.min(delta)
        };
        // The first step is the fast retransmit.
        sndcnt = sndcnt.max(i64::from(self.prr_out == 0));
        self.cwnd = (in_flight + sndcnt).clamp(1, MAX_CWND as i64) as u32;
    }

    /// Slow start and congestion avoidance for `acked` segments delivered (Linux
    /// `tcp_slow_start` / `tcp_cong_avoid_ai`), only while cwnd limits the sender.
    /// ssthresh after a loss: half the window (Reno) or 70% of it (CUBIC).
    fn loss_ssthresh(&mut self) -> u32 {
        match self.cubic.as_mut() {
            Some(c) => c.on_loss(self.cwnd),
            None => (self.cwnd / 2).max(2),
        }
    }

    fn grow(&mut self, mut acked: u32, now: SimTime) {
        let limited = self.cwnd_limited
            || (self.cwnd < self.ssthresh && self.cwnd < 2 * self.max_packets_out);
        if acked == 0 || !limited {
            return;
        }
        if self.cwnd < self.ssthresh {
            let inc = acked.min(self.ssthresh - self.cwnd);
            self.cwnd += inc;
            acked -= inc;
            if acked == 0 {
                return;
            }
        }
        // Linux's tcp_cong_avoid_ai: one more segment per `per` segments acknowledged.
        let per = match self.cubic.as_mut() {
            Some(c) => {
                let min_rtt = if self.min_rtt == SimTime::MAX {
                    0
                } else {
                    self.min_rtt
                };
                c.acks_per_increment(now, self.cwnd, min_rtt, acked)
            }
            None => self.cwnd,
        };
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= per {
            let delta = self.cwnd_cnt / per;
            self.cwnd_cnt -= delta * per;
            self.cwnd = (self.cwnd + delta).min(MAX_CWND);
        }
    }

    /// RFC 5681 4.1 / Linux `tcp_cwnd_restart`, by policy, before sending after idleness.
    fn restart_after_idle(&mut self, now: SimTime) {
        let restart = self.p.initial_window.min(self.cwnd);
        match self.p.cwnd_restart {
            CwndRestart::Never => {}
            CwndRestart::Block => {
                self.ssthresh = self.ssthresh.max(self.cwnd / 4 * 3);
                self.cwnd = self.p.initial_window;
                self.cwnd_cnt = 0;
            }
            CwndRestart::Idle => {
                let rto = self.rtt.rto(0);
                let mut idle = now.saturating_sub(self.last_send);
                if self.last_send == 0 || idle <= rto {
                    return;
                }
                self.ssthresh = self.ssthresh.max(self.cwnd / 4 * 3);
                while idle > rto && self.cwnd > restart {
                    idle -= rto;
                    self.cwnd >>= 1;
                }
                self.cwnd = self.cwnd.max(restart);
                self.cwnd_cnt = 0;
            }
        }
    }

    /// Bytes sent per slow-start round of the first transfer (a round ends when an ACK covers
    /// the data that was outstanding when it began, as Linux's HyStart counts rounds).
    fn track_round(&mut self, ack: u64) {
        if !self.rounds_open {
            return;
        }
        if ack > self.round_end {
            if self.snd_nxt > self.round_start {
                self.stats.rounds.push(self.snd_nxt - self.round_start);
            }
            self.round_start = self.snd_nxt;
            self.round_end = self.snd_nxt;
        }
        if self.stats.rounds.len() >= MAX_ROUNDS {
            self.rounds_open = false;
        }
    }

    // ------------------------------------------------------------------ receive half

    fn receive_data(&mut self, now: SimTime, seq: u64, len: u32) -> u64 {
        let end = seq + len as u64;
        if end <= self.rcv_nxt {
            self.ack_now = true; // a duplicate: tell the sender where we are
            return 0;
        }
        let before = self.rcv_nxt;
        if seq <= self.rcv_nxt {
            let filled_hole = !self.ooo.is_empty();
            self.rcv_nxt = end;
            while let Some(&(s, e)) = self.ooo.first() {
                if s > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(e);
                self.ooo.remove(0);
            }
            if filled_hole {
                self.ack_now = true;
            } else {
                self.pending_acks += 1;
                if self.p.delayed_ack == 0 || self.pending_acks >= 2 {
                    self.ack_now = true;
                } else if !self.delack_timer.is_armed() {
                    self.delack_timer.set(now + self.p.delayed_ack);
                }
            }
        } else {
            self.insert_ooo(seq, end);
            self.last_ooo = seq;
            self.ack_now = true; // out of order: ACK at once (RFC 5681 4.2)
        }
        self.rcv_nxt - before
    }

    fn insert_ooo(&mut self, mut s: u64, mut e: u64) {
        let i = self.ooo.partition_point(|r| r.1 < s);
        let mut j = i;
        while j < self.ooo.len() && self.ooo[j].0 <= e {
            s = s.min(self.ooo[j].0);
            e = e.max(self.ooo[j].1);
            j += 1;
        }
        self.ooo.splice(i..j, [(s, e)]);
    }

    fn sack_blocks(&self) -> (u8, [(u64, u64); MAX_SACK_BLOCKS]) {
        let mut blocks = [(0, 0); MAX_SACK_BLOCKS];
        if !self.p.sack || self.ooo.is_empty() {
            return (0, blocks);
        }
        // RFC 2018: the first block holds the most recently received segment.
        let first = self
            .ooo
            .iter()
            .position(|r| r.0 <= self.last_ooo && self.last_ooo < r.1)
            .unwrap_or(self.ooo.len() - 1);
        blocks[0] = self.ooo[first];
        let mut n = 1;
        for (i, r) in self.ooo.iter().enumerate().rev() {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            if i != first {
                blocks[n] = *r;
                n += 1;
            }
        }
        (n as u8, blocks)
    }

    fn emit(&mut self, seq: u64, len: u32, out: &mut Vec<Segment>) {
        let (nsack, sack) = self.sack_blocks();
        let ect = len > 0 && self.p.ecn;
        let cwr = ect && std::mem::take(&mut self.send_cwr);
        out.push(Segment {
            seq,
            len,
            ack: self.rcv_nxt,
            nsack,
            sack,
            ecn: if ect { ECT } else { 0 }
                | if self.ce_state { ECE } else { 0 }
                | if cwr { CWR } else { 0 },
        });
        self.pending_acks = 0;
        self.ack_now = false;
        self.delack_timer.clear();
    }

    /// Check the scoreboard counters against the flags (for tests).
    pub fn check_invariants(&self) -> Result<(), String> {
        let count = |f: u8| self.segs.iter().filter(|s| s.has(f)).count() as u32;
        let pending = self
            .segs
            .iter()
            .filter(|s| s.has(LOST) && !s.has(RETRANS) && !s.has(SACKED))
            .count() as u32;
        if count(SACKED) != self.sacked_out
            || count(LOST) != self.lost_out
            || count(RETRANS) != self.retrans_out
            || pending != self.lost_pending
        {
            return Err(format!(
                "scoreboard counters sacked {} lost {} retrans {} pending {} != flags {} {} {} {}",
                self.sacked_out,
                self.lost_out,
                self.retrans_out,
                self.lost_pending,
                count(SACKED),
                count(LOST),
                count(RETRANS),
                pending
            ));
        }
        if self.snd_una > self.snd_nxt || self.snd_nxt > self.write_end {
            return Err("sequence space out of order".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{from_ms, from_us, PS_PER_S};

    const MSS: u64 = 1000;

    fn params(sack: bool) -> TcpParams {
        TcpParams {
            mss: MSS,
            initial_window: 10,
            dupthresh: 3,
            sack,
            limited_transmit: true,
            receive_window: 1 << 30,
            delayed_ack: 0,
            cwnd_restart: CwndRestart::Never,
            recovery_cwnd: RecoveryCwnd::Prr,
            congestion_control: CongestionControl::Reno,
            frto: false,
            ecn: false,
            dctcp_g: 1.0 / 16.0,
        }
    }

    fn seg(seq: u64, len: u32, ack: u64, sack: &[(u64, u64)]) -> Incoming<'_> {
        Incoming {
            seq,
            len,
            ack,
            sack,
            ecn: 0,
        }
    }

    /// A connected endpoint whose RTT estimator has a 100 us sample, RTOmin 200 ms, 1 us clock.
    fn endpoint(p: TcpParams) -> Endpoint {
        let rtt = RttEstimator::new(from_ms(200), 120 * PS_PER_S, PS_PER_S, from_us(1));
        Endpoint::new(p, rtt, Some(from_us(100)))
    }

    /// An endpoint that has sent `n` full segments at t = 0.
    fn sender_with_flight(sack: bool, n: u64) -> (Endpoint, Vec<Segment>) {
        let mut e = endpoint(params(sack));
        let mut out = Vec::new();
        e.write(0, n * MSS, &mut out);
        (e, out)
    }

    fn ack(e: &mut Endpoint, now: SimTime, ack: u64, sack: &[(u64, u64)]) -> Vec<Segment> {
        let mut out = Vec::new();
        e.on_segment(now, &seg(0, 0, ack, sack), &mut out);
        e.check_invariants().unwrap();
        out
    }

    #[test]
    fn initial_window_goes_out_at_once() {
        let (e, out) = sender_with_flight(true, 50);
        assert_eq!(out.len(), 10);
        assert_eq!(out[9].seq, 9 * MSS);
        assert_eq!(e.packets_out(), 10);
    }

    #[test]
    fn slow_start_sends_two_segments_per_acked_segment() {
        let (mut e, _) = sender_with_flight(true, 50);
        let out = ack(&mut e, from_us(100), MSS, &[]);
        assert_eq!(out.len(), 2);
        assert_eq!(e.cwnd(), 11);
    }

    #[test]
    fn fast_retransmit_after_triple_duplicate_ack_and_not_before() {
        for sack in [true, false] {
            let (mut e, _) = sender_with_flight(sack, 10);
            let t = from_us(100);
            // Segment 0 lost; segments 1.. arrive and are SACKed one by one.
            for k in 1..=2u64 {
                let out = ack(&mut e, t, 0, &[(MSS, (k + 1) * MSS)]);
                assert!(
                    out.iter().all(|s| s.seq != 0),
                    "no retransmission at dupack {k}"
                );
            }
            let out = ack(&mut e, t, 0, &[(MSS, 4 * MSS)]);
            assert_eq!(out.first().map(|s| s.seq), Some(0), "sack={sack}");
            assert_eq!(e.stats.recoveries, 1);
            assert_eq!(e.stats.retx_fast, 1);
        }
    }

    #[test]
    fn limited_transmit_sends_new_data_on_the_first_two_dupacks() {
        let mut e = endpoint(params(true));
        let mut out = Vec::new();
        e.write(0, 100 * MSS, &mut out);
        // The whole window is out: only a dupack can release more data.
        let out = ack(&mut e, from_us(100), 0, &[(MSS, 2 * MSS)]);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 10 * MSS);
        let mut off = endpoint(TcpParams {
            limited_transmit: false,
            ..params(true)
        });
        let mut o = Vec::new();
        off.write(0, 100 * MSS, &mut o);
        assert!(ack(&mut off, from_us(100), 0, &[(MSS, 2 * MSS)]).is_empty());
    }

    #[test]
    fn retransmission_timer_fires_at_rto_not_a_tick_before() {
        let (mut e, _) = sender_with_flight(true, 1);
        // RTO = max(200 ms, 100 us + 4 * 50 us).
        assert_eq!(e.rto_timer.deadline, Some(from_ms(200)));
        let mut out = Vec::new();
        e.on_rto(from_ms(200), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 0);
        assert_eq!(e.stats.timeouts, 1);
        assert_eq!(e.cwnd(), 1);
        // Backed off: the next timeout is 400 ms later.
        assert_eq!(e.rto_timer.deadline, Some(from_ms(600)));
    }

    #[test]
    fn successive_timeouts_are_counted_as_one_run() {
        let (mut e, _) = sender_with_flight(true, 1);
        let mut out = Vec::new();
        e.on_rto(from_ms(200), &mut out);
        e.on_rto(from_ms(600), &mut out);
        ack(&mut e, from_ms(601), MSS, &[]);
        assert_eq!(e.stats.timeout_runs[1], 1);
        assert_eq!(e.stats.max_timeout_run, 2);
        assert!(!e.rto_timer.is_armed(), "nothing outstanding");
    }

    #[test]
    fn after_a_timeout_sacked_segments_are_not_resent() {
        let (mut e, _) = sender_with_flight(true, 4);
        ack(&mut e, from_us(100), 0, &[(2 * MSS, 3 * MSS)]);
        let mut out = Vec::new();
        e.on_rto(from_ms(200), &mut out);
        let out = ack(&mut e, from_ms(201), MSS, &[(2 * MSS, 3 * MSS)]);
        let resent: Vec<u64> = out.iter().map(|s| s.seq).collect();
        assert_eq!(resent, vec![MSS, 3 * MSS]);
    }

    #[test]
    fn newreno_partial_ack_retransmits_the_next_hole() {
        let (mut e, _) = sender_with_flight(false, 10);
        let t = from_us(100);
        for _ in 0..3 {
            ack(&mut e, t, 0, &[]);
        }
        // The retransmission of 0 arrives; segment 1 was lost too.
        let out = ack(&mut e, from_us(200), MSS, &[]);
        assert_eq!(out.first().map(|s| s.seq), Some(MSS));
        assert_eq!(e.stats.timeouts, 0);
    }

    #[test]
    fn lost_retransmission_is_detected_by_a_later_sack() {
        let (mut e, _) = sender_with_flight(true, 10);
        let t = from_us(100);
        for k in 1..=3u64 {
            ack(&mut e, t, 0, &[(MSS, (k + 1) * MSS)]);
        }
        // The retransmission of 0 went out with snd_nxt = 12 segments; SACKs for data sent
        // after it arrive, the retransmission does not: resend it without waiting for the RTO.
        let out = ack(&mut e, from_us(300), 0, &[(MSS, 13 * MSS)]);
        assert!(out.iter().any(|s| s.seq == 0), "{out:?}");
        assert_eq!(e.stats.timeouts, 0);
    }

    #[test]
    fn delayed_ack_acknowledges_every_second_segment() {
        let mut r = endpoint(TcpParams {
            delayed_ack: from_ms(40),
            ..params(true)
        });
        let mut out = Vec::new();
        r.on_segment(0, &seg(0, MSS as u32, 0, &[]), &mut out);
        r.flush_ack(&mut out);
        assert!(out.is_empty());
        assert_eq!(r.delack_timer.deadline, Some(from_ms(40)));
        r.on_segment(1, &seg(MSS, MSS as u32, 0, &[]), &mut out);
        r.flush_ack(&mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].ack, 2 * MSS);
        assert!(!r.delack_timer.is_armed());
    }

    #[test]
    fn out_of_order_segment_is_acked_at_once_with_its_sack_block_first() {
        let mut r = endpoint(params(true));
        let mut out = Vec::new();
        r.on_segment(0, &seg(2 * MSS, MSS as u32, 0, &[]), &mut out);
        r.on_segment(0, &seg(4 * MSS, MSS as u32, 0, &[]), &mut out);
        r.flush_ack(&mut out);
        let last = out.last().unwrap();
        assert_eq!(last.ack, 0);
        assert_eq!(last.nsack, 2);
        assert_eq!(last.sack[0], (4 * MSS, 5 * MSS));
        assert_eq!(last.sack[1], (2 * MSS, 3 * MSS));
        // Filling the hole delivers everything contiguous.
        let got = r.on_segment(0, &seg(0, 2 * MSS as u32, 0, &[]), &mut out);
        assert_eq!(got, 3 * MSS);
    }

    #[test]
    fn block_restart_begins_every_response_from_the_initial_window() {
        let mut e = endpoint(TcpParams {
            cwnd_restart: CwndRestart::Block,
            initial_window: 1,
            ..params(true)
        });
        let mut out = Vec::new();
        e.write(0, 3 * MSS, &mut out);
        ack(&mut e, from_us(100), MSS, &[]);
        ack(&mut e, from_us(200), 3 * MSS, &[]);
        assert!(e.cwnd() > 1);
        out.clear();
        e.write(from_us(300), 3 * MSS, &mut out);
        assert_eq!(out.len(), 1);
    }
    #[test]
    fn rtt_after_a_timeout_comes_from_no_retransmitted_segment() {
        let (mut e, _) = sender_with_flight(true, 4);
        // Segment 0 lost, 1..4 SACKed; the RTO resends 0 and its ACK covers everything.
        ack(&mut e, from_us(100), 0, &[(MSS, 4 * MSS)]);
        let t = e.rto_timer.deadline.unwrap();
        let mut out = Vec::new();
        e.on_rto(t, &mut out);
        ack(&mut e, t + from_us(100), 4 * MSS, &[]);
        assert_eq!(
            e.rtt.srtt(),
            Some(from_us(100)),
            "Karn: no sample, the handshake's stays"
        );
    }

    #[test]
    fn rtt_sample_is_the_oldest_newly_acked_segment() {
        let (mut e, _) = sender_with_flight(true, 10);
        ack(&mut e, from_us(300), 2 * MSS, &[]);
        // (7·100 + 300) / 8 = 125 us: the oldest segment covered was sent at 0.
        assert_eq!(e.rtt.srtt(), Some(from_us(125)));
    }

    #[test]
    fn sack_duplicate_acks_without_new_sack_information_do_not_start_recovery() {
        let (mut e, _) = sender_with_flight(true, 10);
        ack(&mut e, from_us(100), MSS, &[]);
        for _ in 0..3 {
            ack(&mut e, from_us(110), MSS, &[]);
        }
        assert_eq!(e.stats.recoveries, 0);
    }

    #[test]
    fn a_partly_acknowledged_head_is_retransmitted_after_a_timeout() {
        let (mut e, _) = sender_with_flight(true, 2);
        ack(&mut e, from_us(100), MSS / 2, &[]);
        let mut out = Vec::new();
        e.on_rto(e.rto_timer.deadline.unwrap(), &mut out);
        assert_eq!(out.first().map(|s| s.seq), Some(0));
        e.check_invariants().unwrap();
    }

    #[test]
    fn newreno_partial_ack_counts_one_delivered_segment_per_filled_hole() {
        let (mut e, _) = sender_with_flight(false, 10);
        // Segments 0 and 5 lost, the other 8 arrive: 8 duplicate ACKs.
        for _ in 0..8 {
            ack(&mut e, from_us(100), 0, &[]);
        }
        let before = e.prr_delivered;
        ack(&mut e, from_us(200), 5 * MSS, &[]);
        assert_eq!(
            e.prr_delivered,
            before + 1,
            "as Linux's tcp_remove_reno_sacks"
        );
        assert_eq!(e.dupacks, 4, "the receiver still holds segments 6..9");
    }

    /// Random ACKs and SACKs (also inside segments), writes and timeouts: the scoreboard's
    /// counters match its flags, a timer runs whenever data is outstanding, and a connection
    /// is never idle with unsent data and an open window.
    #[test]
    fn random_acks_keep_the_scoreboard_consistent_and_the_timer_armed() {
        use crate::rng::Rng;
        for seed in 0..500u64 {
            let mut r = Rng::new(seed, 99);
            let p = TcpParams {
                initial_window: 1 + r.up_to(12) as u32,
                dupthresh: 1 + r.up_to(4) as u32,
                sack: r.up_to(1) == 1,
                limited_transmit: r.up_to(1) == 1,
                receive_window: MSS * (1 + r.up_to(40)),
                cwnd_restart: [CwndRestart::Never, CwndRestart::Idle, CwndRestart::Block]
                    [r.up_to(2) as usize],
                recovery_cwnd: if r.up_to(1) == 1 {
                    RecoveryCwnd::Prr
                } else {
                    RecoveryCwnd::Halve
                },
                frto: r.up_to(1) == 1,
                congestion_control: if r.up_to(1) == 1 {
                    CongestionControl::Cubic
                } else {
                    CongestionControl::Reno
                },
                ..params(true)
            };
            let mut e = endpoint(p);
            let mut out = Vec::new();
            let mut now = 0;
            let mut got: Vec<(u64, u64)> = Vec::new();
            for step in 0..300 {
                now += from_us(1 + r.up_to(200));
                out.clear();
                match r.up_to(9) {
                    0 => e.write(now, 1 + r.up_to(20_000), &mut out),
                    1 if e.rto_timer.is_armed() => {
                        now = e.rto_timer.deadline.unwrap().max(now);
                        e.rto_timer.clear();
                        e.on_rto(now, &mut out);
                    }
                    _ => {
                        for s in e.segs.iter() {
                            if r.up_to(2) == 0 && !got.contains(&(s.seq, s.end())) {
                                got.push((s.seq, s.end()));
                            }
                        }
                        got.sort();
                        let mut cum = e.snd_una;
                        for &(a, b) in &got {
                            if a <= cum {
                                cum = cum.max(b);
                            }
                        }
                        let mut blocks: Vec<(u64, u64)> = Vec::new();
                        for &(a, b) in got.iter().filter(|x| x.0 > cum) {
                            match blocks.last_mut() {
                                Some(l) if l.1 >= a => l.1 = l.1.max(b),
                                _ => blocks.push((a, b)),
                            }
                        }
                        if r.up_to(3) == 0 && cum > e.snd_una {
                            cum = e.snd_una + r.up_to(cum - e.snd_una); // inside a segment
                        }
                        blocks.reverse();
                        blocks.truncate(MAX_SACK_BLOCKS);
                        e.on_segment(now, &seg(0, 0, cum, &blocks), &mut out);
                    }
                }
                let at = format!("seed {seed} step {step}");
                e.check_invariants().unwrap_or_else(|m| panic!("{at}: {m}"));
                assert!(
                    e.segs.is_empty() || e.rto_timer.is_armed(),
                    "{at}: no timer"
                );
                assert!(
                    !e.segs.is_empty() || e.snd_nxt >= e.write_end,
                    "{at}: idle with unsent data"
                );
            }
        }
    }

    #[test]
    fn frto_undoes_a_spurious_timeout_when_original_data_arrives() {
        let mut e = endpoint(TcpParams {
            frto: true,
            ..params(true)
        });
        let mut out = Vec::new();
        e.write(0, 10 * MSS, &mut out);
        // The ACKs were only delayed: the timer fires, the head goes out again...
        out.clear();
        e.on_rto(e.rto_timer.deadline.unwrap(), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(e.cwnd(), 1);
        // ...and the original segments' ACKs arrive: the timeout was spurious.
        ack(&mut e, from_ms(201), 2 * MSS, &[]);
        assert_eq!(e.stats.spurious_timeouts, 1);
        assert_eq!(e.cwnd(), 10);
        assert_eq!(e.ca, CaState::Open);
    }

    #[test]
    fn frto_falls_back_to_resending_when_the_loss_was_real() {
        let mut e = endpoint(TcpParams {
            frto: true,
            ..params(true)
        });
        let mut out = Vec::new();
        e.write(0, 4 * MSS, &mut out);
        out.clear();
        e.on_rto(e.rto_timer.deadline.unwrap(), &mut out);
        // Only the head's retransmission is acknowledged, and there is no new data to send:
        // F-RTO gives up and the rest is resent in slow start.
        let out = ack(&mut e, from_ms(201), MSS, &[]);
        assert_eq!(e.stats.spurious_timeouts, 0);
        assert_eq!(
            out.iter().map(|s| s.seq).collect::<Vec<_>>(),
            vec![MSS, 2 * MSS]
        );
    }
}
