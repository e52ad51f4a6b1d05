//! Strict-priority egress ports: [`LEVELS`] FIFO queues in front of a link, the highest
//! non-empty one served first, as the 8 priority levels of commodity switches that Homa uses
//! (Montazeri et al., "Homa: A Receiver-Driven Low-Latency Transport Protocol Using Network
//! Priorities", SIGCOMM 2018: commodity switches offer several priority levels, 8 in its design).
//!
//! Like NDP's trimming port ([`super::trim`]) the port holds the queues and uses its [`Link`]
//! for serialization and the pipe only (the link's own drop-tail queue stays empty). The port's
//! buffer is shared by its levels: a packet that would take it over `limit` bytes is dropped,
//! whatever its level (a switch's egress buffer, drop-tail across the priorities). A port only
//! exists when the scenario asks for priorities, so other transports' runs never see one.

use std::collections::VecDeque;

use crate::net::{Link, PktId, QueueStats};
use crate::units::SimTime;

/// Priority levels of a port: 0 the lowest, `LEVELS - 1` the highest.
pub const LEVELS: usize = 8;

/// What a port did with a packet offered to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offered {
    /// Queued; the link starts serializing it (or the head) and ends at the time given, if it
    /// was idle.
    Queued(Option<SimTime>),
    /// The buffer is full: dropped (the caller counts and frees it).
    Dropped,
}

/// An egress port with strict priority queues.
#[derive(Debug)]
pub struct Port {
    /// The packet being serialized, with its frame bytes.
    serving: Option<(PktId, u32)>,
    /// Waiting packets per level, with their frame bytes.
    queues: [VecDeque<(PktId, u32)>; LEVELS],
    /// Frame bytes waiting or in service.
    bytes: u64,
    /// Packets waiting or in service.
    packets: u32,
    /// Buffer bytes (`u64::MAX`: unbounded, a host's NIC).
    limit: u64,
    max_bytes: u64,
    max_packets: u32,
}

impl Port {
    /// A port of `limit` buffer bytes (`u64::MAX` for none).
    pub fn new(limit: u64) -> Port {
        Port {
            serving: None,
            queues: Default::default(),
            bytes: 0,
            packets: 0,
            limit,
            max_bytes: 0,
            max_packets: 0,
        }
    }

    /// Offer packet `id` of `frame` bytes at priority `level` (above the top: the top) at
    /// `now` to the port in front of `link`.
    #[inline]
    pub fn offer(
        &mut self,
        link: &mut Link,
        now: SimTime,
        id: PktId,
        frame: u32,
        level: u8,
    ) -> Offered {
        if self.bytes + u64::from(frame) > self.limit {
            link.count_drop();
            return Offered::Dropped;
        }
        self.bytes += u64::from(frame);
        self.packets += 1;
        self.max_bytes = self.max_bytes.max(self.bytes);
        self.max_packets = self.max_packets.max(self.packets);
        let q = usize::from(level).min(LEVELS - 1);
        self.queues[q].push_back((id, frame));
        Offered::Queued(self.kick(link, now))
    }

    /// Start serializing the head of the highest non-empty level if the link is idle.
    #[inline]
    fn kick(&mut self, link: &mut Link, now: SimTime) -> Option<SimTime> {
        if self.serving.is_some() {
            return None;
        }
        let (id, frame) = self.queues.iter_mut().rev().find_map(VecDeque::pop_front)?;
        self.serving = Some((id, frame));
        Some(link.serialize(now, frame))
    }

    /// The frame in service has been serialized at `now` and enters the pipe. Returns its
    /// arrival if the pipe was empty and the end of the next transmission, if one starts.
    #[inline]
    pub fn finish_tx(
        &mut self,
        link: &mut Link,
        now: SimTime,
    ) -> (Option<SimTime>, Option<SimTime>) {
        let (id, frame) = self
            .serving
            .take()
            .expect("finish_tx on an idle priority port");
        self.bytes -= u64::from(frame);
        self.packets -= 1;
        let arrival = link.into_pipe(now, id, frame);
        (arrival, self.kick(link, now))
    }

    /// Packets held in the port and its link: queued, in service, propagating.
    pub fn held(&self, link: &Link) -> usize {
        self.packets as usize + link.in_pipe()
    }

    /// Frame bytes queued or in service now.
    pub fn queued_bytes(&self) -> u64 {
        self.bytes
    }

    /// Buffer bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Counters as a queue report shows them: the link's (drops, transmissions, busy time)
    /// with the port's peaks.
    pub fn stats(&self, link: &Link) -> QueueStats {
        let mut s = link.stats.clone();
        s.max_bytes = self.max_bytes;
        s.max_packets = self.max_packets;
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::QueueLimit;
    use crate::units::{from_us, tx_time};

    fn link() -> Link {
        // 10 Gbps, 1 µs: a 1000-byte frame serializes in 800 ns.
        Link::new(10_000_000_000, from_us(1), QueueLimit::default(), 0)
    }

    #[test]
    fn the_highest_level_goes_first_and_a_level_is_fifo() {
        let mut l = link();
        let mut p = Port::new(u64::MAX);
        let end = tx_time(1000, 10_000_000_000);
        assert_eq!(p.offer(&mut l, 0, 1, 1000, 0), Offered::Queued(Some(end)));
        // While 1 serializes: 2 and 3 low, 4 and 5 high, 6 above the top (the top).
        for (id, level) in [(2, 0), (3, 0), (4, 7), (5, 7), (6, 9)] {
            assert_eq!(p.offer(&mut l, 10, id, 1000, level), Offered::Queued(None));
        }
        let mut order = Vec::new();
        let mut t = end;
        loop {
            let (_, next) = p.finish_tx(&mut l, t);
            order.push(l.newest_in_pipe().unwrap());
            match next {
                Some(n) => t = n,
                None => break,
            }
        }
        assert_eq!(order, [1, 4, 5, 6, 2, 3]);
        assert_eq!(p.queued_bytes(), 0);
        assert_eq!(p.stats(&l).max_packets, 6);
    }

    #[test]
    fn a_full_buffer_drops_at_every_level_and_counts_it() {
        let mut l = link();
        let mut p = Port::new(2500);
        assert!(matches!(p.offer(&mut l, 0, 1, 1000, 0), Offered::Queued(_)));
        assert!(matches!(p.offer(&mut l, 0, 2, 1000, 3), Offered::Queued(_)));
        // 2000 + 1000 > 2500: dropped even at the top; 500 more still fits.
        assert_eq!(p.offer(&mut l, 0, 3, 1000, 7), Offered::Dropped);
        assert!(matches!(p.offer(&mut l, 0, 4, 500, 7), Offered::Queued(_)));
        assert_eq!(p.offer(&mut l, 0, 5, 1, 7), Offered::Dropped);
        assert_eq!(l.stats.drops, 2);
        assert_eq!(p.queued_bytes(), 2500);
        // The frame in service leaves: its bytes free room.
        let (_, _) = p.finish_tx(&mut l, tx_time(1000, 10_000_000_000));
        assert_eq!(p.queued_bytes(), 1500);
        assert!(matches!(
            p.offer(&mut l, 1, 6, 1000, 0),
            Offered::Queued(None)
        ));
    }
}
