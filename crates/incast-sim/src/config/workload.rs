//! The `workload`, `background` and `run` sections: what the application does, what competes
//! with it and the run's budgets, and the rules they follow (run in the order `validate.rs`
//! lists).

use serde::{Deserialize, Serialize};

use super::section::{choices, section};
use super::{bad, ConfigError, Scenario, Transport, AN_HOUR, MAX_SENDERS, MAX_THINK_TIMES};
use crate::units::*;

/// Application workloads.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadKind {
    /// The client reads blocks from every server; block k+1 is requested when all of block k
    /// has arrived.
    SyncRead,
    /// N flows of `flow_size` bytes start together into one receiver.
    Incast,
    /// Poisson query traffic: `queries` requests at `query_load` of the receiver's link, each
    /// to a random server, sizes uniform in [`query_size_min`, `query_size_max`].
    Queries,
    /// A replicated key-value store (Riak): every one of `topology.senders` hosts is a client
    /// and a coordinator; each get asks `kv_replicas` distinct hosts for the value at once and
    /// completes when `kv_quorum` replies have arrived.
    KvGets,
    /// A MapReduce shuffle, all to all: `topology.senders` hosts serve map outputs (the
    /// last `map_hosts`) and run reducers (`reducers` in all, reducer i on host i mod
    /// `reducer_hosts`); each reducer fetches `blocks` map outputs of `sru` bytes from every
    /// map host but its own, one from a host at a time, at most `fanout_window` hosts at once, the next fetch asked
    /// when one completes (Hadoop's parallel copiers); the run ends when every reducer has
    /// every output.
    Shuffle,
    /// A schedule of flows between the `topology.senders` hosts (the `flows` section):
    /// background flows at an offered load with sizes from a flow-size CDF, and Poisson N:1
    /// incast bursts (HPCC's evaluation traffic); each flow a connection of its own, done
    /// when its last byte arrives; the run ends when every flow is done.
    Flows,
}

/// How a get's replicas are chosen.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum KvPlacement {
    /// A consistent-hashing ring with partitions claimed round-robin (Riak's default claim):
    /// a key's R replicas are R hosts in a row on the ring from a uniformly random one.
    Ring,
    /// R distinct hosts drawn uniformly at random.
    Uniform,
}

/// Where background flows start.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BackgroundSource {
    /// Each from a host of its own.
    OwnHosts,
    /// From the workload's servers (flow i from server i mod N), sharing their NICs.
    Senders,
}

/// Where background flows go.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BackgroundDestination {
    /// The workload's receiver: they share the incast bottleneck.
    Receiver,
    /// A sink host of their own: they cross the switch but not the incast bottleneck.
    Sink,
    /// Another of the workload's servers (with `source = "senders"`, flow i goes from server
    /// i mod N to server (i mod N + 1 + (i div N) mod (N − 1)) mod N): a key-value store's
    /// hand-off and anti-entropy transfers between its members.
    Peers,
}

choices! {
    WorkloadKind: SyncRead, Incast, Queries, KvGets, Shuffle, Flows;
    KvPlacement: Ring, Uniform;
    BackgroundSource: OwnHosts, Senders;
    BackgroundDestination: Receiver, Sink, Peers;
}

