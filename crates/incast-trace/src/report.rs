//! What an analysis finds, ready to serialize: the report and its rows (flows, blocks, rates,
//! timeout episodes, the worst block's plot). [`crate::analysis::Analyzer`] fills them.

use serde::Serialize;

use crate::flight::Flight;
use crate::flows::FlowCounts;

/// Every finding, ready to serialize.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Report {
    /// Frames read, TCP segments among them.
    pub frames: u64,
    /// TCP segments among the frames.
    pub tcp_segments: u64,
    /// Of them, second copies of a packet just seen (same IP identification, sequence,
    /// acknowledgment and length): a capture on several interfaces at once (`tcpdump -i
    /// any` on a host with a bridge or bond) sees a packet on each; they are not analysed.
    pub copies: u64,
    /// The capture ended inside a record.
    pub truncated: bool,
    /// The receiver, dotted quad; whether it was inferred.
    pub receiver: Option<String>,
    /// The receiver was inferred rather than given.
    pub receiver_inferred: bool,
    /// The options the analysis ran with.
    pub rto_min_ns: u64,
    /// Interval width.
    pub interval_ns: u64,
    /// Time of the first frame, nanoseconds.
    pub t0_ns: u64,
    /// From the first to the last data segment into the receiver, nanoseconds.
    pub span_ns: u64,
    /// Payload bytes delivered to the receiver for the first time.
    pub goodput_bytes: u64,
    /// Goodput over the span, bits per second.
    pub goodput_bps: f64,
    /// Timeouts of the flows into the receiver.
    pub rtos: u64,
    /// Of them, backed-off timeouts inside longer silences.
    pub rtos_backed_off: u64,
    /// The RTO the backed-off timeouts were counted with: the lower quartile of the
    /// silences the capture's timeouts ended, at least RTOmin; nanoseconds.
    pub rto_estimate_ns: u64,
    /// Every silence the analysis took for a timeout, shortest first, nanoseconds. With a
    /// small `rto_min` they include flows' ordinary pauses: a distribution to set beside
    /// another capture's read the same way (`incast doctor` sets its replica's beside the
    /// operator's).
    pub rto_silences_ns: Vec<u64>,
    /// When each timeout's resend arrived after the receiver's link had idled (1.5 ms),
    /// nanoseconds from `t0_ns`, at most 10,000: kernels fire their timers on a clock tick and
    /// such a resend finds the port's queue empty, so these share a phase modulo the tick
    /// (`incast doctor` reads the tick from them).
    pub timer_fires_ns: Vec<u64>,
    /// The shortest handshake into the receiver (its SYN to the SYN-ACK), nanoseconds; 0:
    /// none in the capture.
    pub handshake_ns: u64,
    /// Segments resent into the receiver, by cause.
    pub retx_fast: u64,
    /// Segments resent after timeouts.
    pub retx_rto: u64,
    /// Tail-loss probes.
    pub retx_tlp: u64,
    /// The blocks' [`BlockRow::probe_stalls`] together.
    pub probe_stalls: u64,
    /// Flows into the receiver.
    pub flows: Vec<FlowRow>,
    /// The receiver's ingress per interval (columns, from `t0_ns`).
    pub intervals: Intervals,
    /// Average and peak ingress over windows of 1 ms, 10 ms, 1 s (and the interval).
    pub rates: Vec<RateRow>,
    /// Blocks: a round of responses to requests the receiver sent.
    pub blocks: Vec<BlockRow>,
    /// Clusters of timeouts, each within one RTOmin.
    pub episodes: Vec<Episode>,
    /// The sequence plot of the longest block.
    pub worst_block: Option<WorstBlock>,
    /// Whether the incast signature is there, and the line that says so.
    pub incast: bool,
    /// The verdict, one line.
    pub verdict: String,
}

