use super::*;

/// A test's random streams: SplitMix64 seeded by the stream (a stand-in for the simulator's
/// named streams; any good generator does for these checks).
fn streams(seed: u64) -> impl FnMut(Source) -> Box<dyn FnMut() -> u64> {
    move |s| {
        let mut x = seed
            ^ match s {
                Source::Host(h) => 0x1000 + h as u64,
                Source::Incast => 0x2000,
            }
            .wrapping_mul(0xD1B5_4A32_D192_ED03);
        Box::new(move || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        })
    }
}

const GBPS10: u64 = 10_000_000_000;
const S: u64 = 1_000_000_000_000;

fn plan(cdf: &Cdf, load: f64, incast: Option<Incast>, until: Until) -> Plan<'_> {
    Plan {
        hosts: 16,
        link_bps: GBPS10,
        load,
        sizes: cdf,
        incast,
        until,
    }
}

const HPCC_INCAST: Incast = Incast {
    load: 0.02,
    fan_in: 60,
    bytes: 500_000,
};

#[test]
fn the_background_offers_rho_of_every_host_link_over_a_long_window() {
    let web = Cdf::builtin("websearch").unwrap();
    let flows = schedule(&plan(&web, 0.3, None, Until::Time(10 * S)), streams(1));
    // ~31,000 flows of a heavy-tailed size (coefficient of variation ~2.4): the offered load's
    // standard error is sqrt((1 + 2.4^2) / 31,000) ~ 1.5%, so 4.5% is a 3-sigma bound.
    let rho = offered_bps(&flows, false, 10 * S) / (16.0 * GBPS10 as f64);
    assert!((rho / 0.3 - 1.0).abs() < 0.045, "offered {rho}");
    // Every host sends, and to another host: each count is Poisson around n, within 4 sigma.
    assert!(flows.iter().all(|f| f.src != f.dst && f.dst < 16));
    let n = 10.0 * 0.3 * GBPS10 as f64 / (web.mean() * 8.0);
    let near = |c: usize| (c as f64 - n).abs() < 4.0 * n.sqrt();
    for h in 0..16 {
        let sent = flows.iter().filter(|f| f.src == h).count();
        let got = flows.iter().filter(|f| f.dst == h).count();
        assert!(
            near(sent) && near(got),
            "{h}: {sent} {got}, expected {n:.0}"
        );
    }
    assert!(flows.windows(2).all(|w| w[0].start <= w[1].start));
}

