//! Workloads: what the applications on the hosts ask the transport to carry, and what finishes
//! a block, a get, a copy. Each workload is one module here implementing [`App`]; the engine
//! holds one `Box<dyn App>` (chosen by [`of`], the registry) and knows no workload by name:
//! it starts the application, hands it the data its connections deliver, and carries out
//! what it returns ([`Effect`]s), its timers included as opaque [`Token`]s.
//!
//! Adding a workload: its module here, one line in [`of`], its scenario keys.
//!
//! - `task` and `tasks`: synchronized reads, incast and queries from one client, as one or
//!   several concurrent tasks;
//! - `kv`: a replicated key-value store's gets and puts between every pair of hosts;
//! - `shuffle`: reducers copying map outputs from every map host;
//! - `flows`: a schedule of flows between the hosts (background at a load, N:1 bursts).
//!
//! `messages` is not an [`App`]: it is the plan of the message transports (RoCE, EQDS, Homa),
//! who sends what to whom when, which each of them turns into its own agents.

use crate::config::{Scenario, WorkloadKind};
use crate::ids::{ConnId, EndpointId};
use crate::report::Report;
use crate::topology::Network;
use crate::units::SimTime;

pub mod effect;
pub mod flows;
pub mod kv;
pub mod messages;
pub mod short;
pub mod shuffle;
pub mod size_dist;
pub mod stalls;
pub mod task;
pub mod tasks;

pub use effect::{Effect, Token};

/// What an application may read of the transport and the network it runs over.
pub trait View {
    /// Bytes endpoint `ep` has received in order.
    fn received(&self, ep: EndpointId) -> u64;
    /// Bytes of endpoint `ep`'s own data its peer has acknowledged.
    fn acked(&self, ep: EndpointId) -> u64;
    /// Endpoints of the run (two per connection, background flows included).
    fn endpoints(&self) -> u32;
    /// Host endpoint `ep` is on.
    fn host_of(&self, ep: EndpointId) -> u32;
    /// (timeouts, retransmitted segments) of endpoint `ep`.
    fn loss_counters(&self, ep: EndpointId) -> (u64, u64);
    /// Drops so far by what the dropped packet carried: data to a client, a pure ACK,
    /// data to a server (a request).
    fn drops_by_kind(&self) -> [u64; 3];
    /// The network.
    fn net(&self) -> &Network;
}

/// A workload, as the engine drives it. Connections `0..connections()` are the
/// application's; any after them are background flows.
pub trait App: std::fmt::Debug + Send {
    /// Connections the application uses.
    fn connections(&self) -> u32;
    /// (server host, client host) of connection `conn` on `net`.
    fn ends(&self, conn: ConnId, net: &Network) -> (u32, u32);
    /// Start at `now`.
    fn start(&mut self, now: SimTime, out: &mut Vec<Effect>);
    /// A [`Effect::Wake`] it asked for is due.
    fn wake(&mut self, token: Token, now: SimTime, view: &dyn View, out: &mut Vec<Effect>);
    /// A [`Effect::Fill`] it asked for: only [`Effect::Write`]s may come out.
    fn fill(&mut self, _slot: u32, _view: &dyn View, _out: &mut Vec<Effect>) {}
    /// Whether [`App::on_segment`] wants every segment, not only those that deliver data.
    fn every_segment(&self) -> bool {
        false
    }
    /// Endpoint `ep` (of one of its connections) took a segment that delivered `delivered`
    /// new bytes; it has `received` bytes in all.
    fn on_segment(
        &mut self,
        ep: EndpointId,
        delivered: u64,
        received: u64,
        now: SimTime,
        out: &mut Vec<Effect>,
    );
    /// Ask the cache for what [`App::on_segment`] of endpoint `ep` reads: called as a segment
    /// reaches `ep`, before the endpoint is read, so that the two are fetched together rather
    /// than one after the other. A hint: it changes nothing.
    fn warm(&self, _ep: EndpointId) {}
    /// Whether [`App::on_rx`] wants the frames the hosts' switch ports send.
    fn counts_rx(&self) -> bool {
        false
    }
    /// `wire` bytes finished crossing into host `host` at `now`.
    fn on_rx(&mut self, _host: u32, _now: SimTime, _wire: u64) {}
    /// `k` timeouts fired at the server end of its connection `conn`.
    fn add_timeouts(&mut self, _conn: ConnId, _k: u64) {}
    /// `k` timeouts fired at the client end of its connection `conn` (a request resent):
    /// not the servers' `timeouts`, but a wait it ends is no probe stall ([`stalls`]).
    fn add_client_timeouts(&mut self, _conn: ConnId, _k: u64) {}
    /// Where the time series' clock starts.
    fn series_origin(&self) -> SimTime {
        0
    }
    /// Completion time of connection `conn`'s flow, for workloads of flows.
    fn fct(&self, _conn: ConnId) -> Option<SimTime> {
        None
    }
    /// (start, end or `now` if unfinished, application bytes delivered).
    fn span(&self, view: &dyn View, now: SimTime) -> (SimTime, SimTime, u64);
    /// The link rate goodput is measured against, bits per second.
    fn link_bps(&self, sc: &Scenario) -> u64 {
        sc.topology.receiver_link
    }
    /// Fill in the application's figures of the report.
    fn report(&self, view: &dyn View, now: SimTime, r: &mut Report);
}

