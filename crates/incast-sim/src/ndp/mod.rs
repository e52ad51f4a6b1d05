//! NDP (Handley et al., "Re-architecting datacenter networks and stacks for low latency and
//! high performance", SIGCOMM'17): a receiver-driven transport over trimming switches.
//!
//! - Senders start at line rate with an initial window of packets, sprayed over every path.
//! - A switch port keeps a small data queue (8 packets). A data packet arriving to a full one
//!   is trimmed to its header, which joins a priority header queue; so the receiver learns of
//!   every packet sent, lost payload or not. If the header queue overflows too, the header
//!   goes back to its sender (return-to-sender), or is dropped.
//! - The receiver ACKs data and NACKs headers at once, and for each arrival queues a PULL.
//!   Its pacer sends pulls at the rate of its own link, one per full packet; each pull lets a
//!   sender send one packet: a retransmission if it has one waiting, else new data. So after
//!   the first window, the receiver's link is exactly filled.
//!
//! The receiver's pull queue serves the flows owed a pull round-robin, as the paper's §3.2
//! does by default (`ndp.pull_order`: first come first served, or the short flows beside the
//! application's in strict priority, the paper's prioritization, are the alternatives).
//!
//! Simplifications, on purpose: trimming always trims the arriving packet (the paper sometimes
//! trims the queue's tail to avoid phase effects); a sender that hears nothing for `ndp.rto`
//! resends what is unacknowledged; control packets never bounce, a full header queue drops
//! them, which the timeout covers.
//!
//! The agents are apart and each testable alone: `sender` (one per flow) and `receiver` (the
//! receiving host and its pull pacer); the trimming ports are the network's
//! ([`crate::net::trim`]). This module is NDP's glue to the engine ([`Transport`]): it turns
//! what the agents return into packets and events, and what reaches a host into agent calls.

mod bits;
mod receiver;
mod sender;
mod workload;

use crate::capture::{self, Capture, NdpKind};
use crate::config::{NdpTimer, NdpTrim, Scenario};
use crate::engine::driver::{Cx, Seen, Transport};
use crate::engine::{Event, EventQueue};
use crate::net::fabric::{Fabric, Offered, Wire};
use crate::net::trim::{Port, Trimmable};
use crate::net::PktId;
use crate::report::{FlowReport, NdpReport, QueueReport, Report, RunSummary};
use crate::rng::{Rng, Stream};
use crate::topology::{LinkId, Network};
use crate::units::{tx_time, SimTime};

use receiver::{Receiver, ReceiverOut};
use sender::{Cause, Sender, SenderOut};

/// [`Event::Agent`] kinds: a sender's retransmission timer (the agent is its flow), the
/// receiver's pull pacer, a short flow's arrival (the agent is its flow).
const RTO: u8 = 0;
const PULL_TICK: u8 = 1;
const BEGIN: u8 = 2;

/// What an NDP packet is.
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
    /// The receiver lets the sender send one packet.
    Pull,
}

