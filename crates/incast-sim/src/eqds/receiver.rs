//! EQDS's receiver (Olteanu et al., NSDI 2022): it ACKs data and NACKs trimmed headers at
//! once, and schedules its senders: it keeps, per flow, the packets of credit it still owes
//! (what the flow holds beyond its unsolicited packets, which every packet's header states,
//! plus one per trimmed header, or what an RTS asks for) and grants them one packet's credit
//! at a time, round robin over the flows that are owed, at the rate of its own link. So after
//! the first window its link is filled by credited packets and the queue sits at the senders'
//! edges. Credit for retransmissions (trimmed headers, RTSs) goes first, round robin over the
//! flows owed it, as htsim's EQDS pull pacer serves its retransmitting senders before the
//! others: a packet already sent once is finished before new data is pulled.
//!
//! Like the sender it takes `now` and appends what it sends, its pacer's next tick and the
//! flows it completes to `out`.

use std::collections::VecDeque;

use super::Kind;
use crate::units::SimTime;

/// What the receiver asks of the network and the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReceiverOut {
    /// Send an ACK, NACK or credit (`kind`) for packet `seq` of `flow`.
    Control {
        /// ACK, NACK or Pull.
        kind: Kind,
        /// The flow.
        flow: u32,
        /// The packet (0 for a credit).
        seq: u32,
    },
    /// Wake the pacer at this time.
    PullTick(SimTime),
    /// `flow` now holds every packet.
    Done(u32),
}

/// One flow's receiving end.
#[derive(Debug)]
struct Inbound {
    packets: u32,
    /// The most credit for new data its packets asked for.
    target: u32,
    received: u32,
    got: Vec<bool>,
    /// When it started, and its completion time from then.
    start: SimTime,
    fct: Option<SimTime>,
    /// Credits still owed for new data and for retransmissions, and whether it is in each
    /// round robin.
    owed: u32,
    rtx_owed: u32,
    in_rr: bool,
    in_rtx: bool,
}

/// The receiving host: its flows and its credit pacer.
#[derive(Debug)]
pub(crate) struct Receiver {
    flows: Vec<Inbound>,
    /// Flows owed credit for retransmissions, then for new data, each served round robin.
    rtx: VecDeque<u32>,
    rr: VecDeque<u32>,
    /// A pacer tick is pending.
    pacer_busy: bool,
    /// One credited packet's time on the receiver's link: the gap between credits.
    pull_spacing: SimTime,
    last_pull: Option<SimTime>,
    /// The application's flows, `0..apps` (the short flows beside it follow), those of them
    /// complete, and when the last one completed.
    apps: u32,
    done: u32,
    finish: Option<SimTime>,
    /// NACKs and credits sent, RTSs received.
    nacks: u64,
    pulls: u64,
    rts: u64,
}

impl Receiver {
    /// Flows of the given packet counts, credited one packet per `pull_spacing`.
    pub(crate) fn new(packets: &[u32], pull_spacing: SimTime) -> Receiver {
        Receiver {
            flows: packets
                .iter()
                .map(|&p| Inbound {
                    packets: p,
                    target: 0,
                    received: 0,
                    got: vec![false; p as usize],
                    start: 0,
                    fct: None,
                    owed: 0,
                    rtx_owed: 0,
                    in_rr: false,
                    in_rtx: false,
                })
                .collect(),
            rtx: VecDeque::new(),
            rr: VecDeque::new(),
            pacer_busy: false,
            pull_spacing,
            last_pull: None,
            apps: packets.len() as u32,
            done: 0,
            finish: None,
            nacks: 0,
            pulls: 0,
            rts: 0,
        }
    }

    /// Only flows `0..apps` are the application's: the run finishes with them (the short flows
    /// beside it, `workload.short_load`, follow).
    pub(crate) fn apps_only(mut self, apps: u32) -> Receiver {
        self.apps = apps;
        self
    }

    /// `flow` starts at `now`: its completion time counts from here.
    pub(crate) fn begin(&mut self, flow: u32, now: SimTime) {
        self.flows[flow as usize].start = now;
    }

    /// When the last flow completed, once all have.
    pub(crate) fn finish(&self) -> Option<SimTime> {
        self.finish
    }

    /// Completion time of `flow` from its start, once complete.
    pub(crate) fn fct(&self, flow: u32) -> Option<SimTime> {
        self.flows[flow as usize].fct
    }

    /// Distinct packets of `flow` received, as counted and from the bitmap.
    pub(crate) fn received(&self, flow: u32) -> (u32, u32) {
        let f = &self.flows[flow as usize];
        (f.received, f.got.iter().filter(|&&g| g).count() as u32)
    }

    /// NACKs and credits sent, RTSs received.
    pub(crate) fn counts(&self) -> (u64, u64, u64) {
        (self.nacks, self.pulls, self.rts)
    }

