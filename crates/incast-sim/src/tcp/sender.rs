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

use crate::config::{AckOrder, CongestionControl, CwndLimited, CwndRestart, RecoveryCwnd};
use crate::net::{CWR, ECT};
use crate::rng::Rng;
use crate::tcp::cc::hystart::HyStart;
use crate::tcp::cc::{
    AckState, AnyController, CaState, Controller, GSO_MAX_BYTES, MAX_CWND, PACING_SHIFT,
};
use crate::tcp::params::TcpParams;
use crate::tcp::rack::Rack;
use crate::tcp::rate::Rate;
use crate::tcp::receiver::Outbox;
use crate::tcp::rto_policy::RtoPolicy;
use crate::tcp::rtt::RttEstimator;
use crate::tcp::scoreboard::{Scoreboard, TxState};
use crate::units::{SimTime, PS_PER_MS, PS_PER_S};

/// Bytes-per-round entries kept for the first transfer.
const MAX_ROUNDS: usize = 32;
/// Successive-timeout runs longer than this are counted in the last bucket.
pub const TIMEOUT_RUN_BUCKETS: usize = 16;
/// Linux's `TCP_TIMEOUT_MIN_US`: added to a probe timeout with several segments out.
const TIMEOUT_MIN: SimTime = 2 * PS_PER_MS;
/// Probe timeout before any RTT sample (Linux's `TCP_TIMEOUT_INIT`; connections here always
/// have the handshake's sample).
const PROBE_WITHOUT_RTT: SimTime = PS_PER_S;
/// The tail loss probe's timeout (before the RTO caps it): 2·SRTT plus RTOmin for a `lone`
/// segment, whose ACK a delayed-ACK receiver may hold back, else plus 2 ms, in whole ticks.
pub fn probe_timeout(rtt: &RttEstimator, lone: bool) -> SimTime {
    match rtt.srtt() {
        Some(srtt) => {
            let extra = if lone { rtt.rto_min() } else { TIMEOUT_MIN };
            rtt.ticks(2 * srtt + extra)
        }
        None => PROBE_WITHOUT_RTT,
    }
}

/// Segments a connection sends before Linux starts pacing it (`tcp_update_skb_after_send`).
const UNPACED_SEGMENTS: u64 = 10;

/// What the retransmission timer is armed for (Linux's `icsk_pending`): RACK-TLP shares the
/// timer between the RTO, the tail loss probe and RACK's reorder timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TimerKind {
    /// The retransmission timeout.
    Rto,
    /// The tail loss probe's timeout (PTO).
    Probe,
    /// RACK's reorder timeout: segments become lost when it fires.
    Reorder,
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
    /// Tail loss probes sent (Linux's TCPLossProbes).
    pub loss_probes: u32,
    /// Tail losses a probe repaired, with a window reduction (TCPLossProbeRecovery).
    pub loss_probe_recoveries: u32,
    /// Segments RACK deemed lost (first marks and lost retransmissions).
    pub rack_lost: u32,
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
    /// Linux 6.0 on (`tp->is_cwnd_limited`): a send in the current window of cwnd validation
    /// filled cwnd.
    window_limited: bool,
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
    /// The handshake's RTT (Linux's min-RTT filter starts from it; RACK and BBR use it).
    path_min_rtt: SimTime,
    /// What the retransmission timer is armed for.
    timer: TimerKind,
    /// RACK's state.
    rack: Rack,
    /// TLP: a probe's episode is open until this byte is acknowledged (`tlp_high_seq`).
    tlp_high_seq: Option<u64>,
    /// TLP: the open episode's probe was a retransmission.
    tlp_retrans: bool,
    /// Delivery-rate sampling (for a congestion control that sets cwnd itself).
    rate: Rate,
    /// HyStart, for CUBIC.
    hystart: Option<HyStart>,
    /// Pacing rate, bytes per second (0: not paced).
    pacing_rate: u64,
    /// Earliest departure of the next burst (Linux's `tcp_wstamp_ns`).
    next_send: SimTime,
    /// Segments left in the current TSO burst.
    burst_left: u32,
    /// Payload bytes of the current TSO burst.
    burst_bytes: u64,
    /// When a paced sender that stopped may send again.
    pub(super) pace_at: Option<SimTime>,
    /// Counters.
    pub(super) stats: SenderStats,
}

impl Sender {
    /// A send half with nothing written yet.
    pub(super) fn new(p: TcpParams, rtt: RttEstimator) -> Sender {
        let handshake_rtt = rtt.srtt().unwrap_or(SimTime::MAX);
        let cc = AnyController::new(&p, &rtt);
        let hystart =
            (p.hystart && p.congestion_control == CongestionControl::Cubic).then(HyStart::default);
        Sender {
            timer: TimerKind::Rto,
            rack: Rack::default(),
            tlp_high_seq: None,
            tlp_retrans: false,
            rate: Rate::default(),
            pacing_rate: cc.pacing_rate().unwrap_or(0),
            hystart,
            next_send: 0,
            burst_left: 0,
            burst_bytes: 0,
            pace_at: None,
            cwnd: p.initial_window,
            cc,
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
            window_limited: false,
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
            path_min_rtt: handshake_rtt,
            stats: SenderStats::default(),
        }
    }

    /// Draw timeouts with `policy` (RTO randomization).
    pub(super) fn set_rto_policy(&mut self, policy: RtoPolicy) {
        self.rto_policy = Some(policy);
    }

    /// Draw the congestion control's random choices from `rng`.
    pub(super) fn set_cc_rng(&mut self, rng: Rng) {
        self.cc.seed(rng);
    }

    /// Whether segments leave at a pacing rate.
    #[inline]
    fn paced(&self) -> bool {
        self.cc.sets_cwnd() || self.p.pacing
    }

    /// The application writes `bytes` more.
    pub(super) fn write(&mut self, now: SimTime, bytes: u64, out: &mut Outbox<'_>) {
        if self.cc.sets_cwnd() {
            self.check_app_limited();
        }
        if self.board.is_empty() {
            self.restart_after_idle(now);
            let app_limited = self.rate.app_limited_until != 0;
            self.cc.on_tx_start(now, self.last_send, app_limited);
            if let Some(rate) = self.cc.pacing_rate() {
                self.pacing_rate = rate;
            }
        }
        if self.write_end == 0 {
            self.rounds_open = true;
            self.first_end = bytes;
        }
        self.write_end += bytes;
        self.try_send(now, out);
    }

    /// Linux's `tcp_rate_check_app_limited`, which `tcp_sendmsg` runs as the application
    /// writes: if less than a segment was waiting to be sent, the window has room and every
    /// segment deemed lost has been resent, the application is what limits the sender, and
    /// delivery-rate samples are marked so until what is in flight now is delivered. (Running
    /// dry while ACKs come in, at a response's end or in recovery, is not a check: samples
    /// stay valid, and BBR's STARTUP can see the bandwidth stop growing.)
    fn check_app_limited(&mut self) {
        let in_flight = self.in_flight();
        if self.write_end.saturating_sub(self.snd_nxt) < self.p.mss
            && in_flight < self.cwnd
            && self.board.lost_out() <= self.board.retrans_out()
        {
            self.rate.app_limited(in_flight);
        }
    }

    /// The retransmission timer fired, for whatever it was armed.
    pub(super) fn on_timer(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        match std::mem::replace(&mut self.timer, TimerKind::Rto) {
            TimerKind::Rto => self.on_rto(now, out),
            TimerKind::Probe => self.send_loss_probe(now, out),
            TimerKind::Reorder => self.reorder_timeout(now, out),
        }
    }

