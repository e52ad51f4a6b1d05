//! Reno (RFC 5681): halve the window on a loss or an ECN echo, grow it by one segment per
//! round trip in congestion avoidance. Every hook of [`Controller`] defaults to this.

use super::Controller;

/// Reno keeps no state of its own: cwnd and ssthresh live in the sender.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Reno;

impl Controller for Reno {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loss_halves_the_window_but_keeps_two_segments() {
        let mut r = Reno;
        assert_eq!(r.ssthresh_after_loss(100), 50);
        assert_eq!(r.ssthresh_after_loss(3), 2);
        assert_eq!(r.ssthresh_after_ecn(40), 20);
        assert_eq!(
            r.acks_per_increment(0, 17, 0, 5),
            17,
            "one segment per window"
        );
    }
}
