//! The scenario: its keys, their defaults, the defaults derived from other keys, and every
//! rule a valid scenario follows. This module is their one owner; the Python layer asks it
//! (through `incastlab._core`) instead of keeping copies.
//!
//! A scenario arrives as JSON in base units (bits per second, bytes, picoseconds; the Python
//! layer turns unit strings into these) and may be partial: [`Scenario::from_json`] fills every
//! absent key with its default, derives the defaults that depend on other keys, and validates
//! the result. Its output, serialized, is the *normalized* scenario every stored result
//! carries. `validate` checks every invariant the engine relies on, so no input can make it
//! panic.

mod buffer;
mod eqds;
mod flows;
mod graph;
mod homa;
mod ndp;
mod roce;
mod roce_cc;
pub(crate) mod section;
mod swift;
mod tcp;
mod topology;
mod trimming;
mod validate;
mod workload;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

pub use buffer::derived_headroom;
pub use eqds::*;
pub use flows::*;
pub use graph::{Graph, GraphLink, GraphSwitch, ResolvedGraph};
pub use homa::*;
pub use ndp::*;
pub use roce::*;
pub use roce_cc::*;
pub use section::{Key, Unit};
pub use swift::*;
pub use tcp::*;
pub use topology::*;
pub use workload::*;

use section::{choices, describe, nested, section};

/// An invalid scenario: names the field and what is allowed.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("{field}: {message}")]
pub struct ConfigError {
    /// Dotted path of the offending field, e.g. `topology.buffer`.
    pub field: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

/// Most characters of a given value repeated in an error message.
const SHOWN_CHARS: usize = 60;

/// A value as an error message repeats it: its JSON, cut to [`SHOWN_CHARS`] characters (a
/// 10 MB bad value is named, not echoed back).
pub(crate) fn shown(v: &serde_json::Value) -> String {
    let text = v.to_string();
    let n = text.chars().count();
    if n <= SHOWN_CHARS {
        return text;
    }
    let cut: String = text.chars().take(SHOWN_CHARS - 1).collect();
    format!("{cut}… ({n} characters)")
}

pub(crate) fn bad(field: &str, message: impl Into<String>) -> ConfigError {
    ConfigError {
        field: field.to_string(),
        message: message.into(),
    }
}

/// The transport every connection of the workload uses.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// TCP, configured by the `tcp` section.
    Tcp,
    /// NDP (Handley et al., SIGCOMM'17): trimming switches, receiver pulls; the `ndp` section.
    Ndp,
    /// RoCEv2: RDMA queue pairs over UDP, lossless (PFC) by default; the `roce` section.
    Roce,
    /// Swift (Kumar et al., SIGCOMM 2020): delay-based windows over drop-tail; the `swift`
    /// section.
    Swift,
    /// EQDS (Olteanu et al., NSDI 2022): edge queues, receiver credit; the `eqds` section.
    Eqds,
    /// Homa (Montazeri et al., SIGCOMM 2018): messages, grants, switch priorities; the `homa`
    /// section.
    Homa,
}

choices! {
    Transport: Tcp, Ndp, Roce, Swift, Eqds, Homa;
}

nested!(Ndp, Roce, Swift, Eqds, Homa, Dcqcn, Hpcc, Topology, Tcp, Workload, Flows, Background, Run);

section! {
    /// One complete scenario.
    pub struct Scenario {
        /// Seed of every random stream in the run.
        pub seed: u64 [Plain] = 1,
        /// Transport of the workload's connections.
        pub transport: Transport [Plain] = Transport::Tcp,
        /// NDP parameters (transport = "ndp").
        pub ndp: Ndp [Section] = Ndp::default(),
        /// RoCEv2 parameters (transport = "roce").
        pub roce: Roce [Section] = Roce::default(),
        /// Swift parameters (transport = "swift").
        pub swift: Swift [Section] = Swift::default(),
        /// EQDS parameters (transport = "eqds").
        pub eqds: Eqds [Section] = Eqds::default(),
        /// Homa parameters (transport = "homa").
        pub homa: Homa [Section] = Homa::default(),
        /// Hosts, links and switch buffers.
        pub topology: Topology [Section] = Topology::default(),
        /// TCP parameters shared by every connection.
        pub tcp: Tcp [Section] = Tcp::default(),
        /// What the application does.
        pub workload: Workload [Section] = Workload::default(),
        /// A schedule of flows between the hosts (workload.kind = "flows").
        pub flows: Flows [Section] = Flows::default(),
        /// Long-lived flows competing with the workload.
        pub background: Background [Section] = Background::default(),
        /// Budgets and optional outputs.
        pub run: Run [Section] = Run::default(),
    }
}

