//! Real networking: the block server, the block servers of an emulation's hosts, the
//! synchronized-read client, `incast monitor`'s sampler and the namespaces' counters.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::boundary::{duration, panic_message, socket_addr, MonitorError, SimulationError};

/// Serve blocks of synthetic bytes on `addr` until Ctrl-C (or SIGTERM turned into
/// KeyboardInterrupt by the caller). `on_ready(address)` is called once listening.
#[pyfunction]
#[pyo3(signature = (addr, max_request, max_conns, idle_timeout_s, nodelay=true, send_buffer=None, congestion=None, on_ready=None, max_conns_per_peer=128, first_request_timeout_s=5.0, write_timeout_s=30.0, allow=None, token=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn serve(
    py: Python<'_>,
    addr: &str,
    max_request: u64,
    max_conns: usize,
    idle_timeout_s: f64,
    nodelay: bool,
    send_buffer: Option<usize>,
    congestion: Option<String>,
    on_ready: Option<Py<PyAny>>,
    max_conns_per_peer: usize,
    first_request_timeout_s: f64,
    write_timeout_s: f64,
    allow: Option<String>,
    token: Option<String>,
) -> PyResult<()> {
    use incast_net::access::{Cidr, Token};
    use incast_net::server::{Server, ServerConfig};
    use std::sync::atomic::Ordering;
    let sock = socket_addr("--listen", "127.0.0.1:9000", addr)?;
    let cfg = ServerConfig {
        max_request,
        max_conns,
        max_conns_per_peer,
        idle_timeout: duration("--idle-timeout", idle_timeout_s)?,
        first_request_timeout: duration("--first-request-timeout", first_request_timeout_s)?,
        write_timeout: duration("--write-timeout", write_timeout_s)?,
        nodelay,
        send_buffer,
        congestion,
        allow: match allow {
            Some(a) => {
                Cidr::parse_list(&a).map_err(|e| PyValueError::new_err(format!("--allow: {e}")))?
            }
            None => Vec::new(),
        },
        token: match token {
            Some(t) => Some(
                Token::parse(&t)
                    .map_err(|e| PyValueError::new_err(format!("--token-file: {e}")))?,
            ),
            None => None,
        },
        ..ServerConfig::default()
    };
    let server = Server::bind(sock, cfg)
        .map_err(|e| PyRuntimeError::new_err(format!("cannot listen on {addr}: {e}")))?;
    let bound = server
        .local_addr()
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let server = std::sync::Arc::new(server);
    let runner = server.clone();
    let handle = std::thread::spawn(move || runner.run());
    if let Some(cb) = on_ready {
        cb.call1(py, (bound.to_string(),))?;
    }
    let result = loop {
        py.detach(|| std::thread::sleep(std::time::Duration::from_millis(100)));
        if let Err(e) = py.check_signals() {
            break Err(e);
        }
        if handle.is_finished() {
            break Ok(());
        }
    };
    server.stop.store(true, Ordering::Relaxed);
    let _ = handle.join();
    result
}

/// The block servers of an emulation's sender hosts: one listening socket inside each named
/// network namespace, all served by one thread of this process (a few kB each, where a
/// process per namespace took megabytes). Serving starts on creation and ends with `stop`,
/// or with the process: the sockets are this process's, so they die with it.
#[pyclass(name = "BlockServers")]
pub(crate) struct PyBlockServers {
    server: std::sync::Arc<incast_net::server::Server>,
    handle: Option<std::thread::JoinHandle<std::io::Result<()>>>,
    logs: std::sync::Arc<std::sync::Mutex<std::collections::VecDeque<String>>>,
}

/// Log lines kept (the latest): enough to say why a client failed.
const SERVER_LOG_LINES: usize = 200;

