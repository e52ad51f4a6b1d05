//! The send half of an endpoint: what to send next, loss recovery and the window.
//!
//! Packets in flight are counted the way Linux does (see `scoreboard.rs`), and the same count
//! drives normal sending, limited transmit (RFC 3042: a dup ACK or SACK takes a packet out of
//! flight), RFC 6675 recovery and recovery after a timeout. Without SACK, duplicate ACKs stand
//! in for SACKed packets (as in Linux's Reno emulation) and partial ACKs mark the next hole
//! lost (NewReno, RFC 6582). During fast recovery cwnd follows PRR (RFC 6937) or is halved;
//! after a timeout F-RTO (RFC 5682) decides whether it was spurious and undoes the cut if so.
//! How cwnd answers losses, ACKs and ECN echoes is the congestion control's (`cc/`).
//!
//! It puts segments into an [`Outbox`], which adds the receive half's acknowledgment, and
//! leaves the retransmission timer's deadline in `rto_at`.

use crate::config::{CwndRestart, RecoveryCwnd};
use crate::net::{CWR, ECT};
use crate::tcp::cc::{AnyController, Controller};
use crate::tcp::receiver::Outbox;
use crate::tcp::rto_policy::RtoPolicy;
use crate::tcp::rtt::RttEstimator;
use crate::tcp::scoreboard::Scoreboard;
use crate::tcp::TcpParams;
use crate::units::SimTime;

/// Largest congestion window, segments (keeps arithmetic far from overflow).
const MAX_CWND: u32 = 1 << 24;
/// Bytes-per-round entries kept for the first transfer.
const MAX_ROUNDS: usize = 32;
/// Successive-timeout runs longer than this are counted in the last bucket.
pub const TIMEOUT_RUN_BUCKETS: usize = 16;

/// Congestion-control state (Linux's `icsk_ca_state`, without Disorder and CWR).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CaState {
    /// Normal sending.
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

/// The send half of an endpoint.
#[derive(Debug, Clone)]
pub(super) struct Sender {
    /// The connection's parameters.
    p: TcpParams,
    /// Oldest unacknowledged byte.
    pub(super) snd_una: u64,
    /// Next new byte to send.
    pub(super) snd_nxt: u64,
    /// End of the data the application has written.
    pub(super) write_end: u64,
    /// Sent segments not yet cumulatively acknowledged.
    pub(super) board: Scoreboard,
    /// Duplicate ACKs since the last new ACK (without SACK, also the stand-in for sacked_out).
    pub(super) dupacks: u32,
    /// Congestion window, segments.
    pub(super) cwnd: u32,
    /// Fractional growth in congestion avoidance.
    cwnd_cnt: u32,
    /// Slow-start threshold, segments.
    ssthresh: u32,
    /// Congestion-control state.
    pub(super) ca: CaState,
    /// The congestion control.
    cc: AnyController,
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
    /// cwnd before the timeout, restored if it was spurious.
    undo_cwnd: u32,
    /// ssthresh before the timeout, restored if it was spurious.
    undo_ssthresh: u32,
    /// This ACK delivered (acked or SACKed) a segment that was never retransmitted.
    orig_delivered: bool,
    /// PRR (RFC 6937): cwnd when recovery began.
    prior_cwnd: u32,
    /// PRR: segments delivered since recovery began.
    pub(super) prr_delivered: u32,
    /// PRR: segments sent since recovery began.
    prr_out: u32,
    /// Whether the last send attempt stopped because of cwnd.
    cwnd_limited: bool,
    /// Most packets outstanding in the current window (cwnd validation).
    max_packets_out: u32,
    /// The current window of cwnd validation ends when this byte is acknowledged.
    max_packets_seq: u64,
    /// The RTT estimator.
    pub(super) rtt: RttEstimator,
    /// How the timeout is drawn (randomization), if not the estimator's alone.
    rto_policy: Option<RtoPolicy>,
    /// Successive RTO doublings.
    backoff: u32,
    /// Timeouts since the last ACK of new data.
    timeout_run: u32,
    /// Last time new data or a retransmission was sent.
    last_send: SimTime,
    /// When the retransmission timer is due, if armed.
    pub(super) rto_at: Option<SimTime>,
    /// The current slow-start round ends when an ACK passes this byte.
    round_end: u64,
    /// `snd_nxt` when the current round began.
    round_start: u64,
    /// Rounds of the first transfer are still being recorded.
    rounds_open: bool,
    /// End of the first transfer.
    first_end: u64,
    /// Classic ECN: the next data segment carries CWR.
    send_cwr: bool,
    /// No new ECN reduction until this byte is acknowledged (one per window).
    cwr_end: u64,
    /// Smallest RTT sample seen.
    min_rtt: SimTime,
    /// Counters.
    pub(super) stats: SenderStats,
}

