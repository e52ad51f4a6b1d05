//! Sizes of query responses and of key-value store values: uniform, or an empirical CDF.

use crate::rng::Rng;

/// Sizes of query responses (and of key-value store values).
#[derive(Debug, Clone)]
pub(crate) enum SizeDist {
    /// Uniform in [min, max] bytes.
    Uniform(u64, u64),
    /// An empirical CDF: (bytes, cumulative probability) points, linear in between.
    Cdf(Vec<(u64, f64)>),
}

impl SizeDist {
    /// Mean size, bytes.
    pub(crate) fn mean(&self) -> f64 {
        match self {
            SizeDist::Uniform(a, b) => (a + b) as f64 / 2.0,
            SizeDist::Cdf(pts) => crate::config::cdf_mean(pts),
        }
    }

    /// One draw.
    pub(crate) fn sample(&self, rng: &mut Rng) -> u64 {
        match self {
            SizeDist::Uniform(a, b) => a + rng.up_to(b - a),
            SizeDist::Cdf(pts) => {
                let u = rng.unit();
                let i = pts.partition_point(|&(_, p)| p < u).min(pts.len() - 1);
                if i == 0 {
                    return pts[0].0;
                }
                let ((sa, pa), (sb, pb)) = (pts[i - 1], pts[i]);
                let f = if pb > pa { (u - pa) / (pb - pa) } else { 1.0 };
                (sa as f64 + f * (sb - sa) as f64).round() as u64
            }
        }
    }
}
