//! What a TCP run reports: per-flow counters, the queues, goodput, and the application's
//! figures.

use super::agent::{Tcp, TcpView};
use crate::config::Scenario;
use crate::engine::driver::Seen;
use crate::net::QueueStats;
use crate::report::{FlowReport, QueueReport, Report, RunSummary};
use crate::tcp::Packet;
use crate::topology::{LinkRole, Network};

/// The application's flows' TCP counters, all together (background flows left out).
#[derive(Debug, Default)]
struct Totals {
    timeouts: u64,
    recoveries: u64,
    retx_fast: u64,
    retx_timeout: u64,
    ecn_reductions: u64,
    loss_probes: u64,
    timeout_runs: Vec<u64>,
}

/// The bottleneck's queue, then the other switch ports and the NICs, each kind aggregated;
/// and the drops of every link.
pub(crate) fn queue_reports(net: &Network, sc: &Scenario) -> (Vec<QueueReport>, u64) {
    let bn = net.bottleneck;
    let mut ports = QueueStats::default();
    let mut nics = QueueStats::default();
    let mut drops = 0;
    for (i, l) in net.links.iter().enumerate() {
        drops += l.stats.drops;
        if i == bn.index() {
            continue;
        }
        let agg = match net.roles[i] {
            LinkRole::Port(_) | LinkRole::Fabric => &mut ports,
            LinkRole::Nic(_) => &mut nics,
        };
        agg.drops += l.stats.drops;
        agg.max_bytes = agg.max_bytes.max(l.stats.max_bytes);
        agg.max_packets = agg.max_packets.max(l.stats.max_packets);
        agg.tx_packets += l.stats.tx_packets;
        agg.tx_bytes += l.stats.tx_bytes;
        agg.busy += l.stats.busy;
        agg.marks += l.stats.marks;
        agg.pauses += l.stats.pauses;
        agg.paused += l.stats.paused;
    }
    let bottleneck = QueueReport {
        name: net.name(bn),
        limit: net.limit(bn),
        stats: net.links[bn].stats.clone(),
    };
    let queues = vec![
        bottleneck,
        QueueReport {
            name: "ports-to-senders".into(),
            limit: net.sender_port_limit,
            stats: ports,
        },
        QueueReport {
            name: "nics".into(),
            limit: sc.topology.nic_buffer,
            stats: nics,
        },
    ];
    (queues, drops)
}

impl Tcp {
    /// Every connection's report, and the application's flows' counters together.
    fn flow_reports(&self) -> (Vec<FlowReport>, Totals) {
        let mut flows = Vec::with_capacity(self.eps.len() / 2);
        let mut t = Totals {
            timeout_runs: vec![0u64; crate::tcp::TIMEOUT_RUN_BUCKETS],
            ..Totals::default()
        };
        for conn in self.connections() {
            let sender = self.eps.get(conn.sender().index());
            let s = sender.stats();
            let background = !self.app_owns(conn);
            if !background {
                t.timeouts += s.timeouts as u64;
                t.recoveries += s.recoveries as u64;
                t.retx_fast += s.retx_fast as u64;
                t.retx_timeout += s.retx_timeout as u64;
                t.ecn_reductions += s.ecn_reductions as u64;
                t.loss_probes += s.loss_probes as u64;
                for (k, n) in s.timeout_runs.iter().enumerate() {
                    t.timeout_runs[k] += *n as u64;
                }
            }
            flows.push(FlowReport {
                flow: conn.0,
                background,
                bytes: self.eps.get(conn.receiver().index()).received(),
                fct: if background { None } else { self.app.fct(conn) },
                timeouts: s.timeouts,
                fast_recoveries: s.recoveries,
                retx_fast: s.retx_fast,
                retx_timeout: s.retx_timeout,
                max_successive_timeouts: s.max_timeout_run,
                ecn_reductions: s.ecn_reductions,
                spurious_timeouts: s.spurious_timeouts,
                loss_probes: s.loss_probes,
                rounds: s.rounds.clone(),
                paused: None,
                burst: None,
                ideal_fct: None,
            });
        }
        (flows, t)
    }

    /// The report of the run so far (complete once the run is).
    pub(super) fn run_report(&self, run: &Seen<Packet>) -> Report {
        let (net, sc, now) = (run.net(), run.sc, run.now);
        let (flows, t) = self.flow_reports();
        let (queues, drops) = queue_reports(net, sc);
        let bottleneck = queues[0].clone();
        let view = TcpView {
            eps: &self.eps,
            ep_host: &self.ep_host,
            net,
            drops_by_kind: self.drops_by_kind,
        };
        let (start, end, app_bytes) = self.app.span(&view, now);
        let duration = end.saturating_sub(start);
        let busy = bottleneck.stats.busy - self.busy_at_start;
        let background = self.background_bytes() - self.background_at_start;
        let mut r = Report {
            background_bps: crate::units::rate_of(background, duration),
            pfc_pauses: net.links.iter().map(|l| l.stats.pauses).sum(),
            timeouts: t.timeouts,
            timeout_runs: t.timeout_runs,
            fast_recoveries: t.recoveries,
            retx_fast: t.retx_fast,
            retx_timeout: t.retx_timeout,
            ecn_reductions: t.ecn_reductions,
            loss_probes: t.loss_probes,
            drops,
            queues,
            shared_buffer_max_bytes: net.pools.iter().map(|p| p.max_used).max(),
            series: self.series.clone(),
            ..Report::of_run(RunSummary {
                senders: sc.topology.senders,
                workload: sc.workload.kind,
                app_bytes,
                start,
                end,
                now,
                events: run.processed,
                base_latency: net.latency_between(net.host(0), net.receiver, sc.full_frame()),
                link_bps: self.app.link_bps(sc),
                flows,
                bottleneck,
                bottleneck_busy: busy,
            })
        };
        run.fabric.fill_report(sc, now, &mut r);
        self.app.report(&view, now, &mut r);
        r
    }
}
