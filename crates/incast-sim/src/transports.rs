//! The registry of transports: which implementation of [`Transport`] runs each
//! `config::Transport`. Adding a transport is its folder (its agents and their glue to the
//! engine), one line here and its scenario section.
//!
//! [`Transport`]: crate::engine::driver::Transport

use crate::config::{Scenario, Transport};
use crate::engine::driver::{Engine, Running};
use crate::engine::SimError;

/// Set up the run of `sc` with its transport.
pub(crate) fn run(sc: Scenario) -> Result<Box<dyn Running>, SimError> {
    Ok(match sc.transport {
        Transport::Tcp => Box::new(Engine::<crate::tcp::Tcp>::new(sc)?),
        Transport::Ndp => Box::new(Engine::<crate::ndp::Ndp>::new(sc)?),
        Transport::Roce => Box::new(Engine::<crate::roce::Roce>::new(sc)?),
        Transport::Swift => Box::new(Engine::<crate::swift::Swift>::new(sc)?),
        Transport::Eqds => Box::new(Engine::<crate::eqds::Eqds>::new(sc)?),
        Transport::Homa => Box::new(Engine::<crate::homa::Homa>::new(sc)?),
    })
}
