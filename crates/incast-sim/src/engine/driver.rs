//! The driver loop: one clock, one event queue, one network, one transport.
//!
//! A transport plugs in through [`Transport`] (as in htsim, its agents are event sources and
//! packet sinks): it sets its agents up over the fabric, answers its own timers
//! ([`Event::Agent`]), takes the packets that reach their last hop and those a queue did not
//! simply take, and writes the report. The engine moves packets between links and never looks
//! inside them beyond what [`Wire`] tells. [`Engine`] is generic over the transport, so the
//! per-packet path is monomorphized; [`Running`] is the object-safe face the
//! [`crate::Simulation`] holds.

use super::{next_event, Event, EventQueue, SimError};
use crate::app::effect::Token;
use crate::capture::{self, Capture, Points};
use crate::config::Scenario;
use crate::net::fabric::{Fabric, Offered, Wire};
use crate::net::PktId;
use crate::report::Report;
use crate::topology::{LinkId, Network};
use crate::units::SimTime;

/// What a transport may touch while it handles an event: the time, the queue, the fabric.
pub struct Cx<'a, P> {
    /// Now.
    pub now: SimTime,
    /// The event queue.
    pub events: &'a mut EventQueue,
    /// Links, routes, packets and ports.
    pub fabric: &'a mut Fabric<P>,
    /// The scenario.
    pub sc: &'a Scenario,
}

impl<P: Wire> Cx<'_, P> {
    /// Offer packet `id` to link `l` (the caller handles what is not simply queued).
    #[inline]
    pub fn offer(&mut self, l: LinkId, id: PktId) -> Offered {
        self.fabric.offer(self.events, self.now, l, id)
    }

    /// Schedule `ev` at `at`.
    #[inline]
    pub fn push(&mut self, at: SimTime, ev: Event) {
        self.events.push(at, ev);
    }
}

/// What a transport reads when it reports or checks itself.
pub struct Seen<'a, P> {
    /// Now.
    pub now: SimTime,
    /// Events processed.
    pub processed: u64,
    /// Links, routes, packets and ports.
    pub fabric: &'a Fabric<P>,
    /// The scenario.
    pub sc: &'a Scenario,
}

impl<P> Seen<'_, P> {
    /// The network.
    pub fn net(&self) -> &Network {
        &self.fabric.net
    }
}

/// A transport: its agents over the fabric, as the engine drives them.
pub trait Transport: Sized + std::fmt::Debug + Send {
    /// Its packet.
    type Packet: Wire + std::fmt::Debug + Send;
    /// What a run stuck with no events is waiting for (for the error).
    const UNFINISHED: &'static str;
    /// Set the agents of scenario `sc` up over `fabric` (adding routes, choosing the ports)
    /// and schedule the first events.
    fn new(sc: &Scenario, fabric: &mut Fabric<Self::Packet>, events: &mut EventQueue) -> Self;
    /// Whether the run is complete.
    fn finished(&self) -> bool;
    /// [`Event::Start`].
    fn start(&mut self, cx: &mut Cx<Self::Packet>);
    /// [`Event::Agent`]: one of its timers.
    fn timer(&mut self, cx: &mut Cx<Self::Packet>, agent: u32, kind: u8, gen: u32);
    /// [`Event::App`]: an application's timer.
    fn app(&mut self, _cx: &mut Cx<Self::Packet>, token: Token) {
        unreachable!("{token:?}: the transport runs no application")
    }
    /// [`Event::Sample`].
    fn sample(&mut self, _cx: &mut Cx<Self::Packet>) {}
    /// Link `l` finished sending packet `id` (now in its pipe).
    fn sent(&mut self, cx: &mut Cx<Self::Packet>, l: LinkId, id: PktId);
    /// Packet `id` reached its last hop: the transport takes it (and frees it).
    fn deliver(&mut self, cx: &mut Cx<Self::Packet>, id: PktId);
    /// Packet `id`, moving on to link `l`, was not simply queued there.
    fn offered(&mut self, cx: &mut Cx<Self::Packet>, l: LinkId, id: PktId, o: Offered);
    /// Write the frames `cap` taps from now on.
    fn attach_capture(&mut self, cap: Capture, sc: &Scenario);
    /// Close the capture, if any: the frames written, or the error that stopped it.
    fn finish_capture(&mut self) -> Option<std::io::Result<u64>>;
    /// The report of the run so far.
    fn report(&self, run: &Seen<Self::Packet>) -> Report;
    /// Check the transport's and the network's invariants.
    fn check_invariants(&self, run: &Seen<Self::Packet>) -> Result<(), String>;
}

