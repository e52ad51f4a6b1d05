//! What happens as a packet starts to leave an egress, beyond the queue itself: in-band
//! telemetry at switch ports (`topology.int`), ECN marking on the instantaneous queue
//! (`topology.ecn_kmin`), and the time each flow's packets waited at paused links (PFC's
//! victims). The fabric holds none of it when every one is off, so the drop-tail path pays one
//! test of an `Option` per packet.

use super::PktId;
use crate::rng::Rng;
use crate::units::SimTime;

/// ECN marking as a packet starts to leave (DCQCN's switches): never at or below `kmin` bytes
/// queued behind it, always at or above `kmax`, with probability rising linearly to `pmax`
/// in between; a plain probability per packet.
#[derive(Debug, Clone)]
pub struct EcnMarking {
    kmin: u64,
    kmax: u64,
    pmax: f64,
    /// One stream per link, so a link's marks do not depend on the others' traffic.
    rngs: Vec<Rng>,
}

impl EcnMarking {
    /// Marking with thresholds `kmin` < `kmax` bytes and probability `pmax` at `kmax`, with a
    /// random stream per link.
    pub fn new(kmin: u64, kmax: u64, pmax: f64, rngs: Vec<Rng>) -> EcnMarking {
        EcnMarking {
            kmin,
            kmax,
            pmax,
            rngs,
        }
    }

    /// Whether a packet leaving link `l` with `queued` bytes behind it is marked.
    #[inline]
    pub fn marks(&mut self, l: usize, queued: u64) -> bool {
        if queued <= self.kmin {
            return false;
        }
        if queued >= self.kmax {
            return true;
        }
        let p = self.pmax * (queued - self.kmin) as f64 / (self.kmax - self.kmin) as f64;
        let u = self.rngs[l].unit();
        u < p
    }
}

/// Links of a flow whose waits are told apart: both directions of a three-tier fat tree's
/// longest route (six links each way). A flow over more links (a sprayed one) has the waits at
/// its extra links counted per packet.
const LINKS: usize = 16;

/// An unused entry of [`FlowPause`]'s links.
const NONE: u32 = u32::MAX;

/// What one flow's packets waited at paused links.
#[derive(Debug, Clone, Copy)]
pub struct FlowPause {
    /// Time its packets were held by pauses, summed over the links of its route; at one link
    /// the waits of several packets behind the same pause count once.
    pub paused: SimTime,
    /// Whether it was held by a pause whose root, the congested egress the pause spread back
    /// from, is not on its route: a victim of congestion spreading. A flow held only by the
    /// congestion of its own path (an incast's flow behind its receiver's port) is not one,
    /// whichever receiver that is.
    pub victim: bool,
    /// The links it was held at, each with the link's paused time up to which this flow has
    /// been credited.
    last: [(u32, SimTime); LINKS],
}

impl Default for FlowPause {
    fn default() -> Self {
        FlowPause {
            paused: 0,
            victim: false,
            last: [(NONE, 0); LINKS],
        }
    }
}

/// The paused time each packet and each flow saw, and what each pause spread back from.
#[derive(Debug, Default)]
pub struct PauseTrack {
    /// Per packet (by [`PktId`]): its link's paused time so far when it was queued.
    stamp: Vec<SimTime>,
    /// Per flow (by `Wire::flow`).
    pub flows: Vec<FlowPause>,
    /// Per link: the switch it leaves from ([`NONE`] for a host's NIC).
    switch_of: Vec<u32>,
    /// Per switch: its egress links.
    ports: Vec<Vec<u32>>,
    /// Per link: the root of its latest pause, the egress whose congestion it spread back
    /// from ([`NONE`] before its first pause).
    cause: Vec<u32>,
}

impl PauseTrack {
    /// Tracking over links that leave from the switches `switch_of` gives (`u32::MAX` for a
    /// host's NIC); links come in pairs, `l ^ 1` the reverse of `l`.
    pub fn new(switch_of: Vec<u32>) -> PauseTrack {
        let switches = switch_of
            .iter()
            .filter(|&&s| s != NONE)
            .max()
            .map_or(0, |&m| m as usize + 1);
        let mut ports = vec![Vec::new(); switches];
        for (l, &s) in switch_of.iter().enumerate() {
            if s != NONE {
                ports[s as usize].push(l as u32);
            }
        }
        PauseTrack {
            stamp: Vec::new(),
            flows: Vec::new(),
            cause: vec![NONE; switch_of.len()],
            switch_of,
            ports,
        }
    }

