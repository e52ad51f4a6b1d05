//! Every endpoint of a run, each made on its first use. A key-value cluster of H hosts runs
//! H(H−1) connections (a million at 1,024 hosts) and many of them carry nothing for the whole
//! run; an endpoint nothing has been written to, that has received nothing and has no timer
//! armed is exactly the one the connection was set up with, so it is held as a null pointer and
//! the numbers it is made from (the connection's handshake RTT and ECN), and made only when a
//! write, a segment or a timer first reaches it. Reads of one not yet made (bytes received and
//! acknowledged, counters, cwnd) answer from one endpoint as set up: zero, zero, none, the
//! initial window, as the real one would. An endpoint that goes idle again is held in its
//! compact form (`idle.rs`, a 160-byte slot) until a write, a segment or a timer reaches it, so the
//! memory of the endpoints follows the connections in flight.

use std::borrow::Cow;

use crate::config::{CongestionControl, RtoRandomization, Scenario, Tcp as TcpConfig};
use crate::engine::Timer;
use crate::ids::EndpointId;
use crate::net::fabric::prefetch;
use crate::rng::{Rng, Stream};
use crate::tcp::idle::{timer_fields, Collect, Compact, Decode, Encode, Fields, Kind, Reset};
use crate::tcp::scoreboard::SegPool;
use crate::tcp::{Endpoint, RtoPolicy, RttEstimator, TcpParams};
use crate::units::SimTime;

/// The events of one endpoint's timers (the agent arms and clears them).
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct EndpointTimers {
    /// The retransmission timer.
    pub(super) rto: Timer,
    /// The delayed-ACK timer.
    pub(super) delack: Timer,
    /// The pacing timer.
    pub(super) pace: Timer,
}

/// One endpoint made, with its timers and its host jitter's state.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Slot {
    /// The endpoint.
    pub(super) ep: Endpoint,
    /// The engine's lazy timers, following the deadlines it reports.
    pub(super) timers: EndpointTimers,
    /// When the newest packet it sent with host jitter reaches the NIC (the next one leaves no
    /// earlier: a connection's packets leave in order). Each packet's release is an event of
    /// its own that names the packet and the link, so it touches neither this slot nor a
    /// queue of the endpoint's: at a million connections each would be a fetch from memory.
    pub(super) host_last: SimTime,
    /// Its random stream for host jitter.
    host_rng: Rng,
    /// Numbers drawn from `host_rng` (one per packet sent with jitter).
    host_draws: u32,
}

/// Up to this many host-jitter draws, a compact endpoint keeps their count and its stream is
/// drawn again when it is made whole (at most this many steps of the generator); beyond, it
/// keeps the stream's state (32 bytes that do not compress).
const REPLAY_DRAWS: u32 = 256;

/// [`Endpoints::idle`] of an endpoint as set up.
const NEVER: u32 = u32::MAX;

impl Slot {
    /// A host jitter of up to `max`, drawn from the endpoint's stream. The only draw from
    /// it: the stream is always its seed's after `host_draws` draws, which is how an idle
    /// endpoint's check and its making whole read it without storing it.
    #[inline]
    pub(super) fn draw_jitter(&mut self, max: SimTime) -> SimTime {
        self.host_draws = self.host_draws.wrapping_add(1);
        self.host_rng.up_to(max)
    }

    /// Visit what an idle endpoint may hold differently from one as set up (see `idle.rs`):
    /// the endpoint's fields, its timers' pending events and its host's random stream.
    fn idle_fields(&mut self, f: &mut impl Fields) {
        self.ep.idle_fields(f);
        let t = &mut self.timers;
        for timer in [&mut t.rto, &mut t.delack, &mut t.pace] {
            let (scheduled, gen) = timer.pending_mut();
            timer_fields(f, scheduled, gen);
        }
        f.u32(&mut self.host_draws);
        // Last, the fields whose number varies: the slow-start rounds, the stream's state.
        f.list(Kind::Plain, &mut self.ep.tx.stats.rounds);
        if self.host_draws > REPLAY_DRAWS {
            for w in self.host_rng.state_mut() {
                f.num(Kind::Plain, w);
            }
        }
    }

