//! RACK, time-based loss detection (RFC 8985 as Linux's `tcp_recovery.c` implements it): a
//! segment is lost once a segment sent after it has been delivered and more than an RTT plus
//! a reordering window has passed since it was sent. It replaces counting duplicate ACKs, so
//! the last segments of a window, with too few segments behind them for three duplicate ACKs,
//! are repaired without a retransmission timeout. The tail loss probe (TLP) is the sender's
//! (`sender.rs`); this module keeps RACK's state and its rules.

use crate::tcp::idle::{Fields, Kind};
use crate::units::SimTime;

/// RACK's state: the most recently sent segment known delivered, and its RTT.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Rack {
    /// Transmission time of the most recently sent delivered segment (`rack.mstamp`).
    pub(super) xmit: SimTime,
    /// Its end sequence, to order segments sent at the same instant (`rack.end_seq`).
    pub(super) end_seq: u64,
    /// The RTT of the most recent delivery (`rack.rtt_us`).
    pub(super) rtt: SimTime,
    /// A delivery since the last loss detection (`rack.advanced`).
    pub(super) advanced: bool,
    /// Reordering was seen: a segment never retransmitted was delivered below one SACKed
    /// before it (`tp->reord_seen`, which `tcp_check_sack_reordering` counts).
    pub(super) reord_seen: bool,
    /// Highest end sequence SACKed so far (Linux's `tcp_highest_sack_seq`, the start of the
    /// highest SACKed segment: the same order, segments being contiguous), for reordering.
    highest_sacked: u64,
}

