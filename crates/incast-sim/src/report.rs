//! The result of one run: what every backend of incastlab reports, in base units.

use serde::Serialize;

use crate::config::{QueueLimit, WorkloadKind};
use crate::net::QueueStats;
use crate::units::SimTime;

/// One flow (connection) of the workload or the background.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FlowReport {
    /// Connection index (workload flows first, then background flows).
    pub flow: u32,
    /// A long-lived background flow.
    pub background: bool,
    /// Bytes delivered to the receiving application.
    pub bytes: u64,
    /// Completion time from the workload start (incast workload), picoseconds.
    pub fct: Option<SimTime>,
    /// Retransmission timeouts.
    pub timeouts: u32,
    /// Fast-recovery episodes.
    pub fast_recoveries: u32,
    /// Segments retransmitted by fast retransmit / SACK recovery.
    pub retx_fast: u32,
    /// Segments retransmitted after a timeout.
    pub retx_timeout: u32,
    /// Longest run of successive timeouts.
    pub max_successive_timeouts: u32,
    /// cwnd reductions in response to ECN echoes (DCTCP).
    pub ecn_reductions: u32,
    /// Timeouts that F-RTO found spurious.
    pub spurious_timeouts: u32,
    /// Tail loss probes sent (RACK-TLP).
    pub loss_probes: u32,
    /// Bytes sent per slow-start round of the first response, until its first loss.
    pub rounds: Vec<u64>,
    /// Time its packets were held at links paused by PFC, picoseconds, summed over the links
    /// of its route (several packets waiting behind one pause at one link count once); only
    /// when the fabric is reported under PFC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<SimTime>,
    /// The incast burst of a flow schedule the flow belongs to (absent: background, or not a
    /// schedule's flow).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst: Option<u32>,
    /// The flow's ideal completion time, picoseconds: alone on the idle network (a flow
    /// schedule's flows; absent otherwise). See [`crate::app::flows::ideal_fct`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ideal_fct: Option<SimTime>,
}

/// One link's PFC pauses.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PortPauses {
    /// The link (`port3`, `nic5`, `fabric40`): the egress that was paused.
    pub name: String,
    /// Pause frames (XOFF) that stopped it.
    pub pauses: u64,
    /// Time it spent paused, picoseconds.
    pub paused: SimTime,
}

/// The fabric in detail (`topology.fabric_report`, or PFC over a shared buffer, egress ECN
/// marking, INT): PFC's pauses and victims, buffers, marks.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct FabricReport {
    /// PFC pause frames (XOFF) that stopped a link, every link together.
    pub pause_frames: u64,
    /// Time links spent paused, summed over links, picoseconds.
    pub paused: SimTime,
    /// Every link PFC paused at least once.
    pub paused_links: Vec<PortPauses>,
    /// Most of each switch's shared buffer in use at once (pool and PFC headrooms), bytes,
    /// by switch (a star's one; leaves then spines; ToRs, aggregation switches, cores; a
    /// topology file's switches with a buffer, in file order).
    pub switch_buffer_max_bytes: Vec<u64>,
    /// Frames dropped under PFC because the ingress's headroom (or own buffer) was full.
    pub headroom_overruns: u64,
    /// Packets marked CE at switch ports (on arrival or on egress).
    pub ecn_marks: u64,
    /// Flows whose packets were held at paused links (under PFC).
    pub paused_flows: u64,
    /// Paused flows held by a pause that spread back from a congested egress they do not
    /// cross (each flow judged against its own route): victims of congestion spreading.
    pub victim_flows: u64,
    /// The victims' flow numbers.
    pub victims: Vec<u32>,
}

/// One queue.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct QueueReport {
    /// `port-receiver`, `port3`, or `nics` (all host NICs together).
    pub name: String,
    /// The queue's limit.
    pub limit: QueueLimit,
    /// Counters.
    #[serde(flatten)]
    pub stats: QueueStats,
}

/// Sampled time series.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct Series {
    /// Sample times from the workload start, picoseconds.
    pub t: Vec<SimTime>,
    /// Bottleneck queue occupancy, frame bytes.
    pub queue_bytes: Vec<u64>,
    /// Congestion window (segments) of each workload flow: `cwnd[flow][sample]`.
    pub cwnd: Vec<Vec<u32>>,
}

