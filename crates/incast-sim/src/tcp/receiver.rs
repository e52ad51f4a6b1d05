//! The receive half of an endpoint: in-order delivery, out-of-order ranges reported as SACK
//! blocks (RFC 2018), delayed ACKs (RFC 1122 4.2.3.2; an immediate ACK for out-of-order data,
//! RFC 5681 4.2, which Linux's receiver compresses after three) and the ECN echo (RFC 3168
//! 6.1.3, or DCTCP's RFC 8257 3.2).
//!
//! It writes no segments itself: every segment its endpoint sends goes through an [`Outbox`],
//! which fills in the acknowledgment; the receive half says when a pure ACK is owed.

use crate::net::{CE, CWR, ECE, MAX_SACK_BLOCKS};
use crate::tcp::idle::{Fields, Kind};
use crate::tcp::segment::Segment;
use crate::units::SimTime;

/// How ACKs echo CE marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EcnEcho {
    /// RFC 3168: from a CE mark until the sender's CWR.
    UntilCwr,
    /// DCTCP (RFC 8257 3.2): each ACK echoes the last data segment's mark exactly.
    EachMark,
}

/// The receive half.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Receiver {
    /// SACK is on: ACKs carry SACK blocks.
    sack: bool,
    /// Delayed-ACK timeout; 0 = off.
    delayed_ack: SimTime,
    /// How CE marks are echoed.
    echo: EcnEcho,
    /// Next byte expected.
    rcv_nxt: u64,
    /// Out-of-order ranges received, sorted, disjoint.
    ooo: Vec<(u64, u64)>,
    /// Start of the most recently received out-of-order segment (first SACK block).
    last_ooo: u64,
    /// In-order segments not yet acknowledged.
    pending_acks: u32,
    /// An ACK must go out now.
    ack_now: bool,
    /// When the delayed ACK is due, if one is pending.
    delack_at: Option<SimTime>,
    /// Whether ACKs carry ECE.
    ce_state: bool,
    /// Linux's quick-ACK mode is modelled.
    quickack: bool,
    /// ACKs still to send at once (`icsk_ack.quick`).
    quick: u32,
    /// Interactive ("ping-pong") mode: this end answers data with data, so quick ACKs are off.
    pingpong: bool,
    /// When in-order data last arrived (`icsk_ack.lrcvtime`).
    last_rcv: Option<SimTime>,
    /// Linux's estimate of the interval between arrivals (`icsk_ack.ato`), in ticks; 0
    /// before the first data. An idle gap restarts quick ACKs only if it is at least this
    /// long, and the delayed-ACK timer waits no longer.
    ato: u64,
    /// The delayed-ACK timer's longest wait (Linux's `tcp_delack_max`); the ping-pong test
    /// uses `ato` without it.
    delack_max: SimTime,
    /// Delayed-ACK timers fire on ticks of this (Linux: jiffies); 1 = exact.
    tick: SimTime,
    /// Linux's `icsk_ack.rcv_mss`: the largest segment seen, from `TCP_MSS_DEFAULT`.
    rcv_mss: u32,
    /// Linux's `ICSK_ACK_PUSHED` (1) and `ICSK_ACK_PUSHED2` (2): small segments since the
    /// last ACK.
    pushed: u8,
    /// Linux's SACK compression is modelled.
    sack_compression: bool,
    /// SACK compression (Linux's `tcp_comp_sack`): `rcv_nxt` when the duplicate ACKs below
    /// were counted (`compressed_ack_rcv_nxt`).
    comp_rcv_nxt: u64,
    /// Duplicate ACKs sent at once for the current `rcv_nxt` (`dup_ack_counter`).
    dup_acks: u8,
    /// SACKs held back since the last ACK (`compressed_ack`).
    compressed: u32,
    /// When the held-back SACK goes out (`compressed_ack_timer`), if armed.
    comp_at: Option<SimTime>,
    /// The connection's smoothed RTT when the last segment arrived (the hold's length).
    srtt: SimTime,
}

