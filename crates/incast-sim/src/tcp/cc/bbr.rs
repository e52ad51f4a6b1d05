//! BBR v1 as Linux's `tcp_bbr.c` runs it (Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson,
//! "BBR: Congestion-Based Congestion Control", ACM Queue 14(5), 2016): a windowed maximum of
//! delivery-rate samples (10 round trips) and a windowed minimum RTT (10 s) make a model of
//! the path; the sender paces at `pacing_gain × bw` and keeps at most `cwnd_gain × BDP` in
//! flight. STARTUP doubles the rate each round trip (gain 2/ln 2) until the bandwidth stops
//! growing by 25% for three rounds, DRAIN empties the queue it built, PROBE_BW cycles the
//! gain through 5/4, 3/4 and six rounds of 1, PROBE_RTT drops to 4 segments for 200 ms when
//! the minimum RTT is 10 s old. Loss does not cut the rate: recovery conserves packets for a
//! round trip, an RTO restarts cwnd from what is in flight, and a loss rate above 20% at a
//! steady rate is taken for a policer (the long-term bandwidth, `lt_bw`).
//!
//! Units follow Linux: bandwidth in segments per µs scaled by 2^24, gains by 2^8.

use super::{AckState, CaState, Controller, GSO_MAX_BYTES, MAX_CWND, PACING_SHIFT};
use crate::rng::Rng;
use crate::tcp::rate::RateSample;
use crate::units::{SimTime, PS_PER_MS, PS_PER_S, PS_PER_US};

const BBR_SCALE: u32 = 8;
const BBR_UNIT: u64 = 1 << BBR_SCALE;
const BW_SCALE: u32 = 24;
const BW_UNIT: u64 = 1 << BW_SCALE;
/// Round trips of the max-bandwidth filter.
const BW_RTTS: u64 = CYCLE_LEN as u64 + 2;
/// The minimum-RTT filter's window.
const MIN_RTT_WIN: SimTime = 10 * PS_PER_S;
/// How long PROBE_RTT holds cwnd at the minimum.
const PROBE_RTT_MODE: SimTime = 200 * PS_PER_MS;
/// Below this pacing rate (bytes/s) TSO bursts are one segment.
const MIN_TSO_RATE_BYTES: u64 = 1_200_000 / 8;
const PACING_MARGIN_PERCENT: u64 = 1;
const HIGH_GAIN: u64 = BBR_UNIT * 2885 / 1000 + 1;
const DRAIN_GAIN: u64 = BBR_UNIT * 1000 / 2885;
const CWND_GAIN: u64 = BBR_UNIT * 2;
const CYCLE_LEN: usize = 8;
const PACING_GAIN: [u64; CYCLE_LEN] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
const CYCLE_RAND: u64 = 7;
/// The smallest cwnd BBR keeps (two 2-segment bursts for a delayed-ACK receiver).
const CWND_MIN_TARGET: u32 = 4;
const FULL_BW_THRESH: u64 = BBR_UNIT * 5 / 4;
const FULL_BW_CNT: u32 = 3;
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: u64 = 50;
const LT_BW_RATIO: u64 = BBR_UNIT / 8;
const LT_BW_DIFF_BYTES: u64 = 4000 / 8;
const LT_BW_MAX_RTTS: u32 = 48;
const EXTRA_ACKED_GAIN: u64 = BBR_UNIT;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const ACK_EPOCH_ACKED_RESET: u64 = 1 << 20;
const EXTRA_ACKED_MAX: SimTime = 100 * PS_PER_MS;
/// Linux's TCP_INIT_CWND.
const INIT_CWND: u32 = 10;

/// BBR's modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// Kathleen Nichols' windowed running maximum of three samples (Linux's `win_minmax.c`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct MaxFilter {
    s: [(u64, u64); 3],
}

