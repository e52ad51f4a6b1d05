//! How a Homa message is cut into packets, one rule for its sender and its receiver.
//!
//! Every packet is a full `mtu` of payload except the last, and except the first of a message
//! whose unscheduled bytes are fewer than one packet: that one carries exactly them. A response
//! marked by the incast optimization so sends only its "few hundred bytes" unscheduled
//! (Montazeri et al., SIGCOMM 2018, §3.6) rather than a full packet, and every boundary the
//! receiver grants up to is one the sender's packets end on: a grant never lets the sender send
//! bytes the receiver does not count.

/// A message's packet boundaries: the first packet holds `head` bytes, the others `mtu`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    bytes: u64,
    mtu: u64,
    head: u64,
}

impl Layout {
    /// A message of `bytes` in packets of `mtu`, sending `unsched` bytes unscheduled.
    pub fn new(bytes: u64, mtu: u64, unsched: u64) -> Layout {
        let mtu = mtu.max(1);
        Layout {
            bytes,
            mtu,
            head: unsched.clamp(1, mtu),
        }
    }

    /// Packets of the message (an empty one is one packet).
    pub fn packets(&self) -> u32 {
        if self.bytes <= self.head {
            1
        } else {
            (1 + (self.bytes - self.head).div_ceil(self.mtu)) as u32
        }
    }

    /// The packet holding byte `offset`.
    #[inline]
    pub fn index(&self, offset: u64) -> usize {
        if offset < self.head {
            0
        } else {
            (1 + (offset - self.head) / self.mtu) as usize
        }
    }

    /// The first byte of packet `k`.
    #[inline]
    pub fn start(&self, k: usize) -> u64 {
        match k {
            0 => 0,
            k => self.head + (k as u64 - 1) * self.mtu,
        }
    }

    /// Payload bytes of the packet starting at `offset` (0 past the end).
    #[inline]
    pub fn len_at(&self, offset: u64) -> u32 {
        let end = self.start(self.index(offset) + 1).min(self.bytes);
        end.saturating_sub(offset) as u32
    }

    /// Packets that hold any of the bytes `0..to`.
    #[inline]
    pub fn covering(&self, to: u64) -> usize {
        match to {
            0 => 0,
            to => (self.index(to - 1) + 1).min(self.packets() as usize),
        }
    }

    /// `to` rounded up to the end of the packet holding byte `to - 1` (at most the message).
    #[inline]
    pub fn ceil(&self, to: u64) -> u64 {
        self.start(self.covering(to)).min(self.bytes)
    }

    /// `to` rounded down to a packet's start (the message's end stays).
    #[inline]
    pub fn floor(&self, to: u64) -> u64 {
        if to >= self.bytes {
            self.bytes
        } else {
            self.start(self.index(to))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_packets_unless_the_unscheduled_bytes_are_fewer() {
        let full = Layout::new(3_500, 1_000, 10_000);
        assert_eq!(full.packets(), 4);
        assert_eq!((full.start(3), full.len_at(3_000)), (3_000, 500));
        assert_eq!((full.ceil(1_001), full.floor(1_999)), (2_000, 1_000));
        // A marked response: 300 bytes first, then packets of 1 000 from byte 300.
        let marked = Layout::new(2_500, 1_000, 300);
        assert_eq!(marked.packets(), 4);
        let lens: Vec<u32> = (0..4).map(|k| marked.len_at(marked.start(k))).collect();
        assert_eq!(lens, [300, 1_000, 1_000, 200]);
        assert_eq!(
            (marked.index(299), marked.index(300), marked.index(1_300)),
            (0, 1, 2)
        );
        assert_eq!(
            (marked.ceil(301), marked.ceil(2_400), marked.floor(1_299)),
            (1_300, 2_500, 300)
        );
        assert_eq!(
            (
                marked.covering(0),
                marked.covering(300),
                marked.covering(301)
            ),
            (0, 1, 2)
        );
        // An empty message is one packet of nothing.
        let empty = Layout::new(0, 1_000, 300);
        assert_eq!((empty.packets(), empty.len_at(0), empty.ceil(1)), (1, 0, 0));
    }
}
