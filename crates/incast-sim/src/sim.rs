//! The simulation: owns the clock, the event queue, the network, every TCP endpoint and the
//! workload, and moves packets between them.

use std::collections::VecDeque;

use thiserror::Error;

use crate::config::{ConfigError, RtoRandomization, Scenario};
use crate::engine::{Event, EventQueue};
use crate::net::{Enqueued, Packet, PacketPool, PktId, QueueStats, CE, ECT};
use crate::report::{FlowReport, QueueReport, Report, RunSummary, Series};
use crate::rng::Rng;
use crate::tasks::Tasks;
use crate::tcp::{Endpoint, RtoPolicy, RttEstimator, Segment, TcpParams};
use crate::topology::{LinkId, LinkRole, Network};
use crate::units::{to_secs, SimTime};
use crate::workload::Action;

/// Bytes a background flow offers: more than any run can send.
const BACKGROUND_BYTES: u64 = 1 << 50;

/// Why a run stopped without a report.
#[derive(Debug, Error)]
pub enum SimError {
    /// The scenario is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `run.max_events` was reached.
    #[error("stopped after {events} events (run.max_events = {limit}) at simulated time {at_s:.6}s with the workload unfinished; raise run.max_events or shrink the scenario")]
    EventBudget {
        /// Events processed.
        events: u64,
        /// The budget.
        limit: u64,
        /// Simulated time reached, seconds.
        at_s: f64,
    },
    /// `run.max_time` was reached.
    #[error("simulated time reached run.max_time ({limit_s}s) with the workload unfinished; raise run.max_time")]
    TimeBudget {
        /// The budget, seconds.
        limit_s: f64,
    },
    /// A bug: an invariant of the engine does not hold.
    #[error("internal simulator error: {0}")]
    Internal(String),
}

/// The next event, or why the run cannot go on: a budget is spent, nothing is pending while
/// `unfinished`, or time would go backwards.
pub(crate) fn next_event(
    events: &mut EventQueue,
    run: &crate::config::Run,
    processed: u64,
    now: SimTime,
    unfinished: &str,
) -> Result<(SimTime, Event), SimError> {
    if processed >= run.max_events {
        return Err(SimError::EventBudget {
            events: processed,
            limit: run.max_events,
            at_s: to_secs(now),
        });
    }
    let Some((t, ev)) = events.pop() else {
        return Err(SimError::Internal(format!(
            "no pending events but {unfinished}"
        )));
    };
    if t < now {
        return Err(SimError::Internal(format!(
            "time went backwards: {t} < {now}"
        )));
    }
    if t > run.max_time {
        return Err(SimError::TimeBudget {
            limit_s: to_secs(run.max_time),
        });
    }
    Ok((t, ev))
}

