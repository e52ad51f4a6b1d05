//! The window: slow start and congestion avoidance (RFC 5681, Linux's `tcp_cong_avoid_ai`)
//! while cwnd limits the sender (RFC 7661), HyStart, the restart after idleness, ECN's cut
//! (RFC 3168, RFC 8257), the congestion control's turn at an ACK, and the pacing rate.

use super::ack::Ack;
use super::Sender;
use crate::config::{CwndLimited, CwndRestart};
use crate::tcp::cc::{CaState, Controller, MAX_CWND};
use crate::units::{SimTime, PS_PER_S};

impl Sender {
    /// HyStart (for CUBIC) watches slow start's ACK trains and RTTs; when it sees the queue
    /// building it ends slow start there (ssthresh = cwnd).
    pub(super) fn hystart_on_ack(&mut self, a: &Ack) {
        let Some(h) = self.hystart.as_mut() else {
            return;
        };
        if self.cwnd >= self.ssthresh {
            return;
        }
        h.on_ack(a.now, a.ack, self.snd_nxt);
        if let Some(r) = a.rtt_sample {
            if h.on_rtt(a.now, r, self.cwnd, self.pacing_rate, self.p.pacing) {
                self.ssthresh = self.cwnd;
            }
        }
    }

    /// The congestion control's turn once loss recovery has looked at the ACK (Linux's
    /// `tcp_cong_control`): a controller that sets cwnd itself reads the ACK's delivery-rate
    /// sample and sets cwnd and the pacing rate; for the others, a paced sender's rate follows
    /// cwnd.
    pub(super) fn control_on_ack(&mut self, a: &Ack) {
        if !self.cc.sets_cwnd() {
            if self.p.pacing {
                self.update_pacing_rate();
            }
            return;
        }
        let losses = (self.board.lost_total() - a.lost_before) as u32;
        let acked_sacked = a.acked + a.newly_sacked;
        let rs = self
            .rate
            .finish(a.now, acked_sacked, losses, a.rtt_sample, a.min_rtt);
        let st = self.ack_state(a.now, self.in_flight(), self.ca);
        self.cwnd = self.cc.on_rate_sample(&rs, &st).clamp(1, MAX_CWND);
        if let Some(rate) = self.cc.pacing_rate() {
            self.pacing_rate = rate;
        }
    }

