//! What an NDP run delivers: one flow per message of the plan ([`crate::app::messages`]; NDP
//! runs the incast only, so one flow from each server), then the short flows beside it
//! (`workload.short_load`), each a flow from its server to the receiver that begins at its
//! arrival with its initial window, as the incast's flows do at the start, and is pulled by
//! the same receiver. The run ends with the incast's last flow, whatever the short flows do.

use super::{Ndp, Pkt, BEGIN};
use crate::app::messages::{self, MsgSpec};
use crate::app::short::{self, Fate};
use crate::config::Scenario;
use crate::engine::driver::Cx;
use crate::engine::Event;
use crate::report::ShortFlows;
use crate::rng::Stream;
use crate::topology::Network;
use crate::units::SimTime;

/// The flows of scenario `sc` on `net` (a flow carries at least one byte: an empty one would
/// never be answered), the application's first, and how many are the application's.
pub(super) fn flows(sc: &Scenario, net: &Network) -> (Vec<MsgSpec>, u32) {
    // An incast has no jitter to draw: the stream is never used (NDP's own stays untouched).
    let (mut specs, _) = messages::plan(sc, net, Stream::Ndp);
    let apps = specs.len() as u32;
    specs.extend(messages::short(sc, net));
    for s in &mut specs[apps as usize..] {
        s.bytes = s.bytes.max(1);
    }
    (specs, apps)
}

impl Ndp {
    /// The workload starts now: the incast's flows send their initial windows, and each short
    /// flow waits for its arrival (those after the incast's end never begin: the run ends
    /// with it).
    pub(super) fn start_workload(&mut self, cx: &mut Cx<Pkt>) {
        self.receiver.start(cx.now);
        for f in 0..self.apps {
            self.begin_sending(cx, f);
        }
        for (i, &at) in self.shorts.iter().enumerate() {
            cx.push(cx.now + at, Event::Agent(self.apps + i as u32, BEGIN, 0));
        }
    }

    /// Short flow `f` arrives now (arrivals come in order).
    pub(super) fn begin(&mut self, cx: &mut Cx<Pkt>, f: u32) {
        self.begun += 1;
        self.begin_sending(cx, f);
    }

    fn begin_sending(&mut self, cx: &mut Cx<Pkt>, f: u32) {
        let iw = self.initial_window;
        self.with_sender(cx, f, |s, now, out| s.start(now, iw, out));
    }

    /// The short flows' summary at `now` (none without `workload.short_load`): completion
    /// from arrival to the last packet at the receiver.
    pub(super) fn short_report(
        &self,
        net: &Network,
        sc: &Scenario,
        now: SimTime,
    ) -> Option<ShortFlows> {
        if self.shorts.is_empty() {
            return None;
        }
        let start = self.receiver.start_time();
        let flows = self.shorts.iter().enumerate().map(|(i, &at)| {
            let f = self.apps + i as u32;
            let arrival = (i < self.begun as usize).then_some(start + at);
            // The receiver counts completion from the workload's start.
            let fate = Fate::of(arrival, self.receiver.fct(f).map(|t| start + t), now);
            (
                self.srcs[f as usize],
                self.senders[f as usize].bytes(),
                fate,
            )
        });
        let mss_header = (sc.ndp.mtu, sc.ndp.header_bytes);
        Some(short::summary(flows, net, mss_header))
    }
}
