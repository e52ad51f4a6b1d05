//! RTO randomization (Hafeez et al., "Mitigating datacenter incast congestion using RTO
//! randomization", GLOBECOM'15): senders whose timers expire together retransmit together and
//! collide again; drawing each RTO from an interval desynchronizes them.

use crate::config::{RtoRandomization, Tcp};
use crate::rng::Rng;
use crate::units::SimTime;

/// A connection's RTO policy and its random stream.
#[derive(Debug, Clone, PartialEq)]
pub struct RtoPolicy {
    kind: RtoRandomization,
    delta: SimTime,
    omega: f64,
    omega_long: f64,
    long_after: u64,
    /// MAA's interval for this connection's fan-out, precomputed.
    maa_width: SimTime,
    rto_max: SimTime,
    granularity: SimTime,
    rng: Rng,
}

impl RtoPolicy {
    /// The scenario's policy for a connection in a fan-out of `senders`, drawing from `rng`.
    pub fn new(t: &Tcp, senders: u32, rng: Rng) -> RtoPolicy {
        let n = senders.max(1) as f64;
        let maa_units = if senders <= 1 {
            0.0
        } else {
            (n / (t.rto_sigma * n.ln())).floor()
        };
        RtoPolicy {
            kind: t.rto_randomization,
            delta: t.rto_delta,
            omega: t.rto_omega,
            omega_long: t.rto_omega_long,
            long_after: t.fsa_long_after,
            maa_width: (maa_units * t.rto_delta as f64) as SimTime,
            rto_max: t.rto_max,
            granularity: t.clock_granularity,
            rng,
        }
    }

    /// The timeout to arm: `base` is the estimator's RTO (RTOmin applied, no backoff),
    /// `backoff` the number of doublings, `successive` the timeouts in a row so far, `sent`
    /// the bytes this connection has sent.
    pub fn timeout(&mut self, base: SimTime, backoff: u32, successive: u32, sent: u64) -> SimTime {
        let doubled = |x: SimTime| -> SimTime {
            if backoff >= 63 {
                u64::MAX
            } else {
                x.saturating_mul(1 << backoff)
            }
        };
        let t = match self.kind {
            RtoRandomization::None => doubled(base),
            RtoRandomization::Uniform => doubled(self.draw(base, self.delta)),
            RtoRandomization::Maa => doubled(self.draw(base, self.maa_width)),
            RtoRandomization::Tda | RtoRandomization::Fsa => {
                let omega = if self.kind == RtoRandomization::Fsa && sent > self.long_after {
                    self.omega_long
                } else {
                    self.omega
                };
                let width = self.delta as f64 * omega.powi(successive.min(60) as i32);
                self.draw(base, width.min(self.rto_max as f64) as SimTime)
            }
        };
        t.min(self.rto_max)
    }

    /// Uniform in [center − width/2, center + width/2], at least one clock tick.
    fn draw(&mut self, center: SimTime, width: SimTime) -> SimTime {
        if width == 0 {
            return center;
        }
        let lo = center.saturating_sub(width / 2);
        (lo + self.rng.up_to(width)).max(self.granularity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Scenario;
    use crate::units::from_ms;

    fn policy(kind: RtoRandomization, delta_ms: u64) -> RtoPolicy {
        let mut t = Scenario::example(1).tcp;
        t.rto_randomization = kind;
        t.rto_delta = from_ms(delta_ms);
        RtoPolicy::new(&t, 256, Rng::new(1, 1))
    }

    #[test]
    fn none_doubles_the_base() {
        let mut p = policy(RtoRandomization::None, 0);
        assert_eq!(p.timeout(from_ms(10), 2, 2, 0), from_ms(40));
    }

    #[test]
    fn uniform_stays_in_the_interval_and_spreads_over_it() {
        let mut p = policy(RtoRandomization::Uniform, 4);
        let draws: Vec<u64> = (0..2000).map(|_| p.timeout(from_ms(10), 0, 0, 0)).collect();
        assert!(draws
            .iter()
            .all(|&d| (from_ms(8)..=from_ms(12)).contains(&d)));
        let mean = draws.iter().sum::<u64>() as f64 / draws.len() as f64;
        assert!((mean - from_ms(10) as f64).abs() < from_ms(1) as f64 / 10.0);
        assert!(draws.iter().any(|&d| d < from_ms(9)) && draws.iter().any(|&d| d > from_ms(11)));
    }

    #[test]
    fn tda_widens_the_interval_instead_of_doubling() {
        let mut p = policy(RtoRandomization::Tda, 2);
        let draws: Vec<u64> = (0..2000).map(|_| p.timeout(from_ms(10), 3, 3, 0)).collect();
        // ω = 2, s = 3: U(10 − 8, 10 + 8) ms.
        assert!(draws
            .iter()
            .all(|&d| (from_ms(2)..=from_ms(18)).contains(&d)));
        assert!(draws.iter().any(|&d| d < from_ms(4)));
    }

    #[test]
    fn maa_width_follows_the_fan_out() {
        // 256 / ln 256 = 46.2: 46 units of 1 ms.
        let p = policy(RtoRandomization::Maa, 1);
        assert_eq!(p.maa_width, from_ms(46));
    }

    #[test]
    fn fsa_gives_long_flows_the_wider_interval() {
        let mut p = policy(RtoRandomization::Fsa, 1);
        let short: Vec<u64> = (0..500).map(|_| p.timeout(from_ms(10), 2, 2, 0)).collect();
        let long: Vec<u64> = (0..500)
            .map(|_| p.timeout(from_ms(10), 2, 2, 1 << 30))
            .collect();
        let spread = |v: &[u64]| v.iter().max().unwrap() - v.iter().min().unwrap();
        assert!(spread(&long) > spread(&short));
    }
}
