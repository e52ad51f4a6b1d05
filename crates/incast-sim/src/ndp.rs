//! NDP (Handley et al., "Re-architecting datacenter networks and stacks for low latency and
//! high performance", SIGCOMM'17): a receiver-driven transport over trimming switches.
//!
//! - Senders start at line rate with an initial window of packets, sprayed over every path.
//! - A switch port keeps a small data queue (8 packets). A data packet arriving to a full one
//!   is trimmed to its header, which joins a priority header queue; so the receiver learns of
//!   every packet sent, lost payload or not. If the header queue overflows too, the header
//!   goes back to its sender (return-to-sender), or is dropped.
//! - The receiver ACKs data and NACKs headers at once, and for each arrival queues a PULL.
//!   Its pacer sends pulls at the rate of its own link, one per full packet; each pull lets a
//!   sender send one packet: a retransmission if it has one waiting, else new data. So after
//!   the first window, the receiver's link is exactly filled.
//!
//! Simplifications, on purpose: pulls are served first come first served across flows (the
//! paper round-robins them); trimming always trims the arriving packet (the paper sometimes
//! trims the queue's tail to avoid phase effects); a sender that hears nothing for `ndp.rto`
//! resends what is unacknowledged; control packets never bounce, a full header queue drops
//! them, which the timeout covers.

use std::collections::VecDeque;

use crate::config::Scenario;
use crate::engine::{Event, EventQueue, Timer};
use crate::net::QueueStats;
use crate::report::{FlowReport, NdpReport, QueueReport, Report};
use crate::rng::Rng;
use crate::sim::SimError;
use crate::topology::Network;
use crate::units::{tx_time, SimTime};

/// What an NDP packet is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Data,
    /// A data packet trimmed to its header.
    Header,
    /// A header returned to its sender by a full header queue.
    Bounce,
    Ack,
    Nack,
    Pull,
}

#[derive(Debug, Clone, Copy)]
struct Pkt {
    kind: Kind,
    flow: u32,
    /// Packet index within the flow (data, headers, ACKs, NACKs, bounces).
    seq: u32,
    /// Hosts the packet travels between, the path index and the hop it is on.
    src: u32,
    dst: u32,
    path: u32,
    hop: u16,
    /// Bytes on the wire, without preamble and gap.
    frame: u32,
}

/// Why a packet is sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cause {
    Nack,
    Bounce,
    Timeout,
}

/// A port: a data queue and a priority header queue served by weighted round robin, then a
/// propagation pipe. Host NICs never trim (their data queue is unbounded).
#[derive(Debug, Default)]
struct Port {
    data: VecDeque<u32>,
    hdr: VecDeque<u32>,
    hdr_bytes: u64,
    /// Header packets served since the last data packet.
    hdr_run: u32,
    /// The packet being serialized.
    serving: Option<u32>,
    pipe: VecDeque<(SimTime, u32)>,
    stats: QueueStats,
    max_data: u32,
}

#[derive(Debug)]
struct Flow {
    src: u32,
    packets: u32,
    bytes: u64,
    /// Next packet never sent.
    next_new: u32,
    acked: Vec<bool>,
    acked_count: u32,
    rtx: VecDeque<(u32, Cause)>,
    queued: Vec<bool>,
    /// Receiver side: packets received, and whether each was.
    received: u32,
    got: Vec<bool>,
    fct: Option<SimTime>,
    /// Packets sent and not yet answered (ACK, NACK or bounce): only these can time out.
    awaiting: Vec<bool>,
    in_flight: u32,
    /// When the last pull arrived, and the gap before it: how long a flow with nothing in
    /// flight can expect to wait for its next pull.
    last_pull: Option<SimTime>,
    pull_gap: SimTime,
    /// ACKs and NACKs received, and pulls received. The receiver queues one pull per
    /// packet it sees (until the flow completes), so while `answers > pulls` a pull is owed.
    answers: u32,
    pulls: u32,
    /// The sender's timer (see `arm_rto`).
    rto: Timer,
    retx: [u32; 3],
}

