//! The `homa` section: Homa's messages, unscheduled bytes, grants, priorities, incast
//! optimization and resends (Montazeri, Li, Alizadeh, Ousterhout, "Homa: A Receiver-Driven
//! Low-Latency Transport Protocol Using Network Priorities", SIGCOMM 2018; "the paper" below),
//! and the rules they follow (run in the order `validate.rs` lists).

use super::section::section;
use super::{bad, ConfigError, Scenario, WorkloadKind, AN_HOUR};
use crate::units::*;

/// Priority levels a switch port offers (the paper's: 8, §5.1: its implementation's
/// measurements with 8 levels against 4, 2 and 1; Figure 4: 6 of 8 unscheduled).
pub const HOMA_MAX_LEVELS: u32 = crate::net::prio::LEVELS as u32;

section! {
    /// Homa parameters (transport = "homa").
    pub struct Homa {
        /// Payload bytes per data packet. 1448 with homa.header_bytes 70 makes the same 1518 B
        /// frames as TCP's defaults, so the two compare packet for packet (the paper's
        /// simulations send full Ethernet frames).
        pub mtu: u64 [Size] = 1448,
        /// Bytes of a data frame beyond its payload (Ethernet, IP, Homa's DATA header, FCS).
        pub header_bytes: u64 [Size] = 70,
        /// Bytes of a GRANT, RESEND or BUSY frame (a minimum Ethernet frame).
        pub control_bytes: u64 [Size] = 64,
        /// Unscheduled bytes a message sends before its first grant: RTTbytes, the bytes the
        /// sender's link carries in one round trip. 0: derived from the topology (the
        /// host link's rate × the longest round trip of a full data packet and a grant between
        /// a message's ends); the paper's simulations use 9.7 KB at 10 Gbps (HomaSimulation's maxOutstandingRecvBytes = 9700B).
        pub rtt_bytes: u64 [Size] = 0,
        /// Priority levels the switches' egress ports serve strictly (1..8): 8 in the paper
        /// (§5.1, Figures 8 and 9; 4 are almost as good for tail latency, 2 are not).
        pub priorities: u32 [Plain] = 8,
        /// Of those, the levels for unscheduled packets (the top ones). 0: derived from the
        /// workload's message sizes as the paper does: the share of unscheduled bytes
        /// in the workload times the levels, at least 1 and leaving 1 scheduled level.
        pub unsched_levels: u32 [Plain] = 0,
        /// Message sizes (bytes, ascending) at which an unscheduled level ends: a message of at
        /// most `unsched_cutoffs[i]` bytes sends its unscheduled packets at the `i`-th level
        /// from the top, larger ones at the lowest unscheduled level. Empty: derived from the
        /// workload's sizes so each level carries the same unscheduled bytes, as the paper allocates them.
        pub unsched_cutoffs: Vec<u64> [Sizes] = Vec::new(),
        /// Every packet takes a path of its own through the fabric (per-packet spraying), as
        /// the paper's design and simulations assume (§2: "simple randomized per-packet
        /// spraying"; §5.2: its simulated switches "implement packet spraying"); false: each
        /// message's packets follow one route each way (ECMP per message). Sprayed packets of
        /// a message may arrive out of order; the receiver counts a missing packet as in
        /// flight until it arrives or its RESEND timer fires.
        pub spray: bool [Plain] = true,
        /// Messages a receiver grants at once, the degree of overcommitment. 0: the
        /// number of scheduled levels, the paper's choice (§3.5).
        pub overcommit: u32 [Plain] = 0,
        /// The paper's incast optimization: a client with at least this many RPCs outstanding
        /// marks its new ones so their responses send only homa.incast_unsched_bytes
        /// unscheduled. The paper gives no number (§3.6: "a threshold"); 0: off.
        pub incast_threshold: u32 [Plain] = 0,
        /// Unscheduled bytes of a marked response: "a few hundred bytes" in the paper (§3.6); 300 is
        /// incastlab's choice. Fewer than a packet go as one packet of that size.
        pub incast_unsched_bytes: u64 [Size] = 300,
        /// A receiver that has heard nothing of a message missing granted bytes for this long
        /// sends a RESEND for them (and again after each such silence); a sender busy with
        /// shorter messages answers BUSY. 5 ms, the paper's "a few milliseconds" without
        /// packets (§3.7) as the authors' implementations set it: their Linux module's
        /// resend_ticks = 5 ticks of its 1 ms timer, then every resend_interval = 5 ticks;
        /// their RAMCloud transport on the third of its 2 ms timer checks (4-6 ms), then
        /// every third.
        pub resend_timeout: SimTime [Time] = from_ms(5),
        /// Missing ranges of a message one resend timeout asks for, a RESEND each (0: every
        /// one). 1 as the paper (§3.7: a RESEND "identifies the first range of missing bytes")
        /// and the authors' RAMCloud transport: a message with several holes (its packets
        /// interleaved with others' in a full queue, or sprayed) waits a timeout per hole.
        pub resend_ranges: u32 [Plain] = 1,
    }
}