impl MaxFilter {
    fn get(&self) -> u64 {
        self.s[0].1
    }
    fn reset(&mut self, t: u64, v: u64) {
        self.s = [(t, v); 3];
    }
    fn running_max(&mut self, win: u64, t: u64, v: u64) {
        if v >= self.s[0].1 || t - self.s[2].0 > win {
            self.reset(t, v);
            return;
        }
        if v >= self.s[1].1 {
            self.s[1] = (t, v);
            self.s[2] = (t, v);
        } else if v >= self.s[2].1 {
            self.s[2] = (t, v);
        }
        // Subwindow update.
        let dt = t - self.s[0].0;
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = (t, v);
            if t - self.s[0].0 > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = (t, v);
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[1] = (t, v);
            self.s[2] = (t, v);
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = (t, v);
        }
    }
}

/// One connection's BBR.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bbr {
    mode: Mode,
    bw: MaxFilter,
    rtt_cnt: u64,
    next_rtt_delivered: u64,
    round_start: bool,
    min_rtt: SimTime,
    min_rtt_stamp: SimTime,
    probe_rtt_done_stamp: Option<SimTime>,
    probe_rtt_round_done: bool,
    prior_cwnd: u32,
    prev_ca: CaState,
    packet_conservation: bool,
    idle_restart: bool,
    full_bw_reached: bool,
    full_bw: u64,
    full_bw_cnt: u32,
    cycle_idx: usize,
    cycle_stamp: SimTime,
    pacing_gain: u64,
    cwnd_gain: u64,
    has_seen_rtt: bool,
    lt_is_sampling: bool,
    lt_use_bw: bool,
    lt_bw: u64,
    lt_rtt_cnt: u32,
    lt_last_stamp: SimTime,
    lt_last_delivered: u64,
    lt_last_lost: u64,
    ack_epoch_stamp: SimTime,
    ack_epoch_acked: u64,
    extra_acked: [u64; 2],
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    /// Pacing rate, bytes per second.
    pacing_rate: u64,
    /// PROBE_RTT ended: the next cwnd restores the one saved before it.
    restore_after_probe_rtt: bool,
    /// Bytes per segment.
    mss: u64,
    rng: Rng,
}

impl Bbr {
    /// BBR for a connection with `cwnd` segments of `mss` bytes and the handshake's `srtt`
    /// (`bbr_init`); `rng` draws the phase PROBE_BW starts in.
    pub(crate) fn new(cwnd: u32, mss: u64, srtt: Option<SimTime>, rng: Rng) -> Bbr {
        let mut b = Bbr {
            mode: Mode::Startup,
            bw: MaxFilter::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            min_rtt: srtt.unwrap_or(SimTime::MAX),
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            prior_cwnd: 0,
            prev_ca: CaState::Open,
            packet_conservation: false,
            idle_restart: false,
            full_bw_reached: false,
            full_bw: 0,
            full_bw_cnt: 0,
            cycle_idx: 0,
            cycle_stamp: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            has_seen_rtt: false,
            lt_is_sampling: false,
            lt_use_bw: false,
            lt_bw: 0,
            lt_rtt_cnt: 0,
            lt_last_stamp: 0,
            lt_last_delivered: 0,
            lt_last_lost: 0,
            ack_epoch_stamp: 0,
            ack_epoch_acked: 0,
            extra_acked: [0; 2],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            pacing_rate: 0,
            restore_after_probe_rtt: false,
            mss,
            rng,
        };
        b.init_pacing_rate(cwnd, mss, srtt);
        b
    }

    /// The mode (for tests and reports).
    #[cfg(test)]
    fn mode(&self) -> Mode {
        self.mode
    }

    /// The bandwidth estimate in bits per second for `mss`-byte segments (for tests).
    #[cfg(test)]
    fn bw_bps(&self, mss: u64) -> f64 {
        self.bw() as f64 * mss as f64 * 8.0 * 1e6 / BW_UNIT as f64
    }

