//! The `roce` section: RoCEv2 queue pairs (the RDMA NIC's transport over UDP/IP), their loss
//! recovery, ACKs, rate limiter and the congestion control they run, and the rules they follow
//! (run in the order `validate.rs` lists). The congestion controls' own constants are the
//! nested sections of `roce_cc.rs`.

use serde::{Deserialize, Serialize};

use super::section::{choices, section};
use super::{bad, ConfigError, Dcqcn, Hpcc, Scenario, WorkloadKind, AN_HOUR};
use crate::units::*;

/// The congestion control a queue pair's NIC runs.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RoceCc {
    /// None: every queue pair sends at its rate limit; PFC alone keeps the fabric lossless.
    None,
    /// DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM
    /// 2015): ECN marks → CNPs → rate cuts; the `roce.dcqcn` section.
    Dcqcn,
    /// HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019): a window
    /// from the INT the switches add; the `roce.hpcc` section (topology.int follows it
    /// unless given).
    Hpcc,
}

/// How a queue pair recovers lost packets.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RoceRecovery {
    /// Go-back-N, as RoCE NICs do it: the receiver drops every packet after a gap and NAKs
    /// the PSN it expects; the sender rewinds to it and resends everything from there.
    GoBackN,
    /// Selective repeat as IRN proposes it (Mittal et al., "Revisiting Network Support for
    /// RDMA", SIGCOMM 2018): the receiver keeps out-of-order packets and its NACKs carry the
    /// cumulative PSN and the packet that arrived (a SACK); the sender resends only holes.
    SelectiveRepeat,
}

/// When a receiver sends a NAK for a packet past the PSN it expects.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RoceNack {
    /// Once per gap, as the InfiniBand transport's "NAK sequence error" is sent: again only
    /// after the expected PSN has arrived (IRN's NACKs are per packet whatever this says).
    Once,
    /// For every out-of-order packet.
    Every,
    /// Never: only the retransmission timer recovers a loss.
    Off,
}

choices! {
    RoceCc: None, Dcqcn, Hpcc;
    RoceRecovery: GoBackN, SelectiveRepeat;
    RoceNack: Once, Every, Off;
}

