//! The sending end of one Homa message (clock-free): its unscheduled bytes go at once, the
//! rest as the receiver grants them, each packet at the level the receiver chose; a RESEND
//! asks for a range again (Montazeri et al., SIGCOMM 2018, the design section).
//!
//! Bytes are counted in whole packets ([`Layout`]): a grant or a RESEND that ends inside a
//! packet covers that packet.

use super::packets::Layout;

/// A data packet the sender sends next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    /// Its first byte in the message.
    pub offset: u64,
    /// Payload bytes.
    pub len: u32,
    /// Its priority level.
    pub level: u8,
    /// Sent before (a RESEND's).
    pub retx: bool,
}

/// One outgoing message.
#[derive(Debug, Clone)]
pub struct Sender {
    bytes: u64,
    layout: Layout,
    /// First byte never sent.
    next: u64,
    /// Bytes it may send: its unscheduled bytes, then the grants.
    granted: u64,
    /// Bytes sent unscheduled (at `unsched_level`).
    unsched: u64,
    unsched_level: u8,
    /// The level of the latest grant, for scheduled packets.
    sched_level: u8,
    /// Packets the receiver asked for again and not yet resent, a bit each (allocated at the
    /// first RESEND: a receiver asks for every missing range at once, so several may wait),
    /// how many, the first that may be set, and the level of the latest RESEND.
    again: Vec<u64>,
    again_count: u32,
    again_from: usize,
    again_level: u8,
    packets: u32,
    retx: u32,
}

impl Sender {
    /// A message of `bytes` (at least one packet, even when empty) sending up to `unsched`
    /// bytes unscheduled at `unsched_level`.
    pub fn new(bytes: u64, mtu: u64, unsched: u64, unsched_level: u8) -> Sender {
        let unsched = unsched.min(bytes).max(1);
        Sender {
            bytes,
            layout: Layout::new(bytes, mtu, unsched),
            next: 0,
            granted: unsched,
            unsched,
            unsched_level,
            sched_level: 0,
            again: Vec::new(),
            again_count: 0,
            again_from: 0,
            again_level: 0,
            packets: 0,
            retx: 0,
        }
    }

    /// Whether it has a packet to send now.
    #[inline]
    pub fn ready(&self) -> bool {
        self.again_count > 0 || (self.next < self.granted && self.next < self.bytes.max(1))
    }

    /// Bytes never sent: the sender's SRPT key (the paper: a sender transmits the message with the
    /// fewest remaining bytes first).
    #[inline]
    pub fn remaining(&self) -> u64 {
        self.bytes - self.next.min(self.bytes)
    }

    /// Every byte sent at least once and nothing asked for again.
    pub fn done(&self) -> bool {
        !self.ready() && self.next >= self.bytes
    }

    fn level_at(&self, offset: u64) -> u8 {
        if offset < self.unsched {
            self.unsched_level
        } else {
            self.sched_level
        }
    }

    /// Take the next packet: what a RESEND asked for first, then new bytes.
    pub fn next_packet(&mut self) -> Option<Packet> {
        if self.again_count > 0 {
            let k = self.take_again();
            let offset = self.layout.start(k);
            self.packets += 1;
            self.retx += 1;
            return Some(Packet {
                offset,
                len: self.layout.len_at(offset),
                level: self.again_level,
                retx: true,
            });
        }
        if !self.ready() {
            return None;
        }
        let offset = self.next;
        let p = Packet {
            offset,
            len: self.layout.len_at(offset),
            level: self.level_at(offset),
            retx: false,
        };
        self.next = self.layout.start(self.layout.index(offset) + 1);
        self.packets += 1;
        Some(p)
    }

    /// A GRANT: it may send up to byte `offset`, scheduled packets at `level`.
    pub fn on_grant(&mut self, offset: u64, level: u8) {
        self.granted = self.granted.max(offset.min(self.bytes));
        self.sched_level = level;
    }

    /// A RESEND of bytes [`from`, `to`) at `level`: what was sent of it goes again; what was
    /// never sent counts as granted.
    pub fn on_resend(&mut self, from: u64, to: u64, level: u8) {
        let to = to.min(self.bytes.max(1));
        self.granted = self.granted.max(to);
        let first = self.layout.index(self.layout.floor(from));
        let end = self.layout.covering(to.min(self.next));
        if first >= end {
            return;
        }
        if self.again.is_empty() {
            self.again = vec![0; (self.layout.packets() as usize).div_ceil(64)];
        }
        if self.again_count == 0 {
            self.again_from = first;
        }
        for k in first..end {
            let bit = 1 << (k % 64);
            if self.again[k / 64] & bit == 0 {
                self.again[k / 64] |= bit;
                self.again_count += 1;
            }
        }
        self.again_from = self.again_from.min(first);
        self.again_level = level;
    }

    /// The first packet asked for again, no longer waiting.
    fn take_again(&mut self) -> usize {
        let mut w = self.again_from / 64;
        let mut word = self.again[w] & (!0 << (self.again_from % 64));
        while word == 0 {
            w += 1;
            word = self.again[w];
        }
        let k = w * 64 + word.trailing_zeros() as usize;
        self.again[w] &= !(1 << (k % 64));
        self.again_count -= 1;
        self.again_from = k + 1;
        k
    }

