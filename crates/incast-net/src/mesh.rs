//! The mesh driver: hosts in network namespaces, each connected to others, one readiness loop
//! for every end. The key-value store's gets ([`crate::kv`]) and the MapReduce shuffle
//! ([`crate::shuffle`]) are mesh workloads: each says which connections it needs, what to ask
//! and when, and what a completed reply finishes ([`Workload`]); the driver owns the rest.
//!
//! One thread of one process runs every end: a listening socket inside each serving host's
//! namespace, and from each client host its connections, opened inside its namespace (so they
//! leave through the host's NIC; a socket keeps the namespace it was made in, see
//! [`crate::netns`]). Requests are the block protocol's 24-byte reads; a server answers every
//! request as soon as it reads it, header and bytes, in order per connection, as Riak's vnodes
//! and Hadoop's map-output servlets do. The driver measures each host's busiest millisecond of
//! reply bytes and, at the end, every socket's retransmission counters from TCP_INFO.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mio::net::TcpStream as MioStream;
use mio::{Events, Interest, Poll, Token};

use crate::protocol::{
    encode_request, encode_response, parse_request, parse_response, Request, Status, HEADER_LEN,
};
use crate::server::{configure, ZEROS};

/// The largest reply a server writes (a value, or a map output, of up to 1 GiB).
pub const MAX_VALUE: u64 = 1 << 30;

/// How long the loop sleeps at most, so it sees a stop request.
const WAKE: Duration = Duration::from_millis(50);

/// One host of a mesh.
#[derive(Debug, Clone)]
pub struct MeshHost {
    /// Its network namespace (`None`: the caller's).
    pub netns: Option<String>,
    /// Where it listens if it serves (port 0: any free port).
    pub addr: SocketAddr,
}

/// How to reach the hosts.
#[derive(Debug, Clone)]
pub struct MeshConfig {
    /// The hosts, in host order.
    pub hosts: Vec<MeshHost>,
    /// TCP_CONGESTION of every socket.
    pub congestion: Option<String>,
    /// Seconds to wait for each connection.
    pub connect_timeout_s: f64,
}

/// One connection a workload needs: from its client host's namespace to its server host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    /// The host that asks.
    pub client: u32,
    /// The host that answers.
    pub server: u32,
}

/// A mesh workload: what to ask on which connection and when, and what a reply finishes.
/// Clock-free: the driver tells it the start and the instant of every event.
pub trait Workload {
    /// What a run measured.
    type Result;
    /// The connections it needs, in the numbering its requests use.
    fn links(&self) -> Vec<Link>;
    /// Connection `k` (`link`) in an error message.
    fn name(&self, k: usize, link: Link) -> String {
        let _ = k;
        format!("host {} → host {}", link.client, link.server)
    }
    /// When, from the start, it next has something to ask unprompted (`None`: only on
    /// replies).
    fn due(&self) -> Option<Duration>;
    /// The last planned arrival, from the start: the time limit counts from there.
    fn horizon(&self) -> Duration;
    /// Ask what is due at `now` (at or after `start`).
    fn issue(&mut self, start: Instant, now: Instant, wire: &mut Wire<'_>);
    /// The request `id` on connection `k` had its whole reply at `at`.
    fn on_reply(&mut self, k: usize, id: u32, at: Instant, start: Instant, wire: &mut Wire<'_>);
    /// Everything it asked is answered and nothing is left to ask.
    fn finished(&self) -> bool;
    /// Requests asked or planned but not answered.
    fn outstanding(&self) -> u64;
    /// Its result, with what the driver measured.
    fn result(self, measured: &Measured) -> Self::Result;
}

/// What the driver measured over a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measured {
    /// The run was stopped (time limit or a stop request) with requests outstanding.
    pub truncated: bool,
    /// Requests outstanding when it stopped.
    pub outstanding: u64,
    /// Per host: the most reply bytes it read in one millisecond.
    pub peak_bytes_1ms: Vec<u64>,
    /// Retransmission counters of the clients' ends and of the servers' ends, from every
    /// socket's TCP_INFO at the end; `None` before Linux 6.7 (no `tcpi_total_rto`).
    pub tcp: Option<[TcpCounts; 2]>,
}

/// Retransmission counters summed over sockets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpCounts {
    /// Retransmission timeouts (tcpi_total_rto).
    pub rtos: u64,
    /// Time spent in timeouts' recoveries, ms (tcpi_total_rto_time).
    pub rto_ms: u64,
    /// Segments retransmitted (tcpi_total_retrans).
    pub retransmits: u64,
}

