//! Short flows beside an incast (`workload.short_load` > 0): Poisson arrivals of short
//! responses, each from a random server to the incast's receiver, while the incast or the
//! synchronized read runs. Their sizes follow the queries workload's keys
//! (`workload.query_size_min`/`max`/`cdf`), at most `workload.queries` of them, and they stop
//! arriving when the application finishes. The load is a share of the receiver's link, as the
//! queries workload's (`workload.query_load`).
//!
//! For the TCP family this wraps the application ([`Beside`]): the short flows are extra
//! connections after the application's, written when they arrive; they never count towards a
//! block. The message transports take the same arrivals ([`arrivals`]) into their message plan.

use crate::app::flows::ideal_fct;
use crate::app::size_dist::SizeDist;
use crate::app::{App, Effect, Token, View};
use crate::config::Scenario;
use crate::ids::{ConnId, EndpointId};
use crate::report::{Report, ShortFlows};
use crate::rng::{Rng, Stream};
use crate::topology::Network;
use crate::units::SimTime;

/// [`Token::kind`] of a short flow's arrival, apart from any application's kinds.
const ARRIVE: u32 = 0x5348;

/// One short flow: from server `server` (its index), `bytes`, arriving `at` after the
/// workload's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShortSpec {
    /// Sending server, its index among the senders.
    pub server: u32,
    /// Bytes.
    pub bytes: u64,
    /// Arrival, after the workload's start.
    pub at: SimTime,
}

/// The short flows of `sc` (none unless `workload.short_load` > 0), in arrival order, drawn
/// from their own random stream: exponential gaps of mean size · 8 / (load · receiver link).
pub fn arrivals(sc: &Scenario) -> Vec<ShortSpec> {
    let w = &sc.workload;
    if w.short_load <= 0.0 {
        return Vec::new();
    }
    let sizes = if w.query_size_cdf.is_empty() {
        SizeDist::Uniform(w.query_size_min, w.query_size_max)
    } else {
        SizeDist::Cdf(w.query_size_cdf.clone())
    };
    let rate = w.short_load * sc.topology.receiver_link as f64 / (8.0 * sizes.mean());
    let mut rng = Rng::stream(sc.seed, Stream::Short);
    let mut t = 0.0f64;
    (0..w.queries)
        .map(|_| {
            let u = rng.unit();
            t += -(1.0 - u).ln() / rate * 1e12;
            let server = rng.up_to(u64::from(sc.topology.senders) - 1) as u32;
            ShortSpec {
                server,
                bytes: sizes.sample(&mut rng),
                at: t as SimTime,
            }
        })
        .collect()
}

/// What became of one short flow by the run's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// It had not arrived when the application finished: it never started.
    Unborn,
    /// It started and was still running at the run's end, this long after its arrival.
    Running(SimTime),
    /// It completed, this long after its arrival.
    Done(SimTime),
}

impl Fate {
    /// The fate of a flow that arrived at `arrival` (`None`: not yet) and completed at `done`
    /// (both absolute), the run ending at `now`.
    pub fn of(arrival: Option<SimTime>, done: Option<SimTime>, now: SimTime) -> Fate {
        match (arrival, done) {
            (None, _) => Fate::Unborn,
            (Some(a), Some(d)) => Fate::Done(d - a),
            (Some(a), None) => Fate::Running(now.saturating_sub(a)),
        }
    }
}

