//! The send half's answer to an ACK (Linux's `tcp_ack`), step by step: the SACK blocks
//! (RFC 2018, RFC 6675), the cumulative ACK with its RTT sample (RFC 6298, Karn's algorithm),
//! duplicate ACKs, the tail loss probe's episode and RACK (RFC 8985), then loss recovery
//! (`recovery.rs`), the window (`window.rs`) and the timer (`timer.rs`).

use super::{Sender, TimerKind, TIMEOUT_RUN_BUCKETS};
use crate::net::MAX_SACK_BLOCKS;
use crate::tcp::cc::{CaState, Controller};
use crate::tcp::rack::Rack;
use crate::tcp::rate::Rate;
use crate::tcp::scoreboard::{Cleaned, Seg};
use crate::units::SimTime;

/// What one ACK brought, gathered step by step.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ack {
    /// When it arrived.
    pub(super) now: SimTime,
    /// Its cumulative ACK.
    pub(super) ack: u64,
    /// It came on a segment with data (so it is not a duplicate ACK).
    pub(super) has_data: bool,
    /// `snd_una` before it.
    pub(super) prior_una: u64,
    /// The highest sequence SACKed before it (Linux's `prior_fack`), for RACK's reordering.
    pub(super) prior_fack: u64,
    /// Segments ever marked lost before it.
    pub(super) lost_before: u64,
    /// Linux's `tcp_min_rtt`: the smallest RTT seen before it, the handshake's included.
    pub(super) min_rtt: SimTime,
    /// RACK-TLP is on (it needs SACK).
    pub(super) rack_tlp: bool,
    /// Delivered segments feed a delivery-rate sample (for a controller that sets cwnd).
    pub(super) sampling: bool,
    /// Segments it newly SACKed.
    pub(super) newly_sacked: u32,
    /// Segments it newly acknowledged cumulatively.
    pub(super) acked: u32,
    /// Segments it took out of the network, as loss recovery and growth count them.
    pub(super) delivered: u32,
    /// Without SACK, in recovery: the segments a cumulative ACK delivered.
    pub(super) reno_delivered: u32,
    /// When the earliest newly SACKed segment never resent left (`tcp_sacktag_one`).
    pub(super) first_sackt: Option<SimTime>,
    /// The cumulative ACK's RTT sample (Karn's algorithm), if any.
    pub(super) rtt_sample: Option<SimTime>,
    /// The RTT was sampled from the resent head's timestamp echo instead.
    pub(super) ts_sampled: bool,
}

impl Ack {
    /// It moved `snd_una`.
    #[inline]
    pub(super) fn advanced(&self) -> bool {
        self.ack > self.prior_una
    }
}

/// What every newly delivered segment advances: RACK's most recent delivery and the
/// delivery-rate sample (the papers' stack needs neither, and skips the work).
struct Deliveries<'a> {
    rack: &'a mut Rack,
    rate: &'a mut Rate,
    rack_tlp: bool,
    sampling: bool,
    now: SimTime,
    min_rtt: SimTime,
    prior_fack: u64,
}

impl<'a> Deliveries<'a> {
    fn new(rack: &'a mut Rack, rate: &'a mut Rate, a: &Ack) -> Deliveries<'a> {
        Deliveries {
            rack,
            rate,
            rack_tlp: a.rack_tlp,
            sampling: a.sampling,
            now: a.now,
            min_rtt: a.min_rtt,
            prior_fack: a.prior_fack,
        }
    }

    /// `seg` was newly delivered, SACKed or cumulatively acknowledged.
    #[inline]
    fn delivered(&mut self, seg: &mut Seg, sacked: bool) {
        if self.rack_tlp {
            let retx = seg.ever_retransmitted();
            if sacked {
                self.rack.note_sacked(seg.end(), retx);
            } else {
                self.rack.note_acked(seg.end(), retx, self.prior_fack);
            }
            self.rack
                .advance(seg.sent(), seg.end(), retx, self.now, self.min_rtt);
        }
        if self.sampling {
            self.rate.on_delivered(seg);
        }
    }
}

