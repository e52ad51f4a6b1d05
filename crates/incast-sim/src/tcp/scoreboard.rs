//! The send half's scoreboard (RFC 6675, as Linux keeps it): the segments sent and not yet
//! cumulatively acknowledged, each flagged SACKED, LOST and RETRANS, with counters of each so
//! that packets in flight are `packets_out - sacked_out - lost_out + retrans_out` without a
//! scan. A segment resent by RFC 6675's rule 3 is RETRANS without LOST: it counts twice,
//! original and copy.

use std::collections::VecDeque;

use crate::tcp::idle::{Fields, Kind};
use crate::tcp::rack::{sent_after, Rack};
use crate::units::SimTime;

const SACKED: u8 = 1;
const LOST: u8 = 2;
const RETRANS: u8 = 4;
const EVER_RETX: u8 = 8;
/// The delivery-rate sample of this segment was taken (Linux clears `delivered_mstamp`).
const RATE_TAKEN: u8 = 16;

/// The connection's delivery state when a segment was sent, for rate samples (Linux's
/// `tcp_rate_skb_sent`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct TxState {
    /// Segments delivered when it was sent (`tp->delivered`).
    pub(super) delivered: u64,
    /// When that count last grew (`tp->delivered_mstamp`).
    pub(super) delivered_at: SimTime,
    /// When the flight it belongs to began (`tp->first_tx_mstamp`).
    pub(super) first_tx: SimTime,
    /// The sender was application-limited then.
    pub(super) app_limited: bool,
}

/// A sent segment awaiting its cumulative ACK.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Seg {
    /// First byte.
    pub(super) seq: u64,
    /// Bytes.
    pub(super) len: u32,
    /// SACKED, LOST, RETRANS, EVER_RETX.
    flags: u8,
    /// Last (re)transmission time.
    sent: SimTime,
    /// `snd_nxt` when last retransmitted: a SACK beyond it proves the retransmission lost.
    retx_nxt: u64,
    /// Delivery state at the last transmission.
    pub(super) tx: TxState,
}

impl Seg {
    /// One past the last byte.
    pub(super) fn end(&self) -> u64 {
        self.seq + self.len as u64
    }
    fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
    /// Last (re)transmission time.
    #[inline]
    pub(super) fn sent(&self) -> SimTime {
        self.sent
    }
    /// Ever retransmitted.
    #[inline]
    pub(super) fn ever_retransmitted(&self) -> bool {
        self.has(EVER_RETX)
    }
    /// Its rate sample is still to be taken; marks it taken.
    #[inline]
    pub(super) fn take_rate(&mut self) -> bool {
        let fresh = !self.has(RATE_TAKEN);
        self.flags |= RATE_TAKEN;
        fresh
    }
}

/// What a cumulative ACK took off the scoreboard.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Cleaned {
    /// Segments newly delivered (acknowledged and not SACKed before).
    pub(super) acked: u32,
    /// Send time of the oldest of those, the RTT sample's start (Linux's
    /// `tcp_clean_rtx_queue`).
    pub(super) first_sent: Option<SimTime>,
    /// Some segment covered was ever retransmitted: no RTT sample (Karn).
    pub(super) retransmitted: bool,
    /// A segment never retransmitted and below the recovery point was delivered (F-RTO).
    pub(super) orig_delivered: bool,
}

/// Segments sent and not yet cumulatively acknowledged, with their loss-recovery flags.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Scoreboard {
    /// The segments, in sequence order.
    segs: VecDeque<Seg>,
    /// Segments SACKed.
    sacked_out: u32,
    /// Segments deemed lost.
    lost_out: u32,
    /// Segments retransmitted and not yet acknowledged or deemed lost again.
    retrans_out: u32,
    /// Segments marked LOST and not yet retransmitted.
    lost_pending: u32,
    /// No LOST-and-unsent segment starts below this sequence number.
    retx_hint: u64,
    /// Segments ever newly marked lost (Linux's `tp->lost`), for BBR's loss count.
    lost_total: u64,
}

/// Spare segment buffers. A connection with nothing outstanding and nothing unsent hands its
/// buffer here and one that is written to takes one back, so the memory of the scoreboards
/// follows the connections in flight, not every connection of the run: a key-value cluster's
/// million connections are mostly idle, and a buffer grown to a 100 KB reply's window holds
/// about 8 KB. A buffer's capacity changes nothing a connection does.
#[derive(Debug, Default)]
pub(super) struct SegPool(Vec<VecDeque<Seg>>);

impl Scoreboard {
    /// Visit what an empty scoreboard keeps (see `idle.rs`).
    pub(super) fn idle_fields(&mut self, f: &mut impl Fields) {
        f.num(Kind::Seq, &mut self.retx_hint);
        f.num(Kind::Plain, &mut self.lost_total);
    }

