//! Round-trip time estimation and the retransmission timeout, RFC 6298.
//!
//! RTT samples are taken on a clock of granularity G (a 4 ms jiffy, a 1 ms tick, 1 µs...), so a
//! sample is a whole number of ticks, as a kernel measures it. The RTO is
//! `max(RTOmin, SRTT + max(G, K·RTTVAR))`, capped at RTOmax, doubled per backoff.

use crate::config::{RtoFormula, Tcp};
use crate::tcp::idle::{Fields, Kind};
use crate::units::SimTime;

/// K, RFC 6298 (2.3).
const K: u64 = 4;

/// SRTT, RTTVAR and the RTO of one connection.
#[derive(Debug, Clone, PartialEq)]
pub struct RttEstimator {
    /// Smoothed RTT; `None` before the first sample.
    srtt: Option<SimTime>,
    /// RTT variation.
    rttvar: SimTime,
    /// Current RTO before backoff.
    rto: SimTime,
    rto_min: SimTime,
    rto_max: SimTime,
    granularity: SimTime,
    /// Granularity of the timers (a jiffy); the RTT clock's unless set.
    timer_granularity: SimTime,
    formula: RtoFormula,
    /// Timers fire as Linux's timer wheel runs them (see [`RttEstimator::expiry`]).
    wheel: bool,
    /// Linux: four times the mean deviation (`mdev_us`).
    mdev4: SimTime,
    /// Linux: the largest `mdev4` in the current round trip, floored at RTOmin.
    mdev_max: SimTime,
    /// Linux: the variance term of the RTO (`rttvar_us`), decaying once per round trip.
    rttvar4: SimTime,
    /// Linux: the round trip ends when this byte is acknowledged (`rtt_seq`).
    rtt_seq: u64,
}

/// `t` rounded up to whole ticks of `g`. RTOmin is kept in timer ticks, as Linux keeps the
/// route's `rto_min` in jiffies: at HZ = 250 an RTOmin of 1 ms is 4 ms.
fn whole_ticks(t: SimTime, g: SimTime) -> SimTime {
    let g = g.max(1);
    t.div_ceil(g).saturating_mul(g)
}

impl RttEstimator {
    /// The estimator every connection of a scenario with these TCP settings starts with.
    pub fn for_tcp(tcp: &Tcp) -> Self {
        RttEstimator::new(
            tcp.rto_min,
            tcp.rto_max,
            tcp.rto_initial,
            tcp.clock_granularity,
        )
        .with_formula(tcp.rto_formula)
        .with_timer_granularity(tcp.timer_tick())
        .with_timer_wheel(tcp.timer_wheel)
    }

    /// The estimator of a connection with these TCP settings after a steady run of round
    /// trips of `rtt`. The analytical model asks it for the RTO (`ticks(rto(0))`), so that
    /// RTOmin's rounding and the RTO formula have one owner, this estimator.
    pub fn settled(tcp: &Tcp, rtt: SimTime) -> Self {
        let mut e = Self::for_tcp(tcp);
        let r = e.measure(0, rtt);
        // Every sample closes a round trip; 64 of them decay the variance to nothing.
        for i in 0..64 {
            e.sample_at(r, i + 1, i + 2);
        }
        e
    }

    /// This estimator after `samples` more round trips, each closed by one sample, whose delay
    /// grows evenly from `rtt` to `rtt + queue` (a queue filling in front of the path).
    pub fn after_ramp(mut self, rtt: SimTime, queue: SimTime, samples: u32) -> Self {
        let start = self.rtt_seq;
        for i in 1..=u64::from(samples) {
            // In u128: a queue of hours (gigabytes at a megabit) times 64 overflows u64.
            let step = u128::from(queue) * u128::from(i) / u128::from(samples);
            let r = self.measure(
                0,
                rtt.saturating_add(u64::try_from(step).unwrap_or(u64::MAX)),
            );
            self.sample_at(r, start + i, start + i + 1);
        }
        self
    }

    /// Visit what the estimator learned (see `idle.rs`).
    pub(crate) fn idle_fields(&mut self, f: &mut impl Fields) {
        f.opt(Kind::Rtt, &mut self.srtt);
        for r in [
            &mut self.rttvar,
            &mut self.rto,
            &mut self.mdev4,
            &mut self.mdev_max,
            &mut self.rttvar4,
        ] {
            f.num(Kind::Rtt, r);
        }
        f.num(Kind::Seq, &mut self.rtt_seq);
    }

