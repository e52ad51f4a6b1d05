//! A MapReduce shuffle, all to all: Hadoop's reducers fetching their partitions of every map
//! output at once.
//!
//! The last M = `map_hosts` of the H hosts hold map outputs and serve them; `reducers`
//! reducers run on the hosts (reducer i on host i mod `reducer_hosts`), so a job with fewer
//! maps than hosts has its reducers off the map hosts as long as there is room. Each reducer fetches
//! `blocks` map outputs of `sru` bytes from every map host but its own (its own host's outputs
//! are read locally). As Hadoop 0.18
//! and 0.20's copiers do, it asks one host for one output at a time, at most `fanout_window`
//! hosts at once (mapred.reduce.parallel.copies), going round the hosts in an order of its own
//! (Hadoop shuffles the list so that the reducers do not all hit one host first), and asks the
//! next host as soon as a fetch completes: there is no barrier between rounds. The round ends
//! when every reducer has every output.
//!
//! So, unlike a synchronized read into one receiver, every host is at once a receiver (its
//! reducers' fetches fill its switch port) and a sender (its NIC carries the outputs other
//! hosts' reducers fetch, several at once), and the ACKs and requests of its outgoing flows
//! cross its own full port.
//!
//! Connection `r·M + j` carries reducer r's fetches from the j-th map host, host H − M + j
//! (none when that is the reducer's own host): the reducer's endpoint is its client ([`ConnId::receiver`]), the map host's its server
//! ([`ConnId::sender`]). A connection is kept for all of a reducer's fetches from one host (an
//! HTTP keep-alive connection). Like [`crate::app::task`], the shuffle answers events with
//! [`Effect`]s and never touches TCP, so it is tested alone; it allocates nothing after
//! [`Shuffle::new`].

use incast_workload::shuffle::{Copiers, Layout};
use serde::Serialize;

use crate::app::effect::Effect;
use crate::config::Scenario;
use crate::ids::ConnId;
use crate::rng::{Rng, Stream};
use crate::units::SimTime;

mod run;

/// The shuffle's state.
#[derive(Debug)]
pub struct Shuffle {
    /// Where the reducers and the map outputs are.
    layout: Layout,
    /// Bytes of one map output for one reducer.
    output: u64,
    request: u64,
    header: u64,
    start: SimTime,
    /// What each connection and each reducer has left to fetch (the copier rule).
    copiers: Copiers,
    /// Per connection: client offset at which the fetch in flight is complete.
    end: Vec<u64>,
    /// Per connection: requests the reducer has written, and the server has answered.
    asked: Vec<u32>,
    answered: Vec<u32>,
    /// Per reducer: when it had every output, from the start.
    pub reducer_times: Vec<Option<SimTime>>,
    done: u32,
    /// When the last reducer completed.
    pub finish: Option<SimTime>,
}

/// What a shuffle reports beside the run's usual figures.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct ShuffleReport {
    /// Reducers in all.
    pub reducers: u32,
    /// When each reducer had every map output, from the start, in reducer order (picoseconds).
    pub reducer_times: Vec<SimTime>,
    /// Data segments dropped (map outputs on their way to the reducers).
    pub data_drops: u64,
    /// Pure ACKs dropped (nearly all of them the reducers' ACKs, crossing the map hosts' ports).
    pub ack_drops: u64,
    /// Requests dropped (a reducer's ask for a map output, into the map host's port).
    pub request_drops: u64,
}

/// The order in which each reducer goes round the map hosts (indices 0..M of the map hosts,
/// host H − M + j), reducer after reducer, flattened: a Fisher-Yates shuffle drawn from the
/// reducer's own stream, so the simulator and the emulator (`incast emulate`) ask the hosts in
/// the same order for the same scenario and seed.
pub fn fetch_orders(sc: &Scenario) -> Vec<u32> {
    incast_workload::shuffle::fetch_orders(sc.shuffle_map_hosts(), sc.shuffle_reducers(), |r| {
        let mut rng = Rng::stream(sc.seed, Stream::ShuffleOrder(r));
        move |n| rng.up_to(n)
    })
}

/// The scenario's shuffle layout.
pub fn layout(sc: &Scenario) -> Layout {
    Layout::new(
        sc.topology.senders,
        sc.shuffle_map_hosts(),
        sc.shuffle_reducers(),
        sc.shuffle_reducer_hosts(),
    )
}