impl Sender {
    /// An ACK (cumulative `ack`, SACK blocks `sack`) arrived, on a segment with data or not.
    pub(in crate::tcp) fn on_ack(
        &mut self,
        now: SimTime,
        ack: u64,
        sack: &[(u64, u64)],
        has_data: bool,
    ) {
        if ack > self.snd_nxt {
            return; // acknowledges data never sent: ignore (RFC 793)
        }
        let mut a = self.begin_ack(now, ack, has_data);
        if self.p.sack {
            self.process_sack(&mut a, sack);
        }
        if ack > self.snd_una {
            self.process_cumulative_ack(&mut a);
        } else if self.is_dupack(&a) {
            self.dupacks += 1;
        }
        self.sample_sack_rtt(&a);
        a.delivered = self.delivered(&a);
        let reorder_armed = a.rack_tlp && self.rack_on_ack(&a);
        self.hystart_on_ack(&a);
        self.recovery_on_ack(&a);
        self.control_on_ack(&a);
        if a.rack_tlp && !reorder_armed {
            self.set_xmit_timer(&a);
        }
    }

    /// The ACK's record before any of it is processed; the delivery-rate sample starts.
    fn begin_ack(&mut self, now: SimTime, ack: u64, has_data: bool) -> Ack {
        self.orig_delivered = false;
        let lost_before = self.board.lost_total();
        let sampling = self.cc.sets_cwnd();
        if sampling {
            self.rate.begin(self.in_flight());
        }
        Ack {
            now,
            ack,
            has_data,
            prior_una: self.snd_una,
            prior_fack: self.rack.fack(),
            lost_before,
            // Linux's tcp_min_rtt: the handshake's RTT counts too.
            min_rtt: self.path_min_rtt.min(self.min_rtt),
            rack_tlp: self.p.rack_tlp && self.p.sack,
            sampling,
            newly_sacked: 0,
            acked: 0,
            delivered: 0,
            reno_delivered: 0,
            first_sackt: None,
            rtt_sample: None,
            ts_sampled: false,
        }
    }

    /// The SACK blocks mark newly SACKed segments (RFC 6675's scoreboard); in recovery
    /// without RACK, a retransmission that SACKed data sent after it did not arrive is lost.
    fn process_sack(&mut self, a: &mut Ack, sack: &[(u64, u64)]) {
        // Linux's tcp_sacktag_write_queue walks the blocks in sequence order, not in the order
        // the receiver wrote them (most recent first): RACK's reordering and its RTT, the last
        // delivery's, read the order.
        let mut blocks = [(0, 0); MAX_SACK_BLOCKS];
        let n = sack.len().min(MAX_SACK_BLOCKS);
        debug_assert_eq!(
            n,
            sack.len(),
            "an ACK carries at most {MAX_SACK_BLOCKS} blocks"
        );
        blocks[..n].copy_from_slice(&sack[..n]);
        blocks[..n].sort_unstable_by_key(|b| b.0);
        let mut d = Deliveries::new(&mut self.rack, &mut self.rate, a);
        // Linux's tcp_sacktag_one: when the earliest newly SACKed segment never resent left.
        let mut first_sackt: Option<SimTime> = None;
        let mut newly_sacked = 0;
        let mut highest = 0;
        for &(s, e) in &blocks[..n] {
            if e > a.ack.max(self.snd_una) {
                let (n, orig) =
                    self.board
                        .mark_sacked_with(s.max(a.ack), e, self.high_seq, &mut |seg| {
                            if !seg.ever_retransmitted() {
                                first_sackt =
                                    Some(first_sackt.map_or(seg.sent(), |t| t.min(seg.sent())));
                            }
                            d.delivered(seg, true)
                        });
                newly_sacked += n;
                self.orig_delivered |= orig;
                highest = highest.max(e);
            }
        }
        a.newly_sacked = newly_sacked;
        a.first_sackt = first_sackt;
        if newly_sacked > 0 && self.ca != CaState::Open && !a.rack_tlp {
            // RACK finds lost retransmissions by time instead.
            self.board.mark_lost_retransmissions(highest);
        }
    }