/// Where a workload writes its requests: appended to the connections' pending bytes and
/// written by the driver when the workload returns.
pub struct Wire<'a> {
    clients: &'a mut [Client],
    dirty: &'a mut Vec<usize>,
}

impl Wire<'_> {
    /// Ask for `bytes` on connection `k`, as request `id`.
    pub fn ask(&mut self, k: usize, id: u32, bytes: u64) {
        let c = &mut self.clients[k];
        c.out.extend_from_slice(&encode_request(&Request {
            id: u64::from(id),
            bytes,
        }));
        c.want.push_back((id, bytes));
        self.dirty.push(k);
    }
}

/// A client host's end of a connection.
pub(crate) struct Client {
    pub(crate) s: MioStream,
    /// Requests not yet taken by the socket.
    out: Vec<u8>,
    /// Replies awaited, in order: (request, bytes).
    want: VecDeque<(u32, u64)>,
    hdr: [u8; HEADER_LEN],
    got: usize,
    /// Bytes of the reply being read still to come (after its header).
    left: u64,
    link: Link,
}

/// A server host's end of a connection made to it.
pub(crate) struct Served {
    pub(crate) s: MioStream,
    req: [u8; HEADER_LEN],
    got: usize,
    /// Replies to write after the current one: (request id, bytes).
    queue: VecDeque<(u64, u64)>,
    hdr: [u8; HEADER_LEN],
    hdr_left: usize,
    left: u64,
    host: u32,
}

/// Bytes per 1 ms window at one host: the current window and the fullest.
#[derive(Debug, Clone, Copy, Default)]
struct Peak {
    window: u64,
    bytes: u64,
    max: u64,
}

/// A workload's hosts, connected and ready to run.
pub struct Mesh<W> {
    pub(crate) workload: W,
    hosts: usize,
    pub(crate) clients: Vec<Client>,
    pub(crate) served: Vec<Served>,
    /// Held so their namespaces' ports stay ours until the run ends.
    _listeners: Vec<TcpListener>,
}

pub(crate) fn named(e: io::Error, what: impl FnOnce() -> String) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", what()))
}

pub(crate) fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg.into())
}

impl<W: Workload> Mesh<W> {
    /// Listen in every serving host's namespace, open every connection `workload` needs from
    /// inside its client host's, and accept them.
    pub fn open(net: &MeshConfig, workload: W) -> io::Result<Mesh<W>> {
        let h = net.hosts.len();
        let links = workload.links();
        if let Some(l) = links
            .iter()
            .find(|l| l.client as usize >= h || l.server as usize >= h)
        {
            return Err(invalid(format!(
                "a connection names a host out of 0..{h}: {l:?}"
            )));
        }
        // Per host: connections to accept.
        let mut waiting = vec![0u32; h];
        for l in &links {
            waiting[l.server as usize] += 1;
        }
        let listeners = listen(&net.hosts, &waiting)?;
        // The connections as errors name them (the workload need not be shared with the
        // threads that enter the namespaces).
        let names: Vec<String> = (links.iter().enumerate())
            .map(|(k, &l)| workload.name(k, l))
            .collect();
        let clients = dial(net, &links, &names, &listeners)?;
        let served = accept(&listeners, &waiting, net.congestion.as_deref())?;
        Ok(Mesh {
            workload,
            hosts: h,
            clients,
            served,
            _listeners: listeners.into_iter().map(|(_, l)| l).collect(),
        })
    }

