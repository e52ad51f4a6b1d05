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
//! Like [`crate::workload`], the store answers events with [`Action`]s and never touches TCP,
//! so it is tested alone. Its queues grow to their peak once and are reused: a get in flight
//! allocates nothing.

use std::collections::VecDeque;

use serde::Serialize;

use crate::config::{KvPlacement, Scenario};
use crate::ids::ConnId;
use crate::report::utilization;
use crate::rng::{Rng, Stream};
use crate::units::{SimTime, PS_PER_MS, PS_PER_S};
use crate::workload::{Action, SizeDist};

/// Width of the windows the peak utilization is measured over (the article's finest poll).
pub const PEAK_WINDOW: SimTime = PS_PER_MS;

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
    /// Per connection: client offset at the end of the last reply asked for.
    end: Vec<u64>,
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
        let conns = Self::connections_of(h) as usize;
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
            end: vec![0; conns],
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

    fn connections_of(hosts: u32) -> u32 {
        hosts * hosts.saturating_sub(1)
    }

    /// Connections: one per ordered pair (coordinator, replica).
    pub fn connections(&self) -> u32 {
        Self::connections_of(self.hosts)
    }

    /// The connection on which coordinator `a` asks replica `b` (a ≠ b).
    #[inline]
    pub fn conn(&self, a: u32, b: u32) -> ConnId {
        debug_assert_ne!(a, b);
        ConnId(a * (self.hosts - 1) + b - u32::from(b > a))
    }

    /// (replica, coordinator) of connection `c`: the host of its server and of its client.
    #[inline]
    pub fn ends(&self, c: ConnId) -> (u32, u32) {
        let a = c.0 / (self.hosts - 1);
        let j = c.0 % (self.hosts - 1);
        (j + u32::from(j >= a), a)
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
    fn next_arrival(&mut self, h: u32, now: SimTime, act: &mut Vec<Action>) {
        let at = now + self.gap(h);
        if at < self.start + self.window {
            act.push(Action::GetAt { host: h, at });
        } else {
            self.closed += 1;
        }
    }

    /// Start every host's arrivals at `now`.
    pub fn start(&mut self, now: SimTime, act: &mut Vec<Action>) {
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
    pub fn get(&mut self, h: u32, now: SimTime, act: &mut Vec<Action>) {
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
            self.to_read[c.index()].push_back(Request {
                end: self.asked_end[c.index()],
                size,
                put,
                measured,
            });
            self.end[c.index()] += reply;
            self.open[c.index()].push_back((g, self.end[c.index()], if put { 0 } else { size }));
            if measured {
                // The value crosses into the coordinator (a get) or the replica (a put).
                let into = if put { b } else { h };
                self.offered[into as usize] += size;
            }
            act.push(Action::Write {
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
        act: &mut Vec<Action>,
    ) {
        let i = c.index();
        while let Some(&r) = self.to_read[i].front() {
            if received < r.end {
                break;
            }
            self.to_read[i].pop_front();
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
                self.to_respond[i].push_back((r.size, r.put));
                act.push(Action::RespondAt { conn: c, at });
            }
        }
    }

    /// A jittered reply on `c` is due.
    pub fn respond(&mut self, c: ConnId, act: &mut Vec<Action>) {
        let (size, put) = self.to_respond[c.index()]
            .pop_front()
            .expect("a reply for every respond event");
        self.reply(c, size, put, act);
    }

    /// The server of `c` answers with a value of `size` bytes (a get) or acknowledges one
    /// (a put): now, or in its host's order.
    fn reply(&mut self, c: ConnId, size: u64, put: bool, act: &mut Vec<Action>) {
        if self.hol {
            let (b, _) = self.ends(c);
            self.serve_q[b as usize].push_back((c, size, put));
            act.push(Action::Serve { host: b });
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

    fn write_reply(&mut self, c: ConnId, size: u64, put: bool, act: &mut Vec<Action>) {
        if put {
            act.push(Action::Write {
                ep: c.sender(),
                bytes: self.request,
            });
        } else {
            Action::push_response(act, c.sender(), self.header, size);
        }
        self.written[c.index()] += self.reply_bytes(size, put);
    }

    /// Host `h`'s server writes the replies at the head of its queue while their connection's
    /// send buffer has room (`acked(c)`: bytes the server's end of `c` has had acknowledged).
    /// A reply into an empty buffer always goes, however big.
    pub fn serve(&mut self, h: u32, acked: impl Fn(ConnId) -> u64, act: &mut Vec<Action>) {
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
        act: &mut Vec<Action>,
    ) {
        let (_, a) = self.ends(c);
        while let Some(&(g, end, size)) = self.open[c.index()].front() {
            if received < end {
                break;
            }
            self.open[c.index()].pop_front();
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

    fn maybe_finish(&mut self, now: SimTime, act: &mut Vec<Action>) {
        if self.finish.is_none() && self.closed == self.hosts && self.live == 0 {
            self.finish = Some(now);
            act.push(Action::Finished);
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

/// The values' sizes: `value_size`, or drawn from `query_size_cdf`.
fn value_sizes(sc: &Scenario) -> SizeDist {
    let w = &sc.workload;
    if w.query_size_cdf.is_empty() {
        SizeDist::Uniform(w.value_size, w.value_size)
    } else {
        SizeDist::Cdf(w.query_size_cdf.clone())
    }
}

/// Whether an operation is a put, a share `fraction` of them. Drawn only when there are
/// puts, so a store of gets keeps its random sequence.
fn draw_put(rng: &mut Rng, fraction: f64) -> bool {
    fraction > 0.0 && {
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        u < fraction
    }
}

/// The time to a host's next get: exponential with mean `mean_gap` (a Poisson process).
fn exponential_gap(rng: &mut Rng, mean_gap: f64) -> SimTime {
    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    (-(1.0 - u).ln() * mean_gap) as SimTime
}

/// Choose the `replicas` distinct hosts of a key out of `hosts` into `pick`: R hosts in a
/// row from a random start on the ring, or R uniformly.
fn choose_replicas(
    placement: KvPlacement,
    hosts: u32,
    replicas: u32,
    rng: &mut Rng,
    pick: &mut Vec<u32>,
) {
    pick.clear();
    let n = hosts as u64;
    match placement {
        KvPlacement::Ring => {
            let first = rng.up_to(n - 1);
            for k in 0..replicas as u64 {
                pick.push(((first + k) % n) as u32);
            }
        }
        KvPlacement::Uniform => {
            // Floyd's sampling: R distinct of H in R draws.
            for j in n - replicas as u64..n {
                let t = rng.up_to(j) as u32;
                let v = if pick.contains(&t) { j as u32 } else { t };
                pick.push(v);
            }
        }
    }
}

/// One get of a [`plan`]: when it arrives at which coordinator, the value's size and its
/// replicas (the coordinator itself among them answers locally).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlannedGet {
    /// The coordinator.
    pub host: u32,
    /// Arrival, picoseconds from the start of the gets.
    pub at: SimTime,
    /// Value bytes each replica returns (a get) or is sent (a put).
    pub size: u64,
    /// A put.
    pub put: bool,
    /// The replicas, distinct hosts.
    pub replicas: Vec<u32>,
}

/// Every get of the scenario's store, in arrival order (ties by host): the arrivals, sizes
/// and replicas [`KvGets`] draws for the same scenario and seed, draw for draw, for a
/// generator outside the simulator (the emulator's real TCP) to run the same gets.
pub fn plan(sc: &Scenario) -> Vec<PlannedGet> {
    let w = &sc.workload;
    let sizes = value_sizes(sc);
    let mean_gap = PS_PER_S as f64 / sc.kv_gets_per_s();
    let hosts = sc.topology.senders;
    let mut out = Vec::new();
    let mut pick = Vec::with_capacity(w.kv_replicas as usize);
    for h in 0..hosts {
        let mut rng = Rng::stream(sc.seed, Stream::KvGets(h));
        // As KvGets: a gap when the arrivals start, then per operation its size, whether it
        // is a put, its replicas and the gap to the next.
        let mut at = exponential_gap(&mut rng, mean_gap);
        while at < w.kv_duration {
            let size = sizes.sample(&mut rng);
            let put = draw_put(&mut rng, w.kv_put_fraction);
            choose_replicas(w.kv_placement, hosts, w.kv_replicas, &mut rng, &mut pick);
            out.push(PlannedGet {
                host: h,
                at,
                size,
                put,
                replicas: pick.clone(),
            });
            at += exponential_gap(&mut rng, mean_gap);
        }
    }
    out.sort_by_key(|g| (g.at, g.host));
    out
}

/// What one host of the store saw, per second of the run (from the first get to the last
/// reply) unless said otherwise.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct KvHostReport {
    /// Gets this host coordinated.
    pub gets: u64,
    /// Value bytes its gets asked of remote replicas, over the arrival window, as a share of
    /// its link: the offered load.
    pub offered_load: f64,
    /// Value bytes it received from remote replicas, as a share of its link: the carried load.
    pub carried_load: f64,
    /// Share of the run its switch port spent serializing towards it (headers and every
    /// frame included): its average receive utilization.
    pub rx_utilization: f64,
    /// Share of the run its NIC spent serializing.
    pub tx_utilization: f64,
    /// Most bytes its switch port sent it in one millisecond, as a share of the link.
    pub peak_utilization_1ms: f64,
    /// Frames dropped at its switch port, per second.
    pub drops_per_s: f64,
    /// Retransmission timeouts of its connections' ends (either direction), per second.
    pub timeouts_per_s: f64,
    /// Segments its ends retransmitted, per second (what `netstat -s` counts).
    pub retransmits_per_s: f64,
}

/// What the whole store saw.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct KvReport {
    /// Hosts in the cluster.
    pub hosts: u32,
    /// Replicas per get.
    pub replicas: u32,
    /// Replies a get waits for.
    pub quorum: u32,
    /// Operations (gets and puts) per second arriving at each host.
    pub gets_per_s_per_host: f64,
    /// Gets issued.
    pub gets: u64,
    /// Gets that reached their quorum.
    pub completed: u64,
    /// Puts issued.
    pub puts: u64,
    /// Put latency, arrival to quorum of acknowledgments, picoseconds: median (0 without puts).
    pub put_latency_p50: SimTime,
    /// 99th percentile.
    pub put_latency_p99: SimTime,
    /// Get latency, arrival to quorum, picoseconds: median.
    pub latency_p50: SimTime,
    /// 99th percentile.
    pub latency_p99: SimTime,
    /// 99.9th percentile.
    pub latency_p999: SimTime,
    /// Largest.
    pub latency_max: SimTime,
    /// Mean, picoseconds.
    pub latency_mean: f64,
    /// Mean over hosts of [`KvHostReport::offered_load`].
    pub offered_load: f64,
    /// Mean over hosts of [`KvHostReport::carried_load`].
    pub carried_load: f64,
    /// Mean over hosts of [`KvHostReport::rx_utilization`].
    pub utilization: f64,
    /// Mean over hosts of [`KvHostReport::peak_utilization_1ms`].
    pub peak_utilization_1ms: f64,
    /// Mean over hosts of [`KvHostReport::drops_per_s`].
    pub drops_per_s_per_host: f64,
    /// Frames dropped per second at switch-to-switch ports (uplinks, trunks), all together:
    /// drops no host's port counts. Absent on a star, which has no such ports (the report
    /// keeps the star's shape, which the emulated store's report shares).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fabric_drops_per_s: Option<f64>,
    /// Timeouts per second, all hosts together.
    pub timeouts_per_s: f64,
    /// Mean over hosts of [`KvHostReport::retransmits_per_s`].
    pub retransmits_per_s_per_host: f64,
    /// Value bytes delivered per second, all hosts together, bits per second.
    pub goodput_bps: f64,
    /// Every host, in host order.
    pub per_host: Vec<KvHostReport>,
}

/// What the network and TCP saw of one host, for [`KvGets::report`].
#[derive(Debug, Clone, Copy, Default)]
pub struct HostCounters {
    /// Its physical host on the topology.
    pub phys: u32,
    /// Time its switch port spent serializing.
    pub rx_busy: SimTime,
    /// Time its NIC spent serializing.
    pub tx_busy: SimTime,
    /// Frames its switch port dropped.
    pub drops: u64,
    /// Timeouts of its endpoints.
    pub timeouts: u64,
    /// Segments its endpoints retransmitted.
    pub retransmits: u64,
}

impl HostCounters {
    /// What was counted after `base`.
    fn since(&self, base: &HostCounters) -> HostCounters {
        HostCounters {
            phys: self.phys,
            rx_busy: self.rx_busy - base.rx_busy,
            tx_busy: self.tx_busy - base.tx_busy,
            drops: self.drops - base.drops,
            timeouts: self.timeouts - base.timeouts,
            retransmits: self.retransmits - base.retransmits,
        }
    }
}

/// The `q`-quantile of sorted `v` (nearest rank), 0 if empty: how the store's latencies are
/// summarized (the emulated store's too, through `_core.nearest_rank`).
pub fn quantile(v: &[SimTime], q: f64) -> SimTime {
    if v.is_empty() {
        return 0;
    }
    let rank = (q * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

impl KvGets {
    /// Value bytes delivered to coordinators so far.
    pub fn delivered(&self) -> u64 {
        self.received.iter().sum()
    }

    /// The store's report at `now` from each host's counters and the frames the
    /// switch-to-switch ports dropped in all.
    pub fn report(
        &self,
        now: SimTime,
        hosts: &[HostCounters],
        fabric_drops: Option<u64>,
    ) -> KvReport {
        let span = self
            .finish
            .unwrap_or(now)
            .saturating_sub(self.measure_from());
        let window = self.window - self.warmup;
        let secs = span as f64 / PS_PER_S as f64;
        let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        let link_bytes = |t: SimTime| self.link_bps as f64 / 8.0 * t as f64 / PS_PER_S as f64;
        let share = |bytes: u64, t: SimTime| {
            let cap = link_bytes(t);
            if cap > 0.0 {
                bytes as f64 / cap
            } else {
                0.0
            }
        };
        let per_host: Vec<KvHostReport> = hosts
            .iter()
            .enumerate()
            .map(|(i, hc)| (i, hc.since(&self.baseline[i])))
            .map(|(i, hc)| KvHostReport {
                gets: self.issued[i],
                offered_load: share(self.offered[i], window),
                carried_load: share(self.received[i], span),
                rx_utilization: utilization(hc.rx_busy, span),
                tx_utilization: utilization(hc.tx_busy, span),
                // A frame is counted in the window its last bit arrives in, so a window may
                // hold one frame more than the link can carry in it.
                peak_utilization_1ms: share(self.peak[hc.phys as usize].peak(), PEAK_WINDOW)
                    .min(1.0),
                drops_per_s: per_s(hc.drops),
                timeouts_per_s: per_s(hc.timeouts),
                retransmits_per_s: per_s(hc.retransmits),
            })
            .collect();
        let mean = |f: fn(&KvHostReport) -> f64| {
            per_host.iter().map(f).sum::<f64>() / per_host.len().max(1) as f64
        };
        let mut lat = self.latencies.clone();
        lat.sort_unstable();
        let mut put_lat = self.put_latencies.clone();
        put_lat.sort_unstable();
        KvReport {
            hosts: self.hosts,
            replicas: self.replicas,
            quorum: self.quorum,
            gets_per_s_per_host: PS_PER_S as f64 / self.mean_gap,
            gets: self.issued.iter().sum(),
            completed: lat.len() as u64,
            puts: self.puts,
            put_latency_p50: quantile(&put_lat, 0.5),
            put_latency_p99: quantile(&put_lat, 0.99),
            latency_p50: quantile(&lat, 0.5),
            latency_p99: quantile(&lat, 0.99),
            latency_p999: quantile(&lat, 0.999),
            latency_max: lat.last().copied().unwrap_or(0),
            latency_mean: lat.iter().map(|&t| t as f64).sum::<f64>() / lat.len().max(1) as f64,
            offered_load: mean(|h| h.offered_load),
            carried_load: mean(|h| h.carried_load),
            utilization: mean(|h| h.rx_utilization),
            peak_utilization_1ms: mean(|h| h.peak_utilization_1ms),
            drops_per_s_per_host: mean(|h| h.drops_per_s),
            fabric_drops_per_s: fabric_drops.map(|d| per_s(d - self.fabric_baseline)),
            timeouts_per_s: per_host.iter().map(|h| h.timeouts_per_s).sum(),
            retransmits_per_s_per_host: mean(|h| h.retransmits_per_s),
            goodput_bps: per_s(self.delivered()) * 8.0,
            per_host,
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
                Action::Write { ep, bytes } => {
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
                        Action::GetAt { host, at } => Some((*at, *host)),
                        _ => None,
                    })
                    .min();
                let Some((at, h)) = next else { break };
                act.retain(
                    |a| !matches!(a, Action::GetAt { host, at: t } if *host == h && *t == at),
                );
                let mut out = Vec::new();
                kv.get(h, at, &mut out);
                let mut put = false;
                let mut remote: Vec<u32> = out
                    .iter()
                    .filter_map(|a| match a {
                        Action::Write { ep, bytes } => {
                            // A put's request carries its value.
                            put |= *bytes > sc.workload.request_size;
                            Some(kv.ends(ep.conn()).0)
                        }
                        _ => None,
                    })
                    .collect();
                remote.sort_unstable();
                issued.push((h, at, put && !remote.is_empty(), remote));
                act.extend(
                    out.into_iter()
                        .filter(|a| matches!(a, Action::GetAt { .. })),
                );
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
                vec![Action::Write {
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
                    Action::Write { ep, bytes } => {
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
                vec![Action::Write {
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
        assert_eq!(act, vec![Action::Serve { host: 2 }; 3]);
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