/// One flow into the receiver.
#[derive(Debug, Clone, Serialize)]
pub struct FlowRow {
    /// Number of the flow in this report.
    pub flow: u32,
    /// Sender address and port.
    pub src: String,
    /// Sender port.
    pub sport: u16,
    /// Receiver address and port.
    pub dst: String,
    /// Receiver port.
    pub dport: u16,
    /// What it carried.
    #[serde(flatten)]
    pub counts: FlowCounts,
    /// First and last packet, nanoseconds from `t0_ns`.
    pub first_ns: u64,
    /// Last packet.
    pub last_ns: u64,
    /// Its first and last data segments, nanoseconds from `t0_ns` (a connection's
    /// handshake and its closing FINs lie outside them).
    pub first_data_ns: u64,
    /// Its last data segment.
    pub last_data_ns: u64,
    /// Its first flight (the sender's initial window where seen whole).
    #[serde(flatten)]
    pub flight: Flight,
}

/// The receiver's ingress per interval, as columns.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Intervals {
    /// Frame bytes in.
    pub wire_bytes: Vec<u64>,
    /// Payload bytes new to the receiver.
    pub goodput_bytes: Vec<u64>,
    /// Resent segments.
    pub retx: Vec<u32>,
    /// Timeouts.
    pub rtos: Vec<u32>,
}

/// Ingress over windows of one width.
#[derive(Debug, Clone, Serialize)]
pub struct RateRow {
    /// Window width, nanoseconds.
    pub window_ns: u64,
    /// Average over the span, bits per second.
    pub avg_bps: f64,
    /// The busiest window.
    pub peak_bps: f64,
    /// peak / average.
    pub peak_to_avg: f64,
}

/// One block.
#[derive(Debug, Clone, Serialize)]
pub struct BlockRow {
    /// Block number.
    pub block: u32,
    /// Start (the first request), nanoseconds from `t0_ns`.
    pub start_ns: u64,
    /// Until its last data segment, nanoseconds.
    pub duration_ns: u64,
    /// From its start to its first data segment: a request's round trip plus the answer's
    /// first frame (and the server's think time), nanoseconds; 0 when the block's request was
    /// not seen as one (the first block of a capture).
    pub first_answer_ns: u64,
    /// Payload bytes new to the receiver.
    pub bytes: u64,
    /// Bits per second over its duration.
    pub goodput_bps: f64,
    /// Flows that answered.
    pub flows: u32,
    /// Timeouts during it.
    pub rtos: u32,
    /// Resent segments.
    pub retx: u64,
    /// Silences of RTOmin/2 or more no timeout ended ([`crate::verdict::ends_stall`]).
    pub probe_stalls: u32,
    /// From its flows' first request to their last, nanoseconds (0: one request, or none
    /// seen): a client that asks its servers one after another.
    pub request_spread_ns: u64,
    /// Per flow that answered, from its own request (or, none seen, the block's start) to its
    /// first data segment in the block, shortest first, nanoseconds: a round trip, the
    /// server's delay before answering and the queue its first segment met. Their spread
    /// shows servers that answer at different times (in an emulation, a CPU shared by them).
    pub answer_delays_ns: Vec<u64>,
}

/// Timeouts that fell within one RTOmin of the first.
#[derive(Debug, Clone, Serialize)]
pub struct Episode {
    /// The first timeout, nanoseconds from `t0_ns`.
    pub start_ns: u64,
    /// Timeouts in it.
    pub rtos: u32,
    /// Distinct flows among them.
    pub flows: u32,
    /// Share of the RTOmin before it that the receiver's link idled.
    pub idle_before: f64,
    /// Many flows, an idle link: the incast signature.
    pub synchronized: bool,
}

/// The longest block's data segments, per flow.
#[derive(Debug, Clone, Serialize)]
pub struct WorstBlock {
    /// Its number.
    pub block: u32,
    /// Its start, nanoseconds from `t0_ns`.
    pub start_ns: u64,
    /// Per segment: time from the block's start (ns), flow, sequence offset, resent.
    pub t_ns: Vec<u64>,
    /// Flow of each point.
    pub flow: Vec<u32>,
    /// Sequence offset from the flow's first byte in the block.
    pub seq: Vec<i64>,
    /// Whether the point is a resend.
    pub retx: Vec<bool>,
    /// The plot was cut at `max_plot_points`.
    pub cut: bool,
}