/// The result of one run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Report {
    /// Number of servers.
    pub senders: u32,
    /// Workload kind.
    pub workload: WorkloadKind,
    /// Application bytes the workload delivered.
    pub app_bytes: u64,
    /// When the workload started, picoseconds.
    pub start: SimTime,
    /// Workload duration: start to the completion of the last block or flow.
    pub duration: SimTime,
    /// Application bytes / duration, bits per second.
    pub goodput_bps: f64,
    /// Background flows' bytes delivered while the workload ran / its duration, bits per
    /// second.
    pub background_bps: f64,
    /// PFC pauses the switch sent (each XOFF that took a link from running to paused).
    pub pfc_pauses: u64,
    /// Unloaded one-way latency of a full packet from the first server to the receiver,
    /// picoseconds: the base latency of an optimal completion time.
    pub base_latency: SimTime,
    /// Rate of the receiver's link, bits per second (a shuffle's: of every reducer host's
    /// links together, what its goodput is a share of).
    pub link_bps: u64,
    /// Duration of each block (sync_read), picoseconds.
    pub block_times: Vec<SimTime>,
    /// (response bytes, completion time in picoseconds) of every query (queries).
    pub query_fcts: Vec<(u64, SimTime)>,
    /// Retransmission timeouts of all servers during each block.
    pub block_timeouts: Vec<u32>,
    /// Every flow.
    pub flows: Vec<FlowReport>,
    /// Retransmission timeouts of the workload's flows.
    pub timeouts: u64,
    /// `[k-1]`: times a workload flow suffered k successive timeouts (last bucket: k or more).
    pub timeout_runs: Vec<u64>,
    /// Fast-recovery episodes of the workload's flows.
    pub fast_recoveries: u64,
    /// Segments retransmitted by fast retransmit / SACK recovery (workload flows).
    pub retx_fast: u64,
    /// Segments retransmitted after timeouts (workload flows).
    pub retx_timeout: u64,
    /// cwnd reductions in response to ECN echoes (workload flows, DCTCP).
    pub ecn_reductions: u64,
    /// Tail loss probes the workload's senders sent (RACK-TLP; Linux's TCPLossProbes).
    pub loss_probes: u64,
    /// Stalls without a timeout: waits of at least half the minimum RTO in which a flow of
    /// an unfinished block (or an unfinished incast flow) delivered nothing and no
    /// retransmission timeout fired on its connection, such as a tail loss probe capped at
    /// the RTO ([`crate::app::stalls`]); TCP and Swift synchronized reads and incasts.
    /// Serialized only when nonzero.
    #[serde(skip_serializing_if = "is_zero")]
    pub probe_stalls: u64,
    /// Those stalls (all servers) during each block, as `block_timeouts`; serialized only
    /// when some block had one.
    #[serde(skip_serializing_if = "all_zero")]
    pub block_probe_stalls: Vec<u32>,
    /// Packets dropped anywhere.
    pub drops: u64,
    /// Switch ports, then all host NICs together.
    pub queues: Vec<QueueReport>,
    /// The bottleneck: the switch port towards the receiver.
    pub bottleneck: QueueReport,
    /// Most of the switch's shared buffer in use at once, bytes (if it has one); on a
    /// described topology with several, the fullest switch's.
    pub shared_buffer_max_bytes: Option<u64>,
    /// Share of the workload's duration the bottleneck spent serializing.
    pub bottleneck_utilization: f64,
    /// Events processed.
    pub events: u64,
    /// Simulated time at the end of the run, picoseconds.
    pub end: SimTime,
    /// Optional time series.
    pub series: Option<Series>,
    /// NDP's counters, when the transport is NDP.
    pub ndp: Option<NdpReport>,
    /// The key-value store's figures, when the workload is `kv_gets`.
    pub kv: Option<crate::app::kv::report::KvReport>,
    /// The shuffle's figures, when the workload is `shuffle` (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shuffle: Option<crate::app::shuffle::ShuffleReport>,
    /// The fabric in detail, when reported ([`crate::Scenario::reports_fabric`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fabric: Option<FabricReport>,
    /// FCT slowdown by flow size, when the flows have ideal completion times (a flow
    /// schedule's; absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fct_slowdown: Option<crate::slowdown::FctSlowdown>,
    /// RoCE's counters, when the transport is RoCE (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roce: Option<RoceReport>,
    /// Swift's counters, when the transport is Swift (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swift: Option<SwiftReport>,
    /// EQDS's counters, when the transport is EQDS (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eqds: Option<EqdsReport>,
    /// Homa's counters, when the transport is Homa (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub homa: Option<HomaReport>,
    /// The short flows beside the incast, when `workload.short_load` > 0 (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub short_flows: Option<ShortFlows>,
}