#[test]
fn each_hosts_inter_arrivals_are_exponential_by_kolmogorov_smirnov() {
    let web = Cdf::builtin("websearch").unwrap();
    let flows = schedule(&plan(&web, 0.3, None, Until::Time(10 * S)), streams(2));
    let mean = web.mean() * 8.0 / (0.3 * GBPS10 as f64) * 1e12;
    for h in [0, 7, 15] {
        let starts: Vec<u64> = flows
            .iter()
            .filter(|f| f.src == h)
            .map(|f| f.start)
            .collect();
        let mut gaps: Vec<f64> = starts.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
        gaps.sort_by(f64::total_cmp);
        let n = gaps.len() as f64;
        let d = gaps
            .iter()
            .enumerate()
            .map(|(i, &g)| {
                let f = 1.0 - (-g / mean).exp();
                (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
            })
            .fold(0.0, f64::max);
        // KS critical value at a 0.1% level: 1.95 / sqrt(n).
        assert!(d < 1.95 / n.sqrt(), "host {h}: D = {d} over {n} gaps");
        let m = gaps.iter().sum::<f64>() / n;
        let var = gaps.iter().map(|g| (g - m).powi(2)).sum::<f64>() / n;
        assert!(
            (m / mean - 1.0).abs() < 0.08,
            "host {h}: mean gap {m} vs {mean}"
        );
        assert!(
            (var.sqrt() / m - 1.0).abs() < 0.1,
            "host {h}: coefficient of variation"
        );
    }
}

#[test]
fn incast_bursts_offer_their_share_of_the_capacity_n_distinct_senders_at_once() {
    let web = Cdf::builtin("websearch").unwrap();
    let inc = Incast {
        fan_in: 15,
        ..HPCC_INCAST
    };
    let flows = schedule(
        &plan(&web, 0.0, Some(inc), Until::Time(100 * S)),
        streams(3),
    );
    // ~5,300 bursts: the count's standard error is ~1.4%, so 5% is a 3.5-sigma bound.
    let share = offered_bps(&flows, true, 100 * S) / (16.0 * GBPS10 as f64);
    assert!((share / 0.02 - 1.0).abs() < 0.05, "incast share {share}");
    let bursts = match flows.last().unwrap().class {
        Class::Incast(b) => b + 1,
        Class::Background => panic!("no background was asked for"),
    };
    assert_eq!(flows.len(), 15 * bursts as usize);
    for b in 0..bursts {
        let fl: Vec<&FlowSpec> = flows
            .iter()
            .filter(|f| f.class == Class::Incast(b))
            .collect();
        assert_eq!(fl.len(), 15);
        let mut senders: Vec<u32> = fl.iter().map(|f| f.src).collect();
        senders.sort_unstable();
        senders.dedup();
        assert_eq!(senders.len(), 15, "burst {b}: distinct senders");
        assert!(fl.iter().all(|f| f.dst == fl[0].dst && f.src != f.dst));
        assert!(fl
            .iter()
            .all(|f| f.start == fl[0].start && f.bytes == 500_000));
    }
    // Receivers are spread over every host.
    let mut rx = [0u32; 16];
    for f in flows.iter().filter(|f| f.src == 0 || f.dst == 0) {
        rx[f.dst as usize] += 1;
    }
    assert!(rx.iter().all(|&n| n > 0));
}

#[test]
fn a_fan_in_above_the_other_hosts_takes_every_other_host() {
    let web = Cdf::builtin("websearch").unwrap();
    let flows = schedule(
        &plan(&web, 0.0, Some(HPCC_INCAST), Until::Time(S / 10)),
        streams(4),
    );
    assert!(!flows.is_empty());
    assert!(flows.iter().filter(|f| f.class == Class::Incast(0)).count() == 15);
}

#[test]
fn a_flow_count_ends_the_background_and_the_bursts_run_through_its_span() {
    let hadoop = Cdf::builtin("hadoop").unwrap();
    let p = plan(&hadoop, 0.3, Some(HPCC_INCAST), Until::Flows(5000));
    let flows = schedule(&p, streams(5));
    let bg = flows
        .iter()
        .filter(|f| f.class == Class::Background)
        .count();
    assert_eq!(bg, 5000);
    let last_bg = flows
        .iter()
        .filter(|f| f.class == Class::Background)
        .map(|f| f.start)
        .max();
    assert!(flows.iter().all(|f| f.start <= last_bg.unwrap()));
    assert!(flows.iter().any(|f| f.class != Class::Background));
}

#[test]
fn the_same_streams_give_the_same_schedule_and_hosts_draw_apart() {
    let web = Cdf::builtin("websearch").unwrap();
    let p = plan(&web, 0.3, Some(HPCC_INCAST), Until::Time(S / 100));
    assert_eq!(schedule(&p, streams(9)), schedule(&p, streams(9)));
    assert_ne!(schedule(&p, streams(9)), schedule(&p, streams(10)));
    // Host 3's background does not depend on the other hosts' draws.
    let mine = |flows: Vec<FlowSpec>| -> Vec<FlowSpec> {
        flows
            .into_iter()
            .filter(|f| f.src == 3 && f.class == Class::Background)
            .collect()
    };
    let alone = Plan { incast: None, ..p };
    assert_eq!(
        mine(schedule(&p, streams(9))),
        mine(schedule(&alone, streams(9)))
    );
}

#[test]
fn nothing_is_scheduled_without_load() {
    let web = Cdf::builtin("websearch").unwrap();
    assert!(schedule(&plan(&web, 0.0, None, Until::Time(S)), streams(1)).is_empty());
}
