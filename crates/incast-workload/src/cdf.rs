//! Flow-size distributions as files: an empirical CDF of sizes, its mean, its draws, and the
//! built-in distributions of the papers (`websearch`, `hadoop`).
//!
//! A CDF file has one point per line, `size cumulative-probability`, separated by spaces,
//! tabs or a comma; `#` starts a comment. A size carries a unit (`10KB` is 10,000 bytes,
//! `1.5MiB` is 1,572,864) or is a bare whole number of bytes, as in the CDF files that
//! circulate with DCTCP, pFabric and HPCC workloads. Probabilities are fractions in [0, 1], or
//! percentages when the last one is 100. Sizes increase, probabilities never decrease, the last
//! is 1. Sizes between two points are uniform (linear interpolation of the CDF); the first
//! point's probability is a mass at its size.
//!
//! One parser for the built-in files and for a user's, for `flows.size_cdf` and
//! `workload.query_size_cdf` alike (the Python layer calls it through `incastlab._core`), so
//! every CDF is read and refused alike.

use std::fmt;

/// Most points a CDF may have.
pub const MAX_POINTS: usize = 100_000;
/// Largest size a point may name, bytes (2^40).
pub const MAX_SIZE: u64 = 1 << 40;

/// The built-in distributions, by name: the web-search cluster of DCTCP (Alizadeh et al.,
/// "Data Center TCP (DCTCP)", SIGCOMM 2010) and Facebook's Hadoop cluster (Roy et al., "Inside
/// the Social Network's (Datacenter) Network", SIGCOMM 2015), as the HPCC paper ran them (Li
/// et al., SIGCOMM 2019: "WebSearch", "FB_Hadoop"), each built from the ten deciles that paper
/// prints on its figures, log-uniform within a decile (see the files' headers; websearch's
/// compares them with DCTCP's own Figure 4).
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
        let mut rows = Vec::new();
        let mut lines = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            let data = raw.split('#').next().unwrap_or("").replace(',', " ");
            let cols: Vec<&str> = data.split_whitespace().collect();
            match cols.as_slice() {
                [] => continue,
                [size, p] => {
                    rows.push(point(size, p).map_err(|what| err(Some(n), true, what))?);
                    lines.push(n);
                }
                _ => {
                    let what = format!(
                        "expected two columns 'size probability', got {}",
                        shown(data.trim())
                    );
                    return Err(err(Some(n), true, what));
                }
            }
        }
        Cdf::checked(percentages(rows)).map_err(|e| match e.at {
            Some(i) => err(lines.get(i).copied(), true, e.what),
            None => err(lines.last().copied(), true, e.what),
        })
    }

    /// The CDF of `points` in bytes; errors name the point.
    pub fn from_points(points: &[(u64, f64)]) -> Result<Cdf, CdfError> {
        Cdf::checked(points.to_vec())
    }

    /// The CDF of points written as text, `(size, probability)` as a file's columns would
    /// hold them (`("10KB", "0.5")`, `("1000", "50")`); errors name the point.
    pub fn from_fields<S: AsRef<str>>(fields: &[(S, S)]) -> Result<Cdf, CdfError> {
        let mut rows = Vec::with_capacity(fields.len().min(MAX_POINTS + 1));
        for (i, (size, p)) in fields.iter().enumerate() {
            rows.push(point(size.as_ref(), p.as_ref()).map_err(|w| err(Some(i), false, w))?);
            if rows.len() > MAX_POINTS {
                return Err(err(None, false, format!("at most {MAX_POINTS} points")));
            }
        }
        Cdf::checked(percentages(rows))
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

/// Most characters of a user's text repeated in a message.
const SHOWN_CHARS: usize = 60;

/// `text` quoted, cut to [`SHOWN_CHARS`] characters (a 5,000-digit size is named, not echoed).
fn shown(text: &str) -> String {
    let cut: String = text.chars().take(SHOWN_CHARS).collect();
    if cut.len() < text.len() {
        format!("{cut:?}… ({} characters)", text.chars().count())
    } else {
        format!("{cut:?}")
    }
}

/// Size units: SI (`KB` = 1000) and binary (`KiB` = 1024), as everywhere in incastlab.
const SIZE_UNITS: &[(&str, u64)] = &[
    ("B", 1),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
];

/// Bytes in a size: a bare whole number (`1448`) or a number with a unit (`10KB`, `1.5MiB`,
/// `2e3B`), read exactly (decimal digits, no floating point) and whole.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let units: Vec<&str> = SIZE_UNITS.iter().map(|(u, _)| *u).collect();
    let expected = || {
        format!(
            "expected a size in bytes or with a unit ({}), got {}",
            units.join(", "),
            shown(text)
        )
    };
    let split = t
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(t.len());
    let (num, unit) = (t[..split].trim_end(), &t[split..]);
    let scale = match unit {
        "" => 1,
        u => match SIZE_UNITS.iter().find(|(name, _)| *name == u) {
            Some(&(_, scale)) => scale,
            None => {
                return Err(format!(
                    "unknown size unit {} in {}; allowed: {}",
                    shown(u),
                    shown(text),
                    units.join(", ")
                ))
            }
        },
    };
    // The number: digits with at most one point, then an optional exponent.
    let (mantissa, exp) = match num.find(['e', 'E']) {
        Some(i) => (
            &num[..i],
            num[i + 1..].parse::<i32>().map_err(|_| expected())?,
        ),
        None => (num, 0),
    };
    let (whole, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits_ok = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && frac.is_empty() || !digits_ok(whole) || !digits_ok(frac) {
        return Err(expected());
    }
    if unit.is_empty() && (!frac.is_empty() || exp != 0 || mantissa.contains('.')) {
        return Err(format!(
            "a size without a unit is whole bytes, got {}",
            shown(text)
        ));
    }
    let too_large = || format!("{} is too large: at most 2^40 bytes", shown(text));
    // value = digits × 10^(exp − frac digits) × scale, exactly, in 128 bits.
    let digits = format!("{whole}{frac}");
    let digits = digits.trim_start_matches('0');
    let mut value: u128 = if digits.is_empty() {
        0
    } else {
        if digits.len() > 30 {
            return Err(too_large());
        }
        digits.parse().map_err(|_| expected())?
    };
    value *= scale as u128;
    let shift = exp as i64 - frac.len() as i64;
    if value != 0 && shift > 0 {
        for _ in 0..shift {
            value = value
                .checked_mul(10)
                .filter(|v| *v <= MAX_SIZE as u128)
                .ok_or_else(too_large)?;
        }
    } else if value != 0 {
        let div = 10u128.checked_pow((-shift) as u32).filter(|_| -shift <= 38);
        match div {
            Some(d) if value.is_multiple_of(d) => value /= d,
            _ => return Err(format!("{} is not a whole number of bytes", shown(text))),
        }
    }
    u64::try_from(value)
        .ok()
        .filter(|v| *v <= MAX_SIZE)
        .ok_or_else(too_large)
}

/// One point from its two columns.
fn point(size: &str, p: &str) -> Result<(u64, f64), String> {
    let size = parse_size(size)?;
    let p: f64 = p
        .trim()
        .parse()
        .ok()
        .filter(|p: &f64| p.is_finite())
        .ok_or_else(|| format!("expected a probability, got {}", shown(p)))?;
    Ok((size, p))
}

/// Probabilities as fractions: percentages (the last one is 100) divided by 100.
fn percentages(mut rows: Vec<(u64, f64)>) -> Vec<(u64, f64)> {
    if rows.last().is_some_and(|&(_, p)| p == 100.0) {
        for (_, p) in &mut rows {
            *p /= 100.0;
        }
    }
    rows
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
        assert!((web.mean() / 1e6 - 1.950).abs() < 0.0005, "{}", web.mean());
        assert!(
            (hadoop.mean() / 1e3 - 239.5).abs() < 0.05,
            "{}",
            hadoop.mean()
        );
        assert!(Cdf::builtin("web").is_none());
        assert_eq!(
            Cdf::builtin_names().collect::<Vec<_>>(),
            ["websearch", "hadoop"]
        );
    }

    /// The points the headers' formula gives: from the first decile's low end `low`, each
    /// decile [a, b] of `deciles` (the sizes the HPCC paper prints at 10%..100%) in 8 steps,
    /// size round(a·(b/a)^(j/8)) at probability q + j/80.
    fn log_uniform_deciles(low: u64, deciles: &[u64; 10]) -> Vec<(u64, f64)> {
        let mut points = vec![(low, 0.0)];
        let mut a = low as f64;
        for (k, &b) in deciles.iter().enumerate() {
            let b = b as f64;
            for j in 1..=8 {
                let size = (a * (b / a).powf(j as f64 / 8.0)).round() as u64;
                points.push((size, k as f64 / 10.0 + j as f64 / 80.0));
            }
            a = b;
        }
        points
    }

    #[test]
    fn the_builtin_files_are_the_papers_deciles_log_uniform_between() {
        // Li et al., SIGCOMM 2019: Figures 3 and 10 (WebSearch) and Figure 11 (FB_Hadoop).
        let web = [
            6_700, 20_000, 30_000, 50_000, 73_000, 200_000, 1_000_000, 2_000_000, 5_000_000,
            30_000_000,
        ];
        let hadoop = [
            324, 400, 500, 600, 700, 1_000, 7_000, 46_000, 120_000, 10_000_000,
        ];
        for (name, deciles) in [("websearch", web), ("hadoop", hadoop)] {
            // The first decile's low end: as wide on the log axis as the second decile.
            let low = deciles[0] * deciles[0] / deciles[1];
            let want = log_uniform_deciles(low, &deciles);
            let got = Cdf::builtin(name).unwrap();
            assert_eq!(got.points().len(), want.len(), "{name}");
            for (g, w) in got.points().iter().zip(&want) {
                assert_eq!(g.0, w.0, "{name}: {g:?} against {w:?}");
                assert!((g.1 - w.1).abs() < 1e-9, "{name}: {g:?} against {w:?}");
            }
            for (i, &size) in deciles.iter().enumerate() {
                let q = got.quantile((i + 1) as f64 / 10.0);
                assert_eq!(q, size, "{name}: decile {}", i + 1);
            }
        }
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
        let e = Cdf::parse("1 parsec 0.5\n").unwrap_err();
        assert!(
            e.to_string().starts_with("line 1: expected two columns"),
            "{e}"
        );
        let e = Cdf::parse("1parsec 0.5\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("line 1: unknown size unit \"parsec\""),
            "{e}"
        );
        let e = Cdf::parse("10 nan\n").unwrap_err();
        assert_eq!(e.to_string(), "line 1: expected a probability, got \"nan\"");
        let e = Cdf::parse(&format!("{} 1\n", "9".repeat(5000))).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("(5000 characters) is too large: at most 2^40 bytes"),
            "{e}"
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
    fn sizes_carry_units_or_are_whole_bytes_read_exactly() {
        assert_eq!(parse_size("1448"), Ok(1448));
        assert_eq!(parse_size("10KB"), Ok(10_000));
        assert_eq!(parse_size(" 1.5MiB "), Ok(1_572_864));
        assert_eq!(parse_size("2e3B"), Ok(2000));
        assert_eq!(parse_size(".5KB"), Ok(500));
        assert_eq!(parse_size("1TiB"), Ok(MAX_SIZE));
        assert!(parse_size("1.5").unwrap_err().contains("whole bytes"));
        assert!(parse_size("0.5B")
            .unwrap_err()
            .contains("not a whole number of bytes"));
        assert!(parse_size("1.0000001KB")
            .unwrap_err()
            .contains("not a whole number"));
        assert!(parse_size("2TiB").unwrap_err().contains("too large"));
        assert!(parse_size("1e99KB").unwrap_err().contains("too large"));
        assert!(parse_size("1e-99KB")
            .unwrap_err()
            .contains("not a whole number"));
        assert!(parse_size("KB").unwrap_err().starts_with("expected a size"));
        assert!(parse_size("1..2KB")
            .unwrap_err()
            .starts_with("expected a size"));
        assert!(parse_size("-5KB")
            .unwrap_err()
            .starts_with("expected a size"));
        assert!(parse_size("5kb")
            .unwrap_err()
            .starts_with("unknown size unit"));
    }

    #[test]
    fn units_and_percentages_read_as_the_same_points_as_bytes_and_fractions() {
        let bytes = Cdf::parse("2000 0.6\n100000 0.9\n1000000 1\n").unwrap();
        let rich = Cdf::parse("# size  percent\n2KB 60\n100KB, 90\n1MB 100\n").unwrap();
        assert_eq!(rich, bytes);
        assert_eq!(
            rich.points(),
            [(2000, 0.6), (100_000, 0.9), (1_000_000, 1.0)]
        );
        let fields = Cdf::from_fields(&[("2KB", "60"), ("100000", "90"), ("1MB", "100")]);
        assert_eq!(fields.unwrap(), bytes);
        // Percentages only when the last is 100: a last 1 keeps fractions (and 60 is refused).
        let e = Cdf::parse("2KB 60\n1MB 1\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 1: probability must be in [0, 1], got 60"
        );
        let e = Cdf::from_fields(&[("10 parsecs", "1")]).unwrap_err();
        assert!(
            e.to_string().starts_with("point 0: unknown size unit"),
            "{e}"
        );
        let e = Cdf::from_fields(&[("10", "0.5"), ("5", "1")]).unwrap_err();
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
