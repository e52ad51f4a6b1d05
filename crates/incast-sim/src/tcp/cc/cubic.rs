//! CUBIC congestion avoidance (RFC 9438; Linux's `tcp_cubic.c` without HyStart): after a
//! loss the window grows along W(t) = C·(t − K)³ + W_max, concave up to the window where the
//! loss happened and convex beyond it, never slower than Reno would (the TCP-friendly region).

use super::Controller;
use crate::units::{SimTime, PS_PER_S};

/// C, RFC 9438 4.1 (segments per second cubed).
const C: f64 = 0.4;
/// β_cubic, RFC 9438 4.6: the window keeps 70% after a loss.
pub(crate) const BETA: f64 = 0.7;

/// CUBIC's state for one connection.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Cubic {
    /// The window before the last reduction, W_max (segments).
    w_max: f64,
    /// When the current congestion-avoidance epoch began.
    epoch_start: Option<SimTime>,
    /// Time from the epoch's start to reach the plateau, seconds.
    k: f64,
    /// The plateau, W_max or the current window if above it.
    origin: f64,
    /// Reno's window over the same epoch (the TCP-friendly estimate).
    w_est: f64,
}

impl Cubic {
    /// A loss with the window at `cwnd`: returns the new ssthresh (RFC 9438 4.6, 4.7 with
    /// fast convergence).
    pub(crate) fn on_loss(&mut self, cwnd: u32) -> u32 {
        let w = cwnd as f64;
        self.w_max = if w < self.w_max {
            w * (1.0 + BETA) / 2.0 // fast convergence: yield to newer flows
        } else {
            w
        };
        self.epoch_start = None;
        ((w * BETA) as u32).max(2)
    }

    /// ACKed segments per one-segment increase of the window now (Linux's `ca->cnt`).
    pub(crate) fn acks_per_increment(
        &mut self,
        now: SimTime,
        cwnd: u32,
        min_rtt: SimTime,
        acked: u32,
    ) -> u32 {
        let w = cwnd as f64;
        let start = *self.epoch_start.get_or_insert_with(|| {
            if self.w_max <= w {
                self.k = 0.0;
                self.origin = w;
            } else {
                self.k = ((self.w_max - w) / C).cbrt();
                self.origin = self.w_max;
            }
            self.w_est = w;
            now
        });
        let t = (now.saturating_sub(start) + min_rtt) as f64 / PS_PER_S as f64;
        let target = self.window_at(t);
        let mut cnt = if target > w {
            (w / (target - w)).max(1.0)
        } else {
            100.0 * w
        };
        // TCP-friendly region (RFC 9438 4.3): Reno's growth with CUBIC's β.
        self.w_est += acked as f64 * 3.0 * (1.0 - BETA) / (1.0 + BETA) / w;
        if self.w_est > w {
            cnt = cnt.min(w / (self.w_est - w));
        }
        (cnt.max(2.0).min(u32::MAX as f64)) as u32
    }

    /// W_cubic(t), t seconds into the epoch (RFC 9438 Eq. 1).
    fn window_at(&self, t: f64) -> f64 {
        self.origin + C * (t - self.k).powi(3)
    }
}

impl Controller for Cubic {
    fn ssthresh_after_loss(&mut self, cwnd: u32) -> u32 {
        self.on_loss(cwnd)
    }

    fn acks_per_increment(&mut self, now: SimTime, cwnd: u32, min_rtt: SimTime, acked: u32) -> u32 {
        Cubic::acks_per_increment(self, now, cwnd, min_rtt, acked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::from_ms;

    #[test]
    fn a_loss_keeps_seventy_percent_and_remembers_the_window() {
        let mut c = Cubic::default();
        assert_eq!(c.on_loss(100), 70);
        assert_eq!(c.w_max, 100.0);
        // A second loss below W_max releases bandwidth (fast convergence).
        c.on_loss(80);
        assert!((c.w_max - 68.0).abs() < 1e-9);
    }

    #[test]
    fn the_window_climbs_back_to_the_old_maximum_flattens_then_probes_beyond() {
        let mut c = Cubic::default();
        let ssthresh = c.on_loss(100);
        c.acks_per_increment(0, ssthresh, from_ms(1), 1); // the epoch starts at 70 segments
        let k = (30.0f64 / C).cbrt(); // ≈ 4.2 s
        assert!((c.window_at(0.0) - 70.0).abs() < 1e-9);
        assert!((c.window_at(k) - 100.0).abs() < 1e-9);
        assert!((c.window_at(2.0 * k) - 130.0).abs() < 1e-6);
        let near_max = c.window_at(k + 0.5) - c.window_at(k - 0.5);
        let right_after = c.window_at(1.0) - c.window_at(0.0);
        assert!(near_max < right_after / 10.0, "{near_max} {right_after}");
    }

    #[test]
    fn fewer_acks_per_increment_when_far_below_the_curve() {
        let mut c = Cubic::default();
        c.on_loss(100);
        c.acks_per_increment(0, 70, from_ms(1), 1);
        let at_plateau = c.acks_per_increment(4 * PS_PER_S, 99, from_ms(1), 1);
        let beyond = c.acks_per_increment(10 * PS_PER_S, 120, from_ms(1), 1);
        assert!(beyond < at_plateau, "{beyond} {at_plateau}");
    }
}
