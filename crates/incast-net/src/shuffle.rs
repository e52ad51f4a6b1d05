//! A MapReduce shuffle on real TCP: the emulator's half of `workload.kind = "shuffle"`.
//!
//! The hosts are namespaces on the emulated switch, a mesh ([`crate::mesh`]). The last
//! `map_hosts` of them hold map outputs and serve them; reducer i runs on host
//! i mod `reducer_hosts` and has one keep-alive connection to every map host but its own,
//! opened inside its host's namespace (its own host's outputs are read locally, as the
//! simulator's reducers do): the layout of [`incast_workload::shuffle::Layout`]. From the
//! start on, every reducer asks one map host for one output at a time (the block protocol's
//! 24-byte read, answered by a header and the output's bytes) by the simulator's copier rule
//! ([`incast_workload::shuffle::Copiers`]: at most `window` hosts at once, round the hosts in
//! the order the simulator draws for it, the next host as soon as a fetch completes): the
//! simulator's shuffle, fetch for fetch, on the kernel's TCP.

use std::io;
use std::time::{Duration, Instant};

use incast_workload::shuffle::{orders_valid, Copiers, Layout};
use serde::Serialize;

use crate::mesh::{invalid, Link, Measured, Mesh, MeshConfig, MeshHost, Wire, Workload, MAX_VALUE};

/// What to run.
#[derive(Debug, Clone)]
pub struct ShuffleConfig {
    /// The hosts, in host order (the map hosts are the last `map_hosts`).
    pub hosts: Vec<MeshHost>,
    /// Hosts holding map outputs, M.
    pub map_hosts: u32,
    /// Reducers in all.
    pub reducers: u32,
    /// Reducer i runs on host i mod this.
    pub reducer_hosts: u32,
    /// Map outputs each reducer fetches from every map host.
    pub outputs: u32,
    /// Bytes of one map output for one reducer.
    pub output_bytes: u64,
    /// Map hosts a reducer fetches from at once (mapred.reduce.parallel.copies).
    pub window: u32,
    /// Per reducer, the map hosts (0..M) in the order it asks them, flattened.
    pub order: Vec<u32>,
    /// TCP_CONGESTION of every socket.
    pub congestion: Option<String>,
    /// Seconds to wait for each connection.
    pub connect_timeout_s: f64,
}

/// What a run measured.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ShuffleResult {
    /// When each reducer had every map output, µs from the start, in reducer order (0 for one
    /// that needed none, or did not finish: see `truncated`).
    pub reducer_us: Vec<u64>,
    /// When the last reducer finished, µs from the start.
    pub end_us: u64,
    /// Fetches completed.
    pub fetches: u64,
    /// Map output bytes the reducers read (headers not counted).
    pub received_bytes: u64,
    /// The run was stopped (time limit or a stop request) before every reducer finished.
    pub truncated: bool,
    /// Fetches not completed when it stopped.
    pub outstanding: u64,
    /// Retransmission timeouts and segments retransmitted on each side, from every socket's
    /// TCP_INFO at the end (`None` on a kernel before Linux 6.7, whose TCP_INFO does not
    /// count timeouts): the reducers' ends send requests (their pure ACKs are never
    /// retransmitted), the map hosts' ends the outputs.
    pub sides: Option<SideCounts>,
}

/// A count per side of the connections.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct SideCounts {
    /// Retransmission timeouts at the reducers' ends (their requests).
    pub reducer_rtos: u64,
    /// Retransmission timeouts at the map hosts' ends (map output data).
    pub map_rtos: u64,
    /// Time spent in timeouts' recoveries at the map hosts' ends, ms (tcpi_total_rto_time).
    pub map_rto_ms: u64,
    /// Segments the map hosts' ends retransmitted.
    pub map_retransmits: u64,
    /// Segments the reducers' ends retransmitted.
    pub reducer_retransmits: u64,
}

/// At most this many connections wait to be accepted at one map host (the listen backlog).
pub const MAX_PER_LISTENER: u32 = 128;

