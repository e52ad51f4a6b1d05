//! The rules NDP's and EQDS's sections share: both send packets of `mtu` payload plus
//! `header_bytes` into trimming switch ports whose header queues serve `header_weight`
//! headers per data packet. One owner, so the two transports' bounds cannot drift apart.

use super::{bad, ConfigError};

/// Packet size, header size and first window of `section` (`ndp` or `eqds`).
pub(super) fn validate_packets(
    section: &str,
    mtu: u64,
    header_bytes: u64,
    initial_window: u32,
) -> Result<(), ConfigError> {
    if mtu == 0 || mtu > 65_000 {
        return Err(bad(
            &format!("{section}.mtu"),
            format!("must be 1..65000 bytes, got {mtu}"),
        ));
    }
    if header_bytes == 0 || header_bytes > 1000 {
        return Err(bad(
            &format!("{section}.header_bytes"),
            "must be 1..1000 bytes",
        ));
    }
    if initial_window == 0 || initial_window > 100_000 {
        return Err(bad(
            &format!("{section}.initial_window"),
            "must be 1..100000 packets",
        ));
    }
    Ok(())
}

/// The header queue of `section`'s ports: room for one header at least, and its weight
/// against the data queue (htsim serves headers 100,000:1, so up to a million).
pub(super) fn validate_header_queue(
    section: &str,
    header_queue: u64,
    header_bytes: u64,
    header_weight: u32,
) -> Result<(), ConfigError> {
    if header_queue < header_bytes {
        return Err(bad(
            &format!("{section}.header_queue"),
            "must hold at least one header",
        ));
    }
    if header_weight == 0 || header_weight > 1_000_000 {
        return Err(bad(
            &format!("{section}.header_weight"),
            "must be 1..1000000",
        ));
    }
    Ok(())
}
