//! The network as the engine runs it, whatever the transport: the topology's links and routes,
//! the packets in flight, and the queue disciplines in front of the links.
//!
//! Two kinds of switch port, chosen by the transport when it sets the run up:
//! - drop-tail queues (the links' own), with the topology's options: RED (dropping or
//!   ECN-marking), a DCTCP-style marking threshold, a shared buffer per switch with a dynamic
//!   threshold, PFC (pause and resume per ingress, over a buffer per ingress or the switch's
//!   shared buffer, with headroom), and as a packet starts to leave ([`super::egress`]) INT,
//!   egress ECN marking and the paused time of each flow;
//! - trimming ports ([`super::trim`], NDP's): a small data queue whose overflow is cut to
//!   headers that go ahead on a priority queue.
//!
//! A packet is any small `Copy` type that tells the network what it needs ([`Wire`]); the
//! fabric is generic over it, so the per-packet path is monomorphized.

use super::egress::{Egress, FlowPause};
use super::int::IntHop;
use super::pfc::Admit;
use super::prio;
use super::trim::{self, Port, Trimmable};
use super::{Enqueued, Link, PacketPool, PktId};
use crate::engine::{Event, EventQueue};
use crate::ids::Next;
use crate::report::{FabricReport, PortPauses, Report};
use crate::topology::{LinkId, Network};
use crate::units::SimTime;

/// What the network reads and changes of a packet.
pub trait Wire: Copy + Trimmable {
    /// Index of the link it is on within its route.
    fn hop(&self) -> u16;
    /// It moved on to the next link of its route.
    fn advance(&mut self);
    /// The link at position `hop` of its route, `None` past the end.
    fn link_at(&self, net: &Network, hop: u16) -> Option<LinkId>;
    /// Whether it is ECN-capable (ECT), so a queue may mark it instead of dropping it.
    fn ect(&self) -> bool {
        false
    }
    /// Mark it congestion experienced (CE).
    fn mark_ce(&mut self) {}
    /// Whether it collects in-band telemetry at the switch egresses it leaves through.
    fn wants_int(&self) -> bool {
        false
    }
    /// Record one egress's telemetry (called as it starts to leave an INT-capable switch port;
    /// a packet whose stack is full ignores the rest).
    fn int_push(&mut self, _hop: IntHop) {}
    /// The flow it belongs to, for the paused time of each flow under PFC; `u32::MAX`:
    /// untracked.
    fn flow(&self) -> u32 {
        u32::MAX
    }
    /// Its level at strict-priority ports ([`super::prio`]), 0 the lowest.
    fn priority(&self) -> u8 {
        0
    }
}

/// The three methods by which a [`Wire`] packet follows its route, for packets that carry the
/// hop they are on (`hop: u16`) and either a precomputed route (`follows_route!(route)`: a
/// `route` field for `Network::hop`) or their ends and path index (`follows_route!(ends)`:
/// `src`, `dst`, `path` for `Network::hop_via`), or a lookup of its own
/// (`follows_route!(@walk |p, net, hop| …)`). One owner for how every transport's packets walk
/// the network; use it inside `impl Wire for …`.
macro_rules! follows_route {
    (route) => {
        $crate::net::fabric::follows_route!(@walk |p: &Self, net: &$crate::topology::Network, hop| {
            net.hop(p.route, hop)
        });
    };
    (ends) => {
        $crate::net::fabric::follows_route!(@walk |p: &Self, net: &$crate::topology::Network, hop| {
            net.hop_via(p.src, p.dst, p.path, hop)
        });
    };
    (@walk $link:expr) => {
        #[inline]
        fn hop(&self) -> u16 {
            self.hop
        }
        #[inline]
        fn advance(&mut self) {
            self.hop += 1;
        }
        #[inline]
        fn link_at(
            &self,
            net: &$crate::topology::Network,
            hop: u16,
        ) -> Option<$crate::topology::LinkId> {
            ($link)(self, net, hop)
        }
    };
}
pub(crate) use follows_route;

