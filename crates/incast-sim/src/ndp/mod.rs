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
//! Simplifications, on purpose: pulls are served first come first served across flows (the
//! paper round-robins them); trimming always trims the arriving packet (the paper sometimes
//! trims the queue's tail to avoid phase effects); a sender that hears nothing for `ndp.rto`
//! resends what is unacknowledged; control packets never bounce, a full header queue drops
//! them, which the timeout covers.
//!
//! The agents are apart and each testable alone: `sender` (one per flow), `receiver` (the
//! receiving host and its pull pacer) and `port` (a trimming port in front of a
//! [`crate::net::Link`]). This module is the event loop that wires them: it owns the clock,
//! the packets (in a [`PacketPool`]) and the routes, and turns what the agents return into
//! packets and events.

mod port;
mod receiver;
mod sender;

use crate::capture::{self, Capture, NdpKind, Points};
use crate::config::Scenario;
use crate::engine::SimError;
use crate::engine::{Event, EventQueue};
use crate::net::{PacketPool, PktId};
use crate::report::{FlowReport, NdpReport, QueueReport, Report, RunSummary};
use crate::rng::{Rng, Stream};
use crate::topology::{LinkId, Network};
use crate::units::{tx_time, SimTime};

use port::{Offered, Port, Trimmable};
use receiver::{Receiver, ReceiverOut};
use sender::{Cause, Sender, SenderOut};

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
struct Pkt {
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

/// One run of an NDP incast.
#[derive(Debug)]
pub struct NdpSimulation {
    sc: Scenario,
    now: SimTime,
    events: EventQueue,
    net: Network,
    /// One in front of each link of `net`: switch ports trim, host NICs do not.
    ports: Vec<Port>,
    pkts: PacketPool<Pkt>,
    senders: Vec<Sender>,
    /// Host each flow sends from.
    srcs: Vec<u32>,
    receiver: Receiver,
    /// The receiving host.
    rx_host: u32,
    rng: Rng,
    /// What the last sender or receiver call returned (kept to reuse its allocation).
    sender_out: Vec<SenderOut>,
    receiver_out: Vec<ReceiverOut>,
    processed: u64,
    /// The packet capture, if the run writes one.
    capture: Option<Box<Capture>>,
    /// Switch counters (the agents keep their own).
    stats: NdpReport,
}

impl NdpSimulation {
    /// Validate `sc` and set up the run.
    pub fn new(sc: Scenario) -> Result<NdpSimulation, SimError> {
        sc.validate()?;
        let net = Network::build(&sc);
        let n = sc.topology.senders;
        let size = sc.workload.flow_size.unwrap_or(0);
        let ndp = &sc.ndp;
        let packets = size.div_ceil(ndp.mtu).max(1) as u32;
        let header = ndp.header_bytes as u32;
        let ports = net
            .link_ids()
            .map(|l| {
                if net.is_port(l) {
                    let (dq, hq, w) = (ndp.data_queue, ndp.header_queue, ndp.header_weight);
                    Port::switch(dq, hq, w, header)
                } else {
                    Port::nic(ndp.header_weight)
                }
            })
            .collect();
        let frame = ndp.mtu + ndp.header_bytes + sc.tcp.phy_overhead;
        let pull_spacing = tx_time(frame, sc.topology.receiver_link);
        let mut sim = NdpSimulation {
            senders: (0..n)
                .map(|_| Sender::new(size, packets, ndp.rto))
                .collect(),
            srcs: (0..n).map(|f| net.host(f)).collect(),
            receiver: Receiver::new(n, packets, pull_spacing),
            rx_host: net.receiver,
            rng: Rng::stream(sc.seed, Stream::Ndp),
            sc,
            now: 0,
            events: EventQueue::default(),
            net,
            ports,
            pkts: PacketPool::default(),
            sender_out: Vec::new(),
            receiver_out: Vec::new(),
            processed: 0,
            stats: NdpReport::default(),
            capture: None,
        };
        sim.events.push(0, Event::Start);
        Ok(sim)
    }

    /// Current simulated time.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.processed
    }

    /// Whether every flow has completed.
    pub fn finished(&self) -> bool {
        self.receiver.finish().is_some()
    }

