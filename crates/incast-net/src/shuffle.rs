//! A MapReduce shuffle on real TCP: the emulator's half of `workload.kind = "shuffle"`.
//!
//! The hosts are namespaces on the emulated switch. The last `map_hosts` of them hold map
//! outputs and serve them (a listening socket in each); reducer i runs on host
//! i mod `reducer_hosts` and has one keep-alive connection to every map host but its own,
//! opened inside its host's namespace (its own host's outputs are read locally, as the
//! simulator's reducers do). One thread of one process runs every end, as
//! [`crate::kv`] does. From the start on, every reducer asks one map host for one output at a
//! time (the block protocol's 24-byte read, answered by a header and the output's bytes), at
//! most `window` hosts at once, going round the hosts in the order the simulator draws for it
//! (`incast_sim::shuffle::fetch_orders`), and asks the next host as soon as a fetch completes:
//! the simulator's shuffle, fetch for fetch, on the kernel's TCP.

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mio::net::TcpStream as MioStream;
use mio::Events;
use serde::Serialize;

use crate::kv::{
    flush, named, read_replies, register, serve, Client, KvHost, Peak, Served, MAX_VALUE,
};
use crate::protocol::{encode_request, Request};
use crate::server::configure;

/// What to run.
#[derive(Debug, Clone)]
pub struct ShuffleConfig {
    /// The hosts, in host order (the map hosts are the last `map_hosts`).
    pub hosts: Vec<KvHost>,
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
    /// retransmitted), the map hosts' ends the
    /// outputs.
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

/// TCP_INFO's counters of one socket: (timeouts, time in timeout recovery ms, segments
/// retransmitted); `None` before Linux 6.7 (no `tcpi_total_rto`).
#[cfg(target_os = "linux")]
fn tcp_counts(s: &MioStream) -> Option<(u64, u64, u64)> {
    use std::os::fd::AsRawFd;
    // struct tcp_info (include/uapi/linux/tcp.h): tcpi_total_retrans is the u32 at byte 100;
    // Linux 6.7 appended tcpi_total_rto (u16 at 240) and tcpi_total_rto_time (u32 at 244).
    let mut buf = [0u8; 512];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `buf` and updates `len`.
    let r = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if r != 0 || (len as usize) < 248 {
        return None;
    }
    let u32_at = |o: usize| u64::from(u32::from_ne_bytes(buf[o..o + 4].try_into().unwrap()));
    let rtos = u64::from(u16::from_ne_bytes(buf[240..242].try_into().unwrap()));
    Some((rtos, u32_at(244), u32_at(100)))
}

#[cfg(not(target_os = "linux"))]
fn tcp_counts(_: &MioStream) -> Option<(u64, u64, u64)> {
    None
}

/// The host reducer `r` runs on (the simulator's rule: reducer i on host i mod
/// `reducer_hosts`).
fn host_of(r: u32, reducer_hosts: u32) -> u32 {
    r % reducer_hosts.max(1)
}

/// At most this many connections wait to be accepted at one map host (the listen backlog).
pub const MAX_PER_LISTENER: u32 = 128;

/// Connections a shuffle opens (one per reducer and map host other than its own), and the
/// most that wait at one map host, for `hosts` hosts whose last `map_hosts` hold outputs and
/// `reducers` reducers, reducer i on host i mod `reducer_hosts`.
pub fn connections(hosts: u32, map_hosts: u32, reducers: u32, reducer_hosts: u32) -> (u32, u32) {
    let per_map_host = |b: u32| {
        (0..reducers)
            .filter(|&r| host_of(r, reducer_hosts) != b)
            .count() as u32
    };
    let first = hosts.saturating_sub(map_hosts);
    let all = (first..hosts).map(per_map_host).sum();
    let most = (first..hosts).map(per_map_host).max().unwrap_or(0);
    (all, most)
}

/// The reducers' copiers: what each connection and each reducer has left to fetch.
struct Copiers {
    /// Per connection: fetches still to ask; a fetch in flight; its reducer.
    left: Vec<u32>,
    busy: Vec<bool>,
    reducer: Vec<usize>,
    /// Per reducer: fetches in flight, fetches still to complete, where in its order it looks
    /// next.
    in_flight: Vec<u32>,
    remaining: Vec<u32>,
    cursor: Vec<u32>,
    next_id: u32,
}

impl Copiers {
    fn new(cfg: &ShuffleConfig, conn: &[Option<usize>], connections: usize) -> Copiers {
        let m = cfg.map_hosts as usize;
        let mut reducer = vec![0; connections];
        let mut remaining = vec![0; cfg.reducers as usize];
        for (k, c) in conn.iter().enumerate() {
            if let Some(i) = *c {
                reducer[i] = k / m;
                remaining[k / m] += cfg.outputs;
            }
        }
        Copiers {
            left: vec![cfg.outputs; connections],
            busy: vec![false; connections],
            reducer,
            in_flight: vec![0; cfg.reducers as usize],
            remaining,
            cursor: vec![0; cfg.reducers as usize],
            next_id: 0,
        }
    }

