//! RoCEv2: RDMA queue pairs over UDP/IP, as RDMA NICs run them over lossless (PFC) or lossy
//! Ethernet: line-rate start, a per-queue-pair rate limiter, packet sequence numbers, ACKs,
//! NAKs and go-back-N (or IRN's selective repeat: Mittal et al., "Revisiting Network Support
//! for RDMA", SIGCOMM 2018), a retransmission timer, and the congestion control the NIC runs
//! ([`cc`]: none, DCQCN or HPCC).
//!
//! - Every message (an RDMA write of the workload's bytes) goes over a reliable-connected
//!   queue pair; a queue pair's messages share one PSN space, so a late packet of one never
//!   passes for the next's.
//! - A host's NIC serves its active queue pairs round robin, one data packet in its queue at
//!   a time, each queue pair no faster than its rate limiter (the congestion control's rate,
//!   at most `roce.rate_limit` or the line rate) and within its window. So a NIC paused by PFC
//!   stops taking packets from its queue pairs, as a real one does, instead of queueing them.
//! - Frames: a data packet is its payload plus `roce.header_bytes` (Ethernet 14, IPv4 20, UDP
//!   8, BTH 12, ICRC 4, FCS 4 = 62 B) plus, under HPCC, `roce.int_hop_bytes` per switch on its
//!   route (reserved when sent, so a frame's size never changes on the way); ACKs, NAKs and
//!   CNPs are `roce.control_bytes` (66 B: AETH 4 more), ACKs under HPCC with the INT echo.
//! - Data packets are ECN-capable when the congestion control is DCQCN; they collect INT at
//!   the switches when it is HPCC, and the receiver echoes the stack in its ACK.
//! - A write (the incast's messages, a schedule's flows) completes at its requester when
//!   the ACK of its last packet arrives; a synchronized read's block completes at the client,
//!   where its data arrives.
//! - Routing is per-flow ECMP: each queue pair's data and ACKs take a path drawn once at
//!   set-up, stored as a route, so forwarding is an array read.
//!
//! The agents are apart and clock-free: `sender` (the requester's queue pair) and `receiver`
//! (the responder's); this module is their glue to the engine ([`Transport`]), `workload`
//! lays the messages out (the short flows beside the workload too, `workload.short_load`: a
//! queue pair each, its one message posted at the flow's arrival), `run_report` reports.

pub mod cc;
pub mod dcqcn;
pub mod hpcc;
#[cfg(test)]
mod htsim_tests;
mod receiver;
mod run_report;
#[cfg(test)]
mod schedule_tests;
mod sender;
#[cfg(test)]
mod tests;
mod workload;

use crate::capture::pcap::{aeth, roce_frame, roce_op, MAX_HEADERS};
use crate::capture::{Capture, RoceFrame};
use crate::config::{RoceCc, Scenario};
use crate::engine::driver::{Cx, Seen, Transport};
use crate::engine::{Event, EventQueue, Timer};
use crate::net::fabric::{Fabric, Offered, Wire};
use crate::net::int::{IntHop, MAX_HOPS};
use crate::net::trim::Trimmable;
use crate::net::{PktId, CE, ECT};
use crate::report::{Report, RoceReport};
use crate::topology::LinkId;
use crate::units::SimTime;

use crate::app::messages::Plan;
use receiver::{Receiver, Reply};
use sender::{Ready, Sender};

/// [`Event::Agent`] kinds: a queue pair's timers (the agent is the queue pair), a NIC's wake
/// when a rate limiter lets a packet go (the agent is the host), a message posted (the agent
/// is the message).
const QP_TIMER: u8 = 0;
const NIC_WAKE: u8 = 1;
const POST: u8 = 2;

/// What a RoCE packet is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Data: one packet of a message.
    Data,
    /// ACK: every PSN below `psn` arrived.
    Ack,
    /// NAK: the receiver expects `psn` (and holds `sack`).
    Nak,
    /// CNP: DCQCN's congestion notification.
    Cnp,
}

/// A RoCE packet on the wire.
#[derive(Debug, Clone, Copy)]
pub struct Pkt {
    kind: Kind,
    /// ECN codepoint bits ([`ECT`], [`CE`]).
    ecn: u8,
    /// Whether it collects INT, and the hops recorded.
    int_on: bool,
    int_n: u8,
    hop: u16,
    qp: u32,
    psn: u32,
    sack: u32,
    route: u32,
    /// Bytes on the wire, without preamble and gap.
    frame: u32,
    int: [IntHop; MAX_HOPS],
}

