//! The requester side of one RoCE queue pair (the sender NIC's view of it): the messages
//! posted to it as one packet-sequence-number space, a rate limiter at the congestion
//! control's rate, a window (`roce.window`, HPCC's), loss recovery by go-back-N or by IRN's
//! selective repeat, and the retransmission timer.
//!
//! It never touches the clock or the network. The NIC asks [`Sender::ready`] whether the queue
//! pair may send and when, takes the packet with [`Sender::next_packet`], and reports what it
//! put on the wire with [`Sender::on_sent`]; ACKs, NAKs and CNPs come in through their calls;
//! [`Sender::next_deadline`] is the earliest of its timers (the retransmission timer, DCQCN's),
//! [`Sender::on_timer`] fires those due.

use super::cc::Cc;
use crate::config::RoceRecovery;
use crate::net::int::IntHop;
use crate::units::{tx_time, SimTime};

/// Whether a queue pair may send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ready {
    /// A packet may go now.
    Now,
    /// A packet waits for the rate limiter until then.
    At(SimTime),
    /// Nothing to send until an ACK, a NAK, a timeout or a new message.
    Idle,
}

/// The retransmission timeouts (`roce.rto`, IRN's `rto_low`/`rto_high`/`rto_low_packets`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    pub(crate) rto: SimTime,
    pub(crate) low: SimTime,
    pub(crate) high: SimTime,
    pub(crate) low_packets: u32,
}

/// Selective repeat's record of the packets the receiver SACKed, as a ring over the PSNs
/// from the oldest unacknowledged one: the receiver holds out-of-order packets only up to
/// `roce.sack_bitmap` past the PSN it expects (IRN's BDP-sized bitmap), so a SACK further out
/// cannot come and the sender needs no more bits than that, whatever the queue pair has posted.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sacks {
    bits: Vec<u64>,
    /// PSNs the ring covers from its base (a multiple of 64).
    reach: u32,
}

impl Sacks {
    /// A ring for `reach` packets (rounded up to whole words), all clear.
    pub(crate) fn new(reach: u32) -> Sacks {
        let words = reach.div_ceil(64).max(1);
        Sacks {
            bits: vec![0; words as usize],
            reach: words * 64,
        }
    }
    /// Whether `psn` was SACKed, with `una` the oldest unacknowledged PSN: a PSN the ring
    /// does not reach was not.
    #[inline]
    pub(crate) fn get(&self, una: u32, psn: u32) -> bool {
        psn >= una && psn - una < self.reach && {
            let i = psn % self.reach;
            self.bits[(i / 64) as usize] >> (i % 64) & 1 == 1
        }
    }
    /// Record a SACK of `psn` (ignored outside the ring's reach from `una`).
    #[inline]
    pub(crate) fn set(&mut self, una: u32, psn: u32) {
        if psn >= una && psn - una < self.reach {
            let i = psn % self.reach;
            self.bits[(i / 64) as usize] |= 1 << (i % 64);
        }
    }
    /// The oldest unacknowledged PSN moved from `from` to `to`: clear the slots it passed,
    /// which the ring reuses for the PSNs `reach` further on.
    pub(crate) fn advance(&mut self, from: u32, to: u32) {
        if to - from >= self.reach {
            self.bits.fill(0);
            return;
        }
        for psn in from..to {
            let i = psn % self.reach;
            self.bits[(i / 64) as usize] &= !(1 << (i % 64));
        }
    }
}

/// A sender's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Counts {
    pub(crate) retx: u32,
    pub(crate) retx_timeout: u32,
    pub(crate) timeouts: u32,
    pub(crate) naks: u32,
    pub(crate) cnps: u32,
    /// CNPs that found nothing left to send: their rate cut paced no packet.
    pub(crate) cnps_idle: u32,
}

