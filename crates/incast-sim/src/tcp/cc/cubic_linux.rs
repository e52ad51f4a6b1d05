//! CUBIC as Linux's `tcp_cubic.c` computes it (`tcp.cubic_update = "linux"`): the same curve
//! as RFC 9438 (`cubic.rs`), but in integer arithmetic on the jiffy clock, and recomputed
//! lazily. The laziness is what matters at incast's windows of 2–4 segments:
//! - the increase (`cnt`, ACKs per one-segment increase) is recomputed at most once per
//!   jiffy, and while cwnd stays the same at most every HZ/32 jiffies (28 ms at HZ = 250);
//!   in between, ACKs only count towards the Reno-friendly estimate. So after a loss at a
//!   window of 2, where the curve's target equals cwnd (`cnt` = 100·cwnd), cwnd stays at 2
//!   for about 28 ms before the Reno-friendly estimate, now far ahead, lets it grow;
//! - the target is a whole number of segments and the time is in 1/1024 s;
//! - a timeout forgets everything (`bictcp_reset` on entering TCP_CA_Loss), W_max included,
//!   and then the increase is at most one segment per 20 ACKs until the next loss;
//! - after the connection was idle the epoch moves forward by the idle time
//!   (`CA_EVENT_TX_START`), so the curve does not count idleness as growth time;
//! - delay samples taken within a second of an epoch's start are ignored.

use super::{AckState, Controller};
use crate::tcp::idle::{Fields, Kind};
use crate::units::{SimTime, PS_PER_S};

/// β·1024 (`beta`): the window keeps 717/1024 after a loss.
const BETA: u32 = 717;
/// `BICTCP_BETA_SCALE`.
const BETA_SCALE: u32 = 1024;
/// The curve's time unit, 1/1024 s (`BICTCP_HZ`).
const CUBE_HZ_SHIFT: u32 = 10;
/// C/RTT scaled by 1024 (`bic_scale * 10`, `bic_scale` = 41): C = 0.4 for time in seconds.
const CUBE_RTT_SCALE: u64 = 41 * 10;
/// 2^40 / (`bic_scale` · 10): K³ per segment below W_max, in (1/1024 s)³ (`cube_factor`).
const CUBE_FACTOR: u64 = (1u64 << (10 + 3 * CUBE_HZ_SHIFT)) / (41 * 10);
/// Reno-friendly estimate: one segment per `cwnd · 15 / 8` ACKed segments
/// (`beta_scale` = 8·(1024 + 717) / 3 / (1024 − 717), in integers).
const FRIENDLY_SCALE: u32 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
/// At most one segment per this many ACKs while W_max is unknown (after a timeout).
const UNKNOWN_MAX_CNT: u32 = 20;

/// The mean time Linux's CUBIC on a clock whose jiffy is `tick` holds the window a loss cut,
/// for the analytical model: [`LinuxCubic::update`] recomputes `cnt` once cwnd changes or more
/// than HZ/32 jiffies after it last did, so on the jiffy after HZ/32 have passed, and a cut
/// falls on average half a jiffy into its own.
pub fn linux_cubic_hold(tick: SimTime) -> SimTime {
    let c = LinuxCubic::new(tick);
    (c.hz / 32) * c.tick + c.tick / 2
}

/// One connection's CUBIC state, as Linux's `struct bictcp`. Times are jiffies.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LinuxCubic {
    /// A jiffy (the timer tick).
    tick: SimTime,
    /// Jiffies per second (HZ).
    hz: u64,
    /// ACKed segments per one-segment increase (`cnt`).
    cnt: u32,
    /// The window before the last reduction (`last_max_cwnd`); 0 after a timeout.
    last_max_cwnd: u32,
    /// cwnd when `cnt` was last computed.
    last_cwnd: u32,
    /// When `cnt` was last computed.
    last_time: u64,
    /// The plateau (`bic_origin_point`).
    origin: u32,
    /// Time from the epoch's start to the plateau, 1/1024 s (`bic_K`).
    k: u64,
    /// Smallest RTT sample, µs (`delay_min`; 0: none).
    delay_min_us: u64,
    /// Start of the congestion-avoidance epoch (`epoch_start`; `None` is Linux's 0).
    epoch_start: Option<u64>,
    /// ACKed segments not yet turned into Reno-friendly growth (`ack_cnt`).
    ack_cnt: u32,
    /// The Reno-friendly window (`tcp_cwnd`).
    tcp_cwnd: u32,
}