/// One run of an NDP incast.
#[derive(Debug)]
pub struct NdpSimulation {
    sc: Scenario,
    now: SimTime,
    events: EventQueue,
    net: Network,
    ports: Vec<Port>,
    /// Whether each port belongs to a switch (it trims).
    trims: Vec<bool>,
    pkts: Vec<Pkt>,
    free: Vec<u32>,
    flows: Vec<Flow>,
    rng: Rng,
    receiver: u32,
    pull_queue: VecDeque<u32>,
    pacer_busy: bool,
    pull_spacing: SimTime,
    last_pull: Option<SimTime>,
    done: u32,
    start: SimTime,
    finish: Option<SimTime>,
    processed: u64,
    stats: NdpReport,
}

impl NdpSimulation {
    /// Validate `sc` and set up the run.
    pub fn new(sc: Scenario) -> Result<NdpSimulation, SimError> {
        sc.validate()?;
        let net = Network::build(&sc);
        let n = sc.topology.senders;
        let size = sc.workload.flow_size.unwrap_or(0);
        let mtu = sc.ndp.mtu;
        let packets = size.div_ceil(mtu).max(1) as u32;
        let receiver = net.receiver;
        let ports = (0..net.links.len()).map(|_| Port::default()).collect();
        let trims = (0..net.links.len() as u32)
            .map(|l| net.is_port(l))
            .collect();
        let frame = mtu + sc.ndp.header_bytes + sc.tcp.phy_overhead;
        let flows = (0..n)
            .map(|f| Flow {
                src: net.host(f),
                packets,
                bytes: size,
                next_new: 0,
                acked: vec![false; packets as usize],
                acked_count: 0,
                rtx: VecDeque::new(),
                queued: vec![false; packets as usize],
                received: 0,
                got: vec![false; packets as usize],
                fct: None,
                awaiting: vec![false; packets as usize],
                in_flight: 0,
                last_pull: None,
                pull_gap: 0,
                answers: 0,
                pulls: 0,
                rto: Timer::default(),
                retx: [0; 3],
            })
            .collect();
        let mut sim = NdpSimulation {
            pull_spacing: tx_time(frame, sc.topology.receiver_link),
            rng: Rng::stream(sc.seed, crate::rng::Stream::Ndp),
            sc,
            now: 0,
            events: EventQueue::default(),
            net,
            ports,
            trims,
            pkts: Vec::new(),
            free: Vec::new(),
            flows,
            receiver,
            pull_queue: VecDeque::new(),
            pacer_busy: false,
            last_pull: None,
            done: 0,
            start: 0,
            finish: None,
            processed: 0,
            stats: NdpReport::default(),
        };
        sim.events.push(0, Event::Start);
        Ok(sim)
    }

