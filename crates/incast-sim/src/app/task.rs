//! Application workloads: synchronized reads (the storage client of the incast papers) and the
//! N-flow incast (the NDP example). The workload never touches TCP directly: it answers events
//! with [`Action`]s that the simulation carries out, so it can be tested alone.
//!
//! Each connection joins the client's endpoint at the receiver ([`ConnId::receiver`]) and a
//! server's ([`ConnId::sender`]). Servers answer on their connection; requests travel the other
//! way on it. A workload numbers its connections from 0, one per server.

use std::collections::VecDeque;

use crate::config::{Scenario, WorkloadKind};
use crate::ids::{ConnId, EndpointId};
use crate::rng::{Rng, Stream};
use crate::units::SimTime;

pub(crate) use super::size_dist::SizeDist;
use super::stalls::Stalls;

/// Something a task wants done ([`crate::app::tasks::Tasks`] turns these into [`crate::app::Effect`]s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Endpoint `ep` writes `bytes`.
    Write {
        /// Endpoint.
        ep: EndpointId,
        /// Bytes written.
        bytes: u64,
    },
    /// Connection `conn`'s server answers at `at` (after its jitter).
    RespondAt {
        /// Connection.
        conn: ConnId,
        /// When.
        at: SimTime,
    },
    /// The client asks connection `conn`'s server at `at` (staggered requests).
    RequestAt {
        /// Connection.
        conn: ConnId,
        /// When.
        at: SimTime,
    },
    /// The workload is complete.
    Finished,
}

impl Action {
    /// A server's answer on `ep`: its application header (if any) in a write of its own, then
    /// `bytes` of data. Every request/response workload answers this way.
    pub(crate) fn push_response(act: &mut Vec<Action>, ep: EndpointId, header: u64, bytes: u64) {
        if header > 0 {
            act.push(Action::Write { ep, bytes: header });
        }
        act.push(Action::Write { ep, bytes });
    }
}

/// Progress of the workload.
#[derive(Debug)]
pub struct Workload {
    kind: WorkloadKind,
    n: u32,
    /// Bytes each server sends per block (sync_read) or per flow (incast).
    unit: Vec<u64>,
    blocks: u32,
    request: u64,
    jitter: SimTime,
    rng: Vec<Rng>,
    /// Completed blocks.
    block: u32,
    /// Fragments or flows of the current block still to arrive.
    remaining: u32,
    /// Client-side stream offset at which the current fragment of each connection is complete.
    frag_end: Vec<u64>,
    frag_done: Vec<bool>,
    /// Requests issued to every server so far.
    issued: u32,
    /// Requests each server has answered.
    answered: Vec<u32>,
    /// Bytes of header ahead of each response's data.
    header: u64,
    /// Responses each server has begun writing (each with its header).
    written: Vec<u64>,
    /// Servers asked at once (the fan-out window); `n` for all.
    window: u32,
    /// Next server to ask in the current block.
    next_request: u32,
    /// Delay between successive requests of a block.
    stagger: SimTime,
    /// The client's pauses between blocks, used in turn (sync_read; empty: none).
    think: Vec<SimTime>,
    /// When the last block ended, while the client pauses before the next.
    paused_since: Option<SimTime>,
    block_start: SimTime,
    timeouts_at_block_start: u64,
    stalls_at_block_start: u64,
    /// Waits of half the minimum RTO with no timeout in them ([`Stalls`]).
    pub stalls: Stalls,
    /// Such stalls (all servers) during each block.
    pub block_stalls: Vec<u32>,
    /// Workload start time.
    pub start: SimTime,
    /// Completion time of the last block or flow.
    pub finish: Option<SimTime>,
    /// Duration of each block.
    pub block_times: Vec<SimTime>,
    /// Timeouts (all servers) during each block.
    pub block_timeouts: Vec<u32>,
    /// Completion time of each flow, from the workload start.
    pub fct: Vec<Option<SimTime>>,
    /// Timeouts of the workload's servers so far; the simulation counts them here.
    pub timeouts: u64,
    /// Query traffic, when the workload is `queries`.
    q: Option<Queries>,
    /// (response bytes, completion time) of every query, in completion order.
    pub query_fcts: Vec<(u64, SimTime)>,
}

