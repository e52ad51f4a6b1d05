//! NDP's trimming switch port: a small data queue and a priority header queue in front of the
//! topology's [`Link`], used for its serialization and its pipe only (TCP's drop-tail queue in
//! the link stays empty), so only the heads of queue and pipe are scheduled. The port does not
//! own its link: the caller passes it in, so the network keeps one link per port whatever the
//! transport.
//!
//! A data packet arriving to a full data queue is trimmed to its header, which joins the header
//! queue; headers and control packets are served first, but one data packet goes after every
//! `header_weight` headers when data waits (the NDP paper). A packet the header queue cannot
//! take is refused: the caller returns a trimmed header to its sender or drops it.
//!
//! An eager port ([`Port::eager`]) puts a packet into its link's pipe when its serialization
//! starts, with its arrival at the end of the serialization plus the delay, and wakes only
//! when another packet waits for the wire: a hop whose queue is empty costs one event (the
//! arrival) instead of two. Times are the same as a lazy port's; only the order of events
//! that fall on the same picosecond may differ, and the moment a packet is seen leaving
//! (its serialization's end) has no event of its own, so a capture needs a lazy port.

use std::collections::VecDeque;

use crate::net::{Link, PktId, QueueStats};
use crate::units::SimTime;

/// What a port needs to know of a packet: whether it carries payload, its frame bytes, and
/// how to trim it to its header.
pub trait Trimmable {
    /// A data packet with its payload (the only kind that is trimmed).
    fn is_data(&self) -> bool;
    /// Frame bytes, without preamble and gap.
    fn frame(&self) -> u32;
    /// Cut the payload off: the packet becomes a header of `header_bytes`.
    fn trim(&mut self, header_bytes: u32);
}

/// What a port did with a packet offered to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offered {
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

/// Egress port of a switch (trims) or of a host NIC (never does: both queues unbounded),
/// in front of its link.
#[derive(Debug, Default)]
pub struct Port {
    /// The packet being serialized, with its frame bytes.
    serving: Option<(PktId, u32)>,
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
    /// Frame bytes in `data`, and the most data and header bytes waiting at once.
    data_bytes: u64,
    max_total_bytes: u64,
    /// Data packets the data queue holds (`usize::MAX` for a NIC).
    data_limit: usize,
    /// Header queue size, bytes (`u64::MAX` for a NIC).
    hdr_limit: u64,
    /// Headers served per data packet when both wait.
    weight: u32,
    /// Header size a trimmed packet keeps.
    header_bytes: u32,
    /// Eager ([`Port::eager`]): the link is busy until `busy_until`; `wake` says whether an
    /// event is due then to start the next packet; `arrival` is the arrival to schedule of a
    /// packet that entered an empty pipe (taken by [`Port::take_arrival`]).
    eager: bool,
    busy_until: SimTime,
    wake: bool,
    arrival: Option<SimTime>,
}

impl Port {
    /// A switch port that trims: `data_queue` packets of data, `header_queue` bytes of
    /// headers served `weight`:1, trimmed packets keeping `header_bytes`.
    pub fn switch(data_queue: u32, header_queue: u64, weight: u32, header_bytes: u32) -> Port {
        Port {
            data_limit: data_queue as usize,
            hdr_limit: header_queue,
            weight,
            header_bytes,
            ..Port::default()
        }
    }

    /// Whether a data packet arriving now would be trimmed (a NIC's queue is never full).
    #[inline]
    pub fn data_full(&self) -> bool {
        self.data.len() >= self.data_limit
    }

    /// The last data packet queued, which takes the place of one of `frame` bytes: its id,
    /// for the caller to swap the two packets' contents (none with the data queue empty).
    pub fn replace_last_data(&mut self, frame: u32) -> Option<PktId> {
        let last = self.data.back_mut()?;
        self.data_bytes = self.data_bytes - u64::from(last.1) + u64::from(frame);
        last.1 = frame;
        Some(last.0)
    }

    /// A host NIC: never trims, never refuses.
    pub fn nic(weight: u32) -> Port {
        Port {
            data_limit: usize::MAX,
            hdr_limit: u64::MAX,
            weight,
            ..Port::default()
        }
    }

