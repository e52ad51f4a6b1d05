//! Which level each packet goes at (Montazeri et al., SIGCOMM 2018, its priority allocation): the top
//! `unsched` levels carry unscheduled packets, a shorter message's higher, split at size
//! cutoffs so each level carries about the same unscheduled bytes of the workload; the levels
//! below carry scheduled packets, as the receivers grant them.

/// The levels of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Levels {
    /// Levels in all (the switches'), `1..=8`.
    pub total: u8,
    /// Of them, the top ones for unscheduled packets.
    pub unsched: u8,
    /// Sizes (ascending) at which each unscheduled level ends, from the top; larger messages
    /// take the lowest unscheduled level.
    pub cutoffs: Vec<u64>,
}

impl Levels {
    /// Levels for scheduled packets (at least one).
    pub fn scheduled(&self) -> u8 {
        (self.total - self.unsched).max(1)
    }

    /// The level of a message of `bytes`' unscheduled packets.
    pub fn unscheduled_level(&self, bytes: u64) -> u8 {
        let i = self.cutoffs.partition_point(|&c| c < bytes) as u8;
        let i = i.min(self.unsched.saturating_sub(1));
        self.total - 1 - i
    }

    /// The levels for a workload of message sizes `sizes` sending up to `unsched_of(size)`
    /// bytes unscheduled: `unsched` levels (0: the workload's share of unscheduled bytes of
    /// the `total`, at least 1 and leaving 1 scheduled level when any byte is scheduled) and
    /// `cutoffs` (empty: equal unscheduled bytes per level).
    pub fn derive(
        total: u8,
        unsched: u8,
        cutoffs: &[u64],
        sizes: &[u64],
        unsched_of: impl Fn(u64) -> u64,
    ) -> Levels {
        let mut sorted = sizes.to_vec();
        sorted.sort_unstable();
        let all: u128 = sorted.iter().map(|&s| u128::from(s)).sum();
        let first: u128 = sorted.iter().map(|&s| u128::from(unsched_of(s))).sum();
        let unsched = match unsched {
            0 if total == 1 => 1,
            0 => {
                let share = if all == 0 {
                    1.0
                } else {
                    first as f64 / all as f64
                };
                let top = if first < all { total - 1 } else { total };
                ((share * f64::from(total)).round() as u8).clamp(1, top)
            }
            u => u,
        };
        let cutoffs = if cutoffs.is_empty() {
            equal_bytes(&sorted, unsched, &unsched_of)
        } else {
            cutoffs.to_vec()
        };
        Levels {
            total,
            unsched,
            cutoffs,
        }
    }
}

/// Cutoffs splitting the sorted sizes into `levels` groups of about equal unscheduled bytes:
/// each cutoff the largest size of its group.
fn equal_bytes(sorted: &[u64], levels: u8, unsched_of: &impl Fn(u64) -> u64) -> Vec<u64> {
    let total: u128 = sorted.iter().map(|&s| u128::from(unsched_of(s))).sum();
    let mut cutoffs = Vec::new();
    let mut sum = 0u128;
    let mut next = 1u128;
    for &s in sorted {
        sum += u128::from(unsched_of(s));
        if next < u128::from(levels) && sum * u128::from(levels) >= next * total {
            if cutoffs.last() != Some(&s) {
                cutoffs.push(s);
            }
            next += 1;
        }
    }
    cutoffs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_size_takes_the_top_level_and_the_rest_is_scheduled() {
        // An incast: every response 64 KB, 10 KB unscheduled: 10/64 of 8 → 1 level.
        let l = Levels::derive(8, 0, &[], &[64_000; 100], |s| s.min(10_000));
        assert_eq!((l.unsched, l.scheduled()), (1, 7));
        assert_eq!(l.unscheduled_level(64_000), 7);
        assert_eq!(l.unscheduled_level(1), 7);
    }

    #[test]
    fn levels_follow_the_unscheduled_share_and_split_it_equally() {
        // Sizes 1..=1000 bytes, all unscheduled: every level unscheduled, the cutoffs at equal
        // sums of bytes (√(k/8)·1000 roughly).
        let sizes: Vec<u64> = (1..=1000).collect();
        let l = Levels::derive(8, 0, &[], &sizes, |s| s);
        assert_eq!(l.unsched, 8);
        assert_eq!(l.cutoffs.len(), 7);
        assert!((350..360).contains(&l.cutoffs[0]), "{:?}", l.cutoffs);
        assert!((930..940).contains(&l.cutoffs[6]), "{:?}", l.cutoffs);
        assert_eq!(l.unscheduled_level(1), 7);
        assert_eq!(l.unscheduled_level(1000), 0);
        // Half the bytes scheduled: 4 levels each.
        let l = Levels::derive(8, 0, &[], &[20_000; 10], |s| s.min(10_000));
        assert_eq!((l.unsched, l.scheduled()), (4, 4));
    }

    #[test]
    fn given_levels_and_cutoffs_are_kept() {
        let l = Levels::derive(8, 2, &[5_000], &[1, 100_000], |s| s.min(10_000));
        assert_eq!(l.cutoffs, [5_000]);
        assert_eq!(l.unscheduled_level(5_000), 7);
        assert_eq!(l.unscheduled_level(5_001), 6);
        assert_eq!(l.unscheduled_level(10_000_000), 6);
        assert_eq!(l.scheduled(), 6);
        // One level in all: everything shares it.
        let one = Levels::derive(1, 0, &[], &[1, 10], |s| s);
        assert_eq!(
            (one.unsched, one.scheduled(), one.unscheduled_level(10)),
            (1, 1, 0)
        );
    }
}
