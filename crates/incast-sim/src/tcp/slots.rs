//! Every endpoint of a run, each made on its first use. A key-value cluster of H hosts runs
//! H(H−1) connections (a million at 1,024 hosts) and many of them carry nothing for the whole
//! run; an endpoint nothing has been written to, that has received nothing and has no timer
//! armed is exactly the one the connection was set up with, so it is held as a null pointer and
//! the numbers it is made from (the connection's handshake RTT and ECN), and made only when a
//! write, a segment or a timer first reaches it. Reads of one not yet made (bytes received and
//! acknowledged, counters, cwnd) answer from one endpoint as set up: zero, zero, none, the
//! initial window, as the real one would.

use std::collections::VecDeque;

use crate::config::{CongestionControl, RtoRandomization, Scenario, Tcp as TcpConfig};
use crate::engine::Timer;
use crate::ids::EndpointId;
use crate::net::PktId;
use crate::rng::{Rng, Stream};
use crate::tcp::{Endpoint, RtoPolicy, RttEstimator, TcpParams};
use crate::units::SimTime;

/// The events of one endpoint's timers (the agent arms and clears them).
#[derive(Debug, Clone, Default)]
pub(super) struct EndpointTimers {
    /// The retransmission timer.
    pub(super) rto: Timer,
    /// The delayed-ACK timer.
    pub(super) delack: Timer,
    /// The pacing timer.
    pub(super) pace: Timer,
}

/// One endpoint made, with its timers and its host's send queue.
#[derive(Debug)]
pub(super) struct Slot {
    /// The endpoint.
    pub(super) ep: Endpoint,
    /// The engine's lazy timers, following the deadlines it reports.
    pub(super) timers: EndpointTimers,
    /// Packets it has sent that wait out their host jitter, with release times.
    pub(super) host_q: VecDeque<(SimTime, PktId)>,
    /// Its random stream for host jitter.
    pub(super) host_rng: Rng,
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
    made: Vec<Option<Box<Slot>>>,
    /// Per connection: its handshake's RTT sample.
    handshake: Vec<SimTime>,
    maker: Maker,
    /// An endpoint as set up, read for those not yet made.
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
            made: Vec::new(),
            handshake: Vec::new(),
            maker,
            pristine,
        }
    }

    /// Add a connection whose handshake took `handshake`.
    pub(super) fn connect(&mut self, handshake: SimTime) {
        self.handshake.push(handshake);
        self.made.push(None);
        self.made.push(None);
    }

    /// Number of endpoints.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.made.len()
    }

    /// Endpoint `i` to read.
    #[inline]
    pub(super) fn get(&self, i: usize) -> &Endpoint {
        self.made[i].as_ref().map_or(&self.pristine, |s| &s.ep)
    }

    /// Endpoint `ep` with its timers and host queue, made now if it was not.
    #[inline]
    pub(super) fn slot(&mut self, ep: EndpointId) -> &mut Slot {
        let (maker, handshake) = (&self.maker, &self.handshake);
        self.made[ep.index()].get_or_insert_with(|| {
            Box::new(Slot {
                ep: maker.make(ep, handshake[ep.conn().index()]),
                timers: EndpointTimers::default(),
                host_q: VecDeque::new(),
                host_rng: Rng::stream(maker.seed, Stream::HostJitter(ep)),
            })
        })
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
