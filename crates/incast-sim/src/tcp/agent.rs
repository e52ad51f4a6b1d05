//! TCP as the engine runs it ([`Transport`]): every connection's two [`Endpoint`]s, their
//! timers, the hosts' send jitter, and the application the connections carry. It turns what
//! the endpoints emit into packets on their routes and delivered segments back into endpoint
//! calls; the network (queues, marking, PFC) is the fabric's.

use super::capture::{tsval, TcpCapture};
use crate::app::{App, Effect, Token, View};
use crate::capture::Capture;
use crate::config::Scenario;
use crate::engine::driver::{Cx, Seen, Transport};
use crate::engine::{Event, EventQueue, Timer};
use crate::ids::{ConnId, EndpointId};
use crate::net::fabric::{prefetch, Fabric, Offered, Wire};
use crate::net::trim::Trimmable;
use crate::net::{PktId, CE, ECT};
use crate::report::{Report, Series};
use crate::tcp::scoreboard::SegPool;
use crate::tcp::slots::Endpoints;
use crate::tcp::Packet;
use crate::tcp::Segment;
use crate::topology::{LinkId, LinkRole, Network};
use crate::units::SimTime;

/// [`Event::Agent`] kinds: an endpoint's timers, and a packet's release from its host to the NIC.
pub(super) const RTO: u8 = 0;
pub(super) const DELACK: u8 = 1;
pub(super) const PACE: u8 = 2;
pub(super) const HOST_TX: u8 = 3;

/// Every TCP connection of a run and the application over them.
#[derive(Debug)]
pub struct Tcp {
    /// Every connection's two endpoints, indexed by [`EndpointId`], with their timers, each
    /// made on its first use.
    pub(super) eps: Endpoints,
    /// Route each endpoint sends on, and the route's first link.
    pub(super) ep_route: Vec<(u32, LinkId)>,
    /// Host each endpoint is on.
    pub(super) ep_host: Vec<u32>,
    /// Scoreboard buffers idle endpoints lent (see [`SegPool`]).
    pub(super) seg_pool: SegPool,
    /// The workload.
    pub(super) app: Box<dyn App>,
    /// Its connections (`0..app_conns`; background flows follow).
    pub(super) app_conns: u32,
    /// Whether it wants every segment its connections deliver, not only data.
    pub(super) app_every_segment: bool,
    /// Whether it wants the frames the hosts' switch ports send.
    pub(super) app_counts_rx: bool,
    /// Drops by what the packet carried: data to a client, pure ACKs, data to a server.
    pub(super) drops_by_kind: [u64; 3],
    /// TCP/IP header bytes of every segment.
    pub(super) header: u64,
    /// Host send jitter.
    pub(super) jitter: SimTime,
    pub(super) out: Vec<Segment>,
    pub(super) act: Vec<Effect>,
    /// What the application writes while `act` is being applied ([`Effect::Fill`]).
    pub(super) served: Vec<Effect>,
    pub(super) finished: bool,
    pub(super) busy_at_start: SimTime,
    /// Bytes the background flows had delivered when the workload started.
    pub(super) background_at_start: u64,
    pub(super) series: Option<Series>,
    /// The packet capture, if the run writes one.
    pub(super) capture: Option<Box<TcpCapture>>,
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

impl Trimmable for Packet {
    #[inline]
    fn is_data(&self) -> bool {
        self.len > 0
    }
    #[inline]
    fn frame(&self) -> u32 {
        self.frame
    }
    #[inline]
    fn trim(&mut self, header_bytes: u32) {
        self.len = 0;
        self.frame = header_bytes;
    }
}

impl Wire for Packet {
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
    fn flow(&self) -> u32 {
        // Both directions of a connection are its flow.
        EndpointId(self.dst).conn().0
    }
}

/// What the application may read of the endpoints and the network (borrowing the fields
/// apart from the application itself).
pub(super) struct TcpView<'a> {
    pub(super) eps: &'a Endpoints,
    pub(super) ep_host: &'a [u32],
    pub(super) net: &'a Network,
    pub(super) drops_by_kind: [u64; 3],
}

