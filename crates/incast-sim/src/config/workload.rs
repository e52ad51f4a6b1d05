//! The `workload`, `background`, `ndp` and `run` sections: what the application does, what
//! competes with it, the NDP transport's parameters and the run's budgets.

use serde::{Deserialize, Serialize};

use super::section::{choices, section};
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
    WorkloadKind: SyncRead, Incast, Queries, KvGets, Shuffle;
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
    /// NDP parameters.
    pub struct Ndp {
        /// Payload bytes per data packet (9000 in the seed: jumbo frames).
        pub mtu: u64 [Size] = 9000,
        /// Bytes of a header-only packet: a trimmed data packet, an ACK, a NACK or a PULL.
        pub header_bytes: u64 [Size] = 64,
        /// Packets a sender sends before its first pull.
        pub initial_window: u32 [Plain] = 10,
        /// Data packets a switch port queues before it trims arrivals to their headers.
        pub data_queue: u32 [Plain] = 8,
        /// Bytes of headers a switch port's priority queue holds before it bounces (or drops).
        pub header_queue: u64 [Size] = 72_000,
        /// Header-queue packets served per data packet when both queues wait (weighted round
        /// robin, so data cannot starve).
        pub header_weight: u32 [Plain] = 10,
        /// Return a header to its sender when the header queue overflows (else drop it).
        pub return_to_sender: bool [Plain] = true,
        /// A sender that hears nothing for this long resends what is unacknowledged.
        pub rto: SimTime [Time] = from_ms(1),
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