/// One queue pair's sending end.
#[derive(Debug, Clone)]
pub(crate) struct Sender {
    /// Payload bytes of a full packet.
    mtu: u32,
    /// PSNs posted so far (every message's packets, one after another).
    end: u32,
    /// The last PSN of each message and its payload bytes, in order; how many messages are
    /// acknowledged whole (an RDMA write completes at its requester when its ACK arrives).
    lasts: Vec<(u32, u32)>,
    msgs_acked: u32,
    /// The oldest PSN not yet acknowledged.
    una: u32,
    /// The next PSN to send (go-back-N rewinds it); never past `end`.
    nxt: u32,
    /// One past the highest PSN ever sent.
    high: u32,
    recovery: RoceRecovery,
    /// Selective repeat: PSNs the receiver holds (SACKed), and the highest SACKed + 1.
    sacked: Sacks,
    sack_high: u32,
    /// Selective repeat: in loss recovery until `una` reaches `recover`; the next hole to
    /// look at from `cursor`.
    in_recovery: bool,
    recover: u32,
    cursor: u32,
    /// Go-back-N: the PSN it last rewound to on a NAK.
    rewound: Option<u32>,
    /// The rate limiter: the next packet may start then, one gap after the last packet
    /// started, the gap that packet's `last_wire` bytes take at the rate now
    /// ([`Sender::retime`]).
    next_tx: SimTime,
    last_start: SimTime,
    last_wire: u64,
    /// `roce.window` (0: none).
    window: u64,
    /// `roce.window_whole_packets`: a new packet must fit whole in the window.
    whole: bool,
    pub(crate) cc: Cc,
    timeouts: Timeouts,
    /// When the retransmission timer was (re)started, if it runs: it expires [`Sender::rto`]
    /// later, a timeout that depends on what is in flight now (IRN's RTO_low/RTO_high).
    armed: Option<SimTime>,
    /// Packets below this PSN resent count as resent after a timeout.
    timeout_until: u32,
    /// Counters: packets resent (in all, after a timeout), timer expiries, NAKs and CNPs
    /// received.
    retx: u32,
    retx_timeout: u32,
    expiries: u32,
    naks: u32,
    cnps: u32,
    cnps_idle: u32,
}

impl Sender {
    /// An empty queue pair of `mtu`-byte packets.
    pub(crate) fn new(
        mtu: u32,
        recovery: RoceRecovery,
        window: u64,
        timeouts: Timeouts,
        cc: Cc,
    ) -> Sender {
        Sender {
            mtu,
            end: 0,
            lasts: Vec::new(),
            msgs_acked: 0,
            una: 0,
            nxt: 0,
            high: 0,
            recovery,
            sacked: Sacks::default(),
            sack_high: 0,
            in_recovery: false,
            recover: 0,
            cursor: 0,
            rewound: None,
            next_tx: 0,
            last_start: 0,
            last_wire: 0,
            window,
            whole: false,
            cc,
            timeouts,
            armed: None,
            timeout_until: 0,
            retx: 0,
            retx_timeout: 0,
            expiries: 0,
            naks: 0,
            cnps: 0,
            cnps_idle: 0,
        }
    }

    /// Post a message of `bytes` (at least one packet): its PSNs follow the last message's.
    /// Returns one past its last PSN.
    pub(crate) fn post(&mut self, bytes: u64) -> u32 {
        let mtu = u64::from(self.mtu);
        let packets = bytes.div_ceil(mtu).max(1) as u32;
        let last = (bytes - (u64::from(packets) - 1) * mtu).max(1) as u32;
        self.end += packets;
        self.lasts.push((self.end - 1, last));
        self.end
    }

    /// Payload bytes of packet `psn`.
    pub(crate) fn payload(&self, psn: u32) -> u32 {
        match self.lasts.binary_search_by_key(&psn, |&(p, _)| p) {
            Ok(i) => self.lasts[i].1,
            Err(_) => self.mtu,
        }
    }

    /// Messages acknowledged whole, in the order posted.
    pub(crate) fn msgs_acked(&self) -> u32 {
        self.msgs_acked
    }

    /// Whether every posted packet is acknowledged.
    pub(crate) fn done(&self) -> bool {
        self.una == self.end
    }