#[pymethods]
impl PyBlockServers {
    /// Listen on every `(namespace, "host:port")` (`None`: this thread's namespace).
    #[new]
    #[pyo3(signature = (listen, congestion=None, max_request=64 << 20, max_conns=1024, idle_timeout_s=60.0, first_request_timeout_s=60.0, write_timeout_s=30.0, nodelay=true, send_buffer=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        listen: Vec<(Option<String>, String)>,
        congestion: Option<String>,
        max_request: u64,
        max_conns: usize,
        idle_timeout_s: f64,
        first_request_timeout_s: f64,
        write_timeout_s: f64,
        nodelay: bool,
        send_buffer: Option<usize>,
    ) -> PyResult<Self> {
        use incast_net::server::{Server, ServerConfig};
        let mut addrs = Vec::with_capacity(listen.len());
        for (ns, a) in listen {
            addrs.push((ns, socket_addr("listen", "10.0.0.1:9000", &a)?));
        }
        let cfg = ServerConfig {
            max_request,
            max_conns,
            max_conns_per_peer: max_conns,
            idle_timeout: duration("idle_timeout_s", idle_timeout_s)?,
            first_request_timeout: duration("first_request_timeout_s", first_request_timeout_s)?,
            write_timeout: duration("write_timeout_s", write_timeout_s)?,
            nodelay,
            send_buffer,
            congestion,
            allow: Vec::new(),
            token: None,
            ..ServerConfig::default()
        };
        let logs = std::sync::Arc::new(std::sync::Mutex::new(std::collections::VecDeque::new()));
        let sink = logs.clone();
        let server = py
            .detach(|| Server::bind_each(&addrs, cfg))
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?
            .with_log(move |m: &str| {
                if let Ok(mut l) = sink.lock() {
                    if l.len() == SERVER_LOG_LINES {
                        l.pop_front();
                    }
                    l.push_back(format!("incast serve: {m}"));
                }
            });
        let server = std::sync::Arc::new(server);
        let runner = server.clone();
        let handle = std::thread::Builder::new()
            .name("block-servers".into())
            .spawn(move || runner.run())
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start the servers: {e}")))?;
        Ok(PyBlockServers {
            server,
            handle: Some(handle),
            logs,
        })
    }

    /// The bound addresses, in the order given.
    fn addresses(&self) -> Vec<String> {
        self.server
            .local_addrs()
            .iter()
            .map(|a| a.to_string())
            .collect()
    }

    /// The latest log lines (each starting `incast serve:`).
    fn logs(&self) -> Vec<String> {
        self.logs
            .lock()
            .map(|l| l.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Counters over every address: connections, requests, bytes, refused, busy,
    /// idle_closed, write_timeouts, open.
    fn stats(&self) -> std::collections::HashMap<&'static str, u64> {
        use std::sync::atomic::Ordering::Relaxed;
        let s = &self.server.stats;
        [
            ("connections", s.connections.load(Relaxed)),
            ("requests", s.requests.load(Relaxed)),
            ("bytes", s.bytes.load(Relaxed)),
            ("refused", s.refused.load(Relaxed)),
            ("busy", s.busy.load(Relaxed)),
            ("idle_closed", s.idle_closed.load(Relaxed)),
            ("write_timeouts", s.write_timeouts.load(Relaxed)),
            ("open", s.open.load(Relaxed)),
        ]
        .into_iter()
        .collect()
    }

    /// Stop serving and close every socket; RuntimeError if the loop had failed.
    fn stop(&mut self, py: Python<'_>) -> PyResult<()> {
        self.server
            .stop
            .store(true, std::sync::atomic::Ordering::Relaxed);
        let Some(h) = self.handle.take() else {
            return Ok(());
        };
        match py.detach(|| h.join()) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(PyRuntimeError::new_err(format!("the servers failed: {e}"))),
            Err(p) => Err(SimulationError::new_err(panic_message(p))),
        }
    }
}