    /// Run the workload from `start` on; stop early when `stop` is set or `time_limit` after
    /// its last planned arrival (the result says so).
    pub fn run(
        mut self,
        start: Instant,
        time_limit: Duration,
        stop: &AtomicBool,
    ) -> io::Result<W::Result> {
        let nc = self.clients.len();
        let mut poll = register(&mut self.clients, &mut self.served)?;
        let mut peaks = vec![Peak::default(); self.hosts];
        let mut scratch = vec![0u8; 256 * 1024];
        let mut events = Events::with_capacity(4096);
        let mut dirty = Vec::new();
        let mut measured = Measured::default();
        let deadline = start + self.workload.horizon() + time_limit;
        let w = &mut self.workload;
        loop {
            let now = Instant::now();
            if now >= start {
                let mut wire = Wire {
                    clients: &mut self.clients,
                    dirty: &mut dirty,
                };
                w.issue(start, now, &mut wire);
                flush_dirty(&mut self.clients, &mut dirty)?;
            }
            if w.finished() {
                break;
            }
            if stop.load(Ordering::Relaxed) || now >= deadline {
                measured.truncated = true;
                measured.outstanding = w.outstanding();
                break;
            }
            // Sleep until the next planned request, waking for traffic.
            let wait = w.due().map_or(WAKE, |d| {
                (start + d).saturating_duration_since(now).min(WAKE)
            });
            poll.poll(&mut events, Some(wait))?;
            for ev in events.iter() {
                let t = ev.token().0;
                if t >= nc {
                    serve(&mut self.served[t - nc])?;
                    continue;
                }
                let c = &mut self.clients[t];
                flush(c)?;
                let peak = &mut peaks[c.link.client as usize];
                let done = read_replies(c, &mut scratch, start, peak)?;
                for (id, at) in done {
                    let mut wire = Wire {
                        clients: &mut self.clients,
                        dirty: &mut dirty,
                    };
                    w.on_reply(t, id, at, start, &mut wire);
                }
                flush_dirty(&mut self.clients, &mut dirty)?;
            }
        }
        measured.peak_bytes_1ms = peaks.iter().map(|p| p.max.max(p.bytes)).collect();
        measured.tcp = self.tcp_counts();
        Ok(self.workload.result(&measured))
    }

    /// Every socket's TCP_INFO counters, summed over the clients' ends and the servers'.
    fn tcp_counts(&self) -> Option<[TcpCounts; 2]> {
        let sum = |ends: &mut dyn Iterator<Item = &MioStream>| {
            let mut c = TcpCounts::default();
            for s in ends {
                let (rtos, ms, retx) = tcp_info(s)?;
                c.rtos += rtos;
                c.rto_ms += ms;
                c.retransmits += retx;
            }
            Some(c)
        };
        let clients = sum(&mut self.clients.iter().map(|c| &c.s))?;
        let servers = sum(&mut self.served.iter().map(|s| &s.s))?;
        Some([clients, servers])
    }
}

/// A listening socket in the namespace of every host that `waiting` connections will reach.
fn listen(hosts: &[MeshHost], waiting: &[u32]) -> io::Result<Vec<(usize, TcpListener)>> {
    let serving: Vec<(usize, &MeshHost)> = (hosts.iter().enumerate())
        .filter(|&(b, _)| waiting[b] > 0)
        .collect();
    crate::netns::in_each(
        &serving,
        |(_, x)| x.netns.as_deref(),
        |_, &(b, x)| {
            let l = TcpListener::bind(x.addr)
                .map_err(|e| named(e, || format!("host {b}: cannot listen on {}", x.addr)))?;
            Ok((b, l))
        },
    )
}

/// Open every link from inside its client host's namespace, in link order.
fn dial(
    net: &MeshConfig,
    links: &[Link],
    names: &[String],
    listeners: &[(usize, TcpListener)],
) -> io::Result<Vec<Client>> {
    // Where each server listens (a port of 0 in the configuration is the one bound).
    let mut bound: Vec<Option<SocketAddr>> = vec![None; net.hosts.len()];
    for (b, l) in listeners {
        bound[*b] = Some(l.local_addr()?);
    }
    let timeout = Duration::from_secs_f64(net.connect_timeout_s.max(0.001));
    let cc = net.congestion.as_deref();
    let outgoing = crate::netns::in_each(
        &net.hosts,
        |x| x.netns.as_deref(),
        |a, _| {
            let mut v = Vec::new();
            let mine = (links.iter().enumerate()).filter(|(_, l)| l.client as usize == a);
            for (k, &l) in mine {
                let who = || names[k].clone();
                let to = bound[l.server as usize].ok_or_else(|| {
                    invalid(format!("{}: host {} does not listen", who(), l.server))
                })?;
                let s = TcpStream::connect_timeout(&to, timeout)
                    .map_err(|e| named(e, || format!("{} ({to})", who())))?;
                configure(&s, true, None, None, cc).map_err(|e| named(e, who))?;
                v.push((k, s));
            }
            Ok(v)
        },
    )?;
    let mut ends: Vec<Option<Client>> = (0..links.len()).map(|_| None).collect();
    for (k, s) in outgoing.into_iter().flatten() {
        s.set_nonblocking(true)?;
        ends[k] = Some(Client::new(MioStream::from_std(s), links[k]));
    }
    Ok(ends.into_iter().flatten().collect())
}