/// The summary of the short flows of a run: each flow's (sending host, bytes, fate); ideal
/// times from `net` with segments and headers of `mss_header` bytes.
///
/// The percentiles are over every flow that started: one still running at the run's end
/// counts at its age then, a lower bound of its completion time, so while any is
/// `unfinished` the percentiles are lower bounds too (an order statistic never falls when a
/// sample grows). Leaving those flows out instead would drop exactly the slowest ones.
pub fn summary(
    flows: impl Iterator<Item = (u32, u64, Fate)>,
    net: &Network,
    (mss, header): (u64, u64),
) -> ShortFlows {
    // (bytes, completion time or age, ideal time, done).
    let mut all: Vec<(u64, SimTime, SimTime, bool)> = Vec::new();
    for (a, bytes, fate) in flows {
        let (t, done) = match fate {
            Fate::Unborn => continue,
            Fate::Running(age) => (age, false),
            Fate::Done(fct) => (fct, true),
        };
        let ideal = ideal_fct(net, a, net.receiver, bytes, mss, header);
        all.push((bytes, t, ideal, done));
    }
    let mut t: Vec<SimTime> = all.iter().map(|d| d.1).collect();
    t.sort_unstable();
    let slowdown = |d: &(u64, SimTime, SimTime, bool)| d.1 as f64 / d.2.max(1) as f64;
    let mut sd: Vec<f64> = all.iter().map(slowdown).collect();
    sd.sort_by(f64::total_cmp);
    let q = |n: usize, p: f64| ((p * n as f64).ceil() as usize).clamp(1, n.max(1)) - 1;
    let done: Vec<_> = all.iter().filter(|d| d.3).collect();
    ShortFlows {
        started: all.len() as u32,
        completed: done.len() as u32,
        unfinished: (all.len() - done.len()) as u32,
        p50: (!t.is_empty()).then(|| t[q(t.len(), 0.5)]),
        p99: (!t.is_empty()).then(|| t[q(t.len(), 0.99)]),
        slowdown_p50: (!sd.is_empty()).then(|| sd[q(sd.len(), 0.5)]),
        slowdown_p99: (!sd.is_empty()).then(|| sd[q(sd.len(), 0.99)]),
        min_slowdown: done.iter().map(|d| slowdown(d)).min_by(f64::total_cmp),
        fcts: done.iter().map(|d| (d.0, d.1)).collect(),
    }
}

/// An application with short flows beside it: connections `base..` are the short flows'.
#[derive(Debug)]
pub struct Beside {
    inner: Box<dyn App>,
    base: u32,
    specs: Vec<ShortSpec>,
    fct: Vec<Option<SimTime>>,
    start: SimTime,
    /// Short flows started so far (they start in order).
    started: u32,
    /// The application has finished: no more short flows start.
    finished: bool,
    mss_header: (u64, u64),
}

impl Beside {
    /// `inner` with the short flows of `sc` beside it (the segment size and header of the
    /// ideal completion times: `mss_header`).
    pub fn new(sc: &Scenario, inner: Box<dyn App>, mss_header: (u64, u64)) -> Beside {
        let specs = arrivals(sc);
        Beside {
            base: inner.connections(),
            inner,
            fct: vec![None; specs.len()],
            specs,
            start: 0,
            started: 0,
            finished: false,
            mss_header,
        }
    }

    /// The short flow of `conn`, if it is one.
    fn short(&self, conn: ConnId) -> Option<usize> {
        conn.0.checked_sub(self.base).map(|i| i as usize)
    }

    /// Ask for the next arrival, if one is left and the application runs.
    fn next(&self, out: &mut Vec<Effect>) {
        if let Some(s) = self.specs.get(self.started as usize) {
            if !self.finished {
                out.push(Effect::Wake {
                    at: self.start + s.at,
                    token: Token {
                        kind: ARRIVE,
                        arg: self.started,
                    },
                });
            }
        }
    }

    /// Note an application's finish among `out[from..]`.
    fn watch(&mut self, out: &[Effect], from: usize) {
        if out[from..].iter().any(|e| matches!(e, Effect::Finished)) {
            self.finished = true;
        }
    }
}

impl App for Beside {
    fn connections(&self) -> u32 {
        self.base + self.specs.len() as u32
    }

    fn ends(&self, conn: ConnId, net: &Network) -> (u32, u32) {
        match self.short(conn) {
            Some(i) => (net.host(self.specs[i].server), net.receiver),
            None => self.inner.ends(conn, net),
        }
    }

    fn start(&mut self, now: SimTime, out: &mut Vec<Effect>) {
        self.start = now;
        let from = out.len();
        self.inner.start(now, out);
        self.watch(out, from);
        self.next(out);
    }

