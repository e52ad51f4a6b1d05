//! A replicated key-value store's gets: the operator's incast of Fritchie's Riak story, fan-in
//! small (R = 3) but everywhere, all the time.
//!
//! Every one of the H hosts is a client and a coordinator. Operations arrive at each host as a
//! Poisson process; a get asks its R replicas (distinct hosts, from a consistent-hashing ring or
//! uniformly) for the value at once, and completes when `quorum` replies have arrived; a put
//! (a share `kv_put_fraction` of them) sends the value to its R replicas at once and completes
//! when `quorum` have acknowledged it. A replica on the coordinator itself answers locally. Replies are written as soon as the
//! request is read (optionally after a service-time jitter, in order per host), as Riak does,
//! or, with head-of-line blocking, in order per host and only while the reply's connection has
//! room in its send buffer (a vnode descheduled on a busy distribution port).
//!
//! Connection (a, b) carries the gets coordinator a asks replica b: a's endpoint is its client
//! ([`ConnId::receiver`]), b's its server ([`ConnId::sender`]). Riak runs one Erlang
//! distribution connection per pair of nodes for both directions; here each direction of
//! requests has its own, which changes nothing for the replies that make the incast.
//!
//! Like [`crate::app::task`], the store answers events with [`Effect`]s and never touches TCP,
//! so it is tested alone. Its queues grow to their peak once and are reused: a get in flight
//! allocates nothing.

use std::collections::VecDeque;

use crate::app::effect::{Effect, Token};
use crate::app::size_dist::SizeDist;
use crate::config::{KvPlacement, Scenario};
use crate::ids::ConnId;
use crate::rng::{Rng, Stream};
use crate::units::{SimTime, PS_PER_MS, PS_PER_S};

mod plan;
pub mod report;
mod run;
mod spare;

use spare::Spare;

use plan::{choose_replicas, draw_put, exponential_gap, value_sizes};
pub use plan::{plan, PlannedGet};
pub use report::{quantile, HostCounters, KvHostReport, KvReport};

/// Width of the windows the peak utilization is measured over (the article's finest poll).
pub const PEAK_WINDOW: SimTime = PS_PER_MS;

/// [`Token::kind`] of the next get arriving at a host ([`Token::arg`]).
pub(crate) const GET: u32 = 0;
/// [`Token::kind`] of a reply's service jitter ending on a connection ([`Token::arg`]).
pub(crate) const RESPOND: u32 = 1;
/// [`Token::kind`] of the end of the warm-up.
pub(crate) const WARM: u32 = 2;

/// One get or put in flight.
#[derive(Debug, Clone, Copy, Default)]
struct Get {
    /// When it arrived.
    at: SimTime,
    /// A put: its value went to the replicas, acknowledgments come back.
    put: bool,
    /// Replies arrived (local ones included).
    replies: u32,
    /// Remote replies still to arrive.
    left: u32,
    /// Arrived after the warm-up: counted in the figures.
    measured: bool,
}

/// One request on a connection, as its server reads it.
#[derive(Debug, Clone, Copy)]
struct Request {
    /// Client offset at which the request is complete.
    end: u64,
    /// Value bytes: asked for (a get) or carried (a put).
    size: u64,
    /// A put.
    put: bool,
    /// Its operation counts in the figures.
    measured: bool,
}

/// A reply a client expects: (get, client offset at which it is complete, value bytes).
type OpenReply = (u32, u64, u64);

/// Bytes received per [`PEAK_WINDOW`] at one host: the current window and the fullest.
#[derive(Debug, Clone, Copy, Default)]
struct PeakMeter {
    window: u64,
    bytes: u64,
    max: u64,
}

impl PeakMeter {
    #[inline]
    fn add(&mut self, now: SimTime, wire: u64) {
        let w = now / PEAK_WINDOW;
        if w != self.window {
            self.max = self.max.max(self.bytes);
            self.window = w;
            self.bytes = 0;
        }
        self.bytes += wire;
    }

    fn peak(&self) -> u64 {
        self.max.max(self.bytes)
    }
}