    /// The ACK moved `snd_una` (Linux's `tcp_clean_rtx_queue`): what it covers leaves the
    /// scoreboard, the RTT is sampled, backoff and the timeout run end, duplicate ACKs are
    /// settled, and without RACK-TLP the retransmission timer restarts.
    fn process_cumulative_ack(&mut self, a: &mut Ack) {
        let mut d = Deliveries::new(&mut self.rack, &mut self.rate, a);
        let cleaned = self
            .board
            .clean_with(a.ack, self.high_seq, &mut |seg| d.delivered(seg, false));
        a.acked = cleaned.acked;
        self.orig_delivered |= cleaned.orig_delivered;
        self.snd_una = a.ack;
        self.sample_rtt(a, &cleaned);
        self.end_timeout_run();
        self.settle_dupacks(a);
        self.track_round(a.ack);
        if a.rack_tlp {
            // The probe or RTO timer is set once the ACK is processed (`set_xmit_timer`).
        } else if self.board.is_empty() {
            self.rto_at = None;
        } else {
            self.arm_rto(a.now);
        }
    }

    /// Linux's `tcp_clean_rtx_queue`: the RTT of the oldest segment this ACK newly covers;
    /// Karn's algorithm: none at all if any covered segment was retransmitted.
    fn sample_rtt(&mut self, a: &mut Ack, cleaned: &Cleaned) {
        let now = a.now;
        if let (Some(sent), false) = (cleaned.first_sent, cleaned.retransmitted) {
            let r = self.rtt.measure(sent, now);
            self.rtt.sample_at(r, a.ack, self.snd_nxt);
            self.min_rtt = self.min_rtt.min(r);
            self.cc.on_rtt(now, r);
            a.rtt_sample = Some(r);
        } else if let (None, Some(sent), true) =
            (a.first_sackt, cleaned.first_sent, self.p.sack_rtt)
        {
            // Linux's tcp_ack_update_rtt: where Karn's rule leaves the cumulative ACK
            // without a sample and nothing was SACKed, the timestamp echo's: the resent
            // head's own transmission.
            let r = self.rtt.measure(sent, now);
            self.rtt.sample_at(r, a.ack, self.snd_nxt);
            a.ts_sampled = true;
        }
    }

    /// Progress: the RTO's backoff ends (RFC 6298 (5.7)), and so does the run of successive
    /// timeouts, which is counted.
    fn end_timeout_run(&mut self) {
        self.backoff = 0;
        if self.timeout_run > 0 {
            let k = self.timeout_run as usize;
            self.stats.timeout_runs[k.min(TIMEOUT_RUN_BUCKETS) - 1] += 1;
            self.stats.max_timeout_run = self.stats.max_timeout_run.max(self.timeout_run);
            self.timeout_run = 0;
        }
    }

    /// Duplicate ACKs after a cumulative ACK: forgotten, except without SACK in recovery.
    fn settle_dupacks(&mut self, a: &mut Ack) {
        if !self.p.sack && self.ca != CaState::Open {
            // Linux's tcp_remove_reno_sacks: one ACKed segment filled the hole, the rest
            // had already been counted by duplicate ACKs.
            a.reno_delivered = a.acked.saturating_sub(self.dupacks).max(1);
            self.dupacks = self.dupacks.saturating_sub(a.acked.saturating_sub(1));
        } else {
            self.dupacks = 0;
        }
    }

    /// An ACK that did not move `snd_una` is a duplicate ACK if it carries no data while data
    /// is outstanding; RFC 6675: with SACK, only if it SACKs new data.
    fn is_dupack(&self, a: &Ack) -> bool {
        a.ack == self.snd_una
            && !a.has_data
            && !self.board.is_empty()
            && (!self.p.sack || a.newly_sacked > 0)
    }

    /// Linux's tcp_ack_update_rtt: without a sample from the cumulative ACK, the SACK's, from
    /// the earliest newly SACKed segment never resent; so RTTs keep being measured through a
    /// recovery, queueing delay included.
    fn sample_sack_rtt(&mut self, a: &Ack) {
        if let (Some(sent), true, None, false) =
            (a.first_sackt, self.p.sack_rtt, a.rtt_sample, a.ts_sampled)
        {
            let r = self.rtt.measure(sent, a.now);
            self.rtt.sample_at(r, a.ack, self.snd_nxt);
        }
    }

    /// Segments the ACK took out of the network.
    fn delivered(&self, a: &Ack) -> u32 {
        if !self.p.sack && a.advanced() && self.ca != CaState::Open {
            return a.reno_delivered;
        }
        // Without SACK a duplicate ACK stands for one segment delivered.
        let reno_dup =
            !self.p.sack && a.ack == a.prior_una && !a.has_data && !self.board.is_empty();
        a.acked + a.newly_sacked + u32::from(reno_dup)
    }

