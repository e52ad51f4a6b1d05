//! The block server: answers read requests with synthetic bytes over long-lived connections.
//!
//! It binds only to the address it is given, serves nothing but zeros, caps what one request
//! may ask for and how many connections it holds (in all and per peer address), and answers a
//! malformed or wrong-version request with an error status (logging the reason) before
//! closing that connection only: everyone else goes on being served.
//!
//! One thread serves every connection, driven by readiness events (mio: epoll on Linux), so
//! a client that stops reading holds a socket buffer, not a thread. Every connection has a
//! deadline: its first request must arrive soon after it connects, a later one within the idle
//! timeout, and an answer must make progress within the write timeout; a connection past its
//! deadline is closed. A host opening many connections is turned away at its own cap.
//!
//! Admission is fair under a flood: when the table is full (`max_conns`), a new connection
//! takes the place of the least useful one held, the one with the highest score
//! *time since it last made progress × connections its peer holds* (progress: a byte of a
//! request read or of an answer written; a new connection counts from its accept). Idle and
//! never-reading connections age; a client that asks and reads keeps its score near zero, so
//! a flood from many addresses evicts itself, not the clients it crowds. Peers outside the
//! allow-list are closed at accept; with a token configured, a request without it is refused.
//! Log lines never block the loop ([`crate::serverlog`]).
//!
//! One server may listen on several addresses, each in a network namespace of its own
//! ([`Server::bind_each`]): an emulation's every sender host is then a listening socket of
//! one process and one thread, not a process each. Each address counts as a server of its
//! own for the connection caps.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mio::net::{TcpListener as MioListener, TcpStream};
use mio::{Events, Interest, Poll, Token};
use socket2::{Domain, SockRef, Socket, Type};

use crate::access::{allowed, Cidr, Token as SharedToken};
use crate::protocol::{
    encode_response, parse_request_header, ProtocolError, Request, Status, HEADER_LEN,
    MAX_REQUEST_LEN,
};
use crate::serverlog::{Log, Reason};

/// Server limits and socket options.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Most bytes one request may ask for.
    pub max_request: u64,
    /// Most connections served at once (per listening address); a new one past it evicts the
    /// least useful connection held (see the module's documentation).
    pub max_conns: usize,
    /// Most connections served at once from one peer address (per listening address).
    pub max_conns_per_peer: usize,
    /// A connection silent this long between requests is closed.
    pub idle_timeout: Duration,
    /// A new connection must have sent its first request within this.
    pub first_request_timeout: Duration,
    /// An answer that cannot write a byte for this long is abandoned and its connection closed.
    pub write_timeout: Duration,
    /// Disable Nagle (TCP_NODELAY).
    pub nodelay: bool,
    /// SO_SNDBUF, bytes.
    pub send_buffer: Option<usize>,
    /// TCP_CONGESTION, e.g. "cubic", "reno", "dctcp".
    pub congestion: Option<String>,
    /// Peer address blocks allowed to connect; empty: every address.
    pub allow: Vec<Cidr>,
    /// The shared token every request must carry; `None`: no token asked for.
    pub token: Option<SharedToken>,
    /// SO_SNDBUF of a connection admitted while the table is half full or more (at most
    /// `send_buffer` when that is set): the kernel's autotuned buffer grows to megabytes, which
    /// a never-reading client makes the server fill, so a reconnecting flood of them would
    /// cost the loop's CPU in proportion; a fixed buffer bounds that cost per connection.
    /// Once such a connection has read a whole answer its buffer is raised to `send_buffer`,
    /// or to [`PROVEN_SEND_BUFFER`]: a client that reads is not slowed for arriving in a flood.
    pub crowded_send_buffer: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_request: 64 << 20,
            max_conns: 1024,
            max_conns_per_peer: 128,
            idle_timeout: Duration::from_secs(60),
            first_request_timeout: Duration::from_secs(5),
            write_timeout: Duration::from_secs(30),
            nodelay: true,
            send_buffer: None,
            congestion: None,
            allow: Vec::new(),
            token: None,
            crowded_send_buffer: 256 << 10,
        }
    }
}

