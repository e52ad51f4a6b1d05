//! The report's headline figures as the columns of a stored result: for each, its name in
//! the record, type, unit, meaning and where it comes from in a serialized [`Report`] (a field
//! path, an aggregate over a list the report holds, or a named computation of the record).
//!
//! The Python record (`incastlab.result.record`) builds its metric columns from this list, as
//! it builds its coordinate columns from the scenario's keys ([`crate::Scenario::describe`]):
//! a figure added here becomes a column with no edit there. The real-network backends report
//! in the [`Report`]'s shape, so the same paths read their reports too; the few figures only a
//! real network has (`simulated: false`) read as null from the simulator.
//!
//! Paths are dotted field names; `name[]` maps the rest of the path over the list `name`
//! (`flows[].fct`), and a number indexes an array (`query_fcts[].1`, the time of each
//! `(bytes, time)` pair). Every time in a report is integer picoseconds; a column in seconds
//! (unit [`Unit::Seconds`], name ending `_s`) divides each value by 10¹² before any aggregate.
//!
//! [`Report`]: crate::Report

use serde::Serialize;

/// A column's type in the record (and its Arrow type in a Parquet file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Kind {
    /// A whole number.
    #[serde(rename = "int")]
    Int,
    /// A float.
    #[serde(rename = "float")]
    Float,
    /// Text.
    #[serde(rename = "str")]
    Str,
    /// True or false.
    #[serde(rename = "bool")]
    Bool,
    /// A list of whole numbers.
    #[serde(rename = "list<int>")]
    Ints,
    /// A list of floats (null items allowed).
    #[serde(rename = "list<float>")]
    Floats,
    /// A list of lists of floats.
    #[serde(rename = "list<list<float>>")]
    Floats2,
}

/// What a column's numbers count or measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Unit {
    /// Seconds (picoseconds in the report).
    #[serde(rename = "s")]
    Seconds,
    /// Bytes.
    #[serde(rename = "bytes")]
    Bytes,
    /// Bits per second.
    #[serde(rename = "bit/s")]
    BitsPerSecond,
    /// Events per second.
    #[serde(rename = "1/s")]
    PerSecond,
    /// A count of things or events.
    #[serde(rename = "count")]
    Count,
    /// A share from 0 to 1.
    #[serde(rename = "share")]
    Share,
    /// A dimensionless ratio (`fct_overhead`: 0.02 = 2% late).
    #[serde(rename = "ratio")]
    Ratio,
    /// A name (`workload`).
    #[serde(rename = "label")]
    Label,
    /// True or false.
    #[serde(rename = "flag")]
    Flag,
}

/// Which runs have the figure: every run, or those of one transport or one workload (the
/// path's first field is then that section of the report, null or absent otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Every run.
    Run,
    /// A transport's section (`ndp`).
    Transport,
    /// A workload's section (`kv`, `shuffle`, `fct_slowdown`).
    Workload,
    /// The fabric's section (`fabric`), in the runs that report it
    /// (`topology.fabric_report`, PFC over a shared buffer, egress ECN marking, INT).
    Fabric,
}

/// Aggregates over the values a list path reads (null items skipped). A list missing from
/// the report gives null; an empty list gives null for the statistics and 0 for the counts.
pub const AGGREGATES: &[&str] = &["len", "positive", "median", "max", "mean", "p99"];

/// Figures that need more than one path (or the scenario); the record computes them, by
/// these names.
pub const COMPUTATIONS: &[&str] = &["goodput_fraction", "optimal", "fct_overhead"];

/// One column of the record.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Column {
    /// Its name in the record.
    pub name: &'static str,
    /// Its type.
    pub kind: Kind,
    /// Its unit.
    pub unit: Unit,
    /// What it means.
    pub doc: &'static str,
    /// Which runs have it.
    pub scope: Scope,
    /// The report's field it reads (alone, or aggregated by `op`).
    pub path: Option<&'static str>,
    /// An aggregate of [`AGGREGATES`] over `path`, or without a path one of
    /// [`COMPUTATIONS`].
    pub op: Option<&'static str>,
    /// False for the figures only a real network reports (the simulator leaves them null).
    pub simulated: bool,
    /// Absent from the reports it does not apply to even within its scope (a star's kv
    /// report has no fabric drops).
    pub optional: bool,
}