/// Accept the connections waiting at every listener (every one is made already).
fn accept(
    listeners: &[(usize, TcpListener)],
    waiting: &[u32],
    cc: Option<&str>,
) -> io::Result<Vec<Served>> {
    let mut served = Vec::new();
    for (b, l) in listeners {
        for _ in 0..waiting[*b] {
            let (s, _) = l
                .accept()
                .map_err(|e| named(e, || format!("host {b}: accept")))?;
            configure(&s, true, None, None, cc).map_err(|e| named(e, || format!("host {b}")))?;
            s.set_nonblocking(true)?;
            served.push(Served::new(MioStream::from_std(s), *b as u32));
        }
    }
    Ok(served)
}

/// TCP_INFO's counters of one socket: (timeouts, time in timeout recovery ms, segments
/// retransmitted); `None` before Linux 6.7 (no `tcpi_total_rto`).
#[cfg(target_os = "linux")]
fn tcp_info(s: &MioStream) -> Option<(u64, u64, u64)> {
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
    let u32_at = |o: usize| {
        u64::from(u32::from_ne_bytes([
            buf[o],
            buf[o + 1],
            buf[o + 2],
            buf[o + 3],
        ]))
    };
    let rtos = u64::from(u16::from_ne_bytes([buf[240], buf[241]]));
    Some((rtos, u32_at(244), u32_at(100)))
}

#[cfg(not(target_os = "linux"))]
fn tcp_info(_: &MioStream) -> Option<(u64, u64, u64)> {
    None
}

impl Client {
    fn new(s: MioStream, link: Link) -> Client {
        Client {
            s,
            out: Vec::new(),
            want: VecDeque::new(),
            hdr: [0; HEADER_LEN],
            got: 0,
            left: 0,
            link,
        }
    }

    fn who(&self, arrow: &str) -> String {
        format!(
            "host {} {arrow} host {}",
            self.link.client, self.link.server
        )
    }
}

impl Served {
    fn new(s: MioStream, host: u32) -> Served {
        Served {
            s,
            req: [0; HEADER_LEN],
            got: 0,
            queue: VecDeque::new(),
            hdr: [0; HEADER_LEN],
            hdr_left: 0,
            left: 0,
            host,
        }
    }
}

/// A poll for every connection end: the clients as tokens 0.., the served ends after them.
fn register(clients: &mut [Client], served: &mut [Served]) -> io::Result<Poll> {
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

fn gone(who: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("{who}: the connection closed"),
    )
}

/// Write what the workload asked on the connections it named.
fn flush_dirty(clients: &mut [Client], dirty: &mut Vec<usize>) -> io::Result<()> {
    for k in dirty.drain(..) {
        flush(&mut clients[k])?;
    }
    Ok(())
}

/// Write a client's pending requests as far as its socket takes them.
fn flush(c: &mut Client) -> io::Result<()> {
    let mut at = 0;
    while at < c.out.len() {
        match c.s.write(&c.out[at..]) {
            Ok(0) => return Err(gone(c.who("→"))),
            Ok(n) => at += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(named(e, || c.who("→"))),
        }
    }
    c.out.drain(..at);
    Ok(())
}

/// Read what a client's connection holds; the requests whose reply completed, with when.
fn read_replies(
    c: &mut Client,
    scratch: &mut [u8],
    start: Instant,
    peak: &mut Peak,
) -> io::Result<Vec<(u32, Instant)>> {
    let mut done = Vec::new();
    loop {
        let r = if c.got < HEADER_LEN {
            c.s.read(&mut c.hdr[c.got..])
        } else {
            let n = c.left.min(scratch.len() as u64) as usize;
            c.s.read(&mut scratch[..n])
        };
        let n = match r {
            Ok(0) => return Err(gone(c.who("←"))),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(done),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(named(e, || c.who("←"))),
        };
        let now = Instant::now();
        if c.got < HEADER_LEN {
            c.got += n;
            if c.got < HEADER_LEN {
                continue;
            }
            let (status, id, bytes) = parse_response(&c.hdr).map_err(|m| {
                io::Error::new(io::ErrorKind::InvalidData, format!("{}: {m}", c.who("←")))
            })?;
            let want = c.want.front().copied();
            if status != Status::Ok || want != Some((id as u32, bytes)) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{}: answer {status:?} for request {id} of {bytes} bytes, expected {want:?}",
                        c.who("←")
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
            if let Some((id, _)) = c.want.pop_front() {
                done.push((id, now));
            }
            c.got = 0;
        }
    }
}

