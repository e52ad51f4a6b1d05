//! HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019, §3.2–3.3 and its
//! Algorithm 1): the sender's window from the in-band telemetry (INT) its ACKs echo.
//!
//! Each ACK carries, per switch egress the data packet crossed, the queue length, the bytes
//! sent so far, a timestamp and the link's rate. From two successive ACKs the sender knows each
//! link's utilization, queue included: u = qlen/(B·T) + txRate/B, where B is the link's rate,
//! T the base RTT and txRate the bytes the egress sent between the two records over the time
//! between them (the queue term takes the smaller of the two queues, as Algorithm 1 does, so
//! one burst does not count as a standing queue). The most utilized link sets U, smoothed over
//! one base RTT by the time the records cover: U ← (1 − τ/T)·U + (τ/T)·u.
//!
//! The window answers U against the target η. Above it (or after `maxStage` additive rounds)
//! it scales the reference window W_c by η/U and adds W_AI (multiplicative); below it adds
//! W_AI. Every ACK sets the window from W_c (HPCC reacts per ACK), but only the first ACK of
//! data sent after the last update moves W_c itself (and counts the round), so W_c changes once
//! per RTT: reacting per ACK to a queue the last RTT's window already answers would cut twice.
//! The pacing rate is W/T. The window stays between the window of the minimum rate and the
//! line rate's bandwidth-delay product W_init = B_NIC·T, the window it starts at.
//!
//! Clock-free and allocation-free: the last ACK's records sit in a fixed array.

use crate::config::Hpcc as Params;
use crate::net::int::{IntHop, MAX_HOPS};
use crate::units::{SimTime, PS_PER_S};

/// The HPCC state of one queue pair.
#[derive(Debug, Clone)]
pub struct Hpcc {
    /// The NIC's line rate, bits per second.
    line_rate: u64,
    /// The base RTT T, picoseconds (at least 1).
    base_rtt: SimTime,
    /// The window now (W), and the reference window (W_c), bytes.
    window: u64,
    wc: u64,
    /// The window's bounds: the minimum rate's window and W_init.
    w_min: u64,
    w_max: u64,
    /// W_AI, bytes.
    w_ai: u64,
    /// η and maxStage.
    eta: f64,
    max_stage: u32,
    /// Additive rounds since the last multiplicative one (incStage).
    inc_stage: u32,
    /// The smoothed utilization U of the most utilized link.
    u: f64,
    /// W_c moves on the first ACK past this sequence (lastUpdateSeq).
    last_update_seq: u64,
    /// The INT records of the last ACK (L), and how many there are; `None` until one arrives.
    hops: [IntHop; MAX_HOPS],
    n_hops: Option<usize>,
}

impl Hpcc {
    /// A sender at line rate with the window of one base RTT at it (W_init), the constants `p`
    /// and packets of `mtu` payload bytes (the window never bounds a lone packet: the sender
    /// sends one when nothing is in flight, whatever the window).
    pub fn new(p: &Params, line_rate_bps: u64, base_rtt: SimTime, mtu: u32) -> Hpcc {
        let _ = mtu;
        let base_rtt = base_rtt.max(1);
        let line_rate = line_rate_bps.max(1);
        let w_max = window_of(line_rate, base_rtt).max(1);
        let w_min = window_of(p.min_rate.min(line_rate), base_rtt).clamp(1, w_max);
        let eta = p.eta.clamp(f64::MIN_POSITIVE, 1.0);
        let n = f64::from(p.ai_flows.max(1));
        let w_ai = p
            .w_ai
            .unwrap_or((w_max as f64 * (1.0 - eta) / n) as u64)
            .max(1);
        Hpcc {
            line_rate,
            base_rtt,
            window: w_max,
            wc: w_max,
            w_min,
            w_max,
            w_ai,
            eta,
            max_stage: p.max_stage,
            inc_stage: 0,
            u: 1.0,
            last_update_seq: 0,
            hops: [IntHop::default(); MAX_HOPS],
            n_hops: None,
        }
    }