const fn field(name: &'static str, kind: Kind, unit: Unit, path: &'static str) -> Column {
    Column {
        name,
        kind,
        unit,
        doc: "",
        scope: Scope::Run,
        path: Some(path),
        op: None,
        simulated: true,
        optional: false,
    }
}

impl Column {
    const fn doc(mut self, doc: &'static str) -> Column {
        self.doc = doc;
        self
    }

    const fn of(mut self, op: &'static str) -> Column {
        self.op = Some(op);
        self
    }

    const fn scope(mut self, scope: Scope) -> Column {
        self.scope = scope;
        self
    }

    const fn optional(mut self) -> Column {
        self.optional = true;
        self
    }

    const fn real_only(mut self) -> Column {
        self.simulated = false;
        self
    }

    const fn computed(name: &'static str, kind: Kind, unit: Unit, op: &'static str) -> Column {
        Column {
            path: None,
            op: Some(op),
            ..field(name, kind, unit, "")
        }
    }
}

use Kind::{Bool, Float, Floats, Floats2, Int, Ints, Str};
use Unit::{
    BitsPerSecond as Bps, Bytes as B, Count, Flag, Label, PerSecond, Ratio, Seconds as S, Share,
};

/// The figures of every run, in record order.
const RUN: &[Column] = &[
    field("senders", Int, Count, "senders").doc("Servers (hosts of a mesh workload)."),
    field("workload", Str, Label, "workload").doc("The workload's kind."),
    field("goodput_bps", Float, Bps, "goodput_bps")
        .doc("Application bytes the workload delivered over its duration."),
    Column::computed("goodput_fraction", Float, Share, "goodput_fraction")
        .doc("goodput_bps / link_bps (null when the link rate is unknown)."),
    field("link_bps", Int, Bps, "link_bps")
        .doc("The receiver's link (a shuffle's: every reducer host's links together)."),
    field("duration_s", Float, S, "duration")
        .doc("Workload start to the completion of its last block, flow or operation."),
    field("app_bytes", Int, B, "app_bytes").doc("Application bytes the workload delivered."),
    field("blocks", Int, Count, "block_times")
        .of("len")
        .doc("Blocks read (sync_read)."),
    field("block_time_median_s", Float, S, "block_times")
        .of("median")
        .doc("Median block time."),
    field("block_time_max_s", Float, S, "block_times")
        .of("max")
        .doc("Longest block time."),
    field("blocks_with_timeouts", Int, Count, "block_timeouts")
        .of("positive")
        .doc("Blocks during which some server timed out."),
    field("probe_stalls", Int, Count, "probe_stalls")
        .optional()
        .doc(
            "Waits of RTOmin/2 or more in which a block (or an incast) delivered nothing and no \
             retransmission timeout fired: a loss probe capped at the RTO, a delayed-ACK, \
             pacing or PFC stall (TCP, Swift); null when none.",
        ),
    field("blocks_with_probe_stalls", Int, Count, "block_probe_stalls")
        .of("positive")
        .optional()
        .doc("Blocks with such a stall; null when none."),
    field("fct_max_s", Float, S, "flows[].fct")
        .of("max")
        .doc("The last flow's completion time (incast)."),
    Column::computed("optimal_s", Float, S, "optimal").doc(
        "Best possible completion of the incast workload: every flow's bits over the link \
         plus the base latency (null for other workloads).",
    ),
    Column::computed("fct_overhead", Float, Ratio, "fct_overhead")
        .doc("fct_max_s / optimal_s - 1 (0.02 = 2% late)."),
    field("queries", Int, Count, "query_fcts")
        .of("len")
        .doc("Queries answered (queries)."),
    field("query_fct_mean_s", Float, S, "query_fcts[].1")
        .of("mean")
        .doc("Mean query completion time."),
    field("query_fct_p99_s", Float, S, "query_fcts[].1")
        .of("p99")
        .doc("99th-percentile query completion time (nearest rank)."),
    field("timeouts", Int, Count, "timeouts")
        .doc("Retransmission timeouts of the workload's flows."),
    field("fast_recoveries", Int, Count, "fast_recoveries")
        .doc("Fast-recovery episodes of the workload's flows."),
    field("retx_fast", Int, Count, "retx_fast")
        .doc("Segments retransmitted by fast retransmit or SACK recovery."),
    field("retx_timeout", Int, Count, "retx_timeout").doc("Segments retransmitted after timeouts."),
    field("ecn_reductions", Int, Count, "ecn_reductions")
        .doc("cwnd reductions in response to ECN echoes (DCTCP)."),
    field("bottleneck_marks", Int, Count, "bottleneck.marks")
        .doc("Packets the bottleneck port marked CE."),
    field("drops", Int, Count, "drops").doc("Packets dropped anywhere."),
    field("bottleneck_drops", Int, Count, "bottleneck.drops")
        .doc("Packets the bottleneck port dropped."),
    field("bottleneck_max_bytes", Int, B, "bottleneck.max_bytes")
        .doc("The bottleneck port's fullest queue."),
    field(
        "bottleneck_utilization",
        Float,
        Share,
        "bottleneck_utilization",
    )
    .doc("Share of the workload's duration the bottleneck spent serializing."),
    field("background_bps", Float, Bps, "background_bps")
        .doc("Background flows' goodput while the workload ran."),
    field("pfc_pauses", Int, Count, "pfc_pauses").doc("PFC pauses the switch sent."),
    field(
        "retransmitted_segments",
        Int,
        Count,
        "retransmitted_segments",
    )
    .real_only()
    .doc("Segments the kernels retransmitted (Tcp.RetransSegs)."),
    field("truncated", Bool, Flag, "truncated")
        .real_only()
        .doc("The run stopped at its time limit before the workload finished."),
    field("events", Int, Count, "events").doc("Events the simulator processed."),
    // Lists.
    field("block_times_s", Floats, S, "block_times").doc("Each block's duration."),
    field("block_timeouts", Ints, Count, "block_timeouts")
        .doc("Timeouts of all servers during each block."),
    field("block_probe_stalls", Ints, Count, "block_probe_stalls")
        .optional()
        .doc("Stalls without a timeout during each block (null when none)."),
    field("flow_completion_s", Floats, S, "flows[].fct")
        .doc("Each flow's completion time (null: not completed)."),
    field("flow_timeouts", Ints, Count, "flows[].timeouts").doc("Each flow's timeouts."),
    field("timeout_runs", Ints, Count, "timeout_runs")
        .doc("[k-1]: times a flow suffered k successive timeouts (last: k or more)."),
    field("query_bytes", Ints, B, "query_fcts[].0").doc("Each query's response bytes."),
    field("query_fct_s", Floats, S, "query_fcts[].1").doc("Each query's completion time."),
    field("response_times_s", Floats2, S, "response_times")
        .real_only()
        .doc("Each block's response times, server by server."),
];