impl View for TcpView<'_> {
    fn received(&self, ep: EndpointId) -> u64 {
        self.eps.get(ep.index()).received()
    }
    fn acked(&self, ep: EndpointId) -> u64 {
        self.eps.get(ep.index()).acked()
    }
    fn endpoints(&self) -> u32 {
        self.eps.len() as u32
    }
    fn host_of(&self, ep: EndpointId) -> u32 {
        self.ep_host[ep.index()]
    }
    fn loss_counters(&self, ep: EndpointId) -> (u64, u64) {
        let e = self.eps.get(ep.index());
        let s = e.stats();
        (s.timeouts as u64, (s.retx_fast + s.retx_timeout) as u64)
    }
    fn drops_by_kind(&self) -> [u64; 3] {
        self.drops_by_kind
    }
    fn net(&self) -> &Network {
        self.net
    }
}

impl Transport for Tcp {
    type Packet = Packet;
    const UNFINISHED: &'static str = "the workload is unfinished";

    fn new(sc: &Scenario, fabric: &mut Fabric<Packet>, events: &mut EventQueue) -> Tcp {
        Tcp::set_up(sc, fabric, events)
    }

    fn finished(&self) -> bool {
        self.finished
    }

    fn start(&mut self, cx: &mut Cx<Packet>) {
        let net = &cx.fabric.net;
        self.busy_at_start = net.links[net.bottleneck].stats.busy;
        self.background_at_start = self.background_bytes();
        let mut act = std::mem::take(&mut self.act);
        self.app.start(cx.now, &mut act);
        self.apply(cx, act);
    }

    #[inline]
    fn timer(&mut self, cx: &mut Cx<Packet>, agent: u32, kind: u8, gen: u32) {
        if kind == HOST_TX {
            // Not an endpoint's timer: `agent` is the NIC's link, `gen` the packet.
            return self.enqueue(cx, LinkId(agent), gen);
        }
        let ep = EndpointId(agent);
        let now = cx.now;
        let slot = self.eps.slot(ep);
        let timers = &mut slot.timers;
        let due = match kind {
            RTO => timers.rto.fire(now, gen),
            DELACK => timers.delack.fire(now, gen),
            _ => timers.pace.fire(now, gen),
        };
        if due {
            let mut out = std::mem::take(&mut self.out);
            match kind {
                RTO => {
                    let before = slot.ep.stats().timeouts;
                    slot.ep.on_rto(now, &mut out);
                    let fired = slot.ep.stats().timeouts - before;
                    if ep.conn().0 < self.app_conns {
                        if ep.is_sender() {
                            self.app.add_timeouts(ep.conn(), fired as u64);
                        } else if fired > 0 {
                            self.app.add_client_timeouts(ep.conn(), fired as u64);
                        }
                    }
                }
                DELACK => slot.ep.on_delack(&mut out),
                _ => slot.ep.on_pace(now, &mut out),
            }
            self.out = out;
            self.transmit(cx, ep);
        }
        self.sync_timers(cx, ep);
        self.eps.rest(ep, cx.now, &mut self.seg_pool);
    }

    fn app(&mut self, cx: &mut Cx<Packet>, token: Token) {
        let mut act = std::mem::take(&mut self.act);
        let view = TcpView {
            eps: &self.eps,
            ep_host: &self.ep_host,
            net: &cx.fabric.net,
            drops_by_kind: self.drops_by_kind,
        };
        self.app.wake(token, cx.now, &view, &mut act);
        self.apply(cx, act);
    }

    fn sample(&mut self, cx: &mut Cx<Packet>) {
        let Some(series) = self.series.as_mut() else {
            return;
        };
        let net = &cx.fabric.net;
        series.t.push(cx.now - self.app.series_origin());
        series
            .queue_bytes
            .push(net.links[net.bottleneck].queued_bytes());
        for (c, w) in series.cwnd.iter_mut().enumerate() {
            w.push(self.eps.get(ConnId(c as u32).sender().index()).cwnd());
        }
        // A time series holds at most MAX_SERIES_VALUES numbers whatever max_samples says:
        // sampling every picosecond must not be a way to fill the machine's memory.
        let per_sample = series.cwnd.len() + 2;
        let budget = (crate::config::MAX_SERIES_VALUES / per_sample).max(1);
        let most = (cx.sc.run.max_samples as usize).min(budget);
        if !self.finished && series.t.len() < most {
            cx.push(cx.now + cx.sc.run.sample_interval, Event::Sample);
        }
    }

