//! The words of a capture's verdict (times, rates) and the stalls it names beside the
//! timeouts, over plain numbers (the analysis composes the line). A probe stall is a block's
//! silence of at least half the RTOmin (from its request or its last data segment,
//! any flow's) that ends in a segment the analysis does not take for a timeout. The block
//! waited a timer's time while the timeout count says nothing of it: a tail-loss probe Linux
//! caps at the RTO, a delayed-ACK or pacing stall. The simulator counts its `probe_stalls`
//! the same way, at its client (a block delivering nothing for RTOmin/2 with no RTO).

/// Whether a block's data segment at `t_ns`, after its silence since `since_ns`, ends a
/// probe stall: the silence lasted half the RTOmin or more and the segment is no timeout's.
#[inline]
pub(crate) fn ends_stall(since_ns: u64, t_ns: u64, rto_min_ns: u64, rto_event: bool) -> bool {
    let half = rto_min_ns / 2;
    !rto_event && half > 0 && t_ns.saturating_sub(since_ns) >= half
}

pub(crate) fn fmt_rate(bps: f64) -> String {
    if bps >= 1e9 {
        format!("{:.2} Gbps", bps / 1e9)
    } else if bps >= 1e6 {
        format!("{:.1} Mbps", bps / 1e6)
    } else {
        format!("{:.1} kbps", bps / 1e3)
    }
}

pub(crate) fn fmt_time(ns: u64) -> String {
    if ns >= 1_000_000 && ns / 1_000_000 * 1_000_000 == ns {
        format!("{} ms", ns / 1_000_000)
    } else {
        format!("{} us", ns / 1000)
    }
}

/// The verdict's clause for `stalled` of `blocks` blocks with probe stalls (none: empty),
/// said so that "no timeouts" does not read as "no stalls".
pub(crate) fn stall_clause(stalled: usize, blocks: usize, rto_min_ns: u64) -> String {
    if stalled == 0 {
        return String::new();
    }
    format!(
        "; {stalled} of {blocks} blocks waited {} or more without a timeout (probe stalls)",
        fmt_time(rto_min_ns / 2)
    )
}
