//! What a Homa run reports: each message's completion (the common flow report; a
//! synchronized read's per server over its blocks), the queues as the priority ports saw them,
//! Homa's own counters; and the invariants it checks.

use super::{Homa, Pkt};
use crate::app::{flows, short};
use crate::engine::driver::Seen;
use crate::report::{FlowReport, QueueReport, Report, RunSummary};
use crate::slowdown::FctSlowdown;
use crate::tcp::run_report::queue_reports;
use crate::topology::LinkRole;

impl Homa {
    /// One flow report per message (its completion counted from its posting), or per server
    /// of a synchronized read (its bytes over every block, no completion time).
    fn flow_reports(&self) -> Vec<FlowReport> {
        let per_server = self.plan.servers().map(|s| s as usize);
        let n = per_server.unwrap_or(self.apps);
        (0..n)
            .map(|f| {
                let of = |m: usize| (&self.msgs[m], self.tx[m].counts().1);
                let ms: Vec<_> = match per_server {
                    Some(s) => (f..self.apps).step_by(s).map(of).collect(),
                    None => vec![of(f)],
                };
                let bytes = ms
                    .iter()
                    .filter(|(m, _)| m.done.is_some())
                    .map(|(m, _)| m.bytes);
                let fct = match per_server {
                    Some(_) => None,
                    None => ms[0].0.done.zip(ms[0].0.posted).map(|(d, p)| d - p),
                };
                let retx: u32 = ms.iter().map(|(_, r)| r).sum();
                FlowReport {
                    retx_timeout: retx,
                    ..FlowReport::delivered(f as u32, bytes.sum(), fct)
                }
            })
            .collect()
    }

    /// The queues: the common report's, with the peaks the priority ports held (the links'
    /// own queues stay empty under them).
    fn queues(&self, run: &Seen<Pkt>) -> (Vec<QueueReport>, u64) {
        let net = run.net();
        let (mut queues, drops) = queue_reports(net, run.sc);
        let Some(ports) = run.fabric.prio.as_deref() else {
            return (queues, drops);
        };
        let bn = net.bottleneck;
        for (i, p) in ports.iter().enumerate() {
            let s = p.stats(&net.links[i]);
            let q = match net.roles[i] {
                _ if i == bn.index() => 0,
                LinkRole::Port(_) | LinkRole::Fabric => 1,
                LinkRole::Nic(_) => 2,
            };
            let st = &mut queues[q].stats;
            st.max_bytes = st.max_bytes.max(s.max_bytes);
            st.max_packets = st.max_packets.max(s.max_packets);
        }
        (queues, drops)
    }

    /// The report of the run so far.
    pub(super) fn run_report(&self, run: &Seen<Pkt>) -> Report {
        let (net, sc, now) = (run.net(), run.sc, run.now);
        let (queues, drops) = self.queues(run);
        let bottleneck = queues[0].clone();
        let apps = &self.msgs[..self.apps];
        let done = apps.iter().filter(|m| m.done.is_some());
        let app_bytes = done.clone().map(|m| m.bytes).sum();
        let start = apps.iter().filter_map(|m| m.posted).min().unwrap_or(0);
        let end = match self.pending {
            0 => done.filter_map(|m| m.done).max().unwrap_or(now),
            _ => now,
        };
        let frame = self.mtu + self.header;
        let base_latency = self
            .msgs
            .first()
            .map_or(0, |m| net.latency(m.data_route, frame));
        let block_times = self.plan.block_times();
        let mut stats = self.stats.clone();
        stats.dropped = drops;
        let peak = self.hosts.iter().map(|h| h.sched.peak_outstanding()).max();
        stats.granted_peak = peak.unwrap_or(0);
        let busy = bottleneck.stats.busy;
        let mut r = Report {
            timeouts: stats.resends,
            retx_timeout: stats.retransmitted,
            drops,
            queues,
            block_times,
            homa: Some(stats),
            ..Report::of_run(RunSummary {
                senders: sc.topology.senders,
                workload: sc.workload.kind,
                app_bytes,
                start,
                end,
                now,
                events: run.processed,
                base_latency,
                link_bps: match sc.is_flows() {
                    true => sc.topology.link * u64::from(sc.topology.senders),
                    false => sc.topology.receiver_link,
                },
                flows: self.flow_reports(),
                bottleneck,
                bottleneck_busy: busy,
            })
        };
        if sc.is_flows() {
            // A message's ideal: alone on the idle network, its last byte at the receiver
            // with Homa's frames (a message completes there).
            for (f, m) in r.flows.iter_mut().zip(&self.msgs) {
                f.ideal_fct = Some(flows::ideal_fct(
                    net,
                    m.src,
                    m.dst,
                    m.bytes,
                    self.mtu,
                    self.header,
                ));
                f.burst = m.burst;
            }
            r.fct_slowdown = FctSlowdown::of(
                r.flows.iter().map(FlowReport::sample),
                sc.flows.slowdown_buckets,
            );
        }
        if self.apps < self.msgs.len() {
            let shorts = &self.msgs[self.apps..];
            let flows = shorts
                .iter()
                .map(|m| (m.src, m.bytes, short::Fate::of(m.posted, m.done, now)));
            r.short_flows = Some(short::summary(flows, net, (self.mtu, self.header)));
        }
        r
    }

    /// Every packet is somewhere once; a NIC holds at most one data packet; no message has
    /// more bytes than it is; the count of pending messages agrees.
    pub(super) fn check(&self, run: &Seen<Pkt>) -> Result<(), String> {
        let net = run.net();
        if let Some(ports) = run.fabric.prio.as_deref() {
            let held: usize = ports.iter().zip(&net.links).map(|(p, l)| p.held(l)).sum();
            if held != run.fabric.pkts.live() {
                return Err(format!(
                    "Homa: {} packets alive, {held} in ports",
                    run.fabric.pkts.live()
                ));
            }
            for (i, p) in ports.iter().enumerate() {
                if p.queued_bytes() > p.limit() {
                    return Err(format!("Homa port {i}: over its buffer"));
                }
            }
        }
        if let Some((h, host)) = self.hosts.iter().enumerate().find(|(_, h)| h.queued > 1) {
            return Err(format!("Homa NIC {h}: {} data packets queued", host.queued));
        }
        for (i, (m, rx)) in self.msgs.iter().zip(&self.rx).enumerate() {
            if m.posted.is_some() && rx.received() > m.bytes {
                return Err(format!(
                    "Homa message {i}: {} of {} bytes",
                    rx.received(),
                    m.bytes
                ));
            }
        }
        let apps = &self.msgs[..self.apps];
        let done = apps.iter().filter(|m| m.done.is_some()).count();
        if done + self.pending != self.apps {
            return Err(format!(
                "Homa: {done} messages done, {} pending of {}",
                self.pending, self.apps
            ));
        }
        Ok(())
    }
}