    fn wake(&mut self, token: Token, now: SimTime, view: &dyn View, out: &mut Vec<Effect>) {
        if token.kind != ARRIVE {
            let from = out.len();
            self.inner.wake(token, now, view, out);
            self.watch(out, from);
            return;
        }
        let i = token.arg as usize;
        out.push(Effect::Write {
            ep: ConnId(self.base + token.arg).sender(),
            bytes: self.specs[i].bytes,
        });
        self.started += 1;
        self.next(out);
    }

    fn fill(&mut self, slot: u32, view: &dyn View, out: &mut Vec<Effect>) {
        self.inner.fill(slot, view, out);
    }

    fn every_segment(&self) -> bool {
        self.inner.every_segment()
    }

    fn on_segment(
        &mut self,
        ep: EndpointId,
        delivered: u64,
        received: u64,
        now: SimTime,
        out: &mut Vec<Effect>,
    ) {
        match self.short(ep.conn()) {
            Some(i) => {
                let s = self.specs[i];
                if !ep.is_sender() && received >= s.bytes && self.fct[i].is_none() {
                    self.fct[i] = Some(now - (self.start + s.at));
                }
            }
            None => {
                let from = out.len();
                self.inner.on_segment(ep, delivered, received, now, out);
                self.watch(out, from);
            }
        }
    }

    fn counts_rx(&self) -> bool {
        self.inner.counts_rx()
    }

    fn on_rx(&mut self, host: u32, now: SimTime, wire: u64) {
        self.inner.on_rx(host, now, wire);
    }

    fn add_timeouts(&mut self, conn: ConnId, k: u64) {
        if self.short(conn).is_none() {
            self.inner.add_timeouts(conn, k);
        }
    }

    fn add_client_timeouts(&mut self, conn: ConnId, k: u64) {
        if self.short(conn).is_none() {
            self.inner.add_client_timeouts(conn, k);
        }
    }

    fn series_origin(&self) -> SimTime {
        self.inner.series_origin()
    }

    fn fct(&self, conn: ConnId) -> Option<SimTime> {
        match self.short(conn) {
            Some(i) => self.fct[i],
            None => self.inner.fct(conn),
        }
    }

    fn span(&self, view: &dyn View, now: SimTime) -> (SimTime, SimTime, u64) {
        self.inner.span(view, now)
    }

    fn link_bps(&self, sc: &Scenario) -> u64 {
        self.inner.link_bps(sc)
    }

