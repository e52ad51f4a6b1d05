//! Swift (Kumar et al., "Swift: Delay is Simple and Effective for Congestion Control in the
//! Datacenter", SIGCOMM 2020): a reliable byte stream per connection whose window follows
//! delay: additive increase below a target delay, a multiplicative decrease proportional to
//! the excess above it (at most once per RTT), a target scaled by the path's hops and by the
//! window itself (flow-based scaling: the more flows share a bottleneck, the smaller each
//! window and the larger the target, so a large incast settles at a bounded queue instead of
//! a collapse), windows below one packet sent paced, fast retransmit and a retransmission
//! timer. The `swift` section holds every constant.
//!
//! What delay the simulator measures. Swift separates the fabric delay from the endpoint
//! delay with NIC and host timestamps (the paper's §3.2: t1 the sender's send time, t2/t3 the
//! remote NIC's receive and the ACK's transmit, t4 the ACK's receive). Here a data packet
//! carries t1 = when it entered its host's NIC queue; its receiver's ACK echoes t1 and the
//! time the receiving host held it (`swift.host_delay`: the remote endpoint delay, the only
//! host delay the simulator has, 0 by default); the sender takes the RTT as now − t1 at the
//! ACK's arrival. So the fabric delay = RTT − host delay contains the sender's NIC queue and
//! serialization, every switch queue, propagation and the ACK's way back; the endpoint delay
//! = the host delay, against `swift.endpoint_target`. The sending host's own processing
//! (t1 → NIC) is zero in the simulator, as in htsim.
//!
//! Connections carry the workload's application ([`crate::app`], TCP's workload path: the
//! incast's flows and the synchronized read's requests and responses) over ECMP routes, one
//! path per connection drawn from [`Stream::Swift`], on the fabric's drop-tail ports.
//!
//! The agents are apart and clock-free: `cc` (the two AIMD windows and the targets),
//! `sender` (the sending half: window, pacing, recovery, timer) and `receiver` (in-order
//! delivery and the ACKs); this module is their glue to the engine ([`Transport`]) and
//! `run_report` reports.

mod cc;
mod receiver;
mod run_report;
mod sender;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use crate::app::{App, Effect, Token, View};
use crate::capture::Capture;
use crate::config::Scenario;
use crate::engine::driver::{Cx, Seen, Transport};
use crate::engine::{Event, EventQueue, Timer};
use crate::ids::{ConnId, EndpointId};
use crate::net::fabric::{Fabric, Offered, Wire};
use crate::net::trim::Trimmable;
use crate::net::PktId;
use crate::report::Report;
use crate::rng::{Rng, Stream};
use crate::topology::{LinkId, Network};
use crate::units::SimTime;

use receiver::Receiver;
use sender::Sender;

/// [`Event::Agent`] kinds of an endpoint: its retransmission timer, its pacing timer, and
/// the release of an ACK its host held (`swift.host_delay`).
const RTO: u8 = 0;
const PACE: u8 = 1;
const HOST_ACK: u8 = 2;

/// What a Swift packet is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Payload of the stream.
    Data,
    /// A cumulative ACK.
    Ack,
}

/// A Swift packet on the wire.
#[derive(Debug, Clone, Copy)]
pub struct Pkt {
    kind: Kind,
    hop: u16,
    route: u32,
    /// The endpoint it is for.
    dst: u32,
    /// Data: payload bytes; ACK: 0.
    len: u32,
    /// Bytes on the wire, without preamble and gap.
    frame: u32,
    /// Data: stream offset of its first byte; ACK: the cumulative ACK.
    seq: u64,
    /// Data: its send time (t1); ACK: the t1 it echoes.
    ts: SimTime,
    /// ACK: how long the receiving host held the data packet before answering.
    remote: SimTime,
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
        unreachable!("Swift runs over drop-tail ports, never trimming ones")
    }
}

impl Wire for Pkt {
    crate::net::fabric::follows_route!(route);
    #[inline]
    fn flow(&self) -> u32 {
        // Both directions of a connection are its flow.
        EndpointId(self.dst).conn().0
    }
}

/// One end of a connection: its sending and receiving halves.
#[derive(Debug, Clone)]
struct Endpoint {
    tx: Sender,
    rx: Receiver,
}

/// The engine's lazy timers of one endpoint, and the ACKs its host holds.
#[derive(Debug, Clone, Default)]
struct EndpointTimers {
    rto: Timer,
    pace: Timer,
    held: VecDeque<(SimTime, PktId)>,
}

