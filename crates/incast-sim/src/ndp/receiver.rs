//! NDP's receiver (the NDP paper): it ACKs data and NACKs trimmed headers at once, and for
//! each arrival of an unfinished flow queues a PULL. Its pacer sends pulls at the rate of its
//! own link, one per full packet time, so after the first window its link is exactly filled.
//!
//! Which flow the next pull goes to is the pull queue's discipline ([`PullOrder`]). The paper
//! (Handley et al., "Re-architecting datacenter networks and stacks for low latency and high
//! performance", SIGCOMM 2017) keeps one pull queue shared by all the receiver's connections
//! and serves their pulls fairly unless a flow is given strict priority (§3.2); its fairness
//! argument (in its section on congestion control) rests on fair queuing of the pulls of
//! different connections. By default here, then, a round-robin over the flows with pulls
//! owed, one pull per flow per turn. The alternatives: first come first served (one FIFO of
//! pulls: a flow that arrives behind an incast's first windows waits for every pull those
//! windows earned; incastlab's rule before), the paper's strict prioritization given to
//! the short flows beside the application's (§5, Figure 10, where the receiver sends a short
//! flow's pulls ahead of six long flows'), and the round-robin of htsim's NDP, which walks
//! the flows in the fixed order of their ids: a flow that comes to owe a pull is served when
//! the walk reaches it rather than after every flow already waiting, which at thousands of
//! flows is a turn of tens of milliseconds.
//!
//! Like the sender, it takes `now` and appends what it sends, and its pacer's next tick, to
//! `out`. Per arrival it allocates nothing: pulls owed are a counter per flow, and the flows
//! owing them a ring threaded through an array (for the walk, a bit per flow).

use std::collections::VecDeque;

use super::bits::Bits;
use super::Kind;
use crate::config::PullOrder;
use crate::units::SimTime;

/// What the receiver asks of the network and the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReceiverOut {
    /// Send an ACK, NACK or PULL (`kind`) for packet `seq` of `flow`.
    Control {
        /// ACK, NACK or PULL.
        kind: Kind,
        /// The flow it is for.
        flow: u32,
        /// The packet it answers (0 for a pull).
        seq: u32,
    },
    /// Wake the pull pacer at this time ([`Receiver::on_pull_tick`]).
    PullTick(SimTime),
}

/// One flow's receiving end.
#[derive(Debug)]
struct Inbound {
    /// Packets in the flow.
    packets: u32,
    /// Packets received (each once), and whether each was.
    received: u32,
    got: Bits,
    /// Completion time from the workload's start.
    fct: Option<SimTime>,
}

/// The receiving host: every flow's receiving end and the pull pacer they share.
#[derive(Debug)]
pub(crate) struct Receiver {
    flows: Vec<Inbound>,
    /// Flows `..apps` are the application's: the last of them to complete ends the run
    /// (the others, short flows beside it, do not count).
    apps: u32,
    /// When the workload started.
    start: SimTime,
    /// The application's flows complete, and when the last one completed.
    done: u32,
    finish: Option<SimTime>,
    /// Flows owed a pull: a round-robin ring, or in arrival order (`fifo`).
    pulls: PullQueue,
    /// A pacer tick is pending.
    pacer_busy: bool,
    /// One full packet's time on the receiver's link: the gap between pulls.
    pull_spacing: SimTime,
    /// When the last pull went out.
    last_pull: Option<SimTime>,
    /// NACKs sent.
    nacks: u64,
}

impl Receiver {
    /// One flow of `packets[f]` packets for each `f`, the first `apps` the application's,
    /// pulled one per `pull_spacing`.
    pub(crate) fn new(
        packets: &[u32],
        apps: u32,
        pull_spacing: SimTime,
        order: PullOrder,
    ) -> Receiver {
        Receiver {
            flows: packets
                .iter()
                .map(|&packets| Inbound {
                    packets,
                    received: 0,
                    got: Bits::new(packets),
                    fct: None,
                })
                .collect(),
            apps,
            start: 0,
            done: 0,
            finish: None,
            pulls: PullQueue::new(order, packets.len(), apps),
            pacer_busy: false,
            pull_spacing,
            last_pull: None,
            nacks: 0,
        }
    }

    /// The workload starts at `now`: completion times count from here.
    pub(crate) fn start(&mut self, now: SimTime) {
        self.start = now;
    }

    /// When the workload started.
    pub(crate) fn start_time(&self) -> SimTime {
        self.start
    }

