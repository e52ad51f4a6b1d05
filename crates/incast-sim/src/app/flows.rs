//! A flow schedule over the engine's transports: background flows at an offered load and
//! Poisson N:1 incast bursts (the `flows` section), drawn once up front by
//! [`incast_workload::flows::schedule`] from the scenario's seed; each flow a connection of
//! its own, written in full at its start and done when its last byte reaches the receiving
//! application. The run ends when every flow is done.
//!
//! [`schedule`] is the one entry point: a transport that does not use connections (RoCE's
//! queue pairs) reads the same list and fills each flow's [`FlowReport::burst`] and
//! [`FlowReport::ideal_fct`] (from [`ideal_fct`]), and the report's
//! [`crate::slowdown::FctSlowdown`] follows for every transport alike.

use incast_workload::flows::{Class, FlowSpec, Incast, Plan, Source, Until};

use crate::app::{App, Effect, Token, View};
use crate::config::Scenario;
use crate::ids::{ConnId, EndpointId};
use crate::report::{FlowReport, Report};
use crate::rng::{Rng, Stream};
use crate::slowdown::FctSlowdown;
use crate::topology::Network;
use crate::units::{tx_time, SimTime};

/// [`Token::kind`] of a flow's start ([`Token::arg`]: its index in the schedule).
const START: u32 = 0;

/// The scenario's flow schedule, in start order: hosts are logical (0..`topology.senders`,
/// [`Network::host`] places them), times in picoseconds from the workload's start. Host h's
/// background draws from [`Stream::FlowArrivals`]`(h)`, the bursts from
/// [`Stream::FlowIncast`]. Empty unless `workload.kind = "flows"` on a valid scenario.
pub fn schedule(sc: &Scenario) -> Vec<FlowSpec> {
    let f = &sc.flows;
    let Ok(sizes) = f.size_cdf.cdf() else {
        return Vec::new(); // validation refuses it first
    };
    let plan = Plan {
        hosts: sc.topology.senders,
        link_bps: sc.topology.link,
        load: f.load,
        sizes: &sizes,
        incast: (f.incast_load > 0.0).then_some(Incast {
            load: f.incast_load,
            fan_in: f.incast_fan_in,
            bytes: f.incast_size,
        }),
        until: match f.count {
            0 => Until::Time(f.duration),
            n => Until::Flows(n),
        },
    };
    incast_workload::flows::schedule(&plan, |s| {
        let stream = match s {
            Source::Host(h) => Stream::FlowArrivals(h),
            Source::Incast => Stream::FlowIncast,
        };
        let mut rng = Rng::stream(sc.seed, stream);
        move || rng.next_u64()
    })
}

/// The ideal completion time of a flow of `bytes` from physical host `a` to `b`: the flow
/// alone on the idle network, its last byte at the receiver. Its first frame crosses the
/// path unloaded ([`Network::latency_between`]: each hop's delay and serialization), and the
/// rest of its frames follow back to back at the path's slowest link:
///
/// ideal = latency(first frame) + (wire bytes − first frame) · 8 / bottleneck rate,
///
/// wire bytes = bytes + ⌈bytes / mss⌉ · (header + the bottleneck's preamble and gap), less
/// the first frame's preamble and gap (its serialization is in the latency). No flow can beat
/// it, so a slowdown is never below 1. HPCC's standalone FCT (the base RTT plus the wire
/// bytes at the bottleneck rate) ends at the sender's last ACK; this one ends where the FCT
/// of this workload does, at the receiver, one ACK's way earlier.
pub fn ideal_fct(net: &Network, a: u32, b: u32, bytes: u64, mss: u64, header: u64) -> SimTime {
    let first = bytes.min(mss) + header;
    let hops = net.path_len(a, b);
    let (rate, phy) = (0..hops)
        .filter_map(|h| net.hop_via(a, b, 0, h))
        .map(|l| (net.links[l].rate, net.links[l].phy_overhead))
        .min()
        .unwrap_or((u64::MAX, 0));
    let segs = bytes.div_ceil(mss).max(1);
    let rest = bytes + segs * header - first + (segs - 1) * phy;
    net.latency_between(a, b, first) + tx_time(rest, rate)
}

