//! The segments an endpoint exchanges with its peer: what arrives and what goes on the wire.

use crate::net::MAX_SACK_BLOCKS;

/// A segment arriving from the peer.
#[derive(Debug, Clone, Copy)]
pub struct Incoming<'a> {
    /// First payload byte.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Cumulative ACK.
    pub ack: u64,
    /// SACK blocks.
    pub sack: &'a [(u64, u64)],
    /// ECN bits ([`crate::net::ECT`], [`crate::net::CE`], [`crate::net::ECE`]).
    pub ecn: u8,
}

/// A segment to put on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// First payload byte (for a pure ACK, the next byte to send).
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Cumulative ACK.
    pub ack: u64,
    /// Valid SACK blocks.
    pub nsack: u8,
    /// SACK blocks, most recent first.
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
    /// ECN bits: ECT on data of ECN-capable connections, ECE echoing CE marks, CWR.
    pub ecn: u8,
}