impl Scenario {
    /// Homa runs the incast, synchronized-read and flows workloads over drop-tail switches with
    /// priority queues (no PFC, no RED), with sizes and levels in range.
    pub(super) fn validate_homa(&self) -> Result<(), ConfigError> {
        let h = &self.homa;
        if !matches!(
            self.workload.kind,
            WorkloadKind::Incast | WorkloadKind::SyncRead | WorkloadKind::Flows
        ) {
            return Err(bad(
                "workload.kind",
                "Homa runs the incast, sync_read and flows workloads; set workload.kind = \"incast\", \"sync_read\" or \"flows\"",
            ));
        }
        if self.workload.kind == WorkloadKind::SyncRead {
            self.validate_roce_workload()?;
        }
        if self.background.flows > 0 {
            return Err(bad(
                "background.flows",
                "Homa runs its workload's messages only; leave background.flows at 0 (a flow schedule draws its own)",
            ));
        }
        if self.topology.pfc {
            return Err(bad(
                "topology.pfc",
                "Homa runs over lossy priority queues and recovers by RESEND: set topology.pfc = false",
            ));
        }
        let t = &self.topology;
        for (field, set) in [
            ("topology.shared_buffer", t.shared_buffer.is_some()),
            ("topology.red_min", t.red_min.is_some()),
            ("topology.ecn_kmin", t.ecn_kmin.is_some()),
            ("topology.int", t.int),
            ("topology.fabric_report", t.fabric_report),
        ] {
            if set {
                return Err(bad(
                    field,
                    "Homa's switches are strict-priority queues over each port's own buffer; leave it unset",
                ));
            }
        }
        if h.mtu < 64 || h.mtu > 9000 {
            return Err(bad(
                "homa.mtu",
                format!("must be 64..9000 bytes, got {}", h.mtu),
            ));
        }
        for (k, v) in [
            ("homa.header_bytes", h.header_bytes),
            ("homa.control_bytes", h.control_bytes),
        ] {
            if v == 0 || v > 1000 {
                return Err(bad(k, format!("must be 1..1000 bytes, got {v}")));
            }
        }
        if h.rtt_bytes > 1 << 30 {
            return Err(bad("homa.rtt_bytes", "must be at most 1GiB (0: derived)"));
        }
        if h.priorities == 0 || h.priorities > HOMA_MAX_LEVELS {
            return Err(bad(
                "homa.priorities",
                format!("must be 1..{HOMA_MAX_LEVELS}, got {}", h.priorities),
            ));
        }
        if h.unsched_levels > h.priorities {
            return Err(bad(
                "homa.unsched_levels",
                format!("must be 0 (derived) ..homa.priorities ({})", h.priorities),
            ));
        }
        if h.unsched_cutoffs.len() > h.priorities as usize
            || h.unsched_cutoffs.windows(2).any(|w| w[0] >= w[1])
        {
            return Err(bad(
                "homa.unsched_cutoffs",
                "must be ascending sizes, at most homa.priorities of them",
            ));
        }
        if h.overcommit > 1000 {
            return Err(bad("homa.overcommit", "must be 0 (derived) ..1000"));
        }
        if h.incast_unsched_bytes > 1 << 30 {
            return Err(bad("homa.incast_unsched_bytes", "must be at most 1GiB"));
        }
        if h.resend_timeout == 0 || h.resend_timeout > AN_HOUR {
            return Err(bad(
                "homa.resend_timeout",
                "must be positive and at most an hour",
            ));
        }
        Ok(())
    }
}
