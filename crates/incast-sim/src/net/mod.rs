//! Packets, and links made of a drop-tail egress queue (serialization at the link rate) and a
//! propagation pipe.
//!
//! Only the head of each queue and each pipe has an event in the scheduler (as in htsim), so the
//! number of pending events grows with the number of links, not with the packets in flight.
//!
//! A transport with another queue discipline keeps its queues in front of the link and uses only
//! its serialization and pipe ([`Link::serialize`], [`Link::into_pipe`], [`Link::arrive`]), as
//! NDP's trimming ports do.
//!
//! - [`fabric`]: the network as the engine runs it (packets, queue disciplines, PFC);
//! - [`red`]: random early detection; [`trim`]: trimming ports; [`int`]: in-band telemetry;
//! - [`pfc`]: PFC's accounting of ingresses; [`egress`]: what runs as a packet starts to
//!   leave an egress (INT, egress ECN marking, paused time per flow).

pub mod egress;
pub mod fabric;
pub mod int;
pub mod pfc;
pub mod prio;
pub mod red;
#[cfg(test)]
mod scenario_tests;
pub mod trim;

use std::collections::VecDeque;

use serde::Serialize;

use crate::config::QueueLimit;
use crate::rng::Rng;
use crate::units::{tx_time, SimTime};

/// Index of a packet in the [`PacketPool`].
pub type PktId = u32;

// The TCP header's own constants (SACK blocks, ECE, CWR) live here beside the IP ECN
// codepoints because the TCP agents import them from this path.

/// Most SACK blocks a segment carries (three fit beside the timestamp option, RFC 2018).
pub const MAX_SACK_BLOCKS: usize = 3;

/// ECN-capable transport (the IP header's ECT codepoint).
pub const ECT: u8 = 1;
/// Congestion experienced: set by a switch on an ECT packet (RFC 3168).
pub const CE: u8 = 2;
/// ECN echo: the receiver's report of CE marks (the TCP header's ECE flag).
pub const ECE: u8 = 4;
/// Congestion window reduced: the sender's answer to ECE (the TCP header's CWR flag).
pub const CWR: u8 = 8;

/// Packets live in one arena and are referred to by index; freed slots are reused, so the hot
/// path allocates nothing once the arena has grown to the peak number of packets alive.
/// Generic over the packet type, so each transport keeps its own small `Copy` packet
/// ([`fabric::Wire`]) and the same arena.
#[derive(Debug)]
pub struct PacketPool<P> {
    slots: Vec<P>,
    free: Vec<PktId>,
}

