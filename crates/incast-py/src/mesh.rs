//! The mesh workloads on real TCP between hosts in namespaces (`incast emulate` with
//! `workload.kind = "kv_gets"` or `"shuffle"`), exposed once: `Mesh.run` runs any of them;
//! `KvCluster` and `ShuffleCluster` only build theirs from a normalized scenario (the plan the
//! simulator draws for the same scenario and seed) and connect it on creation.

use std::io;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use incast_net::mesh::{Mesh, MeshHost, Workload};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use serde::Serialize;

use crate::boundary::{duration, run_interruptibly, scenario_error, socket_addr, unpanicked};

/// A connected mesh's run, once: from a start, for a time limit, until a stop request; its
/// result as JSON.
type Runner = Box<dyn FnOnce(Instant, Duration, &AtomicBool) -> io::Result<String> + Send>;

/// A workload's hosts, connected and ready to run once.
#[pyclass(subclass, name = "Mesh", module = "incastlab._core")]
pub(crate) struct PyMesh {
    runner: Mutex<Option<Runner>>,
}

impl PyMesh {
    /// Connect (with the GIL released, and no panic crossing) and hold the run.
    fn connect<W>(
        py: Python<'_>,
        connect: impl FnOnce() -> io::Result<Mesh<W>> + Send,
    ) -> PyResult<PyMesh>
    where
        W: Workload + Send + 'static,
        W::Result: Serialize,
    {
        let mesh = py
            .detach(|| unpanicked(connect))?
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let runner: Runner = Box::new(move |start, limit, stop| {
            let r = mesh.run(start, limit, stop)?;
            serde_json::to_string(&r).map_err(io::Error::other)
        });
        Ok(PyMesh {
            runner: Mutex::new(Some(runner)),
        })
    }
}

#[pymethods]
impl PyMesh {
    /// Run from `start_monotonic_ns` (Python's `time.monotonic_ns()` clock) on, at most
    /// `time_limit_s` past the last planned arrival (the start, for a shuffle); the result as
    /// JSON. Once only.
    fn run(&self, py: Python<'_>, start_monotonic_ns: u64, time_limit_s: f64) -> PyResult<String> {
        let runner = self.runner.lock().ok().and_then(|mut r| r.take());
        let Some(runner) = runner else {
            return Err(PyRuntimeError::new_err("this mesh has run already"));
        };
        let limit = duration("time_limit_s", time_limit_s)?;
        let start = incast_net::mesh::instant_at_monotonic_ns(start_monotonic_ns);
        run_interruptibly(py, "mesh", move |stop| runner(start, limit, stop))
    }
}

/// `hosts` (`(namespace, "ip:port")` per host) as the hosts of scenario `sc`'s mesh.
fn mesh_hosts(
    sc: &incast_sim::Scenario,
    hosts: Vec<(Option<String>, String)>,
) -> PyResult<Vec<MeshHost>> {
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
            Ok(MeshHost { netns, addr })
        })
        .collect()
}

/// The normalized scenario of `scenario_json`, no panic crossing.
fn scenario(py: Python<'_>, scenario_json: &str) -> PyResult<incast_sim::Scenario> {
    unpanicked(|| incast_sim::Scenario::from_json(scenario_json))?
        .map_err(|e| scenario_error(py, &e))
}

/// The key-value store's gets: every host listening in its namespace and connected to every
/// other; `run` issues the gets the simulator draws (`incast_sim::kv::plan`).
#[pyclass(extends = PyMesh, name = "KvCluster", module = "incastlab._core")]
pub(crate) struct PyKvCluster {
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
    ) -> PyResult<(Self, PyMesh)> {
        use incast_net::kv::{KvCluster, KvConfig, KvGet};
        let sc = scenario(py, scenario_json)?;
        let hosts = mesh_hosts(&sc, hosts)?;
        if sc.workload.kv_put_fraction > 0.0 {
            return Err(PyValueError::new_err(
                "workload.kv_put_fraction: puts are not emulated yet (allowed: 0)",
            ));
        }
        let ps_per_us = 1_000_000;
        let gets: Vec<KvGet> = unpanicked(|| incast_sim::kv::plan(&sc))?
            .into_iter()
            .map(|g| KvGet {
                host: g.host,
                at_us: g.at / ps_per_us,
                size: g.size,
                replicas: g.replicas,
            })
            .collect();
        let (n, rate, quorum) = (gets.len(), sc.kv_gets_per_s(), sc.kv_quorum());
        let cfg = KvConfig {
            hosts,
            gets,
            quorum,
            warmup_us: sc.workload.kv_warmup / ps_per_us,
            congestion,
            connect_timeout_s,
        };
        let mesh = PyMesh::connect(py, || KvCluster::connect(cfg))?;
        let kv = PyKvCluster {
            gets: n,
            rate,
            quorum,
        };
        Ok((kv, mesh))
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
}

/// A MapReduce shuffle: the simulator's shuffle (`workload.kind = "shuffle"`) for the same
/// scenario and seed, fetch for fetch.
#[pyclass(extends = PyMesh, name = "ShuffleCluster", module = "incastlab._core")]
pub(crate) struct PyShuffleCluster;

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
    ) -> PyResult<(Self, PyMesh)> {
        use incast_net::shuffle::{ShuffleCluster, ShuffleConfig};
        let sc = scenario(py, scenario_json)?;
        let hosts = mesh_hosts(&sc, hosts)?;
        let layout = incast_sim::shuffle::layout(&sc);
        let cfg = ShuffleConfig {
            hosts,
            map_hosts: layout.map_hosts,
            reducers: layout.reducers,
            reducer_hosts: layout.reducer_hosts,
            outputs: sc.workload.blocks,
            output_bytes: sc.workload.sru.unwrap_or(0),
            window: sc.shuffle_window(),
            order: unpanicked(|| incast_sim::shuffle::fetch_orders(&sc))?,
            congestion,
            connect_timeout_s,
        };
        let mesh = PyMesh::connect(py, || ShuffleCluster::connect(cfg))?;
        Ok((PyShuffleCluster, mesh))
    }
}

/// A shuffle's layout as both backends take it (`workload.kind = "shuffle"`): reducers,
/// hosts running them, map hosts, the copier window, the connections it opens and the most
/// that wait at one map host, the most the emulator accepts there (its listen backlog), and
/// the largest map output it serves.
#[pyfunction]
pub(crate) fn shuffle_layout(py: Python<'_>, scenario_json: &str) -> PyResult<String> {
    let sc = scenario(py, scenario_json)?;
    let layout = incast_sim::shuffle::layout(&sc);
    let (connections, most) = layout.connections();
    Ok(serde_json::json!({
        "reducers": layout.reducers,
        "reducer_hosts": layout.reducer_hosts,
        "map_hosts": layout.map_hosts,
        "window": sc.shuffle_window(),
        "connections": connections,
        "most_per_map_host": most,
        "max_per_map_host": incast_net::shuffle::MAX_PER_LISTENER,
        "max_output": incast_net::mesh::MAX_VALUE,
    })
    .to_string())
}

/// The `q`-quantile of sorted `values` by nearest rank (0 if empty): the rule of the key-value
/// store's latencies, simulated or emulated.
#[pyfunction]
pub(crate) fn nearest_rank(values: Vec<u64>, q: f64) -> PyResult<u64> {
    if !(0.0..=1.0).contains(&q) {
        return Err(PyValueError::new_err(format!(
            "q: a share from 0 to 1, got {q}"
        )));
    }
    Ok(incast_workload::kv::nearest_rank(&values, q))
}