/// What became of a packet offered to a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offered {
    /// Queued as it came.
    Queued,
    /// Trimmed to its header, which was queued.
    Trimmed,
    /// Dropped and counted on the link; the packet is the caller's to count and free.
    Dropped,
    /// A trimming port's header queue is full: the packet (trimmed first if `trimmed`) is the
    /// caller's to return to its sender or drop; not counted on the link.
    Refused {
        /// Whether the port trimmed it before refusing its header.
        trimmed: bool,
    },
}

/// The links, the packets and the ports in front of the links.
#[derive(Debug)]
pub struct Fabric<P> {
    /// Links, routes and the drop-tail disciplines' state (RED, pools, PFC).
    pub net: Network,
    /// Every packet alive.
    pub pkts: PacketPool<P>,
    /// One trimming port in front of each link, when the transport's switches trim.
    pub ports: Option<Vec<Port>>,
    /// What runs as a packet starts to leave an egress, if anything does.
    egress: Option<Box<Egress>>,
    /// One strict-priority port in front of each link, when the scenario asks for priorities.
    pub prio: Option<Vec<prio::Port>>,
    /// The coin of trimming ports that trim the arriving data packet or the one last queued
    /// with equal chance (`Fabric::trim_either`); none: always the arriving one.
    trim_coin: Option<crate::rng::Rng>,
}

impl<P: Wire> Fabric<P> {
    /// A fabric of drop-tail queues over `net`.
    pub fn new(mut net: Network) -> Fabric<P> {
        Fabric {
            egress: net.egress.take(),
            net,
            pkts: PacketPool::default(),
            ports: None,
            prio: None,
            trim_coin: None,
        }
    }

    /// Put a strict-priority port in front of every link, of `limit(l)` buffer bytes.
    pub fn prioritize(&mut self, limit: impl Fn(&Network, LinkId) -> u64) {
        let net = &self.net;
        self.prio = Some(
            net.link_ids()
                .map(|l| prio::Port::new(limit(net, l)))
                .collect(),
        );
    }

    /// Put a trimming port in front of every link: `switch` for switch ports, `nic` for the
    /// hosts' NICs.
    pub fn trim(&mut self, switch: impl Fn() -> Port, nic: impl Fn() -> Port) {
        let net = &self.net;
        self.ports = Some(
            net.link_ids()
                .map(|l| if net.is_port(l) { switch() } else { nic() })
                .collect(),
        );
    }

    /// Where a switch port's data queue is full, trim the arriving data packet or the one
    /// last queued with equal chance, drawn from `coin` (htsim's `CompositeQueue`: a burst's
    /// later packets are not the only ones trimmed, so who loses its payload is not locked
    /// to the phase of arrivals).
    pub fn trim_either(&mut self, coin: crate::rng::Rng) {
        self.trim_coin = Some(coin);
    }

    /// Make every eager trimming port lazy (before the first packet): a capture writes each
    /// frame when its serialization ends, which an eager port has no event for.
    pub fn lazy_ports(&mut self) {
        for p in self.ports.iter_mut().flatten() {
            p.lazy();
        }
    }

    /// Offer packet `id` to link `l` at `now`; the events it needs go on `events`.
    #[inline]
    pub fn offer(
        &mut self,
        events: &mut EventQueue,
        now: SimTime,
        l: LinkId,
        id: PktId,
    ) -> Offered {
        match self.ports.as_mut() {
            Some(ports) => {
                if let Some(coin) = self.trim_coin.as_mut() {
                    let arriving = self.pkts.get(id);
                    let port = &mut ports[l.index()];
                    if arriving.is_data() && port.data_full() && coin.next_u64() >> 63 == 1 {
                        // The arriving packet takes the last one's place; that one is trimmed.
                        if let Some(last) = port.replace_last_data(arriving.frame()) {
                            self.pkts.swap(id, last);
                        }
                    }
                }
                // An eager port's packet enters the pipe now or soon: the link it goes on to
                // is worked out once, for the cache to fetch and for its arrival to carry.
                let eager = ports[l.index()].is_eager();
                let next = match eager {
                    true => {
                        let p = self.pkts.get(id);
                        Next::known(p.link_at(&self.net, p.hop() + 1))
                    }
                    false => Next::UNKNOWN,
                };
                let link = &mut self.net.links[l];
                let p = self.pkts.get_mut(id);
                let port = &mut ports[l.index()];
                let (end, offered) = match port.offer(link, now, id, p) {
                    trim::Offered::Queued(end) => (end, Offered::Queued),
                    trim::Offered::Trimmed(end) => (end, Offered::Trimmed),
                    trim::Offered::Refused { trimmed } => (None, Offered::Refused { trimmed }),
                };
                if let Some(t) = port.take_arrival() {
                    let f = front(link);
                    let known = if f == id { next } else { Next::UNKNOWN };
                    events.push(t, Event::Arrive(l, f, known));
                }
                if let Some(t) = end {
                    events.push(t, Event::TxDone(l));
                }
                if eager && !matches!(offered, Offered::Refused { .. }) {
                    self.warm_next(next);
                }
                offered
            }
            None if self.prio.is_some() => self.prio_offer(events, now, l, id),
            None => self.drop_tail(events, now, l, id),
        }
    }

