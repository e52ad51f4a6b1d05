//! One run of one scenario, whatever its transport: dispatches to the TCP engine (`sim`) or the
//! NDP engine (`ndp`), which share nothing but the event queue and the report.

use crate::capture::Points;
use crate::config::Scenario;
use crate::engine::SimError;
use crate::ndp::NdpSimulation;
use crate::report::Report;
use crate::sim::TcpSimulation;
use crate::units::SimTime;

/// One run of one scenario, whatever its transport.
#[derive(Debug)]
pub enum Simulation {
    /// TCP connections.
    Tcp(Box<TcpSimulation>),
    /// NDP flows.
    Ndp(Box<NdpSimulation>),
}

impl Simulation {
    /// Validate `sc` and set up the run.
    pub fn new(sc: Scenario) -> Result<Simulation, SimError> {
        Ok(match sc.transport {
            crate::config::Transport::Tcp => Simulation::Tcp(Box::new(TcpSimulation::new(sc)?)),
            crate::config::Transport::Ndp => Simulation::Ndp(Box::new(NdpSimulation::new(sc)?)),
        })
    }

    /// Run to completion.
    pub fn run(mut self) -> Result<Report, SimError> {
        while !self.step(u64::MAX)? {}
        Ok(self.report())
    }

    /// Process up to `max` events; `Ok(true)` once the workload has completed.
    pub fn step(&mut self, max: u64) -> Result<bool, SimError> {
        match self {
            Simulation::Tcp(s) => s.step(max),
            Simulation::Ndp(s) => s.step(max),
        }
    }

    /// Current simulated time.
    pub fn now(&self) -> SimTime {
        match self {
            Simulation::Tcp(s) => s.now(),
            Simulation::Ndp(s) => s.now(),
        }
    }

    /// Events processed so far.
    pub fn events_processed(&self) -> u64 {
        match self {
            Simulation::Tcp(s) => s.events_processed(),
            Simulation::Ndp(s) => s.events_processed(),
        }
    }

    /// Whether the workload has completed.
    pub fn finished(&self) -> bool {
        match self {
            Simulation::Tcp(s) => s.finished(),
            Simulation::Ndp(s) => s.finished(),
        }
    }

    /// Write a pcap of the frames seen at `points` to `path` (call before the first step).
    /// An unknown point or a file that cannot be created is a one-line error.
    pub fn capture(&mut self, path: &str, points: &Points) -> Result<(), String> {
        match self {
            Simulation::Tcp(s) => s.capture(path, points),
            Simulation::Ndp(s) => s.capture(path, points),
        }
    }

    /// Close the capture, if any: the frames written, or the write error that stopped it.
    pub fn finish_capture(&mut self) -> Option<std::io::Result<u64>> {
        match self {
            Simulation::Tcp(s) => s.finish_capture(),
            Simulation::Ndp(s) => s.finish_capture(),
        }
    }

    /// The scenario being run.
    pub fn scenario(&self) -> &Scenario {
        match self {
            Simulation::Tcp(s) => s.scenario(),
            Simulation::Ndp(s) => s.scenario(),
        }
    }

    /// Check the engine's invariants.
    pub fn check_invariants(&self) -> Result<(), String> {
        match self {
            Simulation::Tcp(s) => s.check_invariants(),
            Simulation::Ndp(s) => s.check_invariants(),
        }
    }

    /// The report of the run so far.
    pub fn report(&self) -> Report {
        match self {
            Simulation::Tcp(s) => s.report(),
            Simulation::Ndp(s) => s.report(),
        }
    }
}
