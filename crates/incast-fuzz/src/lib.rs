//! What the stable-Rust fuzz tests share (incast-net's request parser, incast-trace's capture
//! reader): the seeded random numbers their mutators draw, the run's size and seed from the
//! environment, and the stored corpus they start from. A dev-dependency only.
//!
//! A CI run is bounded and the same on every machine (the default seed); a longer campaign
//! sets `INCAST_FUZZ_ITERS` and `INCAST_FUZZ_SEED`.

use std::path::Path;

/// xorshift64*: small, seeded, and the same on every machine.
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (any value: the low bit is set, as xorshift needs a non-zero
    /// state, so seeds 2k and 2k + 1 draw the same numbers: step a campaign's seeds by 2).
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    /// The next 64 random bits.
    pub fn bits(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`0` when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.bits() % n.max(1) as u64) as usize
    }
}

/// The seed CI runs with (`INCAST_FUZZ_SEED` unset).
pub const CI_SEED: u64 = 20_091_130;

/// Inputs to run: `INCAST_FUZZ_ITERS`, else `ci` (the target's bounded CI run).
pub fn iterations(ci: u64) -> u64 {
    env_u64("INCAST_FUZZ_ITERS").unwrap_or(ci)
}

/// The mutator's seed: `INCAST_FUZZ_SEED`, else [`CI_SEED`].
pub fn seed() -> u64 {
    env_u64("INCAST_FUZZ_SEED").unwrap_or(CI_SEED)
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// Every file of the stored corpus `dir`, in name order (so a seed replays the same run).
///
/// # Panics
/// When the corpus is missing or unreadable: the target has nothing to start from.
pub fn corpus(dir: &Path) -> Vec<Vec<u8>> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("the corpus {} is stored: {e}", dir.display()))
        .map(|e| e.expect("a corpus entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| std::fs::read(p).expect("a corpus file"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_draws_the_same_numbers_and_below_stays_below() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        let xs: Vec<u64> = (0..100).map(|_| a.bits()).collect();
        let ys: Vec<u64> = (0..100).map(|_| b.bits()).collect();
        assert_eq!(xs, ys);
        assert_ne!(Rng::new(8).bits(), xs[0]);
        let mut r = Rng::new(0); // a zero seed still moves
        assert_ne!(r.bits(), 0);
        assert!((0..1000).all(|_| r.below(5) < 5));
        assert_eq!(r.below(0), 0);
    }
}