    /// Endpoint as set up, `self`, made the one compact form `c` holds.
    fn decode(&mut self, c: &Compact) {
        if !c.differs() {
            return;
        }
        self.idle_fields(&mut Decode::new(c));
        if self.host_draws <= REPLAY_DRAWS {
            for _ in 0..self.host_draws {
                self.host_rng.next_u64();
            }
        }
    }

    /// Nothing in flight, unsent, owed or waiting at the host at `now`, and no timer armed.
    fn is_idle(&self, now: SimTime) -> bool {
        let t = &self.timers;
        self.host_last <= now
            && !t.rto.is_armed()
            && !t.delack.is_armed()
            && !t.pace.is_armed()
            && self.ep.is_idle()
    }
}

/// What every endpoint is made from.
#[derive(Debug)]
struct Maker {
    params: TcpParams,
    /// ECN for the application's connections and for background flows (RFC 3168 6.1.1: on
    /// only if both ends negotiated it).
    ecn: [bool; 2],
    rtt: RttEstimator,
    tcp: TcpConfig,
    seed: u64,
    /// The application's connections (`0..fg`; background flows follow).
    fg: u32,
}

/// Every endpoint of a run, indexed by [`EndpointId`].
#[derive(Debug)]
pub(super) struct Endpoints {
    /// Per endpoint: the whole endpoint, if it is held whole.
    made: Vec<Option<Box<Slot>>>,
    /// Per endpoint not held whole: where its compact form is in `compact` (`NEVER`: the
    /// endpoint is as set up).
    idle: Vec<u32>,
    /// Compact forms; `free` lists the unused.
    compact: Vec<Compact>,
    free: Vec<u32>,
    /// Boxes of endpoints that went compact, for the next endpoint made whole (boxes: they
    /// move to and from `made` without being allocated again).
    #[allow(clippy::vec_box)]
    spare: Vec<Box<Slot>>,
    /// Per connection: its handshake's RTT sample.
    handshake: Vec<SimTime>,
    maker: Maker,
    /// An endpoint as set up, read for those never made (its reads are every such endpoint's).
    pristine: Endpoint,
}

impl Endpoints {
    /// No connections yet, for scenario `sc` whose application has `fg` connections.
    pub(super) fn new(sc: &Scenario, fg: u32) -> Endpoints {
        let maker = Maker {
            params: TcpParams::from(&sc.tcp),
            ecn: [
                sc.tcp.ecn,
                sc.tcp.ecn && sc.background.ecn.unwrap_or(sc.tcp.ecn),
            ],
            rtt: RttEstimator::for_tcp(&sc.tcp),
            tcp: sc.tcp.clone(),
            seed: sc.seed,
            fg,
        };
        let pristine = maker.make(EndpointId(0), 0);
        Endpoints {
            pristine,
            made: Vec::new(),
            idle: Vec::new(),
            compact: Vec::new(),
            free: Vec::new(),
            spare: Vec::new(),
            handshake: Vec::new(),
            maker,
        }
    }

    /// Add a connection whose handshake took `handshake`.
    pub(super) fn connect(&mut self, handshake: SimTime) {
        self.handshake.push(handshake);
        self.made.push(None);
        self.made.push(None);
        self.idle.push(NEVER);
        self.idle.push(NEVER);
    }

