//! incast-trace: packet captures read as a stream, and incast found in them.
//!
//! ```no_run
//! use incast_trace::{analyze, Options};
//! let report = analyze("run.pcap", &Options::default(), |_| true).unwrap();
//! println!("{}", report.verdict);
//! ```
//!
//! A capture is read one record at a time through a fixed buffer (pcap and pcapng, by
//! pcap-parser), each frame's IPv4/TCP headers sliced in place (etherparse), and folded into
//! per-direction state ([`flows`]) and the receiver's per-interval ingress
//! ([`analysis`]). Memory grows with flows, intervals and the longest block's plot, never
//! with the capture.
#![warn(missing_docs)]

pub mod analysis;
pub mod decode;
pub mod flight;
pub mod flows;
pub mod reader;
pub mod report;
pub mod verdict;

pub use analysis::{Analyzer, Options, Report};

/// Why a capture could not be read; each says it in one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    /// The file cannot be opened or read.
    #[error("cannot read it: {0}")]
    Open(String),
    /// The file is empty.
    #[error("the file is empty, not a capture")]
    Empty,
    /// The file does not start like a capture.
    #[error("not a pcap or pcapng capture (it starts with bytes {:02x} {:02x} {:02x} {:02x})", .0[0], .0[1], .0[2], .0[3])]
    NotPcap([u8; 4]),
    /// It ends before its first record.
    #[error("the capture is truncated after {frames} frames, before any packet")]
    Truncated {
        /// Frames read.
        frames: u64,
    },
    /// A link type the analysis cannot read.
    #[error("link type {0} is not supported; captures must be Ethernet (1), raw IP (101, 228) or Linux cooked (113, 276)")]
    LinkType(i32),
    /// A malformed record.
    #[error("the capture is damaged after {frames} frames: {what}")]
    Corrupt {
        /// Frames read before it.
        frames: u64,
        /// What is wrong.
        what: String,
    },
    /// A read failed midway.
    #[error("reading failed: {0}")]
    Read(String),
    /// The caller stopped the analysis.
    #[error("interrupted")]
    Interrupted,
}

/// Most intervals a capture may span: the analysis keeps one small bin per interval, so a
/// frame stamped hours or years after the first (a damaged timestamp) is an error, not an
/// allocation of gigabytes. 2^22 intervals: 70 minutes at the default 1 ms, about 100 MB.
pub const MAX_INTERVALS: u64 = 1 << 22;

/// Analyze the capture at `path`. `progress(bytes read)` is called now and then; it returns
/// false to stop (then the result is [`TraceError::Interrupted`]).
pub fn analyze(
    path: &str,
    opts: &Options,
    mut progress: impl FnMut(u64) -> bool,
) -> Result<Report, TraceError> {
    let (receiver, inferred) = match opts.receiver {
        Some(r) => (Some(r), false),
        None => (infer_receiver(path)?, true),
    };
    let mut a = Analyzer::new(opts.clone(), receiver, inferred);
    let go_on = std::cell::Cell::new(true);
    let mut first: Option<u64> = None;
    let mut last = 0u64;
    let mut frames = 0u64;
    let mut too_long: Option<TraceError> = None;
    let most_ns = MAX_INTERVALS.saturating_mul(opts.interval_ns.max(1));
    let summary = reader::for_each_frame(
        path,
        |f| {
            // A frame stamped before the one read before it (a clock step, merged captures)
            // counts at that one's time: the analysis takes times in file order, never back.
            let t0 = *first.get_or_insert(f.t_ns);
            let t = f.t_ns.max(last);
            last = t;
            if t - t0 > most_ns {
                too_long = Some(TraceError::Corrupt {
                    frames,
                    what: format!(
                        "a frame {:.0} s after the first, more than {MAX_INTERVALS} intervals                          (use a coarser --interval)",
                        (t - t0) as f64 / 1e9
                    ),
                });
                return false;
            }
            frames += 1;
            match decode::tcp_segment(f) {
                Some(s) => a.segment(t, f.orig_len, &s),
                None => a.other_frame(t),
            }
            go_on.get()
        },
        |bytes| go_on.set(progress(bytes)),
    )?;
    if let Some(e) = too_long {
        return Err(e);
    }
    if !go_on.get() {
        return Err(TraceError::Interrupted);
    }
    Ok(a.finish(summary.truncated))
}

/// The address that receives the most TCP payload in the capture's first
/// [`analysis::AUTO_RECEIVER_NS`] (or its first million frames): a short first pass, so the
/// full one knows whose link to follow from its first frame.
pub fn infer_receiver(path: &str) -> Result<Option<u32>, TraceError> {
    let mut bytes: rustc_hash::FxHashMap<u32, u64> = Default::default();
    let mut t0 = None;
    let mut n = 0u64;
    reader::for_each_frame(
        path,
        |f| {
            let t0 = *t0.get_or_insert(f.t_ns);
            if let Some(s) = decode::tcp_segment(f) {
                *bytes.entry(s.dst).or_default() += s.len as u64;
            }
            n += 1;
            f.t_ns.saturating_sub(t0) < analysis::AUTO_RECEIVER_NS && n < 1_000_000
        },
        |_| {},
    )?;
    Ok(bytes
        .into_iter()
        .filter(|&(_, b)| b > 0)
        .max_by_key(|&(ip, b)| (b, std::cmp::Reverse(ip)))
        .map(|(ip, _)| ip))
}
