//! Stalls that are not timeouts: a flow of an unfinished block (or an unfinished incast flow)
//! that delivers nothing to the client for at least half the minimum RTO and then moves on
//! without a retransmission timeout having fired on its connection. The usual cause under
//! Linux's TCP is a tail loss probe: with one segment out Linux waits 2·SRTT + RTOmin for the
//! probe (a delayed ACK may be on its way), capped at the RTO's own time
//! (`tcp_schedule_loss_probe`; [`crate::tcp::probe_timeout`]), and the probe
//! repairs the tail without a timeout, so `timeouts` and `retx_timeout` read 0 while the
//! block waited ~RTOmin. Delayed-ACK and pacing stalls of that length count too.
//!
//! Detection is done where a block's progress is seen, the client's in-order delivery, so a
//! stall is what the block waited for whatever the transport did: per flow one timestamp
//! (when it last delivered, or was asked) and one flag (an RTO fired since), both in fixed
//! vectors sized once; each delivering segment costs a subtraction and a comparison. A gap
//! is judged when it ends (the next delivery), so a gap still open when the run stops is not
//! counted (its block did not finish either, and its time is in no block time).
//!
//! Why half the minimum RTO: a gap that long is no queueing or recovery round of a flow at
//! the papers' RTTs (µs to ms) yet shorter than any timeout's, so it separates "waited for a
//! timer" from "waited in line"; an RTO stall is at least RTOmin long and is counted apart,
//! as a timeout, whether it fired at the server (data) or the client (a lost request).

use crate::units::SimTime;

/// Per-flow stall detector of one task's connections.
#[derive(Debug, Clone)]
pub struct Stalls {
    /// A gap at least this long is a stall (half the minimum RTO); 0: never count.
    after: SimTime,
    /// When each flow last delivered data, or was asked for its response.
    since: Vec<SimTime>,
    /// Whether a retransmission timeout fired on the flow's connection since then.
    rto: Vec<bool>,
    /// Stalls counted so far, all flows together.
    pub count: u64,
}

impl Stalls {
    /// A detector for `flows` flows counting gaps of at least `after` (0: off).
    pub fn new(flows: u32, after: SimTime) -> Stalls {
        Stalls {
            after,
            since: vec![0; flows as usize],
            rto: vec![false; flows as usize],
            count: 0,
        }
    }

    /// Flow `c` starts waiting for data at `now` (its request is sent).
    #[inline]
    pub fn arm(&mut self, c: usize, now: SimTime) {
        self.since[c] = now;
        self.rto[c] = false;
    }

    /// A retransmission timeout fired on flow `c`'s connection (either end).
    #[inline]
    pub fn rto(&mut self, c: usize) {
        self.rto[c] = true;
    }

    /// Flow `c`, still owing data to its block, delivered some at `now`: the gap since its
    /// last progress ends; it counts (and `true` is returned) if it lasted at least the
    /// threshold and no RTO fired in it.
    #[inline]
    pub fn progress(&mut self, c: usize, now: SimTime) -> bool {
        let stalled = self.after > 0 && now - self.since[c] >= self.after && !self.rto[c];
        self.count += stalled as u64;
        self.arm(c, now);
        stalled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HALF_RTO_MIN: SimTime = 100_000_000_000; // 100 ms: RTOmin 200 ms

    #[test]
    fn a_gap_one_picosecond_short_of_half_the_rto_min_is_no_stall_and_half_is() {
        let mut s = Stalls::new(2, HALF_RTO_MIN);
        s.arm(0, 1_000);
        s.arm(1, 1_000);
        assert!(!s.progress(0, 1_000 + HALF_RTO_MIN - 1));
        assert!(s.progress(1, 1_000 + HALF_RTO_MIN));
        assert_eq!(s.count, 1);
        // The gap is measured from the last delivery, not from the request.
        assert!(!s.progress(0, 1_000 + 2 * HALF_RTO_MIN - 2));
        assert!(s.progress(0, 1_000 + 3 * HALF_RTO_MIN - 2));
        assert_eq!(s.count, 2);
    }

    #[test]
    fn a_gap_with_a_timeout_in_it_is_a_timeout_not_a_stall() {
        let mut s = Stalls::new(1, HALF_RTO_MIN);
        s.arm(0, 0);
        s.rto(0);
        assert!(!s.progress(0, 5 * HALF_RTO_MIN), "ended by an RTO");
        // The next gap starts clean.
        assert!(s.progress(0, 7 * HALF_RTO_MIN));
        // A new request clears a timeout of the flow's idle time.
        s.rto(0);
        s.arm(0, 8 * HALF_RTO_MIN);
        assert!(s.progress(0, 9 * HALF_RTO_MIN));
        assert_eq!(s.count, 2);
    }

    #[test]
    fn a_zero_threshold_counts_nothing() {
        let mut s = Stalls::new(1, 0);
        s.arm(0, 0);
        assert!(!s.progress(0, 1_000_000_000_000));
        assert_eq!(s.count, 0);
    }
}