    /// Bytes the queue pair may have unacknowledged (W).
    pub fn window_bytes(&self) -> u64 {
        self.window
    }

    /// The reference window W_c, bytes.
    pub fn reference_window(&self) -> u64 {
        self.wc
    }

    /// The additive step W_AI, bytes.
    pub fn w_ai(&self) -> u64 {
        self.w_ai
    }

    /// The smoothed utilization U.
    pub fn utilization(&self) -> f64 {
        self.u
    }

    /// Additive rounds since the last multiplicative one.
    pub fn inc_stage(&self) -> u32 {
        self.inc_stage
    }

    /// The pacing rate: window / base RTT, at most the line rate.
    pub fn rate_bps(&self) -> u64 {
        let r = u128::from(self.window) * 8 * u128::from(PS_PER_S) / u128::from(self.base_rtt);
        (r.min(u128::from(u64::MAX)) as u64).min(self.line_rate)
    }

    /// An ACK arrived acknowledging every byte below `acked` while `snd_nxt` bytes had been
    /// sent, echoing `int`, the records of the data packet it answers (Algorithm 1, NewAck).
    /// The first ACK, or one whose path has another number of hops, only stores its records:
    /// a utilization needs two records of the same egresses.
    pub fn on_ack(&mut self, now: SimTime, acked: u64, snd_nxt: u64, int: &[IntHop]) {
        let _ = now;
        let int = &int[..int.len().min(MAX_HOPS)];
        if self.n_hops != Some(int.len()) {
            self.store(int);
            self.last_update_seq = snd_nxt;
            return;
        }
        let Some(u) = self.measure(int) else {
            return;
        };
        let update_wc = acked > self.last_update_seq;
        self.window = self.compute_window(u, update_wc);
        if update_wc {
            self.last_update_seq = snd_nxt;
        }
    }

    /// MeasureInflight: the utilization of the most utilized hop between the stored records
    /// and `int`, folded into U over the time the records cover; stores `int`. `None` when no
    /// hop tells anything new (no INT, or records no later than the stored ones): the window
    /// then stays as it is.
    fn measure(&mut self, int: &[IntHop]) -> Option<f64> {
        let t = self.base_rtt as f64;
        let mut most: Option<(f64, SimTime)> = None;
        for (now, last) in int.iter().zip(&self.hops) {
            let dt = now.ts.saturating_sub(last.ts);
            if dt == 0 || now.rate_bps == 0 {
                continue;
            }
            let rate = now.rate_bps as f64;
            let sent = now.tx_bytes.saturating_sub(last.tx_bytes) as f64;
            let tx_rate = sent * 8.0 * PS_PER_S as f64 / dt as f64;
            let queued = now.qlen.min(last.qlen) as f64 * 8.0 * PS_PER_S as f64 / (rate * t);
            let u = queued + tx_rate / rate;
            if most.is_none_or(|(m, _)| u > m) {
                most = Some((u, dt));
            }
        }
        self.store(int);
        let (u, tau) = most?;
        let w = tau.min(self.base_rtt) as f64 / t;
        self.u = (1.0 - w) * self.u + w * u;
        Some(self.u)
    }

    /// ComputeWind: the window for utilization `u`; with `update_wc`, W_c becomes it and the
    /// round counts.
    fn compute_window(&mut self, u: f64, update_wc: bool) -> u64 {
        let multiplicative = u >= self.eta || self.inc_stage >= self.max_stage;
        let w = if multiplicative {
            // W_c·η/U + W_AI; U = 0 (an idle path) gives +∞, the line rate's window.
            self.wc as f64 * self.eta / u + self.w_ai as f64
        } else {
            (self.wc + self.w_ai) as f64
        };
        let w = (w.min(self.w_max as f64) as u64).max(self.w_min);
        if update_wc {
            self.inc_stage = if multiplicative {
                0
            } else {
                self.inc_stage.saturating_add(1)
            };
            self.wc = w;
        }
        w
    }

