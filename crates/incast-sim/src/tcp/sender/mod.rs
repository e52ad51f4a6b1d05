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
//!
//! - `ack.rs`: an ACK, step by step (SACK, the cumulative ACK and the RTT, duplicate ACKs,
//!   the tail loss probe's episode and RACK).
//! - `recovery.rs`: what loss recovery makes of an ACK in each state, fast recovery with PRR,
//!   F-RTO's undo.
//! - `window.rs`: cwnd's growth, its restart after idleness, ECN's cut, the congestion
//!   control's turn at an ACK and the pacing rate.
//! - `send.rs`: what goes out (lost segments, new data, the rescue retransmission), pacing.
//! - `timer.rs`: the retransmission timer, shared with the tail loss probe and RACK's reorder
//!   timer.

mod ack;
mod recovery;
mod send;
mod timer;
mod window;

pub use timer::probe_timeout;

use crate::config::CongestionControl;
use crate::rng::Rng;
use crate::tcp::cc::hystart::HyStart;
use crate::tcp::cc::{AckState, AnyController, CaState, Controller, MAX_CWND};
use crate::tcp::idle::{Fields, Kind};
use crate::tcp::params::TcpParams;
use crate::tcp::rack::Rack;
use crate::tcp::rate::Rate;
use crate::tcp::receiver::Outbox;
use crate::tcp::rto_policy::RtoPolicy;
use crate::tcp::rtt::RttEstimator;
use crate::tcp::scoreboard::Scoreboard;
use crate::units::SimTime;

/// Bytes-per-round entries kept for the first transfer.
const MAX_ROUNDS: usize = 32;
/// Successive-timeout runs longer than this are counted in the last bucket.
pub const TIMEOUT_RUN_BUCKETS: usize = 16;

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
#[derive(Debug, Clone, PartialEq)]
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
    /// The handshake's RTT (Linux's min-RTT filter starts from it; RACK and the
    /// delivery-rate samples use it).
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
    pub(in crate::tcp) fn new(p: TcpParams, rtt: RttEstimator) -> Sender {
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

    /// Whether its congestion controller's state can be held compact (`idle.rs`).
    pub(in crate::tcp) fn compactable(&self) -> bool {
        self.cc.compactable()
    }

    /// Visit the fields an idle send half may hold differently from one as set up (see
    /// `idle.rs`); the scoreboard is empty then and the delivery-rate sampler is BBR's. The
    /// bytes of each slow-start round (a list) are visited last of all, by the slot.
    pub(in crate::tcp) fn idle_fields(&mut self, f: &mut impl Fields) {
        for s in [&mut self.snd_una, &mut self.snd_nxt, &mut self.write_end] {
            f.num(Kind::Seq, s);
        }
        for n in [
            &mut self.dupacks,
            &mut self.cwnd,
            &mut self.cwnd_cnt,
            &mut self.ssthresh,
            &mut self.undo_cwnd,
            &mut self.undo_ssthresh,
            &mut self.prior_cwnd,
            &mut self.prr_delivered,
            &mut self.prr_out,
            &mut self.max_packets_out,
            &mut self.backoff,
            &mut self.timeout_run,
            &mut self.burst_left,
        ] {
            f.u32(n);
        }
        for s in [
            &mut self.high_seq,
            &mut self.high_rxt,
            &mut self.max_packets_seq,
            &mut self.round_end,
            &mut self.round_start,
            &mut self.first_end,
            &mut self.cwr_end,
        ] {
            f.num(Kind::Seq, s);
        }
        f.opt(Kind::Seq, &mut self.tlp_high_seq);
        for b in [
            &mut self.orig_delivered,
            &mut self.cwnd_limited,
            &mut self.window_limited,
            &mut self.rounds_open,
            &mut self.send_cwr,
            &mut self.tlp_retrans,
            &mut self.force_retx,
            &mut self.frto,
            &mut self.frto_head_sent,
        ] {
            f.flag(b);
        }
        f.num(Kind::Time, &mut self.last_send);
        f.num(Kind::Time, &mut self.next_send);
        f.num(Kind::Rtt, &mut self.min_rtt);
        f.num(Kind::Plain, &mut self.pacing_rate);
        f.num(Kind::Plain, &mut self.burst_bytes);
        self.rtt.idle_fields(f);
        self.rack.idle_fields(f);
        self.board.idle_fields(f);
        if let Some(h) = self.hystart.as_mut() {
            h.idle_fields(f);
        }
        self.cc.idle_fields(f);
        let s = &mut self.stats;
        for n in [
            &mut s.timeouts,
            &mut s.recoveries,
            &mut s.retx_fast,
            &mut s.retx_timeout,
            &mut s.max_timeout_run,
            &mut s.ecn_reductions,
            &mut s.spurious_timeouts,
            &mut s.loss_probes,
            &mut s.loss_probe_recoveries,
            &mut s.rack_lost,
        ] {
            f.u32(n);
        }
        for n in s.timeout_runs.iter_mut().take(2) {
            f.u32(n);
        }
        f.num(Kind::Plain, &mut s.segments);
    }

    /// Draw timeouts with `policy` (RTO randomization).
    pub(in crate::tcp) fn set_rto_policy(&mut self, policy: RtoPolicy) {
        self.rto_policy = Some(policy);
    }

    /// Draw the congestion control's random choices from `rng`.
    pub(in crate::tcp) fn set_cc_rng(&mut self, rng: Rng) {
        self.cc.seed(rng);
    }

    /// The application writes `bytes` more.
    pub(in crate::tcp) fn write(&mut self, now: SimTime, bytes: u64, out: &mut Outbox<'_>) {
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

    pub(super) fn in_flight(&self) -> u32 {
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

    /// What a congestion control that sets cwnd itself reads of the connection at `now`.
    pub(super) fn ack_state(&self, now: SimTime, in_flight: u32, ca: CaState) -> AckState {
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

    /// Bytes sent per slow-start round of the first transfer (a round ends when an ACK covers
    /// the data that was outstanding when it began, as Linux's HyStart counts rounds).
    pub(super) fn track_round(&mut self, ack: u64) {
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
    pub(in crate::tcp) fn check_invariants(&self) -> Result<(), String> {
        self.board.check_invariants()?;
        if self.snd_una > self.snd_nxt || self.snd_nxt > self.write_end {
            return Err("sequence space out of order".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{
        AckOrder, CongestionControl, CubicUpdate, CwndLimited, CwndRestart, RecoveryCwnd,
    };
    use crate::net::MAX_SACK_BLOCKS;
    use crate::tcp::testing::*;
    use crate::tcp::TcpParams;
    use crate::units::from_us;

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
}
