//! The key-value store's gets on real TCP: the emulator's half of the operator's incast.
//!
//! Every host is a coordinator and a replica. One thread of one process runs them all: a
//! listening socket inside each host's network namespace, and from each host a connection
//! to every other (opened inside the host's namespace, so it leaves through the host's NIC;
//! a socket keeps the namespace it was made in, see [`crate::netns`]). One readiness loop then
//! issues the planned gets at their times: a get writes one request (the block protocol's
//! 24-byte read) to each remote replica and completes when `quorum` replies have arrived (a
//! replica on the coordinator answers locally, at once). Replicas answer every request as
//! soon as they read it, header and value, in order per connection, as Riak does.
//!
//! The plan (arrivals, sizes, replicas) is drawn by the simulator's own rule
//! (`incast_sim::kv::plan`), so the same scenario and seed run the same gets on both.
//! Latency runs from the moment the requests were written to the quorum's last byte read;
//! how late each get left against its planned time is reported beside it (the loop's
//! timers, and the CPUs it shares with the testbed's softirqs).

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mio::net::TcpStream as MioStream;
use mio::{Events, Interest, Poll, Token};
use serde::Serialize;

use crate::protocol::{
    encode_request, encode_response, parse_request, parse_response, Request, Status, HEADER_LEN,
};
use crate::server::{configure, ZEROS};

/// One host of the cluster.
#[derive(Debug, Clone)]
pub struct KvHost {
    /// Its network namespace (`None`: the caller's).
    pub netns: Option<String>,
    /// Where its replica listens (port 0: any free port).
    pub addr: SocketAddr,
}

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
    pub hosts: Vec<KvHost>,
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

/// A coordinator's connection to one replica (a reducer's to one map host, in
/// [`crate::shuffle`]).
pub(crate) struct Client {
    pub(crate) s: MioStream,
    /// Requests not yet taken by the socket.
    pub(crate) out: Vec<u8>,
    /// Replies awaited, in order: (get, value bytes).
    pub(crate) want: VecDeque<(u32, u64)>,
    hdr: [u8; HEADER_LEN],
    got: usize,
    /// Value bytes of the reply being read still to come (after its header).
    left: u64,
    host: u32,
    replica: u32,
}

impl Client {
    /// Host `host`'s end of its connection `s` to host `replica`.
    pub(crate) fn new(s: MioStream, host: u32, replica: u32) -> Client {
        Client {
            s,
            out: Vec::new(),
            want: VecDeque::new(),
            hdr: [0; HEADER_LEN],
            got: 0,
            left: 0,
            host,
            replica,
        }
    }
}

/// A replica's end of a coordinator's connection (a map host's end of a reducer's).
pub(crate) struct Served {
    pub(crate) s: MioStream,
    req: [u8; HEADER_LEN],
    got: usize,
    /// Replies to write after the current one: (request id, bytes).
    queue: VecDeque<(u64, u64)>,
    hdr: [u8; HEADER_LEN],
    hdr_left: usize,
    left: u64,
    replica: u32,
}

impl Served {
    /// Host `replica`'s end `s` of a connection made to it.
    pub(crate) fn new(s: MioStream, replica: u32) -> Served {
        Served {
            s,
            req: [0; HEADER_LEN],
            got: 0,
            queue: VecDeque::new(),
            hdr: [0; HEADER_LEN],
            hdr_left: 0,
            left: 0,
            replica,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct GetState {
    issued: Instant,
    replies: u32,
    left: u32,
    measured: bool,
    host: u32,
}

/// Bytes per 1 ms window at one host: the current window and the fullest.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Peak {
    window: u64,
    bytes: u64,
    max: u64,
}

/// The largest reply a replica writes (a value, or a map output, of up to 1 GiB).
pub const MAX_VALUE: u64 = 1 << 30;

/// The cluster, connected and ready to run.
pub struct KvCluster {
    cfg: KvConfig,
    clients: Vec<Client>,
    served: Vec<Served>,
    /// Held so their namespaces' ports stay ours until the run ends.
    _listeners: Vec<TcpListener>,
}

pub(crate) fn named(e: io::Error, what: impl FnOnce() -> String) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", what()))
}

impl KvCluster {
    /// The connection on which coordinator `a` asks replica `b` (a ≠ b), as the simulator
    /// numbers them.
    fn conn(hosts: usize, a: u32, b: u32) -> usize {
        a as usize * (hosts - 1) + b as usize - usize::from(b > a)
    }

