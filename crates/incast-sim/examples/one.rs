//! Run one scenario (normalized JSON on stdin, or the built-in example with N senders) and
//! print its full report as JSON: `cargo run --release --example one -- 4`.
use std::io::{Read, Write};

use incast_sim::{Scenario, Simulation};

// Large tables on 2 MiB pages, as the Python extension has them (see `incast_sim::pages`).
#[global_allocator]
static ALLOC: incast_sim::pages::LargePages = incast_sim::pages::LargePages;

fn main() {
    let n: u32 = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("senders"))
        .unwrap_or(4);
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).ok();
    let mut sc = if text.trim().is_empty() {
        Scenario::example(n)
    } else {
        Scenario::from_json(&text).unwrap_or_else(|e| panic!("{e}"))
    };
    sc.topology.senders = n;
    let r = Simulation::new(sc)
        .and_then(|s| s.run())
        .unwrap_or_else(|e| panic!("{e}"));
    // Written as it serializes: a 1,024-host cluster's report (a million flows) is hundreds of
    // megabytes as one string, and tens of thousands of writes in the default 8 KiB.
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, &r).expect("report serializes");
    writeln!(out)
        .and_then(|()| out.flush())
        .expect("report written");
}