    fn bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.bw.get()
        }
    }

    fn rate_bytes_per_sec(bw: u64, gain: u64, mss: u64) -> u64 {
        let r = (bw as u128 * mss as u128 * gain as u128) >> BBR_SCALE;
        let r = r * (1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT)) as u128;
        (r >> BW_SCALE) as u64
    }

    fn init_pacing_rate(&mut self, cwnd: u32, mss: u64, srtt: Option<SimTime>) {
        let rtt_us = match srtt {
            Some(r) => {
                self.has_seen_rtt = true;
                (r / PS_PER_US).max(1)
            }
            None => 1000,
        };
        let bw = cwnd as u64 * BW_UNIT / rtt_us;
        self.pacing_rate = Self::rate_bytes_per_sec(bw, HIGH_GAIN, mss);
    }

    fn set_pacing_rate(&mut self, bw: u64, gain: u64, mss: u64, srtt: Option<SimTime>, cwnd: u32) {
        let rate = Self::rate_bytes_per_sec(bw, gain, mss);
        if !self.has_seen_rtt && srtt.is_some() {
            self.init_pacing_rate(cwnd, mss, srtt);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// Segments per TSO burst BBR wants (`bbr_tso_segs_goal`).
    fn tso_segs_goal(&self, mss: u64) -> u32 {
        let bytes = (self.pacing_rate >> PACING_SHIFT).min(GSO_MAX_BYTES);
        let min = if self.pacing_rate < MIN_TSO_RATE_BYTES {
            1
        } else {
            2
        };
        ((bytes / mss) as u32).max(min)
    }

    /// Remember the last good cwnd before recovery or PROBE_RTT cut it (`bbr_save_cwnd`).
    fn save_cwnd(&mut self, cwnd: u32) {
        if self.prev_ca < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// A retransmission timeout (`bbr_set_state(TCP_CA_Loss)`): the RTO ends a round.
    fn on_rto(&mut self, st: &AckState) {
        self.prev_ca = CaState::Loss;
        self.full_bw = 0;
        self.round_start = true;
        let rs = RateSample {
            losses: 1,
            ..RateSample::default()
        };
        self.lt_bw_sampling(&rs, st);
    }

    fn bdp(&self, bw: u64, gain: u64) -> u32 {
        if self.min_rtt == SimTime::MAX {
            return INIT_CWND;
        }
        let min_rtt_us = (self.min_rtt / PS_PER_US) as u128;
        let w = bw as u128 * min_rtt_us;
        (((w * gain as u128) >> BBR_SCALE).div_ceil(BW_UNIT as u128)) as u32
    }

    fn quantization_budget(&self, cwnd: u32, mss: u64) -> u32 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal(mss);
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    fn inflight(&self, bw: u64, gain: u64, mss: u64) -> u32 {
        self.quantization_budget(self.bdp(bw, gain), mss)
    }

    fn packets_in_net_at_edt(&self, inflight_now: u32, st: &AckState) -> u32 {
        let interval_us = (st.next_send.max(st.now) - st.now) / PS_PER_US;
        let delivered = ((self.bw() as u128 * interval_us as u128) >> BW_SCALE) as u32;
        let mut at_edt = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            at_edt += self.tso_segs_goal(st.mss);
        }
        at_edt.saturating_sub(delivered)
    }

    fn extra_acked_cwnd(&self) -> u32 {
        if !self.full_bw_reached {
            return 0;
        }
        let max_aggr =
            (self.bw() as u128 * (EXTRA_ACKED_MAX / PS_PER_US) as u128 / BW_UNIT as u128) as u64;
        let aggr = (EXTRA_ACKED_GAIN * self.extra_acked[0].max(self.extra_acked[1])) >> BBR_SCALE;
        aggr.min(max_aggr) as u32
    }

    /// BBR's answer to an ACK (`bbr_main`): the new cwnd (the pacing rate is kept inside).
    fn main(&mut self, rs: &RateSample, st: &AckState) -> u32 {
        self.update_bw(rs, st);
        self.update_ack_aggregation(rs, st);
        self.update_cycle_phase(rs, st);
        self.check_full_bw_reached(rs);
        self.check_drain(st);
        self.update_min_rtt(rs, st);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(bw, self.pacing_gain, st.mss, st.srtt, st.cwnd);
        self.set_cwnd(rs, st, bw)
    }

    fn update_bw(&mut self, rs: &RateSample, st: &AckState) {
        self.round_start = false;
        let Some(delivered) = rs.delivered else {
            return;
        };
        if rs.interval == 0 {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = st.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(rs, st);
        let bw = (delivered as u128 * BW_UNIT as u128 * PS_PER_US as u128 / rs.interval as u128)
            .min(u64::MAX as u128) as u64;
        if !rs.app_limited || bw >= self.bw.get() {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    fn update_ack_aggregation(&mut self, rs: &RateSample, st: &AckState) {
        if rs.acked_sacked == 0 || rs.delivered.is_none() || rs.interval == 0 {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1F);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx = 1 - self.extra_acked_win_idx;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = st.delivered_at.saturating_sub(self.ack_epoch_stamp) / PS_PER_US;
        let mut expected = (self.bw() as u128 * epoch_us as u128 / BW_UNIT as u128) as u64;
        if self.ack_epoch_acked <= expected
            || self.ack_epoch_acked + rs.acked_sacked as u64 >= ACK_EPOCH_ACKED_RESET
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_stamp = st.delivered_at;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked as u64).min(0xFFFFF);
        let extra = (self.ack_epoch_acked - expected).min(st.cwnd as u64);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
    }

    fn update_cycle_phase(&mut self, rs: &RateSample, st: &AckState) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(rs, st) {
            self.advance_cycle_phase(st.delivered_at);
        }
    }

    fn is_next_cycle_phase(&self, rs: &RateSample, st: &AckState) -> bool {
        let full_length = st.delivered_at.saturating_sub(self.cycle_stamp) > self.min_rtt;
        if self.pacing_gain == BBR_UNIT {
            return full_length;
        }
        let inflight = self.packets_in_net_at_edt(rs.prior_in_flight, st);
        let bw = self.bw.get();
        if self.pacing_gain > BBR_UNIT {
            return full_length
                && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain, st.mss));
        }
        full_length || inflight <= self.inflight(bw, BBR_UNIT, st.mss)
    }

    fn advance_cycle_phase(&mut self, delivered_at: SimTime) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_stamp = delivered_at;
    }

    fn reset_probe_bw_mode(&mut self, delivered_at: SimTime) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.rng.up_to(CYCLE_RAND - 1) as usize;
        self.advance_cycle_phase(delivered_at);
    }

    fn reset_mode(&mut self, delivered_at: SimTime) {
        if !self.full_bw_reached {
            self.mode = Mode::Startup;
        } else {
            self.reset_probe_bw_mode(delivered_at);
        }
    }

    fn reset_lt_bw_sampling_interval(&mut self, st: &AckState) {
        self.lt_last_stamp = st.delivered_at / PS_PER_MS;
        self.lt_last_delivered = st.delivered;
        self.lt_last_lost = st.lost_total;
        self.lt_rtt_cnt = 0;
    }

    fn reset_lt_bw_sampling(&mut self, st: &AckState) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(st);
    }

    fn lt_bw_interval_done(&mut self, bw: u64, st: &AckState) {
        if self.lt_bw > 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * BBR_UNIT <= LT_BW_RATIO * self.lt_bw
                || Self::rate_bytes_per_sec(diff, BBR_UNIT, st.mss) <= LT_BW_DIFF_BYTES
            {
                self.lt_bw = (bw + self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(st);
    }

    fn lt_bw_sampling(&mut self, rs: &RateSample, st: &AckState) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(st);
                    self.reset_probe_bw_mode(st.delivered_at);
                }
            }
            return;
        }
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(st);
            self.lt_is_sampling = true;
        }
        if rs.app_limited {
            self.reset_lt_bw_sampling(st);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(st);
            return;
        }
        if rs.losses == 0 {
            return;
        }
        let lost = st.lost_total - self.lt_last_lost;
        let delivered = st.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t_ms = (st.delivered_at / PS_PER_MS).saturating_sub(self.lt_last_stamp);
        if t_ms < 1 {
            return;
        }
        let bw = delivered * BW_UNIT / (t_ms * 1000);
        self.lt_bw_interval_done(bw, st);
    }

    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.app_limited {
            return;
        }
        let thresh = (self.full_bw * FULL_BW_THRESH) >> BBR_SCALE;
        if self.bw.get() >= thresh {
            self.full_bw = self.bw.get();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    fn check_drain(&mut self, st: &AckState) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(st.in_flight, st)
                <= self.inflight(self.bw.get(), BBR_UNIT, st.mss)
        {
            self.reset_probe_bw_mode(st.delivered_at);
        }
    }

    fn check_probe_rtt_done(&mut self, now: SimTime) {
        match self.probe_rtt_done_stamp {
            Some(done) if now > done => {}
            _ => return,
        }
        self.min_rtt_stamp = now;
        // Linux restores cwnd here; the next set_cwnd applies it.
        self.restore_after_probe_rtt = true;
        self.reset_mode(now);
    }

    fn update_min_rtt(&mut self, rs: &RateSample, st: &AckState) {
        let expired = st.now > self.min_rtt_stamp + MIN_RTT_WIN;
        if let Some(rtt) = rs.rtt {
            if rtt < self.min_rtt || expired {
                self.min_rtt = rtt;
                self.min_rtt_stamp = st.now;
            }
        }
        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(st.cwnd);
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == Mode::ProbeRtt {
            if self.probe_rtt_done_stamp.is_none() && st.in_flight <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = Some(st.now + PROBE_RTT_MODE);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = st.delivered;
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(st.now);
                }
            }
        }
        if rs.delivered.is_some_and(|d| d > 0) {
            self.idle_restart = false;
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw if self.lt_use_bw => (BBR_UNIT, CWND_GAIN),
            Mode::ProbeBw => (PACING_GAIN[self.cycle_idx], CWND_GAIN),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: the cwnd, and whether packet conservation
    /// decides it.
    fn recover_or_restore(&mut self, rs: &RateSample, st: &AckState) -> (u32, bool) {
        let mut cwnd = st.cwnd;
        let acked = rs.acked_sacked;
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        if st.ca == CaState::Recovery && self.prev_ca != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = st.delivered;
            cwnd = st.in_flight + acked;
        } else if self.prev_ca >= CaState::Recovery && st.ca < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca = st.ca;
        if self.packet_conservation {
            return (cwnd.max(st.in_flight + acked), true);
        }
        (cwnd, false)
    }

    fn set_cwnd(&mut self, rs: &RateSample, st: &AckState, bw: u64) -> u32 {
        let mut cwnd = st.cwnd;
        if std::mem::take(&mut self.restore_after_probe_rtt) {
            cwnd = cwnd.max(self.prior_cwnd);
        }
        let acked = rs.acked_sacked;
        if acked > 0 {
            let (c, conserving) = self.recover_or_restore(rs, st);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, self.cwnd_gain);
                target += self.extra_acked_cwnd();
                target = self.quantization_budget(target, st.mss);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || st.delivered < INIT_CWND as u64 {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(CWND_MIN_TARGET);
        }
        cwnd
    }
}

