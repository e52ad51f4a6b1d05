//! The key-value store's gets on real TCP: the emulator's half of the operator's incast.
//!
//! Every host is a coordinator and a replica: a mesh ([`crate::mesh`]) in which every host
//! listens and has a connection to every other, numbered as the simulator numbers them
//! ([`incast_workload::kv::conn`]). The gets are issued at their planned times: a get writes
//! one request (the block protocol's 24-byte read) to each remote replica and completes when
//! `quorum` replies have arrived (a replica on the coordinator answers locally, at once:
//! [`incast_workload::kv::Replies`]). Replicas answer every request as soon as they read it,
//! header and value, in order per connection, as Riak does.
//!
//! The plan (arrivals, sizes, replicas) is drawn by the simulator's own rule
//! (`incast_sim::kv::plan`), so the same scenario and seed run the same gets on both.
//! Latency runs from the moment the requests were written to the quorum's last byte read;
//! how late each get left against its planned time is reported beside it (the loop's
//! timers, and the CPUs it shares with the testbed's softirqs).

use std::io;
use std::time::{Duration, Instant};

use incast_workload::kv::{conn, nearest_rank, Replies};
use serde::Serialize;

use crate::mesh::{invalid, Link, Measured, Mesh, MeshConfig, MeshHost, Wire, Workload, MAX_VALUE};

/// One get to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvGet {
    /// The coordinator.
    pub host: u32,
    /// When it arrives, µs from the start.
    pub at_us: u64,
    /// Value bytes each replica returns.
    pub size: u64,
    /// Its replicas, distinct hosts.
    pub replicas: Vec<u32>,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct KvConfig {
    /// The hosts, in host order.
    pub hosts: Vec<MeshHost>,
    /// The gets, in arrival order.
    pub gets: Vec<KvGet>,
    /// Replies a get waits for.
    pub quorum: u32,
    /// Gets arriving before this (µs) are run but left out of every figure.
    pub warmup_us: u64,
    /// TCP_CONGESTION of every socket.
    pub congestion: Option<String>,
    /// Seconds to wait for each connection.
    pub connect_timeout_s: f64,
}

/// What one host saw (measured gets only).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct KvHostResult {
    /// Gets it coordinated.
    pub gets: u64,
    /// Value bytes its gets asked of remote replicas.
    pub offered_bytes: u64,
    /// Value bytes it read from remote replicas.
    pub received_bytes: u64,
    /// Most value bytes it read in one millisecond.
    pub peak_bytes_1ms: u64,
}

/// What a run measured.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct KvResult {
    /// Latency of every measured get that reached its quorum, µs, in completion order.
    pub latencies_us: Vec<u64>,
    /// Per host.
    pub per_host: Vec<KvHostResult>,
    /// Gets issued (all, warm-up included).
    pub issued: u64,
    /// When the last reply arrived, µs from the start.
    pub end_us: u64,
    /// How late the gets left against their planned times, µs: median, 99th percentile, most.
    pub lag_us_p50: u64,
    /// 99th percentile.
    pub lag_us_p99: u64,
    /// Largest.
    pub lag_us_max: u64,
    /// The run was stopped (time limit or a stop request) with gets outstanding.
    pub truncated: bool,
    /// Gets outstanding when it stopped.
    pub outstanding: u64,
}

/// One issued get.
#[derive(Debug, Clone, Copy)]
struct GetState {
    issued: Instant,
    replies: Replies,
    measured: bool,
}

/// The store's gets as a mesh workload: issued at their times, finished at their quorum.
#[derive(Debug)]
pub struct KvGets {
    hosts: u32,
    gets: Vec<KvGet>,
    quorum: u32,
    warmup_us: u64,
    /// Per issued get, in issue order (its request id).
    state: Vec<GetState>,
    /// How late each get left, µs.
    lags: Vec<u64>,
    /// The next get to issue.
    next: usize,
    /// Gets issued with replies outstanding.
    live: u64,
    out: KvResult,
}

/// The store, connected and ready to run.
pub type KvCluster = Mesh<KvGets>;

