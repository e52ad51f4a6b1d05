//! The simulation: owns the clock, the event queue, the network, every TCP endpoint and the
//! workload, and moves packets between them.

use std::collections::VecDeque;

use crate::app::{App, Effect, View};
use crate::capture::{self, Points, TcpCapture};
use crate::config::{CongestionControl, RtoRandomization, Scenario};
use crate::engine::{next_event, Event, EventQueue, SimError, Timer};
use crate::ids::{ConnId, EndpointId};
use crate::net::{Enqueued, Packet, PacketPool, PktId, CE, ECT};
use crate::report::Series;
use crate::rng::{Rng, Stream};
use crate::tcp::{Endpoint, RtoPolicy, RttEstimator, Segment, TcpParams};
use crate::topology::{LinkId, LinkRole, Network};
use crate::units::SimTime;

mod report;

/// Bytes a background flow offers: more than any run can send.
const BACKGROUND_BYTES: u64 = 1 << 50;

/// One run of one TCP scenario.
#[derive(Debug)]
pub struct TcpSimulation {
    sc: Scenario,
    now: SimTime,
    events: EventQueue,
    pkts: PacketPool,
    net: Network,
    /// Every connection's two endpoints, indexed by [`EndpointId`].
    eps: Vec<Endpoint>,
    /// The engine's lazy timers of each endpoint, following the deadlines it reports.
    timers: Vec<EndpointTimers>,
    /// Route each endpoint sends on.
    ep_route: Vec<u32>,
    /// Host each endpoint is on.
    ep_host: Vec<u32>,
    /// Packets each endpoint has sent that wait out their host jitter, with release times.
    host_q: Vec<VecDeque<(SimTime, PktId)>>,
    /// Per-endpoint random streams for host jitter.
    host_rng: Vec<Rng>,
    /// The workload.
    app: Box<dyn App>,
    /// Its connections (`0..app_conns`; background flows follow).
    app_conns: u32,
    /// Whether it wants every segment its connections deliver, not only data.
    app_every_segment: bool,
    /// Whether it wants the frames the hosts' switch ports send.
    app_counts_rx: bool,
    /// Drops by what the packet carried: data to a client, pure ACKs, data to a server.
    drops_by_kind: [u64; 3],
    out: Vec<Segment>,
    act: Vec<Effect>,
    /// What the application writes while `act` is being applied ([`Effect::Fill`]).
    served: Vec<Effect>,
    processed: u64,
    finished: bool,
    busy_at_start: SimTime,
    /// Bytes the background flows had delivered when the workload started.
    background_at_start: u64,
    series: Option<Series>,
    /// The packet capture, if the run writes one.
    capture: Option<Box<TcpCapture>>,
}

/// What the application may read of the endpoints and the network (borrowing the engine's
/// fields apart from the application itself).
struct TcpView<'a> {
    eps: &'a [Endpoint],
    ep_host: &'a [u32],
    net: &'a Network,
    drops_by_kind: [u64; 3],
}

/// A [`TcpView`] of simulation `$s`, borrowing only the fields it reads.
macro_rules! view {
    ($s:expr) => {
        TcpView {
            eps: &$s.eps,
            ep_host: &$s.ep_host,
            net: &$s.net,
            drops_by_kind: $s.drops_by_kind,
        }
    };
}
pub(crate) use view;

impl View for TcpView<'_> {
    fn received(&self, ep: EndpointId) -> u64 {
        self.eps[ep.index()].received()
    }
    fn acked(&self, ep: EndpointId) -> u64 {
        self.eps[ep.index()].acked()
    }
    fn endpoints(&self) -> u32 {
        self.eps.len() as u32
    }
    fn host_of(&self, ep: EndpointId) -> u32 {
        self.ep_host[ep.index()]
    }
    fn loss_counters(&self, ep: EndpointId) -> (u64, u64) {
        let s = self.eps[ep.index()].stats();
        (s.timeouts as u64, (s.retx_fast + s.retx_timeout) as u64)
    }
    fn drops_by_kind(&self) -> [u64; 3] {
        self.drops_by_kind
    }
    fn net(&self) -> &Network {
        self.net
    }
}