    /// Packets sent, and of them resent.
    pub fn counts(&self) -> (u32, u32) {
        (self.packets, self.retx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(s: &mut Sender) -> Vec<(u64, u32, u8, bool)> {
        std::iter::from_fn(|| s.next_packet())
            .map(|p| (p.offset, p.len, p.level, p.retx))
            .collect()
    }

    #[test]
    fn unscheduled_bytes_go_at_once_then_only_what_is_granted() {
        // 10 000 bytes, 1 000 per packet, 2 500 unscheduled: three packets (the third ends
        // past the limit: whole packets) at level 7.
        let mut s = Sender::new(10_000, 1_000, 2_500, 7);
        assert_eq!(
            drain(&mut s),
            [
                (0, 1000, 7, false),
                (1000, 1000, 7, false),
                (2000, 1000, 7, false)
            ]
        );
        assert!(!s.ready() && !s.done());
        assert_eq!(s.remaining(), 7_000);
        // A grant to 5 000 at level 2: two more packets, scheduled.
        s.on_grant(5_000, 2);
        assert_eq!(
            drain(&mut s),
            [(3000, 1000, 2, false), (4000, 1000, 2, false)]
        );
        // A stale (smaller) grant takes nothing back; the last packet is short.
        s.on_grant(4_000, 1);
        assert!(!s.ready());
        s.on_grant(u64::MAX, 0);
        let rest = drain(&mut s);
        assert_eq!(rest.len(), 5);
        assert_eq!(rest[4], (9000, 1000, 0, false));
        assert!(s.done());
        assert_eq!(s.counts(), (10, 0));
    }

    #[test]
    fn a_short_message_is_all_unscheduled_and_an_empty_one_is_one_packet() {
        let mut s = Sender::new(1_500, 1_000, 9_700, 6);
        assert_eq!(drain(&mut s), [(0, 1000, 6, false), (1000, 500, 6, false)]);
        assert!(s.done());
        let mut e = Sender::new(0, 1_000, 9_700, 6);
        assert_eq!(drain(&mut e), [(0, 0, 6, false)]);
        assert!(e.done());
    }

    #[test]
    fn a_marked_response_sends_only_its_few_hundred_unscheduled_bytes() {
        // The incast optimization's 300 bytes: one packet of 300, not a full one; the packets
        // granted after it start at byte 300 and end on the boundaries the receiver grants to.
        let mut s = Sender::new(2_500, 1_000, 300, 7);
        assert_eq!(drain(&mut s), [(0, 300, 7, false)]);
        s.on_grant(1_300, 2);
        assert_eq!(drain(&mut s), [(300, 1000, 2, false)]);
        // A RESEND from inside packet 1 resends packet 1 whole.
        s.on_resend(700, 1_300, 3);
        assert_eq!(drain(&mut s), [(300, 1000, 3, true)]);
        s.on_grant(2_500, 2);
        assert_eq!(
            drain(&mut s),
            [(1300, 1000, 2, false), (2300, 200, 2, false)]
        );
        assert!(s.done());
    }

    #[test]
    fn a_resend_repeats_what_was_sent_and_grants_what_was_not() {
        let mut s = Sender::new(5_000, 1_000, 3_000, 7);
        drain(&mut s);
        // Bytes 1 500..4 000 asked again at level 3: packets 1 and 2 resent (from the packet
        // holding byte 1 500), packet 3 newly allowed at its scheduled level.
        s.on_resend(1_500, 4_000, 3);
        assert_eq!(
            drain(&mut s),
            [
                (1000, 1000, 3, true),
                (2000, 1000, 3, true),
                (3000, 1000, 0, false)
            ]
        );
        assert_eq!(s.counts(), (6, 2));
        // A RESEND of nothing sent yet is a grant only.
        s.on_resend(4_000, 5_000, 3);
        assert_eq!(drain(&mut s), [(4000, 1000, 0, false)]);
        assert!(s.done());
    }

    #[test]
    fn resends_of_several_ranges_all_go_lowest_first_each_packet_once() {
        let mut s = Sender::new(8_000, 1_000, 8_000, 7);
        drain(&mut s);
        // The receiver asks for three holes at once (they arrive in any order, and overlap).
        s.on_resend(5_000, 7_000, 2);
        s.on_resend(1_000, 2_000, 2);
        s.on_resend(6_000, 7_000, 3);
        let again: Vec<u64> = drain(&mut s).iter().map(|p| p.0).collect();
        assert_eq!(again, [1_000, 5_000, 6_000]);
        // Asked again while one is still waiting: each goes once.
        s.on_resend(3_000, 4_000, 3);
        assert_eq!(s.next_packet().map(|p| p.offset), Some(3_000));
        s.on_resend(0, 1_000, 3);
        s.on_resend(7_000, 8_000, 3);
        let again: Vec<u64> = drain(&mut s).iter().map(|p| p.0).collect();
        assert_eq!(again, [0, 7_000]);
        assert_eq!(s.counts(), (14, 6));
        assert!(s.done());
    }

    #[test]
    fn fewer_remaining_bytes_rank_first() {
        let mut a = Sender::new(10_000, 1_000, 10_000, 7);
        let b = Sender::new(3_000, 1_000, 3_000, 7);
        assert!(b.remaining() < a.remaining());
        for _ in 0..8 {
            a.next_packet();
        }
        assert!(a.remaining() < b.remaining());
    }
}