/// The registry: the scenario's workload, not yet started, with the short flows of
/// `workload.short_load` beside it when there are any ([`short::Beside`]).
pub fn of(sc: &Scenario, net: &Network) -> Box<dyn App> {
    let app = application(sc, net);
    if sc.workload.short_load <= 0.0 {
        return app;
    }
    // The segment and header of the short flows' ideal completion times: the transport's.
    let mss_header = match sc.transport {
        crate::config::Transport::Swift => (sc.swift.mtu, sc.swift.header_bytes),
        _ => (sc.tcp.mss, sc.tcp.header_bytes),
    };
    Box::new(short::Beside::new(sc, app, mss_header))
}

/// The scenario's application alone.
fn application(sc: &Scenario, net: &Network) -> Box<dyn App> {
    match sc.workload.kind {
        WorkloadKind::KvGets => Box::new(kv::KvGets::new(sc, net.hosts)),
        WorkloadKind::Shuffle => Box::new(shuffle::Shuffle::new(sc)),
        WorkloadKind::Flows => Box::new(flows::Flows::new(sc)),
        WorkloadKind::SyncRead | WorkloadKind::Incast | WorkloadKind::Queries => {
            Box::new(tasks::Tasks::new(sc))
        }
    }
}

#[cfg(test)]
mod tests {
    //! A toy workload in a few lines shows the seam: it plans and reacts, the engine and the
    //! transport carry it out.

    use super::*;
    use crate::engine::driver::{Engine, Running};
    use crate::tcp::Tcp;

    /// Every server pushes `bytes` to the client at once; a timer then asks each for as much
    /// again; done when the client holds all of it (so only if the timer fired).
    #[derive(Debug)]
    struct Push {
        servers: u32,
        bytes: u64,
        received: Vec<u64>,
        finish: Option<SimTime>,
    }

    const AGAIN: u32 = 7;

    impl App for Push {
        fn connections(&self) -> u32 {
            self.servers
        }

        fn ends(&self, conn: ConnId, net: &Network) -> (u32, u32) {
            (net.host(conn.0), net.receiver)
        }

        fn start(&mut self, now: SimTime, out: &mut Vec<Effect>) {
            for c in 0..self.servers {
                let ep = ConnId(c).sender();
                out.push(Effect::Write {
                    ep,
                    bytes: self.bytes,
                });
            }
            let token = Token {
                kind: AGAIN,
                arg: 0,
            };
            out.push(Effect::Wake {
                at: now + 1_000,
                token,
            });
        }

        fn wake(&mut self, token: Token, _now: SimTime, _view: &dyn View, out: &mut Vec<Effect>) {
            assert_eq!(token.kind, AGAIN);
            for c in 0..self.servers {
                let ep = ConnId(c).sender();
                out.push(Effect::Write {
                    ep,
                    bytes: self.bytes,
                });
            }
        }

        fn on_segment(
            &mut self,
            ep: EndpointId,
            _delivered: u64,
            received: u64,
            now: SimTime,
            out: &mut Vec<Effect>,
        ) {
            assert!(!ep.is_sender(), "only the client receives data");
            self.received[ep.conn().index()] = received;
            if self.received.iter().all(|&r| r == 2 * self.bytes) {
                self.finish = Some(now);
                out.push(Effect::Finished);
            }
        }

        fn span(&self, _view: &dyn View, now: SimTime) -> (SimTime, SimTime, u64) {
            (0, self.finish.unwrap_or(now), self.received.iter().sum())
        }

        fn report(&self, _view: &dyn View, _now: SimTime, r: &mut Report) {
            r.block_times = self.finish.into_iter().collect();
        }
    }

    #[test]
    fn a_toy_workload_runs_over_tcp_without_the_engine_knowing_it() {
        let sc = Scenario::example(4);
        let push = Push {
            servers: 4,
            bytes: 50_000,
            received: vec![0; 4],
            finish: None,
        };
        let app: Box<dyn App> = Box::new(push);
        let mut e = Engine::<Tcp>::with(sc, |sc, fabric, events| {
            Tcp::set_up_with(sc, fabric, events, app)
        })
        .unwrap();
        while !e.step(1_000).unwrap() {
            e.check_invariants().unwrap();
        }
        let r = e.report();
        assert_eq!(r.app_bytes, 4 * 2 * 50_000);
        assert_eq!(r.flows.len(), 4);
        assert!(r.flows.iter().all(|f| f.bytes == 100_000 && !f.background));
        assert_eq!(r.block_times, vec![r.duration]);
    }
}
