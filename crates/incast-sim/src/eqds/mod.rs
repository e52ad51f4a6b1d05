//! EQDS (Olteanu, Eran, Dumitrescu, Popa, Baciu, Silberstein, Nikolaidis, Handley, Raiciu,
//! "An Edge-Queued Datagram Service for All Datacenter Traffic", NSDI 2022): a datagram service
//! under any transport that moves the queue out of the network to the senders' edges.
//!
//! - A sender holds its flow's backlog in its edge queue. It sends an unsolicited first
//!   window at line rate (`eqds.initial_window`, about one BDP) until the first answer comes
//!   back (htsim's "speculating"), then only on credit.
//! - The receiver learns each flow's backlog from its packets' headers and grants it
//!   credit, one packet at a time, round robin over the flows it owes, paced at its own
//!   link's rate (`eqds.pull_rate`): its link is filled by credited packets and the switch
//!   queues stay short.
//! - Switches trim (`eqds.trimming`, the paper's deployment; NDP's trimming port,
//!   [`crate::net::trim`]): a data packet meeting a full data queue (`eqds.data_queue`) goes on
//!   as its header with priority, the receiver NACKs it and owes its sender one more credit;
//!   the sender resends it on that credit. A header meeting a full header queue is dropped
//!   (htsim's EQDS) or returned to its sender (`eqds.return_to_sender`).
//! - Without trimming, switches are drop-tail (`topology.buffer`); a lost packet, like a lost
//!   header, is recovered by the sender's timeout: it gives up what is unanswered and sends an
//!   RTS stating the credit it needs, which the receiver grants.
//! - Every packet of a flow takes the next of `eqds.paths` entropies, which the switches hash
//!   to a path (per-packet spraying).
//!
//! Workloads: the incast (N flows into one receiver, started together) and the synchronized
//! read (one flow per server per block; a block starts when the receiver holds all of the one
//! before, each flow after `workload.jitter`). A flow completes when the receiver holds every
//! packet; its completion time counts from its start.
//!
//! The agents are apart and clock-free: `sender` (one per flow) and `receiver` (the
//! receiving host and its credit pacer); this module is their glue to the engine, and
//! `run_report` reports.

mod receiver;
mod run_report;
mod sender;
#[cfg(test)]
mod tests;
mod workload;

use crate::app::messages::Plan;
use crate::capture::{self, Capture, NdpKind};
use crate::config::Scenario;
use crate::engine::driver::{Cx, Seen, Transport};
use crate::engine::{Event, EventQueue};
use crate::net::fabric::{Fabric, Offered, Wire};
use crate::net::trim::{Port, Trimmable};
use crate::net::PktId;
use crate::report::{EqdsReport, Report};
use crate::rng::{Rng, Stream};
use crate::topology::{LinkId, Network};
use crate::units::{tx_time, SimTime};

use receiver::{Receiver, ReceiverOut};
use sender::{Sender, SenderOut};

/// [`Event::Agent`] kinds: a sender's timer (the agent is its flow), the receiver's credit
/// pacer, a flow's start after its jitter, a sender's next unsolicited packet (the agent is
/// the flow).
const RTO: u8 = 0;
const PULL_TICK: u8 = 1;
const BEGIN: u8 = 2;
const SPECULATE: u8 = 3;

/// What an EQDS packet is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Data with its payload.
    Data,
    /// A data packet trimmed to its header.
    Header,
    /// A header returned to its sender by a full header queue.
    Bounce,
    /// The receiver got a data packet.
    Ack,
    /// The receiver got a trimmed header.
    Nack,
    /// One packet of credit.
    Pull,
    /// A sender asks for credit (`seq` = packets wanted).
    Rts,
}

/// An EQDS packet on the wire.
#[derive(Debug, Clone, Copy)]
pub struct Pkt {
    kind: Kind,
    flow: u32,
    /// Packet index within the flow; for an RTS, the packets of credit wanted.
    seq: u32,
    /// Data, headers and RTSs: the packets of credit the sender wants for new data in all.
    target: u32,
    /// Hosts the packet travels between, the path index and the hop it is on.
    src: u32,
    dst: u32,
    path: u32,
    hop: u16,
    /// Bytes on the wire, without preamble and gap.
    frame: u32,
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
    #[inline]
    fn trim(&mut self, header_bytes: u32) {
        self.kind = Kind::Header;
        self.frame = header_bytes;
    }
}

impl Wire for Pkt {
    crate::net::fabric::follows_route!(ends);
    #[inline]
    fn flow(&self) -> u32 {
        self.flow
    }
}

