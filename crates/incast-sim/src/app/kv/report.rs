//! What the store reports: per host and in all, from its own counts and from what the network
//! and TCP saw of each host ([`HostCounters`]).

use serde::Serialize;

use super::{KvGets, PEAK_WINDOW};
use crate::metrics::utilization;
use crate::units::{SimTime, PS_PER_S};

/// What one host of the store saw, per second of the run (from the first get to the last
/// reply) unless said otherwise.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct KvHostReport {
    /// Gets this host coordinated.
    pub gets: u64,
    /// Value bytes its gets asked of remote replicas, over the arrival window, as a share of
    /// its link: the offered load.
    pub offered_load: f64,
    /// Value bytes it received from remote replicas, as a share of its link: the carried load.
    pub carried_load: f64,
    /// Share of the run its switch port spent serializing towards it (headers and every
    /// frame included): its average receive utilization.
    pub rx_utilization: f64,
    /// Share of the run its NIC spent serializing.
    pub tx_utilization: f64,
    /// Most bytes its switch port sent it in one millisecond, as a share of the link.
    pub peak_utilization_1ms: f64,
    /// Frames dropped at its switch port, per second.
    pub drops_per_s: f64,
    /// Retransmission timeouts of its connections' ends (either direction), per second.
    pub timeouts_per_s: f64,
    /// Segments its ends retransmitted, per second (what `netstat -s` counts).
    pub retransmits_per_s: f64,
}

/// What the whole store saw.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct KvReport {
    /// Hosts in the cluster.
    pub hosts: u32,
    /// Replicas per get.
    pub replicas: u32,
    /// Replies a get waits for.
    pub quorum: u32,
    /// Operations (gets and puts) per second arriving at each host.
    pub gets_per_s_per_host: f64,
    /// Gets issued.
    pub gets: u64,
    /// Gets that reached their quorum.
    pub completed: u64,
    /// Puts issued.
    pub puts: u64,
    /// Put latency, arrival to quorum of acknowledgments, picoseconds: median (0 without puts).
    pub put_latency_p50: SimTime,
    /// 99th percentile.
    pub put_latency_p99: SimTime,
    /// Get latency, arrival to quorum, picoseconds: median.
    pub latency_p50: SimTime,
    /// 99th percentile.
    pub latency_p99: SimTime,
    /// 99.9th percentile.
    pub latency_p999: SimTime,
    /// Largest.
    pub latency_max: SimTime,
    /// Mean, picoseconds.
    pub latency_mean: f64,
    /// Mean over hosts of [`KvHostReport::offered_load`].
    pub offered_load: f64,
    /// Mean over hosts of [`KvHostReport::carried_load`].
    pub carried_load: f64,
    /// Mean over hosts of [`KvHostReport::rx_utilization`].
    pub utilization: f64,
    /// Mean over hosts of [`KvHostReport::peak_utilization_1ms`].
    pub peak_utilization_1ms: f64,
    /// Mean over hosts of [`KvHostReport::drops_per_s`].
    pub drops_per_s_per_host: f64,
    /// Frames dropped per second at switch-to-switch ports (uplinks, trunks), all together:
    /// drops no host's port counts. Absent on a star, which has no such ports (the report
    /// keeps the star's shape, which the emulated store's report shares).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fabric_drops_per_s: Option<f64>,
    /// Timeouts per second, all hosts together.
    pub timeouts_per_s: f64,
    /// Mean over hosts of [`KvHostReport::retransmits_per_s`].
    pub retransmits_per_s_per_host: f64,
    /// Value bytes delivered per second, all hosts together, bits per second.
    pub goodput_bps: f64,
    /// Every host, in host order.
    pub per_host: Vec<KvHostReport>,
}

/// What the network and TCP saw of one host, for [`KvGets::report`].
#[derive(Debug, Clone, Copy, Default)]
pub struct HostCounters {
    /// Its physical host on the topology.
    pub phys: u32,
    /// Time its switch port spent serializing.
    pub rx_busy: SimTime,
    /// Time its NIC spent serializing.
    pub tx_busy: SimTime,
    /// Frames its switch port dropped.
    pub drops: u64,
    /// Timeouts of its endpoints.
    pub timeouts: u64,
    /// Segments its endpoints retransmitted.
    pub retransmits: u64,
}

