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
/// alone on the idle network, its frames sent back to back and in order, its last byte at the
/// receiver. Every hop stores and forwards: a frame starts on a link once it has wholly
/// arrived (its serialization on the link before, preamble and gap included, and that link's
/// delay) and once the frame ahead of it has left. The full frames (`mss` of payload and
/// `header`) leave each link spaced by the slowest link so far; the last frame, shorter, may
/// catch up with them after a slow link and then waits for the one ahead at every later hop:
///
/// full frame i leaves link h at F(1, h) + (i − 1) · max(t(l) for the links l up to h),
/// the last frame leaves link h at max(its arrival at h, F(n − 1, h)) + its own t(h),
///
/// t(h) a frame's serialization on link h, in the simulator's own arithmetic
/// ([`tx_time`] per frame). This is the schedule itself, so no flow can beat it on the path
/// (a slowdown is never below 1), whatever the rates of its links: charging every frame after
/// the first at the slowest link's rate after the first frame's crossing (the formula before)
/// overcounts a short last frame at the links after the slowest. HPCC's standalone FCT (the
/// base RTT plus the wire bytes at the bottleneck rate) ends at the sender's last ACK; this
/// one ends where the FCT of this workload does, at the receiver, one ACK's way earlier.
pub fn ideal_fct(net: &Network, a: u32, b: u32, bytes: u64, mss: u64, header: u64) -> SimTime {
    let segs = bytes.div_ceil(mss).max(1);
    let last = bytes - (segs - 1) * mss + header;
    let full = mss + header;
    // `spacing`: the slowest full-frame serialization up to the current link; `first_at` and
    // `tail_at`: when the first full frame and the last frame have wholly arrived at it (the
    // sender's own link first: time 0).
    let mut spacing: SimTime = 0;
    let (mut first_at, mut tail_at): (SimTime, SimTime) = (0, 0);
    for l in (0..net.path_len(a, b)).filter_map(|h| net.hop_via(a, b, 0, h)) {
        let link = &net.links[l];
        let t_last = tx_time(last + link.phy_overhead, link.rate);
        if segs > 1 {
            let t_full = tx_time(full + link.phy_overhead, link.rate);
            spacing = spacing.max(t_full);
            let first_leaves = first_at + t_full;
            // Full frame n − 1 leaves this link; the last frame goes when both it has arrived
            // and the link is free of the frame ahead.
            let ahead_leaves = first_leaves + (segs - 2) * spacing;
            let tail = tail_at.max(ahead_leaves) + t_last;
            tail_at = tail + link.delay;
            first_at = first_leaves + link.delay;
        } else {
            tail_at += t_last + link.delay;
        }
    }
    tail_at
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