section! {
    /// What the application does.
    pub struct Workload {
        /// Workload kind.
        pub kind: WorkloadKind [Plain] = WorkloadKind::SyncRead,
        /// Server request unit: bytes each server returns per block (sync_read), bytes of one
        /// map output for one reducer (shuffle); none when `block` is given.
        pub sru: Option<u64> [Size] = Some(256_000),
        /// Block size striped over the servers (sync_read; instead of `sru`): server i of N
        /// returns ⌊S/N⌋ bytes, one more if i < S mod N.
        pub block: Option<u64> [Size] = None,
        /// Number of blocks read (sync_read); map outputs each host holds for each reducer
        /// (shuffle).
        pub blocks: u32 [Plain] = 20,
        /// Size of each request message, bytes (sync_read).
        pub request_size: u64 [Size] = 100,
        /// Bytes a server writes ahead of each response's data, in a write of their own: a
        /// protocol header, which leaves as a short segment of its own and shifts where the
        /// data's segments start and end (incastlab's block server writes 24; not counted as
        /// goodput). 0: a response is its data alone.
        pub response_header: u64 [Size] = 0,
        /// Each server waits a uniform random time in [0, jitter] before answering (sync_read) or
        /// starting its flow (incast).
        pub jitter: SimTime [Time] = 0,
        /// The client's pause after each block before it asks for the next (sync_read): after
        /// block k it waits `think_times[k mod len]`, as an application that processes a block
        /// first, or a testbed whose client is not scheduled at once. The pause counts in the
        /// next block's time (a block's time runs from the end of the one before), and the
        /// connections are idle through it. Empty: the next block is asked for at once.
        pub think_times: Vec<SimTime> [Times] = Vec::new(),
        /// Bytes per flow (incast).
        pub flow_size: Option<u64> [Size] = None,
        /// Application fan-out window (sync_read, shuffle): at most this many servers are asked
        /// at once; the next is asked when a fragment completes. 0 asks every server at once.
        pub fanout_window: u32 [Plain] = 0,
        /// Request staggering (sync_read): the k-th server of a block is asked k·stagger after
        /// the first. 0 asks them together.
        pub request_stagger: SimTime [Time] = 0,
        /// Number of queries (queries).
        pub queries: u32 [Plain] = 1000,
        /// Offered load as a share of the receiver's link (queries).
        pub query_load: f64 [Plain] = 0.5,
        /// Short flows beside an incast or a synchronized read, as a share of the receiver's
        /// link: Poisson arrivals of responses from a random server to the receiver, sizes by
        /// `query_size_min`/`query_size_max`/`query_size_cdf`, at most `queries` of them,
        /// arriving until the application finishes; their completion times are reported apart
        /// (`short_flows`; one still running when the run ends, with the application, counts
        /// at its age then, a lower bound, and `unfinished` says how many) and never count
        /// towards a block. Every transport carries them. 0: none. The mix of DCTCP's
        /// measurements (Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010): query
        /// traffic and short messages beside the incast.
        pub short_load: f64 [Plain] = 0.0,
        /// Smallest query response, bytes (queries).
        pub query_size_min: u64 [Size] = 10_000,
        /// Largest query response, bytes (queries).
        pub query_size_max: u64 [Size] = 50_000,
        /// Empirical CDF of query response sizes as (bytes, cumulative probability) points,
        /// sizes increasing, probabilities non-decreasing and ending at 1; sizes are interpolated
        /// linearly between points. Empty: uniform in [`query_size_min`, `query_size_max`].
        pub query_size_cdf: Vec<(u64, f64)> [Cdf] = Vec::new(),
        /// Operations (gets, and puts with `kv_put_fraction`) per second arriving at each host
        /// (kv_gets, Poisson); 0: derived from `kv_utilization`.
        pub kv_rate: f64 [Plain] = 0.0,
        /// Target average utilization of each host's link by the replies it receives (kv_gets),
        /// as a share of `topology.link`, used when `kv_rate` is 0: gets/s per host =
        /// utilization · link / (8 · R · (H−1)/H · mean value size) (a replica on the
        /// coordinator itself answers locally).
        pub kv_utilization: f64 [Plain] = 0.3,
        /// Replicas each get asks, R (kv_gets; Riak's n_val and R, 3 by default).
        pub kv_replicas: u32 [Plain] = 3,
        /// Replies a get (or acknowledgments a put) waits for (kv_gets); 0: all R. Later
        /// replies still cross the network.
        pub kv_quorum: u32 [Plain] = 0,
        /// Share of the operations that are puts (kv_gets): a put sends its value from the
        /// coordinator to its R replicas at once (a fan-out) and completes when `kv_quorum`
        /// of them have acknowledged it with a message of `request_size` bytes. The value
        /// bytes land on the replicas' links, so the load per host is the same as a get's.
        pub kv_put_fraction: f64 [Plain] = 0.0,
        /// How a get's replicas are chosen (kv_gets).
        pub kv_placement: KvPlacement [Plain] = KvPlacement::Ring,
        /// Bytes of every value (kv_gets) unless `query_size_cdf` gives a distribution.
        pub value_size: u64 [Size] = 100_000,
        /// How long gets keep arriving (kv_gets); the run ends when every reply has arrived.
        pub kv_duration: SimTime [Time] = PS_PER_S,
        /// The first part of `kv_duration` left out of every figure (kv_gets): connections start
        /// with no congestion state (slow-start threshold unset), so the first gets drop more
        /// than a cluster that has run for hours.
        pub kv_warmup: SimTime [Time] = 0,
        /// Head-of-line blocking at the servers (kv_gets): each host answers gets in order and
        /// stalls while the connection of the reply at the head of its queue holds more than
        /// `kv_send_buffer` unacknowledged bytes (a Riak vnode descheduled on a busy
        /// distribution port). false: every reply is written at once.
        pub kv_hol_blocking: bool [Plain] = false,
        /// Send buffer of each connection for `kv_hol_blocking`, bytes.
        pub kv_send_buffer: u64 [Size] = 128_000,
        /// Concurrent tasks (sync_read, incast): each reads from every server over its own
        /// connections and waits only for its own blocks.
        pub tasks: u32 [Plain] = 1,
        /// Reducers in all (shuffle), reducer i on host i mod `reducer_hosts` (as a job
        /// tracker hands reduce tasks to the task trackers in turn); 0: one per host.
        pub reducers: u32 [Plain] = 0,
        /// Hosts that run reducers (shuffle): hosts 0 .. reducer_hosts − 1; 0: every host.
        /// 1 puts every reducer on one host, the others only serving map outputs: the isolated
        /// fan-in a synchronized read models, without its barrier between blocks.
        pub reducer_hosts: u32 [Plain] = 0,
        /// Hosts that hold map outputs (shuffle): the last map_hosts hosts (a job with fewer
        /// map tasks than hosts, its reducers off them while there is room); 0: every host.
        /// A reducer on one of them reads its own host's outputs locally.
        pub map_hosts: u32 [Plain] = 0,
    }
}