    /// Listen in every host's namespace, connect every host to every other, and accept.
    pub fn connect(cfg: KvConfig) -> io::Result<KvCluster> {
        let h = cfg.hosts.len();
        if h < 2 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "hosts: a cluster needs at least 2",
            ));
        }
        if cfg.quorum == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "quorum: at least 1",
            ));
        }
        if let Some(g) = cfg.gets.iter().find(|g| {
            g.host as usize >= h
                || g.size == 0
                || g.size > MAX_VALUE
                || g.replicas.iter().any(|&r| r as usize >= h)
        }) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("gets: a get names a host out of 0..{h} or a size out of 1..=1GB: {g:?}"),
            ));
        }
        if cfg.gets.windows(2).any(|w| w[1].at_us < w[0].at_us) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "gets: not in arrival order",
            ));
        }
        let listeners = crate::netns::in_each(
            &cfg.hosts,
            |x| x.netns.as_deref(),
            |i, x| {
                TcpListener::bind(x.addr)
                    .map_err(|e| named(e, || format!("host {i}: cannot listen on {}", x.addr)))
            },
        )?;
        // Where each replica listens (a port of 0 in the configuration is the one bound).
        let bound: Vec<SocketAddr> = listeners
            .iter()
            .map(|l| l.local_addr())
            .collect::<io::Result<_>>()?;
        let timeout = Duration::from_secs_f64(cfg.connect_timeout_s.max(0.001));
        let cc = cfg.congestion.as_deref();
        let outgoing = crate::netns::in_each(
            &cfg.hosts,
            |x| x.netns.as_deref(),
            |a, _| {
                let mut v = Vec::with_capacity(h - 1);
                for (b, to) in bound.iter().enumerate() {
                    if b == a {
                        continue;
                    }
                    let s = TcpStream::connect_timeout(to, timeout)
                        .map_err(|e| named(e, || format!("host {a} → host {b} ({to})")))?;
                    configure(&s, true, None, None, cc)
                        .map_err(|e| named(e, || format!("host {a} → host {b}")))?;
                    v.push(s);
                }
                Ok(v)
            },
        )?;
        let mut clients = Vec::with_capacity(h * (h - 1));
        for (a, streams) in outgoing.into_iter().enumerate() {
            for (k, s) in streams.into_iter().enumerate() {
                let b = k + usize::from(k >= a);
                s.set_nonblocking(true)?;
                clients.push(Client::new(MioStream::from_std(s), a as u32, b as u32));
            }
        }
        let mut served = Vec::with_capacity(h * (h - 1));
        for (b, l) in listeners.iter().enumerate() {
            // Every connection to it is made already: h − 1 are waiting to be accepted.
            for _ in 0..h - 1 {
                let (s, _) = l
                    .accept()
                    .map_err(|e| named(e, || format!("host {b}: accept")))?;
                configure(&s, true, None, None, cc)
                    .map_err(|e| named(e, || format!("host {b}")))?;
                s.set_nonblocking(true)?;
                served.push(Served::new(MioStream::from_std(s), b as u32));
            }
        }
        Ok(KvCluster {
            cfg,
            clients,
            served,
            _listeners: listeners,
        })
    }

    /// Run the gets from `start` on; stop early when `stop` is set or `time_limit` after the
    /// last planned arrival (the result says so).
    pub fn run(
        mut self,
        start: Instant,
        time_limit: Duration,
        stop: &AtomicBool,
    ) -> io::Result<KvResult> {
        let h = self.cfg.hosts.len();
        let nc = self.clients.len();
        let mut poll = register(&mut self.clients, &mut self.served)?;
        let gets = std::mem::take(&mut self.cfg.gets);
        let mut state: Vec<GetState> = Vec::with_capacity(gets.len());
        let mut lags: Vec<u64> = Vec::with_capacity(gets.len());
        let mut out = KvResult {
            latencies_us: Vec::new(),
            per_host: vec![KvHostResult::default(); h],
            issued: 0,
            end_us: 0,
            lag_us_p50: 0,
            lag_us_p99: 0,
            lag_us_max: 0,
            truncated: false,
            outstanding: 0,
        };
        let mut peaks = vec![Peak::default(); h];
        let mut scratch = vec![0u8; 256 * 1024];
        let mut events = Events::with_capacity(4096);
        let last = gets.last().map_or(0, |g| g.at_us);
        let deadline = start + Duration::from_micros(last) + time_limit;
        let warmup = self.cfg.warmup_us;
        let quorum = self.cfg.quorum;
        let mut live: u64 = 0;
        let mut next = 0;
        loop {
            let now = Instant::now();
            let now_us = now.saturating_duration_since(start).as_micros() as u64;
            // Issue every get that is due.
            while next < gets.len() && now >= start && gets[next].at_us <= now_us {
                let g = &gets[next];
                let id = state.len() as u32;
                let measured = g.at_us >= warmup;
                let mut st = GetState {
                    issued: now,
                    replies: 0,
                    left: 0,
                    measured,
                    host: g.host,
                };
                let hr = &mut out.per_host[g.host as usize];
                for &b in &g.replicas {
                    if b == g.host {
                        st.replies += 1;
                        continue;
                    }
                    let c = &mut self.clients[Self::conn(h, g.host, b)];
                    c.out.extend_from_slice(&encode_request(&Request {
                        id: u64::from(id),
                        bytes: g.size,
                    }));
                    c.want.push_back((id, g.size));
                    st.left += 1;
                    if measured {
                        hr.offered_bytes += g.size;
                    }
                    flush(c)?;
                }
                if measured {
                    hr.gets += 1;
                    if st.replies >= quorum {
                        out.latencies_us.push(0);
                    }
                }
                if st.left > 0 {
                    live += 1;
                }
                lags.push(now_us - g.at_us);
                state.push(st);
                out.issued += 1;
                next += 1;
            }
            if next == gets.len() && live == 0 {
                break;
            }
            if stop.load(Ordering::Relaxed) || now >= deadline {
                out.truncated = true;
                out.outstanding = live + (gets.len() - next) as u64;
                break;
            }
            // Sleep until the next arrival, waking for traffic; at least every 50 ms to see
            // a stop request.
            let wait = match gets.get(next) {
                Some(g) => (start + Duration::from_micros(g.at_us)).saturating_duration_since(now),
                None => Duration::from_millis(50),
            }
            .min(Duration::from_millis(50));
            poll.poll(&mut events, Some(wait))?;
            for ev in events.iter() {
                let t = ev.token().0;
                if t < nc {
                    let c = &mut self.clients[t];
                    flush(c)?;
                    let done = read_replies(c, &mut scratch, start, &mut peaks[c.host as usize])?;
                    for (g, at) in done {
                        let st = &mut state[g as usize];
                        st.replies += 1;
                        st.left -= 1;
                        let size = gets[g as usize].size;
                        if st.measured {
                            out.per_host[st.host as usize].received_bytes += size;
                            if st.replies == quorum {
                                out.latencies_us.push(
                                    at.saturating_duration_since(st.issued).as_micros() as u64,
                                );
                            }
                        }
                        if st.left == 0 {
                            live -= 1;
                            out.end_us = out
                                .end_us
                                .max(at.saturating_duration_since(start).as_micros() as u64);
                        }
                    }
                } else {
                    serve(&mut self.served[t - nc])?;
                }
            }
        }
        for (hr, p) in out.per_host.iter_mut().zip(&peaks) {
            hr.peak_bytes_1ms = p.max.max(p.bytes);
        }
        lags.sort_unstable();
        out.lag_us_p50 = quantile(&lags, 0.5);
        out.lag_us_p99 = quantile(&lags, 0.99);
        out.lag_us_max = lags.last().copied().unwrap_or(0);
        Ok(out)
    }
}