/// The capture's headers of EQDS packet `p` (NDP's format: the same kinds; an RTS is
/// written as a pull from the sender).
fn encode(buf: &mut [u8; capture::pcap::MAX_HEADERS], p: &Pkt) -> (usize, u32) {
    let kind = match p.kind {
        Kind::Data => NdpKind::Data,
        Kind::Header => NdpKind::Header,
        Kind::Bounce => NdpKind::Bounce,
        Kind::Ack => NdpKind::Ack,
        Kind::Nack => NdpKind::Nack,
        Kind::Pull | Kind::Rts => NdpKind::Pull,
    };
    capture::pcap::ndp_frame(buf, p.src, p.dst, kind, p.flow, p.seq, p.frame)
}

/// A flow's path spraying: a salt drawn at set-up and a counter of packets sent each way.
/// Entropy `e` of the flow's `paths` maps to a path by a hash of (salt, e), as a switch's
/// ECMP hash of the entropy field would.
#[derive(Debug, Clone, Copy)]
struct Spray {
    salt: u64,
    fwd: u32,
    back: u32,
}

/// A 64-bit mix (SplitMix64's finalizer): spreads (salt, entropy) over the paths.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The flows of an EQDS run into one receiver.
#[derive(Debug)]
pub struct Eqds {
    senders: Vec<Sender>,
    /// Host each flow sends from, and its spraying.
    srcs: Vec<u32>,
    spray: Vec<Spray>,
    receiver: Receiver,
    rx_host: u32,
    plan: Plan,
    /// The application's flows, `0..apps`; the short flows beside it follow.
    apps: usize,
    /// Each short flow's arrival after the workload's start.
    shorts: Vec<SimTime>,
    /// Packet sizes: payload per full packet, header; path entropies per flow.
    mtu: u64,
    header: u64,
    paths: u32,
    return_to_sender: bool,
    initial_window: u32,
    /// When the workload started, and the receiving link's bottleneck.
    start: SimTime,
    /// What the last agent call returned (kept to reuse its allocation).
    sender_out: Vec<SenderOut>,
    receiver_out: Vec<ReceiverOut>,
    capture: Option<Box<Capture>>,
    /// Network counters (the agents keep their own).
    stats: EqdsReport,
}

impl Transport for Eqds {
    type Packet = Pkt;
    const UNFINISHED: &'static str = "EQDS flows are unfinished";

    fn new(sc: &Scenario, fabric: &mut Fabric<Pkt>, events: &mut EventQueue) -> Eqds {
        let e = &sc.eqds;
        let (specs, plan, apps) = workload::flows(sc, &fabric.net);
        let packets: Vec<u32> = specs
            .iter()
            .map(|s| s.bytes.div_ceil(e.mtu).max(1) as u32)
            .collect();
        let header = e.header_bytes as u32;
        if e.trimming {
            let (dq, hq, w) = (e.data_queue, e.header_queue, e.header_weight);
            // Eager ports: a hop whose queue is empty costs one event, not two.
            let switch = || Port::switch(dq, hq, w, header).eager();
            fabric.trim(switch, || Port::nic(w).eager());
        }
        let frame = e.mtu + e.header_bytes + sc.tcp.phy_overhead;
        let line = tx_time(frame, sc.topology.receiver_link) as f64;
        let pull_spacing = (line / e.pull_rate).round() as SimTime;
        let rto = sc.eqds_rto();
        // Unsolicited packets leave one packet time apart on the sender's NIC.
        let spec_gap = tx_time(frame, sc.topology.link);
        let net = &fabric.net;
        let mut rng = Rng::stream(sc.seed, Stream::Eqds(0));
        let flows = specs.len() as u32;
        events.push(0, Event::Start);
        Eqds {
            senders: (0..flows as usize)
                .map(|f| Sender::new(specs[f].bytes, packets[f], rto, spec_gap))
                .collect(),
            srcs: specs.iter().map(|s| s.src).collect(),
            spray: (0..flows)
                .map(|_| Spray {
                    salt: rng.next_u64(),
                    fwd: 0,
                    back: 0,
                })
                .collect(),
            receiver: Receiver::new(&packets, pull_spacing).apps_only(apps as u32),
            rx_host: net.receiver,
            plan,
            apps,
            shorts: specs[apps..].iter().map(|s| s.start).collect(),
            mtu: e.mtu,
            header: e.header_bytes,
            paths: e.paths,
            return_to_sender: e.return_to_sender,
            initial_window: e.initial_window,
            start: 0,
            sender_out: Vec::new(),
            receiver_out: Vec::new(),
            capture: None,
            stats: EqdsReport::default(),
        }
    }

