//! The normalized scenario: every value in base units (bits per second, bytes, picoseconds),
//! every default filled in.
//!
//! The Python layer parses user scenarios (unit strings, "did you mean" for unknown keys) and
//! hands this exact shape over as JSON; Rust callers (benchmarks, tests) build it directly.
//! `validate` re-checks every invariant the engine relies on, so no input can make it panic.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::units::*;

/// An invalid scenario: names the field and what is allowed.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("{field}: {message}")]
pub struct ConfigError {
    /// Dotted path of the offending field, e.g. `topology.buffer`.
    pub field: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

fn bad(field: &str, message: impl Into<String>) -> ConfigError {
    ConfigError {
        field: field.to_string(),
        message: message.into(),
    }
}

/// One complete scenario.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Seed of every random stream in the run.
    pub seed: u64,
    /// Transport of the workload's connections.
    pub transport: Transport,
    /// NDP parameters (transport = "ndp").
    pub ndp: Ndp,
    /// Hosts, links and switch buffers.
    pub topology: Topology,
    /// TCP parameters shared by every connection.
    pub tcp: Tcp,
    /// What the application does.
    pub workload: Workload,
    /// Long-lived flows competing with the workload.
    pub background: Background,
    /// Budgets and optional outputs.
    pub run: Run,
}

/// Topology kinds. A packet's path is computed from its route's ends and a path index, so
/// forwarding needs no tables.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TopologyKind {
    /// N senders, background hosts and one receiver on one switch.
    Star,
    /// Leaves of `hosts_per_leaf` hosts, every leaf joined to every one of `spines` spines.
    LeafSpine,
    /// A k-ary fat tree (Al-Fares et al.): k pods of k/2 ToR and k/2 aggregation switches,
    /// (k/2)² cores, k³/4 hosts, full bisection bandwidth.
    FatTree,
}

/// How hosts are placed on a multi-switch topology.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Consecutive hosts (servers, receiver, background) go to different leaves or ToRs, and
    /// on a fat tree to different pods: an incast crosses the fabric.
    Spread,
    /// Hosts fill one leaf or ToR after another: a small incast stays under one switch.
    Packed,
}

/// The transport every connection of the workload uses.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// TCP, configured by the `tcp` section.
    Tcp,
    /// NDP (Handley et al., SIGCOMM'17): trimming switches, receiver pulls; the `ndp` section.
    Ndp,
}

/// NDP parameters.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Ndp {
    /// Payload bytes per data packet (9000 in the seed: jumbo frames).
    pub mtu: u64,
    /// Bytes of a header-only packet: a trimmed data packet, an ACK, a NACK or a PULL.
    pub header_bytes: u64,
    /// Packets a sender sends before its first pull.
    pub initial_window: u32,
    /// Data packets a switch port queues before it trims arrivals to their headers.
    pub data_queue: u32,
    /// Bytes of headers a switch port's priority queue holds before it bounces (or drops).
    pub header_queue: u64,
    /// Header-queue packets served per data packet when both queues wait (weighted round
    /// robin, so data cannot starve).
    pub header_weight: u32,
    /// Return a header to its sender when the header queue overflows (else drop it).
    pub return_to_sender: bool,
    /// A sender that hears nothing for this long resends what is unacknowledged.
    pub rto: SimTime,
}

/// A queue's drop-tail limit: in bytes, in packets, or both (whichever is hit first).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(deny_unknown_fields)]
pub struct QueueLimit {
    /// Limit in frame bytes; `None` for no byte limit.
    pub bytes: Option<u64>,
    /// Limit in packets; `None` for no packet limit.
    pub packets: Option<u32>,
}

impl QueueLimit {
    /// No limit at all.
    pub const UNLIMITED: QueueLimit = QueueLimit {
        bytes: None,
        packets: None,
    };
}

