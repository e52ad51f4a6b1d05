//! NDP's trimming switch port: a small data queue and a priority header queue in front of a
//! [`Link`], whose own queue then only ever holds the frame being serialized (so the link's
//! serialization and pipe are TCP's, and only the heads of queue and pipe are scheduled).
//!
//! A data packet arriving to a full data queue is trimmed to its header, which joins the header
//! queue; headers and control packets are served first, but one data packet goes after every
//! `header_weight` headers when data waits (NDP paper, §3.1). A packet the header queue cannot
//! take is refused: the caller returns a trimmed header to its sender or drops it.

use std::collections::VecDeque;

use crate::config::QueueLimit;
use crate::net::{Enqueued, Link, PktId, QueueStats};
use crate::units::SimTime;

/// What a port needs to know of a packet: whether it carries payload, its frame bytes, and
/// how to trim it to its header.
pub(crate) trait Trimmable {
    /// A data packet with its payload (the only kind that is trimmed).
    fn is_data(&self) -> bool;
    /// Frame bytes, without preamble and gap.
    fn frame(&self) -> u32;
    /// Cut the payload off: the packet becomes a header of `header_bytes`.
    fn trim(&mut self, header_bytes: u32);
}

/// What a port did with a packet offered to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Offered {
    /// Queued as it came; the link starts serializing it (or the head) and ends at the time
    /// given, if it was idle.
    Queued(Option<SimTime>),
    /// Trimmed, and its header queued (the time as for `Queued`).
    Trimmed(Option<SimTime>),
    /// The header queue is full: the packet (trimmed if `trimmed`) is the caller's to bounce
    /// or drop.
    Refused {
        /// Whether the port trimmed it before refusing its header.
        trimmed: bool,
    },
}

/// Egress port of a switch (trims) or of a host NIC (never does: both queues unbounded).
#[derive(Debug)]
pub(crate) struct Port {
    /// Serialization at the link rate, then the propagation pipe.
    link: Link,
    /// Data packets waiting, with their frame bytes.
    data: VecDeque<(PktId, u32)>,
    /// Headers and control packets waiting, with their frame bytes.
    hdr: VecDeque<(PktId, u32)>,
    /// Frame bytes in `hdr`.
    hdr_bytes: u64,
    /// Header packets served since the last data packet.
    hdr_run: u32,
    /// Most data packets waiting at once.
    max_data: u32,
    /// Most header bytes waiting at once.
    max_hdr_bytes: u64,
    /// Data packets the data queue holds (`usize::MAX` for a NIC).
    data_limit: usize,
    /// Header queue size, bytes (`u64::MAX` for a NIC).
    hdr_limit: u64,
    /// Headers served per data packet when both wait.
    weight: u32,
    /// Header size a trimmed packet keeps.
    header_bytes: u32,
}

impl Port {
    /// A switch port that trims, sending over a link of `rate`, `delay` and `phy_overhead`.
    pub(crate) fn switch(
        link: &Link,
        data_queue: u32,
        header_queue: u64,
        weight: u32,
        header_bytes: u32,
    ) -> Port {
        Port::new(
            link,
            data_queue as usize,
            header_queue,
            weight,
            header_bytes,
        )
    }

    /// A host NIC: never trims, never refuses.
    pub(crate) fn nic(link: &Link, weight: u32, header_bytes: u32) -> Port {
        Port::new(link, usize::MAX, u64::MAX, weight, header_bytes)
    }

    fn new(link: &Link, data: usize, hdr: u64, weight: u32, header_bytes: u32) -> Port {
        Port {
            // The trimming queues hold the backlog: the link's own queue is unlimited and
            // only ever holds the frame in service.
            link: Link::new(
                link.rate,
                link.delay,
                QueueLimit::UNLIMITED,
                link.phy_overhead,
            ),
            data: VecDeque::new(),
            hdr: VecDeque::new(),
            hdr_bytes: 0,
            hdr_run: 0,
            max_data: 0,
            max_hdr_bytes: 0,
            data_limit: data,
            hdr_limit: hdr,
            weight,
            header_bytes,
        }
    }