    /// Write a pcap of the packets seen at `points` to `path` (before the first step), NDP
    /// carried over UDP as [`capture::pcap::ndp_frame`] documents.
    pub fn capture(&mut self, path: &str, points: &Points) -> Result<(), String> {
        self.capture = Some(Box::new(capture::open(
            path,
            points,
            &self.net,
            self.sc.topology.senders,
        )?));
        Ok(())
    }

    /// Close the capture, if any: the frames it holds, or the write error that stopped it.
    pub fn finish_capture(&mut self) -> Option<std::io::Result<u64>> {
        self.capture.take().map(|c| c.finish())
    }

    /// The scenario being run.
    pub fn scenario(&self) -> &Scenario {
        &self.sc
    }

    /// Process up to `max` events; `Ok(true)` once every flow has completed.
    pub fn step(&mut self, max: u64) -> Result<bool, SimError> {
        let mut k = 0;
        while self.receiver.finish().is_none() && k < max {
            let (t, ev) = crate::engine::next_event(
                &mut self.events,
                &self.sc.run,
                self.processed,
                self.now,
                "NDP flows are unfinished",
            )?;
            self.now = t;
            self.processed += 1;
            k += 1;
            match ev {
                Event::Start => self.start_flows(),
                Event::TxDone(l) => self.tx_done(l),
                Event::Arrive(l) => self.arrive(l),
                Event::Rto(f, gen) => {
                    self.with_sender(f, |s, now, out| s.on_timer(now, gen, out));
                }
                Event::PullTick => self.with_receiver(|r, now, out| r.on_pull_tick(now, out)),
                other => {
                    return Err(SimError::Internal(format!(
                        "NDP: unexpected event {other:?}"
                    )))
                }
            }
        }
        Ok(self.receiver.finish().is_some())
    }

    /// Run to completion.
    pub fn run(mut self) -> Result<Report, SimError> {
        while !self.step(u64::MAX)? {}
        Ok(self.report())
    }

    /// Call sender `f`, then do what it asked, in its order: schedule its deadline, send.
    #[inline]
    fn with_sender(
        &mut self,
        f: u32,
        call: impl FnOnce(&mut Sender, SimTime, &mut Vec<SenderOut>),
    ) {
        let mut out = std::mem::take(&mut self.sender_out);
        out.clear();
        call(&mut self.senders[f as usize], self.now, &mut out);
        for &o in &out {
            match o {
                SenderOut::Deadline(t, gen) => self.events.push(t, Event::Rto(f, gen)),
                SenderOut::Send(seq) => self.send_data(f, seq),
            }
        }
        self.sender_out = out;
    }

    /// Call the receiver, then do what it asked, in its order: send, schedule its pacer.
    #[inline]
    fn with_receiver(&mut self, call: impl FnOnce(&mut Receiver, SimTime, &mut Vec<ReceiverOut>)) {
        let mut out = std::mem::take(&mut self.receiver_out);
        out.clear();
        call(&mut self.receiver, self.now, &mut out);
        for &o in &out {
            match o {
                ReceiverOut::Control { kind, flow, seq } => self.send_control(kind, flow, seq),
                ReceiverOut::PullTick(t) => self.events.push(t, Event::PullTick),
            }
        }
        self.receiver_out = out;
    }

    fn random_path(&mut self, a: u32, b: u32) -> u32 {
        let n = self.net.paths_between(a, b);
        if n <= 1 {
            0
        } else {
            self.rng.up_to(n as u64 - 1) as u32
        }
    }

    fn start_flows(&mut self) {
        self.receiver.start(self.now);
        let iw = self.sc.ndp.initial_window;
        for f in 0..self.senders.len() as u32 {
            self.with_sender(f, |s, now, out| s.start(now, iw, out));
        }
    }

    fn send_data(&mut self, f: u32, seq: u32) {
        let payload = self.senders[f as usize].payload(seq, self.sc.ndp.mtu);
        let frame = (payload + self.sc.ndp.header_bytes) as u32;
        let src = self.srcs[f as usize];
        let path = self.random_path(src, self.rx_host);
        self.stats.data_packets += 1;
        self.send(Pkt {
            kind: Kind::Data,
            flow: f,
            seq,
            src,
            dst: self.rx_host,
            path,
            hop: 0,
            frame,
        });
    }