/// An NDP packet on the wire.
#[derive(Debug, Clone, Copy)]
pub struct Pkt {
    kind: Kind,
    flow: u32,
    /// Packet index within the flow (data, headers, ACKs, NACKs, bounces).
    seq: u32,
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

/// The capture's headers of NDP packet `p`.
fn encode(buf: &mut [u8; capture::pcap::MAX_HEADERS], p: &Pkt) -> (usize, u32) {
    let kind = match p.kind {
        Kind::Data => NdpKind::Data,
        Kind::Header => NdpKind::Header,
        Kind::Bounce => NdpKind::Bounce,
        Kind::Ack => NdpKind::Ack,
        Kind::Nack => NdpKind::Nack,
        Kind::Pull => NdpKind::Pull,
    };
    capture::pcap::ndp_frame(buf, p.src, p.dst, kind, p.flow, p.seq, p.frame)
}

/// The flows of an NDP incast: the application's, then the short flows beside it.
#[derive(Debug)]
pub struct Ndp {
    senders: Vec<Sender>,
    /// Host each flow sends from.
    srcs: Vec<u32>,
    /// Flows `..apps` are the incast's; each later one is a short flow arriving at
    /// `shorts[f - apps]` after the workload's start (`workload.short_load`), the first
    /// `begun` of them begun.
    apps: u32,
    shorts: Vec<SimTime>,
    begun: u32,
    receiver: Receiver,
    /// The receiving host.
    rx_host: u32,
    rng: Rng,
    /// Packet sizes: payload per full packet, header.
    mtu: u64,
    header: u64,
    return_to_sender: bool,
    initial_window: u32,
    /// What the last sender or receiver call returned (kept to reuse its allocation).
    sender_out: Vec<SenderOut>,
    receiver_out: Vec<ReceiverOut>,
    /// The packet capture, if the run writes one.
    capture: Option<Box<Capture>>,
    /// Switch counters (the agents keep their own).
    stats: NdpReport,
}

/// Flow `f`'s sender of `bytes` in `packets` packets, its timer as `ndp` sets it.
fn sender(sc: &Scenario, f: u32, bytes: u64, packets: u32) -> Sender {
    let ndp = &sc.ndp;
    let s = Sender::new(bytes, packets, ndp.rto).with_waits(
        ndp.rto_initial.unwrap_or(ndp.rto),
        ndp.rto_jitter,
        Rng::stream(sc.seed, Stream::NdpTimer(f)),
    );
    match ndp.timer {
        NdpTimer::Flow => s,
        NdpTimer::Packet => s.timed_per_packet(),
    }
}

impl Transport for Ndp {
    type Packet = Pkt;
    const UNFINISHED: &'static str = "NDP flows are unfinished";

