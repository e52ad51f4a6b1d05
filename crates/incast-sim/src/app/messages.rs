//! The message plan of the message transports (RoCE, EQDS, Homa): who sends how many bytes to
//! whom, and when, computed once here from the scenario; each transport's workload turns the
//! plan's messages into its own agents (queue pairs, EQDS flows, Homa messages) and asks the
//! plan when to post them.
//!
//! - `incast`: one message of `workload.flow_size` from each server to the receiver, all
//!   posted at the workload's start;
//! - `sync_read`: each server's SRU per block, message `b·servers + i` server `i`'s of block
//!   `b`; a block starts when the receiver holds every message of the one before, each of its
//!   messages posted after a uniform draw in [0, `workload.jitter`] from the block's start;
//! - `flows`: the flow schedule of [`crate::app::flows::schedule`], one message per flow,
//!   posted at its start.
//!
//! The transports only post and complete; the plan keeps the block under way and the blocks'
//! times. Its jitter draws come from the random stream the transport names (each transport
//! keeps its own, so its runs stay what they were).

use incast_workload::flows::Class;

use crate::config::{Scenario, WorkloadKind};
use crate::rng::{Rng, Stream};
use crate::topology::Network;
use crate::units::SimTime;

/// One message of the plan: `bytes` from physical host `src` to `dst`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MsgSpec {
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Message bytes.
    pub bytes: u64,
    /// When it is posted, from the workload's start (a schedule's; 0 in blocks and incasts).
    pub start: SimTime,
    /// The incast burst it belongs to, in a flow schedule.
    pub burst: Option<u32>,
}

/// A post the transport carries out: message `msg`, after `delay` from now (0: at once).
pub type Post = (u32, SimTime);

/// How the messages follow one another.
#[derive(Debug)]
pub enum Plan {
    /// Message `i` is posted at `starts[i]` after the workload's start.
    Flows(Vec<SimTime>),
    /// A synchronized read's blocks.
    Blocks(Blocks),
}

/// A synchronized read under way: message `b·servers + i` is server `i`'s of block `b`.
#[derive(Debug)]
pub struct Blocks {
    servers: u32,
    blocks: u32,
    /// The block under way, when it started, and its messages not yet complete.
    block: u32,
    started: SimTime,
    left: u32,
    /// Each completed block's duration.
    times: Vec<SimTime>,
    jitter: SimTime,
    rng: Rng,
}

/// The messages of scenario `sc` on `net` and how they follow one another; a synchronized
/// read's jitter draws from `jitter_stream`.
pub fn plan(sc: &Scenario, net: &Network, jitter_stream: Stream) -> (Vec<MsgSpec>, Plan) {
    let n = sc.topology.senders;
    let spec = |i: u32, bytes: u64| MsgSpec {
        src: net.host(i),
        dst: net.receiver,
        bytes,
        start: 0,
        burst: None,
    };
    match sc.workload.kind {
        WorkloadKind::Flows => {
            let specs: Vec<MsgSpec> = crate::app::flows::schedule(sc)
                .iter()
                .map(|f| MsgSpec {
                    src: net.host(f.src),
                    dst: net.host(f.dst),
                    bytes: f.bytes,
                    start: f.start,
                    burst: match f.class {
                        Class::Background => None,
                        Class::Incast(id) => Some(id),
                    },
                })
                .collect();
            let starts = specs.iter().map(|s| s.start).collect();
            (specs, Plan::Flows(starts))
        }
        WorkloadKind::SyncRead => {
            let blocks = sc.workload.blocks;
            let specs = (0..blocks)
                .flat_map(|_| (0..n).map(|i| spec(i, sc.sru_of(i))))
                .collect();
            let plan = Plan::Blocks(Blocks {
                servers: n,
                blocks,
                block: 0,
                started: 0,
                left: n,
                times: Vec::new(),
                jitter: sc.workload.jitter,
                rng: Rng::stream(sc.seed, jitter_stream),
            });
            (specs, plan)
        }
        // Validation lets the message transports run the incast, sync_read and flows
        // workloads only.
        _ => {
            let size = sc.workload.flow_size.unwrap_or(0);
            let specs = (0..n).map(|i| spec(i, size)).collect();
            (specs, Plan::Flows(vec![0; n as usize]))
        }
    }
}

/// The short flows beside the application (`workload.short_load`, [`crate::app::short`]) as
/// messages from their servers to the receiver, posted at their arrivals; a transport appends
/// them after the application's and does not count them towards its completion.
pub fn short(sc: &Scenario, net: &Network) -> Vec<MsgSpec> {
    crate::app::short::arrivals(sc)
        .iter()
        .map(|s| MsgSpec {
            src: net.host(s.server),
            dst: net.receiver,
            bytes: s.bytes,
            start: s.at,
            burst: None,
        })
        .collect()
}

/// Which of the `n` paths between a message's two hosts it takes, drawn from the transport's
/// `rng` (per-message ECMP: every packet of a message follows its one path).
pub fn draw_path(rng: &mut Rng, n: u32) -> u32 {
    if n <= 1 {
        0
    } else {
        rng.up_to(u64::from(n) - 1) as u32
    }
}

