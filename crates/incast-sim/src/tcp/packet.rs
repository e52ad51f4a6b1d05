//! A TCP segment as the network carries it.

use crate::net::MAX_SACK_BLOCKS;

/// A TCP segment on the wire. Every segment carries an acknowledgment (RFC 793 after the
/// handshake), and data segments may carry payload.
#[derive(Debug, Clone, Copy, Default)]
pub struct Packet {
    /// Source route the packet follows.
    pub route: u32,
    /// Index of the link it is on within its route.
    pub hop: u16,
    /// Number of valid SACK blocks.
    pub nsack: u8,
    /// ECN bits: [`crate::net::ECT`], [`crate::net::CE`], [`crate::net::ECE`], [`crate::net::CWR`].
    pub ecn: u8,
    /// Endpoint that receives it.
    pub dst: u32,
    /// First payload byte's sequence number (64-bit, so it never wraps).
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Frame bytes (payload plus headers): what switch buffers count.
    pub frame: u32,
    /// Cumulative acknowledgment: next byte expected from the peer.
    pub ack: u64,
    /// SACK blocks `[start, end)`, most recent first.
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
    /// The TCP timestamp its sender put in it; set only while a capture runs (it is what
    /// the capture writes and echoes), 0 otherwise.
    pub tsval: u32,
}

// A capture's timestamp took the packet's padding: keep it at 88 bytes, every hop copies it.
const _: () = assert!(std::mem::size_of::<Packet>() <= 88);