    /// RACK-TLP's look at the ACK: the probe's episode, then, if RACK's most recent delivery
    /// moved, its loss detection. Returns whether RACK armed its reorder timer.
    fn rack_on_ack(&mut self, a: &Ack) -> bool {
        self.process_tlp_ack(a);
        std::mem::take(&mut self.rack.advanced) && self.rack_detect(a.now, false).1
    }

    /// Linux's `tcp_process_tlp_ack`: an ACK at or beyond the probe's episode ends it. If the
    /// probe was a retransmission and the ACK moves beyond it, the probe repaired a loss: cut
    /// the window once, as fast recovery would have. A duplicate ACK without new data says
    /// the original and the probe both arrived. (Without D-SACK the simulator cannot tell a
    /// needless probe acknowledged exactly at the episode's end; it keeps the window then.)
    fn process_tlp_ack(&mut self, a: &Ack) {
        let Some(high) = self.tlp_high_seq else {
            return;
        };
        if a.ack < high {
            return;
        }
        if !self.tlp_retrans {
            self.tlp_high_seq = None;
        } else if a.ack > high {
            self.tlp_high_seq = None;
            if self.ca == CaState::Open {
                self.ssthresh = self.loss_ssthresh();
                if !self.cc.sets_cwnd() {
                    self.cwnd = self.ssthresh;
                    self.cwnd_cnt = 0;
                }
                self.stats.loss_probe_recoveries += 1;
            }
        } else if a.ack == a.prior_una && a.newly_sacked == 0 && !a.has_data {
            self.tlp_high_seq = None;
        }
    }

    /// RACK's loss detection over the scoreboard; arms the reorder timer for segments not yet
    /// due (unless `timer_fired`: the caller rearms). Returns the segments newly marked lost
    /// and whether the reorder timer was armed.
    pub(super) fn rack_detect(&mut self, now: SimTime, timer_fired: bool) -> (u32, bool) {
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
}

#[cfg(test)]
mod tests {
    use crate::tcp::sender::TimerKind;
    use crate::tcp::testing::*;
    use crate::tcp::TcpParams;
    use crate::units::from_us;

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

    #[test]
    fn rack_marks_a_hole_lost_at_rtt_plus_reorder_window_and_not_before() {
        let (mut e, _) = with_flight(rack_params(), 10);
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
    fn an_ack_that_covers_a_segment_and_sacks_above_it_is_not_reordering() {
        let (mut e, _) = with_flight(rack_params(), 10);
        // Segment 1 lost: the receiver's delayed ACK for segment 0 leaves at once when
        // segment 2 arrives, with segment 2's SACK block. Linux compares segment 0 with what
        // was SACKed before this ACK (tcp_ack's prior_fack): nothing.
        ack(&mut e, from_us(100), MSS, &[(2 * MSS, 3 * MSS)]);
        assert!(!e.tx.rack.reord_seen);
        // Segment 1, never resent, is acknowledged after segment 2 was SACKed: reordering.
        ack(&mut e, from_us(101), 3 * MSS, &[]);
        assert!(e.tx.rack.reord_seen);
    }

    #[test]
    fn sack_blocks_are_walked_in_sequence_order() {
        let (mut e, _) = with_flight(rack_params(), 10);
        ack(&mut e, from_us(100), 0, &[(2 * MSS, 3 * MSS)]);
        // One ACK newly SACKs segments 3 and 5, the most recent block first (RFC 2018, as a
        // receiver that compressed its SACKs writes them). In sequence order, as Linux walks
        // them, neither lies below a segment SACKed before it.
        ack(
            &mut e,
            from_us(101),
            0,
            &[(5 * MSS, 6 * MSS), (2 * MSS, 4 * MSS)],
        );
        assert!(!e.tx.rack.reord_seen);
        // Segment 4, never resent, SACKed after segment 5: reordering.
        ack(&mut e, from_us(102), 0, &[(2 * MSS, 6 * MSS)]);
        assert!(e.tx.rack.reord_seen);
    }

    #[test]
    fn rack_marks_at_once_when_dupthresh_segments_are_sacked() {
        let (mut e, _) = with_flight(rack_params(), 10);
        let out = ack(&mut e, from_us(100), 0, &[(MSS, 4 * MSS)]);
        assert_eq!(out.first().map(|s| s.seq), Some(0));
        assert_eq!(e.stats().recoveries, 1);
    }
}