    fn report(&self, view: &dyn View, now: SimTime, r: &mut Report) {
        self.inner.report(view, now, r);
        // The short flows are reported apart: the flows stay the application's (and the
        // background's), whose last completion is the incast's.
        let short = self.base..self.connections();
        r.flows.retain(|f| !short.contains(&f.flow));
        let net = view.net();
        let flows = (self.specs.iter().zip(&self.fct).enumerate()).map(|(i, (s, f))| {
            let arrival = (i < self.started as usize).then_some(self.start + s.at);
            let fate = Fate::of(arrival, f.map(|f| self.start + s.at + f), now);
            (net.host(s.server), s.bytes, fate)
        });
        r.short_flows = Some(summary(flows, net, self.mss_header));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Simulation;

    /// A 16:1 incast of 64 KB at 10 Gbps over `transport`, short flows at `load` (RoCE's
    /// lossless ports with room for PFC's headroom).
    fn scenario(transport: &str, load: f64) -> Scenario {
        let buffer = match transport {
            "roce" => r#""buffer": {"bytes": 1000000, "packets": null},"#,
            _ => "",
        };
        // The classic profile: these tests count flows, and its ACK-every-segment TCP keeps the
        // incast's end (when short arrivals stop) where they were written against.
        let text = format!(
            r#"{{"transport": "{transport}", "tcp": {{"profile": "classic"}},
                "workload": {{"kind": "incast", "flow_size": 64000, "short_load": {load},
                              "query_size_min": 2000, "query_size_max": 20000}},
                "topology": {{"senders": 16, "link": 10000000000, {buffer}
                              "receiver_link": 10000000000}}}}"#
        );
        Scenario::from_json(&text).unwrap()
    }

    fn run(sc: Scenario) -> Report {
        Simulation::new(sc).and_then(|s| s.run()).unwrap()
    }

    #[test]
    fn arrivals_follow_the_seed_and_the_load() {
        let sc = scenario("tcp", 0.2);
        let a = arrivals(&sc);
        assert_eq!(a.len(), sc.workload.queries as usize);
        assert_eq!(a, arrivals(&sc));
        let mut other = sc.clone();
        other.seed += 1;
        assert_ne!(a, arrivals(&other));
        assert!(a.windows(2).all(|w| w[0].at <= w[1].at));
        assert!(a
            .iter()
            .all(|s| s.server < 16 && (2000..=20000).contains(&s.bytes)));
        // 1000 arrivals of 11 KB on average at 0.2 of 10 Gbps: 44 ms expected, within 10%.
        let last = a.last().unwrap().at as f64 / 1e12;
        assert!((last / 44e-3 - 1.0).abs() < 0.1, "{last}");
        assert!(arrivals(&scenario("tcp", 0.0)).is_empty());
    }

    /// Every transport carries them; the scenario's own fabric for RoCE (lossless, no
    /// congestion control) and NDP's trimming switches come with the transport.
    const TRANSPORTS: [&str; 6] = ["tcp", "swift", "homa", "eqds", "ndp", "roce"];

    #[test]
    fn each_transport_reports_a_short_flow_tail_never_below_ideal() {
        for transport in TRANSPORTS {
            let r = run(scenario(transport, 0.2));
            let s = r.short_flows.as_ref().expect(transport);
            assert!(
                s.completed > 5 && s.completed + s.unfinished == s.started,
                "{transport}: {:?}",
                (s.started, s.completed, s.unfinished)
            );
            assert!(
                s.min_slowdown.unwrap() >= 1.0,
                "{transport}: {:?}",
                s.min_slowdown
            );
            assert!(s.p50 <= s.p99 && s.p99.is_some(), "{transport}");
            assert_eq!(s.fcts.len(), s.completed as usize);
            // The short flows are apart: the flows are the incast's 16.
            assert_eq!(r.flows.len(), 16, "{transport}");
            assert!(r.flows.iter().all(|f| f.fct.is_some()), "{transport}");
            assert_eq!(
                r,
                run(scenario(transport, 0.2)),
                "{transport}: deterministic"
            );
        }
    }

    #[test]
    fn ndp_and_roce_short_flows_finish_near_their_ideal_beside_an_incast_that_leaves_room() {
        // Four 2 MB flows on 10 Gbps links into a 100 Gbps receiver: the receiver's port is
        // mostly idle, so a short flow waits only at its server's NIC, behind at most what
        // its incast flow has there (NDP: a pulled packet; RoCE: one packet in the NIC).
        for transport in ["ndp", "roce"] {
            let mut sc = scenario(transport, 0.05);
            sc.topology.senders = 4;
            sc.topology.receiver_link = 100_000_000_000;
            sc.workload.flow_size = Some(2_000_000);
            let s = run(sc).short_flows.unwrap();
            let sd = (s.slowdown_p50.unwrap(), s.slowdown_p99.unwrap());
            assert!(s.started > 100, "{transport}: {}", s.started);
            assert!(
                s.unfinished * 20 < s.started,
                "{transport}: {}",
                s.unfinished
            );
            assert!(
                sd.0 >= 1.0 && sd.0 < 1.3 && sd.1 < 2.5,
                "{transport}: {sd:?}"
            );
        }
    }

    #[test]
    fn the_same_seed_gives_every_transport_the_same_short_flows() {
        // The arrivals are the scenario's, not the transport's: the same flows (sizes, in
        // order) start under each, as many as arrive before its incast ends.
        let sizes = |t: &str| {
            let r = run(scenario(t, 0.2));
            let s = r.short_flows.unwrap();
            let all: Vec<u64> = arrivals(&scenario(t, 0.2))
                .iter()
                .map(|a| a.bytes)
                .collect();
            (s.started, all[..s.started as usize].to_vec(), s.fcts)
        };
        let (n_tcp, tcp, _) = sizes("tcp");
        for t in ["ndp", "roce"] {
            let (n, got, fcts) = sizes(t);
            let k = n.min(n_tcp) as usize;
            assert_eq!(got[..k], tcp[..k], "{t}");
            // Completed flows carry their own sizes, among the arrivals.
            assert!(fcts.iter().all(|(b, _)| got.contains(b)), "{t}");
        }
    }

    #[test]
    fn unfinished_flows_count_at_their_age_a_lower_bound() {
        let net = Network::build(&scenario("tcp", 0.2));
        let host = net.host(0);
        let ms = crate::units::from_ms;
        // 99 done in 1..=99 ms, one still running at 500 ms, one that never arrived.
        let mut flows: Vec<(u32, u64, Fate)> =
            (1..100).map(|i| (host, 2000, Fate::Done(ms(i)))).collect();
        flows.push((host, 2000, Fate::Running(ms(500))));
        flows.push((host, 2000, Fate::Unborn));
        let s = summary(flows.into_iter(), &net, (1448, 52));
        assert_eq!((s.started, s.completed, s.unfinished), (100, 99, 1));
        // Nearest rank over 100: the 99th is the 99 ms flow, the running one is the 100th.
        assert_eq!(s.p99, Some(ms(99)));
        assert_eq!(s.p50, Some(ms(50)));
        assert_eq!(s.fcts.len(), 99);
        // Over the finished flows alone the tail would hide it: with a second one running
        // it reaches the p99 (lower bound: its age).
        let two: Vec<(u32, u64, Fate)> = (1..99)
            .map(|i| (host, 2000, Fate::Done(ms(i))))
            .chain([(host, 2000, Fate::Running(ms(500))); 2])
            .collect();
        let s = summary(two.into_iter(), &net, (1448, 52));
        assert_eq!((s.unfinished, s.p99), (2, Some(ms(500))));
        // An unfinished flow's slowdown counts in the percentiles, not in the minimum.
        assert!(s.slowdown_p99.unwrap() > s.min_slowdown.unwrap());
        assert_eq!(Fate::of(None, None, 9), Fate::Unborn);
        assert_eq!(Fate::of(Some(3), None, 9), Fate::Running(6));
        assert_eq!(Fate::of(Some(3), Some(5), 9), Fate::Done(2));
    }

    #[test]
    fn flows_running_when_the_incast_ends_are_counted_unfinished() {
        // Short flows at half the link, one every 18 µs on average: arrivals keep coming
        // until the incast's last byte, so some are on their way when it ends.
        for transport in ["tcp", "ndp", "roce"] {
            let s = run(scenario(transport, 0.5)).short_flows.unwrap();
            let counts = (s.started, s.completed, s.unfinished);
            assert!(s.unfinished > 0, "{transport}: {counts:?}");
            assert_eq!(s.completed + s.unfinished, s.started, "{transport}");
        }
    }

    #[test]
    fn off_leaves_the_report_as_it_was() {
        let r = run(scenario("tcp", 0.0));
        assert!(r.short_flows.is_none());
        let json = serde_json::to_string(&r).unwrap();
        assert!(!json.contains("short_flows"));
    }

    #[test]
    fn every_transport_accepts_them_beside_one_incast_or_read_only() {
        let mut sc = scenario("tcp", 0.2);
        sc.workload.short_load = 1.0;
        assert_eq!(sc.validate().unwrap_err().field, "workload.short_load");
        for transport in TRANSPORTS {
            assert_eq!(scenario(transport, 0.1).validate(), Ok(()), "{transport}");
        }
        let text = r#"{"workload": {"kind": "queries", "short_load": 0.1}}"#;
        let err = Scenario::from_json(text).unwrap_err();
        assert_eq!(err.field, "workload.short_load");
    }
}