    /// Reducer `r` asks map hosts, in its order, for outputs until `window` fetches are in
    /// flight or no host free of one has outputs left (the simulator's `Shuffle::fill`).
    fn fill(
        &mut self,
        r: usize,
        cfg: &ShuffleConfig,
        conn: &[Option<usize>],
        clients: &mut [Client],
    ) -> io::Result<()> {
        let m = cfg.map_hosts;
        let mut looked = 0;
        while self.in_flight[r] < cfg.window && looked < m {
            let pos = self.cursor[r];
            self.cursor[r] = (pos + 1) % m;
            looked += 1;
            let j = cfg.order[r * m as usize + pos as usize];
            let Some(i) = conn[r * m as usize + j as usize] else {
                continue; // the reducer's own host: read locally
            };
            if self.busy[i] || self.left[i] == 0 {
                continue;
            }
            self.busy[i] = true;
            self.left[i] -= 1;
            self.in_flight[r] += 1;
            let c = &mut clients[i];
            c.out.extend_from_slice(&encode_request(&Request {
                id: u64::from(self.next_id),
                bytes: cfg.output_bytes,
            }));
            c.want.push_back((self.next_id, cfg.output_bytes));
            self.next_id = self.next_id.wrapping_add(1);
            flush(c)?;
        }
        Ok(())
    }

    /// The fetch on connection `i` completed; its reducer.
    fn completed(&mut self, i: usize) -> usize {
        let r = self.reducer[i];
        self.busy[i] = false;
        self.in_flight[r] -= 1;
        self.remaining[r] -= 1;
        r
    }
}

/// The shuffle, connected and ready to run.
pub struct ShuffleCluster {
    cfg: ShuffleConfig,
    /// Per (reducer, map host) `r·M + j`: its connection in `clients`, none for the reducer's
    /// own host.
    conn: Vec<Option<usize>>,
    clients: Vec<Client>,
    served: Vec<Served>,
    /// Held so their namespaces' ports stay ours until the run ends.
    _listeners: Vec<TcpListener>,
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

impl ShuffleCluster {
    fn check(cfg: &ShuffleConfig) -> io::Result<()> {
        let h = cfg.hosts.len() as u32;
        if h < 2 {
            return Err(invalid("hosts: a shuffle needs at least 2".into()));
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
            return Err(invalid(
                "reducers, outputs and window: at least 1 each".into(),
            ));
        }
        if cfg.output_bytes == 0 || cfg.output_bytes > MAX_VALUE {
            return Err(invalid(format!(
                "output_bytes: 1..={MAX_VALUE}, got {}",
                cfg.output_bytes
            )));
        }
        let m = cfg.map_hosts;
        let order_ok = cfg.order.len() == (cfg.reducers * m) as usize
            && cfg.order.chunks(m as usize).all(|o| {
                let mut seen = vec![false; m as usize];
                o.iter()
                    .all(|&j| j < m && !std::mem::replace(&mut seen[j as usize], true))
            });
        if !order_ok {
            return Err(invalid(format!(
                "order: every reducer's order must name each of the {m} map hosts once"
            )));
        }
        let (_, off) = connections(h, m, cfg.reducers, cfg.reducer_hosts);
        if off > MAX_PER_LISTENER {
            return Err(invalid(format!(
                "reducers: at most {MAX_PER_LISTENER} connections wait at one map host, got {off}"
            )));
        }
        Ok(())
    }

    /// Listen in every map host's namespace, connect every reducer to every map host but its
    /// own (from inside the reducer's host), and accept.
    pub fn connect(cfg: ShuffleConfig) -> io::Result<ShuffleCluster> {
        Self::check(&cfg)?;
        let h = cfg.hosts.len() as u32;
        let m = cfg.map_hosts;
        let first_map = h - m;
        let map_hosts = &cfg.hosts[first_map as usize..];
        let listeners = crate::netns::in_each(
            map_hosts,
            |x| x.netns.as_deref(),
            |j, x| {
                TcpListener::bind(x.addr).map_err(|e| {
                    named(e, || {
                        format!(
                            "host {}: cannot listen on {}",
                            first_map as usize + j,
                            x.addr
                        )
                    })
                })
            },
        )?;
        let bound: Vec<SocketAddr> = listeners
            .iter()
            .map(|l| l.local_addr())
            .collect::<io::Result<_>>()?;
        let timeout = Duration::from_secs_f64(cfg.connect_timeout_s.max(0.001));
        let cc = cfg.congestion.as_deref();
        // Per host: its reducers' connections, (reducer, map host index, stream).
        let outgoing = crate::netns::in_each(
            &cfg.hosts,
            |x| x.netns.as_deref(),
            |a, _| {
                let mut v = Vec::new();
                for r in (0..cfg.reducers).filter(|&r| host_of(r, cfg.reducer_hosts) == a as u32) {
                    for (j, to) in bound.iter().enumerate() {
                        let b = first_map + j as u32;
                        if b == a as u32 {
                            continue;
                        }
                        let s = TcpStream::connect_timeout(to, timeout).map_err(|e| {
                            named(e, || format!("reducer {r} on host {a} → host {b} ({to})"))
                        })?;
                        configure(&s, true, None, None, cc)
                            .map_err(|e| named(e, || format!("reducer {r} → host {b}")))?;
                        v.push((r, j as u32, s));
                    }
                }
                Ok(v)
            },
        )?;
        let mut conn = vec![None; (cfg.reducers * m) as usize];
        let mut clients = Vec::new();
        let mut waiting = vec![0u32; m as usize];
        for (a, streams) in outgoing.into_iter().enumerate() {
            for (r, j, s) in streams {
                s.set_nonblocking(true)?;
                conn[(r * m + j) as usize] = Some(clients.len());
                clients.push(Client::new(MioStream::from_std(s), a as u32, first_map + j));
                waiting[j as usize] += 1;
            }
        }
        let mut served = Vec::with_capacity(clients.len());
        for (j, l) in listeners.iter().enumerate() {
            let b = first_map + j as u32;
            for _ in 0..waiting[j] {
                let (s, _) = l
                    .accept()
                    .map_err(|e| named(e, || format!("host {b}: accept")))?;
                configure(&s, true, None, None, cc)
                    .map_err(|e| named(e, || format!("host {b}")))?;
                s.set_nonblocking(true)?;
                served.push(Served::new(MioStream::from_std(s), b));
            }
        }
        Ok(ShuffleCluster {
            cfg,
            conn,
            clients,
            served,
            _listeners: listeners,
        })
    }