    /// Offer packet `id` (its contents `p`) at `now`: queue data if the data queue has room,
    /// else trim it; queue headers and control packets if the header queue has room.
    #[inline]
    pub(crate) fn offer<P: Trimmable>(&mut self, now: SimTime, id: PktId, p: &mut P) -> Offered {
        let mut trimmed = false;
        if p.is_data() {
            if self.data.len() < self.data_limit {
                self.data.push_back((id, p.frame()));
                self.max_data = self.max_data.max(self.data.len() as u32);
                return Offered::Queued(self.kick(now));
            }
            // Trim: the payload is lost, the header goes on with priority.
            p.trim(self.header_bytes);
            trimmed = true;
        }
        let frame = p.frame();
        if self.hdr_bytes + frame as u64 > self.hdr_limit {
            return Offered::Refused { trimmed };
        }
        self.hdr.push_back((id, frame));
        self.hdr_bytes += frame as u64;
        self.max_hdr_bytes = self.max_hdr_bytes.max(self.hdr_bytes);
        let end = self.kick(now);
        if trimmed {
            Offered::Trimmed(end)
        } else {
            Offered::Queued(end)
        }
    }

    /// Count a packet refused here and dropped.
    pub(crate) fn count_drop(&mut self) {
        self.link.count_drop();
    }

    /// Start serializing if the link is idle: headers first, but one data packet after every
    /// `weight` headers when data waits. Returns when the transmission ends.
    #[inline]
    fn kick(&mut self, now: SimTime) -> Option<SimTime> {
        if self.link.head().is_some() {
            return None;
        }
        let take_data =
            !self.data.is_empty() && (self.hdr.is_empty() || self.hdr_run >= self.weight);
        let (id, frame) = if take_data {
            self.hdr_run = 0;
            self.data.pop_front()?
        } else {
            let (id, frame) = self.hdr.pop_front()?;
            self.hdr_run += 1;
            self.hdr_bytes -= frame as u64;
            (id, frame)
        };
        match self.link.enqueue(now, id, frame) {
            Enqueued::Transmitting(end) => Some(end),
            other => unreachable!("an idle unlimited link answered {other:?}"),
        }
    }

    /// The frame in service has been serialized at `now` and enters the pipe. Returns whether
    /// the pipe was empty (its arrival must be scheduled at `now + delay`) and the end of the
    /// next transmission, if one starts.
    #[inline]
    pub(crate) fn finish_tx(&mut self, now: SimTime) -> (bool, Option<SimTime>) {
        let (pipe_was_empty, _) = self.link.finish_tx(now);
        (pipe_was_empty, self.kick(now))
    }

    /// The packet at the head of the pipe reaches the far end: it, and the arrival time of
    /// the next one.
    #[inline]
    pub(crate) fn arrive(&mut self) -> (PktId, Option<SimTime>) {
        self.link.arrive()
    }

    /// Propagation delay of the link.
    #[inline]
    pub(crate) fn delay(&self) -> SimTime {
        self.link.delay
    }

    /// Packets held anywhere in the port: queued, in service, propagating.
    pub(crate) fn packets(&self) -> usize {
        self.data.len() + self.hdr.len() + self.link.queued_packets() + self.link.in_pipe()
    }

    /// Data packets waiting now.
    pub(crate) fn data_len(&self) -> usize {
        self.data.len()
    }

