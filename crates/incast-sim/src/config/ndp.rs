//! The `ndp` section: NDP (Handley, Raiciu, Agache, Voinescu, Moore, Antichi, Wójcik,
//! "Re-architecting datacenter networks and stacks for low latency and high performance",
//! SIGCOMM 2017): trimming switch ports, a receiver that pulls, senders that resend on a NACK,
//! a returned header or a timeout; and the rules its keys follow. The defaults are the
//! paper's or incastlab's; the settings that make it run as htsim's NDP (the public
//! `Broadcom/csg-htsim`, `ndp.cpp`, `compositequeue.cpp`) cite htsim beside them.

use serde::{Deserialize, Serialize};

use super::section::{choices, section};
use super::trimming::{validate_header_queue, validate_packets};
use super::{bad, ConfigError, Scenario, WorkloadKind};
use crate::units::*;

/// Which flow an NDP receiver's next pull goes to.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PullOrder {
    /// Round-robin over the flows owed a pull, one pull per flow per turn: the paper's
    /// default (Handley et al., SIGCOMM 2017, §3.2: the pulls of different connections are
    /// served fairly unless a flow is given priority).
    Fair,
    /// First come first served: pulls in the order the arrivals earned them, so a flow that
    /// starts behind an incast waits for every pull the incast's first windows earned.
    Fifo,
    /// The paper's prioritization (§3.2: strict priority for a flow of higher priority; §5,
    /// Figure 10: the receiver sends a short flow's pulls before the long flows'): the short
    /// flows beside the application's (`workload.short_load`) are pulled before the
    /// application's flows, each class round-robin.
    ShortFirst,
    /// Round-robin over the flows in the fixed order of their indices, skipping those owed
    /// nothing (htsim's `FairPullQueue`, a map from flow id to its pulls walked in id order):
    /// a flow that comes to owe a pull is served when the turn reaches it, not after every
    /// flow already waiting as with `fair`.
    Cyclic,
}

/// Where an NDP sender's retransmission timer runs from.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NdpTimer {
    /// From the flow's last send or answer: a sender that hears nothing for `ndp.rto` gives
    /// up everything unanswered (incastlab's), so a flow that still hears answers resends a
    /// packet lost without a trace only once it falls silent.
    Flow,
    /// From each packet's own send: once the oldest unanswered packet has waited `ndp.rto`,
    /// every packet that has waited as long is sent again at once (htsim's `NdpSrc`: its
    /// sent times and `retransmit_packet`). incastlab times each resend again; htsim does
    /// not, so a resend whose header is dropped too is lost to it.
    Packet,
}

/// Which data packet an NDP switch port trims when its data queue is full.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NdpTrim {
    /// The arriving one (incastlab's).
    Arriving,
    /// The arriving one or the one last queued, with equal chance (htsim's
    /// `CompositeQueue`): the later packets of a burst are not the only ones trimmed.
    Either,
}

choices! {
    NdpTimer: Flow, Packet;
    NdpTrim: Arriving, Either;
    PullOrder: Fair, Fifo, ShortFirst, Cyclic;
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
        /// The receiver's pulls as a fraction of its link: one pull per data frame's time on
        /// the link ÷ pull_rate (1: the link's rate; htsim's NDP pull pacer 0.99, whose
        /// slack lets the receiver's port drain between bursts).
        pub pull_rate: f64 [Plain] = 1.0,
        /// Which data packet a full data queue trims: `arriving` (the one that finds it full)
        /// or `either` (that one or the one last queued, with equal chance: htsim's
        /// `CompositeQueue`, so who loses its payload is not locked to the phase of arrivals).
        pub trim: NdpTrim [Plain] = NdpTrim::Arriving,
        /// Header-queue packets served per data packet when both queues wait (weighted round
        /// robin, so data cannot starve).
        pub header_weight: u32 [Plain] = 10,
        /// Return a header to its sender when the header queue overflows (else drop it).
        pub return_to_sender: bool [Plain] = true,
        /// How long a sender waits for an answer before it resends (see `timer`).
        pub rto: SimTime [Time] = from_ms(1),
        /// The wait before a flow's first ACK; none: `rto` (htsim's NDP sender: 20 ms).
        pub rto_initial: Option<SimTime> [Time] = None,
        /// Timer randomization: each ACK draws the flow's wait anew as `rto` × (1 +
        /// rto_jitter × u), u uniform in [0, 1) from the flow's own stream. 0: every wait is
        /// `rto` exactly. htsim's NDP sender draws 50 ms × 0.75 to 1.25 on each RTT sample:
        /// `rto = 37.5ms` and `rto_jitter = 0.6667` here.
        pub rto_jitter: f64 [Plain] = 0.0,
        /// Where the retransmission timer runs from: `flow` (the flow's last send or answer:
        /// a sender that hears nothing for `rto` resends what is unanswered) or `packet`
        /// (each packet's own send, as htsim's NDP sender: every packet unanswered `rto` after
        /// it left is resent at once, even while the flow hears answers for others).
        pub timer: NdpTimer [Plain] = NdpTimer::Flow,
        /// The receiver's pull queue: `fair` (round-robin over the flows owed a pull, the
        /// paper's default: Handley et al., "Re-architecting datacenter networks and stacks
        /// for low latency and high performance", SIGCOMM 2017, §3.2), `fifo` (first come
        /// first served, incastlab's rule before November 2026), `short_first` (the short
        /// flows of `workload.short_load` in strict priority, the paper's prioritization) or
        /// `cyclic` (round-robin in the fixed order of the flows, as htsim's pull queue).
        pub pull_order: PullOrder [Plain] = PullOrder::Fair,
    }
}

/// The rules of the `ndp` keys.
impl Scenario {
    /// NDP runs an incast alone, with packets, queues and a timeout in range.
    pub(super) fn validate_ndp(&self) -> Result<(), ConfigError> {
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
        validate_packets("ndp", n.mtu, n.header_bytes, n.initial_window)?;
        if n.data_queue == 0 {
            return Err(bad("ndp.data_queue", "must hold at least one packet"));
        }
        validate_header_queue("ndp", n.header_queue, n.header_bytes, n.header_weight)?;
        if n.rto == 0 {
            return Err(bad("ndp.rto", "must be positive"));
        }
        if !(n.pull_rate > 0.0 && n.pull_rate <= 1.0) {
            return Err(bad(
                "ndp.pull_rate",
                format!(
                    "must be in (0, 1] (a fraction of the link), got {}",
                    n.pull_rate
                ),
            ));
        }
        if n.rto_initial == Some(0) {
            return Err(bad(
                "ndp.rto_initial",
                "must be positive (or none: ndp.rto)",
            ));
        }
        if !(0.0..=1.0).contains(&n.rto_jitter) {
            return Err(bad(
                "ndp.rto_jitter",
                format!(
                    "must be in [0, 1] (a fraction of the timeout), got {}",
                    n.rto_jitter
                ),
            ));
        }
        Ok(())
    }
}
