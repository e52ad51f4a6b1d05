//! What crosses the Python boundary: the exceptions, errors of one line naming the key, no
//! panic ever (a panic becomes `SimulationError`), and long work run interruptibly off the
//! interpreter's thread.

use std::panic::{catch_unwind, AssertUnwindSafe};

use incast_sim::SimError;
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

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

create_exception!(
    incastlab._core,
    TraceError,
    PyValueError,
    "A capture that cannot be read (the message is one line)."
);

create_exception!(
    incastlab._core,
    MonitorError,
    PyValueError,
    "The monitor cannot watch that interface (the message is one line)."
);

/// A `ScenarioError` whose `.field` names the offending key (dotted path).
pub(crate) fn scenario_error(py: Python<'_>, e: &incast_sim::ConfigError) -> PyErr {
    let err = ScenarioError::new_err(e.to_string());
    // Setting an attribute on a fresh exception cannot fail short of memory exhaustion;
    // the error still carries the field in its message if it does.
    let _ = err.value(py).setattr("field", &e.field);
    err
}

pub(crate) fn to_py(py: Python<'_>, e: SimError) -> PyErr {
    match e {
        SimError::Config(c) => scenario_error(py, &c),
        other => SimulationError::new_err(other.to_string()),
    }
}

pub(crate) fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    let what = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    format!("internal simulator error (please report it with the scenario): {what}")
}

/// `f()`, with a panic turned into `SimulationError`.
pub(crate) fn unpanicked<T>(f: impl FnOnce() -> T) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| SimulationError::new_err(panic_message(p)))
}

/// `text` as a socket address, or one line naming `field` with an `example` of the form.
pub(crate) fn socket_addr(
    field: &str,
    example: &str,
    text: &str,
) -> PyResult<std::net::SocketAddr> {
    text.parse().map_err(|_| {
        let shown: String = text.chars().take(60).collect();
        PyValueError::new_err(format!(
            "{field}: expected host:port such as {example}, got {shown:?}"
        ))
    })
}

pub(crate) fn duration(name: &str, s: f64) -> PyResult<std::time::Duration> {
    std::time::Duration::try_from_secs_f64(s.max(0.001))
        .map_err(|_| PyValueError::new_err(format!("{name}: not a duration: {s}")))
}

/// Run `work` on a thread of its own while this one watches for Ctrl-C (which sets the flag
/// `work` is given, so it stops early and reports what it has); its result as JSON.
pub(crate) fn run_interruptibly<F>(py: Python<'_>, name: &str, work: F) -> PyResult<String>
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
