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
pub trait Transport: Sized + std::fmt::Debug {
    /// Its packet.
    type Packet: Wire + std::fmt::Debug;
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
        sc.validate()?;
        let mut fabric = Fabric::new(Network::build(&sc));
        let mut events = EventQueue::default();
        let t = T::new(&sc, &mut fabric, &mut events);
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
                let id = cx.fabric.tx_done(cx.events, cx.now, l);
                self.t.sent(&mut cx, l, id);
            }
            Event::Arrive(l) => match cx.fabric.arrive(cx.events, l) {
                (id, Some(next)) => {
                    let o = cx.offer(next, id);
                    if o != Offered::Queued {
                        self.t.offered(&mut cx, next, id, o);
                    }
                }
                (id, None) => self.t.deliver(&mut cx, id),
            },
            Event::Pause(l, on) => cx.fabric.pause(cx.events, cx.now, l, on),
            Event::Agent(agent, kind, gen) => self.t.timer(&mut cx, agent, kind, gen),
            Event::App(token) => self.t.app(&mut cx, token),
            Event::Start => self.t.start(&mut cx),
            Event::Sample => self.t.sample(&mut cx),
        }
    }
}

/// A run whatever its transport, as [`crate::Simulation`] holds it.
pub trait Running: std::fmt::Debug {
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
        let cap = capture::open(path, points, &self.fabric.net, self.sc.topology.senders)?;
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