/// NDP's counters.
const NDP: &[Column] = &[
    counter(
        "ndp_data_packets",
        "ndp.data_packets",
        "Data packets sent, retransmissions included.",
    ),
    counter(
        "ndp_trimmed",
        "ndp.trimmed",
        "Data packets trimmed to their headers.",
    ),
    counter(
        "ndp_bounced",
        "ndp.bounced",
        "Headers returned to their senders.",
    ),
    counter(
        "ndp_dropped",
        "ndp.dropped",
        "Headers or control packets dropped.",
    ),
    counter("ndp_pulls", "ndp.pulls", "Pulls that reached senders."),
    counter("ndp_nacks", "ndp.nacks", "NACKs the receiver sent."),
    counter(
        "ndp_retx_nack",
        "ndp.retx_nack",
        "Retransmissions answering a NACK.",
    ),
    counter(
        "ndp_retx_bounce",
        "ndp.retx_bounce",
        "Retransmissions answering a bounce.",
    ),
    counter(
        "ndp_retx_timeout",
        "ndp.retx_timeout",
        "Retransmissions after a timeout.",
    ),
    counter("ndp_timeouts", "ndp.timeouts", "Sender timeouts."),
];

/// RoCE's counters.
const ROCE: &[Column] = &[
    counter(
        "roce_data_packets",
        "roce.data_packets",
        "RoCE data packets sent, retransmissions included.",
    ),
    counter(
        "roce_retransmitted",
        "roce.retransmitted",
        "RoCE data packets sent again (after a NAK or a timeout).",
    ),
    counter(
        "roce_retx_timeout",
        "roce.retx_timeout",
        "RoCE data packets resent after a retransmission timeout.",
    ),
    counter("roce_acks", "roce.acks", "ACKs the RoCE receivers sent."),
    counter("roce_naks", "roce.naks", "NAKs the RoCE receivers sent."),
    counter(
        "roce_timeouts",
        "roce.timeouts",
        "RoCE retransmission timer expiries that resent something.",
    ),
    counter(
        "roce_cnps_sent",
        "roce.cnps_sent",
        "CNPs the RoCE receivers sent (DCQCN's notification point).",
    ),
    counter(
        "roce_cnps_received",
        "roce.cnps_received",
        "CNPs that reached RoCE senders.",
    ),
    counter(
        "roce_discarded",
        "roce.discarded",
        "RoCE data packets the receivers discarded: duplicates, or past a gap (go-back-N).",
    ),
    counter(
        "roce_dropped",
        "roce.dropped",
        "RoCE packets the network dropped.",
    ),
];