/// Hosts and links.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// Topology kind.
    pub kind: TopologyKind,
    /// Number of servers answering the receiver.
    pub senders: u32,
    /// Hosts of a leaf-spine or fat tree; 0 for just enough (senders, receiver, background).
    pub hosts: u32,
    /// k of the fat tree (even); 0 for the smallest that holds `hosts`.
    pub fat_tree_k: u32,
    /// Hosts under each leaf (leaf-spine).
    pub hosts_per_leaf: u32,
    /// Spine switches (leaf-spine); 0 for as many as `hosts_per_leaf` (no oversubscription).
    pub spines: u32,
    /// Propagation delay of each link; 0 to spread `rtt` over the longest round trip's links.
    pub link_delay: SimTime,
    /// Where hosts sit in a leaf-spine or fat tree.
    pub placement: Placement,
    /// Rate of every access link, bits per second.
    pub link: u64,
    /// Rate of the receiver's access link (the incast bottleneck), bits per second.
    pub receiver_link: u64,
    /// Base round-trip time without queueing or serialization, picoseconds; each of the four
    /// link traversals of a round trip gets a quarter of it as propagation delay.
    pub rtt: SimTime,
    /// Drop-tail limit of every switch egress port.
    pub buffer: QueueLimit,
    /// Drop-tail limit of every host NIC queue (Linux hosts do not drop locally: unlimited).
    pub nic_buffer: QueueLimit,
    /// A buffer shared by all switch ports, bytes; `None` gives every port its own `buffer`.
    pub shared_buffer: Option<u64>,
    /// Dynamic threshold α of the shared buffer: a port may hold α times the free space.
    pub buffer_alpha: f64,
    /// RED at every switch port: minimum average queue (bytes) from which it signals;
    /// `None` for plain drop-tail.
    pub red_min: Option<u64>,
    /// RED: average queue (bytes) at which the signal probability reaches `red_max_p`.
    pub red_max: u64,
    /// RED: signal probability at `red_max`.
    pub red_max_p: f64,
    /// RED: weight of each arrival in the average queue.
    pub red_weight: f64,
    /// RED marks ECN-capable packets (CE) instead of dropping them.
    pub red_ecn: bool,
    /// PFC / 802.3x pause at every switch ingress: each ingress may hold `buffer` bytes, and
    /// when its bytes waiting in the switch reach XOFF the switch pauses the upstream sender
    /// until they fall to XON. Lossless as long as the headroom above XOFF absorbs what is
    /// in flight when the pause takes effect.
    pub pfc: bool,
    /// PFC XOFF threshold, bytes per ingress; `None`: `buffer` minus the headroom (two
    /// one-way delays at the link rate plus two full frames).
    pub pfc_xoff: Option<u64>,
    /// PFC XON threshold, bytes per ingress; `None`: XOFF minus two full frames.
    pub pfc_xon: Option<u64>,
    /// ECN marking threshold K of every switch egress port (DCTCP): a packet arriving to a
    /// queue at or above it is marked CE; unlimited = no marking.
    pub ecn_threshold: QueueLimit,
    /// Each packet a host sends waits a uniform random time in [0, host_jitter] before it
    /// reaches the NIC (order within a connection kept). Models host processing noise, like
    /// ns-2's `overhead_`; without it, perfectly periodic senders lock each other out of a
    /// drop-tail queue (the phase effect of Floyd and Jacobson, 1992). 0 turns it off.
    pub host_jitter: SimTime,
}

/// What a connection does when it sends again after being idle.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CwndRestart {
    /// Linux's `tcp_slow_start_after_idle`: halve cwnd per RTO of idleness, down to the IW.
    Idle,
    /// Every response starts in slow start from the initial window (the model's assumption).
    Block,
    /// Keep cwnd across idle periods.
    Never,
}

/// How RTOmin enters the retransmission timeout.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RtoFormula {
    /// RFC 6298: `RTO = max(RTOmin, SRTT + max(G, 4·RTTVAR))`: RTOmin is a floor, so every
    /// connection with a small RTT times out after exactly RTOmin.
    Rfc6298,
    /// Linux (`tcp_rtt_estimator`, `__tcp_set_rto`): `RTO = SRTT + max(4·RTTVAR, RTOmin)`:
    /// RTOmin is added to the smoothed RTT, so RTOs differ with each connection's RTT.
    Linux,
}

/// How a connection draws its retransmission timeout (Hafeez et al., RTO randomization).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RtoRandomization {
    /// The estimator's RTO, doubled per successive timeout.
    None,
    /// Uniform in [RTO − Δ/2, RTO + Δ/2], then the usual doubling (Hafeez Eq. 3).
    Uniform,
    /// Timeout-driven adaptation (Hafeez Eq. 8): after s successive timeouts, uniform over an
    /// interval ω^s·Δ wide around the RTO, instead of doubling.
    Tda,
    /// Multiplexing-aware adaptation: an interval ⌊N/(σ·ln N)⌋·Δ wide for N senders, then the
    /// usual doubling.
    Maa,
    /// Flow-size-aware adaptation: TDA with ω for flows that have sent less than
    /// `fsa_long_after` bytes and `rto_omega_long` for longer ones.
    Fsa,
}

/// Congestion control.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CongestionControl {
    /// Reno / NewReno (RFC 5681): halve on loss.
    Reno,
    /// CUBIC (RFC 9438), Linux's default: keep 70% on loss, grow along a cubic curve.
    Cubic,
    /// DCTCP (RFC 8257): ECN-capable, cuts cwnd by α/2 once per window of CE marks.
    Dctcp,
}

/// How the congestion window comes down during fast recovery.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryCwnd {
    /// Proportional rate reduction (RFC 6937; Linux since 3.2, ns-3's default): send about
    /// one segment per two delivered, so ACKs keep flowing during recovery.
    Prr,
    /// RFC 6675 / RFC 5681: cwnd drops to ssthresh at once; nothing is sent until the pipe
    /// estimate falls below it.
    Halve,
}

