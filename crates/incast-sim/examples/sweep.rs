//! Goodput versus senders for a scenario given as normalized JSON on stdin (or the built-in
//! example): `cargo run --release --example sweep -- 1,2,4,8 < scenario.json`.
use std::io::Read;

use incast_sim::{Scenario, Simulation};

// As `one`: large tables on 2 MiB pages (see `incast_sim::pages`).
#[global_allocator]
static ALLOC: incast_sim::pages::LargePages = incast_sim::pages::LargePages;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let senders: Vec<u32> = args
        .get(1)
        .map(|s| {
            s.split(',')
                .map(|x| x.parse().expect("sender count"))
                .collect()
        })
        .unwrap_or_else(|| vec![1, 2, 4, 8, 16]);
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).ok();
    let base = if text.trim().is_empty() {
        Scenario::example(1)
    } else {
        Scenario::from_json(&text).unwrap_or_else(|e| panic!("{e}"))
    };
    println!("senders  goodput_Mbps  timeouts  drops  events  median_block_ms");
    for n in senders {
        let mut sc = base.clone();
        sc.topology.senders = n;
        let t0 = std::time::Instant::now();
        match Simulation::new(sc).and_then(|s| s.run()) {
            Ok(r) => {
                let mut b = r.block_times.clone();
                b.sort();
                let med = b.get(b.len() / 2).copied().unwrap_or(0) as f64 / 1e9;
                println!(
                    "{n:7}  {:12.1}  {:8}  {:5}  {:6}  {med:.3}  ({:.2}s wall)",
                    r.goodput_bps / 1e6,
                    r.timeouts,
                    r.drops,
                    r.events,
                    t0.elapsed().as_secs_f64()
                );
            }
            Err(e) => println!("{n:7}  error: {e}"),
        }
    }
}