/// The short flows beside an incast of a run (`workload.short_load`; filled in by
/// [`crate::app::short`]).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ShortFlows {
    /// Short flows started before the application finished.
    pub started: u32,
    /// Of them, those that completed before the run ended.
    pub completed: u32,
    /// Of them, those still running when the run ended (it ends with the application).
    pub unfinished: u32,
    /// Median completion time of the started ones, picoseconds (arrival to the last byte at
    /// the receiver); an unfinished flow counts at its age at the run's end, a lower bound,
    /// so while `unfinished` > 0 the percentiles are lower bounds.
    pub p50: Option<SimTime>,
    /// 99th-percentile completion time (nearest rank), picoseconds, as `p50`.
    pub p99: Option<SimTime>,
    /// Median slowdown: completion time (an unfinished flow's age) over the flow's ideal one
    /// ([`crate::app::flows::ideal_fct`], alone on the idle network).
    pub slowdown_p50: Option<f64>,
    /// 99th-percentile slowdown.
    pub slowdown_p99: Option<f64>,
    /// The smallest slowdown of the completed ones (never below 1: no flow beats its ideal
    /// time).
    pub min_slowdown: Option<f64>,
    /// (bytes, completion time in picoseconds) of every completed short flow, in arrival order.
    pub fcts: Vec<(u64, SimTime)>,
}

/// What Swift's endpoints did (the workload's connections, both directions).
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct SwiftReport {
    /// Data packets sent, retransmissions included.
    pub data_packets: u64,
    /// ACKs the receivers sent (one per data packet).
    pub acks: u64,
    /// Fast recoveries (duplicate ACKs) entered.
    pub fast_recoveries: u64,
    /// Smallest congestion window any connection reached, packets.
    pub lowest_cwnd: f64,
    /// Connections whose window went below one packet (so they paced).
    pub paced_flows: u64,
    /// Packets (data or ACK) the network dropped.
    pub dropped: u64,
}

/// What NDP's switches and endpoints did.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct NdpReport {
    /// Data packets sent, first transmissions and retransmissions.
    pub data_packets: u64,
    /// Data packets trimmed to their headers.
    pub trimmed: u64,
    /// Headers returned to their senders.
    pub bounced: u64,
    /// Headers or control packets dropped by full header queues.
    pub dropped: u64,
    /// Pulls that reached senders.
    pub pulls: u64,
    /// NACKs the receiver sent (one per trimmed header that reached it).
    pub nacks: u64,
    /// Retransmissions answering a NACK.
    pub retx_nack: u64,
    /// Retransmissions answering a bounce.
    pub retx_bounce: u64,
    /// Retransmissions after a sender timeout.
    pub retx_timeout: u64,
    /// Sender timeouts.
    pub timeouts: u64,
}

/// What EQDS's switches and endpoints did.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct EqdsReport {
    /// Data packets sent, first transmissions and retransmissions.
    pub data_packets: u64,
    /// Data packets trimmed to their headers (trimming switches).
    pub trimmed: u64,
    /// Headers returned to their senders.
    pub bounced: u64,
    /// Headers and control packets dropped by full header queues (trimming switches).
    pub header_drops: u64,
    /// Data packets dropped by full drop-tail queues (switches that do not trim).
    pub drops: u64,
    /// Control packets dropped by full drop-tail queues (switches that do not trim).
    pub control_drops: u64,
    /// NACKs the receiver sent (one per trimmed header that reached it).
    pub nacks: u64,
    /// Credits (pulls) the receiver granted.
    pub credits: u64,
    /// RTSs the senders sent (after a timeout or a bounce).
    pub rts: u64,
    /// Retransmissions answering a NACK.
    pub retx_nack: u64,
    /// Retransmissions answering a bounce.
    pub retx_bounce: u64,
    /// Retransmissions after a sender timeout.
    pub retx_timeout: u64,
    /// Sender timer expiries: giving packets up, or asking again for credit never granted.
    pub timeouts: u64,
    /// The most bytes, data and headers, waiting at once in any one switch egress queue.
    pub queue_peak_bytes: u64,
    /// That queue's name.
    pub queue_peak_at: String,
}