    /// Selective repeat's SACK record reaches `packets` past the oldest unacknowledged PSN
    /// (`roce.sack_bitmap`, the receiver's reach).
    pub(crate) fn sack_reach(mut self, packets: u32) -> Sender {
        self.sacked = Sacks::new(packets);
        self
    }

    /// With `whole`, a new packet goes only if it fits whole in the window
    /// (`roce.window_whole_packets`, as htsim's HPCC) instead of while fewer bytes than the
    /// window are in flight.
    pub(crate) fn whole_packets(mut self, whole: bool) -> Sender {
        self.whole = whole;
        self
    }

    /// The bytes the window lets be unacknowledged: `roce.window` and the congestion
    /// control's, the smaller.
    fn window_bytes(&self) -> u64 {
        let own = if self.window == 0 {
            u64::MAX
        } else {
            self.window
        };
        own.min(self.cc.window_bytes().unwrap_or(u64::MAX))
    }

    /// The packet to send next, if any (ignoring the rate limiter): a hole to repair
    /// (selective repeat), or the next in sequence if the window allows a new one.
    fn candidate(&self) -> Option<u32> {
        if self.in_recovery {
            let mut p = self.cursor.max(self.una);
            while p < self.sack_high.min(self.recover) {
                if !self.sacked.get(self.una, p) {
                    return Some(p);
                }
                p += 1;
            }
        }
        if self.nxt >= self.end {
            return None;
        }
        // Resent packets (below `high`) go whatever the window; a new one only within it, or
        // alone (HPCC's window may fall below a packet: one still goes, as its ns-3 does).
        let outstanding = u64::from(self.nxt - self.una) * u64::from(self.mtu);
        let counted = outstanding + if self.whole { u64::from(self.mtu) } else { 1 };
        let room = outstanding == 0 || counted <= self.window_bytes();
        (self.nxt < self.high || room).then_some(self.nxt)
    }

    /// Whether the queue pair may send at `now`, or when.
    pub(crate) fn ready(&self, now: SimTime) -> Ready {
        match self.candidate() {
            None => Ready::Idle,
            Some(_) if self.next_tx <= now => Ready::Now,
            Some(_) => Ready::At(self.next_tx),
        }
    }

    /// Take the packet to send now: its PSN and whether it is a retransmission. The caller
    /// checked [`Sender::ready`].
    pub(crate) fn next_packet(&mut self) -> Option<(u32, bool)> {
        let p = self.candidate()?;
        if self.in_recovery && p < self.nxt {
            self.cursor = p + 1;
        } else {
            self.nxt = p + 1;
        }
        let retx = p < self.high;
        self.high = self.high.max(p + 1);
        self.retx += u32::from(retx);
        self.retx_timeout += u32::from(retx && p < self.timeout_until);
        Some((p, retx))
    }

    /// The NIC put a packet of `wire` bytes (frame, preamble and gap) on the wire at `now`:
    /// the rate limiter spaces the next one, the timer runs.
    pub(crate) fn on_sent(&mut self, now: SimTime, wire: u64) {
        (self.last_start, self.last_wire) = (now, wire);
        self.cc.on_sent(now, wire);
        self.retime();
        if self.armed.is_none() {
            self.armed = Some(now);
        }
    }

    /// Space the next packet from the last one at the rate the control allows now: a rate
    /// change applies to the gap already running, as a NIC's rate limiter re-times its
    /// pending packet (HPCC's ns-3 moves the next send time by the difference of the last
    /// packet's gaps at the new and old rates). Without it a cut would wait for the gap its
    /// old rate set, and a 60:1 incast's senders, whose gaps are longer than the RTT, would
    /// answer every ACK a round trip late.
    fn retime(&mut self) {
        self.next_tx = self.last_start + tx_time(self.last_wire, self.cc.rate_bps());
    }

    /// The timeout for what is in flight now: `roce.rto` for go-back-N; IRN's RTO_low with
    /// fewer than `rto_low_packets` in flight, else RTO_high.
    fn rto(&self) -> SimTime {
        let t = &self.timeouts;
        match self.recovery {
            RoceRecovery::GoBackN => t.rto,
            RoceRecovery::SelectiveRepeat if self.high - self.una < t.low_packets => t.low,
            RoceRecovery::SelectiveRepeat => t.high,
        }
    }

