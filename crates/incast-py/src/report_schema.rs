//! The report's columns, for the result record: the engine's descriptor of the figures a
//! stored result carries, as the scenario's keys are `describe`'s.

use pyo3::prelude::*;

/// Every headline column the engine's report fills, in record order, as JSON: a list of
/// `{name, kind, unit, doc, scope, path, op, simulated, optional}`; `path` is where the value
/// sits in a report (`a.b`, `list[].field`), `op` an aggregate over it or, without a path, a
/// computation the record makes (see `incast_sim::report_columns`).
#[pyfunction]
pub fn report_columns() -> String {
    incast_sim::report_columns::json()
}