/// What RoCE's queue pairs did.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct RoceReport {
    /// Data packets sent, retransmissions included.
    pub data_packets: u64,
    /// Data packets sent again (after a NAK or a timeout).
    pub retransmitted: u64,
    /// Data packets resent after a retransmission timeout.
    pub retx_timeout: u64,
    /// ACKs the receivers sent.
    pub acks: u64,
    /// NAKs the receivers sent.
    pub naks: u64,
    /// Retransmission timer expiries that resent something.
    pub timeouts: u64,
    /// CNPs the receivers sent (DCQCN's notification point).
    pub cnps_sent: u64,
    /// CNPs that reached their senders.
    pub cnps_received: u64,
    /// Of those, CNPs that reached a sender with nothing left to send (its data all on the
    /// wire, none to resend): DCQCN's rate cut paced nothing. Only when a CNP arrived.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cnps_idle: Option<u64>,
    /// Data packets the receivers discarded: duplicates, under go-back-N those past a gap,
    /// under selective repeat those past the receive bitmap (`roce.sack_bitmap`).
    pub discarded: u64,
    /// Packets (data or control) the network dropped.
    pub dropped: u64,
}

/// What Homa's senders, receivers and switches did.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct HomaReport {
    /// Unscheduled bytes a message sent before its first grant (RTTbytes).
    pub rtt_bytes: u64,
    /// Levels for unscheduled packets (the top ones).
    pub unsched_levels: u32,
    /// Message sizes at which each unscheduled level ends, from the top.
    pub unsched_cutoffs: Vec<u64>,
    /// Messages granted at once by a receiver.
    pub overcommit: u32,
    /// Data packets sent, resent ones included.
    pub data_packets: u64,
    /// Data packets sent again after a RESEND.
    pub retransmitted: u64,
    /// GRANTs the receivers sent.
    pub grants: u64,
    /// Resend timeouts of the receivers (each sends a RESEND per missing range).
    pub resends: u64,
    /// BUSYs the senders answered.
    pub busy: u64,
    /// Messages the incast optimization marked (sent with fewer unscheduled bytes).
    pub marked: u64,
    /// Data packets that arrived twice.
    pub duplicates: u64,
    /// Data packets that arrived after a later packet of their message: overtaken (a higher
    /// level, another sprayed path) or resent.
    pub reordered: u64,
    /// Packets (data or control) the switches dropped.
    pub dropped: u64,
    /// The most bytes one receiver had granted (beyond the unscheduled ones) and not yet
    /// received at once: Homa bounds it by overcommitment × RTTbytes (§3.5).
    pub granted_peak: u64,
}

pub use crate::metrics::utilization;

/// A count left out of the serialized report when zero (a field added after the stored
/// reports, which stay byte for byte what they were).
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A list of counts left out when every one is zero (or there are none).
fn all_zero(v: &[u32]) -> bool {
    v.iter().all(|&n| n == 0)
}

impl FlowReport {
    /// What its FCT slowdown is computed from ([`crate::slowdown::FctSlowdown::of`]).
    pub fn sample(&self) -> crate::slowdown::Sample {
        crate::slowdown::Sample {
            bytes: self.bytes,
            fct: self.fct,
            ideal: self.ideal_fct,
            incast: self.burst.is_some(),
        }
    }

    /// A workload flow with only its delivered bytes and completion time (a transport
    /// without TCP's counters).
    pub fn delivered(flow: u32, bytes: u64, fct: Option<SimTime>) -> FlowReport {
        FlowReport {
            flow,
            background: false,
            bytes,
            fct,
            timeouts: 0,
            fast_recoveries: 0,
            retx_fast: 0,
            retx_timeout: 0,
            max_successive_timeouts: 0,
            ecn_reductions: 0,
            loss_probes: 0,
            spurious_timeouts: 0,
            rounds: Vec::new(),
            paused: None,
            burst: None,
            ideal_fct: None,
        }
    }
}

