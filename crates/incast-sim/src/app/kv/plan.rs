//! The store's random draws, shared by the simulated store and by [`plan`], which lists the
//! same gets for a generator outside the simulator (the emulator's real TCP).

use serde::Serialize;

use crate::app::size_dist::SizeDist;
use crate::config::{KvPlacement, Scenario};
use crate::rng::{Rng, Stream};
use crate::units::{SimTime, PS_PER_S};

/// The values' sizes: `value_size`, or drawn from `query_size_cdf`.
pub(super) fn value_sizes(sc: &Scenario) -> SizeDist {
    let w = &sc.workload;
    if w.query_size_cdf.is_empty() {
        SizeDist::Uniform(w.value_size, w.value_size)
    } else {
        SizeDist::Cdf(w.query_size_cdf.clone())
    }
}

/// Whether an operation is a put, a share `fraction` of them. Drawn only when there are
/// puts, so a store of gets keeps its random sequence.
pub(super) fn draw_put(rng: &mut Rng, fraction: f64) -> bool {
    fraction > 0.0 && {
        let u = rng.unit();
        u < fraction
    }
}

/// The time to a host's next get: exponential with mean `mean_gap` (a Poisson process).
pub(super) fn exponential_gap(rng: &mut Rng, mean_gap: f64) -> SimTime {
    let u = rng.unit();
    (-(1.0 - u).ln() * mean_gap) as SimTime
}

/// Choose the `replicas` distinct hosts of a key out of `hosts` into `pick`: R hosts in a
/// row from a random start on the ring, or R uniformly.
pub(super) fn choose_replicas(
    placement: KvPlacement,
    hosts: u32,
    replicas: u32,
    rng: &mut Rng,
    pick: &mut Vec<u32>,
) {
    pick.clear();
    let n = hosts as u64;
    match placement {
        KvPlacement::Ring => {
            let first = rng.up_to(n - 1);
            for k in 0..replicas as u64 {
                pick.push(((first + k) % n) as u32);
            }
        }
        KvPlacement::Uniform => {
            // Floyd's sampling: R distinct of H in R draws.
            for j in n - replicas as u64..n {
                let t = rng.up_to(j) as u32;
                let v = if pick.contains(&t) { j as u32 } else { t };
                pick.push(v);
            }
        }
    }
}

/// One get of a [`plan`]: when it arrives at which coordinator, the value's size and its
/// replicas (the coordinator itself among them answers locally).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlannedGet {
    /// The coordinator.
    pub host: u32,
    /// Arrival, picoseconds from the start of the gets.
    pub at: SimTime,
    /// Value bytes each replica returns (a get) or is sent (a put).
    pub size: u64,
    /// A put.
    pub put: bool,
    /// The replicas, distinct hosts.
    pub replicas: Vec<u32>,
}

/// Every get of the scenario's store, in arrival order (ties by host): the arrivals, sizes
/// and replicas [`super::KvGets`] draws for the same scenario and seed, draw for draw, for a
/// generator outside the simulator (the emulator's real TCP) to run the same gets.
pub fn plan(sc: &Scenario) -> Vec<PlannedGet> {
    let w = &sc.workload;
    let sizes = value_sizes(sc);
    let mean_gap = PS_PER_S as f64 / sc.kv_gets_per_s();
    let hosts = sc.topology.senders;
    let mut out = Vec::new();
    let mut pick = Vec::with_capacity(w.kv_replicas as usize);
    for h in 0..hosts {
        let mut rng = Rng::stream(sc.seed, Stream::KvGets(h));
        // As KvGets: a gap when the arrivals start, then per operation its size, whether it
        // is a put, its replicas and the gap to the next.
        let mut at = exponential_gap(&mut rng, mean_gap);
        while at < w.kv_duration {
            let size = sizes.sample(&mut rng);
            let put = draw_put(&mut rng, w.kv_put_fraction);
            choose_replicas(w.kv_placement, hosts, w.kv_replicas, &mut rng, &mut pick);
            out.push(PlannedGet {
                host: h,
                at,
                size,
                put,
                replicas: pick.clone(),
            });
            at += exponential_gap(&mut rng, mean_gap);
        }
    }
    out.sort_by_key(|g| (g.at, g.host));
    out
}
