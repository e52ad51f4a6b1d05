//! What a RoCE run reports: each message's completion (the common flow report), the queues,
//! and RoCE's own counters; and the invariants it checks.

use super::{Pkt, Roce};
use crate::app::{flows, short};
use crate::config::Scenario;
use crate::engine::driver::Seen;
use crate::report::{FlowReport, Report, RoceReport, RunSummary};
use crate::slowdown::FctSlowdown;
use crate::tcp::run_report::queue_reports;
use crate::topology::Network;

impl Roce {
    /// The flow reports: one per message of a schedule (its completion time counted from its
    /// posting), one per server of a synchronized read (its bytes over every block), then one
    /// per background queue pair (the payload it delivered in order, no completion time).
    fn flow_reports(&self) -> Vec<FlowReport> {
        let per_qp = self.plan.servers().is_some();
        // The short flows' queue pairs are reported apart (`short_flows`).
        (self.qps[..self.short_qp].iter())
            .enumerate()
            .map(|(q, qp)| {
                let c = qp.tx.counts();
                let background = q >= self.background;
                let done = qp.msgs.iter().map(|&m| &self.msgs[m as usize]);
                let bytes = match background {
                    true => u64::from(qp.rx.epsn()) * self.mtu, // as background_bytes
                    false => done
                        .clone()
                        .filter(|m| m.done.is_some())
                        .map(|m| m.bytes)
                        .sum(),
                };
                let fct = match per_qp || background {
                    true => None,
                    false => done.clone().next().and_then(|m| Some(m.done? - m.posted?)),
                };
                FlowReport {
                    background,
                    timeouts: c.timeouts,
                    retx_fast: c.retx - c.retx_timeout,
                    retx_timeout: c.retx_timeout,
                    ..FlowReport::delivered(q as u32, bytes, fct)
                }
            })
            .collect()
    }

    /// A schedule's flows' bursts and ideal completion times, and the slowdowns by size.
    ///
    /// A RoCE write completes at its requester when its last packet's ACK returns (as
    /// htsim's RoCE and HPCC's ns-3 measure it), so its ideal does too: the flow alone on the
    /// idle network ([`flows::ideal_fct`]: its last byte at the receiver, with the frame
    /// overhead this queue pair pays, INT included) plus the one-way time of the ACK back
    /// (HPCC's "base RTT + size / line rate"). The slowdown is then never below 1, and it
    /// compares like with like against TCP's receiver-side definition.
    fn fill_schedule(&self, net: &Network, sc: &Scenario, r: &mut Report) {
        for (f, qp) in r.flows.iter_mut().zip(&self.qps).take(self.background) {
            let bytes = self.msgs[qp.msgs[0] as usize].bytes;
            let data = flows::ideal_fct(net, qp.src, qp.dst, bytes, self.mtu, qp.data_extra.into());
            let ack = net.latency(qp.ack_route, qp.ack_frame.into());
            f.ideal_fct = Some(data + ack);
            f.burst = self.bursts[f.flow as usize];
        }
        r.fct_slowdown = FctSlowdown::of(
            r.flows.iter().map(FlowReport::sample),
            sc.flows.slowdown_buckets,
        );
    }

    /// RoCE's counters, the agents' added to the glue's.
    fn counters(&self) -> RoceReport {
        let mut s = self.stats.clone();
        let idle = self
            .qps
            .iter()
            .map(|q| u64::from(q.tx.counts().cnps_idle))
            .sum();
        s.cnps_idle = (s.cnps_received > 0).then_some(idle);
        for qp in &self.qps {
            let c = qp.tx.counts();
            s.retx_timeout += u64::from(c.retx_timeout);
            s.timeouts += u64::from(c.timeouts);
            s.discarded += u64::from(qp.rx.counts().2);
        }
        s
    }

    /// The report of the run so far.
    pub(super) fn run_report(&self, run: &Seen<Pkt>) -> Report {
        let (net, sc, now) = (run.net(), run.sc, run.now);
        let (queues, drops) = queue_reports(net, sc);
        let bottleneck = queues[0].clone();
        let flows = self.flow_reports();
        let done = self.msgs[..self.apps].iter().filter(|m| m.done.is_some());
        let app_bytes = done.clone().map(|m| m.bytes).sum();
        let apps = &self.msgs[..self.apps];
        let start = apps.iter().filter_map(|m| m.posted).min().unwrap_or(0);
        let end = match self.pending {
            0 => done.filter_map(|m| m.done).max().unwrap_or(now),
            _ => now,
        };
        let base_latency = self.qps.first().map_or(0, |q| {
            net.latency(q.data_route, self.mtu + u64::from(q.data_extra))
        });
        let stats = self.counters();
        let busy = bottleneck.stats.busy;
        let block_times = self.plan.block_times();
        let background = self.background_bytes() - self.background_at_start;
        let mut r = Report {
            background_bps: crate::units::rate_of(background, end.saturating_sub(start)),
            pfc_pauses: net.links.iter().map(|l| l.stats.pauses).sum(),
            timeouts: stats.timeouts,
            retx_fast: stats.retransmitted - stats.retx_timeout,
            retx_timeout: stats.retx_timeout,
            drops,
            queues,
            block_times,
            shared_buffer_max_bytes: net.pools.iter().map(|p| p.max_used).max(),
            roce: Some(stats),
            ..Report::of_run(RunSummary {
                senders: sc.topology.senders,
                workload: sc.workload.kind,
                app_bytes,
                start,
                end,
                now,
                events: run.processed,
                base_latency,
                // A schedule's flows run between every host: all their links, as TCP's.
                link_bps: match sc.is_flows() {
                    true => sc.topology.link * u64::from(sc.topology.senders),
                    false => sc.topology.receiver_link,
                },
                flows,
                bottleneck,
                bottleneck_busy: busy,
            })
        };
        run.fabric.fill_report(sc, now, &mut r);
        if sc.is_flows() {
            self.fill_schedule(net, sc, &mut r);
        }
        if self.short_msg < self.msgs.len() {
            let flows = self.msgs[self.short_msg..].iter().map(|m| {
                let fate = short::Fate::of(m.posted, m.done, now);
                (self.qps[m.qp as usize].src, m.bytes, fate)
            });
            let mss_header = (self.mtu, sc.roce.header_bytes);
            r.short_flows = Some(short::summary(flows, net, mss_header));
        }
        r
    }

    /// The network's invariants, and each queue pair's: the receiver never ahead of what was
    /// sent, the sender's acknowledged PSN never ahead of the receiver's, a NIC's queue never
    /// holding more than one of its data packets.
    pub(super) fn check(&self, run: &Seen<Pkt>) -> Result<(), String> {
        run.fabric.check_invariants()?;
        for (q, qp) in self.qps.iter().enumerate() {
            let (una, high) = qp.tx.una_high();
            let epsn = qp.rx.epsn();
            if una > epsn || epsn > high {
                return Err(format!(
                    "RoCE queue pair {q}: acknowledged {una}, received {epsn}, sent {high}"
                ));
            }
        }
        if let Some((h, n)) = self.nics.iter().enumerate().find(|(_, n)| n.queued > 1) {
            return Err(format!("RoCE NIC {h}: {} data packets queued", n.queued));
        }
        let done = self.msgs[..self.apps]
            .iter()
            .filter(|m| m.done.is_some())
            .count();
        if done + self.pending != self.apps {
            return Err(format!(
                "RoCE: {done} messages done, {} pending of {}",
                self.pending, self.apps
            ));
        }
        Ok(())
    }
}