    /// Nothing outstanding: lend the segment buffer to `pool`.
    #[inline]
    pub(super) fn park(&mut self, pool: &mut SegPool) {
        if self.segs.is_empty() && self.segs.capacity() > 0 {
            pool.0.push(std::mem::take(&mut self.segs));
        }
    }

    /// About to send: take a buffer from `pool` if this scoreboard lent its own.
    #[inline]
    pub(super) fn unpark(&mut self, pool: &mut SegPool) {
        if self.segs.capacity() == 0 {
            if let Some(b) = pool.0.pop() {
                debug_assert!(b.is_empty());
                self.segs = b;
            }
        }
    }

    /// Capacity of the segment buffer (for tests).
    #[cfg(test)]
    pub(super) fn capacity(&self) -> usize {
        self.segs.capacity()
    }

    /// Segments sent and not yet cumulatively acknowledged.
    #[inline]
    pub(super) fn packets_out(&self) -> u32 {
        self.segs.len() as u32
    }

    /// Nothing outstanding.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    /// Segments SACKed.
    #[inline]
    pub(super) fn sacked_out(&self) -> u32 {
        self.sacked_out
    }

    /// Segments deemed lost.
    #[inline]
    pub(super) fn lost_out(&self) -> u32 {
        self.lost_out
    }

    /// Retransmissions in flight.
    #[inline]
    pub(super) fn retrans_out(&self) -> u32 {
        self.retrans_out
    }

    /// Lost segments still to be retransmitted.
    #[inline]
    pub(super) fn lost_pending(&self) -> u32 {
        self.lost_pending
    }

    /// Nothing deemed lost is waiting any more (the lost segments are gone or retransmitted).
    #[inline]
    pub(super) fn forget_pending(&mut self) {
        self.lost_pending = 0;
    }

    /// The segments, oldest first (for tests).
    #[cfg(test)]
    pub(super) fn iter(&self) -> impl Iterator<Item = &Seg> {
        self.segs.iter()
    }

    /// Segments ever newly marked lost.
    #[inline]
    pub(super) fn lost_total(&self) -> u64 {
        self.lost_total
    }

    /// A new segment `[seq, seq + len)` went out at `now`, with delivery state `tx`.
    #[inline]
    pub(super) fn push(&mut self, seq: u64, len: u32, now: SimTime, tx: TxState) {
        self.segs.push_back(Seg {
            seq,
            len,
            flags: 0,
            sent: now,
            retx_nxt: 0,
            tx,
        });
    }

    /// Transmission time of the oldest outstanding segment.
    #[inline]
    pub(super) fn head_sent(&self) -> Option<SimTime> {
        self.segs.front().map(|s| s.sent)
    }

    /// The highest segment not SACKed (a tail loss probe resends it).
    pub(super) fn last_unsacked(&self) -> Option<usize> {
        (0..self.segs.len())
            .rev()
            .find(|&i| !self.segs[i].has(SACKED))
    }

    /// RACK's loss detection (RFC 8985 6.2, Linux's `tcp_rack_detect_loss`): every segment
    /// sent before RACK's most recent delivery whose RTT plus `reo_wnd` has passed is lost
    /// (a lost retransmission too); returns how many were newly marked and the longest
    /// wait of those not yet due (the reorder timer's).
    pub(super) fn rack_detect_loss(
        &mut self,
        rack: &Rack,
        reo_wnd: SimTime,
        now: SimTime,
    ) -> (u32, Option<SimTime>) {
        let mut marked = 0;
        let mut wait: Option<SimTime> = None;
        for i in 0..self.segs.len() {
            let s = self.segs[i];
            if s.has(SACKED) || (s.has(LOST) && !s.has(RETRANS)) {
                continue;
            }
            if !sent_after(rack.xmit, s.sent, rack.end_seq, s.end()) {
                if s.has(EVER_RETX) {
                    continue; // retransmitted later than RACK's delivery; others may be earlier
                }
                break; // never retransmitted: everything above was sent later still
            }
            let left = rack.remaining(s.sent, reo_wnd, now);
            if left > 0 {
                wait = Some(wait.unwrap_or(0).max(left as SimTime));
                continue;
            }
            marked += 1;
            if s.has(LOST) {
                // A retransmission lost again: it is to be sent once more.
                let s = &mut self.segs[i];
                s.flags &= !RETRANS;
                self.retrans_out -= 1;
                self.lost_pending += 1;
                self.lost_total += 1;
                self.retx_hint = self.retx_hint.min(s.seq);
            } else {
                self.mark_lost(i);
            }
        }
        (marked, wait)
    }