impl Plan {
    /// Servers per block of a synchronized read; `None` for a list of messages.
    pub fn servers(&self) -> Option<u32> {
        match self {
            Plan::Blocks(b) => Some(b.servers),
            Plan::Flows(_) => None,
        }
    }

    /// Messages the application waits for (a synchronized read's over all its blocks).
    pub fn messages(&self) -> usize {
        match self {
            Plan::Blocks(b) => b.servers as usize * b.blocks as usize,
            Plan::Flows(starts) => starts.len(),
        }
    }

    /// Each completed block's duration (none for a list of messages).
    pub fn block_times(&self) -> Vec<SimTime> {
        match self {
            Plan::Blocks(b) => b.times.clone(),
            Plan::Flows(_) => Vec::new(),
        }
    }

    /// The posts at the workload's start, `now`: every message of a list at its start time,
    /// or the first block's.
    pub fn first_posts(&mut self, now: SimTime) -> Vec<Post> {
        match self {
            Plan::Flows(starts) => (0..).zip(starts.iter().copied()).collect(),
            Plan::Blocks(b) if b.blocks > 0 => b.begin(0, now),
            Plan::Blocks(_) => Vec::new(),
        }
    }

    /// One of the application's messages completed at `now`: the posts of the block that
    /// starts with it (none unless it was the last of its block and another follows).
    pub fn completed(&mut self, now: SimTime) -> Vec<Post> {
        let Plan::Blocks(b) = self else {
            return Vec::new();
        };
        b.left -= 1;
        if b.left > 0 {
            return Vec::new();
        }
        b.times.push(now - b.started);
        match b.block + 1 {
            next if next < b.blocks => b.begin(next, now),
            _ => Vec::new(),
        }
    }
}

impl Blocks {
    /// Block `block` starts at `now`: each server's message after its jitter, in server order.
    fn begin(&mut self, block: u32, now: SimTime) -> Vec<Post> {
        (self.block, self.started, self.left) = (block, now, self.servers);
        let first = block * self.servers;
        (first..first + self.servers)
            .map(|m| {
                let delay = match self.jitter {
                    0 => 0,
                    j => self.rng.up_to(j),
                };
                (m, delay)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::Network;

    fn scenario(kind: &str, extra: &str) -> Scenario {
        let text = format!(
            r#"{{"workload": {{"kind": "{kind}", "flow_size": 64000, "sru": 32000, "blocks": 3{extra}}},
                "topology": {{"senders": 4}}}}"#
        );
        Scenario::from_json(&text).unwrap()
    }

    #[test]
    fn an_incast_posts_every_server_at_once_to_the_receiver() {
        let sc = scenario("incast", "");
        let net = Network::build(&sc);
        let (specs, mut plan) = plan(&sc, &net, Stream::Roce(0));
        assert_eq!(specs.len(), 4);
        assert!(specs
            .iter()
            .all(|s| s.dst == net.receiver && s.bytes == 64_000));
        assert_eq!(plan.servers(), None);
        assert_eq!(plan.first_posts(0), vec![(0, 0), (1, 0), (2, 0), (3, 0)]);
        assert!(plan.completed(5).is_empty());
        assert!(plan.block_times().is_empty());
    }

    #[test]
    fn a_block_starts_when_the_last_of_the_one_before_completes() {
        let sc = scenario("sync_read", "");
        let net = Network::build(&sc);
        let (specs, mut plan) = plan(&sc, &net, Stream::Roce(0));
        assert_eq!((specs.len(), plan.messages()), (12, 12));
        assert_eq!(plan.servers(), Some(4));
        assert_eq!(plan.first_posts(10).len(), 4);
        for t in [20, 30, 40] {
            assert!(plan.completed(t).is_empty());
        }
        // The fourth completion ends block 0 (30 ps after it started) and posts block 1.
        let next: Vec<u32> = plan.completed(40).iter().map(|p| p.0).collect();
        assert_eq!(next, vec![4, 5, 6, 7]);
        assert_eq!(plan.block_times(), vec![30]);
        for _ in 0..4 {
            plan.completed(50);
        }
        // The last block's end posts nothing more.
        for _ in 0..3 {
            assert!(plan.completed(70).is_empty());
        }
        assert!(plan.completed(70).is_empty());
        assert_eq!(plan.block_times(), vec![30, 10, 20]);
    }

    #[test]
    fn jitter_stays_within_its_bound_and_follows_the_seed() {
        let sc = scenario("sync_read", r#", "jitter": 10000000"#);
        let net = Network::build(&sc);
        let draws = |s| plan(&sc, &net, s).1.first_posts(0);
        let a = draws(Stream::Roce(0));
        assert!(a.iter().all(|&(_, d)| d <= 10_000_000));
        assert!(a.iter().any(|&(_, d)| d > 0));
        assert_eq!(a, draws(Stream::Roce(0)));
        assert_ne!(a, draws(Stream::Homa(0)));
    }
}
