//! Fuzz the server's request parser: any bytes give a request within the limit or a named
//! refusal, never a panic. (The same property runs in CI as a proptest in protocol.rs, which
//! also replays the corpus: `cargo fuzz run request fuzz/corpus/request`.)
#![no_main]

use incast_net::protocol::{encode_request, parse_request, HEADER_LEN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < HEADER_LEN + 8 {
        return;
    }
    let mut raw = [0u8; HEADER_LEN];
    raw.copy_from_slice(&data[..HEADER_LEN]);
    let mut m = [0u8; 8];
    m.copy_from_slice(&data[HEADER_LEN..HEADER_LEN + 8]);
    let max = u64::from_le_bytes(m).max(1);
    if let Ok(r) = parse_request(&raw, max) {
        assert!(r.bytes >= 1 && r.bytes <= max);
        assert_eq!(encode_request(&r), raw);
    }
});