impl LinuxCubic {
    /// Visit CUBIC's state (see `idle.rs`).
    pub(crate) fn idle_fields(&mut self, f: &mut impl Fields) {
        for n in [
            &mut self.cnt,
            &mut self.last_max_cwnd,
            &mut self.last_cwnd,
            &mut self.origin,
            &mut self.ack_cnt,
            &mut self.tcp_cwnd,
        ] {
            f.u32(n);
        }
        for n in [&mut self.last_time, &mut self.k, &mut self.delay_min_us] {
            f.num(Kind::Plain, n);
        }
        f.opt(Kind::Plain, &mut self.epoch_start);
    }

    /// CUBIC on a clock whose jiffy is `tick`.
    pub(crate) fn new(tick: SimTime) -> LinuxCubic {
        let tick = tick.max(1);
        LinuxCubic {
            tick,
            hz: (PS_PER_S / tick).max(1),
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            origin: 0,
            k: 0,
            delay_min_us: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
        }
    }

    fn jiffies(&self, now: SimTime) -> u64 {
        now / self.tick
    }

    /// A loss with the window at `cwnd` (`cubictcp_recalc_ssthresh`): returns ssthresh.
    pub(crate) fn on_loss(&mut self, cwnd: u32) -> u32 {
        self.epoch_start = None;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd {
            // Fast convergence: yield to newer flows.
            ((cwnd as u64 * (BETA_SCALE + BETA) as u64) / (2 * BETA_SCALE) as u64) as u32
        } else {
            cwnd
        };
        ((cwnd as u64 * BETA as u64 / BETA_SCALE as u64) as u32).max(2)
    }

    /// Entering the Loss state after a timeout (`cubictcp_state` → `bictcp_reset`).
    pub(crate) fn reset(&mut self) {
        *self = LinuxCubic::new(self.tick);
    }

    /// The sender starts sending again with nothing in flight at `now`, its last send having
    /// been at `last_send` (`CA_EVENT_TX_START`): the epoch moves forward by the idle time.
    pub(crate) fn after_idle(&mut self, now: SimTime, last_send: SimTime) {
        let now_j = self.jiffies(now);
        let idle = now_j.saturating_sub(self.jiffies(last_send));
        if let (Some(start), true) = (self.epoch_start, idle > 0) {
            self.epoch_start = Some((start + idle).min(now_j));
        }
    }

    /// An RTT sample `rtt` at `now` (`cubictcp_acked`).
    pub(crate) fn on_rtt(&mut self, now: SimTime, rtt: SimTime) {
        if let Some(start) = self.epoch_start {
            if self.jiffies(now).saturating_sub(start) < self.hz {
                return; // right after a reduction: queueing delay, not the path's
            }
        }
        let us = (rtt / crate::units::PS_PER_US).max(1);
        if self.delay_min_us == 0 || us < self.delay_min_us {
            self.delay_min_us = us;
        }
    }

    /// ACKed segments per one-segment increase of cwnd now, `acked` segments having just been
    /// acknowledged in congestion avoidance (`bictcp_update`).
    pub(crate) fn update(&mut self, now: SimTime, cwnd: u32, acked: u32) -> u32 {
        let now_j = self.jiffies(now);
        self.ack_cnt = self.ack_cnt.saturating_add(acked);
        if self.last_cwnd == cwnd && now_j.saturating_sub(self.last_time) <= self.hz / 32 {
            return self.cnt; // held: not even the Reno-friendly estimate moves
        }
        if !(self.epoch_start.is_some() && now_j == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = now_j;
            self.recompute(now_j, cwnd, acked);
        }
        self.reno_friendly(cwnd);
        self.cnt = self.cnt.max(2);
        self.cnt
    }