/// One run: the clock, the events, the fabric and transport `T`.
#[derive(Debug)]
pub struct Engine<T: Transport> {
    sc: Scenario,
    now: SimTime,
    events: EventQueue,
    processed: u64,
    fabric: Fabric<T::Packet>,
    t: T,
}

impl<T: Transport> Engine<T> {
    /// Validate `sc` and set up the run.
    pub fn new(sc: Scenario) -> Result<Engine<T>, SimError> {
        Engine::with(sc, T::new)
    }

    /// Validate `sc` and set the run up with `set_up` in place of [`Transport::new`] (a test's
    /// transport with an application of its own).
    pub(crate) fn with(
        sc: Scenario,
        set_up: impl FnOnce(&Scenario, &mut Fabric<T::Packet>, &mut EventQueue) -> T,
    ) -> Result<Engine<T>, SimError> {
        sc.validate()?;
        let mut fabric = Fabric::new(Network::build(&sc));
        let mut events = EventQueue::default();
        let t = set_up(&sc, &mut fabric, &mut events);
        Ok(Engine {
            sc,
            now: 0,
            events,
            processed: 0,
            fabric,
            t,
        })
    }

    fn seen(&self) -> Seen<'_, T::Packet> {
        Seen {
            now: self.now,
            processed: self.processed,
            fabric: &self.fabric,
            sc: &self.sc,
        }
    }

    #[inline]
    fn dispatch(&mut self, ev: Event) {
        let mut cx = Cx {
            now: self.now,
            events: &mut self.events,
            fabric: &mut self.fabric,
            sc: &self.sc,
        };
        match ev {
            Event::TxDone(l) => {
                if let Some(id) = cx.fabric.tx_done(cx.events, cx.now, l) {
                    self.t.sent(&mut cx, l, id);
                }
            }
            Event::Arrive(l, named, known) => {
                let (id, next) = cx.fabric.arrive(cx.events, l, known);
                debug_assert_eq!(id, named, "an arrival is the packet its event names");
                match next {
                    Some(next) => {
                        let o = cx.offer(next, id);
                        if o != Offered::Queued {
                            self.t.offered(&mut cx, next, id, o);
                        }
                    }
                    None => self.t.deliver(&mut cx, id),
                }
            }
            Event::Pause(l, on) => cx.fabric.pause(cx.events, cx.now, l, on),
            Event::Agent(agent, kind, gen) => self.t.timer(&mut cx, agent, kind, gen),
            Event::App(token) => self.t.app(&mut cx, token),
            Event::Start => self.t.start(&mut cx),
            Event::Sample => self.t.sample(&mut cx),
        }
    }
}

/// A run whatever its transport, as [`crate::Simulation`] holds it.
pub trait Running: std::fmt::Debug + Send {
    /// Process up to `max` events; `Ok(true)` once the run is complete.
    fn step(&mut self, max: u64) -> Result<bool, SimError>;
    /// Current simulated time.
    fn now(&self) -> SimTime;
    /// Events processed so far.
    fn events_processed(&self) -> u64;
    /// Whether the run is complete.
    fn finished(&self) -> bool;
    /// Write a pcap of the frames seen at `points` to `path` (before the first step).
    fn capture(&mut self, path: &str, points: &Points) -> Result<(), String>;
    /// Close the capture, if any.
    fn finish_capture(&mut self) -> Option<std::io::Result<u64>>;
    /// The scenario being run.
    fn scenario(&self) -> &Scenario;
    /// Check the invariants.
    fn check_invariants(&self) -> Result<(), String>;
    /// The report of the run so far.
    fn report(&self) -> Report;
}