    /// Ask the cache for the port and link a packet meets after this hop (`next`), while it
    /// propagates: a hop's time goes mostly to fetching those two from memory (8192-host fat
    /// tree: ~50,000 links, far beyond the core's cache), and the packet reaches them only
    /// several events later. A hint: it changes no state.
    #[inline]
    pub fn warm_next(&self, next: Next) {
        if let Some(Some(n)) = next.get() {
            self.warm_link(n);
        }
    }

    /// Ask the cache for link `l` and its port (the next event's, see [`Fabric::warm_next`]).
    #[inline]
    pub fn warm_link(&self, l: LinkId) {
        if let Some(ports) = self.ports.as_ref() {
            prefetch(&ports[l.index()]);
        }
        prefetch(&self.net.links[l]);
    }

    /// Ask the cache for link `l` alone (an arrival's: its pipe).
    #[inline]
    pub fn warm_pipe(&self, l: LinkId) {
        prefetch(&self.net.links[l]);
    }

    /// Ask the cache for packet `id` (the next event's arrival: it has propagated for a
    /// link's delay, long enough to leave the cache).
    #[inline]
    pub fn warm_packet(&self, id: PktId) {
        prefetch(self.pkts.get(id));
    }

    /// The strict-priority path: the port's shared buffer, then its level's queue.
    #[inline]
    fn prio_offer(
        &mut self,
        events: &mut EventQueue,
        now: SimTime,
        l: LinkId,
        id: PktId,
    ) -> Offered {
        let ports = self.prio.as_mut().expect("priority ports are on");
        let p = self.pkts.get(id);
        let link = &mut self.net.links[l];
        match ports[l.index()].offer(link, now, id, p.frame(), p.priority()) {
            prio::Offered::Queued(end) => {
                if let Some(t) = end {
                    events.push(t, Event::TxDone(l));
                }
                Offered::Queued
            }
            prio::Offered::Dropped => Offered::Dropped,
        }
    }

    /// The drop-tail path: RED, ECN marking, PFC admission, the shared pool, the queue.
    #[inline]
    fn drop_tail(
        &mut self,
        events: &mut EventQueue,
        now: SimTime,
        l: LinkId,
        id: PktId,
    ) -> Offered {
        let p = *self.pkts.get(id);
        // Under PFC, the link the packet came over (its ingress into the switch).
        let ingress = match self.net.pfc {
            Some(_) if p.hop() > 0 => p.link_at(&self.net, p.hop() - 1),
            _ => None,
        };
        let lossless = self.net.pfc.is_some();
        let link = &mut self.net.links[l];
        let p = self.pkts.get_mut(id);
        if let Some(red) = self.net.red.get_mut(l.index()).and_then(Option::as_mut) {
            if red.on_arrival(link.queued_bytes()) == super::red::Verdict::Signal {
                if red.ecn && p.ect() {
                    p.mark_ce();
                    link.stats.marks += 1;
                } else if !lossless {
                    link.count_drop();
                    return Offered::Dropped;
                }
                // A lossless (PFC) class is never dropped early: a packet that cannot carry
                // the mark passes, and PFC bounds the queue instead.
            }
        }
        if p.ect() && link.marks_arrival() {
            p.mark_ce();
        }
        let frame = p.frame();
        if let Some(up) = ingress {
            return self.pfc_admit(events, now, l, up, id, frame);
        }
        let link = &mut self.net.links[l];
        let queued = link.queued_bytes();
        if let Some(pool) = self.net.pool_mut(l) {
            if !pool.admits(queued, frame as u64) {
                self.net.links[l].count_drop();
                return Offered::Dropped;
            }
        }
        match self.net.links[l].enqueue(now, id, frame) {
            Enqueued::Dropped => Offered::Dropped,
            e => {
                if let Some(pool) = self.net.pool_mut(l) {
                    pool.take(frame as u64);
                }
                self.queued(now, l, id, e);
                if let Enqueued::Transmitting(t) = e {
                    events.push(t, Event::TxDone(l));
                }
                Offered::Queued
            }
        }
    }

