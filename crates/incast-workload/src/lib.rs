//! incast-workload: what the mesh workloads ask of the network and what finishes them, once,
//! for both worlds: the simulator (`incast-sim`) and the real-network generators
//! (`incast-net`).
//!
//! Pure Rust with no I/O and no clock of its own: every rule takes plain numbers (hosts,
//! reducers, a window, the instant it is told) and answers with plain numbers, so the
//! simulator and the emulator run the same rule, and each rule is tested alone here.
//!
//! - [`shuffle`]: a MapReduce shuffle's layout (which host runs which reducer, which
//!   connections exist, each reducer's fetch order) and its copier rule ([`shuffle::Copiers`]);
//! - [`kv`]: a key-value store's connections between every pair of hosts, what finishes a get
//!   (its quorum) and the nearest-rank quantile its latencies are reported by;
//! - [`cdf`]: flow-size distributions as files (the papers' web-search and Hadoop built in);
//! - [`flows`]: a flow schedule (background flows at an offered load, Poisson N:1 incast
//!   bursts) that any transport, simulated or real, reads as a plain list.
#![warn(missing_docs)]

pub mod cdf;
pub mod flows;
pub mod kv;
pub mod shuffle;
