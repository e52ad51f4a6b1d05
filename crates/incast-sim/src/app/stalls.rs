//! Stalls that are not timeouts: a flow of an unfinished block (or an unfinished incast flow)
//! that delivers nothing to the client for at least half the minimum RTO and then moves on
//! without a retransmission timeout having fired on its connection. The usual cause under
//! Linux's TCP is a tail loss probe: with one segment out Linux waits 2·SRTT + RTOmin for the
//! probe (a delayed ACK may be on its way), capped at the RTO's own time
//! (`tcp_schedule_loss_probe`; [`crate::tcp::probe_timeout`]), and the probe
//! repairs the tail without a timeout, so `timeouts` and `retx_timeout` read 0 while the
//! block waited ~RTOmin. Delayed-ACK and pacing stalls of that length count too.
//!
//! A stall is the block's, not one flow's: the block delivers nothing at all (no flow of it
//! moves in order). A flow that waits its turn while the others fill the link is not
//! stalled (with many flows and a small RTOmin a flow's fair share spaces its segments more
//! than RTOmin/2 apart: 47 flows at 1 Gbps deliver one segment each per 0.57 ms); the link
//! idle under a waiting block is the incast's cost, and what a capture shows as a gap in the
//! receiver's data. A gap counts when it ends (the next delivery): one at the block's end, or
//! inside it; one still open when the run stops is not counted (its block did not finish).
//! Cost: one timestamp and one flag per task, a subtraction and a comparison per delivering
//! segment, nothing allocated.
//!
//! Why half the minimum RTO: no round of a flow at the papers' RTTs (µs to ms) is that
//! long, yet every timeout is longer, so the gap is a timer's; an RTO stall (at least RTOmin)
//! is counted apart, as a timeout, whether the RTO fired at a server (data) or at the client
//! (a lost request): a gap in which any RTO of the block's connections fired is not counted.

use crate::units::SimTime;

/// Stall detector of one task's blocks.
#[derive(Debug, Clone, Default)]
pub struct Stalls {
    /// A gap at least this long is a stall (half the minimum RTO); 0: never count.
    after: SimTime,
    /// When the block last delivered data, or was asked for.
    since: SimTime,
    /// Whether a retransmission timeout fired on one of the task's connections since then.
    rto: bool,
    /// Stalls counted so far.
    pub count: u64,
}

impl Stalls {
    /// A detector counting gaps of at least `after` (0: off).
    pub fn new(after: SimTime) -> Stalls {
        Stalls {
            after,
            ..Stalls::default()
        }
    }

    /// The block starts waiting for data at `now` (its requests are sent).
    #[inline]
    pub fn arm(&mut self, now: SimTime) {
        self.since = now;
        self.rto = false;
    }

    /// A retransmission timeout fired on one of the block's connections (either end).
    #[inline]
    pub fn rto(&mut self) {
        self.rto = true;
    }

    /// A flow still owing data to the block delivered some at `now`: the gap since the
    /// block's last progress ends; it counts (and `true` is returned) if it lasted at least
    /// the threshold and no RTO fired in it.
    #[inline]
    pub fn progress(&mut self, now: SimTime) -> bool {
        let stalled = self.after > 0 && now - self.since >= self.after && !self.rto;
        self.count += stalled as u64;
        self.arm(now);
        stalled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HALF_RTO_MIN: SimTime = 100_000_000_000; // 100 ms: RTOmin 200 ms

    #[test]
    fn a_gap_one_picosecond_short_of_half_the_rto_min_is_no_stall_and_half_is() {
        let mut s = Stalls::new(HALF_RTO_MIN);
        s.arm(1_000);
        assert!(!s.progress(1_000 + HALF_RTO_MIN - 1));
        assert!(s.progress(1_000 + 2 * HALF_RTO_MIN - 1));
        assert_eq!(s.count, 1);
        // The gap is measured from the last delivery, not from the request.
        assert!(!s.progress(1_000 + 3 * HALF_RTO_MIN - 2));
        assert!(s.progress(1_000 + 4 * HALF_RTO_MIN - 2));
        assert_eq!(s.count, 2);
    }

    #[test]
    fn a_gap_with_a_timeout_in_it_is_a_timeout_not_a_stall() {
        let mut s = Stalls::new(HALF_RTO_MIN);
        s.arm(0);
        s.rto();
        assert!(!s.progress(5 * HALF_RTO_MIN), "ended by an RTO");
        // The next gap starts clean.
        assert!(s.progress(7 * HALF_RTO_MIN));
        // A new block's requests clear a timeout of the time between blocks.
        s.rto();
        s.arm(8 * HALF_RTO_MIN);
        assert!(s.progress(9 * HALF_RTO_MIN));
        assert_eq!(s.count, 2);
    }

    #[test]
    fn a_zero_threshold_counts_nothing() {
        let mut s = Stalls::new(0);
        s.arm(0);
        assert!(!s.progress(1_000_000_000_000));
        assert_eq!(s.count, 0);
    }
}