impl<P> Default for PacketPool<P> {
    fn default() -> Self {
        PacketPool {
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<P> PacketPool<P> {
    /// Store `p`, returning its id.
    #[inline]
    pub fn alloc(&mut self, p: P) -> PktId {
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = p;
            id
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as PktId
        }
    }

    /// Release `id` for reuse.
    #[inline]
    pub fn free(&mut self, id: PktId) {
        self.free.push(id);
    }

    /// The packet `id`.
    #[inline]
    pub fn get(&self, id: PktId) -> &P {
        &self.slots[id as usize]
    }

    /// The packet `id`, mutably.
    #[inline]
    pub fn get_mut(&mut self, id: PktId) -> &mut P {
        &mut self.slots[id as usize]
    }

    /// Exchange the contents of packets `a` and `b` (each keeps its id and place).
    #[inline]
    pub fn swap(&mut self, a: PktId, b: PktId) {
        self.slots.swap(a as usize, b as usize);
    }

    /// Packets currently alive.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

/// Counters of one queue.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct QueueStats {
    /// Packets dropped on arrival because the queue was full.
    pub drops: u64,
    /// Highest occupancy seen, frame bytes (the packet in service included).
    pub max_bytes: u64,
    /// Highest occupancy seen, packets.
    pub max_packets: u32,
    /// Packets transmitted.
    pub tx_packets: u64,
    /// Frame bytes transmitted.
    pub tx_bytes: u64,
    /// Time spent serializing, picoseconds.
    pub busy: SimTime,
    /// Packets marked CE on arrival.
    pub marks: u64,
    /// Times the link was paused by PFC / 802.3x.
    pub pauses: u64,
    /// Time spent paused, picoseconds.
    pub paused: SimTime,
}

/// A buffer shared by several egress queues with a dynamic threshold (Choudhury and Hahne,
/// "Dynamic queue length thresholds for shared-memory packet switches", IEEE/ACM ToN 1998):
/// a queue may grow to α times the space still free, so one congested port cannot take it all.
/// Under PFC the switch's ingress headrooms are carved out of its buffer beside the pool
/// ([`pfc`]): `total` is the pool, `headroom_used` what the headrooms hold.
#[derive(Debug, Clone)]
pub struct SharedBuffer {
    total: u64,
    used: u64,
    alpha: f64,
    headroom_used: u64,
    /// Most of the switch's buffer in use at once (pool and headrooms), bytes.
    pub max_used: u64,
}

impl SharedBuffer {
    /// A pool of `total` bytes with threshold factor `alpha`.
    pub fn new(total: u64, alpha: f64) -> SharedBuffer {
        SharedBuffer {
            total,
            used: 0,
            alpha,
            headroom_used: 0,
            max_used: 0,
        }
    }

    /// Bytes of the pool free now.
    #[inline]
    pub fn free(&self) -> u64 {
        self.total - self.used
    }

    /// Bytes the ingress headrooms hold now (PFC).
    pub fn headroom_used(&self) -> u64 {
        self.headroom_used
    }

    /// A frame went into an ingress's headroom (PFC).
    #[inline]
    pub fn take_headroom(&mut self, frame: u64) {
        self.headroom_used += frame;
        self.max_used = self.max_used.max(self.used + self.headroom_used);
    }

    /// A frame left an ingress's headroom (PFC).
    #[inline]
    pub fn release_headroom(&mut self, frame: u64) {
        self.headroom_used -= frame;
    }

    /// Whether a queue holding `queued` bytes may take a frame of `frame` bytes.
    #[inline]
    pub fn admits(&self, queued: u64, frame: u64) -> bool {
        let free = self.total - self.used;
        frame <= free && (queued + frame) as f64 <= self.alpha * free as f64
    }

    /// Bytes in use now.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// Capacity, bytes.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// A frame entered a queue of the pool.
    #[inline]
    pub fn take(&mut self, frame: u64) {
        self.used += frame;
        self.max_used = self.max_used.max(self.used + self.headroom_used);
    }

    /// A frame left a queue of the pool.
    #[inline]
    pub fn release(&mut self, frame: u64) {
        self.used -= frame;
    }
}

/// A token bucket as a virtual-time pacer (GCRA, the form of ATM's and tc's policers): each
/// frame moves the theoretical arrival time `tat` on by its length at the capped rate, and may
/// start once `tat` is less than one bucket ahead of now. Integer time, no refill events.
#[derive(Debug, Clone, Copy)]
struct Shaper {
    /// Capped rate, bits per second.
    rate: u64,
    /// Bucket depth, wire bytes.
    burst: u64,
    /// When the bucket would be full again had every frame so far been sent at `rate`.
    tat: SimTime,
}

impl Shaper {
    /// A frame of `wire` bytes (frame and physical overhead) asks to start at `now`: when it
    /// may, and the bucket charged for it.
    #[inline]
    fn admit(&mut self, now: SimTime, wire: u64) -> SimTime {
        let tolerance = tx_time(self.burst.max(wire), self.rate) - tx_time(wire, self.rate);
        let start = now.max(self.tat.saturating_sub(tolerance));
        self.tat = self.tat.max(start) + tx_time(wire, self.rate);
        start
    }
}

/// What happened to a packet offered to a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enqueued {
    /// The queue was full: the packet is gone.
    Dropped,
    /// The link was idle: transmission ends at this time.
    Transmitting(SimTime),
    /// Waiting behind other packets.
    Waiting,
}

/// A one-way link: an egress queue that serializes at `rate`, then a pipe of `delay`.
#[derive(Debug)]
pub struct Link {
    /// Bits per second.
    pub rate: u64,
    /// Propagation delay.
    pub delay: SimTime,
    /// Bytes on the wire per packet beyond its frame (preamble and inter-frame gap).
    pub phy_overhead: u64,
    /// Picoseconds a byte takes at `rate` when that is a whole number (every rate that divides
    /// 8e12), else 0: a frame's serialization is then a multiply, not the 64-bit division
    /// that was ~3% of the 8000-sender NDP incast's samples. The same time either way.
    ps_per_byte: u64,
    limit_bytes: u64,
    limit_packets: u32,
    mark_bytes: u64,
    mark_packets: u32,
    /// Packets waiting (with their frame bytes), the one in service at the front.
    queue: VecDeque<(PktId, u32)>,
    /// Frame bytes in `queue`.
    bytes: u64,
    /// Packets propagating, with their arrival time at the far end and their frame bytes (in
    /// the entry's padding: what a hop that ends here reads without the packet).
    pipe: Pipe,
    /// Delay jitter: each packet's delay is uniform in `delay ± jitter / 2`. Boxed, like the
    /// shaper: most links have neither, and the two inline made a link five cache lines
    /// instead of four (the 8192-host fat tree's ~50,000 links are fetched from memory hop by
    /// hop).
    jitter: Option<Box<(SimTime, Rng)>>,
    /// The head of `queue` is being serialized.
    busy: bool,
    /// Paused by the next hop (PFC): the packet in service finishes, no new one starts.
    paused: bool,
    /// Token bucket in front of the wire (a host's egress cap, or a virtual NIC's tbf), if any.
    shaper: Option<Box<Shaper>>,
    paused_since: SimTime,
    /// Counters.
    pub stats: QueueStats,
    /// Whether frames take their serialization time on the wire; false for a virtual NIC
    /// (`topology.nic_burst`), whose shaper alone spaces them.
    serializes: bool,
}

impl Link {
    /// A link with the given rate, delay and drop-tail limit.
    pub fn new(rate: u64, delay: SimTime, limit: QueueLimit, phy_overhead: u64) -> Link {
        let ps_per_byte = crate::units::ps_per_byte(rate).unwrap_or(0);
        Link {
            rate,
            delay,
            phy_overhead,
            ps_per_byte,
            limit_bytes: limit.bytes.unwrap_or(u64::MAX),
            limit_packets: limit.packets.unwrap_or(u32::MAX),
            mark_bytes: u64::MAX,
            mark_packets: u32::MAX,
            queue: VecDeque::new(),
            serializes: true,
            bytes: 0,
            pipe: Pipe::default(),
            jitter: None,
            busy: false,
            paused: false,
            paused_since: 0,
            shaper: None,
            stats: QueueStats::default(),
        }
    }