/// Quick ACKs granted at a connection's start, after a long idle gap or a loss
/// (`TCP_MAX_QUICKACKS`).
const MAX_QUICKACKS: u32 = 16;

/// Linux's `TCP_MSS_DEFAULT`: the receive MSS assumed until a larger segment arrives.
const MSS_DEFAULT: u32 = 536;

/// SACK compression (Linux 4.19 on, `__tcp_ack_snd_check`): with out-of-order data queued and
/// no quick ACK owed, the first `TCP_FASTRETRANS_THRESH` duplicate ACKs for an `rcv_nxt` go
/// out at once, the next up to `tcp_comp_sack_nr` (44) are held for a short timer.
const COMP_SACK_DUPACKS: u8 = 3;
const COMP_SACK_NR: u32 = 44;
/// `tcp_comp_sack_delay_ns` (1 ms) and `tcp_comp_sack_slack_ns` (100 µs).
const COMP_SACK_DELAY_MAX: SimTime = crate::units::PS_PER_MS;
const COMP_SACK_SLACK: SimTime = 100 * crate::units::PS_PER_US;

impl Receiver {
    /// Nothing owed to the peer and nothing out of order.
    pub(super) fn is_quiet(&self) -> bool {
        self.pending_acks == 0 && !self.ack_now && self.ooo.is_empty() && self.comp_at.is_none()
    }

    /// Visit the fields an idle receive half may hold differently from one as set up (see
    /// `idle.rs`): with nothing owed, no out-of-order data and no timer armed.
    pub(super) fn idle_fields(&mut self, f: &mut impl Fields) {
        f.num(Kind::Seq, &mut self.rcv_nxt);
        f.num(Kind::Seq, &mut self.last_ooo);
        f.num(Kind::Seq, &mut self.comp_rcv_nxt);
        f.opt(Kind::Time, &mut self.last_rcv);
        f.opt(Kind::Time, &mut self.delack_at);
        f.opt(Kind::Time, &mut self.comp_at);
        f.num(Kind::Rtt, &mut self.srtt);
        f.num(Kind::Rtt, &mut self.delack_max);
        f.num(Kind::Plain, &mut self.ato);
        for n in [
            &mut self.pending_acks,
            &mut self.quick,
            &mut self.rcv_mss,
            &mut self.compressed,
        ] {
            f.u32(n);
        }
        f.u8(&mut self.pushed);
        f.u8(&mut self.dup_acks);
        for b in [&mut self.ack_now, &mut self.ce_state, &mut self.pingpong] {
            f.flag(b);
        }
    }

    /// A receive half expecting byte 0.
    pub(super) fn new(sack: bool, delayed_ack: SimTime, echo: EcnEcho) -> Receiver {
        Receiver {
            sack,
            delayed_ack,
            echo,
            rcv_nxt: 0,
            ooo: Vec::new(),
            last_ooo: 0,
            pending_acks: 0,
            ack_now: false,
            delack_at: None,
            ce_state: false,
            quickack: false,
            quick: 0,
            pingpong: false,
            last_rcv: None,
            ato: 0,
            delack_max: SimTime::MAX,
            tick: 1,
            rcv_mss: MSS_DEFAULT,
            pushed: 0,
            sack_compression: false,
            comp_rcv_nxt: 0,
            dup_acks: 0,
            compressed: 0,
            comp_at: None,
            srtt: 0,
        }
    }

    /// Linux's delayed-ACK timer: never longer than `delack_max`
    /// ([`RttEstimator::delack_max`](crate::tcp::rtt::RttEstimator::delack_max)), armed in
    /// whole ticks of `tick`.
    pub(super) fn with_linux_delack(mut self, delack_max: SimTime, tick: SimTime) -> Receiver {
        self.delack_max = delack_max;
        self.tick = tick.max(1);
        self
    }