    /// The curve's `cnt` at jiffy `now_j` (the part of `bictcp_update` run once per jiffy).
    fn recompute(&mut self, now_j: u64, cwnd: u32, acked: u32) {
        let start = match self.epoch_start {
            Some(s) => s,
            None => {
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.k = 0;
                    self.origin = cwnd;
                } else {
                    self.k = icbrt(CUBE_FACTOR * (self.last_max_cwnd - cwnd) as u64);
                    self.origin = self.last_max_cwnd;
                }
                self.epoch_start = Some(now_j);
                now_j
            }
        };
        // Time since the epoch began plus the minimum delay (whole jiffies, rounded up), in
        // 1/1024 s.
        let delay_j = (self.delay_min_us * crate::units::PS_PER_US).div_ceil(self.tick);
        let t = ((now_j - start + delay_j) << CUBE_HZ_SHIFT) / self.hz;
        let offs = t.abs_diff(self.k) as u128;
        let delta = ((CUBE_RTT_SCALE as u128 * offs * offs * offs) >> (10 + 3 * CUBE_HZ_SHIFT))
            .min(u32::MAX as u128) as u32;
        let target = if t < self.k {
            self.origin.saturating_sub(delta)
        } else {
            self.origin.saturating_add(delta)
        };
        self.cnt = if target > cwnd {
            cwnd / (target - cwnd)
        } else {
            cwnd.saturating_mul(100)
        };
        if self.last_max_cwnd == 0 {
            self.cnt = self.cnt.min(UNKNOWN_MAX_CNT);
        }
    }

    /// The Reno-friendly bound on `cnt` (RFC 9438 4.3 in Linux's integers).
    fn reno_friendly(&mut self, cwnd: u32) {
        let per = ((cwnd as u64 * FRIENDLY_SCALE as u64) >> 3).max(1) as u32;
        if self.ack_cnt > per {
            let n = (self.ack_cnt - 1) / per; // while ack_cnt > per: ack_cnt -= per
            self.ack_cnt -= n * per;
            self.tcp_cwnd = self.tcp_cwnd.saturating_add(n);
        }
        if self.tcp_cwnd > cwnd {
            self.cnt = self.cnt.min(cwnd / (self.tcp_cwnd - cwnd));
        }
    }
}

impl Controller for LinuxCubic {
    fn ssthresh_after_loss(&mut self, cwnd: u32) -> u32 {
        self.on_loss(cwnd)
    }

    fn acks_per_increment(
        &mut self,
        now: SimTime,
        cwnd: u32,
        _min_rtt: SimTime,
        acked: u32,
    ) -> u32 {
        self.update(now, cwnd, acked)
    }

    fn on_timeout(&mut self, _st: &AckState) {
        self.reset()
    }

    fn on_tx_start(&mut self, now: SimTime, last_send: SimTime, _app_limited: bool) {
        self.after_idle(now, last_send)
    }

    fn on_rtt(&mut self, now: SimTime, rtt: SimTime) {
        LinuxCubic::on_rtt(self, now, rtt)
    }

    fn gentle_credits(&self) -> bool {
        true
    }
}