/// The key-value workload's state.
#[derive(Debug)]
pub struct KvGets {
    hosts: u32,
    replicas: u32,
    quorum: u32,
    put_fraction: f64,
    placement: KvPlacement,
    /// Mean time between gets at one host, picoseconds.
    mean_gap: f64,
    sizes: SizeDist,
    request: u64,
    header: u64,
    jitter: SimTime,
    hol: bool,
    send_buffer: u64,
    link_bps: u64,
    start: SimTime,
    window: SimTime,
    warmup: SimTime,
    /// Each host's counters when the warm-up ended (zero without one).
    baseline: Vec<HostCounters>,
    /// Frames the switch-to-switch ports had dropped when the warm-up ended.
    fabric_baseline: u64,
    /// Per host: arrivals, keys and sizes.
    draws: Vec<Rng>,
    /// Per host: service-time jitter.
    service: Vec<Rng>,
    /// Per connection: client offset at the end of the last request written.
    asked_end: Vec<u64>,
    /// Per connection: the requests written and not yet read.
    to_read: Vec<VecDeque<Request>>,
    /// Per connection: replies (value bytes, a put's acknowledgment) waiting out their service
    /// jitter.
    to_respond: Vec<VecDeque<(u64, bool)>>,
    /// Per connection: (get, client offset at which its reply is complete, value bytes), in
    /// order.
    open: Vec<VecDeque<(u32, u64, u64)>>,
    /// Per connection: the client offset at which the reply at the front of `open` is
    /// complete (`u64::MAX`: none). It is read for every segment of a reply, and a million
    /// connections' queues cost two cache misses a read (the queue, then its buffer).
    open_end: Vec<u64>,
    /// Per connection: client offset at the end of the last reply asked for.
    end: Vec<u64>,
    /// Buffers of the empty `to_read`, `to_respond` and `open` queues.
    spare: (Spare<Request>, Spare<(u64, bool)>, Spare<OpenReply>),
    /// Per connection: bytes the server has written.
    pub written: Vec<u64>,
    /// Per host: when its server is next free (jittered replies leave in order).
    free_at: Vec<SimTime>,
    /// Per host: replies waiting for their connection's send buffer (head-of-line blocking).
    serve_q: Vec<VecDeque<(ConnId, u64, bool)>>,
    /// Per host: stalled on the head of `serve_q`.
    stalled: Vec<bool>,
    gets: Vec<Get>,
    free: Vec<u32>,
    /// Replicas of the get being issued (reused).
    pick: Vec<u32>,
    live: u32,
    /// Hosts whose arrivals have ended.
    closed: u32,
    /// When the last reply arrived, once every get is complete.
    pub finish: Option<SimTime>,
    /// Latency of every completed get, in completion order.
    latencies: Vec<SimTime>,
    /// Latency of every completed put, in completion order.
    put_latencies: Vec<SimTime>,
    /// Per host: gets issued.
    issued: Vec<u64>,
    /// Puts issued.
    puts: u64,
    /// Per host: value bytes bound for it: replies its gets asked of remote replicas, values
    /// other coordinators' puts sent it.
    offered: Vec<u64>,
    /// Per host: value bytes it received: replies from remote replicas, values of puts.
    received: Vec<u64>,
    /// Per physical host: wire bytes received per window.
    peak: Vec<PeakMeter>,
}

impl KvGets {
    /// The scenario's store, not yet started (`physical_hosts`: hosts of the topology).
    pub fn new(sc: &Scenario, physical_hosts: u32) -> KvGets {
        let w = &sc.workload;
        let h = sc.topology.senders;
        let conns = incast_workload::kv::connections(h) as usize;
        let sizes = value_sizes(sc);
        let mean_gap = PS_PER_S as f64 / sc.kv_gets_per_s();
        KvGets {
            hosts: h,
            replicas: w.kv_replicas,
            quorum: sc.kv_quorum(),
            put_fraction: w.kv_put_fraction,
            placement: w.kv_placement,
            mean_gap,
            sizes,
            request: w.request_size,
            header: w.response_header,
            jitter: w.jitter,
            hol: w.kv_hol_blocking,
            send_buffer: w.kv_send_buffer,
            link_bps: sc.topology.link,
            start: 0,
            window: w.kv_duration,
            warmup: w.kv_warmup,
            baseline: vec![HostCounters::default(); h as usize],
            fabric_baseline: 0,
            draws: (0..h)
                .map(|i| Rng::stream(sc.seed, Stream::KvGets(i)))
                .collect(),
            service: (0..h)
                .map(|i| Rng::stream(sc.seed, Stream::KvService(i)))
                .collect(),
            asked_end: vec![0; conns],
            to_read: vec![VecDeque::new(); conns],
            to_respond: vec![VecDeque::new(); conns],
            open: vec![VecDeque::new(); conns],
            open_end: vec![u64::MAX; conns],
            end: vec![0; conns],
            spare: Default::default(),
            written: vec![0; conns],
            free_at: vec![0; h as usize],
            serve_q: vec![VecDeque::new(); h as usize],
            stalled: vec![false; h as usize],
            gets: Vec::new(),
            free: Vec::new(),
            pick: Vec::with_capacity(w.kv_replicas as usize),
            live: 0,
            closed: 0,
            finish: None,
            latencies: Vec::new(),
            put_latencies: Vec::new(),
            issued: vec![0; h as usize],
            puts: 0,
            offered: vec![0; h as usize],
            received: vec![0; h as usize],
            peak: vec![PeakMeter::default(); physical_hosts as usize],
        }
    }