    fn new(sc: &Scenario, fabric: &mut Fabric<Pkt>, events: &mut EventQueue) -> Ndp {
        let ndp = &sc.ndp;
        let header = ndp.header_bytes as u32;
        let (dq, hq, w) = (ndp.data_queue, ndp.header_queue, ndp.header_weight);
        // Eager ports: a hop whose queue is empty costs one event (the arrival), not two.
        // The 8192-host 8000-sender incast: 11.9 M -> 6.8 M events, half the CPU time. Only
        // the order of events on the same picosecond differs from lazy ports (which a packet
        // capture still gets, `Fabric::lazy_ports`).
        fabric.trim(
            || Port::switch(dq, hq, w, header).eager(),
            || Port::nic(w).eager(),
        );
        if ndp.trim == NdpTrim::Either {
            fabric.trim_either(Rng::stream(sc.seed, Stream::NdpTrim));
        }
        let frame = ndp.mtu + ndp.header_bytes + sc.tcp.phy_overhead;
        // Pulls one frame's time apart on the receiver's link, or slower (`ndp.pull_rate`).
        let frame_time = tx_time(frame, sc.topology.receiver_link);
        let pull_spacing = if ndp.pull_rate < 1.0 {
            (frame_time as f64 / ndp.pull_rate).round() as SimTime
        } else {
            frame_time
        };
        let (specs, apps) = workload::flows(sc, &fabric.net);
        let packets: Vec<u32> = (specs.iter())
            .map(|s| s.bytes.div_ceil(ndp.mtu).max(1) as u32)
            .collect();
        let net = &fabric.net;
        events.push(0, Event::Start);
        Ndp {
            senders: (specs.iter().zip(&packets))
                .enumerate()
                .map(|(f, (s, &p))| sender(sc, f as u32, s.bytes, p))
                .collect(),
            srcs: specs.iter().map(|s| s.src).collect(),
            apps,
            shorts: specs[apps as usize..].iter().map(|s| s.start).collect(),
            begun: 0,
            receiver: Receiver::new(&packets, apps, pull_spacing, ndp.pull_order),
            rx_host: net.receiver,
            rng: Rng::stream(sc.seed, Stream::Ndp),
            mtu: ndp.mtu,
            header: ndp.header_bytes,
            return_to_sender: ndp.return_to_sender,
            initial_window: ndp.initial_window,
            sender_out: Vec::new(),
            receiver_out: Vec::new(),
            stats: NdpReport::default(),
            capture: None,
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
            BEGIN => self.begin(cx, agent),
            _ => self.with_receiver(cx, |r, now, out| r.on_pull_tick(now, out)),
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
                    self.drop_header(cx, l, id);
                }
            }
            Offered::Dropped => unreachable!("NDP runs over trimming ports"),
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

impl Ndp {
    /// Call sender `f`, then do what it asked, in its order: schedule its deadline, send.
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
                SenderOut::Send(seq) => self.send_data(cx, f, seq),
            }
        }
        self.sender_out = out;
    }

    /// Call the receiver, then do what it asked, in its order: send, schedule its pacer.
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
                ReceiverOut::Control { kind, flow, seq } => self.send_control(cx, kind, flow, seq),
                ReceiverOut::PullTick(t) => cx.push(t, Event::Agent(0, PULL_TICK, 0)),
            }
        }
        self.receiver_out = out;
    }

    fn random_path(&mut self, net: &Network, a: u32, b: u32) -> u32 {
        let n = net.paths_between(a, b);
        if n <= 1 {
            0
        } else {
            self.rng.up_to(n as u64 - 1) as u32
        }
    }

    fn send_data(&mut self, cx: &mut Cx<Pkt>, f: u32, seq: u32) {
        let payload = self.senders[f as usize].payload(seq, self.mtu);
        let frame = (payload + self.header) as u32;
        let src = self.srcs[f as usize];
        let path = self.random_path(&cx.fabric.net, src, self.rx_host);
        self.stats.data_packets += 1;
        self.send(
            cx,
            Pkt {
                kind: Kind::Data,
                flow: f,
                seq,
                src,
                dst: self.rx_host,
                path,
                hop: 0,
                frame,
            },
        );
    }

    fn send_control(&mut self, cx: &mut Cx<Pkt>, kind: Kind, f: u32, seq: u32) {
        let dst = self.srcs[f as usize];
        let path = self.random_path(&cx.fabric.net, self.rx_host, dst);
        self.send(
            cx,
            Pkt {
                kind,
                flow: f,
                seq,
                src: self.rx_host,
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
        self.enqueue(cx, first, id);
    }

    /// Offer packet `id` to link `l`'s port: trim, bounce or drop at switch ports.
    #[inline]
    fn enqueue(&mut self, cx: &mut Cx<Pkt>, l: LinkId, id: PktId) {
        let o = cx.offer(l, id);
        if o != Offered::Queued {
            self.offered(cx, l, id, o);
        }
    }

    fn drop_header(&mut self, cx: &mut Cx<Pkt>, l: LinkId, id: PktId) {
        cx.fabric.net.links[l].count_drop();
        self.stats.dropped += 1;
        cx.fabric.pkts.free(id);
    }

    /// Send a trimmed header back to its sender along the same path, reversed. A bounce
    /// meeting a full header queue on its way back is dropped there.
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
        self.enqueue(cx, l, id);
    }

    /// Packet `p` reached its destination host.
    fn take(&mut self, cx: &mut Cx<Pkt>, p: Pkt) {
        if let Some(cap) = self.capture.as_deref_mut() {
            if cap.taps_host(p.dst) {
                cap.write(cx.now, |buf| encode(buf, &p));
            }
        }
        let (f, seq) = (p.flow, p.seq);
        match p.kind {
            Kind::Data => self.with_receiver(cx, |r, now, out| r.on_data(now, f, seq, out)),
            Kind::Header => self.with_receiver(cx, |r, now, out| r.on_header(now, f, seq, out)),
            Kind::Ack => self.with_sender(cx, f, |s, now, out| s.on_ack(now, seq, out)),
            Kind::Nack => self.with_sender(cx, f, |s, now, out| s.on_nack(now, seq, out)),
            Kind::Pull => self.with_sender(cx, f, |s, now, out| s.on_pull(now, out)),
            Kind::Bounce => self.with_sender(cx, f, |s, now, out| s.on_bounce(now, seq, out)),
        }
    }

    /// The report of the run so far.
    fn run_report(&self, run: &Seen<Pkt>) -> Report {
        let (net, sc, now) = (run.net(), run.sc, run.now);
        let ports = run
            .fabric
            .ports
            .as_deref()
            .expect("NDP runs over trimming ports");
        let rx = &self.receiver;
        let mut stats = self.stats.clone();
        stats.nacks = rx.nacks();
        for s in &self.senders {
            stats.pulls += s.pulls() as u64;
            stats.timeouts += s.timeouts() as u64;
            stats.retx_nack += s.retx(Cause::Nack) as u64;
            stats.retx_bounce += s.retx(Cause::Bounce) as u64;
            stats.retx_timeout += s.retx(Cause::Timeout) as u64;
        }
        // The incast's flows; the short flows are reported apart (`short_flows`).
        let flows: Vec<FlowReport> = (self.senders.iter().take(self.apps as usize))
            .enumerate()
            .map(|(i, s)| {
                let f = i as u32;
                let fct = rx.fct(f);
                let bytes = if fct.is_some() {
                    s.bytes()
                } else {
                    rx.received(f) as u64 * sc.ndp.mtu
                };
                FlowReport {
                    retx_fast: s.retx(Cause::Nack) + s.retx(Cause::Bounce),
                    retx_timeout: s.retx(Cause::Timeout),
                    ..FlowReport::delivered(f, bytes, fct)
                }
            })
            .collect();
        let app_bytes: u64 = (0..flows.len())
            .filter(|&f| rx.fct(f as u32).is_some())
            .map(|f| self.senders[f].bytes())
            .sum();
        let bn = net.bottleneck;
        let bottleneck = QueueReport {
            name: net.name(bn),
            limit: crate::config::QueueLimit {
                bytes: None,
                packets: Some(sc.ndp.data_queue),
            },
            stats: ports[bn.index()].stats(&net.links[bn]),
        };
        let busy = bottleneck.stats.busy;
        let base_latency =
            net.latency_between(net.host(0), self.rx_host, sc.ndp.mtu + sc.ndp.header_bytes);
        let mut r = Report {
            timeouts: stats.timeouts,
            retx_fast: stats.retx_nack + stats.retx_bounce,
            retx_timeout: stats.retx_timeout,
            drops: stats.dropped,
            ndp: Some(stats),
            ..Report::of_run(RunSummary {
                senders: sc.topology.senders,
                workload: sc.workload.kind,
                app_bytes,
                start: rx.start_time(),
                end: rx.finish().unwrap_or(now),
                now,
                events: run.processed,
                base_latency,
                link_bps: sc.topology.receiver_link,
                flows,
                bottleneck,
                bottleneck_busy: busy,
            })
        };
        r.short_flows = self.short_report(net, sc, now);
        r
    }

    /// Every packet is somewhere exactly once, and flows' counters agree with their bitmaps.
    fn check(&self, run: &Seen<Pkt>) -> Result<(), String> {
        let (net, sc) = (run.net(), run.sc);
        let ports = run
            .fabric
            .ports
            .as_deref()
            .expect("NDP runs over trimming ports");
        let pkts = &run.fabric.pkts;
        let queued: usize = (ports.iter().zip(&net.links))
            .map(|(p, l)| p.packets(l))
            .sum();
        if queued != pkts.live() {
            return Err(format!(
                "NDP: {} packets alive, {} in ports",
                pkts.live(),
                queued,
            ));
        }
        for (i, s) in self.senders.iter().enumerate() {
            let got = self.receiver.received_bitmap(i as u32);
            let received = self.receiver.received(i as u32);
            let (acked, acked_count) = s.acked();
            if got != received || acked != acked_count || acked > got {
                return Err(format!(
                    "NDP flow {i}: received {got}/{received}, acked {acked}"
                ));
            }
        }
        for (l, p) in ports.iter().enumerate() {
            if net.is_port(LinkId(l as u32)) && p.data_len() > sc.ndp.data_queue as usize {
                return Err(format!("NDP port {l}: data queue over its limit"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{NdpTimer, NdpTrim, PullOrder, TopologyKind, Transport, WorkloadKind};
    use crate::units::from_us;

    /// N flows of 270000 bytes on a k = 4 fat tree (16 hosts) at 10 Gbps with 1 µs links.
    fn incast(n: u32, iw: u32) -> Scenario {
        let mut sc = Scenario::example(n);
        sc.transport = Transport::Ndp;
        sc.ndp.initial_window = iw;
        sc.topology.kind = TopologyKind::FatTree;
        sc.topology.link = 10_000_000_000;
        sc.topology.receiver_link = 10_000_000_000;
        sc.topology.link_delay = from_us(1);
        sc.workload.kind = WorkloadKind::Incast;
        sc.workload.flow_size = Some(270_000);
        sc
    }

    /// Run `sc` checking the invariants every 100 events; every flow delivers its bytes.
    fn run_checked(sc: Scenario) -> Report {
        let mut sim = crate::Simulation::new(sc).unwrap();
        while !sim.step(100).unwrap() {
            sim.check_invariants().unwrap();
        }
        let r = sim.report();
        assert!(r
            .flows
            .iter()
            .all(|f| f.bytes == 270_000 && f.fct.is_some()));
        r
    }

    fn optimal(r: &Report, n: u32) -> f64 {
        n as f64 * 270_000.0 * 8.0 / 1e10 * 1e12 + r.base_latency as f64
    }

    fn last_fct(r: &Report) -> f64 {
        r.flows.iter().map(|f| f.fct.unwrap()).max().unwrap() as f64
    }

    #[test]
    fn one_flow_completes_in_the_optimal_time_within_one_packet() {
        let r = crate::Simulation::new(incast(1, 10))
            .unwrap()
            .run()
            .unwrap();
        let packet = tx_time(9000 + 64 + 20, 10_000_000_000) as f64;
        assert!(
            (last_fct(&r) - optimal(&r, 1)).abs() <= packet,
            "{}",
            last_fct(&r)
        );
        let s = r.ndp.unwrap();
        assert_eq!((s.data_packets, s.trimmed, s.pulls), (30, 0, 29));
    }

    #[test]
    fn trims_pulls_and_retransmissions_add_up_and_every_byte_arrives_once() {
        for (n, iw) in [(15, 23), (12, 10), (6, 1)] {
            let r = run_checked(incast(n, iw));
            assert_eq!(r.app_bytes, n as u64 * 270_000);
            let s = r.ndp.unwrap();
            let retx = s.retx_nack + s.retx_bounce + s.retx_timeout;
            // Every data packet is a first transmission or a retransmission.
            assert_eq!(s.data_packets, n as u64 * 30 + retx, "n={n}");
            // Every trimmed packet reached the receiver as a header (and was NACKed), or
            // bounced, or was dropped.
            assert_eq!(s.trimmed, s.nacks + s.bounced + s.dropped, "n={n}");
            if iw > 1 {
                assert!(s.trimmed > 0 && s.retx_nack > 0, "n={n}");
            }
        }
    }

    #[test]
    fn iw_1_is_slow_for_few_senders_and_iw_10_is_near_optimal() {
        for n in [1, 2, 4] {
            let r = crate::Simulation::new(incast(n, 1)).unwrap().run().unwrap();
            assert!(last_fct(&r) > 1.5 * optimal(&r, n), "n={n}");
        }
        for iw in [10, 23] {
            for n in [1, 4, 8, 15] {
                let r = crate::Simulation::new(incast(n, iw))
                    .unwrap()
                    .run()
                    .unwrap();
                let over = last_fct(&r) / optimal(&r, n) - 1.0;
                assert!(over < 0.05, "iw={iw} n={n}: {over}");
            }
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_run() {
        let a = crate::Simulation::new(incast(15, 10))
            .unwrap()
            .run()
            .unwrap();
        let b = crate::Simulation::new(incast(15, 10))
            .unwrap()
            .run()
            .unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn bad_ndp_scenarios_name_the_field() {
        let mut sc = incast(4, 10);
        sc.workload.kind = WorkloadKind::SyncRead;
        assert_eq!(sc.validate().unwrap_err().field, "workload.kind");
        let mut sc = incast(4, 10);
        sc.ndp.initial_window = 0;
        assert_eq!(sc.validate().unwrap_err().field, "ndp.initial_window");
        let mut sc = incast(4, 10);
        sc.topology.fat_tree_k = 5;
        assert_eq!(sc.validate().unwrap_err().field, "topology.fat_tree_k");
        let mut sc = incast(20, 10);
        sc.topology.fat_tree_k = 4;
        assert_eq!(sc.validate().unwrap_err().field, "topology.hosts");
        let mut sc = incast(4, 10);
        sc.topology.hosts = 3;
        assert_eq!(sc.validate().unwrap_err().field, "topology.hosts");
    }

    /// Headers dropped (not returned) at a small header queue: the flow's timer resends
    /// their packets only once the flow hears nothing for `rto`; a timer for each packet
    /// (htsim's) resends each `rto` after it left, all at once, so the flows finish sooner;
    /// every packet the switches dropped is resent by the timer.
    #[test]
    fn a_timer_for_each_packet_resends_dropped_headers_without_waiting_for_silence() {
        let dropping = |timer: NdpTimer| {
            let mut sc = incast(15, 23);
            sc.ndp.return_to_sender = false;
            sc.ndp.header_queue = 10 * 64;
            sc.ndp.rto = from_us(500);
            sc.ndp.timer = timer;
            crate::Simulation::new(sc).unwrap().run().unwrap()
        };
        let (flow, packet) = (dropping(NdpTimer::Flow), dropping(NdpTimer::Packet));
        for r in [&flow, &packet] {
            assert!(r.flows.iter().all(|f| f.fct.is_some()));
        }
        let (sf, sp) = (flow.ndp.as_ref().unwrap(), packet.ndp.as_ref().unwrap());
        assert!(sp.dropped > 0 && sp.retx_timeout >= sp.dropped, "{sp:?}");
        assert_eq!((sf.dropped, sf.retx_timeout), (sp.dropped, sp.retx_timeout));
        // 3.33 ms against 3.82 ms.
        assert!(last_fct(&packet) < 0.9 * last_fct(&flow));
    }

    /// Pulls at 0.99 of the link (htsim's pacer) stretch an incast by up to 1% (0.3% here:
    /// a third of its packets go in the first windows, unpulled);
    /// a first wait of 20 ms and a drawn one leave a run without timeouts as it was.
    #[test]
    fn a_slower_pull_pacer_stretches_the_incast_and_unused_waits_change_nothing() {
        let base = crate::Simulation::new(incast(15, 10))
            .unwrap()
            .run()
            .unwrap();
        let mut sc = incast(15, 10);
        sc.ndp.pull_rate = 0.99;
        let slow = crate::Simulation::new(sc).unwrap().run().unwrap();
        let ratio = last_fct(&slow) / last_fct(&base);
        assert!((1.002..1.01).contains(&ratio), "{ratio}");
        let mut sc = incast(15, 10);
        sc.ndp.rto_initial = Some(from_us(20_000));
        sc.ndp.rto_jitter = 0.5;
        let waits = crate::Simulation::new(sc).unwrap().run().unwrap();
        assert_eq!(base.ndp.as_ref().unwrap().timeouts, 0);
        assert_eq!(waits.flows, base.flows);
    }

    /// NDP as htsim runs it (headers dropped, a timer for each packet, drawn waits, pulls at
    /// 0.99 walked in the flows' order, either packet trimmed): every byte arrives once, the
    /// counters add up, the run repeats itself; trimming either packet trims some that arrived
    /// before the one that found the queue full, so the trims fall on other flows than with
    /// the arriving one.
    #[test]
    fn ndp_as_htsim_runs_it_keeps_its_invariants_and_repeats_itself() {
        let htsim = |trim: NdpTrim| {
            let mut sc = incast(15, 23);
            sc.ndp.pull_order = PullOrder::Cyclic;
            sc.ndp.return_to_sender = false;
            sc.ndp.header_queue = 20 * 64;
            sc.ndp.timer = NdpTimer::Packet;
            sc.ndp.rto = from_us(375);
            sc.ndp.rto_initial = Some(from_us(200));
            sc.ndp.rto_jitter = 0.6667;
            sc.ndp.pull_rate = 0.99;
            sc.ndp.trim = trim;
            sc
        };
        let r = run_checked(htsim(NdpTrim::Either));
        let s = r.ndp.as_ref().unwrap();
        assert_eq!(s.data_packets, 15 * 30 + s.retx_nack + s.retx_timeout);
        assert_eq!(s.trimmed, s.nacks + s.dropped);
        assert!(s.dropped > 0 && s.retx_timeout >= s.dropped, "{s:?}");
        let again = crate::Simulation::new(htsim(NdpTrim::Either))
            .unwrap()
            .run()
            .unwrap();
        assert_eq!(again, r);
        let arriving = crate::Simulation::new(htsim(NdpTrim::Arriving))
            .unwrap()
            .run()
            .unwrap();
        let per_flow = |r: &Report| r.flows.iter().map(|f| f.retx_fast).collect::<Vec<_>>();
        assert_ne!(per_flow(&arriving), per_flow(&r));
    }
}