/// TCP parameters.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Tcp {
    /// Maximum segment size (payload bytes per packet).
    pub mss: u64,
    /// Bytes of headers in each frame beyond the payload (Ethernet+FCS, IP, TCP, timestamps).
    pub header_bytes: u64,
    /// Bytes on the wire beyond the frame (preamble, start delimiter, inter-frame gap).
    pub phy_overhead: u64,
    /// Initial congestion window, segments.
    pub initial_window: u32,
    /// Minimum retransmission timeout (RFC 6298 (2.4)).
    pub rto_min: SimTime,
    /// Maximum retransmission timeout (RFC 6298 (2.5)).
    pub rto_max: SimTime,
    /// Retransmission timeout before any RTT sample (RFC 6298 (2.1)); connections are
    /// established, so the handshake's sample normally replaces it.
    pub rto_initial: SimTime,
    /// Timer and RTT clock granularity G (RFC 6298): 1 µs, 1 ms, 4 ms (HZ=250)...
    pub clock_granularity: SimTime,
    /// How RTOmin combines with the RTT estimate.
    pub rto_formula: RtoFormula,
    /// How cwnd comes down during fast recovery.
    pub recovery_cwnd: RecoveryCwnd,
    /// Congestion control.
    pub congestion_control: CongestionControl,
    /// F-RTO (RFC 5682, SACK-enhanced, Linux's default): after a timeout, send new data
    /// rather than resend everything, and undo the window cut when data never retransmitted
    /// turns out to have arrived (the timeout was spurious).
    pub frto: bool,
    /// The workload's hosts (servers and receiver) negotiate ECN (RFC 3168): their data is
    /// ECN-capable, switches mark instead of dropping where they can, and Reno/CUBIC halve
    /// (CUBIC: ×0.7) once per window on an echo. DCTCP requires it.
    pub ecn: bool,
    /// DCTCP's gain g for the marked fraction α (RFC 8257: 1/16).
    pub dctcp_g: f64,
    /// RTO randomization policy.
    pub rto_randomization: RtoRandomization,
    /// Δ: width of the randomization interval (uniform, TDA, FSA) or its unit (MAA).
    pub rto_delta: SimTime,
    /// ω: growth of the interval per successive timeout (TDA; FSA's short flows).
    pub rto_omega: f64,
    /// ω for FSA's long flows.
    pub rto_omega_long: f64,
    /// σ of MAA's ⌊N/(σ·ln N)⌋.
    pub rto_sigma: f64,
    /// FSA: a flow that has sent more than this many bytes is long.
    pub fsa_long_after: u64,
    /// Delayed-ACK timeout; 0 turns delayed ACKs off (every segment is acknowledged at once).
    pub delayed_ack: SimTime,
    /// SACK (RFC 2018) with RFC 6675 loss recovery; off means NewReno (RFC 6582).
    pub sack: bool,
    /// Limited transmit (RFC 3042).
    pub limited_transmit: bool,
    /// Receiver's advertised window, bytes.
    pub receive_window: u64,
    /// Congestion-window restart policy.
    pub cwnd_restart: CwndRestart,
    /// Duplicate ACKs (or SACKed segments above a hole) that signal a loss.
    pub dupthresh: u32,
}

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
}

/// What the application does.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// Workload kind.
    pub kind: WorkloadKind,
    /// Server request unit: bytes each server returns per block (sync_read).
    pub sru: Option<u64>,
    /// Block size striped over the servers, S/N each (sync_read; instead of `sru`).
    pub block: Option<u64>,
    /// Number of blocks read (sync_read).
    pub blocks: u32,
    /// Size of each request message, bytes (sync_read).
    pub request_size: u64,
    /// Each server waits a uniform random time in [0, jitter] before answering (sync_read) or
    /// starting its flow (incast).
    pub jitter: SimTime,
    /// Bytes per flow (incast).
    pub flow_size: Option<u64>,
    /// Application fan-out window (sync_read): at most this many servers are asked at once;
    /// the next is asked when a fragment completes. 0 asks every server at once.
    pub fanout_window: u32,
    /// Request staggering (sync_read): the k-th server of a block is asked k·stagger after
    /// the first. 0 asks them together.
    pub request_stagger: SimTime,
    /// Number of queries (queries).
    pub queries: u32,
    /// Offered load as a share of the receiver's link (queries).
    pub query_load: f64,
    /// Smallest query response, bytes (queries).
    pub query_size_min: u64,
    /// Largest query response, bytes (queries).
    pub query_size_max: u64,
    /// Empirical CDF of query response sizes as (bytes, cumulative probability) points,
    /// sizes increasing, probabilities non-decreasing and ending at 1; sizes are interpolated
    /// linearly between points. Empty: uniform in [`query_size_min`, `query_size_max`].
    pub query_size_cdf: Vec<(u64, f64)>,
    /// Concurrent tasks (sync_read, incast): each reads from every server over its own
    /// connections and waits only for its own blocks.
    pub tasks: u32,
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
}