    /// Run the shuffle from `start` on; stop early when `stop` is set or `time_limit` after
    /// the start (the result says so).
    pub fn run(
        mut self,
        start: Instant,
        time_limit: Duration,
        stop: &AtomicBool,
    ) -> io::Result<ShuffleResult> {
        let reducers = self.cfg.reducers as usize;
        let nc = self.clients.len();
        let mut poll = register(&mut self.clients, &mut self.served)?;
        let mut copiers = Copiers::new(&self.cfg, &self.conn, nc);
        let mut out = ShuffleResult {
            reducer_us: vec![0; reducers],
            end_us: 0,
            fetches: 0,
            received_bytes: 0,
            truncated: false,
            outstanding: 0,
            sides: None,
        };
        let mut done = copiers.remaining.iter().filter(|&&n| n == 0).count();
        let mut scratch = vec![0u8; 256 * 1024];
        let mut events = Events::with_capacity(4096);
        let mut peak = Peak::default();
        let deadline = start + time_limit;
        std::thread::sleep(start.saturating_duration_since(Instant::now()));
        // Every reducer that needs an output from another host starts its copiers.
        for r in 0..reducers {
            if copiers.remaining[r] > 0 {
                copiers.fill(r, &self.cfg, &self.conn, &mut self.clients)?;
            }
        }
        while done < reducers {
            if stop.load(Ordering::Relaxed) || Instant::now() >= deadline {
                out.truncated = true;
                out.outstanding = copiers.remaining.iter().map(|&n| u64::from(n)).sum();
                break;
            }
            // Wake at least every 50 ms to see a stop request.
            poll.poll(&mut events, Some(Duration::from_millis(50)))?;
            for ev in events.iter() {
                let t = ev.token().0;
                if t >= nc {
                    serve(&mut self.served[t - nc])?;
                    continue;
                }
                flush(&mut self.clients[t])?;
                let completed = read_replies(&mut self.clients[t], &mut scratch, start, &mut peak)?;
                for (_, at) in completed {
                    let r = copiers.completed(t);
                    out.fetches += 1;
                    out.received_bytes += self.cfg.output_bytes;
                    if copiers.remaining[r] == 0 {
                        let us = at.saturating_duration_since(start).as_micros() as u64;
                        out.reducer_us[r] = us;
                        out.end_us = out.end_us.max(us);
                        done += 1;
                    } else {
                        copiers.fill(r, &self.cfg, &self.conn, &mut self.clients)?;
                    }
                }
            }
        }
        out.sides = self.side_counts();
        Ok(out)
    }

    /// Every socket's TCP_INFO counters, summed per side.
    fn side_counts(&self) -> Option<SideCounts> {
        let mut c = SideCounts::default();
        for cl in &self.clients {
            let (rtos, _, retx) = tcp_counts(&cl.s)?;
            c.reducer_rtos += rtos;
            c.reducer_retransmits += retx;
        }
        for sv in &self.served {
            let (rtos, ms, retx) = tcp_counts(&sv.s)?;
            c.map_rtos += rtos;
            c.map_rto_ms += ms;
            c.map_retransmits += retx;
        }
        Some(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(hosts: u32) -> Vec<KvHost> {
        (0..hosts)
            .map(|i| KvHost {
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
    fn connections_leave_out_a_reducers_own_host() {
        // 4 hosts, the last 3 map hosts, 6 reducers on hosts 0,1,2,3,0,1: host 1 serves the
        // 4 reducers off it, hosts 2 and 3 the 5 each.
        assert_eq!(connections(4, 3, 6, 4), (14, 5));
        assert_eq!(connections(2, 1, 130, 1), (130, 130));
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