/// Every Swift connection of a run and the application over them.
#[derive(Debug)]
pub struct Swift {
    eps: Vec<Endpoint>,
    timers: Vec<EndpointTimers>,
    /// Route and host of each endpoint.
    ep_route: Vec<u32>,
    ep_host: Vec<u32>,
    app: Box<dyn App>,
    app_conns: u32,
    app_every_segment: bool,
    /// Drops by what the packet carried: data to a client, an ACK, data to a server.
    drops_by_kind: [u64; 3],
    /// Frame bytes: a data packet's beyond its payload, an ACK's.
    header: u64,
    ack_frame: u32,
    host_delay: SimTime,
    act: Vec<Effect>,
    served: Vec<Effect>,
    finished: bool,
    busy_at_start: SimTime,
    acks: u64,
    /// A capture asked for (refused at its end: no frame encoding).
    capture: Option<Box<Capture>>,
}

/// What the application may read of the endpoints and the network.
struct SwiftView<'a> {
    eps: &'a [Endpoint],
    ep_host: &'a [u32],
    net: &'a Network,
    drops_by_kind: [u64; 3],
}

impl View for SwiftView<'_> {
    fn received(&self, ep: EndpointId) -> u64 {
        self.eps[ep.index()].rx.received()
    }
    fn acked(&self, ep: EndpointId) -> u64 {
        self.eps[ep.index()].tx.acked()
    }
    fn endpoints(&self) -> u32 {
        self.eps.len() as u32
    }
    fn host_of(&self, ep: EndpointId) -> u32 {
        self.ep_host[ep.index()]
    }
    fn loss_counters(&self, ep: EndpointId) -> (u64, u64) {
        let s = self.eps[ep.index()].tx.stats();
        (
            u64::from(s.timeouts),
            u64::from(s.retx_fast + s.retx_timeout),
        )
    }
    fn drops_by_kind(&self) -> [u64; 3] {
        self.drops_by_kind
    }
    fn net(&self) -> &Network {
        self.net
    }
}

impl Transport for Swift {
    type Packet = Pkt;
    const UNFINISHED: &'static str = "the workload is unfinished";

    fn new(sc: &Scenario, fabric: &mut Fabric<Pkt>, events: &mut EventQueue) -> Swift {
        let app = crate::app::of(sc, &fabric.net);
        let swift = Swift::connect(sc, &mut fabric.net, app);
        events.push(0, Event::Start);
        swift
    }

    fn finished(&self) -> bool {
        self.finished
    }

    fn start(&mut self, cx: &mut Cx<Pkt>) {
        let net = &cx.fabric.net;
        self.busy_at_start = net.links[net.bottleneck].stats.busy;
        let mut act = std::mem::take(&mut self.act);
        self.app.start(cx.now, &mut act);
        self.apply(cx, act);
    }

    #[inline]
    fn timer(&mut self, cx: &mut Cx<Pkt>, agent: u32, kind: u8, gen: u32) {
        let ep = EndpointId(agent);
        let (now, i) = (cx.now, ep.index());
        match kind {
            HOST_ACK => return self.release_ack(cx, ep),
            RTO => {
                if self.timers[i].rto.fire(now, gen) && self.eps[i].tx.on_rto(now) {
                    if ep.conn().0 < self.app_conns {
                        if ep.is_sender() {
                            self.app.add_timeouts(ep.conn(), 1);
                        } else {
                            self.app.add_client_timeouts(ep.conn(), 1);
                        }
                    }
                    self.transmit(cx, ep);
                }
            }
            _ => {
                if self.timers[i].pace.fire(now, gen) {
                    self.transmit(cx, ep);
                }
            }
        }
        self.sync_timers(cx, ep);
    }

    fn app(&mut self, cx: &mut Cx<Pkt>, token: Token) {
        let mut act = std::mem::take(&mut self.act);
        let view = SwiftView {
            eps: &self.eps,
            ep_host: &self.ep_host,
            net: &cx.fabric.net,
            drops_by_kind: self.drops_by_kind,
        };
        self.app.wake(token, cx.now, &view, &mut act);
        self.apply(cx, act);
    }

    #[inline]
    fn sent(&mut self, _cx: &mut Cx<Pkt>, _l: LinkId, _id: PktId) {}

    #[inline]
    fn deliver(&mut self, cx: &mut Cx<Pkt>, id: PktId) {
        let p = *cx.fabric.pkts.get(id);
        cx.fabric.pkts.free(id);
        match p.kind {
            Kind::Data => self.on_data(cx, &p),
            Kind::Ack => {
                let ep = EndpointId(p.dst);
                let rtt = cx.now.saturating_sub(p.ts);
                self.eps[ep.index()].tx.on_ack(cx.now, p.seq, rtt, p.remote);
                self.transmit(cx, ep);
                self.sync_timers(cx, ep);
            }
        }
    }

