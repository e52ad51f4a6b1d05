//! What a Homa run delivers, as messages: the incast (one response of `flow_size` from each
//! sender to the receiver), the synchronized read (each server's SRU per block, a block
//! starting when the client holds all of the one before) and the flow schedule
//! ([`crate::app::flows`]: one message per flow, posted at its time). RTTbytes and the levels
//! are derived here from the topology and the messages when the scenario leaves them to be.

use super::levels::Levels;
use super::receiver::{Incoming, Scheduler};
use super::sender::Sender;
use super::{Homa, Host, Msg, Pkt, POST};
use crate::config::{Scenario, WorkloadKind};
use crate::engine::driver::Cx;
use crate::engine::{Event, Timer};
use crate::report::HomaReport;
use crate::rng::{Rng, Stream};
use crate::topology::{LinkId, Network};
use crate::units::{SimTime, PS_PER_S};
use incast_workload::flows::Class;

/// How the messages follow one another.
#[derive(Debug)]
pub(super) enum Plan {
    /// Message `i` is posted at `starts[i]` after the workload's start.
    Flows(Vec<SimTime>),
    /// A synchronized read: message `b·servers + i` is server `i`'s of block `b`, posted
    /// after a uniform draw in [0, `jitter`] from its block's start.
    Blocks {
        servers: u32,
        blocks: u32,
        block: u32,
        started: SimTime,
        left: u32,
        times: Vec<SimTime>,
        jitter: SimTime,
        rng: Rng,
    },
}

/// One message to lay out: ends, bytes, start, burst.
struct Spec {
    src: u32,
    dst: u32,
    bytes: u64,
    start: SimTime,
    burst: Option<u32>,
}

