//! `incastlab._core`: the simulator, the real-network drivers and the trace reader behind a
//! thin, panic-proof Python boundary.
//!
//! Scenarios cross as JSON in base units (the Python layer turns unit strings into them; the
//! engine owns every default and rule: `defaults`, `normalize`, `describe`) and reports come
//! back as JSON. Long work runs with the GIL released and can be interrupted; a panic never
//! crosses (it becomes `SimulationError`), and errors are one line naming the key.
//!
//! - [`sim`]: the simulator and the engine's rules;
//! - [`real`]: the block server and client, the emulation's block servers, the monitor;
//! - [`mesh`]: the mesh workloads (key-value gets, shuffle) on real TCP, one `run`;
//! - [`trace`]: incast in packet captures;
//! - [`report_schema`]: the engine's report columns, for the result record;
//! - [`boundary`]: the exceptions and what keeps the boundary panic-proof.

mod boundary;
mod mesh;
mod real;
mod report_schema;
mod sim;
mod trace;

use pyo3::prelude::*;

use boundary::{MonitorError, ScenarioError, SimulationError, TraceError};
use mesh::{nearest_rank, shuffle_layout, PyKvCluster, PyMesh, PyShuffleCluster};
use real::{
    check_congestion, check_token, netns_read, run_bench, serve, PyBlockServers, PyMonitor,
};
use sim::{
    block_split, defaults, describe, host_rate_cap_bps, normalize, rto_timer, simulate, size_cdf,
    validate,
};
use trace::analyze_pcap;

// The simulator's large tables and heap on 2 MiB pages (see `incast_sim::pages`): the
// extension's own allocations only, Python's objects keep theirs.
#[global_allocator]
static ALLOC: incast_sim::pages::LargePages = incast_sim::pages::LargePages;

/// The module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(serve, m)?)?;
    m.add_function(wrap_pyfunction!(shuffle_layout, m)?)?;
    m.add_function(wrap_pyfunction!(run_bench, m)?)?;
    m.add_function(wrap_pyfunction!(check_congestion, m)?)?;
    m.add_function(wrap_pyfunction!(check_token, m)?)?;
    m.add_function(wrap_pyfunction!(netns_read, m)?)?;
    m.add_function(wrap_pyfunction!(host_rate_cap_bps, m)?)?;
    m.add_function(wrap_pyfunction!(nearest_rank, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(normalize, m)?)?;
    m.add_function(wrap_pyfunction!(defaults, m)?)?;
    m.add_function(wrap_pyfunction!(describe, m)?)?;
    m.add_function(wrap_pyfunction!(block_split, m)?)?;
    m.add_function(wrap_pyfunction!(rto_timer, m)?)?;
    m.add_function(wrap_pyfunction!(size_cdf, m)?)?;
    m.add_function(wrap_pyfunction!(analyze_pcap, m)?)?;
    m.add_function(wrap_pyfunction!(report_schema::report_columns, m)?)?;
    m.add("TraceError", m.py().get_type::<TraceError>())?;
    m.add_class::<PyMonitor>()?;
    m.add_class::<PyBlockServers>()?;
    m.add_class::<PyMesh>()?;
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
