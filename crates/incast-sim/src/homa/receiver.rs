//! The receiving end of Homa (clock-free): each incoming message's packets and grants, the
//! host's grant scheduler, and the resend timer (Montazeri et al., SIGCOMM 2018).
//!
//! - Flow control and priorities: a receiver grants the message with the fewest bytes still to arrive first
//!   (SRPT), keeping RTTbytes granted beyond what has arrived, so a granted message never
//!   idles its sender, and never more than `overcommit` × RTTbytes granted and not yet
//!   arrived over all its messages, so each arriving packet grants about one more and an
//!   incast of marked responses holds a bounded queue (§3.5, §3.6); the levels of scheduled
//!   packets come from the receiver too.
//! - Overcommitment: it grants `overcommit` messages at once, so a sender busy elsewhere does not waste
//!   the receiver's link. Of the granted messages the shortest gets the highest scheduled
//!   level, and when fewer are granted than there are levels they take the lowest ones, so a
//!   shorter message arriving later can still go above them.
//! - Lost packets: a message missing granted bytes, of which nothing has arrived for the resend
//!   timeout, is asked for again (RESEND); a BUSY from its sender restarts the wait.

use super::packets::Layout;
use crate::units::SimTime;

/// One incoming message.
#[derive(Debug, Clone)]
pub struct Incoming {
    bytes: u64,
    layout: Layout,
    packets: u32,
    /// Which packets arrived (a bit each).
    got: Vec<u64>,
    arrived: u32,
    /// Bytes arrived.
    received: u64,
    /// Of them, bytes past the unscheduled ones.
    sched_received: u64,
    /// The end of the furthest packet arrived.
    reach: u64,
    /// Bytes the sender may have sent: its unscheduled bytes, then the grants (a packet
    /// boundary of [`Layout`] or the message's end).
    granted: u64,
    /// Its unscheduled bytes (sent unasked), in whole packets.
    unsched: u64,
    /// Level of the latest grant.
    level: u8,
    /// Whether the receiver granted it anything yet.
    scheduled: bool,
    /// The level its unscheduled packets take: a RESEND for a message never granted asks
    /// for its bytes there (they are unscheduled bytes).
    unsched_level: u8,
    /// Last packet, BUSY or RESEND, the start of the resend timer.
    heard: SimTime,
    resends: u32,
    duplicates: u32,
    /// Where the host's grant scheduler holds it: [`IN_TOP`], a place in its heap, or
    /// [`NOWHERE`] (needs no grants).
    slot: u32,
}

impl Incoming {
    /// A message of `bytes` expected from `now`, whose sender sends `unsched` bytes unasked.
    pub fn new(now: SimTime, bytes: u64, mtu: u64, unsched: u64) -> Incoming {
        let unsched = unsched.min(bytes).max(1);
        let layout = Layout::new(bytes, mtu, unsched);
        let packets = layout.packets();
        // The sender sends whole packets: its unscheduled bytes end on a boundary (an empty
        // message's one packet counts as one byte, so that its loss is asked for).
        let unsched = layout.ceil(unsched).max(1);
        Incoming {
            bytes,
            layout,
            packets,
            got: vec![0; packets.div_ceil(64) as usize],
            arrived: 0,
            received: 0,
            sched_received: 0,
            reach: 0,
            granted: unsched,
            unsched,
            level: 0,
            scheduled: false,
            unsched_level: 0,
            heard: now,
            resends: 0,
            duplicates: 0,
            slot: NOWHERE,
        }
    }

    /// Its sender sends its unscheduled packets at `level` (see [`Incoming::on_timer`]).
    pub fn unscheduled_at(mut self, level: u8) -> Incoming {
        self.unsched_level = level;
        self
    }

    /// A data packet of `len` bytes at `offset` arrived at `now`: whether it was new.
    pub fn on_data(&mut self, now: SimTime, offset: u64, len: u32) -> bool {
        self.heard = now;
        let k = self.layout.index(offset);
        if k >= self.packets as usize || self.got[k / 64] & (1 << (k % 64)) != 0 {
            self.duplicates += 1;
            return false;
        }
        self.got[k / 64] |= 1 << (k % 64);
        self.arrived += 1;
        self.received += u64::from(len);
        if offset >= self.unsched {
            self.sched_received += u64::from(len);
        }
        self.reach = self.reach.max(offset + u64::from(len));
        // A packet carries what its sender may send (never past a grant, kept for safety).
        self.granted = self.granted.max(offset + u64::from(len));
        true
    }