    fn store(&mut self, int: &[IntHop]) {
        self.hops[..int.len()].copy_from_slice(int);
        self.n_hops = Some(int.len());
    }
}

/// Bytes a rate sends in one base RTT.
fn window_of(rate_bps: u64, rtt: SimTime) -> u64 {
    (u128::from(rate_bps) * u128::from(rtt) / 8 / u128::from(PS_PER_S)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const LINE: u64 = 100_000_000_000;
    const T: SimTime = 10_000_000; // 10 µs: W_init = 125,000 bytes
    const W_INIT: u64 = 125_000;

    /// The defaults with N = 125 (not the paper's 100), so that W_AI is a round 50 bytes the
    /// tests can write out.
    fn params() -> Params {
        Params {
            ai_flows: 125,
            ..Params::default()
        }
    }

    fn sender(p: &Params) -> Hpcc {
        Hpcc::new(p, LINE, T, 1000)
    }

    /// One hop of a link at `rate`: `sent` bytes so far at `ts`, `qlen` queued.
    fn hop(ts: SimTime, sent: u64, qlen: u64, rate: u64) -> IntHop {
        IntHop {
            qlen,
            tx_bytes: sent,
            ts,
            rate_bps: rate,
        }
    }

    #[test]
    fn a_sender_starts_at_the_line_rate_window() {
        let h = sender(&params());
        assert_eq!(h.window_bytes(), W_INIT);
        assert_eq!(h.rate_bps(), LINE);
        // The paper's W_AI = W_init·(1 − η)/N, N = 125.
        assert_eq!(h.w_ai(), 50);
        let mut p = params();
        p.w_ai = Some(1000);
        assert_eq!(sender(&p).w_ai(), 1000);
    }

    #[test]
    fn utilization_from_two_acks_is_the_queue_over_bdp_plus_the_sending_rate() {
        // A link at 100 Gbps sending at full rate with a queue of 62,500 B (half a BDP) in
        // both records: u = 0.5 + 1.0. τ = T, so U is u outright.
        let mut h = sender(&params());
        let q = W_INIT / 2;
        h.on_ack(0, 1000, 10_000, &[hop(0, 0, q, LINE)]);
        assert_eq!(
            h.utilization(),
            1.0,
            "the first ACK only stores its records"
        );
        let sent = LINE / 8 * T / PS_PER_S; // bytes a full link sends in T
        h.on_ack(T, 2000, 20_000, &[hop(T, sent, q, LINE)]);
        assert!((h.utilization() - 1.5).abs() < 1e-9, "{}", h.utilization());
        // The queue term takes the smaller of the two records.
        let mut h = sender(&params());
        h.on_ack(0, 1000, 10_000, &[hop(0, 0, 0, LINE)]);
        h.on_ack(T, 2000, 20_000, &[hop(T, sent / 2, q, LINE)]);
        assert!((h.utilization() - 0.5).abs() < 1e-9, "{}", h.utilization());
    }

    #[test]
    fn the_most_utilized_hop_sets_u_smoothed_by_the_time_its_records_cover() {
        let mut h = sender(&params());
        let slow = LINE / 4;
        h.on_ack(0, 1000, 10_000, &[hop(0, 0, 0, LINE), hop(0, 0, 0, slow)]);
        // Over T/5 the fast hop sends at half its rate, the slow hop at its full rate.
        let dt = T / 5;
        let fast_sent = LINE / 16 * dt / PS_PER_S;
        let slow_sent = slow / 8 * dt / PS_PER_S;
        h.on_ack(
            dt,
            2000,
            20_000,
            &[hop(dt, fast_sent, 0, LINE), hop(dt, slow_sent, 0, slow)],
        );
        // U = (1 − 1/5)·1 + (1/5)·1.0 = 1.
        assert!((h.utilization() - 1.0).abs() < 1e-9);
        h.on_ack(
            2 * dt,
            3000,
            30_000,
            &[
                hop(2 * dt, 2 * fast_sent, 0, LINE),
                hop(2 * dt, slow_sent, 0, slow),
            ],
        );
        // Now the fast hop is the most utilized at 0.5: U = 0.8·1 + 0.2·0.5.
        assert!((h.utilization() - 0.9).abs() < 1e-9, "{}", h.utilization());
    }

    /// A sender past its first ACK, whose next ACK at `t` reports a single hop utilized `u`
    /// (over a whole base RTT, so U = u).
    fn ack_at_utilization(h: &mut Hpcc, t: SimTime, acked: u64, snd_nxt: u64, u: f64) {
        let prev = h.hops[0];
        let sent = (u * (LINE / 8 * T / PS_PER_S) as f64) as u64;
        let next = hop(t, prev.tx_bytes + sent, 0, LINE);
        h.on_ack(t, acked, snd_nxt, &[next]);
    }

    fn started(p: &Params) -> Hpcc {
        let mut h = sender(p);
        h.on_ack(0, 1000, 10_000, &[hop(0, 0, 0, LINE)]);
        h
    }

    #[test]
    fn the_window_shrinks_by_eta_over_u_above_the_target_and_grows_by_w_ai_below() {
        let p = params();
        let mut h = started(&p);
        // U = 1.9 > η: W = W_c·η/U + W_AI.
        ack_at_utilization(&mut h, T, 20_000, 40_000, 1.9);
        let want = (W_INIT as f64 * 0.95 / 1.9 + 50.0) as u64;
        assert!(h.window_bytes().abs_diff(want) <= 1, "{}", h.window_bytes());
        assert_eq!(h.reference_window(), h.window_bytes());
        assert_eq!(h.inc_stage(), 0);
        // U = 0.5 < η: W = W_c + W_AI, and the round counts.
        let wc = h.reference_window();
        ack_at_utilization(&mut h, 2 * T, 50_000, 60_000, 0.5);
        assert_eq!(h.window_bytes(), wc + 50);
        assert_eq!(h.inc_stage(), 1);
    }

    #[test]
    fn the_reference_window_moves_once_per_rtt_not_per_ack() {
        let p = params();
        let mut h = started(&p);
        // The first ACK past the stored sequence (10,000) updates W_c; lastUpdateSeq = 40,000.
        ack_at_utilization(&mut h, T, 20_000, 40_000, 1.9);
        let wc = h.reference_window();
        // ACKs below 40,000 react (the window follows U) but leave W_c and the round count.
        for (i, acked) in [25_000, 30_000, 40_000].into_iter().enumerate() {
            ack_at_utilization(&mut h, T * (2 + i as u64), acked, 50_000, 1.9);
            assert_eq!(h.reference_window(), wc, "ack {acked}");
            let want = (wc as f64 * 0.95 / 1.9 + 50.0) as u64;
            assert!(h.window_bytes().abs_diff(want) <= 1);
        }
        // The ACK past 40,000 moves W_c.
        ack_at_utilization(&mut h, 5 * T, 40_001, 60_000, 1.9);
        assert!(h.reference_window() < wc);
    }

    #[test]
    fn after_max_stage_additive_rounds_the_update_is_multiplicative() {
        let mut p = params();
        p.max_stage = 3;
        let mut h = started(&p);
        // First cut the window so additive rounds have room to grow.
        ack_at_utilization(&mut h, T, 20_000, 40_000, 1.9);
        let mut seq = 40_000;
        for round in 1..=3 {
            let wc = h.reference_window();
            ack_at_utilization(&mut h, (1 + round) * T, seq + 1, seq + 10_000, 0.5);
            seq += 10_000;
            assert_eq!(h.inc_stage(), round as u32);
            assert_eq!(h.reference_window(), wc + 50);
        }
        // incStage = maxStage: multiplicative though U < η: W_c·η/U + W_AI, a jump up.
        let wc = h.reference_window();
        ack_at_utilization(&mut h, 5 * T, seq + 1, seq + 10_000, 0.5);
        assert_eq!(h.inc_stage(), 0);
        let want = ((wc as f64 * 0.95 / 0.5 + 50.0) as u64).min(W_INIT);
        assert!(
            h.window_bytes().abs_diff(want) <= 1,
            "{} {want}",
            h.window_bytes()
        );
    }

    #[test]
    fn the_window_stays_between_the_minimum_rates_window_and_w_init() {
        let p = params();
        let mut h = started(&p);
        // An idle path (U → 0) cannot push the window past W_init.
        for i in 1..20 {
            ack_at_utilization(&mut h, i * T, 20_000 * i, 20_000 * (i + 1), 0.0);
            assert!(h.window_bytes() <= W_INIT);
        }
        assert_eq!(h.window_bytes(), W_INIT);
        assert_eq!(h.rate_bps(), LINE);
        // A huge queue cannot push it below the minimum rate's (100 Mbps: 125 bytes).
        let mut h = started(&p);
        for i in 1..20 {
            let q = 1_000 * W_INIT;
            let prev = h.hops[0];
            let next = hop(i * T, prev.tx_bytes + W_INIT, q, LINE);
            h.on_ack(i * T, 20_000 * i, 20_000 * (i + 1), &[next]);
            assert!(h.window_bytes() >= 125);
        }
        assert_eq!(h.window_bytes(), 125);
        assert_eq!(h.rate_bps(), p.min_rate);
    }

    #[test]
    fn a_path_of_another_length_restarts_the_records() {
        let mut h = started(&params());
        let two = [hop(T, 0, 0, LINE), hop(T, 0, 0, LINE)];
        h.on_ack(T, 20_000, 40_000, &two);
        assert_eq!((h.utilization(), h.window_bytes()), (1.0, W_INIT));
        // No INT at all (a path without switches) leaves the window where it is.
        let mut h = started(&params());
        h.on_ack(T, 20_000, 40_000, &[]);
        h.on_ack(2 * T, 30_000, 40_000, &[]);
        assert_eq!(h.window_bytes(), W_INIT);
    }

    #[test]
    fn the_rate_is_the_window_over_the_base_rtt() {
        let mut h = started(&params());
        ack_at_utilization(&mut h, T, 20_000, 40_000, 1.9);
        let w = h.window_bytes();
        assert_eq!(h.rate_bps(), w * 8 * PS_PER_S / T);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        /// Whatever the INT says, the window stays within its bounds and the rate at most the
        /// line rate.
        #[test]
        fn the_window_stays_in_bounds(
            acks in proptest::collection::vec(
                (1u64..20_000_000, 0u64..400_000, 0u64..2_000_000, 0u64..20_000), 1..100),
            eta in 0.5f64..=1.0,
            stage in 0u32..8,
            flows in 1u32..1000,
        ) {
            let mut p = params();
            p.eta = eta;
            p.max_stage = stage;
            p.ai_flows = flows;
            let mut h = sender(&p);
            let (mut t, mut sent, mut seq) = (0, 0, 0);
            for (dt, bytes, q, adv) in acks {
                t += dt;
                sent += bytes;
                seq += adv;
                h.on_ack(t, seq, seq + 50_000, &[hop(t, sent, q, LINE), hop(t, sent / 2, q / 3, LINE / 2)]);
                prop_assert!(h.window_bytes() >= 125 && h.window_bytes() <= W_INIT);
                prop_assert!(h.rate_bps() <= LINE && h.rate_bps() >= p.min_rate);
                prop_assert!(h.utilization().is_finite() && h.utilization() >= 0.0);
            }
        }
    }
}