    /// Shape the link's output with a token bucket of `rate` bits per second and `burst`
    /// wire bytes (at least one frame's worth is always allowed).
    pub fn with_shaper(mut self, rate: u64, burst: u64) -> Link {
        self.shaper = Some(Box::new(Shaper {
            rate,
            burst,
            tat: 0,
        }));
        self
    }

    /// Mark ECN-capable packets that arrive to a queue at or above `threshold` (DCTCP's K).
    pub fn with_marking(mut self, threshold: QueueLimit) -> Link {
        self.mark_bytes = threshold.bytes.unwrap_or(u64::MAX);
        self.mark_packets = threshold.packets.unwrap_or(u32::MAX);
        self
    }

    /// Draw each packet's delay uniformly from `delay ± jitter / 2` with `rng` (at most
    /// `2 × delay`; the scenario's validation checks it).
    pub fn set_jitter(&mut self, jitter: SimTime, rng: Rng) {
        debug_assert!(jitter <= 2 * self.delay);
        self.jitter = (jitter > 0).then(|| Box::new((jitter, rng)));
    }

    /// Make the link a virtual NIC shaped by tc tbf (`topology.nic_burst`): a token bucket of
    /// `burst` wire bytes at the link's own rate instead of a wire's serialization, so after
    /// an idle spell up to `burst` bytes leave at once, then frames leave at the link's rate.
    pub fn set_burst(&mut self, burst: u64) {
        if burst > 0 {
            self.shaper = Some(Box::new(Shaper {
                rate: self.rate,
                burst,
                tat: 0,
            }));
            self.serializes = false;
        }
    }

    /// The packet being serialized, if any.
    pub fn head(&self) -> Option<PktId> {
        self.queue.front().map(|&(id, _)| id).filter(|_| self.busy)
    }

    /// The packets waiting, with their frame bytes, the one in service first.
    pub fn waiting(&self) -> impl Iterator<Item = (PktId, u32)> + '_ {
        self.queue.iter().copied()
    }

