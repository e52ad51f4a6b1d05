//! A TCP segment as the network carries it.

use crate::net::MAX_SACK_BLOCKS;

/// A TCP segment on the wire. Every segment carries an acknowledgment (RFC 793 after the
/// handshake), and data segments may carry payload.
///
/// One cache line, aligned to one: every hop reads and writes it, and in a cluster of a
/// thousand hosts the packets in flight are far beyond the cache, so a packet across two
/// lines is two misses where one would do.
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(64))]
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
    /// SACK blocks, most recent first, each as its start's distance above `ack` and its
    /// length: a block lies within the receive window above the cumulative ACK (there are no
    /// D-SACK blocks below it), and the window is at most 1 GiB, so both fit 32 bits as they
    /// do on the wire. [`Packet::set_sack`] and [`Packet::sack`] convert.
    pub sack: [(u32, u32); MAX_SACK_BLOCKS],
    /// The TCP timestamp its sender put in it; set only while a capture runs (it is what
    /// the capture writes and echoes), 0 otherwise.
    pub tsval: u32,
}

const _: () = assert!(std::mem::size_of::<Packet>() == 64);

impl Packet {
    /// Carry SACK blocks `[start, end)` above cumulative ACK `self.ack`.
    #[inline]
    pub fn set_sack(&mut self, blocks: &[(u64, u64)]) {
        debug_assert!(blocks.len() <= MAX_SACK_BLOCKS);
        self.nsack = blocks.len().min(MAX_SACK_BLOCKS) as u8;
        for (w, &(l, r)) in self.sack.iter_mut().zip(blocks) {
            debug_assert!(self.ack <= l && l < r && r - self.ack <= u64::from(u32::MAX));
            *w = ((l - self.ack) as u32, (r - l) as u32);
        }
    }

    /// The SACK blocks `[start, end)` it carries, written into `buf`.
    #[inline]
    pub fn sack<'a>(&self, buf: &'a mut [(u64, u64); MAX_SACK_BLOCKS]) -> &'a [(u64, u64)] {
        let n = self.nsack as usize;
        for (b, &(off, len)) in buf.iter_mut().zip(&self.sack[..n]) {
            let l = self.ack + u64::from(off);
            *b = (l, l + u64::from(len));
        }
        &buf[..n]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sack_blocks_read_back_as_they_were_put() {
        let ack = (1u64 << 33) + 7;
        let blocks = [
            (ack + 1_448, ack + 2_896),
            (ack + 5_000, ack + 9_000),
            (ack + 1, ack + (1 << 30)),
        ];
        for n in 0..=MAX_SACK_BLOCKS {
            let mut p = Packet {
                ack,
                ..Packet::default()
            };
            p.set_sack(&blocks[..n]);
            let mut buf = [(0, 0); MAX_SACK_BLOCKS];
            assert_eq!(p.sack(&mut buf), &blocks[..n]);
        }
        assert_eq!(std::mem::align_of::<Packet>(), 64);
    }
}
