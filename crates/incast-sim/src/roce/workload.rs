//! What a RoCE run delivers, as queue pairs and the messages posted to them: built from a
//! list of (source host, destination host, bytes, start) so any schedule of flows plugs in;
//! the incast (N servers × `flow_size` to one receiver, one queue pair each), the
//! synchronized read (every server's queue pair carries its SRU per block; a block starts when
//! the receiver holds all of the one before) and the flow schedule ([`crate::app::flows`]:
//! each flow a queue pair of its own, posted at its time) are such lists. The `background`
//! section's long-lived flows follow them, a queue pair each, started at once, the workload
//! after their warm-up.

use super::cc::Cc;
use super::receiver::Receiver;
use super::sender::{Sender, Timeouts};
use super::{Msg, Qp, Roce, POST};
use crate::config::{RoceCc, Scenario, WorkloadKind};
use crate::engine::driver::Cx;
use crate::engine::{Event, Timer};
use crate::rng::{Rng, Stream};
use crate::topology::{LinkId, Network};
use crate::units::SimTime;
use incast_workload::flows::Class;

use super::Pkt;

/// One flow of a schedule: a message of `bytes` from host `src` to host `dst`, posted at
/// `start` on a queue pair of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowSpec {
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Message bytes.
    pub bytes: u64,
    /// When it is posted, from the workload's start.
    pub start: SimTime,
    /// The incast burst it belongs to, in a flow schedule.
    pub burst: Option<u32>,
}

/// Packets of a background queue pair's one message: enough to outlast any incast (16.7 M
/// frames, 17 GB at the default MTU: 1.4 s at 100 Gbps), few enough that selective repeat's
/// bitmap of them stays 2 MB.
const BACKGROUND_PACKETS: u64 = 1 << 24;

/// How the messages follow one another.
#[derive(Debug)]
pub(super) enum Plan {
    /// Queue pair `i` carries message `i` of its spec, posted at the spec's start after the
    /// workload's.
    Flows(Vec<SimTime>),
    /// A synchronized read: `servers` queue pairs, one message each per block (message
    /// `b·servers + i` is server `i`'s of block `b`), each posted after a uniform draw in
    /// [0, `jitter`] from its block's start.
    Blocks {
        servers: u32,
        blocks: u32,
        /// The block under way, when it started, and its messages not yet complete.
        block: u32,
        started: SimTime,
        left: u32,
        /// Each completed block's duration.
        times: Vec<SimTime>,
        jitter: SimTime,
        rng: Rng,
    },
}

/// The queue pairs' specs and the plan of scenario `sc` on `net`: the workload's, then the
/// background flows' (as many as `background.flows`).
pub(super) fn specs(sc: &Scenario, net: &Network) -> (Vec<FlowSpec>, Plan) {
    let (mut specs, plan) = workload_specs(sc, net);
    specs.extend((0..sc.background.flows).map(|i| {
        let (src, dst) = net.background_ends(sc, i);
        FlowSpec {
            src,
            dst,
            bytes: BACKGROUND_PACKETS * sc.roce.mtu,
            start: 0,
            burst: None,
        }
    }));
    (specs, plan)
}