    /// When the last flow completed, once all have.
    pub(crate) fn finish(&self) -> Option<SimTime> {
        self.finish
    }

    /// Completion time of `flow` from the workload's start, once complete.
    pub(crate) fn fct(&self, flow: u32) -> Option<SimTime> {
        self.flows[flow as usize].fct
    }

    /// Distinct packets of `flow` received.
    pub(crate) fn received(&self, flow: u32) -> u32 {
        self.flows[flow as usize].received
    }

    /// Distinct packets of `flow` received, counted from the bitmap.
    pub(crate) fn received_bitmap(&self, flow: u32) -> u32 {
        self.flows[flow as usize].got.count()
    }

    /// NACKs sent.
    pub(crate) fn nacks(&self) -> u64 {
        self.nacks
    }

    /// Data packet `seq` of `flow` arrived whole: ACK it, and pull another unless the flow is
    /// now complete.
    pub(crate) fn on_data(
        &mut self,
        now: SimTime,
        flow: u32,
        seq: u32,
        out: &mut Vec<ReceiverOut>,
    ) {
        let fl = &mut self.flows[flow as usize];
        if !fl.got.get(seq) {
            fl.got.set(seq, true);
            fl.received += 1;
        }
        let complete = fl.received == fl.packets;
        out.push(ReceiverOut::Control {
            kind: Kind::Ack,
            flow,
            seq,
        });
        if complete {
            if fl.fct.is_none() {
                fl.fct = Some(now - self.start);
                if flow < self.apps {
                    self.done += 1;
                    if self.done == self.apps {
                        self.finish = Some(now);
                    }
                }
            }
        } else {
            self.queue_pull(now, flow, out);
        }
    }

    /// The trimmed header of packet `seq` of `flow` arrived: NACK it, and pull its
    /// retransmission.
    pub(crate) fn on_header(
        &mut self,
        now: SimTime,
        flow: u32,
        seq: u32,
        out: &mut Vec<ReceiverOut>,
    ) {
        self.nacks += 1;
        out.push(ReceiverOut::Control {
            kind: Kind::Nack,
            flow,
            seq,
        });
        if self.flows[flow as usize].fct.is_none() {
            self.queue_pull(now, flow, out);
        }
    }

    /// The pacer may send a pull: to the next flow in the pull queue's order still
    /// unfinished, then wait one packet time. A finished flow's pulls are dropped unsent, as
    /// the paper's receiver removes a finished sender's pulls from its queue (§3.2).
    pub(crate) fn on_pull_tick(&mut self, now: SimTime, out: &mut Vec<ReceiverOut>) {
        while let Some(flow) = self.pulls.front() {
            let finished = self.flows[flow as usize].fct.is_some();
            self.pulls.take_front(finished);
            if finished {
                continue;
            }
            out.push(ReceiverOut::Control {
                kind: Kind::Pull,
                flow,
                seq: 0,
            });
            self.last_pull = Some(now);
            out.push(ReceiverOut::PullTick(now + self.pull_spacing));
            return;
        }
        self.pacer_busy = false;
    }

    fn queue_pull(&mut self, now: SimTime, flow: u32, out: &mut Vec<ReceiverOut>) {
        self.pulls.push(flow);
        if !self.pacer_busy {
            self.pacer_busy = true;
            let at = match self.last_pull {
                Some(t) => (t + self.pull_spacing).max(now),
                None => now,
            };
            out.push(ReceiverOut::PullTick(at));
        }
    }
}

/// No flow: the end of a ring's thread.
const NONE: u32 = u32::MAX;

/// The receiver's pull queue: which flow each next pull goes to.
#[derive(Debug)]
enum PullQueue {
    /// Round-robin over the flows owed a pull, in two classes served in strict priority: the
    /// flows from `urgent` on (the short flows beside the application's, with `short_first`;
    /// none with `fair`) before the others. `owed[f]` pulls are owed to flow `f`; the flows of
    /// a class owing any form a ring, `next[f]` the flow after `f`, `tail[class]` the flow
    /// served last (the next served is `next[tail]`). A flow that comes to owe a pull joins at
    /// its class's tail, so it is served after every flow of its class already waiting has had
    /// one turn.
    Rings {
        owed: Vec<u32>,
        next: Vec<u32>,
        tail: [u32; 2],
        urgent: u32,
    },
    /// First come first served: one entry per pull owed, in the order they were earned (its
    /// buffer grows to the most pulls ever owed at once, then is reused).
    Fifo(VecDeque<u32>),
    /// Round-robin in the fixed order of the flows' indices: `owed[f]` pulls owed to flow
    /// `f`, `waiting` a bit per flow owed any, `cursor` the index the turn has reached (the
    /// next served is the first flow waiting at or after it, wrapping around).
    Cyclic {
        owed: Vec<u32>,
        waiting: Vec<u64>,
        cursor: u32,
    },
}