/// The reducers' fetches as a mesh workload.
#[derive(Debug)]
pub struct Fetches {
    layout: Layout,
    output_bytes: u64,
    copiers: Copiers,
    /// Per slot `r·M + j` (see [`Layout`]): its connection, if used.
    link_of: Vec<Option<usize>>,
    /// Per connection: its slot.
    slot_of: Vec<u32>,
    /// The next request's id.
    next_id: u32,
    started: bool,
    /// Reducers with every output.
    done: u32,
    out: ShuffleResult,
}

/// The shuffle, connected and ready to run.
pub type ShuffleCluster = Mesh<Fetches>;

fn check(cfg: &ShuffleConfig) -> io::Result<Layout> {
    let h = cfg.hosts.len() as u32;
    if h < 2 {
        return Err(invalid("hosts: a shuffle needs at least 2"));
    }
    if cfg.map_hosts == 0 || cfg.map_hosts > h {
        return Err(invalid(format!(
            "map_hosts: 1..={h}, got {}",
            cfg.map_hosts
        )));
    }
    if cfg.reducer_hosts == 0 || cfg.reducer_hosts > h {
        return Err(invalid(format!(
            "reducer_hosts: 1..={h}, got {}",
            cfg.reducer_hosts
        )));
    }
    if cfg.reducers == 0 || cfg.outputs == 0 || cfg.window == 0 {
        return Err(invalid("reducers, outputs and window: at least 1 each"));
    }
    if cfg.output_bytes == 0 || cfg.output_bytes > MAX_VALUE {
        return Err(invalid(format!(
            "output_bytes: 1..={MAX_VALUE}, got {}",
            cfg.output_bytes
        )));
    }
    let m = cfg.map_hosts;
    if !orders_valid(&cfg.order, m, cfg.reducers) {
        return Err(invalid(format!(
            "order: every reducer's order must name each of the {m} map hosts once"
        )));
    }
    let layout = Layout::new(h, m, cfg.reducers, cfg.reducer_hosts);
    let (_, most) = layout.connections();
    if most > MAX_PER_LISTENER {
        return Err(invalid(format!(
            "reducers: at most {MAX_PER_LISTENER} connections wait at one map host, got {most}"
        )));
    }
    Ok(layout)
}

impl Fetches {
    /// The fetches of `cfg`, checked.
    pub fn new(cfg: &ShuffleConfig) -> io::Result<Fetches> {
        let layout = check(cfg)?;
        let copiers = Copiers::new(&layout, cfg.outputs, cfg.window, cfg.order.clone());
        let mut link_of = vec![None; layout.slots() as usize];
        let mut slot_of = Vec::new();
        for s in (0..layout.slots()).filter(|&s| layout.used(s)) {
            link_of[s as usize] = Some(slot_of.len());
            slot_of.push(s);
        }
        let reducers = layout.reducers;
        Ok(Fetches {
            layout,
            output_bytes: cfg.output_bytes,
            done: (0..reducers).filter(|&r| copiers.remaining(r) == 0).count() as u32,
            copiers,
            link_of,
            slot_of,
            next_id: 0,
            started: false,
            out: ShuffleResult {
                reducer_us: vec![0; reducers as usize],
                end_us: 0,
                fetches: 0,
                received_bytes: 0,
                truncated: false,
                outstanding: 0,
                sides: None,
            },
        })
    }

    /// Reducer `r` asks for outputs by the copier rule.
    fn fill(&mut self, r: u32, wire: &mut Wire<'_>) {
        let (link_of, next_id, bytes) = (&self.link_of, &mut self.next_id, self.output_bytes);
        self.copiers.fill(r, |s| {
            // The copiers never ask a reducer's own host: every slot they ask has a link.
            if let Some(k) = link_of[s as usize] {
                wire.ask(k, *next_id, bytes);
                *next_id = next_id.wrapping_add(1);
            }
        });
    }
}

