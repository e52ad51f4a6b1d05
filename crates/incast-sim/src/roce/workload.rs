//! What a RoCE run delivers, as queue pairs and the messages posted to them: the plan's
//! messages ([`crate::app::messages`]: the incast, the synchronized read's blocks, the flow
//! schedule), one queue pair each (a synchronized read's one per server, carrying its message
//! of every block), then the `background` section's long-lived flows, a queue pair each,
//! started at once, the workload after their warm-up; then the short flows beside the
//! workload (`workload.short_load`), a queue pair each, whose one message is posted at the
//! flow's arrival.

use super::cc::Cc;
use super::receiver::Receiver;
use super::sender::{Sender, Timeouts};
use super::{Msg, Qp, Roce, POST};
use crate::app::messages::{self, MsgSpec, Plan, Post};
use crate::config::{RoceCc, Scenario};
use crate::engine::driver::Cx;
use crate::engine::{Event, Timer};
use crate::rng::{Rng, Stream};
use crate::topology::{LinkId, Network};

use super::Pkt;

/// Packets of a background queue pair's one message: enough to outlast any incast (16.7 M
/// frames, 17 GB at the default MTU: 1.4 s at 100 Gbps), few enough that selective repeat's
/// bitmap of them stays 2 MB.
const BACKGROUND_PACKETS: u64 = 1 << 24;

/// The queue pairs' specs and the plan of scenario `sc` on `net`: one queue pair per message
/// of the plan ([`crate::app::messages`]), a synchronized read's one per server (it carries
/// that server's message of every block), then the background flows' (as many as
/// `background.flows`), then the short flows' (how many: the third).
pub(super) fn specs(sc: &Scenario, net: &Network) -> (Vec<MsgSpec>, Plan, usize) {
    let (mut specs, plan) = messages::plan(sc, net, Stream::Roce(0));
    if let Some(servers) = plan.servers() {
        specs.truncate(servers as usize);
    }
    specs.extend((0..sc.background.flows).map(|i| {
        let (src, dst) = net.background_ends(sc, i);
        MsgSpec {
            src,
            dst,
            bytes: BACKGROUND_PACKETS * sc.roce.mtu,
            start: 0,
            burst: None,
        }
    }));
    // A message carries at least one byte: an empty one would never be answered.
    let shorts: Vec<MsgSpec> = (messages::short(sc, net).into_iter())
        .map(|s| MsgSpec {
            bytes: s.bytes.max(1),
            ..s
        })
        .collect();
    let n = shorts.len();
    specs.extend(shorts);
    (specs, plan, n)
}

impl Roce {
    /// One queue pair per spec, the last `shorts` the short flows', with its routes, frames
    /// and agents; every message laid out.
    pub(super) fn set_up(
        &mut self,
        sc: &Scenario,
        net: &mut Network,
        specs: &[MsgSpec],
        shorts: usize,
    ) {
        let r = &sc.roce;
        let mut rng = Rng::stream(sc.seed, Stream::Roce(1));
        let timeouts = Timeouts {
            rto: r.rto,
            low: r.rto_low,
            high: r.rto_high,
            low_packets: r.rto_low_packets,
        };
        for s in specs {
            let path = messages::draw_path(&mut rng, net.paths_between(s.src, s.dst));
            let data_route = net.add_route(s.src, s.dst, path);
            let path = messages::draw_path(&mut rng, net.paths_between(s.dst, s.src));
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
        let (rounds, apps) = match self.plan.servers() {
            None => (1, self.plan.messages()),
            Some(servers) => (
                (self.plan.messages() / servers as usize) as u32,
                servers as usize,
            ),
        };
        self.background = apps;
        self.bursts = specs.iter().map(|s| s.burst).collect();
        for _ in 0..rounds {
            self.lay_out(specs, 0..apps);
        }
        self.apps = self.msgs.len();
        self.pending = self.apps;
        self.short_qp = specs.len() - shorts;
        self.lay_out(specs, apps..self.short_qp);
        self.short_msg = self.msgs.len();
        self.lay_out(specs, self.short_qp..specs.len());
        self.short_at = specs[self.short_qp..].iter().map(|s| s.start).collect();
    }

    /// One message for each of queue pairs `qps`.
    fn lay_out(&mut self, specs: &[MsgSpec], qps: std::ops::Range<usize>) {
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
        self.background_at_start = self.background_bytes();
        let posts = self.plan.first_posts(cx.now);
        self.carry_out(cx, posts);
        // The short flows at their arrivals (those after the workload's end are never posted:
        // the run ends with it).
        for m in self.short_msg..self.msgs.len() {
            let at = self.short_at[m - self.short_msg];
            cx.push(cx.now + at, Event::Agent(m as u32, POST, 0));
        }
    }

    /// The plan's posts, in its order: each message now, or an event at its time (one push
    /// per message, no allocation; the heap holds them until then).
    fn carry_out(&mut self, cx: &mut Cx<Pkt>, posts: Vec<Post>) {
        for (m, delay) in posts {
            match delay {
                0 => self.post(cx, m),
                d => cx.push(cx.now + d, Event::Agent(m, POST, 0)),
            }
        }
    }

    /// Payload the background queue pairs delivered in order so far (full packets: their
    /// one message never ends within a run).
    pub(super) fn background_bytes(&self) -> u64 {
        let qps = &self.qps[self.background..self.short_qp];
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
            return; // a background or short flow's: the workload does not wait for it
        }
        self.pending -= 1;
        let posts = self.plan.completed(cx.now);
        self.carry_out(cx, posts);
    }
}
