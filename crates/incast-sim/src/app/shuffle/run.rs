//! The shuffle as the engine drives it ([`App`]).

use super::Shuffle;
use crate::app::{App, Effect, Token, View};
use crate::config::Scenario;
use crate::ids::{ConnId, EndpointId};
use crate::report::Report;
use crate::topology::Network;
use crate::units::SimTime;

impl App for Shuffle {
    fn connections(&self) -> u32 {
        Shuffle::connections(self)
    }

    fn ends(&self, conn: ConnId, net: &Network) -> (u32, u32) {
        let (map_host, reducer_host) = Shuffle::ends(self, conn);
        (net.host(map_host), net.host(reducer_host))
    }

    fn start(&mut self, now: SimTime, out: &mut Vec<Effect>) {
        Shuffle::start(self, now, out);
    }

    fn wake(&mut self, _token: Token, _now: SimTime, _view: &dyn View, _out: &mut Vec<Effect>) {
        unreachable!("a shuffle schedules no timers");
    }

    fn on_segment(
        &mut self,
        ep: EndpointId,
        _delivered: u64,
        received: u64,
        now: SimTime,
        out: &mut Vec<Effect>,
    ) {
        if ep.is_sender() {
            self.on_server_data(ep.conn(), received, out);
        } else {
            self.on_client_data(ep.conn(), received, now, out);
        }
    }

    fn span(&self, view: &dyn View, now: SimTime) -> (SimTime, SimTime, u64) {
        let app_bytes = (0..view.endpoints() / 2)
            .map(ConnId)
            .map(|c| {
                let got = view.received(c.receiver());
                got - self.header_bytes(c, got)
            })
            .sum();
        (self.start_time(), self.finish.unwrap_or(now), app_bytes)
    }

    fn link_bps(&self, sc: &Scenario) -> u64 {
        sc.topology.link * sc.shuffle_reducer_hosts() as u64
    }

    fn report(&self, view: &dyn View, _now: SimTime, r: &mut Report) {
        r.shuffle = Some(Shuffle::report(self, view.drops_by_kind()));
    }
}