/// BBR answers the hooks of a controller that sets cwnd itself; its ssthresh stays infinite.
impl Controller for Bbr {
    /// `bbr_ssthresh`: save cwnd, leave ssthresh infinite (Linux's `TCP_INFINITE_SSTHRESH`).
    fn ssthresh_after_loss(&mut self, cwnd: u32) -> u32 {
        self.save_cwnd(cwnd);
        MAX_CWND
    }

    /// The sender enters the Loss state: `bbr_ssthresh` saves cwnd again (whatever state it
    /// left), then `bbr_set_state(TCP_CA_Loss)`.
    fn on_timeout(&mut self, st: &AckState) {
        self.save_cwnd(st.cwnd);
        self.on_rto(st);
    }

    /// `bbr_cwnd_event_tx_start`: after idleness, not a round of its own.
    fn on_tx_start(&mut self, now: SimTime, _last_send: SimTime, app_limited: bool) {
        if !app_limited {
            return;
        }
        self.idle_restart = true;
        self.ack_epoch_stamp = now;
        self.ack_epoch_acked = 0;
        if self.mode == Mode::ProbeBw {
            let bw = self.bw();
            self.set_pacing_rate(bw, BBR_UNIT, self.mss, None, 0);
        } else if self.mode == Mode::ProbeRtt {
            self.check_probe_rtt_done(now);
        }
    }

