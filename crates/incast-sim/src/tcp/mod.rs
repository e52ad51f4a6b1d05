//! TCP: one connection endpoint ([`Endpoint`]) holding a send half (with its SACK scoreboard
//! and congestion control) and a receive half, and its RTT/RTO estimator.
//!
//! Read with: RFC 793 (segments always carry an ACK), RFC 5681 (slow start, congestion
//! avoidance, fast retransmit), RFC 6582 (NewReno), RFC 2018 and RFC 6675 (SACK and SACK-based
//! loss recovery), RFC 3042 (limited transmit), RFC 1122 4.2.3.2 (delayed ACKs), RFC 6298 (the
//! RTO), RFC 7661 / Linux `tcp_cwnd_validate` (cwnd grows only while it limits the sender),
//! RFC 6937 (PRR), RFC 5682 (F-RTO), RFC 8985 (RACK-TLP), RFC 9438 (CUBIC), RFC 8257 (DCTCP),
//! Cardwell et al., "BBR: Congestion-Based Congestion Control" (ACM Queue, 2016), and Hafeez
//! et al. for RTO randomization.
//!
//! - `endpoint.rs`: the two halves together and the timers' deadlines; `segment.rs`: the
//!   segments exchanged with the peer; `params.rs`: the connection's parameters.
//! - `sender/`: what to send, loss recovery (fast retransmit, NewReno, RFC 6675, PRR,
//!   timeouts, F-RTO, RACK-TLP) and the window, one concern a file (`ack`, `recovery`,
//!   `window`, `send`, `timer`); `scoreboard.rs`: its segments and their flags; `rack.rs`:
//!   RACK's clock; `rate.rs`: delivery-rate samples.
//! - `cc/`: congestion control behind one trait: Reno, CUBIC and DCTCP answer the sender's
//!   window hooks; BBR sets cwnd and the pacing rate itself from rate samples.
//! - `receiver.rs`: in-order delivery, SACK blocks, delayed ACKs, the ECN echo.
//! - `rtt.rs` and `rto_policy.rs`: the RTO and its randomization.
//! - `agent.rs`, `setup.rs`, `run_report.rs`, `packet.rs`, `capture.rs`: TCP as the engine runs
//!   it (the transport's glue: connections, timers, the segment on the wire, report, pcap);
//!   `slots.rs`: the endpoints, each made on its first use and held in its compact form
//!   (`idle.rs`) while it is idle.

mod agent;
mod capture;
mod cc;
mod endpoint;
mod idle;
mod packet;
mod params;
mod rack;
mod rate;
mod receiver;
mod rto_policy;
mod rtt;
pub(crate) mod run_report;
mod scoreboard;
mod segment;
mod sender;
mod setup;
mod slots;
#[cfg(test)]
mod testing;

pub use agent::Tcp;
pub use cc::linux_cubic_hold;
pub use endpoint::{Deadlines, Endpoint};
pub use packet::Packet;
pub use params::TcpParams;
pub use rto_policy::RtoPolicy;
pub use rtt::RttEstimator;
pub use segment::{Incoming, Segment};
pub use sender::{probe_timeout, SenderStats, TIMEOUT_RUN_BUCKETS};
