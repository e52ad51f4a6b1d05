//! The registry of transports: which implementation of [`Transport`] runs each
//! `config::Transport`. Adding a transport is its folder (its agents and their glue to the
//! engine), one line here and its scenario section.
//!
//! [`Transport`]: crate::engine::driver::Transport

use crate::config::{bad, Scenario, Transport};
use crate::engine::driver::{Engine, Running};
use crate::engine::SimError;

/// Set up the run of `sc` with its transport.
pub(crate) fn run(sc: Scenario) -> Result<Box<dyn Running>, SimError> {
    Ok(match sc.transport {
        Transport::Tcp => Box::new(Engine::<crate::tcp::Tcp>::new(sc)?),
        Transport::Ndp => Box::new(Engine::<crate::ndp::Ndp>::new(sc)?),
        // The skeleton: its queue pairs follow in the next commit.
        Transport::Roce => {
            sc.validate()?;
            return Err(bad(
                "transport",
                "the RoCE transport's queue pairs are not built yet",
            )
            .into());
        }
    })
}
