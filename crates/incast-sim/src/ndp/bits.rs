//! A set of one flow's packet indices (ACKed, queued again, awaiting an answer, received):
//! one word kept inline for a flow of up to 64 packets (the NDP paper's incast sends 30), words
//! on the heap beyond. A `Vec<bool>` per set had each flow's state in four or five places, and
//! an incast of thousands of flows served round-robin reaches each flow's state cold: every
//! separate allocation was one more cache miss per packet.

/// Packet indices `0..len` of one flow, each in or out.
#[derive(Debug, Clone)]
pub(crate) struct Bits {
    /// Indices 0..64 when `big` is empty.
    small: u64,
    /// Every index, 64 to a word, when there are more than 64.
    big: Box<[u64]>,
    len: u32,
}

impl Bits {
    /// `len` indices, none in.
    pub(crate) fn new(len: u32) -> Bits {
        let big = if len <= 64 {
            Box::default()
        } else {
            vec![0; len.div_ceil(64) as usize].into_boxed_slice()
        };
        Bits { small: 0, big, len }
    }

    #[inline]
    fn word(&self, i: u32) -> u64 {
        assert!(i < self.len, "packet {i} of a flow of {}", self.len);
        if self.big.is_empty() {
            self.small
        } else {
            self.big[(i / 64) as usize]
        }
    }

    #[inline]
    fn word_mut(&mut self, i: u32) -> &mut u64 {
        assert!(i < self.len, "packet {i} of a flow of {}", self.len);
        if self.big.is_empty() {
            &mut self.small
        } else {
            &mut self.big[(i / 64) as usize]
        }
    }

    /// Whether index `i` is in.
    #[inline]
    pub(crate) fn get(&self, i: u32) -> bool {
        self.word(i) >> (i % 64) & 1 == 1
    }

    /// Put index `i` in (`on`) or take it out.
    #[inline]
    pub(crate) fn set(&mut self, i: u32, on: bool) {
        let w = self.word_mut(i);
        let bit = 1u64 << (i % 64);
        if on {
            *w |= bit;
        } else {
            *w &= !bit;
        }
    }

    /// Indices in.
    pub(crate) fn count(&self) -> u32 {
        if self.big.is_empty() {
            self.small.count_ones()
        } else {
            self.big.iter().map(|w| w.count_ones()).sum()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_a_vec_of_bools_inline_and_on_the_heap() {
        for len in [1, 30, 63, 64, 65, 128, 129, 1000] {
            let mut b = Bits::new(len);
            let mut reference = vec![false; len as usize];
            let mut x: u64 = 20091130;
            for _ in 0..3 * len {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let (i, on) = ((x >> 33) as u32 % len, x >> 63 == 1);
                b.set(i, on);
                reference[i as usize] = on;
            }
            for i in [0, len - 1] {
                b.set(i, true);
                reference[i as usize] = true;
            }
            for i in 0..len {
                assert_eq!(b.get(i), reference[i as usize], "len {len} index {i}");
            }
            let n = reference.iter().filter(|&&r| r).count() as u32;
            assert_eq!(b.count(), n, "len {len}");
            assert!(
                n > 0 && (len < 4 || n < len),
                "len {len}: a mix of in and out"
            );
        }
    }

    #[test]
    #[should_panic(expected = "packet 30 of a flow of 30")]
    fn an_index_past_the_flow_panics_as_a_vec_would() {
        Bits::new(30).get(30);
    }
}