    /// Whether the link is paused (PFC).
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Time the link has spent paused up to `now`, the pause in progress included.
    #[inline]
    pub fn paused_until(&self, now: SimTime) -> SimTime {
        if self.paused {
            self.stats.paused + (now - self.paused_since)
        } else {
            self.stats.paused
        }
    }

    /// A PAUSE (XOFF) took effect: the frame on the wire completes, the next waits.
    pub fn pause(&mut self, now: SimTime) {
        if !self.paused {
            self.paused = true;
            self.paused_since = now;
            self.stats.pauses += 1;
        }
    }

    /// A resume (XON) took effect. Returns the end of the transmission it starts, if any.
    pub fn resume(&mut self, now: SimTime) -> Option<SimTime> {
        if !self.paused {
            return None;
        }
        self.paused = false;
        self.stats.paused += now - self.paused_since;
        self.start_next(now)
    }

    /// Start serializing the head of the queue if the link is free to; returns when it ends.
    #[inline]
    fn start_next(&mut self, now: SimTime) -> Option<SimTime> {
        if self.busy || self.paused {
            return None;
        }
        let &(_, frame) = self.queue.front()?;
        self.busy = true;
        // A shaper (a capped host's pacer, or a virtual NIC's tbf) decides when the frame
        // may start; validation allows one per NIC.
        let start = match self.shaper.as_mut() {
            Some(sh) => sh.admit(now, frame as u64 + self.phy_overhead),
            None => now,
        };
        let t = self.serialization(frame);
        Some(start + if self.serializes { t } else { 0 })
    }

    /// Count a packet dropped before it reached this queue (a shared buffer refused it).
    pub fn count_drop(&mut self) {
        self.stats.drops += 1;
    }

    /// Whether a packet arriving now is marked CE (counted as such).
    #[inline]
    pub fn marks_arrival(&mut self) -> bool {
        let congested =
            self.bytes >= self.mark_bytes || self.queue.len() as u32 >= self.mark_packets;
        self.stats.marks += u64::from(congested);
        congested
    }

    /// The limit this link's queue enforces.
    pub fn limit(&self) -> QueueLimit {
        QueueLimit {
            bytes: (self.limit_bytes != u64::MAX).then_some(self.limit_bytes),
            packets: (self.limit_packets != u32::MAX).then_some(self.limit_packets),
        }
    }

    /// Frame bytes queued now (the packet in service included).
    pub fn queued_bytes(&self) -> u64 {
        self.bytes
    }

    /// Packets propagating in the pipe now.
    pub fn in_pipe(&self) -> usize {
        self.pipe.len()
    }

    /// The packet that entered the pipe last (the one whose transmission just ended).
    #[inline]
    pub fn newest_in_pipe(&self) -> Option<PktId> {
        self.pipe.back().map(|(_, id, _)| id)
    }

    /// The frame bytes of the packet that entered the pipe last.
    #[inline]
    pub fn newest_frame_in_pipe(&self) -> Option<u32> {
        self.pipe.back().map(|(_, _, frame)| frame)
    }

    /// The packet that reaches the far end next.
    #[inline]
    pub fn arriving(&self) -> Option<PktId> {
        self.pipe.front().map(|(_, id, _)| id)
    }

    /// The packet being serialized and its frame bytes, if any.
    #[inline]
    pub fn head_frame(&self) -> Option<(PktId, u32)> {
        self.queue.front().copied().filter(|_| self.busy)
    }

    #[inline]
    fn serialization(&mut self, frame: u32) -> SimTime {
        let bytes = frame as u64 + self.phy_overhead;
        let t = match self.ps_per_byte {
            0 => tx_time(bytes, self.rate),
            ps => bytes * ps,
        };
        debug_assert_eq!(t, tx_time(bytes, self.rate));
        self.stats.busy += t;
        t
    }

    /// Serialize a frame of `frame` bytes from `now` for a caller that keeps its own queues in
    /// front of the link and this link's queue empty (NDP's trimming port): returns when it
    /// ends. The caller then hands the packet to [`Link::into_pipe`].
    #[inline]
    pub fn serialize(&mut self, now: SimTime, frame: u32) -> SimTime {
        now + self.serialization(frame)
    }

