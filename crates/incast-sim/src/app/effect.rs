//! What an application asks of the engine ([`Effect`]) and its own timers ([`Token`]): apart
//! from the [`super::App`] trait so that the workloads' own modules and the engine's event
//! enum use them without importing the report.

use crate::ids::EndpointId;
use crate::units::SimTime;

/// An application's own timer event, opaque to the engine: a kind and an argument (a
/// connection, a host) that only the application that scheduled it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// What is due (the application's own numbering).
    pub kind: u32,
    /// Of what.
    pub arg: u32,
}

/// What an application asks the engine to do, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Endpoint `ep` writes `bytes` into its connection.
    Write {
        /// Endpoint.
        ep: EndpointId,
        /// Bytes written.
        bytes: u64,
    },
    /// Call [`super::App::wake`] with `token` at `at`.
    Wake {
        /// When.
        at: SimTime,
        /// What.
        token: Token,
    },
    /// Call [`super::App::fill`] with `slot` now, with a view of the connections: the application
    /// writes what their send buffers have room for.
    Fill {
        /// The application's own numbering (a host, a server).
        slot: u32,
    },
    /// The workload is complete.
    Finished,
}

impl Effect {
    /// A server's answer on `ep`: its application header (if any) in a write of its own, then
    /// `bytes` of data. Every request/response workload answers this way.
    pub(crate) fn push_response(out: &mut Vec<Effect>, ep: EndpointId, header: u64, bytes: u64) {
        if header > 0 {
            out.push(Effect::Write { ep, bytes: header });
        }
        out.push(Effect::Write { ep, bytes });
    }
}
