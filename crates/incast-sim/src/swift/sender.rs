//! Swift's sending half of a connection: a byte stream cut into packets of `mtu` bytes, sent
//! within the congestion window ([`Cc`]) and, below one packet, paced one packet per RTT/cwnd;
//! fast retransmit after `dupthresh` duplicate ACKs (and NewReno's retransmission of the next
//! hole on a partial ACK until the data sent before the loss is acknowledged); a
//! retransmission timer (srtt + 4·rttvar, bounded, doubled per timeout, stretched at random by
//! up to `swift.rto_jitter` of itself, 0 by default) that goes back to the
//! first unacknowledged byte; below one packet its resend keeps the pacing (a timeout is no
//! licence for a burst: thousands of flows whose timers fire together would resend at once).
//!
//! Every ACK echoes the send time of the packet that caused it, so every ACK is an exact RTT
//! sample, retransmissions included (no Karn ambiguity), and carries the remote host's delay,
//! which the fabric delay leaves out.
//!
//! Clock-free: every call takes `now`; the glue asks [`Sender::poll`] for packets and
//! [`Sender::rto_at`] / [`Sender::pace_at`] for its timers' deadlines.

use super::cc::Cc;
use crate::config::Swift as Params;
use crate::rng::Rng;
use crate::units::SimTime;

/// A data packet to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seg {
    /// Stream offset of its first byte.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
}

/// A sender's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Stats {
    /// Data packets sent, retransmissions included.
    pub packets: u64,
    /// Retransmission timeouts that went back.
    pub timeouts: u32,
    /// Fast recoveries entered.
    pub recoveries: u32,
    /// Packets resent by fast retransmit or a partial ACK.
    pub retx_fast: u32,
    /// Packets resent after a timeout.
    pub retx_timeout: u32,
    /// Timeouts whose first ACK of new data came from a packet sent before the timer fired:
    /// the original was not lost, only late.
    pub spurious: u32,
    /// Most timeouts in a row without an ACK of new data.
    pub max_successive: u32,
}

/// The sending half.
#[derive(Debug, Clone)]
pub(crate) struct Sender {
    mss: u64,
    /// Bytes the application has written.
    written: u64,
    /// First unacknowledged byte, next byte to send, highest byte ever sent.
    una: u64,
    nxt: u64,
    high: u64,
    /// A packet to resend now (fast retransmit, partial ACK).
    rtx: Option<u64>,
    dupacks: u32,
    dupthresh: u32,
    /// In fast recovery until this byte is acknowledged.
    recover: Option<u64>,
    pub(crate) cc: Cc,
    /// RTT estimate (RFC 6298's gains) and the RTT before any sample (the unloaded path's).
    srtt: Option<SimTime>,
    rttvar: SimTime,
    base_rtt: SimTime,
    rto_initial: SimTime,
    rto_min: SimTime,
    rto_max: SimTime,
    /// Timeouts since the last ACK of new data (each doubles the timeout).
    backoff: u32,
    rto_deadline: Option<SimTime>,
    /// When the last timeout fired, until an ACK of new data tells whether it was spurious.
    rto_fired: Option<SimTime>,
    /// `swift.rto_jitter` and the stream its draws come from.
    rto_jitter: f64,
    timer_rng: Rng,
    /// When the last packet left (pacing below one packet).
    last_send: Option<SimTime>,
    /// `swift.timed_pacing`: below one packet the clock alone paces, with the gap taken when
    /// the last packet left (`sent_gap`), in flight or not.
    timed: bool,
    sent_gap: Option<SimTime>,
    stats: Stats,
}

impl Sender {
    /// A sender with constants `p` on a path of `hops` links whose unloaded RTT is
    /// `base_rtt`.
    pub(crate) fn new(p: &Params, hops: u32, base_rtt: SimTime) -> Sender {
        Sender {
            mss: p.mtu,
            written: 0,
            una: 0,
            nxt: 0,
            high: 0,
            rtx: None,
            dupacks: 0,
            dupthresh: p.dupthresh,
            recover: None,
            cc: Cc::new(p, hops),
            srtt: None,
            rttvar: 0,
            base_rtt,
            rto_initial: p.rto_initial,
            rto_min: p.rto_min,
            rto_max: p.rto_max,
            backoff: 0,
            rto_deadline: None,
            rto_fired: None,
            rto_jitter: p.rto_jitter,
            timer_rng: Rng::new(0, 0),
            last_send: None,
            timed: p.timed_pacing,
            sent_gap: None,
            stats: Stats::default(),
        }
    }

