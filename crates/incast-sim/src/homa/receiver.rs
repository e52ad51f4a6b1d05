//! The receiving end of Homa (clock-free): each incoming message's packets and grants, the
//! host's grant scheduler, and the resend timer (Montazeri et al., SIGCOMM 2018).
//!
//! - Flow control and priorities: a receiver grants the message with the fewest bytes still to arrive first
//!   (SRPT), keeping RTTbytes granted beyond what has arrived, so a granted message never
//!   idles its sender; the levels of scheduled packets come from the receiver too.
//! - Overcommitment: it grants `overcommit` messages at once, so a sender busy elsewhere does not waste
//!   the receiver's link. Of the granted messages the shortest gets the highest scheduled
//!   level, and when fewer are granted than there are levels they take the lowest ones, so a
//!   shorter message arriving later can still go above them.
//! - Lost packets: a message missing granted bytes, of which nothing has arrived for the resend
//!   timeout, is asked for again (RESEND); a BUSY from its sender restarts the wait.

use crate::units::SimTime;

/// One incoming message.
#[derive(Debug, Clone)]
pub struct Incoming {
    bytes: u64,
    mtu: u64,
    packets: u32,
    /// Which packets arrived (a bit each).
    got: Vec<u64>,
    arrived: u32,
    /// Bytes arrived.
    received: u64,
    /// Bytes the sender may have sent: its unscheduled bytes, then the grants.
    granted: u64,
    /// Level of the latest grant.
    level: u8,
    /// Last packet, BUSY or RESEND, the start of the resend timer.
    heard: SimTime,
    resends: u32,
    duplicates: u32,
}

impl Incoming {
    /// A message of `bytes` expected from `now`, whose sender sends `unsched` bytes unasked.
    pub fn new(now: SimTime, bytes: u64, mtu: u64, unsched: u64) -> Incoming {
        let packets = bytes.div_ceil(mtu).max(1) as u32;
        Incoming {
            bytes,
            mtu,
            packets,
            got: vec![0; packets.div_ceil(64) as usize],
            arrived: 0,
            received: 0,
            granted: unsched.min(bytes).max(1),
            level: 0,
            heard: now,
            resends: 0,
            duplicates: 0,
        }
    }

