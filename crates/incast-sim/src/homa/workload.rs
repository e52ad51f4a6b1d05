//! What a Homa run delivers, as messages: one Homa message per message of the plan
//! ([`crate::app::messages`]: the incast, the synchronized read's blocks, the flow schedule),
//! with its routes and agents. RTTbytes and the levels are derived here from the topology and
//! the messages when the scenario leaves them to be.

use super::levels::Levels;
use super::receiver::{Incoming, Scheduler};
use super::sender::Sender;
use super::{Homa, Host, Msg, Pkt, POST};
use crate::app::messages::{self, Post};
use crate::config::Scenario;
use crate::engine::driver::Cx;
use crate::engine::{Event, Timer};
use crate::report::HomaReport;
use crate::rng::{Rng, Stream};
use crate::topology::{LinkId, Network};
use crate::units::{SimTime, PS_PER_S};

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
        let (mut specs, plan) = messages::plan(sc, net, Stream::Homa(0));
        let apps = specs.len();
        specs.extend(messages::short(sc, net));
        let mut rng = Rng::stream(sc.seed, Stream::Homa(1));
        let frame = h.mtu + h.header_bytes;
        let mut rtt_bytes = 0;
        let mut msgs = Vec::with_capacity(specs.len());
        for s in &specs {
            let path = messages::draw_path(&mut rng, net.paths_between(s.src, s.dst));
            let data_route = net.add_route(s.src, s.dst, path);
            let path = messages::draw_path(&mut rng, net.paths_between(s.dst, s.src));
            let ctrl_route = net.add_route(s.dst, s.src, path);
            let rtt = net.latency(data_route, frame) + net.latency(ctrl_route, h.control_bytes);
            // Sprayed paths are shortest paths like the route: the same round trip.
            let paths = match h.spray {
                true => (
                    net.paths_between(s.src, s.dst),
                    net.paths_between(s.dst, s.src),
                ),
                false => (1, 1),
            };
            rtt_bytes = rtt_bytes.max(bytes_in(net.links[LinkId(2 * s.src)].rate, rtt));
            msgs.push(Msg {
                src: s.src,
                dst: s.dst,
                bytes: s.bytes,
                data_route,
                ctrl_route,
                paths,
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
            pending: apps,
            apps,
            shorts: specs[apps..].iter().map(|s| s.start).collect(),
            levels,
            rtt_bytes,
            mtu: h.mtu,
            header: h.header_bytes,
            ctrl: h.control_bytes as u32,
            timeout: h.resend_timeout,
            resend_ranges: h.resend_ranges,
            incast_threshold: h.incast_threshold,
            incast_unsched: h.incast_unsched_bytes,
            grants: Vec::new(),
            spray: h.spray.then(|| Rng::stream(sc.seed, Stream::HomaSpray)),
            stats,
            capture_asked: false,
        }
    }

    /// Post the first messages (the others follow from their events or their block).
    pub(super) fn start_workload(&mut self, cx: &mut Cx<Pkt>) {
        let posts = self.plan.first_posts(cx.now);
        self.carry_out(cx, posts);
        // The short flows beside the application, at their arrivals (those after its end never
        // post: the run ends with it).
        for m in self.apps..self.msgs.len() {
            let at = cx.now + self.shorts[m - self.apps];
            cx.push(at, Event::Agent(m as u32, POST, 0));
        }
    }

    /// The plan's posts, in its order: each message now, or an event at its time.
    fn carry_out(&mut self, cx: &mut Cx<Pkt>, posts: Vec<Post>) {
        for (m, delay) in posts {
            match delay {
                0 => self.post(cx, m),
                d => cx.push(cx.now + d, Event::Agent(m, POST, 0)),
            }
        }
    }

    /// Message `m` arrived whole at its receiver now.
    pub(super) fn complete(&mut self, cx: &mut Cx<Pkt>, m: u32) {
        let msg = &mut self.msgs[m as usize];
        msg.done = Some(cx.now);
        self.hosts[msg.dst as usize].outstanding -= 1;
        if m as usize >= self.apps {
            return; // a short flow's: the application does not wait for it
        }
        self.pending -= 1;
        let posts = self.plan.completed(cx.now);
        self.carry_out(cx, posts);
    }
}
