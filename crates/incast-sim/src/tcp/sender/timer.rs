//! The retransmission timer (RFC 6298), which RACK-TLP shares with the tail loss probe and
//! RACK's reorder timeout (RFC 8985, Linux's `icsk_pending`): what fires, and when it is
//! armed.

use super::ack::Ack;
use super::{Sender, TimerKind};
use crate::tcp::cc::{CaState, Controller};
use crate::tcp::receiver::Outbox;
use crate::tcp::rtt::RttEstimator;
use crate::units::{SimTime, PS_PER_MS, PS_PER_S};

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

impl Sender {
    /// Linux's `tcp_set_xmit_timer` with RACK-TLP, once an ACK is processed: no timer if
    /// nothing is outstanding; after an ACK that moved `snd_una`, the tail loss probe's, or
    /// else the RTO's.
    pub(super) fn set_xmit_timer(&mut self, a: &Ack) {
        if self.board.is_empty() {
            self.rto_at = None;
            self.timer = TimerKind::Rto;
        } else if a.advanced() && !self.schedule_loss_probe(a.now, true) {
            self.timer = TimerKind::Rto;
            self.arm_rto(a.now);
        }
    }

    /// The retransmission timer fired, for whatever it was armed.
    pub(in crate::tcp) fn on_timer(&mut self, now: SimTime, out: &mut Outbox<'_>) {
        match std::mem::replace(&mut self.timer, TimerKind::Rto) {
            TimerKind::Rto => self.on_rto(now, out),
            TimerKind::Probe => self.send_loss_probe(now, out),
            TimerKind::Reorder => self.reorder_timeout(now, out),
        }
    }

    /// The retransmission timer fired (RFC 6298 (5.4)-(5.6)).
    fn on_rto(&mut self, now: SimTime, out: &mut Outbox<'_>) {
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

    pub(super) fn arm_rto(&mut self, now: SimTime) {
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

    /// Linux's `tcp_schedule_loss_probe`: in Open state with data out, arm the probe timer for
    /// 2·SRTT (plus RTOmin for a lone segment, whose ACK a delayed-ACK receiver may hold back;
    /// else plus 2 ms), never later than the RTO would fire. Returns whether it did.
    pub(super) fn schedule_loss_probe(&mut self, now: SimTime, advancing_rto: bool) -> bool {
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
}

#[cfg(test)]
mod tests {
    use crate::tcp::sender::TimerKind;
    use crate::tcp::testing::*;
    use crate::tcp::{Endpoint, RttEstimator, TcpParams};
    use crate::units::{from_ms, from_us, PS_PER_S};

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
    fn a_partly_acknowledged_head_is_retransmitted_after_a_timeout() {
        let (mut e, _) = sender_with_flight(true, 2);
        ack(&mut e, from_us(100), MSS / 2, &[]);
        let mut out = Vec::new();
        e.on_rto(rto_at(&e).unwrap(), &mut out);
        assert_eq!(out.first().map(|s| s.seq), Some(0));
        e.check_invariants().unwrap();
    }

    #[test]
    fn a_lone_tail_loss_is_repaired_by_a_probe_without_a_timeout() {
        let (mut e, _) = with_flight(rack_params(), 10);
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
        let (mut e, _) = with_flight(rack_params(), 2);
        ack(&mut e, from_us(100), MSS, &[]);
        // One segment out: 2 SRTT + RTOmin would come after the RTO, which wins.
        assert_eq!(e.tx.timer, TimerKind::Probe);
        assert_eq!(rto_at(&e), Some(from_us(100) + e.tx.rtt.rto(0)));
    }
}