    /// Packet `id` of `frame` bytes has been serialized at `now`: it enters the pipe. Returns
    /// its arrival time if the pipe was empty (the caller schedules that arrival; later ones
    /// follow from [`Link::arrive`]).
    #[inline]
    pub fn into_pipe(&mut self, now: SimTime, id: PktId, frame: u32) -> Option<SimTime> {
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += frame as u64;
        let mut at = now + self.delay;
        if let Some((jitter, rng)) = self.jitter.as_deref_mut() {
            at = at - *jitter / 2 + rng.up_to(*jitter);
            // A link delivers in order: a packet never overtakes the one before it.
            if let Some((last, _, _)) = self.pipe.back() {
                at = at.max(last);
            }
        }
        let pipe_was_empty = self.pipe.is_empty();
        self.pipe.push_back((at, id, frame));
        pipe_was_empty.then_some(at)
    }

    /// Offer packet `id` of `frame` bytes at `now`: drop-tail.
    #[inline]
    pub fn enqueue(&mut self, now: SimTime, id: PktId, frame: u32) -> Enqueued {
        let f = frame as u64;
        if self.bytes + f > self.limit_bytes || self.queue.len() as u32 >= self.limit_packets {
            self.stats.drops += 1;
            return Enqueued::Dropped;
        }
        self.queue.push_back((id, frame));
        self.bytes += f;
        self.stats.max_bytes = self.stats.max_bytes.max(self.bytes);
        self.stats.max_packets = self.stats.max_packets.max(self.queue.len() as u32);
        match self.start_next(now) {
            Some(t) => Enqueued::Transmitting(t),
            None => Enqueued::Waiting,
        }
    }

    /// The packet in service has been serialized: it enters the pipe. Returns its arrival if
    /// the pipe was empty (the caller schedules it) and, if another packet starts (the link is
    /// not paused), the end of its transmission.
    #[inline]
    pub fn finish_tx(&mut self, now: SimTime) -> (Option<SimTime>, Option<SimTime>) {
        let (id, f) = self.queue.pop_front().expect("finish_tx on an idle link");
        debug_assert!(self.busy);
        self.busy = false;
        self.bytes -= f as u64;
        let arrival = self.into_pipe(now, id, f);
        (arrival, self.start_next(now))
    }

    /// The packet at the head of the pipe reaches the far end. Returns it and the arrival time
    /// of the next one, if any.
    #[inline]
    pub fn arrive(&mut self) -> (PktId, Option<SimTime>) {
        let (_, id, _) = self.pipe.pop_front().expect("arrive on an empty pipe");
        (id, self.pipe.front().map(|(t, _, _)| t))
    }
}

/// A link's pipe: packets propagating (arrival time, packet, frame bytes), oldest first. The
/// oldest lives in the link itself and only those behind it in a buffer of their own: on most
/// links a packet's serialization outlasts the propagation (a 9 KB frame takes 7.2 µs at
/// 10 Gbps, the delay is 1 µs), so the pipe holds one packet and every hop read and wrote a
/// buffer far from the link. In the 8000-sender NDP incast that buffer's cache miss was a
/// quarter of the run's samples.
#[derive(Debug, Default)]
struct Pipe {
    front: Option<(SimTime, PktId, u32)>,
    rest: VecDeque<(SimTime, PktId, u32)>,
}

impl Pipe {
    #[inline]
    fn len(&self) -> usize {
        usize::from(self.front.is_some()) + self.rest.len()
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.front.is_none()
    }

    #[inline]
    fn front(&self) -> Option<(SimTime, PktId, u32)> {
        self.front
    }

    #[inline]
    fn back(&self) -> Option<(SimTime, PktId, u32)> {
        self.rest.back().copied().or(self.front)
    }

    #[inline]
    fn push_back(&mut self, e: (SimTime, PktId, u32)) {
        if self.front.is_none() {
            self.front = Some(e);
        } else {
            self.rest.push_back(e);
        }
    }

