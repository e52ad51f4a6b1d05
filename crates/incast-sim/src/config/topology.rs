//! The `topology` section: hosts, links and switch buffers.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::section::{choices, section, Shape};
use super::ConfigError;
use crate::units::*;

/// Topology kinds. A connection's route is worked out once from its ends and a path index
/// (arithmetically for the built-in shapes, from distance tables for a file), so forwarding a
/// packet is an array read.
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
    /// Switches, hosts and links as a topology file describes them (`file`); routes by
    /// shortest path with per-flow ECMP.
    File,
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

choices! {
    TopologyKind: Star, LeafSpine, FatTree, File;
    Placement: Spread, Packed;
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

    /// A limit in bytes.
    pub const fn bytes(n: u64) -> QueueLimit {
        QueueLimit {
            bytes: Some(n),
            packets: None,
        }
    }
}

impl Shape for QueueLimit {
    fn load(field: &str, v: Value) -> Result<Self, ConfigError> {
        QueueLimit::deserialize(&v).map_err(|_| {
            let shown = super::shown(&v);
            super::bad(
                field,
                format!("expected {{\"bytes\": n or null, \"packets\": n or null}}, got {shown}"),
            )
        })
    }
    fn shape() -> Value {
        let n = json!({"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]});
        json!({"type": "object", "properties": {"bytes": n, "packets": n}, "additionalProperties": false})
    }
}

/// A cap on a host's egress rate: a share of its link or a rate.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RateCap {
    /// Share of the host's link rate, in (0, 1]; `None` when `bps` is given.
    pub share: Option<f64>,
    /// Rate in bits per second; `None` when `share` is given.
    pub bps: Option<u64>,
}

impl RateCap {
    /// The capped rate of a link of `link` bits per second.
    pub fn of(&self, link: u64) -> u64 {
        match (self.share, self.bps) {
            (_, Some(bps)) => bps.min(link),
            (Some(share), None) => ((link as f64 * share).round() as u64).max(1),
            (None, None) => link,
        }
    }
}

impl Shape for RateCap {
    fn load(field: &str, v: Value) -> Result<Self, ConfigError> {
        RateCap::deserialize(&v).map_err(|_| {
            let shown = super::shown(&v);
            super::bad(
                field,
                format!("expected {{\"share\": x or null, \"bps\": n or null}}, got {shown}"),
            )
        })
    }
    fn shape() -> Value {
        let share = json!({"anyOf": [{"type": "number"}, {"type": "null"}]});
        let bps = json!({"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]});
        json!({"type": "object", "properties": {"share": share, "bps": bps}, "additionalProperties": false})
    }
}

section! {
    /// Hosts and links.
    pub struct Topology {
        /// Topology kind.
        pub kind: TopologyKind [Plain] = TopologyKind::Star,
        /// The topology of kind "file": the name of a TOML file of switches, hosts and links
        /// (found beside the scenario file), or its tables inline. Stored results carry the
        /// tables (base units), not the name. Its links set every rate, delay and buffer, so
        /// link, receiver_link, rtt, buffer and the other shape keys stay unset.
        pub file: Option<super::Graph> [TopologyFile] = None,
        /// Number of servers answering the receiver.
        pub senders: u32 [Plain] = 1,
        /// Hosts of a leaf-spine or fat tree; 0 for just enough (senders, receiver, background).
        pub hosts: u32 [Plain] = 0,
        /// k of the fat tree (even); 0 for the smallest that holds `hosts`.
        pub fat_tree_k: u32 [Plain] = 0,
        /// Hosts under each leaf (leaf-spine).
        pub hosts_per_leaf: u32 [Plain] = 16,
        /// Spine switches (leaf-spine); 0 for as many as `hosts_per_leaf` (no oversubscription).
        pub spines: u32 [Plain] = 0,
        /// Propagation delay of each link; 0 to spread `rtt` over the longest round trip's links.
        pub link_delay: SimTime [Time] = 0,
        /// Rate of every switch-to-switch link (leaf-spine, fat tree), bits per second; 0: `link`.
        /// A leaf is oversubscribed hosts_per_leaf·link : spines·uplink.
        pub uplink: u64 [Rate] = 0,
        /// Drop-tail limit of every switch port towards another switch (leaf-spine, fat tree);
        /// `None`: `buffer`.
        pub fabric_buffer: Option<QueueLimit> [Limit] = None,
        /// Propagation delay of every switch-to-switch link (leaf-spine, fat tree); 0: as
        /// every other link (`link_delay`, or `rtt` spread over the longest path).
        pub fabric_delay: SimTime [Time] = 0,
        /// Where hosts sit in a leaf-spine or fat tree.
        pub placement: Placement [Plain] = Placement::Spread,
        /// Rate of every access link, bits per second.
        pub link: u64 [Rate] = 1_000_000_000,
        /// Rate of the receiver's access link (the incast bottleneck), bits per second; when
        /// not given, `link`.
        pub receiver_link: u64 [Rate] = 1_000_000_000,
        /// Base round-trip time without queueing or serialization, picoseconds; each of the four
        /// link traversals of a round trip gets a quarter of it as propagation delay.
        pub rtt: SimTime [Time] = from_us(100),
        /// Drop-tail limit of every switch egress port.
        pub buffer: QueueLimit [Limit] = QueueLimit::bytes(64_000),
        /// Drop-tail limit of the switch port towards the receiver (the incast bottleneck)
        /// alone, e.g. a deep-buffered port facing a storage client; `None`: `buffer`.
        pub receiver_buffer: Option<QueueLimit> [Limit] = None,
        /// Drop-tail limit of every host NIC queue (Linux hosts do not drop locally: unlimited).
        pub nic_buffer: QueueLimit [Limit] = QueueLimit::UNLIMITED,
        /// A buffer shared by all switch ports, bytes; `None` gives every port its own `buffer`.
        pub shared_buffer: Option<u64> [Size] = None,
        /// Dynamic threshold α of the shared buffer: a port may hold α times the free space.
        pub buffer_alpha: f64 [Plain] = 1.0,
        /// RED at every switch port: minimum average queue (bytes) from which it signals;
        /// `None` for plain drop-tail.
        pub red_min: Option<u64> [Size] = None,
        /// RED: average queue (bytes) at which the signal probability reaches `red_max_p`.
        pub red_max: u64 [Size] = 0,
        /// RED: signal probability at `red_max`.
        pub red_max_p: f64 [Plain] = 0.1,
        /// RED: weight of each arrival in the average queue.
        pub red_weight: f64 [Plain] = 0.002,
        /// RED marks ECN-capable packets (CE) instead of dropping them.
        pub red_ecn: bool [Plain] = false,
        /// PFC / 802.3x pause at every switch ingress: each ingress may hold `buffer` bytes, and
        /// when its bytes waiting in the switch reach XOFF the switch pauses the upstream sender
        /// until they fall to XON. Lossless as long as the headroom above XOFF absorbs what is
        /// in flight when the pause takes effect.
        pub pfc: bool [Plain] = false,
        /// PFC XOFF threshold, bytes per ingress; `None`: `buffer` minus the headroom (two
        /// one-way delays at the link rate plus two full frames).
        pub pfc_xoff: Option<u64> [Size] = None,
        /// PFC XON threshold, bytes per ingress; `None`: XOFF minus two full frames.
        pub pfc_xon: Option<u64> [Size] = None,
        /// ECN marking threshold K of every switch egress port (DCTCP): a packet arriving to a
        /// queue at or above it is marked CE; unlimited = no marking.
        pub ecn_threshold: QueueLimit [Limit] = QueueLimit::UNLIMITED,
        /// Each packet a host sends waits a uniform random time in [0, host_jitter] before it
        /// reaches the NIC (order within a connection kept). Models host processing noise, like
        /// ns-2's `overhead_`; without it, perfectly periodic senders lock each other out of a
        /// drop-tail queue (the phase effect of Floyd and Jacobson, 1992). 0 turns it off.
        pub host_jitter: SimTime [Time] = from_us(1),
        /// Each packet's delay over every link is drawn uniformly from [delay − link_jitter/2,
        /// delay + link_jitter/2] (order on a link kept), so the mean RTT is unchanged. Models
        /// software switches and virtual NICs (veth pairs forwarded by softirqs), whose
        /// per-packet timing noise is tens of µs and, like host jitter, breaks the phase lock
        /// of drop-tail queues; at most twice the per-link delay. 0 (default): fixed delays.
        pub link_jitter: SimTime [Time] = 0,
        /// Host NICs as token-bucket shapers instead of wires (Linux's tc tbf on a veth, as
        /// testbeds in network namespaces shape their hosts): a packet leaves as soon as the
        /// bucket holds its bytes, and the bucket refills at the link's rate up to `nic_burst`
        /// bytes, so after an idle spell up to `nic_burst` bytes leave back to back at once,
        /// then packets leave at the link's rate. At least one full frame. 0 (default): a NIC
        /// serializes each frame at its rate, as a real NIC does.
        pub nic_burst: u64 [Size] = 0,
        /// Switch ports towards hosts as token-bucket shapers instead of wires (tc tbf on the
        /// port's veth, as a testbed in network namespaces shapes its bottleneck): after an
        /// idle spell up to `port_burst` bytes leave back to back at once, then frames leave
        /// at the link's rate, so two frames can reach the receiver a frame time sooner than a
        /// wire lets them, and a delivery-rate sample over them (BBR's) reads above the link.
        /// At least one full frame. 0 (default): a port serializes each frame at its rate, as a
        /// hardware switch does.
        pub port_burst: u64 [Size] = 0,
        /// Cap on every host's egress (a token bucket in front of its NIC, like tc's tbf): a
        /// share of its link ("80%") or a rate ("800Mbps"); frames leave at the line rate
        /// but no faster on average than the cap, with bursts of `host_rate_burst`. `None`:
        /// no cap.
        pub host_rate_cap: Option<RateCap> [RateCap] = None,
        /// Bucket depth of `host_rate_cap`, bytes on the wire; 0: one full frame (pure pacing).
        pub host_rate_burst: u64 [Size] = 0,
    }
}