impl<T: Transport> Running for Engine<T> {
    fn step(&mut self, max: u64) -> Result<bool, SimError> {
        let mut n = 0;
        while !self.t.finished() && n < max {
            let (t, ev) = next_event(
                &mut self.events,
                &self.sc.run,
                self.processed,
                self.now,
                T::UNFINISHED,
            )?;
            self.now = t;
            self.processed += 1;
            n += 1;
            // The next event's link (and arriving packet) is fetched from memory while this
            // one runs.
            match self.events.peek() {
                Some(Event::TxDone(l)) => self.fabric.warm_link(l),
                Some(Event::Arrive(l, id, _)) => {
                    // An arrival reads its link's pipe, not the port in front of it.
                    self.fabric.warm_pipe(l);
                    self.fabric.warm_packet(id);
                }
                _ => {}
            }
            self.dispatch(ev);
        }
        Ok(self.t.finished())
    }

    fn now(&self) -> SimTime {
        self.now
    }

    fn events_processed(&self) -> u64 {
        self.processed
    }

    fn finished(&self) -> bool {
        self.t.finished()
    }

    fn capture(&mut self, path: &str, points: &Points) -> Result<(), String> {
        // RoCE's frames go whole: Wireshark reads InfiniBand only with its payload.
        let whole = self.sc.transport == crate::config::Transport::Roce;
        let cap = capture::open(
            path,
            points,
            &self.fabric.net,
            self.sc.topology.senders,
            whole,
        )?;
        // A frame is written when its serialization ends: every port needs that event.
        self.fabric.lazy_ports();
        self.t.attach_capture(cap, &self.sc);
        Ok(())
    }

    fn finish_capture(&mut self) -> Option<std::io::Result<u64>> {
        self.t.finish_capture()
    }

    fn scenario(&self) -> &Scenario {
        &self.sc
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.t.check_invariants(&self.seen())
    }

    fn report(&self) -> Report {
        self.t.report(&self.seen())
    }
}

#[cfg(test)]
mod tests {
    //! A toy transport in a few lines shows the seam: its packet, its agents, nothing else.

    use super::*;
    use crate::net::trim::{Port, Trimmable};
    use crate::report::{QueueReport, RunSummary};

    /// A datagram on a source route.
    #[derive(Debug, Clone, Copy)]
    struct Datagram {
        route: u32,
        hop: u16,
        frame: u32,
    }

    impl Trimmable for Datagram {
        fn is_data(&self) -> bool {
            self.frame > 64
        }
        fn frame(&self) -> u32 {
            self.frame
        }
        fn trim(&mut self, header_bytes: u32) {
            self.frame = header_bytes;
        }
    }

    impl Wire for Datagram {
        fn hop(&self) -> u16 {
            self.hop
        }
        fn advance(&mut self) {
            self.hop += 1;
        }
        fn link_at(&self, net: &Network, hop: u16) -> Option<LinkId> {
            net.hop(self.route, hop)
        }
    }

    /// Every server blasts `BURST` datagrams at the receiver at once, unreliably; over
    /// trimming ports if `TRIM`.
    #[derive(Debug, Default)]
    struct Blast<const TRIM: bool> {
        routes: Vec<u32>,
        sent: u32,
        delivered: u32,
        headers: u32,
        lost: u32,
    }

    const BURST: u32 = 20;

    impl<const TRIM: bool> Transport for Blast<TRIM> {
        type Packet = Datagram;
        const UNFINISHED: &'static str = "datagrams are in flight";

        fn new(sc: &Scenario, fabric: &mut Fabric<Datagram>, events: &mut EventQueue) -> Self {
            if TRIM {
                fabric.trim(|| Port::switch(4, 10_000, 1, 64), || Port::nic(1));
            }
            let net = &mut fabric.net;
            let rx = net.receiver;
            let routes = (0..sc.topology.senders)
                .map(|i| {
                    let h = net.host(i);
                    net.add_route(h, rx, 0)
                })
                .collect();
            events.push(0, Event::Start);
            Blast {
                routes,
                ..Blast::default()
            }
        }