    #[inline]
    fn pop_front(&mut self) -> Option<(SimTime, PktId, u32)> {
        let e = self.front.take()?;
        self.front = self.rest.pop_front();
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(limit_bytes: u64) -> Link {
        Link::new(
            1_000_000_000,
            1_000,
            QueueLimit {
                bytes: Some(limit_bytes),
                packets: None,
            },
            20,
        )
    }

    #[test]
    fn idle_link_starts_serializing_at_once() {
        let mut l = link(10_000);
        assert_eq!(l.enqueue(0, 1, 1518), Enqueued::Transmitting(1538 * 8000));
        assert_eq!(l.enqueue(0, 2, 1518), Enqueued::Waiting);
        assert_eq!(l.queued_bytes(), 3036);
    }

    #[test]
    fn a_shaped_link_sends_its_burst_at_once_then_paces_at_its_rate() {
        // A 1 Gbps tbf with a two-frame bucket: 1538 wire bytes take 12.304 us at the rate.
        let frame_time = 1538 * 8000;
        let mut l = link(100_000);
        l.set_burst(2 * 1538);
        assert_eq!(l.enqueue(0, 1, 1518), Enqueued::Transmitting(0));
        for id in 2..=4 {
            assert_eq!(l.enqueue(0, id, 1518), Enqueued::Waiting);
        }
        // The bucket was full: the second frame leaves at once too, the third waits one
        // frame time for its tokens, the fourth one more.
        assert_eq!(l.finish_tx(0).1, Some(0));
        assert_eq!(l.finish_tx(0).1, Some(frame_time));
        assert_eq!(l.finish_tx(frame_time).1, Some(2 * frame_time));
        assert_eq!(l.finish_tx(2 * frame_time).1, None);
        // Idle for 1.5 frame times: the bucket refilled 1.5 frames, no more; the next frame
        // leaves at once, the one after waits for the missing half frame.
        let t = 2 * frame_time + 3 * frame_time / 2;
        assert_eq!(l.enqueue(t, 5, 1518), Enqueued::Transmitting(t));
        assert_eq!(l.enqueue(t, 6, 1518), Enqueued::Waiting);
        assert_eq!(l.finish_tx(t).1, Some(t + frame_time / 2));
        // After a long idle spell the bucket holds two frames, never more.
        let t = t + frame_time / 2 + 1_000 * frame_time;
        l.finish_tx(t - 1_000 * frame_time);
        for id in 7..=9 {
            l.enqueue(t, id, 1518);
        }
        assert_eq!(l.finish_tx(t).1, Some(t));
        assert_eq!(l.finish_tx(t).1, Some(t + frame_time));
    }

    #[test]
    fn drop_tail_at_the_byte_limit_and_not_before() {
        let mut l = link(3036);
        assert_ne!(l.enqueue(0, 1, 1518), Enqueued::Dropped);
        assert_ne!(l.enqueue(0, 2, 1518), Enqueued::Dropped);
        assert_eq!(l.enqueue(0, 3, 1), Enqueued::Dropped);
        assert_eq!(l.stats.drops, 1);
        assert_eq!(l.stats.max_bytes, 3036);
    }

    #[test]
    fn packet_limit() {
        let mut l = Link::new(
            1_000_000_000,
            0,
            QueueLimit {
                bytes: None,
                packets: Some(1),
            },
            0,
        );
        assert_ne!(l.enqueue(0, 1, 100), Enqueued::Dropped);
        assert_eq!(l.enqueue(0, 2, 100), Enqueued::Dropped);
    }

    #[test]
    fn fifo_through_queue_and_pipe() {
        let mut l = link(100_000);
        let t1 = match l.enqueue(0, 7, 1518) {
            Enqueued::Transmitting(t) => t,
            other => panic!("{other:?}"),
        };
        l.enqueue(0, 8, 1518);
        let (arrival, next) = l.finish_tx(t1);
        assert_eq!(arrival, Some(t1 + 1_000));
        assert_eq!(next, Some(2 * t1));
        let (arrival, next) = l.finish_tx(2 * t1);
        assert_eq!(arrival, None, "the pipe was not empty");
        assert_eq!(next, None);
        assert_eq!(l.arrive(), (7, Some(2 * t1 + 1_000)));
        assert_eq!(l.arrive(), (8, None));
        assert_eq!(l.queued_bytes(), 0);
    }

    #[test]
    fn a_paused_link_finishes_its_frame_then_waits_for_resume() {
        let mut l = link(100_000);
        let t1 = match l.enqueue(0, 1, 1518) {
            Enqueued::Transmitting(t) => t,
            other => panic!("{other:?}"),
        };
        l.enqueue(0, 2, 1518);
        l.pause(10);
        let (_, next) = l.finish_tx(t1);
        assert_eq!(next, None, "paused: the second frame waits");
        assert_eq!(l.head(), None);
        assert_eq!(l.enqueue(t1, 3, 1518), Enqueued::Waiting);
        let t2 = l.resume(5 * t1).expect("resume starts the waiting frame");
        assert_eq!(t2, 6 * t1);
        assert_eq!(l.head(), Some(2));
        assert_eq!(l.resume(5 * t1), None, "a second resume is a no-op");
        assert_eq!(l.stats.pauses, 1);
        assert_eq!(l.stats.paused, 5 * t1 - 10);
    }

    #[test]
    fn a_caller_kept_queue_uses_only_serialization_and_pipe() {
        let mut l = link(0);
        let t = l.serialize(10, 1518);
        assert_eq!(t, 10 + 1538 * 8000);
        assert_eq!(
            l.into_pipe(t, 4, 1518),
            Some(t + 1_000),
            "first in the pipe"
        );
        assert_eq!(l.into_pipe(t + 1, 5, 64), None);
        assert_eq!(l.arrive(), (4, Some(t + 1 + 1_000)));
        assert_eq!(l.arrive(), (5, None));
        assert_eq!((l.stats.tx_packets, l.stats.tx_bytes), (2, 1582));
        assert_eq!(l.stats.busy, 1538 * 8000);
        assert_eq!(l.queued_bytes(), 0);
    }

    #[test]
    fn jittered_delays_stay_within_half_the_jitter_and_in_order() {
        let mut l = link(0);
        l.set_jitter(1_000, Rng::new(1, 2));
        let (mut lo, mut hi) = (SimTime::MAX, 0);
        for i in 0..2_000u64 {
            // Far enough apart that ordering never clamps: each delay is the jitter's own.
            let sent = i * 10_000;
            let d = l.into_pipe(sent, i as PktId, 64).expect("an empty pipe") - sent;
            l.arrive();
            lo = lo.min(d);
            hi = hi.max(d);
        }
        assert!(lo >= 500 && hi <= 1_500, "delay 1000 ± 500: got {lo}..{hi}");
        assert!(
            lo < 550 && hi > 1_450,
            "the whole range is used: got {lo}..{hi}"
        );
        // Back to back, a packet never overtakes the one before it.
        let mut l = link(0);
        l.set_jitter(2_000, Rng::new(1, 3));
        let mut first = None;
        for i in 0..100u64 {
            first = first.or(l.into_pipe(i, i as PktId, 64));
        }
        let mut prev = first.unwrap();
        for i in 0..100u64 {
            let (id, next) = l.arrive();
            assert_eq!(id, i as PktId);
            if let Some(t) = next {
                assert!(t >= prev);
                prev = t;
            }
        }
    }

    #[test]
    fn a_shaped_link_sends_at_the_cap_after_its_burst() {
        // 1 Gbps wire, capped at 800 Mbps, a bucket of two 1538-byte wire frames.
        let mut l = link(1_000_000).with_shaper(800_000_000, 2 * 1538);
        let wire = 1538 * 8000; // one frame at the line rate, ps
        let capped = 1538 * 10_000; // one frame at the cap
        let mut t = match l.enqueue(0, 0, 1518) {
            Enqueued::Transmitting(t) => t,
            other => panic!("{other:?}"),
        };
        assert_eq!(t, wire, "the first frame goes at once, at the line rate");
        for i in 1..10 {
            l.enqueue(0, i, 1518);
        }
        let mut ends = vec![t];
        for _ in 1..10 {
            t = l.finish_tx(t).1.expect("the next frame");
            ends.push(t);
        }
        // The bucket refills at the cap while frames drain it at the line rate, so a bucket
        // of two frames lets six go back to back (each takes 0.2 of a capped frame time more
        // than it refills); then one leaves per capped frame time.
        for (k, &end) in ends[..6].iter().enumerate() {
            assert_eq!(end, (k as u64 + 1) * wire, "frame {k}");
        }
        for w in ends[6..].windows(2) {
            assert_eq!(w[1] - w[0], capped);
        }
        assert_eq!(l.stats.busy, 10 * wire, "serialization is at the line rate");
    }

    #[test]
    fn pool_reuses_slots() {
        let mut p = PacketPool::default();
        let a = p.alloc(7u64);
        p.free(a);
        let b = p.alloc(8u64);
        assert_eq!(a, b);
        assert_eq!(p.live(), 1);
    }
}