/// What every transport's run reports alike; [`Report::of_run`] derives the rest.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// Number of servers.
    pub senders: u32,
    /// Workload kind.
    pub workload: WorkloadKind,
    /// Application bytes the workload delivered.
    pub app_bytes: u64,
    /// When the workload started.
    pub start: SimTime,
    /// When the workload ended (its last completion), or the current time if it has not.
    pub end: SimTime,
    /// Simulated time now.
    pub now: SimTime,
    /// Events processed.
    pub events: u64,
    /// Unloaded one-way latency of a full packet from the first server to the receiver.
    pub base_latency: SimTime,
    /// Rate of the receiver's link, bits per second.
    pub link_bps: u64,
    /// Every flow.
    pub flows: Vec<FlowReport>,
    /// The bottleneck queue.
    pub bottleneck: QueueReport,
    /// Time the bottleneck spent serializing during the workload.
    pub bottleneck_busy: SimTime,
}

impl Report {
    /// The report of a run from what every transport knows: duration, goodput and the
    /// bottleneck's utilization derived, the bottleneck as the only queue, and every
    /// transport-specific counter zero or empty for the caller to fill.
    pub fn of_run(r: RunSummary) -> Report {
        let duration = r.end.saturating_sub(r.start);
        Report {
            senders: r.senders,
            workload: r.workload,
            app_bytes: r.app_bytes,
            start: r.start,
            duration,
            goodput_bps: crate::units::rate_of(r.app_bytes, duration),
            background_bps: 0.0,
            pfc_pauses: 0,
            base_latency: r.base_latency,
            link_bps: r.link_bps,
            block_times: Vec::new(),
            query_fcts: Vec::new(),
            block_timeouts: Vec::new(),
            flows: r.flows,
            timeouts: 0,
            timeout_runs: vec![0; crate::tcp::TIMEOUT_RUN_BUCKETS],
            fast_recoveries: 0,
            retx_fast: 0,
            retx_timeout: 0,
            ecn_reductions: 0,
            loss_probes: 0,
            probe_stalls: 0,
            block_probe_stalls: Vec::new(),
            drops: 0,
            queues: vec![r.bottleneck.clone()],
            bottleneck: r.bottleneck,
            shared_buffer_max_bytes: None,
            bottleneck_utilization: utilization(r.bottleneck_busy, duration),
            events: r.events,
            end: r.now,
            series: None,
            ndp: None,
            kv: None,
            shuffle: None,
            fabric: None,
            fct_slowdown: None,
            roce: None,
            swift: None,
            eqds: None,
            homa: None,
            short_flows: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(start: SimTime, end: SimTime, busy: SimTime) -> Report {
        Report::of_run(RunSummary {
            senders: 2,
            workload: WorkloadKind::Incast,
            app_bytes: 1_000,
            start,
            end,
            now: end + 5,
            events: 7,
            base_latency: 3,
            link_bps: 1_000_000_000,
            flows: vec![FlowReport::delivered(0, 1_000, Some(end - start))],
            bottleneck: QueueReport {
                name: "port-receiver".into(),
                limit: QueueLimit::UNLIMITED,
                stats: QueueStats {
                    busy,
                    ..QueueStats::default()
                },
            },
            bottleneck_busy: busy,
        })
    }

    #[test]
    fn a_run_report_derives_duration_goodput_and_utilization() {
        let r = run(1_000_000, 9_000_000, 2_000_000);
        assert_eq!(r.duration, 8_000_000);
        assert_eq!(r.goodput_bps, 1e9);
        assert_eq!(r.bottleneck_utilization, 0.25);
        assert_eq!((r.end, r.events), (9_000_005, 7));
        assert_eq!(r.queues, std::slice::from_ref(&r.bottleneck));
        assert_eq!(r.flows[0].fct, Some(8_000_000));
    }

    #[test]
    fn utilization_is_capped_at_one_and_zero_for_an_empty_run() {
        assert_eq!(utilization(10, 5), 1.0);
        assert_eq!(utilization(10, 0), 0.0);
        assert_eq!(run(5, 5, 0).goodput_bps, 0.0);
    }
}
