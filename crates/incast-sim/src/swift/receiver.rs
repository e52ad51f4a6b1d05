//! Swift's receiving half of a connection: in-order delivery of the byte stream, out-of-order
//! packets kept until the hole before them fills, and one cumulative ACK per data packet (as
//! htsim's Swift sink answers), echoing that packet's send time so its sender measures the
//! delay of exactly that packet.
//!
//! Clock-free and time-free: it only counts bytes.

/// The receiving half.
#[derive(Debug, Clone, Default)]
pub(crate) struct Receiver {
    /// Next byte expected: every byte below arrived.
    next: u64,
    /// Byte ranges [start, end) that arrived past a hole, sorted and disjoint.
    ooo: Vec<(u64, u64)>,
}

impl Receiver {
    /// Bytes delivered in order.
    pub(crate) fn received(&self) -> u64 {
        self.next
    }

    /// The cumulative ACK: the next byte expected.
    pub(crate) fn ack(&self) -> u64 {
        self.next
    }

    /// `len` bytes at `seq` arrived: the bytes newly delivered in order.
    pub(crate) fn on_data(&mut self, seq: u64, len: u32) -> u64 {
        let end = seq + u64::from(len);
        if end <= self.next {
            return 0; // a duplicate
        }
        if seq > self.next {
            self.keep(seq, end);
            return 0;
        }
        let before = self.next;
        self.next = end;
        // Whatever was kept past the hole and now joins.
        while let Some(&(s, e)) = self.ooo.first() {
            if s > self.next {
                break;
            }
            self.next = self.next.max(e);
            self.ooo.remove(0);
        }
        self.next - before
    }

    /// Keep [s, e) past the hole, merged with its neighbours.
    fn keep(&mut self, s: u64, e: u64) {
        let at = self.ooo.partition_point(|&(_, pe)| pe < s);
        let mut lo = s;
        let mut hi = e;
        let mut k = at;
        while k < self.ooo.len() && self.ooo[k].0 <= hi {
            lo = lo.min(self.ooo[k].0);
            hi = hi.max(self.ooo[k].1);
            k += 1;
        }
        self.ooo.splice(at..k, [(lo, hi)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_bytes_are_delivered_and_acked() {
        let mut r = Receiver::default();
        assert_eq!(r.on_data(0, 100), 100);
        assert_eq!(r.on_data(100, 50), 50);
        assert_eq!(r.ack(), 150);
        assert_eq!(r.on_data(0, 100), 0, "a duplicate delivers nothing");
        assert_eq!(r.ack(), 150);
    }

    #[test]
    fn a_hole_holds_the_ack_and_filling_it_delivers_everything_kept() {
        let mut r = Receiver::default();
        r.on_data(0, 100);
        assert_eq!(r.on_data(200, 100), 0);
        assert_eq!(r.on_data(400, 100), 0);
        assert_eq!(r.on_data(300, 100), 0);
        assert_eq!(r.ack(), 100);
        assert_eq!(r.ooo, vec![(200, 500)]);
        assert_eq!(r.on_data(100, 100), 400);
        assert_eq!(r.ack(), 500);
        assert!(r.ooo.is_empty());
    }

    #[test]
    fn overlapping_kept_ranges_merge() {
        let mut r = Receiver::default();
        r.on_data(500, 100);
        r.on_data(200, 100);
        r.on_data(250, 300);
        assert_eq!(r.ooo, vec![(200, 600)]);
        assert_eq!(r.on_data(0, 200), 600);
    }
}