    /// The switch that link `up` enters paused it: the pause's root is the egress where most
    /// of the bytes come over `up` wait (`held(e)` of them at egress `e`; the lowest-numbered
    /// of equals) or, if that egress is itself paused (`paused`), the root of that pause, so
    /// a pause spread hop by hop names the egress it started from.
    pub fn pause_sent(&mut self, up: u32, held: impl Fn(u32) -> u64, paused: impl Fn(u32) -> bool) {
        let Some(&s) = self.switch_of.get((up ^ 1) as usize) else {
            return;
        };
        let Some(ports) = self.ports.get(s as usize) else {
            return;
        };
        // `max_by_key` keeps the last of equals: reversed, the lowest-numbered.
        let Some(e) = ports.iter().copied().rev().max_by_key(|&e| held(e)) else {
            return;
        };
        let root = match self.cause[e as usize] {
            r if r != NONE && paused(e) => r,
            _ => e,
        };
        self.cause[up as usize] = root;
    }

    /// The root of link `l`'s latest pause, if it has been paused.
    pub fn cause(&self, l: u32) -> Option<u32> {
        self.cause.get(l as usize).copied().filter(|&c| c != NONE)
    }

    /// Packet `id` was queued at a link paused `paused` so far.
    #[inline]
    pub fn queued(&mut self, id: PktId, paused: SimTime) {
        let i = id as usize;
        if i >= self.stamp.len() {
            // Grows with the packet pool, to its peak: doubling, so rarely.
            self.stamp.resize((i + 1).max(2 * self.stamp.len()), 0);
        }
        self.stamp[i] = paused;
    }

    /// Packet `id` of `flow` starts to leave link `l`, paused `paused` so far; `crosses(e)`:
    /// whether the packet's route crosses egress `e` (asked only of a packet that was held,
    /// with the root of `l`'s pause, until the flow is found a victim).
    #[inline]
    pub fn started(
        &mut self,
        id: PktId,
        flow: u32,
        l: u32,
        paused: SimTime,
        crosses: impl FnOnce(u32) -> bool,
    ) {
        if flow == u32::MAX {
            return;
        }
        let f = flow as usize;
        if f >= self.flows.len() {
            self.flows.resize(f + 1, FlowPause::default());
        }
        let stamp = self.stamp[id as usize];
        if paused == stamp {
            return;
        }
        let cause = self.cause.get(l as usize).copied().unwrap_or(NONE);
        let fp = &mut self.flows[f];
        if cause != NONE && !fp.victim && !crosses(cause) {
            fp.victim = true;
        }
        // Packets of a flow leave a link in order, so the waits at one link overlap only with
        // the previous one's: credit what lies past it.
        let slot = fp.last.iter().position(|&(link, _)| link == l);
        match slot.or_else(|| fp.last.iter().position(|&(link, _)| link == NONE)) {
            Some(i) => {
                let last = &mut fp.last[i];
                let from = if last.0 == l {
                    stamp.max(last.1)
                } else {
                    stamp
                };
                fp.paused += paused.saturating_sub(from);
                *last = (l, paused);
            }
            None => fp.paused += paused - stamp,
        }
    }
}

/// The hooks of packets starting to leave an egress.
#[derive(Debug, Default)]
pub struct Egress {
    /// Record INT at switch ports.
    pub int: bool,
    /// INT's queue length counts the departing packet.
    pub int_with_packet: bool,
    /// Mark ECN on the queue behind a packet leaving a switch port.
    pub ecn: Option<EcnMarking>,
    /// Track paused time per packet and per flow.
    pub track: Option<PauseTrack>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marking_is_never_below_kmin_always_at_kmax_and_linear_between() {
        let mut m = EcnMarking::new(5_000, 200_000, 0.01, vec![Rng::new(1, 1)]);
        assert!((0..10_000).all(|_| !m.marks(0, 5_000)));
        assert!((0..100).all(|_| m.marks(0, 200_000)));
        // Halfway, p = 0.5%: about 500 of 100 000.
        let half = (0..100_000).filter(|_| m.marks(0, 102_500)).count();
        assert!((400..600).contains(&half), "{half}");
        let mut m = EcnMarking::new(0, 100, 1.0, vec![Rng::new(1, 2)]);
        let n = (0..10_000).filter(|_| m.marks(0, 25)).count();
        assert!((2_300..2_700).contains(&n), "a quarter: {n}");
    }

