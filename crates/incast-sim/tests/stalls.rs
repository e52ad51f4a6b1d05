//! Stalls without a timeout (`probe_stalls`) end to end: Linux's loss probe capped at the RTO
//! is counted as its own kind, and a classic collapse's RTOs are not counted as stalls.

use incast_sim::{Report, Scenario, Simulation};

/// The issue's case: two senders of 64 KB per block into a 32 KB port at 100 Mbps, RTOmin
/// 200 ms, 30 blocks, with TCP `profile` and `cc`.
fn small_fan_in(profile: &str, cc: &str) -> Report {
    let text = format!(
        r#"{{"topology": {{"senders": 2, "link": 100000000, "buffer": {{"bytes": 32000}}}},
             "tcp": {{"profile": "{profile}", "congestion_control": "{cc}"}},
             "workload": {{"sru": 64000, "blocks": 30}}}}"#
    );
    let sc = Scenario::from_json(&text).unwrap();
    Simulation::new(sc).unwrap().run().unwrap()
}

const HALF_RTO_MIN: u64 = 100_000_000_000; // 100 ms in picoseconds

#[test]
fn linux_bbr_waits_for_probes_capped_at_the_rto_and_they_are_counted_as_stalls() {
    let r = small_fan_in("linux", "bbr");
    assert_eq!((r.timeouts, r.retx_timeout), (0, 0), "no RTO fired");
    assert!(r.loss_probes > 0);
    let long = r.block_times.iter().filter(|&&t| t >= HALF_RTO_MIN).count();
    assert!(long >= 10, "the case stalls: {long} of 30 blocks >= 100 ms");
    assert_eq!(r.block_probe_stalls.len(), r.block_times.len());
    for (i, (&t, &stalls)) in r.block_times.iter().zip(&r.block_probe_stalls).enumerate() {
        // Without a timeout, a block that long waited half an RTOmin somewhere; a short
        // one cannot have.
        assert_eq!(
            stalls > 0,
            t >= HALF_RTO_MIN,
            "block {i}: {t} ps, {stalls} stalls"
        );
    }
    assert_eq!(
        r.probe_stalls,
        r.block_probe_stalls.iter().map(|&n| n as u64).sum::<u64>()
    );
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["probe_stalls"], r.probe_stalls);
}

#[test]
fn a_classic_collapse_counts_its_rtos_as_timeouts_and_none_as_a_stall() {
    let r = small_fan_in("classic", "cubic");
    assert!(r.timeouts > 0, "the papers' kernels wait out RTOs");
    let long = r.block_times.iter().filter(|&&t| t >= HALF_RTO_MIN).count();
    let with_rto = r.block_timeouts.iter().filter(|&&n| n > 0).count();
    assert_eq!(long, with_rto, "every long block is a timeout's");
    assert_eq!(r.probe_stalls, 0);
    // Serialized as before: a run without stalls carries neither field.
    let json = serde_json::to_value(&r).unwrap();
    assert!(json.get("probe_stalls").is_none());
    assert!(json.get("block_probe_stalls").is_none());
}