    /// Acknowledge as Linux does: every segment at once in quick-ACK mode.
    pub(super) fn with_quickack(mut self, on: bool) -> Receiver {
        self.quickack = on;
        self
    }

    /// Compress SACKs as Linux does (with the quick-ACK engine).
    pub(super) fn with_sack_compression(mut self, on: bool) -> Receiver {
        self.sack_compression = on;
        self
    }

    /// This end sends data at `now`: soon after receiving, it is in ping-pong mode
    /// (Linux's `tcp_event_data_sent`: within the arrival interval estimate `ato` of the last
    /// in-order arrival).
    #[inline]
    pub(super) fn data_sent(&mut self, now: SimTime) {
        if self.quickack {
            if let Some(t) = self.last_rcv {
                if now.saturating_sub(t) < self.ato * self.tick {
                    self.pingpong = true;
                }
            }
        }
    }

    /// Linux's `tcp_enter_quickack_mode`: ACK the next segments at once, leave ping-pong.
    fn enter_quickack(&mut self) {
        if self.quickack {
            self.quick = self.quick.max(MAX_QUICKACKS);
            self.pingpong = false;
            self.ato = self.ato_min();
        }
    }

    /// Linux's `TCP_ATO_MIN` in ticks: the delayed-ACK timeout (HZ/25, 40 ms).
    fn ato_min(&self) -> u64 {
        (self.delayed_ack / self.tick).max(1)
    }

    /// Linux's `tcp_event_data_recv` for in-order data at `now`, the connection's RTO being
    /// `rto` (whole ticks; Linux compares jiffies): quick ACKs for the first data, and after
    /// an idle gap longer than both the RTO and the arrival interval estimate `ato`; gaps
    /// shorter than that update the estimate.
    fn data_received(&mut self, now: SimTime, rto: SimTime) {
        let ato_min = self.ato_min();
        let rto_ticks = rto / self.tick;
        if self.ato == 0 {
            self.quick = self.quick.max(MAX_QUICKACKS);
            self.ato = ato_min;
        } else if let Some(t) = self.last_rcv {
            let gap = (now / self.tick).saturating_sub(t / self.tick);
            if gap <= ato_min / 2 {
                self.ato = self.ato / 2 + ato_min / 2;
            } else if gap < self.ato {
                self.ato = (self.ato / 2 + gap).min(rto_ticks.max(1));
            } else if gap > rto_ticks {
                // The sender may have restarted its window: ACK quickly.
                self.quick = self.quick.max(MAX_QUICKACKS);
            }
        }
        self.last_rcv = Some(now);
    }