section! {
    /// Long-lived background flows.
    pub struct Background {
        /// Number of long-lived flows.
        pub flows: u32 [Plain] = 0,
        /// Where they start.
        pub source: BackgroundSource [Plain] = BackgroundSource::OwnHosts,
        /// Where they go.
        pub destination: BackgroundDestination [Plain] = BackgroundDestination::Receiver,
        /// Whether their hosts negotiate ECN; `None`: as `tcp.ecn`. A flow is ECN-capable only
        /// if both of its ends are.
        pub ecn: Option<bool> [Plain] = None,
        /// How long background flows run before the workload starts.
        pub warmup: SimTime [Time] = from_ms(10),
    }
}

section! {
    /// Budgets and optional outputs.
    pub struct Run {
        /// Stop with an error after this many events.
        pub max_events: u64 [Plain] = 2_000_000_000,
        /// Stop with an error at this simulated time.
        pub max_time: SimTime [Time] = 3600 * PS_PER_S,
        /// Sample cwnd per flow and queue occupancy at this interval; 0 ("off") = no time series.
        pub sample_interval: SimTime [TimeOrOff] = 0,
        /// Upper bound on the number of time-series samples kept (fewer where the flows'
        /// windows would hold more than 10 million numbers in all).
        pub max_samples: u32 [Plain] = 100_000,
    }
}