    #[inline]
    fn offered(&mut self, cx: &mut Cx<Pkt>, _l: LinkId, id: PktId, o: Offered) {
        debug_assert_eq!(o, Offered::Dropped, "Swift runs over drop-tail queues");
        let p = cx.fabric.pkts.get(id);
        let k = match (p.kind, EndpointId(p.dst).is_sender()) {
            (Kind::Ack, _) => 1,
            (Kind::Data, true) => 2,
            (Kind::Data, false) => 0,
        };
        self.drops_by_kind[k] += 1;
        cx.fabric.pkts.free(id);
    }

    fn attach_capture(&mut self, cap: Capture, _sc: &Scenario) {
        self.capture = Some(Box::new(cap));
    }

    fn finish_capture(&mut self) -> Option<std::io::Result<u64>> {
        // Swift's frames have no pcap encoding: say so rather than write an empty file.
        self.capture.take().map(|_| {
            Err(std::io::Error::other(
                "Swift runs are not captured (no frame encoding for Swift yet)",
            ))
        })
    }

    fn report(&self, run: &Seen<Pkt>) -> Report {
        self.run_report(run)
    }

    fn check_invariants(&self, run: &Seen<Pkt>) -> Result<(), String> {
        for (i, e) in self.eps.iter().enumerate() {
            let peer = &self.eps[EndpointId(i as u32).peer().index()];
            if e.tx.acked() > peer.rx.received() {
                return Err(format!(
                    "Swift endpoint {i}: {} bytes acked, its peer received {}",
                    e.tx.acked(),
                    peer.rx.received()
                ));
            }
        }
        run.fabric.check_invariants()
    }
}

impl Swift {
    /// Every connection's endpoints and routes, nothing sent yet.
    fn connect(sc: &Scenario, net: &mut Network, app: Box<dyn App>) -> Swift {
        let conns = app.connections();
        let s = &sc.swift;
        let n = 2 * conns as usize;
        let mut eps = Vec::with_capacity(n);
        let mut ep_route = Vec::with_capacity(n);
        let mut ep_host = Vec::with_capacity(n);
        for c in 0..conns {
            let conn = ConnId(c);
            let (server, client) = app.ends(conn, net);
            // Per-flow ECMP: one path per connection, both directions alike (the stream's
            // first draw); then each endpoint's timer stream (`swift.rto_jitter`).
            let mut draws = Rng::stream(sc.seed, Stream::Swift(c));
            let path = draws.next_u64() as u32;
            let to_server = net.add_route(client, server, path);
            let to_client = net.add_route(server, client, path);
            let frame = s.mtu + s.header_bytes;
            for (ep, route, back, host, peer) in [
                (conn.receiver(), to_server, to_client, client, server),
                (conn.sender(), to_client, to_server, server, client),
            ] {
                debug_assert_eq!(ep.index(), eps.len());
                let base_rtt = net.latency(route, frame) + net.latency(back, s.ack_bytes);
                // Topology scaling counts the links of the forward path, as htsim's Swift.
                let hops = u32::from(net.path_len(host, peer));
                let timers = Rng::new(draws.next_u64(), 0);
                eps.push(Endpoint {
                    tx: Sender::new(s, hops, base_rtt).with_timer_stream(timers),
                    rx: Receiver::default(),
                });
                ep_route.push(route);
                ep_host.push(host);
            }
        }
        Swift {
            timers: vec![EndpointTimers::default(); eps.len()],
            eps,
            ep_route,
            ep_host,
            app_conns: conns,
            app_every_segment: app.every_segment(),
            app,
            drops_by_kind: [0; 3],
            header: s.header_bytes,
            ack_frame: s.ack_bytes as u32,
            host_delay: s.host_delay,
            act: Vec::new(),
            served: Vec::new(),
            finished: false,
            busy_at_start: 0,
            acks: 0,
            capture: None,
        }
    }

