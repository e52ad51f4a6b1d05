//! Flow-size distributions as files: an empirical CDF of sizes, its mean, its draws, and the
//! built-in distributions of the papers (`websearch`, `hadoop`).
//!
//! A CDF file has one point per line, `bytes cumulative-probability`, separated by spaces,
//! tabs or a comma; `#` starts a comment. Sizes are whole bytes and increase; probabilities
//! are in [0, 1], never decrease, and the last is 1. Sizes between two points are uniform
//! (linear interpolation of the CDF); the first point's probability is a mass at its size.
//! One parser for the built-in files and for a user's, so both are refused alike.

use std::fmt;

/// Most points a CDF may have.
pub const MAX_POINTS: usize = 100_000;
/// Largest size a point may name, bytes (2^40).
pub const MAX_SIZE: u64 = 1 << 40;

/// The built-in distributions, by name: the web-search cluster of DCTCP (Alizadeh et al.,
/// "Data Center TCP (DCTCP)", SIGCOMM 2010, Fig. 4) and Facebook's Hadoop cluster (Roy et al.,
/// "Inside the Social Network's (Datacenter) Network", SIGCOMM 2015, Fig. 6), each a
/// digitization written for incastlab (see the files' headers).
pub const BUILTIN: &[(&str, &str)] = &[
    ("websearch", include_str!("../cdf/websearch.cdf")),
    ("hadoop", include_str!("../cdf/hadoop.cdf")),
];

/// An empirical CDF of sizes: (bytes, cumulative probability) points, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Cdf {
    points: Vec<(u64, f64)>,
}

/// What is wrong with a CDF, and where: the line of its file (1-based), or the point of a
/// list (0-based) when it came as points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CdfError {
    /// Line of the file (counting comments and blank lines), or index of the point.
    pub at: Option<usize>,
    /// Whether `at` counts lines of a file (else points of a list).
    pub line: bool,
    /// What is wrong.
    pub what: String,
}

impl fmt::Display for CdfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.at, self.line) {
            (Some(n), true) => write!(f, "line {n}: {}", self.what),
            (Some(n), false) => write!(f, "point {n}: {}", self.what),
            (None, _) => f.write_str(&self.what),
        }
    }
}

fn err(at: Option<usize>, line: bool, what: impl Into<String>) -> CdfError {
    CdfError {
        at,
        line,
        what: what.into(),
    }
}

impl Cdf {
    /// The built-in distribution `name`, if there is one.
    pub fn builtin(name: &str) -> Option<Cdf> {
        let (_, text) = BUILTIN.iter().find(|(n, _)| *n == name)?;
        Some(Cdf::parse(text).expect("a built-in CDF file is valid (tested)"))
    }

    /// Names of the built-in distributions.
    pub fn builtin_names() -> impl Iterator<Item = &'static str> {
        BUILTIN.iter().map(|(n, _)| *n)
    }

    /// The CDF a file's text describes; errors name the line.
    pub fn parse(text: &str) -> Result<Cdf, CdfError> {
        let mut points = Vec::new();
        let mut lines = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            let data = raw.split('#').next().unwrap_or("").replace(',', " ");
            let cols: Vec<&str> = data.split_whitespace().collect();
            match cols.as_slice() {
                [] => continue,
                [size, p] => {
                    let size: u64 = size.parse().map_err(|_| {
                        err(
                            Some(n),
                            true,
                            format!("size must be whole bytes, got {size:?}"),
                        )
                    })?;
                    let p: f64 = p.parse().map_err(|_| {
                        err(Some(n), true, format!("expected a probability, got {p:?}"))
                    })?;
                    points.push((size, p));
                    lines.push(n);
                }
                _ => {
                    let shown: String = data.trim().chars().take(60).collect();
                    return Err(err(
                        Some(n),
                        true,
                        format!("expected two columns 'bytes probability', got {shown:?}"),
                    ));
                }
            }
        }
        Cdf::checked(points).map_err(|e| match e.at {
            Some(i) => err(lines.get(i).copied(), true, e.what),
            None => err(lines.last().copied(), true, e.what),
        })
    }

    /// The CDF of `points`; errors name the point.
    pub fn from_points(points: &[(u64, f64)]) -> Result<Cdf, CdfError> {
        Cdf::checked(points.to_vec())
    }

    fn checked(points: Vec<(u64, f64)>) -> Result<Cdf, CdfError> {
        if points.is_empty() {
            return Err(err(None, false, "no points"));
        }
        if points.len() > MAX_POINTS {
            return Err(err(None, false, format!("at most {MAX_POINTS} points")));
        }
        let mut prev: Option<(u64, f64)> = None;
        for (i, &(size, p)) in points.iter().enumerate() {
            if size == 0 || size > MAX_SIZE {
                let what = format!("size must be 1..2^40 bytes, got {size}");
                return Err(err(Some(i), false, what));
            }
            if !(0.0..=1.0).contains(&p) {
                let what = format!("probability must be in [0, 1], got {p}");
                return Err(err(Some(i), false, what));
            }
            if let Some((ps, pp)) = prev {
                if size <= ps {
                    let what = format!("sizes must increase: {size} after {ps}");
                    return Err(err(Some(i), false, what));
                }
                if p < pp {
                    let what =
                        format!("probabilities must not decrease (non-monotone): {p} after {pp}");
                    return Err(err(Some(i), false, what));
                }
            }
            prev = Some((size, p));
        }
        let last = points[points.len() - 1].1;
        if last != 1.0 {
            let what = format!("the last probability must be 1, got {last}");
            return Err(err(Some(points.len() - 1), false, what));
        }
        Ok(Cdf { points })
    }

    /// The points.
    pub fn points(&self) -> &[(u64, f64)] {
        &self.points
    }

    /// Mean size, bytes: the first point's mass at its size, then each step's mass at the
    /// middle of its sizes (uniform between points).
    pub fn mean(&self) -> f64 {
        let (s0, p0) = self.points[0];
        let mut m = s0 as f64 * p0;
        for w in self.points.windows(2) {
            let ((sa, pa), (sb, pb)) = (w[0], w[1]);
            m += (pb - pa) * (sa + sb) as f64 / 2.0;
        }
        m
    }

    /// The size at uniform draw `u` in [0, 1): the inverse of the CDF, linear between points.
    pub fn quantile(&self, u: f64) -> u64 {
        let pts = &self.points;
        let i = pts.partition_point(|&(_, p)| p < u).min(pts.len() - 1);
        if i == 0 {
            return pts[0].0;
        }
        let ((sa, pa), (sb, pb)) = (pts[i - 1], pts[i]);
        let f = if pb > pa { (u - pa) / (pb - pa) } else { 1.0 };
        (sa as f64 + f * (sb - sa) as f64).round() as u64
    }

    /// One draw from 64 random bits.
    pub fn sample(&self, bits: u64) -> u64 {
        self.quantile(unit(bits))
    }
}