/// A poll for every connection end: the clients as tokens 0.., the served ends after them.
pub(crate) fn register(clients: &mut [Client], served: &mut [Served]) -> io::Result<Poll> {
    let poll = Poll::new()?;
    let ends = clients
        .iter_mut()
        .map(|c| &mut c.s)
        .chain(served.iter_mut().map(|s| &mut s.s));
    for (token, s) in ends.enumerate() {
        poll.registry()
            .register(s, Token(token), Interest::READABLE | Interest::WRITABLE)?;
    }
    Ok(poll)
}

/// The `q`-quantile of sorted `v` (nearest rank), 0 if empty.
fn quantile(v: &[u64], q: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    let rank = (q * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

fn gone(who: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("{who}: the connection closed"),
    )
}

/// Write a coordinator's pending requests as far as its socket takes them.
pub(crate) fn flush(c: &mut Client) -> io::Result<()> {
    let mut at = 0;
    while at < c.out.len() {
        match c.s.write(&c.out[at..]) {
            Ok(0) => return Err(gone(format!("host {} → host {}", c.host, c.replica))),
            Ok(n) => at += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(named(e, || format!("host {} → host {}", c.host, c.replica))),
        }
    }
    c.out.drain(..at);
    Ok(())
}

/// Read what a coordinator's connection holds; the gets whose reply completed, with when.
pub(crate) fn read_replies(
    c: &mut Client,
    scratch: &mut [u8],
    start: Instant,
    peak: &mut Peak,
) -> io::Result<Vec<(u32, Instant)>> {
    let who = |c: &Client| format!("host {} ← host {}", c.host, c.replica);
    let mut done = Vec::new();
    loop {
        let r = if c.got < HEADER_LEN {
            c.s.read(&mut c.hdr[c.got..])
        } else {
            let n = c.left.min(scratch.len() as u64) as usize;
            c.s.read(&mut scratch[..n])
        };
        let n = match r {
            Ok(0) => return Err(gone(who(c))),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(done),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(named(e, || who(c))),
        };
        let now = Instant::now();
        if c.got < HEADER_LEN {
            c.got += n;
            if c.got < HEADER_LEN {
                continue;
            }
            let (status, id, bytes) = parse_response(&c.hdr).map_err(|m| {
                io::Error::new(io::ErrorKind::InvalidData, format!("{}: {m}", who(c)))
            })?;
            let want = c.want.front().copied();
            if status != Status::Ok || want != Some((id as u32, bytes)) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{}: answer {status:?} for request {id} of {bytes} bytes, expected {want:?}",
                        who(c)
                    ),
                ));
            }
            c.left = bytes;
        } else {
            c.left -= n as u64;
            let w = now.saturating_duration_since(start).as_millis() as u64;
            if w != peak.window {
                peak.max = peak.max.max(peak.bytes);
                peak.window = w;
                peak.bytes = 0;
            }
            peak.bytes += n as u64;
        }
        if c.got == HEADER_LEN && c.left == 0 {
            let (g, _) = c.want.pop_front().expect("checked above");
            done.push((g, now));
            c.got = 0;
        }
    }
}

