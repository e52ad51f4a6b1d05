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
//! deadline is closed. A stalled or idle client therefore cannot lock others out for long, and
//! a host opening many connections is turned away at its own cap before the global one.
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

use crate::protocol::{encode_response, parse_request, Status, HEADER_LEN};

/// Server limits and socket options.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Most bytes one request may ask for.
    pub max_request: u64,
    /// Most connections served at once (per listening address); more are answered `Busy`
    /// and closed.
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
    /// Connections turned away at the connection limit (global or per peer).
    pub busy: AtomicU64,
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
    /// Reading a request header: `got` bytes so far.
    Reading { got: usize, first: bool },
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
    buf: [u8; HEADER_LEN],
    phase: Phase,
    /// When the connection is closed unless it makes progress.
    deadline: Instant,
}

/// Why a connection ends.
enum End {
    /// The peer closed, or the exchange finished as it should.
    Quiet,
    /// Log this and close.
    Log(String),
}

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
            log: Arc::new(|m: &str| eprintln!("incast serve: {m}")),
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

    /// Accept and serve until `stop` is set (once: the listener is consumed).
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
        let mut conns: Vec<Option<Conn>> = Vec::new();
        let mut free: Vec<usize> = Vec::new();
        let mut counts = Counts {
            open: vec![0; listeners.len()],
            per_peer: HashMap::new(),
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
                    self.accept_all(j, &listeners[j], &poll, &mut conns, &mut free, &mut counts);
                    continue;
                }
                let i = ev.token().0;
                let end = match conns.get_mut(i).and_then(|c| c.as_mut()) {
                    Some(c) => self.drive(c),
                    None => continue,
                };
                if let Some(end) = end {
                    self.close(i, end, &poll, &mut conns, &mut free, &mut counts);
                }
            }
            let now = Instant::now();
            if now >= next_sweep {
                next_sweep = now + tick;
                for i in 0..conns.len() {
                    let Some(c) = conns[i].as_ref() else { continue };
                    if now < c.deadline {
                        continue;
                    }
                    let why = match c.phase {
                        Phase::Reading { first: true, .. } => {
                            self.stats.idle_closed.fetch_add(1, Ordering::Relaxed);
                            format!(
                                "no request within {:?} of connecting; closing",
                                self.cfg.first_request_timeout
                            )
                        }
                        Phase::Reading { .. } => {
                            self.stats.idle_closed.fetch_add(1, Ordering::Relaxed);
                            format!("idle for {:?}; closing", self.cfg.idle_timeout)
                        }
                        _ => {
                            self.stats.write_timeouts.fetch_add(1, Ordering::Relaxed);
                            format!(
                                "not reading its answer: no progress for {:?}; closing",
                                self.cfg.write_timeout
                            )
                        }
                    };
                    self.close(i, End::Log(why), &poll, &mut conns, &mut free, &mut counts);
                }
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn accept_all(
        &self,
        j: usize,
        listener: &MioListener,
        poll: &Poll,
        conns: &mut Vec<Option<Conn>>,
        free: &mut Vec<usize>,
        counts: &mut Counts,
    ) {
        loop {
            let (mut stream, peer) = match listener.accept() {
                Ok(x) => x,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    // Out of file descriptors, say: the next readiness event retries.
                    (self.log)(&format!("accept failed: {e}"));
                    return;
                }
            };
            let open = counts.open[j];
            let mine = counts.per_peer.get(&(j, peer.ip())).copied().unwrap_or(0);
            if open >= self.cfg.max_conns || mine >= self.cfg.max_conns_per_peer {
                self.stats.busy.fetch_add(1, Ordering::Relaxed);
                let which = if open >= self.cfg.max_conns {
                    format!("{} connections already (--max-conns)", self.cfg.max_conns)
                } else {
                    format!(
                        "{} connections from {} already (--max-conns-per-peer)",
                        self.cfg.max_conns_per_peer,
                        peer.ip()
                    )
                };
                (self.log)(&format!("{peer}: turned away, {which}"));
                // Best effort: a fresh socket's buffer takes 24 bytes without blocking.
                let _ = stream.write(&encode_response(Status::Busy, 0, 0));
                continue;
            }
            if let Err(e) = configure(
                &stream,
                self.cfg.nodelay,
                self.cfg.send_buffer,
                None,
                self.cfg.congestion.as_deref(),
            ) {
                (self.log)(&format!("{peer}: {e}; closing"));
                continue;
            }
            let i = free.pop().unwrap_or_else(|| {
                conns.push(None);
                conns.len() - 1
            });
            if let Err(e) = poll.registry().register(
                &mut stream,
                Token(i),
                Interest::READABLE | Interest::WRITABLE,
            ) {
                (self.log)(&format!(
                    "{peer}: cannot watch the connection: {e}; closing"
                ));
                free.push(i);
                continue;
            }
            *counts.per_peer.entry((j, peer.ip())).or_insert(0) += 1;
            counts.open[j] += 1;
            self.stats.connections.fetch_add(1, Ordering::Relaxed);
            self.stats.open.fetch_add(1, Ordering::Relaxed);
            conns[i] = Some(Conn {
                stream,
                peer,
                listener: j,
                buf: [0; HEADER_LEN],
                phase: Phase::Reading {
                    got: 0,
                    first: true,
                },
                deadline: Instant::now() + self.cfg.first_request_timeout,
            });
        }
    }

    fn close(
        &self,
        i: usize,
        end: End,
        poll: &Poll,
        conns: &mut [Option<Conn>],
        free: &mut Vec<usize>,
        counts: &mut Counts,
    ) {
        let Some(mut c) = conns[i].take() else { return };
        let _ = poll.registry().deregister(&mut c.stream);
        if let End::Log(why) = end {
            (self.log)(&format!("{}: {why}", c.peer));
        }
        let key = (c.listener, c.peer.ip());
        if let Some(n) = counts.per_peer.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                counts.per_peer.remove(&key);
            }
        }
        counts.open[c.listener] -= 1;
        self.stats.open.fetch_sub(1, Ordering::Relaxed);
        free.push(i);
    }

    /// Move a connection on as far as its socket allows; `Some` when it is to be closed.
    fn drive(&self, c: &mut Conn) -> Option<End> {
        loop {
            match c.phase {
                Phase::Reading { got, first } => match c.stream.read(&mut c.buf[got..]) {
                    Ok(0) if got == 0 => return Some(End::Quiet), // the client closed
                    Ok(0) => {
                        return Some(End::Log("closed in the middle of a request".into()));
                    }
                    Ok(n) if got + n < HEADER_LEN => {
                        c.phase = Phase::Reading {
                            got: got + n,
                            first,
                        };
                    }
                    Ok(_) => match parse_request(&c.buf, self.cfg.max_request) {
                        Ok(req) => {
                            self.stats.requests.fetch_add(1, Ordering::Relaxed);
                            c.buf = encode_response(Status::Ok, req.id, req.bytes);
                            c.phase = Phase::Writing {
                                header_left: HEADER_LEN,
                                payload_left: req.bytes,
                            };
                            c.deadline = Instant::now() + self.cfg.write_timeout;
                        }
                        Err(e) => {
                            self.stats.refused.fetch_add(1, Ordering::Relaxed);
                            (self.log)(&format!("{}: refused a request: {e}; closing", c.peer));
                            c.buf = encode_response(e.status(), 0, 0);
                            c.phase = Phase::Refusing {
                                header_left: HEADER_LEN,
                            };
                            c.deadline = Instant::now() + self.cfg.write_timeout;
                        }
                    },
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return None,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Some(End::Log(e.to_string())),
                },
                Phase::Writing {
                    header_left,
                    payload_left,
                } => {
                    let wrote = if header_left > 0 {
                        c.stream.write(&c.buf[HEADER_LEN - header_left..])
                    } else {
                        let n = payload_left.min(ZEROS.len() as u64) as usize;
                        c.stream.write(&ZEROS[..n])
                    };
                    match wrote {
                        Ok(0) => return Some(End::Log("the connection closed".into())),
                        Ok(n) => {
                            c.deadline = Instant::now() + self.cfg.write_timeout;
                            let (h, p) = if header_left > 0 {
                                (header_left - n, payload_left)
                            } else {
                                self.stats.bytes.fetch_add(n as u64, Ordering::Relaxed);
                                (0, payload_left - n as u64)
                            };
                            if h == 0 && p == 0 {
                                c.phase = Phase::Reading {
                                    got: 0,
                                    first: false,
                                };
                                c.deadline = Instant::now() + self.cfg.idle_timeout;
                            } else {
                                c.phase = Phase::Writing {
                                    header_left: h,
                                    payload_left: p,
                                };
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return None,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Some(End::Log(e.to_string())),
                    }
                }
                Phase::Refusing { header_left } => {
                    match c.stream.write(&c.buf[HEADER_LEN - header_left..]) {
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