    /// Slow start and congestion avoidance for `acked` segments delivered (Linux
    /// `tcp_slow_start` / `tcp_cong_avoid_ai`), only while cwnd limits the sender.
    pub(super) fn grow(&mut self, mut acked: u32, now: SimTime) {
        let cwnd_limited = match self.p.cwnd_limited {
            CwndLimited::LastSend => self.cwnd_limited,
            CwndLimited::Window => self.window_limited,
        };
        let limited =
            cwnd_limited || (self.cwnd < self.ssthresh && self.cwnd < 2 * self.max_packets_out);
        if acked == 0 || !limited {
            return;
        }
        if self.cwnd < self.ssthresh {
            let inc = acked.min(self.ssthresh - self.cwnd);
            self.cwnd += inc;
            acked -= inc;
            if acked == 0 {
                return;
            }
        }
        // Linux's tcp_cong_avoid_ai: one more segment per `per` segments acknowledged.
        let min_rtt = if self.min_rtt == SimTime::MAX {
            0
        } else {
            self.min_rtt
        };
        let per = self.cc.acks_per_increment(now, self.cwnd, min_rtt, acked);
        if self.cc.gentle_credits() && self.cwnd_cnt >= per {
            // Credits earned while `per` was larger: one segment now, not all of them.
            self.cwnd_cnt = 0;
            self.cwnd = (self.cwnd + 1).min(MAX_CWND);
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= per {
            let delta = self.cwnd_cnt / per;
            self.cwnd_cnt -= delta * per;
            self.cwnd = (self.cwnd + delta).min(MAX_CWND);
        }
    }

    /// RFC 5681 4.1 / Linux `tcp_cwnd_restart`, by policy, before sending after idleness.
    pub(super) fn restart_after_idle(&mut self, now: SimTime) {
        let restart = self.p.initial_window.min(self.cwnd);
        match self.p.cwnd_restart {
            CwndRestart::Never => {}
            CwndRestart::Block => {
                self.ssthresh = self.ssthresh.max(self.cwnd / 4 * 3);
                self.cwnd = self.p.initial_window;
                self.cwnd_cnt = 0;
            }
            // Linux's tcp_slow_start_after_idle_check leaves alone a congestion control that
            // sets cwnd itself: it restarts from its model (`on_tx_start`), not a cut cwnd.
            CwndRestart::Idle if self.cc.sets_cwnd() => {}
            CwndRestart::Idle => {
                let rto = self.rtt.rto(0);
                let mut idle = now.saturating_sub(self.last_send);
                if self.last_send == 0 || idle <= rto {
                    return;
                }
                self.ssthresh = self.ssthresh.max(self.cwnd / 4 * 3);
                while idle > rto && self.cwnd > restart {
                    idle -= rto;
                    self.cwnd >>= 1;
                }
                self.cwnd = self.cwnd.max(restart);
                self.cwnd_cnt = 0;
            }
        }
    }

    /// Linux's `tcp_update_pacing_rate` for congestion controls that leave cwnd to the sender:
    /// cwnd per SRTT, doubled in slow start, 1.2× after.
    fn update_pacing_rate(&mut self) {
        if self.cc.sets_cwnd() {
            return;
        }
        let Some(srtt) = self.rtt.srtt().filter(|&r| r > 0) else {
            return;
        };
        let ratio = if self.cwnd < self.ssthresh / 2 {
            200
        } else {
            120
        };
        let w = self.cwnd.max(self.board.packets_out()) as u128;
        let rate = self.p.mss as u128 * w * ratio * PS_PER_S as u128 / 100 / srtt as u128;
        self.pacing_rate = rate.min(u64::MAX as u128) as u64;
    }

    /// The ECN feedback of an ACK that moved `snd_una` up from `prior_una`. The congestion
    /// control sees every ACK (DCTCP's α, RFC 8257 3.3); an echo cuts the window at most once
    /// per window and not during loss recovery. DCTCP answers every echo; classic ECN (RFC 3168
    /// 6.1.2) only on connections that negotiated it, and tells the receiver with CWR.
    pub(in crate::tcp) fn on_ecn_feedback(&mut self, prior_una: u64, ece: bool) {
        let acked = self.snd_una.saturating_sub(prior_una);
        self.cc.on_ack(acked, ece, self.snd_una, self.snd_nxt);
        let dctcp = self.cc.is_dctcp();
        if !ece || !(dctcp || self.p.ecn) {
            return;
        }
        if self.ca != CaState::Open || self.snd_una < self.cwr_end || self.board.is_empty() {
            return;
        }
        if self.cc.sets_cwnd() {
            // A congestion control that sets cwnd itself (Linux's cong_control hook) answers
            // echoes itself: BBR v1 ignores them.
            return;
        }
        self.ssthresh = self.cc.ssthresh_after_ecn(self.cwnd);
        self.cwnd = self.ssthresh;
        self.cwnd_cnt = 0;
        self.cwr_end = self.snd_nxt;
        if !dctcp {
            self.send_cwr = true;
        }
        self.stats.ecn_reductions += 1;
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{CongestionControl, CubicUpdate, CwndRestart};
    use crate::tcp::cc::Controller;
    use crate::tcp::testing::*;
    use crate::tcp::{Endpoint, RttEstimator, TcpParams};
    use crate::units::{from_ms, from_us, SimTime, PS_PER_S};

    #[test]
    fn slow_start_sends_two_segments_per_acked_segment() {
        let (mut e, _) = sender_with_flight(true, 50);
        let out = ack(&mut e, from_us(100), MSS, &[]);
        assert_eq!(out.len(), 2);
        assert_eq!(e.cwnd(), 11);
    }

    #[test]
    fn block_restart_begins_every_response_from_the_initial_window() {
        let mut e = endpoint(TcpParams {
            cwnd_restart: CwndRestart::Block,
            initial_window: 1,
            ..params(true)
        });
        let mut out = Vec::new();
        e.write(0, 3 * MSS, &mut out);
        ack(&mut e, from_us(100), MSS, &[]);
        ack(&mut e, from_us(200), 3 * MSS, &[]);
        assert!(e.cwnd() > 1);
        out.clear();
        e.write(from_us(300), 3 * MSS, &mut out);
        assert_eq!(out.len(), 1);
    }

    /// A CUBIC sender in congestion avoidance at cwnd 2 = ssthresh after a loss at 2, on 4 ms
    /// jiffies, whose ACKs come one segment at a time every 700 us from `t0`.
    fn cubic_at_two(update: CubicUpdate) -> (Endpoint, SimTime) {
        let rtt = RttEstimator::new(from_ms(200), 120 * PS_PER_S, PS_PER_S, from_us(1))
            .with_timer_granularity(from_ms(4));
        let mut e = Endpoint::new(
            TcpParams {
                congestion_control: CongestionControl::Cubic,
                cubic_update: update,
                ..params(true)
            },
            rtt,
            Some(from_us(100)),
        );
        let mut out = Vec::new();
        e.write(0, 1000 * MSS, &mut out);
        e.tx.ssthresh = e.tx.cc.ssthresh_after_loss(2);
        e.tx.cwnd = 2;
        (e, from_ms(4))
    }

    #[test]
    fn linux_cubic_holds_a_window_of_two_for_hz_over_32() {
        let (mut e, t0) = cubic_at_two(CubicUpdate::Linux);
        // Forty ACKs over 28 ms (seven jiffies): the window stays at 2...
        for k in 0..40u64 {
            ack(&mut e, t0 + k * from_us(700), (k + 1) * MSS, &[]);
            assert_eq!(e.cwnd(), 2, "ACK {k}");
        }
        ack(&mut e, t0 + from_ms(32) - 1, 41 * MSS, &[]);
        assert_eq!(e.cwnd(), 2);
        // ...until the eighth jiffy, when the Reno-friendly estimate (2 + 14) takes over, one
        // segment now rather than every credit earned meanwhile.
        ack(&mut e, t0 + from_ms(32), 42 * MSS, &[]);
        assert_eq!(e.cwnd(), 3);
        // The per-ACK curve grows from 2 within the first four ACKs.
        let (mut e, t0) = cubic_at_two(CubicUpdate::PerAck);
        for k in 0..4u64 {
            ack(&mut e, t0 + k * from_us(700), (k + 1) * MSS, &[]);
        }
        assert!(e.cwnd() > 2, "cwnd {}", e.cwnd());
    }

    /// Linux's `tcp_slow_start_after_idle_check` returns at once for a congestion control
    /// with `cong_control` (BBR): an idle period longer than the RTO does not cut its cwnd,
    /// where Reno's is halved per RTO idle down to the initial window.
    #[test]
    fn bbr_keeps_its_cwnd_after_idle_where_reno_restarts() {
        for cc in [CongestionControl::Bbr, CongestionControl::Reno] {
            let mut e = endpoint(TcpParams {
                congestion_control: cc,
                cwnd_restart: CwndRestart::Idle,
                ..params(true)
            });
            let mut out = Vec::new();
            e.write(from_us(1), 10 * MSS, &mut out);
            ack(&mut e, from_us(101), 10 * MSS, &[]);
            let grown = e.cwnd();
            assert_eq!(grown, 20, "{cc:?}: slow start doubled the initial window");
            // Idle for 1 s, five RTOs of 200 ms.
            out.clear();
            e.write(PS_PER_S, MSS, &mut out);
            let want = if cc == CongestionControl::Bbr {
                grown
            } else {
                10
            };
            assert_eq!(e.cwnd(), want, "{cc:?}");
        }
    }

    #[test]
    fn classic_ecn_echo_halves_cwnd_once_per_window_and_the_next_data_carries_cwr() {
        use crate::net::{CWR, ECE, ECT};
        use crate::tcp::Incoming;
        let mut e = endpoint(TcpParams {
            ecn: true,
            ..params(true)
        });
        let mut out = Vec::new();
        e.write(0, 100 * MSS, &mut out);
        assert!(out.iter().all(|s| s.ecn & ECT != 0 && s.ecn & CWR == 0));
        let echo = |ack: u64| Incoming {
            ecn: ECE,
            ..seg(0, 0, ack, &[])
        };
        out.clear();
        e.on_segment(from_us(100), &echo(MSS), &mut out);
        // Slow start took cwnd to 11 first; the echo halves it.
        assert_eq!(e.cwnd(), 5);
        assert_eq!(e.stats().ecn_reductions, 1);
        e.on_segment(from_us(110), &echo(2 * MSS), &mut out);
        assert_eq!(e.stats().ecn_reductions, 1, "once per window");
        // The window drains: new data goes out, the first segment telling the receiver.
        let out = ack(&mut e, from_us(200), 10 * MSS, &[]);
        assert!(out.len() >= 2, "{out:?}");
        assert_ne!(out[0].ecn & CWR, 0);
        assert!(out[1..].iter().all(|s| s.ecn & CWR == 0));
    }
}