    #[inline]
    fn sent(&mut self, cx: &mut Cx<Packet>, l: LinkId, id: PktId) {
        let net = &cx.fabric.net;
        if let (true, LinkRole::Port(h)) = (self.app_counts_rx, net.roles[l.index()]) {
            // The frame as the link sent it: the packet, long in the queue, is not read.
            let link = &net.links[l];
            let frame = link
                .newest_frame_in_pipe()
                .expect("a frame just entered the pipe");
            let wire = frame as u64 + link.phy_overhead;
            self.app.on_rx(h, cx.now, wire);
        }
        if let Some(cap) = self.capture.as_deref_mut() {
            cap.on_link(l, cx.now, id, cx.fabric.pkts.get(id));
        }
    }

    #[inline]
    fn deliver(&mut self, cx: &mut Cx<Packet>, id: PktId) {
        self.deliver_segment(cx, id);
    }

    #[inline]
    fn offered(&mut self, cx: &mut Cx<Packet>, _l: LinkId, id: PktId, o: Offered) {
        debug_assert_eq!(o, Offered::Dropped, "TCP runs over drop-tail queues");
        self.count_drop(cx, id);
        cx.fabric.pkts.free(id);
    }

    fn attach_capture(&mut self, cap: Capture, sc: &Scenario) {
        let window = sc.tcp.receive_window;
        self.capture = Some(Box::new(TcpCapture::new(cap, self.ep_host.clone(), window)));
    }

    fn finish_capture(&mut self) -> Option<std::io::Result<u64>> {
        self.capture.take().map(|c| c.finish())
    }

    fn report(&self, run: &Seen<Packet>) -> Report {
        self.run_report(run)
    }

    fn check_invariants(&self, run: &Seen<Packet>) -> Result<(), String> {
        for (i, e) in self.eps.made() {
            e.check_invariants()
                .map_err(|m| format!("endpoint {i}: {m}"))?;
        }
        run.fabric.check_invariants()
    }
}

impl Tcp {
    /// A dropped packet, counted by what it carried.
    #[inline]
    fn count_drop(&mut self, cx: &Cx<Packet>, id: PktId) {
        let p = cx.fabric.pkts.get(id);
        let k = match (p.len, EndpointId(p.dst).is_sender()) {
            (0, _) => 1,
            (_, true) => 2,
            (_, false) => 0,
        };
        self.drops_by_kind[k] += 1;
    }

    /// Offer packet `id` to link `l`; count and free it if it is dropped.
    #[inline]
    fn enqueue(&mut self, cx: &mut Cx<Packet>, l: LinkId, id: PktId) {
        let o = cx.offer(l, id);
        if o != Offered::Queued {
            self.offered(cx, l, id, o);
        }
    }

    fn deliver_segment(&mut self, cx: &mut Cx<Packet>, id: PktId) {
        let p = *cx.fabric.pkts.get(id);
        cx.fabric.pkts.free(id);
        if let Some(cap) = self.capture.as_deref_mut() {
            cap.on_deliver(cx.now, id, &p);
        }
        let ep = EndpointId(p.dst);
        // The connection's state lies in a few arrays of a million entries (a cache miss
        // each): ask for all of it at once rather than miss after miss.
        prefetch(&self.ep_route[ep.index()]);
        if ep.conn().0 < self.app_conns {
            self.app.warm(ep);
        }
        self.eps.warm(ep);
        let mut out = std::mem::take(&mut self.out);
        let mut sack = [(0, 0); crate::net::MAX_SACK_BLOCKS];
        let delivered = self.eps.slot(ep).ep.on_segment(
            cx.now,
            &crate::tcp::Incoming {
                seq: p.seq,
                len: p.len,
                ack: p.ack,
                sack: p.sack(&mut sack),
                ecn: p.ecn,
            },
            &mut out,
        );
        self.out = out;
        self.transmit(cx, ep);
        if ep.conn().0 < self.app_conns && (delivered > 0 || self.app_every_segment) {
            let received = self.eps.get(ep.index()).received();
            let mut act = std::mem::take(&mut self.act);
            self.app
                .on_segment(ep, delivered, received, cx.now, &mut act);
            self.apply(cx, act);
        }
        let mut out = std::mem::take(&mut self.out);
        self.eps.slot(ep).ep.flush_ack(&mut out);
        self.out = out;
        self.transmit(cx, ep);
        self.sync_timers(cx, ep);
        self.eps.rest(ep, cx.now, &mut self.seg_pool);
    }