    /// Every packet arrived.
    #[inline]
    pub fn complete(&self) -> bool {
        self.arrived == self.packets
    }

    /// Bytes still to arrive: the scheduler's SRPT key.
    #[inline]
    pub fn remaining(&self) -> u64 {
        self.bytes - self.received
    }

    /// Bytes still to grant.
    #[inline]
    pub fn needs_grants(&self) -> bool {
        self.granted < self.bytes && !self.complete()
    }

    /// Bytes granted (beyond the unscheduled ones) and not yet arrived: what the receiver's
    /// grants have put in flight towards it. A hole below a packet that arrived counts as in
    /// flight until it arrives: a message's packets need not arrive in order (a later one
    /// sent at a higher level after its rank rose overtakes earlier ones in a priority queue;
    /// sprayed ones take different paths), so a hole is not known lost until the resend
    /// timer says so, and its RESEND asks for the same bytes again. A lost packet so holds
    /// its share of the budget until its resent copy arrives, as in the authors' RAMCloud
    /// transport, which grants from the bytes received.
    #[inline]
    pub fn granted_out(&self) -> u64 {
        self.granted.saturating_sub(self.unsched) - self.sched_received
    }

    /// The end of the furthest packet arrived: a packet below it arrives out of order.
    #[inline]
    pub fn reach(&self) -> u64 {
        self.reach
    }

    /// Bytes arrived.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// The first packet missing below the granted bytes, as a byte range up to the next that
    /// arrived (or the granted end).
    fn missing(&self) -> Option<(u64, u64)> {
        self.missing_from(0)
    }

    /// The first packet missing from byte `from` (a packet's start) on below the granted bytes,
    /// as a byte range up to the next that arrived (or the granted end).
    pub fn missing_from(&self, from: u64) -> Option<(u64, u64)> {
        let granted = self.layout.covering(self.granted);
        // Word by word (it runs after every packet of the message): the first clear bit, then
        // the first set one after it.
        let first = self.first_bit(self.layout.covering(from), granted, false)?;
        let end = self.first_bit(first, granted, true).unwrap_or(granted);
        Some((
            self.layout.start(first),
            self.layout.start(end).min(self.granted),
        ))
    }

    /// The first packet in `from..to` whose bit is `set`.
    fn first_bit(&self, from: usize, to: usize, set: bool) -> Option<usize> {
        let mut k = from;
        while k < to {
            let word = if set {
                self.got[k / 64]
            } else {
                !self.got[k / 64]
            };
            let word = word >> (k % 64);
            if word != 0 {
                let at = k + word.trailing_zeros() as usize;
                return (at < to).then_some(at);
            }
            k += 64 - k % 64;
        }
        None
    }

    /// When the resend timer fires: `timeout` after the last word of the message, if granted
    /// bytes are missing.
    pub fn deadline(&self, timeout: SimTime) -> Option<SimTime> {
        self.missing().map(|_| self.heard + timeout)
    }

    /// The resend timer at `now`: the first range to ask for again and its level, if due (the
    /// others follow from [`Incoming::missing_from`] its end). The level is the latest
    /// grant's, or, for a message never granted (its unscheduled bytes lost), its unscheduled
    /// level: unscheduled bytes go at the unscheduled levels (the paper, §3.4), and the
    /// authors' RAMCloud transport asks for a message it has not scheduled at the unscheduled
    /// priority of its size.
    pub fn on_timer(&mut self, now: SimTime, timeout: SimTime) -> Option<(u64, u64, u8)> {
        if self.deadline(timeout)? > now {
            return None;
        }
        self.heard = now;
        self.resends += 1;
        let (from, to) = self.missing()?;
        let level = if self.scheduled {
            self.level
        } else {
            self.unsched_level
        };
        Some((from, to, level))
    }

    /// Its sender answered BUSY at `now` (it will send, only later), or the receiver granted
    /// it more: the wait for its packets starts again.
    pub fn restart(&mut self, now: SimTime) {
        self.heard = self.heard.max(now);
    }