/// The rules of the `workload` and `background` keys, in the steps
/// [`Scenario::validate`] runs in its order.
impl Scenario {
    /// The keys of the workload's kind, then its task count.
    pub(super) fn validate_workload(&self) -> Result<(), ConfigError> {
        let w = &self.workload;
        match w.kind {
            WorkloadKind::SyncRead => self.validate_sync_read()?,
            WorkloadKind::Queries => w.validate_queries()?,
            WorkloadKind::KvGets => self.validate_kv()?,
            WorkloadKind::Shuffle => self.validate_shuffle()?,
            WorkloadKind::Flows => self.validate_flows()?,
            WorkloadKind::Incast => match w.flow_size {
                None | Some(0) => {
                    return Err(bad(
                        "workload.flow_size",
                        "incast needs a positive flow_size",
                    ))
                }
                Some(f) if f > (1u64 << 50) => {
                    return Err(bad("workload.flow_size", "must be at most 2^50 bytes"))
                }
                _ => {}
            },
        }
        if w.tasks == 0 || w.tasks > 1000 {
            return Err(bad(
                "workload.tasks",
                format!("must be 1..1000, got {}", w.tasks),
            ));
        }
        self.validate_short()
    }

    /// Short flows beside the application: a load in [0, 1), only beside an incast or a
    /// synchronized read, their sizes and count by the queries' rules.
    fn validate_short(&self) -> Result<(), ConfigError> {
        let w = &self.workload;
        if w.short_load == 0.0 {
            return Ok(());
        }
        if !(w.short_load > 0.0 && w.short_load < 1.0) {
            return Err(bad(
                "workload.short_load",
                format!("must be in [0, 1), got {}", w.short_load),
            ));
        }
        if !matches!(w.kind, WorkloadKind::Incast | WorkloadKind::SyncRead) || w.tasks != 1 {
            return Err(bad(
                "workload.short_load",
                "short flows run beside one incast or sync_read task only",
            ));
        }
        // Every transport carries them: TCP and Swift as connections, NDP, EQDS and Homa as
        // flows or messages after the application's, RoCE as queue pairs.
        w.validate_short_sizes()
    }

    /// A synchronized read: an SRU or a block, and what it adds up to.
    fn validate_sync_read(&self) -> Result<(), ConfigError> {
        let (t, w) = (&self.topology, &self.workload);
        match (w.sru, w.block) {
            (Some(_), Some(_)) => {
                return Err(bad("workload.sru", "give either sru or block, not both"))
            }
            (None, None) => return Err(bad("workload.sru", "sync_read needs sru or block")),
            (Some(0), _) => return Err(bad("workload.sru", "must be positive")),
            (_, Some(b)) if b < t.senders as u64 => {
                return Err(bad(
                    "workload.block",
                    format!("{b} bytes cannot be striped over {} senders", t.senders),
                ))
            }
            _ => {}
        }
        if w.blocks == 0 {
            return Err(bad("workload.blocks", "must be at least 1"));
        }
        if w.request_size == 0 {
            return Err(bad("workload.request_size", "must be positive"));
        }
        let per_server = self.sru_of(0) as u128 * w.blocks as u128;
        if per_server > (1u128 << 50) {
            return Err(bad("workload.blocks", "total bytes per server exceed 2^50"));
        }
        Ok(())
    }

    /// Tasks beside the kind, the stagger and jitter of requests, and the pauses between
    /// blocks.
    pub(super) fn validate_tasks_and_timing(&self) -> Result<(), ConfigError> {
        let (t, w) = (&self.topology, &self.workload);
        if w.tasks > 1 && w.kind == WorkloadKind::Queries {
            return Err(bad(
                "workload.tasks",
                "concurrent tasks apply to sync_read and incast; queries are concurrent already",
            ));
        }
        if t.senders as u64 * w.tasks as u64 > MAX_SENDERS as u64 {
            return Err(bad(
                "workload.tasks",
                format!("senders × tasks must be at most {MAX_SENDERS}"),
            ));
        }
        if w.request_stagger.saturating_mul(t.senders as u64) > AN_HOUR {
            return Err(bad(
                "workload.request_stagger",
                "senders × stagger must be at most 3600s",
            ));
        }
        if w.jitter > AN_HOUR {
            return Err(bad("workload.jitter", "must be at most 3600s"));
        }
        if !w.think_times.is_empty() && w.kind != WorkloadKind::SyncRead {
            return Err(bad(
                "workload.think_times",
                "pauses between blocks apply to sync_read only (leave it empty)",
            ));
        }
        if w.think_times.len() > MAX_THINK_TIMES {
            return Err(bad(
                "workload.think_times",
                format!(
                    "at most {MAX_THINK_TIMES} pauses (they are used in turn), got {}",
                    w.think_times.len()
                ),
            ));
        }
        if let Some(i) = w.think_times.iter().position(|&p| p > AN_HOUR) {
            return Err(bad(
                "workload.think_times",
                format!("item {i}: each pause must be at most 3600s"),
            ));
        }
        Ok(())
    }