    fn sets_cwnd(&self) -> bool {
        true
    }

    fn on_rate_sample(&mut self, rs: &RateSample, st: &AckState) -> u32 {
        self.main(rs, st)
    }

    fn pacing_rate(&self) -> Option<u64> {
        Some(self.pacing_rate)
    }

    /// `bbr_tso_segs`.
    fn tso_segs(&self, mss: u64) -> Option<u32> {
        Some(self.tso_segs_goal(mss))
    }

    /// `bbr_undo_cwnd`: the bandwidth probing and the long-term sampling start over.
    fn on_undo(&mut self, st: &AckState) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(st);
    }

    fn seed(&mut self, rng: Rng) {
        self.rng = rng;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_max_filter_forgets_a_peak_after_its_window() {
        let mut f = MaxFilter::default();
        f.running_max(10, 0, 100);
        f.running_max(10, 3, 50);
        assert_eq!(f.get(), 100);
        f.running_max(10, 11, 60);
        assert_eq!(f.get(), 60, "the peak at round 0 is older than 10 rounds");
    }

    #[test]
    fn gains_are_linux_constants() {
        assert_eq!(HIGH_GAIN, 739);
        assert_eq!(DRAIN_GAIN, 88);
        assert_eq!(PACING_GAIN[0], 320);
        assert_eq!(PACING_GAIN[1], 192);
    }

    #[test]
    fn pacing_rate_is_gain_times_bandwidth_less_the_margin() {
        // 1 segment per µs of 1000 bytes = 8 Gbps; gain 1: 99% of it in bytes per second.
        let r = Bbr::rate_bytes_per_sec(BW_UNIT, BBR_UNIT, 1000);
        assert_eq!(r, 990_000_000);
    }

    #[test]
    fn bdp_is_bandwidth_times_min_rtt_rounded_up() {
        let mut b = Bbr::new(10, 1000, Some(100 * PS_PER_US), Rng::new(1, 1));
        b.min_rtt = 100 * PS_PER_US;
        // 0.1 segment per µs × 100 µs = 10 segments, × 2 = 20.
        assert_eq!(b.bdp(BW_UNIT / 10, CWND_GAIN), 20);
    }

    #[test]
    fn startup_finds_the_bottleneck_rate_drains_and_cycles() {
        // Each round trip of 100 us delivers 10 segments of 1000 bytes: 0.1 segment per us,
        // 800 Mbps.
        let mut b = Bbr::new(10, 1000, Some(100 * PS_PER_US), Rng::new(1, 1));
        let mut cwnd = 10;
        for k in 0..12u64 {
            let now = (k + 1) * 100 * PS_PER_US;
            let rs = RateSample {
                prior_delivered: 10 * k,
                delivered: Some(10),
                interval: 100 * PS_PER_US,
                acked_sacked: 10,
                losses: 0,
                app_limited: false,
                rtt: Some(100 * PS_PER_US),
                prior_in_flight: 10,
            };
            let st = AckState {
                now,
                cwnd,
                in_flight: 4,
                delivered: 10 * (k + 1),
                delivered_at: now,
                ca: CaState::Open,
                mss: 1000,
                next_send: now,
                srtt: Some(100 * PS_PER_US),
                lost_total: 0,
            };
            cwnd = b.on_rate_sample(&rs, &st);
        }
        assert_eq!(b.mode(), Mode::ProbeBw);
        assert!((b.bw_bps(1000) - 800e6).abs() < 8e6, "{}", b.bw_bps(1000));
        // cwnd grows towards 2 × BDP (20 segments) plus three ~64 KB TSO bursts (Linux's
        // quantization budget at this rate): never below the BDP.
        assert!((20..=20 + 3 * 65 + 4).contains(&cwnd), "{cwnd}");
        // Pacing at gain × bw, less 1%: between 3/4 and 5/4 of 100 MB/s.
        let r = b.pacing_rate().expect("BBR paces");
        assert!((74_000_000..=124_000_000).contains(&r), "{r}");
    }
}