/// Read a replica's requests and write its replies as far as the socket allows.
pub(crate) fn serve(s: &mut Served) -> io::Result<()> {
    let who = |s: &Served| format!("host {} (replica)", s.replica);
    loop {
        match s.s.read(&mut s.req[s.got..]) {
            Ok(0) => return Err(gone(who(s))),
            Ok(n) => {
                s.got += n;
                if s.got == HEADER_LEN {
                    let r = parse_request(&s.req, MAX_VALUE).map_err(|e| {
                        io::Error::new(io::ErrorKind::InvalidData, format!("{}: {e}", who(s)))
                    })?;
                    s.queue.push_back((r.id, r.bytes));
                    s.got = 0;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(named(e, || who(s))),
        }
    }
    loop {
        if s.hdr_left == 0 && s.left == 0 {
            let Some((id, bytes)) = s.queue.pop_front() else {
                return Ok(());
            };
            s.hdr = encode_response(Status::Ok, id, bytes);
            s.hdr_left = HEADER_LEN;
            s.left = bytes;
        }
        let r = if s.hdr_left > 0 {
            s.s.write(&s.hdr[HEADER_LEN - s.hdr_left..])
        } else {
            let n = s.left.min(ZEROS.len() as u64) as usize;
            s.s.write(&ZEROS[..n])
        };
        match r {
            Ok(0) => return Err(gone(who(s))),
            Ok(n) if s.hdr_left > 0 => s.hdr_left -= n,
            Ok(n) => s.left -= n as u64,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(named(e, || who(s))),
        }
    }
}

/// The [`Instant`] at `ns` on the monotonic clock (CLOCK_MONOTONIC, Python's
/// `time.monotonic_ns()`), so another process or language can name a start time.
pub fn instant_at_monotonic_ns(ns: u64) -> Instant {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    let now_ns = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
    let now = Instant::now();
    if ns >= now_ns {
        now + Duration::from_nanos(ns - now_ns)
    } else {
        now.checked_sub(Duration::from_nanos(now_ns - ns))
            .unwrap_or(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(hosts: u32) -> Vec<KvHost> {
        (0..hosts)
            .map(|i| KvHost {
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
        kv.cfg.warmup_us = 5000;
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

    #[test]
    fn the_monotonic_clock_maps_to_instants() {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        let now_ns = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
        let at = instant_at_monotonic_ns(now_ns + 50_000_000);
        let d = at.saturating_duration_since(Instant::now());
        assert!(
            d > Duration::from_millis(40) && d <= Duration::from_millis(50),
            "{d:?}"
        );
    }
}