impl Shuffle {
    /// The scenario's shuffle, not yet started.
    pub fn new(sc: &Scenario) -> Shuffle {
        let w = &sc.workload;
        let layout = layout(sc);
        let reducers = layout.reducers;
        let conns = layout.slots() as usize;
        let copiers = Copiers::new(&layout, w.blocks, sc.shuffle_window(), fetch_orders(sc));
        Shuffle {
            layout,
            output: w.sru.unwrap_or(0),
            request: w.request_size,
            header: w.response_header,
            start: 0,
            copiers,
            end: vec![0; conns],
            asked: vec![0; conns],
            answered: vec![0; conns],
            reducer_times: vec![None; reducers as usize],
            done: 0,
            finish: None,
        }
    }

    /// Connections: one per (reducer, map host), the reducer's own host's never used.
    pub fn connections(&self) -> u32 {
        self.layout.slots()
    }

    /// The host reducer `r` runs on.
    #[inline]
    pub fn host_of(&self, r: u32) -> u32 {
        self.layout.host_of(r)
    }

    /// (map host, reducer's host) of connection `c`: the host of its server and of its client
    /// (the unused connection to its own host runs to the next one).
    #[inline]
    pub fn ends(&self, c: ConnId) -> (u32, u32) {
        self.layout.ends(c.0)
    }

    /// When the shuffle started.
    pub fn start_time(&self) -> SimTime {
        self.start
    }

    /// Application bytes the reducers have received so far on `c`'s `received` bytes (the
    /// response headers are not goodput).
    pub fn header_bytes(&self, c: ConnId, received: u64) -> u64 {
        (self.header * self.answered[c.index()] as u64).min(received)
    }

    /// Start every reducer's copiers at `now`.
    pub fn start(&mut self, now: SimTime, act: &mut Vec<Effect>) {
        self.start = now;
        for r in 0..self.layout.reducers {
            if self.copiers.remaining(r) == 0 {
                // Every output it needs is on its own host.
                self.complete(r, now, act);
            } else {
                self.fill(r, act);
            }
        }
    }

    /// Reducer `r` has every output it needs.
    fn complete(&mut self, r: u32, now: SimTime, act: &mut Vec<Effect>) {
        self.reducer_times[r as usize] = Some(now - self.start);
        self.done += 1;
        if self.done == self.layout.reducers {
            self.finish = Some(now);
            act.push(Effect::Finished);
        }
    }

    /// Reducer `r` asks hosts for outputs until `window` fetches are in flight or no host
    /// free of one has outputs left.
    fn fill(&mut self, r: u32, act: &mut Vec<Effect>) {
        let (asked, end) = (&mut self.asked, &mut self.end);
        let (fetch, request) = (self.header + self.output, self.request);
        self.copiers.fill(r, |c| {
            asked[c as usize] += 1;
            end[c as usize] += fetch;
            act.push(Effect::Write {
                ep: ConnId(c).receiver(),
                bytes: request,
            });
        });
    }

    /// The map host's server of `c` has read `received` request bytes in all: it answers
    /// every complete request with its header and the map output.
    pub fn on_server_data(&mut self, c: ConnId, received: u64, act: &mut Vec<Effect>) {
        let i = c.index();
        while self.answered[i] < self.asked[i]
            && received >= (self.answered[i] as u64 + 1) * self.request
        {
            self.answered[i] += 1;
            Effect::push_response(act, c.sender(), self.header, self.output);
        }
    }

    /// The reducer of `c` has received `received` bytes in all on it.
    pub fn on_client_data(
        &mut self,
        c: ConnId,
        received: u64,
        now: SimTime,
        act: &mut Vec<Effect>,
    ) {
        if !self.copiers.busy(c.0) || received < self.end[c.index()] {
            return;
        }
        let done = self.copiers.completed(c.0);
        if done.finished {
            self.complete(done.reducer, now, act);
            return;
        }
        self.fill(done.reducer, act);
    }