    /// Packet `id` was queued at link `l` (`e`: and may have started at once): the hooks that
    /// run then, if any.
    #[inline]
    fn queued(&mut self, now: SimTime, l: LinkId, id: PktId, e: Enqueued) {
        if self.egress.is_some() {
            self.queued_hooks(now, l, id, e);
        }
    }

    /// [`Fabric::queued`]'s hooks, out of line so the path without them stays as it was.
    #[inline(never)]
    fn queued_hooks(&mut self, now: SimTime, l: LinkId, id: PktId, e: Enqueued) {
        let Some(egress) = self.egress.as_mut() else {
            return;
        };
        if let Some(track) = egress.track.as_mut() {
            track.queued(id, self.net.links[l].paused_until(now));
        }
        if let Enqueued::Transmitting(_) = e {
            self.started_hooks(now, l);
        }
    }

    /// The packet at the head of link `l` starts to leave at `now`: at a switch port it
    /// records INT and may be marked; its flow is credited the time it waited at pauses.
    /// Allocation-free (the tracking tables grow to their peak and stay).
    #[inline]
    fn started(&mut self, now: SimTime, l: LinkId) {
        if self.egress.is_some() {
            self.started_hooks(now, l);
        }
    }

    /// [`Fabric::started`]'s hooks, out of line so the path without them stays as it was.
    #[inline(never)]
    fn started_hooks(&mut self, now: SimTime, l: LinkId) {
        let Some(egress) = self.egress.as_mut() else {
            return;
        };
        let link = &self.net.links[l];
        let id = link.head().expect("a frame just started");
        let p = self.pkts.get_mut(id);
        if let Some(track) = egress.track.as_mut() {
            let paused = link.paused_until(now);
            let (q, net) = (*p, &self.net);
            let crosses = |e: u32| (0..).map_while(|h| q.link_at(net, h)).any(|x| x.0 == e);
            track.started(id, p.flow(), l.0, paused, crosses);
        }
        if !self.net.is_port(l) {
            return;
        }
        let frame = p.frame() as u64;
        let behind = link.queued_bytes() - frame;
        if egress.int && p.wants_int() {
            p.int_push(IntHop {
                qlen: if egress.int_with_packet {
                    behind + frame
                } else {
                    behind
                },
                tx_bytes: link.stats.tx_bytes + frame,
                ts: now,
                rate_bps: link.rate,
            });
        }
        if let Some(ecn) = egress.ecn.as_mut() {
            if p.ect() && ecn.marks(l.index(), behind) {
                p.mark_ce();
                self.net.links[l].stats.marks += 1;
            }
        }
    }