/// Long-lived background flows.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Background {
    /// Number of long-lived flows.
    pub flows: u32,
    /// Where they start.
    pub source: BackgroundSource,
    /// Where they go.
    pub destination: BackgroundDestination,
    /// Whether their hosts negotiate ECN; `None`: as `tcp.ecn`. A flow is ECN-capable only
    /// if both of its ends are.
    pub ecn: Option<bool>,
    /// How long background flows run before the workload starts.
    pub warmup: SimTime,
}

/// Budgets and optional outputs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Run {
    /// Stop with an error after this many events.
    pub max_events: u64,
    /// Stop with an error at this simulated time.
    pub max_time: SimTime,
    /// Sample cwnd per flow and queue occupancy at this interval; 0 = no time series.
    pub sample_interval: SimTime,
    /// Upper bound on the number of time-series samples kept.
    pub max_samples: u32,
}

/// Hard bounds that keep a scenario within what one machine can hold.
pub const MAX_SENDERS: u32 = 1_000_000;

impl Scenario {
    /// A 1 Gbps star with `senders` servers, 64 KB per port, RTOmin 200 ms, 256 KB SRUs.
    pub fn example(senders: u32) -> Scenario {
        Scenario {
            seed: 1,
            transport: Transport::Tcp,
            ndp: Ndp {
                mtu: 9000,
                header_bytes: 64,
                initial_window: 10,
                data_queue: 8,
                header_queue: 72_000,
                header_weight: 10,
                return_to_sender: true,
                rto: from_ms(1),
            },
            topology: Topology {
                kind: TopologyKind::Star,
                senders,
                hosts: 0,
                fat_tree_k: 0,
                hosts_per_leaf: 16,
                spines: 0,
                link_delay: 0,
                placement: Placement::Spread,
                link: 1_000_000_000,
                receiver_link: 1_000_000_000,
                rtt: from_us(100),
                buffer: QueueLimit {
                    bytes: Some(64_000),
                    packets: None,
                },
                nic_buffer: QueueLimit::UNLIMITED,
                red_min: None,
                red_max: 0,
                red_max_p: 0.1,
                red_weight: 0.002,
                red_ecn: false,
                shared_buffer: None,
                buffer_alpha: 1.0,
                ecn_threshold: QueueLimit::UNLIMITED,
                pfc: false,
                pfc_xoff: None,
                pfc_xon: None,
                host_jitter: from_us(1),
            },
            tcp: Tcp {
                mss: 1448,
                header_bytes: 70,
                phy_overhead: 20,
                initial_window: 10,
                rto_min: from_ms(200),
                rto_max: 120 * PS_PER_S,
                rto_initial: PS_PER_S,
                clock_granularity: PS_PER_US,
                rto_formula: RtoFormula::Linux,
                recovery_cwnd: RecoveryCwnd::Prr,
                congestion_control: CongestionControl::Reno,
                frto: true,
                ecn: false,
                dctcp_g: 1.0 / 16.0,
                rto_randomization: RtoRandomization::None,
                rto_delta: 0,
                rto_omega: 2.0,
                rto_omega_long: 4.0,
                rto_sigma: 1.0,
                fsa_long_after: 100_000,
                delayed_ack: 0,
                sack: true,
                limited_transmit: true,
                receive_window: 4 * 1024 * 1024,
                cwnd_restart: CwndRestart::Idle,
                dupthresh: 3,
            },
            workload: Workload {
                kind: WorkloadKind::SyncRead,
                sru: Some(256_000),
                block: None,
                blocks: 20,
                request_size: 100,
                jitter: 0,
                flow_size: None,
                fanout_window: 0,
                request_stagger: 0,
                queries: 1000,
                query_load: 0.5,
                query_size_min: 10_000,
                query_size_max: 50_000,
                query_size_cdf: Vec::new(),
                tasks: 1,
            },
            background: Background {
                flows: 0,
                source: BackgroundSource::OwnHosts,
                destination: BackgroundDestination::Receiver,
                ecn: None,
                warmup: from_ms(10),
            },
            run: Run {
                max_events: 2_000_000_000,
                max_time: 3600 * PS_PER_S,
                sample_interval: 0,
                max_samples: 100_000,
            },
        }
    }

    /// Parse the normalized JSON form, then validate it.
    pub fn from_json(text: &str) -> Result<Scenario, ConfigError> {
        let s: Scenario = serde_json::from_str(text).map_err(|e| bad("scenario", e.to_string()))?;
        s.validate()?;
        Ok(s)
    }