    /// RESENDs sent, and duplicate packets that arrived.
    #[cfg(test)]
    pub fn counts(&self) -> (u32, u32) {
        (self.resends, self.duplicates)
    }
}

/// A grant: message, bytes granted up to, level.
pub type Grant = (u32, u64, u8);

/// [`Incoming::slot`] of a message the scheduler does not hold.
const NOWHERE: u32 = u32::MAX;
/// [`Incoming::slot`] of a message among the granted ones.
const IN_TOP: u32 = u32::MAX - 1;

/// A host's grant scheduler.
///
/// Kept in SRPT order as bytes arrive rather than sorted at each packet: an 8000:1 incast
/// holds 8000 messages at one receiver, and a scan of all of them per arriving packet made
/// the run quadratic. The `overcommit` messages with the fewest bytes to arrive are `top`
/// (sorted); the others wait in `rest`, a binary min-heap whose every key is above `top`'s
/// last. A message's key (remaining bytes, then its number) only falls as its bytes arrive,
/// so an arrival moves it up within `top`, or up the heap and maybe into `top`; a message
/// that needs no more grants leaves, and the heap's least takes its place. Each step is
/// O(log n) and reuses the two vectors' room: no allocation per packet.
#[derive(Debug, Clone)]
pub struct Scheduler {
    /// Messages granted at once.
    overcommit: usize,
    /// Scheduled levels (0 up to this).
    levels: u8,
    /// Bytes kept granted beyond what arrived.
    rtt_bytes: u64,
    /// The messages granted now, fewest remaining bytes first.
    top: Vec<u32>,
    /// The other messages needing grants: a min-heap by SRPT key; each message's place in it
    /// is its [`Incoming::slot`].
    rest: Vec<u32>,
    /// Bytes granted and not yet arrived, over every message it granted
    /// ([`Incoming::granted_out`]), and the most it reached.
    outstanding: u64,
    peak: u64,
    /// The most bytes it keeps granted and not arrived: `overcommit` × RTTbytes (in whole
    /// packets).
    limit: u64,
}

/// A message's SRPT key: fewer bytes to arrive first, then the lower message number.
#[inline]
fn key(msgs: &[Incoming], m: u32) -> (u64, u32) {
    (msgs[m as usize].remaining(), m)
}

impl Scheduler {
    /// A scheduler granting `overcommit` messages at once over `levels` scheduled levels,
    /// `rtt_bytes` beyond what arrived, in packets of `mtu`.
    pub fn new(overcommit: u32, levels: u8, rtt_bytes: u64, mtu: u64) -> Scheduler {
        let overcommit = overcommit.max(1) as usize;
        Scheduler {
            overcommit,
            levels: levels.max(1),
            rtt_bytes,
            top: Vec::with_capacity(overcommit),
            rest: Vec::new(),
            outstanding: 0,
            peak: 0,
            limit: overcommit as u64 * rtt_bytes.div_ceil(mtu.max(1)) * mtu,
        }
    }

    /// Message `m` will need grants.
    pub fn add(&mut self, msgs: &mut [Incoming], m: u32) {
        // Room for every message held, so that moving one from `top` to the heap on a
        // packet's arrival never grows it.
        self.rest.reserve(self.top.len() + 1);
        self.enter(msgs, m);
    }

    /// A packet arrived: its message's bytes granted and not arrived went from `before` to
    /// `after` (fewer, or more when a packet past a lost grant granted itself).
    #[inline]
    pub fn arrived(&mut self, before: u64, after: u64) {
        self.outstanding = self.outstanding + after - before;
        self.peak = self.peak.max(self.outstanding);
    }

    /// The most bytes granted and not yet arrived at once.
    pub fn peak_outstanding(&self) -> u64 {
        self.peak
    }

    /// Messages waiting for grants or being granted.
    #[cfg(test)]
    pub fn active(&self) -> usize {
        self.top.len() + self.rest.len()
    }