    /// Admit packet `id` of `frame` bytes, come over link `up`, to link `l` under PFC.
    /// Lossless: the frame counts against the ingress it came through (its own buffer, or
    /// the switch's pool and the ingress's headroom), which is paused at XOFF; only a
    /// headroom overrun (thresholds set too high) drops it, counted.
    #[inline]
    fn pfc_admit(
        &mut self,
        events: &mut EventQueue,
        now: SimTime,
        l: LinkId,
        up: LinkId,
        id: PktId,
        frame: u32,
    ) -> Offered {
        let pool = self.net.pool_index(l);
        let pfc = self.net.pfc.as_mut().expect("PFC is on");
        let admitted = match pool {
            Some(s) => pfc.admit_shared(up.index(), frame as u64, &mut self.net.pools[s]),
            None => pfc.admit_own(up.index(), frame as u64),
        };
        match admitted {
            Admit::Overrun => {
                self.net.links[l].count_drop();
                return Offered::Dropped;
            }
            Admit::Held { pause: true } => {
                self.pause_sent(up);
                // The pause frame crosses the link back to its sender.
                let delay = self.net.links[up].delay;
                events.push(now + delay, Event::Pause(up, true));
            }
            Admit::Held { pause: false } => {}
        }
        // Under PFC the switch ports have no limit of their own (the topology's choice): the
        // ingresses feeding them bound them, so the queue never refuses the frame here.
        let e = self.net.links[l].enqueue(now, id, frame);
        self.queued(now, l, id, e);
        if let Enqueued::Transmitting(t) = e {
            events.push(t, Event::TxDone(l));
        }
        Offered::Queued
    }

    /// Link `l` finished serializing its frame at `now`: the frame enters the pipe, the next
    /// one starts, the pool and PFC ingress it held are released. Returns the packet; none
    /// from an eager trimming port, whose frames entered the pipe as they started.
    #[inline]
    pub fn tx_done(&mut self, events: &mut EventQueue, now: SimTime, l: LinkId) -> Option<PktId> {
        let link = &mut self.net.links[l];
        if let Some(ports) = self.ports.as_mut() {
            let port = &mut ports[l.index()];
            if port.is_eager() {
                // Its wake-up: the next packet starts, and enters the pipe at once.
                let next = port.wake(link, now);
                if let Some(t) = port.take_arrival() {
                    events.push(t, Event::Arrive(l, front(link), Next::UNKNOWN));
                }
                if let Some(t) = next {
                    events.push(t, Event::TxDone(l));
                }
                return None;
            }
            let (arrival, next) = port.finish_tx(link, now);
            if let Some(t) = arrival {
                events.push(t, Event::Arrive(l, front(link), Next::UNKNOWN));
            }
            if let Some(t) = next {
                events.push(t, Event::TxDone(l));
            }
            return Some(
                link.newest_in_pipe()
                    .expect("a frame just entered the pipe"),
            );
        }
        if let Some(ports) = self.prio.as_mut() {
            let (arrival, next) = ports[l.index()].finish_tx(link, now);
            if let Some(t) = arrival {
                events.push(t, Event::Arrive(l, front(link), Next::UNKNOWN));
            }
            if let Some(t) = next {
                events.push(t, Event::TxDone(l));
            }
            return Some(
                link.newest_in_pipe()
                    .expect("a frame just entered the pipe"),
            );
        }
        // The frame's bytes come with it in the queue: the packet itself, which waited in the
        // queue long enough to leave the cache, is read only by PFC.
        let (head, frame) = link
            .head_frame()
            .expect("a TxDone event has a packet in service");
        let (arrival, next) = link.finish_tx(now);
        // The packet is read again when it arrives, a link's delay on (thousands of events, in
        // a large cluster): asked for now, it is in an outer cache by then.
        prefetch_far(self.pkts.get(head));
        if let Some(t) = arrival {
            events.push(t, Event::Arrive(l, front(link), Next::UNKNOWN));
        }
        if let Some(t) = next {
            events.push(t, Event::TxDone(l));
            self.started(now, l);
        }
        if self.net.pfc.is_some() && self.pkts.get(head).hop() > 0 {
            let p = *self.pkts.get(head);
            self.pfc_release(events, now, l, &p);
        } else if let Some(pool) = self.net.pool_mut(l) {
            pool.release(frame as u64);
        }
        Some(head)
    }