impl Drop for PyBlockServers {
    fn drop(&mut self) {
        self.server
            .stop
            .store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// `files` of `/proc/net` (e.g. "netstat", "snmp") as each named network namespace shows
/// them: one list of texts per namespace. Needs root.
#[pyfunction]
pub(crate) fn netns_read(
    py: Python<'_>,
    names: Vec<String>,
    files: Vec<String>,
) -> PyResult<Vec<Vec<String>>> {
    py.detach(|| incast_net::netns::read_proc_net(&names, &files))
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// Check a shared token's text (a token file's contents) as the server and client will:
/// ValueError saying what is wrong (never the token itself).
#[pyfunction]
pub(crate) fn check_token(text: &str) -> PyResult<()> {
    incast_net::access::Token::parse(text)
        .map(|_| ())
        .map_err(PyValueError::new_err)
}

/// Check that TCP congestion control `name` can be set on a socket here; ValueError naming
/// it (and what is available) if not.
#[pyfunction]
pub(crate) fn check_congestion(name: &str) -> PyResult<()> {
    incast_net::server::check_congestion(name).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Run the synchronized-read client; `config_json` is a BenchConfig, the result JSON.
#[pyfunction]
#[pyo3(name = "bench")]
pub(crate) fn run_bench(py: Python<'_>, config_json: &str) -> PyResult<String> {
    let cfg: incast_net::client::BenchConfig = serde_json::from_str(config_json)
        .map_err(|e| PyValueError::new_err(format!("bench configuration: {e}")))?;
    let handle = std::thread::spawn(move || incast_net::client::bench(&cfg));
    loop {
        py.detach(|| std::thread::sleep(std::time::Duration::from_millis(50)));
        py.check_signals()?;
        if handle.is_finished() {
            break;
        }
    }
    match handle.join() {
        Ok(Ok(r)) => Ok(serde_json::to_string(&r).expect("a bench result serializes")),
        Ok(Err(e)) => Err(PyRuntimeError::new_err(e)),
        Err(p) => Err(SimulationError::new_err(panic_message(p))),
    }
}

/// `incast monitor`'s sampler: started on creation, drained by `poll`, ended by `stop`.
#[pyclass(name = "Monitor")]
pub(crate) struct PyMonitor {
    inner: Option<incast_net::monitor::Monitor>,
}

/// A batch as JSON: samples as columns, TCP counter readings, notes, and the end.
pub(crate) fn batch_json(b: incast_net::monitor::Batch) -> String {
    let col = |f: fn(&incast_net::monitor::Sample) -> u64| -> Vec<u64> {
        b.samples.iter().map(f).collect()
    };
    let tcp: Vec<serde_json::Value> = b
        .tcp
        .iter()
        .map(|c| {
            serde_json::json!({
                "t_ns": c.t_ns, "timeouts": c.timeouts, "loss_probes": c.loss_probes,
                "spurious_rtos": c.spurious_rtos, "retrans_segs": c.retrans_segs,
                "out_segs": c.out_segs, "delivered_ce": c.delivered_ce,
                "recoveries": c.recoveries,
            })
        })
        .collect();
    serde_json::json!({
        "samples": {
            "t_ns": col(|s| s.t_ns), "late_ns": col(|s| s.late_ns), "dt_ns": col(|s| s.dt_ns),
            "rx_bytes": col(|s| s.rx_bytes), "tx_bytes": col(|s| s.tx_bytes),
            "rx_packets": col(|s| s.rx_packets), "tx_packets": col(|s| s.tx_packets),
            "drops": col(|s| s.drops),
        },
        "tcp": tcp,
        "notes": b.notes,
        "finished": b.finished,
        "error": b.error.map(|e| e.to_string()),
        "cpu_ns": b.cpu_ns,
        "realtime": b.realtime,
    })
    .to_string()
}

#[pymethods]
impl PyMonitor {
    /// Start sampling `iface` (in namespace `netns`) every `interval_ns`, for `duration_ns`
    /// or until `stop`.
    #[new]
    #[pyo3(signature = (iface, interval_ns, netns=None, duration_ns=None))]
    fn new(
        iface: &str,
        interval_ns: u64,
        netns: Option<String>,
        duration_ns: Option<u64>,
    ) -> PyResult<Self> {
        let cfg = incast_net::monitor::MonitorConfig {
            iface: iface.to_string(),
            netns,
            interval: std::time::Duration::from_nanos(interval_ns.max(1)),
            duration: duration_ns.map(std::time::Duration::from_nanos),
        };
        let m = incast_net::monitor::Monitor::start(cfg)
            .map_err(|e| MonitorError::new_err(e.to_string()))?;
        Ok(PyMonitor { inner: Some(m) })
    }

    /// What was sampled since the last poll, as JSON.
    fn poll(&self) -> String {
        match &self.inner {
            Some(m) => batch_json(m.poll()),
            None => batch_json(incast_net::monitor::Batch {
                finished: true,
                ..Default::default()
            }),
        }
    }

    /// Stop sampling; the last batch as JSON.
    fn stop(&mut self, py: Python<'_>) -> String {
        match self.inner.take() {
            Some(m) => batch_json(py.detach(|| m.stop())),
            None => self.poll(),
        }
    }
}
