//! What an EQDS run reports: each flow's completion (the common flow report), the bottleneck,
//! EQDS's counters and the deepest switch queue; and the invariants it checks.

use super::sender::Cause;
use super::{Eqds, Pkt};
use crate::app::short;
use crate::config::QueueLimit;
use crate::engine::driver::Seen;
use crate::report::{EqdsReport, FlowReport, QueueReport, Report, RunSummary};
use crate::tcp::run_report::queue_reports;
use crate::topology::LinkId;

impl Eqds {
    /// The counters: the glue's, the agents' added, and the deepest switch queue.
    fn counters(&self, run: &Seen<Pkt>) -> EqdsReport {
        let net = run.net();
        let mut s = self.stats.clone();
        let (nacks, credits, _) = self.receiver.counts();
        s.nacks = nacks;
        s.credits = credits;
        for snd in &self.senders {
            let c = snd.counts();
            s.retx_nack += u64::from(c.retx[Cause::Nack as usize]);
            s.retx_bounce += u64::from(c.retx[Cause::Bounce as usize]);
            s.retx_timeout += u64::from(c.retx[Cause::Timeout as usize]);
            s.timeouts += u64::from(c.timeouts);
            s.rts += u64::from(c.rts);
        }
        // The deepest single switch egress queue, data and headers together (htsim's
        // measure); the first such port on a tie.
        let peak = net.link_ids().filter(|&l| net.is_port(l)).map(|l| {
            let bytes = match run.fabric.ports.as_deref() {
                Some(ports) => ports[l.index()].peak_bytes(),
                None => net.links[l].stats.max_bytes,
            };
            (bytes, l)
        });
        if let Some((bytes, l)) = peak.fold(None, |m: Option<(u64, LinkId)>, (b, l)| match m {
            Some((mb, _)) if mb >= b => m,
            _ => Some((b, l)),
        }) {
            s.queue_peak_bytes = bytes;
            s.queue_peak_at = net.name(l);
        }
        s
    }

    /// One flow report per flow: its bytes once complete (else the packets received), its
    /// completion time from its start.
    fn flow_reports(&self) -> Vec<FlowReport> {
        let rx = &self.receiver;
        self.senders[..self.apps]
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let f = i as u32;
                let fct = rx.fct(f);
                let bytes = match fct {
                    Some(_) => s.bytes(),
                    None => (u64::from(rx.received(f).0) * self.mtu).min(s.bytes()),
                };
                let c = s.counts();
                FlowReport {
                    retx_fast: c.retx[Cause::Nack as usize] + c.retx[Cause::Bounce as usize],
                    retx_timeout: c.retx[Cause::Timeout as usize],
                    timeouts: c.timeouts,
                    ..FlowReport::delivered(f, bytes, fct)
                }
            })
            .collect()
    }

    /// The report of the run so far.
    pub(super) fn run_report(&self, run: &Seen<Pkt>) -> Report {
        let (net, sc, now) = (run.net(), run.sc, run.now);
        let flows = self.flow_reports();
        let rx = &self.receiver;
        let app_bytes = (0..flows.len() as u32)
            .filter(|&f| rx.fct(f).is_some())
            .map(|f| self.senders[f as usize].bytes())
            .sum();
        let bn = net.bottleneck;
        let (queues, link_drops) = queue_reports(net, sc);
        let bottleneck = match run.fabric.ports.as_deref() {
            Some(ports) => QueueReport {
                name: net.name(bn),
                limit: QueueLimit {
                    bytes: None,
                    packets: Some(sc.eqds.data_queue),
                },
                stats: ports[bn.index()].stats(&net.links[bn]),
            },
            None => queues[0].clone(),
        };
        let busy = bottleneck.stats.busy;
        let frame = sc.eqds.mtu + sc.eqds.header_bytes;
        let base_latency = net.latency_between(net.host(0), self.rx_host, frame);
        let stats = self.counters(run);
        let block_times = self.plan.block_times();
        let mut r = Report {
            timeouts: stats.timeouts,
            retx_fast: stats.retx_nack + stats.retx_bounce,
            retx_timeout: stats.retx_timeout,
            drops: link_drops,
            block_times,
            ..Report::of_run(RunSummary {
                senders: sc.topology.senders,
                workload: sc.workload.kind,
                app_bytes,
                start: self.start,
                end: rx.finish().unwrap_or(now),
                now,
                events: run.processed,
                base_latency,
                link_bps: sc.topology.receiver_link,
                flows,
                bottleneck,
                bottleneck_busy: busy,
            })
        };
        if run.fabric.ports.is_none() {
            r.queues = queues;
        }
        r.eqds = Some(stats);
        if self.apps < self.senders.len() {
            // The short flows: begun at their arrivals, up to the run's end.
            let ends = self.srcs[self.apps..].iter().zip(&self.shorts);
            let flows = ends.enumerate().map(|(i, (&src, &at))| {
                let f = (self.apps + i) as u32;
                let arrival = Some(self.start + at).filter(|&a| a <= now);
                let fate = short::Fate::of(arrival, rx.fct(f).map(|t| self.start + at + t), now);
                (src, self.senders[f as usize].bytes(), fate)
            });
            let mss_header = (sc.eqds.mtu, sc.eqds.header_bytes);
            r.short_flows = Some(short::summary(flows, net, mss_header));
        }
        r
    }

    /// Every packet is somewhere exactly once, the flows' counters agree with their bitmaps,
    /// and no trimming port's data queue is over its limit.
    pub(super) fn check(&self, run: &Seen<Pkt>) -> Result<(), String> {
        let (net, sc) = (run.net(), run.sc);
        match run.fabric.ports.as_deref() {
            Some(ports) => {
                let queued: usize = (ports.iter().zip(&net.links))
                    .map(|(p, l)| p.packets(l))
                    .sum();
                if queued != run.fabric.pkts.live() {
                    return Err(format!(
                        "EQDS: {} packets alive, {queued} in ports",
                        run.fabric.pkts.live()
                    ));
                }
                for (l, p) in ports.iter().enumerate() {
                    if net.is_port(LinkId(l as u32)) && p.data_len() > sc.eqds.data_queue as usize {
                        return Err(format!("EQDS port {l}: data queue over its limit"));
                    }
                }
            }
            None => run.fabric.check_invariants()?,
        }
        for (i, s) in self.senders.iter().enumerate() {
            let (received, bitmap) = self.receiver.received(i as u32);
            let (acked, acked_count) = s.acked();
            if bitmap != received || acked != acked_count || acked > bitmap {
                return Err(format!(
                    "EQDS flow {i}: received {bitmap}/{received}, acked {acked}/{acked_count}"
                ));
            }
            if received > s.packets() {
                return Err(format!("EQDS flow {i}: more packets than it has"));
            }
        }
        Ok(())
    }
}
