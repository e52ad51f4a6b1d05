//! `incastlab._core`: the simulator behind a thin, panic-proof Python boundary.
//!
//! Scenarios cross as JSON in base units (the Python layer turns unit strings into them; the
//! engine owns every default and rule: `defaults`, `normalize`, `describe`) and reports come
//! back as JSON. The run proceeds in slices with the GIL released; between slices the
//! binding checks for Ctrl-C and reports progress.

use std::panic::{catch_unwind, AssertUnwindSafe};

use incast_sim::capture::Points;
use incast_sim::tcp::{probe_timeout, RttEstimator};
use incast_sim::{SimError, Simulation};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

mod report_schema;

create_exception!(
    incastlab._core,
    ScenarioError,
    PyValueError,
    "The scenario is invalid."
);
create_exception!(
    incastlab._core,
    SimulationError,
    PyRuntimeError,
    "The simulation stopped without a result (budget exhausted or internal error)."
);

/// A `ScenarioError` whose `.field` names the offending key (dotted path).
fn scenario_error(py: Python<'_>, e: &incast_sim::ConfigError) -> PyErr {
    let err = ScenarioError::new_err(e.to_string());
    // Setting an attribute on a fresh exception cannot fail short of memory exhaustion;
    // the error still carries the field in its message if it does.
    let _ = err.value(py).setattr("field", &e.field);
    err
}

fn to_py(py: Python<'_>, e: SimError) -> PyErr {
    match e {
        SimError::Config(c) => scenario_error(py, &c),
        other => SimulationError::new_err(other.to_string()),
    }
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    let what = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    format!("internal simulator error (please report it with the scenario): {what}")
}

/// Run the scenario given as normalized JSON; return the report as JSON.
///
/// `progress`, if given, is called between slices with (events, simulated seconds). With
/// `pcap`, the frames seen at `pcap_at` (default: the receiver) are written there as a pcap.
#[pyfunction]
#[pyo3(signature = (scenario_json, progress=None, slice_events=2_000_000, pcap=None, pcap_at=None))]
fn simulate(
    py: Python<'_>,
    scenario_json: &str,
    progress: Option<Py<PyAny>>,
    slice_events: u64,
    pcap: Option<&str>,
    pcap_at: Option<&str>,
) -> PyResult<String> {
    // Simulation::new validates, so parsing here does not: one validation per run.
    let sc = incast_sim::Scenario::from_json_unchecked(scenario_json)
        .map_err(|e| scenario_error(py, &e))?;
    let mut sim = catch_unwind(|| Simulation::new(sc))
        .map_err(|p| SimulationError::new_err(panic_message(p)))?
        .map_err(|e| to_py(py, e))?;
    if let Some(path) = pcap {
        let points = pcap_at.map_or_else(Points::default, |p| Points(p.to_string()));
        sim.capture(path, &points).map_err(|e| {
            let err = ScenarioError::new_err(e);
            let _ = err.value(py).setattr("field", "pcap");
            err
        })?;
    }
    let slice = slice_events.max(1);
    loop {
        let done = py
            .detach(|| catch_unwind(AssertUnwindSafe(|| sim.step(slice))))
            .map_err(|p| SimulationError::new_err(panic_message(p)))?
            .map_err(|e| to_py(py, e))?;
        if done {
            break;
        }
        py.check_signals()?;
        if let Some(cb) = &progress {
            let secs = incast_sim::units::to_secs(sim.now());
            cb.call1(py, (sim.events_processed(), secs))?;
        }
    }
    let report = catch_unwind(AssertUnwindSafe(|| sim.report()))
        .map_err(|p| SimulationError::new_err(panic_message(p)))?;
    if let (Some(path), Some(Err(e))) = (pcap, sim.finish_capture()) {
        return Err(SimulationError::new_err(format!(
            "--pcap: writing {path} failed: {e}"
        )));
    }
    Ok(incast_sim::report_json(&report))
}