impl KvGets {
    /// The gets of `cfg`, checked.
    pub fn new(cfg: &KvConfig) -> io::Result<KvGets> {
        let h = cfg.hosts.len();
        if h < 2 {
            return Err(invalid("hosts: a cluster needs at least 2"));
        }
        if cfg.quorum == 0 {
            return Err(invalid("quorum: at least 1"));
        }
        if let Some(g) = cfg.gets.iter().find(|g| {
            g.host as usize >= h
                || g.size == 0
                || g.size > MAX_VALUE
                || g.replicas.iter().any(|&r| r as usize >= h)
        }) {
            return Err(invalid(format!(
                "gets: a get names a host out of 0..{h} or a size out of 1..=1GB: {g:?}"
            )));
        }
        if cfg.gets.windows(2).any(|w| w[1].at_us < w[0].at_us) {
            return Err(invalid("gets: not in arrival order"));
        }
        let n = cfg.gets.len();
        Ok(KvGets {
            hosts: h as u32,
            gets: cfg.gets.clone(),
            quorum: cfg.quorum,
            warmup_us: cfg.warmup_us,
            state: Vec::with_capacity(n),
            lags: Vec::with_capacity(n),
            next: 0,
            live: 0,
            out: KvResult {
                latencies_us: Vec::new(),
                per_host: vec![KvHostResult::default(); h],
                issued: 0,
                end_us: 0,
                lag_us_p50: 0,
                lag_us_p99: 0,
                lag_us_max: 0,
                truncated: false,
                outstanding: 0,
            },
        })
    }
}

impl Mesh<KvGets> {
    /// Listen in every host's namespace, connect every host to every other, and accept.
    pub fn connect(cfg: KvConfig) -> io::Result<KvCluster> {
        let gets = KvGets::new(&cfg)?;
        let net = MeshConfig {
            hosts: cfg.hosts,
            congestion: cfg.congestion,
            connect_timeout_s: cfg.connect_timeout_s,
        };
        Mesh::open(&net, gets)
    }
}

fn micros(d: Duration) -> u64 {
    d.as_micros() as u64
}

impl Workload for KvGets {
    type Result = KvResult;

    /// Coordinator after coordinator, every other host in order: the simulator's numbering.
    fn links(&self) -> Vec<Link> {
        let h = self.hosts;
        (0..h)
            .flat_map(|a| {
                (0..h).filter(move |&b| b != a).map(move |b| Link {
                    client: a,
                    server: b,
                })
            })
            .collect()
    }

    fn due(&self) -> Option<Duration> {
        self.gets
            .get(self.next)
            .map(|g| Duration::from_micros(g.at_us))
    }

    fn horizon(&self) -> Duration {
        Duration::from_micros(self.gets.last().map_or(0, |g| g.at_us))
    }

    /// Issue every get that is due.
    fn issue(&mut self, start: Instant, now: Instant, wire: &mut Wire<'_>) {
        let now_us = micros(now.saturating_duration_since(start));
        while let Some(g) = self.gets.get(self.next).filter(|g| g.at_us <= now_us) {
            let id = self.state.len() as u32;
            let measured = g.at_us >= self.warmup_us;
            let hr = &mut self.out.per_host[g.host as usize];
            let replies = Replies::issue(g.host, &g.replicas, |b| {
                wire.ask(conn(self.hosts, g.host, b) as usize, id, g.size);
                if measured {
                    hr.offered_bytes += g.size;
                }
            });
            if measured {
                hr.gets += 1;
                if replies.complete_at_once(self.quorum) {
                    self.out.latencies_us.push(0);
                }
            }
            if replies.left > 0 {
                self.live += 1;
            }
            self.lags.push(now_us - g.at_us);
            self.state.push(GetState {
                issued: now,
                replies,
                measured,
            });
            self.out.issued += 1;
            self.next += 1;
        }
    }

    fn on_reply(&mut self, _: usize, id: u32, at: Instant, start: Instant, _: &mut Wire<'_>) {
        let st = &mut self.state[id as usize];
        let reply = st.replies.arrive(self.quorum);
        let g = &self.gets[id as usize];
        if st.measured {
            self.out.per_host[g.host as usize].received_bytes += g.size;
            if reply.quorum {
                self.out
                    .latencies_us
                    .push(micros(at.saturating_duration_since(st.issued)));
            }
        }
        if reply.closed {
            self.live -= 1;
            self.out.end_us = self
                .out
                .end_us
                .max(micros(at.saturating_duration_since(start)));
        }
    }

    fn finished(&self) -> bool {
        self.next == self.gets.len() && self.live == 0
    }

    fn outstanding(&self) -> u64 {
        self.live + (self.gets.len() - self.next) as u64
    }

