//! What an EQDS run delivers: one flow per message of the plan ([`crate::app::messages`]: the
//! incast, the synchronized read's blocks), each into the one receiver; a flow begins when the
//! plan posts its message and completes when the receiver holds every packet.

use super::{Eqds, Pkt, BEGIN};
use crate::app::messages::{self, MsgSpec, Plan, Post};
use crate::config::Scenario;
use crate::engine::driver::Cx;
use crate::engine::Event;
use crate::rng::Stream;
use crate::topology::Network;

/// The flows of scenario `sc` on `net` (a flow carries at least one byte: an empty one would
/// never be answered) and how they follow one another: the application's, then the short
/// flows beside it (`workload.short_load`), and how many are the application's.
pub(super) fn flows(sc: &Scenario, net: &Network) -> (Vec<MsgSpec>, Plan, usize) {
    let (mut specs, plan) = messages::plan(sc, net, Stream::Eqds(1));
    let apps = specs.len();
    specs.extend(messages::short(sc, net));
    for s in &mut specs {
        s.bytes = s.bytes.max(1);
    }
    (specs, plan, apps)
}

impl Eqds {
    /// The workload starts now: the plan's first flows begin.
    pub(super) fn start_workload(&mut self, cx: &mut Cx<Pkt>) {
        self.start = cx.now;
        let posts = self.plan.first_posts(cx.now);
        self.carry_out(cx, posts);
        // The short flows at their arrivals (those after the application's end never begin:
        // the run ends with it).
        for f in self.apps..self.senders.len() {
            let at = cx.now + self.shorts[f - self.apps];
            cx.push(at, Event::Agent(f as u32, BEGIN, 0));
        }
    }

    /// The plan's posts, in its order: each flow begins now, or at an event after its jitter.
    fn carry_out(&mut self, cx: &mut Cx<Pkt>, posts: Vec<Post>) {
        for (f, delay) in posts {
            match delay {
                0 => self.begin(cx, f),
                d => cx.push(cx.now + d, Event::Agent(f, BEGIN, 0)),
            }
        }
    }

    /// Flow `f` is complete at the receiver: a synchronized read's next block may start.
    pub(super) fn flow_done(&mut self, cx: &mut Cx<Pkt>, f: u32) {
        if f as usize >= self.apps {
            return; // a short flow's: the application does not wait for it
        }
        let posts = self.plan.completed(cx.now);
        self.carry_out(cx, posts);
    }
}
