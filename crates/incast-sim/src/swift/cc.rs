//! Swift's congestion control (Kumar et al., SIGCOMM 2020, Algorithm 1 and §3.5): two AIMD
//! windows driven by delay, the fabric window against a target scaled by the path's hops and
//! by the window itself (flow-based scaling), the endpoint window against a fixed endpoint
//! target; the connection sends by the smaller. A window grows by ai/cwnd per packet acked
//! (ai per packet below one packet) while the delay is under target, and otherwise shrinks by
//! β·(delay − target)/delay, at most max_mdf, at most once per RTT. Timeouts and fast
//! recovery cut the fabric window by max_mdf (once per RTT), and RETX_RESET_THRESHOLD
//! timeouts in a row drop it to the smallest window.
//!
//! Windows are in packets (fractions allowed: below one packet the sender paces, one packet
//! every RTT/cwnd). Clock-free: every call takes `now` and the RTT it is measured against.

use crate::config::Swift as Params;
use crate::units::SimTime;

/// One AIMD window of Algorithm 1 and when it last shrank.
#[derive(Debug, Clone)]
pub(crate) struct Aimd {
    cwnd: f64,
    /// When it last decreased (or stayed, as Algorithm 1 counts it); `None`: never.
    last_decrease: Option<SimTime>,
}

/// The constants both windows share.
#[derive(Debug, Clone, Copy)]
struct Limits {
    ai: f64,
    beta: f64,
    max_mdf: f64,
    min: f64,
    max: f64,
}

impl Aimd {
    fn new(cwnd: f64) -> Aimd {
        Aimd {
            cwnd,
            last_decrease: None,
        }
    }

    /// Algorithm 1's `can_decrease`: an RTT has passed since the last decrease.
    fn can_decrease(&self, now: SimTime, rtt: SimTime) -> bool {
        self.last_decrease
            .is_none_or(|t| now.saturating_sub(t) >= rtt)
    }

    /// Clamp to the limits; a window that shrank starts the RTT in which it may not shrink
    /// again (Algorithm 1's last test, taken strictly as htsim takes it: a window merely held
    /// above target while it may not decrease would otherwise push the next cut off forever).
    fn settle(&mut self, now: SimTime, prev: f64, l: &Limits) {
        self.cwnd = self.cwnd.clamp(l.min, l.max);
        if self.cwnd < prev {
            self.last_decrease = Some(now);
        }
    }

    /// An ACK of `acked` packets with `delay` against `target`.
    fn on_delay(
        &mut self,
        now: SimTime,
        rtt: SimTime,
        delay: SimTime,
        target: f64,
        acked: f64,
        l: &Limits,
    ) {
        let prev = self.cwnd;
        let d = delay as f64;
        if d < target {
            // Additive increase: ai per RTT, spread over the window's packets.
            self.cwnd += if self.cwnd >= 1.0 {
                l.ai / self.cwnd * acked
            } else {
                l.ai * acked
            };
        } else if self.can_decrease(now, rtt) {
            let f = (1.0 - l.beta * (d - target) / d).max(1.0 - l.max_mdf);
            self.cwnd *= f;
        }
        self.settle(now, prev, l);
    }

    /// A loss (timeout or fast recovery): cut by max_mdf, once per RTT.
    fn on_loss(&mut self, now: SimTime, rtt: SimTime, l: &Limits) {
        let prev = self.cwnd;
        if self.can_decrease(now, rtt) {
            self.cwnd *= 1.0 - l.max_mdf;
        }
        self.settle(now, prev, l);
    }
}

/// A connection's Swift state: the fabric and endpoint windows and its targets.
#[derive(Debug, Clone)]
pub(crate) struct Cc {
    fabric: Aimd,
    endpoint: Aimd,
    limits: Limits,
    /// Fabric target before flow scaling: base target + hops × per-hop scaling.
    topo_target: f64,
    /// Flow-based scaling: fs(cwnd) = α/√cwnd + β, clamped to [0, range].
    fs_alpha: f64,
    fs_beta: f64,
    fs_range: f64,
    endpoint_target: f64,
    /// Timeouts in a row (Algorithm 1's retransmit_cnt) and the threshold that resets.
    retransmits: u32,
    reset_threshold: u32,
    /// Fewest packets the window reached.
    lowest: f64,
}

