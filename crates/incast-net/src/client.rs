//! The synchronized-read client: long-lived connections to N servers; block k+1 is requested
//! only when every server has delivered its part of block k.
//!
//! One thread per connection does the blocking I/O; the main thread releases requests (all at
//! once, through a fan-out window, or staggered) and times blocks with a monotonic clock.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::access::Token;
use crate::protocol::{
    encode_request, encode_request_with_token, parse_response, Request, Status, HEADER_LEN,
};
use crate::server::configure;

/// What to read from whom.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchConfig {
    /// The servers, `host:port`.
    pub servers: Vec<SocketAddr>,
    /// Bytes each server returns per block (SRU).
    pub sru: u64,
    /// Bytes server i returns per block, overriding `sru` when given (a striped block,
    /// split by `incast_sim::config::block_share`); empty: `sru` from every server.
    #[serde(default)]
    pub sizes: Vec<u64>,
    /// Blocks measured.
    pub blocks: u32,
    /// Blocks read first and not measured.
    pub warmup: u32,
    /// Stop (with the blocks done so far) after this many seconds.
    pub time_limit_s: f64,
    /// Servers asked at once; 0 for all.
    pub fanout_window: u32,
    /// Seconds between successive requests of a block.
    pub stagger_s: f64,
    /// TCP_NODELAY.
    pub nodelay: bool,
    /// SO_RCVBUF, bytes.
    pub recv_buffer: Option<usize>,
    /// TCP_CONGESTION of the client's sockets (the receiver's side).
    pub congestion: Option<String>,
    /// Seconds to wait for each connection.
    pub connect_timeout_s: f64,
    /// The servers' shared token (a token file's text), sent with every request.
    #[serde(default, skip_serializing)]
    pub token: Option<String>,
}

/// What a run measured; times in microseconds from the first measured block's start.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BenchResult {
    /// Duration of each measured block, µs.
    pub block_times_us: Vec<u64>,
    /// `[block][server]`: from the request leaving to the last byte arriving, µs.
    pub response_us: Vec<Vec<u64>>,
    /// Start of each measured block, µs.
    pub block_starts_us: Vec<u64>,
    /// Payload bytes of the measured blocks.
    pub bytes: u64,
    /// From the first measured block's start to the last one's end, µs.
    pub duration_us: u64,
    /// The time limit cut the run short.
    pub truncated: bool,
}

enum Cmd {
    Read(u64),
    Quit,
}

/// Read `bytes` payload bytes after checking the response header for request `id`.
/// Connect to one server and set the client's socket options.
fn open(cfg: &BenchConfig, addr: &SocketAddr, timeout: Duration) -> Result<TcpStream, String> {
    let s = TcpStream::connect_timeout(addr, timeout)
        .map_err(|e| format!("servers: cannot connect to {addr}: {e}"))?;
    configure(
        &s,
        cfg.nodelay,
        None,
        cfg.recv_buffer,
        cfg.congestion.as_deref(),
    )
    .map_err(|e| format!("{addr}: {e}"))?;
    Ok(s)
}

/// Write one request, with the token after its header when there is one.
fn send_request(s: &mut TcpStream, req: &Request, token: Option<&Token>) -> io::Result<()> {
    match token {
        Some(t) => s.write_all(&encode_request_with_token(req, t.wire())),
        None => s.write_all(&encode_request(req)),
    }
}

fn read_response(s: &mut TcpStream, id: u64, want: u64, buf: &mut [u8]) -> io::Result<()> {
    let mut h = [0u8; HEADER_LEN];
    s.read_exact(&mut h)?;
    let (status, rid, bytes) =
        parse_response(&h).map_err(|m| io::Error::new(io::ErrorKind::InvalidData, m))?;
    if status != Status::Ok {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("the server refused the request ({status:?})"),
        ));
    }
    if rid != id || bytes != want {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("answer for request {rid} of {bytes} bytes, expected {id} of {want}"),
        ));
    }
    let mut left = bytes;
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        let got = s.read(&mut buf[..n])?;
        if got == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed mid-response",
            ));
        }
        left -= got as u64;
    }
    Ok(())
}

