//! The `topology` section: hosts, links and switch buffers, and the rules they follow (run in
//! the order `validate.rs` lists; a described topology's in `graph/`).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::section::{choices, section, Shape};
use super::{bad, ConfigError, Scenario, Transport, MAX_SENDERS};
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
    /// The receiver and the senders sit on the hosts `topology.listed_hosts` names (as
    /// another simulator's traffic matrix placed them).
    Listed,
}

choices! {
    TopologyKind: Star, LeafSpine, FatTree, File;
    Placement: Spread, Packed, Listed;
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
        /// Where hosts sit in a leaf-spine or fat tree: "spread" interleaves the senders over
        /// switches and pods, "packed" fills one switch after another, "listed" puts them on
        /// the hosts `listed_hosts` names.
        pub placement: Placement [Plain] = Placement::Spread,
        /// With placement "listed": the physical hosts (numbered switch by switch, pod by pod,
        /// from 0) of the receiver first, then of each sender in order, as htsim's connection
        /// matrices name an incast's ends; the first `senders` after the receiver are used.
        pub listed_hosts: Vec<u32> [Hosts] = Vec::new(),
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
        /// A buffer of this many bytes in every switch (a star's one, each leaf and spine, each
        /// ToR, aggregation and core switch), shared by its egress ports; `None` gives every
        /// port its own `buffer` alone. Under PFC each ingress's headroom is carved out of it
        /// and the rest is the pool the ingresses draw on (`pfc_xoff`, `pfc_alpha`).
        pub shared_buffer: Option<u64> [Size] = None,
        /// Dynamic threshold α of the shared buffer: a port may hold α times the free space
        /// (Choudhury and Hahne, IEEE/ACM ToN 1998). Not under PFC, which never drops at an
        /// egress: there the ingresses' thresholds bound the pool.
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
        /// PFC XON threshold, bytes per ingress; `None`: XOFF minus two full frames. With a
        /// shared buffer it needs a static `pfc_xoff` (the dynamic one resumes at
        /// `pfc_xon_offset` below it).
        pub pfc_xon: Option<u64> [Size] = None,
        /// PFC headroom of every ingress, bytes: what the switch still takes over a link after
        /// it has decided to pause it. `None`: two one-way delays at the link's rate plus two
        /// full frames (the pause frame waits for the frame on the wire towards the sender and
        /// crosses the link while the sender keeps sending and finishes its frame in service);
        /// HPCC's ns-3 gives three one-way delays. Without a shared buffer, XOFF defaults to
        /// `buffer` minus it; with one, it is carved out of each switch's `shared_buffer`
        /// (as Broadcom's MMU reserves it), and the rest is the pool.
        pub pfc_headroom: Option<u64> [Size] = None,
        /// PFC over a shared buffer without a static `pfc_xoff`: an ingress is paused when its
        /// use of its switch's pool reaches α times the pool's free bytes (the dynamic
        /// threshold of Choudhury and Hahne, IEEE/ACM ToN 1998, applied per ingress as
        /// Broadcom's switches do). Default 1/8: HPCC's ns-3 (`pfc_a_shift` 3 at the host
        /// rate; it doubles α per doubling of a faster port's rate).
        pub pfc_alpha: f64 [Plain] = 0.125,
        /// PFC over a shared buffer with the dynamic threshold: a paused ingress resumes when
        /// its headroom is empty and its pool use is this far below the threshold of the
        /// moment (or it holds nothing). `None`: two full frames.
        pub pfc_xon_offset: Option<u64> [Size] = None,
        /// In-band network telemetry at every switch egress (INT-capable switches, as HPCC
        /// needs): a packet that asks for it records the port's queue length, bytes sent, time
        /// and rate as it leaves (Li et al., "HPCC: High Precision Congestion Control",
        /// SIGCOMM 2019).
        pub int: bool [Plain] = false,
        /// INT's queue length counts the departing packet too, as Broadcom's htsim records it;
        /// false: the bytes queued behind it, as HPCC's ns-3 does (one frame less).
        pub int_qlen_with_packet: bool [Plain] = false,
        /// ECN marking as a packet starts to leave a switch egress, on the instantaneous queue
        /// behind it, RED-style (as DCQCN's switches do, Zhu et al., "Congestion Control for
        /// Large-Scale RDMA Deployments", SIGCOMM 2015): never below Kmin bytes, with
        /// probability rising linearly to `ecn_pmax` at `ecn_kmax`, always above. A plain
        /// probability per packet, unlike RED's (`red_min`), which averages the queue on
        /// arrival and spaces its signals by a count. The paper uses Kmin 5KB, Kmax 200KB,
        /// Pmax 1%; HPCC's ns-3 scales Kmin and Kmax with the link rate. `None`: off.
        pub ecn_kmin: Option<u64> [Size] = None,
        /// Egress ECN marking: queue (bytes) at and above which every ECT packet is marked.
        pub ecn_kmax: u64 [Size] = 200_000,
        /// Egress ECN marking: marking probability just below `ecn_kmax`.
        pub ecn_pmax: f64 [Plain] = 0.01,
        /// Report the fabric in detail (the report's `fabric` section): pause frames and paused
        /// time per link, peak buffer use per switch, headroom overruns, egress ECN marks, and
        /// per flow the time it was held at paused ports, with the victim flows (held by a
        /// pause that spread back from a congested egress the flow does not cross, each flow
        /// judged against its own route). On by itself with PFC over a shared buffer,
        /// `ecn_kmin` or `int`; off, older runs keep their reports as they were.
        pub fabric_report: bool [Plain] = false,
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

/// The rules of the `topology` keys that need no other section, in the steps
/// [`Scenario::validate`] runs in its order.
impl Topology {
    /// The sender count, the access links' rates, host jitter and the RTT.
    pub(super) fn validate_hosts_and_rates(&self) -> Result<(), ConfigError> {
        if self.senders == 0 || self.senders > MAX_SENDERS {
            return Err(bad(
                "topology.senders",
                format!("must be between 1 and {MAX_SENDERS}, got {}", self.senders),
            ));
        }
        if self.link == 0 {
            return Err(bad("topology.link", "rate must be positive"));
        }
        if self.receiver_link == 0 {
            return Err(bad("topology.receiver_link", "rate must be positive"));
        }
        if self.host_jitter > PS_PER_S {
            return Err(bad("topology.host_jitter", "must be at most 1s"));
        }
        if self.rtt > 10 * PS_PER_S {
            return Err(bad("topology.rtt", "must be at most 10s"));
        }
        Ok(())
    }

    /// An ECN threshold marks below the buffer it shares a port with.
    pub(super) fn validate_ecn_threshold(&self) -> Result<(), ConfigError> {
        if let (Some(k), Some(b)) = (self.ecn_threshold.bytes, self.buffer.bytes) {
            if k >= b {
                return Err(bad(
                    "topology.ecn_threshold",
                    format!("{k} bytes must be below topology.buffer ({b} bytes)"),
                ));
            }
        }
        if let (Some(k), Some(b)) = (self.ecn_threshold.packets, self.buffer.packets) {
            if k >= b {
                return Err(bad(
                    "topology.ecn_threshold",
                    format!("{k} packets must be below topology.buffer ({b} packets)"),
                ));
            }
        }
        Ok(())
    }

    /// A host's egress cap: a share or a rate, not beside a NIC shaper, with a bounded bucket.
    pub(super) fn validate_host_rate_cap(&self) -> Result<(), ConfigError> {
        if let Some(cap) = self.host_rate_cap {
            let ok = match (cap.share, cap.bps) {
                (Some(s), None) => s > 0.0 && s <= 1.0,
                (None, Some(b)) => b > 0,
                _ => false,
            };
            if !ok {
                return Err(bad(
                    "topology.host_rate_cap",
                    "expected a share of the link in (0%, 100%] (e.g. \"80%\") or a positive rate (e.g. \"800Mbps\")",
                ));
            }
        }
        if self.host_rate_cap.is_some() && self.nic_burst > 0 {
            return Err(bad(
                "topology.host_rate_cap",
                "a NIC has one token bucket: give host_rate_cap (a cap below the line rate) or topology.nic_burst (a tbf at the line rate), not both",
            ));
        }
        if self.host_rate_burst > (1 << 30) {
            return Err(bad("topology.host_rate_burst", "must be at most 1 GiB"));
        }
        Ok(())
    }
}

/// The rules of the `topology` keys that read other sections (the frame, the transport,
/// the hosts the workload places).
impl Scenario {
    /// The shape's keys: host counts, delays, the switches of the kind, and the keys that
    /// apply to other kinds only.
    pub(super) fn validate_shape(&self) -> Result<(), ConfigError> {
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
        if t.kind != TopologyKind::File && t.file.is_some() {
            return Err(bad(
                "topology.file",
                "describes a topology of its own; set topology.kind = \"file\" to use it",
            ));
        }
        match t.kind {
            TopologyKind::Star => {}
            TopologyKind::File => return self.validate_file(),
            TopologyKind::LeafSpine => self.validate_leaf_spine(need)?,
            TopologyKind::FatTree => self.validate_fat_tree(need)?,
        }
        self.validate_listed()?;
        if t.kind == TopologyKind::Star {
            for (field, set) in [
                ("topology.uplink", t.uplink > 0),
                ("topology.fabric_buffer", t.fabric_buffer.is_some()),
                ("topology.fabric_delay", t.fabric_delay > 0),
            ] {
                if set {
                    return Err(bad(
                        field,
                        "applies to switch-to-switch links, and a star has none; set topology.kind = \"leaf_spine\" or \"fat_tree\"",
                    ));
                }
            }
        }
        if t.fabric_delay > PS_PER_S {
            return Err(bad("topology.fabric_delay", "must be at most 1s"));
        }
        Ok(())
    }

    /// A leaf-spine's leaves and spines, within what one machine holds; `need`: the hosts
    /// the scenario places.
    /// Listed placement: the list and the placement go together, on a leaf-spine or fat tree,
    /// for an incast's receiver and senders only (no other host would have a place), each
    /// host on the topology and named once.
    fn validate_listed(&self) -> Result<(), ConfigError> {
        let t = &self.topology;
        let listed = t.placement == Placement::Listed;
        if !listed {
            if t.listed_hosts.is_empty() {
                return Ok(());
            }
            return Err(bad(
                "topology.listed_hosts",
                "places hosts only with topology.placement = \"listed\"",
            ));
        }
        if t.listed_hosts.is_empty() {
            return Err(bad(
                "topology.placement",
                "\"listed\" needs topology.listed_hosts: the receiver's host, then each sender's",
            ));
        }
        if !matches!(t.kind, TopologyKind::LeafSpine | TopologyKind::FatTree) {
            return Err(bad(
                "topology.placement",
                "\"listed\" places hosts on a leaf_spine or fat_tree topology",
            ));
        }
        if self.all_to_all() || self.background.flows > 0 {
            return Err(bad(
                "topology.placement",
                "\"listed\" places an incast's receiver and senders only: no background flows, no all-to-all workload",
            ));
        }
        let n = t.listed_hosts.len() as u64;
        if n < t.senders as u64 + 1 {
            return Err(bad(
                "topology.listed_hosts",
                format!(
                    "names {n} hosts, but the receiver and {} senders need {}",
                    t.senders,
                    t.senders as u64 + 1
                ),
            ));
        }
        let hosts = crate::topology::host_count(self);
        let mut seen = vec![false; hosts as usize];
        for &h in &t.listed_hosts {
            let Some(s) = seen.get_mut(h as usize) else {
                return Err(bad(
                    "topology.listed_hosts",
                    format!("host {h} is not on the topology (hosts 0..{})", hosts - 1),
                ));
            };
            if *s {
                return Err(bad(
                    "topology.listed_hosts",
                    format!("host {h} is named twice"),
                ));
            }
            *s = true;
        }
        Ok(())
    }

    fn validate_leaf_spine(&self, need: u32) -> Result<(), ConfigError> {
        let t = &self.topology;
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
        Ok(())
    }

    /// A fat tree's k, given or derived, holds every host; `need`: the hosts the scenario
    /// places.
    fn validate_fat_tree(&self, need: u32) -> Result<(), ConfigError> {
        let t = &self.topology;
        let k = t.fat_tree_k;
        if k > 0 && (k % 2 == 1 || k > 128) {
            return Err(bad(
                "topology.fat_tree_k",
                format!("must be even and at most 128 (k³/4 hosts), got {k}"),
            ));
        }
        let k = self.fat_tree_k() as u64;
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
        Ok(())
    }

    /// A shaper's bucket (`topology.nic_burst`, `topology.port_burst`) holds at least one
    /// full frame (tbf refuses a burst below the MTU) and at most a second of the slowest
    /// link's rate.
    pub(super) fn validate_bursts(&self) -> Result<(), ConfigError> {
        let t = &self.topology;
        for (field, burst) in [
            ("topology.nic_burst", t.nic_burst),
            ("topology.port_burst", t.port_burst),
        ] {
            if burst == 0 {
                continue;
            }
            if self.transport != Transport::Tcp {
                return Err(bad(
                    field,
                    "NDP's and RoCE's NICs pace their own packets, not by a shaper; shaped \
                     links are for TCP (set 0)",
                ));
            }
            let frame = self.full_frame().saturating_add(self.tcp.phy_overhead);
            if burst < frame {
                return Err(bad(
                    field,
                    format!(
                        "{burst} bytes is smaller than one full frame on the wire ({frame} bytes)"
                    ),
                ));
            }
            let slowest = t.link.min(t.receiver_link) as u128;
            if burst as u128 * 8 > slowest {
                return Err(bad(
                    field,
                    format!(
                        "{burst} bytes is more than one second of the slowest link ({slowest} bps)"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The per-link delay bounds the jitter on each link.
    pub(super) fn validate_link_jitter(&self) -> Result<(), ConfigError> {
        let t = &self.topology;
        if t.link_jitter > self.link_delay().saturating_mul(2) {
            return Err(bad(
                "topology.link_jitter",
                format!(
                    "must be at most twice the per-link delay ({:.3}us), so no delay is negative",
                    self.link_delay() as f64 / PS_PER_US as f64
                ),
            ));
        }
        Ok(())
    }

    /// Every drop-tail limit holds at least one full packet.
    pub(super) fn validate_buffers(&self) -> Result<(), ConfigError> {
        let t = &self.topology;
        let frame = self.full_frame();
        for (name, lim) in [
            ("topology.buffer", t.buffer),
            (
                "topology.receiver_buffer",
                t.receiver_buffer.unwrap_or(t.buffer),
            ),
            ("topology.nic_buffer", t.nic_buffer),
            (
                "topology.fabric_buffer",
                t.fabric_buffer.unwrap_or(t.buffer),
            ),
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
        Ok(())
    }

    /// The shared buffer holds a full packet; RED's thresholds, probability and weight; the
    /// shared buffer's α.
    pub(super) fn validate_shared_buffer_and_red(&self) -> Result<(), ConfigError> {
        let t = &self.topology;
        let frame = self.full_frame();
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
        Ok(())
    }
}
