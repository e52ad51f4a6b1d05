//! Small figures every report derives alike, apart from the report types so that a workload's
//! report and the run's report can both use them without importing each other.

use crate::units::SimTime;

/// Share of `duration` a queue spent serializing (`busy`), at most 1.
pub fn utilization(busy: SimTime, duration: SimTime) -> f64 {
    if duration > 0 {
        (busy as f64 / duration as f64).min(1.0)
    } else {
        0.0
    }
}