    /// The stream this sender's timer randomization draws from (`swift.rto_jitter`).
    pub(crate) fn with_timer_stream(mut self, rng: Rng) -> Sender {
        self.timer_rng = rng;
        self
    }

    /// The application writes `bytes` more.
    pub(crate) fn write(&mut self, bytes: u64) {
        self.written += bytes;
    }

    /// Bytes the peer has acknowledged.
    pub(crate) fn acked(&self) -> u64 {
        self.una
    }

    /// Counters.
    pub(crate) fn stats(&self) -> Stats {
        self.stats
    }

    /// The RTT the once-per-RTT rule and pacing use: the smoothed one, or the unloaded
    /// path's before the first sample.
    pub(crate) fn rtt(&self) -> SimTime {
        self.srtt.unwrap_or(self.base_rtt).max(1)
    }

    /// The retransmission timeout now.
    fn rto(&self) -> SimTime {
        let base = match self.srtt {
            Some(s) => (s + 4 * self.rttvar).max(self.rto_min),
            None => self.rto_initial,
        };
        base.saturating_mul(1 << self.backoff.min(30))
            .min(self.rto_max)
    }

    /// The timeout to arm now: [`Sender::rto`], stretched by up to `rto_jitter` of itself.
    fn armed_rto(&mut self) -> SimTime {
        let t = self.rto();
        if self.rto_jitter == 0.0 {
            return t;
        }
        let u = self.timer_rng.unit();
        t.saturating_add((t as f64 * self.rto_jitter * u) as SimTime)
    }

    /// When the retransmission timer is due, if armed.
    pub(crate) fn rto_at(&self) -> Option<SimTime> {
        self.rto_deadline
    }

    /// Whether the window lets a new packet go (pacing aside): whole packets within cwnd,
    /// and below one packet, one packet in flight (none of that when the clock alone paces).
    fn window_open(&self) -> bool {
        if self.timed && self.cc.cwnd() < 1.0 {
            return true;
        }
        let in_flight = (self.nxt - self.una).div_ceil(self.mss) as f64;
        in_flight + 1.0 <= self.cc.cwnd().max(1.0)
    }

    /// When pacing lets the next packet go, if the window is below one packet: RTT/cwnd
    /// after the last departure, from the latest window, or with timed pacing from the gap
    /// known when that packet left (a window that was still whole then takes the latest).
    fn paced_until(&self) -> Option<SimTime> {
        let now_gap = self.cc.pacing_gap(self.rtt())?;
        let gap = match (self.timed, self.sent_gap) {
            (true, Some(g)) => g,
            _ => now_gap,
        };
        self.last_send.map(|t| t.saturating_add(gap))
    }

    /// When the pacing timer should wake the sender: new data waits, the window is open,
    /// and only pacing holds it.
    pub(crate) fn pace_at(&self, now: SimTime) -> Option<SimTime> {
        if self.rtx.is_some() || self.nxt >= self.written || !self.window_open() {
            return None;
        }
        self.paced_until().filter(|&t| t > now)
    }