    /// Counters as a queue report shows them: drops of refused packets, the header queue's
    /// peak in bytes, the data queue's peak in packets, and the link's transmissions.
    pub(crate) fn stats(&self) -> QueueStats {
        let mut s = self.link.stats.clone();
        s.max_bytes = self.max_hdr_bytes;
        s.max_packets = self.max_data;
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::tx_time;

    #[derive(Debug, Clone, Copy)]
    struct P {
        data: bool,
        frame: u32,
    }

    impl Trimmable for P {
        fn is_data(&self) -> bool {
            self.data
        }
        fn frame(&self) -> u32 {
            self.frame
        }
        fn trim(&mut self, header_bytes: u32) {
            self.data = false;
            self.frame = header_bytes;
        }
    }

    const RATE: u64 = 10_000_000_000;
    const DATA: P = P {
        data: true,
        frame: 9064,
    };
    const HDR: P = P {
        data: false,
        frame: 64,
    };

    /// A switch port with a data queue of 2 packets and a header queue of 3 headers.
    fn port() -> Port {
        let l = Link::new(RATE, 1_000, QueueLimit::UNLIMITED, 20);
        Port::switch(&l, 2, 3 * 64, 2, 64)
    }

    fn tx(frame: u64) -> SimTime {
        tx_time(frame + 20, RATE)
    }

    #[test]
    fn an_idle_port_serializes_the_first_packet_at_once() {
        let mut p = port();
        assert_eq!(
            p.offer(5, 0, &mut DATA.clone()),
            Offered::Queued(Some(5 + tx(9064)))
        );
        assert_eq!(p.offer(5, 1, &mut DATA.clone()), Offered::Queued(None));
        assert_eq!(p.packets(), 2);
    }

    #[test]
    fn data_beyond_the_data_queue_is_trimmed_to_a_header() {
        let mut p = port();
        p.offer(0, 0, &mut DATA.clone()); // in service
        p.offer(0, 1, &mut DATA.clone());
        p.offer(0, 2, &mut DATA.clone());
        assert_eq!(p.data_len(), 2);
        let mut third = DATA;
        assert_eq!(p.offer(0, 3, &mut third), Offered::Trimmed(None));
        assert!(!third.data);
        assert_eq!(third.frame, 64);
        assert_eq!(p.stats().max_packets, 2);
        assert_eq!(p.stats().max_bytes, 64);
    }

    #[test]
    fn a_full_header_queue_refuses_and_says_whether_it_trimmed() {
        let mut p = port();
        p.offer(0, 0, &mut HDR.clone()); // in service
        for id in 1..4 {
            assert_eq!(p.offer(0, id, &mut HDR.clone()), Offered::Queued(None));
        }
        assert_eq!(
            p.offer(0, 4, &mut HDR.clone()),
            Offered::Refused { trimmed: false }
        );
        p.offer(0, 5, &mut DATA.clone());
        p.offer(0, 6, &mut DATA.clone());
        assert_eq!(
            p.offer(0, 7, &mut DATA.clone()),
            Offered::Refused { trimmed: true }
        );
        p.count_drop();
        assert_eq!(p.stats().drops, 1);
    }

    #[test]
    fn a_nic_never_trims_nor_refuses() {
        let l = Link::new(RATE, 0, QueueLimit::UNLIMITED, 20);
        let mut p = Port::nic(&l, 2, 64);
        for id in 0..100 {
            assert!(matches!(
                p.offer(0, id, &mut DATA.clone()),
                Offered::Queued(_)
            ));
        }
        assert_eq!(p.packets(), 100);
    }

    #[test]
    fn headers_go_first_but_data_gets_one_turn_in_weight_plus_one() {
        let mut p = port();
        // Packet 0 (data) in service; then data 1, 2 and headers 3, 4, 5 wait.
        let mut t = p.offer(0, 0, &mut DATA.clone()).into_end();
        p.offer(0, 1, &mut DATA.clone());
        p.offer(0, 2, &mut DATA.clone());
        for id in 3..6 {
            p.offer(0, id, &mut HDR.clone());
        }
        let mut order = Vec::new();
        loop {
            let (_, next) = p.finish_tx(t);
            let (id, _) = p.arrive();
            order.push(id);
            match next {
                Some(end) => t = end,
                None => break,
            }
        }
        // Weight 2: two headers, then a data packet, then the last header, then data.
        assert_eq!(order, [0, 3, 4, 1, 5, 2]);
    }

    #[test]
    fn the_pipe_delivers_after_the_delay_in_order() {
        let mut p = port();
        let end = p.offer(0, 7, &mut HDR.clone()).into_end();
        assert_eq!(p.offer(0, 8, &mut HDR.clone()), Offered::Queued(None));
        let (empty, next) = p.finish_tx(end);
        assert!(empty, "the first packet's arrival must be scheduled");
        assert_eq!(next, Some(end + tx(64)));
        let (empty, next) = p.finish_tx(end + tx(64));
        assert!(!empty);
        assert_eq!(next, None);
        assert_eq!(p.arrive(), (7, Some(end + tx(64) + p.delay())));
        assert_eq!(p.arrive(), (8, None));
        let s = p.stats();
        assert_eq!((s.tx_packets, s.tx_bytes, s.busy), (2, 128, 2 * tx(64)));
        assert_eq!(p.packets(), 0);
    }

    impl Offered {
        fn into_end(self) -> SimTime {
            match self {
                Offered::Queued(Some(t)) | Offered::Trimmed(Some(t)) => t,
                other => panic!("not transmitting: {other:?}"),
            }
        }
    }
}
