//! Delivery-rate sampling (Linux's `tcp_rate.c`, after Cheng et al., "Delivery Rate
//! Estimation", IETF draft): each segment remembers how much had been delivered when it was
//! sent; when it is delivered, the data delivered in between over the longer of its send and
//! ACK intervals is a sample of the path's bandwidth. BBR's model is built from these.

use crate::tcp::scoreboard::{Seg, TxState};
use crate::units::SimTime;

/// One ACK's rate sample (Linux's `struct rate_sample`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct RateSample {
    /// `delivered` when the sample's segment was sent.
    pub(crate) prior_delivered: u64,
    /// Segments delivered over the interval; `None`: no valid sample.
    pub(crate) delivered: Option<u64>,
    /// The interval, ps (the longer of the send and ACK intervals).
    pub(crate) interval: SimTime,
    /// Segments this ACK newly acknowledged or SACKed.
    pub(crate) acked_sacked: u32,
    /// Segments newly marked lost on this ACK.
    pub(crate) losses: u32,
    /// The sample's segment was sent while the sender was application-limited.
    pub(crate) app_limited: bool,
    /// An RTT sample of this ACK, if any.
    pub(crate) rtt: Option<SimTime>,
    /// Packets in flight before this ACK.
    pub(crate) prior_in_flight: u32,
}

/// The connection's delivery counters.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Rate {
    /// Segments delivered (acknowledged or SACKed) so far (`tp->delivered`).
    pub(crate) delivered: u64,
    /// When `delivered` last grew.
    pub(crate) delivered_at: SimTime,
    /// When the current flight began.
    pub(crate) first_tx: SimTime,
    /// Application-limited until `delivered` passes this (0: not limited).
    pub(crate) app_limited_until: u64,
    /// This ACK's sample, being built.
    sample: RateSample,
    /// Send time of the sample's segment (to prefer the most recently sent).
    sample_sent: SimTime,
    /// The sample has a segment.
    has_sample: bool,
    /// Its send interval.
    send_interval: SimTime,
    /// When the sample's delivery count last grew: its ACK interval starts there
    /// (Linux's `rs->prior_mstamp`).
    prior_at: SimTime,
}

impl Rate {
    /// A segment goes out at `now` with `packets_out` segments already outstanding: the
    /// state it carries (`tcp_rate_skb_sent`).
    #[inline]
    pub(crate) fn on_send(&mut self, now: SimTime, packets_out: u32) -> TxState {
        if packets_out == 0 {
            self.first_tx = now;
            self.delivered_at = now;
        }
        TxState {
            delivered: self.delivered,
            delivered_at: self.delivered_at,
            first_tx: self.first_tx,
            app_limited: self.app_limited_until != 0,
        }
    }

    /// Start building this ACK's sample.
    #[inline]
    pub(crate) fn begin(&mut self, prior_in_flight: u32) {
        self.sample = RateSample {
            prior_in_flight,
            ..RateSample::default()
        };
        self.has_sample = false;
    }

    /// `seg` was newly delivered (`tcp_rate_skb_delivered`): the most recently sent of the
    /// ACK's segments sets the sample.
    #[inline]
    pub(crate) fn on_delivered(&mut self, seg: &mut Seg) {
        self.delivered += 1;
        if !seg.take_rate() {
            return;
        }
        let tx = seg.tx;
        if !self.has_sample
            || tx.delivered > self.sample.prior_delivered
            || (tx.delivered == self.sample.prior_delivered && seg.sent() > self.sample_sent)
        {
            self.has_sample = true;
            self.sample.prior_delivered = tx.delivered;
            self.sample.app_limited = tx.app_limited;
            self.sample_sent = seg.sent();
            self.send_interval = seg.sent().saturating_sub(tx.first_tx);
            self.prior_at = tx.delivered_at;
            // The next flight's send interval starts at this segment's transmission.
            self.first_tx = seg.sent();
        }
    }

    /// Finish the sample at `now` (`tcp_rate_gen`): `acked_sacked` delivered and `losses`
    /// marked by this ACK, `min_rtt` the connection's minimum RTT.
    pub(crate) fn finish(
        &mut self,
        now: SimTime,
        acked_sacked: u32,
        losses: u32,
        rtt: Option<SimTime>,
        min_rtt: SimTime,
    ) -> RateSample {
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        if acked_sacked > 0 {
            self.delivered_at = now;
        }
        let mut rs = self.sample;
        rs.acked_sacked = acked_sacked;
        rs.losses = losses;
        rs.rtt = rtt;
        if !self.has_sample {
            return rs;
        }
        let ack_interval = now.saturating_sub(self.prior_at);
        rs.interval = self.send_interval.max(ack_interval);
        rs.delivered = Some(self.delivered - rs.prior_delivered);
        if rs.interval < min_rtt {
            // Too short to be a bandwidth sample (ACK compression, or a spurious one).
            rs.delivered = None;
        }
        rs
    }

    /// The application has nothing more to send while the window has room
    /// (`tcp_rate_check_app_limited`): samples until what is in flight is delivered are
    /// application-limited.
    #[inline]
    pub(crate) fn app_limited(&mut self, in_flight: u32) {
        self.app_limited_until = (self.delivered + in_flight as u64).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::scoreboard::Scoreboard;
    use crate::units::from_us;

    #[test]
    fn a_flight_delivered_over_an_rtt_samples_the_bottleneck_rate() {
        // Ten segments leave at once; their ACKs come back 10 us apart from 100 us on,
        // as a bottleneck of one segment per 10 us spaces them.
        let mut rate = Rate::default();
        let mut b = Scoreboard::default();
        for k in 0..10u64 {
            let tx = rate.on_send(0, k as u32);
            b.push(k * 1000, 1000, 0, tx);
        }
        let mut last = RateSample::default();
        for k in 1..=10u64 {
            let now = from_us(100 + 10 * k);
            rate.begin(10 - k as u32 + 1);
            b.clean_with(k * 1000, 0, &mut |s| rate.on_delivered(s));
            last = rate.finish(now, 1, 0, None, from_us(50));
        }
        // The last ACK: 10 segments over 200 us (ACK interval from t = 0).
        assert_eq!(last.delivered, Some(10));
        assert_eq!(last.interval, from_us(200));
    }

    #[test]
    fn intervals_shorter_than_min_rtt_are_not_samples() {
        let mut rate = Rate::default();
        let mut b = Scoreboard::default();
        let tx = rate.on_send(0, 0);
        b.push(0, 1000, 0, tx);
        rate.begin(1);
        b.clean_with(1000, 0, &mut |s| rate.on_delivered(s));
        let rs = rate.finish(from_us(30), 1, 0, None, from_us(50));
        assert_eq!(rs.delivered, None);
    }
}