/// Hard bounds that keep a scenario within what one machine can hold.
pub const MAX_SENDERS: u32 = 100_000;
/// Most pauses `workload.think_times` may list (they are used in turn, so a longer trace is
/// never needed to cover a run's blocks).
pub const MAX_THINK_TIMES: usize = 1_000_000;
/// The longest time a timing key (a wait, a stagger, a run's duration, a timeout) may hold:
/// an hour.
const AN_HOUR: crate::units::SimTime = 3600 * crate::units::PS_PER_S;
/// Most numbers a run's time series holds (samples × (flows + 2)): about 60 MB as JSON.
pub const MAX_SERIES_VALUES: usize = 10_000_000;

/// Bytes server `i` of `n` returns of a `block` striped over them: ⌊block/n⌋, one more for
/// the first `block mod n` servers, so the shares add up to the block exactly. The one rule
/// for every backend (simulator, model, emulation, real cluster).
pub fn block_share(block: u64, n: u32, i: u32) -> u64 {
    let n = u64::from(n.max(1));
    block / n + u64::from(u64::from(i) < block % n)
}

/// Fill the defaults that depend on other keys, in the JSON as given (so "absent" and "null"
/// can still be told from a value): `topology.receiver_link` ← `topology.link`, `tcp.ecn` ←
/// (`tcp.congestion_control` = dctcp), and a given `workload.block` replaces the default
/// `workload.sru`. `background.ecn` (← `tcp.ecn`) and PFC's XOFF/XON (← buffer, link, RTT)
/// stay `None` in the normalized form and are resolved where used, as stored results have
/// always carried them.
fn fill_derived(v: &mut Value) {
    fn unset(t: &serde_json::Map<String, Value>, k: &str) -> bool {
        t.get(k).is_none_or(Value::is_null)
    }
    if let Some(t) = v.get_mut("topology").and_then(Value::as_object_mut) {
        // A described topology's links give the rates ([`Scenario::fill_from_file`]).
        let described = t.get("kind").and_then(Value::as_str) == Some("file");
        if unset(t, "receiver_link") && !described {
            match t.get("link").cloned() {
                Some(link) => t.insert("receiver_link".into(), link),
                None => t.remove("receiver_link"),
            };
        }
    }
    // The profile applies to a scenario that says nothing of TCP too: its default is today's
    // Linux, whose bundle must fill the keys even when the `tcp` section is absent.
    if let Some(o) = v.as_object_mut() {
        o.entry("tcp")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
    }
    if let Some(t) = v.get_mut("tcp").and_then(Value::as_object_mut) {
        // A scenario that names no profile gets the default, named in its normalized form;
        // the profile's bundle fills the keys left unset, before the defaults derived from
        // them (ECN from the congestion control).
        if unset(t, "profile") {
            let name = serde_json::to_value(tcp::DEFAULT_PROFILE).expect("a profile's name");
            t.insert("profile".into(), name);
        }
        let profile = serde_json::from_value::<Profile>(t["profile"].clone());
        if let Ok(profile) = profile {
            for (k, value) in profile.defaults() {
                if unset(t, k) {
                    t.insert(k.into(), value);
                }
            }
        }
        if unset(t, "ecn") {
            match t.get("congestion_control").and_then(Value::as_str) {
                Some(cc) => t.insert("ecn".into(), Value::Bool(cc == "dctcp")),
                None => t.remove("ecn"),
            };
        }
    }
    if let Some(w) = v.get_mut("workload").and_then(Value::as_object_mut) {
        if !unset(w, "block") && !w.contains_key("sru") {
            w.insert("sru".into(), Value::Null);
        }
    }
    fill_roce_fabric(v);
}

/// A RoCE scenario's fabric follows its queue pairs unless given: `topology.pfc` ←
/// `roce.lossless` (true by default), `topology.int` ← (`roce.cc` = hpcc). Given values that
/// disagree are refused by validation, naming the key.
fn fill_roce_fabric(v: &mut Value) {
    if v.get("transport").and_then(Value::as_str) != Some("roce") {
        return;
    }
    let roce = v.get("roce");
    let lossless = roce
        .and_then(|r| r.get("lossless"))
        .and_then(Value::as_bool);
    let hpcc = roce.and_then(|r| r.get("cc")).and_then(Value::as_str) == Some("hpcc");
    let Some(top) = v.as_object_mut() else {
        return;
    };
    let topology = top
        .entry("topology")
        .or_insert_with(|| Value::Object(Default::default()));
    let Some(t) = topology.as_object_mut() else {
        return; // validation names the bad table
    };
    if t.get("pfc").is_none_or(Value::is_null) {
        t.insert("pfc".into(), Value::Bool(lossless.unwrap_or(true)));
    }
    if hpcc && t.get("int").is_none_or(Value::is_null) {
        t.insert("int".into(), Value::Bool(true));
    }
}

