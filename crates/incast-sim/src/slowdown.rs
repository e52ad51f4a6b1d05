//! FCT slowdown by flow size, from the flows of any transport's report: each flow's
//! completion time over its ideal one ([`crate::report::FlowReport::ideal_fct`]: the flow
//! alone on the idle network; [`crate::report::FlowReport::sample`] gives a flow's), flows sorted by size and cut into buckets of equal flow count, the median, 95th
//! and 99th percentile of each bucket, background and incast flows apart. HPCC's Fig. 11 is
//! drawn from these (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019; its
//! analysis script cuts flows into 5% buckets by size).
//!
//! Quantiles are by nearest rank ([`incast_workload::kv::nearest_rank`], the rule of every
//! latency figure here); HPCC's script takes the element at ⌊q·n⌋, at most one rank higher.

use serde::Serialize;

use crate::units::SimTime;

/// What the slowdown of one flow is computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// Bytes the flow carries.
    pub bytes: u64,
    /// Its completion time, if it completed.
    pub fct: Option<SimTime>,
    /// Its ideal completion time, if it has one (flows without are left out).
    pub ideal: Option<SimTime>,
    /// An incast burst's flow (else a background flow).
    pub incast: bool,
}

/// One bucket of flows of similar size.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SlowdownBucket {
    /// Flows in the bucket.
    pub flows: u32,
    /// Size of its largest flow, bytes (the bucket's label on HPCC's x axis).
    pub max_bytes: u64,
    /// Median slowdown.
    pub p50: f64,
    /// 95th-percentile slowdown.
    pub p95: f64,
    /// 99th-percentile slowdown.
    pub p99: f64,
}

/// FCT slowdowns of a run's flows that have an ideal completion time.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FctSlowdown {
    /// Background flows, in size buckets of equal flow count, smallest first.
    pub background: Vec<SlowdownBucket>,
    /// Incast flows, in one bucket (a schedule's bursts send flows of one size).
    pub incast: Vec<SlowdownBucket>,
    /// Median slowdown of every background flow (null without background flows).
    pub background_p50: Option<f64>,
    /// 99th-percentile slowdown of every background flow.
    pub background_p99: Option<f64>,
    /// Median slowdown of every incast flow (null without incast flows).
    pub incast_p50: Option<f64>,
    /// 99th-percentile slowdown of every incast flow.
    pub incast_p99: Option<f64>,
    /// Flows with an ideal completion time that did not complete (left out above).
    pub unfinished: u64,
}

/// The `q`-quantile of sorted `v` by nearest rank.
fn quantile(v: &[f64], q: f64) -> f64 {
    let rank = (q * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

/// The bucket of `flows` ((bytes, slowdown), any order; not empty).
fn bucket(flows: &[(u64, f64)]) -> SlowdownBucket {
    let mut s: Vec<f64> = flows.iter().map(|f| f.1).collect();
    s.sort_by(f64::total_cmp);
    SlowdownBucket {
        flows: flows.len() as u32,
        max_bytes: flows.iter().map(|f| f.0).max().unwrap_or(0),
        p50: quantile(&s, 0.5),
        p95: quantile(&s, 0.95),
        p99: quantile(&s, 0.99),
    }
}

/// `flows` sorted by size (ties by flow), cut into `buckets` of equal count (the first ones
/// one shorter when they do not divide evenly); fewer buckets than flows never empty.
fn buckets(mut flows: Vec<(u64, f64)>, buckets: u32) -> Vec<SlowdownBucket> {
    flows.sort_by_key(|f| f.0);
    let n = flows.len();
    let b = (buckets as usize).min(n);
    (0..b)
        .map(|k| bucket(&flows[k * n / b..(k + 1) * n / b]))
        .collect()
}

impl FctSlowdown {
    /// The slowdowns of `flows` (those with an ideal completion time), background ones in
    /// `size_buckets` buckets; `None` if no flow has an ideal completion time.
    pub fn of(flows: impl IntoIterator<Item = Sample>, size_buckets: u32) -> Option<FctSlowdown> {
        let mut bg = Vec::new();
        let mut inc = Vec::new();
        let mut unfinished = 0;
        for f in flows {
            let Some(ideal) = f.ideal else { continue };
            let Some(fct) = f.fct else {
                unfinished += 1;
                continue;
            };
            let s = (fct as f64 / ideal.max(1) as f64, f.bytes);
            let into = if f.incast { &mut inc } else { &mut bg };
            into.push((s.1, s.0));
        }
        if bg.is_empty() && inc.is_empty() && unfinished == 0 {
            return None;
        }
        let all = |v: &[(u64, f64)], q: f64| -> Option<f64> {
            let mut s: Vec<f64> = v.iter().map(|f| f.1).collect();
            s.sort_by(f64::total_cmp);
            (!s.is_empty()).then(|| quantile(&s, q))
        };
        Some(FctSlowdown {
            background_p50: all(&bg, 0.5),
            background_p99: all(&bg, 0.99),
            incast_p50: all(&inc, 0.5),
            incast_p99: all(&inc, 0.99),
            background: buckets(bg, size_buckets),
            incast: buckets(inc, 1),
            unfinished,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(bytes: u64, fct: Option<u64>, ideal: Option<u64>, burst: Option<u32>) -> Sample {
        Sample {
            bytes,
            fct,
            ideal,
            incast: burst.is_some(),
        }
    }

    #[test]
    fn flows_are_bucketed_by_size_with_equal_counts_and_classes_apart() {
        // 100 background flows of sizes 1..=100, slowdown = size / 10; 3 incast flows.
        let mut flows: Vec<Sample> = (1..=100)
            .rev()
            .map(|s| flow(s, Some(s * 100), Some(1000), None))
            .collect();
        flows.push(flow(500, Some(3000), Some(1000), Some(0)));
        flows.push(flow(500, Some(1000), Some(1000), Some(0)));
        flows.push(flow(500, None, Some(1000), Some(1)));
        flows.push(flow(7, Some(5), None, None)); // no ideal: not a schedule's flow
        let r = FctSlowdown::of(flows, 4).unwrap();
        assert_eq!(r.background.len(), 4);
        let b0 = &r.background[0];
        assert_eq!((b0.flows, b0.max_bytes), (25, 25));
        assert_eq!((b0.p50, b0.p95, b0.p99), (1.3, 2.4, 2.5));
        assert_eq!(r.background[3].max_bytes, 100);
        assert_eq!(r.background_p50, Some(5.0));
        assert_eq!(r.background_p99, Some(9.9));
        assert_eq!(r.incast.len(), 1);
        assert_eq!(r.incast[0].flows, 2);
        assert_eq!((r.incast_p50, r.incast_p99), (Some(1.0), Some(3.0)));
        assert_eq!(r.unfinished, 1);
    }

    #[test]
    fn fewer_flows_than_buckets_make_one_bucket_each_and_no_ideal_makes_none() {
        let flows = vec![
            flow(10, Some(20), Some(10), None),
            flow(5, Some(5), Some(5), None),
        ];
        let r = FctSlowdown::of(flows, 20).unwrap();
        assert_eq!(r.background.len(), 2);
        assert_eq!(r.background[0].max_bytes, 5);
        assert!(r.incast.is_empty() && r.incast_p50.is_none());
        assert!(FctSlowdown::of([flow(1, Some(1), None, None)], 20).is_none());
    }
}