    /// An estimator with no sample yet: RTO is `initial` (RFC 6298 (2.1)).
    pub fn new(rto_min: SimTime, rto_max: SimTime, initial: SimTime, granularity: SimTime) -> Self {
        let rto_min = whole_ticks(rto_min, granularity);
        RttEstimator {
            srtt: None,
            rttvar: 0,
            rto: initial.clamp(rto_min, rto_max),
            rto_min,
            rto_max,
            granularity,
            timer_granularity: granularity,
            formula: RtoFormula::Rfc6298,
            wheel: false,
            mdev4: 0,
            mdev_max: 0,
            rttvar4: 0,
            rtt_seq: 0,
        }
    }

    /// Take an RTT sample with the connection's sequence state (Linux's estimator needs it to
    /// find round-trip boundaries): `snd_una` after this ACK, `snd_nxt` now.
    pub fn sample_at(&mut self, r: SimTime, snd_una: u64, snd_nxt: u64) {
        match self.formula {
            RtoFormula::Rfc6298 => self.sample(r),
            RtoFormula::Linux => self.sample_linux(r, snd_una, snd_nxt),
        }
    }

    /// Linux's `tcp_rtt_estimator` and `__tcp_set_rto`: RTO = SRTT + rttvar, where rttvar
    /// is the largest 4·mdev of the last round trip (at least RTOmin) and decays by a quarter
    /// per round trip; an RTT that falls grows mdev with an eighth of the usual gain.
    fn sample_linux(&mut self, r: SimTime, snd_una: u64, snd_nxt: u64) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.mdev4 = 2 * r;
                self.rttvar4 = self.mdev4.max(self.rto_min);
                self.mdev_max = self.rttvar4;
                self.rtt_seq = snd_nxt;
            }
            Some(srtt) => {
                let err = r as i128 - srtt as i128;
                let mut d = err.abs() - (self.mdev4 / 4) as i128;
                if err < 0 && d > 0 {
                    d >>= 3;
                }
                self.mdev4 = (self.mdev4 as i128 + d).max(0) as SimTime;
                if self.mdev4 > self.mdev_max {
                    self.mdev_max = self.mdev4;
                    self.rttvar4 = self.rttvar4.max(self.mdev_max);
                }
                if snd_una > self.rtt_seq {
                    if self.mdev_max < self.rttvar4 {
                        self.rttvar4 -= (self.rttvar4 - self.mdev_max) / 4;
                    }
                    self.rtt_seq = snd_nxt;
                    self.mdev_max = self.rto_min;
                }
                self.srtt = Some(((srtt as i128 + err / 8).max(1)) as SimTime);
            }
        }
        let srtt = self.srtt.unwrap_or(r);
        let rto = srtt.saturating_add(self.rttvar4.max(self.granularity));
        // Linux keeps icsk_rto in jiffies (`usecs_to_jiffies`, rounded up): with 4 ms ticks
        // and SRTT + rttvar = 5.3 ms the RTO is 8 ms, which the back-off doubles and the
        // probe's clamp (`tcp_rto_delta_us`) uses too.
        self.rto = whole_ticks(rto, self.timer_granularity).min(self.rto_max);
    }

    /// Run timers on ticks of `g` (Linux: RTTs in µs, timers on jiffies).
    pub fn with_timer_granularity(mut self, g: SimTime) -> Self {
        self.timer_granularity = g.max(1);
        self.rto_min = whole_ticks(self.rto_min, self.timer_granularity);
        self
    }

    /// RTOmin.
    pub fn rto_min(&self) -> SimTime {
        self.rto_min
    }

    /// The timer tick (Linux: a jiffy).
    pub fn tick(&self) -> SimTime {
        self.timer_granularity
    }

    /// Linux's cap on the delayed-ACK timer (6.7 on, `tcp_delack_max`): RTOmin less one tick,
    /// never under one tick, so a held ACK leaves before the peer's RTO can fire (at RTOmin
    /// 1 ms and HZ = 250 one jiffy, where the 40 ms default would outlast every RTO).
    pub fn delack_max(&self) -> SimTime {
        let tick = self.tick().max(1);
        self.rto_min.max(2 * tick) - tick
    }

    /// `t` rounded up to whole timer ticks (Linux's `usecs_to_jiffies`).
    pub fn ticks(&self, t: SimTime) -> SimTime {
        t.div_ceil(self.timer_granularity)
            .saturating_mul(self.timer_granularity)
    }

    /// Fire timers as Linux's timer wheel does (see [`RttEstimator::expiry`]).
    pub fn with_timer_wheel(mut self, on: bool) -> Self {
        self.wheel = on;
        self
    }

    /// When a timer armed at `now` for `timeout` fires. Without the wheel: at the first tick
    /// at or after `now + timeout`. With it, as Linux's `mod_timer` files it: the expiry is
    /// the current jiffy plus the timeout in whole jiffies (`usecs_to_jiffies`), and
    /// `calc_wheel_index` puts a timer due within 63 jiffies in the bucket one jiffy after
    /// it, one due later in the bucket after it on a level of 8^k-jiffy granularity (k = 1
    /// below 504 jiffies, 2 below 4032, ...), never early. So a timer armed on a tick, as a
    /// timer handler rearms itself, fires `timeout` plus one tick later, and a backed-off RTO
    /// waits for a boundary that all connections share.
    pub fn expiry(&self, now: SimTime, timeout: SimTime) -> SimTime {
        if !self.wheel {
            return self.to_tick(now.saturating_add(timeout));
        }
        let g = self.timer_granularity;
        let jiffies = timeout.div_ceil(g);
        let expires = (now / g).saturating_add(jiffies);
        // LVL_START(k + 1) = 63 << 3k; LVL_DEPTH = 9 levels (HZ > 100).
        let mut shift = 0;
        while shift < 24 && jiffies >= 63 << shift {
            shift += 3;
        }
        (((expires >> shift) + 1) << shift).saturating_mul(g)
    }

    /// Use `formula` to combine RTOmin with the estimate.
    pub fn with_formula(mut self, formula: RtoFormula) -> Self {
        self.formula = formula;
        self
    }

    /// The RTT of a segment sent at `sent` and acknowledged at `now`, as the clock of
    /// granularity G measures it (a whole number of ticks; may be zero).
    pub fn measure(&self, sent: SimTime, now: SimTime) -> SimTime {
        let g = self.granularity;
        (now / g - sent / g) * g
    }

    /// Take an RTT sample, RFC 6298 (2.2) and (2.3).
    pub fn sample(&mut self, r: SimTime) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                // RTTVAR <- (1 - beta) RTTVAR + beta |SRTT - R'|, beta = 1/4
                self.rttvar = (3 * self.rttvar + srtt.abs_diff(r)) / 4;
                // SRTT <- (1 - alpha) SRTT + alpha R', alpha = 1/8
                self.srtt = Some((7 * srtt + r) / 8);
            }
        }
        let srtt = self.srtt.unwrap_or(r);
        let var = self.granularity.max(K.saturating_mul(self.rttvar));
        let rto = match self.formula {
            RtoFormula::Rfc6298 => srtt.saturating_add(var).max(self.rto_min),
            RtoFormula::Linux => srtt.saturating_add(var.max(self.rto_min)),
        };
        self.rto = rto.min(self.rto_max);
    }

    /// The RTO after `backoff` doublings (RFC 6298 (5.5)), capped at RTOmax.
    pub fn rto(&self, backoff: u32) -> SimTime {
        let shifted = if backoff >= 63 {
            u64::MAX
        } else {
            self.rto.saturating_mul(1u64 << backoff)
        };
        shifted.min(self.rto_max)
    }

    /// Round `t` up to the next tick: timers fire on clock ticks.
    pub fn to_tick(&self, t: SimTime) -> SimTime {
        self.ticks(t)
    }

    /// Smoothed RTT, if any sample was taken.
    pub fn srtt(&self) -> Option<SimTime> {
        self.srtt
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::*;

    fn est() -> RttEstimator {
        RttEstimator::new(from_ms(200), 120 * PS_PER_S, PS_PER_S, PS_PER_US)
    }

    #[test]
    fn initial_rto_before_any_sample() {
        assert_eq!(est().rto(0), PS_PER_S);
    }

    #[test]
    fn rto_never_below_rto_min() {
        let mut e = est();
        e.sample(from_us(100));
        assert_eq!(e.rto(0), from_ms(200));
    }

    #[test]
    fn first_sample_sets_srtt_and_half_rttvar() {
        let mut e = RttEstimator::new(1, u64::MAX, PS_PER_S, 1);
        e.sample(from_us(100));
        // RTO = R + 4 * R/2 = 3R
        assert_eq!(e.rto(0), from_us(300));
        e.sample(from_us(100));
        // RTTVAR = 3/4 * 50us, SRTT = 100us => 100 + 150 = 250us
        assert_eq!(e.rto(0), from_us(250));
    }

    #[test]
    fn granularity_is_a_floor_on_the_variance_term() {
        let mut e = RttEstimator::new(1, u64::MAX, PS_PER_S, from_ms(4));
        for _ in 0..50 {
            e.sample(from_ms(4));
        }
        // RTTVAR decays towards 0, so RTO = SRTT + G = 8 ms.
        assert_eq!(e.rto(0), from_ms(8));
    }

    #[test]
    fn linux_adds_rto_min_to_the_smoothed_rtt() {
        let mut e = est().with_formula(RtoFormula::Linux);
        e.sample_at(from_us(100), 0, 0);
        assert_eq!(e.rto(0), from_ms(200) + from_us(100));
    }

    #[test]
    fn linux_rttvar_holds_the_round_trip_maximum_and_decays_slowly() {
        let mut e =
            RttEstimator::new(from_us(200), u64::MAX, PS_PER_S, 1).with_formula(RtoFormula::Linux);
        e.sample_at(from_us(100), 0, 10);
        // A spike inside the round trip raises rttvar at once...
        e.sample_at(from_us(900), 5, 10);
        let spiked = e.rto(0);
        assert!(spiked > from_us(1000), "{spiked}");
        // ...and small samples in the next round trips let it decay by a quarter each time.
        e.sample_at(from_us(100), 11, 20);
        let after_one = e.rto(0);
        assert!(
            after_one < spiked && after_one > from_us(700),
            "{after_one}"
        );
    }

    #[test]
    fn backoff_doubles_up_to_rto_max() {
        let mut e = est();
        e.sample(from_us(100));
        assert_eq!(e.rto(1), from_ms(400));
        assert_eq!(e.rto(3), from_ms(1600));
        assert_eq!(e.rto(20), 120 * PS_PER_S);
        assert_eq!(e.rto(200), 120 * PS_PER_S);
    }

    #[test]
    fn samples_are_whole_ticks() {
        let e = RttEstimator::new(1, u64::MAX, PS_PER_S, from_ms(1));
        assert_eq!(e.measure(from_us(900), from_us(1100)), from_ms(1));
        assert_eq!(e.measure(from_us(100), from_us(900)), 0);
        assert_eq!(e.to_tick(from_us(1100)), from_ms(2));
        assert_eq!(e.to_tick(from_ms(2)), from_ms(2));
    }

    #[test]
    fn a_queue_building_raises_the_rto_past_its_delay() {
        for formula in [RtoFormula::Rfc6298, RtoFormula::Linux] {
            let tcp = Tcp {
                rto_min: from_ms(3),
                rto_formula: formula,
                ..Default::default()
            };
            let settled = RttEstimator::settled(&tcp, from_us(10));
            // No queue: the RTO as it was.
            assert_eq!(
                settled.clone().after_ramp(from_us(10), 0, 8).rto(0),
                settled.rto(0)
            );
            // A queue growing to 100 ms over 64 round trips: the RTO passes the queue's delay,
            // where at the base RTT it is RTOmin.
            let queued = settled.clone().after_ramp(from_us(10), from_ms(100), 64);
            assert_eq!(
                settled.rto(0),
                from_ms(3)
                    + if formula == RtoFormula::Linux {
                        from_us(10)
                    } else {
                        0
                    }
            );
            assert!(
                queued.rto(0) > from_ms(100),
                "{formula:?}: {}",
                queued.rto(0)
            );
            assert!(
                queued.rto(0) < from_ms(140),
                "{formula:?}: {}",
                queued.rto(0)
            );
        }
    }

    #[test]
    fn settled_rto_is_the_formula_in_whole_ticks() {
        let mut tcp = Tcp {
            rto_min: from_ms(1),
            rto_formula: RtoFormula::Rfc6298,
            ..Default::default()
        };
        let rto = |tcp: &Tcp| {
            let e = RttEstimator::settled(tcp, from_us(100));
            e.ticks(e.rto(0))
        };
        assert_eq!(rto(&tcp), from_ms(1));
        tcp.rto_formula = RtoFormula::Linux;
        assert_eq!(rto(&tcp), from_ms(1) + from_us(100));
        // Linux's 4 ms jiffies: RTOmin 1 ms is one jiffy, and the RTT added takes another.
        tcp.timer_granularity = Some(from_ms(4));
        assert_eq!(rto(&tcp), from_ms(8));
        tcp.rto_min = from_ms(200);
        assert_eq!(rto(&tcp), from_ms(204));
    }

    #[test]
    fn linux_rto_is_whole_jiffies_and_the_backoff_doubles_them() {
        let mut e = RttEstimator::new(from_ms(1), u64::MAX, PS_PER_S, from_us(1))
            .with_formula(RtoFormula::Linux)
            .with_timer_granularity(from_ms(4));
        // SRTT 1.3 ms + rttvar (RTOmin, one 4 ms jiffy) = 5.3 ms: icsk_rto is 2 jiffies.
        e.sample_at(from_us(1300), 0, 10);
        assert_eq!(e.rto(0), from_ms(8));
        // Doubled as jiffies (16 ms), not 10.6 ms rounded up to 12.
        assert_eq!(e.rto(1), from_ms(16));
    }

    #[test]
    fn the_timer_wheel_fires_a_tick_late_and_long_timers_on_shared_boundaries() {
        let jiffy = from_ms(4);
        let e = RttEstimator::new(from_ms(200), u64::MAX, PS_PER_S, from_us(1))
            .with_timer_granularity(jiffy);
        let wheel = e.clone().with_timer_wheel(true);
        // Armed inside jiffy 52 (208 ms): both fire at the first tick after the expiry.
        let t = from_ms(208) + from_us(1);
        assert_eq!(e.expiry(t, from_ms(8)), from_ms(220));
        assert_eq!(wheel.expiry(t, from_ms(8)), from_ms(220));
        // Armed on the tick itself, as a timer handler rearms: Linux's expiry is jiffy 54,
        // which calc_index files in the bucket of jiffy 55; not at 216 ms.
        assert_eq!(e.expiry(from_ms(208), from_ms(8)), from_ms(216));
        assert_eq!(wheel.expiry(from_ms(208), from_ms(8)), from_ms(220));
        // 62 jiffies is level 0 still; 63 on is level 1, 8-jiffy (32 ms) buckets: a timer
        // due at jiffy 52 + 100 = 152 fires at 160 (640 ms), not at 608 ms.
        assert_eq!(wheel.expiry(t, 62 * jiffy), from_ms(460));
        assert_eq!(wheel.expiry(t, 63 * jiffy), from_ms(480));
        assert_eq!(e.expiry(t, from_ms(400)), from_ms(612));
        assert_eq!(wheel.expiry(t, from_ms(400)), from_ms(640));
        assert_eq!(wheel.expiry(t, from_ms(400)) - jiffy, from_ms(636));
        // 504 jiffies on: level 2, 64-jiffy (256 ms) buckets. Jiffy 52 + 600 = 652 fires at
        // 704 (2.816 s).
        assert_eq!(wheel.expiry(t, 600 * jiffy), from_ms(2816));
    }

    #[test]
    fn rto_min_is_whole_timer_ticks() {
        let e =
            RttEstimator::new(from_ms(1), u64::MAX, PS_PER_S, 1).with_timer_granularity(from_ms(4));
        assert_eq!(e.rto_min(), from_ms(4));
        let e = RttEstimator::new(from_ms(200), u64::MAX, PS_PER_S, 1)
            .with_timer_granularity(from_ms(4));
        assert_eq!(e.rto_min(), from_ms(200));
    }
}