/// `a` sent after `b`: by time, then by sequence (Linux's `tcp_skb_sent_after`).
#[inline]
pub(super) fn sent_after(t1: SimTime, t2: SimTime, seq1: u64, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl Rack {
    /// Visit RACK's state (see `idle.rs`).
    pub(super) fn idle_fields(&mut self, f: &mut impl Fields) {
        f.num(Kind::Time, &mut self.xmit);
        f.num(Kind::Seq, &mut self.end_seq);
        f.num(Kind::Seq, &mut self.highest_sacked);
        f.num(Kind::Rtt, &mut self.rtt);
        f.flag(&mut self.advanced);
        f.flag(&mut self.reord_seen);
    }

    /// A segment `[.., end)` sent at `xmit` was newly delivered (acknowledged or SACKed) at
    /// `now` (Linux's `tcp_rack_advance`). A retransmitted segment whose RTT is below the
    /// minimum RTT may have been delivered by its original: it says nothing.
    pub(super) fn advance(
        &mut self,
        xmit: SimTime,
        end: u64,
        retransmitted: bool,
        now: SimTime,
        min_rtt: SimTime,
    ) {
        let rtt = now.saturating_sub(xmit);
        if retransmitted && rtt < min_rtt {
            return;
        }
        self.advanced = true;
        self.rtt = rtt;
        if sent_after(xmit, self.xmit, end, self.end_seq) {
            self.xmit = xmit;
            self.end_seq = end;
        }
    }

    /// The highest sequence SACKed so far; read before an ACK's SACK blocks are, Linux's
    /// `prior_fack` (`tcp_ack`).
    #[inline]
    pub(super) fn fack(&self) -> u64 {
        self.highest_sacked
    }

    /// A segment ending at `end` was newly SACKed (Linux's `tcp_sacktag_one`): never
    /// retransmitted and below a segment SACKed before it, it arrived out of order. The
    /// caller walks an ACK's blocks in sequence order, as Linux does, so a lower block of the
    /// same ACK never counts as reordering. (Linux skips this in the Loss state after an undo
    /// cleared `undo_marker`, which takes a D-SACK: not modelled.)
    pub(super) fn note_sacked(&mut self, end: u64, retransmitted: bool) {
        if !retransmitted && end < self.highest_sacked {
            self.reord_seen = true;
        }
        self.highest_sacked = self.highest_sacked.max(end);
    }

    /// A segment ending at `end`, never SACKed, was newly acknowledged cumulatively (Linux's
    /// `tcp_clean_rtx_queue`): never retransmitted and below `prior_fack`, the highest
    /// sequence SACKed before this ACK, the network reordered it. Data that this same ACK
    /// SACKs above it says nothing: a receiver holding a delayed ACK for the segment sends
    /// that ACK at once, SACK block and all, when an out-of-order segment arrives.
    pub(super) fn note_acked(&mut self, end: u64, retransmitted: bool, prior_fack: u64) {
        if !retransmitted && end < prior_fack {
            self.reord_seen = true;
        }
    }

    /// The reordering window (Linux's `tcp_rack_reo_wnd`): none while in loss recovery or
    /// once `dupthresh` segments are SACKed, unless reordering was seen; else a quarter of
    /// the minimum RTT, at most the smoothed RTT. (Linux compares with `tp->reordering`,
    /// which only grows where reordering is seen: `dupthresh` until then.)
    pub(super) fn reo_wnd(
        &self,
        recovering: bool,
        sacked_out: u32,
        dupthresh: u32,
        min_rtt: SimTime,
        srtt: SimTime,
    ) -> SimTime {
        if !self.reord_seen && (recovering || sacked_out >= dupthresh) {
            return 0;
        }
        (min_rtt / 4).min(srtt)
    }

    /// How long a segment sent at `xmit` has before it is deemed lost (≤ 0: lost now),
    /// RFC 8985 6.2 (`tcp_rack_skb_timeout`).
    #[inline]
    pub(super) fn remaining(&self, xmit: SimTime, reo_wnd: SimTime, now: SimTime) -> i128 {
        self.rtt as i128 + reo_wnd as i128 - (now as i128 - xmit as i128)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::from_us;

    #[test]
    fn the_most_recently_sent_delivery_is_remembered() {
        let mut r = Rack::default();
        r.advance(from_us(10), 2000, false, from_us(110), from_us(50));
        r.advance(from_us(5), 1000, false, from_us(120), from_us(50));
        assert_eq!((r.xmit, r.end_seq), (from_us(10), 2000));
        assert_eq!(r.rtt, from_us(115), "the RTT is the last delivery's");
        assert!(r.advanced);
    }

    #[test]
    fn a_retransmission_acknowledged_faster_than_min_rtt_is_ignored() {
        let mut r = Rack::default();
        r.advance(from_us(100), 1000, true, from_us(120), from_us(50));
        assert!(!r.advanced);
        r.advance(from_us(100), 1000, true, from_us(150), from_us(50));
        assert!(r.advanced);
    }

    #[test]
    fn a_hole_filled_below_an_earlier_sack_is_reordering_unless_resent() {
        let mut r = Rack::default();
        r.note_sacked(3000, false);
        r.note_sacked(2000, true);
        assert!(!r.reord_seen, "a retransmission fills holes in order");
        r.note_sacked(2000, false);
        assert!(r.reord_seen);
    }

    #[test]
    fn a_cumulative_ack_compares_with_what_was_sacked_before_it() {
        let mut r = Rack::default();
        // One ACK acknowledges 0..1000 and SACKs 2000..3000 (a delayed ACK sent at once for
        // an out-of-order segment): Linux's prior_fack is 0, no reordering.
        let prior_fack = r.fack();
        r.note_sacked(3000, false);
        r.note_acked(1000, false, prior_fack);
        assert!(!r.reord_seen);
        // The next acknowledges 1000..2000, below what was SACKed before it.
        r.note_acked(2000, true, r.fack());
        assert!(!r.reord_seen, "a retransmission fills holes in order");
        r.note_acked(2000, false, r.fack());
        assert!(r.reord_seen);
    }

    #[test]
    fn the_reordering_window_closes_in_recovery_and_after_dupthresh_sacks() {
        let r = Rack::default();
        let (min_rtt, srtt) = (from_us(100), from_us(120));
        assert_eq!(r.reo_wnd(false, 1, 3, min_rtt, srtt), from_us(25));
        assert_eq!(r.reo_wnd(false, 3, 3, min_rtt, srtt), 0);
        assert_eq!(r.reo_wnd(true, 0, 3, min_rtt, srtt), 0);
        let seen = Rack {
            reord_seen: true,
            ..Rack::default()
        };
        assert_eq!(seen.reo_wnd(true, 9, 3, min_rtt, srtt), from_us(25));
    }

    #[test]
    fn a_segment_is_lost_after_rtt_plus_window_and_not_before() {
        let mut r = Rack::default();
        r.advance(from_us(10), 2000, false, from_us(110), from_us(100));
        let (xmit, wnd) = (0, from_us(25));
        // Deadline: sent at 0 + RTT 100 us + window 25 us = 125 us.
        assert_eq!(r.remaining(xmit, wnd, from_us(125) - 1), 1);
        assert_eq!(r.remaining(xmit, wnd, from_us(125)), 0);
    }
}