    /// The shuffle's report, with the drops the simulation counted.
    pub fn report(&self, drops: [u64; 3]) -> ShuffleReport {
        ShuffleReport {
            reducers: self.layout.reducers,
            reducer_times: self.reducer_times.iter().map(|t| t.unwrap_or(0)).collect(),
            data_drops: drops[0],
            ack_drops: drops[1],
            request_drops: drops[2],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::WorkloadKind;

    fn scenario(hosts: u32, reducers: u32, blocks: u32, window: u32) -> Scenario {
        let mut sc = Scenario::example(hosts);
        sc.workload.kind = WorkloadKind::Shuffle;
        sc.workload.reducers = reducers;
        sc.workload.blocks = blocks;
        sc.workload.fanout_window = window;
        sc.workload.sru = Some(1000);
        sc.workload.request_size = 100;
        sc
    }

    /// Writes of `act` as (connection, from the reducer, bytes).
    fn writes(act: &[Effect]) -> Vec<(u32, bool, u64)> {
        act.iter()
            .filter_map(|a| match a {
                Effect::Write { ep, bytes } => Some((ep.conn().0, !ep.is_sender(), *bytes)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn connections_join_each_reducer_to_every_map_host_but_its_own() {
        let sh = Shuffle::new(&scenario(4, 6, 1, 0));
        assert_eq!(sh.connections(), 24);
        // Reducer 5 runs on host 1 and fetches from hosts 0, 2, 3 (its connection 21 to
        // itself stays unused).
        let ends: Vec<_> = [20, 22, 23].map(|c| sh.ends(ConnId(c))).to_vec();
        assert_eq!(ends, vec![(0, 1), (2, 1), (3, 1)]);
        assert_eq!((sh.copiers.left(21), sh.copiers.remaining(5)), (0, 3));
        let mut sc = scenario(4, 2, 1, 0);
        sc.workload.reducer_hosts = 1;
        let sh = Shuffle::new(&sc);
        assert!((0..8).all(|c| sh.ends(ConnId(c)).1 == 0));
        // Hosts 2 and 3 hold the outputs, reducers run on all four: a reducer off the map
        // hosts fetches from both.
        let mut sc = scenario(4, 4, 3, 0);
        sc.workload.map_hosts = 2;
        let sh = Shuffle::new(&sc);
        assert_eq!(sh.connections(), 8);
        assert_eq!([0, 1, 2, 3].map(|r| sh.copiers.remaining(r)), [6, 6, 3, 3]);
        assert_eq!(sh.ends(ConnId(1)), (3, 0));
        assert_eq!(sh.ends(ConnId(5)), (3, 2));
        // Reducer 2's connection to its own host 2 is never used (it runs to host 3).
        let left = (sh.copiers.left(4), sh.copiers.left(5));
        assert_eq!((sh.ends(ConnId(4)), left), ((3, 2), (0, 3)));
    }

    #[test]
    fn a_reducer_on_the_only_map_host_is_done_at_once() {
        // Host 2 holds the outputs; reducer 2 runs there, reducers 0 and 1 fetch.
        let mut sc = scenario(3, 3, 1, 0);
        sc.workload.map_hosts = 1;
        let mut sh = Shuffle::new(&sc);
        let mut act = Vec::new();
        sh.start(7, &mut act);
        assert_eq!(sh.reducer_times, vec![None, None, Some(0)]);
        assert_eq!(writes(&act), vec![(0, true, 100), (1, true, 100)]);
    }

    #[test]
    fn each_reducer_asks_its_window_of_distinct_hosts_in_an_order_of_its_own() {
        let mut sh = Shuffle::new(&scenario(9, 3, 2, 3));
        let mut act = Vec::new();
        sh.start(0, &mut act);
        let w = writes(&act);
        assert_eq!(w.len(), 9);
        assert!(w.iter().all(|&(_, client, b)| client && b == 100));
        let firsts: Vec<Vec<u32>> = (0..3)
            .map(|r| {
                let mut v: Vec<u32> = w
                    .iter()
                    .map(|x| x.0)
                    .filter(|c| c / 9 == r)
                    .map(|c| c % 9)
                    .collect();
                assert!(!v.contains(&r), "never its own host");
                v.sort_unstable();
                v.dedup();
                assert_eq!(v.len(), 3, "three distinct hosts");
                v
            })
            .collect();
        assert!(
            firsts[0] != firsts[1] || firsts[1] != firsts[2],
            "{firsts:?}"
        );
    }

    #[test]
    fn a_completed_fetch_frees_its_slot_for_the_next_host_and_all_done_finishes() {
        let mut sh = Shuffle::new(&scenario(3, 1, 2, 1));
        let mut act = Vec::new();
        sh.start(0, &mut act);
        let first = writes(&act)[0].0;
        act.clear();
        // The server reads the request and answers with the output.
        sh.on_server_data(ConnId(first), 100, &mut act);
        assert_eq!(writes(&act), vec![(first, false, 1000)]);
        act.clear();
        sh.on_client_data(ConnId(first), 999, 5, &mut act);
        assert!(act.is_empty(), "not complete yet");
        sh.on_client_data(ConnId(first), 1000, 5, &mut act);
        // The window is one: the other host is asked next, not the same one again.
        let next = writes(&act);
        assert_eq!(next.len(), 1);
        assert_ne!(next[0].0, first);
        // Four fetches in all (2 hosts × 2 outputs); the last one finishes the shuffle.
        let (mut got, mut asked) = ([0u64; 3], [0u64; 3]);
        got[first as usize] = 1000;
        asked[first as usize] = 100;
        let mut conn = next[0].0;
        let mut t = 5;
        for _ in 0..3 {
            act.clear();
            let k = conn as usize;
            asked[k] += 100;
            sh.on_server_data(ConnId(conn), asked[k], &mut act);
            act.clear();
            got[k] += 1000;
            t += 5;
            sh.on_client_data(ConnId(conn), got[k], t, &mut act);
            if let Some(&(c, _, _)) = writes(&act).first() {
                conn = c;
            }
        }
        assert_eq!(act.last(), Some(&Effect::Finished));
        assert_eq!(sh.finish, Some(20));
        assert_eq!(sh.report([1, 2, 3]).reducer_times, vec![20]);
    }

    #[test]
    fn a_run_delivers_every_output_and_each_reducer_finishes_by_the_end() {
        let mut sc = scenario(6, 9, 3, 2);
        sc.workload.sru = Some(200_000);
        sc.workload.response_header = 24;
        let r = crate::Simulation::new(sc.clone()).unwrap().run().unwrap();
        // 9 reducers × 5 other hosts × 3 outputs of 200 KB; headers are not goodput.
        assert_eq!(r.app_bytes, 9 * 5 * 3 * 200_000);
        let sh = r.shuffle.clone().unwrap();
        assert_eq!(sh.reducers, 9);
        assert!(sh.reducer_times.iter().all(|&t| t > 0 && t <= r.duration));
        assert_eq!(sh.reducer_times.iter().max(), Some(&r.duration));
        // Every drop is counted as data, ACK or request.
        assert_eq!(sh.data_drops + sh.ack_drops + sh.request_drops, r.drops);
        // Same scenario and seed, same report.
        let again = crate::Simulation::new(sc).unwrap().run().unwrap();
        assert_eq!(crate::report_json(&r), crate::report_json(&again));
    }

    #[test]
    fn all_to_all_fills_the_map_hosts_ports_so_their_acks_drop_and_isolated_ones_do_not() {
        // 10 hosts, 2 reducers per host, 5 copies each: every port takes 10 fetches at once.
        let mut sc = scenario(10, 20, 2, 5);
        sc.workload.sru = Some(500_000);
        sc.topology.buffer = crate::config::QueueLimit::bytes(64_000);
        let all = crate::Simulation::new(sc.clone()).unwrap().run().unwrap();
        let all = all.shuffle.unwrap();
        // The same two reducers' fetches alone on one host: the map hosts' ports carry only
        // ACKs and requests, and never fill.
        sc.workload.reducers = 2;
        sc.workload.reducer_hosts = 1;
        let one = crate::Simulation::new(sc).unwrap().run().unwrap();
        let one = one.shuffle.unwrap();
        assert!(all.data_drops > 0 && one.data_drops > 0);
        assert_eq!(one.ack_drops + one.request_drops, 0);
        assert!(all.ack_drops > 0, "{all:?}");
    }

    #[test]
    fn bad_shuffles_are_refused_naming_the_field() {
        type Spoil = fn(&mut Scenario);
        let cases: [(&str, Spoil); 7] = [
            ("topology.senders", |s| s.topology.senders = 1),
            ("workload.reducer_hosts", |s| s.workload.reducer_hosts = 9),
            ("workload.map_hosts", |s| s.workload.map_hosts = 5),
            ("workload.sru", |s| s.workload.sru = None),
            ("workload.tasks", |s| s.workload.tasks = 2),
            ("background.flows", |s| s.background.flows = 1),
            ("workload.reducers", |s| s.workload.reducers = 100_000),
        ];
        for (field, spoil) in cases {
            let mut sc = scenario(4, 4, 1, 0);
            spoil(&mut sc);
            let e = sc.validate().unwrap_err().to_string();
            assert!(e.contains(field), "{field}: {e}");
        }
    }
}