impl Trimmable for Pkt {
    #[inline]
    fn is_data(&self) -> bool {
        self.kind == Kind::Data
    }
    #[inline]
    fn frame(&self) -> u32 {
        self.frame
    }
    fn trim(&mut self, _header_bytes: u32) {
        unreachable!("RoCE runs over drop-tail (or lossless) ports, never trimming ones")
    }
}

impl Wire for Pkt {
    crate::net::fabric::follows_route!(route);
    #[inline]
    fn ect(&self) -> bool {
        self.ecn & ECT != 0
    }
    #[inline]
    fn mark_ce(&mut self) {
        self.ecn |= CE;
    }
    #[inline]
    fn wants_int(&self) -> bool {
        self.int_on
    }
    #[inline]
    fn int_push(&mut self, hop: IntHop) {
        if (self.int_n as usize) < MAX_HOPS {
            self.int[self.int_n as usize] = hop;
            self.int_n += 1;
        }
    }
    #[inline]
    fn flow(&self) -> u32 {
        // Data and its ACKs, NAKs and CNPs alike: the queue pair is the flow (its report's
        // `flow`), so PFC's paused time per flow counts a held ACK as well as held data.
        self.qp
    }
}

/// The capture's headers of packet `p` of queue pair `qp` (numbered 0x100 + its index at
/// both ends): data as SEND First/Middle/Last/Only by its place in its message, asking for an
/// ACK at a message's end; an ACK names the last PSN it acknowledges, a NAK the one expected.
fn encode(buf: &mut [u8; MAX_HEADERS], p: &Pkt, qp: &Qp) -> (usize, u32) {
    let (src, dst) = match p.kind {
        Kind::Data => (qp.src, qp.dst),
        _ => (qp.dst, qp.src),
    };
    let (opcode, psn, ack_req, syndrome) = match p.kind {
        Kind::Data => {
            let op = match qp.rx.edges(p.psn) {
                (true, true) => roce_op::SEND_ONLY,
                (true, false) => roce_op::SEND_FIRST,
                (false, true) => roce_op::SEND_LAST,
                (false, false) => roce_op::SEND_MIDDLE,
            };
            let last = matches!(op, roce_op::SEND_ONLY | roce_op::SEND_LAST);
            (op, p.psn, last, None)
        }
        Kind::Ack => (
            roce_op::ACKNOWLEDGE,
            p.psn.wrapping_sub(1),
            false,
            Some(aeth::ACK),
        ),
        Kind::Nak => (roce_op::ACKNOWLEDGE, p.psn, false, Some(aeth::NAK_SEQUENCE)),
        Kind::Cnp => (roce_op::CNP, 0, false, None),
    };
    let ecn = match (p.ecn & ECT != 0, p.ecn & CE != 0) {
        (true, true) => 3,
        (true, false) => 2,
        _ => 0,
    };
    let f = RoceFrame {
        src,
        dst,
        opcode,
        dest_qp: (0x100 + p.qp) & 0xFF_FFFF,
        psn: psn & 0xFF_FFFF,
        ack_req,
        aeth: syndrome,
        ecn,
        frame: p.frame,
    };
    roce_frame(buf, &f)
}

/// One queue pair: its ends, routes, frame sizes and agents.
#[derive(Debug)]
struct Qp {
    src: u32,
    dst: u32,
    data_route: u32,
    ack_route: u32,
    /// Bytes of a data frame beyond its payload (headers and reserved INT).
    data_extra: u32,
    /// Bytes of a NAK or CNP frame, and of an ACK (with the INT echo under HPCC).
    ctrl_frame: u32,
    ack_frame: u32,
    tx: Sender,
    rx: Receiver,
    timer: Timer,
    /// On its NIC's list of active queue pairs.
    on_nic: bool,
    /// Its messages, as indexes into [`Roce::msgs`], in the order posted; how many of them
    /// its sender saw acknowledged whole.
    msgs: Vec<u32>,
    reported: u32,
}

/// A host's NIC: the queue pairs with something to send, round robin.
#[derive(Debug, Default)]
struct Nic {
    active: Vec<u32>,
    cursor: usize,
    /// Data packets in the NIC's queue (at most one: it pulls the next as one leaves).
    queued: u32,
    wake: Timer,
}