    /// This port, eager: a packet enters the pipe as its serialization starts, and the port
    /// needs an event only when another packet waits for the wire.
    pub fn eager(mut self) -> Port {
        self.eager = true;
        self
    }

    /// Back to lazy (before any packet was offered): every serialization's end is an event.
    pub fn lazy(&mut self) {
        debug_assert!(self.serving.is_none() && self.busy_until == 0);
        self.eager = false;
    }

    /// Whether the port is eager.
    #[inline]
    pub fn is_eager(&self) -> bool {
        self.eager
    }

    /// An eager port: the arrival time of the packet that entered the link's empty pipe in
    /// the last call, for the caller to schedule.
    #[inline]
    pub fn take_arrival(&mut self) -> Option<SimTime> {
        self.arrival.take()
    }

    /// Offer packet `id` (its contents `p`) at `now` to the port in front of `link`: queue
    /// data if the data queue has room, else trim it; queue headers and control packets if
    /// the header queue has room.
    #[inline]
    pub fn offer<P: Trimmable>(
        &mut self,
        link: &mut Link,
        now: SimTime,
        id: PktId,
        p: &mut P,
    ) -> Offered {
        if self.eager && now >= self.busy_until && self.data.is_empty() && self.hdr.is_empty() {
            if let Some(o) = self.straight_on(link, now, id, p) {
                return o;
            }
        }
        let mut trimmed = false;
        if p.is_data() {
            if self.data.len() < self.data_limit {
                self.data.push_back((id, p.frame()));
                self.data_bytes += u64::from(p.frame());
                self.max_data = self.max_data.max(self.data.len() as u32);
                self.note_total();
                return Offered::Queued(self.kick(link, now));
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
        self.note_total();
        let end = self.kick(link, now);
        if trimmed {
            Offered::Trimmed(end)
        } else {
            Offered::Queued(end)
        }
    }

    /// An eager port with an idle wire and nothing waiting: the packet goes straight into the
    /// pipe, with the counters as if it had waited for an instant (what `offer` and `next`
    /// would do, without touching the queues). `None` for a packet the queues would refuse
    /// or trim (a data queue of 0 packets, a header larger than the header queue).
    #[inline]
    fn straight_on<P: Trimmable>(
        &mut self,
        link: &mut Link,
        now: SimTime,
        id: PktId,
        p: &P,
    ) -> Option<Offered> {
        let frame = p.frame();
        if p.is_data() {
            if self.data_limit == 0 {
                return None;
            }
            self.max_data = self.max_data.max(1);
            self.hdr_run = 0;
        } else {
            if u64::from(frame) > self.hdr_limit {
                return None;
            }
            self.max_hdr_bytes = self.max_hdr_bytes.max(u64::from(frame));
            self.hdr_run += 1;
        }
        self.max_total_bytes = self.max_total_bytes.max(u64::from(frame));
        let end = link.serialize(now, frame);
        self.busy_until = end;
        self.arrival = link.into_pipe(end, id, frame);
        Some(Offered::Queued(None))
    }

    /// Start serializing if the link is idle: headers first, but one data packet after every
    /// `weight` headers when data waits. Returns when the transmission ends (the time of the
    /// event the caller schedules); an eager port returns when it must wake instead.
    #[inline]
    fn kick(&mut self, link: &mut Link, now: SimTime) -> Option<SimTime> {
        if self.eager {
            return self.kick_eager(link, now);
        }
        if self.serving.is_some() {
            return None;
        }
        let (id, frame) = self.next()?;
        self.serving = Some((id, frame));
        Some(link.serialize(now, frame))
    }

    /// The eager kick: if the wire is free, the next packet goes into the pipe now, arriving
    /// after its serialization and the delay. Returns when the port must wake to start the
    /// next packet: when one waits and no wake-up is due yet.
    #[inline]
    fn kick_eager(&mut self, link: &mut Link, now: SimTime) -> Option<SimTime> {
        if now >= self.busy_until {
            let (id, frame) = self.next()?;
            let end = link.serialize(now, frame);
            self.busy_until = end;
            if let Some(at) = link.into_pipe(end, id, frame) {
                self.arrival = Some(at);
            }
        }
        if self.wake || (self.data.is_empty() && self.hdr.is_empty()) {
            return None;
        }
        self.wake = true;
        Some(self.busy_until)
    }

    /// An eager port's wake-up is due: start the next packet.
    #[inline]
    pub fn wake(&mut self, link: &mut Link, now: SimTime) -> Option<SimTime> {
        self.wake = false;
        self.kick_eager(link, now)
    }

    /// Take the next packet to serialize: headers first, but one data packet after every
    /// `weight` headers when data waits.
    #[inline]
    fn next(&mut self) -> Option<(PktId, u32)> {
        let take_data =
            !self.data.is_empty() && (self.hdr.is_empty() || self.hdr_run >= self.weight);
        let (id, frame) = if take_data {
            self.hdr_run = 0;
            let (id, frame) = self.data.pop_front()?;
            self.data_bytes -= u64::from(frame);
            (id, frame)
        } else {
            let (id, frame) = self.hdr.pop_front()?;
            self.hdr_run += 1;
            self.hdr_bytes -= frame as u64;
            (id, frame)
        };
        Some((id, frame))
    }

    /// The frame in service has been serialized at `now` and enters the pipe. Returns its
    /// arrival if the pipe was empty (the caller schedules it) and the end of the next
    /// transmission, if one starts.
    #[inline]
    pub fn finish_tx(
        &mut self,
        link: &mut Link,
        now: SimTime,
    ) -> (Option<SimTime>, Option<SimTime>) {
        let (id, frame) = self
            .serving
            .take()
            .expect("finish_tx on an idle trimming port");
        let arrival = link.into_pipe(now, id, frame);
        (arrival, self.kick(link, now))
    }

    /// Packets held anywhere in the port and its link: queued, in service, propagating.
    pub fn packets(&self, link: &Link) -> usize {
        self.data.len() + self.hdr.len() + usize::from(self.serving.is_some()) + link.in_pipe()
    }

    /// The most bytes, data and headers, that waited at once (the packet in service aside).
    pub fn peak_bytes(&self) -> u64 {
        self.max_total_bytes
    }

    #[inline]
    fn note_total(&mut self) {
        self.max_total_bytes = self.max_total_bytes.max(self.data_bytes + self.hdr_bytes);
    }

    /// Data packets waiting now.
    pub fn data_len(&self) -> usize {
        self.data.len()
    }

    /// Counters as a queue report shows them: drops of refused packets (the caller counts
    /// them on the link), the header queue's peak in bytes, the data queue's peak in packets,
    /// and the link's transmissions.
    pub fn stats(&self, link: &Link) -> QueueStats {
        let mut s = link.stats.clone();
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
    const DELAY: SimTime = 1_000;
    const DATA: P = P {
        data: true,
        frame: 9064,
    };
    const HDR: P = P {
        data: false,
        frame: 64,
    };

    /// A port and the link it feeds.
    struct Fixture {
        port: Port,
        link: Link,
    }

    impl Fixture {
        fn offer(&mut self, now: SimTime, id: PktId, mut p: P) -> Offered {
            self.port.offer(&mut self.link, now, id, &mut p)
        }
        fn finish_tx(&mut self, now: SimTime) -> (Option<SimTime>, Option<SimTime>) {
            self.port.finish_tx(&mut self.link, now)
        }
        fn packets(&self) -> usize {
            self.port.packets(&self.link)
        }
        fn stats(&self) -> QueueStats {
            self.port.stats(&self.link)
        }
    }

    /// A link whose own drop-tail limit would refuse every packet: the port never uses it.
    fn link() -> Link {
        let limit = crate::config::QueueLimit {
            bytes: Some(100),
            packets: Some(0),
        };
        Link::new(RATE, DELAY, limit, 20)
    }

    /// A switch port with a data queue of 2 packets and a header queue of 3 headers.
    fn switch() -> Fixture {
        Fixture {
            port: Port::switch(2, 3 * 64, 2, 64),
            link: link(),
        }
    }

    fn tx(frame: u64) -> SimTime {
        tx_time(frame + 20, RATE)
    }

    fn end(o: Offered) -> SimTime {
        match o {
            Offered::Queued(Some(t)) | Offered::Trimmed(Some(t)) => t,
            other => panic!("not transmitting: {other:?}"),
        }
    }

    #[test]
    fn an_idle_port_serializes_the_first_packet_at_once() {
        let mut p = switch();
        assert_eq!(p.offer(5, 0, DATA), Offered::Queued(Some(5 + tx(9064))));
        assert_eq!(p.offer(5, 1, DATA), Offered::Queued(None));
        assert_eq!(p.packets(), 2);
    }

    #[test]
    fn data_beyond_the_data_queue_is_trimmed_to_a_header() {
        let mut p = switch();
        p.offer(0, 0, DATA); // in service
        p.offer(0, 1, DATA);
        p.offer(0, 2, DATA);
        assert_eq!(p.port.data_len(), 2);
        let mut third = DATA;
        assert_eq!(
            p.port.offer(&mut p.link, 0, 3, &mut third),
            Offered::Trimmed(None)
        );
        assert!(!third.data);
        assert_eq!(third.frame, 64);
        assert_eq!(p.stats().max_packets, 2);
        assert_eq!(p.stats().max_bytes, 64);
    }

    #[test]
    fn a_full_header_queue_refuses_and_says_whether_it_trimmed() {
        let mut p = switch();
        p.offer(0, 0, HDR); // in service
        for id in 1..4 {
            assert_eq!(p.offer(0, id, HDR), Offered::Queued(None));
        }
        assert_eq!(p.offer(0, 4, HDR), Offered::Refused { trimmed: false });
        p.offer(0, 5, DATA);
        p.offer(0, 6, DATA);
        assert_eq!(p.offer(0, 7, DATA), Offered::Refused { trimmed: true });
        assert_eq!(p.packets(), 6);
    }

    #[test]
    fn a_nic_never_trims_nor_refuses() {
        let mut p = Fixture {
            port: Port::nic(2),
            link: link(),
        };
        for id in 0..100 {
            assert!(matches!(p.offer(0, id, DATA), Offered::Queued(_)));
        }
        assert_eq!(p.packets(), 100);
    }

    #[test]
    fn headers_go_first_but_data_gets_one_turn_in_weight_plus_one() {
        let mut p = switch();
        // Packet 0 (data) in service; then data 1, 2 and headers 3, 4, 5 wait.
        let mut t = end(p.offer(0, 0, DATA));
        p.offer(0, 1, DATA);
        p.offer(0, 2, DATA);
        for id in 3..6 {
            p.offer(0, id, HDR);
        }
        let mut order = Vec::new();
        loop {
            let (_, next) = p.finish_tx(t);
            let (id, _) = p.link.arrive();
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
        let mut p = switch();
        let t = end(p.offer(0, 7, HDR));
        assert_eq!(p.offer(0, 8, HDR), Offered::Queued(None));
        assert_eq!(p.link.in_pipe(), 0);
        let (arrival, next) = p.finish_tx(t);
        assert_eq!(
            arrival,
            Some(t + DELAY),
            "the first packet's arrival is scheduled"
        );
        assert_eq!(next, Some(t + tx(64)));
        let (arrival, next) = p.finish_tx(t + tx(64));
        assert_eq!(arrival, None);
        assert_eq!(next, None);
        assert_eq!(p.link.arrive(), (7, Some(t + tx(64) + DELAY)));
        assert_eq!(p.link.arrive(), (8, None));
        let s = p.stats();
        assert_eq!((s.tx_packets, s.tx_bytes, s.busy), (2, 128, 2 * tx(64)));
        assert_eq!(p.packets(), 0);
    }

    /// An eager switch port (data queue 2, header queue 3 headers, weight 2).
    fn eager() -> Fixture {
        Fixture {
            port: Port::switch(2, 3 * 64, 2, 64).eager(),
            link: link(),
        }
    }

    #[test]
    fn an_eager_idle_port_puts_the_packet_in_the_pipe_with_no_event_of_its_own() {
        let mut p = eager();
        assert_eq!(p.offer(5, 0, DATA), Offered::Queued(None));
        let t = 5 + tx(9064);
        assert_eq!(p.port.take_arrival(), Some(t + DELAY));
        assert_eq!(p.port.take_arrival(), None);
        assert_eq!(p.link.in_pipe(), 1);
        assert_eq!(p.packets(), 1);
        // The peaks count the packet as a lazy port does: it waited for an instant.
        assert_eq!(p.stats().max_packets, 1);
        assert_eq!(p.port.peak_bytes(), 9064);
    }

    #[test]
    fn an_eager_port_wakes_at_the_serialization_end_only_when_a_packet_waits() {
        let mut p = eager();
        p.offer(0, 0, HDR);
        let t = tx(64);
        assert_eq!(p.port.take_arrival(), Some(t + DELAY));
        // One tick before the wire is free: the header waits and a wake-up is asked for once.
        assert_eq!(p.offer(t - 1, 1, HDR), Offered::Queued(Some(t)));
        assert_eq!(p.port.take_arrival(), None);
        assert_eq!(p.offer(t - 1, 2, HDR), Offered::Queued(None));
        // The wake-up starts the next one; the pipe was not empty, so no arrival to schedule.
        assert_eq!(p.port.wake(&mut p.link, t), Some(2 * t));
        assert_eq!(p.port.take_arrival(), None);
        assert_eq!(p.port.wake(&mut p.link, 2 * t), None);
        // Each arrival names the next one: the serializations went back to back.
        assert_eq!(p.link.arrive(), (0, Some(2 * t + DELAY)));
        assert_eq!(p.link.arrive(), (1, Some(3 * t + DELAY)));
        assert_eq!(p.link.arrive(), (2, None));
    }

    #[test]
    fn an_eager_port_is_free_again_at_the_serialization_end() {
        let mut p = eager();
        p.offer(0, 0, HDR);
        let t = tx(64);
        assert_eq!(p.port.take_arrival(), Some(t + DELAY));
        // At the very picosecond the wire frees, a new packet starts at once.
        assert_eq!(p.offer(t, 1, HDR), Offered::Queued(None));
        assert_eq!(p.port.take_arrival(), None, "the pipe holds packet 0");
        assert_eq!(p.link.arrive(), (0, Some(2 * t + DELAY)));
        let s = p.stats();
        assert_eq!((s.tx_packets, s.busy), (2, 2 * tx(64)));
    }

    #[test]
    fn an_eager_port_serves_in_the_lazy_ports_order() {
        // The weight rule of `headers_go_first_but_data_gets_one_turn_in_weight_plus_one`.
        let mut p = eager();
        p.offer(0, 0, DATA);
        let mut wake = None;
        for (id, pk) in [(1, DATA), (2, DATA), (3, HDR), (4, HDR), (5, HDR)] {
            wake = wake.or(end_or_none(p.offer(0, id, pk)));
        }
        let mut t = wake.expect("a packet waits: the port asked to wake");
        while let Some(next) = p.port.wake(&mut p.link, t) {
            t = next;
        }
        let mut order = Vec::new();
        while p.link.in_pipe() > 0 {
            order.push(p.link.arrive().0);
        }
        assert_eq!(order, [0, 3, 4, 1, 5, 2]);
    }

    fn end_or_none(o: Offered) -> Option<SimTime> {
        match o {
            Offered::Queued(t) | Offered::Trimmed(t) => t,
            Offered::Refused { .. } => None,
        }
    }

    /// A full data queue's last packet gives its place to one of another size: the queue's
    /// bytes follow, its count does not move, and an empty queue has no last packet.
    #[test]
    fn the_last_data_packet_gives_its_place_with_the_bytes_accounted() {
        let mut f = switch();
        assert!(f.port.replace_last_data(100).is_none());
        assert!(!f.port.data_full());
        for id in 0..3 {
            f.offer(0, id, DATA);
        }
        // One serializing, two waiting: full.
        assert!(f.port.data_full());
        let before = f.port.data_bytes;
        assert_eq!(f.port.replace_last_data(400), Some(2));
        assert_eq!(f.port.data_bytes, before - 9064 + 400);
        assert_eq!(f.port.data.len(), 2);
    }
}