/// A column of a transport's section (NDP's, RoCE's): a count.
const fn counter(name: &'static str, path: &'static str, doc: &'static str) -> Column {
    field(name, Int, Count, path)
        .scope(Scope::Transport)
        .doc(doc)
}

const fn of_workload(name: &'static str, kind: Kind, unit: Unit, path: &'static str) -> Column {
    field(name, kind, unit, path).scope(Scope::Workload)
}

const fn fabric(name: &'static str, kind: Kind, unit: Unit, path: &'static str) -> Column {
    field(name, kind, unit, path).scope(Scope::Fabric)
}

/// The fabric's figures: PFC's pauses and victims, buffers, marks.
const FABRIC: &[Column] = &[
    fabric("fabric_pause_frames", Int, Count, "fabric.pause_frames")
        .doc("PFC pause frames that stopped a link, every link together."),
    fabric("fabric_paused_s", Float, S, "fabric.paused")
        .doc("Time links spent paused by PFC, summed over links."),
    fabric(
        "fabric_paused_link_max_s",
        Float,
        S,
        "fabric.paused_links[].paused",
    )
    .of("max")
    .doc("The longest any one link spent paused."),
    fabric(
        "fabric_switch_buffer_max_bytes",
        Int,
        B,
        "fabric.switch_buffer_max_bytes",
    )
    .of("max")
    .doc("Peak shared-buffer use of the fullest switch (pool and PFC headrooms)."),
    fabric(
        "fabric_headroom_overruns",
        Int,
        Count,
        "fabric.headroom_overruns",
    )
    .doc("Frames dropped under PFC because an ingress's headroom was full."),
    fabric("fabric_ecn_marks", Int, Count, "fabric.ecn_marks")
        .doc("Packets marked CE at switch ports."),
    fabric("fabric_paused_flows", Int, Count, "fabric.paused_flows")
        .doc("Flows whose packets were held at PFC-paused links."),
    fabric("fabric_victim_flows", Int, Count, "fabric.victim_flows")
        .doc("Paused flows that do not cross the receiver's port (congestion spreading)."),
    field("flow_paused_s", Floats, S, "flows[].paused")
        .optional()
        .doc("Each flow's time held at PFC-paused links (null when the fabric is not reported)."),
];

