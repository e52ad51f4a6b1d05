//! The simulator's own captures, read back: the timeouts the analysis finds are the ones the
//! simulator counted, and the incast signature is there exactly when goodput collapsed.

use incast_sim::capture::Points;
use incast_sim::units::from_ms;
use incast_sim::{Scenario, Simulation};
use incast_trace::{analyze, Options, TraceError};

fn capture(sc: Scenario, points: &str, name: &str) -> (incast_sim::Report, String) {
    let path =
        std::env::temp_dir().join(format!("incast-trace-{}-{name}.pcap", std::process::id()));
    let path = path.to_str().unwrap().to_string();
    let mut sim = Simulation::new(sc).unwrap();
    sim.capture(&path, &Points(points.into())).unwrap();
    while !sim.step(u64::MAX).unwrap() {}
    let frames = sim.finish_capture().unwrap().unwrap();
    assert!(frames > 0);
    (sim.report(), path)
}

fn sync_read(n: u32, blocks: u32) -> Scenario {
    let mut sc = Scenario::example(n);
    sc.workload.blocks = blocks;
    sc
}

fn within(found: u64, truth: u64, tol: f64) -> bool {
    (found as f64 - truth as f64).abs() <= tol * truth as f64
}

#[test]
fn the_receivers_capture_counts_the_simulators_timeouts_within_5_percent() {
    let (rep, path) = capture(sync_read(16, 20), "receiver", "rx16");
    assert!(
        rep.timeouts > 20,
        "a collapsing run: {} timeouts",
        rep.timeouts
    );
    let r = analyze(&path, &Options::default(), |_| true).unwrap();
    assert_eq!(r.receiver.as_deref(), Some("10.0.0.17"));
    assert_eq!(r.flows.len(), 16);
    assert_eq!(
        r.flows.iter().map(|f| f.flow).max(),
        Some(15),
        "numbered from 0"
    );
    assert_eq!(r.blocks.len(), 20);
    assert!(
        within(r.rtos, rep.timeouts, 0.05),
        "capture {} vs simulator {}",
        r.rtos,
        rep.timeouts
    );
    assert_eq!(r.goodput_bytes, rep.app_bytes, "every response byte, once");
    assert!(r.incast, "{}", r.verdict);
    std::fs::remove_file(&path).ok();
}

#[test]
fn one_sender_is_not_incast() {
    let (_, path) = capture(sync_read(1, 20), "receiver", "rx1");
    let r = analyze(&path, &Options::default(), |_| true).unwrap();
    assert_eq!(r.flows.len(), 1);
    assert!(!r.incast, "{}", r.verdict);
    std::fs::remove_file(&path).ok();
}

#[test]
fn the_senders_nics_at_a_1ms_rtomin() {
    let mut sc = sync_read(32, 20);
    sc.tcp.rto_min = from_ms(1);
    let (rep, path) = capture(sc, "senders", "port32");
    let opts = Options {
        rto_min_ns: 1_000_000,
        ..Options::default()
    };
    let r = analyze(&path, &opts, |_| true).unwrap();
    // At a 1 ms RTOmin many timeouts fire while recovery is still sending (the timer runs
    // from the last advancing ACK, not the last send): no silence shows them. A NIC's
    // capture has no ACKs to follow the timer by (the hosts' captures do, below); the gap
    // rule finds about two thirds of them, never more than there are. (Before the
    // simulator's captures carried IPv4 identifications, new bytes after a pause were read as
    // a timeout's resend of packets the capture missed and lifted the count to 0.81 (3,760 of
    // 4,668); at a sender's NIC nothing is missed, so those were pauses, and the share read
    // now is 0.68 (3,172).)
    let share = r.rtos as f64 / rep.timeouts as f64;
    assert!(
        (0.6..=1.0).contains(&share),
        "capture {} vs simulator {}",
        r.rtos,
        rep.timeouts
    );
    std::fs::remove_file(&path).ok();
}

/// At a 1 ms RTOmin most timeouts fire while recovery is still sending (no silence shows
/// them). Where the capture also sees the ACKs (tcpdump on the senders' hosts), the timer
/// can be followed: the first unacknowledged segment resent an RTOmin after the ACK last
/// advanced or it was last sent, with no ACK just before to have triggered it, is a timeout.
#[test]
fn the_senders_hosts_count_the_simulators_timeouts_within_5_percent_at_1ms_and_200ms() {
    // (64 senders at 1 ms: 9,038 vs 9,066, left out for the time it takes unoptimized.)
    for (n, seed, blocks, rto_ms) in [(32, 1, 20, 1), (16, 2, 40, 1), (16, 5, 20, 200)] {
        let mut sc = sync_read(n, blocks);
        sc.tcp.rto_min = from_ms(rto_ms);
        sc.seed = seed;
        let hosts: Vec<String> = (0..n).map(|h| format!("host{h}")).collect();
        let (rep, path) = capture(sc, &hosts.join(","), &format!("hosts{n}-{rto_ms}"));
        let opts = Options {
            rto_min_ns: rto_ms * 1_000_000,
            receiver: Some(0x0a00_0001 + n),
            ..Options::default()
        };
        let r = analyze(&path, &opts, |_| true).unwrap();
        assert!(rep.timeouts > 20, "n={n}: a collapsing run");
        assert!(
            within(r.rtos, rep.timeouts, 0.05),
            "n={n}, RTOmin {rto_ms} ms: capture {} vs simulator {}",
            r.rtos,
            rep.timeouts
        );
        std::fs::remove_file(&path).ok();
    }
}

#[test]
fn bad_files_are_one_line_errors() {
    let dir = std::env::temp_dir();
    let p = dir.join(format!("incast-trace-{}-text.pcap", std::process::id()));
    std::fs::write(&p, "hello, not a capture\n").unwrap();
    let e = analyze(p.to_str().unwrap(), &Options::default(), |_| true).unwrap_err();
    assert!(matches!(e, TraceError::NotPcap(_)), "{e}");
    assert!(e.to_string().starts_with("not a pcap or pcapng capture"));

    // A capture cut in the middle of a record: what came before is analysed.
    let (_, path) = capture(sync_read(4, 2), "receiver", "cut");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&p, &bytes[..bytes.len() - 30]).unwrap();
    let r = analyze(p.to_str().unwrap(), &Options::default(), |_| true).unwrap();
    assert!(r.truncated);
    assert!(r.frames > 100);

    // Another link type (LINKTYPE_IEEE802_11 = 105).
    let mut other = bytes.clone();
    other[20..24].copy_from_slice(&105u32.to_le_bytes());
    std::fs::write(&p, &other).unwrap();
    let e = analyze(p.to_str().unwrap(), &Options::default(), |_| true).unwrap_err();
    assert_eq!(e, TraceError::LinkType(105));
    assert!(e.to_string().contains("not supported"));
    std::fs::remove_file(&p).ok();
    std::fs::remove_file(&path).ok();
}