    #[test]
    fn waits_behind_one_pause_count_once_per_link_and_add_up_over_links() {
        let mut t = PauseTrack::default();
        // Three packets of flow 4 queue at link 9 before a pause of 100, then leave in turn.
        for id in 0..3 {
            t.queued(id, 1_000);
        }
        for id in 0..3 {
            t.started(id, 4, 9, 1_100, |_| true);
        }
        assert_eq!(t.flows[4].paused, 100);
        // One more queues mid-pause (the link had been paused 50 of it): its wait lies within
        // what was credited already.
        t.queued(3, 1_050);
        t.started(3, 4, 9, 1_100, |_| true);
        assert_eq!(t.flows[4].paused, 100);
        // A later pause of 30 at the same link is new.
        t.queued(4, 1_100);
        t.started(4, 4, 9, 1_130, |_| true);
        assert_eq!(t.flows[4].paused, 130);
        // The same flow held at its next hop too: that adds up, and the two links' waits are
        // told apart however their packets interleave.
        t.queued(5, 0);
        t.started(5, 4, 11, 70, |_| true);
        assert_eq!(t.flows[4].paused, 200);
        t.queued(7, 1_100);
        t.started(7, 4, 9, 1_140, |_| true);
        t.queued(8, 50);
        t.started(8, 4, 11, 80, |_| true);
        assert_eq!(t.flows[4].paused, 200 + 10 + 10);
        assert!(!t.flows[4].victim, "no pause had a root");
        // An unpaused flow and an untracked packet leave no trace.
        t.queued(6, 500);
        t.started(6, 1, 9, 500, |_| true);
        assert_eq!(t.flows[1].paused, 0);
        t.started(6, u32::MAX, 9, 900, |_| true);
        assert_eq!(t.flows.len(), 5);
    }

    /// Two switches (0 and 1) joined by links 4 (0 → 1) and 5 (1 → 0); host 0 on switch 0
    /// (NIC 0, port 1), host 1 on switch 1 (NIC 2, port 3).
    fn two_switches() -> PauseTrack {
        PauseTrack::new(vec![NONE, 0, NONE, 1, 0, 1])
    }

    #[test]
    fn a_pause_is_rooted_where_the_ingress_bytes_wait_and_a_spread_pause_at_its_origin() {
        let mut t = two_switches();
        assert_eq!(t.cause(4), None);
        // Link 4's bytes wait at switch 1's port to host 1: it pauses link 4, rooted there.
        let q = |e: u32| if e == 3 { 9_000 } else { 0 };
        t.pause_sent(4, q, |_| false);
        assert_eq!(t.cause(4), Some(3));
        // Host 0's bytes wait at link 4, paused: host 0's NIC is paused for port 3.
        let q = |e: u32| if e == 4 { 50_000 } else { 1_000 };
        t.pause_sent(0, q, |e| e == 4);
        assert_eq!(t.cause(0), Some(3));
        // Link 4 not paused (any more): the pause is its own congestion's.
        t.pause_sent(0, q, |_| false);
        assert_eq!(t.cause(0), Some(4));
        // Equal queues: the lowest-numbered egress, whatever the order asked.
        t.pause_sent(0, |_| 7, |_| false);
        assert_eq!(t.cause(0), Some(1));
        // A NIC link entering no switch of the table, or an out-of-range link: nothing.
        t.pause_sent(99, |_| 7, |_| false);
        assert_eq!(t.cause(99), None);
    }

    #[test]
    fn a_flow_held_by_a_pause_rooted_off_its_route_is_a_victim_and_on_it_is_not() {
        let mut t = two_switches();
        t.pause_sent(4, |e| u64::from(e == 3), |_| false);
        t.pause_sent(0, |e| u64::from(e == 4), |e| e == 4);
        // Flow 0 goes to host 1 (crosses port 3), flow 1 elsewhere; both held at NIC 0.
        t.queued(0, 0);
        t.started(0, 0, 0, 100, |e| e == 3 || e == 4);
        t.queued(1, 0);
        t.started(1, 1, 0, 100, |e| e == 4);
        assert!(t.flows[0].paused == 100 && !t.flows[0].victim);
        assert!(t.flows[1].paused == 100 && t.flows[1].victim);
        // A packet that was not held is not asked about its route at all.
        t.queued(2, 100);
        t.started(2, 2, 0, 100, |_| panic!("not held: not asked"));
        assert!(!t.flows[2].victim);
        // Once a victim, always one.
        t.queued(3, 100);
        t.started(3, 1, 0, 150, |_| true);
        assert!(t.flows[1].victim && t.flows[1].paused == 150);
    }
}