impl HostCounters {
    /// What was counted after `base`.
    fn since(&self, base: &HostCounters) -> HostCounters {
        HostCounters {
            phys: self.phys,
            rx_busy: self.rx_busy - base.rx_busy,
            tx_busy: self.tx_busy - base.tx_busy,
            drops: self.drops - base.drops,
            timeouts: self.timeouts - base.timeouts,
            retransmits: self.retransmits - base.retransmits,
        }
    }
}

/// The `q`-quantile of sorted `v` (nearest rank), 0 if empty: how the store's latencies are
/// summarized, the emulated store's too (`_core.nearest_rank`): the workload crate's one rule.
pub use incast_workload::kv::nearest_rank as quantile;

impl KvGets {
    /// Value bytes delivered to coordinators so far.
    pub fn delivered(&self) -> u64 {
        self.received.iter().sum()
    }

    /// The store's report at `now` from each host's counters and the frames the
    /// switch-to-switch ports dropped in all.
    pub fn report(
        &self,
        now: SimTime,
        hosts: &[HostCounters],
        fabric_drops: Option<u64>,
    ) -> KvReport {
        let span = self
            .finish
            .unwrap_or(now)
            .saturating_sub(self.measure_from());
        let window = self.window - self.warmup;
        let secs = span as f64 / PS_PER_S as f64;
        let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        let link_bytes = |t: SimTime| self.link_bps as f64 / 8.0 * t as f64 / PS_PER_S as f64;
        let share = |bytes: u64, t: SimTime| {
            let cap = link_bytes(t);
            if cap > 0.0 {
                bytes as f64 / cap
            } else {
                0.0
            }
        };
        let per_host: Vec<KvHostReport> = hosts
            .iter()
            .enumerate()
            .map(|(i, hc)| (i, hc.since(&self.baseline[i])))
            .map(|(i, hc)| KvHostReport {
                gets: self.issued[i],
                offered_load: share(self.offered[i], window),
                carried_load: share(self.received[i], span),
                rx_utilization: utilization(hc.rx_busy, span),
                tx_utilization: utilization(hc.tx_busy, span),
                // A frame is counted in the window its last bit arrives in, so a window may
                // hold one frame more than the link can carry in it.
                peak_utilization_1ms: share(self.peak[hc.phys as usize].peak(), PEAK_WINDOW)
                    .min(1.0),
                drops_per_s: per_s(hc.drops),
                timeouts_per_s: per_s(hc.timeouts),
                retransmits_per_s: per_s(hc.retransmits),
            })
            .collect();
        let mean = |f: fn(&KvHostReport) -> f64| {
            per_host.iter().map(f).sum::<f64>() / per_host.len().max(1) as f64
        };
        let mut lat = self.latencies.clone();
        lat.sort_unstable();
        let mut put_lat = self.put_latencies.clone();
        put_lat.sort_unstable();
        KvReport {
            hosts: self.hosts,
            replicas: self.replicas,
            quorum: self.quorum,
            gets_per_s_per_host: PS_PER_S as f64 / self.mean_gap,
            gets: self.issued.iter().sum(),
            completed: lat.len() as u64,
            puts: self.puts,
            put_latency_p50: quantile(&put_lat, 0.5),
            put_latency_p99: quantile(&put_lat, 0.99),
            latency_p50: quantile(&lat, 0.5),
            latency_p99: quantile(&lat, 0.99),
            latency_p999: quantile(&lat, 0.999),
            latency_max: lat.last().copied().unwrap_or(0),
            latency_mean: lat.iter().map(|&t| t as f64).sum::<f64>() / lat.len().max(1) as f64,
            offered_load: mean(|h| h.offered_load),
            carried_load: mean(|h| h.carried_load),
            utilization: mean(|h| h.rx_utilization),
            peak_utilization_1ms: mean(|h| h.peak_utilization_1ms),
            drops_per_s_per_host: mean(|h| h.drops_per_s),
            fabric_drops_per_s: fabric_drops.map(|d| per_s(d - self.fabric_baseline)),
            timeouts_per_s: per_host.iter().map(|h| h.timeouts_per_s).sum(),
            retransmits_per_s_per_host: mean(|h| h.retransmits_per_s),
            goodput_bps: per_s(self.delivered()) * 8.0,
            per_host,
        }
    }
}