/// The key-value store's cluster-wide figures; loads and utilizations are shares of a
/// host's link, averaged over hosts.
const KV: &[Column] = &[
    of_workload("kv_gets", Int, Count, "kv.gets").doc("Gets issued."),
    of_workload(
        "kv_gets_per_s_per_host",
        Float,
        PerSecond,
        "kv.gets_per_s_per_host",
    )
    .doc("Operations arriving at each host per second."),
    of_workload("kv_offered_load", Float, Share, "kv.offered_load").doc("Offered load."),
    of_workload("kv_carried_load", Float, Share, "kv.carried_load").doc("Carried load."),
    of_workload("kv_utilization", Float, Share, "kv.utilization").doc("Receive-link utilization."),
    of_workload(
        "kv_peak_utilization_1ms",
        Float,
        Share,
        "kv.peak_utilization_1ms",
    )
    .doc("Busiest millisecond's utilization."),
    of_workload(
        "kv_drops_per_s_per_host",
        Float,
        PerSecond,
        "kv.drops_per_s_per_host",
    )
    .doc("Drops at a host's port per second."),
    of_workload(
        "kv_fabric_drops_per_s",
        Float,
        PerSecond,
        "kv.fabric_drops_per_s",
    )
    .optional()
    .doc("Drops at switch-to-switch ports per second (null on one switch)."),
    of_workload("kv_timeouts_per_s", Float, PerSecond, "kv.timeouts_per_s")
        .doc("Timeouts per second, all hosts together."),
    of_workload(
        "kv_retransmits_per_s_per_host",
        Float,
        PerSecond,
        "kv.retransmits_per_s_per_host",
    )
    .doc("Retransmissions per second of a host."),
    of_workload("kv_latency_p50_s", Float, S, "kv.latency_p50").doc("Median get latency."),
    of_workload("kv_latency_p99_s", Float, S, "kv.latency_p99").doc("99th-percentile get latency."),
    of_workload("kv_latency_p999_s", Float, S, "kv.latency_p999")
        .doc("99.9th-percentile get latency."),
    of_workload("kv_puts", Int, Count, "kv.puts").doc("Puts issued."),
    of_workload("kv_put_latency_p50_s", Float, S, "kv.put_latency_p50").doc("Median put latency."),
    of_workload("kv_put_latency_p99_s", Float, S, "kv.put_latency_p99")
        .doc("99th-percentile put latency."),
    of_workload("kv_goodput_bps", Float, Bps, "kv.goodput_bps")
        .doc("Value bytes delivered per second, all hosts together."),
    // Per-host lists, in host order.
    of_workload(
        "kv_host_drops_per_s",
        Floats,
        PerSecond,
        "kv.per_host[].drops_per_s",
    )
    .doc("Each host's port drops per second."),
    of_workload(
        "kv_host_rx_utilization",
        Floats,
        Share,
        "kv.per_host[].rx_utilization",
    )
    .doc("Each host's receive-link utilization."),
    of_workload(
        "kv_host_peak_utilization_1ms",
        Floats,
        Share,
        "kv.per_host[].peak_utilization_1ms",
    )
    .doc("Each host's busiest millisecond."),
    of_workload(
        "kv_host_timeouts_per_s",
        Floats,
        PerSecond,
        "kv.per_host[].timeouts_per_s",
    )
    .doc("Each host's timeouts per second."),
];

/// The shuffle's figures.
const SHUFFLE: &[Column] = &[
    of_workload("shuffle_reducers", Int, Count, "shuffle.reducers").doc("Reducers in all."),
    of_workload(
        "shuffle_reducer_time_median_s",
        Float,
        S,
        "shuffle.reducer_times",
    )
    .of("median")
    .doc("Median time for a reducer to have every map output."),
    of_workload(
        "shuffle_reducer_time_max_s",
        Float,
        S,
        "shuffle.reducer_times",
    )
    .of("max")
    .doc("Time for the last reducer to have every map output."),
    of_workload("shuffle_data_drops", Int, Count, "shuffle.data_drops")
        .doc("Data segments dropped (map outputs on their way)."),
    of_workload("shuffle_ack_drops", Int, Count, "shuffle.ack_drops").doc("Pure ACKs dropped."),
    of_workload("shuffle_request_drops", Int, Count, "shuffle.request_drops")
        .doc("Requests for map outputs dropped."),
    of_workload(
        "shuffle_reducer_times_s",
        Floats,
        S,
        "shuffle.reducer_times",
    )
    .doc("When each reducer had every map output, in reducer order."),
];