impl Cc {
    /// Swift with constants `p` on a path of `hops` links.
    pub(crate) fn new(p: &Params, hops: u32) -> Cc {
        let range = p.fs_range as f64;
        // §3.5: fs_range at fs_min_cwnd, 0 at fs_max_cwnd.
        let alpha = range / (1.0 / p.fs_min_cwnd.sqrt() - 1.0 / p.fs_max_cwnd.sqrt());
        Cc {
            fabric: Aimd::new(p.initial_window),
            endpoint: Aimd::new(p.initial_window),
            limits: Limits {
                ai: p.ai,
                beta: p.beta,
                max_mdf: p.max_mdf,
                min: p.min_cwnd,
                max: p.max_cwnd,
            },
            topo_target: p.base_target as f64 + f64::from(hops) * p.per_hop as f64,
            fs_alpha: alpha,
            fs_beta: -alpha / p.fs_max_cwnd.sqrt(),
            fs_range: range,
            endpoint_target: p.endpoint_target as f64,
            retransmits: 0,
            reset_threshold: p.retx_reset_threshold,
            lowest: p.initial_window,
        }
    }

    /// The window the sender uses, packets: the smaller of the two.
    pub(crate) fn cwnd(&self) -> f64 {
        self.fabric.cwnd.min(self.endpoint.cwnd)
    }

    /// Fewest packets the window reached so far.
    pub(crate) fn lowest(&self) -> f64 {
        self.lowest
    }

    /// The fabric target now, picoseconds: topology scaling plus flow scaling of the fabric
    /// window.
    pub(crate) fn fabric_target(&self) -> f64 {
        let fs = self.fs_alpha / self.fabric.cwnd.sqrt() + self.fs_beta;
        self.topo_target + fs.clamp(0.0, self.fs_range)
    }

    /// An ACK of `acked` packets: its fabric delay (RTT less the remote host's time) and
    /// endpoint delay, measured against `rtt` for the once-per-RTT rule.
    pub(crate) fn on_ack(
        &mut self,
        now: SimTime,
        rtt: SimTime,
        fabric_delay: SimTime,
        endpoint_delay: SimTime,
        acked: f64,
    ) {
        self.retransmits = 0;
        let target = self.fabric_target();
        let l = self.limits;
        self.fabric
            .on_delay(now, rtt, fabric_delay, target, acked, &l);
        let target = self.endpoint_target;
        self.endpoint
            .on_delay(now, rtt, endpoint_delay, target, acked, &l);
        self.lowest = self.lowest.min(self.cwnd());
    }

    /// A retransmission timeout.
    pub(crate) fn on_timeout(&mut self, now: SimTime, rtt: SimTime) {
        self.retransmits += 1;
        let l = self.limits;
        if self.retransmits >= self.reset_threshold {
            let prev = self.fabric.cwnd;
            self.fabric.cwnd = l.min;
            self.fabric.settle(now, prev, &l);
        } else {
            self.fabric.on_loss(now, rtt, &l);
        }
        self.lowest = self.lowest.min(self.cwnd());
    }

    /// Fast recovery (duplicate ACKs).
    pub(crate) fn on_fast_recovery(&mut self, now: SimTime, rtt: SimTime) {
        self.retransmits = 0;
        let l = self.limits;
        self.fabric.on_loss(now, rtt, &l);
        self.lowest = self.lowest.min(self.cwnd());
    }