section! {
    /// RoCEv2 parameters (transport = "roce").
    pub struct Roce {
        /// Payload bytes per data packet (the RDMA path MTU's payload). RoCE MTUs are 1024 or
        /// 4096 B; 1000 B is what HPCC's ns-3 sends (Li et al., SIGCOMM 2019).
        pub mtu: u64 [Size] = 1000,
        /// Bytes of a data frame beyond its payload: Ethernet 14, IPv4 20, UDP 8, InfiniBand
        /// BTH 12, ICRC 4, FCS 4 = 62 (preamble and gap are `tcp.phy_overhead`).
        pub header_bytes: u64 [Size] = 62,
        /// Bytes of an ACK, NAK or CNP frame: the data headers plus AETH 4 (a CNP's 16
        /// reserved bytes are padded to the same), 66 B.
        pub control_bytes: u64 [Size] = 66,
        /// Bytes each switch hop's INT record adds to a data packet and its ACK when the
        /// congestion control is HPCC (8 B per hop in HPCC's ns-3).
        pub int_hop_bytes: u64 [Size] = 8,
        /// The congestion control of every queue pair.
        pub cc: RoceCc [Plain] = RoceCc::None,
        /// Loss recovery.
        pub recovery: RoceRecovery [Plain] = RoceRecovery::GoBackN,
        /// Selective repeat's receive bitmap, packets: the receiver keeps out-of-order
        /// packets up to this many PSNs past the one it expects, and drops (and NAKs) one
        /// further ahead. IRN sizes it to its BDP cap (Mittal et al., "Revisiting Network
        /// Support for RDMA", SIGCOMM 2018); the 128 bits, for about 110 MTU packets of BDP
        /// at its 40 Gbps default, are as recalled: IRN's text could not be reached to check
        /// them. Pair it with roce.window (IRN's BDP-FC) so a sender never sends past it.
        pub sack_bitmap: u32 [Plain] = 128,
        /// NAKs for out-of-order packets (go-back-N).
        pub nack: RoceNack [Plain] = RoceNack::Once,
        /// Run over a lossless fabric (PFC): topology.pfc follows it unless given, and a given
        /// one must agree; false is RoCE on a lossy fabric, as IRN studies it.
        pub lossless: bool [Plain] = true,
        /// Retransmission timeout of go-back-N: with packets unacknowledged and no ACK for this
        /// long, resend from the oldest. NICs use ms-scale timeouts (InfiniBand's local ACK
        /// timeout is 4.096 µs·2^n: n = 10 is 4.2 ms); 4 ms here, long enough that PFC's pauses
        /// in a 1000:1 incast do not fire it. "off" (lossless only): no timer, as htsim's RoCE.
        pub rto: SimTime [TimeOrOff] = from_ms(4),
        /// Selective repeat's timeout while few packets are in flight (IRN's RTO_low, 100 µs,
        /// as recalled: not checked against IRN's text): a tail loss no NACK will ever reveal.
        pub rto_low: SimTime [Time] = from_us(100),
        /// Selective repeat's timeout otherwise (IRN's RTO_high, 320 µs, as recalled: not
        /// checked against IRN's text).
        pub rto_high: SimTime [Time] = from_us(320),
        /// In flight below this many packets, selective repeat uses rto_low (IRN's N = 3, as
        /// recalled: not checked against IRN's text).
        pub rto_low_packets: u32 [Plain] = 3,
        /// The receiver ACKs every this many in-order packets (coalescing), and always the
        /// last packet of a message.
        pub ack_every: u32 [Plain] = 1,
        /// Bytes a queue pair may have unacknowledged; 0: no bound (a RoCE NIC's), or e.g. the
        /// bandwidth-delay product for IRN's BDP-FC. HPCC's window bounds it further.
        pub window: u64 [Size] = 0,
        /// A new packet goes only if it fits whole in the window (roce.window, HPCC's): sent
        /// bytes in flight plus the packet at most the window, as htsim's HPCC sends (cwnd ≥
        /// in flight + MSS); false: while fewer bytes than the window are in flight, as HPCC's
        /// ns-3 (RdmaHw: on-the-fly < window), which lets one packet more go per window.
        pub window_whole_packets: bool [Plain] = false,
        /// The per-queue-pair rate limiter's ceiling, bits per second; 0: the host's line
        /// rate (a NIC starts every queue pair at line rate).
        pub rate_limit: u64 [Rate] = 0,
        /// The notification point's CNP pacing: at most one CNP per queue pair in this
        /// interval however many CE-marked packets arrive: 50 µs, DCQCN's N (Zhu et al.,
        /// SIGCOMM 2015, §3.1 and Figure 6; §5.2: fixed by the NIC's hardware).
        pub cnp_interval: SimTime [Time] = from_us(50),
        /// DCQCN's constants (cc = "dcqcn").
        pub dcqcn: Dcqcn [Section] = Dcqcn::default(),
        /// HPCC's constants (cc = "hpcc").
        pub hpcc: Hpcc [Section] = Hpcc::default(),
    }
}

/// The largest receive bitmap of selective repeat, packets (2^20: 128 KB per queue pair).
const MAX_SACK_BITMAP: u32 = 1 << 20;

impl Scenario {
    /// The synchronized read's keys RoCE's blocks do not model, left at their defaults.
    pub(super) fn validate_roce_workload(&self) -> Result<(), ConfigError> {
        let w = &self.workload;
        let unmodelled = [
            ("workload.think_times", !w.think_times.is_empty()),
            ("workload.fanout_window", w.fanout_window != 0),
            ("workload.request_stagger", w.request_stagger != 0),
            ("workload.tasks", w.tasks != 1),
        ];
        match unmodelled.iter().find(|(_, set)| *set) {
            Some((k, _)) => Err(bad(
                k,
                "RoCE's synchronized read posts every server's SRU at each block's start (with workload.jitter); leave it unset",
            )),
            None => Ok(()),
        }
    }