    fn send_control(&mut self, kind: Kind, f: u32, seq: u32) {
        let dst = self.srcs[f as usize];
        let path = self.random_path(self.rx_host, dst);
        self.send(Pkt {
            kind,
            flow: f,
            seq,
            src: self.rx_host,
            dst,
            path,
            hop: 0,
            frame: self.sc.ndp.header_bytes as u32,
        });
    }

    fn send(&mut self, p: Pkt) {
        let id = self.pkts.alloc(p);
        let first = self
            .net
            .hop_via(p.src, p.dst, p.path, 0)
            .expect("paths are never empty");
        self.enqueue(first, id);
    }

    /// Offer packet `id` to link `l`'s port: trim, bounce or drop at switch ports.
    fn enqueue(&mut self, l: LinkId, id: PktId) {
        let p = self.pkts.get_mut(id);
        let link = &mut self.net.links[l];
        match self.ports[l.index()].offer(link, self.now, id, p) {
            Offered::Queued(end) => self.transmitting(l, end),
            Offered::Trimmed(end) => {
                self.stats.trimmed += 1;
                self.transmitting(l, end);
            }
            Offered::Refused { trimmed } => {
                self.stats.trimmed += u64::from(trimmed);
                if p.kind == Kind::Header && self.sc.ndp.return_to_sender {
                    self.bounce(id);
                } else {
                    self.drop_header(l, id);
                }
            }
        }
    }

    /// Schedule the end of a transmission `l` started, if it started one.
    #[inline]
    fn transmitting(&mut self, l: LinkId, end: Option<SimTime>) {
        if let Some(t) = end {
            self.events.push(t, Event::TxDone(l));
        }
    }

    fn drop_header(&mut self, l: LinkId, id: PktId) {
        self.net.links[l].count_drop();
        self.stats.dropped += 1;
        self.pkts.free(id);
    }

    /// Send a trimmed header back to its sender along the same path, reversed.
    fn bounce(&mut self, id: PktId) {
        self.stats.bounced += 1;
        let p = *self.pkts.get(id);
        // The switch at forward position `hop` is at position `len - hop` going back.
        let back = self.net.path_len(p.src, p.dst) - p.hop;
        let pk = self.pkts.get_mut(id);
        pk.kind = Kind::Bounce;
        std::mem::swap(&mut pk.src, &mut pk.dst);
        pk.hop = back;
        let l = self
            .net
            .hop_via(pk.src, pk.dst, pk.path, back)
            .expect("a bounce starts inside the path");
        // A bounce meeting a full header queue on its way back is dropped there.
        let link = &mut self.net.links[l];
        match self.ports[l.index()].offer(link, self.now, id, pk) {
            Offered::Queued(end) | Offered::Trimmed(end) => self.transmitting(l, end),
            Offered::Refused { .. } => self.drop_header(l, id),
        }
    }

    fn tx_done(&mut self, l: LinkId) {
        let link = &mut self.net.links[l];
        let (arrival, next) = self.ports[l.index()].finish_tx(link, self.now);
        if let Some(t) = arrival {
            self.events.push(t, Event::Arrive(l));
        }
        if let Some(cap) = self.capture.as_deref_mut() {
            if let (true, Some(id)) = (cap.taps_link(l), link.newest_in_pipe()) {
                let p = *self.pkts.get(id);
                cap.write(self.now, |buf| encode(buf, &p));
            }
        }
        self.transmitting(l, next);
    }

    fn arrive(&mut self, l: LinkId) {
        let (id, next) = self.net.links[l].arrive();
        if let Some(t) = next {
            self.events.push(t, Event::Arrive(l));
        }
        let p = self.pkts.get_mut(id);
        p.hop += 1;
        match self.net.hop_via(p.src, p.dst, p.path, p.hop) {
            Some(next) => self.enqueue(next, id),
            None => {
                let p = *p;
                self.pkts.free(id);
                self.deliver(p);
            }
        }
    }