    fn finished(&self) -> bool {
        self.receiver.finish().is_some()
    }

    fn start(&mut self, cx: &mut Cx<Pkt>) {
        self.start_workload(cx);
    }

    #[inline]
    fn timer(&mut self, cx: &mut Cx<Pkt>, agent: u32, kind: u8, gen: u32) {
        match kind {
            RTO => self.with_sender(cx, agent, |s, now, out| s.on_timer(now, gen, out)),
            PULL_TICK => self.with_receiver(cx, |r, now, out| r.on_pull_tick(now, out)),
            SPECULATE => self.with_sender(cx, agent, |s, now, out| s.speculate(now, out)),
            _ => self.begin(cx, agent),
        }
    }

    #[inline]
    fn sent(&mut self, cx: &mut Cx<Pkt>, l: LinkId, id: PktId) {
        if let Some(cap) = self.capture.as_deref_mut() {
            if cap.taps_link(l) {
                let p = *cx.fabric.pkts.get(id);
                cap.write(cx.now, |buf| encode(buf, &p));
            }
        }
    }

    #[inline]
    fn deliver(&mut self, cx: &mut Cx<Pkt>, id: PktId) {
        let p = *cx.fabric.pkts.get(id);
        cx.fabric.pkts.free(id);
        self.take(cx, p);
    }