    /// When the retransmission timer expires, if it runs (a timeout of 0 is none).
    fn rto_at(&self) -> Option<SimTime> {
        let rto = self.rto();
        self.armed.filter(|_| rto > 0).map(|t| t + rto)
    }

    /// Everything below `psn` is acknowledged (an ACK's, or a NAK's implied, cumulative PSN).
    fn acked_to(&mut self, now: SimTime, psn: u32) -> bool {
        let psn = psn.min(self.high);
        if psn <= self.una {
            return false;
        }
        self.sacked.advance(self.una, psn);
        self.una = psn;
        self.nxt = self.nxt.max(psn);
        while self
            .lasts
            .get(self.msgs_acked as usize)
            .is_some_and(|&(last, _)| last < psn)
        {
            self.msgs_acked += 1;
        }
        if self.in_recovery && self.una >= self.recover {
            self.in_recovery = false;
        }
        // Progress restarts the timer; nothing left in flight stops it.
        self.armed = (self.una < self.high).then_some(now);
        true
    }

    /// An ACK: every PSN below `psn` arrived; `int` is the telemetry it echoes (HPCC).
    pub(crate) fn on_ack(&mut self, now: SimTime, psn: u32, int: &[IntHop]) {
        self.acked_to(now, psn);
        let mtu = u64::from(self.mtu);
        let (acked, sent) = (u64::from(self.una) * mtu, u64::from(self.high) * mtu);
        self.cc.on_ack(now, acked, sent, int);
        self.retime();
    }

    /// A NAK: the receiver expects `psn`, and (selective repeat) holds `sack`.
    pub(crate) fn on_nak(&mut self, now: SimTime, psn: u32, sack: u32) {
        self.naks += 1;
        self.acked_to(now, psn);
        match self.recovery {
            // Rewind, as RoCE NICs do: resend everything from the PSN the receiver expects;
            // once per PSN (with a NAK per out-of-order packet, the others name it again).
            RoceRecovery::GoBackN => {
                if psn >= self.una && self.rewound != Some(psn) {
                    self.nxt = self.nxt.min(psn);
                    self.rewound = Some(psn);
                }
            }
            RoceRecovery::SelectiveRepeat => {
                if sack < self.end {
                    self.sacked.set(self.una, sack);
                    self.sack_high = self.sack_high.max(sack + 1);
                }
                if !self.in_recovery {
                    self.in_recovery = true;
                    self.recover = self.high;
                    self.cursor = self.una;
                }
            }
        }
    }

    /// A CNP (DCQCN's congestion notification).
    pub(crate) fn on_cnp(&mut self, now: SimTime) {
        self.cnps += 1;
        // A sender whose data all left (an incast's short flow at line rate leaves before a
        // round trip) has nothing for the cut rate to pace, unless a retransmission follows.
        self.cnps_idle += u32::from(self.candidate().is_none());
        self.cc.on_cnp(now);
        self.retime();
    }

