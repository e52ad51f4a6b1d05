//! A flow schedule: background flows at an offered load, sizes drawn from a flow-size CDF,
//! and Poisson N:1 incast bursts, as the HPCC evaluation builds its traffic (Li et al., "HPCC:
//! High Precision Congestion Control", SIGCOMM 2019, §5: web-search or FB Hadoop flows at 30%
//! load, "incast traffic by randomly selecting 60 senders and one receiver, each sending
//! 500KB" added to it; that the bursts offer 2% of the network's capacity and arrive at Poisson
//! instants, each picking its receiver and senders anew, is the first author's account of the
//! set-up in the simulator's issue tracker, alibaba-edu/High-Precision-Congestion-Control#36).
//!
//! A pure function of plain numbers and random draws: the simulator's TCP workload, its RoCE
//! transport and a real-network generator read the same list for the same scenario and seed.
//!
//! - Background: each of the H hosts starts flows at Poisson instants of rate
//!   λ = ρ · link / (8 · mean size), to a destination uniform among the other hosts, sizes
//!   from the CDF; so each host's link carries ρ of its capacity on average, both ways.
//! - Incast: bursts at Poisson instants of rate λᵢ = ρᵢ · H · link / (8 · N · size), ρᵢ the
//!   share of the network's capacity (all H host links) the bursts offer; each burst picks a
//!   receiver and N distinct senders among the other hosts uniformly, and every sender starts
//!   a flow of `size` bytes to it at the burst's instant.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::cdf::{unit, Cdf};

/// Picoseconds per second (the schedule's times are integer picoseconds).
const PS_PER_S: f64 = 1e12;

/// What part of the schedule a flow is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// A background flow.
    Background,
    /// A flow of incast burst `id` (bursts numbered from 0 in start order).
    Incast(u32),
}

/// One flow of the schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowSpec {
    /// Sending host (0..H).
    pub src: u32,
    /// Receiving host (0..H, not `src`).
    pub dst: u32,
    /// Bytes the flow carries.
    pub bytes: u64,
    /// When it starts, picoseconds from the schedule's origin.
    pub start: u64,
    /// Background or which incast burst.
    pub class: Class,
}

/// Incast bursts added to the background.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Incast {
    /// Share of the network's capacity (H host links) the bursts offer (HPCC: 0.02).
    pub load: f64,
    /// Senders per burst, N (HPCC: 60).
    pub fan_in: u32,
    /// Bytes each sender sends (HPCC: 500 KB).
    pub bytes: u64,
}

/// When the schedule ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Until {
    /// Flows starting before this time, picoseconds.
    Time(u64),
    /// This many background flows (and the bursts that start before the last of them).
    Flows(u32),
}

/// What the schedule is drawn from.
#[derive(Debug, Clone, Copy)]
pub struct Plan<'a> {
    /// Hosts taking part, H ≥ 2.
    pub hosts: u32,
    /// Rate of each host's link, bits per second.
    pub link_bps: u64,
    /// Offered background load ρ, a share of each host's link (0 for none).
    pub load: f64,
    /// Background flow sizes.
    pub sizes: &'a Cdf,
    /// Incast bursts, if any.
    pub incast: Option<Incast>,
    /// When the schedule ends.
    pub until: Until,
}

/// Which random stream a draw comes from: a host's background flows (arrivals,
/// destinations, sizes), or the incast bursts (arrivals, receivers, senders).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Host `h`'s background flows.
    Host(u32),
    /// The incast bursts.
    Incast,
}

/// An exponential gap of mean `mean` from 64 random bits.
fn exponential(bits: u64, mean: f64) -> f64 {
    -(1.0 - unit(bits)).ln() * mean
}

/// Uniform in 0..=n from 64 random bits (multiply-shift).
fn up_to(bits: u64, n: u64) -> u64 {
    ((bits as u128 * (n as u128 + 1)) >> 64) as u64
}