/// Read a server's requests and write its replies as far as the socket allows.
fn serve(s: &mut Served) -> io::Result<()> {
    let who = |s: &Served| format!("host {} (server)", s.host);
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

    /// A toy workload: host 0 asks host 1, then host 2, for `rounds` replies each in turn,
    /// one at a time; so the driver's connect, ask, reply and finish are seen alone.
    struct PingPong {
        rounds: u32,
        asked: u32,
        replies: Vec<(usize, u32)>,
        last: Option<Instant>,
    }

    impl Workload for PingPong {
        type Result = (Vec<(usize, u32)>, Measured);
        fn links(&self) -> Vec<Link> {
            vec![
                Link {
                    client: 0,
                    server: 1,
                },
                Link {
                    client: 0,
                    server: 2,
                },
            ]
        }
        fn due(&self) -> Option<Duration> {
            (self.asked == 0).then_some(Duration::ZERO)
        }
        fn horizon(&self) -> Duration {
            Duration::ZERO
        }
        fn issue(&mut self, _: Instant, _: Instant, wire: &mut Wire<'_>) {
            if self.asked == 0 {
                wire.ask(0, 0, 1000);
                self.asked = 1;
            }
        }
        fn on_reply(&mut self, k: usize, id: u32, at: Instant, _: Instant, wire: &mut Wire<'_>) {
            assert!(self.last.is_none_or(|t| t <= at));
            self.last = Some(at);
            self.replies.push((k, id));
            if self.asked < 2 * self.rounds {
                wire.ask(1 - k, self.asked, 1000 + u64::from(self.asked));
                self.asked += 1;
            }
        }
        fn finished(&self) -> bool {
            self.replies.len() as u32 == 2 * self.rounds
        }
        fn outstanding(&self) -> u64 {
            u64::from(2 * self.rounds) - self.replies.len() as u64
        }
        fn result(self, m: &Measured) -> Self::Result {
            (self.replies, m.clone())
        }
    }

    fn hosts(n: u32) -> MeshConfig {
        MeshConfig {
            hosts: (0..n)
                .map(|i| MeshHost {
                    netns: None,
                    addr: format!("127.0.8.{}:0", i + 1).parse().unwrap(),
                })
                .collect(),
            congestion: None,
            connect_timeout_s: 2.0,
        }
    }

    fn ping_pong(rounds: u32) -> PingPong {
        PingPong {
            rounds,
            asked: 0,
            replies: Vec::new(),
            last: None,
        }
    }

    #[test]
    fn only_the_hosts_that_serve_listen_and_every_link_is_one_connection() {
        let mesh = Mesh::open(&hosts(3), ping_pong(3)).unwrap();
        assert_eq!(
            (mesh.clients.len(), mesh.served.len(), mesh._listeners.len()),
            (2, 2, 2)
        );
        let (replies, m) = mesh
            .run(
                Instant::now(),
                Duration::from_secs(10),
                &AtomicBool::new(false),
            )
            .unwrap();
        assert_eq!(replies, [(0, 0), (1, 1), (0, 2), (1, 3), (0, 4), (1, 5)]);
        assert!(!m.truncated && m.outstanding == 0);
        // Host 0 read every reply; hosts 1 and 2 none.
        assert!(m.peak_bytes_1ms[0] >= 1000 && m.peak_bytes_1ms[1..] == [0, 0]);
    }

    #[test]
    fn a_stop_request_leaves_the_outstanding_requests_counted() {
        let mesh = Mesh::open(&hosts(3), ping_pong(2)).unwrap();
        let (replies, m) = mesh
            .run(
                Instant::now(),
                Duration::from_secs(10),
                &AtomicBool::new(true),
            )
            .unwrap();
        assert!(replies.is_empty() && m.truncated && m.outstanding == 4);
    }

    #[test]
    fn a_link_to_a_host_that_does_not_exist_is_refused_by_name() {
        struct Astray;
        impl Workload for Astray {
            type Result = ();
            fn links(&self) -> Vec<Link> {
                vec![Link {
                    client: 0,
                    server: 7,
                }]
            }
            fn due(&self) -> Option<Duration> {
                None
            }
            fn horizon(&self) -> Duration {
                Duration::ZERO
            }
            fn issue(&mut self, _: Instant, _: Instant, _: &mut Wire<'_>) {}
            fn on_reply(&mut self, _: usize, _: u32, _: Instant, _: Instant, _: &mut Wire<'_>) {}
            fn finished(&self) -> bool {
                true
            }
            fn outstanding(&self) -> u64 {
                0
            }
            fn result(self, _: &Measured) {}
        }
        let e = Mesh::open(&hosts(2), Astray).err().unwrap();
        assert!(
            e.to_string()
                .starts_with("a connection names a host out of 0..2"),
            "{e}"
        );
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