    #[inline]
    fn offered(&mut self, cx: &mut Cx<Pkt>, l: LinkId, id: PktId, o: Offered) {
        match o {
            Offered::Queued => {}
            Offered::Trimmed => self.stats.trimmed += 1,
            Offered::Refused { trimmed } => {
                self.stats.trimmed += u64::from(trimmed);
                let kind = cx.fabric.pkts.get(id).kind;
                if kind == Kind::Header && self.return_to_sender {
                    self.bounce(cx, id);
                } else {
                    cx.fabric.net.links[l].count_drop();
                    self.stats.header_drops += 1;
                    cx.fabric.pkts.free(id);
                }
            }
            Offered::Dropped => {
                // A drop-tail port (no trimming): the link counted it.
                match cx.fabric.pkts.get(id).kind {
                    Kind::Data => self.stats.drops += 1,
                    _ => self.stats.control_drops += 1,
                }
                cx.fabric.pkts.free(id);
            }
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

impl Eqds {
    /// Flow `f` starts now: its sender sends the unsolicited window.
    fn begin(&mut self, cx: &mut Cx<Pkt>, f: u32) {
        self.receiver.begin(f, cx.now);
        let iw = self.initial_window;
        self.with_sender(cx, f, |s, now, out| s.start(now, iw, out));
    }

    /// Call sender `f`, then do what it asked, in its order.
    #[inline]
    fn with_sender(
        &mut self,
        cx: &mut Cx<Pkt>,
        f: u32,
        call: impl FnOnce(&mut Sender, SimTime, &mut Vec<SenderOut>),
    ) {
        let mut out = std::mem::take(&mut self.sender_out);
        out.clear();
        call(&mut self.senders[f as usize], cx.now, &mut out);
        for &o in &out {
            match o {
                SenderOut::Deadline(t, gen) => cx.push(t, Event::Agent(f, RTO, gen)),
                SenderOut::Speculate(t) => cx.push(t, Event::Agent(f, SPECULATE, 0)),
                SenderOut::Send(seq) => self.send_data(cx, f, seq),
                SenderOut::Rts(wanted) => {
                    let (src, dst) = (self.srcs[f as usize], self.rx_host);
                    self.send_control(cx, Kind::Rts, f, wanted, src, dst);
                }
            }
        }
        self.sender_out = out;
    }

    /// Call the receiver, then do what it asked, in its order.
    #[inline]
    fn with_receiver(
        &mut self,
        cx: &mut Cx<Pkt>,
        call: impl FnOnce(&mut Receiver, SimTime, &mut Vec<ReceiverOut>),
    ) {
        let mut out = std::mem::take(&mut self.receiver_out);
        out.clear();
        call(&mut self.receiver, cx.now, &mut out);
        for &o in &out {
            match o {
                ReceiverOut::Control { kind, flow, seq } => {
                    let (src, dst) = (self.rx_host, self.srcs[flow as usize]);
                    self.send_control(cx, kind, flow, seq, src, dst);
                }
                ReceiverOut::PullTick(t) => cx.push(t, Event::Agent(0, PULL_TICK, 0)),
                ReceiverOut::Done(f) => self.flow_done(cx, f),
            }
        }
        self.receiver_out = out;
    }

    /// The path of flow `f`'s next packet from `a` to `b`: its next entropy's.
    #[inline]
    fn next_path(&mut self, net: &Network, f: u32, a: u32, b: u32, forward: bool) -> u32 {
        let n = net.paths_between(a, b);
        let s = &mut self.spray[f as usize];
        let k = if forward { &mut s.fwd } else { &mut s.back };
        let entropy = *k % self.paths;
        *k = k.wrapping_add(1);
        if n <= 1 {
            return 0;
        }
        let salt = if forward { s.salt } else { !s.salt };
        (mix(salt ^ u64::from(entropy)) % u64::from(n)) as u32
    }

    fn send_data(&mut self, cx: &mut Cx<Pkt>, f: u32, seq: u32) {
        let payload = self.senders[f as usize].payload(seq, self.mtu);
        let frame = (payload + self.header) as u32;
        let src = self.srcs[f as usize];
        let path = self.next_path(&cx.fabric.net, f, src, self.rx_host, true);
        self.stats.data_packets += 1;
        let target = self.senders[f as usize].target();
        self.send(
            cx,
            Pkt {
                kind: Kind::Data,
                flow: f,
                seq,
                target,
                src,
                dst: self.rx_host,
                path,
                hop: 0,
                frame,
            },
        );
    }

    fn send_control(&mut self, cx: &mut Cx<Pkt>, kind: Kind, f: u32, seq: u32, src: u32, dst: u32) {
        let forward = src != self.rx_host;
        let path = self.next_path(&cx.fabric.net, f, src, dst, forward);
        let target = self.senders[f as usize].target();
        self.send(
            cx,
            Pkt {
                kind,
                flow: f,
                seq,
                target,
                src,
                dst,
                path,
                hop: 0,
                frame: self.header as u32,
            },
        );
    }

    fn send(&mut self, cx: &mut Cx<Pkt>, p: Pkt) {
        let id = cx.fabric.pkts.alloc(p);
        let first = cx
            .fabric
            .net
            .hop_via(p.src, p.dst, p.path, 0)
            .expect("paths are never empty");
        let o = cx.offer(first, id);
        if o != Offered::Queued {
            self.offered(cx, first, id, o);
        }
    }

    /// Send a trimmed header back to its sender along the same path, reversed.
    fn bounce(&mut self, cx: &mut Cx<Pkt>, id: PktId) {
        self.stats.bounced += 1;
        let p = *cx.fabric.pkts.get(id);
        // The switch at forward position `hop` is at position `len - hop` going back.
        let back = cx.fabric.net.path_len(p.src, p.dst) - p.hop;
        let pk = cx.fabric.pkts.get_mut(id);
        pk.kind = Kind::Bounce;
        std::mem::swap(&mut pk.src, &mut pk.dst);
        pk.hop = back;
        let (src, dst, path) = (pk.src, pk.dst, pk.path);
        let l = cx
            .fabric
            .net
            .hop_via(src, dst, path, back)
            .expect("a bounce starts inside the path");
        let o = cx.offer(l, id);
        if o != Offered::Queued {
            self.offered(cx, l, id, o);
        }
    }

    /// Packet `p` reached its destination host.
    fn take(&mut self, cx: &mut Cx<Pkt>, p: Pkt) {
        if let Some(cap) = self.capture.as_deref_mut() {
            if cap.taps_host(p.dst) {
                cap.write(cx.now, |buf| encode(buf, &p));
            }
        }
        let (f, seq, t) = (p.flow, p.seq, p.target);
        match p.kind {
            Kind::Data => self.with_receiver(cx, |r, now, out| r.on_data(now, f, seq, t, out)),
            Kind::Header => self.with_receiver(cx, |r, now, o| r.on_header(now, f, seq, t, o)),
            Kind::Rts => self.with_receiver(cx, |r, now, out| r.on_rts(now, f, seq, t, out)),
            Kind::Ack => self.with_sender(cx, f, |s, now, out| s.on_ack(now, seq, out)),
            Kind::Nack => self.with_sender(cx, f, |s, now, out| s.on_nack(now, seq, out)),
            Kind::Pull => self.with_sender(cx, f, |s, now, out| s.on_credit(now, out)),
            Kind::Bounce => self.with_sender(cx, f, |s, now, out| s.on_bounce(now, seq, out)),
        }
    }
}
