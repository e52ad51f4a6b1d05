//! TCP: one connection endpoint ([`Endpoint`]) holding a send half and a receive half, and its
//! RTT/RTO estimator.
//!
//! Read with: RFC 793 (segments always carry an ACK), RFC 5681 (slow start, congestion
//! avoidance, fast retransmit), RFC 6582 (NewReno), RFC 2018 and RFC 6675 (SACK and SACK-based
//! loss recovery), RFC 3042 (limited transmit), RFC 1122 4.2.3.2 (delayed ACKs), RFC 6298 (the
//! RTO), RFC 7661 / Linux `tcp_cwnd_validate` (cwnd grows only while it limits the sender),
//! RFC 6937 (PRR), RFC 5682 (F-RTO), RFC 9438 (CUBIC), RFC 8257 (DCTCP), and Hafeez et al.
//! for RTO randomization.

mod cubic;
mod endpoint;
mod rto_policy;
mod rtt;

pub use endpoint::{Endpoint, Incoming, Segment, SenderStats, TcpParams, TIMEOUT_RUN_BUCKETS};
pub use rto_policy::RtoPolicy;
pub use rtt::RttEstimator;