    /// Hosts the scenario places: servers, the receiver, background hosts and their sink.
    pub fn hosts_needed(&self) -> u32 {
        let bg = &self.background;
        let mut n = self.topology.senders + 1;
        if bg.flows > 0 {
            if bg.source == BackgroundSource::OwnHosts {
                n += bg.flows;
            }
            if bg.destination == BackgroundDestination::Sink {
                n += 1;
            }
        }
        n
    }

    fn validate_shape(&self) -> Result<(), ConfigError> {
        let t = &self.topology;
        let need = self.hosts_needed();
        if t.hosts > 0 && t.hosts < need {
            return Err(bad(
                "topology.hosts",
                format!(
                    "{} hosts cannot hold {need} (senders, receiver and background hosts)",
                    t.hosts
                ),
            ));
        }
        if t.hosts > MAX_SENDERS {
            return Err(bad(
                "topology.hosts",
                format!("must be at most {MAX_SENDERS}"),
            ));
        }
        if t.link_delay > PS_PER_S {
            return Err(bad("topology.link_delay", "must be at most 1s"));
        }
        match t.kind {
            TopologyKind::Star => {}
            TopologyKind::LeafSpine => {
                if t.hosts_per_leaf == 0 || t.hosts_per_leaf > 4096 {
                    return Err(bad("topology.hosts_per_leaf", "must be 1..4096"));
                }
                if t.spines > 4096 {
                    return Err(bad("topology.spines", "must be at most 4096"));
                }
                let leaves = t.hosts.max(need).div_ceil(t.hosts_per_leaf) as u64;
                let spines = if t.spines == 0 {
                    t.hosts_per_leaf
                } else {
                    t.spines
                } as u64;
                if leaves * spines > 4_000_000 {
                    return Err(bad(
                        "topology.spines",
                        format!("{leaves} leaves × {spines} spines is too many links"),
                    ));
                }
            }
            TopologyKind::FatTree => {
                let k = t.fat_tree_k;
                if k > 0 && (k % 2 == 1 || k > 128) {
                    return Err(bad(
                        "topology.fat_tree_k",
                        format!("must be even and at most 128 (k³/4 hosts), got {k}"),
                    ));
                }
                let k = crate::topology::fat_tree_k(self) as u64;
                let cap = k * k * k / 4;
                if k > 128 {
                    return Err(bad(
                        "topology.senders",
                        format!("{need} hosts need a fat tree with k > 128"),
                    ));
                }
                if (need as u64) > cap || (t.hosts as u64) > cap {
                    return Err(bad(
                        "topology.hosts",
                        format!(
                            "a k = {k} fat tree holds {cap} hosts, but {} are asked for",
                            need.max(t.hosts)
                        ),
                    ));
                }
            }
        }
        if t.kind != TopologyKind::Star && t.shared_buffer.is_some() {
            return Err(bad(
                "topology.shared_buffer",
                "a shared buffer is modelled for the star's single switch only",
            ));
        }
        Ok(())
    }

    fn validate_ndp(&self) -> Result<(), ConfigError> {
        let n = &self.ndp;
        if self.workload.kind != WorkloadKind::Incast {
            return Err(bad(
                "workload.kind",
                "NDP runs the incast workload (N flows into one receiver); set workload.kind = \"incast\"",
            ));
        }
        if self.background.flows > 0 {
            return Err(bad(
                "background.flows",
                "background flows are TCP; NDP runs without them",
            ));
        }
        if n.mtu == 0 || n.mtu > 65_000 {
            return Err(bad(
                "ndp.mtu",
                format!("must be 1..65000 bytes, got {}", n.mtu),
            ));
        }
        if n.header_bytes == 0 || n.header_bytes > 1000 {
            return Err(bad("ndp.header_bytes", "must be 1..1000 bytes"));
        }
        if n.initial_window == 0 || n.initial_window > 100_000 {
            return Err(bad("ndp.initial_window", "must be 1..100000 packets"));
        }
        if n.data_queue == 0 {
            return Err(bad("ndp.data_queue", "must hold at least one packet"));
        }
        if n.header_queue < n.header_bytes {
            return Err(bad("ndp.header_queue", "must hold at least one header"));
        }
        if n.header_weight == 0 || n.header_weight > 1000 {
            return Err(bad("ndp.header_weight", "must be 1..1000"));
        }
        if n.rto == 0 {
            return Err(bad("ndp.rto", "must be positive"));
        }
        Ok(())
    }

    /// Frame bytes of a full-sized segment (payload and headers; preamble and gap excluded).
    pub fn full_frame(&self) -> u64 {
        self.tcp.mss + self.tcp.header_bytes
    }