    /// Bytes delivered in order so far (the next byte expected).
    #[inline]
    pub(super) fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// When the delayed-ACK timer is due, if armed.
    #[inline]
    pub(super) fn delack_at(&self) -> Option<SimTime> {
        match (self.delack_at, self.comp_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// An ACK is owed at once.
    #[inline]
    pub(super) fn ack_now(&self) -> bool {
        self.ack_now
    }

    /// Some received segment is not acknowledged yet.
    #[inline]
    pub(super) fn ack_pending(&self) -> bool {
        self.pending_acks > 0
    }

    /// The delayed-ACK timer fired (the caller then sends an ACK if one is pending).
    #[inline]
    pub(super) fn delack_fired(&mut self) {
        if self.comp_at.take().is_some() {
            // The compressed SACK's timer (always the earlier one): the delayed ACK stays.
            return;
        }
        self.delack_at = None;
        // Linux: a delayed ACK that had to fire ends ping-pong mode.
        if self.pingpong && self.pending_acks > 0 {
            self.pingpong = false;
        }
    }

    /// A data segment `[seq, seq + len)` with ECN bits `ecn` arrived at `now`, with the
    /// connection's RTO at `rto`: returns the bytes newly delivered in order.
    pub(super) fn on_data(
        &mut self,
        now: SimTime,
        seq: u64,
        len: u32,
        ecn: u8,
        rto: SimTime,
        srtt: SimTime,
    ) -> u64 {
        self.srtt = srtt;
        if self.quickack && seq <= self.rcv_nxt && seq + len as u64 > self.rcv_nxt {
            self.data_received(now, rto);
        }
        let ce = ecn & CE != 0;
        match self.echo {
            EcnEcho::UntilCwr => {
                // RFC 3168 6.1.3: echo from a CE mark until a CWR arrives (and again if the
                // CWR segment is itself marked).
                if ecn & CWR != 0 {
                    self.ce_state = false;
                }
                if ce {
                    self.ce_state = true;
                }
            }
            EcnEcho::EachMark => {
                if ce != self.ce_state {
                    // RFC 8257 3.2: acknowledge at once when the CE state changes, so the echo
                    // tracks the marks exactly even with delayed ACKs.
                    if self.pending_acks > 0 {
                        self.ack_now = true;
                    }
                    self.ce_state = ce;
                }
            }
        }
        self.receive(now, seq, len)
    }

    fn receive(&mut self, now: SimTime, seq: u64, len: u32) -> u64 {
        let end = seq + len as u64;
        if end <= self.rcv_nxt {
            self.ack_now = true; // a duplicate: tell the sender where we are
            self.enter_quickack();
            return 0;
        }
        let before = self.rcv_nxt;
        if seq <= self.rcv_nxt {
            let filled_hole = !self.ooo.is_empty();
            self.rcv_nxt = end;
            while let Some(&(s, e)) = self.ooo.first() {
                if s > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(e);
                self.ooo.remove(0);
            }
            if filled_hole {
                self.ack_now = true;
            } else {
                self.pending_acks += 1;
                let quick = self.quick > 0 && !self.pingpong;
                let pushed = self.quickack && self.read_pushed(len);
                if self.delayed_ack == 0 || self.pending_acks >= 2 || quick || pushed {
                    self.ack_now = true;
                } else if self.delack_at.is_none() {
                    // Linux's tcp_send_delayed_ack: at most the arrival interval estimate.
                    let ato = if self.quickack && self.ato > 0 {
                        (self.ato * self.tick).min(self.delayed_ack)
                    } else {
                        self.delayed_ack
                    };
                    let at = now + ato.min(self.delack_max);
                    self.delack_at = Some(at.div_ceil(self.tick).saturating_mul(self.tick));
                }
            }
        } else {
            self.insert_ooo(seq, end);
            self.last_ooo = seq;
            if self.compress_sack(now) {
                self.pending_acks += 1;
            } else {
                self.ack_now = true; // out of order: ACK at once (RFC 5681 4.2)
            }
        }
        self.rcv_nxt - before
    }

    /// Linux's SACK compression for an out-of-order segment arriving at `now`: whether its
    /// ACK is held back (the compressed-ACK timer armed) instead of sent at once.
    fn compress_sack(&mut self, now: SimTime) -> bool {
        if !self.sack_compression || !self.sack || (self.quick > 0 && !self.pingpong) {
            return false; // not Linux's receiver, or a quick ACK is owed
        }
        if self.compressed >= COMP_SACK_NR {
            return false;
        }
        if self.comp_rcv_nxt != self.rcv_nxt {
            self.comp_rcv_nxt = self.rcv_nxt;
            self.dup_acks = 0;
        }
        if self.dup_acks < COMP_SACK_DUPACKS {
            self.dup_acks += 1;
            return false;
        }
        self.compressed += 1;
        if self.comp_at.is_none() {
            // 5% of the SRTT, at most 1 ms, plus half the hrtimer's 100 µs slack.
            let hold = (self.srtt / 20).min(COMP_SACK_DELAY_MAX) + COMP_SACK_SLACK / 2;
            self.comp_at = Some(now + hold);
        }
        true
    }

    /// Linux's `tcp_measure_rcv_mss` and `tcp_cleanup_rbuf` for an in-order segment of
    /// `len` bytes that the application reads at once, emptying the receive queue: a segment
    /// smaller than the receive MSS (a response's tail or header) marks the ACK "pushed", and
    /// the read then sends it at once, unless this end is in ping-pong mode, where it takes
    /// two small segments. Without this a response's last segment waits out the delayed-ACK
    /// timer, and the sender's tail loss probe resends it for nothing.
    fn read_pushed(&mut self, len: u32) -> bool {
        if len >= self.rcv_mss {
            self.rcv_mss = len;
            return false;
        }
        self.pushed = if self.pushed > 0 { 2 } else { 1 };
        self.pushed == 2 || !self.pingpong
    }

    fn insert_ooo(&mut self, mut s: u64, mut e: u64) {
        let i = self.ooo.partition_point(|r| r.1 < s);
        let mut j = i;
        while j < self.ooo.len() && self.ooo[j].0 <= e {
            s = s.min(self.ooo[j].0);
            e = e.max(self.ooo[j].1);
            j += 1;
        }
        self.ooo.splice(i..j, [(s, e)]);
    }

    #[inline]
    fn sack_blocks(&self) -> (u8, [(u64, u64); MAX_SACK_BLOCKS]) {
        let mut blocks = [(0, 0); MAX_SACK_BLOCKS];
        if !self.sack || self.ooo.is_empty() {
            return (0, blocks);
        }
        // RFC 2018: the first block holds the most recently received segment.
        let first = self
            .ooo
            .iter()
            .position(|r| r.0 <= self.last_ooo && self.last_ooo < r.1)
            .unwrap_or(self.ooo.len() - 1);
        blocks[0] = self.ooo[first];
        let mut n = 1;
        for (i, r) in self.ooo.iter().enumerate().rev() {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            if i != first {
                blocks[n] = *r;
                n += 1;
            }
        }
        (n as u8, blocks)
    }

    /// Segments carrying this half's acknowledgment went out: nothing is owed any more.
    #[inline]
    pub(super) fn acknowledged(&mut self) {
        if self.quick > 0 && self.pending_acks > 0 {
            self.quick -= 1;
            if self.quick == 0 {
                // Leaving quick-ACK mode deflates the interval estimate.
                self.ato = self.ato_min();
            }
        }
        self.pending_acks = 0;
        self.ack_now = false;
        self.delack_at = None;
        self.pushed = 0;
        self.compressed = 0;
        self.comp_at = None;
    }
}

/// Where an endpoint puts the segments it sends: every segment carries an ACK (RFC 793), so
/// each gets the receive half's cumulative ACK, SACK blocks and ECE as it goes in.
pub(super) struct Outbox<'a> {
    /// The caller's segments.
    segs: &'a mut Vec<Segment>,
    /// Whose acknowledgment they carry.
    rx: &'a Receiver,
    /// Segments already in `segs` before this outbox.
    first: usize,
}

impl<'a> Outbox<'a> {
    /// Segments appended to `segs`, acknowledging what `rx` has received.
    #[inline]
    pub(super) fn new(segs: &'a mut Vec<Segment>, rx: &'a Receiver) -> Outbox<'a> {
        let first = segs.len();
        Outbox { segs, rx, first }
    }