/// The normalized scenario (JSON) of a scenario in base units, possibly partial: every
/// default and derived default filled in, every rule checked.
#[pyfunction]
fn normalize(py: Python<'_>, scenario_json: &str) -> PyResult<String> {
    catch_unwind(|| incast_sim::Scenario::from_json(scenario_json))
        .map_err(|p| SimulationError::new_err(panic_message(p)))?
        .map(|s| s.to_json())
        .map_err(|e| scenario_error(py, &e))
}

/// A shuffle's layout as both backends take it (`workload.kind = "shuffle"`): reducers,
/// hosts running them, map hosts, the copier window, the connections it opens and the most
/// that wait at one map host, the most the emulator accepts there (its listen backlog), and
/// the largest map output it serves.
#[pyfunction]
fn shuffle_layout(py: Python<'_>, scenario_json: &str) -> PyResult<String> {
    let sc = incast_sim::Scenario::from_json(scenario_json).map_err(|e| scenario_error(py, &e))?;
    let (reducers, reducer_hosts, map_hosts) = (
        sc.shuffle_reducers(),
        sc.shuffle_reducer_hosts(),
        sc.shuffle_map_hosts(),
    );
    let (connections, most) =
        incast_net::shuffle::connections(sc.topology.senders, map_hosts, reducers, reducer_hosts);
    Ok(serde_json::json!({
        "reducers": reducers,
        "reducer_hosts": reducer_hosts,
        "map_hosts": map_hosts,
        "window": sc.shuffle_window(),
        "connections": connections,
        "most_per_map_host": most,
        "max_per_map_host": incast_net::shuffle::MAX_PER_LISTENER,
        "max_output": incast_net::kv::MAX_VALUE,
    })
    .to_string())
}

/// Check a scenario without running it (`normalize` without the result).
#[pyfunction]
fn validate(py: Python<'_>, scenario_json: &str) -> PyResult<()> {
    normalize(py, scenario_json).map(|_| ())
}

/// The default scenario, normalized, as JSON.
#[pyfunction]
fn defaults() -> String {
    incast_sim::Scenario::default().to_json()
}

/// Every key of every section as JSON: `{key: {unit, doc, default, schema[, keys]}}`, where
/// `unit` says how users write it (plain, size, rate, time, time_or_off, limit, cdf, section).
#[pyfunction]
fn describe() -> String {
    incast_sim::Scenario::describe()
}

/// The timers a connection of the scenario (JSON, base units) runs, as the simulator has
/// them, in picoseconds: `rto_min` in whole timer ticks; the `rto` and the tail loss `probe`
/// timeout (several segments out) it settles on at the base RTT (`topology.rtt`); the timer
/// `tick`. The analytical model reads these instead of repeating the simulator's rules.
#[pyfunction]
fn rto_timer(
    py: Python<'_>,
    scenario_json: &str,
) -> PyResult<std::collections::HashMap<&'static str, u64>> {
    let sc = catch_unwind(|| incast_sim::Scenario::from_json(scenario_json))
        .map_err(|p| SimulationError::new_err(panic_message(p)))?
        .map_err(|e| scenario_error(py, &e))?;
    let est = RttEstimator::settled(&sc.tcp, sc.topology.rtt);
    Ok(std::collections::HashMap::from([
        ("rto_min", est.rto_min()),
        ("rto", est.ticks(est.rto(0))),
        ("probe", probe_timeout(&est, false)),
        ("tick", est.tick()),
    ]))
}

/// The bytes each of `n` servers returns of a `block` striped over them (the one split rule).
#[pyfunction]
fn block_split(block: u64, n: u32) -> PyResult<Vec<u64>> {
    if n == 0 || n > incast_sim::config::MAX_SENDERS {
        return Err(PyValueError::new_err(format!(
            "block_split: n must be 1..{}, got {n}",
            incast_sim::config::MAX_SENDERS
        )));
    }
    Ok((0..n)
        .map(|i| incast_sim::config::block_share(block, n, i))
        .collect())
}