/// What a server has done, readable while it runs.
#[derive(Debug, Default)]
pub struct ServerStats {
    /// Connections accepted and served.
    pub connections: AtomicU64,
    /// Requests accepted for an answer. Counted when the request is parsed, before its answer
    /// is written, so a client that has read a whole answer finds its request counted.
    pub requests: AtomicU64,
    /// Payload bytes sent.
    pub bytes: AtomicU64,
    /// Requests refused (malformed, wrong version, too large).
    pub refused: AtomicU64,
    /// Connections turned away at the per-peer limit.
    pub busy: AtomicU64,
    /// Connections closed to make room for a new one at the global limit.
    pub evicted: AtomicU64,
    /// Connections from peers outside the allow-list, closed at accept.
    pub not_allowed: AtomicU64,
    /// Requests refused for a missing or wrong token.
    pub unauthorized: AtomicU64,
    /// Log lines dropped because the log sink was not keeping up.
    pub log_dropped: Arc<AtomicU64>,
    /// Connections closed for idleness (before their first request or between requests).
    pub idle_closed: AtomicU64,
    /// Connections closed because an answer made no progress within the write timeout.
    pub write_timeouts: AtomicU64,
    /// Connections open now.
    pub open: AtomicU64,
}

/// Apply socket options; a congestion control the kernel lacks is an error naming it.
pub fn configure(
    s: &impl AsFd,
    nodelay: bool,
    send: Option<usize>,
    recv: Option<usize>,
    congestion: Option<&str>,
) -> io::Result<()> {
    let sock = SockRef::from(s);
    sock.set_tcp_nodelay(nodelay)?;
    if let Some(b) = send {
        sock.set_send_buffer_size(b)?;
    }
    if let Some(b) = recv {
        sock.set_recv_buffer_size(b)?;
    }
    if let Some(cc) = congestion {
        set_congestion(&sock, cc)?;
    }
    Ok(())
}

/// TCP_CONGESTION is Linux's socket option: elsewhere naming a congestion control is refused
/// with a clear error rather than silently ignored (the real-TCP experiments need Linux).
#[cfg(not(target_os = "linux"))]
fn set_congestion(_sock: &SockRef<'_>, cc: &str) -> io::Result<()> {
    let shown: String = cc.chars().take(40).collect();
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "congestion control {shown:?}: choosing one per socket (TCP_CONGESTION) needs Linux"
        ),
    ))
}

#[cfg(target_os = "linux")]
fn set_congestion(sock: &SockRef<'_>, cc: &str) -> io::Result<()> {
    sock.set_tcp_congestion(cc.as_bytes()).map_err(|e| {
        let available =
            std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
                .map(|s| format!(" (available: {})", s.trim()))
                .unwrap_or_default();
        let shown: String = cc.chars().take(40).collect();
        io::Error::new(
            e.kind(),
            format!("congestion control {shown:?} is not available here: {e}{available}"),
        )
    })
}

/// Check, before serving or connecting, that this host can set congestion control `cc` on a
/// TCP socket: `--cc bogus` is refused at start rather than on every connection.
pub fn check_congestion(cc: &str) -> io::Result<()> {
    let s = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    set_congestion(&SockRef::from(&s), cc)
}

/// Where a connection is in its exchange.
enum Phase {
    /// Reading a request: `got` bytes so far of `need` (a header, then a token if flagged).
    Reading {
        got: usize,
        need: usize,
        first: bool,
    },
    /// Writing an answer: header bytes then payload bytes left.
    Writing {
        header_left: usize,
        payload_left: u64,
    },
    /// Writing a refusal (header only), then closing.
    Refusing { header_left: usize },
}

struct Conn {
    stream: TcpStream,
    peer: SocketAddr,
    /// Which listening address accepted it.
    listener: usize,
    buf: [u8; MAX_REQUEST_LEN],
    phase: Phase,
    /// When the connection is closed unless it makes progress.
    deadline: Instant,
    /// When it last read or wrote a byte (or was accepted): its age for eviction.
    progress: Instant,
    /// Admitted to a crowded table with a small send buffer, not yet raised (see
    /// [`ServerConfig::crowded_send_buffer`]).
    crowded: bool,
}

/// What the loop holds: connections, free slots, counts and the log.
struct Table {
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    counts: Counts,
    log: Log,
}

/// Why a connection ends.
enum End {
    /// The peer closed, or the exchange finished as it should.
    Quiet,
    /// Log this (for this reason, rate-limited) and close.
    Log(Reason, String),
}

/// SO_SNDBUF of a crowded connection once it has read a whole answer (when `send_buffer` is
/// not set): what Linux's autotuning reaches on a fast path (tcp_wmem's default maximum).
pub const PROVEN_SEND_BUFFER: usize = 4 << 20;

/// Zeros to send from, so a response never allocates.
pub(crate) static ZEROS: [u8; 64 * 1024] = [0; 64 * 1024];

