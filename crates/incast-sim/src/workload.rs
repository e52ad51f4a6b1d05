//! Application workloads: synchronized reads (the storage client of the incast papers) and the
//! N-flow incast (the NDP example). The workload never touches TCP directly: it answers events
//! with [`Action`]s that the simulation carries out, so it can be tested alone.
//!
//! Connection `c` joins the client endpoint `2c` (at the receiver) and the server endpoint
//! `2c + 1`. Servers answer on their connection; requests travel the other way on it.

use crate::config::{Scenario, WorkloadKind};
use crate::rng::Rng;
use crate::units::SimTime;

/// Something the workload wants done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Endpoint `ep` writes `bytes`.
    Write {
        /// Endpoint.
        ep: u32,
        /// Bytes written.
        bytes: u64,
    },
    /// Connection `conn`'s server answers at `at` (after its jitter).
    RespondAt {
        /// Connection.
        conn: u32,
        /// When.
        at: SimTime,
    },
    /// The client asks connection `conn`'s server at `at` (staggered requests).
    RequestAt {
        /// Connection.
        conn: u32,
        /// When.
        at: SimTime,
    },
    /// The workload is complete.
    Finished,
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
    /// Servers asked at once (the fan-out window); `n` for all.
    window: u32,
    /// Next server to ask in the current block.
    next_request: u32,
    /// Delay between successive requests of a block.
    stagger: SimTime,
    block_start: SimTime,
    timeouts_at_block_start: u64,
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
}

impl Workload {
    /// The scenario's workload, not yet started.
    pub fn new(sc: &Scenario) -> Workload {
        let n = sc.topology.senders;
        let w = &sc.workload;
        let unit = (0..n)
            .map(|i| match w.kind {
                WorkloadKind::SyncRead => sc.sru_of(i),
                WorkloadKind::Incast => w.flow_size.unwrap_or(0),
            })
            .collect();
        Workload {
            kind: w.kind,
            n,
            unit,
            blocks: w.blocks,
            request: w.request_size,
            jitter: w.jitter,
            rng: (0..n).map(|i| Rng::new(sc.seed, i as u64)).collect(),
            block: 0,
            remaining: 0,
            frag_end: vec![0; n as usize],
            frag_done: vec![false; n as usize],
            issued: 0,
            answered: vec![0; n as usize],
            window: if w.fanout_window == 0 {
                n
            } else {
                w.fanout_window.min(n)
            },
            next_request: 0,
            stagger: w.request_stagger,
            block_start: 0,
            timeouts_at_block_start: 0,
            start: 0,
            finish: None,
            block_times: Vec::new(),
            block_timeouts: Vec::new(),
            fct: vec![None; n as usize],
            timeouts: 0,
        }
    }

    /// Application bytes the workload moves in all.
    pub fn total_bytes(&self) -> u64 {
        let per_round: u64 = self.unit.iter().sum();
        match self.kind {
            WorkloadKind::SyncRead => per_round * self.blocks as u64,
            WorkloadKind::Incast => per_round,
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
            WorkloadKind::Incast => {
                self.remaining = self.n;
                self.block_start = now;
                for c in 0..self.n {
                    self.frag_end[c as usize] = self.unit[c as usize];
                    self.respond_after_jitter(c, now, act);
                }
            }
        }
    }

    fn respond_after_jitter(&mut self, c: u32, now: SimTime, act: &mut Vec<Action>) {
        if self.jitter == 0 {
            act.push(Action::Write {
                ep: 2 * c + 1,
                bytes: self.unit[c as usize],
            });
        } else {
            let at = now + self.rng[c as usize].up_to(self.jitter);
            act.push(Action::RespondAt { conn: c, at });
        }
    }

    fn request_block(&mut self, now: SimTime, act: &mut Vec<Action>) {
        self.block_start = now;
        self.timeouts_at_block_start = self.timeouts;
        self.remaining = self.n;
        self.issued += 1;
        for c in 0..self.n as usize {
            self.frag_end[c] += self.unit[c];
            self.frag_done[c] = false;
        }
        self.next_request = 0;
        for k in 0..self.window {
            if self.stagger == 0 || k == 0 {
                self.ask_next(act);
            } else {
                act.push(Action::RequestAt {
                    conn: k,
                    at: now + k as SimTime * self.stagger,
                });
            }
        }
        if self.stagger > 0 {
            self.next_request = self.window;
        }
    }

    /// A staggered request is due: the client asks `conn`'s server now.
    pub fn request(&mut self, conn: u32, act: &mut Vec<Action>) {
        act.push(Action::Write {
            ep: 2 * conn,
            bytes: self.request,
        });
    }