/// Poisson query traffic: per connection, the queries planned, asked and answered in order.
#[derive(Debug)]
struct Queries {
    count: u32,
    load: f64,
    sizes: SizeDist,
    link_bps: u64,
    rng: Rng,
    /// Sizes of the queries each connection will be asked, in arrival order.
    planned: Vec<VecDeque<u64>>,
    /// Sizes the server of each connection still has to send, in request order.
    to_answer: Vec<VecDeque<u64>>,
    /// Requests sent on each connection.
    asked: Vec<u32>,
    /// (asked at, size, client offset at which the response is complete), in order.
    open: Vec<VecDeque<(SimTime, u64, u64)>>,
    /// Client offset at the end of the last response asked on each connection.
    end: Vec<u64>,
    done: u32,
}

/// How long a block may deliver nothing before the wait counts as a stall: half the minimum
/// RTO of the transport the workload runs over ([`Stalls`]).
fn stall_after(sc: &Scenario) -> SimTime {
    let rto_min = match sc.transport {
        crate::config::Transport::Swift => sc.swift.rto_min,
        _ => sc.tcp.rto_min,
    };
    rto_min / 2
}

impl Workload {
    /// The scenario's workload (its first task, when it has several), not yet started.
    pub fn new(sc: &Scenario) -> Workload {
        Self::task(sc, 0)
    }

    /// Task `task` of the scenario's workload: its own random streams.
    pub fn task(sc: &Scenario, task: u32) -> Workload {
        let n = sc.topology.senders;
        let w = &sc.workload;
        let unit = (0..n)
            .map(|i| match w.kind {
                WorkloadKind::SyncRead => sc.sru_of(i),
                WorkloadKind::Incast => w.flow_size.unwrap_or(0),
                WorkloadKind::Queries
                | WorkloadKind::KvGets
                | WorkloadKind::Shuffle
                | WorkloadKind::Flows => 0,
            })
            .collect();
        let q = (w.kind == WorkloadKind::Queries).then(|| Queries {
            count: w.queries,
            load: w.query_load,
            sizes: if w.query_size_cdf.is_empty() {
                SizeDist::Uniform(w.query_size_min, w.query_size_max)
            } else {
                SizeDist::Cdf(w.query_size_cdf.clone())
            },
            link_bps: sc.topology.receiver_link,
            rng: Rng::stream(sc.seed, Stream::Queries),
            planned: vec![VecDeque::new(); n as usize],
            to_answer: vec![VecDeque::new(); n as usize],
            asked: vec![0; n as usize],
            open: vec![VecDeque::new(); n as usize],
            end: vec![0; n as usize],
            done: 0,
        });
        Workload {
            kind: w.kind,
            n,
            unit,
            blocks: w.blocks,
            request: w.request_size,
            jitter: w.jitter,
            rng: (0..n)
                .map(|i| Rng::stream(sc.seed, Stream::ResponseJitter(ConnId(task * n + i))))
                .collect(),
            block: 0,
            remaining: 0,
            frag_end: vec![0; n as usize],
            frag_done: vec![false; n as usize],
            issued: 0,
            answered: vec![0; n as usize],
            header: w.response_header,
            written: vec![0; n as usize],
            window: if w.fanout_window == 0 {
                n
            } else {
                w.fanout_window.min(n)
            },
            next_request: 0,
            stagger: w.request_stagger,
            think: w.think_times.clone(),
            paused_since: None,
            block_start: 0,
            timeouts_at_block_start: 0,
            stalls_at_block_start: 0,
            stalls: Stalls::new(stall_after(sc)),
            block_stalls: Vec::new(),
            start: 0,
            finish: None,
            block_times: Vec::new(),
            block_timeouts: Vec::new(),
            fct: vec![None; n as usize],
            timeouts: 0,
            q,
            query_fcts: Vec::new(),
        }
    }

    /// Application bytes the workload moves in all.
    pub fn total_bytes(&self) -> u64 {
        let per_round: u64 = self.unit.iter().sum();
        match self.kind {
            WorkloadKind::SyncRead => per_round * self.blocks as u64,
            WorkloadKind::Incast => per_round,
            WorkloadKind::Queries
            | WorkloadKind::KvGets
            | WorkloadKind::Shuffle
            | WorkloadKind::Flows => 0,
        }
    }

    /// Number of connections the workload uses.
    pub fn connections(&self) -> u32 {
        self.n
    }

