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
        let u = (self.rngs[l].next_u64() >> 11) as f64 / (1u64 << 53) as f64;
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
    /// Whether it crosses the receiver's port (the incast's congested egress).
    pub crosses_bottleneck: bool,
    /// The links it was held at, each with the link's paused time up to which this flow has
    /// been credited.
    last: [(u32, SimTime); LINKS],
}

impl Default for FlowPause {
    fn default() -> Self {
        FlowPause {
            paused: 0,
            crosses_bottleneck: false,
            last: [(NONE, 0); LINKS],
        }
    }
}

/// The paused time each packet and each flow saw.
#[derive(Debug, Default)]
pub struct PauseTrack {
    /// Per packet (by [`PktId`]): its link's paused time so far when it was queued.
    stamp: Vec<SimTime>,
    /// Per flow (by `Wire::flow`).
    pub flows: Vec<FlowPause>,
}

impl PauseTrack {
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

    /// Packet `id` of `flow` starts to leave link `l`, paused `paused` so far; `bottleneck`:
    /// `l` is the receiver's port.
    #[inline]
    pub fn started(&mut self, id: PktId, flow: u32, l: u32, paused: SimTime, bottleneck: bool) {
        if flow == u32::MAX {
            return;
        }
        let f = flow as usize;
        if f >= self.flows.len() {
            self.flows.resize(f + 1, FlowPause::default());
        }
        let fp = &mut self.flows[f];
        fp.crosses_bottleneck |= bottleneck;
        let stamp = self.stamp[id as usize];
        if paused == stamp {
            return;
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
            t.started(id, 4, 9, 1_100, false);
        }
        assert_eq!(t.flows[4].paused, 100);
        // One more queues mid-pause (the link had been paused 50 of it): its wait lies within
        // what was credited already.
        t.queued(3, 1_050);
        t.started(3, 4, 9, 1_100, false);
        assert_eq!(t.flows[4].paused, 100);
        // A later pause of 30 at the same link is new.
        t.queued(4, 1_100);
        t.started(4, 4, 9, 1_130, false);
        assert_eq!(t.flows[4].paused, 130);
        // The same flow held at its next hop too: that adds up, and the two links' waits are
        // told apart however their packets interleave.
        t.queued(5, 0);
        t.started(5, 4, 11, 70, true);
        assert_eq!(t.flows[4].paused, 200);
        t.queued(7, 1_100);
        t.started(7, 4, 9, 1_140, false);
        t.queued(8, 50);
        t.started(8, 4, 11, 80, false);
        assert_eq!(t.flows[4].paused, 200 + 10 + 10);
        assert!(t.flows[4].crosses_bottleneck);
        // An unpaused flow and an untracked packet leave no trace.
        t.queued(6, 500);
        t.started(6, 1, 9, 500, false);
        assert_eq!(t.flows[1].paused, 0);
        t.started(6, u32::MAX, 9, 900, false);
        assert_eq!(t.flows.len(), 5);
    }
}
