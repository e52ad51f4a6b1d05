//! Units of the simulator: integer picoseconds, bytes and bits per second.
//!
//! Time is a `u64` count of picoseconds (about 213 days of simulated time), as in htsim:
//! serialization of one byte at 1 Gbps is exactly 8000 ps, so no rounding creeps in.

/// Simulated time or a duration, in picoseconds.
pub type SimTime = u64;

/// Picoseconds per nanosecond.
pub const PS_PER_NS: u64 = 1_000;
/// Picoseconds per microsecond.
pub const PS_PER_US: u64 = 1_000_000;
/// Picoseconds per millisecond.
pub const PS_PER_MS: u64 = 1_000_000_000;
/// Picoseconds per second.
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// Duration from microseconds.
pub const fn from_us(us: u64) -> SimTime {
    us * PS_PER_US
}

/// Duration from milliseconds.
pub const fn from_ms(ms: u64) -> SimTime {
    ms * PS_PER_MS
}

/// Seconds as a float, for reports only.
pub fn to_secs(t: SimTime) -> f64 {
    t as f64 / PS_PER_S as f64
}

/// Time to serialize `bytes` at `rate_bps`, rounded up to the next picosecond.
///
/// Rates that divide 8e12 (every power-of-ten rate from 1 Mbps to 8 Tbps) are exact.
#[inline]
pub fn tx_time(bytes: u64, rate_bps: u64) -> SimTime {
    // Every packet takes this path: stay in 64 bits while the product fits (any frame under
    // 2.3 MB), as a 128-bit division is a slow library call; the result is the same.
    if let Some(bits) = bytes.checked_mul(8 * PS_PER_S) {
        return bits.div_ceil(rate_bps);
    }
    let bits = bytes as u128 * 8 * PS_PER_S as u128;
    bits.div_ceil(rate_bps as u128) as SimTime
}

/// Picoseconds one byte takes at `rate_bps`, when that is a whole number (the rates that
/// divide 8e12): then [`tx_time`] of `n` bytes is `n` times it.
pub fn ps_per_byte(rate_bps: u64) -> Option<u64> {
    let bits = 8 * PS_PER_S;
    bits.is_multiple_of(rate_bps).then(|| bits / rate_bps)
}

/// Bits per second achieved by `bytes` over `duration`.
pub fn rate_of(bytes: u64, duration: SimTime) -> f64 {
    if duration == 0 {
        return 0.0;
    }
    bytes as f64 * 8.0 / to_secs(duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_of_a_full_frame_at_1gbps() {
        assert_eq!(tx_time(1538, 1_000_000_000), 12_304_000);
        assert_eq!(tx_time(1, 10_000_000_000), 800);
    }

    #[test]
    fn odd_rates_round_up() {
        // 3 bytes at 7 bps = 24/7 s, rounded up to the picosecond.
        assert_eq!(tx_time(3, 7), 3_428_571_428_572);
        // Past 2^64 bits·ps the 128-bit path takes over with the same rounding.
        // 3 MB at 7 bps = 2.4e19 ps·bit / 7, rounded up.
        assert_eq!(tx_time(3_000_000, 7), 3_428_571_428_571_428_572);
    }

    #[test]
    fn rate_of_one_gigabit() {
        assert!((rate_of(125_000_000, PS_PER_S) - 1e9).abs() < 1e-3);
        assert_eq!(rate_of(10, 0), 0.0);
    }
}
