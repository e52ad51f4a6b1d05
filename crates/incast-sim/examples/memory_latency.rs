//! What a cache line costs on this machine, by how much memory the reads range over: the
//! number that bounds how fast a large cluster can run (`docs/speed.md`, "A key-value cluster
//! of 1,024 hosts"). `cargo run --release -p incast-sim --example memory_latency`.
//!
//! Each working set is one random cycle through its cache lines. One chain follows it load by
//! load, each address read from the line before (what an event's first read of a cold
//! endpoint or packet costs); eight chains walk it at once, independent of each other (what
//! the core can overlap when it knows the addresses early, as the engine's prefetches do).
//! The memory comes from the simulator's own allocator, on 2 MiB pages where the kernel
//! gives them, so the page-table walks are those a simulation sees. With `--plain`, a line a
//! working set without the header: its KiB and the two figures, for a script to read
//! (`benchmarks/scale.py`).
use std::hint::black_box;
use std::time::Instant;

#[global_allocator]
static ALLOC: incast_sim::pages::LargePages = incast_sim::pages::LargePages;

/// A cache line, holding the index of the next line of the cycle.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line {
    next: usize,
    _pad: [usize; 7],
}

/// Working sets, KiB: inside the first- and second-level caches, just past the second, a
/// shared third level's range, and a 1,024-host cluster's (hundreds of MiB).
const SIZES_KIB: [usize; 8] = [32, 256, 1024, 4096, 16384, 65536, 262_144, 786_432];

/// Loads timed per working set and chain count.
const LOADS: usize = 4_000_000;

/// xorshift64*: the shuffle's random numbers (any fixed generator serves).
fn next_random(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// The lines of `kib` KiB linked into one random cycle.
fn cycle(kib: usize) -> Vec<Line> {
    let n = kib * 1024 / std::mem::size_of::<Line>();
    let mut order: Vec<usize> = (0..n).collect();
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    for i in (1..n).rev() {
        let j = (next_random(&mut state) % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    let mut lines = vec![
        Line {
            next: 0,
            _pad: [0; 7]
        };
        n
    ];
    for w in 0..n {
        lines[order[w]].next = order[(w + 1) % n];
    }
    lines
}

/// Nanoseconds a load, walking `chains` independent chains through `lines` at once.
fn walk(lines: &[Line], chains: usize) -> f64 {
    let mut at: Vec<usize> = (0..chains).map(|c| c * lines.len() / chains).collect();
    // Once round (up to the timed loads) to warm what fits and the page tables.
    for _ in 0..(lines.len().min(LOADS) / chains) {
        for p in at.iter_mut() {
            *p = lines[*p].next;
        }
    }
    let steps = LOADS / chains;
    let start = Instant::now();
    for _ in 0..steps {
        for p in at.iter_mut() {
            *p = lines[*p].next;
        }
    }
    let ns = start.elapsed().as_secs_f64() * 1e9;
    black_box(&at);
    ns / (steps * chains) as f64
}

fn main() {
    let plain = std::env::args().any(|a| a == "--plain");
    if !plain {
        println!(
            "{:>12} {:>14} {:>16}",
            "working set", "1 chain, ns", "8 chains, ns"
        );
    }
    for kib in SIZES_KIB {
        let lines = cycle(kib);
        let one = walk(&lines, 1);
        let eight = walk(&lines, 8);
        if plain {
            println!("{kib} {one:.1} {eight:.1}");
            continue;
        }
        let size = if kib >= 1024 {
            format!("{} MiB", kib / 1024)
        } else {
            format!("{kib} KiB")
        };
        println!("{size:>12} {one:>14.1} {eight:>16.1}");
    }
}