    /// The switch `up` enters paused it: what the pause spread back from, when the fabric
    /// tracks flows' pauses. Once per pause frame, over the switch's queues: off the
    /// per-packet path.
    #[inline(never)]
    fn pause_sent(&mut self, up: LinkId) {
        let Some(track) = self.egress.as_mut().and_then(|e| e.track.as_mut()) else {
            return;
        };
        let (net, pkts) = (&self.net, &self.pkts);
        // The bytes come over `up` that wait at egress `e`: a packet there is at the hop of
        // `e`, so it came over the link before.
        let held = |e: u32| -> u64 {
            net.links[e as usize]
                .waiting()
                .filter(|&(id, _)| {
                    let p = pkts.get(id);
                    p.hop() > 0 && p.link_at(net, p.hop() - 1) == Some(up)
                })
                .map(|(_, frame)| u64::from(frame))
                .sum()
        };
        let pfc = net.pfc.as_ref();
        track.pause_sent(up.0, held, |e| pfc.is_some_and(|p| p.paused[e as usize]));
    }

    /// A frame left the switch through link `l`: its ingress holds less (and the switch's
    /// pool or the ingress's headroom), and may be resumed.
    fn pfc_release(&mut self, events: &mut EventQueue, now: SimTime, l: LinkId, p: &P) {
        let up = p
            .link_at(&self.net, p.hop() - 1)
            .expect("hop > 0 has a previous link");
        let pool = self.net.pool_index(l);
        let pfc = self.net.pfc.as_mut().expect("PFC is on");
        let frame = p.frame() as u64;
        let resume = match pool {
            Some(s) => pfc.release_shared(up.index(), frame, &mut self.net.pools[s]),
            None => pfc.release_own(up.index(), frame),
        };
        if resume {
            let delay = self.net.links[up].delay;
            events.push(now + delay, Event::Pause(up, false));
        }
    }

    /// A PFC pause (`on`) or resume reached the sending end of link `l`.
    pub fn pause(&mut self, events: &mut EventQueue, now: SimTime, l: LinkId, on: bool) {
        let link = &mut self.net.links[l];
        if on {
            link.pause(now);
        } else if let Some(t) = link.resume(now) {
            events.push(t, Event::TxDone(l));
            self.started(now, l);
        }
    }

    /// The time flow `flow`'s packets were held at paused links, when the fabric tracks it
    /// (PFC with the fabric reported); 0 for a flow never seen.
    pub fn flow_paused(&self, flow: u32) -> Option<SimTime> {
        let track = self.egress.as_ref()?.track.as_ref()?;
        Some(track.flows.get(flow as usize).map_or(0, |f| f.paused))
    }

    /// Every tracked flow's paused time and whether it is a victim (empty when the fabric
    /// does not track them).
    pub fn flow_pauses(&self) -> &[FlowPause] {
        match self.egress.as_ref().and_then(|e| e.track.as_ref()) {
            Some(track) => &track.flows,
            None => &[],
        }
    }

    /// The packet at the head of link `l`'s pipe reached its far end and moved on to the next
    /// hop: returns it and the link it goes on to (`known` by its arrival event, or worked
    /// out now), `None` at its destination.
    #[inline]
    pub fn arrive(
        &mut self,
        events: &mut EventQueue,
        l: LinkId,
        known: Next,
    ) -> (PktId, Option<LinkId>) {
        let link = &mut self.net.links[l];
        let (id, next) = link.arrive();
        if let Some(t) = next {
            events.push(t, Event::Arrive(l, front(link), Next::UNKNOWN));
        }
        let p = self.pkts.get_mut(id);
        p.advance();
        match known.get() {
            Some(n) => {
                debug_assert_eq!(n, p.link_at(&self.net, p.hop()), "a packet's route moved");
                (id, n)
            }
            None => (id, p.link_at(&self.net, p.hop())),
        }
    }

    /// Put the fabric's section and each flow's paused time into report `r` of scenario `sc`
    /// at `now`, when the scenario reports the fabric: what every transport's report does.
    pub fn fill_report(&self, sc: &crate::config::Scenario, now: SimTime, r: &mut Report) {
        if !sc.reports_fabric() {
            return;
        }
        r.fabric = Some(self.report(now));
        for f in &mut r.flows {
            f.paused = self.flow_paused(f.flow);
        }
    }