impl Mesh<Fetches> {
    /// Listen in every map host's namespace, connect every reducer to every map host but its
    /// own (from inside the reducer's host), and accept.
    pub fn connect(cfg: ShuffleConfig) -> io::Result<ShuffleCluster> {
        let fetches = Fetches::new(&cfg)?;
        let net = MeshConfig {
            hosts: cfg.hosts,
            congestion: cfg.congestion,
            connect_timeout_s: cfg.connect_timeout_s,
        };
        Mesh::open(&net, fetches)
    }
}

impl Workload for Fetches {
    type Result = ShuffleResult;

    fn links(&self) -> Vec<Link> {
        self.slot_of
            .iter()
            .map(|&s| {
                let (server, client) = self.layout.ends(s);
                Link { client, server }
            })
            .collect()
    }

    fn name(&self, k: usize, link: Link) -> String {
        let r = self.slot_of[k] / self.layout.map_hosts;
        format!("reducer {r} on host {} → host {}", link.client, link.server)
    }

    /// At the start, then only as fetches complete.
    fn due(&self) -> Option<Duration> {
        (!self.started).then_some(Duration::ZERO)
    }

    fn horizon(&self) -> Duration {
        Duration::ZERO
    }

    /// Every reducer that needs an output from another host starts its copiers.
    fn issue(&mut self, _: Instant, _: Instant, wire: &mut Wire<'_>) {
        if std::mem::replace(&mut self.started, true) {
            return;
        }
        for r in 0..self.layout.reducers {
            if self.copiers.remaining(r) > 0 {
                self.fill(r, wire);
            }
        }
    }

    fn on_reply(&mut self, k: usize, _: u32, at: Instant, start: Instant, wire: &mut Wire<'_>) {
        let done = self.copiers.completed(self.slot_of[k]);
        self.out.fetches += 1;
        self.out.received_bytes += self.output_bytes;
        if done.finished {
            let us = at.saturating_duration_since(start).as_micros() as u64;
            self.out.reducer_us[done.reducer as usize] = us;
            self.out.end_us = self.out.end_us.max(us);
            self.done += 1;
        } else {
            self.fill(done.reducer, wire);
        }
    }

    fn finished(&self) -> bool {
        self.done == self.layout.reducers
    }

    fn outstanding(&self) -> u64 {
        self.copiers.outstanding()
    }

