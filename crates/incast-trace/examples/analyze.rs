//! Analyze one capture and print the verdict and the speed:
//! `cargo run --release -p incast-trace --example analyze -- FILE [RTOMIN_MS]`.
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: analyze FILE [RTOMIN_MS]");
    let rto_ms: u64 = args
        .next()
        .map_or(200, |s| s.parse().expect("RTOmin in ms"));
    let opts = incast_trace::Options {
        rto_min_ns: rto_ms * 1_000_000,
        ..incast_trace::Options::default()
    };
    let t = Instant::now();
    match incast_trace::analyze(&path, &opts, |_| true) {
        Ok(r) => {
            let s = t.elapsed().as_secs_f64();
            println!("{}", r.verdict);
            println!(
                "{} frames in {s:.3} s: {:.2} M frames/s; {} timeouts",
                r.frames,
                r.frames as f64 / s / 1e6,
                r.rtos
            );
        }
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    }
}
