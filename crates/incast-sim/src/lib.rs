//! incast-sim: a packet-level discrete-event simulator for TCP incast.
//!
//! One [`Scenario`] in, one [`Report`] out:
//!
//! ```
//! use incast_sim::{Scenario, Simulation};
//! let mut sc = Scenario::example(4);
//! sc.workload.blocks = 2;
//! let report = Simulation::new(sc).unwrap().run().unwrap();
//! assert_eq!(report.block_times.len(), 2);
//! assert!(report.goodput_bps > 0.0);
//! ```
//!
//! Time is integer picoseconds; events at the same time run in the order they were scheduled;
//! the same scenario and seed give the same report, bit for bit.
#![warn(missing_docs)]

pub mod app;
pub mod capture;
pub mod config;
pub mod engine;
pub mod eqds;
pub mod homa;
pub mod ids;
pub mod metrics;
pub mod ndp;
pub mod net;
pub mod pages;
pub mod report;
pub mod report_columns;
pub mod rng;
pub mod roce;
pub mod routing;
pub mod simulation;
pub mod slowdown;
pub mod swift;
pub mod tcp;
pub mod topology;
pub mod transports;
pub mod units;

// The workloads' former paths, which the binding and the configuration use.
pub use app::size_dist as workload;
pub use app::{kv, shuffle, tasks};
pub use config::{ConfigError, Scenario};
pub use engine::SimError;
/// Random early detection, now a queue discipline of the network (its former path).
pub use net::red;
pub use report::Report;
pub use simulation::Simulation;

/// A report as JSON (what the Python binding returns).
pub fn report_json(r: &Report) -> String {
    serde_json::to_string(r).expect("a report always serializes")
}