/// The events of one endpoint's timers.
#[derive(Debug, Clone, Default)]
struct EndpointTimers {
    /// The retransmission timer.
    rto: Timer,
    /// The delayed-ACK timer.
    delack: Timer,
    /// The pacing timer.
    pace: Timer,
}

/// Make `timer` follow an agent's `deadline`.
#[inline]
fn follow(timer: &mut Timer, deadline: Option<SimTime>) {
    match deadline {
        Some(at) => timer.set(at),
        None => timer.clear(),
    }
}

fn sack_option_bytes(nsack: u8) -> u64 {
    if nsack == 0 {
        0
    } else {
        (2 + 8 * nsack as u64).div_ceil(4) * 4
    }
}

impl TcpSimulation {
    /// Validate `sc` and set up the run.
    pub fn new(sc: Scenario) -> Result<TcpSimulation, SimError> {
        sc.validate()?;
        let mut net = Network::build(&sc);
        let app = crate::app::of(&sc, &net);
        let fg = app.connections();
        let conns = fg + sc.background.flows;
        let params = TcpParams::from(&sc.tcp);
        let mut eps = Vec::with_capacity(2 * conns as usize);
        let mut ep_route = Vec::with_capacity(2 * conns as usize);
        let mut ep_host = Vec::with_capacity(2 * conns as usize);
        for c in 0..conns {
            let conn = ConnId(c);
            let (server, client) = if c < fg {
                app.ends(conn, &net)
            } else {
                net.background_ends(&sc, c - fg)
            };
            // ECN is used only if both ends negotiated it (RFC 3168 6.1.1).
            let ecn = sc.tcp.ecn && (c < fg || sc.background.ecn.unwrap_or(sc.tcp.ecn));
            // Per-flow ECMP: each connection hashes onto one path (both directions alike).
            let path = Rng::stream(sc.seed, Stream::EcmpPath(conn)).next_u64() as u32;
            let to_server = net.add_route(client, server, path);
            let to_client = net.add_route(server, client, path);
            let handshake = net.latency(to_server, sc.tcp.header_bytes)
                + net.latency(to_client, sc.tcp.header_bytes);
            // The client sends towards the server, the server back.
            for (ep, route, host) in [
                (conn.receiver(), to_server, client),
                (conn.sender(), to_client, server),
            ] {
                debug_assert_eq!(ep.index(), eps.len());
                let rtt = RttEstimator::for_tcp(&sc.tcp);
                let p = TcpParams {
                    ecn,
                    ..params.clone()
                };
                let mut e = Endpoint::new(p, rtt, Some(handshake));
                if sc.tcp.rto_randomization != RtoRandomization::None {
                    let rng = Rng::stream(sc.seed, Stream::RtoPolicy(ep));
                    e = e.with_rto_policy(RtoPolicy::new(&sc.tcp, fg, rng));
                }
                if sc.tcp.congestion_control == CongestionControl::Bbr {
                    e = e.with_cc_rng(Rng::stream(sc.seed, Stream::Bbr(ep)));
                }
                eps.push(e);
                ep_route.push(route);
                ep_host.push(host);
            }
        }
        let mut sim = TcpSimulation {
            now: 0,
            events: EventQueue::default(),
            pkts: PacketPool::default(),
            net,
            host_q: vec![VecDeque::new(); eps.len()],
            timers: vec![EndpointTimers::default(); eps.len()],
            host_rng: (0..eps.len() as u32)
                .map(|e| Rng::stream(sc.seed, Stream::HostJitter(EndpointId(e))))
                .collect(),
            eps,
            ep_route,
            ep_host,
            app_conns: fg,
            app_every_segment: app.every_segment(),
            app_counts_rx: app.counts_rx(),
            app,
            drops_by_kind: [0; 3],
            out: Vec::new(),
            act: Vec::new(),
            served: Vec::new(),
            processed: 0,
            finished: false,
            busy_at_start: 0,
            background_at_start: 0,
            series: (sc.run.sample_interval > 0).then(|| Series {
                cwnd: vec![Vec::new(); fg as usize],
                ..Series::default()
            }),
            sc,
            capture: None,
        };
        for c in fg..conns {
            sim.write(ConnId(c).sender(), BACKGROUND_BYTES);
        }
        let start = if sim.sc.background.flows > 0 {
            sim.sc.background.warmup
        } else {
            0
        };
        sim.events.push(start, Event::Start);
        if sim.series.is_some() {
            sim.events.push(start, Event::Sample);
        }
        Ok(sim)
    }