    /// Send the block's request to the next server not yet asked.
    fn ask_next(&mut self, act: &mut Vec<Action>) {
        if self.next_request < self.n {
            act.push(Action::Write {
                ep: 2 * self.next_request,
                bytes: self.request,
            });
            self.next_request += 1;
        }
    }

    /// A server's jitter elapsed: it answers now.
    pub fn respond(&mut self, conn: u32, act: &mut Vec<Action>) {
        act.push(Action::Write {
            ep: 2 * conn + 1,
            bytes: self.unit[conn as usize],
        });
    }

    /// The server of `conn` has received `received` request bytes in all.
    pub fn on_server_data(
        &mut self,
        conn: u32,
        received: u64,
        now: SimTime,
        act: &mut Vec<Action>,
    ) {
        let c = conn as usize;
        while self.answered[c] < self.issued
            && received >= (self.answered[c] as u64 + 1) * self.request
        {
            self.answered[c] += 1;
            self.respond_after_jitter(conn, now, act);
        }
    }

    /// The client has received `received` bytes in all on `conn`.
    pub fn on_client_data(
        &mut self,
        conn: u32,
        received: u64,
        now: SimTime,
        act: &mut Vec<Action>,
    ) {
        let c = conn as usize;
        if self.frag_done[c] || received < self.frag_end[c] || self.finish.is_some() {
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
        self.block += 1;
        if self.kind == WorkloadKind::SyncRead && self.block < self.blocks {
            self.request_block(now, act);
        } else {
            self.finish = Some(now);
            act.push(Action::Finished);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync_read_requests_next_block_only_after_every_fragment() {
        let sc = Scenario::example(2);
        let mut w = Workload::new(&sc);
        let mut act = Vec::new();
        w.start(0, &mut act);
        assert_eq!(
            act,
            vec![
                Action::Write { ep: 0, bytes: 100 },
                Action::Write { ep: 2, bytes: 100 }
            ]
        );
        act.clear();
        w.on_server_data(0, 100, 5, &mut act);
        assert_eq!(
            act,
            vec![Action::Write {
                ep: 1,
                bytes: 256_000
            }]
        );
        act.clear();
        w.on_server_data(0, 100, 6, &mut act);
        assert!(act.is_empty(), "a request is answered once");
        w.on_client_data(0, 256_000, 10, &mut act);
        assert!(act.is_empty());
        w.on_client_data(1, 256_000, 20, &mut act);
        assert_eq!(act.len(), 2, "both servers get block 2's request");
        assert_eq!(w.block_times, vec![20]);
        act.clear();
        w.on_server_data(0, 200, 25, &mut act);
        assert_eq!(
            act,
            vec![Action::Write {
                ep: 1,
                bytes: 256_000
            }]
        );
    }

    #[test]
    fn incast_records_flow_completion_times() {
        let mut sc = Scenario::example(2);
        sc.workload.kind = WorkloadKind::Incast;
        sc.workload.flow_size = Some(1000);
        let mut w = Workload::new(&sc);
        let mut act = Vec::new();
        w.start(100, &mut act);
        assert_eq!(act.len(), 2);
        act.clear();
        w.on_client_data(1, 1000, 150, &mut act);
        w.on_client_data(0, 1000, 300, &mut act);
        assert_eq!(act, vec![Action::Finished]);
        assert_eq!(w.fct, vec![Some(200), Some(50)]);
        assert_eq!(w.total_bytes(), 2000);
    }

    #[test]
    fn fanout_window_asks_the_next_server_as_each_fragment_completes() {
        let mut sc = Scenario::example(3);
        sc.workload.fanout_window = 2;
        sc.workload.sru = Some(1000);
        let mut w = Workload::new(&sc);
        let mut act = Vec::new();
        w.start(0, &mut act);
        assert_eq!(
            act,
            vec![
                Action::Write { ep: 0, bytes: 100 },
                Action::Write { ep: 2, bytes: 100 }
            ]
        );
        act.clear();
        w.on_client_data(1, 1000, 10, &mut act);
        assert_eq!(act, vec![Action::Write { ep: 4, bytes: 100 }]);
        act.clear();
        w.on_client_data(0, 1000, 20, &mut act);
        assert!(act.is_empty(), "every server of the block has been asked");
    }

    #[test]
    fn staggered_requests_go_out_one_stagger_apart() {
        let mut sc = Scenario::example(3);
        sc.workload.request_stagger = 50;
        let mut w = Workload::new(&sc);
        let mut act = Vec::new();
        w.start(1000, &mut act);
        assert_eq!(
            act,
            vec![
                Action::Write { ep: 0, bytes: 100 },
                Action::RequestAt { conn: 1, at: 1050 },
                Action::RequestAt { conn: 2, at: 1100 }
            ]
        );
        act.clear();
        w.request(2, &mut act);
        assert_eq!(act, vec![Action::Write { ep: 4, bytes: 100 }]);
    }
}