    /// Data packet `seq` of `flow` arrived whole, stating `target` packets of credit wanted
    /// for new data: ACK it.
    pub(crate) fn on_data(
        &mut self,
        now: SimTime,
        flow: u32,
        seq: u32,
        target: u32,
        out: &mut Vec<ReceiverOut>,
    ) {
        self.learn(flow, target);
        out.push(ReceiverOut::Control {
            kind: Kind::Ack,
            flow,
            seq,
        });
        let fl = &mut self.flows[flow as usize];
        if !fl.got[seq as usize] {
            fl.got[seq as usize] = true;
            fl.received += 1;
        }
        if fl.received == fl.packets && fl.fct.is_none() {
            fl.fct = Some(now - fl.start);
            fl.owed = 0;
            fl.rtx_owed = 0;
            out.push(ReceiverOut::Done(flow));
            if flow < self.apps {
                self.done += 1;
                if self.done == self.apps {
                    self.finish = Some(now);
                }
            }
        } else if fl.fct.is_none() {
            self.queue(now, flow, out);
        }
    }

    /// The trimmed header of packet `seq` of `flow` arrived: NACK it and owe the flow the
    /// credit to resend it.
    pub(crate) fn on_header(
        &mut self,
        now: SimTime,
        flow: u32,
        seq: u32,
        target: u32,
        out: &mut Vec<ReceiverOut>,
    ) {
        self.learn(flow, target);
        self.nacks += 1;
        out.push(ReceiverOut::Control {
            kind: Kind::Nack,
            flow,
            seq,
        });
        let fl = &mut self.flows[flow as usize];
        if fl.fct.is_none() && !fl.got[seq as usize] {
            fl.rtx_owed += 1;
            self.queue(now, flow, out);
        }
    }

    /// `flow`'s sender asks for `wanted` packets of credit in all (an RTS after its timeout or
    /// a bounce; `target` as a data packet states it): owe it at least that many.
    pub(crate) fn on_rts(
        &mut self,
        now: SimTime,
        flow: u32,
        wanted: u32,
        target: u32,
        out: &mut Vec<ReceiverOut>,
    ) {
        self.rts += 1;
        if self.flows[flow as usize].fct.is_some() {
            return;
        }
        self.learn(flow, target);
        let fl = &mut self.flows[flow as usize];
        // What it asks beyond what is owed for new data is retransmission credit.
        fl.rtx_owed = fl.rtx_owed.max(wanted.saturating_sub(fl.owed));
        self.queue(now, flow, out);
    }

    /// The pacer may grant one credit: to the next flow owed one for a retransmission,
    /// else for new data, round robin, then wait one packet time.
    pub(crate) fn on_pull_tick(&mut self, now: SimTime, out: &mut Vec<ReceiverOut>) {
        let flow = match self.next_rtx() {
            Some(f) => Some(f),
            None => self.next_new(),
        };
        let Some(flow) = flow else {
            self.pacer_busy = false;
            return;
        };
        self.pulls += 1;
        out.push(ReceiverOut::Control {
            kind: Kind::Pull,
            flow,
            seq: 0,
        });
        self.last_pull = Some(now);
        out.push(ReceiverOut::PullTick(now + self.pull_spacing));
    }

    /// The next flow owed a retransmission's credit, which is then taken.
    fn next_rtx(&mut self) -> Option<u32> {
        take_credit(&mut self.rtx, &mut self.flows, |f| {
            (&mut f.rtx_owed, &mut f.in_rtx)
        })
    }

    /// The next flow owed new data's credit, which is then taken.
    fn next_new(&mut self) -> Option<u32> {
        take_credit(&mut self.rr, &mut self.flows, |f| {
            (&mut f.owed, &mut f.in_rr)
        })
    }

    /// A packet of `flow` states `target` packets of credit wanted for new data in all (its
    /// backlog beyond what it sends unsolicited; it grows when the unsolicited window ends
    /// early): owe it what that adds.
    fn learn(&mut self, flow: u32, target: u32) {
        let fl = &mut self.flows[flow as usize];
        if target > fl.target && fl.fct.is_none() {
            fl.owed += target - fl.target;
            fl.target = target;
        }
    }

    /// Put `flow` in the round robins it is owed credit in, and wake an idle pacer.
    fn queue(&mut self, now: SimTime, flow: u32, out: &mut Vec<ReceiverOut>) {
        let fl = &mut self.flows[flow as usize];
        if fl.owed > 0 && !fl.in_rr {
            fl.in_rr = true;
            self.rr.push_back(flow);
        }
        if fl.rtx_owed > 0 && !fl.in_rtx {
            fl.in_rtx = true;
            self.rtx.push_back(flow);
        }
        let owed = !(self.rr.is_empty() && self.rtx.is_empty());
        if owed && !self.pacer_busy {
            self.pacer_busy = true;
            let at = match self.last_pull {
                Some(t) => (t + self.pull_spacing).max(now),
                None => now,
            };
            out.push(ReceiverOut::PullTick(at));
        }
    }
}