/// Run the synchronized reads.
pub fn bench(cfg: &BenchConfig) -> Result<BenchResult, String> {
    if cfg.servers.is_empty() {
        return Err("servers: give at least one host:port".into());
    }
    if cfg.sizes.is_empty() && cfg.sru == 0 {
        return Err("sru: must be positive".into());
    }
    if !cfg.sizes.is_empty() && cfg.sizes.len() != cfg.servers.len() {
        return Err("sizes: give one per server".into());
    }
    if cfg.sizes.contains(&0) {
        return Err("sizes: every server must return at least one byte".into());
    }
    let size_of = |i: usize| cfg.sizes.get(i).copied().unwrap_or(cfg.sru);
    let per_block: u64 = (0..cfg.servers.len()).map(size_of).sum();
    if cfg.blocks == 0 {
        return Err("blocks: must be at least 1".into());
    }
    let token = cfg
        .token
        .as_deref()
        .map(|t| Token::parse(t).map_err(|e| format!("token: {e}")))
        .transpose()?;
    let n = cfg.servers.len();
    let (done_tx, done_rx) = mpsc::channel::<(usize, Result<Instant, String>)>();
    let mut cmds = Vec::with_capacity(n);
    let mut threads = Vec::with_capacity(n);
    let timeout = Duration::from_secs_f64(cfg.connect_timeout_s.max(0.001));
    for (i, addr) in cfg.servers.iter().enumerate() {
        let s = open(cfg, addr, timeout)?;
        let (tx, rx) = mpsc::channel::<Cmd>();
        cmds.push(tx);
        let done = done_tx.clone();
        let sru = size_of(i);
        let addr = *addr;
        let token = token.clone();
        threads.push(thread::spawn(move || {
            let mut s = s;
            let mut buf = vec![0u8; 256 * 1024];
            while let Ok(Cmd::Read(id)) = rx.recv() {
                let r = send_request(&mut s, &Request { id, bytes: sru }, token.as_ref())
                    .and_then(|_| read_response(&mut s, id, sru, &mut buf))
                    .map(|_| Instant::now())
                    .map_err(|e| format!("{addr}: {e}"));
                let failed = r.is_err();
                if done.send((i, r)).is_err() || failed {
                    break;
                }
            }
        }));
    }
    let window = if cfg.fanout_window == 0 {
        n
    } else {
        (cfg.fanout_window as usize).min(n)
    };
    let stagger = Duration::from_secs_f64(cfg.stagger_s.max(0.0));
    let limit = Duration::from_secs_f64(cfg.time_limit_s.max(0.0));
    let t0 = Instant::now();
    let mut out = BenchResult {
        block_times_us: Vec::new(),
        response_us: Vec::new(),
        block_starts_us: Vec::new(),
        bytes: 0,
        duration_us: 0,
        truncated: false,
    };
    let mut measured_start: Option<Instant> = None;
    let mut failure = None;
    let total = cfg.warmup + cfg.blocks;
    'blocks: for b in 0..total {
        if t0.elapsed() > limit {
            out.truncated = true;
            break;
        }
        let start = Instant::now();
        if b == cfg.warmup {
            measured_start = Some(start);
        }
        let mut sent = vec![start; n];
        let mut finished = vec![start; n];
        let mut next = 0;
        let ask = |k: usize, sent: &mut Vec<Instant>| {
            sent[k] = Instant::now();
            let _ = cmds[k].send(Cmd::Read(b as u64 * n as u64 + k as u64));
        };
        while next < window {
            if next > 0 && !stagger.is_zero() {
                thread::sleep(stagger);
            }
            ask(next, &mut sent);
            next += 1;
        }
        for _ in 0..n {
            match done_rx.recv() {
                Ok((k, Ok(t))) => {
                    finished[k] = t;
                    if next < n {
                        ask(next, &mut sent);
                        next += 1;
                    }
                }
                Ok((_, Err(e))) => {
                    failure = Some(e);
                    break 'blocks;
                }
                Err(_) => {
                    failure = Some("a connection thread ended".into());
                    break 'blocks;
                }
            }
        }
        let end = finished.iter().max().copied().unwrap_or(start);
        if b >= cfg.warmup {
            let origin = measured_start.expect("set at the first measured block");
            out.block_starts_us
                .push(start.duration_since(origin).as_micros() as u64);
            out.block_times_us
                .push(end.duration_since(start).as_micros() as u64);
            out.response_us.push(
                sent.iter()
                    .zip(&finished)
                    .map(|(s, f)| f.duration_since(*s).as_micros() as u64)
                    .collect(),
            );
            out.bytes += per_block;
            out.duration_us = end.duration_since(origin).as_micros() as u64;
        }
    }
    for c in &cmds {
        let _ = c.send(Cmd::Quit);
    }
    drop(cmds);
    for t in threads {
        let _ = t.join();
    }
    match failure {
        Some(e) => Err(e),
        None if out.block_times_us.is_empty() => Err(format!(
            "time limit of {}s reached before any measured block finished",
            cfg.time_limit_s
        )),
        None => Ok(out),
    }
}