    /// Bytes of message `m` arrived (its key fell) or its grants ended: move it to its place.
    pub fn update(&mut self, msgs: &mut [Incoming], m: u32) {
        let slot = msgs[m as usize].slot;
        if slot == NOWHERE {
            return;
        }
        if !msgs[m as usize].needs_grants() {
            self.leave(msgs, m);
        } else if slot == IN_TOP {
            let at = self.top.iter().position(|&t| t == m).expect("held in top");
            let to = self.top[..at].partition_point(|&t| key(msgs, t) < key(msgs, m));
            self.top[to..=at].rotate_right(1);
        } else {
            self.sift_up(msgs, slot as usize);
            let last = *self
                .top
                .last()
                .expect("the heap holds messages only when top is full");
            if key(msgs, m) < key(msgs, last) {
                // Below every other heap key, so at the root now.
                let root = self.pop_rest(msgs);
                debug_assert_eq!(root, Some(m));
                self.top.pop();
                self.push_rest(msgs, last);
                self.insert_top(msgs, m);
            }
        }
    }

    /// A message needing grants takes its place.
    fn enter(&mut self, msgs: &mut [Incoming], m: u32) {
        if self.top.len() < self.overcommit {
            self.insert_top(msgs, m);
            return;
        }
        let last = self.top[self.top.len() - 1];
        if key(msgs, m) < key(msgs, last) {
            self.top.pop();
            self.push_rest(msgs, last);
            self.insert_top(msgs, m);
        } else {
            self.push_rest(msgs, m);
        }
    }

    /// Message `m` needs no more grants: out, and the heap's least into `top` if it was there.
    fn leave(&mut self, msgs: &mut [Incoming], m: u32) {
        let slot = msgs[m as usize].slot;
        msgs[m as usize].slot = NOWHERE;
        if slot != IN_TOP {
            self.remove_rest(msgs, slot as usize);
            return;
        }
        let at = self.top.iter().position(|&t| t == m).expect("held in top");
        self.top.remove(at);
        if let Some(next) = self.pop_rest(msgs) {
            // Above every key left in `top`: it goes last.
            msgs[next as usize].slot = IN_TOP;
            self.top.push(next);
        }
    }

    fn insert_top(&mut self, msgs: &mut [Incoming], m: u32) {
        let at = self.top.partition_point(|&t| key(msgs, t) < key(msgs, m));
        self.top.insert(at, m);
        msgs[m as usize].slot = IN_TOP;
    }

    fn place(&mut self, msgs: &mut [Incoming], i: usize, m: u32) {
        self.rest[i] = m;
        msgs[m as usize].slot = i as u32;
    }

    fn push_rest(&mut self, msgs: &mut [Incoming], m: u32) {
        self.rest.push(m);
        let i = self.rest.len() - 1;
        msgs[m as usize].slot = i as u32;
        self.sift_up(msgs, i);
    }

    /// Take the heap's least message out (its slot is left for the caller to set).
    fn pop_rest(&mut self, msgs: &mut [Incoming]) -> Option<u32> {
        let first = *self.rest.first()?;
        self.remove_rest(msgs, 0);
        Some(first)
    }

    /// Take the message at heap place `i` out.
    fn remove_rest(&mut self, msgs: &mut [Incoming], i: usize) {
        let last = self.rest.pop().expect("a place in the heap");
        if i < self.rest.len() {
            self.place(msgs, i, last);
            self.sift_up(msgs, i);
            self.sift_down(msgs, msgs[last as usize].slot as usize);
        }
    }

    fn sift_up(&mut self, msgs: &mut [Incoming], mut i: usize) {
        let m = self.rest[i];
        while i > 0 {
            let parent = (i - 1) / 2;
            let p = self.rest[parent];
            if key(msgs, p) <= key(msgs, m) {
                break;
            }
            self.place(msgs, i, p);
            i = parent;
        }
        self.place(msgs, i, m);
    }

    fn sift_down(&mut self, msgs: &mut [Incoming], mut i: usize) {
        let m = self.rest[i];
        let n = self.rest.len();
        loop {
            let mut child = 2 * i + 1;
            if child >= n {
                break;
            }
            if child + 1 < n && key(msgs, self.rest[child + 1]) < key(msgs, self.rest[child]) {
                child += 1;
            }
            let c = self.rest[child];
            if key(msgs, m) <= key(msgs, c) {
                break;
            }
            self.place(msgs, i, c);
            i = child;
        }
        self.place(msgs, i, m);
    }