    /// Connections: one per ordered pair (coordinator, replica).
    pub fn connections(&self) -> u32 {
        incast_workload::kv::connections(self.hosts)
    }

    /// The connection on which coordinator `a` asks replica `b` (a ≠ b).
    #[inline]
    pub fn conn(&self, a: u32, b: u32) -> ConnId {
        ConnId(incast_workload::kv::conn(self.hosts, a, b))
    }

    /// (replica, coordinator) of connection `c`: the host of its server and of its client.
    #[inline]
    pub fn ends(&self, c: ConnId) -> (u32, u32) {
        incast_workload::kv::ends(self.hosts, c.0)
    }

    /// When the gets started.
    pub fn start_time(&self) -> SimTime {
        self.start
    }

    /// When the figures start: the end of the warm-up.
    #[inline]
    pub fn measure_from(&self) -> SimTime {
        self.start + self.warmup
    }

    /// The warm-up is over: every figure counts from `counters` on.
    pub fn warm(&mut self, counters: Vec<HostCounters>, fabric_drops: u64) {
        self.baseline = counters;
        self.fabric_baseline = fabric_drops;
        for m in self.peak.iter_mut() {
            *m = PeakMeter::default();
        }
    }

    /// Whether host `h`'s server waits for room in a send buffer.
    #[inline]
    pub fn stalled(&self, h: u32) -> bool {
        self.stalled[h as usize]
    }

    fn gap(&mut self, h: u32) -> SimTime {
        exponential_gap(&mut self.draws[h as usize], self.mean_gap)
    }

    /// Schedule host `h`'s next get after `now`, or close its arrivals.
    fn next_arrival(&mut self, h: u32, now: SimTime, act: &mut Vec<Effect>) {
        let at = now + self.gap(h);
        if at < self.start + self.window {
            act.push(Effect::Wake {
                at,
                token: Token { kind: GET, arg: h },
            });
        } else {
            self.closed += 1;
        }
    }

    /// Start every host's arrivals at `now`.
    pub fn start(&mut self, now: SimTime, act: &mut Vec<Effect>) {
        self.start = now;
        for h in 0..self.hosts {
            self.next_arrival(h, now, act);
        }
        self.maybe_finish(now, act);
    }

    /// Choose the replicas of a key into `self.pick`.
    fn choose_replicas(&mut self, h: u32) {
        choose_replicas(
            self.placement,
            self.hosts,
            self.replicas,
            &mut self.draws[h as usize],
            &mut self.pick,
        );
    }

    /// An operation arrives at host `h`: a get asks its replicas for the value, a put sends
    /// it to them.
    pub fn get(&mut self, h: u32, now: SimTime, act: &mut Vec<Effect>) {
        let size = self.sizes.sample(&mut self.draws[h as usize]);
        let put = draw_put(&mut self.draws[h as usize], self.put_fraction);
        self.choose_replicas(h);
        let g = match self.free.pop() {
            Some(g) => g,
            None => {
                self.gets.push(Get::default());
                (self.gets.len() - 1) as u32
            }
        };
        let measured = now >= self.measure_from();
        let mut get = Get {
            at: now,
            put,
            replies: 0,
            left: 0,
            measured,
        };
        if put {
            self.puts += u64::from(measured);
        } else {
            self.issued[h as usize] += u64::from(measured);
        }
        // A get's request asks for the value; a put's carries it and is acknowledged.
        let (request, reply) = if put {
            (self.request + size, self.request)
        } else {
            (self.request, self.header + size)
        };
        for i in 0..self.pick.len() {
            let b = self.pick[i];
            if b == h {
                get.replies += 1;
                continue;
            }
            let c = self.conn(h, b);
            get.left += 1;
            self.asked_end[c.index()] += request;
            let r = Request {
                end: self.asked_end[c.index()],
                size,
                put,
                measured,
            };
            self.spare.0.push(&mut self.to_read[c.index()], r);
            self.end[c.index()] += reply;
            let reply = (g, self.end[c.index()], if put { 0 } else { size });
            self.spare.2.push(&mut self.open[c.index()], reply);
            self.open_end[c.index()] = self.open[c.index()][0].1;
            if measured {
                // The value crosses into the coordinator (a get) or the replica (a put).
                let into = if put { b } else { h };
                self.offered[into as usize] += size;
            }
            act.push(Effect::Write {
                ep: c.receiver(),
                bytes: request,
            });
        }
        if measured && get.replies >= self.quorum {
            if put {
                self.put_latencies.push(0);
            } else {
                self.latencies.push(0);
            }
        }
        if get.left == 0 {
            self.free.push(g);
        } else {
            self.gets[g as usize] = get;
            self.live += 1;
        }
        self.next_arrival(h, now, act);
        self.maybe_finish(now, act);
    }