    /// The first segment deemed lost and not yet retransmitted.
    pub(super) fn next_lost(&mut self) -> Option<usize> {
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

    /// Segment `i` is retransmitted at `now`, with `snd_nxt` the next new byte: returns its
    /// sequence number and length.
    pub(super) fn retransmitted(
        &mut self,
        i: usize,
        now: SimTime,
        snd_nxt: u64,
        tx: TxState,
    ) -> (u64, u32) {
        let s = &mut self.segs[i];
        // A copy already in flight (a probe resending it again) is counted once.
        let again = s.has(RETRANS);
        s.flags |= RETRANS | EVER_RETX;
        s.flags &= !RATE_TAKEN;
        s.tx = tx;
        s.sent = now;
        s.retx_nxt = snd_nxt;
        let (seq, len, lost) = (s.seq, s.len, s.has(LOST));
        if !again {
            self.retrans_out += 1;
            if lost {
                self.lost_pending -= 1;
            }
        }
        (seq, len)
    }

    /// RFC 6675 NextSeg rule 3: the first segment above `high_rxt` that is neither SACKed nor
    /// yet deemed lost nor retransmitted.
    pub(super) fn rescue_candidate(&self, high_rxt: u64) -> Option<usize> {
        let start = self.segs.partition_point(|s| s.end() <= high_rxt);
        (start..self.segs.len()).find(|&i| self.segs[i].flags & (SACKED | LOST | RETRANS) == 0)
    }

    /// Deem segment `i` lost (unless SACKed or already lost).
    pub(super) fn mark_lost(&mut self, i: usize) {
        let s = &mut self.segs[i];
        if s.has(SACKED) || s.has(LOST) {
            return;
        }
        s.flags |= LOST;
        let (seq, in_flight_again) = (s.seq, s.has(RETRANS));
        self.lost_out += 1;
        self.lost_total += 1;
        if !in_flight_again {
            // A rescue retransmission is still out: only its original is now deemed lost.
            self.lost_pending += 1;
        }
        self.retx_hint = self.retx_hint.min(seq);
    }

    /// RFC 6675 IsLost: a segment with at least DupThresh SACKed segments above it is lost.
    pub(super) fn mark_lost_by_sack(&mut self, dupthresh: u32) {
        let mut above = 0u32;
        for i in (0..self.segs.len()).rev() {
            if self.segs[i].has(SACKED) {
                above += 1;
            } else if above >= dupthresh {
                self.mark_lost(i);
            }
        }
    }

    /// The head is lost by RFC 6675's rule: every SACKed segment lies above an un-SACKed head.
    pub(super) fn head_lost_by_sack(&self, dupthresh: u32) -> bool {
        self.sacked_out >= dupthresh && self.segs.front().is_some_and(|s| !s.has(SACKED))
    }

    /// Linux's `tcp_mark_lost_retrans`: a retransmission is lost if the receiver has SACKed
    /// data first sent after it (that data would have arrived later). Saves a timeout.
    pub(super) fn mark_lost_retransmissions(&mut self, highest_sacked: u64) {
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
                self.lost_total += 1;
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

    /// A SACK block `[start, end)`: returns the segments newly SACKed, and whether one of them
    /// was never retransmitted and lies below `high_seq` (original data delivered, for F-RTO).
    #[cfg(test)]
    pub(super) fn mark_sacked(&mut self, start: u64, end: u64, high_seq: u64) -> (u32, bool) {
        self.mark_sacked_with(start, end, high_seq, &mut |_| {})
    }

    /// [`Scoreboard::mark_sacked`], showing `visit` each newly SACKed segment.
    pub(super) fn mark_sacked_with(
        &mut self,
        start: u64,
        end: u64,
        high_seq: u64,
        visit: &mut impl FnMut(&mut Seg),
    ) -> (u32, bool) {
        let mut n = 0;
        let mut orig_delivered = false;
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
            visit(s);
            self.sacked_out += 1;
            orig_delivered |= !s.has(EVER_RETX) && s.end() <= high_seq;
            let (lost, retrans) = (s.has(LOST), s.has(RETRANS));
            s.flags &= !(LOST | RETRANS);
            self.forget(lost, retrans);
            n += 1;
        }
        (n, orig_delivered)
    }

    /// Take every segment the cumulative ACK `ack` covers off the scoreboard.
    /// Take every segment the cumulative ACK `ack` covers off the scoreboard, showing `visit` each
    /// segment delivered by this ACK (not SACKed
    /// before).
    pub(super) fn clean_with(
        &mut self,
        ack: u64,
        high_seq: u64,
        visit: &mut impl FnMut(&mut Seg),
    ) -> Cleaned {
        let mut c = Cleaned::default();
        while let Some(f) = self.segs.front() {
            if f.end() > ack {
                break;
            }
            let mut s = self.segs.pop_front().expect("front exists");
            if s.has(SACKED) {
                self.sacked_out -= 1;
            } else {
                c.acked += 1;
                visit(&mut s);
            }
            self.forget(s.has(LOST), s.has(RETRANS));
            c.retransmitted |= s.has(EVER_RETX);
            c.orig_delivered |= !s.has(EVER_RETX) && !s.has(SACKED) && s.end() <= high_seq;
            if !s.has(SACKED) && c.first_sent.is_none() {
                c.first_sent = Some(s.sent);
            }
        }
        c
    }

    /// After a timeout everything not SACKed is presumed lost, retransmissions included
    /// (RFC 6675 5.1); retransmission starts again from `snd_una`. With RACK (Linux's
    /// `tcp_timeout_mark_lost`), segments other than the first that were last sent after
    /// `recent_after` (within RACK's RTT of now) are not lost yet: they stay in flight as they
    /// are.
    pub(super) fn mark_all_lost(&mut self, snd_una: u64, recent_after: Option<SimTime>) {
        self.lost_pending = 0;
        for (i, s) in self.segs.iter_mut().enumerate() {
            if s.has(SACKED) {
                continue;
            }
            if i > 0 && recent_after.is_some_and(|t| s.sent > t) {
                if s.has(LOST) && !s.has(RETRANS) {
                    self.lost_pending += 1;
                }
                continue;
            }
            if !s.has(LOST) {
                s.flags |= LOST;
                self.lost_out += 1;
                self.lost_total += 1;
            }
            if s.has(RETRANS) {
                s.flags &= !RETRANS;
                self.retrans_out -= 1;
            }
            self.lost_pending += 1;
        }
        self.retx_hint = snd_una;
    }

    /// Forget every loss mark (a spurious timeout is undone).
    pub(super) fn clear_lost(&mut self) {
        for s in self.segs.iter_mut() {
            if s.has(LOST) {
                s.flags &= !LOST;
                self.lost_out -= 1;
                if !s.has(RETRANS) {
                    self.lost_pending -= 1;
                }
            }
        }
    }

    /// Check the counters against the flags.
    pub(super) fn check_invariants(&self) -> Result<(), String> {
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
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scoreboard of `n` segments of 1000 bytes sent at t = 0.
    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::default();
        for k in 0..n {
            b.push(k * 1000, 1000, 0, TxState::default());
        }
        b
    }

    #[test]
    fn an_idle_board_lends_its_buffer_and_a_busy_one_keeps_it() {
        let mut pool = SegPool::default();
        let mut busy = board(3);
        busy.park(&mut pool);
        assert!(
            busy.capacity() >= 3,
            "segments outstanding: the buffer stays"
        );
        assert!(pool.0.is_empty());
        let mut idle = board(3);
        idle.clean_with(3000, 0, &mut |_| {});
        assert!(idle.is_empty());
        idle.park(&mut pool);
        assert_eq!((idle.capacity(), pool.0.len()), (0, 1));
        let mut next = Scoreboard::default();
        next.unpark(&mut pool);
        assert!(next.capacity() >= 3 && pool.0.is_empty());
        next.push(0, 1000, 0, TxState::default());
        assert_eq!(next.packets_out(), 1);
    }

    #[test]
    fn a_hole_below_dupthresh_sacked_segments_is_lost_and_not_before() {
        let mut b = board(5);
        b.mark_sacked(1000, 3000, 5000);
        b.mark_lost_by_sack(3);
        assert_eq!(b.lost_out(), 0, "two SACKed segments above the hole");
        b.mark_sacked(3000, 4000, 5000);
        b.mark_lost_by_sack(3);
        assert_eq!((b.lost_out(), b.lost_pending()), (1, 1));
        assert_eq!(b.next_lost(), Some(0));
        b.check_invariants().unwrap();
    }

    #[test]
    fn a_retransmission_overtaken_by_later_sacked_data_is_lost_again() {
        let mut b = board(4);
        b.mark_lost(0);
        b.retransmitted(0, 10, 4000, TxState::default());
        assert_eq!((b.retrans_out(), b.lost_pending()), (1, 0));
        b.mark_sacked(3000, 4000, 4000);
        b.mark_lost_retransmissions(4000);
        assert_eq!(
            b.retrans_out(),
            1,
            "the SACKed data was sent before the retransmission"
        );
        b.push(4000, 1000, 20, TxState::default());
        b.mark_sacked(4000, 5000, 4000);
        b.mark_lost_retransmissions(5000);
        assert_eq!((b.retrans_out(), b.lost_pending()), (0, 1));
        b.check_invariants().unwrap();
    }
}
