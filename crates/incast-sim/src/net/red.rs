//! Random early detection (Floyd and Jacobson, 1993) at a switch port: an average of the
//! queue decides whether an arriving packet is dropped (or, for an ECN-capable packet, marked)
//! before the buffer is full.

use crate::rng::Rng;

/// What RED does with an arriving packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Queue it.
    Accept,
    /// Drop it, or mark it CE if it is ECN-capable and the queue marks.
    Signal,
}

/// One port's RED state.
#[derive(Debug, Clone)]
pub struct Red {
    min: f64,
    max: f64,
    max_p: f64,
    weight: f64,
    /// Whether signals to ECN-capable packets are marks rather than drops.
    pub ecn: bool,
    avg: f64,
    /// Packets accepted since the last signal (spreads signals evenly).
    count: u32,
    rng: Rng,
}

impl Red {
    /// RED with thresholds `min`..`max` bytes of average queue, `max_p` at `max`, EWMA
    /// weight `weight`.
    pub fn new(min: u64, max: u64, max_p: f64, weight: f64, ecn: bool, rng: Rng) -> Red {
        Red {
            min: min as f64,
            max: max as f64,
            max_p,
            weight,
            ecn,
            avg: 0.0,
            count: 0,
            rng,
        }
    }

    /// A packet arrives to a queue holding `queued` bytes.
    pub fn on_arrival(&mut self, queued: u64) -> Verdict {
        self.avg = (1.0 - self.weight) * self.avg + self.weight * queued as f64;
        if self.avg < self.min {
            self.count = 0;
            return Verdict::Accept;
        }
        if self.avg >= self.max {
            self.count = 0;
            return Verdict::Signal;
        }
        let pb = self.max_p * (self.avg - self.min) / (self.max - self.min);
        let pa = (pb / (1.0 - self.count as f64 * pb).max(f64::EPSILON)).min(1.0);
        let u = self.rng.unit();
        if u < pa {
            self.count = 0;
            Verdict::Signal
        } else {
            self.count += 1;
            Verdict::Accept
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red() -> Red {
        Red::new(10_000, 30_000, 0.1, 1.0, false, Rng::new(1, 1))
    }

    #[test]
    fn below_the_minimum_everything_is_accepted() {
        let mut r = red();
        assert!((0..1000).all(|_| r.on_arrival(5_000) == Verdict::Accept));
    }

    #[test]
    fn above_the_maximum_everything_is_signalled() {
        let mut r = red();
        assert!((0..1000).all(|_| r.on_arrival(40_000) == Verdict::Signal));
    }

    #[test]
    fn in_between_the_signal_rate_follows_the_average() {
        let mut r = red();
        let low = (0..20_000)
            .filter(|_| r.on_arrival(12_000) == Verdict::Signal)
            .count();
        let high = (0..20_000)
            .filter(|_| r.on_arrival(28_000) == Verdict::Signal)
            .count();
        // p_b is 1% and 9%; the count correction spreads signals evenly and raises the rate.
        assert!((100..800).contains(&low), "{low}");
        assert!(high > 4 * low, "{high} {low}");
    }
}