/// 64 random bits as a uniform number in [0, 1) (their top 53 bits).
#[inline]
pub fn unit(bits: u64) -> f64 {
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_files_parse_and_their_means_are_what_the_headers_say() {
        let web = Cdf::builtin("websearch").unwrap();
        let hadoop = Cdf::builtin("hadoop").unwrap();
        // The headers of the files state these means; a changed point changes them.
        assert!((web.mean() / 1e6 - 1.71).abs() < 0.01, "{}", web.mean());
        assert!(
            (hadoop.mean() / 1e3 - 364.4).abs() < 0.1,
            "{}",
            hadoop.mean()
        );
        assert!(Cdf::builtin("web").is_none());
        assert_eq!(
            Cdf::builtin_names().collect::<Vec<_>>(),
            ["websearch", "hadoop"]
        );
    }

    #[test]
    fn a_bad_file_is_refused_naming_its_line_and_what_is_wrong() {
        let e = Cdf::parse("# sizes\n100 0.1\n\n50 0.2\n").unwrap_err();
        assert_eq!(e.to_string(), "line 4: sizes must increase: 50 after 100");
        let e = Cdf::parse("100 0.5\n200 0.4\n300 1\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2: probabilities must not decrease (non-monotone): 0.4 after 0.5"
        );
        let e = Cdf::parse("100 1.5\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 1: probability must be in [0, 1], got 1.5"
        );
        let e = Cdf::parse("100 0.5\n200 0.9 # the tail is missing\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2: the last probability must be 1, got 0.9"
        );
        let e = Cdf::parse("1KB 0.5\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 1: size must be whole bytes, got \"1KB\""
        );
        let e = Cdf::parse("100 0.5 7\n").unwrap_err();
        assert!(
            e.to_string().starts_with("line 1: expected two columns"),
            "{e}"
        );
        assert_eq!(
            Cdf::parse("# nothing\n").unwrap_err().to_string(),
            "no points"
        );
        let e = Cdf::from_points(&[(10, 0.5), (5, 1.0)]).unwrap_err();
        assert_eq!(e.to_string(), "point 1: sizes must increase: 5 after 10");
    }

    #[test]
    fn draws_follow_the_cdf_and_average_its_mean() {
        let cdf = Cdf::parse("1000 0.3\n100000, 1\n").unwrap();
        assert!((cdf.mean() - (0.3 * 1000.0 + 0.7 * 50_500.0)).abs() < 1e-6);
        assert_eq!(cdf.quantile(0.0), 1000);
        assert_eq!(cdf.quantile(0.3), 1000);
        assert_eq!(cdf.quantile(0.65), 50_500);
        // A deterministic spread of draws (a Weyl sequence) averages the mean closely.
        let n = 100_000u64;
        let mut x = 0u64;
        let mut sum = 0u64;
        for _ in 0..n {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            sum += cdf.sample(x);
        }
        let mean = sum as f64 / n as f64;
        assert!((mean / cdf.mean() - 1.0).abs() < 0.005, "{mean}");
    }
}
