//! NDP's receiver (the NDP paper): it ACKs data and NACKs trimmed headers at once, and for
//! each arrival of an unfinished flow queues a PULL. Its pacer sends pulls at the rate of its
//! own link, one per full packet time, so after the first window its link is exactly filled.
//!
//! Pulls are served first come first served across flows (the paper round-robins them). Like
//! the sender, it takes `now` and appends what it sends, and its pacer's next tick, to `out`.

use std::collections::VecDeque;

use super::Kind;
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
    got: Vec<bool>,
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
    /// Flows owed a pull, in arrival order.
    pull_queue: VecDeque<u32>,
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
    pub(crate) fn new(packets: &[u32], apps: u32, pull_spacing: SimTime) -> Receiver {
        Receiver {
            flows: packets
                .iter()
                .map(|&packets| Inbound {
                    packets,
                    received: 0,
                    got: vec![false; packets as usize],
                    fct: None,
                })
                .collect(),
            apps,
            start: 0,
            done: 0,
            finish: None,
            pull_queue: VecDeque::new(),
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
        self.flows[flow as usize].got.iter().filter(|&&g| g).count() as u32
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
        if !fl.got[seq as usize] {
            fl.got[seq as usize] = true;
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

    /// The pacer may send a pull: to the first queued flow still unfinished, then wait one
    /// packet time.
    pub(crate) fn on_pull_tick(&mut self, now: SimTime, out: &mut Vec<ReceiverOut>) {
        while let Some(flow) = self.pull_queue.pop_front() {
            if self.flows[flow as usize].fct.is_some() {
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
        self.pull_queue.push_back(flow);
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

#[cfg(test)]
mod tests {
    use super::*;
    use ReceiverOut::{Control, PullTick};

    const GAP: SimTime = 100;

    fn control(kind: Kind, flow: u32, seq: u32) -> ReceiverOut {
        Control { kind, flow, seq }
    }

    /// Two flows of three packets, started at time 10.
    fn receiver() -> Receiver {
        let mut r = Receiver::new(&[3, 3], 2, GAP);
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
    fn pulls_go_one_packet_time_apart_in_arrival_order() {
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
        let mut r = Receiver::new(&[2, 1], 1, GAP);
        r.start(10);
        let mut out = Vec::new();
        r.on_data(20, 1, 0, &mut out);
        assert_eq!(out, [control(Kind::Ack, 1, 0)], "complete at once: no pull");
        assert_eq!((r.fct(1), r.finish()), (Some(10), None));
        r.on_data(30, 0, 0, &mut out);
        r.on_data(40, 0, 1, &mut out);
        assert_eq!((r.fct(0), r.finish()), (Some(30), Some(40)));
    }
}