/// Listener `j` is polled as token `usize::MAX - j`; connections take tokens from 0 up.
fn listener_token(j: usize) -> Token {
    Token(usize::MAX - j)
}

/// Open connections, by listening address and in all, and per (listener, peer) address.
#[derive(Default)]
struct Counts {
    open: Vec<usize>,
    per_peer: HashMap<(usize, IpAddr), usize>,
}

/// A running server.
pub struct Server {
    listeners: Mutex<Option<Vec<TcpListener>>>,
    addrs: Vec<SocketAddr>,
    cfg: ServerConfig,
    /// Set to stop accepting and return from [`Server::run`].
    pub stop: Arc<AtomicBool>,
    /// Counters.
    pub stats: Arc<ServerStats>,
    log: Arc<dyn Fn(&str) + Send + Sync>,
}

impl Server {
    /// Bind to `addr` (and only there), after checking the congestion control asked for.
    pub fn bind(addr: SocketAddr, cfg: ServerConfig) -> io::Result<Server> {
        Server::bind_each(&[(None, addr)], cfg)
    }

    /// Bind to every `(namespace, addr)`: `addr` inside the named network namespace (see
    /// [`crate::netns`]), or in this thread's where the name is `None`. One loop then serves
    /// them all. An address that cannot be bound is an error naming it and its namespace.
    pub fn bind_each(
        addrs: &[(Option<String>, SocketAddr)],
        cfg: ServerConfig,
    ) -> io::Result<Server> {
        if addrs.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no address to listen on",
            ));
        }
        if let Some(cc) = &cfg.congestion {
            check_congestion(cc)?;
        }
        let listeners = crate::netns::in_each(
            addrs,
            |(ns, _)| ns.as_deref(),
            |_, (ns, addr)| {
                let l = TcpListener::bind(addr).map_err(|e| {
                    let inside = ns.as_ref().map(|n| format!(" in {n}")).unwrap_or_default();
                    io::Error::new(e.kind(), format!("cannot listen on {addr}{inside}: {e}"))
                })?;
                l.set_nonblocking(true)?;
                Ok(l)
            },
        )?;
        let addrs = listeners
            .iter()
            .map(|l| l.local_addr())
            .collect::<io::Result<Vec<_>>>()?;
        Ok(Server {
            listeners: Mutex::new(Some(listeners)),
            addrs,
            cfg,
            stop: Arc::new(AtomicBool::new(false)),
            stats: Arc::new(ServerStats::default()),
            // Not eprintln!, which panics when stderr is gone: a lost line is only lost.
            log: Arc::new(|m: &str| {
                let _ = writeln!(io::stderr(), "incast serve: {m}");
            }),
        })
    }

    /// Where it listens (the first address, if several).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.addrs[0])
    }

    /// Every address it listens on, in the order given to [`Server::bind_each`].
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// Send log lines somewhere else than stderr.
    pub fn with_log(mut self, log: impl Fn(&str) + Send + Sync + 'static) -> Server {
        self.log = Arc::new(log);
        self
    }

    /// Accept and serve until `stop` is set (once: the listener is consumed). Returns within
    /// one tick (50 ms) of `stop`, whatever the log sink does.
    pub fn run(&self) -> io::Result<()> {
        let std_listeners = self
            .listeners
            .lock()
            .map_err(|_| io::Error::other("the server's lock was poisoned"))?
            .take()
            .ok_or_else(|| io::Error::other("the server already ran"))?;
        let mut poll = Poll::new()?;
        let mut listeners = Vec::with_capacity(std_listeners.len());
        for (j, l) in std_listeners.into_iter().enumerate() {
            let mut l = MioListener::from_std(l);
            poll.registry()
                .register(&mut l, listener_token(j), Interest::READABLE)?;
            listeners.push(l);
        }
        let mut events = Events::with_capacity(1024);
        let mut t = Table {
            conns: Vec::new(),
            free: Vec::new(),
            counts: Counts {
                open: vec![0; listeners.len()],
                per_peer: HashMap::new(),
            },
            log: Log::start(self.log.clone(), self.stats.log_dropped.clone()),
        };
        // Deadlines are checked at this interval (and the stop flag with them).
        let tick = Duration::from_millis(50);
        let mut next_sweep = Instant::now() + tick;
        while !self.stop.load(Ordering::Relaxed) {
            match poll.poll(&mut events, Some(tick)) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            for ev in events.iter() {
                let j = usize::MAX - ev.token().0;
                if j < listeners.len() {
                    self.accept_all(j, &listeners[j], &poll, &mut t);
                    continue;
                }
                let i = ev.token().0;
                let end = match t.conns.get_mut(i).and_then(|c| c.as_mut()) {
                    Some(c) => self.drive(c, &mut t.log),
                    None => continue,
                };
                if let Some(end) = end {
                    self.close(i, end, &poll, &mut t);
                }
            }
            let now = Instant::now();
            if now >= next_sweep {
                next_sweep = now + tick;
                t.log.summarize(now);
                self.close_overdue(now, &poll, &mut t);
            }
        }
        Ok(())
    }

    /// Close every connection past its deadline.
    fn close_overdue(&self, now: Instant, poll: &Poll, t: &mut Table) {
        for i in 0..t.conns.len() {
            let Some(c) = t.conns[i].as_ref() else {
                continue;
            };
            if now < c.deadline {
                continue;
            }
            let end = match c.phase {
                Phase::Reading { first: true, .. } => {
                    self.stats.idle_closed.fetch_add(1, Ordering::Relaxed);
                    let d = self.cfg.first_request_timeout;
                    End::Log(
                        Reason::Idle,
                        format!("no request within {d:?} of connecting; closing"),
                    )
                }
                Phase::Reading { .. } => {
                    self.stats.idle_closed.fetch_add(1, Ordering::Relaxed);
                    let d = self.cfg.idle_timeout;
                    End::Log(Reason::Idle, format!("idle for {d:?}; closing"))
                }
                _ => {
                    self.stats.write_timeouts.fetch_add(1, Ordering::Relaxed);
                    let d = self.cfg.write_timeout;
                    End::Log(
                        Reason::WriteTimeout,
                        format!("not reading its answer: no progress for {d:?}; closing"),
                    )
                }
            };
            self.close(i, end, poll, t);
        }
    }

    /// The connection of listener `j` to evict for a newcomer: the highest
    /// (time since progress) × (connections its peer holds), oldest progress on a tie.
    fn victim(&self, j: usize, now: Instant, t: &Table) -> Option<usize> {
        let mut best: Option<(u128, Instant, usize)> = None;
        for (i, c) in t.conns.iter().enumerate() {
            let Some(c) = c else { continue };
            if c.listener != j {
                continue;
            }
            let held = t
                .counts
                .per_peer
                .get(&(j, c.peer.ip()))
                .copied()
                .unwrap_or(1);
            let score = now.duration_since(c.progress).as_micros() * held as u128;
            let better = match best {
                None => true,
                Some((s, p, _)) => score > s || (score == s && c.progress < p),
            };
            if better {
                best = Some((score, c.progress, i));
            }
        }
        best.map(|(_, _, i)| i)
    }

    /// Accept every pending connection of listener `j`.
    fn accept_all(&self, j: usize, listener: &MioListener, poll: &Poll, t: &mut Table) {
        loop {
            let (stream, peer) = match listener.accept() {
                Ok(x) => x,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    // Out of file descriptors, say: the next readiness event retries.
                    t.log.line(Reason::Other, Instant::now(), || {
                        format!("accept failed: {e}")
                    });
                    return;
                }
            };
            self.admit(j, stream, peer, poll, t);
        }
    }

    /// Admit one accepted connection: allow-list, per-peer cap, eviction at the global cap.
    fn admit(&self, j: usize, mut stream: TcpStream, peer: SocketAddr, poll: &Poll, t: &mut Table) {
        let now = Instant::now();
        if !allowed(&self.cfg.allow, peer.ip()) {
            self.stats.not_allowed.fetch_add(1, Ordering::Relaxed);
            t.log.line(Reason::NotAllowed, now, || {
                format!("{peer}: not in --allow; closed")
            });
            return;
        }
        let mine = t.counts.per_peer.get(&(j, peer.ip())).copied().unwrap_or(0);
        if mine >= self.cfg.max_conns_per_peer {
            self.stats.busy.fetch_add(1, Ordering::Relaxed);
            let cap = self.cfg.max_conns_per_peer;
            t.log.line(Reason::Busy, now, || {
                format!(
                    "{peer}: turned away, {cap} connections from {} already (--max-conns-per-peer)",
                    peer.ip()
                )
            });
            // Best effort: a fresh socket's buffer takes 24 bytes without blocking.
            let _ = stream.write(&encode_response(Status::Busy, 0, 0));
            return;
        }
        if t.counts.open[j] >= self.cfg.max_conns {
            if let Some(v) = self.victim(j, now, t) {
                self.stats.evicted.fetch_add(1, Ordering::Relaxed);
                let age = t.conns[v]
                    .as_ref()
                    .map(|c| now.duration_since(c.progress))
                    .unwrap_or_default();
                let cap = self.cfg.max_conns;
                let why = format!(
                    "evicted for {peer} at {cap} connections (--max-conns): \
                     no progress for {age:.1?}"
                );
                self.close(v, End::Log(Reason::Evicted, why), poll, t);
            }
        }
        let crowded = t.counts.open[j] >= self.cfg.max_conns.div_ceil(2);
        let send_buffer = match (crowded, self.cfg.send_buffer) {
            (true, b) => Some(b.unwrap_or(usize::MAX).min(self.cfg.crowded_send_buffer)),
            (false, b) => b,
        };
        if let Err(e) = configure(
            &stream,
            self.cfg.nodelay,
            send_buffer,
            None,
            self.cfg.congestion.as_deref(),
        ) {
            t.log
                .line(Reason::Other, now, || format!("{peer}: {e}; closing"));
            return;
        }
        let i = t.free.pop().unwrap_or_else(|| {
            t.conns.push(None);
            t.conns.len() - 1
        });
        if let Err(e) = poll.registry().register(
            &mut stream,
            Token(i),
            Interest::READABLE | Interest::WRITABLE,
        ) {
            t.log.line(Reason::Other, now, || {
                format!("{peer}: cannot watch the connection: {e}; closing")
            });
            t.free.push(i);
            return;
        }
        *t.counts.per_peer.entry((j, peer.ip())).or_insert(0) += 1;
        t.counts.open[j] += 1;
        self.stats.connections.fetch_add(1, Ordering::Relaxed);
        self.stats.open.fetch_add(1, Ordering::Relaxed);
        t.conns[i] = Some(Conn {
            stream,
            peer,
            listener: j,
            buf: [0; MAX_REQUEST_LEN],
            phase: Phase::Reading {
                got: 0,
                need: HEADER_LEN,
                first: true,
            },
            deadline: now + self.cfg.first_request_timeout,
            progress: now,
            crowded,
        });
    }

    fn close(&self, i: usize, end: End, poll: &Poll, t: &mut Table) {
        let Some(mut c) = t.conns[i].take() else {
            return;
        };
        let _ = poll.registry().deregister(&mut c.stream);
        if let End::Log(reason, why) = end {
            let peer = c.peer;
            t.log
                .line(reason, Instant::now(), || format!("{peer}: {why}"));
        }
        let key = (c.listener, c.peer.ip());
        if let Some(n) = t.counts.per_peer.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                t.counts.per_peer.remove(&key);
            }
        }
        t.counts.open[c.listener] -= 1;
        self.stats.open.fetch_sub(1, Ordering::Relaxed);
        t.free.push(i);
    }

    /// A whole request has arrived (`need` bytes): check it and the token, and start the
    /// answer or the refusal.
    fn answer(&self, c: &mut Conn, log: &mut Log) {
        let mut head = [0u8; HEADER_LEN];
        head.copy_from_slice(&c.buf[..HEADER_LEN]);
        let checked = parse_request_header(&head, self.cfg.max_request).and_then(|(r, tok)| {
            self.check_token(tok.then(|| &c.buf[HEADER_LEN..]))
                .map(|()| r)
        });
        let now = Instant::now();
        c.deadline = now + self.cfg.write_timeout;
        match checked {
            Ok(Request { id, bytes }) => {
                self.stats.requests.fetch_add(1, Ordering::Relaxed);
                c.buf[..HEADER_LEN].copy_from_slice(&encode_response(Status::Ok, id, bytes));
                c.phase = Phase::Writing {
                    header_left: HEADER_LEN,
                    payload_left: bytes,
                };
            }
            Err(e) => {
                let reason = if e.status() == Status::Unauthorized {
                    self.stats.unauthorized.fetch_add(1, Ordering::Relaxed);
                    Reason::Unauthorized
                } else {
                    self.stats.refused.fetch_add(1, Ordering::Relaxed);
                    Reason::Refused
                };
                let peer = c.peer;
                log.line(reason, now, || {
                    format!("{peer}: refused a request: {e}; closing")
                });
                c.buf[..HEADER_LEN].copy_from_slice(&encode_response(e.status(), 0, 0));
                c.phase = Phase::Refusing {
                    header_left: HEADER_LEN,
                };
            }
        }
    }

    /// The token rule: with a token configured every request carries it; without one, a
    /// token sent is read (to keep the framing) and ignored.
    fn check_token(&self, sent: Option<&[u8]>) -> Result<(), ProtocolError> {
        match (&self.cfg.token, sent) {
            (None, _) => Ok(()),
            (Some(_), None) => Err(ProtocolError::NoToken),
            (Some(t), Some(s)) if t.matches(s) => Ok(()),
            (Some(_), Some(_)) => Err(ProtocolError::WrongToken),
        }
    }

    /// Read what a request still needs: `Ok(true)` to go on driving, `Ok(false)` when the
    /// socket has nothing more now, `Err` when the connection is to be closed.
    fn read_request(&self, c: &mut Conn, log: &mut Log) -> Result<bool, End> {
        let Phase::Reading { got, need, first } = c.phase else {
            return Ok(true);
        };
        // Only up to the end of this request: the next one is read after the answer.
        match c.stream.read(&mut c.buf[got..need]) {
            Ok(0) if got == 0 => Err(End::Quiet), // the client closed
            Ok(0) => Err(End::Log(
                Reason::Other,
                "closed in the middle of a request".into(),
            )),
            Ok(n) => {
                c.progress = Instant::now();
                let got = got + n;
                let need = if got == HEADER_LEN && need == HEADER_LEN {
                    self.need_after_header(c)
                } else {
                    need
                };
                if got < need {
                    c.phase = Phase::Reading { got, need, first };
                } else {
                    self.answer(c, log);
                }
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(true),
            Err(e) => Err(End::Log(Reason::Other, e.to_string())),
        }
    }

    /// Bytes of the whole request once its header is in: the header, or header and token
    /// when it is flagged and parses (a bad header is refused without reading further).
    fn need_after_header(&self, c: &Conn) -> usize {
        let mut head = [0u8; HEADER_LEN];
        head.copy_from_slice(&c.buf[..HEADER_LEN]);
        match parse_request_header(&head, self.cfg.max_request) {
            Ok((_, true)) => MAX_REQUEST_LEN,
            _ => HEADER_LEN,
        }
    }

    /// Move a connection on as far as its socket allows; `Some` when it is to be closed.
    fn drive(&self, c: &mut Conn, log: &mut Log) -> Option<End> {
        loop {
            match c.phase {
                Phase::Reading { .. } => match self.read_request(c, log) {
                    Ok(true) => {}
                    Ok(false) => return None,
                    Err(end) => return Some(end),
                },
                Phase::Writing {
                    header_left,
                    payload_left,
                } => {
                    let wrote = if header_left > 0 {
                        c.stream.write(&c.buf[HEADER_LEN - header_left..HEADER_LEN])
                    } else {
                        let n = payload_left.min(ZEROS.len() as u64) as usize;
                        c.stream.write(&ZEROS[..n])
                    };
                    match wrote {
                        Ok(0) => {
                            return Some(End::Log(Reason::Other, "the connection closed".into()))
                        }
                        Ok(n) => {
                            let now = Instant::now();
                            c.progress = now;
                            c.deadline = now + self.cfg.write_timeout;
                            let (h, p) = if header_left > 0 {
                                (header_left - n, payload_left)
                            } else {
                                self.stats.bytes.fetch_add(n as u64, Ordering::Relaxed);
                                (0, payload_left - n as u64)
                            };
                            if h == 0 && p == 0 {
                                if c.crowded {
                                    // It reads: give it the buffer a client that reads gets.
                                    c.crowded = false;
                                    let b = self.cfg.send_buffer.unwrap_or(PROVEN_SEND_BUFFER);
                                    let _ = SockRef::from(&c.stream).set_send_buffer_size(b);
                                }
                                c.phase = Phase::Reading {
                                    got: 0,
                                    need: HEADER_LEN,
                                    first: false,
                                };
                                c.deadline = now + self.cfg.idle_timeout;
                            } else {
                                c.phase = Phase::Writing {
                                    header_left: h,
                                    payload_left: p,
                                };
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return None,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Some(End::Log(Reason::Other, e.to_string())),
                    }
                }
                Phase::Refusing { header_left } => {
                    match c.stream.write(&c.buf[HEADER_LEN - header_left..HEADER_LEN]) {
                        Ok(n) if n >= header_left => return Some(End::Quiet),
                        Ok(0) => return Some(End::Quiet),
                        Ok(n) => {
                            c.phase = Phase::Refusing {
                                header_left: header_left - n,
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return None,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(_) => return Some(End::Quiet),
                    }
                }
            }
        }
    }
}
