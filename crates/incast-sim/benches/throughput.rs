//! Simulator speed: wall time, events per second and peak memory per workload, each in its own
//! process so that peak memory is its own.
//!
//!     cargo bench -p incast-sim --bench throughput            # every case
//!     cargo bench -p incast-sim --bench throughput -- ndp-8000
//!
//! The peers' figures (REFERENCES.md, same 2-core machine): htsim's NDP incast with 8000
//! senders (270000 B each, 10 Gb/s) took 50-66 s and 5.4 GiB; with 1000 senders 3.7-8.1 s and
//! 1.25 GiB; its event loop ran about 0.6 M events/s.

use std::process::Command;
use std::time::Instant;

use incast_sim::config::{QueueLimit, TopologyKind, Transport, WorkloadKind};
use incast_sim::units::{from_ms, from_us, PS_PER_S};
use incast_sim::{Scenario, Simulation};

// As the programs users run: large tables on 2 MiB pages (see `incast_sim::pages`).
#[global_allocator]
static ALLOC: incast_sim::pages::LargePages = incast_sim::pages::LargePages;

/// htsim's wall-time range for the same NDP incast (REFERENCES.md), seconds; TCP cases have
/// no htsim figure to compare with.
type HtsimWall = Option<(f64, f64)>;

/// (name, what it is, htsim's wall time for the same senders and bytes)
const CASES: [(&str, &str, HtsimWall); 5] = [
    (
        "sync-64x100",
        "synchronized reads, 64 servers x 100 blocks of 256 KB, 1 Gbps, 64 KB/port, RTOmin 200 ms",
        None,
    ),
    (
        "incast-1000",
        "1000 TCP flows x 270000 B into one receiver, 10 Gbps, 9 KB frames",
        None,
    ),
    (
        "incast-8000",
        "8000 TCP flows x 270000 B into one receiver, 10 Gbps, 9 KB frames",
        None,
    ),
    (
        "ndp-1000",
        "NDP, 1000 senders x 270000 B, IW 10, 8192-host k=32 fat tree, 10 Gbps, 1 us links",
        Some((3.7, 8.1)),
    ),
    (
        "ndp-8000",
        "NDP, 8000 senders x 270000 B, IW 10, 8192-host k=32 fat tree, 10 Gbps, 1 us links",
        Some((50.0, 66.0)),
    ),
];

fn scenario(name: &str) -> Scenario {
    if let Some(n) = name.strip_prefix("ndp-") {
        let mut s = Scenario::example(n.parse().expect("sender count"));
        s.transport = Transport::Ndp;
        s.topology.kind = TopologyKind::FatTree;
        s.topology.hosts = 8192;
        s.topology.link = 10_000_000_000;
        s.topology.receiver_link = 10_000_000_000;
        s.topology.link_delay = from_us(1);
        s.workload.kind = WorkloadKind::Incast;
        s.workload.flow_size = Some(270_000);
        return s;
    }
    match name {
        "sync-64x100" => {
            let mut s = Scenario::example(64);
            s.workload.blocks = 100;
            s
        }
        _ => {
            let n: u32 = name
                .trim_start_matches("incast-")
                .parse()
                .expect("flow count");
            let mut s = Scenario::example(n);
            s.topology.link = 10_000_000_000;
            s.topology.receiver_link = 10_000_000_000;
            s.topology.rtt = from_us(10);
            s.topology.buffer = QueueLimit {
                bytes: None,
                packets: Some(1000),
            };
            s.tcp.mss = 8948;
            // A datacenter-tuned TCP: with Linux's 200 ms RTOmin, 8000 synchronized senders
            // spend hours of simulated time in exponential backoff.
            s.tcp.rto_min = from_ms(10);
            s.workload.kind = WorkloadKind::Incast;
            s.workload.flow_size = Some(270_000);
            s.workload.jitter = from_ms(10);
            s.run.max_time = 1000 * PS_PER_S;
            s
        }
    }
}

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn child(name: &str) {
    let sc = scenario(name);
    let t0 = Instant::now();
    let r = Simulation::new(sc)
        .and_then(|s| s.run())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let wall = t0.elapsed().as_secs_f64();
    println!(
        "{name} {wall} {} {} {} {}",
        r.events,
        peak_rss_mib(),
        r.goodput_bps,
        incast_sim::units::to_secs(r.duration)
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("--child") {
        child(&args[1]);
        return;
    }
    let exe = std::env::current_exe().expect("own path");
    println!(
        "{:<12} {:>9} {:>12} {:>11} {:>10} {:>12} {:>10}  vs htsim",
        "case", "wall s", "events", "M events/s", "peak MiB", "goodput", "sim s"
    );
    for (name, what, htsim) in CASES {
        if !args.is_empty() && !args.iter().any(|a| name.contains(a.as_str())) {
            continue;
        }
        let out = Command::new(&exe)
            .args(["--child", name])
            .output()
            .expect("run child");
        let line = String::from_utf8_lossy(&out.stdout);
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 6 {
            println!("{name}: failed: {}", String::from_utf8_lossy(&out.stderr));
            continue;
        }
        let wall: f64 = f[1].parse().unwrap_or(f64::NAN);
        let events: f64 = f[2].parse().unwrap_or(f64::NAN);
        let ratio = htsim.map_or("-".to_string(), |(lo, hi)| {
            format!("{:.0}x-{:.0}x faster", lo / wall, hi / wall)
        });
        println!(
            "{name:<12} {wall:>9.3} {events:>12.0} {:>11.2} {:>10.1} {:>7.1} Mbps {:>10.3}  {ratio}",
            events / wall / 1e6,
            f[3].parse::<f64>().unwrap_or(f64::NAN),
            f[4].parse::<f64>().unwrap_or(f64::NAN) / 1e6,
            f[5].parse::<f64>().unwrap_or(f64::NAN),
        );
        println!("{:<12} {what}", "");
    }
}
