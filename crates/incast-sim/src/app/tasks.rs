//! Concurrent tasks of one workload: several synchronized reads (or incasts) from the same
//! client, each over its own connections to every server, each waiting only for its own blocks
//! (an aggregator serving several queries at once).
//!
//! Task `t` owns connections `t·N .. (t+1)·N`. Each task is a [`Workload`] that speaks in its
//! own connection numbers; this wrapper routes events to it and renumbers its actions.

use crate::app::task::{Action, Workload};
use crate::app::{App, Effect, Token, View};
use crate::config::Scenario;
use crate::ids::ConnId;
use crate::report::Report;
use crate::topology::Network;
use crate::units::SimTime;

/// [`Token::kind`] of a server's answer after its jitter ([`Token::arg`]: the connection).
const RESPOND: u32 = 0;
/// [`Token::kind`] of a staggered or planned request ([`Token::arg`]: the connection).
const REQUEST: u32 = 1;

/// Every task of the scenario's workload.
#[derive(Debug)]
pub struct Tasks {
    tasks: Vec<Workload>,
    /// Connections per task (the number of servers).
    n: u32,
    /// Tasks finished so far.
    done: u32,
    local: Vec<Action>,
}

impl Tasks {
    /// The scenario's tasks, not yet started.
    pub fn new(sc: &Scenario) -> Tasks {
        Tasks {
            // The key-value store and the shuffle are not tasks of one client: they run beside them.
            tasks: if sc.all_to_all() {
                Vec::new()
            } else {
                (0..sc.workload.tasks)
                    .map(|t| Workload::task(sc, t))
                    .collect()
            },
            n: sc.topology.senders,
            done: 0,
            local: Vec::new(),
        }
    }

    /// Connections of all tasks together.
    pub fn connections(&self) -> u32 {
        self.n * self.tasks.len() as u32
    }

    /// When the workload started.
    pub fn start_time(&self) -> SimTime {
        self.tasks.first().map_or(0, |t| t.start)
    }

    /// When the last task finished, once all have.
    pub fn finish_time(&self) -> Option<SimTime> {
        (self.done == self.tasks.len() as u32)
            .then(|| self.tasks.iter().filter_map(|t| t.finish).max())
            .flatten()
    }

    /// Block durations of every task (task by task, each in order).
    pub fn block_times(&self) -> Vec<SimTime> {
        self.tasks
            .iter()
            .flat_map(|t| t.block_times.clone())
            .collect()
    }

    /// Timeouts during each block, in the order of [`Tasks::block_times`].
    pub fn block_timeouts(&self) -> Vec<u32> {
        self.tasks
            .iter()
            .flat_map(|t| t.block_timeouts.clone())
            .collect()
    }

    /// Query completions (the queries workload has one task).
    pub fn query_fcts(&self) -> &[(u64, SimTime)] {
        self.tasks.first().map_or(&[], |t| &t.query_fcts)
    }

    /// Whether `conn` is one of the workload's connections (not a background flow).
    pub fn owns(&self, conn: ConnId) -> bool {
        conn.0 < self.connections()
    }

    /// The task `conn` belongs to, and its number within that task.
    fn local(&self, conn: ConnId) -> (usize, ConnId) {
        ((conn.0 / self.n) as usize, ConnId(conn.0 % self.n))
    }

    /// Header bytes among the `received` bytes the client has on `conn` (not goodput).
    pub fn header_bytes(&self, conn: ConnId, received: u64) -> u64 {
        let (t, c) = self.local(conn);
        self.tasks[t].header_bytes(c, received)
    }

    /// Completion time of connection `conn`'s flow (incast).
    pub fn fct(&self, conn: ConnId) -> Option<SimTime> {
        let (t, c) = self.local(conn);
        self.tasks[t].fct[c.index()]
    }

    /// Count `k` timeouts of connection `conn`'s server towards its task's current block.
    pub fn add_timeouts(&mut self, conn: ConnId, k: u64) {
        let (t, _) = self.local(conn);
        self.tasks[t].timeouts += k;
        if k > 0 {
            self.tasks[t].stalls.rto();
        }
    }

