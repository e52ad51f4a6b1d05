//! The block server: answers read requests with synthetic bytes over long-lived connections.
//!
//! It binds only to the address it is given, serves nothing but zeros, caps what one request
//! may ask for and how many connections it holds, closes connections that stay idle, and
//! answers a malformed or wrong-version request with an error status (logging the reason)
//! before closing that connection only: everyone else goes on being served.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use socket2::SockRef;

use crate::protocol::{encode_response, parse_request, Status, HEADER_LEN};

/// Server limits and socket options.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Most bytes one request may ask for.
    pub max_request: u64,
    /// Most connections served at once; more are answered `Busy` and closed.
    pub max_conns: usize,
    /// A connection silent for this long is closed.
    pub idle_timeout: Duration,
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
            idle_timeout: Duration::from_secs(60),
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
    /// Requests answered with data.
    pub requests: AtomicU64,
    /// Payload bytes sent.
    pub bytes: AtomicU64,
    /// Requests refused (malformed, wrong version, too large).
    pub refused: AtomicU64,
    /// Connections turned away at the connection limit.
    pub busy: AtomicU64,
    /// Connections closed for idleness.
    pub idle_closed: AtomicU64,
}

/// Apply socket options; a congestion control the kernel lacks is an error naming it.
pub fn configure(
    s: &TcpStream,
    nodelay: bool,
    send: Option<usize>,
    recv: Option<usize>,
    congestion: Option<&str>,
) -> io::Result<()> {
    s.set_nodelay(nodelay)?;
    let sock = SockRef::from(s);
    if let Some(b) = send {
        sock.set_send_buffer_size(b)?;
    }
    if let Some(b) = recv {
        sock.set_recv_buffer_size(b)?;
    }
    if let Some(cc) = congestion {
        sock.set_tcp_congestion(cc.as_bytes()).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("congestion control {cc:?} is not available here: {e}"),
            )
        })?;
    }
    Ok(())
}

/// A running server.
pub struct Server {
    listener: TcpListener,
    cfg: ServerConfig,
    /// Set to stop accepting and return from [`Server::run`].
    pub stop: Arc<AtomicBool>,
    /// Counters.
    pub stats: Arc<ServerStats>,
    log: Arc<dyn Fn(&str) + Send + Sync>,
}

impl Server {
    /// Bind to `addr` (and only there).
    pub fn bind(addr: SocketAddr, cfg: ServerConfig) -> io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        Ok(Server {
            listener,
            cfg,
            stop: Arc::new(AtomicBool::new(false)),
            stats: Arc::new(ServerStats::default()),
            log: Arc::new(|m: &str| eprintln!("incast serve: {m}")),
        })
    }

    /// Where it listens.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Send log lines somewhere else than stderr.
    pub fn with_log(mut self, log: impl Fn(&str) + Send + Sync + 'static) -> Server {
        self.log = Arc::new(log);
        self
    }

    /// Accept and serve until `stop` is set.
    pub fn run(&self) -> io::Result<()> {
        let active = Arc::new(AtomicUsize::new(0));
        while !self.stop.load(Ordering::Relaxed) {
            let (mut stream, peer) = match self.listener.accept() {
                Ok(x) => x,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    thread::sleep(Duration::from_millis(5));
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    (self.log)(&format!("accept failed: {e}"));
                    thread::sleep(Duration::from_millis(50));
                    continue;
                }
            };
            let _ = stream.set_nonblocking(false);
            if active.load(Ordering::Acquire) >= self.cfg.max_conns {
                self.stats.busy.fetch_add(1, Ordering::Relaxed);
                (self.log)(&format!(
                    "{peer}: turned away, {} connections already (--max-conns)",
                    self.cfg.max_conns
                ));
                let _ = stream.write_all(&encode_response(Status::Busy, 0, 0));
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
            active.fetch_add(1, Ordering::AcqRel);
            self.stats.connections.fetch_add(1, Ordering::Relaxed);
            let (cfg, stats, log, active) = (
                self.cfg.clone(),
                self.stats.clone(),
                self.log.clone(),
                active.clone(),
            );
            let stop = self.stop.clone();
            thread::spawn(move || {
                if let Err(e) = serve_connection(&mut stream, &cfg, &stats, &stop) {
                    log(&format!("{peer}: {e}"));
                }
                active.fetch_sub(1, Ordering::AcqRel);
            });
        }
        Ok(())
    }
}

/// Zeros to send from, so a response never allocates.
static ZEROS: [u8; 64 * 1024] = [0; 64 * 1024];

fn serve_connection(
    s: &mut TcpStream,
    cfg: &ServerConfig,
    stats: &ServerStats,
    stop: &AtomicBool,
) -> io::Result<()> {
    // Short reads so that a stopped server lets its connections go promptly.
    let tick = Duration::from_millis(200).min(cfg.idle_timeout);
    s.set_read_timeout(Some(tick))?;
    let mut buf = [0u8; HEADER_LEN];
    loop {
        let mut got = 0;
        let mut idle = Duration::ZERO;
        while got < HEADER_LEN {
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            match s.read(&mut buf[got..]) {
                Ok(0) if got == 0 => return Ok(()), // the client closed
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "closed in the middle of a request",
                    ))
                }
                Ok(n) => {
                    got += n;
                    idle = Duration::ZERO;
                }
                Err(e)
                    if e.kind() == io::ErrorKind::WouldBlock
                        || e.kind() == io::ErrorKind::TimedOut =>
                {
                    idle += tick;
                    if idle >= cfg.idle_timeout {
                        stats.idle_closed.fetch_add(1, Ordering::Relaxed);
                        return Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!("idle for {:?}; closing", cfg.idle_timeout),
                        ));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let req = match parse_request(&buf, cfg.max_request) {
            Ok(r) => r,
            Err(e) => {
                stats.refused.fetch_add(1, Ordering::Relaxed);
                let _ = s.write_all(&encode_response(e.status(), 0, 0));
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("refused a request: {e}; closing"),
                ));
            }
        };
        s.write_all(&encode_response(Status::Ok, req.id, req.bytes))?;
        let mut left = req.bytes;
        while left > 0 {
            let n = left.min(ZEROS.len() as u64) as usize;
            s.write_all(&ZEROS[..n])?;
            left -= n as u64;
        }
        stats.requests.fetch_add(1, Ordering::Relaxed);
        stats.bytes.fetch_add(req.bytes, Ordering::Relaxed);
    }
}