/// The workload's queue pairs and plan.
fn workload_specs(sc: &Scenario, net: &Network) -> (Vec<FlowSpec>, Plan) {
    let n = sc.topology.senders;
    let rx = net.receiver;
    let spec = |i: u32, bytes: u64| FlowSpec {
        src: net.host(i),
        dst: rx,
        bytes,
        start: 0,
        burst: None,
    };
    match sc.workload.kind {
        WorkloadKind::Flows => {
            let specs: Vec<FlowSpec> = crate::app::flows::schedule(sc)
                .iter()
                .map(|f| FlowSpec {
                    src: net.host(f.src),
                    dst: net.host(f.dst),
                    bytes: f.bytes,
                    start: f.start,
                    burst: match f.class {
                        Class::Background => None,
                        Class::Incast(id) => Some(id),
                    },
                })
                .collect();
            let starts = specs.iter().map(|s| s.start).collect();
            (specs, Plan::Flows(starts))
        }
        WorkloadKind::SyncRead => {
            let specs: Vec<FlowSpec> = (0..n).map(|i| spec(i, sc.sru_of(i))).collect();
            let plan = Plan::Blocks {
                servers: n,
                blocks: sc.workload.blocks,
                block: 0,
                started: 0,
                left: n,
                times: Vec::new(),
                jitter: sc.workload.jitter,
                rng: Rng::stream(sc.seed, Stream::Roce(0)),
            };
            (specs, plan)
        }
        // Validation lets RoCE run the incast, sync_read and flows workloads only.
        _ => {
            let size = sc.workload.flow_size.unwrap_or(0);
            let specs: Vec<FlowSpec> = (0..n).map(|i| spec(i, size)).collect();
            let starts = specs.iter().map(|s| s.start).collect();
            (specs, Plan::Flows(starts))
        }
    }
}

/// A path among the `n` between two hosts, drawn from `rng` (per-flow ECMP).
fn draw_path(rng: &mut Rng, n: u32) -> u32 {
    if n <= 1 {
        0
    } else {
        rng.up_to(u64::from(n) - 1) as u32
    }
}

impl Roce {
    /// One queue pair per spec, with its routes, frames and agents; every message laid out.
    pub(super) fn set_up(&mut self, sc: &Scenario, net: &mut Network, specs: &[FlowSpec]) {
        let r = &sc.roce;
        let mut rng = Rng::stream(sc.seed, Stream::Roce(1));
        let timeouts = Timeouts {
            rto: r.rto,
            low: r.rto_low,
            high: r.rto_high,
            low_packets: r.rto_low_packets,
        };
        for s in specs {
            let path = draw_path(&mut rng, net.paths_between(s.src, s.dst));
            let data_route = net.add_route(s.src, s.dst, path);
            let path = draw_path(&mut rng, net.paths_between(s.dst, s.src));
            let ack_route = net.add_route(s.dst, s.src, path);
            // HPCC's INT: each switch on the way (every link but the NIC's) adds a record.
            let switches = u64::from(net.path_len(s.src, s.dst).saturating_sub(1));
            let int_bytes = if r.cc == RoceCc::Hpcc {
                switches * r.int_hop_bytes
            } else {
                0
            };
            let line = net.links[LinkId(2 * s.src)].rate;
            let rate = if r.rate_limit > 0 {
                r.rate_limit.min(line)
            } else {
                line
            };
            let data_extra = r.header_bytes + int_bytes;
            let base_rtt = net.latency(data_route, r.mtu + data_extra)
                + net.latency(ack_route, r.control_bytes + int_bytes);
            self.qps.push(Qp {
                src: s.src,
                dst: s.dst,
                data_route,
                ack_route,
                data_extra: data_extra as u32,
                ctrl_frame: r.control_bytes as u32,
                ack_frame: (r.control_bytes + int_bytes) as u32,
                tx: Sender::new(
                    r.mtu as u32,
                    r.recovery,
                    r.window,
                    timeouts,
                    Cc::new(r, rate, base_rtt),
                )
                .whole_packets(r.window_whole_packets)
                .sack_reach(r.sack_bitmap),
                rx: Receiver::new(
                    r.recovery,
                    r.nack,
                    r.ack_every,
                    r.cnp_interval,
                    r.sack_bitmap,
                ),
                timer: Timer::default(),
                on_nic: false,
                msgs: Vec::new(),
                reported: 0,
            });
        }
        let (rounds, apps) = match &self.plan {
            Plan::Flows(starts) => (1, starts.len()),
            Plan::Blocks {
                blocks, servers, ..
            } => (*blocks, *servers as usize),
        };
        self.background = apps;
        self.bursts = specs.iter().map(|s| s.burst).collect();
        for _ in 0..rounds {
            self.lay_out(specs, 0..apps);
        }
        self.apps = self.msgs.len();
        self.pending = self.apps;
        self.lay_out(specs, apps..specs.len());
    }

