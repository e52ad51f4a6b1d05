//! In-band network telemetry (INT) as HPCC reads it (Li et al., "HPCC: High Precision
//! Congestion Control", SIGCOMM 2019, §3.2): each switch egress a data packet leaves through
//! appends what it knows of that port at that moment; the receiver echoes the stack in its ACK,
//! and the sender computes each hop's utilization from two successive ACKs.
//!
//! The record is a plain `Copy` value so a packet can carry a fixed stack of them without
//! allocating ([`MAX_HOPS`]: a three-tier fat tree's longest route crosses five switch egresses).

use crate::units::SimTime;

/// Most hops a packet records: the switch egresses of a three-tier fat tree's longest route.
pub const MAX_HOPS: usize = 5;

/// What one switch egress tells of itself as a packet leaves it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IntHop {
    /// Bytes queued at the egress as the packet starts to leave (the packet not counted, as
    /// HPCC's ns-3; counted with `topology.int_qlen_with_packet`, as Broadcom's htsim).
    pub qlen: u64,
    /// Bytes the egress has sent since the run began, this packet included.
    pub tx_bytes: u64,
    /// When the packet starts to leave, picoseconds.
    pub ts: SimTime,
    /// The egress link's rate, bits per second.
    pub rate_bps: u64,
}