impl Sender {
    /// A send half with nothing written yet.
    pub(super) fn new(p: TcpParams, rtt: RttEstimator) -> Sender {
        Sender {
            cwnd: p.initial_window,
            cc: AnyController::new(p.congestion_control, p.dctcp_g),
            p,
            snd_una: 0,
            snd_nxt: 0,
            write_end: 0,
            board: Scoreboard::default(),
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
            rto_at: None,
            round_end: 0,
            round_start: 0,
            rounds_open: false,
            first_end: 0,
            send_cwr: false,
            cwr_end: 0,
            min_rtt: SimTime::MAX,
            stats: SenderStats::default(),
        }
    }

    /// Draw timeouts with `policy` (RTO randomization).
    pub(super) fn set_rto_policy(&mut self, policy: RtoPolicy) {
        self.rto_policy = Some(policy);
    }

    /// The application writes `bytes` more.
    pub(super) fn write(&mut self, now: SimTime, bytes: u64, out: &mut Outbox<'_>) {
        if self.board.is_empty() {
            self.restart_after_idle(now);
        }
        if self.write_end == 0 {
            self.rounds_open = true;
            self.first_end = bytes;
        }
        self.write_end += bytes;
        self.try_send(now, out);
    }

    /// The retransmission timer fired (RFC 6298 (5.4)-(5.6)).
    pub(super) fn on_rto(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        self.rto_at = None;
        if self.board.is_empty() {
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
            self.ssthresh = self.cc.ssthresh_after_loss(self.cwnd);
        }
        self.cwnd = 1;
        self.cwnd_cnt = 0;
        self.board.mark_all_lost(self.snd_una);
        self.dupacks = 0;
        self.force_retx = false;
        self.ca = CaState::Loss;
        self.high_seq = self.snd_nxt;
        self.backoff = (self.backoff + 1).min(62);
        self.try_send(now, out);
        self.arm_rto(now);
    }

    fn in_flight(&self) -> u32 {
        let packets_out = self.board.packets_out();
        let left = if !self.p.sack {
            // Reno: each duplicate ACK means one segment has left the network.
            self.dupacks.min(packets_out)
        } else {
            self.board.sacked_out()
        };
        let left = if self.ca == CaState::Open && !self.p.limited_transmit {
            0
        } else {
            left
        };
        (packets_out + self.board.retrans_out()).saturating_sub(left + self.board.lost_out())
    }