    /// The fabric's figures at `now`: pauses per link, peak buffer per switch, headroom
    /// overruns, ECN marks at switch ports, paused and victim flows.
    pub fn report(&self, now: SimTime) -> FabricReport {
        let net = &self.net;
        let mut r = FabricReport::default();
        for l in net.link_ids() {
            let link = &net.links[l];
            let paused = link.paused_until(now);
            if link.stats.pauses > 0 {
                r.paused_links.push(PortPauses {
                    name: net.name(l),
                    pauses: link.stats.pauses,
                    paused,
                });
            }
            r.pause_frames += link.stats.pauses;
            r.paused += paused;
            if net.is_port(l) {
                r.ecn_marks += link.stats.marks;
            }
        }
        r.switch_buffer_max_bytes = net.pools.iter().map(|p| p.max_used).collect();
        r.headroom_overruns = net.pfc.as_ref().map_or(0, |p| p.overruns);
        for (f, fp) in self.flow_pauses().iter().enumerate() {
            if fp.paused > 0 {
                r.paused_flows += 1;
                if fp.victim {
                    r.victims.push(f as u32);
                }
            }
        }
        r.victim_flows = r.victims.len() as u64;
        r
    }

    /// Check the shared pools, the PFC ingresses and every queue against its limit.
    pub fn check_invariants(&self) -> Result<(), String> {
        let net = &self.net;
        for (p, pool) in net.pools.iter().enumerate() {
            let queued: u64 = net.pooled(p).map(|l| net.links[l].queued_bytes()).sum();
            let held = pool.used() + pool.headroom_used();
            if queued != held || pool.used() > pool.total() {
                return Err(format!(
                    "shared buffer {p} holds {} of {} bytes and {} in headrooms, its queues {}",
                    pool.used(),
                    pool.total(),
                    pool.headroom_used(),
                    queued
                ));
            }
        }
        if let Some(pfc) = &net.pfc {
            let queued: u64 = net
                .link_ids()
                .filter(|&l| net.is_port(l))
                .map(|l| net.links[l].queued_bytes())
                .sum();
            let held = pfc.held();
            let over = (pfc.ingress.iter().enumerate()).any(|(up, &b)| b > pfc.own_of(up).2)
                || pfc
                    .in_headroom
                    .iter()
                    .zip(&pfc.headroom)
                    .any(|(used, room)| used > room);
            if held != queued || over {
                return Err(format!(
                    "PFC ingresses hold {held} bytes (or one over its limit), the ports {queued}"
                ));
            }
        }
        for (i, l) in net.links.iter().enumerate() {
            let lim = l.limit();
            if lim.bytes.is_some_and(|b| l.stats.max_bytes > b)
                || lim.packets.is_some_and(|p| l.stats.max_packets > p)
            {
                return Err(format!("link {i} exceeded its limit"));
            }
        }
        Ok(())
    }
}

/// The packet at the head of `link`'s pipe: the one an arrival scheduled now is for.
#[inline]
fn front(link: &Link) -> PktId {
    link.arriving()
        .expect("an arrival is scheduled for a packet in the pipe")
}

/// Ask the cache for every line of the object `r` refers to (a hint; nothing on other
/// architectures).
#[inline(always)]
pub(crate) fn prefetch<T>(r: &T) {
    ask::<T, false>(r);
}

/// Ask the outer caches for the object `r` refers to, for a read many events on (a hint;
/// nothing on other architectures).
#[inline(always)]
pub(crate) fn prefetch_far<T>(r: &T) {
    ask::<T, true>(r);
}

/// [`prefetch`] (into the first-level cache) or, if `FAR`, [`prefetch_far`] (the second).
#[inline(always)]
fn ask<T, const FAR: bool>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0, _MM_HINT_T1};
        let p = (r as *const T).cast::<i8>();
        // SAFETY: SSE is part of every x86_64 target, and a prefetch never faults nor
        // writes: it is a hint about an address, here one inside a live reference's object
        // or the line after it.
        unsafe {
            let lines = std::mem::size_of::<T>().div_ceil(64);
            for k in 0..lines {
                let at = p.wrapping_add(64 * k);
                if FAR {
                    _mm_prefetch::<_MM_HINT_T1>(at);
                } else {
                    _mm_prefetch::<_MM_HINT_T0>(at);
                }
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}