    /// The next packet to send now, if any: a retransmission due, else new data the window
    /// and pacing allow.
    pub(crate) fn poll(&mut self, now: SimTime) -> Option<Seg> {
        let seq = if let Some(seq) = self.rtx.take() {
            self.stats.retx_fast += 1;
            seq
        } else {
            let paced = self.paced_until().is_some_and(|t| now < t);
            if self.nxt >= self.written || !self.window_open() || paced {
                return None;
            }
            let seq = self.nxt;
            if seq < self.high {
                self.stats.retx_timeout += 1;
            }
            seq
        };
        let len = (self.written - seq).min(self.mss);
        if seq == self.nxt {
            self.nxt += len;
            self.high = self.high.max(self.nxt);
        }
        self.last_send = Some(now);
        self.sent_gap = self.cc.pacing_gap(self.rtt());
        self.stats.packets += 1;
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.armed_rto());
        }
        Some(Seg {
            seq,
            len: len as u32,
        })
    }

    /// RFC 6298's estimator, with an exact sample.
    fn sample(&mut self, rtt: SimTime) {
        match self.srtt {
            None => {
                self.srtt = Some(rtt);
                self.rttvar = rtt / 2;
            }
            Some(s) => {
                self.rttvar = (3 * self.rttvar + s.abs_diff(rtt)) / 4;
                self.srtt = Some((7 * s + rtt) / 8);
            }
        }
    }

    /// An ACK of every byte below `ack`, caused by a packet sent `rtt` ago that the remote
    /// host held `remote` before answering.
    pub(crate) fn on_ack(&mut self, now: SimTime, ack: u64, rtt: SimTime, remote: SimTime) {
        self.sample(rtt);
        let fabric = rtt.saturating_sub(remote);
        let srtt = self.rtt();
        if ack > self.una && ack <= self.high {
            let acked = (ack - self.una) as f64 / self.mss as f64;
            self.una = ack;
            self.nxt = self.nxt.max(ack);
            self.dupacks = 0;
            self.backoff = 0;
            if let Some(fired) = self.rto_fired.take() {
                // The ACK echoes its packet's send time: before the timer fired, the
                // original arrived and the timeout was spurious.
                self.stats.spurious += u32::from(now.saturating_sub(rtt) < fired);
            }
            if let Some(r) = self.recover {
                if ack >= r {
                    self.recover = None;
                } else {
                    // A partial ACK: the next hole is lost too (NewReno).
                    self.rtx = Some(ack);
                }
            }
            self.rto_deadline = if self.una < self.high {
                Some(now + self.armed_rto())
            } else {
                None
            };
            self.cc.on_ack(now, srtt, fabric, remote, acked);
        } else if ack == self.una && self.high > self.una {
            self.dupacks += 1;
            self.cc.on_ack(now, srtt, fabric, remote, 0.0);
            if self.dupacks == self.dupthresh && self.recover.is_none() {
                self.recover = Some(self.high);
                self.rtx = Some(self.una);
                self.stats.recoveries += 1;
                self.cc.on_fast_recovery(now, srtt);
            }
        }
    }

    /// The retransmission timer, if due at `now`: cut the window, back the timer off and go
    /// back to the first unacknowledged byte. False if it was not due.
    pub(crate) fn on_rto(&mut self, now: SimTime) -> bool {
        match self.rto_deadline {
            Some(d) if d <= now => {}
            _ => return false,
        }
        self.rto_deadline = None;
        if self.una >= self.high {
            return false;
        }
        self.stats.timeouts += 1;
        self.cc.on_timeout(now, self.rtt());
        self.backoff += 1;
        self.stats.max_successive = self.stats.max_successive.max(self.backoff);
        self.rto_fired = Some(now);
        self.nxt = self.una;
        self.recover = None;
        self.rtx = None;
        self.dupacks = 0;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::from_us;

    const RTT: SimTime = 12_000_000;

    fn sender(bytes: u64) -> Sender {
        let mut s = Sender::new(&Params::default(), 6, RTT);
        s.write(bytes);
        s
    }

    fn drain(s: &mut Sender, now: SimTime) -> Vec<Seg> {
        std::iter::from_fn(|| s.poll(now)).collect()
    }

    #[test]
    fn the_initial_window_goes_at_once_and_the_last_packet_is_short() {
        let mut s = sender(15 * 4000 + 10);
        let sent = drain(&mut s, 0);
        assert_eq!(sent.len(), 15);
        assert_eq!(
            sent[14],
            Seg {
                seq: 56_000,
                len: 4000
            }
        );
        // One ACK frees one packet: the short tail.
        s.on_ack(RTT, 4000, RTT, 0);
        assert_eq!(
            drain(&mut s, RTT),
            vec![Seg {
                seq: 60_000,
                len: 10
            }]
        );
        assert_eq!(s.rto_at(), Some(RTT + s.rto()));
    }

    #[test]
    fn three_duplicate_acks_resend_the_first_hole_once() {
        let mut s = sender(100 * 4000);
        drain(&mut s, 0);
        for k in 1..=3 {
            s.on_ack(RTT + k, 0, RTT, 0);
            let sent = drain(&mut s, RTT + k);
            if k < 3 {
                assert!(sent.is_empty(), "dupack {k}");
            } else {
                assert_eq!(sent, vec![Seg { seq: 0, len: 4000 }]);
            }
        }
        assert_eq!((s.stats().recoveries, s.stats().retx_fast), (1, 1));
        // A fourth duplicate does not resend again.
        s.on_ack(RTT + 4, 0, RTT, 0);
        assert!(drain(&mut s, RTT + 4).is_empty());
        // A partial ACK resends the next hole.
        s.on_ack(2 * RTT, 8000, RTT, 0);
        assert_eq!(
            drain(&mut s, 2 * RTT)[0],
            Seg {
                seq: 8000,
                len: 4000
            }
        );
    }

    #[test]
    fn a_timeout_is_spurious_when_the_original_is_acked_after_it_fired() {
        // The ACK of a packet sent at 0 arrives after the timer fired at d: spurious.
        let mut s = sender(4 * 4000);
        drain(&mut s, 0);
        let d = s.rto_at().unwrap();
        assert!(s.on_rto(d));
        drain(&mut s, d);
        s.on_ack(d + 1, 4000, d + 1, 0);
        assert_eq!((s.stats().spurious, s.stats().max_successive), (1, 1));
        // Two timeouts in a row; the first ACK of new data echoes the resend (sent at the
        // second deadline, not before it): not spurious.
        let mut s = sender(4 * 4000);
        drain(&mut s, 0);
        let d1 = s.rto_at().unwrap();
        assert!(s.on_rto(d1));
        drain(&mut s, d1);
        let d2 = s.rto_at().unwrap();
        assert!(s.on_rto(d2));
        drain(&mut s, d2);
        s.on_ack(d2 + RTT, 4000, RTT, 0);
        assert_eq!((s.stats().spurious, s.stats().max_successive), (0, 2));
        // Sent one tick before the timer fired (d − 1): spurious; at its deadline: not.
        for (rtt, spurious) in [(RTT + 1, 1), (RTT, 0)] {
            let mut s = sender(4 * 4000);
            drain(&mut s, 0);
            let d = s.rto_at().unwrap();
            assert!(s.on_rto(d));
            drain(&mut s, d);
            s.on_ack(d + RTT, 4000, rtt, 0);
            assert_eq!(s.stats().spurious, spurious, "rtt {rtt}");
        }
    }

    #[test]
    fn the_timer_does_nothing_one_tick_early_and_goes_back_at_its_deadline() {
        let mut s = sender(10 * 4000);
        drain(&mut s, 0);
        let d = s.rto_at().unwrap();
        assert_eq!(d, Params::default().rto_initial);
        assert!(!s.on_rto(d - 1));
        assert_eq!(s.rto_at(), Some(d));
        assert!(s.on_rto(d));
        assert_eq!(s.stats().timeouts, 1);
        // Back to byte 0, the window halved (15 → 7.5: 7 whole packets).
        let again = drain(&mut s, d);
        assert_eq!(again.len(), 7);
        assert_eq!(again[0].seq, 0);
        assert_eq!(s.stats().retx_timeout, 7);
        // Backed off: twice the initial timeout.
        assert_eq!(s.rto_at(), Some(d + 2 * Params::default().rto_initial));
    }

    #[test]
    fn a_randomized_timer_fires_at_its_stretched_deadline_and_not_one_tick_before() {
        let p = Params {
            rto_jitter: 0.5,
            ..Params::default()
        };
        let with = |seed: u64| {
            let mut s = Sender::new(&p, 6, RTT).with_timer_stream(Rng::new(seed, 0));
            s.write(10 * 4000);
            drain(&mut s, 0);
            s
        };
        let mut s = with(1);
        let d = s.rto_at().unwrap();
        // Armed for rto_initial × (1 + 0.5·u), u in [0, 1).
        assert!(d >= p.rto_initial && d < p.rto_initial * 3 / 2, "{d}");
        assert!(!s.on_rto(d - 1));
        assert_eq!(s.rto_at(), Some(d));
        assert!(s.on_rto(d));
        // The backed-off timer is stretched too: 2 × rto_initial × (1 + 0.5·u).
        drain(&mut s, d);
        let d2 = s.rto_at().unwrap() - d;
        assert!(d2 >= 2 * p.rto_initial && d2 < 3 * p.rto_initial, "{d2}");
        // Two senders alike but for their streams time out apart; exact timers (the
        // default) arm the very same deadline.
        assert_ne!(with(1).rto_at(), with(2).rto_at());
        let exact = |seed: u64| {
            let mut s = sender(10 * 4000).with_timer_stream(Rng::new(seed, 0));
            drain(&mut s, 0);
            s.rto_at()
        };
        assert_eq!(exact(1), exact(2));
        assert_eq!(exact(1), Some(Params::default().rto_initial));
    }

    #[test]
    fn below_one_packet_packets_are_paced_rtt_over_cwnd_apart() {
        let mut s = sender(10 * 4000);
        s.cc = Cc::new(
            &Params {
                initial_window: 0.25,
                ..Params::default()
            },
            6,
        );
        assert_eq!(drain(&mut s, 0).len(), 1);
        // Its ACK says 200 µs, above the target: the window shrinks further.
        let late = from_us(200);
        s.on_ack(late, 4000, late, 0);
        let w = s.cc.cwnd();
        assert!(w < 0.25, "{w}");
        let gap = s.cc.pacing_gap(s.rtt()).unwrap();
        // Paced from the first packet's departure (time 0).
        assert_eq!(s.pace_at(late), Some(gap));
        assert!(s.poll(gap - 1).is_none());
        assert_eq!(
            s.poll(gap),
            Some(Seg {
                seq: 4000,
                len: 4000
            })
        );
        // One packet in flight: the window holds the next whatever the pacing says.
        assert!(s.poll(10 * gap).is_none());
        assert_eq!(s.pace_at(10 * gap), None);
    }

    #[test]
    fn below_one_packet_a_timeout_resend_waits_for_its_pacing_gap() {
        // Window 0.005 packets: the timer's resend is a packet like any other, paced
        // RTT/cwnd after the last departure (time 0), not sent at once.
        let mut s = sender(10 * 4000);
        s.cc = Cc::new(
            &Params {
                initial_window: 0.005,
                ..Params::default()
            },
            6,
        );
        assert_eq!(drain(&mut s, 0).len(), 1);
        let d = s.rto_at().unwrap();
        assert!(s.on_rto(d));
        let gap = s.cc.pacing_gap(s.rtt()).unwrap();
        assert!(gap > d, "{gap} {d}");
        assert_eq!(s.pace_at(d), Some(gap));
        assert!(s.poll(gap - 1).is_none());
        assert_eq!(s.poll(gap), Some(Seg { seq: 0, len: 4000 }));
        assert_eq!(s.stats().retx_timeout, 1);
    }

    #[test]
    fn timed_pacing_sends_by_the_clock_with_the_gap_fixed_at_departure() {
        let p = Params {
            initial_window: 0.05,
            timed_pacing: true,
            ..Params::default()
        };
        let mut s = Sender::new(&p, 6, RTT);
        s.write(10 * 4000);
        assert_eq!(drain(&mut s, 0).len(), 1);
        // RTT / 0.05 from the first departure, though nothing is acknowledged yet.
        let gap = 20 * RTT;
        assert_eq!(s.pace_at(1), Some(gap));
        assert!(s.poll(gap - 1).is_none());
        assert_eq!(s.poll(gap).map(|g| g.seq), Some(4000));
        // Two packets in flight. An ACK above target shrinks the window, but the next
        // departure keeps the gap known when the second packet left.
        let late = gap + from_us(10);
        s.on_ack(late, 4000, late, 0);
        assert!(s.cc.cwnd() < 0.05);
        assert!(s.cc.pacing_gap(s.rtt()).unwrap() > gap);
        assert_eq!(s.pace_at(late), Some(2 * gap));
        assert!(s.poll(2 * gap - 1).is_none());
        assert_eq!(s.poll(2 * gap).map(|g| g.seq), Some(8000));
        // The gap after that one is the shrunk window's.
        let next = s.cc.pacing_gap(s.rtt()).unwrap();
        assert_eq!(s.pace_at(2 * gap), Some(2 * gap + next));
        // The default holds the second packet until the first is acknowledged.
        let mut d = Sender::new(
            &Params {
                timed_pacing: false,
                ..p
            },
            6,
            RTT,
        );
        d.write(10 * 4000);
        assert_eq!(drain(&mut d, 0).len(), 1);
        assert_eq!(d.pace_at(gap), None);
        assert!(d.poll(gap).is_none());
    }

    #[test]
    fn a_delay_over_target_cuts_the_window_once_per_rtt() {
        let mut s = sender(1000 * 4000);
        drain(&mut s, 0);
        let big = from_us(500);
        s.on_ack(big, 4000, big, 0);
        let after = s.cc.cwnd();
        assert!(after < 15.0 * 0.55, "{after}");
        s.on_ack(big + 1, 8000, big, 0);
        assert!(s.cc.cwnd() >= after);
    }

    #[test]
    fn the_remote_hosts_delay_is_left_out_of_the_fabric_delay() {
        let mut a = sender(1000 * 4000);
        let mut b = a.clone();
        drain(&mut a, 0);
        drain(&mut b, 0);
        // 100 µs RTT, 90 µs of it the remote host: the fabric saw 10 µs (below target),
        // but the endpoint window (target 20 µs) is cut.
        a.on_ack(from_us(100), 4000, from_us(100), from_us(90));
        b.on_ack(from_us(100), 4000, from_us(100), 0);
        assert!(a.cc.cwnd() < 15.0 && b.cc.cwnd() < 15.0);
        let mut c = sender(1000 * 4000);
        drain(&mut c, 0);
        c.on_ack(from_us(30), 4000, from_us(30), from_us(25));
        assert!(c.cc.cwnd() < 15.0, "endpoint delay 25 µs > 20 µs target");
        let mut d = sender(1000 * 4000);
        drain(&mut d, 0);
        d.on_ack(from_us(30), 4000, from_us(30), from_us(5));
        assert!(d.cc.cwnd() > 15.0, "fabric 25 µs < its scaled target");
    }
}