/// One run of one TCP scenario.
#[derive(Debug)]
pub struct TcpSimulation {
    sc: Scenario,
    now: SimTime,
    events: EventQueue,
    pkts: PacketPool,
    net: Network,
    eps: Vec<Endpoint>,
    /// Route each endpoint sends on.
    ep_route: Vec<u32>,
    /// Packets each endpoint has sent that wait out their host jitter, with release times.
    host_q: Vec<VecDeque<(SimTime, PktId)>>,
    /// Per-endpoint random streams for host jitter.
    host_rng: Vec<Rng>,
    wl: Tasks,
    out: Vec<Segment>,
    act: Vec<Action>,
    processed: u64,
    finished: bool,
    busy_at_start: SimTime,
    /// Bytes the background flows had delivered when the workload started.
    background_at_start: u64,
    series: Option<Series>,
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
        let wl = Tasks::new(&sc);
        let fg = wl.connections();
        let conns = fg + sc.background.flows;
        let params = TcpParams::from(&sc.tcp);
        let mut eps = Vec::with_capacity(2 * conns as usize);
        let mut ep_route = Vec::with_capacity(2 * conns as usize);
        let n = sc.topology.senders;
        for c in 0..conns {
            // Workload connection c is server c mod N's (each task has its own connections).
            let (server, client) = if c < fg {
                (net.host(c % n), net.receiver)
            } else {
                net.background_ends(&sc, c - fg)
            };
            // ECN is used only if both ends negotiated it (RFC 3168 6.1.1).
            let ecn = sc.tcp.ecn && (c < fg || sc.background.ecn.unwrap_or(sc.tcp.ecn));
            // Per-flow ECMP: each connection hashes onto one path (both directions alike).
            let path = Rng::new(sc.seed, (5 << 32) + c as u64).next_u64() as u32;
            let to_server = net.add_route(client, server, path);
            let to_client = net.add_route(server, client, path);
            let handshake = net.latency(to_server, sc.tcp.header_bytes)
                + net.latency(to_client, sc.tcp.header_bytes);
            for route in [to_server, to_client] {
                let ep = eps.len() as u64;
                let rtt = RttEstimator::new(
                    sc.tcp.rto_min,
                    sc.tcp.rto_max,
                    sc.tcp.rto_initial,
                    sc.tcp.clock_granularity,
                )
                .with_formula(sc.tcp.rto_formula);
                let p = TcpParams {
                    ecn,
                    ..params.clone()
                };
                let mut e = Endpoint::new(p, rtt, Some(handshake));
                if sc.tcp.rto_randomization != RtoRandomization::None {
                    let rng = Rng::new(sc.seed, (2 << 32) + ep);
                    e = e.with_rto_policy(RtoPolicy::new(&sc.tcp, fg, rng));
                }
                eps.push(e);
                ep_route.push(route);
            }
        }
        let mut sim = TcpSimulation {
            now: 0,
            events: EventQueue::default(),
            pkts: PacketPool::default(),
            net,
            host_q: vec![VecDeque::new(); eps.len()],
            host_rng: (0..eps.len() as u64)
                .map(|e| Rng::new(sc.seed, (1 << 32) + e))
                .collect(),
            eps,
            ep_route,
            wl,
            out: Vec::new(),
            act: Vec::new(),
            processed: 0,
            finished: false,
            busy_at_start: 0,
            background_at_start: 0,
            series: (sc.run.sample_interval > 0).then(|| Series {
                cwnd: vec![Vec::new(); fg as usize],
                ..Series::default()
            }),
            sc,
        };
        for c in fg..conns {
            sim.write(2 * c + 1, BACKGROUND_BYTES);
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
                let link = &mut self.net.links[l as usize];
                let head = link.head().expect("a TxDone event has a packet in service");
                let p = *self.pkts.get(head);
                if self.net.pooled[l as usize] {
                    if let Some(pool) = self.net.pool.as_mut() {
                        pool.release(p.frame as u64);
                    }
                }
                let (pipe_was_empty, next) = link.finish_tx(self.now);
                if pipe_was_empty {
                    self.events.push(self.now + link.delay, Event::Arrive(l));
                }
                if let Some(t) = next {
                    self.events.push(t, Event::TxDone(l));
                }
                if self.net.pfc.is_some() && p.hop > 0 {
                    self.pfc_release(&p);
                }
            }
            Event::Pause(l, on) => {
                let link = &mut self.net.links[l as usize];
                if on {
                    link.pause(self.now);
                } else if let Some(t) = link.resume(self.now) {
                    self.events.push(t, Event::TxDone(l));
                }
            }
            Event::Arrive(l) => {
                let (id, next) = self.net.links[l as usize].arrive();
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
                if self.eps[ep as usize].rto_timer.fire(self.now, gen) {
                    let mut out = std::mem::take(&mut self.out);
                    let before = self.eps[ep as usize].stats.timeouts;
                    self.eps[ep as usize].on_rto(self.now, &mut out);
                    let fired = self.eps[ep as usize].stats.timeouts - before;
                    if ep % 2 == 1 && ep / 2 < self.wl.connections() {
                        self.wl.add_timeouts(ep / 2, fired as u64);
                    }
                    self.out = out;
                    self.transmit(ep);
                }
                self.sync_timers(ep);
            }
            Event::DelAck(ep, gen) => {
                if self.eps[ep as usize].delack_timer.fire(self.now, gen) {
                    let mut out = std::mem::take(&mut self.out);
                    self.eps[ep as usize].on_delack(&mut out);
                    self.out = out;
                    self.transmit(ep);
                }
                self.sync_timers(ep);
            }
            Event::HostTx(ep) => {
                let q = &mut self.host_q[ep as usize];
                let (_, id) = q.pop_front().expect("a HostTx event has a packet");
                if let Some(&(t, _)) = q.front() {
                    self.events.push(t, Event::HostTx(ep));
                }
                let first = self.net.hop(self.ep_route[ep as usize], 0);
                self.enqueue(first.expect("routes are never empty"), id);
            }
            Event::Request(conn) => {
                let mut act = std::mem::take(&mut self.act);
                self.wl.request(conn, self.now, &mut act);
                self.apply(act);
            }
            Event::Respond(conn) => {
                let mut act = std::mem::take(&mut self.act);
                self.wl.respond(conn, &mut act);
                self.apply(act);
            }
            Event::Start => {
                self.busy_at_start = self.net.links[self.net.bottleneck as usize].stats.busy;
                self.background_at_start = self.background_bytes();
                let mut act = std::mem::take(&mut self.act);
                self.wl.start(self.now, &mut act);
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
        let ingress_delay = ingress.map_or(0, |up| self.net.links[up as usize].delay);
        let link = &mut self.net.links[l as usize];
        let p = self.pkts.get_mut(id);
        if let Some(red) = self.net.red[l as usize].as_mut() {
            if red.on_arrival(link.queued_bytes()) == crate::red::Verdict::Signal {
                if red.ecn && p.ecn & ECT != 0 {
                    p.ecn |= CE;
                    link.stats.marks += 1;
                } else {
                    link.count_drop();
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
            let held = &mut pfc.ingress[up as usize];
            if *held + frame as u64 > pfc.limit {
                link.count_drop();
                self.pkts.free(id);
                return;
            }
            *held += frame as u64;
            if *held >= pfc.xoff && !pfc.paused[up as usize] {
                pfc.paused[up as usize] = true;
                // The pause frame crosses the link back to its sender.
                self.events
                    .push(self.now + ingress_delay, Event::Pause(up, true));
            }
            if let Enqueued::Transmitting(t) = link.enqueue(self.now, id, frame) {
                self.events.push(t, Event::TxDone(l));
            }
            return;
        }
        let pool = if self.net.pooled[l as usize] {
            self.net.pool.as_mut()
        } else {
            None
        };
        if let Some(pool) = pool.as_ref() {
            if !pool.admits(link.queued_bytes(), frame as u64) {
                link.count_drop();
                self.pkts.free(id);
                return;
            }
        }
        match link.enqueue(self.now, id, frame) {
            Enqueued::Dropped => self.pkts.free(id),
            e => {
                if let Some(pool) = pool {
                    pool.take(frame as u64);
                }
                if let Enqueued::Transmitting(t) = e {
                    self.events.push(t, Event::TxDone(l));
                }
            }
        }
    }

    /// A frame left the switch: its ingress holds less, and may be resumed.
    fn pfc_release(&mut self, p: &Packet) {
        let up = self
            .net
            .hop(p.route, p.hop - 1)
            .expect("hop > 0 has a previous link");
        let pfc = self.net.pfc.as_mut().expect("PFC is on");
        let held = &mut pfc.ingress[up as usize];
        *held -= p.frame as u64;
        if pfc.paused[up as usize] && *held <= pfc.xon {
            pfc.paused[up as usize] = false;
            let delay = self.net.links[up as usize].delay;
            self.events.push(self.now + delay, Event::Pause(up, false));
        }
    }

    fn deliver(&mut self, id: PktId) {
        let p = *self.pkts.get(id);
        self.pkts.free(id);
        let ep = p.dst;
        let mut out = std::mem::take(&mut self.out);
        let delivered = self.eps[ep as usize].on_segment(
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
        let conn = ep / 2;
        if delivered > 0 && conn < self.wl.connections() {
            let received = self.eps[ep as usize].received();
            let mut act = std::mem::take(&mut self.act);
            if ep.is_multiple_of(2) {
                self.wl.on_client_data(conn, received, self.now, &mut act);
            } else {
                self.wl.on_server_data(conn, received, self.now, &mut act);
            }
            self.apply(act);
        }
        let mut out = std::mem::take(&mut self.out);
        self.eps[ep as usize].flush_ack(&mut out);
        self.out = out;
        self.transmit(ep);
        self.sync_timers(ep);
    }

    fn apply(&mut self, mut act: Vec<Action>) {
        for a in act.drain(..) {
            match a {
                Action::Write { ep, bytes } => self.write(ep, bytes),
                Action::RespondAt { conn, at } => self.events.push(at, Event::Respond(conn)),
                Action::RequestAt { conn, at } => self.events.push(at, Event::Request(conn)),
                Action::Finished => self.finished = true,
            }
        }
        self.act = act;
    }

    fn write(&mut self, ep: u32, bytes: u64) {
        let mut out = std::mem::take(&mut self.out);
        self.eps[ep as usize].write(self.now, bytes, &mut out);
        self.out = out;
        self.transmit(ep);
        self.sync_timers(ep);
    }

    /// Put the segments endpoint `ep` emitted on its route.
    fn transmit(&mut self, ep: u32) {
        let route = self.ep_route[ep as usize];
        let first = self.net.hop(route, 0).expect("routes are never empty");
        let header = self.sc.tcp.header_bytes;
        let jitter = self.sc.topology.host_jitter;
        let mut out = std::mem::take(&mut self.out);
        for s in out.drain(..) {
            let frame = s.len as u64 + header + sack_option_bytes(s.nsack);
            let id = self.pkts.alloc(Packet {
                route,
                hop: 0,
                nsack: s.nsack,
                ecn: s.ecn,
                dst: ep ^ 1,
                seq: s.seq,
                len: s.len,
                frame: frame as u32,
                ack: s.ack,
                sack: s.sack,
            });
            if jitter == 0 {
                self.enqueue(first, id);
                continue;
            }
            let q = &mut self.host_q[ep as usize];
            let mut at = self.now + self.host_rng[ep as usize].up_to(jitter);
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
        let fg = self.wl.connections() as usize;
        (fg..self.eps.len() / 2)
            .map(|c| self.eps[2 * c].received())
            .sum()
    }

    fn sync_timers(&mut self, ep: u32) {
        let e = &mut self.eps[ep as usize];
        if let Some((t, gen)) = e.rto_timer.needs_event() {
            self.events.push(t, Event::Rto(ep, gen));
        }
        if let Some((t, gen)) = e.delack_timer.needs_event() {
            self.events.push(t, Event::DelAck(ep, gen));
        }
    }

    fn sample(&mut self) {
        let Some(series) = self.series.as_mut() else {
            return;
        };
        series.t.push(self.now - self.wl.start_time());
        series
            .queue_bytes
            .push(self.net.links[self.net.bottleneck as usize].queued_bytes());
        for (c, w) in series.cwnd.iter_mut().enumerate() {
            w.push(self.eps[2 * c + 1].cwnd());
        }
        if !self.finished && series.t.len() < self.sc.run.max_samples as usize {
            self.events
                .push(self.now + self.sc.run.sample_interval, Event::Sample);
        }
    }

    /// Check every endpoint's scoreboard and every queue against its limit.
    pub fn check_invariants(&self) -> Result<(), String> {
        for (i, e) in self.eps.iter().enumerate() {
            e.check_invariants()
                .map_err(|m| format!("endpoint {i}: {m}"))?;
        }
        if let Some(pool) = &self.net.pool {
            let queued: u64 = (0..self.net.links.len())
                .filter(|&i| self.net.pooled[i])
                .map(|i| self.net.links[i].queued_bytes())
                .sum();
            if queued != pool.used() || pool.used() > pool.total() {
                return Err(format!(
                    "shared buffer holds {} of {} bytes, its queues {}",
                    pool.used(),
                    pool.total(),
                    queued
                ));
            }
        }
        if let Some(pfc) = &self.net.pfc {
            let queued: u64 = (0..self.net.links.len() as u32)
                .filter(|&l| self.net.is_port(l))
                .map(|l| self.net.links[l as usize].queued_bytes())
                .sum();
            let held: u64 = pfc.ingress.iter().sum();
            if held != queued || pfc.ingress.iter().any(|&b| b > pfc.limit) {
                return Err(format!(
                    "PFC ingresses hold {held} bytes (limit {} each), the ports {queued}",
                    pfc.limit
                ));
            }
        }
        for (i, l) in self.net.links.iter().enumerate() {
            let lim = l.limit();
            if lim.bytes.is_some_and(|b| l.stats.max_bytes > b)
                || lim.packets.is_some_and(|p| l.stats.max_packets > p)
            {
                return Err(format!("link {i} exceeded its limit"));
            }
        }
        Ok(())
    }

    /// The report of the run so far (complete once [`Simulation::step`] returned true).
    pub fn report(&self) -> Report {
        let fg = self.wl.connections();
        let conns = self.eps.len() as u32 / 2;
        let mut flows = Vec::with_capacity(conns as usize);
        let mut timeout_runs = vec![0u64; crate::tcp::TIMEOUT_RUN_BUCKETS];
        let (mut timeouts, mut recoveries, mut retx_fast, mut retx_timeout) = (0, 0, 0, 0);
        let mut ecn_reductions = 0;
        for c in 0..conns {
            let s = &self.eps[(2 * c + 1) as usize].stats;
            let background = c >= fg;
            if !background {
                timeouts += s.timeouts as u64;
                recoveries += s.recoveries as u64;
                retx_fast += s.retx_fast as u64;
                retx_timeout += s.retx_timeout as u64;
                ecn_reductions += s.ecn_reductions as u64;
                for (k, n) in s.timeout_runs.iter().enumerate() {
                    timeout_runs[k] += *n as u64;
                }
            }
            flows.push(FlowReport {
                flow: c,
                background,
                bytes: self.eps[(2 * c) as usize].received(),
                fct: if background { None } else { self.wl.fct(c) },
                timeouts: s.timeouts,
                fast_recoveries: s.recoveries,
                retx_fast: s.retx_fast,
                retx_timeout: s.retx_timeout,
                max_successive_timeouts: s.max_timeout_run,
                ecn_reductions: s.ecn_reductions,
                spurious_timeouts: s.spurious_timeouts,
                rounds: s.rounds.clone(),
            });
        }
        let bn = self.net.bottleneck;
        let mut ports = QueueStats::default();
        let mut nics = QueueStats::default();
        let mut drops = 0;
        for (i, l) in self.net.links.iter().enumerate() {
            drops += l.stats.drops;
            if i as u32 == bn {
                continue;
            }
            let agg = match self.net.roles[i] {
                LinkRole::Port(_) | LinkRole::Fabric => &mut ports,
                LinkRole::Nic(_) => &mut nics,
            };
            agg.drops += l.stats.drops;
            agg.max_bytes = agg.max_bytes.max(l.stats.max_bytes);
            agg.max_packets = agg.max_packets.max(l.stats.max_packets);
            agg.tx_packets += l.stats.tx_packets;
            agg.tx_bytes += l.stats.tx_bytes;
            agg.busy += l.stats.busy;
            agg.marks += l.stats.marks;
            agg.pauses += l.stats.pauses;
            agg.paused += l.stats.paused;
        }
        let bottleneck = QueueReport {
            name: self.net.name(bn),
            limit: self.net.limit(bn),
            stats: self.net.links[bn as usize].stats.clone(),
        };
        let queues = vec![
            bottleneck.clone(),
            QueueReport {
                name: "ports-to-senders".into(),
                limit: self.sc.topology.buffer,
                stats: ports,
            },
            QueueReport {
                name: "nics".into(),
                limit: self.sc.topology.nic_buffer,
                stats: nics,
            },
        ];
        let end = self.wl.finish_time().unwrap_or(self.now);
        let duration = end.saturating_sub(self.wl.start_time());
        let app_bytes: u64 = (0..fg).map(|c| self.eps[(2 * c) as usize].received()).sum();
        let busy = bottleneck.stats.busy - self.busy_at_start;
        Report {
            background_bps: crate::units::rate_of(
                self.background_bytes() - self.background_at_start,
                duration,
            ),
            pfc_pauses: self.net.links.iter().map(|l| l.stats.pauses).sum(),
            block_times: self.wl.block_times(),
            query_fcts: self.wl.query_fcts().to_vec(),
            block_timeouts: self.wl.block_timeouts(),
            timeouts,
            timeout_runs,
            fast_recoveries: recoveries,
            retx_fast,
            retx_timeout,
            ecn_reductions,
            drops,
            queues,
            shared_buffer_max_bytes: self.net.pool.as_ref().map(|p| p.max_used),
            series: self.series.clone(),
            ..Report::of_run(RunSummary {
                senders: self.sc.topology.senders,
                workload: self.sc.workload.kind,
                app_bytes,
                start: self.wl.start_time(),
                end,
                now: self.now,
                events: self.processed,
                base_latency: self.net.latency_between(
                    self.net.host(0),
                    self.net.receiver,
                    self.sc.full_frame(),
                ),
                link_bps: self.sc.topology.receiver_link,
                flows,
                bottleneck,
                bottleneck_busy: busy,
            })
        }
    }
}

/// One run of one scenario, whatever its transport.
#[derive(Debug)]
pub enum Simulation {
    /// TCP connections.
    Tcp(Box<TcpSimulation>),
    /// NDP flows.
    Ndp(Box<crate::ndp::NdpSimulation>),
}

impl Simulation {
    /// Validate `sc` and set up the run.
    pub fn new(sc: Scenario) -> Result<Simulation, SimError> {
        Ok(match sc.transport {
            crate::config::Transport::Tcp => Simulation::Tcp(Box::new(TcpSimulation::new(sc)?)),
            crate::config::Transport::Ndp => {
                Simulation::Ndp(Box::new(crate::ndp::NdpSimulation::new(sc)?))
            }
        })
    }

    /// Run to completion.
    pub fn run(mut self) -> Result<Report, SimError> {
        while !self.step(u64::MAX)? {}
        Ok(self.report())
    }

    /// Process up to `max` events; `Ok(true)` once the workload has completed.
    pub fn step(&mut self, max: u64) -> Result<bool, SimError> {
        match self {
            Simulation::Tcp(s) => s.step(max),
            Simulation::Ndp(s) => s.step(max),
        }
    }

    /// Current simulated time.
    pub fn now(&self) -> SimTime {
        match self {
            Simulation::Tcp(s) => s.now(),
            Simulation::Ndp(s) => s.now(),
        }
    }

    /// Events processed so far.
    pub fn events_processed(&self) -> u64 {
        match self {
            Simulation::Tcp(s) => s.events_processed(),
            Simulation::Ndp(s) => s.events_processed(),
        }
    }

    /// Whether the workload has completed.
    pub fn finished(&self) -> bool {
        match self {
            Simulation::Tcp(s) => s.finished(),
            Simulation::Ndp(s) => s.finished(),
        }
    }

    /// The scenario being run.
    pub fn scenario(&self) -> &Scenario {
        match self {
            Simulation::Tcp(s) => s.scenario(),
            Simulation::Ndp(s) => s.scenario(),
        }
    }

    /// Check the engine's invariants.
    pub fn check_invariants(&self) -> Result<(), String> {
        match self {
            Simulation::Tcp(s) => s.check_invariants(),
            Simulation::Ndp(s) => s.check_invariants(),
        }
    }

    /// The report of the run so far.
    pub fn report(&self) -> Report {
        match self {
            Simulation::Tcp(s) => s.report(),
            Simulation::Ndp(s) => s.report(),
        }
    }
}