/// A flow schedule's FCT slowdowns (completion time over the flow's ideal one), background
/// flows by size bucket (flows sorted by size, equal counts: HPCC's Fig. 11).
const FCT_SLOWDOWN: &[Column] = &[
    of_workload(
        "fct_slowdown_background_p50",
        Float,
        Ratio,
        "fct_slowdown.background_p50",
    )
    .doc("Median FCT slowdown of the background flows."),
    of_workload(
        "fct_slowdown_background_p99",
        Float,
        Ratio,
        "fct_slowdown.background_p99",
    )
    .doc("99th-percentile FCT slowdown of the background flows."),
    of_workload(
        "fct_slowdown_incast_p50",
        Float,
        Ratio,
        "fct_slowdown.incast_p50",
    )
    .doc("Median FCT slowdown of the incast bursts' flows."),
    of_workload(
        "fct_slowdown_incast_p99",
        Float,
        Ratio,
        "fct_slowdown.incast_p99",
    )
    .doc("99th-percentile FCT slowdown of the incast bursts' flows."),
    of_workload(
        "fct_slowdown_unfinished",
        Int,
        Count,
        "fct_slowdown.unfinished",
    )
    .doc("Scheduled flows that did not complete."),
    of_workload(
        "fct_slowdown_bucket_bytes",
        Ints,
        B,
        "fct_slowdown.background[].max_bytes",
    )
    .doc("Largest flow of each background size bucket, smallest bucket first."),
    of_workload(
        "fct_slowdown_bucket_p50",
        Floats,
        Ratio,
        "fct_slowdown.background[].p50",
    )
    .doc("Median FCT slowdown of each background size bucket."),
    of_workload(
        "fct_slowdown_bucket_p95",
        Floats,
        Ratio,
        "fct_slowdown.background[].p95",
    )
    .doc("95th-percentile FCT slowdown of each background size bucket."),
    of_workload(
        "fct_slowdown_bucket_p99",
        Floats,
        Ratio,
        "fct_slowdown.background[].p99",
    )
    .doc("99th-percentile FCT slowdown of each background size bucket."),
];

/// Every column the engine's report fills, in record order within each kind (the record
/// puts the scalars before the lists).
pub fn columns() -> Vec<Column> {
    [RUN, NDP, ROCE, FABRIC, KV, SHUFFLE, FCT_SLOWDOWN].concat()
}