    /// Number of endpoints.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.made.len()
    }

    /// Ask the cache for every line of endpoint `ep`'s slot, if it is held whole: a segment's
    /// handling reads many of them, and a million connections' slots are far beyond the cache.
    #[inline]
    pub(super) fn warm(&self, ep: EndpointId) {
        if let Some(s) = self.made[ep.index()].as_deref() {
            prefetch(s);
        }
    }

    /// Endpoint `i` to read: the whole one, or one decoded from its compact form.
    #[inline]
    pub(super) fn get(&self, i: usize) -> Cow<'_, Endpoint> {
        match self.made[i].as_ref() {
            Some(s) => Cow::Borrowed(&s.ep),
            None if self.idle[i] == NEVER => Cow::Borrowed(&self.pristine),
            None => Cow::Owned(self.decoded(EndpointId(i as u32)).ep),
        }
    }

    /// Endpoint `ep` as set up.
    fn fresh(&self, ep: EndpointId) -> Slot {
        Slot {
            ep: self.maker.make(ep, self.handshake[ep.conn().index()]),
            timers: EndpointTimers::default(),
            host_last: 0,
            host_rng: Rng::stream(self.maker.seed, Stream::HostJitter(ep)),
            host_draws: 0,
        }
    }

    /// Endpoint `ep` from its compact form.
    fn decoded(&self, ep: EndpointId) -> Slot {
        match self.compact.get(self.idle[ep.index()] as usize) {
            Some(c) => self.decoded_from(ep, c),
            None => self.fresh(ep),
        }
    }

    /// Endpoint `ep` from compact form `c`.
    fn decoded_from(&self, ep: EndpointId, c: &Compact) -> Slot {
        let mut s = self.fresh(ep);
        s.decode(c);
        s
    }

    /// Endpoint `ep` with its timers, made whole now if it was not.
    #[inline]
    pub(super) fn slot(&mut self, ep: EndpointId) -> &mut Slot {
        let i = ep.index();
        if self.made[i].is_none() {
            self.make_whole(ep);
        }
        self.made[i].as_mut().expect("just made whole")
    }

    /// Make endpoint `ep` whole from its compact form, in a spare box if there is one (its
    /// rounds list's buffer kept).
    #[cold]
    fn make_whole(&mut self, ep: EndpointId) {
        let fresh = self.fresh(ep);
        let mut b = match self.spare.pop() {
            Some(mut b) => {
                let mut rounds = std::mem::take(&mut b.ep.tx.stats.rounds);
                rounds.clear();
                rounds.extend_from_slice(&fresh.ep.tx.stats.rounds);
                *b = fresh;
                b.ep.tx.stats.rounds = rounds;
                b
            }
            None => Box::new(fresh),
        };
        let at = std::mem::replace(&mut self.idle[ep.index()], NEVER);
        if at != NEVER {
            b.decode(&self.compact[at as usize]);
            self.free.push(at);
        }
        self.made[ep.index()] = Some(b);
    }

    /// Endpoint `ep` may have gone idle by `now`: if it has and its compact form reads back as
    /// it is, hold it compact (its scoreboard's buffer lent to `pool`).
    pub(super) fn rest(&mut self, ep: EndpointId, now: SimTime, pool: &mut SegPool) {
        let i = ep.index();
        let Some(s) = self.made[i].as_deref_mut() else {
            return;
        };
        s.ep.park(pool);
        if !s.is_idle(now) || !s.ep.tx.compactable() {
            return;
        }
        // Its last packet has left the host: a packet sent from now on leaves at now or later
        // whatever the last one did, so the release time is as set up again.
        s.host_last = 0;
        let Some(mut b) = self.made[i].take() else {
            return;
        };
        match self.compact(ep, &mut b) {
            Some(c) => {
                self.idle[i] = match self.free.pop() {
                    Some(at) => {
                        self.compact[at as usize] = c;
                        at
                    }
                    None => {
                        self.compact.push(c);
                        (self.compact.len() - 1) as u32
                    }
                };
                self.spare.push(b);
            }
            None => self.made[i] = Some(b),
        }
    }

    /// The compact form of idle endpoint `ep`, `s`, if it reads back as `s` exactly; `s` is
    /// then the endpoint as set up (its box is kept for the next endpoint made whole), and as
    /// it was otherwise.
    fn compact(&self, ep: EndpointId, s: &mut Slot) -> Option<Compact> {
        #[cfg(debug_assertions)]
        let was = s.clone();
        let mut base = self.fresh(ep);
        let mut col = Collect::default();
        base.idle_fields(&mut col);
        let mut enc = Encode::new(&col);
        s.idle_fields(&mut enc);
        if !enc.fits() {
            return None;
        }
        // Whether it is the endpoint as set up but for the fields stored: those reset, and the
        // host's random stream, which is the endpoint's own stream after `host_draws` draws
        // (`Slot::draw_jitter`) and is kept or replayed.
        let rng = std::mem::replace(&mut s.host_rng, base.host_rng.clone());
        s.idle_fields(&mut Reset::new(&col));
        let same = *s == base;
        if !same {
            s.idle_fields(&mut Decode::new(&enc.out));
            s.host_rng = rng;
        }
        #[cfg(debug_assertions)]
        if same {
            assert_eq!(
                self.decoded_from(ep, &enc.out),
                was,
                "compact form reads back"
            );
        } else {
            assert_eq!(*s, was, "an endpoint kept whole is as it was");
        }
        same.then_some(enc.out)
    }

    /// The endpoints made so far, with their indices.
    pub(super) fn made(&self) -> impl Iterator<Item = (usize, &Endpoint)> {
        self.made
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (i, &s.ep)))
    }
}