    /// The earliest of the retransmission timer and the congestion control's timers.
    pub(crate) fn next_deadline(&self) -> Option<SimTime> {
        match (self.rto_at(), self.cc.next_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Fire the timers due at `now`. The retransmission timer resends from the oldest
    /// unacknowledged packet: go-back-N rewinds to it; selective repeat takes every packet
    /// in flight and not SACKed as lost.
    pub(crate) fn on_timer(&mut self, now: SimTime) {
        if self.cc.next_deadline().is_some_and(|t| t <= now) {
            self.cc.on_deadline(now);
            self.retime();
        }
        if self.rto_at().is_none_or(|t| t > now) {
            return;
        }
        self.armed = None;
        if self.una >= self.high {
            return;
        }
        self.expiries += 1;
        self.timeout_until = self.high;
        match self.recovery {
            RoceRecovery::GoBackN => {
                self.nxt = self.una;
                self.rewound = None;
            }
            RoceRecovery::SelectiveRepeat => {
                self.in_recovery = true;
                self.recover = self.high;
                self.sack_high = self.high;
                self.cursor = self.una;
            }
        }
        // Resending rearms the timer when the first packet goes; it goes now.
        self.last_wire = 0;
        self.next_tx = self.next_tx.min(now);
    }

    /// Packets resent (in all, after a timeout), timer expiries that resent, NAKs and CNPs
    /// received.
    pub(crate) fn counts(&self) -> Counts {
        Counts {
            retx: self.retx,
            retx_timeout: self.retx_timeout,
            timeouts: self.expiries,
            naks: self.naks,
            cnps: self.cnps,
            cnps_idle: self.cnps_idle,
        }
    }

    /// The oldest unacknowledged PSN, and one past the highest sent.
    pub(crate) fn una_high(&self) -> (u32, u32) {
        (self.una, self.high)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RTO: SimTime = 1_000_000;
    const T: Timeouts = Timeouts {
        rto: RTO,
        low: 100,
        high: 320,
        low_packets: 3,
    };

    fn sender(recovery: RoceRecovery, packets: u64) -> Sender {
        let mut s = Sender::new(
            1000,
            recovery,
            0,
            T,
            Cc::None {
                rate: 8_000_000_000,
            },
        )
        .sack_reach(128);
        s.post(packets * 1000);
        s
    }

    #[test]
    fn the_sack_ring_reaches_its_size_past_the_oldest_unacknowledged_psn_and_is_reused() {
        let mut r = Sacks::new(128);
        r.set(0, 127); // una + reach - 1: kept
        r.set(0, 128); // una + reach: beyond what the receiver can hold, ignored
        assert!(r.get(0, 127) && !r.get(0, 128));
        // The slot of PSN 0 serves PSN 128 once 0 is acknowledged; a stale bit does not leak.
        r.set(0, 0);
        assert!(r.get(0, 0));
        r.advance(0, 1);
        assert!(
            !r.get(1, 128),
            "PSN 0's cleared slot must not read as PSN 128's SACK"
        );
        r.set(1, 128);
        assert!(r.get(1, 128) && r.get(1, 127) && !r.get(1, 0));
        // A jump past the whole ring clears it.
        r.advance(1, 1000);
        assert!((1000..1128).all(|p| !r.get(1000, p)));
        // Memory is the reach, not the queue pair's posted packets.
        let mut s = sender(RoceRecovery::SelectiveRepeat, 1_000_000);
        s.post(1_000_000_000);
        assert_eq!(s.sacked.bits.len(), 2);
    }

    /// Send every packet the sender lets go at `now` (ignoring the limiter), returning them.
    fn send_all(s: &mut Sender, now: SimTime, max: usize) -> Vec<u32> {
        let mut out = Vec::new();
        while out.len() < max {
            let Some((p, _)) = s.next_packet() else { break };
            s.on_sent(now, 1000);
            out.push(p);
        }
        out
    }

    #[test]
    fn messages_share_one_psn_space_and_the_last_packet_carries_the_rest() {
        let mut s = Sender::new(1000, RoceRecovery::GoBackN, 0, T, Cc::None { rate: 1 });
        assert_eq!(s.post(2500), 3);
        assert_eq!(s.post(10), 4);
        assert_eq!(
            (0..4).map(|p| s.payload(p)).collect::<Vec<_>>(),
            [1000, 1000, 500, 10]
        );
    }

    #[test]
    fn the_rate_limiter_spaces_packets_at_the_rate() {
        let mut s = sender(RoceRecovery::GoBackN, 3);
        assert_eq!(s.ready(0), Ready::Now);
        s.next_packet();
        // 1000 bytes at 8 Gbps: 1 µs.
        s.on_sent(0, 1000);
        assert_eq!(s.ready(999_999), Ready::At(1_000_000));
        assert_eq!(s.ready(1_000_000), Ready::Now);
    }

    #[test]
    fn a_cnp_after_the_last_packet_left_is_counted_idle() {
        use crate::roce::dcqcn::Dcqcn;
        let cc = Cc::Dcqcn(Dcqcn::new(&crate::config::Dcqcn::default(), 8_000_000_000));
        let mut s = Sender::new(1000, RoceRecovery::GoBackN, 0, T, cc);
        s.post(2000);
        s.next_packet();
        s.on_sent(0, 1000);
        // One packet still to send: the cut paces it.
        s.on_cnp(500_000);
        assert_eq!((s.counts().cnps, s.counts().cnps_idle), (1, 0));
        s.next_packet();
        s.on_sent(2_000_000, 1000);
        // Both on the wire, none to resend: the cut paces nothing.
        s.on_cnp(2_500_000);
        assert_eq!((s.counts().cnps, s.counts().cnps_idle), (2, 1));
    }

    #[test]
    fn a_rate_change_re_times_the_gap_already_running() {
        use crate::roce::dcqcn::Dcqcn;
        let line = 8_000_000_000;
        let cc = Cc::Dcqcn(Dcqcn::new(&crate::config::Dcqcn::default(), line));
        // No retransmission timer: the only timer is DCQCN's.
        let t = Timeouts { rto: 0, ..T };
        let mut s = Sender::new(1000, RoceRecovery::GoBackN, 0, t, cc);
        s.post(10_000_000);
        s.next_packet();
        s.on_sent(0, 1000);
        assert_eq!(s.ready(0), Ready::At(1_000_000));
        // A CNP halves the rate (α starts at 1) before the gap ends: the packet waits the gap
        // its 1000 bytes take at 4 Gbps, 2 µs from when the last one started, not 1 µs.
        s.on_cnp(500_000);
        assert_eq!(s.ready(1_999_999), Ready::At(2_000_000));
        assert_eq!(s.ready(2_000_000), Ready::Now);
        // A big packet's gap is still running when the rate timer raises the rate (R_C ← (R_T
        // + R_C)/2 = 6 Gbps): the gap shortens to what it takes at 6 Gbps.
        s.next_packet();
        s.on_sent(2_000_000, 100_000);
        assert_eq!(
            s.ready(2_000_000),
            Ready::At(2_000_000 + tx_time(100_000, line / 2))
        );
        let step = s.next_deadline().unwrap();
        assert_eq!(step, 500_000 + crate::config::Dcqcn::default().rate_timer);
        s.on_timer(step);
        assert_eq!(s.cc.rate_bps(), line / 4 * 3);
        let at = 2_000_000 + tx_time(100_000, line / 4 * 3);
        assert_eq!(s.ready(at - 1), Ready::At(at));
        assert_eq!(s.ready(at), Ready::Now);
    }

    #[test]
    fn go_back_n_rewinds_to_the_naks_psn_and_resends_from_there() {
        let mut s = sender(RoceRecovery::GoBackN, 6);
        assert_eq!(send_all(&mut s, 0, 5), [0, 1, 2, 3, 4]);
        s.on_nak(10, 2, 0);
        assert_eq!(s.una_high(), (2, 5));
        let again: Vec<_> = std::iter::from_fn(|| s.next_packet()).collect();
        assert_eq!(again, [(2, true), (3, true), (4, true), (5, false)]);
        let c = s.counts();
        assert_eq!((c.retx, c.retx_timeout, c.timeouts, c.naks), (3, 0, 0, 1));
    }

    #[test]
    fn selective_repeat_resends_only_the_holes_below_the_highest_sack() {
        let mut s = sender(RoceRecovery::SelectiveRepeat, 8);
        assert_eq!(send_all(&mut s, 0, 6), [0, 1, 2, 3, 4, 5]);
        // 1 and 3 lost: the receiver got 0 (cumulative 1), then SACKs 2, 4, 5.
        s.on_nak(10, 1, 2);
        s.on_nak(11, 1, 4);
        s.on_nak(12, 1, 5);
        let again: Vec<_> = std::iter::from_fn(|| s.next_packet()).collect();
        assert_eq!(again, [(1, true), (3, true), (6, false), (7, false)]);
        // The cumulative ACK past the recovery point ends recovery.
        assert_eq!(s.msgs_acked(), 0);
        s.on_ack(20, 8, &[]);
        assert!(s.done() && !s.in_recovery);
        assert_eq!(s.msgs_acked(), 1);
    }

    #[test]
    fn a_whole_packet_window_lets_a_packet_go_only_if_it_fits() {
        // A window of 2500 B: two 1000 B packets in flight leave 500 B, less than a packet.
        let below = |whole: bool| {
            let mut s = Sender::new(1000, RoceRecovery::GoBackN, 2500, T, Cc::None { rate: 1 });
            s = s.whole_packets(whole);
            s.post(5000);
            send_all(&mut s, 0, 9)
        };
        assert_eq!(below(false), [0, 1, 2]);
        assert_eq!(below(true), [0, 1]);
        // At the edge: 2000 B in flight and a 3000 B window fit the third packet exactly.
        let mut s = Sender::new(1000, RoceRecovery::GoBackN, 3000, T, Cc::None { rate: 1 });
        s = s.whole_packets(true);
        s.post(5000);
        assert_eq!(send_all(&mut s, 0, 9), [0, 1, 2]);
    }

    #[test]
    fn the_window_holds_new_packets_but_not_resent_ones() {
        let mut s = Sender::new(1000, RoceRecovery::GoBackN, 2000, T, Cc::None { rate: 1 });
        s.post(5000);
        assert_eq!(send_all(&mut s, 0, 9), [0, 1]);
        assert_eq!(s.ready(u64::MAX), Ready::Idle);
        s.on_ack(5, 1, &[]);
        assert_eq!(send_all(&mut s, 5, 9), [2]);
        s.on_nak(6, 1, 0);
        assert_eq!(send_all(&mut s, 6, 9), [1, 2]);
    }

    #[test]
    fn the_timer_fires_at_its_deadline_not_before_and_rewinds_to_the_oldest() {
        let mut s = sender(RoceRecovery::GoBackN, 4);
        send_all(&mut s, 0, 3);
        assert_eq!(s.next_deadline(), Some(RTO));
        s.on_ack(50, 1, &[]);
        // Progress restarts it.
        let deadline = 50 + RTO;
        assert_eq!(s.next_deadline(), Some(deadline));
        s.on_timer(deadline - 1);
        assert_eq!(s.counts().timeouts, 0);
        assert_eq!(s.una_high(), (1, 3));
        s.on_timer(deadline);
        assert_eq!(s.counts().timeouts, 1);
        assert_eq!(s.next_packet(), Some((1, true)));
        assert_eq!(s.counts().retx_timeout, 1);
        // All acknowledged: the timer stops.
        s.on_ack(deadline + 5, 4, &[]);
        assert_eq!(s.next_deadline(), None);
    }

    #[test]
    fn a_timeout_of_zero_runs_no_timer() {
        let mut s = Sender::new(
            1000,
            RoceRecovery::GoBackN,
            0,
            Timeouts { rto: 0, ..T },
            Cc::None { rate: 1 },
        );
        s.post(3000);
        send_all(&mut s, 0, 3);
        assert_eq!(s.next_deadline(), None);
        s.on_timer(u64::MAX);
        assert_eq!(s.counts().timeouts, 0);
    }

    #[test]
    fn selective_repeat_times_out_after_rto_low_with_few_packets_in_flight() {
        let mut s = sender(RoceRecovery::SelectiveRepeat, 10);
        send_all(&mut s, 0, 2);
        assert_eq!(s.next_deadline(), Some(100));
        s.on_timer(99);
        assert_eq!(s.counts().timeouts, 0);
        s.on_timer(100);
        assert_eq!(s.counts().timeouts, 1);
        assert_eq!(send_all(&mut s, 100, 2), [0, 1]);
        // With three or more in flight, RTO_high.
        let mut s = sender(RoceRecovery::SelectiveRepeat, 10);
        send_all(&mut s, 0, 2);
        assert_eq!(s.next_deadline(), Some(100));
        send_all(&mut s, 5, 1);
        assert_eq!(s.next_deadline(), Some(320));
    }
}
