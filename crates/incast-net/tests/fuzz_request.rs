//! A fuzz target for the block server's request parsing that runs on stable Rust, in CI, for a
//! bounded number of inputs: a seeded mutator (flips, interesting values, splices, resizes)
//! over the stored corpus (`fuzz/corpus/request`) drives the header parser, the token check
//! and the `--allow`/token text parsers, asserting no panic, every accepted request within the
//! limit and re-encoding to itself, and at most [`MOST_BYTES_PER_INPUT`] allocated per input.
//!
//! Longer runs (the same target, more inputs, another seed):
//!
//! ```text
//! INCAST_FUZZ_ITERS=50000000 INCAST_FUZZ_SEED=7 \
//!     cargo test --release -p incast-net --test fuzz_request -- --nocapture
//! ```
//!
//! A failing input is printed in hex with its seed and iteration, to be added to the corpus.
//! (With nightly and cargo-fuzz, `fuzz/` holds the libFuzzer target over the same corpus.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use incast_fuzz::Rng;
use incast_net::access::{Cidr, Token};
use incast_net::protocol::{
    encode_request, encode_request_with_token, parse_request, parse_request_header, parse_response,
    HEADER_LEN, MAGIC, MAX_REQUEST_LEN, TOKEN_LEN, VERSION,
};

/// Counts the bytes this thread allocates, so the property holds whatever other tests do.
struct Counting;

thread_local! {
    static ALLOCATED: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let _ = ALLOCATED.try_with(|a| a.set(a.get() + l.size()));
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        let _ = ALLOCATED.try_with(|a| a.set(a.get() + n.saturating_sub(l.size())));
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocated() -> usize {
    ALLOCATED.with(|a| a.get())
}

/// Most bytes one input may allocate (an error's message and the text parsers' strings):
/// parsing must not grow with what a peer claims (a `bytes` of 2^64, a 100 kB text).
const MOST_BYTES_PER_INPUT: usize = 8 << 10;
/// Inputs in a CI run; `INCAST_FUZZ_ITERS` sets another count.
const CI_ITERATIONS: u64 = 300_000;

fn corpus() -> Vec<Vec<u8>> {
    incast_fuzz::corpus(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/request"),
    )
}

const INTERESTING: [u64; 9] = [
    0,
    1,
    0x7f,
    0xff,
    0xffff,
    1 << 20,
    64 << 20,
    (64 << 20) + 1,
    u64::MAX,
];

/// One mutation of `d` (a few of them stacked by the caller).
fn mutate(d: &mut Vec<u8>, rng: &mut Rng, corpus: &[Vec<u8>]) {
    match rng.below(8) {
        0 if !d.is_empty() => {
            let i = rng.below(d.len());
            d[i] ^= 1 << rng.below(8);
        }
        1 if !d.is_empty() => {
            let i = rng.below(d.len());
            d[i] = rng.bits() as u8;
        }
        2 if d.len() >= 8 => {
            let at = rng.below(d.len() - 7);
            let v = INTERESTING[rng.below(INTERESTING.len())];
            d[at..at + 8].copy_from_slice(&v.to_le_bytes());
        }
        3 => {
            // Splice another corpus entry in at a random point.
            let other = &corpus[rng.below(corpus.len())];
            let at = rng.below(d.len() + 1);
            let from = rng.below(other.len() + 1);
            d.truncate(at);
            d.extend_from_slice(&other[from..]);
        }
        4 => d.truncate(rng.below(d.len() + 1)),
        5 => {
            let n = rng.below(MAX_REQUEST_LEN);
            d.extend((0..n).map(|_| rng.bits() as u8));
        }
        6 if d.len() >= 8 => {
            // The flags: the token bit, a reserved one, or none.
            let f: u16 = [0, 0x0002, 0x0001, 0x8000, 0xffff][rng.below(5)];
            d[6..8].copy_from_slice(&f.to_le_bytes());
        }
        _ => {
            // Past the magic and the version, where the interesting checks are.
            if d.len() < 5 {
                d.resize(5, 0);
            }
            d[..4].copy_from_slice(&MAGIC);
            d[4] = VERSION;
        }
    }
    d.truncate(4 * MAX_REQUEST_LEN);
}

/// The properties, for one input; `max` is the server's limit.
fn check(d: &[u8], max: u64, token: &Token) {
    let mut raw = [0u8; HEADER_LEN];
    let k = d.len().min(HEADER_LEN);
    raw[..k].copy_from_slice(&d[..k]);
    match parse_request_header(&raw, max) {
        Ok((r, with_token)) => {
            assert!(r.bytes >= 1 && r.bytes <= max, "{r:?} past {max}");
            if with_token {
                let mut sent = [0u8; TOKEN_LEN];
                let rest = &d[k..d.len().min(MAX_REQUEST_LEN)];
                sent[..rest.len()].copy_from_slice(rest);
                let wire = encode_request_with_token(&r, &sent);
                assert_eq!(wire[..HEADER_LEN], raw);
                assert_eq!(token.matches(&sent), &sent == token.wire());
                assert!(
                    parse_request(&raw, max).is_err(),
                    "strict parsing takes no token"
                );
            } else {
                assert_eq!(encode_request(&r), raw);
                assert_eq!(parse_request(&raw, max), Ok(r));
            }
        }
        Err(e) => {
            let m = e.to_string();
            assert!(!m.is_empty() && m.len() < 200, "{m}");
            assert_eq!(parse_request(&raw, max).unwrap_err(), e);
        }
    }
    let _ = parse_response(&raw);
    let text = String::from_utf8_lossy(d);
    match Cidr::parse_list(&text) {
        Ok(list) => assert!(!list.is_empty()),
        Err(m) => assert!(m.len() < 400, "{m}"),
    }
    if let Err(m) = Token::parse(&text) {
        assert!(m.len() < 400, "{m}");
    }
}

#[test]
fn the_request_parser_survives_mutated_corpus_inputs() {
    let iterations = incast_fuzz::iterations(CI_ITERATIONS);
    let seed = incast_fuzz::seed();
    let corpus = corpus();
    assert!(corpus.len() >= 12);
    let token = Token::parse("fuzz-token-0123456789abcdef").unwrap();
    let mut rng = Rng::new(seed);
    let mut accepted = 0u64;
    for it in 0..iterations {
        let mut d = corpus[rng.below(corpus.len())].clone();
        for _ in 0..1 + rng.below(4) {
            mutate(&mut d, &mut rng, &corpus);
        }
        let max = match rng.below(3) {
            0 => 64 << 20,
            1 => 1 + rng.bits() % (1 << 30),
            _ => rng.bits().max(1),
        };
        let before = allocated();
        let outcome = std::panic::catch_unwind(|| check(&d, max, &token));
        let used = allocated() - before;
        if outcome.is_err() || used > MOST_BYTES_PER_INPUT {
            let hex: String = d.iter().map(|b| format!("{b:02x}")).collect();
            panic!("seed {seed} iteration {it}: max {max}, {used} bytes allocated, input {hex}");
        }
        let mut raw = [0u8; HEADER_LEN];
        let k = d.len().min(HEADER_LEN);
        raw[..k].copy_from_slice(&d[..k]);
        accepted += u64::from(parse_request_header(&raw, max).is_ok());
    }
    // The mutator reaches past the magic: a fair share of inputs is accepted, not only refused.
    assert!(
        accepted * 50 > iterations,
        "{accepted} of {iterations} accepted"
    );
    println!("{iterations} inputs from seed {seed}: {accepted} accepted, none panicked");
}