    /// One message for each of queue pairs `qps`.
    fn lay_out(&mut self, specs: &[FlowSpec], qps: std::ops::Range<usize>) {
        for q in qps {
            self.qps[q].msgs.push(self.msgs.len() as u32);
            self.msgs.push(Msg {
                qp: q as u32,
                bytes: specs[q].bytes,
                posted: None,
                done: None,
            });
        }
    }

    /// Post the first messages (the others follow from their events or their block).
    pub(super) fn start_workload(&mut self, cx: &mut Cx<Pkt>) {
        let now = cx.now;
        self.background_at_start = self.background_bytes();
        // A schedule's messages: posted now, or an event each at its time (one push per
        // flow, no allocation; the heap holds them until then).
        for m in 0..self.apps {
            let t = match &self.plan {
                Plan::Flows(starts) => starts[m],
                Plan::Blocks { .. } => break,
            };
            match t {
                0 => self.post(cx, m as u32),
                t => cx.push(now + t, Event::Agent(m as u32, POST, 0)),
            }
        }
        if let Plan::Blocks { blocks, .. } = &self.plan {
            if *blocks > 0 {
                self.start_block(cx, 0);
            }
        }
    }

    /// Block `b` of a synchronized read starts: each server's message is posted, after its
    /// jitter.
    fn start_block(&mut self, cx: &mut Cx<Pkt>, b: u32) {
        let Plan::Blocks {
            servers,
            block,
            started,
            left,
            jitter,
            rng,
            ..
        } = &mut self.plan
        else {
            return;
        };
        (*block, *started, *left) = (b, cx.now, *servers);
        let (n, jitter) = (*servers, *jitter);
        let delays: Vec<SimTime> = (0..n)
            .map(|_| if jitter > 0 { rng.up_to(jitter) } else { 0 })
            .collect();
        for (i, d) in delays.into_iter().enumerate() {
            let m = b * n + i as u32;
            if d == 0 {
                self.post(cx, m);
            } else {
                cx.push(cx.now + d, Event::Agent(m, POST, 0));
            }
        }
    }

    /// Payload the background queue pairs delivered in order so far (full packets: their
    /// one message never ends within a run).
    pub(super) fn background_bytes(&self) -> u64 {
        let qps = &self.qps[self.background..];
        qps.iter().map(|q| u64::from(q.rx.epsn()) * self.mtu).sum()
    }

    /// Message `m` is posted to its queue pair now; the NIC serves the queue pair.
    pub(super) fn post(&mut self, cx: &mut Cx<Pkt>, m: u32) {
        let msg = &mut self.msgs[m as usize];
        msg.posted = Some(cx.now);
        let (q, bytes) = (msg.qp, msg.bytes);
        let qp = &mut self.qps[q as usize];
        let packets = bytes.div_ceil(self.mtu).max(1) as u32;
        qp.tx.post(bytes);
        qp.rx.post(packets);
        let host = qp.src;
        if !qp.on_nic {
            qp.on_nic = true;
            self.nics[host as usize].active.push(q);
        }
        self.pump(cx, host);
    }

    /// Message `m` arrived whole at its receiver now.
    pub(super) fn complete(&mut self, cx: &mut Cx<Pkt>, m: u32) {
        self.msgs[m as usize].done = Some(cx.now);
        if m as usize >= self.apps {
            return; // a background flow's: the workload does not wait for it
        }
        self.pending -= 1;
        let Plan::Blocks {
            blocks,
            block,
            started,
            left,
            times,
            ..
        } = &mut self.plan
        else {
            return;
        };
        *left -= 1;
        if *left == 0 {
            times.push(cx.now - *started);
            let next = *block + 1;
            if next < *blocks {
                self.start_block(cx, next);
            }
        }
    }
}