    /// Current simulated time.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.processed
    }

    /// Whether every flow has completed.
    pub fn finished(&self) -> bool {
        self.finish.is_some()
    }

    /// The scenario being run.
    pub fn scenario(&self) -> &Scenario {
        &self.sc
    }

    /// Process up to `max` events; `Ok(true)` once every flow has completed.
    pub fn step(&mut self, max: u64) -> Result<bool, SimError> {
        let mut k = 0;
        while self.finish.is_none() && k < max {
            let (t, ev) = crate::sim::next_event(
                &mut self.events,
                &self.sc.run,
                self.processed,
                self.now,
                "NDP flows are unfinished",
            )?;
            self.now = t;
            self.processed += 1;
            k += 1;
            match ev {
                Event::Start => self.start_flows(),
                Event::TxDone(l) => self.tx_done(l),
                Event::Arrive(l) => self.arrive(l),
                Event::Rto(f, gen) => self.on_rto(f, gen),
                Event::PullTick => self.pull_tick(),
                other => {
                    return Err(SimError::Internal(format!(
                        "NDP: unexpected event {other:?}"
                    )))
                }
            }
        }
        Ok(self.finish.is_some())
    }

    /// Run to completion.
    pub fn run(mut self) -> Result<Report, SimError> {
        while !self.step(u64::MAX)? {}
        Ok(self.report())
    }

    fn alloc(&mut self, p: Pkt) -> u32 {
        match self.free.pop() {
            Some(id) => {
                self.pkts[id as usize] = p;
                id
            }
            None => {
                self.pkts.push(p);
                (self.pkts.len() - 1) as u32
            }
        }
    }

    fn random_path(&mut self, a: u32, b: u32) -> u32 {
        let n = self.net.paths_between(a, b);
        if n <= 1 {
            0
        } else {
            self.rng.up_to(n as u64 - 1) as u32
        }
    }

    fn start_flows(&mut self) {
        self.start = self.now;
        for f in 0..self.flows.len() as u32 {
            let iw = self
                .sc
                .ndp
                .initial_window
                .min(self.flows[f as usize].packets);
            for _ in 0..iw {
                self.send_new(f);
            }
        }
    }

    fn send_new(&mut self, f: u32) -> bool {
        let fl = &mut self.flows[f as usize];
        if fl.next_new >= fl.packets {
            return false;
        }
        let seq = fl.next_new;
        fl.next_new += 1;
        self.send_data(f, seq);
        true
    }

    fn send_data(&mut self, f: u32, seq: u32) {
        let fl = &self.flows[f as usize];
        let mtu = self.sc.ndp.mtu;
        let payload = (fl.bytes - seq as u64 * mtu).min(mtu);
        let frame = (payload + self.sc.ndp.header_bytes) as u32;
        let src = fl.src;
        let fl = &mut self.flows[f as usize];
        if !fl.awaiting[seq as usize] {
            fl.awaiting[seq as usize] = true;
            fl.in_flight += 1;
        }
        self.arm_rto(f);
        let path = self.random_path(src, self.receiver);
        self.stats.data_packets += 1;
        self.send(Pkt {
            kind: Kind::Data,
            flow: f,
            seq,
            src,
            dst: self.receiver,
            path,
            hop: 0,
            frame,
        });
    }

    fn send_control(&mut self, kind: Kind, f: u32, seq: u32) {
        let dst = self.flows[f as usize].src;
        let path = self.random_path(self.receiver, dst);
        self.send(Pkt {
            kind,
            flow: f,
            seq,
            src: self.receiver,
            dst,
            path,
            hop: 0,
            frame: self.sc.ndp.header_bytes as u32,
        });
    }

    fn send(&mut self, p: Pkt) {
        let id = self.alloc(p);
        let first = self
            .net
            .hop_via(p.src, p.dst, p.path, 0)
            .expect("paths are never empty");
        self.enqueue(first, id);
    }

    /// Offer packet `id` to link `l`: trim, bounce or drop at switch ports.
    fn enqueue(&mut self, l: u32, id: u32) {
        let p = self.pkts[id as usize];
        let is_data = p.kind == Kind::Data;
        let trims = self.trims[l as usize];
        let port = &mut self.ports[l as usize];
        if is_data {
            if !trims || port.data.len() < self.sc.ndp.data_queue as usize {
                port.data.push_back(id);
                port.max_data = port.max_data.max(port.data.len() as u32);
                return self.kick(l);
            }
            // Trim: the payload is lost, the header goes on with priority.
            self.stats.trimmed += 1;
            let pk = &mut self.pkts[id as usize];
            pk.kind = Kind::Header;
            pk.frame = self.sc.ndp.header_bytes as u32;
        }
        if !self.push_header(l, id) {
            if self.pkts[id as usize].kind == Kind::Header && self.sc.ndp.return_to_sender {
                self.bounce(id);
            } else {
                self.drop_header(l, id);
            }
        }
    }

    /// Put a header-sized packet in `l`'s priority queue and start the port; `false` if it
    /// is a switch port whose header queue is full.
    fn push_header(&mut self, l: u32, id: u32) -> bool {
        let frame = self.pkts[id as usize].frame as u64;
        let port = &mut self.ports[l as usize];
        if self.trims[l as usize] && port.hdr_bytes + frame > self.sc.ndp.header_queue {
            return false;
        }
        port.hdr.push_back(id);
        port.hdr_bytes += frame;
        port.stats.max_bytes = port.stats.max_bytes.max(port.hdr_bytes);
        self.kick(l);
        true
    }

    fn drop_header(&mut self, l: u32, id: u32) {
        self.ports[l as usize].stats.drops += 1;
        self.stats.dropped += 1;
        self.free.push(id);
    }

    /// Send a trimmed header back to its sender along the same path, reversed.
    fn bounce(&mut self, id: u32) {
        self.stats.bounced += 1;
        let p = self.pkts[id as usize];
        // The switch at forward position `hop` is at position `len - hop` going back.
        let back = self.net.path_len(p.src, p.dst) - p.hop;
        let pk = &mut self.pkts[id as usize];
        pk.kind = Kind::Bounce;
        std::mem::swap(&mut pk.src, &mut pk.dst);
        pk.hop = back;
        let l = self
            .net
            .hop_via(pk.src, pk.dst, pk.path, back)
            .expect("a bounce starts inside the path");
        // A bounce meeting a full header queue on its way back is dropped there.
        if !self.push_header(l, id) {
            self.drop_header(l, id);
        }
    }

    /// Start serializing on `l` if it is idle: headers first, but one data packet after
    /// every `header_weight` headers when data waits.
    fn kick(&mut self, l: u32) {
        let weight = self.sc.ndp.header_weight;
        let port = &mut self.ports[l as usize];
        if port.serving.is_some() {
            return;
        }
        let take_data = !port.data.is_empty() && (port.hdr.is_empty() || port.hdr_run >= weight);
        let id = if take_data {
            port.hdr_run = 0;
            port.data.pop_front()
        } else {
            let id = port.hdr.pop_front();
            if let Some(id) = id {
                port.hdr_run += 1;
                port.hdr_bytes -= self.pkts[id as usize].frame as u64;
            }
            id
        };
        let Some(id) = id else { return };
        port.serving = Some(id);
        let link = &self.net.links[l as usize];
        let t = tx_time(
            self.pkts[id as usize].frame as u64 + link.phy_overhead,
            link.rate,
        );
        port.stats.busy += t;
        self.events.push(self.now + t, Event::TxDone(l));
    }

    fn tx_done(&mut self, l: u32) {
        let delay = self.net.links[l as usize].delay;
        let port = &mut self.ports[l as usize];
        let id = port.serving.take().expect("TxDone on an idle NDP port");
        port.stats.tx_packets += 1;
        port.stats.tx_bytes += self.pkts[id as usize].frame as u64;
        if port.pipe.is_empty() {
            self.events.push(self.now + delay, Event::Arrive(l));
        }
        port.pipe.push_back((self.now + delay, id));
        self.kick(l);
    }

    fn arrive(&mut self, l: u32) {
        let port = &mut self.ports[l as usize];
        let (_, id) = port.pipe.pop_front().expect("Arrive on an empty NDP pipe");
        if let Some(&(t, _)) = port.pipe.front() {
            self.events.push(t, Event::Arrive(l));
        }
        let p = &mut self.pkts[id as usize];
        p.hop += 1;
        match self.net.hop_via(p.src, p.dst, p.path, p.hop) {
            Some(next) => self.enqueue(next, id),
            None => {
                let p = *p;
                self.free.push(id);
                self.deliver(p);
            }
        }
    }

    fn deliver(&mut self, p: Pkt) {
        let f = p.flow;
        match p.kind {
            Kind::Data => {
                let fl = &mut self.flows[f as usize];
                if !fl.got[p.seq as usize] {
                    fl.got[p.seq as usize] = true;
                    fl.received += 1;
                }
                let complete = fl.received == fl.packets;
                self.send_control(Kind::Ack, f, p.seq);
                if complete {
                    if self.flows[f as usize].fct.is_none() {
                        self.flows[f as usize].fct = Some(self.now - self.start);
                        self.done += 1;
                        if self.done == self.flows.len() as u32 {
                            self.finish = Some(self.now);
                        }
                    }
                } else {
                    self.queue_pull(f);
                }
            }
            Kind::Header => {
                self.stats.nacks += 1;
                self.send_control(Kind::Nack, f, p.seq);
                if self.flows[f as usize].fct.is_none() {
                    self.queue_pull(f);
                }
            }
            Kind::Ack => {
                let fl = &mut self.flows[f as usize];
                if !fl.acked[p.seq as usize] {
                    fl.acked[p.seq as usize] = true;
                    fl.acked_count += 1;
                }
                self.flows[f as usize].answers += 1;
                self.answered(f, p.seq);
            }
            Kind::Nack => {
                self.want_again(f, p.seq, Cause::Nack);
                self.flows[f as usize].answers += 1;
                self.answered(f, p.seq);
            }
            Kind::Pull => {
                self.stats.pulls += 1;
                let fl = &mut self.flows[f as usize];
                if let Some(t) = fl.last_pull {
                    fl.pull_gap = self.now - t;
                }
                fl.last_pull = Some(self.now);
                fl.pulls += 1;
                self.send_one(f);
            }
            Kind::Bounce => {
                self.want_again(f, p.seq, Cause::Bounce);
                self.answered(f, p.seq);
                // The receiver never saw this packet, so it owes no pull for it. If nothing
                // else is in flight and no pull is owed, nobody will pull this flow again:
                // resend one now. (So of a first window bounced whole, one packet goes
                // again at once and the rest wait for the pulls it earns.)
                let fl = &self.flows[f as usize];
                if fl.in_flight == 0 && fl.answers <= fl.pulls {
                    self.send_one(f);
                }
            }
        }
    }

    /// The fate of packet `seq` is known: it no longer needs the timer.
    fn answered(&mut self, f: u32, seq: u32) {
        let fl = &mut self.flows[f as usize];
        if fl.awaiting[seq as usize] {
            fl.awaiting[seq as usize] = false;
            fl.in_flight -= 1;
            // Restart the timer for what is still unanswered (a flow waiting only for
            // pulls, however long the receiver's queue of pulls, never times out).
            self.arm_rto(f);
        }
    }

    fn want_again(&mut self, f: u32, seq: u32, cause: Cause) {
        let fl = &mut self.flows[f as usize];
        if !fl.acked[seq as usize] && !fl.queued[seq as usize] {
            fl.queued[seq as usize] = true;
            fl.rtx.push_back((seq, cause));
        }
    }

    /// A pull arrived (or a bounce forces one): send a retransmission, else new data.
    fn send_one(&mut self, f: u32) {
        loop {
            let fl = &mut self.flows[f as usize];
            let Some((seq, cause)) = fl.rtx.pop_front() else {
                break;
            };
            fl.queued[seq as usize] = false;
            if fl.acked[seq as usize] {
                continue;
            }
            fl.retx[cause as usize] += 1;
            self.send_data(f, seq);
            return;
        }
        self.send_new(f);
    }

    fn queue_pull(&mut self, f: u32) {
        self.pull_queue.push_back(f);
        if !self.pacer_busy {
            self.pacer_busy = true;
            let at = match self.last_pull {
                Some(t) => (t + self.pull_spacing).max(self.now),
                None => self.now,
            };
            self.events.push(at, Event::PullTick);
        }
    }

    fn pull_tick(&mut self) {
        while let Some(f) = self.pull_queue.pop_front() {
            if self.flows[f as usize].fct.is_some() {
                continue;
            }
            self.send_control(Kind::Pull, f, 0);
            self.last_pull = Some(self.now);
            self.events
                .push(self.now + self.pull_spacing, Event::PullTick);
            return;
        }
        self.pacer_busy = false;
    }

    /// Keep a timer while something could be lost unnoticed: packets awaiting an answer
    /// (`ndp.rto`), or retransmissions waiting for a pull that was lost (100 `ndp.rto`, or
    /// four of the flow's last gaps between pulls if that is longer).
    fn arm_rto(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        let wait = if fl.in_flight > 0 {
            self.sc.ndp.rto
        } else if !fl.rtx.is_empty() {
            // Only a lost pull leaves a flow waiting here; pulls can be a whole pull queue
            // apart (N flows × one packet time), so wait long before resending.
            (100 * self.sc.ndp.rto).max(4 * fl.pull_gap)
        } else {
            return;
        };
        fl.rto.set(self.now + wait);
        self.sync_rto(f);
    }

    /// Schedule the timer's event if its deadline needs one (lazy, as TCP's timers).
    fn sync_rto(&mut self, f: u32) {
        if let Some((t, gen)) = self.flows[f as usize].rto.needs_event() {
            self.events.push(t, Event::Rto(f, gen));
        }
    }

    fn on_rto(&mut self, f: u32, gen: u32) {
        let fl = &mut self.flows[f as usize];
        if !fl.rto.fire(self.now, gen) {
            // Re-armed later since this event was scheduled: wait out the rest.
            self.sync_rto(f);
            return;
        }
        if fl.in_flight == 0 && fl.rtx.is_empty() {
            return;
        }
        self.stats.timeouts += 1;
        for seq in 0..fl.next_new {
            let fl = &mut self.flows[f as usize];
            if fl.awaiting[seq as usize] {
                fl.awaiting[seq as usize] = false;
                fl.in_flight -= 1;
                self.want_again(f, seq, Cause::Timeout);
            }
        }
        self.send_one(f);
        self.arm_rto(f);
    }

    /// The report of the run so far.
    pub fn report(&self) -> Report {
        let end = self.finish.unwrap_or(self.now);
        let duration = end.saturating_sub(self.start);
        let app_bytes: u64 = self
            .flows
            .iter()
            .filter(|f| f.fct.is_some())
            .map(|f| f.bytes)
            .sum();
        let mut stats = self.stats.clone();
        for f in &self.flows {
            stats.retx_nack += f.retx[Cause::Nack as usize] as u64;
            stats.retx_bounce += f.retx[Cause::Bounce as usize] as u64;
            stats.retx_timeout += f.retx[Cause::Timeout as usize] as u64;
        }
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| FlowReport {
                flow: i as u32,
                background: false,
                bytes: if f.fct.is_some() {
                    f.bytes
                } else {
                    f.received as u64 * self.sc.ndp.mtu
                },
                fct: f.fct,
                timeouts: 0,
                fast_recoveries: 0,
                retx_fast: f.retx[Cause::Nack as usize] + f.retx[Cause::Bounce as usize],
                retx_timeout: f.retx[Cause::Timeout as usize],
                max_successive_timeouts: 0,
                ecn_reductions: 0,
                spurious_timeouts: 0,
                rounds: Vec::new(),
            })
            .collect();
        let bn = self.net.bottleneck;
        let mut bstats = self.ports[bn as usize].stats.clone();
        bstats.max_packets = self.ports[bn as usize].max_data;
        let bottleneck = QueueReport {
            name: self.net.name(bn),
            limit: crate::config::QueueLimit {
                bytes: None,
                packets: Some(self.sc.ndp.data_queue),
            },
            stats: bstats,
        };
        let busy = self.ports[bn as usize].stats.busy;
        Report {
            senders: self.sc.topology.senders,
            workload: self.sc.workload.kind,
            app_bytes,
            start: self.start,
            duration,
            goodput_bps: crate::units::rate_of(app_bytes, duration),
            background_bps: 0.0,
            pfc_pauses: 0,
            base_latency: self.net.latency_between(
                self.net.host(0),
                self.receiver,
                self.sc.ndp.mtu + self.sc.ndp.header_bytes,
            ),
            link_bps: self.sc.topology.receiver_link,
            block_times: Vec::new(),
            query_fcts: Vec::new(),
            block_timeouts: Vec::new(),
            flows,
            timeouts: stats.timeouts,
            timeout_runs: vec![0; crate::tcp::TIMEOUT_RUN_BUCKETS],
            fast_recoveries: 0,
            retx_fast: stats.retx_nack + stats.retx_bounce,
            retx_timeout: stats.retx_timeout,
            ecn_reductions: 0,
            drops: stats.dropped,
            queues: vec![bottleneck.clone()],
            bottleneck,
            shared_buffer_max_bytes: None,
            bottleneck_utilization: if duration > 0 {
                (busy as f64 / duration as f64).min(1.0)
            } else {
                0.0
            },
            events: self.processed,
            end: self.now,
            series: None,
            ndp: Some(stats),
        }
    }

    /// Every packet is somewhere exactly once, and flows' counters agree with their bitmaps.
    pub fn check_invariants(&self) -> Result<(), String> {
        let queued: usize = self
            .ports
            .iter()
            .map(|p| p.data.len() + p.hdr.len() + p.pipe.len() + usize::from(p.serving.is_some()))
            .sum();
        if queued + self.free.len() != self.pkts.len() {
            return Err(format!(
                "NDP: {} packets allocated, {} in ports and {} free",
                self.pkts.len(),
                queued,
                self.free.len()
            ));
        }
        for (i, f) in self.flows.iter().enumerate() {
            let got = f.got.iter().filter(|&&g| g).count() as u32;
            let acked = f.acked.iter().filter(|&&a| a).count() as u32;
            if got != f.received || acked != f.acked_count || acked > got {
                return Err(format!(
                    "NDP flow {i}: received {got}/{}, acked {acked}",
                    f.received
                ));
            }
        }
        for (l, p) in self.ports.iter().enumerate() {
            if self.trims[l] && p.data.len() > self.sc.ndp.data_queue as usize {
                return Err(format!("NDP port {l}: data queue over its limit"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{TopologyKind, Transport, WorkloadKind};
    use crate::units::from_us;

    /// N flows of 270000 bytes on a k = 4 fat tree (16 hosts) at 10 Gbps with 1 µs links.
    fn incast(n: u32, iw: u32) -> Scenario {
        let mut sc = Scenario::example(n);
        sc.transport = Transport::Ndp;
        sc.ndp.initial_window = iw;
        sc.topology.kind = TopologyKind::FatTree;
        sc.topology.link = 10_000_000_000;
        sc.topology.receiver_link = 10_000_000_000;
        sc.topology.link_delay = from_us(1);
        sc.workload.kind = WorkloadKind::Incast;
        sc.workload.flow_size = Some(270_000);
        sc
    }

    fn optimal(r: &Report, n: u32) -> f64 {
        n as f64 * 270_000.0 * 8.0 / 1e10 * 1e12 + r.base_latency as f64
    }

    fn last_fct(r: &Report) -> f64 {
        r.flows.iter().map(|f| f.fct.unwrap()).max().unwrap() as f64
    }

    #[test]
    fn one_flow_completes_in_the_optimal_time_within_one_packet() {
        let r = NdpSimulation::new(incast(1, 10)).unwrap().run().unwrap();
        let packet = tx_time(9000 + 64 + 20, 10_000_000_000) as f64;
        assert!(
            (last_fct(&r) - optimal(&r, 1)).abs() <= packet,
            "{}",
            last_fct(&r)
        );
        let s = r.ndp.unwrap();
        assert_eq!((s.data_packets, s.trimmed, s.pulls), (30, 0, 29));
    }

    #[test]
    fn trims_pulls_and_retransmissions_add_up_and_every_byte_arrives_once() {
        for (n, iw) in [(15, 23), (12, 10), (6, 1)] {
            let mut sim = NdpSimulation::new(incast(n, iw)).unwrap();
            while !sim.step(100).unwrap() {
                sim.check_invariants().unwrap();
            }
            let r = sim.report();
            assert!(r
                .flows
                .iter()
                .all(|f| f.bytes == 270_000 && f.fct.is_some()));
            assert_eq!(r.app_bytes, n as u64 * 270_000);
            let s = r.ndp.unwrap();
            let retx = s.retx_nack + s.retx_bounce + s.retx_timeout;
            // Every data packet is a first transmission or a retransmission.
            assert_eq!(s.data_packets, n as u64 * 30 + retx, "n={n}");
            // Every trimmed packet reached the receiver as a header (and was NACKed), or
            // bounced, or was dropped.
            assert_eq!(s.trimmed, s.nacks + s.bounced + s.dropped, "n={n}");
            if iw > 1 {
                assert!(s.trimmed > 0 && s.retx_nack > 0, "n={n}");
            }
        }
    }

    #[test]
    fn iw_1_is_slow_for_few_senders_and_iw_10_is_near_optimal() {
        for n in [1, 2, 4] {
            let r = NdpSimulation::new(incast(n, 1)).unwrap().run().unwrap();
            assert!(last_fct(&r) > 1.5 * optimal(&r, n), "n={n}");
        }
        for iw in [10, 23] {
            for n in [1, 4, 8, 15] {
                let r = NdpSimulation::new(incast(n, iw)).unwrap().run().unwrap();
                let over = last_fct(&r) / optimal(&r, n) - 1.0;
                assert!(over < 0.05, "iw={iw} n={n}: {over}");
            }
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_run() {
        let a = NdpSimulation::new(incast(15, 10)).unwrap().run().unwrap();
        let b = NdpSimulation::new(incast(15, 10)).unwrap().run().unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn bad_ndp_scenarios_name_the_field() {
        let mut sc = incast(4, 10);
        sc.workload.kind = WorkloadKind::SyncRead;
        assert_eq!(sc.validate().unwrap_err().field, "workload.kind");
        let mut sc = incast(4, 10);
        sc.ndp.initial_window = 0;
        assert_eq!(sc.validate().unwrap_err().field, "ndp.initial_window");
        let mut sc = incast(4, 10);
        sc.topology.fat_tree_k = 5;
        assert_eq!(sc.validate().unwrap_err().field, "topology.fat_tree_k");
        let mut sc = incast(20, 10);
        sc.topology.fat_tree_k = 4;
        assert_eq!(sc.validate().unwrap_err().field, "topology.hosts");
        let mut sc = incast(4, 10);
        sc.topology.hosts = 3;
        assert_eq!(sc.validate().unwrap_err().field, "topology.hosts");
    }
}
