//! incast-net: real TCP for incast experiments.
//!
//! - [`server`]: `incast serve`, a block server answering reads with synthetic bytes;
//! - [`client`]: `incast bench`, a synchronized-read client over long-lived connections;
//! - [`mesh`]: the one driver of the mesh workloads between hosts in namespaces (connect, poll,
//!   measure), for
//!   - [`kv`]: a key-value store's gets, every host a coordinator and a replica, and
//!   - [`shuffle`]: a MapReduce shuffle, every reducer fetching map outputs;
//! - [`protocol`]: the 24-byte versioned request and response headers they speak;
//! - [`access`]: who may use a server (`--allow` address blocks, the `--token-file` token);
//! - [`serverlog`]: the server's log, bounded and rate-limited, off its event loop;
//! - [`monitor`]: `incast monitor`, interface counters at 1 ms or 100 µs and TCP counters;
//! - [`netns`]: entering network namespaces by name, for sockets opened inside them.
#![warn(missing_docs)]

pub mod access;
pub mod client;
pub mod kv;
pub mod mesh;
pub mod monitor;
pub mod netns;
pub mod protocol;
pub mod server;
pub mod serverlog;
pub mod shuffle;

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::sync::atomic::Ordering;
    use std::sync::{Arc, Mutex};
    use std::thread;
    use std::time::{Duration, Instant};

    use crate::client::{bench, BenchConfig};
    use crate::protocol::{encode_request, parse_response, Request, Status, HEADER_LEN};
    use crate::server::{Server, ServerConfig};

    /// Wait until `done` holds (the server's loop runs on its own thread): a loaded test
    /// machine may take long, so a fixed sleep would make the test flaky. Fails after 20 s.
    fn wait_for(what: &str, done: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !done() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            thread::sleep(Duration::from_millis(5));
        }
    }

    fn start(cfg: ServerConfig) -> (Arc<Server>, Arc<Mutex<Vec<String>>>) {
        let logs = Arc::new(Mutex::new(Vec::new()));
        let sink = logs.clone();
        let s = Server::bind("127.0.0.1:0".parse().unwrap(), cfg)
            .unwrap()
            .with_log(move |m| sink.lock().unwrap().push(m.to_string()));
        let s = Arc::new(s);
        let r = s.clone();
        thread::spawn(move || r.run().unwrap());
        (s, logs)
    }

    fn config(servers: Vec<std::net::SocketAddr>) -> BenchConfig {
        BenchConfig {
            servers,
            sru: 64_000,
            sizes: Vec::new(),
            blocks: 5,
            warmup: 1,
            time_limit_s: 30.0,
            fanout_window: 0,
            stagger_s: 0.0,
            nodelay: true,
            recv_buffer: None,
            congestion: None,
            connect_timeout_s: 2.0,
            token: None,
        }
    }

    #[test]
    fn bench_reads_every_block_from_every_server() {
        let servers: Vec<_> = (0..3).map(|_| start(ServerConfig::default())).collect();
        let addrs = servers
            .iter()
            .map(|(s, _)| s.local_addr().unwrap())
            .collect();
        let mut cfg = config(addrs);
        cfg.fanout_window = 2;
        let r = bench(&cfg).unwrap();
        assert_eq!(r.block_times_us.len(), 5);
        assert_eq!(r.bytes, 5 * 3 * 64_000);
        assert!(r.response_us.iter().all(|b| b.len() == 3));
        assert!(!r.truncated);
        // A server counts a request when it accepts it, before writing the answer: once the
        // client has read every answer, every request is counted (no waiting, no race).
        let served: u64 = servers
            .iter()
            .map(|(s, _)| s.stats.requests.load(Ordering::Relaxed))
            .sum();
        assert_eq!(served, 6 * 3, "warm-up block included");
        for (s, _) in &servers {
            s.stop.store(true, Ordering::Relaxed);
        }
    }

    fn ask(addr: std::net::SocketAddr, raw: &[u8; HEADER_LEN]) -> (Status, usize) {
        let mut c = TcpStream::connect(addr).unwrap();
        c.write_all(raw).unwrap();
        let mut h = [0u8; HEADER_LEN];
        c.read_exact(&mut h).unwrap();
        let (status, _, bytes) = parse_response(&h).unwrap();
        let mut rest = Vec::new();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = c.read_to_end(&mut rest);
        assert!(bytes == 0 || rest.len() as u64 == bytes);
        (status, rest.len())
    }

    #[test]
    fn oversized_and_malformed_requests_are_refused_and_others_still_served() {
        let (s, logs) = start(ServerConfig {
            max_request: 1_000_000,
            ..ServerConfig::default()
        });
        let addr = s.local_addr().unwrap();
        // A well-behaved client keeps its connection throughout.
        let mut good = TcpStream::connect(addr).unwrap();
        let mut read_one = |id: u64| {
            good.write_all(&encode_request(&Request { id, bytes: 5000 }))
                .unwrap();
            let mut h = [0u8; HEADER_LEN];
            good.read_exact(&mut h).unwrap();
            assert_eq!(parse_response(&h).unwrap(), (Status::Ok, id, 5000));
            let mut body = vec![0u8; 5000];
            good.read_exact(&mut body).unwrap();
        };
        read_one(1);
        let big = encode_request(&Request {
            id: 2,
            bytes: 2_000_000,
        });
        assert_eq!(ask(addr, &big), (Status::TooLarge, 0));
        let mut garbage = [0xAAu8; HEADER_LEN];
        garbage[..4].copy_from_slice(b"GET ");
        assert_eq!(ask(addr, &garbage), (Status::Malformed, 0));
        let mut old = encode_request(&Request { id: 3, bytes: 10 });
        old[4] = 0;
        assert_eq!(ask(addr, &old), (Status::WrongVersion, 0));
        read_one(4);
        wait_for("three refusals, logged", || {
            let logs = logs.lock().unwrap().join("\n");
            s.stats.refused.load(Ordering::Relaxed) == 3
                && [
                    "at most 1000000 allowed",
                    "not an incastlab",
                    "protocol version 0",
                ]
                .iter()
                .all(|m| logs.contains(m))
        });
        let logs = logs.lock().unwrap().join("\n");
        assert!(
            logs.contains("2000000 bytes asked for, at most 1000000 allowed"),
            "{logs}"
        );
        assert!(logs.contains("not an incastlab request"), "{logs}");
        assert!(logs.contains("protocol version 0"), "{logs}");
        assert_eq!(s.stats.refused.load(Ordering::Relaxed), 3);
        s.stop.store(true, Ordering::Relaxed);
    }

    #[test]
    fn an_idle_connection_is_closed_after_its_first_request_timeout() {
        let (s, _) = start(ServerConfig {
            first_request_timeout: Duration::from_millis(300),
            ..ServerConfig::default()
        });
        let mut idle = TcpStream::connect(s.local_addr().unwrap()).unwrap();
        // The idle one is closed after its timeout: reading sees end of stream.
        idle.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut b = [0u8; 1];
        assert_eq!(idle.read(&mut b).unwrap(), 0);
        assert_eq!(s.stats.idle_closed.load(Ordering::Relaxed), 1);
        s.stop.store(true, Ordering::Relaxed);
    }

    /// At the global cap a newcomer evicts the connection making no progress longest, and
    /// the table never holds more than the cap.
    #[test]
    fn a_full_table_evicts_the_stalest_connection_for_a_newcomer() {
        let (s, logs) = start(ServerConfig {
            max_conns: 2,
            ..ServerConfig::default()
        });
        let addr = s.local_addr().unwrap();
        let mut oldest = connect_from("127.0.5.1", addr);
        wait_for("one held", || s.stats.open.load(Ordering::Relaxed) == 1);
        thread::sleep(Duration::from_millis(30));
        let mut younger = connect_from("127.0.5.2", addr);
        wait_for("two held", || s.stats.open.load(Ordering::Relaxed) == 2);
        // A client that asks and reads is served at once.
        let r = bench(&config(vec![addr])).unwrap();
        assert_eq!(r.block_times_us.len(), 5);
        assert_eq!(s.stats.busy.load(Ordering::Relaxed), 0);
        assert!(s.stats.open.load(Ordering::Relaxed) <= 2);
        oldest
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut b = [0u8; 1];
        assert_eq!(oldest.read(&mut b).unwrap(), 0, "the stalest was evicted");
        // The younger one lost its place to the bench's later request or still holds it;
        // either way it was not evicted before the older one.
        younger.set_nonblocking(true).unwrap();
        let _ = younger.read(&mut b);
        wait_for("the eviction logged", || {
            logs.lock()
                .unwrap()
                .iter()
                .any(|l| l.starts_with("127.0.5.1:") && l.contains("evicted for"))
        });
        s.stop.store(true, Ordering::Relaxed);
    }

    #[test]
    fn peers_outside_the_allow_list_are_closed_in_one_line() {
        let (s, logs) = start(ServerConfig {
            allow: crate::access::Cidr::parse_list("127.0.0.1/32").unwrap(),
            ..ServerConfig::default()
        });
        let addr = s.local_addr().unwrap();
        let mut out = connect_from("127.0.6.9", addr);
        out.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut b = [0u8; 1];
        assert!(
            matches!(out.read(&mut b), Ok(0) | Err(_)),
            "closed at accept"
        );
        let r = bench(&config(vec![addr])).unwrap();
        assert_eq!(r.block_times_us.len(), 5);
        assert_eq!(s.stats.not_allowed.load(Ordering::Relaxed), 1);
        wait_for("the refusal logged", || {
            logs.lock()
                .unwrap()
                .iter()
                .any(|l| l.starts_with("127.0.6.9:") && l.ends_with("not in --allow; closed"))
        });
        s.stop.store(true, Ordering::Relaxed);
    }

    #[test]
    fn with_a_token_only_requests_carrying_it_are_served() {
        use crate::access::Token;
        use crate::protocol::encode_request_with_token;
        let secret = "s3cret-token-0123456789";
        let (s, logs) = start(ServerConfig {
            token: Some(Token::parse(secret).unwrap()),
            ..ServerConfig::default()
        });
        let addr = s.local_addr().unwrap();
        let req = Request { id: 9, bytes: 100 };
        assert_eq!(ask(addr, &encode_request(&req)), (Status::Unauthorized, 0));
        let wrong = Token::parse("another-token-0123456789").unwrap();
        let mut c = TcpStream::connect(addr).unwrap();
        c.write_all(&encode_request_with_token(&req, wrong.wire()))
            .unwrap();
        let mut h = [0u8; HEADER_LEN];
        c.read_exact(&mut h).unwrap();
        assert_eq!(parse_response(&h).unwrap().0, Status::Unauthorized);
        let mut cfg = config(vec![addr]);
        cfg.token = Some(format!("{secret}\n"));
        let r = bench(&cfg).unwrap();
        assert_eq!(r.block_times_us.len(), 5);
        assert_eq!(s.stats.unauthorized.load(Ordering::Relaxed), 2);
        // Without a token configured a server serves a client that sends one.
        let (open, _) = start(ServerConfig::default());
        let r = bench(&BenchConfig {
            servers: vec![open.local_addr().unwrap()],
            ..cfg.clone()
        })
        .unwrap();
        assert_eq!(r.block_times_us.len(), 5);
        wait_for("both refusals logged", || {
            let l = logs.lock().unwrap().join("\n");
            l.contains("refused a request: no token") && l.contains("a wrong token")
        });
        assert!(!logs.lock().unwrap().join("\n").contains(secret));
        s.stop.store(true, Ordering::Relaxed);
        open.stop.store(true, Ordering::Relaxed);
    }

    /// A log sink that never returns (stderr a pipe nobody reads): the loop goes on serving,
    /// counts what it drops, and stops within a second of being told to.
    #[test]
    fn a_stuck_log_sink_neither_stalls_serving_nor_stopping() {
        let s = Server::bind(
            "127.0.0.1:0".parse().unwrap(),
            ServerConfig {
                max_conns_per_peer: 1,
                ..ServerConfig::default()
            },
        )
        .unwrap()
        .with_log(|_| loop {
            thread::sleep(Duration::from_secs(3600));
        });
        let s = Arc::new(s);
        let r = s.clone();
        let handle = thread::spawn(move || r.run().unwrap());
        let addr = s.local_addr().unwrap();
        let _held = connect_from("127.0.7.1", addr);
        // Every one of these is turned away at the per-peer cap and logged (or dropped).
        for _ in 0..2000 {
            let _ = connect_from("127.0.7.1", addr);
        }
        let r = bench(&config(vec![addr])).unwrap();
        assert_eq!(r.block_times_us.len(), 5);
        wait_for("turned-away lines past the queue dropped", || {
            s.stats.busy.load(Ordering::Relaxed) >= 1000
        });
        let t = Instant::now();
        s.stop.store(true, Ordering::Relaxed);
        handle.join().unwrap();
        assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    }

    /// A connection from `from` (a loopback address) to `to`.
    fn connect_from(from: &str, to: std::net::SocketAddr) -> TcpStream {
        let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        let local: std::net::SocketAddr = format!("{from}:0").parse().unwrap();
        s.bind(&local.into()).unwrap();
        s.connect(&to.into()).unwrap();
        s.into()
    }

    #[test]
    fn an_idle_connection_is_closed_between_requests() {
        let (s, _) = start(ServerConfig {
            idle_timeout: Duration::from_millis(200),
            ..ServerConfig::default()
        });
        let mut c = TcpStream::connect(s.local_addr().unwrap()).unwrap();
        c.write_all(&encode_request(&Request { id: 1, bytes: 10 }))
            .unwrap();
        let mut answer = [0u8; HEADER_LEN + 10];
        c.read_exact(&mut answer).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut b = [0u8; 1];
        assert_eq!(c.read(&mut b).unwrap(), 0, "closed after the idle timeout");
        assert_eq!(s.stats.idle_closed.load(Ordering::Relaxed), 1);
        s.stop.store(true, Ordering::Relaxed);
    }

    #[test]
    fn a_client_that_never_reads_is_closed_at_the_write_deadline_and_others_are_served() {
        let (s, logs) = start(ServerConfig {
            write_timeout: Duration::from_millis(300),
            send_buffer: Some(16 << 10),
            ..ServerConfig::default()
        });
        let addr = s.local_addr().unwrap();
        let mut stalled = TcpStream::connect(addr).unwrap();
        socket2::SockRef::from(&stalled)
            .set_recv_buffer_size(16 << 10)
            .unwrap();
        stalled
            .write_all(&encode_request(&Request {
                id: 1,
                bytes: 64 << 20,
            }))
            .unwrap();
        // While that answer is stuck, another client reads every block.
        let r = bench(&config(vec![addr])).unwrap();
        assert_eq!(r.block_times_us.len(), 5);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while s.stats.write_timeouts.load(Ordering::Relaxed) == 0
            && std::time::Instant::now() < deadline
        {
            thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(s.stats.write_timeouts.load(Ordering::Relaxed), 1);
        assert!(logs
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("not reading its answer")));
        s.stop.store(true, Ordering::Relaxed);
    }

    #[test]
    fn one_peer_is_capped_before_the_global_limit() {
        let (s, _) = start(ServerConfig {
            max_conns_per_peer: 2,
            ..ServerConfig::default()
        });
        let addr = s.local_addr().unwrap();
        let _a = connect_from("127.0.0.2", addr);
        let _b = connect_from("127.0.0.2", addr);
        wait_for("two connections held", || {
            s.stats.open.load(Ordering::Relaxed) == 2
        });
        let mut third = connect_from("127.0.0.2", addr);
        let mut h = [0u8; HEADER_LEN];
        third.read_exact(&mut h).unwrap();
        assert_eq!(parse_response(&h).unwrap().0, Status::Busy);
        // Another host is still served.
        let r = bench(&config(vec![addr])).unwrap();
        assert_eq!(r.block_times_us.len(), 5);
        assert_eq!(s.stats.busy.load(Ordering::Relaxed), 1);
        s.stop.store(true, Ordering::Relaxed);
    }

    /// One server on several addresses (an emulation's sender hosts, here without
    /// namespaces): a bench reads every block from every address, and the caps count per
    /// address, so one client's connections to all of them are not one peer's.
    #[test]
    fn one_loop_serves_every_address_and_caps_each_on_its_own() {
        let addrs: Vec<(Option<String>, std::net::SocketAddr)> = (1..=40)
            .map(|i| (None, format!("127.0.4.{i}:0").parse().unwrap()))
            .collect();
        let s = Server::bind_each(
            &addrs,
            ServerConfig {
                max_conns: 1,
                max_conns_per_peer: 1,
                ..ServerConfig::default()
            },
        )
        .unwrap();
        let bound = s.local_addrs().to_vec();
        assert_eq!(bound.len(), 40);
        assert!(bound
            .iter()
            .enumerate()
            .all(|(i, a)| a.ip().to_string() == format!("127.0.4.{}", i + 1) && a.port() != 0));
        let s = Arc::new(s);
        let r = s.clone();
        thread::spawn(move || r.run().unwrap());
        let result = bench(&config(bound.clone())).unwrap();
        assert_eq!(result.bytes, 5 * 40 * 64_000);
        assert!(result.response_us.iter().all(|b| b.len() == 40));
        assert_eq!(s.stats.requests.load(Ordering::Relaxed), 6 * 40);
        assert_eq!(s.stats.busy.load(Ordering::Relaxed), 0);
        // Each address holds its own one connection: a second to the same one is Busy.
        let _first = TcpStream::connect(bound[7]).unwrap();
        wait_for("the bench's connections closed and the first held", || {
            s.stats.open.load(Ordering::Relaxed) == 1
        });
        let mut second = TcpStream::connect(bound[7]).unwrap();
        let mut h = [0u8; HEADER_LEN];
        second.read_exact(&mut h).unwrap();
        assert_eq!(parse_response(&h).unwrap().0, Status::Busy);
        s.stop.store(true, Ordering::Relaxed);
    }

    #[test]
    fn an_address_that_cannot_be_bound_is_named() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let at = taken.local_addr().unwrap();
        let e = match Server::bind_each(
            &[(None, "127.0.0.1:0".parse().unwrap()), (None, at)],
            ServerConfig::default(),
        ) {
            Err(e) => e,
            Ok(_) => panic!("bound a taken address"),
        };
        assert!(
            e.to_string().contains(&format!("cannot listen on {at}")),
            "{e}"
        );
        let e = match Server::bind_each(
            &[(Some("incastlab-no-such-ns".into()), at)],
            ServerConfig::default(),
        ) {
            Err(e) => e,
            Ok(_) => panic!("bound in a missing namespace"),
        };
        assert!(e.to_string().contains("no namespace"), "{e}");
    }

    /// A bounded load test: idle, slow-reading and never-reading connections from other
    /// hosts while a bench reads every block; the server holds them all on one thread.
    #[test]
    fn bench_reads_every_block_while_idle_slow_and_stalled_clients_are_held() {
        let (s, _) = start(ServerConfig {
            send_buffer: Some(16 << 10),
            ..ServerConfig::default()
        });
        let addr = s.local_addr().unwrap();
        let idle: Vec<_> = (0..300)
            .map(|i| connect_from(&format!("127.0.1.{}", 1 + i % 50), addr))
            .collect();
        let mut stalled = Vec::new();
        for i in 0..20 {
            let mut c = connect_from(&format!("127.0.2.{}", 1 + i), addr);
            c.write_all(&encode_request(&Request {
                id: 1,
                bytes: 32 << 20,
            }))
            .unwrap();
            stalled.push(c);
        }
        let mut slow = Vec::new();
        for i in 0..20 {
            let mut c = connect_from(&format!("127.0.3.{}", 1 + i), addr);
            c.write_all(&encode_request(&Request {
                id: 1,
                bytes: 32 << 20,
            }))
            .unwrap();
            c.set_read_timeout(Some(Duration::from_millis(1))).unwrap();
            slow.push(c);
        }
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reader = {
            let stop = stop.clone();
            thread::spawn(move || {
                let mut buf = [0u8; 1024];
                while !stop.load(Ordering::Relaxed) {
                    for c in &mut slow {
                        let _ = c.read(&mut buf);
                    }
                    thread::sleep(Duration::from_millis(10));
                }
            })
        };
        wait_for("every connection held", || {
            s.stats.open.load(Ordering::Relaxed) == 340
        });
        let mut cfg = config(vec![addr; 4]);
        cfg.blocks = 20;
        let r = bench(&cfg).unwrap();
        assert_eq!(r.block_times_us.len(), 20);
        assert!(!r.truncated);
        stop.store(true, Ordering::Relaxed);
        reader.join().unwrap();
        drop(idle);
        drop(stalled);
        s.stop.store(true, Ordering::Relaxed);
    }

    #[test]
    fn an_unknown_congestion_control_is_refused_at_start() {
        let e = Server::bind(
            "127.0.0.1:0".parse().unwrap(),
            ServerConfig {
                congestion: Some("bogus".into()),
                ..ServerConfig::default()
            },
        )
        .err()
        .expect("refused");
        assert!(e.to_string().contains("\"bogus\" is not available"), "{e}");
    }

    #[test]
    fn an_unreachable_server_is_named() {
        let mut cfg = config(vec!["127.0.0.1:1".parse().unwrap()]);
        cfg.connect_timeout_s = 0.5;
        let e = bench(&cfg).unwrap_err();
        assert!(e.contains("cannot connect to 127.0.0.1:1"), "{e}");
    }
}