    /// The server of `c` has read `received` request bytes in all.
    pub fn on_server_data(
        &mut self,
        c: ConnId,
        received: u64,
        now: SimTime,
        act: &mut Vec<Effect>,
    ) {
        let i = c.index();
        while let Some(&r) = self.to_read[i].front() {
            if received < r.end {
                break;
            }
            self.to_read[i].pop_front();
            self.spare.0.lend(&mut self.to_read[i]);
            let (b, _) = self.ends(c);
            if r.put && r.measured {
                self.received[b as usize] += r.size;
            }
            if self.jitter == 0 {
                self.reply(c, r.size, r.put, act);
            } else {
                let b = b as usize;
                let at = (now + self.service[b].up_to(self.jitter)).max(self.free_at[b]);
                self.free_at[b] = at;
                self.spare.1.push(&mut self.to_respond[i], (r.size, r.put));
                act.push(Effect::Wake {
                    at,
                    token: Token {
                        kind: RESPOND,
                        arg: c.0,
                    },
                });
            }
        }
    }

    /// A jittered reply on `c` is due.
    pub fn respond(&mut self, c: ConnId, act: &mut Vec<Effect>) {
        let (size, put) = self.to_respond[c.index()]
            .pop_front()
            .expect("a reply for every respond event");
        self.spare.1.lend(&mut self.to_respond[c.index()]);
        self.reply(c, size, put, act);
    }

    /// The server of `c` answers with a value of `size` bytes (a get) or acknowledges one
    /// (a put): now, or in its host's order.
    fn reply(&mut self, c: ConnId, size: u64, put: bool, act: &mut Vec<Effect>) {
        if self.hol {
            let (b, _) = self.ends(c);
            self.serve_q[b as usize].push_back((c, size, put));
            act.push(Effect::Fill { slot: b });
        } else {
            self.write_reply(c, size, put, act);
        }
    }

    /// Bytes of the reply to a get of `size` bytes, or of a put's acknowledgment.
    #[inline]
    fn reply_bytes(&self, size: u64, put: bool) -> u64 {
        if put {
            self.request
        } else {
            self.header + size
        }
    }

    fn write_reply(&mut self, c: ConnId, size: u64, put: bool, act: &mut Vec<Effect>) {
        if put {
            act.push(Effect::Write {
                ep: c.sender(),
                bytes: self.request,
            });
        } else {
            Effect::push_response(act, c.sender(), self.header, size);
        }
        self.written[c.index()] += self.reply_bytes(size, put);
    }

    /// Host `h`'s server writes the replies at the head of its queue while their connection's
    /// send buffer has room (`acked(c)`: bytes the server's end of `c` has had acknowledged).
    /// A reply into an empty buffer always goes, however big.
    pub fn serve(&mut self, h: u32, acked: impl Fn(ConnId) -> u64, act: &mut Vec<Effect>) {
        while let Some(&(c, size, put)) = self.serve_q[h as usize].front() {
            let backlog = self.written[c.index()] - acked(c);
            if backlog > 0 && backlog + self.reply_bytes(size, put) > self.send_buffer {
                self.stalled[h as usize] = true;
                return;
            }
            self.serve_q[h as usize].pop_front();
            self.write_reply(c, size, put, act);
        }
        self.stalled[h as usize] = false;
    }

