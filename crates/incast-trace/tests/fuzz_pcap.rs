//! A fuzz target for the capture reader and analysis on stable Rust, bounded for CI: a seeded
//! mutator over the stored corpus (`fuzz/corpus/pcap`: a simulator capture cut to 40 frames,
//! its microsecond form, a bare header, and two inputs this target found that panicked the
//! analysis on times running backwards) writes each input to a temporary file and analyzes
//! it, asserting no panic (a clean [`TraceError`] or a report) and at most
//! [`MOST_LIVE_BYTES`] allocated at once.
//!
//! Longer runs: `INCAST_FUZZ_ITERS=200000 INCAST_FUZZ_SEED=7 cargo test --release -p
//! incast-trace --test fuzz_pcap -- --nocapture`. A failing input is written beside the
//! temporary file's name printed in the failure, to be added to the corpus.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use incast_fuzz::Rng;
use incast_trace::{analyze, Options};

/// Live and peak bytes of the whole test binary (its one test runs alone).
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(n: usize) {
    let now = LIVE.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        grew(l.size());
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        if n >= l.size() {
            grew(n - l.size());
        } else {
            LIVE.fetch_sub(l.size() - n, Ordering::Relaxed);
        }
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Most bytes live while one input is analyzed: the reader's 1 MiB buffer and the analysis's
/// tables, whatever lengths, counts and times the mutated headers claim (the bins are capped
/// at `MAX_INTERVALS`, 24 bytes each: about 100 MB, twice that while the vector grows).
const MOST_LIVE_BYTES: usize = 256 << 20;
const CI_ITERATIONS: u64 = 1_000;

const INTERESTING: [u32; 8] = [0, 1, 0xff, 0xffff, 65_535, 65_536, 1 << 24, u32::MAX];

fn mutate(d: &mut Vec<u8>, rng: &mut Rng) {
    match rng.below(6) {
        0 if !d.is_empty() => {
            let i = rng.below(d.len());
            d[i] ^= 1 << rng.below(8);
        }
        1 if !d.is_empty() => {
            let i = rng.below(d.len());
            d[i] = rng.bits() as u8;
        }
        2 if d.len() >= 4 => {
            // A length, a time or a link type: the fields a reader trusts.
            let at = rng.below(d.len() - 3);
            let v = INTERESTING[rng.below(INTERESTING.len())];
            d[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
        3 => d.truncate(rng.below(d.len() + 1)),
        4 if d.len() > 40 => {
            // Repeat a stretch (records that repeat, out-of-order times).
            let a = rng.below(d.len() - 1);
            let b = (a + 1 + rng.below(200)).min(d.len());
            let piece = d[a..b].to_vec();
            let at = rng.below(d.len());
            d.splice(at..at, piece);
        }
        _ => {
            let n = rng.below(64);
            let at = rng.below(d.len() + 1);
            d.splice(at..at, (0..n).map(|_| rng.bits() as u8));
        }
    }
}

#[test]
fn the_capture_reader_survives_mutated_captures() {
    let iterations = incast_fuzz::iterations(CI_ITERATIONS);
    let seed = incast_fuzz::seed();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/pcap");
    let corpus = incast_fuzz::corpus(&dir);
    assert!(corpus.len() >= 5);
    let path = std::env::temp_dir().join(format!("incast-fuzz-pcap-{}.pcap", std::process::id()));
    let path_s = path.to_str().unwrap().to_string();
    let mut rng = Rng::new(seed);
    let (mut reports, mut errors) = (0u64, 0u64);
    // The corpus as stored first (its `regression-*` files once panicked the analysis), then
    // mutated inputs.
    let stored = corpus.len() as u64;
    for it in 0..stored + iterations {
        let mut d = corpus[(it as usize).min(corpus.len() - 1)].clone();
        if it >= stored {
            d = corpus[rng.below(corpus.len())].clone();
            for _ in 0..1 + rng.below(4) {
                mutate(&mut d, &mut rng);
            }
        }
        std::fs::write(&path, &d).unwrap();
        let base = LIVE.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let outcome =
            std::panic::catch_unwind(|| analyze(&path_s, &Options::default(), |_| true).is_ok());
        let peak = PEAK.load(Ordering::Relaxed) - base;
        match outcome {
            Ok(true) if peak <= MOST_LIVE_BYTES => reports += 1,
            Ok(false) if peak <= MOST_LIVE_BYTES => errors += 1,
            _ => {
                let kept = std::env::temp_dir().join(format!("incast-fuzz-pcap-failing-{it}.pcap"));
                std::fs::write(&kept, &d).unwrap();
                panic!(
                    "seed {seed} iteration {it}: panicked: {}, {peak} bytes live at peak; input kept in {}",
                    outcome.is_err(),
                    kept.display()
                );
            }
        }
    }
    std::fs::remove_file(&path).ok();
    // Both outcomes are reached: the mutator neither only breaks nor only keeps the files.
    assert!(
        reports > 0 && errors > 0,
        "{reports} reports, {errors} errors"
    );
    println!("{iterations} captures from seed {seed}: {reports} analyzed, {errors} refused, none panicked");
}