/// One packet of credit from the first flow of `queue` still owed some, served round robin:
/// a flow owed more goes to the back; one finished or paid off leaves the queue. `owed` names
/// which debt the queue serves (retransmissions' or new data's) and its in-queue flag.
fn take_credit(
    queue: &mut VecDeque<u32>,
    flows: &mut [Inbound],
    owed: fn(&mut Inbound) -> (&mut u32, &mut bool),
) -> Option<u32> {
    while let Some(flow) = queue.pop_front() {
        let fl = &mut flows[flow as usize];
        let finished = fl.fct.is_some();
        let (left, queued) = owed(fl);
        if finished || *left == 0 {
            *queued = false;
            continue;
        }
        *left -= 1;
        if *left > 0 {
            queue.push_back(flow);
        } else {
            *queued = false;
        }
        return Some(flow);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use ReceiverOut::{Control, Done, PullTick};

    const GAP: SimTime = 100;

    fn control(kind: Kind, flow: u32, seq: u32) -> ReceiverOut {
        Control { kind, flow, seq }
    }

    fn pull(flow: u32) -> ReceiverOut {
        control(Kind::Pull, flow, 0)
    }

    /// Two flows of four packets, two of them unsolicited, started at time 10.
    fn receiver() -> Receiver {
        let mut r = Receiver::new(&[4, 4], GAP);
        r.begin(0, 10);
        r.begin(1, 10);
        r
    }

    #[test]
    fn the_first_packet_makes_the_backlog_owed_and_wakes_the_pacer() {
        let mut r = receiver();
        let mut out = Vec::new();
        r.on_data(50, 1, 0, 2, &mut out);
        assert_eq!(out, [control(Kind::Ack, 1, 0), PullTick(50)]);
        out.clear();
        // The second packet of the window adds nothing owed: the pacer is already busy.
        r.on_data(51, 1, 1, 2, &mut out);
        assert_eq!(out, [control(Kind::Ack, 1, 1)]);
        r.on_pull_tick(50, &mut out);
        r.on_pull_tick(50 + GAP, &mut out);
        out.clear();
        // Two credits (4 packets − 2 unsolicited) went; nothing more is owed.
        r.on_pull_tick(50 + 2 * GAP, &mut out);
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(r.counts().1, 2);
    }

    #[test]
    fn credit_goes_round_robin_one_packet_time_apart() {
        let mut r = receiver();
        let mut out = Vec::new();
        r.on_data(50, 0, 0, 2, &mut out);
        r.on_data(50, 1, 0, 2, &mut out);
        out.clear();
        for k in 0..4 {
            r.on_pull_tick(50 + k * GAP, &mut out);
        }
        let pulls: Vec<_> = out.iter().filter(|o| matches!(o, Control { .. })).collect();
        assert_eq!(pulls, [&pull(0), &pull(1), &pull(0), &pull(1)]);
        assert!(out.contains(&PullTick(50 + 4 * GAP)));
        out.clear();
        r.on_pull_tick(50 + 4 * GAP, &mut out);
        assert!(out.is_empty());
        // Idle since its last credit, the pacer waits out one gap for the next.
        r.on_header(50 + 4 * GAP + 1, 0, 3, 2, &mut out);
        assert_eq!(out, [control(Kind::Nack, 0, 3), PullTick(50 + 4 * GAP + 1)]);
    }

    #[test]
    fn the_pacer_never_grants_two_credits_within_a_gap() {
        let mut r = receiver();
        let mut out = Vec::new();
        r.on_data(50, 0, 0, 2, &mut out);
        r.on_pull_tick(50, &mut out);
        r.on_pull_tick(50 + GAP, &mut out);
        r.on_pull_tick(50 + 2 * GAP, &mut out);
        out.clear();
        // Idle; a header one tick before the gap since the last credit ends waits for it.
        r.on_header(50 + 2 * GAP - 1, 1, 0, 2, &mut out);
        assert_eq!(out[1], PullTick(50 + 2 * GAP));
    }

    #[test]
    fn a_header_owes_one_credit_and_is_nacked() {
        let mut r = receiver();
        let mut out = Vec::new();
        r.on_header(50, 0, 0, 2, &mut out);
        assert_eq!(out, [control(Kind::Nack, 0, 0), PullTick(50)]);
        // Backlog 2 beyond the window, plus the trimmed packet.
        for k in 0..4 {
            r.on_pull_tick(50 + k * GAP, &mut out);
        }
        assert_eq!(out.iter().filter(|o| **o == pull(0)).count(), 3);
        assert_eq!(r.counts().0, 1);
    }

    #[test]
    fn an_rts_raises_what_is_owed_to_what_it_asks_and_never_lowers_it() {
        let mut r = receiver();
        let mut out = Vec::new();
        r.on_rts(50, 0, 3, 2, &mut out);
        assert_eq!(out, [PullTick(50)]);
        r.on_rts(51, 0, 1, 2, &mut out);
        // The first packet arriving late adds nothing: the RTS stated the backlog.
        r.on_data(52, 0, 0, 2, &mut out);
        out.clear();
        for k in 0..5 {
            r.on_pull_tick(50 + k * GAP, &mut out);
        }
        assert_eq!(out.iter().filter(|o| **o == pull(0)).count(), 3);
        assert_eq!(r.counts().2, 2);
    }

    #[test]
    fn a_complete_flow_is_done_once_and_owed_nothing() {
        let mut r = receiver();
        let mut out = Vec::new();
        for seq in 0..3 {
            r.on_data(20, 0, seq, 2, &mut out);
        }
        out.clear();
        r.on_data(30, 0, 3, 2, &mut out);
        assert_eq!(out, [control(Kind::Ack, 0, 3), Done(0)]);
        assert_eq!(r.fct(0), Some(20));
        out.clear();
        r.on_data(31, 0, 3, 2, &mut out);
        assert_eq!(
            out,
            [control(Kind::Ack, 0, 3)],
            "a duplicate: ACKed, not done again"
        );
        assert_eq!(r.received(0), (4, 4));
        out.clear();
        r.on_pull_tick(40, &mut out);
        assert!(
            out.is_empty(),
            "the finished flow's queued credit is skipped"
        );
        r.on_rts(41, 0, 5, 2, &mut out);
        assert!(out.is_empty());
        assert_eq!(r.finish(), None);
        for seq in 0..4 {
            r.on_data(60, 1, seq, 2, &mut out);
        }
        assert_eq!(r.finish(), Some(60));
    }

    /// Pulls granted per flow over `ticks` ticks of the pacer from time 50.
    fn pulls_over(r: &mut Receiver, ticks: u64) -> [usize; 2] {
        let mut out = Vec::new();
        for k in 0..ticks {
            r.on_pull_tick(50 + k * GAP, &mut out);
        }
        [0, 1].map(|f| out.iter().filter(|o| **o == pull(f)).count())
    }

    /// Credit for resending is owed on top of credit for new data, so a flow paid for its
    /// retransmissions is still owed its new data and is credited for it without sending
    /// anything new first. (htsim's EQDS counts both against one pull target that only new
    /// packets advance: a sender whose pulls all went to resends, with no new packet out to
    /// state more, is owed nothing and waits until the receiver has no one else to credit.)
    #[test]
    fn credit_for_resending_does_not_use_up_credit_for_new_data() {
        let mut r = Receiver::new(&[10, 10], GAP);
        r.begin(0, 10);
        r.begin(1, 10);
        let mut out = Vec::new();
        // Flow 0: its four unsolicited packets all trimmed; six more wanted.
        for seq in 0..4 {
            r.on_header(50, 0, seq, 6, &mut out);
        }
        r.on_data(50, 1, 0, 6, &mut out);
        // Four resends and six new packets for flow 0, six for flow 1; then nothing.
        assert_eq!(pulls_over(&mut r, 17), [10, 6]);
    }

    /// The same after a timeout: the receiver never saw flow 0 (its headers were dropped); its
    /// RTS states everything it still needs, resends and new data, and all of it is credited.
    #[test]
    fn an_rts_after_every_header_was_dropped_is_credited_for_all_it_needs() {
        let mut r = Receiver::new(&[10, 10], GAP);
        r.begin(0, 10);
        r.begin(1, 10);
        let mut out = Vec::new();
        r.on_data(50, 1, 0, 6, &mut out);
        r.on_rts(50, 0, 10, 6, &mut out);
        assert_eq!(pulls_over(&mut r, 17), [10, 6]);
    }

    #[test]
    fn retransmission_credit_goes_before_new_data() {
        let mut r = receiver();
        let mut out = Vec::new();
        r.on_data(50, 0, 0, 2, &mut out);
        r.on_header(50, 1, 1, 2, &mut out);
        out.clear();
        for k in 0..5 {
            r.on_pull_tick(50 + k * GAP, &mut out);
        }
        let pulls: Vec<_> = out.iter().filter(|o| matches!(o, Control { .. })).collect();
        // Flow 1's trimmed packet first, then new data round robin (flow 1 learned its
        // backlog from the header).
        assert_eq!(pulls, [&pull(1), &pull(0), &pull(1), &pull(0), &pull(1)]);
    }
}