    /// A data packet reached endpoint `p.dst`: deliver it, answer it, tell the application.
    fn on_data(&mut self, cx: &mut Cx<Pkt>, p: &Pkt) {
        let ep = EndpointId(p.dst);
        let e = &mut self.eps[ep.index()];
        let delivered = e.rx.on_data(p.seq, p.len);
        let ack = Pkt {
            kind: Kind::Ack,
            hop: 0,
            route: self.ep_route[ep.index()],
            dst: ep.peer().0,
            len: 0,
            frame: self.ack_frame,
            seq: e.rx.ack(),
            ts: p.ts,
            remote: self.host_delay,
        };
        self.acks += 1;
        let id = cx.fabric.pkts.alloc(ack);
        if self.host_delay == 0 {
            self.put_on_route(cx, id);
        } else {
            // The host answers after its processing delay, in arrival order.
            let held = &mut self.timers[ep.index()].held;
            if held.is_empty() {
                cx.push(cx.now + self.host_delay, Event::Agent(ep.0, HOST_ACK, 0));
            }
            held.push_back((cx.now + self.host_delay, id));
        }
        if ep.conn().0 < self.app_conns && (delivered > 0 || self.app_every_segment) {
            let received = self.eps[ep.index()].rx.received();
            let mut act = std::mem::take(&mut self.act);
            self.app
                .on_segment(ep, delivered, received, cx.now, &mut act);
            self.apply(cx, act);
        }
    }

    /// The ACK at the head of endpoint `ep`'s host queue leaves.
    fn release_ack(&mut self, cx: &mut Cx<Pkt>, ep: EndpointId) {
        let held = &mut self.timers[ep.index()].held;
        let (_, id) = held.pop_front().expect("a host release has an ACK");
        if let Some(&(t, _)) = held.front() {
            cx.push(t, Event::Agent(ep.0, HOST_ACK, 0));
        }
        self.put_on_route(cx, id);
    }

    /// Offer packet `id` to the first link of its route; count and free it if dropped.
    #[inline]
    fn put_on_route(&mut self, cx: &mut Cx<Pkt>, id: PktId) {
        let route = cx.fabric.pkts.get(id).route;
        let first = cx.fabric.net.hop(route, 0).expect("routes are never empty");
        let o = cx.offer(first, id);
        if o != Offered::Queued {
            self.offered(cx, first, id, o);
        }
    }

    /// Send what endpoint `ep`'s sender lets go now.
    fn transmit(&mut self, cx: &mut Cx<Pkt>, ep: EndpointId) {
        let i = ep.index();
        while let Some(seg) = self.eps[i].tx.poll(cx.now) {
            let p = Pkt {
                kind: Kind::Data,
                hop: 0,
                route: self.ep_route[i],
                dst: ep.peer().0,
                len: seg.len,
                frame: (u64::from(seg.len) + self.header) as u32,
                seq: seg.seq,
                ts: cx.now,
                remote: 0,
            };
            let id = cx.fabric.pkts.alloc(p);
            self.put_on_route(cx, id);
        }
    }

    /// Schedule what endpoint `ep`'s deadlines need now.
    fn sync_timers(&mut self, cx: &mut Cx<Pkt>, ep: EndpointId) {
        let tx = &self.eps[ep.index()].tx;
        let (rto, pace) = (tx.rto_at(), tx.pace_at(cx.now));
        let t = &mut self.timers[ep.index()];
        for (timer, due, kind) in [(&mut t.rto, rto, RTO), (&mut t.pace, pace, PACE)] {
            match due {
                Some(at) => timer.set(at),
                None => timer.clear(),
            }
            if let Some((at, gen)) = timer.needs_event() {
                cx.push(at, Event::Agent(ep.0, kind, gen));
            }
        }
    }

    fn apply(&mut self, cx: &mut Cx<Pkt>, mut act: Vec<Effect>) {
        for a in act.drain(..) {
            match a {
                Effect::Write { ep, bytes } => self.write(cx, ep, bytes),
                Effect::Wake { at, token } => cx.push(at, Event::App(token)),
                Effect::Fill { slot } => self.fill(cx, slot),
                Effect::Finished => self.finished = true,
            }
        }
        self.act = act;
    }

    /// The application writes what its connections' send buffers have room for.
    fn fill(&mut self, cx: &mut Cx<Pkt>, slot: u32) {
        let mut served = std::mem::take(&mut self.served);
        let view = SwiftView {
            eps: &self.eps,
            ep_host: &self.ep_host,
            net: &cx.fabric.net,
            drops_by_kind: self.drops_by_kind,
        };
        self.app.fill(slot, &view, &mut served);
        for a in served.drain(..) {
            if let Effect::Write { ep, bytes } = a {
                self.write(cx, ep, bytes);
            }
        }
        self.served = served;
    }

    fn write(&mut self, cx: &mut Cx<Pkt>, ep: EndpointId, bytes: u64) {
        self.eps[ep.index()].tx.write(bytes);
        self.transmit(cx, ep);
        self.sync_timers(cx, ep);
    }
}