/// One message: its queue pair, size, and when it was posted and completed.
#[derive(Debug, Clone)]
struct Msg {
    qp: u32,
    bytes: u64,
    posted: Option<SimTime>,
    done: Option<SimTime>,
}

/// The queue pairs of a RoCE run.
#[derive(Debug)]
pub struct Roce {
    qps: Vec<Qp>,
    nics: Vec<Nic>,
    msgs: Vec<Msg>,
    plan: Plan,
    /// Messages not yet complete (posted or not), the workload's only: background queue
    /// pairs' messages (indexes `apps..`) run until the workload ends.
    pending: usize,
    apps: usize,
    /// Queue pairs `background..short_qp` carry background flows, `short_qp..` the short flows
    /// beside the workload (`workload.short_load`), one message each: messages `short_msg..`.
    background: usize,
    short_qp: usize,
    short_msg: usize,
    /// Each short flow's arrival after the workload's start.
    short_at: Vec<SimTime>,
    /// Each queue pair's incast burst, in a flow schedule.
    bursts: Vec<Option<u32>>,
    /// What the background queue pairs had delivered when the workload started.
    background_at_start: u64,
    /// Payload bytes of a full packet, preamble and gap per frame.
    mtu: u64,
    phy: u64,
    ecn: bool,
    int: bool,
    stats: RoceReport,
    capture: Option<Box<Capture>>,
}

impl Transport for Roce {
    type Packet = Pkt;
    const UNFINISHED: &'static str = "RoCE messages are unfinished";

    fn new(sc: &Scenario, fabric: &mut Fabric<Pkt>, events: &mut EventQueue) -> Roce {
        let (specs, plan, shorts) = workload::specs(sc, &fabric.net);
        let hosts = fabric.net.hosts as usize;
        let mut roce = Roce {
            qps: Vec::with_capacity(specs.len()),
            nics: (0..hosts).map(|_| Nic::default()).collect(),
            msgs: Vec::new(),
            plan,
            pending: 0,
            apps: 0,
            background: 0,
            short_qp: 0,
            short_msg: 0,
            short_at: Vec::new(),
            bursts: Vec::new(),
            background_at_start: 0,
            mtu: sc.roce.mtu,
            phy: sc.tcp.phy_overhead,
            ecn: sc.roce.cc == RoceCc::Dcqcn,
            int: sc.roce.cc == RoceCc::Hpcc,
            stats: RoceReport::default(),
            capture: None,
        };
        roce.set_up(sc, &mut fabric.net, &specs, shorts);
        // Background queue pairs start at once, the workload after their warm-up.
        for m in roce.apps..roce.short_msg {
            events.push(0, Event::Agent(m as u32, POST, 0));
        }
        let start = match roce.background < roce.short_qp {
            true => sc.background.warmup,
            false => 0,
        };
        events.push(start, Event::Start);
        roce
    }

    fn finished(&self) -> bool {
        self.pending == 0
    }

    fn start(&mut self, cx: &mut Cx<Pkt>) {
        self.start_workload(cx);
    }

    #[inline]
    fn timer(&mut self, cx: &mut Cx<Pkt>, agent: u32, kind: u8, gen: u32) {
        match kind {
            QP_TIMER => {
                let q = &mut self.qps[agent as usize];
                if q.timer.fire(cx.now, gen) {
                    q.tx.on_timer(cx.now);
                }
                self.after_sender(cx, agent);
            }
            NIC_WAKE => {
                let wake = &mut self.nics[agent as usize].wake;
                if wake.fire(cx.now, gen) {
                    self.pump(cx, agent);
                } else if let Some((t, gen)) = wake.needs_event() {
                    // The wake-up moved later since this event was set (a rate cut re-timed
                    // the queue pair it waited for): wait for the new time, not forever.
                    cx.push(t, Event::Agent(agent, NIC_WAKE, gen));
                }
            }
            _ => self.post(cx, agent),
        }
    }

    #[inline]
    fn sent(&mut self, cx: &mut Cx<Pkt>, l: LinkId, id: PktId) {
        let p = cx.fabric.pkts.get(id);
        if let Some(cap) = self.capture.as_deref_mut() {
            if cap.taps_link(l) {
                let qp = &self.qps[p.qp as usize];
                cap.write(cx.now, |buf| encode(buf, p, qp));
            }
        }
        // A data packet left its NIC: the NIC takes the next.
        if p.kind == Kind::Data && p.hop == 0 {
            let host = self.qps[p.qp as usize].src;
            self.nics[host as usize].queued -= 1;
            self.pump(cx, host);
        }
    }