    /// Send what cwnd, the receive window and the data allow: lost segments first, then new
    /// data, then RFC 6675's rescue retransmission.
    pub(super) fn try_send(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        if self.force_retx {
            self.force_retx = false;
            if let Some(i) = self.board.next_lost() {
                self.retransmit(i, now, out);
            }
        }
        loop {
            if self.in_flight() >= self.cwnd {
                self.cwnd_limited = self.board.lost_pending() > 0 || self.snd_nxt < self.write_end;
                break;
            }
            if self.board.lost_pending() > 0 && !(self.frto && self.frto_head_sent) {
                if let Some(i) = self.board.next_lost() {
                    self.frto_head_sent |= self.frto;
                    self.retransmit(i, now, out);
                    continue;
                }
                self.board.forget_pending();
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
            self.board.push(self.snd_nxt, len as u32, now);
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
        let out = self.board.packets_out();
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
        if self.rto_at.is_none() {
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
        self.rto_at = Some(self.rtt.to_tick(now.saturating_add(timeout)));
    }

    fn retransmit(&mut self, i: usize, now: SimTime, out: &mut Outbox<'_>) {
        let (seq, len) = self.board.retransmitted(i, now, self.snd_nxt);
        self.high_rxt = self.high_rxt.max(seq + len as u64);
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
        self.board.rescue_candidate(self.high_rxt)
    }

    /// Put a segment out: ECT on data of ECN-capable connections, CWR once after an ECN
    /// reduction (RFC 3168 6.1.2). The outbox adds the receive half's acknowledgment.
    fn emit(&mut self, seq: u64, len: u32, out: &mut Outbox<'_>) {
        let ect = len > 0 && self.p.ecn;
        let cwr = ect && std::mem::take(&mut self.send_cwr);
        out.push(
            seq,
            len,
            if ect { ECT } else { 0 } | if cwr { CWR } else { 0 },
        );
    }

    /// An ACK (cumulative `ack`, SACK blocks `sack`) arrived, on a segment with data or not.
    pub(super) fn on_ack(&mut self, now: SimTime, ack: u64, sack: &[(u64, u64)], has_data: bool) {
        if ack > self.snd_nxt {
            return; // acknowledges data never sent: ignore (RFC 793)
        }
        self.orig_delivered = false;
        let mut newly_sacked = 0;
        if self.p.sack {
            let mut highest = 0;
            for &(s, e) in sack {
                if e > ack.max(self.snd_una) {
                    let (n, orig) = self.board.mark_sacked(s.max(ack), e, self.high_seq);
                    newly_sacked += n;
                    self.orig_delivered |= orig;
                    highest = highest.max(e);
                }
            }
            if newly_sacked > 0 && self.ca != CaState::Open {
                self.board.mark_lost_retransmissions(highest);
            }
        }
        let prior_una = self.snd_una;
        let mut acked = 0u32;
        let mut reno_delivered = 0u32;
        if ack > self.snd_una {
            // Linux's tcp_clean_rtx_queue: the RTT of the oldest segment this ACK newly
            // covers; Karn's algorithm: none at all if any covered segment was retransmitted.
            let cleaned = self.board.clean(ack, self.high_seq);
            acked = cleaned.acked;
            self.orig_delivered |= cleaned.orig_delivered;
            self.snd_una = ack;
            if let (Some(sent), false) = (cleaned.first_sent, cleaned.retransmitted) {
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
            if self.board.is_empty() {
                self.rto_at = None;
            } else {
                self.arm_rto(now);
            }
        } else if ack == self.snd_una
            && !has_data
            && !self.board.is_empty()
            && (!self.p.sack || newly_sacked > 0)
        {
            // RFC 6675: with SACK, a duplicate ACK counts only if it SACKs new data.
            self.dupacks += 1;
        }
        // Without SACK a duplicate ACK stands for one segment delivered.
        let reno_dup = !self.p.sack && ack == prior_una && !has_data && !self.board.is_empty();
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
                    || (self.p.sack
                        && newly_sacked > 0
                        && self.board.head_lost_by_sack(self.p.dupthresh));
                if enter && !self.board.is_empty() {
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
                        self.board.mark_lost(0);
                        self.force_retx = true;
                    }
                } else if newly_sacked > 0 || ack > prior_una {
                    self.board.mark_lost_by_sack(self.p.dupthresh);
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

    /// The ECN feedback of an ACK that moved `snd_una` up from `prior_una`. The congestion
    /// control sees every ACK (DCTCP's α, RFC 8257 3.3); an echo cuts the window at most once
    /// per window and not during loss recovery. DCTCP answers every echo; classic ECN (RFC 3168
    /// 6.1.2) only on connections that negotiated it, and tells the receiver with CWR.
    pub(super) fn on_ecn_feedback(&mut self, prior_una: u64, ece: bool) {
        let acked = self.snd_una.saturating_sub(prior_una);
        self.cc.on_ack(acked, ece, self.snd_una, self.snd_nxt);
        let dctcp = self.cc.is_dctcp();
        if !ece || !(dctcp || self.p.ecn) {
            return;
        }
        if self.ca != CaState::Open || self.snd_una < self.cwr_end || self.board.is_empty() {
            return;
        }
        self.ssthresh = self.cc.ssthresh_after_ecn(self.cwnd);
        self.cwnd = self.ssthresh;
        self.cwnd_cnt = 0;
        self.cwr_end = self.snd_nxt;
        if !dctcp {
            self.send_cwr = true;
        }
        self.stats.ecn_reductions += 1;
    }

    /// F-RTO found the timeout spurious: data never retransmitted has arrived. Restore the
    /// window (Linux's `tcp_undo_cwnd_reduction`), forget the loss marks, carry on.
    fn undo_spurious_timeout(&mut self) {
        self.stats.spurious_timeouts += 1;
        self.cwnd = self.cwnd.max(self.undo_cwnd);
        self.ssthresh = self.ssthresh.max(self.undo_ssthresh);
        self.board.clear_lost();
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
        self.ssthresh = self.cc.ssthresh_after_loss(self.cwnd);
        self.cwnd_cnt = 0;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.board.mark_lost(0);
        if self.p.sack {
            self.board.mark_lost_by_sack(self.p.dupthresh);
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
        let min_rtt = if self.min_rtt == SimTime::MAX {
            0
        } else {
            self.min_rtt
        };
        let per = self.cc.acks_per_increment(now, self.cwnd, min_rtt, acked);
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

    /// Check the scoreboard and the sequence space.
    pub(super) fn check_invariants(&self) -> Result<(), String> {
        self.board.check_invariants()?;
        if self.snd_una > self.snd_nxt || self.snd_nxt > self.write_end {
            return Err("sequence space out of order".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::CongestionControl;
    use crate::net::MAX_SACK_BLOCKS;
    use crate::tcp::testing::*;
    use crate::units::{from_ms, from_us};

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
            assert_eq!(e.stats().recoveries, 1);
            assert_eq!(e.stats().retx_fast, 1);
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
        assert_eq!(rto_at(&e), Some(from_ms(200)));
        let mut out = Vec::new();
        e.on_rto(from_ms(200), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 0);
        assert_eq!(e.stats().timeouts, 1);
        assert_eq!(e.cwnd(), 1);
        // Backed off: the next timeout is 400 ms later.
        assert_eq!(rto_at(&e), Some(from_ms(600)));
    }

    #[test]
    fn successive_timeouts_are_counted_as_one_run() {
        let (mut e, _) = sender_with_flight(true, 1);
        let mut out = Vec::new();
        e.on_rto(from_ms(200), &mut out);
        e.on_rto(from_ms(600), &mut out);
        ack(&mut e, from_ms(601), MSS, &[]);
        assert_eq!(e.stats().timeout_runs[1], 1);
        assert_eq!(e.stats().max_timeout_run, 2);
        assert!(rto_at(&e).is_none(), "nothing outstanding");
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
        assert_eq!(e.stats().timeouts, 0);
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
        assert_eq!(e.stats().timeouts, 0);
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
        let t = rto_at(&e).unwrap();
        let mut out = Vec::new();
        e.on_rto(t, &mut out);
        ack(&mut e, t + from_us(100), 4 * MSS, &[]);
        assert_eq!(
            e.tx.rtt.srtt(),
            Some(from_us(100)),
            "Karn: no sample, the handshake's stays"
        );
    }

    #[test]
    fn rtt_sample_is_the_oldest_newly_acked_segment() {
        let (mut e, _) = sender_with_flight(true, 10);
        ack(&mut e, from_us(300), 2 * MSS, &[]);
        // (7·100 + 300) / 8 = 125 us: the oldest segment covered was sent at 0.
        assert_eq!(e.tx.rtt.srtt(), Some(from_us(125)));
    }

    #[test]
    fn sack_duplicate_acks_without_new_sack_information_do_not_start_recovery() {
        let (mut e, _) = sender_with_flight(true, 10);
        ack(&mut e, from_us(100), MSS, &[]);
        for _ in 0..3 {
            ack(&mut e, from_us(110), MSS, &[]);
        }
        assert_eq!(e.stats().recoveries, 0);
    }

    #[test]
    fn a_partly_acknowledged_head_is_retransmitted_after_a_timeout() {
        let (mut e, _) = sender_with_flight(true, 2);
        ack(&mut e, from_us(100), MSS / 2, &[]);
        let mut out = Vec::new();
        e.on_rto(rto_at(&e).unwrap(), &mut out);
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
        let before = e.tx.prr_delivered;
        ack(&mut e, from_us(200), 5 * MSS, &[]);
        assert_eq!(
            e.tx.prr_delivered,
            before + 1,
            "as Linux's tcp_remove_reno_sacks"
        );
        assert_eq!(e.tx.dupacks, 4, "the receiver still holds segments 6..9");
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
                    1 if rto_at(&e).is_some() => {
                        now = rto_at(&e).unwrap().max(now);
                        e.on_rto(now, &mut out);
                    }
                    _ => {
                        for s in e.tx.board.iter() {
                            if r.up_to(2) == 0 && !got.contains(&(s.seq, s.end())) {
                                got.push((s.seq, s.end()));
                            }
                        }
                        got.sort();
                        let mut cum = e.tx.snd_una;
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
                        if r.up_to(3) == 0 && cum > e.tx.snd_una {
                            cum = e.tx.snd_una + r.up_to(cum - e.tx.snd_una); // inside a segment
                        }
                        blocks.reverse();
                        blocks.truncate(MAX_SACK_BLOCKS);
                        e.on_segment(now, &seg(0, 0, cum, &blocks), &mut out);
                    }
                }
                let at = format!("seed {seed} step {step}");
                e.check_invariants().unwrap_or_else(|m| panic!("{at}: {m}"));
                assert!(
                    e.tx.board.is_empty() || rto_at(&e).is_some(),
                    "{at}: no timer"
                );
                assert!(
                    !e.tx.board.is_empty() || e.tx.snd_nxt >= e.tx.write_end,
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
        e.on_rto(rto_at(&e).unwrap(), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(e.cwnd(), 1);
        // ...and the original segments' ACKs arrive: the timeout was spurious.
        ack(&mut e, from_ms(201), 2 * MSS, &[]);
        assert_eq!(e.stats().spurious_timeouts, 1);
        assert_eq!(e.cwnd(), 10);
        assert_eq!(e.tx.ca, CaState::Open);
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
        e.on_rto(rto_at(&e).unwrap(), &mut out);
        // Only the head's retransmission is acknowledged, and there is no new data to send:
        // F-RTO gives up and the rest is resent in slow start.
        let out = ack(&mut e, from_ms(201), MSS, &[]);
        assert_eq!(e.stats().spurious_timeouts, 0);
        assert_eq!(
            out.iter().map(|s| s.seq).collect::<Vec<_>>(),
            vec![MSS, 2 * MSS]
        );
    }

    #[test]
    fn classic_ecn_echo_halves_cwnd_once_per_window_and_the_next_data_carries_cwr() {
        use crate::net::{CWR, ECE, ECT};
        use crate::tcp::Incoming;
        let mut e = endpoint(TcpParams {
            ecn: true,
            ..params(true)
        });
        let mut out = Vec::new();
        e.write(0, 100 * MSS, &mut out);
        assert!(out.iter().all(|s| s.ecn & ECT != 0 && s.ecn & CWR == 0));
        let echo = |ack: u64| Incoming {
            ecn: ECE,
            ..seg(0, 0, ack, &[])
        };
        out.clear();
        e.on_segment(from_us(100), &echo(MSS), &mut out);
        // Slow start took cwnd to 11 first; the echo halves it.
        assert_eq!(e.cwnd(), 5);
        assert_eq!(e.stats().ecn_reductions, 1);
        e.on_segment(from_us(110), &echo(2 * MSS), &mut out);
        assert_eq!(e.stats().ecn_reductions, 1, "once per window");
        // The window drains: new data goes out, the first segment telling the receiver.
        let out = ack(&mut e, from_us(200), 10 * MSS, &[]);
        assert!(out.len() >= 2, "{out:?}");
        assert_ne!(out[0].ecn & CWR, 0);
        assert!(out[1..].iter().all(|s| s.ecn & CWR == 0));
    }
}