impl Scenario {
    /// The default scenario with `senders` servers: a 1 Gbps star, 64 KB per port, RTOmin
    /// 200 ms, 20 blocks of 256 KB SRUs.
    pub fn example(senders: u32) -> Scenario {
        let mut s = Scenario::default();
        s.topology.senders = senders;
        s
    }

    /// Parse a scenario in base units, possibly partial: fill its defaults and derived
    /// defaults, then validate it.
    pub fn from_json(text: &str) -> Result<Scenario, ConfigError> {
        let s = Scenario::from_json_unchecked(text)?;
        s.validate()?;
        Ok(s)
    }

    /// Parse without validating, for callers whose next step validates anyway (the engine's
    /// `Simulation::new` does), so a run validates once.
    pub fn from_json_unchecked(text: &str) -> Result<Scenario, ConfigError> {
        let mut v: Value =
            serde_json::from_str(text).map_err(|e| bad("scenario", e.to_string()))?;
        let given = |k: &str| {
            v.get("topology")
                .and_then(|t| t.get(k))
                .is_some_and(|x| !x.is_null())
        };
        let given = [given("senders"), given("link"), given("receiver_link")];
        fill_derived(&mut v);
        let mut s = Scenario::load_table("", v)?;
        s.fill_from_file(given);
        Ok(s)
    }

    /// The defaults a described topology gives, for the keys not given (`given`: senders,
    /// link, receiver_link): as many senders as the file names (every host for kv_gets),
    /// `link` the rate of the first sender's link, `receiver_link` the receiver's. Validation
    /// refuses a given value that disagrees with the file.
    fn fill_from_file(&mut self, [senders, link, receiver_link]: [bool; 3]) {
        let all_to_all = self.all_to_all();
        let t = &mut self.topology;
        let (TopologyKind::File, Some(g)) = (t.kind, t.file.as_ref()) else {
            return;
        };
        let Ok(r) = g.resolve() else {
            return; // validation names what is wrong
        };
        if !senders {
            t.senders = if all_to_all {
                g.hosts.len() as u32
            } else {
                r.senders.len() as u32
            };
        }
        let order = Graph::placement(&r, t.senders);
        if !link {
            t.link = g.host_rate(&r, order[0]);
        }
        if !receiver_link {
            t.receiver_link = g.host_rate(&r, r.receiver);
        }
    }