    #[inline]
    fn deliver(&mut self, cx: &mut Cx<Pkt>, id: PktId) {
        let p = *cx.fabric.pkts.get(id);
        cx.fabric.pkts.free(id);
        if let Some(cap) = self.capture.as_deref_mut() {
            let qp = &self.qps[p.qp as usize];
            let to = if p.kind == Kind::Data { qp.dst } else { qp.src };
            if cap.taps_host(to) {
                cap.write(cx.now, |buf| encode(buf, &p, qp));
            }
        }
        match p.kind {
            Kind::Data => self.on_data(cx, &p),
            Kind::Ack => {
                let int = &p.int[..p.int_n as usize];
                self.qps[p.qp as usize].tx.on_ack(cx.now, p.psn, int);
                self.acked_messages(cx, p.qp);
                self.after_sender(cx, p.qp);
            }
            Kind::Nak => {
                self.qps[p.qp as usize].tx.on_nak(cx.now, p.psn, p.sack);
                self.acked_messages(cx, p.qp);
                self.after_sender(cx, p.qp);
            }
            Kind::Cnp => {
                self.stats.cnps_received += 1;
                self.qps[p.qp as usize].tx.on_cnp(cx.now);
                self.after_sender(cx, p.qp);
            }
        }
    }

    #[inline]
    fn offered(&mut self, cx: &mut Cx<Pkt>, _l: LinkId, id: PktId, o: Offered) {
        debug_assert_eq!(o, Offered::Dropped, "drop-tail ports queue or drop");
        let p = *cx.fabric.pkts.get(id);
        cx.fabric.pkts.free(id);
        self.stats.dropped += 1;
        if p.kind == Kind::Data && p.hop == 0 {
            // Refused by its own NIC's queue (a limited `topology.nic_buffer`).
            let host = self.qps[p.qp as usize].src;
            self.nics[host as usize].queued -= 1;
            self.pump(cx, host);
        }
    }

    fn attach_capture(&mut self, cap: Capture, _sc: &Scenario) {
        self.capture = Some(Box::new(cap));
    }

    fn finish_capture(&mut self) -> Option<std::io::Result<u64>> {
        self.capture.take().map(|c| c.finish())
    }

    fn report(&self, run: &Seen<Pkt>) -> Report {
        self.run_report(run)
    }

    fn check_invariants(&self, run: &Seen<Pkt>) -> Result<(), String> {
        self.check(run)
    }
}

impl Roce {
    /// Queue pair `q`'s sender was called: schedule its timers, let its NIC send.
    #[inline]
    fn after_sender(&mut self, cx: &mut Cx<Pkt>, q: u32) {
        let qp = &mut self.qps[q as usize];
        qp.timer.deadline = qp.tx.next_deadline();
        if let Some((t, gen)) = qp.timer.needs_event() {
            cx.push(t, Event::Agent(q, QP_TIMER, gen));
        }
        let host = qp.src;
        self.pump(cx, host);
    }

    /// Host `h`'s NIC, if its queue is free, takes a packet from the next queue pair round
    /// robin that may send now; if every one waits for its rate limiter, it wakes for the
    /// first.
    fn pump(&mut self, cx: &mut Cx<Pkt>, h: u32) {
        let nic = &mut self.nics[h as usize];
        if nic.queued > 0 || nic.active.is_empty() {
            return;
        }
        let mut earliest: Option<SimTime> = None;
        let mut i = 0;
        while i < nic.active.len() {
            let at = (nic.cursor + i) % nic.active.len();
            let q = nic.active[at];
            let qp = &mut self.qps[q as usize];
            match qp.tx.ready(cx.now) {
                Ready::Now => {
                    nic.cursor = at + 1;
                    nic.queued += 1;
                    self.send_data(cx, q);
                    return;
                }
                Ready::At(t) => earliest = Some(earliest.map_or(t, |e| e.min(t))),
                // Done with everything posted: off the NIC's list until the next message.
                Ready::Idle if qp.tx.done() => {
                    qp.on_nic = false;
                    nic.active.swap_remove(at);
                    continue;
                }
                Ready::Idle => {}
            }
            i += 1;
        }
        if let Some(t) = earliest {
            nic.wake.set(t);
            if let Some((t, gen)) = nic.wake.needs_event() {
                cx.push(t, Event::Agent(h, NIC_WAKE, gen));
            }
        }
    }