    fn result(self, m: &Measured) -> ShuffleResult {
        let mut out = self.out;
        out.truncated = m.truncated;
        out.outstanding = m.outstanding;
        out.sides = m.tcp.map(|[reducers, maps]| SideCounts {
            reducer_rtos: reducers.rtos,
            map_rtos: maps.rtos,
            map_rto_ms: maps.rto_ms,
            map_retransmits: maps.retransmits,
            reducer_retransmits: reducers.retransmits,
        });
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
                addr: format!("127.0.6.{}:0", i + 1).parse().unwrap(),
            })
            .collect()
    }

    fn config(hosts: u32, map_hosts: u32, reducers: u32, window: u32) -> ShuffleConfig {
        let order = (0..reducers)
            .flat_map(|r| (0..map_hosts).map(move |j| (j + r) % map_hosts))
            .collect();
        ShuffleConfig {
            hosts: local(hosts),
            map_hosts,
            reducers,
            reducer_hosts: hosts,
            outputs: 3,
            output_bytes: 50_000,
            window,
            order,
            congestion: None,
            connect_timeout_s: 2.0,
        }
    }

    #[test]
    fn every_reducer_fetches_every_output_but_its_own_hosts() {
        // 4 hosts, the last 3 map hosts, 6 reducers (two on hosts 0 and 1): reducers on a
        // map host fetch from the 2 others, those on host 0 from all 3.
        let cl = ShuffleCluster::connect(config(4, 3, 6, 2)).unwrap();
        let r = cl
            .run(
                Instant::now(),
                Duration::from_secs(20),
                &AtomicBool::new(false),
            )
            .unwrap();
        assert!(!r.truncated);
        // Reducers 0 and 4 on host 0: 3 hosts each; the other 4 on map hosts: 2 each.
        let fetches = 3 * (2 * 3 + 4 * 2);
        assert_eq!(r.fetches, fetches);
        assert_eq!(r.received_bytes, fetches * 50_000);
        assert!(r.reducer_us.iter().all(|&t| t > 0 && t <= r.end_us));
        assert_eq!(r.end_us, *r.reducer_us.iter().max().unwrap());
    }

    #[test]
    fn a_reducer_alone_on_the_only_map_host_needs_nothing() {
        // Two hosts, host 1 the only map host; reducer 1 lives there and reads locally.
        let mut cfg = config(2, 1, 2, 1);
        cfg.order = vec![0, 0];
        let cl = ShuffleCluster::connect(cfg).unwrap();
        assert_eq!(cl.clients.len(), 1);
        let r = cl
            .run(
                Instant::now(),
                Duration::from_secs(10),
                &AtomicBool::new(false),
            )
            .unwrap();
        assert_eq!(r.fetches, 3);
        assert_eq!(r.reducer_us[1], 0);
        assert!(r.reducer_us[0] > 0);
    }

    #[test]
    fn bad_configurations_are_refused_by_name() {
        let mut cfg = config(3, 3, 2, 1);
        cfg.order = vec![0, 0, 1, 0, 1, 2];
        let e = ShuffleCluster::connect(cfg).err().unwrap();
        assert!(e.to_string().starts_with("order:"), "{e}");
        let mut cfg = config(3, 4, 2, 1);
        cfg.order.clear();
        let e = ShuffleCluster::connect(cfg).err().unwrap();
        assert!(e.to_string().starts_with("map_hosts: 1..=3"), "{e}");
        let mut cfg = config(3, 3, 2, 1);
        cfg.output_bytes = 0;
        let e = ShuffleCluster::connect(cfg).err().unwrap();
        assert!(e.to_string().starts_with("output_bytes"), "{e}");
        // 130 reducers, all off the only map host: more than its listen backlog.
        let mut cfg = config(2, 1, 130, 1);
        cfg.reducer_hosts = 1;
        cfg.order = vec![0; 130];
        let e = ShuffleCluster::connect(cfg).err().unwrap();
        assert!(e.to_string().starts_with("reducers: at most 128"), "{e}");
    }

    #[test]
    fn every_socket_reports_its_timeouts_on_a_kernel_that_counts_them() {
        let cl = ShuffleCluster::connect(config(3, 3, 3, 2)).unwrap();
        let r = cl
            .run(
                Instant::now(),
                Duration::from_secs(20),
                &AtomicBool::new(false),
            )
            .unwrap();
        // Linux 6.7 on appends tcpi_total_rto to TCP_INFO; before, there is nothing to read.
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        let mut v = release
            .trim()
            .split(['.', '-'])
            .map(|x| x.parse::<u32>().unwrap_or(0));
        let (major, minor) = (v.next().unwrap_or(0), v.next().unwrap_or(0));
        if (major, minor) >= (6, 7) {
            let s = r.sides.expect("TCP_INFO counts timeouts from Linux 6.7 on");
            // Loopback loses nothing: no timeouts, no retransmissions.
            assert_eq!((s.map_rtos, s.reducer_rtos, s.map_retransmits), (0, 0, 0));
        } else {
            assert!(r.sides.is_none());
        }
    }

    #[test]
    fn a_stop_request_ends_the_run_with_what_is_outstanding() {
        let cl = ShuffleCluster::connect(config(3, 3, 3, 1)).unwrap();
        let r = cl
            .run(
                Instant::now(),
                Duration::from_secs(10),
                &AtomicBool::new(true),
            )
            .unwrap();
        assert!(r.truncated);
        assert_eq!(r.outstanding, 3 * 3 * 2);
    }
}
