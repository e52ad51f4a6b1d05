//! One run of one scenario, whatever its transport (chosen in [`crate::transports`]).

use crate::capture::Points;
use crate::config::Scenario;
use crate::engine::driver::Running;
use crate::engine::SimError;
use crate::report::Report;
use crate::units::SimTime;

/// One run of one scenario, whatever its transport.
#[derive(Debug)]
pub struct Simulation(Box<dyn Running>);

impl Simulation {
    /// Validate `sc` and set up the run.
    pub fn new(sc: Scenario) -> Result<Simulation, SimError> {
        crate::transports::run(sc).map(Simulation)
    }

    /// Run to completion.
    pub fn run(mut self) -> Result<Report, SimError> {
        while !self.step(u64::MAX)? {}
        Ok(self.report())
    }

    /// Process up to `max` events; `Ok(true)` once the workload has completed. Lets a caller
    /// run in slices (to show progress or to honour Ctrl-C between them).
    pub fn step(&mut self, max: u64) -> Result<bool, SimError> {
        self.0.step(max)
    }

    /// Current simulated time.
    pub fn now(&self) -> SimTime {
        self.0.now()
    }

    /// Events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.0.events_processed()
    }

    /// Whether the workload has completed.
    pub fn finished(&self) -> bool {
        self.0.finished()
    }

    /// Write a pcap of the frames seen at `points` to `path` (call before the first step).
    /// An unknown point or a file that cannot be created is a one-line error.
    pub fn capture(&mut self, path: &str, points: &Points) -> Result<(), String> {
        self.0.capture(path, points)
    }

    /// Close the capture, if any: the frames written, or the write error that stopped it.
    pub fn finish_capture(&mut self) -> Option<std::io::Result<u64>> {
        self.0.finish_capture()
    }

    /// The scenario being run.
    pub fn scenario(&self) -> &Scenario {
        self.0.scenario()
    }

    /// Check the engine's invariants.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.0.check_invariants()
    }

    /// The report of the run so far.
    pub fn report(&self) -> Report {
        self.0.report()
    }
}