    /// Write a pcap of the frames seen at `points` to `path` (before the first step). An
    /// unknown point or a file that cannot be created is an error naming it.
    pub fn capture(&mut self, path: &str, points: &Points) -> Result<(), String> {
        let cap = capture::open(path, points, &self.net, self.sc.topology.senders)?;
        let window = self.sc.tcp.receive_window;
        self.capture = Some(Box::new(TcpCapture::new(cap, self.ep_host.clone(), window)));
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

    /// Current simulated time.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.processed
    }

    /// Whether the workload has completed.
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// Process up to `max` events; `Ok(true)` once the workload has completed. Lets a caller
    /// run in slices (to show progress or to honour Ctrl-C between them).
    pub fn step(&mut self, max: u64) -> Result<bool, SimError> {
        let mut n = 0;
        while !self.finished && n < max {
            let (t, ev) = next_event(
                &mut self.events,
                &self.sc.run,
                self.processed,
                self.now,
                "the workload is unfinished",
            )?;
            self.now = t;
            self.processed += 1;
            n += 1;
            self.dispatch(ev);
        }
        Ok(self.finished)
    }

    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::TxDone(l) => {
                let link = &mut self.net.links[l];
                let head = link.head().expect("a TxDone event has a packet in service");
                let p = *self.pkts.get(head);
                let (arrival, next) = link.finish_tx(self.now);
                if let Some(pool) = self.net.pool_mut(l) {
                    pool.release(p.frame as u64);
                }
                if let Some(t) = arrival {
                    self.events.push(t, Event::Arrive(l));
                }
                if let Some(t) = next {
                    self.events.push(t, Event::TxDone(l));
                }
                if self.net.pfc.is_some() && p.hop > 0 {
                    self.pfc_release(&p);
                }
                if let (true, LinkRole::Port(h)) = (self.app_counts_rx, self.net.roles[l.index()]) {
                    let wire = p.frame as u64 + self.net.links[l].phy_overhead;
                    self.app.on_rx(h, self.now, wire);
                }
                if let Some(cap) = self.capture.as_deref_mut() {
                    cap.on_link(l, self.now, &p);
                }
            }
            Event::Pause(l, on) => {
                let link = &mut self.net.links[l];
                if on {
                    link.pause(self.now);
                } else if let Some(t) = link.resume(self.now) {
                    self.events.push(t, Event::TxDone(l));
                }
            }
            Event::Arrive(l) => {
                let (id, next) = self.net.links[l].arrive();
                if let Some(t) = next {
                    self.events.push(t, Event::Arrive(l));
                }
                let p = self.pkts.get_mut(id);
                p.hop += 1;
                match self.net.hop(p.route, p.hop) {
                    Some(next_link) => self.enqueue(next_link, id),
                    None => self.deliver(id),
                }
            }
            Event::Rto(ep, gen) => {
                let ep = EndpointId(ep);
                if self.timers[ep.index()].rto.fire(self.now, gen) {
                    let mut out = std::mem::take(&mut self.out);
                    let before = self.eps[ep.index()].stats().timeouts;
                    self.eps[ep.index()].on_rto(self.now, &mut out);
                    let fired = self.eps[ep.index()].stats().timeouts - before;
                    if ep.is_sender() && ep.conn().0 < self.app_conns {
                        self.app.add_timeouts(ep.conn(), fired as u64);
                    }
                    self.out = out;
                    self.transmit(ep);
                }
                self.sync_timers(ep);
            }
            Event::DelAck(ep, gen) => {
                if self.timers[ep.index()].delack.fire(self.now, gen) {
                    let mut out = std::mem::take(&mut self.out);
                    self.eps[ep.index()].on_delack(&mut out);
                    self.out = out;
                    self.transmit(ep);
                }
                self.sync_timers(ep);
            }
            Event::Pace(ep, gen) => {
                if self.timers[ep.index()].pace.fire(self.now, gen) {
                    let mut out = std::mem::take(&mut self.out);
                    self.eps[ep.index()].on_pace(self.now, &mut out);
                    self.out = out;
                    self.transmit(ep);
                }
                self.sync_timers(ep);
            }
            Event::HostTx(ep) => {
                let q = &mut self.host_q[ep.index()];
                let (_, id) = q.pop_front().expect("a HostTx event has a packet");
                if let Some(&(t, _)) = q.front() {
                    self.events.push(t, Event::HostTx(ep));
                }
                let first = self.net.hop(self.ep_route[ep.index()], 0);
                self.enqueue(first.expect("routes are never empty"), id);
            }
            Event::App(token) => {
                let mut act = std::mem::take(&mut self.act);
                let view = view!(self);
                self.app.wake(token, self.now, &view, &mut act);
                self.apply(act);
            }
            Event::Start => {
                self.busy_at_start = self.net.links[self.net.bottleneck].stats.busy;
                self.background_at_start = self.background_bytes();
                let mut act = std::mem::take(&mut self.act);
                self.app.start(self.now, &mut act);
                self.apply(act);
            }
            Event::Sample => self.sample(),
            // NDP's pacer event; a TCP run never schedules one.
            Event::PullTick => debug_assert!(false, "PullTick in a TCP run"),
        }
    }

    fn enqueue(&mut self, l: LinkId, id: PktId) {
        let (route, hop) = {
            let p = self.pkts.get(id);
            (p.route, p.hop)
        };
        // Under PFC, the link the packet came over (its ingress into the switch).
        let ingress = match self.net.pfc {
            Some(_) if hop > 0 => self.net.hop(route, hop - 1),
            _ => None,
        };
        let ingress_delay = ingress.map_or(0, |up| self.net.links[up].delay);
        let link = &mut self.net.links[l];
        let p = self.pkts.get_mut(id);
        if let Some(red) = self.net.red[l.index()].as_mut() {
            if red.on_arrival(link.queued_bytes()) == crate::red::Verdict::Signal {
                if red.ecn && p.ecn & ECT != 0 {
                    p.ecn |= CE;
                    link.stats.marks += 1;
                } else {
                    link.count_drop();
                    self.count_drop(id);
                    self.pkts.free(id);
                    return;
                }
            }
        }
        if p.ecn & ECT != 0 && link.marks_arrival() {
            p.ecn |= CE;
        }
        let frame = p.frame;
        if let (Some(up), Some(pfc)) = (ingress, self.net.pfc.as_mut()) {
            // Lossless: the frame counts against the ingress it came through; only a headroom
            // overrun (thresholds set too high) drops it.
            let held = &mut pfc.ingress[up.index()];
            if *held + frame as u64 > pfc.limit {
                link.count_drop();
                self.count_drop(id);
                self.pkts.free(id);
                return;
            }
            *held += frame as u64;
            if *held >= pfc.xoff && !pfc.paused[up.index()] {
                pfc.paused[up.index()] = true;
                // The pause frame crosses the link back to its sender.
                self.events
                    .push(self.now + ingress_delay, Event::Pause(up, true));
            }
            if let Enqueued::Transmitting(t) = link.enqueue(self.now, id, frame) {
                self.events.push(t, Event::TxDone(l));
            }
            return;
        }
        let queued = link.queued_bytes();
        if let Some(pool) = self.net.pool_mut(l) {
            if !pool.admits(queued, frame as u64) {
                self.net.links[l].count_drop();
                self.count_drop(id);
                self.pkts.free(id);
                return;
            }
        }
        match self.net.links[l].enqueue(self.now, id, frame) {
            Enqueued::Dropped => {
                self.count_drop(id);
                self.pkts.free(id);
            }
            e => {
                if let Some(pool) = self.net.pool_mut(l) {
                    pool.take(frame as u64);
                }
                if let Enqueued::Transmitting(t) = e {
                    self.events.push(t, Event::TxDone(l));
                }
            }
        }
    }

    /// Count a dropped packet by what it carried.
    #[inline]
    fn count_drop(&mut self, id: PktId) {
        let p = self.pkts.get(id);
        let k = match (p.len, EndpointId(p.dst).is_sender()) {
            (0, _) => 1,
            (_, true) => 2,
            (_, false) => 0,
        };
        self.drops_by_kind[k] += 1;
    }

    /// A frame left the switch: its ingress holds less, and may be resumed.
    fn pfc_release(&mut self, p: &Packet) {
        let up = self
            .net
            .hop(p.route, p.hop - 1)
            .expect("hop > 0 has a previous link");
        let pfc = self.net.pfc.as_mut().expect("PFC is on");
        let held = &mut pfc.ingress[up.index()];
        *held -= p.frame as u64;
        if pfc.paused[up.index()] && *held <= pfc.xon {
            pfc.paused[up.index()] = false;
            let delay = self.net.links[up].delay;
            self.events.push(self.now + delay, Event::Pause(up, false));
        }
    }

    fn deliver(&mut self, id: PktId) {
        let p = *self.pkts.get(id);
        self.pkts.free(id);
        if let Some(cap) = self.capture.as_deref_mut() {
            cap.on_deliver(self.now, &p);
        }
        let ep = EndpointId(p.dst);
        let mut out = std::mem::take(&mut self.out);
        let delivered = self.eps[ep.index()].on_segment(
            self.now,
            &crate::tcp::Incoming {
                seq: p.seq,
                len: p.len,
                ack: p.ack,
                sack: &p.sack[..p.nsack as usize],
                ecn: p.ecn,
            },
            &mut out,
        );
        self.out = out;
        self.transmit(ep);
        if ep.conn().0 < self.app_conns && (delivered > 0 || self.app_every_segment) {
            let received = self.eps[ep.index()].received();
            let mut act = std::mem::take(&mut self.act);
            self.app
                .on_segment(ep, delivered, received, self.now, &mut act);
            self.apply(act);
        }
        let mut out = std::mem::take(&mut self.out);
        self.eps[ep.index()].flush_ack(&mut out);
        self.out = out;
        self.transmit(ep);
        self.sync_timers(ep);
    }

    fn apply(&mut self, mut act: Vec<Effect>) {
        for a in act.drain(..) {
            match a {
                Effect::Write { ep, bytes } => self.write(ep, bytes),
                Effect::Wake { at, token } => self.events.push(at, Event::App(token)),
                Effect::Fill { slot } => self.fill(slot),
                Effect::Finished => self.finished = true,
            }
        }
        self.act = act;
    }

    /// The application writes what its connections' send buffers have room for.
    fn fill(&mut self, slot: u32) {
        let mut served = std::mem::take(&mut self.served);
        let view = view!(self);
        self.app.fill(slot, &view, &mut served);
        for a in served.drain(..) {
            if let Effect::Write { ep, bytes } = a {
                self.write(ep, bytes);
            }
        }
        self.served = served;
    }

    /// Whether `conn` carries the application's traffic (not a background flow).
    fn app_owns(&self, conn: ConnId) -> bool {
        conn.0 < self.app_conns
    }

    fn write(&mut self, ep: EndpointId, bytes: u64) {
        let mut out = std::mem::take(&mut self.out);
        self.eps[ep.index()].write(self.now, bytes, &mut out);
        self.out = out;
        self.transmit(ep);
        self.sync_timers(ep);
    }

    /// Put the segments endpoint `ep` emitted on its route.
    fn transmit(&mut self, ep: EndpointId) {
        let route = self.ep_route[ep.index()];
        let first = self.net.hop(route, 0).expect("routes are never empty");
        let header = self.sc.tcp.header_bytes;
        let jitter = self.sc.topology.host_jitter;
        let tsval = self
            .capture
            .as_ref()
            .map_or(0, |_| capture::tsval(self.now));
        let mut out = std::mem::take(&mut self.out);
        for s in out.drain(..) {
            let frame = s.len as u64 + header + sack_option_bytes(s.nsack);
            let id = self.pkts.alloc(Packet {
                route,
                hop: 0,
                nsack: s.nsack,
                ecn: s.ecn,
                dst: ep.peer().0,
                seq: s.seq,
                len: s.len,
                frame: frame as u32,
                ack: s.ack,
                sack: s.sack,
                tsval,
            });
            if jitter == 0 {
                self.enqueue(first, id);
                continue;
            }
            let q = &mut self.host_q[ep.index()];
            let mut at = self.now + self.host_rng[ep.index()].up_to(jitter);
            if let Some(&(last, _)) = q.back() {
                at = at.max(last); // a connection's packets leave in order
            }
            if q.is_empty() {
                self.events.push(at, Event::HostTx(ep));
            }
            q.push_back((at, id));
        }
        self.out = out;
    }

    /// Bytes every background flow has delivered so far.
    fn background_bytes(&self) -> u64 {
        self.connections()
            .filter(|&c| !self.app_owns(c))
            .map(|c| self.eps[c.receiver().index()].received())
            .sum()
    }

    /// Every connection of the run, workload connections first, then background flows.
    fn connections(&self) -> impl Iterator<Item = ConnId> {
        (0..self.eps.len() as u32 / 2).map(ConnId)
    }

    /// Schedule what endpoint `ep`'s deadlines need now.
    fn sync_timers(&mut self, ep: EndpointId) {
        let due = self.eps[ep.index()].poll_at();
        let timers = &mut self.timers[ep.index()];
        follow(&mut timers.rto, due.rto);
        follow(&mut timers.delack, due.delayed_ack);
        follow(&mut timers.pace, due.pace);
        if let Some((t, gen)) = timers.pace.needs_event() {
            self.events.push(t, Event::Pace(ep, gen));
        }
        if let Some((t, gen)) = timers.rto.needs_event() {
            self.events.push(t, Event::Rto(ep.0, gen));
        }
        if let Some((t, gen)) = timers.delack.needs_event() {
            self.events.push(t, Event::DelAck(ep, gen));
        }
    }

    fn sample(&mut self) {
        let Some(series) = self.series.as_mut() else {
            return;
        };
        series.t.push(self.now - self.app.series_origin());
        series
            .queue_bytes
            .push(self.net.links[self.net.bottleneck].queued_bytes());
        for (c, w) in series.cwnd.iter_mut().enumerate() {
            w.push(self.eps[ConnId(c as u32).sender().index()].cwnd());
        }
        // A time series holds at most MAX_SERIES_VALUES numbers whatever max_samples says:
        // sampling every picosecond must not be a way to fill the machine's memory.
        let per_sample = series.cwnd.len() + 2;
        let budget = (crate::config::MAX_SERIES_VALUES / per_sample).max(1);
        let most = (self.sc.run.max_samples as usize).min(budget);
        if !self.finished && series.t.len() < most {
            self.events
                .push(self.now + self.sc.run.sample_interval, Event::Sample);
        }
    }
}