    /// RoCE runs the incast, synchronized-read and flows workloads (with background flows
    /// beside the first two), over the fabric its `lossless` key names, with sizes, timers
    /// and rates in range.
    pub(super) fn validate_roce(&self) -> Result<(), ConfigError> {
        let r = &self.roce;
        if !matches!(
            self.workload.kind,
            WorkloadKind::Incast | WorkloadKind::SyncRead | WorkloadKind::Flows
        ) {
            return Err(bad(
                "workload.kind",
                "RoCE runs the incast, sync_read and flows workloads; set workload.kind = \"incast\", \"sync_read\" or \"flows\"",
            ));
        }
        if !self.is_flows() {
            self.validate_roce_workload()?;
        }
        if r.lossless != self.topology.pfc {
            let why = if r.lossless {
                "lossless RoCE needs PFC: set topology.pfc = true, or roce.lossless = false"
            } else {
                "lossy RoCE runs without PFC: set topology.pfc = false, or roce.lossless = true"
            };
            return Err(bad("roce.lossless", why));
        }
        if r.mtu < 64 || r.mtu > 9000 {
            return Err(bad(
                "roce.mtu",
                format!("must be 64..9000 bytes, got {}", r.mtu),
            ));
        }
        for (k, v) in [
            ("roce.header_bytes", r.header_bytes),
            ("roce.control_bytes", r.control_bytes),
        ] {
            if v == 0 || v > 1000 {
                return Err(bad(k, format!("must be 1..1000 bytes, got {v}")));
            }
        }
        if !(1..=MAX_SACK_BITMAP).contains(&r.sack_bitmap) {
            return Err(bad(
                "roce.sack_bitmap",
                format!(
                    "must be 1..{MAX_SACK_BITMAP} packets (selective repeat's receive bitmap), got {}",
                    r.sack_bitmap
                ),
            ));
        }
        if r.sack_bitmap != Roce::default().sack_bitmap
            && r.recovery != RoceRecovery::SelectiveRepeat
        {
            return Err(bad(
                "roce.sack_bitmap",
                "sizes selective repeat's receive bitmap: set roce.recovery = \"selective_repeat\", or leave it unset",
            ));
        }
        if r.int_hop_bytes > 100 {
            return Err(bad("roce.int_hop_bytes", "must be at most 100 bytes"));
        }
        if r.rto == 0 && !r.lossless {
            return Err(bad(
                "roce.rto",
                "lossy RoCE needs its retransmission timer (a lost tail is never NAKed): give a time",
            ));
        }
        if r.rto > AN_HOUR {
            return Err(bad("roce.rto", "must be at most an hour"));
        }
        for (k, v) in [
            ("roce.rto_low", r.rto_low),
            ("roce.rto_high", r.rto_high),
            ("roce.cnp_interval", r.cnp_interval),
        ] {
            if v == 0 || v > AN_HOUR {
                return Err(bad(k, "must be positive and at most an hour"));
            }
        }
        if r.rto_low > r.rto_high {
            return Err(bad("roce.rto_low", "must be at most roce.rto_high"));
        }
        if r.ack_every == 0 || r.ack_every > 1_000_000 {
            return Err(bad("roce.ack_every", "must be 1..1000000 packets"));
        }
        if r.window != 0 && r.window < r.mtu {
            return Err(bad(
                "roce.window",
                format!(
                    "must be 0 (no bound) or at least roce.mtu ({} bytes)",
                    r.mtu
                ),
            ));
        }
        if r.cc == RoceCc::Hpcc && !self.topology.int {
            return Err(bad(
                "topology.int",
                "HPCC reads the switches' INT: set topology.int = true",
            ));
        }
        self.validate_roce_cc()
    }
}
