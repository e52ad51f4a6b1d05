//! DCTCP's sender (RFC 8257 3.3): estimate α, the fraction of bytes the switches marked, once
//! per window of data, and answer an ECN echo by cutting cwnd by α/2 instead of half. Losses
//! are answered as Reno does.

use super::Controller;
use crate::tcp::idle::{Fields, Kind};

/// DCTCP's state for one connection.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Dctcp {
    /// The gain g of α's moving average.
    g: f64,
    /// Estimated fraction of marked bytes, α (starts at 1: the first echo halves, as Linux).
    alpha: f64,
    /// Bytes acknowledged in this observation window.
    acked: u64,
    /// Of those, bytes acknowledged with ECE.
    marked: u64,
    /// The observation window ends when this byte is acknowledged.
    window_end: u64,
}

impl Dctcp {
    /// Visit DCTCP's state (see `idle.rs`); α as its bits.
    pub(crate) fn idle_fields(&mut self, f: &mut impl Fields) {
        let mut alpha = self.alpha.to_bits();
        f.num(Kind::Plain, &mut alpha);
        self.alpha = f64::from_bits(alpha);
        f.num(Kind::Plain, &mut self.acked);
        f.num(Kind::Plain, &mut self.marked);
        f.num(Kind::Seq, &mut self.window_end);
    }

    /// A connection's DCTCP with gain `g`.
    pub(crate) fn new(g: f64) -> Dctcp {
        Dctcp {
            g,
            alpha: 1.0,
            acked: 0,
            marked: 0,
            window_end: 0,
        }
    }
}

impl Controller for Dctcp {
    /// Update α once per window of data from the share of bytes acknowledged with ECE.
    fn on_ack(&mut self, acked: u64, ece: bool, snd_una: u64, snd_nxt: u64) {
        self.acked += acked;
        if ece {
            self.marked += acked;
        }
        if acked > 0 && snd_una > self.window_end {
            if self.acked > 0 {
                let f = self.marked as f64 / self.acked as f64;
                self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            }
            self.acked = 0;
            self.marked = 0;
            self.window_end = snd_nxt;
        }
    }

    /// cwnd × (1 − α/2), at least 2 segments.
    fn ssthresh_after_ecn(&mut self, cwnd: u32) -> u32 {
        let reduced = (cwnd as f64 * (1.0 - self.alpha / 2.0)) as u32;
        reduced.max(2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_follows_the_marked_share_once_per_window() {
        let mut d = Dctcp::new(0.5);
        // The first ACK ends the first window: all of it marked.
        d.on_ack(1000, true, 1000, 4000);
        assert_eq!(d.alpha, 1.0);
        // Inside the next window (ending at 4000): counted, no update yet.
        d.on_ack(1000, true, 2000, 4000);
        assert_eq!(d.alpha, 1.0);
        // The window ends: 1000 of 4000 bytes were marked.
        d.on_ack(3000, false, 5000, 9000);
        assert_eq!(d.alpha, 0.5 * 1.0 + 0.5 * 0.25);
    }

    #[test]
    fn an_echo_cuts_by_half_alpha() {
        let mut d = Dctcp::new(1.0 / 16.0);
        assert_eq!(d.ssthresh_after_ecn(100), 50, "α starts at 1");
        d.alpha = 0.5;
        assert_eq!(d.ssthresh_after_ecn(100), 75);
        assert_eq!(d.ssthresh_after_ecn(2), 2);
        assert_eq!(d.ssthresh_after_loss(100), 50, "losses as Reno");
    }
}
