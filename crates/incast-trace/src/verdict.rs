//! The verdict line of a capture's analysis, and the stalls it names beside the timeouts:
//! a block's silence of at least half the RTOmin (from its request or its last data segment,
//! any flow's) that ends in a segment the analysis does not take for a timeout. The block
//! waited a timer's time while the timeout count says nothing of it: a tail-loss probe Linux
//! caps at the RTO, a delayed-ACK or pacing stall. The simulator counts its `probe_stalls`
//! the same way, at its client (a block delivering nothing for RTOmin/2 with no RTO).

use crate::analysis::{Episode, Options, Report};

/// Whether a block's data segment at `t_ns`, after its silence since `since_ns`, ends a
/// probe stall: the silence lasted half the RTOmin or more and the segment is no timeout's.
#[inline]
pub(crate) fn ends_stall(since_ns: u64, t_ns: u64, rto_min_ns: u64, rto_event: bool) -> bool {
    let half = rto_min_ns / 2;
    !rto_event && half > 0 && t_ns.saturating_sub(since_ns) >= half
}

fn fmt_rate(bps: f64) -> String {
    if bps >= 1e9 {
        format!("{:.2} Gbps", bps / 1e9)
    } else if bps >= 1e6 {
        format!("{:.1} Mbps", bps / 1e6)
    } else {
        format!("{:.1} kbps", bps / 1e3)
    }
}

fn fmt_time(ns: u64) -> String {
    if ns >= 1_000_000 && ns / 1_000_000 * 1_000_000 == ns {
        format!("{} ms", ns / 1_000_000)
    } else {
        format!("{} us", ns / 1000)
    }
}

/// The verdict line: the incast signature or its absence, then any probe stalls.
pub(crate) fn verdict(r: &Report, o: &Options) -> String {
    let mut line = signature(r, o);
    if r.probe_stalls > 0 {
        // A wait the timeout count cannot show, said so that "no timeouts" does not read as
        // "no stalls".
        let stalled = r.blocks.iter().filter(|b| b.probe_stalls > 0).count();
        line += &format!(
            "; {stalled} of {} blocks waited {} or more without a timeout (probe stalls)",
            r.blocks.len(),
            fmt_time(o.rto_min_ns / 2)
        );
    }
    line
}

/// The incast signature (synchronized timeouts over an idle link) or its absence.
fn signature(r: &Report, o: &Options) -> String {
    let rto = fmt_time(o.rto_min_ns);
    let peak1 = r
        .rates
        .iter()
        .find(|x| x.window_ns == 1_000_000)
        .map_or(0.0, |x| x.peak_bps);
    let share = if peak1 > 0.0 {
        format!(
            "goodput {} = {:.0}% of the peak 1 ms ingress {}",
            fmt_rate(r.goodput_bps),
            100.0 * r.goodput_bps / peak1,
            fmt_rate(peak1)
        )
    } else {
        format!("goodput {}", fmt_rate(r.goodput_bps))
    };
    let sync: Vec<&Episode> = r.episodes.iter().filter(|e| e.synchronized).collect();
    if let Some(big) = sync.iter().max_by_key(|e| e.flows) {
        format!(
            "incast: {} synchronized-timeout episode{} (up to {} of {} flows timed out within \
             one RTOmin of {rto} while the receiver's link idled {:.0}% of the RTOmin before); {share}",
            sync.len(),
            if sync.len() == 1 { "" } else { "s" },
            big.flows,
            r.flows.len(),
            100.0 * big.idle_before,
        )
    } else if r.rtos > 0 {
        format!(
            "no incast signature: {} timeout{} but never {} or more flows within one RTOmin \
             of {rto} over an idle link; {share}",
            r.rtos,
            if r.rtos == 1 { "" } else { "s" },
            o.min_flows
        )
    } else {
        format!("no incast signature: no timeouts (idle gaps >= RTOmin of {rto}); {share}")
    }
}