    /// How many background flows, and peers to send them to.
    pub(super) fn validate_background(&self) -> Result<(), ConfigError> {
        if self.background.flows > 10_000 {
            return Err(bad("background.flows", "must be at most 10000"));
        }
        if self.background.flows > 0
            && self.background.destination == BackgroundDestination::Peers
            && self.background.source == BackgroundSource::Senders
            && self.topology.senders < 2
        {
            return Err(bad(
                "background.destination",
                "\"peers\" sends each flow to another sender: it needs at least 2 senders",
            ));
        }
        Ok(())
    }

    /// A shuffle: its hosts, reducers and map outputs, and nothing beside it.
    fn validate_shuffle(&self) -> Result<(), ConfigError> {
        let w = &self.workload;
        let h = self.topology.senders;
        if !(2..=1000).contains(&h) {
            return Err(bad(
                "topology.senders",
                format!("a shuffle runs on 2..1000 hosts (each serves map outputs to the others' reducers), got {h}"),
            ));
        }
        if w.reducer_hosts > h {
            return Err(bad(
                "workload.reducer_hosts",
                format!(
                    "must be 0..{h} (the hosts, topology.senders), got {}",
                    w.reducer_hosts
                ),
            ));
        }
        if w.map_hosts > h {
            return Err(bad(
                "workload.map_hosts",
                format!(
                    "must be 0..{h} (the hosts, topology.senders), got {}",
                    w.map_hosts
                ),
            ));
        }
        let conns = self.shuffle_reducers() as u64 * self.shuffle_map_hosts() as u64;
        if conns > MAX_SENDERS as u64 {
            return Err(bad(
                "workload.reducers",
                format!(
                    "each reducer has a connection to every map host: reducers × map hosts must be at most {MAX_SENDERS}, got {conns}"
                ),
            ));
        }
        match (w.sru, w.block) {
            (Some(s), None) if s > 0 && s <= (1 << 40) => {}
            _ => return Err(bad(
                "workload.sru",
                "a shuffle fetches map outputs of sru bytes (1 byte to 2^40; not workload.block)",
            )),
        }
        if w.blocks == 0 {
            return Err(bad("workload.blocks", "must be at least 1"));
        }
        if w.request_size == 0 {
            return Err(bad("workload.request_size", "must be positive"));
        }
        self.validate_shuffle_company()
    }

    /// What a shuffle runs without: tasks, request jitter and stagger, background flows; and
    /// it runs over TCP.
    fn validate_shuffle_company(&self) -> Result<(), ConfigError> {
        let w = &self.workload;
        if w.tasks != 1 {
            return Err(bad(
                "workload.tasks",
                "a shuffle has no tasks: place its reducers with workload.reducers",
            ));
        }
        if w.request_stagger > 0 || w.jitter > 0 {
            return Err(bad(
                "workload.jitter",
                "a shuffle asks and answers at once (leave jitter and request_stagger at 0)",
            ));
        }
        if self.background.flows > 0 {
            return Err(bad(
                "background.flows",
                "a shuffle's traffic is all to all already; it runs without background flows",
            ));
        }
        if self.transport != Transport::Tcp {
            return Err(bad("transport", "a shuffle runs over TCP"));
        }
        Ok(())
    }