    /// The client of `c` has received `received` bytes in all.
    pub fn on_client_data(
        &mut self,
        c: ConnId,
        received: u64,
        now: SimTime,
        act: &mut Vec<Effect>,
    ) {
        let (_, a) = self.ends(c);
        while received >= self.open_end[c.index()] {
            let q = &mut self.open[c.index()];
            let Some((g, _, size)) = q.pop_front() else {
                break;
            };
            self.open_end[c.index()] = q.front().map_or(u64::MAX, |r| r.1);
            self.spare.2.lend(&mut self.open[c.index()]);
            let get = &mut self.gets[g as usize];
            if get.measured {
                self.received[a as usize] += size;
            }
            get.replies += 1;
            get.left -= 1;
            if get.measured && get.replies == self.quorum {
                if get.put {
                    self.put_latencies.push(now - get.at);
                } else {
                    self.latencies.push(now - get.at);
                }
            }
            if get.left == 0 {
                self.free.push(g);
                self.live -= 1;
            }
        }
        self.maybe_finish(now, act);
    }

    fn maybe_finish(&mut self, now: SimTime, act: &mut Vec<Effect>) {
        if self.finish.is_none() && self.closed == self.hosts && self.live == 0 {
            self.finish = Some(now);
            act.push(Effect::Finished);
        }
    }