/// [`columns`] as JSON (what the Python binding returns).
pub fn json() -> String {
    serde_json::to_string(&columns()).expect("the report's columns serialize")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Scenario, Simulation};
    use serde_json::Value;

    /// The values `path` reads in `report`; `Err` names the first field it does not find.
    fn read<'a>(report: &'a Value, path: &str) -> Result<Vec<&'a Value>, String> {
        let mut nodes = vec![report];
        for part in path.split('.') {
            let (name, each) = match part.strip_suffix("[]") {
                Some(n) => (n, true),
                None => (part, false),
            };
            let mut next = Vec::new();
            for node in nodes {
                let v = match (node, name.parse::<usize>()) {
                    (Value::Array(a), Ok(i)) => a.get(i),
                    (Value::Object(o), _) => o.get(name),
                    _ => None,
                };
                let v = v.ok_or_else(|| format!("{path}: no {name:?} in {node}"))?;
                match (each, v) {
                    (true, Value::Array(items)) => next.extend(items),
                    (true, other) => return Err(format!("{path}: {name} is not a list: {other}")),
                    (false, v) => next.push(v),
                }
            }
            nodes = next;
        }
        Ok(nodes)
    }

    fn run(json: &str) -> Value {
        let sc = Scenario::from_json(json).unwrap_or_else(|e| panic!("{json}: {e}"));
        let report = Simulation::new(sc).unwrap().run().unwrap();
        serde_json::from_str(&crate::report_json(&report)).unwrap()
    }

    /// A TCP sync_read, queries, incast, kv (one switch and leaf-spine), shuffle, flows, NDP,
    /// a probe stall and RoCE run.
    fn reports() -> Vec<(&'static str, Value)> {
        let ms = 1_000_000_000u64;
        let kv = |topology: &str| {
            format!(
                r#"{{"topology": {topology}, "workload": {{"kind": "kv_gets",
                "kv_utilization": 0.3, "value_size": 20000, "kv_duration": {},
                "kv_warmup": {}}}}}"#,
                20 * ms,
                5 * ms
            )
        };
        let leaf_spine = r#"{"kind": "leaf_spine", "senders": 8, "hosts_per_leaf": 4,
            "spines": 2}"#;
        vec![
            (
                "tcp",
                run(r#"{"topology": {"senders": 4}, "workload": {"blocks": 3}}"#),
            ),
            (
                "queries",
                run(
                    r#"{"topology": {"senders": 4}, "workload": {"kind": "queries",
                    "queries": 20}}"#,
                ),
            ),
            (
                "incast",
                run(
                    r#"{"topology": {"senders": 4}, "workload": {"kind": "incast",
                    "flow_size": 50000}}"#,
                ),
            ),
            ("kv", run(&kv(r#"{"senders": 6}"#))),
            ("kv leaf-spine", run(&kv(leaf_spine))),
            (
                "shuffle",
                run(
                    r#"{"topology": {"senders": 4}, "workload": {"kind": "shuffle",
                    "reducers": 4, "blocks": 2, "sru": 20000}}"#,
                ),
            ),
            (
                "flows",
                run(
                    r#"{"topology": {"senders": 4}, "workload": {"kind": "flows"},
                    "flows": {"count": 20, "size_cdf": "hadoop", "incast_fan_in": 3,
                    "incast_size": 20000, "incast_load": 0.1}}"#,
                ),
            ),
            (
                "ndp",
                run(r#"{"transport": "ndp", "topology": {"senders": 4},
                    "workload": {"kind": "incast", "flow_size": 50000}}"#),
            ),
            (
                "pfc over a shared buffer",
                run(
                    r#"{"topology": {"senders": 8, "pfc": true, "shared_buffer": 500000},
                    "workload": {"blocks": 2}}"#,
                ),
            ),
            (
                "a probe stall (Linux BBR, 2 senders, 32 KB port)",
                run(r#"{"topology": {"senders": 2, "link": 100000000,
                    "buffer": {"bytes": 32000}},
                    "tcp": {"profile": "linux", "congestion_control": "bbr"},
                    "workload": {"sru": 64000, "blocks": 3}}"#),
            ),
            (
                "roce",
                run(
                    r#"{"transport": "roce", "topology": {"senders": 4, "pfc": true},
                    "workload": {"kind": "incast", "flow_size": 50000}}"#,
                ),
            ),
        ]
    }

    #[test]
    fn every_path_is_in_the_serialized_report_of_the_runs_it_concerns() {
        let reports = reports();
        for c in columns() {
            let Some(path) = c.path else { continue };
            let section = path.split(['.', '[']).next().unwrap();
            let mut found = false;
            for (what, r) in &reports {
                let has = match c.scope {
                    Scope::Run => true,
                    _ => !r.get(section).is_none_or(Value::is_null),
                };
                match read(r, path) {
                    Ok(_) if !c.simulated => panic!("{}: {what} reports it", c.name),
                    Ok(values) => found |= !values.is_empty() && has,
                    Err(e) if has && c.simulated && !c.optional => {
                        panic!("{}: {what}: {e}", c.name)
                    }
                    Err(_) => {}
                }
            }
            assert!(found || !c.simulated, "{}: no run fills {path}", c.name);
        }
    }

    #[test]
    fn names_are_unique_and_every_column_says_where_it_comes_from() {
        let cols = columns();
        let mut names: Vec<_> = cols.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), cols.len(), "a name repeats");
        for c in &cols {
            assert!(!c.doc.is_empty(), "{}: no doc", c.name);
            match (c.path, c.op) {
                (Some(_), Some(op)) => assert!(AGGREGATES.contains(&op), "{}: {op}", c.name),
                (None, Some(op)) => assert!(COMPUTATIONS.contains(&op), "{}: {op}", c.name),
                (Some(_), None) => {}
                (None, None) => panic!("{}: neither a path nor a computation", c.name),
            }
            assert_eq!(
                c.unit == Unit::Seconds,
                c.name.ends_with("_s") && !c.name.ends_with("per_s"),
                "{}: a time's name ends in _s",
                c.name
            );
            if c.scope != Scope::Run {
                let section = c.path.unwrap().split('.').next().unwrap();
                assert!(c.name.starts_with(section), "{}: not {section}_…", c.name);
            }
        }
    }

    #[test]
    fn the_json_names_kinds_and_units_as_the_record_does() {
        let v: Value = serde_json::from_str(&json()).unwrap();
        let c = &v.as_array().unwrap()[0];
        assert_eq!(c["name"], "senders");
        assert_eq!(
            (c["kind"].as_str(), c["unit"].as_str()),
            (Some("int"), Some("count"))
        );
        assert_eq!(c["scope"], "run");
        let fct = v
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "flow_completion_s");
        assert_eq!(fct.unwrap()["kind"], "list<float>");
    }
}