    /// The normalized form as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a scenario always serializes")
    }

    /// Every key of every section: unit, doc, default and JSON Schema of its normalized value.
    /// (JSON text, keys in declaration order.)
    pub fn describe() -> String {
        let mut defaults = serde_json::to_value(Scenario::default()).expect("defaults serialize");
        // A scenario read without a profile gets this one (the struct's default is the bare
        // keys' classic profile).
        defaults["tcp"]["profile"] = serde_json::to_value(tcp::DEFAULT_PROFILE).expect("a name");
        let nested = |name: &str| -> Option<String> {
            if name == "roce" {
                let d = &defaults[name];
                let cc = |sub: &str| match sub {
                    "dcqcn" => Some(describe(&Dcqcn::keys(), &d[sub], &|_| None)),
                    "hpcc" => Some(describe(&Hpcc::keys(), &d[sub], &|_| None)),
                    _ => None,
                };
                return Some(describe(&Roce::keys(), d, &cc));
            }
            let keys = match name {
                "ndp" => Ndp::keys(),
                "swift" => Swift::keys(),
                "eqds" => Eqds::keys(),
                "homa" => Homa::keys(),
                "topology" => Topology::keys(),
                "tcp" => Tcp::keys(),
                "workload" => Workload::keys(),
                "flows" => Flows::keys(),
                "background" => Background::keys(),
                "run" => Run::keys(),
                _ => return None,
            };
            Some(describe(&keys, &defaults[name], &|_| None))
        };
        describe(&Scenario::keys(), &defaults, &nested)
    }

    /// The fat tree's k: as given, or the smallest even k with k³/4 ≥ hosts. Config's to
    /// say, because validation needs it before any network is built.
    pub fn fat_tree_k(&self) -> u32 {
        let t = &self.topology;
        if t.fat_tree_k > 0 {
            return t.fat_tree_k;
        }
        let hosts = t.hosts.max(self.hosts_needed());
        let mut k = 2;
        while (k as u64).pow(3) / 4 < hosts as u64 {
            k += 2;
        }
        k
    }

    /// Every link's one-way delay: `link_delay` if set, else the RTT split over the links of
    /// the longest path (there and back); on a described topology, its shortest link delay.
    pub fn link_delay(&self) -> crate::units::SimTime {
        let t = &self.topology;
        if t.link_delay > 0 {
            return t.link_delay;
        }
        let max_hops = match t.kind {
            TopologyKind::Star => 2,
            TopologyKind::LeafSpine => 4,
            TopologyKind::FatTree => 6,
            // A described topology's links carry their own delays; this is the shortest.
            TopologyKind::File => {
                let delays = t.file.iter().flat_map(|g| g.links.iter().map(|l| l.delay));
                return delays.min().unwrap_or(0);
            }
        };
        t.rtt / (2 * max_hops)
    }

    /// Hosts the scenario places: servers, the receiver, background hosts and their sink.
    /// Saturates rather than overflows: validation runs after it and refuses the count.
    pub fn hosts_needed(&self) -> u32 {
        if self.all_to_all() {
            return self.topology.senders; // every host is a client and a server
        }
        let bg = &self.background;
        let mut n = self.topology.senders.saturating_add(1);
        if bg.flows > 0 {
            if bg.source == BackgroundSource::OwnHosts {
                n = n.saturating_add(bg.flows);
            }
            if bg.destination == BackgroundDestination::Sink {
                n = n.saturating_add(1);
            }
        }
        n
    }

    /// Whether every host is both a client and a server (kv_gets, shuffle, flows): no receiver of its
    /// own, `topology.senders` hosts in all.
    pub fn all_to_all(&self) -> bool {
        matches!(
            self.workload.kind,
            WorkloadKind::KvGets | WorkloadKind::Shuffle | WorkloadKind::Flows
        )
    }

    /// Reducers of a shuffle: `workload.reducers`, or one per host.
    pub fn shuffle_reducers(&self) -> u32 {
        match self.workload.reducers {
            0 => self.topology.senders,
            r => r,
        }
    }

    /// Hosts that run a shuffle's reducers: `workload.reducer_hosts`, or every host.
    pub fn shuffle_reducer_hosts(&self) -> u32 {
        match self.workload.reducer_hosts {
            0 => self.topology.senders,
            h => h,
        }
    }

    /// Hosts that hold a shuffle's map outputs: `workload.map_hosts`, or every host.
    pub fn shuffle_map_hosts(&self) -> u32 {
        match self.workload.map_hosts {
            0 => self.topology.senders,
            m => m,
        }
    }

    /// Map hosts a shuffle's reducer fetches from at once: `workload.fanout_window`
    /// (mapred.reduce.parallel.copies), or every map host; never more than there are.
    pub fn shuffle_window(&self) -> u32 {
        let m = self.shuffle_map_hosts();
        match self.workload.fanout_window {
            0 => m,
            w => w.min(m),
        }
    }

    /// Gets per second arriving at each host of the key-value store: `workload.kv_rate`, or
    /// the rate at which the replies each host receives fill `kv_utilization` of its link.
    pub fn kv_gets_per_s(&self) -> f64 {
        let w = &self.workload;
        if w.kv_rate > 0.0 {
            return w.kv_rate;
        }
        w.kv_utilization * self.topology.link as f64 / (8.0 * self.kv_reply_bytes_per_get())
    }

    /// Value bytes a get brings over the network on average: R replies of the mean value
    /// size, less the share answered by a replica on the coordinator itself ((H−1)/H remote).
    pub fn kv_reply_bytes_per_get(&self) -> f64 {
        let w = &self.workload;
        let h = self.topology.senders.max(1) as f64;
        let mean = if w.query_size_cdf.is_empty() {
            w.value_size as f64
        } else {
            cdf_mean(&w.query_size_cdf)
        };
        w.kv_replicas as f64 * (h - 1.0) / h * mean
    }

    /// Replies a get waits for: `workload.kv_quorum`, or every replica.
    pub fn kv_quorum(&self) -> u32 {
        match self.workload.kv_quorum {
            0 => self.workload.kv_replicas,
            q => q,
        }
    }

    /// Frame bytes of a full-sized segment (payload and headers; preamble and gap excluded).
    pub fn full_frame(&self) -> u64 {
        // Saturating: the check that bounds both runs after some that use a frame.
        match self.transport {
            Transport::Roce => self.roce.mtu.saturating_add(self.roce.header_bytes),
            Transport::Swift => self.swift.mtu.saturating_add(self.swift.header_bytes),
            Transport::Eqds => self.eqds.mtu.saturating_add(self.eqds.header_bytes),
            Transport::Homa => self.homa.mtu.saturating_add(self.homa.header_bytes),
            _ => self.tcp.mss.saturating_add(self.tcp.header_bytes),
        }
    }

    /// Bytes server `i` returns per block: the SRU, or its [`block_share`] of a striped block.
    pub fn sru_of(&self, i: u32) -> u64 {
        match (self.workload.sru, self.workload.block) {
            (Some(s), _) => s,
            (None, Some(b)) => block_share(b, self.topology.senders, i),
            _ => 0,
        }
    }
}