    /// `wire` bytes finished crossing into physical host `phys` at `now`.
    #[inline]
    pub fn on_rx(&mut self, phys: u32, now: SimTime, wire: u64) {
        if now >= self.measure_from() {
            self.peak[phys as usize].add(now, wire);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{QueueLimit, WorkloadKind};
    use crate::units::from_ms;

    fn cluster(hosts: u32) -> Scenario {
        let mut sc = Scenario::example(hosts);
        sc.workload.kind = WorkloadKind::KvGets;
        sc
    }

    #[test]
    fn connections_number_every_ordered_pair_once() {
        let kv = KvGets::new(&cluster(5), 5);
        assert_eq!(kv.connections(), 20);
        let mut seen = std::collections::HashSet::new();
        for a in 0..5 {
            for b in 0..5 {
                if a != b {
                    let c = kv.conn(a, b);
                    assert!(c.0 < 20);
                    assert_eq!(kv.ends(c), (b, a), "connection {c:?}");
                    assert!(seen.insert(c));
                }
            }
        }
    }

    /// Issue one get at host `h` and return the requests it wrote, by replica.
    fn asked(kv: &mut KvGets, h: u32, now: SimTime) -> Vec<u32> {
        let mut act = Vec::new();
        kv.get(h, now, &mut act);
        act.iter()
            .filter_map(|a| match a {
                Effect::Write { ep, bytes } => {
                    assert_eq!(*bytes, 100, "a request");
                    Some(kv.ends(ep.conn()).0)
                }
                _ => None,
            })
            .collect()
    }

    /// The plan is the simulator's own gets: drive a store through its arrivals alone and
    /// every get asks the replicas the plan names, at the time it names.
    #[test]
    fn the_plan_draws_the_gets_the_store_issues() {
        for (placement, puts) in [(KvPlacement::Ring, 0.0), (KvPlacement::Uniform, 0.3)] {
            let mut sc = cluster(6);
            sc.workload.kv_placement = placement;
            sc.workload.kv_put_fraction = puts;
            sc.workload.kv_utilization = 0.3;
            sc.workload.kv_duration = from_ms(200);
            let planned = plan(&sc);
            assert!(planned.len() > 20, "{}", planned.len());
            let mut kv = KvGets::new(&sc, 6);
            let mut act = Vec::new();
            kv.start(0, &mut act);
            let mut issued = Vec::new();
            loop {
                let next = act
                    .iter()
                    .filter_map(|a| match a {
                        Effect::Wake {
                            at,
                            token:
                                Token {
                                    kind: GET,
                                    arg: host,
                                },
                        } => Some((*at, *host)),
                        _ => None,
                    })
                    .min();
                let Some((at, h)) = next else { break };
                act.retain(
                    |a| !matches!(a, Effect::Wake { at: t, token: Token { kind: GET, arg: host } } if *host == h && *t == at),
                );
                let mut out = Vec::new();
                kv.get(h, at, &mut out);
                let mut put = false;
                let mut remote: Vec<u32> = out
                    .iter()
                    .filter_map(|a| match a {
                        Effect::Write { ep, bytes } => {
                            // A put's request carries its value.
                            put |= *bytes > sc.workload.request_size;
                            Some(kv.ends(ep.conn()).0)
                        }
                        _ => None,
                    })
                    .collect();
                remote.sort_unstable();
                issued.push((h, at, put && !remote.is_empty(), remote));
                act.extend(out.into_iter().filter(|a| {
                    matches!(
                        a,
                        Effect::Wake {
                            token: Token { kind: GET, .. },
                            ..
                        }
                    )
                }));
            }
            let want: Vec<_> = planned
                .iter()
                .map(|g| {
                    let mut r: Vec<u32> = g
                        .replicas
                        .iter()
                        .copied()
                        .filter(|&b| b != g.host)
                        .collect();
                    r.sort_unstable();
                    (g.host, g.at, g.put && !r.is_empty(), r)
                })
                .collect();
            assert_eq!(issued, want, "{placement:?}");
            assert_eq!(planned.iter().any(|g| g.put), puts > 0.0);
            assert!(planned.iter().all(|g| g.size == sc.workload.value_size));
        }
    }

    #[test]
    fn replicas_are_distinct_and_ring_replicas_adjacent() {
        for placement in [KvPlacement::Ring, KvPlacement::Uniform] {
            let mut sc = cluster(6);
            sc.workload.kv_placement = placement;
            let mut kv = KvGets::new(&sc, 6);
            let mut counts = [0u32; 6];
            for i in 0..3000 {
                kv.choose_replicas(i % 6);
                let mut p = kv.pick.clone();
                p.sort_unstable();
                p.dedup();
                assert_eq!(p.len(), 3, "{placement:?}: {:?}", kv.pick);
                if placement == KvPlacement::Ring {
                    assert_eq!(kv.pick[1], (kv.pick[0] + 1) % 6);
                    assert_eq!(kv.pick[2], (kv.pick[0] + 2) % 6);
                }
                for &h in &kv.pick {
                    counts[h as usize] += 1;
                }
            }
            // Every host holds half of the keys (3 of 6), within sampling noise.
            for c in counts {
                assert!((1350..1650).contains(&c), "{placement:?}: {counts:?}");
            }
        }
    }

    #[test]
    fn a_get_completes_at_its_quorum_and_frees_after_its_last_reply() {
        let mut sc = cluster(4);
        sc.workload.kv_quorum = 2;
        sc.workload.value_size = 1000;
        let mut kv = KvGets::new(&sc, 4);
        kv.start = 0;
        kv.window = 10;
        // Find a get of host 0 whose replicas are all remote.
        let replicas = loop {
            let r = asked(&mut kv, 0, 5);
            if r.len() == 3 {
                break r;
            }
            kv.latencies.clear();
        };
        let conns: Vec<ConnId> = replicas.iter().map(|&b| kv.conn(0, b)).collect();
        let mut act = Vec::new();
        // Each server reads its request and answers with the value at once.
        for &c in &conns {
            act.clear();
            kv.on_server_data(c, kv.asked_end[c.index()], 6, &mut act);
            assert_eq!(
                act,
                vec![Effect::Write {
                    ep: c.sender(),
                    bytes: 1000
                }]
            );
        }
        let lat_before = kv.latencies.len();
        let end = |kv: &KvGets, c: ConnId| kv.end[c.index()];
        kv.on_client_data(conns[0], end(&kv, conns[0]), 20, &mut act);
        assert_eq!(
            kv.latencies.len(),
            lat_before,
            "one reply of a quorum of two"
        );
        kv.on_client_data(conns[1], end(&kv, conns[1]), 35, &mut act);
        assert_eq!(
            kv.latencies[lat_before..],
            [30],
            "complete at the second reply"
        );
        assert!(kv.live > 0, "the third reply is still on its way");
        kv.on_client_data(conns[2], end(&kv, conns[2]), 50, &mut act);
        assert_eq!(
            kv.latencies.len(),
            lat_before + 1,
            "late replies add no latency"
        );
        assert_eq!(kv.received[0] % 1000, 0);
    }

    #[test]
    fn a_put_sends_its_value_to_the_replicas_and_completes_at_the_quorum_of_acks() {
        let mut sc = cluster(4);
        sc.workload.kv_put_fraction = 1.0;
        sc.workload.kv_quorum = 2;
        sc.workload.value_size = 1000;
        let mut act = Vec::new();
        // Find a seed whose first put of host 0 has its replicas all remote.
        let (mut kv, conns): (KvGets, Vec<ConnId>) = loop {
            sc.seed += 1;
            let mut kv = KvGets::new(&sc, 4);
            kv.window = 10;
            act.clear();
            kv.get(0, 5, &mut act);
            let w: Vec<ConnId> = act
                .iter()
                .filter_map(|a| match a {
                    Effect::Write { ep, bytes } => {
                        assert_eq!(*bytes, 100 + 1000, "the request carries the value");
                        Some(ep.conn())
                    }
                    _ => None,
                })
                .collect();
            if w.len() == 3 {
                break (kv, w);
            }
        };
        let puts = kv.puts;
        // A replica reads the value only once all of it has arrived, then acknowledges it.
        for &c in &conns {
            act.clear();
            let end = kv.asked_end[c.index()];
            kv.on_server_data(c, end - 1, 6, &mut act);
            assert!(act.is_empty(), "half a value is not a put");
            kv.on_server_data(c, end, 7, &mut act);
            assert_eq!(
                act,
                vec![Effect::Write {
                    ep: c.sender(),
                    bytes: 100
                }]
            );
        }
        let replica = kv.ends(conns[0]).0;
        assert!(
            kv.received[replica as usize] >= 1000,
            "the value landed on the replica"
        );
        kv.on_client_data(conns[0], kv.end[conns[0].index()], 20, &mut act);
        assert!(kv.put_latencies.is_empty());
        kv.on_client_data(conns[1], kv.end[conns[1].index()], 25, &mut act);
        assert_eq!(
            kv.put_latencies,
            [20],
            "complete at the second acknowledgment"
        );
        assert!(kv.latencies.is_empty(), "no get latency from a put");
        assert!(puts >= 1 && kv.issued.iter().sum::<u64>() == 0);
    }

    #[test]
    fn a_cluster_of_gets_and_puts_carries_the_same_load_per_host() {
        let mut sc = cluster(8);
        sc.workload.kv_utilization = 0.1;
        sc.workload.kv_duration = from_ms(500);
        sc.topology.buffer = QueueLimit::bytes(512_000);
        sc.workload.kv_put_fraction = 0.5;
        let r = crate::Simulation::new(sc).unwrap().run().unwrap();
        let kv = r.kv.unwrap();
        // 47.6 operations/s per host, half of them puts: about 95 of each.
        assert!((60..140).contains(&kv.puts), "{}", kv.puts);
        assert!((60..140).contains(&kv.gets), "{}", kv.gets);
        assert_eq!(kv.completed, kv.gets);
        assert!((kv.offered_load - 0.1).abs() < 0.03, "{}", kv.offered_load);
        assert!(
            (kv.carried_load / kv.offered_load - 1.0).abs() < 0.15,
            "{kv:?}"
        );
        // A put's acknowledgments come back a round trip after 100 KB reach the replicas.
        assert!(
            kv.put_latency_p50 > from_ms(1) && kv.put_latency_p50 < from_ms(10),
            "{kv:?}"
        );
    }

    #[test]
    fn hand_off_flows_between_members_cost_the_gets_drops_and_latency() {
        use crate::config::{BackgroundDestination, BackgroundSource};
        let mut sc = cluster(8);
        sc.workload.kv_utilization = 0.2;
        sc.workload.kv_duration = from_ms(300);
        sc.topology.buffer = QueueLimit::bytes(256_000);
        let quiet = crate::Simulation::new(sc.clone()).unwrap().run().unwrap();
        sc.background.flows = 8;
        sc.background.source = BackgroundSource::Senders;
        sc.background.destination = BackgroundDestination::Peers;
        let busy = crate::Simulation::new(sc.clone()).unwrap().run().unwrap();
        let (q, b) = (quiet.kv.unwrap(), busy.kv.unwrap());
        assert_eq!(b.completed, b.gets, "every get still completes");
        // Eight long flows, one out of and one into every host, fill the ports.
        assert!(busy.background_bps > 3e9, "{}", busy.background_bps);
        assert!(
            b.utilization > q.utilization + 0.4,
            "{} {}",
            b.utilization,
            q.utilization
        );
        assert!(
            b.drops_per_s_per_host > q.drops_per_s_per_host + 10.0,
            "{b:?}"
        );
        assert!(
            b.latency_p50 > 2 * q.latency_p50,
            "{} {}",
            b.latency_p50,
            q.latency_p50
        );
        // The flows are the report's background, not the store's connections.
        assert_eq!(busy.flows.iter().filter(|f| f.background).count(), 8);
        // A store's background must run between its members.
        sc.background.destination = BackgroundDestination::Receiver;
        assert_eq!(sc.validate().unwrap_err().field, "background");
    }

    #[test]
    fn a_stalled_server_waits_for_room_in_the_send_buffer() {
        let mut sc = cluster(3);
        sc.workload.kv_hol_blocking = true;
        sc.workload.kv_send_buffer = 1500;
        let mut kv = KvGets::new(&sc, 3);
        let (c1, c2) = (kv.conn(0, 2), kv.conn(1, 2));
        let mut act = Vec::new();
        kv.reply(c1, 1000, false, &mut act);
        kv.reply(c1, 1000, false, &mut act);
        kv.reply(c2, 1000, false, &mut act);
        assert_eq!(act, vec![Effect::Fill { slot: 2 }; 3]);
        act.clear();
        // Nothing acknowledged: the first reply goes into the empty buffer, the second does
        // not fit behind it, and the reply to host 1 waits behind that (head-of-line).
        kv.serve(2, |_| 0, &mut act);
        assert_eq!(act.len(), 1);
        assert!(kv.stalled(2));
        act.clear();
        kv.serve(2, |c| if c == c1 { 1000 } else { 0 }, &mut act);
        assert_eq!(
            act.len(),
            2,
            "both waiting replies go once c1 is acknowledged"
        );
        assert!(!kv.stalled(2));
    }

    #[test]
    fn the_cluster_at_a_low_load_completes_every_get_and_carries_what_it_offers() {
        let mut sc = cluster(8);
        sc.workload.kv_utilization = 0.1;
        sc.workload.kv_duration = from_ms(500);
        sc.topology.buffer = QueueLimit::bytes(512_000);
        let r = crate::Simulation::new(sc.clone()).unwrap().run().unwrap();
        let kv = r.kv.clone().unwrap();
        assert_eq!(kv.completed, kv.gets);
        // 0.1 · 1 Gbps / (8 · 3 · 7/8 · 100 KB) = 47.6 gets/s per host: 190 expected.
        assert!((150..240).contains(&kv.gets), "{}", kv.gets);
        assert!((kv.offered_load - 0.1).abs() < 0.03, "{}", kv.offered_load);
        assert!(
            (kv.carried_load / kv.offered_load - 1.0).abs() < 0.15,
            "{kv:?}"
        );
        assert_eq!(kv.drops_per_s_per_host, 0.0);
        // 3 × 100 KB over an idle 1 Gbps link: about 2.5 ms, no timeouts.
        assert!(
            kv.latency_p50 > from_ms(1) && kv.latency_p50 < from_ms(10),
            "{kv:?}"
        );
        assert_eq!(r.goodput_bps, kv.goodput_bps);
        let again = crate::Simulation::new(sc).unwrap().run().unwrap();
        assert_eq!(again, r, "same scenario and seed, same report");
    }

    #[test]
    fn the_warm_up_is_left_out_of_every_figure() {
        let mut sc = cluster(8);
        sc.workload.kv_utilization = 0.1;
        sc.workload.kv_duration = from_ms(500);
        sc.topology.buffer = QueueLimit::bytes(512_000);
        let whole = crate::Simulation::new(sc.clone()).unwrap().run().unwrap();
        sc.workload.kv_warmup = from_ms(250);
        let half = crate::Simulation::new(sc.clone()).unwrap().run().unwrap();
        let (w, h) = (whole.kv.unwrap(), half.kv.unwrap());
        // The same arrivals (same seed); about half of them after the warm-up.
        let share = h.gets as f64 / w.gets as f64;
        assert!((0.35..0.65).contains(&share), "{share}");
        assert_eq!(h.completed, h.gets);
        assert!((h.offered_load - w.offered_load).abs() < 0.04, "{h:?}");
        assert!((h.utilization - w.utilization).abs() < 0.04, "{h:?}");
        sc.workload.kv_warmup = sc.workload.kv_duration;
        assert_eq!(sc.validate().unwrap_err().field, "workload.kv_warmup");
    }

    #[test]
    fn impossible_loads_and_too_many_replicas_are_refused_by_name() {
        let mut sc = cluster(20);
        sc.workload.kv_utilization = 1.0;
        assert_eq!(sc.validate().unwrap_err().field, "workload.kv_utilization");
        sc.workload.kv_utilization = 0.5;
        sc.workload.kv_replicas = 21;
        let e = sc.validate().unwrap_err();
        assert_eq!(e.field, "workload.kv_replicas");
        assert!(e.message.contains("20"), "{}", e.message);
        sc.workload.kv_replicas = 3;
        sc.workload.kv_rate = 1e6;
        assert_eq!(sc.validate().unwrap_err().field, "workload.kv_rate");
        sc.workload.kv_rate = 0.0;
        sc.workload.kv_quorum = 4;
        assert_eq!(sc.validate().unwrap_err().field, "workload.kv_quorum");
        sc.workload.kv_quorum = 2;
        sc.validate().unwrap();
    }
}