    /// `k` timeouts of connection `conn`'s client (a request resent): the flow's wait is a
    /// timeout's, not a probe stall.
    pub fn add_client_timeouts(&mut self, conn: ConnId, k: u64) {
        let (t, _) = self.local(conn);
        if k > 0 {
            self.tasks[t].stalls.rto();
        }
    }

    /// Stalls without a timeout ([`crate::app::stalls`]) during each block, in the order of
    /// [`Tasks::block_times`] (an incast's one block: its flows').
    pub fn block_stalls(&self) -> Vec<u32> {
        self.tasks
            .iter()
            .flat_map(|t| t.block_stalls.clone())
            .collect()
    }

    /// Stalls without a timeout of every task's flows so far (finished blocks or not).
    pub fn stalls(&self) -> u64 {
        self.tasks.iter().map(|t| t.stalls.count).sum()
    }

    /// Start every task at `now`.
    pub fn start(&mut self, now: SimTime, act: &mut Vec<Effect>) {
        for t in 0..self.tasks.len() as u32 {
            let mut local = std::mem::take(&mut self.local);
            self.tasks[t as usize].start(now, &mut local);
            self.translate(t, &mut local, act);
            self.local = local;
        }
    }

    /// A staggered or planned request of `conn` is due.
    pub fn request(&mut self, conn: ConnId, now: SimTime, act: &mut Vec<Effect>) {
        self.route(conn, act, |w, c, a| w.request(c, now, a));
    }

    /// `conn`'s server answers now (its jitter elapsed).
    pub fn respond(&mut self, conn: ConnId, act: &mut Vec<Effect>) {
        self.route(conn, act, |w, c, a| w.respond(c, a));
    }

    /// `conn`'s server has received `received` request bytes in all.
    pub fn on_server_data(
        &mut self,
        conn: ConnId,
        received: u64,
        now: SimTime,
        act: &mut Vec<Effect>,
    ) {
        self.route(conn, act, |w, c, a| w.on_server_data(c, received, now, a));
    }

    /// The client has received `received` bytes in all on `conn`.
    pub fn on_client_data(
        &mut self,
        conn: ConnId,
        received: u64,
        now: SimTime,
        act: &mut Vec<Effect>,
    ) {
        self.route(conn, act, |w, c, a| w.on_client_data(c, received, now, a));
    }

    fn route(
        &mut self,
        conn: ConnId,
        act: &mut Vec<Effect>,
        f: impl FnOnce(&mut Workload, ConnId, &mut Vec<Action>),
    ) {
        let (t, c) = self.local(conn);
        let mut local = std::mem::take(&mut self.local);
        f(&mut self.tasks[t], c, &mut local);
        self.translate(t as u32, &mut local, act);
        self.local = local;
    }

    /// Renumber task `t`'s actions into global connections and endpoints; the workload is
    /// finished when its last task is.
    fn translate(&mut self, t: u32, local: &mut Vec<Action>, act: &mut Vec<Effect>) {
        let global = |c: ConnId| ConnId(c.0 + t * self.n);
        for a in local.drain(..) {
            act.push(match a {
                Action::Write { ep, bytes } => Effect::Write {
                    ep: ep.same_end_of(global(ep.conn())),
                    bytes,
                },
                Action::RespondAt { conn, at } => Effect::Wake {
                    at,
                    token: Token {
                        kind: RESPOND,
                        arg: global(conn).0,
                    },
                },
                Action::RequestAt { conn, at } => Effect::Wake {
                    at,
                    token: Token {
                        kind: REQUEST,
                        arg: global(conn).0,
                    },
                },
                Action::Finished => {
                    self.done += 1;
                    if self.done < self.tasks.len() as u32 {
                        continue;
                    }
                    Effect::Finished
                }
            });
        }
    }
}

impl App for Tasks {
    fn connections(&self) -> u32 {
        Tasks::connections(self)
    }

    fn ends(&self, conn: ConnId, net: &Network) -> (u32, u32) {
        // Connection c is server c mod N's (each task has its own connections).
        (net.host(conn.0 % self.n), net.receiver)
    }