    fn result(mut self, m: &Measured) -> KvResult {
        let mut out = self.out;
        for (hr, &p) in out.per_host.iter_mut().zip(&m.peak_bytes_1ms) {
            hr.peak_bytes_1ms = p;
        }
        self.lags.sort_unstable();
        out.lag_us_p50 = nearest_rank(&self.lags, 0.5);
        out.lag_us_p99 = nearest_rank(&self.lags, 0.99);
        out.lag_us_max = self.lags.last().copied().unwrap_or(0);
        out.truncated = m.truncated;
        out.outstanding = m.outstanding;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    fn local(hosts: u32) -> Vec<MeshHost> {
        (0..hosts)
            .map(|i| MeshHost {
                netns: None,
                addr: format!("127.0.5.{}:0", i + 1).parse().unwrap(),
            })
            .collect()
    }

    /// The cluster's hosts on loopback addresses, each on a port of its own.
    fn cluster(hosts: u32, gets: Vec<KvGet>, quorum: u32) -> KvCluster {
        let cfg = KvConfig {
            hosts: local(hosts),
            gets,
            quorum,
            warmup_us: 0,
            congestion: None,
            connect_timeout_s: 2.0,
        };
        KvCluster::connect(cfg).unwrap()
    }

    #[test]
    fn every_get_completes_at_its_quorum_and_every_reply_is_read() {
        let gets: Vec<KvGet> = (0..60)
            .map(|k| KvGet {
                host: k % 4,
                at_us: u64::from(k) * 500,
                size: 20_000 + u64::from(k),
                replicas: vec![k % 4, (k + 1) % 4, (k + 2) % 4],
            })
            .collect();
        let offered: u64 = gets.iter().map(|g| 2 * g.size).sum();
        let kv = cluster(4, gets, 2);
        assert_eq!(kv.clients.len(), 12);
        assert_eq!(kv.served.len(), 12);
        let stop = AtomicBool::new(false);
        let r = kv
            .run(Instant::now(), Duration::from_secs(10), &stop)
            .unwrap();
        assert!(!r.truncated);
        assert_eq!(r.issued, 60);
        assert_eq!(
            r.latencies_us.len(),
            60,
            "every get reached its quorum once"
        );
        let got: u64 = r.per_host.iter().map(|h| h.received_bytes).sum();
        assert_eq!(got, offered, "late replies are read too");
        assert_eq!(r.per_host.iter().map(|h| h.gets).sum::<u64>(), 60);
        assert!(r.end_us >= 59 * 500, "{}", r.end_us);
        assert!(r.per_host.iter().all(|h| h.peak_bytes_1ms > 0));
    }

    #[test]
    fn warm_up_gets_run_but_are_not_counted_and_a_local_quorum_is_immediate() {
        let gets: Vec<KvGet> = (0..10u32)
            .map(|k| KvGet {
                host: 0,
                at_us: u64::from(k) * 1000,
                size: 1000,
                replicas: vec![0, 1],
            })
            .collect();
        let mut kv = cluster(2, gets, 1);
        kv.workload.warmup_us = 5000;
        let r = kv
            .run(
                Instant::now(),
                Duration::from_secs(10),
                &AtomicBool::new(false),
            )
            .unwrap();
        assert_eq!(r.issued, 10);
        assert_eq!(r.per_host[0].gets, 5);
        assert_eq!(
            r.latencies_us,
            vec![0; 5],
            "the local replica is the quorum"
        );
        assert_eq!(r.per_host[0].received_bytes, 5 * 1000);
    }

    #[test]
    fn bad_plans_are_refused_by_name() {
        let bad = KvGet {
            host: 0,
            at_us: 0,
            size: 10,
            replicas: vec![5],
        };
        let cfg = KvConfig {
            hosts: local(2),
            gets: vec![bad],
            quorum: 1,
            warmup_us: 0,
            congestion: None,
            connect_timeout_s: 1.0,
        };
        let e = KvCluster::connect(cfg).err().unwrap();
        assert!(e.to_string().starts_with("gets: a get names a host"), "{e}");
    }

    #[test]
    fn a_stop_request_ends_the_run_with_what_is_outstanding() {
        let gets = vec![KvGet {
            host: 0,
            at_us: 5_000_000,
            size: 10,
            replicas: vec![1],
        }];
        let kv = cluster(2, gets, 1);
        let r = kv
            .run(
                Instant::now(),
                Duration::from_secs(10),
                &AtomicBool::new(true),
            )
            .unwrap();
        assert!(r.truncated);
        assert_eq!(r.outstanding, 1);
        assert_eq!(r.issued, 0);
    }
}