    /// Start at `now`.
    pub fn start(&mut self, now: SimTime, act: &mut Vec<Action>) {
        self.start = now;
        match self.kind {
            WorkloadKind::SyncRead => self.request_block(now, act),
            WorkloadKind::Queries => self.plan_queries(now, act),
            WorkloadKind::KvGets | WorkloadKind::Shuffle | WorkloadKind::Flows => {}
            WorkloadKind::Incast => {
                self.remaining = self.n;
                self.block_start = now;
                self.stalls.arm(now);
                for c in 0..self.n {
                    self.frag_end[c as usize] = self.header + self.unit[c as usize];
                    self.respond_after_jitter(ConnId(c), now, act);
                }
            }
        }
    }

    /// Draw every query's arrival (Poisson at the offered load), server and size up front;
    /// each becomes a timed request.
    fn plan_queries(&mut self, now: SimTime, act: &mut Vec<Action>) {
        let n = self.n as u64;
        let q = self.q.as_mut().expect("queries workload");
        let mean_bits = q.sizes.mean() * 8.0;
        let rate = q.load * q.link_bps as f64 / mean_bits; // queries per second
        let mut t = now as f64;
        for _ in 0..q.count {
            let u = q.rng.unit();
            t += -(1.0 - u).ln() / rate * 1e12;
            let conn = ConnId(q.rng.up_to(n - 1) as u32);
            let size = q.sizes.sample(&mut q.rng);
            q.planned[conn.index()].push_back(size);
            act.push(Action::RequestAt {
                conn,
                at: t as SimTime,
            });
        }
    }

    /// Bytes server `c` sends in answer to its next request.
    fn response_size(&mut self, c: usize) -> u64 {
        match self.q.as_mut() {
            Some(q) => q.to_answer[c].pop_front().unwrap_or(0),
            None => self.unit[c],
        }
    }

    fn respond_after_jitter(&mut self, c: ConnId, now: SimTime, act: &mut Vec<Action>) {
        if self.jitter == 0 {
            self.respond(c, act);
        } else {
            let at = now + self.rng[c.index()].up_to(self.jitter);
            act.push(Action::RespondAt { conn: c, at });
        }
    }

    fn request_block(&mut self, now: SimTime, act: &mut Vec<Action>) {
        // A pause before the block counts in its time.
        self.block_start = self.paused_since.take().unwrap_or(now);
        self.timeouts_at_block_start = self.timeouts;
        self.stalls_at_block_start = self.stalls.count;
        self.stalls.arm(now);
        self.remaining = self.n;
        self.issued += 1;
        for c in 0..self.n as usize {
            self.frag_end[c] += self.header + self.unit[c];
            self.frag_done[c] = false;
        }
        self.next_request = 0;
        for k in 0..self.window {
            if self.stagger == 0 || k == 0 {
                self.ask_next(act);
            } else {
                act.push(Action::RequestAt {
                    conn: ConnId(k),
                    at: now + k as SimTime * self.stagger,
                });
            }
        }
        if self.stagger > 0 {
            self.next_request = self.window;
        }
    }

    /// A staggered request is due: the client asks `conn`'s server now; or the client's pause
    /// after a block is over, and it asks for the next.
    pub fn request(&mut self, conn: ConnId, now: SimTime, act: &mut Vec<Action>) {
        if self.paused_since.is_some() && self.q.is_none() {
            self.request_block(now, act);
            return;
        }
        if let Some(q) = self.q.as_mut() {
            let c = conn.index();
            let size = q.planned[c].pop_front().unwrap_or(0);
            q.to_answer[c].push_back(size);
            q.asked[c] += 1;
            q.end[c] += self.header + size;
            q.open[c].push_back((now, size, q.end[c]));
        }
        act.push(Action::Write {
            ep: conn.receiver(),
            bytes: self.request,
        });
    }

    /// Send the block's request to the next server not yet asked.
    fn ask_next(&mut self, act: &mut Vec<Action>) {
        if self.next_request < self.n {
            act.push(Action::Write {
                ep: ConnId(self.next_request).receiver(),
                bytes: self.request,
            });
            self.next_request += 1;
        }
    }

    /// A server's jitter elapsed: it answers now, its header (if any) in a write of its own.
    pub fn respond(&mut self, conn: ConnId, act: &mut Vec<Action>) {
        let bytes = self.response_size(conn.index());
        self.written[conn.index()] += 1;
        Action::push_response(act, conn.sender(), self.header, bytes);
    }

    /// Header bytes among the `received` bytes the client has on `conn`: each response's
    /// header, as far as it has arrived.
    pub fn header_bytes(&self, conn: ConnId, received: u64) -> u64 {
        (self.header * self.written[conn.index()]).min(received)
    }