    /// Put out `[seq, seq + len)` with the sender's ECN bits `ecn` (ECT, CWR).
    #[inline(always)]
    pub(super) fn push(&mut self, seq: u64, len: u32, ecn: u8) {
        let (nsack, sack) = self.rx.sack_blocks();
        self.segs.push(Segment {
            seq,
            len,
            ack: self.rx.rcv_nxt,
            nsack,
            sack,
            ecn: ecn | if self.rx.ce_state { ECE } else { 0 },
        });
    }

    /// Whether any segment went out.
    #[inline]
    pub(super) fn sent(&self) -> bool {
        self.segs.len() > self.first
    }
}

#[cfg(test)]
mod tests {
    use crate::config::CongestionControl;
    use crate::net::{CE, CWR, ECE, ECT};
    use crate::tcp::testing::*;
    use crate::tcp::{Endpoint, Incoming, RttEstimator, TcpParams};
    use crate::units::{from_ms, from_us, SimTime, PS_PER_S};

    /// The ECE bit of the ACK `r` sends for in-order segment `k` carrying ECN bits `ecn`.
    fn echo_of(r: &mut Endpoint, k: u64, ecn: u8) -> bool {
        let mut out = Vec::new();
        let data = Incoming {
            ecn,
            ..seg(k * MSS, MSS as u32, 0, &[])
        };
        r.on_segment(k, &data, &mut out);
        r.flush_ack(&mut out);
        assert_eq!(out.len(), 1, "an ACK for every segment");
        out[0].ecn & ECE != 0
    }