/// The schedule of `plan`, in start order (ties: background before incast, then by source
/// host). `stream(s)` gives stream `s`'s 64-bit draws; each host and the bursts draw from
/// their own, so adding a host does not change another host's flows.
pub fn schedule<D: FnMut() -> u64>(
    plan: &Plan,
    mut stream: impl FnMut(Source) -> D,
) -> Vec<FlowSpec> {
    let h = plan.hosts;
    let mut flows = background(plan, &mut stream);
    let end = match plan.until {
        Until::Time(t) => t,
        // The bursts run through the background's span.
        Until::Flows(_) => flows.iter().map(|f| f.start + 1).max().unwrap_or(0),
    };
    if let Some(inc) = plan
        .incast
        .filter(|i| i.load > 0.0 && i.fan_in > 0 && h >= 2)
    {
        bursts(plan, &inc, end, &mut stream(Source::Incast), &mut flows);
    }
    flows.sort_by_key(|f| {
        let burst = match f.class {
            Class::Background => 0,
            Class::Incast(b) => 1 + b as u64,
        };
        (f.start, burst, f.src)
    });
    flows
}

/// The background flows: each host's Poisson arrivals, merged in time order.
fn background<D: FnMut() -> u64>(
    plan: &Plan,
    stream: &mut impl FnMut(Source) -> D,
) -> Vec<FlowSpec> {
    let h = plan.hosts;
    if plan.load <= 0.0 || h < 2 {
        return Vec::new();
    }
    let mean_gap = plan.sizes.mean() * 8.0 / (plan.load * plan.link_bps as f64) * PS_PER_S;
    let mut draws: Vec<D> = (0..h).map(|i| stream(Source::Host(i))).collect();
    // Each host's next arrival, kept as a float (so gaps below a picosecond still add up) in
    // a heap ordered by its bits (the order of non-negative floats), ties to the lower host.
    let mut next: BinaryHeap<Reverse<(u64, u32)>> = draws
        .iter_mut()
        .enumerate()
        .map(|(i, d)| Reverse((exponential(d(), mean_gap).to_bits(), i as u32)))
        .collect();
    let mut flows = Vec::new();
    while let Some(Reverse((bits, src))) = next.pop() {
        let t = f64::from_bits(bits);
        let start = t as u64;
        let done = match plan.until {
            Until::Time(end) => start >= end,
            Until::Flows(n) => flows.len() >= n as usize,
        };
        if done {
            break;
        }
        let d = &mut draws[src as usize];
        let other = up_to(d(), h as u64 - 2) as u32;
        let dst = other + u32::from(other >= src);
        let bytes = plan.sizes.sample(d());
        let after = t + exponential(d(), mean_gap);
        next.push(Reverse((after.to_bits(), src)));
        flows.push(FlowSpec {
            src,
            dst,
            bytes,
            start,
            class: Class::Background,
        });
    }
    flows
}

/// The incast bursts starting before `end`, each N flows into one receiver.
fn bursts(
    plan: &Plan,
    inc: &Incast,
    end: u64,
    draw: &mut impl FnMut() -> u64,
    out: &mut Vec<FlowSpec>,
) {
    let h = plan.hosts;
    let n = inc.fan_in.min(h - 1);
    let burst_bits = n as f64 * inc.bytes as f64 * 8.0;
    let mean_gap = burst_bits / (inc.load * h as f64 * plan.link_bps as f64) * PS_PER_S;
    let mut hosts: Vec<u32> = (0..h).collect();
    let mut t = exponential(draw(), mean_gap);
    let mut id = 0;
    while (t as u64) < end {
        let dst = up_to(draw(), h as u64 - 1) as u32;
        // N distinct senders among the others: a partial Fisher-Yates over every host but
        // the receiver (moved to the end first).
        hosts.swap(dst as usize, h as usize - 1);
        for i in 0..n as usize {
            let k = i + up_to(draw(), (h - 2) as u64 - i as u64) as usize;
            hosts.swap(i, k);
            out.push(FlowSpec {
                src: hosts[i],
                dst,
                bytes: inc.bytes,
                start: t as u64,
                class: Class::Incast(id),
            });
        }
        hosts.sort_unstable(); // the next burst draws from the same order, whatever this one did
        id += 1;
        t += exponential(draw(), mean_gap);
    }
}

/// Bytes per second the schedule's flows of `class` (background or any burst) offer over
/// [0, `span`) picoseconds: the check of its load.
pub fn offered_bps(flows: &[FlowSpec], incast: bool, span: u64) -> f64 {
    let bytes: u64 = flows
        .iter()
        .filter(|f| f.start < span && matches!(f.class, Class::Incast(_)) == incast)
        .map(|f| f.bytes)
        .sum();
    bytes as f64 * 8.0 / (span as f64 / PS_PER_S)
}

#[cfg(test)]
mod tests;