    /// Gap between packets when the window is below one packet (RTT / cwnd), else none.
    pub(crate) fn pacing_gap(&self, rtt: SimTime) -> Option<SimTime> {
        let w = self.cwnd();
        (w < 1.0).then(|| (rtt as f64 / w).round().min(u64::MAX as f64 / 4.0) as SimTime)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::from_us;

    fn cc() -> Cc {
        Cc::new(&Params::default(), 6)
    }

    const RTT: SimTime = 20_000_000;

    #[test]
    fn the_target_is_base_plus_hops_plus_flow_scaling_within_its_range() {
        let p = Params::default();
        let mut c = cc();
        let topo = (p.base_target + 6 * p.per_hop) as f64;
        // 15 packets: between fs_min_cwnd and fs_max_cwnd, so inside the range.
        let t = c.fabric_target();
        assert!(t > topo && t < topo + p.fs_range as f64, "{t}");
        c.fabric.cwnd = 100.0;
        assert!((c.fabric_target() - topo).abs() < 1e-3);
        c.fabric.cwnd = 0.1;
        assert!((c.fabric_target() - topo - p.fs_range as f64).abs() < 1e-3);
        c.fabric.cwnd = 0.001;
        assert!((c.fabric_target() - topo - p.fs_range as f64).abs() < 1e-3);
    }

    #[test]
    fn below_target_the_window_grows_ai_per_window_of_acks() {
        let mut c = cc();
        for _ in 0..15 {
            c.on_ack(0, RTT, from_us(1), 0, 1.0);
        }
        // ai/cwnd per packet over one window of 15 packets: about one packet.
        assert!((c.cwnd() - 16.0).abs() < 0.05, "{}", c.cwnd());
        // Below one packet, each packet acked adds ai whole.
        let mut c = cc();
        c.fabric.cwnd = 0.25;
        c.on_ack(0, RTT, from_us(1), 0, 1.0);
        assert!((c.cwnd() - 1.25).abs() < 1e-9);
    }

    #[test]
    fn above_target_the_cut_is_proportional_bounded_and_once_per_rtt() {
        let mut c = cc();
        let target = c.fabric_target();
        // Delay 2 × target: cut by β/2 = 0.4.
        let delay = (2.0 * target) as SimTime;
        c.on_ack(1_000, RTT, delay, 0, 1.0);
        assert!((c.cwnd() - 15.0 * 0.6).abs() < 1e-6, "{}", c.cwnd());
        // Within the RTT (deadline − 1): no second cut.
        c.on_ack(1_000 + RTT - 1, RTT, delay, 0, 1.0);
        assert!((c.cwnd() - 9.0).abs() < 1e-6);
        // At the RTT: the next cut, and a huge delay is bounded by max_mdf.
        c.on_ack(1_000 + RTT, RTT, 1_000 * delay, 0, 1.0);
        assert!((c.cwnd() - 4.5).abs() < 1e-6, "{}", c.cwnd());
    }

    #[test]
    fn timeouts_cut_by_max_mdf_and_reset_to_the_floor_after_the_threshold() {
        let mut c = cc();
        c.on_timeout(0, RTT);
        assert!((c.cwnd() - 7.5).abs() < 1e-9);
        for k in 1..4 {
            c.on_timeout(k * RTT, RTT);
        }
        assert!(c.cwnd() > 0.9);
        c.on_timeout(4 * RTT, RTT);
        assert_eq!(c.cwnd(), Params::default().min_cwnd);
        assert_eq!(c.lowest(), Params::default().min_cwnd);
        // An ACK resets the count.
        c.on_ack(5 * RTT, RTT, from_us(1), 0, 1.0);
        assert_eq!(c.retransmits, 0);
    }

    #[test]
    fn the_endpoint_window_follows_the_host_delay() {
        let mut c = cc();
        // Fabric fine, host slow (2 × the endpoint target): the endpoint window rules.
        c.on_ack(0, RTT, from_us(1), from_us(40), 1.0);
        assert!((c.endpoint.cwnd - 15.0 * 0.6).abs() < 1e-6);
        assert!(c.fabric.cwnd > 15.0);
        assert_eq!(c.cwnd(), c.endpoint.cwnd);
    }

    #[test]
    fn below_one_packet_the_sender_paces_at_rtt_over_cwnd() {
        let mut c = cc();
        assert_eq!(c.pacing_gap(RTT), None);
        c.fabric.cwnd = 0.5;
        assert_eq!(c.pacing_gap(RTT), Some(2 * RTT));
        c.fabric.cwnd = 0.001;
        assert_eq!(c.pacing_gap(RTT), Some(1000 * RTT));
    }
}
