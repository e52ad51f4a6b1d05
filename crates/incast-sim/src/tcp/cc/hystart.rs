//! HyStart (Ha and Rhee, "Taming the elephants: New TCP slow start", Computer Networks 2011),
//! as Linux's `tcp_cubic.c` runs it: slow start ends (ssthresh = cwnd) once cwnd is at least
//! 16 and, within one round, either the ACK train (ACKs at most 2 ms apart) has lasted longer
//! than half the minimum RTT, or the round's smallest RTT of its first eight samples exceeds the
//! minimum by an eighth of it (clamped to 4–16 ms). Linux runs this HyStart, not RFC 9406's
//! HyStart++.

use crate::tcp::cc::GSO_MAX_SIZE;
use crate::tcp::idle::{Fields, Kind};
use crate::units::{SimTime, PS_PER_MS, PS_PER_S, PS_PER_US};

/// cwnd below which HyStart does not look (`hystart_low_window`).
const LOW_WINDOW: u32 = 16;
/// ACKs closer than this belong to one train (`hystart_ack_delta_us`).
const ACK_DELTA: SimTime = 2 * PS_PER_MS;
/// RTT samples per round before the delay test (`HYSTART_MIN_SAMPLES`).
const MIN_SAMPLES: u32 = 8;

/// One connection's HyStart state.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct HyStart {
    round_start: SimTime,
    last_ack: SimTime,
    end_seq: u64,
    curr_rtt: SimTime,
    sample_cnt: u32,
    delay_min: SimTime,
    /// Slow start's end was found (until a timeout resets it).
    found: bool,
}

impl HyStart {
    /// Visit HyStart's state (see `idle.rs`).
    pub(crate) fn idle_fields(&mut self, f: &mut impl Fields) {
        f.num(Kind::Time, &mut self.round_start);
        f.num(Kind::Time, &mut self.last_ack);
        f.num(Kind::Seq, &mut self.end_seq);
        f.num(Kind::Rtt, &mut self.curr_rtt);
        f.num(Kind::Rtt, &mut self.delay_min);
        f.u32(&mut self.sample_cnt);
        f.flag(&mut self.found);
    }

    /// A new round starts at `now`: it ends when `snd_nxt` is acknowledged.
    pub(crate) fn reset_round(&mut self, now: SimTime, snd_nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = snd_nxt;
        self.curr_rtt = SimTime::MAX;
        self.sample_cnt = 0;
    }

    /// A retransmission timeout: look again (`bictcp_reset` on TCP_CA_Loss).
    pub(crate) fn reset(&mut self, now: SimTime, snd_nxt: u64) {
        self.found = false;
        self.reset_round(now, snd_nxt);
    }

    /// An ACK in slow start: a new round begins once it passes the last round's end.
    pub(crate) fn on_ack(&mut self, now: SimTime, ack: u64, snd_nxt: u64) {
        if ack > self.end_seq {
            self.reset_round(now, snd_nxt);
        }
    }

    /// An RTT sample `rtt` at `now` in slow start with the window at `cwnd`; `pacing_rate`
    /// (bytes/s, 0 if none) and whether the sender paces. Returns true when slow start
    /// should end here.
    pub(crate) fn on_rtt(
        &mut self,
        now: SimTime,
        rtt: SimTime,
        cwnd: u32,
        pacing_rate: u64,
        paced: bool,
    ) -> bool {
        let delay = rtt.max(PS_PER_US);
        if self.delay_min == 0 || delay < self.delay_min {
            self.delay_min = delay;
        }
        if self.found || cwnd < LOW_WINDOW {
            return false;
        }
        // The ACK train.
        if now.saturating_sub(self.last_ack) <= ACK_DELTA {
            self.last_ack = now;
            let ack_delay = (GSO_MAX_SIZE * 4 * PS_PER_S)
                .checked_div(pacing_rate)
                .map_or(0, |d| d.min(PS_PER_MS));
            let mut threshold = self.delay_min + ack_delay;
            if !paced {
                threshold /= 2;
            }
            if now.saturating_sub(self.round_start) > threshold {
                self.found = true;
                return true;
            }
        }
        // The delay increase.
        self.curr_rtt = self.curr_rtt.min(delay);
        if self.sample_cnt < MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let thresh = (self.delay_min / 8).clamp(4 * PS_PER_MS, 16 * PS_PER_MS);
            if self.curr_rtt > self.delay_min + thresh {
                self.found = true;
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::from_us;

    #[test]
    fn an_ack_train_longer_than_half_the_min_rtt_ends_slow_start() {
        let mut h = HyStart::default();
        h.reset_round(0, 100);
        // min RTT 100 us, unpaced, no pacing rate: the threshold is 50 us after the round.
        assert!(!h.on_rtt(from_us(10), from_us(100), 20, 0, false));
        assert!(!h.on_rtt(from_us(50), from_us(100), 20, 0, false));
        assert!(h.on_rtt(from_us(51), from_us(100), 20, 0, false));
        assert!(
            !h.on_rtt(from_us(90), from_us(100), 20, 0, false),
            "found once"
        );
    }

    #[test]
    fn nothing_below_sixteen_segments() {
        let mut h = HyStart::default();
        h.reset_round(0, 100);
        assert!(!h.on_rtt(from_us(500), from_us(100), 15, 0, false));
    }

    #[test]
    fn a_round_whose_rtt_grew_by_the_threshold_ends_slow_start() {
        let mut h = HyStart::default();
        h.reset_round(0, 100);
        h.on_rtt(0, from_us(100), 1, 0, false); // delay_min 100 us
                                                // ACKs 3 ms apart (no train), RTTs 4.2 ms: above min + 4 ms after eight samples.
        let mut t = 0;
        let mut ended = false;
        for _ in 0..9 {
            t += 3 * PS_PER_MS;
            ended |= h.on_rtt(t, from_us(4200), 20, 0, false);
        }
        assert!(ended);
    }
}