    /// Check every invariant the engine relies on.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let t = &self.topology;
        if t.senders == 0 || t.senders > MAX_SENDERS {
            return Err(bad(
                "topology.senders",
                format!("must be between 1 and {MAX_SENDERS}, got {}", t.senders),
            ));
        }
        if t.link == 0 {
            return Err(bad("topology.link", "rate must be positive"));
        }
        if t.receiver_link == 0 {
            return Err(bad("topology.receiver_link", "rate must be positive"));
        }
        if t.host_jitter > PS_PER_S {
            return Err(bad("topology.host_jitter", "must be at most 1s"));
        }
        if t.rtt > 10 * PS_PER_S {
            return Err(bad("topology.rtt", "must be at most 10s"));
        }
        self.validate_shape()?;
        if self.transport == Transport::Ndp {
            self.validate_ndp()?;
        }
        let frame = self.full_frame();
        for (name, lim) in [
            ("topology.buffer", t.buffer),
            ("topology.nic_buffer", t.nic_buffer),
        ] {
            if let Some(b) = lim.bytes {
                if b < frame {
                    return Err(bad(
                        name,
                        format!("{b} bytes is smaller than one full packet ({frame} bytes)"),
                    ));
                }
            }
            if lim.packets == Some(0) {
                return Err(bad(name, "must hold at least one packet"));
            }
        }
        let c = &self.tcp;
        if c.mss == 0 || c.mss > 65_000 {
            return Err(bad(
                "tcp.mss",
                format!("must be 1..65000 bytes, got {}", c.mss),
            ));
        }
        if c.header_bytes > 1000 || c.phy_overhead > 1000 {
            return Err(bad(
                "tcp.header_bytes",
                "headers must be at most 1000 bytes",
            ));
        }
        if c.initial_window == 0 || c.initial_window > 10_000 {
            return Err(bad(
                "tcp.initial_window",
                format!("must be 1..10000 segments, got {}", c.initial_window),
            ));
        }
        if c.clock_granularity == 0 {
            return Err(bad(
                "tcp.clock_granularity",
                "must be positive (e.g. 1us, 1ms, 4ms)",
            ));
        }
        if c.rto_min == 0 {
            return Err(bad("tcp.rto_min", "must be positive"));
        }
        if c.rto_max < c.rto_min {
            return Err(bad("tcp.rto_max", "must be at least tcp.rto_min"));
        }
        if c.rto_max > 3600 * PS_PER_S {
            return Err(bad("tcp.rto_max", "must be at most 3600s"));
        }
        if c.rto_initial == 0 || c.rto_initial > 3600 * PS_PER_S {
            return Err(bad("tcp.rto_initial", "must be between 1ps and 3600s"));
        }
        if c.rto_randomization != RtoRandomization::None {
            if c.rto_delta == 0 {
                return Err(bad(
                    "tcp.rto_delta",
                    "randomization needs a positive interval Δ",
                ));
            }
            if c.rto_randomization != RtoRandomization::Maa && c.rto_delta > 2 * c.rto_min {
                return Err(bad(
                    "tcp.rto_delta",
                    format!(
                        "must be at most 2·tcp.rto_min ({} ps) so every RTO stays positive, got {} ps",
                        2 * c.rto_min,
                        c.rto_delta
                    ),
                ));
            }
        }
        for (name, v) in [
            ("tcp.rto_omega", c.rto_omega),
            ("tcp.rto_omega_long", c.rto_omega_long),
        ] {
            if !(1.0..=100.0).contains(&v) {
                return Err(bad(name, format!("must be between 1 and 100, got {v}")));
            }
        }
        if !(c.rto_sigma > 0.0 && c.rto_sigma <= 1000.0) {
            return Err(bad(
                "tcp.rto_sigma",
                format!("must be in (0, 1000], got {}", c.rto_sigma),
            ));
        }
        if t.shared_buffer.is_some_and(|b| b < frame) {
            return Err(bad(
                "topology.shared_buffer",
                "must hold at least one full packet",
            ));
        }
        if let Some(min) = t.red_min {
            if min >= t.red_max {
                return Err(bad(
                    "topology.red_min",
                    format!(
                        "{min} bytes must be below topology.red_max ({} bytes)",
                        t.red_max
                    ),
                ));
            }
            if t.buffer.bytes.is_some_and(|b| t.red_max > b) {
                return Err(bad("topology.red_max", "must be at most topology.buffer"));
            }
            if !(t.red_max_p > 0.0 && t.red_max_p <= 1.0) {
                return Err(bad("topology.red_max_p", "must be in (0, 1]"));
            }
            if !(t.red_weight > 0.0 && t.red_weight <= 1.0) {
                return Err(bad("topology.red_weight", "must be in (0, 1]"));
            }
        }
        if !(t.buffer_alpha > 0.0 && t.buffer_alpha <= 64.0) {
            return Err(bad(
                "topology.buffer_alpha",
                format!("must be in (0, 64], got {}", t.buffer_alpha),
            ));
        }
        let marks = t.ecn_threshold != QueueLimit::UNLIMITED || (t.red_min.is_some() && t.red_ecn);
        if c.congestion_control == CongestionControl::Dctcp && !marks {
            return Err(bad(
                "tcp.congestion_control",
                "dctcp needs ECN marking at the switch: set topology.ecn_threshold (e.g. \"30KB\") or RED with topology.red_ecn",
            ));
        }
        if let (Some(k), Some(b)) = (t.ecn_threshold.bytes, t.buffer.bytes) {
            if k >= b {
                return Err(bad(
                    "topology.ecn_threshold",
                    format!("{k} bytes must be below topology.buffer ({b} bytes)"),
                ));
            }
        }
        if let (Some(k), Some(b)) = (t.ecn_threshold.packets, t.buffer.packets) {
            if k >= b {
                return Err(bad(
                    "topology.ecn_threshold",
                    format!("{k} packets must be below topology.buffer ({b} packets)"),
                ));
            }
        }
        if c.congestion_control == CongestionControl::Dctcp && !c.ecn {
            return Err(bad(
                "tcp.ecn",
                "dctcp needs ECN: set tcp.ecn = true (or leave it unset)",
            ));
        }
        if t.pfc {
            self.validate_pfc()?;
        }
        if !(c.dctcp_g > 0.0 && c.dctcp_g <= 1.0) {
            return Err(bad(
                "tcp.dctcp_g",
                format!("must be in (0, 1], got {}", c.dctcp_g),
            ));
        }
        if c.receive_window < c.mss {
            return Err(bad("tcp.receive_window", "must be at least one MSS"));
        }
        if c.dupthresh == 0 || c.dupthresh > 1000 {
            return Err(bad("tcp.dupthresh", "must be 1..1000"));
        }
        let w = &self.workload;
        match w.kind {
            WorkloadKind::SyncRead => {
                match (w.sru, w.block) {
                    (Some(_), Some(_)) => {
                        return Err(bad("workload.sru", "give either sru or block, not both"))
                    }
                    (None, None) => {
                        return Err(bad("workload.sru", "sync_read needs sru or block"))
                    }
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
            }
            WorkloadKind::Queries => {
                if w.queries == 0 || w.queries > 10_000_000 {
                    return Err(bad("workload.queries", "must be 1..10000000"));
                }
                if !(w.query_load > 0.0 && w.query_load <= 1.0) {
                    return Err(bad(
                        "workload.query_load",
                        format!("must be in (0, 1], got {}", w.query_load),
                    ));
                }
                if w.query_size_min == 0 || w.query_size_min > w.query_size_max {
                    return Err(bad(
                        "workload.query_size_min",
                        "must be positive and at most workload.query_size_max",
                    ));
                }
                if w.query_size_max > (1 << 40) {
                    return Err(bad("workload.query_size_max", "must be at most 2^40 bytes"));
                }
                validate_cdf(&w.query_size_cdf)?;
            }
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
        if w.request_stagger.saturating_mul(t.senders as u64) > 3600 * PS_PER_S {
            return Err(bad(
                "workload.request_stagger",
                "senders × stagger must be at most 3600s",
            ));
        }
        if w.jitter > 3600 * PS_PER_S {
            return Err(bad("workload.jitter", "must be at most 3600s"));
        }
        if self.background.flows > 10_000 {
            return Err(bad("background.flows", "must be at most 10000"));
        }
        if self.run.max_events == 0 {
            return Err(bad("run.max_events", "must be positive"));
        }
        if self.run.max_time == 0 {
            return Err(bad("run.max_time", "must be positive"));
        }
        Ok(())
    }

    /// PFC's (XOFF, XON) per ingress in bytes, defaults derived; `None` without PFC or
    /// without a byte limit per port.
    pub fn pfc_thresholds(&self) -> Option<(u64, u64)> {
        let t = &self.topology;
        if !t.pfc {
            return None;
        }
        let buffer = t.buffer.bytes?;
        let frame = self.full_frame() + self.tcp.phy_overhead;
        let rate = t.link.max(t.receiver_link) as u128;
        // What still arrives after the switch decides to pause: the pause frame waits for the
        // frame on the wire towards the sender, crosses the link, and meanwhile the sender
        // keeps sending, and finishes its frame in service.
        let in_flight = (2 * (t.rtt / 4) as u128 * rate / 8 / PS_PER_S as u128) as u64;
        let headroom = in_flight + 2 * frame;
        let xoff = t.pfc_xoff.unwrap_or(buffer.saturating_sub(headroom));
        let xon = t.pfc_xon.unwrap_or(xoff.saturating_sub(2 * frame));
        Some((xoff, xon))
    }

    fn validate_pfc(&self) -> Result<(), ConfigError> {
        let t = &self.topology;
        let frame = self.full_frame();
        if t.shared_buffer.is_some() {
            return Err(bad(
                "topology.pfc",
                "PFC with a shared buffer is not modelled; use per-port buffers",
            ));
        }
        let Some(buffer) = t.buffer.bytes else {
            return Err(bad(
                "topology.buffer",
                "PFC needs a byte limit per port (e.g. \"64KB\"): it is the buffer of each ingress",
            ));
        };
        if t.red_min.is_some() && !t.red_ecn {
            return Err(bad(
                "topology.red_ecn",
                "PFC is lossless, so RED may only mark: set topology.red_ecn = true",
            ));
        }
        let (xoff, xon) = self.pfc_thresholds().expect("pfc with a byte buffer");
        if t.pfc_xoff.is_none() && xoff < frame {
            return Err(bad(
                "topology.buffer",
                format!(
                    "{buffer} bytes leave no room for PFC's headroom (two one-way delays at the link rate plus two frames); raise it or set topology.pfc_xoff"
                ),
            ));
        }
        if xoff < frame || xoff > buffer {
            return Err(bad(
                "topology.pfc_xoff",
                format!("must be between one full frame ({frame} bytes) and topology.buffer ({buffer} bytes), got {xoff}"),
            ));
        }
        if xon > xoff {
            return Err(bad(
                "topology.pfc_xon",
                format!("XON ({xon} bytes) must be at or below XOFF ({xoff} bytes)"),
            ));
        }
        Ok(())
    }

    /// Bytes server `i` returns per block.
    pub fn sru_of(&self, i: u32) -> u64 {
        match (self.workload.sru, self.workload.block) {
            (Some(s), _) => s,
            (None, Some(b)) => {
                let n = self.topology.senders as u64;
                b / n + u64::from((i as u64) < b % n)
            }
            _ => 0,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_is_valid_and_round_trips_through_json() {
        let s = Scenario::example(8);
        s.validate().unwrap();
        let j = serde_json::to_string(&s).unwrap();
        assert_eq!(Scenario::from_json(&j).unwrap(), s);
    }

    #[test]
    fn buffer_smaller_than_a_packet_is_rejected_by_name() {
        let mut s = Scenario::example(4);
        s.topology.buffer.bytes = Some(1000);
        let e = s.validate().unwrap_err();
        assert_eq!(e.field, "topology.buffer");
    }

    #[test]
    fn zero_senders_and_zero_rate_are_rejected() {
        let mut s = Scenario::example(0);
        assert_eq!(s.validate().unwrap_err().field, "topology.senders");
        s.topology.senders = 2;
        s.topology.link = 0;
        assert_eq!(s.validate().unwrap_err().field, "topology.link");
    }

    #[test]
    fn striped_block_spreads_the_remainder() {
        let mut s = Scenario::example(3);
        s.workload.sru = None;
        s.workload.block = Some(10);
        assert_eq!((s.sru_of(0), s.sru_of(1), s.sru_of(2)), (4, 3, 3));
    }

    #[test]
    fn pfc_thresholds_default_below_the_buffer_and_xon_above_xoff_is_rejected() {
        let mut s = Scenario::example(4);
        s.topology.pfc = true;
        // 64 KB less 2 × 25 us at 1 Gbps (6250 B) and two 1538-byte frames.
        assert_eq!(s.pfc_thresholds(), Some((54_674, 51_598)));
        s.validate().unwrap();
        s.topology.pfc_xoff = Some(40_000);
        s.topology.pfc_xon = Some(50_000);
        assert_eq!(s.validate().unwrap_err().field, "topology.pfc_xon");
        s.topology.pfc_xoff = Some(70_000);
        assert_eq!(s.validate().unwrap_err().field, "topology.pfc_xoff");
        s.topology.pfc_xoff = None;
        s.topology.pfc_xon = None;
        s.topology.buffer.bytes = Some(8_000);
        assert_eq!(s.validate().unwrap_err().field, "topology.buffer");
    }

    #[test]
    fn bad_cdfs_are_rejected_by_name() {
        let mut s = Scenario::example(4);
        s.workload.kind = WorkloadKind::Queries;
        for cdf in [
            vec![(100, 0.5)],
            vec![(100, 0.5), (50, 1.0)],
            vec![(100, 0.7), (200, 0.5), (300, 1.0)],
            vec![(0, 1.0)],
        ] {
            s.workload.query_size_cdf = cdf;
            assert_eq!(s.validate().unwrap_err().field, "workload.query_size_cdf");
        }
        s.workload.query_size_cdf = vec![(100, 0.0), (1000, 1.0)];
        s.validate().unwrap();
    }

    #[test]
    fn unknown_json_key_is_an_error_not_a_panic() {
        let e = Scenario::from_json(r#"{"seed": 1, "bogus": 2}"#).unwrap_err();
        assert_eq!(e.field, "scenario");
    }
}