    /// A key-value store: its hosts, replicas, quorum and sizes.
    fn validate_kv(&self) -> Result<(), ConfigError> {
        let w = &self.workload;
        let h = self.topology.senders;
        if h < 2 {
            return Err(bad(
                "topology.senders",
                format!("kv_gets needs at least 2 hosts (each is a client and a replica), got {h}"),
            ));
        }
        if h > 4096 {
            return Err(bad(
                "topology.senders",
                format!("kv_gets runs a connection per pair of hosts: at most 4096 hosts, got {h}"),
            ));
        }
        if w.kv_replicas == 0 || w.kv_replicas > h {
            return Err(bad(
                "workload.kv_replicas",
                format!(
                    "{} replicas need as many distinct hosts, and the cluster has {h} (topology.senders); allowed 1..{h}",
                    w.kv_replicas
                ),
            ));
        }
        if !(0.0..=1.0).contains(&w.kv_put_fraction) {
            return Err(bad(
                "workload.kv_put_fraction",
                format!(
                    "a share of the operations, from 0 to 1, got {}",
                    w.kv_put_fraction
                ),
            ));
        }
        if w.kv_quorum > w.kv_replicas {
            return Err(bad(
                "workload.kv_quorum",
                format!(
                    "a get cannot wait for {} replies from {} replicas; allowed 0 (all) ..{}",
                    w.kv_quorum, w.kv_replicas, w.kv_replicas
                ),
            ));
        }
        if w.value_size == 0 || w.value_size > (1 << 40) {
            return Err(bad("workload.value_size", "must be 1..2^40 bytes"));
        }
        validate_cdf(&w.query_size_cdf)?;
        if w.request_size == 0 {
            return Err(bad("workload.request_size", "must be positive"));
        }
        self.validate_kv_load()?;
        self.validate_kv_company()
    }

    /// The offered load a key-value store's links can carry, and how long it runs.
    fn validate_kv_load(&self) -> Result<(), ConfigError> {
        let w = &self.workload;
        let h = self.topology.senders;
        if !(w.kv_rate >= 0.0 && w.kv_rate.is_finite()) {
            return Err(bad(
                "workload.kv_rate",
                format!("must be ≥ 0 gets/s, got {}", w.kv_rate),
            ));
        }
        if w.kv_rate == 0.0 && (w.kv_utilization.is_nan() || w.kv_utilization <= 0.0) {
            return Err(bad(
                "workload.kv_utilization",
                format!(
                    "must be above 0 (a share of the link, e.g. 0.5), got {}",
                    w.kv_utilization
                ),
            ));
        }
        let load =
            self.kv_gets_per_s() * 8.0 * self.kv_reply_bytes_per_get() / self.topology.link as f64;
        if load >= 1.0 {
            let (field, what) = if w.kv_rate > 0.0 {
                ("workload.kv_rate", format!("{} gets/s per host", w.kv_rate))
            } else {
                ("workload.kv_utilization", format!("{}", w.kv_utilization))
            };
            return Err(bad(
                field,
                format!(
                    "{what} offers {:.0}% of each host's link in replies; a load of 100% or more can never be carried (allowed: below 100%)",
                    100.0 * load
                ),
            ));
        }
        let gets = self.kv_gets_per_s() * h as f64 * w.kv_duration as f64 / PS_PER_S as f64;
        if gets > 1e8 {
            return Err(bad(
                "workload.kv_duration",
                format!("{gets:.3e} gets in all; at most 1e8 per run"),
            ));
        }
        if w.kv_duration == 0 || w.kv_duration > AN_HOUR {
            return Err(bad("workload.kv_duration", "must be between 1ps and 3600s"));
        }
        if w.kv_warmup >= w.kv_duration {
            return Err(bad(
                "workload.kv_warmup",
                "must be shorter than workload.kv_duration (the gets measured come after it)",
            ));
        }
        if w.kv_send_buffer == 0 {
            return Err(bad("workload.kv_send_buffer", "must be positive"));
        }
        Ok(())
    }