    #[test]
    fn classic_ecn_echoes_from_a_mark_until_the_senders_cwr() {
        let mut r = endpoint(TcpParams {
            ecn: true,
            ..params(true)
        });
        assert!(!echo_of(&mut r, 0, ECT));
        assert!(echo_of(&mut r, 1, ECT | CE));
        assert!(echo_of(&mut r, 2, ECT), "latched");
        assert!(!echo_of(&mut r, 3, ECT | CWR));
    }

    #[test]
    fn dctcp_echoes_each_mark_exactly() {
        let mut r = endpoint(TcpParams {
            ecn: true,
            congestion_control: CongestionControl::Dctcp,
            ..params(true)
        });
        assert!(echo_of(&mut r, 0, ECT | CE));
        assert!(!echo_of(&mut r, 1, ECT), "no latching");
        assert!(echo_of(&mut r, 2, ECT | CE));
    }

    #[test]
    fn delayed_ack_acknowledges_every_second_segment() {
        let mut r = endpoint(TcpParams {
            delayed_ack: from_ms(40),
            ..params(true)
        });
        let mut out = Vec::new();
        r.on_segment(0, &seg(0, MSS as u32, 0, &[]), &mut out);
        r.flush_ack(&mut out);
        assert!(out.is_empty());
        assert_eq!(r.poll_at().delayed_ack, Some(from_ms(40)));
        r.on_segment(1, &seg(MSS, MSS as u32, 0, &[]), &mut out);
        r.flush_ack(&mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].ack, 2 * MSS);
        assert_eq!(r.poll_at().delayed_ack, None);
    }

    /// A Linux receiver (quick-ACK mode, 40 ms delayed ACKs) on 4 ms ticks with `rto_min`,
    /// past its quick ACKs, having received and acknowledged `k` segments by `now`.
    fn linux_receiver(rto_min: SimTime) -> (Endpoint, u64, SimTime) {
        let p = TcpParams {
            delayed_ack: from_ms(40),
            quickack: true,
            sack_compression: true,
            ..params(true)
        };
        let rtt = RttEstimator::new(rto_min, 120 * PS_PER_S, PS_PER_S, from_us(1))
            .with_timer_granularity(from_ms(4));
        let mut r = Endpoint::new(p, rtt, Some(from_us(100)));
        let mut out = Vec::new();
        let mut k = 0;
        let mut now = 0;
        while k < 40 {
            now += from_us(10);
            r.on_segment(now, &seg(k * MSS, MSS as u32, 0, &[]), &mut out);
            r.flush_ack(&mut out);
            k += 1;
        }
        // Two at a time: the quick ACKs are spent, the pair is acknowledged.
        out.clear();
        now += from_us(10);
        r.on_segment(now, &seg(k * MSS, MSS as u32, 0, &[]), &mut out);
        r.flush_ack(&mut out);
        assert!(out.is_empty(), "quick ACKs spent");
        now += from_us(10);
        r.on_segment(now, &seg((k + 1) * MSS, MSS as u32, 0, &[]), &mut out);
        r.flush_ack(&mut out);
        assert_eq!(out.len(), 1);
        (r, k + 2, now)
    }

    #[test]
    fn linux_compresses_sacks_after_three_duplicate_acks() {
        let (mut r, k, now) = linux_receiver(from_ms(200));
        // Segment k is lost; k+1.. arrive out of order, 10 us apart.
        let mut acks = Vec::new();
        let mut t = now;
        for j in 1..=6u64 {
            t += from_us(10);
            let mut out = Vec::new();
            r.on_segment(t, &seg((k + j) * MSS, MSS as u32, 0, &[]), &mut out);
            r.flush_ack(&mut out);
            acks.push(out.len());
        }
        // Three duplicate ACKs at once (TCP_FASTRETRANS_THRESH), then held back.
        assert_eq!(acks, vec![1, 1, 1, 0, 0, 0]);
        // The held SACK leaves on its timer: 5% of the 100 us SRTT plus half the slack,
        // armed by the first held segment.
        let first_held = now + from_us(40);
        let due = r.poll_at().delayed_ack.unwrap();
        assert_eq!(due, first_held + from_us(5) + from_us(50));
        let mut out = Vec::new();
        r.on_delack(&mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].ack, k * MSS);
        assert_eq!(out[0].sack[0], ((k + 1) * MSS, (k + 7) * MSS));
        assert_eq!(r.poll_at().delayed_ack, None);
    }

    /// The next in-order segment arrives at `t`: whether it was acknowledged at once (if not,
    /// the delayed ACK is sent so that the next starts clean).
    fn acked_at_once(r: &mut Endpoint, k: &mut u64, t: SimTime) -> bool {
        let mut out = Vec::new();
        r.on_segment(t, &seg(*k * MSS, MSS as u32, 0, &[]), &mut out);
        r.flush_ack(&mut out);
        *k += 1;
        if out.is_empty() {
            // The delayed ACK goes out, so the next segment starts clean.
            r.on_delack(&mut out);
            assert_eq!(out.len(), 1);
            return false;
        }
        true
    }

    #[test]
    fn linux_quick_acks_after_a_gap_longer_than_the_rto_and_the_arrival_interval() {
        // The receiver's own RTO is RTOmin, 1 ms rounded to one 4 ms jiffy; its arrival
        // interval estimate (ato) is 10 jiffies after back-to-back data.
        let (mut r, mut k, now) = linux_receiver(from_ms(1));
        assert_eq!(r.tx.rtt.rto(0), from_ms(4));
        assert!(now < from_ms(4), "the last segment arrived in tick 0");
        let jiffy = from_ms(4);
        // Two jiffies later (more than the RTO's one), but no more than half of 40 ms:
        // Linux's tcp_event_data_recv only updates ato; no quick ACK.
        assert!(!acked_at_once(&mut r, &mut k, 2 * jiffy + from_us(100)));
        // Eleven jiffies on: at least ato (10) and more than the RTO: quick-ACK mode.
        assert!(acked_at_once(&mut r, &mut k, 13 * jiffy + from_us(100)));
        assert_eq!(r.rx.ato, 10);
        // A gap of 6 jiffies (more than half of 40 ms, less than ato) shrinks ato to the RTO
        // (one jiffy)...
        let mut t = 13 * jiffy;
        for _ in 0..20 {
            t += from_us(10);
            acked_at_once(&mut r, &mut k, t); // spends the quick ACKs
        }
        assert_eq!(r.rx.ato, 10);
        assert!(!acked_at_once(&mut r, &mut k, 19 * jiffy + from_us(100)));
        assert_eq!(r.rx.ato, 1);
        // Data sent 5 ms after that arrival is no answer within ato: not ping-pong mode.
        r.rx.data_sent(19 * jiffy + from_us(5100));
        assert!(!r.rx.pingpong);
        // ...one of 2 jiffies grows it to 0 + 5, and then 6 jiffies is long enough.
        assert!(!acked_at_once(&mut r, &mut k, 21 * jiffy + from_us(100)));
        assert_eq!(r.rx.ato, 5);
        assert!(acked_at_once(&mut r, &mut k, 27 * jiffy + from_us(100)));
    }

    #[test]
    fn linux_holds_an_ack_no_longer_than_rto_min_less_a_tick_on_whole_ticks() {
        // Within the receiver's RTO of the last arrival: no new quick ACKs.
        let t = from_ms(3) + 7;
        // RTOmin 200 ms: the 40 ms default, fired on the tick after it.
        let (mut r, k, _) = linux_receiver(from_ms(200));
        let mut out = Vec::new();
        r.on_segment(t, &seg(k * MSS, MSS as u32, 0, &[]), &mut out);
        r.flush_ack(&mut out);
        assert!(out.is_empty());
        assert_eq!(r.poll_at().delayed_ack, Some(from_ms(44)));
        // RTOmin 1 ms is one 4 ms tick: the ACK waits at most one tick (tcp_delack_max).
        let (mut r, k, _) = linux_receiver(from_ms(1));
        r.on_segment(t, &seg(k * MSS, MSS as u32, 0, &[]), &mut out);
        r.flush_ack(&mut out);
        assert!(out.is_empty());
        assert_eq!(r.poll_at().delayed_ack, Some(from_ms(8)));
    }

    #[test]
    fn linux_acknowledges_a_small_segment_the_application_reads_at_once() {
        let (mut r, k, now) = linux_receiver(from_ms(200));
        let mut out = Vec::new();
        // A response's 300-byte tail: pushed, read, acknowledged at once.
        r.on_segment(now + from_ms(1), &seg(k * MSS, 300, 0, &[]), &mut out);
        r.flush_ack(&mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].ack, k * MSS + 300);
        assert_eq!(r.poll_at().delayed_ack, None);
    }

    #[test]
    fn linux_in_ping_pong_mode_needs_two_small_segments_to_ack_at_once() {
        let (mut r, k, now) = linux_receiver(from_ms(200));
        let mut out = Vec::new();
        // Answering within the ACK timeout of the last arrival: ping-pong mode.
        r.write(now + from_us(10), 100, &mut out);
        out.clear();
        let start = k * MSS;
        r.on_segment(now + from_ms(1), &seg(start, 300, 100, &[]), &mut out);
        r.flush_ack(&mut out);
        assert!(out.is_empty(), "one small segment waits in ping-pong mode");
        assert!(r.poll_at().delayed_ack.is_some());
        r.on_segment(now + from_ms(2), &seg(start + 300, 300, 100, &[]), &mut out);
        r.flush_ack(&mut out);
        assert_eq!(out.len(), 1, "the second one is acknowledged at once");
        assert_eq!(out[0].ack, start + 600);
    }

    #[test]
    fn out_of_order_segment_is_acked_at_once_with_its_sack_block_first() {
        let mut r = endpoint(params(true));
        let mut out = Vec::new();
        r.on_segment(0, &seg(2 * MSS, MSS as u32, 0, &[]), &mut out);
        r.on_segment(0, &seg(4 * MSS, MSS as u32, 0, &[]), &mut out);
        r.flush_ack(&mut out);
        let last = out.last().unwrap();
        assert_eq!(last.ack, 0);
        assert_eq!(last.nsack, 2);
        assert_eq!(last.sack[0], (4 * MSS, 5 * MSS));
        assert_eq!(last.sack[1], (2 * MSS, 3 * MSS));
        // Filling the hole delivers everything contiguous.
        let got = r.on_segment(0, &seg(0, 2 * MSS as u32, 0, &[]), &mut out);
        assert_eq!(got, 3 * MSS);
    }
}