/// The workload's messages and plan.
fn specs(sc: &Scenario, net: &Network) -> (Vec<Spec>, Plan) {
    let n = sc.topology.senders;
    let rx = net.receiver;
    let spec = |i: u32, bytes: u64| Spec {
        src: net.host(i),
        dst: rx,
        bytes,
        start: 0,
        burst: None,
    };
    match sc.workload.kind {
        WorkloadKind::Flows => {
            let specs: Vec<Spec> = crate::app::flows::schedule(sc)
                .iter()
                .map(|f| Spec {
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
            let blocks = sc.workload.blocks;
            let specs = (0..blocks)
                .flat_map(|_| (0..n).map(|i| spec(i, sc.sru_of(i))))
                .collect();
            let plan = Plan::Blocks {
                servers: n,
                blocks,
                block: 0,
                started: 0,
                left: n,
                times: Vec::new(),
                jitter: sc.workload.jitter,
                rng: Rng::stream(sc.seed, Stream::Homa(0)),
            };
            (specs, plan)
        }
        // Validation lets Homa run the incast, sync_read and flows workloads only.
        _ => {
            let size = sc.workload.flow_size.unwrap_or(0);
            (
                (0..n).map(|i| spec(i, size)).collect(),
                Plan::Flows(vec![0; n as usize]),
            )
        }
    }
}

/// A path among the `n` between two hosts, drawn from `rng` (per-message ECMP).
fn draw_path(rng: &mut Rng, n: u32) -> u32 {
    if n <= 1 {
        0
    } else {
        rng.up_to(u64::from(n) - 1) as u32
    }
}

/// Buffer bytes of link `l`'s priority port: a switch port's queue limit (its packets as full
/// frames when it is given in packets); a host's NIC is unbounded (it holds one data packet).
pub(super) fn port_buffer(sc: &Scenario, net: &Network, l: LinkId) -> u64 {
    if !net.is_port(l) {
        return u64::MAX;
    }
    let lim = net.limit(l);
    let frame = sc.homa.mtu + sc.homa.header_bytes;
    let by_packets = lim.packets.map(|p| u64::from(p) * frame);
    match (lim.bytes, by_packets) {
        (Some(b), Some(p)) => b.min(p),
        (Some(b), None) => b,
        (None, Some(p)) => p,
        (None, None) => u64::MAX,
    }
}

/// Bytes a link of `rate` carries in `t`.
fn bytes_in(rate: u64, t: SimTime) -> u64 {
    (u128::from(rate) * u128::from(t) / 8 / u128::from(PS_PER_S)) as u64
}

impl Homa {
    /// Every message with its routes and agents, RTTbytes and the levels.
    pub(super) fn set_up(sc: &Scenario, net: &mut Network) -> Homa {
        let h = &sc.homa;
        let (specs, plan) = specs(sc, net);
        let mut rng = Rng::stream(sc.seed, Stream::Homa(1));
        let frame = h.mtu + h.header_bytes;
        let mut rtt_bytes = 0;
        let mut msgs = Vec::with_capacity(specs.len());
        for s in &specs {
            let path = draw_path(&mut rng, net.paths_between(s.src, s.dst));
            let data_route = net.add_route(s.src, s.dst, path);
            let path = draw_path(&mut rng, net.paths_between(s.dst, s.src));
            let ctrl_route = net.add_route(s.dst, s.src, path);
            let rtt = net.latency(data_route, frame) + net.latency(ctrl_route, h.control_bytes);
            rtt_bytes = rtt_bytes.max(bytes_in(net.links[LinkId(2 * s.src)].rate, rtt));
            msgs.push(Msg {
                src: s.src,
                dst: s.dst,
                bytes: s.bytes,
                data_route,
                ctrl_route,
                burst: s.burst,
                marked: false,
                posted: None,
                done: None,
            });
        }
        let rtt_bytes = match h.rtt_bytes {
            0 => rtt_bytes.max(h.mtu),
            b => b,
        };
        let sizes: Vec<u64> = specs.iter().map(|s| s.bytes).collect();
        let unsched_of = |b: u64| b.min(rtt_bytes);
        let levels = Levels::derive(
            h.priorities as u8,
            h.unsched_levels as u8,
            &h.unsched_cutoffs,
            &sizes,
            unsched_of,
        );
        let overcommit = match h.overcommit {
            0 => u32::from(levels.scheduled()),
            k => k,
        };
        let hosts = (0..net.hosts)
            .map(|_| Host {
                out: Vec::new(),
                queued: 0,
                sched: Scheduler::new(overcommit, levels.scheduled(), rtt_bytes, h.mtu),
                outstanding: 0,
            })
            .collect();
        let n = msgs.len();
        let stats = HomaReport {
            rtt_bytes,
            unsched_levels: u32::from(levels.unsched),
            unsched_cutoffs: levels.cutoffs.clone(),
            overcommit,
            ..HomaReport::default()
        };
        Homa {
            tx: msgs
                .iter()
                .map(|m| Sender::new(m.bytes, h.mtu, rtt_bytes, 0))
                .collect(),
            rx: (0..n).map(|_| Incoming::new(0, 0, h.mtu, 0)).collect(),
            timers: vec![Timer::default(); n],
            msgs,
            hosts,
            plan,
            pending: n,
            levels,
            rtt_bytes,
            mtu: h.mtu,
            header: h.header_bytes,
            ctrl: h.control_bytes as u32,
            timeout: h.resend_timeout,
            incast_threshold: h.incast_threshold,
            incast_unsched: h.incast_unsched_bytes,
            grants: Vec::new(),
            stats,
            capture_asked: false,
        }
    }

    /// Post the first messages (the others follow from their events or their block).
    pub(super) fn start_workload(&mut self, cx: &mut Cx<Pkt>) {
        let now = cx.now;
        if let Plan::Flows(starts) = &self.plan {
            let starts = starts.clone();
            for (m, t) in starts.into_iter().enumerate() {
                match t {
                    0 => self.post(cx, m as u32),
                    t => cx.push(now + t, Event::Agent(m as u32, POST, 0)),
                }
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

    /// Message `m` arrived whole at its receiver now.
    pub(super) fn complete(&mut self, cx: &mut Cx<Pkt>, m: u32) {
        let msg = &mut self.msgs[m as usize];
        msg.done = Some(cx.now);
        self.hosts[msg.dst as usize].outstanding -= 1;
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
