//! The store as the engine drives it ([`App`]): its timers, the segments its connections
//! deliver, and its figures from what the network and TCP saw of each host.

use super::{HostCounters, KvGets, GET, RESPOND, WARM};
use crate::app::{App, Effect, Token, View};
use crate::ids::{ConnId, EndpointId};
use crate::net::fabric::prefetch;
use crate::report::Report;
use crate::topology::{LinkId, LinkRole, Network};
use crate::units::SimTime;

/// Frames dropped so far at switch-to-switch ports; `None` where there are none.
fn fabric_drops(net: &Network) -> Option<u64> {
    let mut fabric = net
        .link_ids()
        .filter(|l| net.roles[l.index()] == LinkRole::Fabric)
        .peekable();
    fabric.peek()?;
    Some(fabric.map(|l| net.links[l].stats.drops).sum())
}

impl KvGets {
    /// Each host's counters from its links and its connections' ends.
    fn host_counters(&self, view: &dyn View) -> Vec<HostCounters> {
        let net = view.net();
        let mut by_phys = vec![HostCounters::default(); net.hosts as usize];
        for e in 0..view.endpoints() {
            let ep = EndpointId(e);
            let h = &mut by_phys[view.host_of(ep) as usize];
            let (timeouts, retransmits) = view.loss_counters(ep);
            h.timeouts += timeouts;
            h.retransmits += retransmits;
        }
        (0..self.hosts)
            .map(|i| {
                let phys = net.host(i);
                let (nic, port) = (LinkId(2 * phys), LinkId(2 * phys + 1));
                HostCounters {
                    phys,
                    rx_busy: net.links[port].stats.busy,
                    tx_busy: net.links[nic].stats.busy,
                    drops: net.links[port].stats.drops,
                    ..by_phys[phys as usize]
                }
            })
            .collect()
    }
}

impl App for KvGets {
    fn connections(&self) -> u32 {
        KvGets::connections(self)
    }

    fn ends(&self, conn: ConnId, net: &Network) -> (u32, u32) {
        let (replica, coordinator) = KvGets::ends(self, conn);
        (net.host(replica), net.host(coordinator))
    }

    fn start(&mut self, now: SimTime, out: &mut Vec<Effect>) {
        let mark = out.len();
        KvGets::start(self, now, out);
        // The end of the warm-up is scheduled ahead of the first gets.
        if self.measure_from() > now {
            let token = Token { kind: WARM, arg: 0 };
            let at = self.measure_from();
            out.insert(mark, Effect::Wake { at, token });
        }
    }

    fn wake(&mut self, token: Token, now: SimTime, view: &dyn View, out: &mut Vec<Effect>) {
        match token.kind {
            GET => self.get(token.arg, now, out),
            RESPOND => self.respond(ConnId(token.arg), out),
            WARM => {
                let counters = self.host_counters(view);
                self.warm(counters, fabric_drops(view.net()).unwrap_or(0));
            }
            _ => unreachable!("a key-value token"),
        }
    }

    fn fill(&mut self, slot: u32, view: &dyn View, out: &mut Vec<Effect>) {
        self.serve(slot, |c| view.acked(c.sender()), out);
    }

    fn every_segment(&self) -> bool {
        true
    }

    fn on_segment(
        &mut self,
        ep: EndpointId,
        delivered: u64,
        received: u64,
        now: SimTime,
        out: &mut Vec<Effect>,
    ) {
        let conn = ep.conn();
        if delivered > 0 {
            if ep.is_sender() {
                self.on_server_data(conn, received, now, out);
            } else {
                self.on_client_data(conn, received, now, out);
            }
        }
        // An ACK may have made room in the send buffer a stalled server waits on.
        let (replica, _) = KvGets::ends(self, conn);
        if ep.is_sender() && self.stalled(replica) {
            out.push(Effect::Fill { slot: replica });
        }
    }

    #[inline]
    fn warm(&self, ep: EndpointId) {
        prefetch(&self.open_end[ep.conn().index()]);
    }

    fn counts_rx(&self) -> bool {
        true
    }

    #[inline]
    fn on_rx(&mut self, host: u32, now: SimTime, wire: u64) {
        KvGets::on_rx(self, host, now, wire);
    }

    fn span(&self, _view: &dyn View, now: SimTime) -> (SimTime, SimTime, u64) {
        (
            self.start_time(),
            self.finish.unwrap_or(now),
            self.delivered(),
        )
    }

    fn report(&self, view: &dyn View, now: SimTime, r: &mut Report) {
        let hosts = self.host_counters(view);
        r.kv = Some(KvGets::report(self, now, &hosts, fabric_drops(view.net())));
    }
}