/// The flow schedule as a workload of TCP connections.
#[derive(Debug)]
pub struct Flows {
    flows: Vec<FlowSpec>,
    start: SimTime,
    fct: Vec<Option<SimTime>>,
    done: u32,
    finish: Option<SimTime>,
    mss: u64,
    header: u64,
    link_bps: u64,
    buckets: u32,
}

impl Flows {
    /// The scenario's schedule, not yet started.
    pub fn new(sc: &Scenario) -> Flows {
        let flows = schedule(sc);
        Flows {
            fct: vec![None; flows.len()],
            flows,
            start: 0,
            done: 0,
            finish: None,
            mss: sc.tcp.mss,
            header: sc.tcp.header_bytes,
            link_bps: sc.topology.link * sc.topology.senders as u64,
            buckets: sc.flows.slowdown_buckets,
        }
    }

    /// The schedule.
    pub fn flows(&self) -> &[FlowSpec] {
        &self.flows
    }
}

impl App for Flows {
    fn connections(&self) -> u32 {
        self.flows.len() as u32
    }

    fn ends(&self, conn: ConnId, net: &Network) -> (u32, u32) {
        let f = &self.flows[conn.index()];
        (net.host(f.src), net.host(f.dst))
    }

    fn start(&mut self, now: SimTime, out: &mut Vec<Effect>) {
        self.start = now;
        for (i, f) in self.flows.iter().enumerate() {
            let token = Token {
                kind: START,
                arg: i as u32,
            };
            out.push(Effect::Wake {
                at: now + f.start,
                token,
            });
        }
        if self.flows.is_empty() {
            self.finish = Some(now);
            out.push(Effect::Finished);
        }
    }

    fn wake(&mut self, token: Token, _now: SimTime, _view: &dyn View, out: &mut Vec<Effect>) {
        debug_assert_eq!(token.kind, START);
        let bytes = self.flows[token.arg as usize].bytes;
        out.push(Effect::Write {
            ep: ConnId(token.arg).sender(),
            bytes,
        });
    }

    fn on_segment(
        &mut self,
        ep: EndpointId,
        _delivered: u64,
        received: u64,
        now: SimTime,
        out: &mut Vec<Effect>,
    ) {
        let c = ep.conn().index();
        if ep.is_sender() || received < self.flows[c].bytes || self.fct[c].is_some() {
            return;
        }
        self.fct[c] = Some(now - (self.start + self.flows[c].start));
        self.done += 1;
        if self.done as usize == self.flows.len() {
            self.finish = Some(now);
            out.push(Effect::Finished);
        }
    }

    fn fct(&self, conn: ConnId) -> Option<SimTime> {
        self.fct[conn.index()]
    }

    fn span(&self, view: &dyn View, now: SimTime) -> (SimTime, SimTime, u64) {
        let bytes = (0..self.connections())
            .map(|c| view.received(ConnId(c).receiver()))
            .sum();
        (self.start, self.finish.unwrap_or(now), bytes)
    }

    fn link_bps(&self, _sc: &Scenario) -> u64 {
        self.link_bps // every host's link: the schedule's flows run between all of them
    }

    fn report(&self, view: &dyn View, _now: SimTime, r: &mut Report) {
        let net = view.net();
        for (f, spec) in r.flows.iter_mut().zip(&self.flows) {
            fill(f, spec, net, self.mss, self.header);
        }
        r.fct_slowdown = FctSlowdown::of(r.flows.iter().map(FlowReport::sample), self.buckets);
    }
}

/// A schedule's flow's class and ideal completion time into its report.
fn fill(f: &mut FlowReport, spec: &FlowSpec, net: &Network, mss: u64, header: u64) {
    let (a, b) = (net.host(spec.src), net.host(spec.dst));
    f.ideal_fct = Some(ideal_fct(net, a, b, spec.bytes, mss, header));
    f.burst = match spec.class {
        Class::Background => None,
        Class::Incast(id) => Some(id),
    };
}

#[cfg(test)]
mod tests;