impl PullQueue {
    fn new(order: PullOrder, flows: usize, apps: u32) -> PullQueue {
        let rings = |urgent| PullQueue::Rings {
            owed: vec![0; flows],
            next: vec![NONE; flows],
            tail: [NONE; 2],
            urgent,
        };
        match order {
            PullOrder::Fair => rings(u32::MAX),
            PullOrder::ShortFirst => rings(apps),
            PullOrder::Fifo => PullQueue::Fifo(VecDeque::new()),
            PullOrder::Cyclic => PullQueue::Cyclic {
                owed: vec![0; flows],
                waiting: vec![0; flows.div_ceil(64)],
                cursor: 0,
            },
        }
    }

    /// The first flow waiting at or after `from`, wrapping around (`waiting` a bit per flow).
    #[inline]
    fn next_waiting(waiting: &[u64], from: u32) -> Option<u32> {
        let words = waiting.len();
        let start = (from / 64) as usize % words.max(1);
        // The start word's bits from `from` on, then the other words in turn, then the start
        // word's bits before `from`.
        let first = waiting.get(start)? & (u64::MAX << (from % 64));
        if first != 0 {
            return Some(start as u32 * 64 + first.trailing_zeros());
        }
        for k in 1..=words {
            let w = (start + k) % words;
            let bits = if w == start {
                waiting[w] & !(u64::MAX << (from % 64))
            } else {
                waiting[w]
            };
            if bits != 0 {
                return Some(w as u32 * 64 + bits.trailing_zeros());
            }
        }
        None
    }

    /// One more pull is owed to `flow`.
    #[inline]
    fn push(&mut self, flow: u32) {
        match self {
            PullQueue::Rings {
                owed,
                next,
                tail,
                urgent,
            } => {
                let f = flow as usize;
                owed[f] += 1;
                if owed[f] > 1 {
                    return;
                }
                let tail = &mut tail[usize::from(flow < *urgent)];
                if *tail == NONE {
                    next[f] = flow;
                } else {
                    next[f] = next[*tail as usize];
                    next[*tail as usize] = flow;
                }
                *tail = flow;
            }
            PullQueue::Fifo(q) => q.push_back(flow),
            PullQueue::Cyclic { owed, waiting, .. } => {
                owed[flow as usize] += 1;
                waiting[(flow / 64) as usize] |= 1 << (flow % 64);
            }
        }
    }

    /// The class whose ring is served next (the urgent one while it has a flow waiting).
    #[inline]
    fn ring(tail: &[u32; 2]) -> usize {
        usize::from(tail[0] == NONE)
    }

    /// The flow the next pull goes to, if any is owed.
    #[inline]
    fn front(&self) -> Option<u32> {
        match self {
            PullQueue::Rings { next, tail, .. } => {
                let t = tail[Self::ring(tail)];
                (t != NONE).then(|| next[t as usize])
            }
            PullQueue::Fifo(q) => q.front().copied(),
            PullQueue::Cyclic {
                waiting, cursor, ..
            } => Self::next_waiting(waiting, *cursor),
        }
    }