    fn deliver(&mut self, p: Pkt) {
        if let Some(cap) = self.capture.as_deref_mut() {
            if cap.taps_host(p.dst) {
                cap.write(self.now, |buf| encode(buf, &p));
            }
        }
        let (f, seq) = (p.flow, p.seq);
        match p.kind {
            Kind::Data => self.with_receiver(|r, now, out| r.on_data(now, f, seq, out)),
            Kind::Header => self.with_receiver(|r, now, out| r.on_header(now, f, seq, out)),
            Kind::Ack => self.with_sender(f, |s, now, out| s.on_ack(now, seq, out)),
            Kind::Nack => self.with_sender(f, |s, now, out| s.on_nack(now, seq, out)),
            Kind::Pull => self.with_sender(f, |s, now, out| s.on_pull(now, out)),
            Kind::Bounce => self.with_sender(f, |s, now, out| s.on_bounce(now, seq, out)),
        }
    }

    /// The report of the run so far.
    pub fn report(&self) -> Report {
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
        let flows: Vec<FlowReport> = self
            .senders
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let f = i as u32;
                let fct = rx.fct(f);
                let bytes = if fct.is_some() {
                    s.bytes()
                } else {
                    rx.received(f) as u64 * self.sc.ndp.mtu
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
        let bn = self.net.bottleneck;
        let bottleneck = QueueReport {
            name: self.net.name(bn),
            limit: crate::config::QueueLimit {
                bytes: None,
                packets: Some(self.sc.ndp.data_queue),
            },
            stats: self.ports[bn.index()].stats(&self.net.links[bn]),
        };
        let busy = bottleneck.stats.busy;
        let base_latency = self.net.latency_between(
            self.net.host(0),
            self.rx_host,
            self.sc.ndp.mtu + self.sc.ndp.header_bytes,
        );
        Report {
            timeouts: stats.timeouts,
            retx_fast: stats.retx_nack + stats.retx_bounce,
            retx_timeout: stats.retx_timeout,
            drops: stats.dropped,
            ndp: Some(stats),
            ..Report::of_run(RunSummary {
                senders: self.sc.topology.senders,
                workload: self.sc.workload.kind,
                app_bytes,
                start: rx.start_time(),
                end: rx.finish().unwrap_or(self.now),
                now: self.now,
                events: self.processed,
                base_latency,
                link_bps: self.sc.topology.receiver_link,
                flows,
                bottleneck,
                bottleneck_busy: busy,
            })
        }
    }

    /// Every packet is somewhere exactly once, and flows' counters agree with their bitmaps.
    pub fn check_invariants(&self) -> Result<(), String> {
        let queued: usize = (self.ports.iter().zip(&self.net.links))
            .map(|(p, l)| p.packets(l))
            .sum();
        if queued != self.pkts.live() {
            return Err(format!(
                "NDP: {} packets alive, {} in ports",
                self.pkts.live(),
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
        for (l, p) in self.ports.iter().enumerate() {
            if self.net.is_port(LinkId(l as u32)) && p.data_len() > self.sc.ndp.data_queue as usize
            {
                return Err(format!("NDP port {l}: data queue over its limit"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{TopologyKind, Transport, WorkloadKind};
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

    fn optimal(r: &Report, n: u32) -> f64 {
        n as f64 * 270_000.0 * 8.0 / 1e10 * 1e12 + r.base_latency as f64
    }

    fn last_fct(r: &Report) -> f64 {
        r.flows.iter().map(|f| f.fct.unwrap()).max().unwrap() as f64
    }

    #[test]
    fn one_flow_completes_in_the_optimal_time_within_one_packet() {
        let r = NdpSimulation::new(incast(1, 10)).unwrap().run().unwrap();
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
            let mut sim = NdpSimulation::new(incast(n, iw)).unwrap();
            while !sim.step(100).unwrap() {
                sim.check_invariants().unwrap();
            }
            let r = sim.report();
            assert!(r
                .flows
                .iter()
                .all(|f| f.bytes == 270_000 && f.fct.is_some()));
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
            let r = NdpSimulation::new(incast(n, 1)).unwrap().run().unwrap();
            assert!(last_fct(&r) > 1.5 * optimal(&r, n), "n={n}");
        }
        for iw in [10, 23] {
            for n in [1, 4, 8, 15] {
                let r = NdpSimulation::new(incast(n, iw)).unwrap().run().unwrap();
                let over = last_fct(&r) / optimal(&r, n) - 1.0;
                assert!(over < 0.05, "iw={iw} n={n}: {over}");
            }
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_run() {
        let a = NdpSimulation::new(incast(15, 10)).unwrap().run().unwrap();
        let b = NdpSimulation::new(incast(15, 10)).unwrap().run().unwrap();
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
}