    /// Grant after an arrival: the `overcommit` messages with the fewest bytes to arrive each
    /// get up to RTTbytes beyond what arrived (whole packets), at their rank's level, within
    /// the receiver's budget of `overcommit` × RTTbytes granted and not yet arrived
    /// (Montazeri et al., SIGCOMM 2018, §3.5: RTTbytes outstanding for each of at most
    /// `overcommitment` messages). A fully granted message leaves the granted ones, but its
    /// bytes in flight keep their share of the budget until they arrive, so each arriving
    /// packet frees about one packet's grant, as the authors' RAMCloud transport grants one
    /// packet per arriving packet. The grants that move a message on go to `out`.
    pub fn grant(&mut self, msgs: &mut [Incoming], out: &mut Vec<Grant>) {
        let n = self.top.len().min(usize::from(self.levels));
        for (rank, &m) in self.top.iter().enumerate() {
            let level = (n - 1).saturating_sub(rank) as u8;
            let msg = &mut msgs[m as usize];
            // Every grant ends on a packet boundary: the sender sends the whole packet a grant
            // ends in, so a grant inside one would let it send bytes the budget never counted.
            let want = msg.layout.ceil(msg.received + self.rtt_bytes);
            // Within the receiver's budget: bytes still in flight from an earlier grant (a
            // message that fell out of the granted ones, or one granted whole) count too.
            let room = self.limit.saturating_sub(self.outstanding);
            let want = match want.saturating_sub(msg.granted) {
                more if more <= room => want,
                _ => msg.layout.floor(msg.granted + room),
            };
            if want > msg.granted || level != msg.level {
                let before = msg.granted_out();
                msg.granted = msg.granted.max(want);
                self.outstanding += msg.granted_out() - before;
                msg.level = level;
                msg.scheduled = true;
                out.push((m, msg.granted, level));
            }
        }
        self.peak = self.peak.max(self.outstanding);
        let mut i = 0;
        while i < self.top.len() {
            let m = self.top[i];
            if msgs[m as usize].needs_grants() {
                i += 1;
            } else {
                self.leave(msgs, m);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_completes_once_each_packet_arrives_and_duplicates_do_not_count() {
        let mut m = Incoming::new(0, 2_500, 1_000, 10_000);
        assert!(m.on_data(5, 2_000, 500));
        assert!(m.on_data(6, 0, 1_000));
        assert!(!m.on_data(7, 0, 1_000));
        assert!(!m.complete());
        assert_eq!(m.remaining(), 1_000);
        assert!(m.on_data(8, 1_000, 1_000));
        assert!(m.complete());
        assert_eq!(m.counts(), (0, 1));
        assert!(!m.needs_grants());
    }

    #[test]
    fn the_resend_timer_fires_at_its_deadline_not_before_and_asks_for_the_hole() {
        let t = 100;
        let mut m = Incoming::new(0, 5_000, 1_000, 3_000);
        // Packets 0 and 2 arrive at 10; 1 is lost. Granted: 3 000 bytes.
        m.on_data(10, 0, 1_000);
        m.on_data(10, 2_000, 1_000);
        assert_eq!(m.deadline(t), Some(110));
        assert_eq!(m.on_timer(109, t), None);
        assert_eq!(m.on_timer(110, t), Some((1_000, 2_000, 0)));
        // The wait starts again from the RESEND; a BUSY moves it on.
        assert_eq!(m.deadline(t), Some(210));
        m.restart(150);
        assert_eq!(m.on_timer(249, t), None);
        assert_eq!(m.on_timer(250, t), Some((1_000, 2_000, 0)));
        assert_eq!(m.counts().0, 2);
        // Every hole is a range of its own, found from the end of the one before.
        let mut h = Incoming::new(0, 6_000, 1_000, 6_000);
        for k in [0, 2, 3, 5] {
            h.on_data(1, k * 1_000, 1_000);
        }
        assert_eq!(h.on_timer(100, t), None);
        assert_eq!(h.on_timer(101, t), Some((1_000, 2_000, 0)));
        assert_eq!(h.missing_from(2_000), Some((4_000, 5_000)));
        assert_eq!(h.missing_from(5_000), None);
        // Nothing granted is missing: no timer (the message waits for grants, not packets).
        m.on_data(260, 1_000, 1_000);
        assert_eq!(m.deadline(t), None);
        assert_eq!(m.on_timer(10_000, t), None);
    }

    #[test]
    fn lost_unscheduled_packets_of_a_silent_message_are_asked_for_at_their_level() {
        // Never granted: its unscheduled level (6), not the lowest scheduled one.
        let mut m = Incoming::new(40, 1_500, 1_000, 10_000).unscheduled_at(6);
        assert_eq!(m.on_timer(139, 100), None);
        assert_eq!(m.on_timer(140, 100), Some((0, 1_500, 6)));
        // Once granted, at the latest grant's level.
        let mut g = vec![Incoming::new(0, 5_000, 1_000, 1_000).unscheduled_at(6)];
        let mut s = Scheduler::new(1, 2, 2_000, 1_000);
        let mut out = Vec::new();
        s.add(&mut g, 0);
        arrive(&mut s, &mut g, 0, 0, &mut out);
        assert_eq!(out, [(0, 3_000, 0)]);
        assert_eq!(g[0].on_timer(100, 100), None);
        assert_eq!(g[0].on_timer(101, 100), Some((1_000, 3_000, 0)));
    }

    fn msgs(sizes: &[u64], unsched: u64) -> Vec<Incoming> {
        sizes
            .iter()
            .map(|&b| Incoming::new(0, b, 1_000, unsched))
            .collect()
    }

    #[test]
    fn grants_go_to_the_fewest_remaining_bytes_within_the_overcommitment() {
        // Four messages, 2 000 unscheduled each; two granted at once over 4 levels.
        let mut m = msgs(&[50_000, 20_000, 30_000, 10_000], 2_000);
        let mut s = Scheduler::new(2, 4, 5_000, 1_000);
        (0..4).for_each(|i| s.add(&mut m, i));
        for i in 0..4 {
            m[i as usize].on_data(1, 0, 1_000);
            s.update(&mut m, i);
        }
        let mut out = Vec::new();
        s.grant(&mut m, &mut out);
        // The 10 KB one first (the higher of the two lowest levels), then the 20 KB one.
        assert_eq!(out, [(3, 6_000, 1), (1, 6_000, 0)]);
        // Once it is fully granted it leaves, but its 4 KB still in flight keep their share of
        // the budget (2 × 5 KB): the 30 KB one gets the 1 KB left.
        out.clear();
        for k in 1..5 {
            arrive(&mut s, &mut m, 3, k, &mut out);
        }
        let steps: Vec<u64> = out.iter().map(|g| g.1).collect();
        assert_eq!(steps, [7_000, 8_000, 9_000, 10_000]);
        out.clear();
        s.grant(&mut m, &mut out);
        assert_eq!(out, [(1, 6_000, 1), (2, 3_000, 0)]);
        assert_eq!((s.active(), s.outstanding), (3, 10_000));
        // Each of its packets that arrives frees one for the 30 KB one.
        out.clear();
        for k in 5..7 {
            arrive(&mut s, &mut m, 3, k, &mut out);
        }
        assert_eq!(out, [(2, 4_000, 0), (2, 5_000, 0)]);
    }

    /// Deliver packet `k` of message `i` to the scheduler as the host does: count the bytes
    /// granted and not arrived before and after, move it, grant.
    fn arrive(s: &mut Scheduler, m: &mut [Incoming], i: u32, k: u64, out: &mut Vec<Grant>) {
        let before = m[i as usize].granted_out();
        let len = (m[i as usize].bytes - k * 1_000).min(1_000) as u32;
        m[i as usize].on_data(1, k * 1_000, len);
        s.arrived(before, m[i as usize].granted_out());
        s.update(m, i);
        s.grant(m, out);
    }

    #[test]
    fn an_incast_of_marked_messages_keeps_granted_bytes_within_overcommitment_rtt_bytes() {
        // 200 responses of 10 KB, one packet unscheduled each (the incast optimization),
        // 2 granted at once, RTTbytes 10 KB: a budget of 20 KB granted and not arrived.
        let (n, bound) = (200_u32, 20_000);
        let mut m = msgs(&vec![10_000; n as usize], 1_000);
        let mut s = Scheduler::new(2, 2, 10_000, 1_000);
        let mut out = Vec::new();
        (0..n).for_each(|i| s.add(&mut m, i));
        // Every unscheduled packet arrives first (the onset): the first two fill the budget,
        // the rest get nothing.
        for i in 0..n {
            arrive(&mut s, &mut m, i, 0, &mut out);
        }
        assert_eq!(out, [(0, 10_000, 1), (1, 10_000, 0), (2, 3_000, 1)]);
        assert_eq!(s.outstanding, bound);
        // Then whatever is granted, the lowest-numbered message first, a packet at a time:
        // each arrival grants one packet more until every byte is granted.
        let mut arrivals = 0;
        while let Some(i) = (0..n).find(|&i| m[i as usize].granted > m[i as usize].received) {
            let k = m[i as usize].received / 1_000;
            out.clear();
            arrive(&mut s, &mut m, i, k, &mut out);
            arrivals += 1;
            if m.iter().any(Incoming::needs_grants) {
                assert_eq!(s.outstanding, bound, "the budget stays full");
                let granted: u64 = out.iter().map(|g| g.1).sum();
                assert!(out.len() <= 2 && granted > 0, "{out:?}");
            }
        }
        assert!(m.iter().all(Incoming::complete));
        assert_eq!((arrivals, s.active(), s.outstanding), (n * 9, 0, 0));
        assert_eq!(s.peak_outstanding(), bound);
    }

    #[test]
    fn a_lost_packet_holds_its_budget_until_its_resent_copy_arrives() {
        let t = 100;
        let mut m = msgs(&[3_000, 3_000, 3_000], 1_000);
        let mut s = Scheduler::new(1, 1, 3_000, 1_000);
        let mut out = Vec::new();
        (0..3).for_each(|i| s.add(&mut m, i));
        // Message 0 is granted whole (2 KB in flight), message 1 the 1 KB left.
        arrive(&mut s, &mut m, 0, 0, &mut out);
        arrive(&mut s, &mut m, 1, 0, &mut out);
        assert_eq!(out, [(0, 3_000, 0), (1, 2_000, 0)]);
        out.clear();
        // Packet 1 of message 0 arrives, its last one is lost: the freed 1 KB goes to
        // message 1; the lost one's share stays held, so message 2 gets nothing.
        arrive(&mut s, &mut m, 0, 1, &mut out);
        arrive(&mut s, &mut m, 2, 0, &mut out);
        assert_eq!(out, [(1, 3_000, 0)]);
        assert_eq!(s.outstanding, 3_000);
        out.clear();
        // The resend timer: not at deadline − 1, at the deadline, for the last packet.
        assert_eq!(m[0].deadline(t), Some(1 + t));
        assert_eq!(m[0].on_timer(t, t), None);
        assert_eq!(m[0].on_timer(1 + t, t), Some((2_000, 3_000, 0)));
        // The resent packet completes message 0 and frees its share: message 2's grant.
        arrive(&mut s, &mut m, 0, 2, &mut out);
        assert!(m[0].complete());
        assert_eq!(out, [(2, 2_000, 0)]);
        assert_eq!(s.outstanding, 3_000);
        out.clear();
        // Packet 1 of message 1 is lost and packet 2 arrives: packet 2's share goes to
        // message 2; the hole's stays held (it may yet arrive, overtaken) until it arrives.
        arrive(&mut s, &mut m, 1, 2, &mut out);
        assert_eq!(out, [(2, 3_000, 0)]);
        assert_eq!(s.outstanding, 3_000);
        // Its RESEND: not at deadline − 1, at the deadline; the resent copy frees the share.
        assert_eq!(m[1].on_timer(t, t), None);
        assert_eq!(m[1].on_timer(1 + t, t), Some((1_000, 2_000, 0)));
        out.clear();
        arrive(&mut s, &mut m, 1, 1, &mut out);
        assert!(m[1].complete() && out.is_empty());
        assert_eq!(s.outstanding, 2_000);
    }

    #[test]
    fn more_granted_messages_than_levels_share_the_lowest() {
        let mut m = msgs(&[4_000, 5_000, 6_000], 1_000);
        let mut s = Scheduler::new(3, 2, 1_000, 1_000);
        (0..3).for_each(|i| s.add(&mut m, i));
        let mut out = Vec::new();
        s.grant(&mut m, &mut out);
        // The shortest on the higher level; the other two share level 0, where they already
        // were with nothing more to grant: no GRANT for them.
        assert_eq!(out, [(0, 1_000, 1)]);
    }

    /// Scheduled bytes granted and not yet arrived, packet by packet (what the receiver's
    /// grants truly have in flight towards it), for messages in packets of 1 000.
    fn in_flight(m: &[Incoming]) -> u64 {
        m.iter()
            .map(|i| {
                (0..u64::from(i.packets))
                    .map(|k| (k, k * 1_000, (i.bytes - k * 1_000).min(1_000)))
                    .filter(|&(_, at, _)| at >= i.unsched && at < i.granted)
                    .filter(|&(k, _, _)| i.got[k as usize / 64] & (1 << (k % 64)) == 0)
                    .map(|(_, _, len)| len)
                    .sum::<u64>()
            })
            .sum()
    }

    #[test]
    fn a_packet_overtaking_earlier_ones_frees_only_its_own_share_of_the_budget() {
        // Two granted at once, RTTbytes 3 000: a budget of 6 000. Message 0 (4 000 B) is
        // granted whole and leaves the granted ones; 1 and 2 follow.
        let mut m = msgs(&[4_000, 20_000, 30_000], 1_000);
        let mut s = Scheduler::new(2, 2, 3_000, 1_000);
        let mut out = Vec::new();
        (0..3).for_each(|i| s.add(&mut m, i));
        arrive(&mut s, &mut m, 0, 0, &mut out);
        arrive(&mut s, &mut m, 1, 0, &mut out);
        assert_eq!((s.outstanding, in_flight(&m)), (6_000, 6_000));
        // Message 0's last packet overtakes its packets 1 and 2 (a later packet at a higher
        // level, or on another path): they are still in flight, and so is their budget.
        out.clear();
        arrive(&mut s, &mut m, 0, 3, &mut out);
        assert_eq!(
            s.outstanding,
            in_flight(&m),
            "the count follows what is in flight"
        );
        assert!(in_flight(&m) <= 6_000, "{} in flight", in_flight(&m));
        assert_eq!(out, [(2, 2_000, 0)]);
        // They arrive: each frees one packet's grant.
        out.clear();
        arrive(&mut s, &mut m, 0, 1, &mut out);
        arrive(&mut s, &mut m, 0, 2, &mut out);
        assert_eq!(out, [(2, 3_000, 0)]);
        assert_eq!((s.outstanding, in_flight(&m)), (5_000, 5_000));
        assert_eq!(s.peak_outstanding(), 6_000);
    }

    #[test]
    fn a_grant_to_a_marked_message_ends_on_a_packet_its_sender_sends_whole() {
        // Budget 3 000 (one granted at once): message 0, granted whole on its first packet,
        // holds 2 000 of it; message 1, marked (300 B unscheduled, still in flight), gets the
        // 1 000 left.
        let mut m = vec![
            Incoming::new(0, 3_000, 1_000, 1_000),
            Incoming::new(0, 10_000, 1_000, 300),
        ];
        let mut s = Scheduler::new(1, 1, 3_000, 1_000);
        let mut out = Vec::new();
        (0..2).for_each(|i| s.add(&mut m, i));
        arrive(&mut s, &mut m, 0, 0, &mut out);
        s.grant(&mut m, &mut out);
        assert_eq!(out, [(0, 3_000, 0), (1, 1_300, 0)]);
        // What the sender sends for it beyond its unscheduled bytes is what the receiver counts.
        let mut tx = super::super::sender::Sender::new(10_000, 1_000, 300, 7);
        tx.on_grant(1_300, 0);
        let sent: u64 = std::iter::from_fn(|| tx.next_packet())
            .map(|p| u64::from(p.len))
            .sum();
        assert_eq!(sent - 300, m[1].granted_out());
        assert_eq!(s.outstanding, 2_000 + m[1].granted_out());
    }
}