/// ⌊∛a⌋.
fn icbrt(a: u64) -> u64 {
    let mut x = (a as f64).cbrt() as u64;
    while x > 0 && x.saturating_mul(x).saturating_mul(x) > a {
        x -= 1;
    }
    while (x + 1).saturating_mul(x + 1).saturating_mul(x + 1) <= a {
        x += 1;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{from_ms, from_us};

    const JIFFY: SimTime = 4 * crate::units::PS_PER_MS;

    fn after_loss_at(cwnd: u32) -> LinuxCubic {
        let mut c = LinuxCubic::new(JIFFY);
        c.on_rtt(0, from_us(50));
        c.on_loss(cwnd);
        c
    }

    #[test]
    fn linux_constants() {
        assert_eq!(FRIENDLY_SCALE, 15);
        assert_eq!(CUBE_FACTOR, 2_681_735_677);
        assert_eq!(icbrt(27), 3);
        assert_eq!(icbrt(26), 2);
        assert_eq!(icbrt(CUBE_FACTOR), 1389);
    }

    #[test]
    fn a_loss_keeps_717_of_1024_and_remembers_the_window() {
        let mut c = LinuxCubic::new(JIFFY);
        assert_eq!(c.on_loss(100), 70);
        assert_eq!(c.last_max_cwnd, 100);
        assert_eq!(c.on_loss(3), 2);
        // Below W_max: fast convergence, 3·1741/2048.
        assert_eq!(c.last_max_cwnd, 2);
    }

    /// At a window of 2 after a loss at 2, the curve's target is cwnd itself: nothing grows
    /// until, HZ/32 jiffies (7 at HZ = 250, 28 ms) after the epoch began, `cnt` is recomputed
    /// and the Reno-friendly estimate, fed by every ACK meanwhile, takes over.
    #[test]
    fn at_two_segments_the_increase_is_held_for_hz_over_32() {
        let mut c = after_loss_at(2);
        let t0 = from_ms(1000);
        assert_eq!(c.update(t0, 2, 1), 200);
        // ACKs over the next seven jiffies (28 ms), the last at the seventh's start: held.
        for k in 1..=40u64 {
            assert_eq!(c.update(t0 + k * from_us(700), 2, 1), 200);
        }
        assert_eq!(c.update(t0 + 7 * JIFFY, 2, 1), 200);
        assert_eq!(c.update(t0 + 8 * JIFFY - 1, 2, 1), 200);
        // The eighth jiffy: 44 ACKed segments made the Reno-friendly window 2 + 14.
        assert_eq!(c.update(t0 + 8 * JIFFY, 2, 1), 2);
        assert_eq!(c.tcp_cwnd, 16);
    }

    /// The model's mean hold is the test above's: held through the seventh jiffy after the
    /// cut's, recomputed on the eighth, 7.5 jiffies on from a cut half a jiffy into its own.
    #[test]
    fn the_mean_hold_is_hz_over_32_and_a_half_jiffies() {
        assert_eq!(linux_cubic_hold(JIFFY), from_ms(30));
        assert_eq!(linux_cubic_hold(crate::units::PS_PER_MS), from_us(31_500));
    }

    /// `cnt` is computed at most once per jiffy: cwnd reaching the curve's target changes it
    /// only from the next jiffy on.
    #[test]
    fn within_one_jiffy_cnt_is_not_recomputed() {
        let mut c = after_loss_at(4);
        let t0 = 250 * JIFFY;
        // W_max 4 above cwnd 2: the target rounds up to 3 segments; cnt = 2 / 1.
        assert_eq!(c.update(t0, 2, 1), 2);
        // cwnd became 3 (= the target): 300, but not before the next jiffy.
        assert_eq!(c.update(t0 + 1, 3, 1), 2);
        assert_eq!(c.update(t0 + JIFFY - 1, 3, 1), 2);
        assert_eq!(c.update(t0 + JIFFY, 3, 1), 300);
    }

    #[test]
    fn a_timeout_forgets_the_maximum_and_caps_cnt_at_20() {
        let mut c = after_loss_at(40);
        c.reset();
        assert_eq!(c.last_max_cwnd, 0);
        assert_eq!(c.update(from_ms(500), 5, 1), 20);
    }

    #[test]
    fn idleness_moves_the_epoch_forward() {
        let mut c = after_loss_at(10);
        c.update(100 * JIFFY, 7, 1);
        assert_eq!(c.epoch_start, Some(100));
        c.after_idle(150 * JIFFY, 120 * JIFFY);
        assert_eq!(c.epoch_start, Some(130));
        c.after_idle(150 * JIFFY + 1, 0);
        assert_eq!(c.epoch_start, Some(150), "never after now");
    }

    #[test]
    fn delay_samples_within_a_second_of_the_epoch_are_ignored() {
        let mut c = after_loss_at(10);
        c.update(100 * JIFFY, 7, 1);
        c.on_rtt(100 * JIFFY + from_ms(999), from_us(20));
        assert_eq!(c.delay_min_us, 50);
        c.on_rtt(100 * JIFFY + PS_PER_S, from_us(20));
        assert_eq!(c.delay_min_us, 20);
    }
}