    fn start(&mut self, now: SimTime, out: &mut Vec<Effect>) {
        Tasks::start(self, now, out);
    }

    fn wake(&mut self, token: Token, now: SimTime, _view: &dyn View, out: &mut Vec<Effect>) {
        let conn = ConnId(token.arg);
        match token.kind {
            RESPOND => self.respond(conn, out),
            _ => self.request(conn, now, out),
        }
    }

    #[inline]
    fn on_segment(
        &mut self,
        ep: crate::ids::EndpointId,
        _delivered: u64,
        received: u64,
        now: SimTime,
        out: &mut Vec<Effect>,
    ) {
        if ep.is_sender() {
            self.on_server_data(ep.conn(), received, now, out);
        } else {
            self.on_client_data(ep.conn(), received, now, out);
        }
    }

    fn add_timeouts(&mut self, conn: ConnId, k: u64) {
        Tasks::add_timeouts(self, conn, k);
    }

    fn add_client_timeouts(&mut self, conn: ConnId, k: u64) {
        Tasks::add_client_timeouts(self, conn, k);
    }

    fn series_origin(&self) -> SimTime {
        self.start_time()
    }

    fn fct(&self, conn: ConnId) -> Option<SimTime> {
        Tasks::fct(self, conn)
    }

    fn span(&self, view: &dyn View, now: SimTime) -> (SimTime, SimTime, u64) {
        let app_bytes = (0..self.connections())
            .map(ConnId)
            .map(|c| {
                let got = view.received(c.receiver());
                got - self.header_bytes(c, got)
            })
            .sum();
        (
            self.start_time(),
            self.finish_time().unwrap_or(now),
            app_bytes,
        )
    }

    fn report(&self, _view: &dyn View, _now: SimTime, r: &mut Report) {
        r.block_times = self.block_times();
        r.query_fcts = self.query_fcts().to_vec();
        r.block_timeouts = self.block_timeouts();
        r.probe_stalls = self.stalls();
        r.block_probe_stalls = self.block_stalls();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_task_waits_only_for_its_own_block() {
        let mut sc = Scenario::example(2);
        sc.workload.tasks = 2;
        sc.workload.sru = Some(1000);
        sc.workload.blocks = 2;
        let mut w = Tasks::new(&sc);
        assert_eq!(w.connections(), 4);
        let mut act = Vec::new();
        w.start(0, &mut act);
        let eps: Vec<u32> = act
            .iter()
            .map(|a| match a {
                Effect::Write { ep, .. } => ep.0,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(eps, vec![0, 2, 4, 6], "every task asks both servers");
        act.clear();
        // Task 1's server 0 (connection 2) answers on endpoint 5.
        w.on_server_data(ConnId(2), 100, 1, &mut act);
        assert_eq!(
            act,
            vec![Effect::Write {
                ep: ConnId(2).sender(),
                bytes: 1000
            }]
        );
        act.clear();
        // Task 1 completes its first block; task 0 has nothing yet.
        w.on_client_data(ConnId(2), 1000, 5, &mut act);
        w.on_client_data(ConnId(3), 1000, 9, &mut act);
        assert_eq!(
            act,
            vec![
                Effect::Write {
                    ep: ConnId(2).receiver(),
                    bytes: 100
                },
                Effect::Write {
                    ep: ConnId(3).receiver(),
                    bytes: 100
                }
            ],
            "only task 1 moves on"
        );
        assert_eq!(w.block_times(), vec![9]);
        act.clear();
        w.on_client_data(ConnId(2), 2000, 20, &mut act);
        w.on_client_data(ConnId(3), 2000, 30, &mut act);
        assert!(act.is_empty(), "task 1 finished, task 0 has not: {act:?}");
        assert_eq!(w.finish_time(), None);
        w.on_client_data(ConnId(0), 1000, 40, &mut act);
        w.on_client_data(ConnId(1), 1000, 40, &mut act);
        act.clear();
        w.on_client_data(ConnId(0), 2000, 50, &mut act);
        w.on_client_data(ConnId(1), 2000, 60, &mut act);
        assert_eq!(act, vec![Effect::Finished]);
        assert_eq!(w.finish_time(), Some(60));
    }
}