    fn apply(&mut self, cx: &mut Cx<Packet>, mut act: Vec<Effect>) {
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
    fn fill(&mut self, cx: &mut Cx<Packet>, slot: u32) {
        let mut served = std::mem::take(&mut self.served);
        let view = TcpView {
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

    /// Whether `conn` carries the application's traffic (not a background flow).
    pub(super) fn app_owns(&self, conn: ConnId) -> bool {
        conn.0 < self.app_conns
    }

    pub(super) fn write(&mut self, cx: &mut Cx<Packet>, ep: EndpointId, bytes: u64) {
        let mut out = std::mem::take(&mut self.out);
        let slot = self.eps.slot(ep);
        slot.ep
            .write_from(&mut self.seg_pool, cx.now, bytes, &mut out);
        self.out = out;
        self.transmit(cx, ep);
        self.sync_timers(cx, ep);
    }

    /// Put the segments endpoint `ep` emitted on its route.
    fn transmit(&mut self, cx: &mut Cx<Packet>, ep: EndpointId) {
        let (route, first) = self.ep_route[ep.index()];
        let tsval = self.capture.as_ref().map_or(0, |_| tsval(cx.now));
        let mut out = std::mem::take(&mut self.out);
        for s in out.drain(..) {
            let frame = s.len as u64 + self.header + sack_option_bytes(s.nsack);
            let mut p = Packet {
                route,
                hop: 0,
                nsack: 0,
                ecn: s.ecn,
                dst: ep.peer().0,
                seq: s.seq,
                len: s.len,
                frame: frame as u32,
                ack: s.ack,
                sack: Default::default(),
                tsval,
            };
            p.set_sack(&s.sack[..s.nsack as usize]);
            let id = cx.fabric.pkts.alloc(p);
            if let Some(cap) = self.capture.as_deref_mut() {
                cap.tag(id, ep);
            }
            if self.jitter == 0 {
                self.enqueue(cx, first, id);
                continue;
            }
            let slot = self.eps.slot(ep);
            let at = cx.now + slot.draw_jitter(self.jitter);
            // A connection's packets leave in order.
            let at = at.max(slot.host_last);
            slot.host_last = at;
            cx.push(at, Event::Agent(first.0, HOST_TX, id));
        }
        self.out = out;
    }

    /// Bytes every background flow has delivered so far.
    pub(super) fn background_bytes(&self) -> u64 {
        self.connections()
            .filter(|&c| !self.app_owns(c))
            .map(|c| self.eps.get(c.receiver().index()).received())
            .sum()
    }

    /// Every connection of the run, workload connections first, then background flows.
    pub(super) fn connections(&self) -> impl Iterator<Item = ConnId> {
        (0..self.eps.len() as u32 / 2).map(ConnId)
    }

    /// Schedule what endpoint `ep`'s deadlines need now.
    fn sync_timers(&mut self, cx: &mut Cx<Packet>, ep: EndpointId) {
        let slot = self.eps.slot(ep);
        let due = slot.ep.poll_at();
        let timers = &mut slot.timers;
        follow(&mut timers.rto, due.rto);
        follow(&mut timers.delack, due.delayed_ack);
        follow(&mut timers.pace, due.pace);
        if let Some((t, gen)) = timers.pace.needs_event() {
            cx.push(t, Event::Agent(ep.0, PACE, gen));
        }
        if let Some((t, gen)) = timers.rto.needs_event() {
            cx.push(t, Event::Agent(ep.0, RTO, gen));
        }
        if let Some((t, gen)) = timers.delack.needs_event() {
            cx.push(t, Event::Agent(ep.0, DELACK, gen));
        }
    }
}