        fn finished(&self) -> bool {
            self.sent > 0 && self.delivered + self.headers + self.lost == self.sent
        }

        fn start(&mut self, cx: &mut Cx<Datagram>) {
            for route in self.routes.clone() {
                for _ in 0..BURST {
                    let p = Datagram {
                        route,
                        hop: 0,
                        frame: 1500,
                    };
                    let id = cx.fabric.pkts.alloc(p);
                    let l = cx.fabric.net.hop(route, 0).expect("a route");
                    self.sent += 1;
                    let o = cx.offer(l, id);
                    if o != Offered::Queued {
                        self.offered(cx, l, id, o);
                    }
                }
            }
        }

        fn timer(&mut self, _cx: &mut Cx<Datagram>, _agent: u32, _kind: u8, _gen: u32) {
            unreachable!("no timers")
        }

        fn sent(&mut self, _cx: &mut Cx<Datagram>, _l: LinkId, _id: PktId) {}

        fn deliver(&mut self, cx: &mut Cx<Datagram>, id: PktId) {
            match cx.fabric.pkts.get(id).is_data() {
                true => self.delivered += 1,
                false => self.headers += 1,
            }
            cx.fabric.pkts.free(id);
        }

        fn offered(&mut self, cx: &mut Cx<Datagram>, _l: LinkId, id: PktId, o: Offered) {
            match o {
                Offered::Queued | Offered::Trimmed => {}
                Offered::Dropped | Offered::Refused { .. } => {
                    self.lost += 1;
                    cx.fabric.pkts.free(id);
                }
            }
        }

        fn attach_capture(&mut self, _cap: Capture, _sc: &Scenario) {}

        fn finish_capture(&mut self) -> Option<std::io::Result<u64>> {
            None
        }

        fn report(&self, run: &Seen<Datagram>) -> Report {
            let net = run.net();
            let bn = net.bottleneck;
            Report::of_run(RunSummary {
                senders: run.sc.topology.senders,
                workload: run.sc.workload.kind,
                app_bytes: self.delivered as u64 * 1500,
                start: 0,
                end: run.now,
                now: run.now,
                events: run.processed,
                base_latency: 0,
                link_bps: run.sc.topology.receiver_link,
                flows: Vec::new(),
                bottleneck: QueueReport {
                    name: net.name(bn),
                    limit: net.limit(bn),
                    stats: net.links[bn].stats.clone(),
                },
                bottleneck_busy: net.links[bn].stats.busy,
            })
        }

        fn check_invariants(&self, run: &Seen<Datagram>) -> Result<(), String> {
            run.fabric.check_invariants()
        }
    }

    #[test]
    fn a_toy_transport_runs_over_drop_tail_queues() {
        let mut sc = Scenario::example(8);
        sc.topology.buffer.bytes = Some(30_000);
        sc.topology.buffer.packets = None;
        let mut e = Engine::<Blast<false>>::new(sc).unwrap();
        while !e.step(7).unwrap() {
            e.check_invariants().unwrap();
        }
        let r = e.report();
        let t = &e.t;
        assert_eq!(t.sent, 8 * BURST);
        assert!(t.lost > 0 && t.delivered > 0, "{t:?}");
        assert_eq!((t.headers, r.bottleneck.stats.drops), (0, t.lost as u64));
        assert_eq!(r.bottleneck.stats.tx_packets, t.delivered as u64);
        assert_eq!(e.fabric.pkts.live(), 0);
    }

    #[test]
    fn the_same_toy_runs_over_trimming_ports() {
        let sc = Scenario::example(8);
        let mut e = Engine::<Blast<true>>::new(sc).unwrap();
        while !e.step(7).unwrap() {}
        let t = &e.t;
        // The bottleneck's data queue holds 4: the rest of each burst arrives as headers.
        assert_eq!(t.lost, 0);
        assert!(t.headers > 0 && t.delivered >= 4, "{t:?}");
        assert_eq!(t.delivered + t.headers, 8 * BURST);
        assert_eq!(e.fabric.pkts.live(), 0);
    }
}
