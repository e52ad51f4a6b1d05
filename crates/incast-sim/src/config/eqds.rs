//! The `eqds` section: EQDS (Olteanu, Eran, Dumitrescu, Popa, Baciu, Silberstein, Nikolaidis,
//! Handley, Raiciu, "An Edge-Queued Datagram Service for All Datacenter Traffic", NSDI 2022):
//! senders keep their backlog at the edge and send an unsolicited first window, then only on
//! the receiver's credit; switches trim (or, without trimming, drop); and the rules its keys
//! follow. The defaults are the paper's where it gives one, else those of the authors'
//! simulator, htsim (the public `Broadcom/csg-htsim`, `main_eqds.cpp`/`eqds.cpp`), cited
//! beside each key.

use super::section::section;
use super::trimming::{validate_header_queue, validate_packets};
use super::{bad, ConfigError, Scenario, WorkloadKind, AN_HOUR};
use crate::units::*;

section! {
    /// EQDS parameters (transport = "eqds").
    pub struct Eqds {
        /// Payload bytes per data packet. htsim's EQDS default: a 4150 B packet on the wire
        /// of which 64 B are headers, so 4086 B of payload (the paper runs 4 KB MTUs).
        pub mtu: u64 [Size] = 4086,
        /// Bytes of a header-only packet: a trimmed data packet, an ACK, a NACK, a credit
        /// (PULL) or an RTS (64 B in htsim).
        pub header_bytes: u64 [Size] = 64,
        /// Packets a sender sends unsolicited, before its first credit: about one BDP in the
        /// paper; 50 packets (207,500 B on the wire) in htsim's EQDS (`-cwnd 50`).
        pub initial_window: u32 [Plain] = 50,
        /// Switches trim data to its header when their data queue is full (the paper's
        /// deployment). Off: switches are drop-tail with `topology.buffer` and lost packets
        /// are recovered by the sender's timeout and an RTS asking for credit again (as
        /// htsim's EQDS recovers a lost header).
        pub trimming: bool [Plain] = true,
        /// Data packets a trimming switch port queues before it trims (htsim: 35).
        pub data_queue: u32 [Plain] = 35,
        /// Header bytes a trimming port's priority queue holds before it drops (or bounces)
        /// headers: htsim's 2 × 35 × 4150 B.
        pub header_queue: u64 [Size] = 290_500,
        /// Header-queue packets served per data packet when both wait (htsim: 100000:1,
        /// practically strict priority).
        pub header_weight: u32 [Plain] = 100_000,
        /// Return a header to its sender when the header queue is full (else drop it; htsim's
        /// EQDS set-up drops).
        pub return_to_sender: bool [Plain] = false,
        /// Path entropies a sender sprays its packets over, one after another (htsim: 64);
        /// 1 = one path per flow.
        pub paths: u32 [Plain] = 64,
        /// The receiver's credit rate as a share of its link: one MTU of credit per full
        /// frame time at this share (htsim paces at 0.99).
        pub pull_rate: f64 [Plain] = 1.0,
        /// Fixed part of the retransmission timeout (htsim: 150 µs).
        pub rto_base: SimTime [Time] = from_us(150),
        /// Queues' worth of delay added to `rto_base`: rto = rto_base + rto_queues ×
        /// data_queue × one full frame's time at the link rate (htsim: 6).
        pub rto_queues: u32 [Plain] = 6,
    }
}

impl Scenario {
    /// EQDS's retransmission timeout: `rto_base` plus `rto_queues` full data queues at the
    /// link rate (htsim's formula).
    pub fn eqds_rto(&self) -> SimTime {
        let e = &self.eqds;
        let frame = e.mtu + e.header_bytes;
        let queue = tx_time(frame * u64::from(e.data_queue), self.topology.link);
        e.rto_base + u64::from(e.rto_queues) * queue
    }

    /// EQDS runs the incast or the synchronized read, with packets, queues and timers in range.
    pub(super) fn validate_eqds(&self) -> Result<(), ConfigError> {
        let e = &self.eqds;
        if !matches!(
            self.workload.kind,
            WorkloadKind::Incast | WorkloadKind::SyncRead
        ) {
            return Err(bad(
                "workload.kind",
                "EQDS runs the incast or sync_read workload; set workload.kind to one of them",
            ));
        }
        if self.background.flows > 0 {
            return Err(bad(
                "background.flows",
                "background flows are TCP; EQDS runs without them",
            ));
        }
        validate_packets("eqds", e.mtu, e.header_bytes, e.initial_window)?;
        if e.data_queue == 0 || e.data_queue > 1_000_000 {
            return Err(bad("eqds.data_queue", "must be 1..1000000 packets"));
        }
        validate_header_queue("eqds", e.header_queue, e.header_bytes, e.header_weight)?;
        if e.paths == 0 || e.paths > 65_536 {
            return Err(bad("eqds.paths", "must be 1..65536 entropies"));
        }
        if !(e.pull_rate > 0.0 && e.pull_rate <= 1.0) {
            return Err(bad(
                "eqds.pull_rate",
                format!("must be in (0, 1], got {}", e.pull_rate),
            ));
        }
        if e.rto_base == 0 || e.rto_base > AN_HOUR {
            return Err(bad("eqds.rto_base", "must be positive and at most an hour"));
        }
        if e.rto_queues > 1000 {
            return Err(bad("eqds.rto_queues", "must be 0..1000"));
        }
        Ok(())
    }
}
