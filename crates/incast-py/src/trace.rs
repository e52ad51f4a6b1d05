//! Packet traces: find incast in a capture.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::boundary::{panic_message, SimulationError, TraceError};

/// Analyze the capture at `path` (pcap or pcapng, read as a stream in a worker thread);
/// return the report as JSON. `receiver` is an IPv4 address or None (inferred); times in
/// picoseconds. `progress(bytes_read)` is called about ten times a second.
#[pyfunction]
#[pyo3(signature = (path, receiver=None, rto_min=200_000_000_000, interval=1_000_000_000, rto_gap=0.8, min_flows=3, progress=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn analyze_pcap(
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