    /// Queue pair `q` sends its next data packet into its host's NIC.
    fn send_data(&mut self, cx: &mut Cx<Pkt>, q: u32) {
        let qp = &mut self.qps[q as usize];
        let (psn, retx) = qp.tx.next_packet().expect("the queue pair was ready");
        let frame = qp.tx.payload(psn) + qp.data_extra;
        qp.tx.on_sent(cx.now, u64::from(frame) + self.phy);
        self.stats.data_packets += 1;
        self.stats.retransmitted += u64::from(retx);
        let p = Pkt {
            kind: Kind::Data,
            ecn: if self.ecn { ECT } else { 0 },
            int_on: self.int,
            int_n: 0,
            hop: 0,
            qp: q,
            psn,
            sack: 0,
            route: qp.data_route,
            frame,
            int: [IntHop::default(); MAX_HOPS],
        };
        self.send(cx, p);
        let qp = &mut self.qps[q as usize];
        qp.timer.deadline = qp.tx.next_deadline();
        if let Some((t, gen)) = qp.timer.needs_event() {
            cx.push(t, Event::Agent(q, QP_TIMER, gen));
        }
    }

    /// A data packet reached its receiver: answer it, and complete the messages it ends.
    fn on_data(&mut self, cx: &mut Cx<Pkt>, p: &Pkt) {
        let qp = &mut self.qps[p.qp as usize];
        let a = qp.rx.on_data(cx.now, p.psn, p.ecn & CE != 0);
        let (route, frame, ack_frame) = (qp.ack_route, qp.ctrl_frame, qp.ack_frame);
        let reply = |kind, psn, sack| Pkt {
            kind,
            ecn: 0,
            int_on: false,
            int_n: 0,
            hop: 0,
            qp: p.qp,
            psn,
            sack,
            route,
            frame,
            int: [IntHop::default(); MAX_HOPS],
        };
        if a.cnp {
            self.stats.cnps_sent += 1;
            self.send(cx, reply(Kind::Cnp, 0, 0));
        }
        match a.reply {
            Some(Reply::Ack(psn)) => {
                self.stats.acks += 1;
                // The ACK echoes the telemetry of the packet it answers (HPCC), in as many
                // bytes as the data packet reserved for it.
                let mut ack = reply(Kind::Ack, psn, 0);
                ack.int = p.int;
                ack.int_n = p.int_n;
                ack.frame = ack_frame;
                self.send(cx, ack);
            }
            Some(Reply::Nak { psn, sack }) => {
                self.stats.naks += 1;
                self.send(cx, reply(Kind::Nak, psn, sack));
            }
            None => {}
        }
        // A read completes at the client, where its data arrives; so does a short flow (its
        // completion, as every transport's, is its last byte's arrival at the receiver).
        if self.plan.servers().is_some() || p.qp as usize >= self.short_qp {
            for k in a.completed.0..a.completed.1 {
                let m = self.qps[p.qp as usize].msgs[k as usize];
                self.complete(cx, m);
            }
        }
    }

    /// A write completes at its requester when the ACK of its last packet arrives (as htsim's
    /// RoCE measures it too): complete the messages queue pair `q`'s sender has seen
    /// acknowledged whole since the last call.
    fn acked_messages(&mut self, cx: &mut Cx<Pkt>, q: u32) {
        if self.plan.servers().is_some() || q as usize >= self.short_qp {
            return;
        }
        let qp = &mut self.qps[q as usize];
        let (from, to) = (qp.reported, qp.tx.msgs_acked());
        qp.reported = to;
        for k in from..to {
            let m = self.qps[q as usize].msgs[k as usize];
            self.complete(cx, m);
        }
    }

    /// Put packet `p` on the first link of its route.
    #[inline]
    fn send(&mut self, cx: &mut Cx<Pkt>, p: Pkt) {
        let first = cx
            .fabric
            .net
            .hop(p.route, 0)
            .expect("routes are never empty");
        let id = cx.fabric.pkts.alloc(p);
        let o = cx.offer(first, id);
        if o != Offered::Queued {
            self.offered(cx, first, id, o);
        }
    }
}