    /// The front flow's pull is served (or, with `all`, every pull it is owed is dropped): it
    /// leaves its ring if it is owed no more, else it becomes the tail, served again after
    /// every other flow of its class waiting.
    #[inline]
    fn take_front(&mut self, all: bool) {
        match self {
            PullQueue::Rings {
                owed, next, tail, ..
            } => {
                let tail = &mut tail[Self::ring(tail)];
                let t = *tail as usize;
                let f = next[t];
                let fu = f as usize;
                owed[fu] = if all { 0 } else { owed[fu] - 1 };
                if owed[fu] > 0 {
                    *tail = f;
                } else if f == *tail {
                    *tail = NONE;
                } else {
                    next[t] = next[fu];
                }
            }
            PullQueue::Fifo(q) => {
                q.pop_front();
            }
            PullQueue::Cyclic {
                owed,
                waiting,
                cursor,
            } => {
                let Some(f) = Self::next_waiting(waiting, *cursor) else {
                    return;
                };
                let fu = f as usize;
                owed[fu] = if all { 0 } else { owed[fu] - 1 };
                if owed[fu] == 0 {
                    waiting[fu / 64] &= !(1 << (f % 64));
                }
                // The turn moves past the flow served, as htsim's iterator does.
                *cursor = if fu + 1 == owed.len() { 0 } else { f + 1 };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ReceiverOut::{Control, PullTick};

    const GAP: SimTime = 100;

    fn control(kind: Kind, flow: u32, seq: u32) -> ReceiverOut {
        Control { kind, flow, seq }
    }

    /// Two flows of three packets, started at time 10, pulled round-robin.
    fn receiver() -> Receiver {
        let mut r = Receiver::new(&[3, 3], 2, GAP, PullOrder::Fair);
        r.start(10);
        r
    }

    #[test]
    fn data_is_acked_and_pulled_and_an_idle_pacer_ticks_at_once() {
        let mut r = receiver();
        let mut out = Vec::new();
        r.on_data(50, 1, 0, &mut out);
        assert_eq!(out, [control(Kind::Ack, 1, 0), PullTick(50)]);
        out.clear();
        // The pacer is busy: a second arrival only queues its pull.
        r.on_data(51, 0, 0, &mut out);
        assert_eq!(out, [control(Kind::Ack, 0, 0)]);
    }

    #[test]
    fn a_header_is_nacked_and_pulled() {
        let mut r = receiver();
        let mut out = Vec::new();
        r.on_header(50, 0, 2, &mut out);
        assert_eq!(out, [control(Kind::Nack, 0, 2), PullTick(50)]);
        assert_eq!(r.nacks(), 1);
    }

    #[test]
    fn pulls_go_one_packet_time_apart_each_flow_in_its_turn() {
        let mut r = receiver();
        let mut out = Vec::new();
        r.on_data(50, 1, 0, &mut out);
        r.on_data(50, 0, 0, &mut out);
        out.clear();
        r.on_pull_tick(50, &mut out);
        assert_eq!(out, [control(Kind::Pull, 1, 0), PullTick(50 + GAP)]);
        out.clear();
        r.on_pull_tick(50 + GAP, &mut out);
        assert_eq!(out, [control(Kind::Pull, 0, 0), PullTick(50 + 2 * GAP)]);
        out.clear();
        // Nothing left to pull: the pacer goes idle.
        r.on_pull_tick(50 + 2 * GAP, &mut out);
        assert!(out.is_empty());
        // Idle since its last tick, the pacer pulls the next arrival at once.
        r.on_data(50 + 3 * GAP, 0, 1, &mut out);
        assert_eq!(out, [control(Kind::Ack, 0, 1), PullTick(50 + 3 * GAP)]);
    }

    #[test]
    fn a_complete_flow_is_not_pulled_and_its_queued_pulls_are_skipped() {
        let mut r = receiver();
        let mut out = Vec::new();
        r.on_data(20, 0, 0, &mut out);
        r.on_data(20, 0, 1, &mut out);
        out.clear();
        r.on_data(30, 0, 2, &mut out);
        assert_eq!(out, [control(Kind::Ack, 0, 2)], "complete: no pull");
        assert_eq!(r.fct(0), Some(20));
        // A duplicate is ACKed again but counted once.
        out.clear();
        r.on_data(31, 0, 2, &mut out);
        assert_eq!(out, [control(Kind::Ack, 0, 2)]);
        assert_eq!((r.received(0), r.received_bitmap(0)), (3, 3));
        out.clear();
        r.on_pull_tick(40, &mut out);
        assert!(
            out.is_empty(),
            "both queued pulls were for the finished flow"
        );
        assert_eq!(r.finish(), None);
        for seq in 0..3 {
            r.on_data(60, 1, seq, &mut out);
        }
        assert_eq!(r.finish(), Some(60));
    }

    #[test]
    fn flows_beyond_the_applications_never_end_the_run() {
        // The application's one flow of two packets, and a short flow of one beside it.
        let mut r = Receiver::new(&[2, 1], 1, GAP, PullOrder::Fair);
        r.start(10);
        let mut out = Vec::new();
        r.on_data(20, 1, 0, &mut out);
        assert_eq!(out, [control(Kind::Ack, 1, 0)], "complete at once: no pull");
        assert_eq!((r.fct(1), r.finish()), (Some(10), None));
        r.on_data(30, 0, 0, &mut out);
        r.on_data(40, 0, 1, &mut out);
        assert_eq!((r.fct(0), r.finish()), (Some(30), Some(40)));
    }

    /// Pulls sent by ticks at `GAP` apart from `t`, until the pacer goes idle: the flows
    /// they went to, checking each tick asks for the next one packet time later.
    fn drain(r: &mut Receiver, mut t: SimTime) -> Vec<u32> {
        let mut flows = Vec::new();
        loop {
            let mut out = Vec::new();
            r.on_pull_tick(t, &mut out);
            match out[..] {
                [] => return flows,
                [Control {
                    kind: Kind::Pull,
                    flow,
                    ..
                }, PullTick(next)] => {
                    assert_eq!(next, t + GAP);
                    flows.push(flow);
                    t = next;
                }
                _ => panic!("unexpected {out:?}"),
            }
        }
    }

    /// An incast's flows 0..3 earn three pulls each (their first windows' arrivals), then a
    /// short flow 3 arrives and earns one.
    fn incast_then_short(order: PullOrder) -> Receiver {
        let mut r = Receiver::new(&[9, 9, 9, 2], 3, GAP, order);
        r.start(0);
        let mut out = Vec::new();
        for seq in 0..3 {
            for flow in 0..3 {
                r.on_data(10, flow, seq, &mut out);
            }
        }
        r.on_header(11, 3, 0, &mut out);
        r
    }

    #[test]
    fn fair_pulls_take_turns_across_flows_and_a_new_flow_waits_one_turn_not_the_queue() {
        let mut r = incast_then_short(PullOrder::Fair);
        // Flow 0 had the first turn; the short flow joins the ring behind the flows already
        // owed pulls, so it is pulled after one turn of each, fourth rather than tenth.
        assert_eq!(drain(&mut r, 10), [0, 1, 2, 3, 0, 1, 2, 0, 1, 2]);
        let mut r = incast_then_short(PullOrder::Fifo);
        assert_eq!(drain(&mut r, 10), [0, 1, 2, 0, 1, 2, 0, 1, 2, 3]);
    }

    #[test]
    fn cyclic_pulls_walk_the_flows_in_their_order_and_a_new_flow_waits_for_its_place() {
        // The turn is at flow 0 when the short flow 3 comes to owe a pull: it is served when
        // the walk reaches it, after flows 1 and 2 (as with `fair` here, since it comes last).
        let mut r = incast_then_short(PullOrder::Cyclic);
        assert_eq!(drain(&mut r, 10), [0, 1, 2, 3, 0, 1, 2, 0, 1, 2]);
        // Flow 0 comes to owe a pull again while the turn is past it (at flow 2, flows 1 and
        // 2 owing): `fair` serves it after every flow already waiting, as it joins the ring's
        // tail; `cyclic` serves it when the walk wraps around to index 0, before flow 1.
        for (order, want) in [
            (PullOrder::Fair, [2, 1, 0, 2]),
            (PullOrder::Cyclic, [2, 0, 1, 2]),
        ] {
            let mut r = three_flows_owing(order, &[(0, 0), (1, 0), (1, 1), (2, 0), (2, 1)]);
            let mut out = Vec::new();
            // Ticks serve flows 0 and 1; the turn is then at flow 2, flow 1 owing one more
            // and flow 2 two.
            r.on_pull_tick(10, &mut out);
            r.on_pull_tick(10 + GAP, &mut out);
            assert_eq!(out[0], control(Kind::Pull, 0, 0), "{order:?}");
            assert_eq!(out[2], control(Kind::Pull, 1, 0), "{order:?}");
            r.on_data(20, 0, 1, &mut out);
            assert_eq!(drain(&mut r, 10 + 2 * GAP), want, "{order:?}");
        }
    }

    #[test]
    fn the_cyclic_walk_wraps_across_words_and_skips_flows_owed_nothing() {
        let mut q = PullQueue::new(PullOrder::Cyclic, 130, 130);
        assert_eq!(q.front(), None);
        for f in [129, 3, 64] {
            q.push(f);
        }
        q.push(64);
        let mut served = Vec::new();
        while let Some(f) = q.front() {
            served.push(f);
            q.take_front(false);
        }
        // From index 0: 3, 64, 129, then around to 64's second pull.
        assert_eq!(served, [3, 64, 129, 64]);
        // Dropping every pull of the front flow clears it at once.
        q.push(5);
        q.push(5);
        q.push(7);
        assert_eq!(q.front(), Some(5));
        q.take_front(true);
        assert_eq!(q.front(), Some(7));
    }

    /// Three flows of nine packets, started at 0, whose packets `(flow, seq)` arrived at 10:
    /// each arrival owes its flow a pull.
    fn three_flows_owing(order: PullOrder, arrivals: &[(u32, u32)]) -> Receiver {
        let mut r = Receiver::new(&[9, 9, 9], 3, GAP, order);
        r.start(0);
        let mut out = Vec::new();
        for &(flow, seq) in arrivals {
            r.on_data(10, flow, seq, &mut out);
        }
        r
    }

    #[test]
    fn a_flow_that_runs_out_of_pulls_leaves_the_ring_and_rejoins_at_its_tail() {
        let mut r = three_flows_owing(PullOrder::Fair, &[(0, 0), (1, 0), (1, 1), (2, 0)]);
        let mut out = Vec::new();
        r.on_pull_tick(10, &mut out);
        assert_eq!(out, [control(Kind::Pull, 0, 0), PullTick(10 + GAP)]);
        // Flow 0 owes nothing now; its next arrival puts it behind flows 1 and 2.
        r.on_data(20, 0, 1, &mut out);
        assert_eq!(drain(&mut r, 10 + GAP), [1, 2, 0, 1]);
    }

    #[test]
    fn a_finished_flows_owed_pulls_are_dropped_without_using_a_tick() {
        for order in [PullOrder::Fair, PullOrder::Fifo, PullOrder::Cyclic] {
            let mut r = Receiver::new(&[2, 3], 2, GAP, order);
            r.start(0);
            let mut out = Vec::new();
            r.on_data(10, 0, 0, &mut out);
            r.on_data(10, 1, 0, &mut out);
            r.on_header(10, 0, 1, &mut out);
            // Flow 0 completes with two pulls owed: both go unsent, and the tick serves flow 1.
            r.on_data(15, 0, 1, &mut out);
            assert_eq!(r.fct(0), Some(15));
            assert_eq!(drain(&mut r, 20), [1], "{order:?}");
        }
    }

    #[test]
    fn a_pull_earned_at_deadline_minus_1_waits_for_the_pacers_deadline() {
        let mut r = Receiver::new(&[9, 9], 2, GAP, PullOrder::Fair);
        r.start(0);
        let mut out = Vec::new();
        r.on_data(0, 0, 0, &mut out);
        out.clear();
        r.on_pull_tick(0, &mut out);
        assert_eq!(out, [control(Kind::Pull, 0, 0), PullTick(GAP)]);
        out.clear();
        // The pacer's next tick is at GAP: an arrival at GAP − 1 only queues its pull...
        r.on_data(GAP - 1, 1, 0, &mut out);
        assert_eq!(out, [control(Kind::Ack, 1, 0)]);
        out.clear();
        // ...which goes at the deadline, and the pacer goes idle one packet time later.
        r.on_pull_tick(GAP, &mut out);
        assert_eq!(out, [control(Kind::Pull, 1, 0), PullTick(2 * GAP)]);
        out.clear();
        r.on_pull_tick(2 * GAP, &mut out);
        assert!(out.is_empty());
        // Idle, it pulls an arrival at once.
        r.on_data(2 * GAP, 0, 1, &mut out);
        assert_eq!(out, [control(Kind::Ack, 0, 1), PullTick(2 * GAP)]);
    }

    #[test]
    fn short_first_serves_the_short_flows_before_the_applications_each_class_in_turn() {
        let mut r = incast_then_short(PullOrder::ShortFirst);
        // The short flow 3's two pulls go at the next ticks, ahead of the incast's nine
        // waiting, which then take their turns.
        let mut out = Vec::new();
        r.on_header(12, 3, 1, &mut out);
        assert_eq!(drain(&mut r, 10), [3, 3, 0, 1, 2, 0, 1, 2, 0, 1, 2]);
        // A short flow arriving while the incast's are pulled goes at the next tick.
        let mut r = incast_then_short(PullOrder::ShortFirst);
        r.on_pull_tick(10, &mut out);
        r.on_pull_tick(10 + GAP, &mut out);
        r.on_data(10 + GAP + 1, 3, 1, &mut out);
        assert_eq!(drain(&mut r, 10 + 2 * GAP), [3, 1, 2, 0, 1, 2, 0, 1, 2]);
    }
}