/// Serve blocks of synthetic bytes on `addr` until Ctrl-C (or SIGTERM turned into
/// KeyboardInterrupt by the caller). `on_ready(address)` is called once listening.
#[pyfunction]
#[pyo3(signature = (addr, max_request, max_conns, idle_timeout_s, nodelay=true, send_buffer=None, congestion=None, on_ready=None, max_conns_per_peer=128, first_request_timeout_s=5.0, write_timeout_s=30.0))]
#[allow(clippy::too_many_arguments)]
fn serve(
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
) -> PyResult<()> {
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
struct PyBlockServers {
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

/// `text` as a socket address, or one line naming `field` with an `example` of the form.
fn socket_addr(field: &str, example: &str, text: &str) -> PyResult<std::net::SocketAddr> {
    text.parse().map_err(|_| {
        let shown: String = text.chars().take(60).collect();
        PyValueError::new_err(format!(
            "{field}: expected host:port such as {example}, got {shown:?}"
        ))
    })
}

fn duration(name: &str, s: f64) -> PyResult<std::time::Duration> {
    std::time::Duration::try_from_secs_f64(s.max(0.001))
        .map_err(|_| PyValueError::new_err(format!("{name}: not a duration: {s}")))
}

/// `files` of `/proc/net` (e.g. "netstat", "snmp") as each named network namespace shows
/// them: one list of texts per namespace. Needs root.
#[pyfunction]
fn netns_read(
    py: Python<'_>,
    names: Vec<String>,
    files: Vec<String>,
) -> PyResult<Vec<Vec<String>>> {
    py.detach(|| incast_net::netns::read_proc_net(&names, &files))
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// The rate (bits per second) `topology.host_rate_cap` of a normalized scenario leaves a
/// host NIC of `link_bps`, or None without a cap: the simulator's rule, for the emulator's
/// shapers.
#[pyfunction]
fn host_rate_cap_bps(py: Python<'_>, scenario_json: &str, link_bps: u64) -> PyResult<Option<u64>> {
    let sc = incast_sim::Scenario::from_json_unchecked(scenario_json)
        .map_err(|e| scenario_error(py, &e))?;
    Ok(sc.topology.host_rate_cap.map(|c| c.of(link_bps)))
}

/// The `q`-quantile of sorted `values` by nearest rank (0 if empty): the simulator's rule for
/// the key-value store's latencies, for the emulated store's.
#[pyfunction]
fn nearest_rank(values: Vec<u64>, q: f64) -> PyResult<u64> {
    if !(0.0..=1.0).contains(&q) {
        return Err(PyValueError::new_err(format!(
            "q: a share from 0 to 1, got {q}"
        )));
    }
    Ok(incast_sim::kv::quantile(&values, q))
}

/// Check that TCP congestion control `name` can be set on a socket here; ValueError naming
/// it (and what is available) if not.
#[pyfunction]
fn check_congestion(name: &str) -> PyResult<()> {
    incast_net::server::check_congestion(name).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Run the synchronized-read client; `config_json` is a BenchConfig, the result JSON.
#[pyfunction]
#[pyo3(name = "bench")]
fn run_bench(py: Python<'_>, config_json: &str) -> PyResult<String> {
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

/// The key-value store's gets on real TCP (`incast emulate` with `workload.kind =
/// "kv_gets"`): every host of a normalized scenario listening in its namespace and
/// connected to every other on creation; `run` issues the gets the simulator would draw
/// for the same scenario and seed (`incast_sim::kv::plan`).
/// `hosts` (`(namespace, "ip:port")` per host) as the hosts of scenario `sc`'s mesh.
fn mesh_hosts(
    sc: &incast_sim::Scenario,
    hosts: Vec<(Option<String>, String)>,
) -> PyResult<Vec<incast_net::kv::KvHost>> {
    if hosts.len() != sc.topology.senders as usize {
        return Err(PyValueError::new_err(format!(
            "hosts: {} given for a cluster of {} (topology.senders)",
            hosts.len(),
            sc.topology.senders
        )));
    }
    hosts
        .into_iter()
        .map(|(netns, a)| {
            let addr = socket_addr("hosts", "10.0.0.1:9000", &a)?;
            Ok(incast_net::kv::KvHost { netns, addr })
        })
        .collect()
}

#[pyclass(name = "KvCluster")]
struct PyKvCluster {
    cluster: Option<incast_net::kv::KvCluster>,
    gets: usize,
    rate: f64,
    quorum: u32,
}

#[pymethods]
impl PyKvCluster {
    /// `hosts`: `(namespace, "ip:port")` per host of the scenario, in host order.
    #[new]
    #[pyo3(signature = (scenario_json, hosts, congestion=None, connect_timeout_s=10.0))]
    fn new(
        py: Python<'_>,
        scenario_json: &str,
        hosts: Vec<(Option<String>, String)>,
        congestion: Option<String>,
        connect_timeout_s: f64,
    ) -> PyResult<Self> {
        use incast_net::kv::{KvCluster, KvConfig, KvGet};
        let sc =
            incast_sim::Scenario::from_json(scenario_json).map_err(|e| scenario_error(py, &e))?;
        let list = mesh_hosts(&sc, hosts)?;
        if sc.workload.kv_put_fraction > 0.0 {
            return Err(PyValueError::new_err(
                "workload.kv_put_fraction: puts are not emulated yet (allowed: 0)",
            ));
        }
        let ps_per_us = 1_000_000;
        let gets: Vec<KvGet> = incast_sim::kv::plan(&sc)
            .into_iter()
            .map(|g| KvGet {
                host: g.host,
                at_us: g.at / ps_per_us,
                size: g.size,
                replicas: g.replicas,
            })
            .collect();
        let n = gets.len();
        let (rate, quorum) = (sc.kv_gets_per_s(), sc.kv_quorum());
        let cfg = KvConfig {
            hosts: list,
            gets,
            quorum,
            warmup_us: sc.workload.kv_warmup / ps_per_us,
            congestion,
            connect_timeout_s,
        };
        let cluster = py
            .detach(|| KvCluster::connect(cfg))
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(PyKvCluster {
            cluster: Some(cluster),
            gets: n,
            rate,
            quorum,
        })
    }

    /// Gets planned.
    fn planned(&self) -> usize {
        self.gets
    }

    /// Gets per second arriving at each host (the simulator's `kv_gets_per_s`).
    fn gets_per_s(&self) -> f64 {
        self.rate
    }

    /// Replies a get waits for (the simulator's `kv_quorum`).
    fn quorum(&self) -> u32 {
        self.quorum
    }

    /// Run the gets from `start_monotonic_ns` (Python's `time.monotonic_ns()` clock) on, at
    /// most `time_limit_s` past the last arrival; the result as JSON. Once only.
    fn run(
        &mut self,
        py: Python<'_>,
        start_monotonic_ns: u64,
        time_limit_s: f64,
    ) -> PyResult<String> {
        let Some(cluster) = self.cluster.take() else {
            return Err(PyRuntimeError::new_err("this cluster has run already"));
        };
        let limit = duration("time_limit_s", time_limit_s)?;
        let start = incast_net::kv::instant_at_monotonic_ns(start_monotonic_ns);
        run_interruptibly(py, "kv-gets", move |stop| {
            let r = cluster.run(start, limit, stop)?;
            Ok(serde_json::to_string(&r).expect("a kv result serializes"))
        })
    }
}

/// Run `work` on a thread of its own while this one watches for Ctrl-C (which sets the flag
/// `work` is given, so it stops early and reports what it has); its result as JSON.
fn run_interruptibly<F>(py: Python<'_>, name: &str, work: F) -> PyResult<String>
where
    F: FnOnce(&std::sync::atomic::AtomicBool) -> std::io::Result<String> + Send + 'static,
{
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stop.clone();
    let handle = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || work(&flag))
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start {name}: {e}")))?;
    let interrupted = loop {
        py.detach(|| std::thread::sleep(std::time::Duration::from_millis(50)));
        if let Err(e) = py.check_signals() {
            break Some(e);
        }
        if handle.is_finished() {
            break None;
        }
    };
    if interrupted.is_some() {
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    let joined = py.detach(|| handle.join());
    if let Some(e) = interrupted {
        return Err(e);
    }
    match joined {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(e)) => Err(PyRuntimeError::new_err(e.to_string())),
        Err(p) => Err(SimulationError::new_err(panic_message(p))),
    }
}

/// A MapReduce shuffle on real TCP between hosts in namespaces: the simulator's shuffle
/// (`workload.kind = "shuffle"`) for the same scenario and seed, fetch for fetch.
#[pyclass(name = "ShuffleCluster")]
struct PyShuffleCluster {
    cluster: Option<incast_net::shuffle::ShuffleCluster>,
}

#[pymethods]
impl PyShuffleCluster {
    /// `hosts`: `(namespace, "ip:port")` per host of the scenario, in host order.
    #[new]
    #[pyo3(signature = (scenario_json, hosts, congestion=None, connect_timeout_s=10.0))]
    fn new(
        py: Python<'_>,
        scenario_json: &str,
        hosts: Vec<(Option<String>, String)>,
        congestion: Option<String>,
        connect_timeout_s: f64,
    ) -> PyResult<Self> {
        use incast_net::shuffle::{ShuffleCluster, ShuffleConfig};
        let sc =
            incast_sim::Scenario::from_json(scenario_json).map_err(|e| scenario_error(py, &e))?;
        let list = mesh_hosts(&sc, hosts)?;
        let cfg = ShuffleConfig {
            hosts: list,
            map_hosts: sc.shuffle_map_hosts(),
            reducers: sc.shuffle_reducers(),
            reducer_hosts: sc.shuffle_reducer_hosts(),
            outputs: sc.workload.blocks,
            output_bytes: sc.workload.sru.unwrap_or(0),
            window: sc.shuffle_window(),
            order: incast_sim::shuffle::fetch_orders(&sc),
            congestion,
            connect_timeout_s,
        };
        let cluster = py
            .detach(|| ShuffleCluster::connect(cfg))
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(PyShuffleCluster {
            cluster: Some(cluster),
        })
    }

    /// Run the shuffle from `start_monotonic_ns` (Python's `time.monotonic_ns()` clock) on,
    /// for at most `time_limit_s`; the result as JSON. Once only.
    fn run(
        &mut self,
        py: Python<'_>,
        start_monotonic_ns: u64,
        time_limit_s: f64,
    ) -> PyResult<String> {
        let Some(cluster) = self.cluster.take() else {
            return Err(PyRuntimeError::new_err("this shuffle has run already"));
        };
        let limit = duration("time_limit_s", time_limit_s)?;
        let start = incast_net::kv::instant_at_monotonic_ns(start_monotonic_ns);
        run_interruptibly(py, "shuffle", move |stop| {
            let r = cluster.run(start, limit, stop)?;
            Ok(serde_json::to_string(&r).expect("a shuffle result serializes"))
        })
    }
}

create_exception!(
    incastlab._core,
    TraceError,
    PyValueError,
    "A capture that cannot be read (the message is one line)."
);

/// Analyze the capture at `path` (pcap or pcapng, read as a stream in a worker thread);
/// return the report as JSON. `receiver` is an IPv4 address or None (inferred); times in
/// picoseconds. `progress(bytes_read)` is called about ten times a second.
#[pyfunction]
#[pyo3(signature = (path, receiver=None, rto_min=200_000_000_000, interval=1_000_000_000, rto_gap=0.8, min_flows=3, progress=None))]
#[allow(clippy::too_many_arguments)]
fn analyze_pcap(
    py: Python<'_>,
    path: &str,
    receiver: Option<&str>,
    rto_min: u64,
    interval: u64,
    rto_gap: f64,
    min_flows: u32,
    progress: Option<Py<PyAny>>,
) -> PyResult<String> {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    let receiver = match receiver {
        None => None,
        Some(r) => Some(u32::from(r.parse::<std::net::Ipv4Addr>().map_err(
            |_| {
                PyValueError::new_err(format!(
                    "--receiver: expected an IPv4 address such as 10.0.0.17, got {r:?}"
                ))
            },
        )?)),
    };
    if interval < 1_000 || rto_min < interval {
        return Err(PyValueError::new_err(
            "--interval: must be at least 1ns and no longer than --rto-min",
        ));
    }
    let opts = incast_trace::Options {
        receiver,
        rto_min_ns: rto_min / 1_000,
        rto_gap,
        interval_ns: interval / 1_000,
        min_flows,
        ..incast_trace::Options::default()
    };
    let read = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let (r2, s2, p2) = (read.clone(), stop.clone(), path.to_string());
    let handle = std::thread::spawn(move || {
        incast_trace::analyze(&p2, &opts, |bytes| {
            r2.store(bytes, Ordering::Relaxed);
            !s2.load(Ordering::Relaxed)
        })
    });
    let polled = loop {
        py.detach(|| std::thread::sleep(std::time::Duration::from_millis(100)));
        if let Err(e) = py.check_signals() {
            break Err(e);
        }
        if let Some(cb) = &progress {
            if let Err(e) = cb.call1(py, (read.load(Ordering::Relaxed),)) {
                break Err(e);
            }
        }
        if handle.is_finished() {
            break Ok(());
        }
    };
    if let Err(e) = polled {
        stop.store(true, Ordering::Relaxed);
        let _ = handle.join();
        return Err(e);
    }
    match handle.join() {
        Ok(Ok(r)) => Ok(serde_json::to_string(&r).expect("a trace report serializes")),
        Ok(Err(e)) => Err(TraceError::new_err(format!("{path}: {e}"))),
        Err(p) => Err(SimulationError::new_err(panic_message(p))),
    }
}

create_exception!(
    incastlab._core,
    MonitorError,
    PyValueError,
    "The monitor cannot watch that interface (the message is one line)."
);

/// `incast monitor`'s sampler: started on creation, drained by `poll`, ended by `stop`.
#[pyclass(name = "Monitor")]
struct PyMonitor {
    inner: Option<incast_net::monitor::Monitor>,
}

/// A batch as JSON: samples as columns, TCP counter readings, notes, and the end.
fn batch_json(b: incast_net::monitor::Batch) -> String {
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

/// The module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(serve, m)?)?;
    m.add_function(wrap_pyfunction!(shuffle_layout, m)?)?;
    m.add_function(wrap_pyfunction!(run_bench, m)?)?;
    m.add_function(wrap_pyfunction!(check_congestion, m)?)?;
    m.add_function(wrap_pyfunction!(netns_read, m)?)?;
    m.add_function(wrap_pyfunction!(host_rate_cap_bps, m)?)?;
    m.add_function(wrap_pyfunction!(nearest_rank, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(normalize, m)?)?;
    m.add_function(wrap_pyfunction!(defaults, m)?)?;
    m.add_function(wrap_pyfunction!(describe, m)?)?;
    m.add_function(wrap_pyfunction!(report_schema::report_columns, m)?)?;
    m.add_function(wrap_pyfunction!(block_split, m)?)?;
    m.add_function(wrap_pyfunction!(rto_timer, m)?)?;
    m.add_function(wrap_pyfunction!(analyze_pcap, m)?)?;
    m.add("TraceError", m.py().get_type::<TraceError>())?;
    m.add_class::<PyMonitor>()?;
    m.add_class::<PyBlockServers>()?;
    m.add_class::<PyKvCluster>()?;
    m.add_class::<PyShuffleCluster>()?;
    m.add("MonitorError", m.py().get_type::<MonitorError>())?;
    let scenario_error = m.py().get_type::<ScenarioError>();
    // Errors raised without a field (Python's own, e.g. an unreadable file) concern the whole
    // scenario; instances raised with one shadow this.
    scenario_error.setattr("field", "scenario")?;
    m.add("ScenarioError", scenario_error)?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Every request and every response of the block protocol starts with this header.
    m.add("PROTOCOL_HEADER_BYTES", incast_net::protocol::HEADER_LEN)?;
    Ok(())
}