    /// What runs beside a key-value store: background flows among its members, TCP, no
    /// tasks.
    fn validate_kv_company(&self) -> Result<(), ConfigError> {
        let bg = &self.background;
        if bg.flows > 0
            && (bg.source != BackgroundSource::Senders
                || bg.destination != BackgroundDestination::Peers)
        {
            return Err(bad(
                "background",
                "a key-value store's background flows (hand-off, anti-entropy) run between its \
                 members: set source = \"senders\" and destination = \"peers\"",
            ));
        }
        if self.transport != Transport::Tcp {
            return Err(bad("transport", "kv_gets runs over TCP"));
        }
        if self.workload.tasks != 1 {
            return Err(bad(
                "workload.tasks",
                "kv_gets has no tasks: every host is a client already",
            ));
        }
        Ok(())
    }
}

impl Workload {
    /// Query traffic: the count, the load and the sizes.
    fn validate_queries(&self) -> Result<(), ConfigError> {
        if self.queries == 0 || self.queries > 10_000_000 {
            return Err(bad("workload.queries", "must be 1..10000000"));
        }
        if !(self.query_load > 0.0 && self.query_load <= 1.0) {
            return Err(bad(
                "workload.query_load",
                format!("must be in (0, 1], got {}", self.query_load),
            ));
        }
        self.validate_short_sizes()
    }

    /// The count and sizes of queries or of short flows.
    fn validate_short_sizes(&self) -> Result<(), ConfigError> {
        if self.queries == 0 || self.queries > 10_000_000 {
            return Err(bad("workload.queries", "must be 1..10000000"));
        }
        if self.query_size_min == 0 || self.query_size_min > self.query_size_max {
            return Err(bad(
                "workload.query_size_min",
                "must be positive and at most workload.query_size_max",
            ));
        }
        if self.query_size_max > (1 << 40) {
            return Err(bad("workload.query_size_max", "must be at most 2^40 bytes"));
        }
        validate_cdf(&self.query_size_cdf)?;
        Ok(())
    }
}

impl Run {
    /// The run's budgets.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        if self.max_events == 0 {
            return Err(bad("run.max_events", "must be positive"));
        }
        if self.max_time == 0 {
            return Err(bad("run.max_time", "must be positive"));
        }
        Ok(())
    }
}

/// The mean of an empirical CDF of sizes (`workload.query_size_cdf`), bytes: the first
/// point's mass at its size, then each step's mass at the middle of its sizes (sizes are
/// linear between points).
pub fn cdf_mean(points: &[(u64, f64)]) -> f64 {
    let (s0, p0) = points[0];
    let mut m = s0 as f64 * p0;
    for w in points.windows(2) {
        let ((sa, pa), (sb, pb)) = (w[0], w[1]);
        m += (pb - pa) * (sa + sb) as f64 / 2.0;
    }
    m
}

/// Check an empirical CDF of sizes.
fn validate_cdf(cdf: &[(u64, f64)]) -> Result<(), ConfigError> {
    let field = "workload.query_size_cdf";
    let Some(&(_, last)) = cdf.last() else {
        return Ok(());
    };
    if cdf.len() > 100_000 {
        return Err(bad(field, "at most 100000 points"));
    }
    let mut prev: Option<(u64, f64)> = None;
    for (i, &(size, p)) in cdf.iter().enumerate() {
        if size == 0 || size > (1 << 40) {
            return Err(bad(
                field,
                format!("point {i}: size must be 1..2^40 bytes, got {size}"),
            ));
        }
        if !(0.0..=1.0).contains(&p) {
            return Err(bad(
                field,
                format!("point {i}: probability must be in [0, 1], got {p}"),
            ));
        }
        if let Some((ps, pp)) = prev {
            if size <= ps || p < pp {
                return Err(bad(
                    field,
                    format!("point {i}: sizes must increase and probabilities not decrease ({ps}, {pp}) -> ({size}, {p})"),
                ));
            }
        }
        prev = Some((size, p));
    }
    if last != 1.0 {
        return Err(bad(
            field,
            format!("the last probability must be 1, got {last}"),
        ));
    }
    Ok(())
}