    /// A data packet of `len` bytes at `offset` arrived at `now`: whether it was new.
    pub fn on_data(&mut self, now: SimTime, offset: u64, len: u32) -> bool {
        self.heard = now;
        let k = (offset / self.mtu) as usize;
        if k >= self.packets as usize || self.got[k / 64] & (1 << (k % 64)) != 0 {
            self.duplicates += 1;
            return false;
        }
        self.got[k / 64] |= 1 << (k % 64);
        self.arrived += 1;
        self.received += u64::from(len);
        // A packet carries what its sender may send; one past a lost grant grants itself.
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

    /// Bytes arrived.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// The first packet missing below the granted bytes, as a byte range up to the next that
    /// arrived (or the granted end).
    fn missing(&self) -> Option<(u64, u64)> {
        let granted = self.granted.div_ceil(self.mtu).min(u64::from(self.packets)) as usize;
        let has = |k: usize| self.got[k / 64] & (1 << (k % 64)) != 0;
        let first = (0..granted).find(|&k| !has(k))?;
        let end = (first..granted).find(|&k| has(k)).unwrap_or(granted);
        Some((
            first as u64 * self.mtu,
            (end as u64 * self.mtu).min(self.granted),
        ))
    }

    /// When the resend timer fires: `timeout` after the last word of the message, if granted
    /// bytes are missing.
    pub fn deadline(&self, timeout: SimTime) -> Option<SimTime> {
        self.missing().map(|_| self.heard + timeout)
    }

    /// The resend timer at `now`: the range to ask for again and its level, if due.
    pub fn on_timer(&mut self, now: SimTime, timeout: SimTime) -> Option<(u64, u64, u8)> {
        if self.deadline(timeout)? > now {
            return None;
        }
        self.heard = now;
        self.resends += 1;
        let (from, to) = self.missing()?;
        Some((from, to, self.level))
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

/// A host's grant scheduler.
#[derive(Debug, Clone)]
pub struct Scheduler {
    /// Messages granted at once.
    overcommit: usize,
    /// Scheduled levels (0 up to this).
    levels: u8,
    /// Bytes kept granted beyond what arrived.
    rtt_bytes: u64,
    mtu: u64,
    /// Messages with bytes still to grant.
    active: Vec<u32>,
    /// The ones granted this round, shortest first (kept to reuse its room).
    top: Vec<u32>,
}

impl Scheduler {
    /// A scheduler granting `overcommit` messages at once over `levels` scheduled levels,
    /// `rtt_bytes` beyond what arrived, in packets of `mtu`.
    pub fn new(overcommit: u32, levels: u8, rtt_bytes: u64, mtu: u64) -> Scheduler {
        Scheduler {
            overcommit: overcommit.max(1) as usize,
            levels: levels.max(1),
            rtt_bytes,
            mtu,
            active: Vec::new(),
            top: Vec::new(),
        }
    }

    /// Message `m` will need grants.
    pub fn add(&mut self, m: u32) {
        self.active.push(m);
    }

    /// Messages waiting for grants or being granted.
    #[cfg(test)]
    pub fn active(&self) -> usize {
        self.active.len()
    }

    /// Grant after an arrival: the `overcommit` messages of `msgs` with the fewest bytes to
    /// arrive each get RTTbytes beyond what arrived (whole packets), at their rank's level;
    /// fully granted ones leave. The grants that move a message on go to `out`.
    pub fn grant(&mut self, msgs: &mut [Incoming], out: &mut Vec<Grant>) {
        self.active.retain(|&m| msgs[m as usize].needs_grants());
        self.top.clear();
        for &m in &self.active {
            let key = |m: u32| (msgs[m as usize].remaining(), m);
            let at = self.top.partition_point(|&t| key(t) < key(m));
            if at < self.overcommit {
                if self.top.len() == self.overcommit {
                    self.top.pop();
                }
                self.top.insert(at, m);
            }
        }
        let n = self.top.len().min(usize::from(self.levels));
        for (rank, &m) in self.top.iter().enumerate() {
            let level = (n - 1).saturating_sub(rank) as u8;
            let msg = &mut msgs[m as usize];
            let want = (msg.received + self.rtt_bytes).div_ceil(self.mtu) * self.mtu;
            let want = want.min(msg.bytes);
            if want > msg.granted || level != msg.level {
                msg.granted = msg.granted.max(want);
                msg.level = level;
                out.push((m, msg.granted, level));
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
        // Nothing granted is missing: no timer (the message waits for grants, not packets).
        m.on_data(260, 1_000, 1_000);
        assert_eq!(m.deadline(t), None);
        assert_eq!(m.on_timer(10_000, t), None);
    }

    #[test]
    fn lost_unscheduled_packets_of_a_silent_message_are_asked_for() {
        let mut m = Incoming::new(40, 1_500, 1_000, 10_000);
        assert_eq!(m.on_timer(139, 100), None);
        assert_eq!(m.on_timer(140, 100), Some((0, 1_500, 0)));
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
        (0..4).for_each(|i| s.add(i));
        for msg in &mut m {
            msg.on_data(1, 0, 1_000);
        }
        let mut out = Vec::new();
        s.grant(&mut m, &mut out);
        // The 10 KB one first (the higher of the two lowest levels), then the 20 KB one.
        assert_eq!(out, [(3, 6_000, 1), (1, 6_000, 0)]);
        // Once it is fully granted it leaves: the 30 KB one is granted next.
        out.clear();
        for k in 1..5 {
            m[3].on_data(2, k * 1_000, 1_000);
        }
        s.grant(&mut m, &mut out);
        assert_eq!(out, [(3, 10_000, 1)]);
        out.clear();
        s.grant(&mut m, &mut out);
        assert_eq!(out, [(1, 6_000, 1), (2, 6_000, 0)]);
        assert_eq!(s.active(), 3);
    }

    #[test]
    fn more_granted_messages_than_levels_share_the_lowest() {
        let mut m = msgs(&[4_000, 5_000, 6_000], 1_000);
        let mut s = Scheduler::new(3, 2, 1_000, 1_000);
        (0..3).for_each(|i| s.add(i));
        let mut out = Vec::new();
        s.grant(&mut m, &mut out);
        // The shortest on the higher level; the other two share level 0, where they already
        // were with nothing more to grant: no GRANT for them.
        assert_eq!(out, [(0, 1_000, 1)]);
    }
}