    /// The pacing timer fired.
    pub(super) fn on_pace(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        self.pace_at = None;
        self.try_send(now, out);
    }

    /// The retransmission timer fired (RFC 6298 (5.4)-(5.6)).
    pub(super) fn on_rto(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        self.rto_at = None;
        self.timer = TimerKind::Rto;
        if self.board.is_empty() {
            return;
        }
        self.tlp_high_seq = None;
        if let Some(h) = self.hystart.as_mut() {
            h.reset(now, self.snd_nxt);
        }
        self.stats.timeouts += 1;
        self.timeout_run += 1;
        self.rounds_open = false;
        let first = self.ca != CaState::Loss;
        if first {
            self.undo_cwnd = self.cwnd;
            self.undo_ssthresh = self.ssthresh;
        }
        self.frto = self.p.frto
            && if self.p.frto_recurring {
                // Linux 4.x on (tcp_enter_loss, RFC 5682 3.2): not from fast recovery, but
                // again on a recurring timeout of the same snd_una.
                self.ca == CaState::Open || self.timeout_run > 1
            } else {
                // Only from a timeout that follows progress (not a repeated one).
                first
            };
        self.frto_head_sent = false;
        if self.ca == CaState::Open {
            // Linux's tcp_enter_loss: recovery or an earlier timeout already set ssthresh.
            self.ssthresh = self.loss_ssthresh();
        }
        let st = self.ack_state(now, 0, CaState::Loss);
        self.cc.on_timeout(&st);
        self.cwnd_cnt = 0;
        // RACK (Linux's tcp_timeout_mark_lost): what was sent within the last RTT is not
        // presumed lost, and cwnd leaves room for the head's resend beside it
        // (tcp_enter_loss: packets in flight + 1).
        let recent_after =
            (self.p.rack_tlp && self.p.sack).then(|| now.saturating_sub(self.rack.rtt));
        self.board.mark_all_lost(self.snd_una, recent_after);
        self.dupacks = 0;
        self.force_retx = false;
        self.ca = CaState::Loss;
        self.cwnd = self.in_flight() + 1;
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
        let nxt_before = self.snd_nxt;
        loop {
            if self.paced() && now < self.next_send {
                // Linux's tcp_pacing_check: the next burst waits for its departure time.
                if self.in_flight() < self.cwnd && self.has_something_to_send() {
                    self.pace_at = Some(self.next_send);
                }
                break;
            }
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
            let tx = self.tx_state(now);
            self.board.push(self.snd_nxt, len as u32, now, tx);
            self.emit(self.snd_nxt, len as u32, out);
            self.snd_nxt += len;
            self.sent_data(now);
            self.pace(now, len);
        }
        if self.p.rack_tlp && self.snd_nxt > nxt_before {
            // Linux's tcp_write_xmit: new data went out, so the probe timer restarts.
            self.schedule_loss_probe(now, false);
        }
        match self.p.cwnd_limited {
            CwndLimited::LastSend => self.validate_cwnd(),
            CwndLimited::Window => self.validate_cwnd_window(self.snd_nxt > nxt_before),
        }
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

    /// Linux 6.0 on (`tcp_write_xmit` and `tcp_cwnd_validate`), after a send attempt that
    /// sent new data (`sent_new`) or not: where there was new data to send, cwnd limited it if
    /// the packets in flight now fill it; a window that was cwnd-limited stays so until it is
    /// acknowledged, even if the data runs out, and otherwise the most packets out is kept.
    fn validate_cwnd_window(&mut self, sent_new: bool) {
        if !sent_new && self.snd_nxt >= self.write_end {
            return; // no send head: Linux does not run tcp_write_xmit
        }
        let limited = self.in_flight() >= self.cwnd;
        if !sent_new && !limited {
            return;
        }
        let out = self.board.packets_out();
        if self.snd_una >= self.max_packets_seq
            || limited
            || (!self.window_limited && out > self.max_packets_out)
        {
            self.window_limited = limited;
            self.max_packets_out = out;
            self.max_packets_seq = self.snd_nxt;
        }
    }

    /// Lost segments to resend or new data to send.
    fn has_something_to_send(&self) -> bool {
        self.board.lost_pending() > 0 || self.snd_nxt < self.write_end
    }

    /// Segments per TSO burst (Linux's `tcp_tso_autosize`, BBR's `bbr_tso_segs`).
    fn burst_segments(&self) -> u32 {
        if !self.p.tso {
            return 1;
        }
        if let Some(segs) = self.cc.tso_segs(self.p.mss) {
            return segs;
        }
        let bytes = (self.pacing_rate >> PACING_SHIFT).min(GSO_MAX_BYTES);
        ((bytes / self.p.mss) as u32).clamp(2, (GSO_MAX_BYTES / self.p.mss).max(2) as u32)
    }

    /// A segment of `len` bytes left at `now`: a paced sender's next burst departs when this
    /// one has left at the pacing rate (Linux's `tcp_update_skb_after_send`; the first ten
    /// segments of a connection are not paced). Linux times the write queue's buffer, whose
    /// length is its payload: headers go onto the clone that leaves, so the pacing rate is a
    /// rate of payload, as BBR's (packets × MSS) and the cwnd/SRTT rate are.
    fn pace(&mut self, now: SimTime, len: u64) {
        if !self.paced() || self.pacing_rate == 0 || self.stats.segments <= UNPACED_SEGMENTS {
            return;
        }
        if self.burst_left == 0 {
            self.burst_left = self.burst_segments();
            self.burst_bytes = 0;
        }
        self.burst_bytes += len;
        self.burst_left -= 1;
        if self.burst_left == 0 {
            let gap = (self.burst_bytes as u128 * PS_PER_S as u128 / self.pacing_rate as u128)
                .min(u64::MAX as u128) as SimTime;
            self.next_send = self.next_send.max(now) + gap;
        }
    }

    /// Linux's `tcp_update_pacing_rate` for congestion controls that leave cwnd to the sender:
    /// cwnd per SRTT, doubled in slow start, 1.2× after.
    fn update_pacing_rate(&mut self) {
        if self.cc.sets_cwnd() {
            return;
        }
        let Some(srtt) = self.rtt.srtt().filter(|&r| r > 0) else {
            return;
        };
        let ratio = if self.cwnd < self.ssthresh / 2 {
            200
        } else {
            120
        };
        let w = self.cwnd.max(self.board.packets_out()) as u128;
        let rate = self.p.mss as u128 * w * ratio * PS_PER_S as u128 / 100 / srtt as u128;
        self.pacing_rate = rate.min(u64::MAX as u128) as u64;
    }

    /// ssthresh on entering recovery or loss: the congestion control's.
    fn loss_ssthresh(&mut self) -> u32 {
        self.cc.ssthresh_after_loss(self.cwnd)
    }

    /// Linux's `tcp_schedule_loss_probe`: in Open state with data out, arm the probe timer for
    /// 2·SRTT (plus RTOmin for a lone segment, whose ACK a delayed-ACK receiver may hold back;
    /// else plus 2 ms), never later than the RTO would fire. Returns whether it did.
    fn schedule_loss_probe(&mut self, now: SimTime, advancing_rto: bool) -> bool {
        if !self.p.sack || self.board.is_empty() || self.ca != CaState::Open {
            return false;
        }
        let mut timeout = probe_timeout(&self.rtt, self.board.packets_out() == 1);
        let rto_delta = if advancing_rto {
            self.rtt.ticks(self.rtt.rto(self.backoff))
        } else {
            self.rto_delta(now)
        };
        if rto_delta > 0 {
            // Linux: min(timeout, usecs_to_jiffies(rto_delta_us)), rounded up to a tick.
            timeout = timeout.min(self.rtt.ticks(rto_delta));
        }
        self.timer = TimerKind::Probe;
        self.rto_at = Some(self.rtt.expiry(now, timeout));
        true
    }

    /// How far in the future the RTO of the oldest outstanding segment is (`tcp_rto_delta_us`).
    fn rto_delta(&self, now: SimTime) -> SimTime {
        let head = self.board.head_sent().unwrap_or(now);
        (head + self.rtt.rto(self.backoff)).saturating_sub(now)
    }

    /// Linux's `tcp_rearm_rto` after a probe or reorder timer: the RTO of the oldest
    /// outstanding segment, at least one tick from now.
    fn rearm_rto_from_head(&mut self, now: SimTime) {
        if self.board.is_empty() {
            self.rto_at = None;
            return;
        }
        let delta = self.rto_delta(now).max(1);
        self.timer = TimerKind::Rto;
        self.rto_at = Some(self.rtt.expiry(now, self.rtt.ticks(delta)));
    }

    /// The probe timer fired (Linux's `tcp_send_loss_probe`): send one new segment if the
    /// window allows, else resend the last one; then the RTO runs from now.
    fn send_loss_probe(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        self.rto_at = None;
        if self.board.is_empty() {
            return;
        }
        if self.tlp_high_seq.is_none() {
            let len = self.p.mss.min(self.write_end.saturating_sub(self.snd_nxt));
            if len > 0 && self.snd_nxt + len <= self.snd_una + self.p.receive_window {
                let tx = self.tx_state(now);
                self.board.push(self.snd_nxt, len as u32, now, tx);
                self.emit(self.snd_nxt, len as u32, out);
                self.snd_nxt += len;
                self.sent_data(now);
                self.tlp_retrans = false;
            } else if let Some(i) = self.board.last_unsacked() {
                self.retransmit(i, now, out);
                self.stats.retx_fast -= 1; // counted as a probe, not a fast retransmit
                self.tlp_retrans = true;
            } else {
                self.rearm_rto_from_head(now);
                return;
            }
            self.tlp_high_seq = Some(self.snd_nxt);
            self.stats.loss_probes += 1;
            self.timer = TimerKind::Rto;
            self.arm_rto(now);
            return;
        }
        self.rearm_rto_from_head(now);
    }

    /// RACK's reorder timer fired (Linux's `tcp_rack_reo_timeout`): mark what is now lost,
    /// start recovery if not in it, retransmit, and rearm the RTO.
    fn reorder_timeout(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        self.rto_at = None;
        let (marked, _) = self.rack_detect(now, true);
        if marked > 0 {
            if self.ca == CaState::Open {
                self.enter_recovery();
                // Linux skips PRR for a congestion control that sets cwnd itself.
                if !self.cc.sets_cwnd() {
                    self.reduce_cwnd(1, false, true);
                }
            }
            self.try_send(now, out);
        }
        if self.rto_at.is_none() {
            self.rearm_rto_from_head(now);
        }
    }

    /// RACK's loss detection over the scoreboard; arms the reorder timer for segments not yet
    /// due (unless `timer_fired`: the caller rearms). Returns the segments newly marked lost
    /// and whether the reorder timer was armed.
    fn rack_detect(&mut self, now: SimTime, timer_fired: bool) -> (u32, bool) {
        let recovering = self.ca != CaState::Open;
        let srtt = self.rtt.srtt().unwrap_or(0);
        let min_rtt = self.path_min_rtt.min(self.min_rtt);
        let reo = self.rack.reo_wnd(
            recovering,
            self.board.sacked_out(),
            self.p.dupthresh,
            min_rtt,
            srtt,
        );
        let (marked, wait) = self.board.rack_detect_loss(&self.rack, reo, now);
        self.stats.rack_lost += marked;
        if let (Some(wait), false) = (wait, timer_fired) {
            // Linux: usecs_to_jiffies(wait) + TCP_TIMEOUT_MIN (2 ticks).
            let t = self.rtt.ticks(wait) + 2 * self.rtt.ticks(1);
            self.timer = TimerKind::Reorder;
            self.rto_at = Some(self.rtt.expiry(now, t));
            return (marked, true);
        }
        (marked, false)
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
        self.rto_at = Some(self.rtt.expiry(now, timeout));
    }

    fn retransmit(&mut self, i: usize, now: SimTime, out: &mut Outbox<'_>) {
        let tx = self.tx_state(now);
        let (seq, len) = self.board.retransmitted(i, now, self.snd_nxt, tx);
        self.high_rxt = self.high_rxt.max(seq + len as u64);
        if self.ca == CaState::Loss {
            self.stats.retx_timeout += 1;
        } else {
            self.stats.retx_fast += 1;
        }
        self.emit(seq, len, out);
        self.sent_data(now);
        self.pace(now, len as u64);
        if i == 0 && self.timer == TimerKind::Rto {
            // Linux restarts the retransmission timer when it resends the head.
            self.arm_rto(now);
        }
    }

    fn rescue_candidate(&self) -> Option<usize> {
        if self.ca != CaState::Recovery || !self.p.sack || !self.p.rescue_retransmit {
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
        let rack_tlp = self.p.rack_tlp && self.p.sack;
        let sack_rtt = self.p.sack_rtt;
        let lost_before = self.board.lost_total();
        let sampling = self.cc.sets_cwnd();
        if sampling {
            self.rate.begin(self.in_flight());
        }
        // Linux's tcp_min_rtt: the handshake's RTT counts too.
        let min_rtt = self.path_min_rtt.min(self.min_rtt);
        // Every newly delivered segment advances RACK and BBR's delivery-rate sample (the
        // papers' stack needs neither, and skips the work).
        let (rack, rate) = (&mut self.rack, &mut self.rate);
        // Linux's tcp_sacktag_one: when the earliest newly SACKed segment never resent left.
        let mut first_sackt: Option<SimTime> = None;
        let mut on_delivered = |seg: &mut crate::tcp::scoreboard::Seg, sacked: bool| {
            if sacked && !seg.ever_retransmitted() {
                first_sackt = Some(first_sackt.map_or(seg.sent(), |t| t.min(seg.sent())));
            }
            if rack_tlp {
                let retx = seg.ever_retransmitted();
                rack.note_delivery_order(seg.end(), retx, sacked);
                rack.advance(seg.sent(), seg.end(), retx, now, min_rtt);
            }
            if sampling {
                rate.on_delivered(seg);
            }
        };
        let mut newly_sacked = 0;
        if self.p.sack {
            let mut highest = 0;
            for &(s, e) in sack {
                if e > ack.max(self.snd_una) {
                    let (n, orig) =
                        self.board
                            .mark_sacked_with(s.max(ack), e, self.high_seq, &mut |seg| {
                                on_delivered(seg, true)
                            });
                    newly_sacked += n;
                    self.orig_delivered |= orig;
                    highest = highest.max(e);
                }
            }
            if newly_sacked > 0 && self.ca != CaState::Open && !rack_tlp {
                // RACK finds lost retransmissions by time instead.
                self.board.mark_lost_retransmissions(highest);
            }
        }
        let prior_una = self.snd_una;
        let mut acked = 0u32;
        let mut reno_delivered = 0u32;
        let mut rtt_sample = None;
        let mut ts_sampled = false;
        if ack > self.snd_una {
            // Linux's tcp_clean_rtx_queue: the RTT of the oldest segment this ACK newly
            // covers; Karn's algorithm: none at all if any covered segment was retransmitted.
            let cleaned = self
                .board
                .clean_with(ack, self.high_seq, &mut |seg| on_delivered(seg, false));
            acked = cleaned.acked;
            self.orig_delivered |= cleaned.orig_delivered;
            self.snd_una = ack;
            if let (Some(sent), false) = (cleaned.first_sent, cleaned.retransmitted) {
                let r = self.rtt.measure(sent, now);
                self.rtt.sample_at(r, ack, self.snd_nxt);
                self.min_rtt = self.min_rtt.min(r);
                self.cc.on_rtt(now, r);
                rtt_sample = Some(r);
            } else if let (None, Some(sent), true) = (first_sackt, cleaned.first_sent, sack_rtt) {
                // Linux's tcp_ack_update_rtt: where Karn's rule leaves the cumulative ACK
                // without a sample and nothing was SACKed, the timestamp echo's: the resent
                // head's own transmission.
                let r = self.rtt.measure(sent, now);
                self.rtt.sample_at(r, ack, self.snd_nxt);
                ts_sampled = true;
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
            if rack_tlp {
                // The probe or RTO timer is set once the ACK is processed (below).
            } else if self.board.is_empty() {
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
        if let (Some(sent), true, None, false) = (first_sackt, sack_rtt, rtt_sample, ts_sampled) {
            // Linux's tcp_ack_update_rtt: without a sample from the cumulative ACK, the SACK's,
            // from the earliest newly SACKed segment never resent; so RTTs keep being
            // measured through a recovery, queueing delay included.
            let r = self.rtt.measure(sent, now);
            self.rtt.sample_at(r, ack, self.snd_nxt);
        }
        // Without SACK a duplicate ACK stands for one segment delivered.
        let reno_dup = !self.p.sack && ack == prior_una && !has_data && !self.board.is_empty();
        let delivered = if !self.p.sack && ack > prior_una && self.ca != CaState::Open {
            reno_delivered
        } else {
            acked + newly_sacked + u32::from(reno_dup)
        };
        if rack_tlp {
            self.process_tlp_ack(ack, prior_una, newly_sacked, has_data);
        }
        let mut reorder_armed = false;
        if rack_tlp && std::mem::take(&mut self.rack.advanced) {
            reorder_armed = self.rack_detect(now, false).1;
        }
        if let Some(h) = self.hystart.as_mut() {
            if self.cwnd < self.ssthresh {
                h.on_ack(now, ack, self.snd_nxt);
                if let Some(r) = rtt_sample {
                    if h.on_rtt(now, r, self.cwnd, self.pacing_rate, self.p.pacing) {
                        self.ssthresh = self.cwnd;
                    }
                }
            }
        }
        let model = self.cc.sets_cwnd();
        // Linux 4.x on grows cwnd after loss recovery has looked at the ACK
        // (`tcp_cong_control` after `tcp_fastretrans_alert`); 2.6 and 3.x grew it first.
        let late = self.p.ack_order == AckOrder::RecoveryFirst;
        match self.ca {
            CaState::Open => {
                let enter = if rack_tlp {
                    self.board.lost_out() > 0
                } else {
                    self.dupacks >= self.p.dupthresh
                        || (self.p.sack
                            && newly_sacked > 0
                            && self.board.head_lost_by_sack(self.p.dupthresh))
                };
                let enter = enter && !self.board.is_empty();
                // Whether recovery starts does not depend on cwnd, so one test serves both
                // orders: Linux 2.6/3.x grew cwnd before the loss check (and so before the
                // cut), Linux 4.x on grows it only if the ACK does not start recovery.
                if ack > prior_una && !model && !(late && enter) {
                    self.grow(delivered, now);
                }
                if enter {
                    self.enter_recovery();
                    if !model {
                        self.reduce_cwnd(
                            delivered,
                            ack > prior_una,
                            self.board.lost_total() > lost_before,
                        );
                    }
                }
            }
            CaState::Recovery => {
                if self.snd_una >= self.high_seq {
                    self.ca = CaState::Open;
                    if !model {
                        // Linux's tcp_end_cwnd_reduction, which a congestion control that
                        // sets cwnd itself skips: BBR's ssthresh stays infinite, and it
                        // restores its own cwnd on leaving recovery.
                        self.cwnd = self.ssthresh;
                        if late {
                            // Open again, an ACK of new data may raise cwnd.
                            self.grow(delivered, now);
                        }
                    }
                    self.dupacks = 0;
                } else if !self.p.sack {
                    if ack > prior_una {
                        // NewReno (RFC 6582 3.2 step 3): a partial ACK reveals the next hole;
                        // retransmit it at once.
                        self.board.mark_lost(0);
                        self.force_retx = true;
                    }
                } else if (newly_sacked > 0 || ack > prior_una) && !rack_tlp {
                    self.board.mark_lost_by_sack(self.p.dupthresh);
                }
                if self.ca == CaState::Recovery && !model {
                    self.reduce_cwnd(
                        delivered,
                        ack > prior_una,
                        self.board.lost_total() > lost_before,
                    );
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
                if ack > prior_una && !model {
                    self.grow(delivered, now);
                }
                if self.snd_una >= self.high_seq {
                    self.ca = CaState::Open;
                    self.dupacks = 0;
                    // F-RTO lives only in the Loss state (Linux's tcp_process_loss): a later
                    // recovery resends what RACK or SACK deems lost at once.
                    self.frto = false;
                }
            }
        }
        let losses = (self.board.lost_total() - lost_before) as u32;
        if model {
            self.model_on_ack(now, acked + newly_sacked, losses, rtt_sample, min_rtt);
        } else if self.p.pacing {
            self.update_pacing_rate();
        }
        if rack_tlp && !reorder_armed {
            // Linux's tcp_set_xmit_timer, for ACKs that moved snd_una.
            if self.board.is_empty() {
                self.rto_at = None;
                self.timer = TimerKind::Rto;
            } else if ack > prior_una && !self.schedule_loss_probe(now, true) {
                self.timer = TimerKind::Rto;
                self.arm_rto(now);
            }
        }
    }

    /// What a congestion control that sets cwnd itself reads of the connection at `now`.
    fn ack_state(&self, now: SimTime, in_flight: u32, ca: CaState) -> AckState {
        AckState {
            now,
            cwnd: self.cwnd,
            in_flight,
            delivered: self.rate.delivered,
            delivered_at: self.rate.delivered_at,
            ca,
            mss: self.p.mss,
            next_send: self.next_send,
            srtt: self.rtt.srtt(),
            lost_total: self.board.lost_total(),
        }
    }

    /// The delivery state a segment sent now carries: only a congestion control that sets
    /// cwnd itself reads delivery-rate samples.
    fn tx_state(&mut self, now: SimTime) -> TxState {
        if self.cc.sets_cwnd() {
            self.rate.on_send(now, self.board.packets_out())
        } else {
            TxState::default()
        }
    }

    /// The turn at an ACK of a congestion control that sets cwnd itself: the rate sample,
    /// then its cwnd and pacing rate.
    fn model_on_ack(
        &mut self,
        now: SimTime,
        acked_sacked: u32,
        losses: u32,
        rtt: Option<SimTime>,
        min_rtt: SimTime,
    ) {
        let rs = self.rate.finish(now, acked_sacked, losses, rtt, min_rtt);
        let st = self.ack_state(now, self.in_flight(), self.ca);
        self.cwnd = self.cc.on_rate_sample(&rs, &st).clamp(1, MAX_CWND);
        if let Some(rate) = self.cc.pacing_rate() {
            self.pacing_rate = rate;
        }
    }

    /// Linux's `tcp_process_tlp_ack`: an ACK at or beyond the probe's episode ends it. If the
    /// probe was a retransmission and the ACK moves beyond it, the probe repaired a loss: cut
    /// the window once, as fast recovery would have. A duplicate ACK without new data says
    /// the original and the probe both arrived. (Without D-SACK the simulator cannot tell a
    /// needless probe acknowledged exactly at the episode's end; it keeps the window then.)
    fn process_tlp_ack(&mut self, ack: u64, prior_una: u64, newly_sacked: u32, has_data: bool) {
        let Some(high) = self.tlp_high_seq else {
            return;
        };
        if ack < high {
            return;
        }
        if !self.tlp_retrans {
            self.tlp_high_seq = None;
        } else if ack > high {
            self.tlp_high_seq = None;
            if self.ca == CaState::Open {
                self.ssthresh = self.loss_ssthresh();
                if !self.cc.sets_cwnd() {
                    self.cwnd = self.ssthresh;
                    self.cwnd_cnt = 0;
                }
                self.stats.loss_probe_recoveries += 1;
            }
        } else if ack == prior_una && newly_sacked == 0 && !has_data {
            self.tlp_high_seq = None;
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
        if self.cc.sets_cwnd() {
            // A congestion control that sets cwnd itself (Linux's cong_control hook) answers
            // echoes itself: BBR v1 ignores them.
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
        let st = self.ack_state(self.last_send, 0, CaState::Open);
        self.cc.on_undo(&st);
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
        self.ssthresh = self.loss_ssthresh();
        self.cwnd_cnt = 0;
        self.prr_delivered = 0;
        self.prr_out = 0;
        if !(self.p.rack_tlp && self.p.sack) {
            // RACK has marked what is lost already.
            self.board.mark_lost(0);
            if self.p.sack {
                self.board.mark_lost_by_sack(self.p.dupthresh);
            }
        }
        match self.p.recovery_cwnd {
            // PRR's first step allows the fast retransmit itself.
            RecoveryCwnd::Prr => {}
            RecoveryCwnd::Halve => {
                if !self.cc.sets_cwnd() {
                    self.cwnd = self.ssthresh;
                }
                self.force_retx = true;
            }
        }
    }

    /// Proportional rate reduction (RFC 6937, as Linux's `tcp_cwnd_reduction`): after
    /// `delivered` more segments left the network, allow sending so that, by the end of
    /// recovery, cwnd has come down to ssthresh at the pace of the ACKs.
    fn reduce_cwnd(&mut self, delivered: u32, una_advanced: bool, newly_lost: bool) {
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
            // Conservative reduction bound, and the slow-start one (one segment more) only
            // for an ACK that moved snd_una and revealed no new loss (Linux 5.14 on).
            let s = (self.prr_delivered as i64 - self.prr_out as i64).max(delivered as i64)
                + i64::from(una_advanced && !newly_lost);
            s.min(delta)
        };
        // The first step is the fast retransmit.
        sndcnt = sndcnt.max(i64::from(self.prr_out == 0));
        self.cwnd = (in_flight + sndcnt).clamp(1, MAX_CWND as i64) as u32;
    }

    /// Slow start and congestion avoidance for `acked` segments delivered (Linux
    /// `tcp_slow_start` / `tcp_cong_avoid_ai`), only while cwnd limits the sender.
    fn grow(&mut self, mut acked: u32, now: SimTime) {
        let cwnd_limited = match self.p.cwnd_limited {
            CwndLimited::LastSend => self.cwnd_limited,
            CwndLimited::Window => self.window_limited,
        };
        let limited =
            cwnd_limited || (self.cwnd < self.ssthresh && self.cwnd < 2 * self.max_packets_out);
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
        if self.cc.gentle_credits() && self.cwnd_cnt >= per {
            // Credits earned while `per` was larger: one segment now, not all of them.
            self.cwnd_cnt = 0;
            self.cwnd = (self.cwnd + 1).min(MAX_CWND);
        }
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
            // Linux's tcp_slow_start_after_idle_check leaves alone a congestion control that
            // sets cwnd itself: it restarts from its model (`on_tx_start`), not a cut cwnd.
            CwndRestart::Idle if self.cc.sets_cwnd() => {}
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
    use crate::config::{CongestionControl, CubicUpdate, CwndLimited};
    use crate::net::MAX_SACK_BLOCKS;
    use crate::tcp::testing::*;
    use crate::tcp::Endpoint;
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

    /// With nothing new to send in fast recovery, RFC 6675's rescue resends the first segment
    /// neither SACKed nor deemed lost; Linux (`tcp_xmit_retransmit_queue`) resends only what is
    /// deemed lost and sends nothing.
    #[test]
    fn only_the_rfc6675_sender_rescues_a_segment_not_deemed_lost() {
        for rescue in [true, false] {
            let mut e = endpoint(TcpParams {
                rescue_retransmit: rescue,
                ..params(true)
            });
            let mut out = Vec::new();
            e.write(0, 10 * MSS, &mut out);
            let t = from_us(100);
            // Segment 0 lost: the third SACK starts recovery and resends it.
            for k in 1..=3u64 {
                ack(&mut e, t, 0, &[(MSS, (k + 1) * MSS)]);
            }
            assert_eq!(e.stats().retx_fast, 1);
            // SACKs up to segment 6 bring the pipe (10 − 6 SACKed − 1 lost + 1 resent = 4)
            // under ssthresh (5): room for one segment, and no new data to fill it.
            for k in 4..=5u64 {
                assert!(ack(&mut e, t, 0, &[(MSS, (k + 1) * MSS)]).is_empty());
            }
            let out = ack(&mut e, t, 0, &[(MSS, 7 * MSS)]);
            let sent: Vec<u64> = out.iter().map(|s| s.seq / MSS).collect();
            if rescue {
                assert_eq!(sent, vec![7], "the first segment above the resent head");
            } else {
                assert!(sent.is_empty(), "segment 7 is not deemed lost: {sent:?}");
            }
        }
    }

    /// Linux paces the write queue's buffer, payload only (`tcp_update_skb_after_send`): the
    /// frame's headers, which the scenario gives for the links' timing, do not stretch the
    /// gap. The first ten segments are not paced; the eleventh sets the twelfth's departure.
    #[test]
    fn pacing_spaces_segments_by_their_payload_not_their_frame() {
        let tcp = crate::config::Tcp {
            mss: MSS,
            initial_window: 20,
            header_bytes: 66,
            congestion_control: CongestionControl::Bbr,
            ..Default::default()
        };
        let mut e = endpoint(TcpParams::from(&tcp));
        let mut out = Vec::new();
        e.write(0, 12 * MSS, &mut out);
        assert_eq!(out.len(), 11);
        let rate = e.tx.pacing_rate;
        assert!(rate > 0);
        let gap = MSS * PS_PER_S / rate;
        assert_eq!(e.poll_at().pace, Some(gap));
        out.clear();
        e.on_pace(gap - 1, &mut out);
        assert!(out.is_empty(), "not a picosecond before the gap");
        e.on_pace(gap, &mut out);
        assert_eq!(
            out.iter().map(|s| s.seq).collect::<Vec<_>>(),
            vec![11 * MSS]
        );
    }

    /// Linux's `tcp_timeout_mark_lost` with RACK: at a timeout, a segment sent less than
    /// RACK's RTT ago (not the head) is not presumed lost, and cwnd is what is still in flight
    /// plus one (`tcp_enter_loss`). Without RACK everything is lost and resent after the head.
    #[test]
    fn a_timeout_leaves_segments_sent_within_racks_rtt_to_rack() {
        // (RACK-TLP, segment 3's age at the timeout, whether it stays in flight): RACK's RTT
        // is 100 us, so 1 ps younger than that stays, exactly that old is presumed lost.
        let rtt = from_us(100);
        for (rack_tlp, age, kept) in [(true, rtt - 1, true), (true, rtt, false), (false, 1, false)]
        {
            let mut e = endpoint(TcpParams {
                rack_tlp,
                ..params(true)
            });
            let mut out = Vec::new();
            e.write(from_us(1), 2 * MSS, &mut out);
            // Both delivered after 100 us: RACK's RTT.
            ack(&mut e, from_us(1) + rtt, 2 * MSS, &[]);
            out.clear();
            e.write(from_ms(1), MSS, &mut out); // segment 2, the head
            let rto = from_ms(201);
            out.clear();
            e.write(rto - age, MSS, &mut out); // segment 3
            assert_eq!(out.len(), 1);
            out.clear();
            // The retransmission timeout itself (with RACK-TLP a probe would come first).
            e.tx.timer = TimerKind::Rto;
            e.on_rto(rto, &mut out);
            assert_eq!(out.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![2 * MSS]);
            // Kept: segment 3 is still in flight (cwnd 2: it and one more). Else it is presumed
            // lost with the head and waits to be resent.
            let (lost, cwnd) = if kept { (1, 2) } else { (2, 1) };
            let case = format!("rack_tlp={rack_tlp} age={age}");
            assert_eq!(e.tx.board.lost_out(), lost, "{case}");
            assert_eq!(e.cwnd(), cwnd, "{case}");
            e.check_invariants().unwrap();
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
    fn linux_fires_backed_off_timeouts_at_the_timer_wheels_32_ms_boundaries() {
        // RTOmin 200 ms on 4 ms jiffies; the segment leaves 1 us into jiffy 0.
        for wheel in [false, true] {
            let rtt = RttEstimator::new(from_ms(200), 120 * PS_PER_S, PS_PER_S, from_us(1))
                .with_timer_granularity(from_ms(4))
                .with_timer_wheel(wheel);
            let mut e = Endpoint::new(params(true), rtt, Some(from_us(100)));
            let mut out = Vec::new();
            e.write(from_us(1), MSS, &mut out);
            // 50 jiffies from jiffy 0: the first tick after, at either setting.
            assert_eq!(rto_at(&e), Some(from_ms(204)));
            e.on_rto(from_ms(204), &mut out);
            // Backed off to 100 jiffies from jiffy 51: due at jiffy 151, which Linux's
            // timer wheel fires at 152 (608 ms), not at 604 ms.
            let second = if wheel { from_ms(608) } else { from_ms(604) };
            assert_eq!(rto_at(&e), Some(second), "wheel {wheel}");
            e.on_rto(second, &mut out);
            // 200 jiffies from jiffy 152: due at jiffy 352 (1408 ms), fired at the bucket
            // boundary of jiffy 360 (1440 ms).
            let third = if wheel { from_ms(1440) } else { from_ms(1404) };
            assert_eq!(rto_at(&e), Some(third), "wheel {wheel}");
        }
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
    fn linux_measures_rtt_from_a_sack_when_the_cumulative_ack_gives_none() {
        for sack_rtt in [false, true] {
            let mut e = endpoint(TcpParams {
                sack_rtt,
                ..params(true)
            });
            let mut out = Vec::new();
            e.write(0, 10 * MSS, &mut out);
            // A duplicate ACK SACKing segments 3 and 4, both sent at 0.
            ack(&mut e, from_us(900), 0, &[(3 * MSS, 5 * MSS)]);
            // Linux: (7·100 + 900) / 8 = 200 us; Karn's rule alone: the handshake's 100 us.
            let want = if sack_rtt { 200 } else { 100 };
            assert_eq!(e.tx.rtt.srtt(), Some(from_us(want)), "sack_rtt {sack_rtt}");
        }
    }

    #[test]
    fn linux_measures_a_resent_heads_rtt_from_its_timestamp_echo() {
        for sack_rtt in [false, true] {
            let mut e = endpoint(TcpParams {
                sack_rtt,
                ..params(true)
            });
            let mut out = Vec::new();
            e.write(0, 2 * MSS, &mut out);
            let t = rto_at(&e).unwrap();
            e.on_rto(t, &mut out);
            // The resent head's ACK, 500 us after the resend: Karn's rule forbids a sample,
            // the timestamp it echoes gives one.
            ack(&mut e, t + from_us(500), 2 * MSS, &[]);
            let want = if sack_rtt { (7 * 100 + 500) / 8 } else { 100 };
            assert_eq!(e.tx.rtt.srtt(), Some(from_us(want)), "sack_rtt {sack_rtt}");
        }
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
                congestion_control: [
                    CongestionControl::Cubic,
                    CongestionControl::Reno,
                    CongestionControl::Bbr,
                ][r.up_to(2) as usize],
                rack_tlp: r.up_to(1) == 1,
                hystart: r.up_to(1) == 1,
                pacing: r.up_to(1) == 1,
                tso: r.up_to(1) == 1,
                cubic_update: [CubicUpdate::PerAck, CubicUpdate::Linux][r.up_to(1) as usize],
                ack_order: [AckOrder::GrowFirst, AckOrder::RecoveryFirst][r.up_to(1) as usize],
                cwnd_limited: [CwndLimited::LastSend, CwndLimited::Window][r.up_to(1) as usize],
                frto_recurring: r.up_to(1) == 1,
                rescue_retransmit: r.up_to(1) == 1,
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
                    2 if e.poll_at().pace.is_some() => {
                        now = e.poll_at().pace.unwrap().max(now);
                        e.on_pace(now, &mut out);
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
                    !e.tx.board.is_empty()
                        || e.tx.snd_nxt >= e.tx.write_end
                        || e.poll_at().pace.is_some(),
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

    /// Linux 4.x on (tcp_enter_loss): F-RTO does not start from a timeout during fast
    /// recovery, but does again on a recurring timeout of the same snd_una (RFC 5682 3.2).
    #[test]
    fn frto_recurring_starts_on_repeated_timeouts_and_not_from_recovery() {
        for recurring in [false, true] {
            let p = TcpParams {
                frto: true,
                frto_recurring: recurring,
                ..params(true)
            };
            // A timeout during fast recovery (segment 0 lost, 1-4 SACKed, its resend lost).
            let mut e = endpoint(p.clone());
            let mut out = Vec::new();
            e.write(0, 10 * MSS, &mut out);
            ack(&mut e, from_us(100), 0, &[(MSS, 5 * MSS)]);
            assert_eq!(e.tx.ca, CaState::Recovery);
            let mut out = Vec::new();
            e.tx.timer = TimerKind::Rto;
            e.on_rto(from_ms(200), &mut out);
            assert_eq!(
                e.tx.frto, !recurring,
                "from recovery, recurring {recurring}"
            );
            // Two timeouts in a row from the open state.
            let mut e = endpoint(p);
            let mut out = Vec::new();
            e.write(0, 10 * MSS, &mut out);
            e.on_rto(from_ms(200), &mut out);
            assert!(e.tx.frto);
            e.on_rto(from_ms(600), &mut out);
            assert_eq!(
                e.tx.frto, recurring,
                "recurring timeout, recurring {recurring}"
            );
        }
    }

    #[test]
    fn frto_ends_with_the_loss_state_so_a_later_loss_is_resent_at_once() {
        let mut e = endpoint(TcpParams {
            frto: true,
            ..params(true)
        });
        let mut out = Vec::new();
        e.write(0, 4 * MSS, &mut out);
        // The last segment is lost; its resend after the timeout completes the response.
        ack(&mut e, from_us(100), 3 * MSS, &[]);
        let rto = rto_at(&e).unwrap();
        out.clear();
        e.on_rto(rto, &mut out);
        assert_eq!(out.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![3 * MSS]);
        let t = rto + from_us(100);
        ack(&mut e, t, 4 * MSS, &[]);
        assert_eq!(e.tx.ca, CaState::Open);
        assert!(!e.tx.frto, "F-RTO does not outlive the Loss state");
        // The next response loses its first segment, with three SACKed above it: resent at
        // once, not left for another timeout.
        let mut out = Vec::new();
        let mut t = t + from_us(1);
        e.write(t, 40 * MSS, &mut out);
        while e.packets_out() < 5 {
            t += from_us(100);
            let una = e.tx.snd_una + MSS;
            ack(&mut e, t, una, &[]);
        }
        let una = e.tx.snd_una;
        let out = ack(&mut e, t + from_us(100), una, &[(una + MSS, una + 4 * MSS)]);
        assert_eq!(out.first().map(|s| s.seq), Some(una), "{out:?}");
        assert_eq!(e.stats().timeouts, 1);
    }

    #[test]
    fn prr_grows_one_more_only_when_snd_una_moves_and_nothing_new_is_lost() {
        let (mut e, _) = sender_with_flight(true, 10);
        // Segment 0 lost, 1-4 SACKed: recovery.
        ack(&mut e, from_us(100), 0, &[(MSS, 5 * MSS)]);
        assert_eq!(e.tx.ca, CaState::Recovery);
        // Below ssthresh with nothing owed (the slow-start reduction bound's branch).
        e.tx.ssthresh = 20;
        e.tx.prr_out = e.tx.prr_delivered;
        let in_flight = e.tx.in_flight();
        let after = |una_advanced: bool, newly_lost: bool| {
            let mut tx = e.tx.clone();
            tx.reduce_cwnd(1, una_advanced, newly_lost);
            tx.cwnd - in_flight
        };
        // Linux 5.14 on (tcp_cwnd_reduction): sndcnt = max(prr_delivered - prr_out, 1), plus
        // one if the ACK moved snd_una and revealed no new loss.
        assert_eq!(after(true, false), 2);
        assert_eq!(after(true, true), 1);
        assert_eq!(after(false, false), 1);
    }

    /// Linux 4.x on: the ACK that starts recovery does not grow cwnd first (so ssthresh is cut
    /// from the window before it), and the one that ends recovery grows it after setting it
    /// to ssthresh; Linux 2.6/3.x did the opposite.
    #[test]
    fn recovery_first_grows_cwnd_only_outside_recovery() {
        for (order, ssthresh) in [(AckOrder::GrowFirst, 7), (AckOrder::RecoveryFirst, 5)] {
            let mut e = endpoint(TcpParams {
                ack_order: order,
                ..params(true)
            });
            let mut out = Vec::new();
            e.write(0, 100 * MSS, &mut out);
            // Segment 0 arrives, 1 is lost, 2-4 are SACKed: recovery, in slow start.
            ack(&mut e, from_us(100), MSS, &[(2 * MSS, 5 * MSS)]);
            assert_eq!(e.tx.ca, CaState::Recovery);
            assert_eq!(e.tx.ssthresh, ssthresh, "{order:?}");
            let high = e.tx.high_seq;
            ack(&mut e, from_us(200), high, &[]);
            assert_eq!(e.tx.ca, CaState::Open);
            let grown = u32::from(order == AckOrder::RecoveryFirst);
            assert_eq!(e.cwnd(), ssthresh + grown, "{order:?}");
        }
    }

    /// Linux 6.0 on: a response whose last segment filled cwnd keeps its window cwnd-limited,
    /// so the ACKs of that window still grow cwnd; the last-send rule stops growing as soon
    /// as the data has run out.
    #[test]
    fn a_window_filled_by_the_last_segment_stays_cwnd_limited() {
        for (rule, grown) in [(CwndLimited::LastSend, 10), (CwndLimited::Window, 11)] {
            let mut e = endpoint(TcpParams {
                cwnd_limited: rule,
                ..params(true)
            });
            e.tx.ssthresh = 5; // congestion avoidance: one segment per window
            let mut out = Vec::new();
            e.write(0, 10 * MSS, &mut out);
            assert_eq!(out.len(), 10);
            for k in 1..=10 {
                ack(&mut e, from_us(100 + k), k * MSS, &[]);
            }
            assert_eq!(e.cwnd(), grown, "{rule:?}");
        }
    }

    /// A CUBIC sender in congestion avoidance at cwnd 2 = ssthresh after a loss at 2, on 4 ms
    /// jiffies, whose ACKs come one segment at a time every 700 us from `t0`.
    fn cubic_at_two(update: CubicUpdate) -> (Endpoint, SimTime) {
        let rtt = RttEstimator::new(from_ms(200), 120 * PS_PER_S, PS_PER_S, from_us(1))
            .with_timer_granularity(from_ms(4));
        let mut e = Endpoint::new(
            TcpParams {
                congestion_control: CongestionControl::Cubic,
                cubic_update: update,
                ..params(true)
            },
            rtt,
            Some(from_us(100)),
        );
        let mut out = Vec::new();
        e.write(0, 1000 * MSS, &mut out);
        e.tx.ssthresh = e.tx.cc.ssthresh_after_loss(2);
        e.tx.cwnd = 2;
        (e, from_ms(4))
    }

    #[test]
    fn linux_cubic_holds_a_window_of_two_for_hz_over_32() {
        let (mut e, t0) = cubic_at_two(CubicUpdate::Linux);
        // Forty ACKs over 28 ms (seven jiffies): the window stays at 2...
        for k in 0..40u64 {
            ack(&mut e, t0 + k * from_us(700), (k + 1) * MSS, &[]);
            assert_eq!(e.cwnd(), 2, "ACK {k}");
        }
        ack(&mut e, t0 + from_ms(32) - 1, 41 * MSS, &[]);
        assert_eq!(e.cwnd(), 2);
        // ...until the eighth jiffy, when the Reno-friendly estimate (2 + 14) takes over, one
        // segment now rather than every credit earned meanwhile.
        ack(&mut e, t0 + from_ms(32), 42 * MSS, &[]);
        assert_eq!(e.cwnd(), 3);
        // The per-ACK curve grows from 2 within the first four ACKs.
        let (mut e, t0) = cubic_at_two(CubicUpdate::PerAck);
        for k in 0..4u64 {
            ack(&mut e, t0 + k * from_us(700), (k + 1) * MSS, &[]);
        }
        assert!(e.cwnd() > 2, "cwnd {}", e.cwnd());
    }

    /// Linux's `tcp_slow_start_after_idle_check` returns at once for a congestion control
    /// with `cong_control` (BBR): an idle period longer than the RTO does not cut its cwnd,
    /// where Reno's is halved per RTO idle down to the initial window.
    #[test]
    fn bbr_keeps_its_cwnd_after_idle_where_reno_restarts() {
        for cc in [CongestionControl::Bbr, CongestionControl::Reno] {
            let mut e = endpoint(TcpParams {
                congestion_control: cc,
                cwnd_restart: CwndRestart::Idle,
                ..params(true)
            });
            let mut out = Vec::new();
            e.write(from_us(1), 10 * MSS, &mut out);
            ack(&mut e, from_us(101), 10 * MSS, &[]);
            let grown = e.cwnd();
            assert_eq!(grown, 20, "{cc:?}: slow start doubled the initial window");
            // Idle for 1 s, five RTOs of 200 ms.
            out.clear();
            e.write(PS_PER_S, MSS, &mut out);
            let want = if cc == CongestionControl::Bbr {
                grown
            } else {
                10
            };
            assert_eq!(e.cwnd(), want, "{cc:?}");
        }
    }

    /// Linux's `tcp_rate_check_app_limited` runs when the application writes (`tcp_sendmsg`):
    /// a write to an idle connection marks the samples until the next delivery; a sender
    /// that runs dry while ACKs come in is not marked (its samples keep counting for BBR).
    #[test]
    fn bbr_marks_samples_app_limited_when_the_application_writes_not_when_it_runs_dry() {
        let mut e = endpoint(TcpParams {
            congestion_control: CongestionControl::Bbr,
            ..params(true)
        });
        let mut out = Vec::new();
        e.write(from_us(1), 4 * MSS, &mut out);
        assert_eq!(out.len(), 4);
        // Idle when written: app-limited until more than 0 segments (at least 1) delivered.
        assert_eq!(e.tx.rate.app_limited_until, 1);
        ack(&mut e, from_us(101), MSS, &[]);
        assert_eq!(
            e.tx.rate.app_limited_until, 1,
            "1 delivered: not more than 1"
        );
        // All written data is out and two are in flight: running dry is no check.
        ack(&mut e, from_us(102), 2 * MSS, &[]);
        assert_eq!(e.tx.rate.app_limited_until, 0);
        // A write with 2 in flight and room in cwnd: until those are delivered too.
        e.write(from_us(103), MSS, &mut out);
        assert_eq!(e.tx.rate.app_limited_until, 2 + 2);
    }

    #[test]
    fn bbr_keeps_its_own_cwnd_when_recovery_ends() {
        let mut e = endpoint(TcpParams {
            congestion_control: CongestionControl::Bbr,
            rack_tlp: true,
            ..params(true)
        });
        let mut out = Vec::new();
        e.write(0, 200 * MSS, &mut out);
        let mut t = 0;
        // Segment 0 is lost; the rest arrive and are SACKed, then the retransmission.
        for k in 1..6u64 {
            t += from_us(20);
            ack(&mut e, t, 0, &[(MSS, (k + 1) * MSS)]);
        }
        assert_eq!(e.tx.ca, CaState::Recovery);
        while e.tx.ca == CaState::Recovery {
            t += from_us(20);
            let una = e.tx.snd_nxt.min(e.tx.snd_una + 6 * MSS);
            ack(&mut e, t, una, &[]);
        }
        // Linux skips tcp_end_cwnd_reduction for BBR: cwnd is not set to its (infinite)
        // ssthresh.
        assert!(e.cwnd() < 1000, "cwnd {}", e.cwnd());
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

    fn rack_params() -> TcpParams {
        TcpParams {
            rack_tlp: true,
            ..params(true)
        }
    }

    #[test]
    fn rack_marks_a_hole_lost_at_rtt_plus_reorder_window_and_not_before() {
        let mut e = endpoint(rack_params());
        let mut out = Vec::new();
        e.write(0, 10 * MSS, &mut out);
        // Only the last segment arrives, 100 us later: one SACK is too few for dupthresh, so
        // RACK waits RTT (100 us) + min_rtt / 4 (25 us) from the holes' send time, and the
        // reorder timer adds Linux's two ticks (1 us here): due at 127 us.
        let out = ack(&mut e, from_us(100), 0, &[(9 * MSS, 10 * MSS)]);
        assert!(out.is_empty(), "nothing is lost yet: {out:?}");
        assert_eq!(e.tx.timer, TimerKind::Reorder);
        assert_eq!(rto_at(&e), Some(from_us(127)));
        let mut out = Vec::new();
        e.on_rto(from_us(127), &mut out);
        assert_eq!(
            out.first().map(|s| s.seq),
            Some(0),
            "the first hole is resent"
        );
        assert_eq!(e.stats().timeouts, 0);
        assert_eq!(e.stats().recoveries, 1);
        assert_eq!(e.stats().rack_lost, 9);
        e.check_invariants().unwrap();
    }

    #[test]
    fn rack_marks_at_once_when_dupthresh_segments_are_sacked() {
        let mut e = endpoint(rack_params());
        let mut out = Vec::new();
        e.write(0, 10 * MSS, &mut out);
        let out = ack(&mut e, from_us(100), 0, &[(MSS, 4 * MSS)]);
        assert_eq!(out.first().map(|s| s.seq), Some(0));
        assert_eq!(e.stats().recoveries, 1);
    }

    #[test]
    fn a_lone_tail_loss_is_repaired_by_a_probe_without_a_timeout() {
        let mut e = endpoint(rack_params());
        let mut out = Vec::new();
        e.write(0, 10 * MSS, &mut out);
        // Segments 8 and 9 are lost: nothing is SACKed, nothing can trigger fast recovery.
        let t = from_us(100);
        ack(&mut e, t, 8 * MSS, &[]);
        // PTO = 2 SRTT + 2 ms with two segments out; SRTT is 100 us.
        assert_eq!(e.tx.timer, TimerKind::Probe);
        let pto = rto_at(&e).unwrap();
        assert_eq!(pto, t + from_us(200) + from_ms(2));
        let mut out = Vec::new();
        e.on_rto(pto, &mut out);
        assert_eq!(e.stats().loss_probes, 1);
        assert_eq!(out.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![9 * MSS]);
        // The probe's SACK reveals the hole below it: RACK resends it at once.
        let out = ack(&mut e, pto + from_us(100), 8 * MSS, &[(9 * MSS, 10 * MSS)]);
        assert_eq!(out.first().map(|s| s.seq), Some(8 * MSS));
        ack(&mut e, pto + from_us(200), 10 * MSS, &[]);
        assert_eq!(e.stats().timeouts, 0);
        assert!(rto_at(&e).is_none());
    }

    #[test]
    fn a_probe_for_a_lone_segment_waits_for_a_delayed_ack_and_yields_to_the_rto() {
        let mut e = endpoint(rack_params());
        let mut out = Vec::new();
        e.write(0, 2 * MSS, &mut out);
        ack(&mut e, from_us(100), MSS, &[]);
        // One segment out: 2 SRTT + RTOmin would come after the RTO, which wins.
        assert_eq!(e.tx.timer, TimerKind::Probe);
        assert_eq!(rto_at(&e), Some(from_us(100) + e.tx.rtt.rto(0)));
    }
}