    /// The server of `conn` has received `received` request bytes in all.
    pub fn on_server_data(
        &mut self,
        conn: ConnId,
        received: u64,
        now: SimTime,
        act: &mut Vec<Action>,
    ) {
        let c = conn.index();
        let asked = self.q.as_ref().map_or(self.issued, |q| q.asked[c]);
        while self.answered[c] < asked && received >= (self.answered[c] as u64 + 1) * self.request {
            self.answered[c] += 1;
            self.respond_after_jitter(conn, now, act);
        }
    }

    /// The client has received `received` bytes in all on `conn`.
    pub fn on_client_data(
        &mut self,
        conn: ConnId,
        received: u64,
        now: SimTime,
        act: &mut Vec<Action>,
    ) {
        let c = conn.index();
        if let Some(q) = self.q.as_mut() {
            while let Some(&(at, size, end)) = q.open[c].front() {
                if received < end {
                    break;
                }
                q.open[c].pop_front();
                self.query_fcts.push((size, now - at));
                q.done += 1;
            }
            if q.done == q.count && self.finish.is_none() {
                self.finish = Some(now);
                act.push(Action::Finished);
            }
            return;
        }
        if self.frag_done[c] || self.finish.is_some() {
            return;
        }
        self.stalls.progress(now);
        if received < self.frag_end[c] {
            return;
        }
        self.frag_done[c] = true;
        self.remaining -= 1;
        if self.kind == WorkloadKind::Incast {
            self.fct[c] = Some(now - self.start);
        }
        if self.remaining > 0 {
            if self.kind == WorkloadKind::SyncRead {
                self.ask_next(act); // the fan-out window slides
            }
            return;
        }
        self.block_times.push(now - self.block_start);
        self.block_timeouts
            .push((self.timeouts - self.timeouts_at_block_start) as u32);
        self.block_stalls
            .push((self.stalls.count - self.stalls_at_block_start) as u32);
        self.block += 1;
        if self.kind == WorkloadKind::SyncRead && self.block < self.blocks {
            let pause = match self.think.len() {
                0 => 0,
                len => self.think[(self.block - 1) as usize % len],
            };
            if pause == 0 {
                self.request_block(now, act);
            } else {
                self.paused_since = Some(now);
                act.push(Action::RequestAt {
                    conn: ConnId(0),
                    at: now.saturating_add(pause),
                });
            }
        } else {
            self.finish = Some(now);
            act.push(Action::Finished);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The workload of `sc`, started at `at`, and the actions it took.
    fn started(sc: &Scenario, at: SimTime) -> (Workload, Vec<Action>) {
        let mut w = Workload::new(sc);
        let mut act = Vec::new();
        w.start(at, &mut act);
        (w, act)
    }

    #[test]
    fn sync_read_requests_next_block_only_after_every_fragment() {
        let sc = Scenario::example(2);
        let (mut w, mut act) = started(&sc, 0);
        assert_eq!(
            act,
            vec![
                Action::Write {
                    ep: ConnId(0).receiver(),
                    bytes: 100
                },
                Action::Write {
                    ep: ConnId(1).receiver(),
                    bytes: 100
                }
            ]
        );
        act.clear();
        w.on_server_data(ConnId(0), 100, 5, &mut act);
        assert_eq!(
            act,
            vec![Action::Write {
                ep: ConnId(0).sender(),
                bytes: 256_000
            }]
        );
        act.clear();
        w.on_server_data(ConnId(0), 100, 6, &mut act);
        assert!(act.is_empty(), "a request is answered once");
        w.on_client_data(ConnId(0), 256_000, 10, &mut act);
        assert!(act.is_empty());
        w.on_client_data(ConnId(1), 256_000, 20, &mut act);
        assert_eq!(act.len(), 2, "both servers get block 2's request");
        assert_eq!(w.block_times, vec![20]);
        act.clear();
        w.on_server_data(ConnId(0), 200, 25, &mut act);
        assert_eq!(
            act,
            vec![Action::Write {
                ep: ConnId(0).sender(),
                bytes: 256_000
            }]
        );
    }

    #[test]
    fn a_response_header_is_its_own_write_and_not_goodput() {
        let mut sc = Scenario::example(1);
        sc.workload.response_header = 24;
        sc.workload.sru = Some(1000);
        sc.workload.blocks = 2;
        let (mut w, mut act) = started(&sc, 0);
        act.clear();
        w.on_server_data(ConnId(0), 100, 5, &mut act);
        let writes = |bytes| Action::Write {
            ep: ConnId(0).sender(),
            bytes,
        };
        assert_eq!(act, vec![writes(24), writes(1000)]);
        act.clear();
        // The data alone does not complete the fragment: the header came first.
        w.on_client_data(ConnId(0), 1000, 9, &mut act);
        assert!(act.is_empty());
        w.on_client_data(ConnId(0), 1024, 10, &mut act);
        assert_eq!(act.len(), 1, "block 2's request");
        assert_eq!(w.header_bytes(ConnId(0), 1024), 24);
        assert_eq!(w.header_bytes(ConnId(0), 10), 10, "a header still arriving");
    }

    #[test]
    fn incast_records_flow_completion_times() {
        let mut sc = Scenario::example(2);
        sc.workload.kind = WorkloadKind::Incast;
        sc.workload.flow_size = Some(1000);
        let (mut w, mut act) = started(&sc, 100);
        assert_eq!(act.len(), 2);
        act.clear();
        w.on_client_data(ConnId(1), 1000, 150, &mut act);
        w.on_client_data(ConnId(0), 1000, 300, &mut act);
        assert_eq!(act, vec![Action::Finished]);
        assert_eq!(w.fct, vec![Some(200), Some(50)]);
        assert_eq!(w.total_bytes(), 2000);
    }

    #[test]
    fn fanout_window_asks_the_next_server_as_each_fragment_completes() {
        let mut sc = Scenario::example(3);
        sc.workload.fanout_window = 2;
        sc.workload.sru = Some(1000);
        let (mut w, mut act) = started(&sc, 0);
        assert_eq!(
            act,
            vec![
                Action::Write {
                    ep: ConnId(0).receiver(),
                    bytes: 100
                },
                Action::Write {
                    ep: ConnId(1).receiver(),
                    bytes: 100
                }
            ]
        );
        act.clear();
        w.on_client_data(ConnId(1), 1000, 10, &mut act);
        assert_eq!(
            act,
            vec![Action::Write {
                ep: ConnId(2).receiver(),
                bytes: 100
            }]
        );
        act.clear();
        w.on_client_data(ConnId(0), 1000, 20, &mut act);
        assert!(act.is_empty(), "every server of the block has been asked");
    }

    #[test]
    fn the_client_pauses_after_each_block_in_turn_and_the_pause_counts_in_the_next_block() {
        let mut sc = Scenario::example(1);
        sc.workload.sru = Some(1000);
        sc.workload.blocks = 4;
        sc.workload.think_times = vec![300, 0];
        let (mut w, mut act) = started(&sc, 0);
        act.clear();
        w.on_client_data(ConnId(0), 1000, 100, &mut act);
        assert_eq!(
            act,
            vec![Action::RequestAt {
                conn: ConnId(0),
                at: 400
            }],
            "after block 0 the client pauses think_times[0]"
        );
        act.clear();
        w.request(ConnId(0), 400, &mut act);
        assert_eq!(
            act,
            vec![Action::Write {
                ep: ConnId(0).receiver(),
                bytes: 100
            }]
        );
        act.clear();
        w.on_client_data(ConnId(0), 2000, 500, &mut act);
        assert_eq!(
            act.len(),
            1,
            "think_times[1] = 0: block 2 is asked for at once"
        );
        assert!(matches!(act[0], Action::Write { .. }));
        act.clear();
        w.on_client_data(ConnId(0), 3000, 600, &mut act);
        assert_eq!(
            act,
            vec![Action::RequestAt {
                conn: ConnId(0),
                at: 900
            }],
            "the pauses are used in turn"
        );
        assert_eq!(w.block_times, vec![100, 400, 100]);
        act.clear();
        w.request(ConnId(0), 900, &mut act);
        w.on_client_data(ConnId(0), 4000, 950, &mut act);
        assert_eq!(w.block_times, vec![100, 400, 100, 350]);
        assert_eq!(w.finish, Some(950), "no pause after the last block");
    }

    #[test]
    fn a_block_silent_for_half_the_rto_min_without_a_timeout_counts_one_stall() {
        let mut sc = Scenario::example(2);
        sc.workload.sru = Some(1000);
        sc.workload.blocks = 3;
        let half = sc.tcp.rto_min / 2;
        let (mut w, mut act) = started(&sc, 0);
        // Block 0: flow 0 delivers at 10, flow 1 is silent until 10 + half - 1: no stall.
        w.on_client_data(ConnId(0), 1000, 10, &mut act);
        w.on_client_data(ConnId(1), 500, 10 + half - 1, &mut act);
        w.on_client_data(ConnId(1), 1000, 20 + half, &mut act);
        // Block 1 (asked at 20 + half): silent for exactly half, then done.
        let t1 = 20 + half;
        w.on_client_data(ConnId(0), 2000, t1 + 5, &mut act);
        w.on_client_data(ConnId(1), 2000, t1 + 5 + half, &mut act);
        // Block 2: as long a silence, but a timeout fired in it: a timeout's, not a stall.
        let t2 = t1 + 5 + half;
        w.on_client_data(ConnId(0), 3000, t2 + 5, &mut act);
        w.stalls.rto();
        w.on_client_data(ConnId(1), 3000, t2 + 5 + 2 * half, &mut act);
        assert_eq!(w.block_stalls, vec![0, 1, 0]);
        assert_eq!(w.stalls.count, 1);
        // A fragment already complete delivers nothing more to its block.
        w.on_client_data(ConnId(0), 3000, t2 + 10 * half, &mut act);
        assert_eq!(w.stalls.count, 1);
    }

    #[test]
    fn staggered_requests_go_out_one_stagger_apart() {
        let mut sc = Scenario::example(3);
        sc.workload.request_stagger = 50;
        let (mut w, mut act) = started(&sc, 1000);
        assert_eq!(
            act,
            vec![
                Action::Write {
                    ep: ConnId(0).receiver(),
                    bytes: 100
                },
                Action::RequestAt {
                    conn: ConnId(1),
                    at: 1050
                },
                Action::RequestAt {
                    conn: ConnId(2),
                    at: 1100
                }
            ]
        );
        act.clear();
        w.request(ConnId(2), 1100, &mut act);
        assert_eq!(
            act,
            vec![Action::Write {
                ep: ConnId(2).receiver(),
                bytes: 100
            }]
        );
    }

    #[test]
    fn empirical_cdf_sizes_follow_the_cdf() {
        // 30% of 1 KB, then uniform from 1 KB to 100 KB.
        let d = SizeDist::Cdf(vec![(1_000, 0.3), (100_000, 1.0)]);
        assert!((d.mean() - (0.3 * 1000.0 + 0.7 * 50_500.0)).abs() < 1e-6);
        let mut rng = Rng::new(7, 0);
        let draws: Vec<u64> = (0..20_000).map(|_| d.sample(&mut rng)).collect();
        let small = draws.iter().filter(|&&s| s == 1_000).count() as f64 / 20_000.0;
        assert!((small - 0.3).abs() < 0.02, "{small}");
        assert!(draws.iter().all(|&s| (1_000..=100_000).contains(&s)));
        let mean = draws.iter().sum::<u64>() as f64 / 20_000.0;
        assert!((mean / d.mean() - 1.0).abs() < 0.03, "{mean}");
    }

    #[test]
    fn queries_are_asked_at_poisson_times_and_completed_in_order() {
        let mut sc = Scenario::example(4);
        sc.workload.kind = WorkloadKind::Queries;
        sc.workload.queries = 200;
        let (mut w, act) = started(&sc, 0);
        let times: Vec<SimTime> = act
            .iter()
            .map(|a| match a {
                Action::RequestAt { at, .. } => *at,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(times.len(), 200);
        assert!(times.windows(2).all(|p| p[0] <= p[1]));
        // Mean gap: 30 KB at half of 1 Gbps is 480 us.
        let mean_gap = *times.last().unwrap() as f64 / 200.0 / 1e6;
        assert!((300.0..700.0).contains(&mean_gap), "{mean_gap} us");
        // One query on connection 0: asked, answered, completed.
        let Action::RequestAt { conn, at } = act[0] else {
            unreachable!()
        };
        let mut a = Vec::new();
        w.request(conn, at, &mut a);
        a.clear();
        w.on_server_data(conn, 100, at + 10, &mut a);
        let Action::Write { bytes, .. } = a[0] else {
            unreachable!()
        };
        assert!((10_000..=50_000).contains(&bytes));
        a.clear();
        w.on_client_data(conn, bytes, at + 1000, &mut a);
        assert_eq!(w.query_fcts, vec![(bytes, 1000)]);
    }
}