impl Maker {
    /// Endpoint `ep` as set up, its connection's handshake having taken `handshake`.
    fn make(&self, ep: EndpointId, handshake: SimTime) -> Endpoint {
        let p = TcpParams {
            ecn: self.ecn[usize::from(ep.conn().0 >= self.fg)],
            ..self.params.clone()
        };
        let mut e = Endpoint::new(p, self.rtt.clone(), Some(handshake));
        if self.tcp.rto_randomization != RtoRandomization::None {
            let rng = Rng::stream(self.seed, Stream::RtoPolicy(ep));
            e = e.with_rto_policy(RtoPolicy::new(&self.tcp, self.fg, rng));
        }
        if self.tcp.congestion_control == CongestionControl::Bbr {
            e = e.with_cc_rng(Rng::stream(self.seed, Stream::Bbr(ep)));
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::ConnId;
    use crate::tcp::Incoming;
    use crate::units::{from_ms, from_us};

    const EP: EndpointId = ConnId(0).sender();

    fn endpoints() -> (Endpoints, SegPool) {
        let sc = Scenario::example(4);
        let mut e = Endpoints::new(&sc, 1);
        e.connect(from_us(100));
        (e, SegPool::default())
    }

    /// The endpoint sends `bytes` at `at`; the peer acknowledges them all 100 µs later.
    fn transfer(e: &mut Endpoints, pool: &mut SegPool, at: SimTime, bytes: u64) {
        let mut out = Vec::new();
        let s = e.slot(EP);
        s.ep.write_from(pool, at, bytes, &mut out);
        assert!(!out.is_empty());
        let ack = s.ep.tx.write_end;
        let seg = Incoming {
            seq: 0,
            len: 0,
            ack,
            sack: &[],
            ecn: 0,
        };
        s.ep.on_segment(at + from_us(100), &seg, &mut out);
        assert_eq!(s.ep.acked(), ack);
    }

    #[test]
    fn an_idle_endpoint_is_held_compact_and_made_whole_as_it_was() {
        let (mut e, mut pool) = endpoints();
        transfer(&mut e, &mut pool, from_ms(1), 5_000);
        transfer(&mut e, &mut pool, from_ms(3), 8_000);
        let s = e.slot(EP);
        // A cancelled retransmission timer whose event is still pending, as the agent leaves it.
        s.timers.rto.set(from_ms(300));
        assert!(s.timers.rto.needs_event().is_some());
        s.timers.rto.clear();
        let before = s.clone();
        assert!(before.ep.stats().segments > 0 && !before.ep.tx.stats.rounds.is_empty());
        e.rest(EP, 0, &mut pool);
        assert!(e.made[EP.index()].is_none(), "held compact");
        assert_eq!(*e.get(EP.index()), before.ep);
        assert_eq!(*e.slot(EP), before);
        // And again from a spare box whose buffers are reused.
        e.rest(EP, 0, &mut pool);
        assert!(e.made[EP.index()].is_none());
        assert_eq!(*e.slot(EP), before);
    }

    #[test]
    fn an_endpoint_with_data_in_flight_or_a_timer_armed_stays_whole() {
        let (mut e, mut pool) = endpoints();
        let mut out = Vec::new();
        e.slot(EP).ep.write_from(&mut pool, 0, 3_000, &mut out);
        e.rest(EP, 0, &mut pool);
        assert!(e.made[EP.index()].is_some(), "data in flight");
        let (mut e, mut pool) = endpoints();
        transfer(&mut e, &mut pool, 0, 3_000);
        e.slot(EP).timers.delack.set(from_ms(5));
        e.rest(EP, 0, &mut pool);
        assert!(e.made[EP.index()].is_some(), "a timer armed");
        e.slot(EP).timers.delack.clear();
        e.rest(EP, 0, &mut pool);
        assert!(e.made[EP.index()].is_none());
    }

    #[test]
    fn an_endpoint_whose_packet_waits_at_the_host_stays_whole_until_it_leaves() {
        let (mut e, mut pool) = endpoints();
        transfer(&mut e, &mut pool, 0, 3_000);
        e.slot(EP).host_last = from_ms(5);
        e.rest(EP, from_ms(4), &mut pool);
        assert!(
            e.made[EP.index()].is_some(),
            "its last packet leaves the host at 5 ms"
        );
        e.rest(EP, from_ms(5), &mut pool);
        assert!(e.made[EP.index()].is_none(), "gone at 5 ms");
        assert_eq!(
            e.slot(EP).host_last,
            0,
            "a release at or before now holds nothing back"
        );
    }

    #[test]
    fn host_jitter_draws_are_replayed_or_kept() {
        for draws in [1, REPLAY_DRAWS, REPLAY_DRAWS + 1, 5_000] {
            let (mut e, mut pool) = endpoints();
            transfer(&mut e, &mut pool, 0, 3_000);
            let s = e.slot(EP);
            for _ in 0..draws {
                s.host_rng.up_to(1_000);
            }
            s.host_draws = draws;
            let before = s.clone();
            e.rest(EP, 0, &mut pool);
            assert!(e.made[EP.index()].is_none(), "{draws} draws");
            assert_eq!(*e.slot(EP), before, "{draws} draws");
        }
    }

    #[test]
    fn an_endpoint_differing_where_the_visit_does_not_look_stays_whole_as_it_was() {
        let (mut e, mut pool) = endpoints();
        transfer(&mut e, &mut pool, 0, 3_000);
        let s = e.slot(EP);
        // Recovery's state is not visited: an idle endpoint is back in Open.
        s.ep.tx.ca = crate::tcp::cc::CaState::Loss;
        for _ in 0..300 {
            s.draw_jitter(1_000);
        }
        s.ep.tx.stats.rounds = vec![4_344, 8_688, 17_376];
        let before = s.clone();
        e.rest(EP, 0, &mut pool);
        assert!(e.made[EP.index()].is_some());
        assert_eq!(*e.slot(EP), before, "fields, rounds and stream restored");
        e.slot(EP).ep.tx.ca = crate::tcp::cc::CaState::Open;
        let open = e.slot(EP).clone();
        e.rest(EP, 0, &mut pool);
        assert!(e.made[EP.index()].is_none(), "compact once back in Open");
        assert_eq!(*e.slot(EP), open, "and made whole as it was");
    }

    #[test]
    fn an_endpoint_whose_compact_form_would_not_fit_stays_whole() {
        let (mut e, mut pool) = endpoints();
        transfer(&mut e, &mut pool, 0, 3_000);
        let s = e.slot(EP);
        s.ep.tx.stats.rounds = vec![u64::MAX / 3; 30];
        let before = s.clone();
        e.rest(EP, 0, &mut pool);
        assert!(e.made[EP.index()].is_some());
        assert_eq!(*e.slot(EP), before);
    }
}
