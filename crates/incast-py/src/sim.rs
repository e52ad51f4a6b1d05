//! The simulator: run a scenario, normalize and describe scenarios, and the rules the Python
//! side asks of the engine instead of repeating them.

use std::panic::{catch_unwind, AssertUnwindSafe};

use incast_sim::capture::Points;
use incast_sim::tcp::{linux_cubic_hold, probe_timeout, RttEstimator};
use incast_sim::Simulation;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::boundary::{panic_message, scenario_error, to_py, ScenarioError, SimulationError};

/// Run the scenario given as normalized JSON; return the report as JSON.
///
/// `progress`, if given, is called between slices with (events, simulated seconds). With
/// `pcap`, the frames seen at `pcap_at` (default: the receiver) are written there as a pcap.
#[pyfunction]
#[pyo3(signature = (scenario_json, progress=None, slice_events=2_000_000, pcap=None, pcap_at=None))]
pub(crate) fn simulate(
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
pub(crate) fn normalize(py: Python<'_>, scenario_json: &str) -> PyResult<String> {
    catch_unwind(|| incast_sim::Scenario::from_json(scenario_json))
        .map_err(|p| SimulationError::new_err(panic_message(p)))?
        .map(|s| s.to_json())
        .map_err(|e| scenario_error(py, &e))
}

/// Check a scenario without running it (`normalize` without the result).
#[pyfunction]
pub(crate) fn validate(py: Python<'_>, scenario_json: &str) -> PyResult<()> {
    normalize(py, scenario_json).map(|_| ())
}

/// The default scenario, normalized, as JSON.
#[pyfunction]
pub(crate) fn defaults() -> String {
    incast_sim::Scenario::default().to_json()
}

/// Every key of every section as JSON: `{key: {unit, doc, default, schema[, keys]}}`, where
/// `unit` says how users write it (plain, size, rate, time, time_or_off, limit, cdf, section).
#[pyfunction]
pub(crate) fn describe() -> String {
    incast_sim::Scenario::describe()
}

/// The timers a connection of the scenario (JSON, base units) runs, as the simulator has
/// them, in picoseconds: `rto_min` in whole timer ticks; the `rto` and the tail loss `probe`
/// timeout (several segments out) it settles on at the base RTT (`topology.rtt`), and
/// `probe_lone`, the probe timeout with one segment out (RTOmin for a delayed ACK instead of
/// 2 ms), capped at the RTO as the sender caps it; the RTO a
/// connection starts its first block with, `rto_handshake`, after the handshake's sample
/// alone; the timer `tick`; Linux's cap on the delayed-ACK timer, `delack_max`; and
/// `rto_queued`, the RTO once `samples` round trips have seen a queue build from nothing to
/// `queue` picoseconds of delay (a port filling before its drops: the estimator follows it);
/// and `cubic_hold`, the mean time Linux's CUBIC on this clock holds a window a loss cut.
/// The analytical model reads these instead of repeating the simulator's rules.
#[pyfunction]
#[pyo3(signature = (scenario_json, queue = 0, samples = 0))]
pub(crate) fn rto_timer(
    py: Python<'_>,
    scenario_json: &str,
    queue: u64,
    samples: u32,
) -> PyResult<std::collections::HashMap<&'static str, u64>> {
    let sc = catch_unwind(|| incast_sim::Scenario::from_json(scenario_json))
        .map_err(|p| SimulationError::new_err(panic_message(p)))?
        .map_err(|e| scenario_error(py, &e))?;
    let est = RttEstimator::settled(&sc.tcp, sc.topology.rtt);
    let mut first = RttEstimator::for_tcp(&sc.tcp);
    first.sample_at(first.measure(0, sc.topology.rtt), 0, 0);
    let queued = est.clone().after_ramp(sc.topology.rtt, queue, samples);
    Ok(std::collections::HashMap::from([
        ("rto_queued", queued.ticks(queued.rto(0))),
        ("rto_min", est.rto_min()),
        ("rto", est.ticks(est.rto(0))),
        ("rto_handshake", first.ticks(first.rto(0))),
        ("probe", probe_timeout(&est, false)),
        (
            "probe_lone",
            probe_timeout(&est, true).min(est.ticks(est.rto(0))),
        ),
        ("tick", est.tick()),
        ("delack_max", est.delack_max()),
        ("cubic_hold", linux_cubic_hold(est.tick())),
    ]))
}

/// The bytes each of `n` servers returns of a `block` striped over them (the one split rule).
#[pyfunction]
pub(crate) fn block_split(block: u64, n: u32) -> PyResult<Vec<u64>> {
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

/// The rate (bits per second) `topology.host_rate_cap` of a normalized scenario leaves a
/// host NIC of `link_bps`, or None without a cap: the simulator's rule, for the emulator's
/// shapers.
#[pyfunction]
pub(crate) fn host_rate_cap_bps(
    py: Python<'_>,
    scenario_json: &str,
    link_bps: u64,
) -> PyResult<Option<u64>> {
    let sc = incast_sim::Scenario::from_json_unchecked(scenario_json)
        .map_err(|e| scenario_error(py, &e))?;
    Ok(sc.topology.host_rate_cap.map(|c| c.of(link_bps)))
}

/// The (bytes, probability) points of a CDF of sizes, read by the one parser of
/// `incast_workload::cdf` (units, percentages, the rules of order and range): `source` is a
/// file's text (an error names the line) or a list of (size, probability) pairs written as
/// text (an error names the point). `ValueError` with one line otherwise.
#[pyfunction]
pub(crate) fn size_cdf(source: &Bound<'_, PyAny>) -> PyResult<Vec<(u64, f64)>> {
    use incast_workload::cdf::Cdf;
    let cdf = if let Ok(text) = source.extract::<String>() {
        Cdf::parse(&text)
    } else {
        let fields: Vec<(String, String)> = source.extract().map_err(|_| {
            PyValueError::new_err("expected a CDF file's text or (size, probability) pairs")
        })?;
        Cdf::from_fields(&fields)
    };
    cdf.map(|c| c.points().to_vec())
        .map_err(|e| PyValueError::new_err(e.to_string()))
}
