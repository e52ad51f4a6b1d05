//! What a Swift run reports: per-flow counters, the queues (as TCP's, the same drop-tail
//! ports), goodput, the application's figures and Swift's own counters.

use super::{Pkt, Swift, SwiftView};
use crate::engine::driver::Seen;
use crate::report::{FlowReport, Report, RunSummary, SwiftReport};
use crate::tcp::run_report::queue_reports;

impl Swift {
    /// Every connection's report (its server's sending half, its client's bytes).
    fn flow_reports(&self) -> Vec<FlowReport> {
        (0..self.app_conns)
            .map(|c| {
                let conn = crate::ids::ConnId(c);
                let s = self.eps[conn.sender().index()].tx.stats();
                FlowReport {
                    flow: c,
                    background: false,
                    bytes: self.eps[conn.receiver().index()].rx.received(),
                    fct: self.app.fct(conn),
                    timeouts: s.timeouts,
                    fast_recoveries: s.recoveries,
                    retx_fast: s.retx_fast,
                    retx_timeout: s.retx_timeout,
                    max_successive_timeouts: s.max_successive,
                    ecn_reductions: 0,
                    spurious_timeouts: s.spurious,
                    loss_probes: 0,
                    rounds: Vec::new(),
                    paused: None,
                    burst: None,
                    ideal_fct: None,
                }
            })
            .collect()
    }

    /// Swift's counters over every endpoint.
    fn counters(&self) -> SwiftReport {
        let mut r = SwiftReport {
            acks: self.acks,
            lowest_cwnd: f64::INFINITY,
            dropped: self.drops_by_kind.iter().sum(),
            ..SwiftReport::default()
        };
        for e in &self.eps {
            let s = e.tx.stats();
            r.data_packets += s.packets;
            r.fast_recoveries += u64::from(s.recoveries);
            // Only ends that sent: an idle end's window never moved.
            if s.packets > 0 {
                let low = e.tx.cc.lowest();
                r.lowest_cwnd = r.lowest_cwnd.min(low);
                r.paced_flows += u64::from(low < 1.0);
            }
        }
        if r.lowest_cwnd.is_infinite() {
            r.lowest_cwnd = 0.0;
        }
        r
    }

    /// The report of the run so far (complete once the run is).
    pub(super) fn run_report(&self, run: &Seen<Pkt>) -> Report {
        let (net, sc, now) = (run.net(), run.sc, run.now);
        let flows = self.flow_reports();
        let sum = |f: fn(&FlowReport) -> u32| flows.iter().map(|x| u64::from(f(x))).sum();
        let (timeouts, recoveries) = (sum(|f| f.timeouts), sum(|f| f.fast_recoveries));
        let (retx_fast, retx_timeout) = (sum(|f| f.retx_fast), sum(|f| f.retx_timeout));
        let (queues, drops) = queue_reports(net, sc);
        let bottleneck = queues[0].clone();
        let view = SwiftView {
            eps: &self.eps,
            ep_host: &self.ep_host,
            net,
            drops_by_kind: self.drops_by_kind,
        };
        let (start, end, app_bytes) = self.app.span(&view, now);
        let busy = bottleneck.stats.busy - self.busy_at_start;
        let mut r = Report {
            timeouts,
            fast_recoveries: recoveries,
            retx_fast,
            retx_timeout,
            drops,
            queues,
            shared_buffer_max_bytes: net.pools.iter().map(|p| p.max_used).max(),
            swift: Some(self.counters()),
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
