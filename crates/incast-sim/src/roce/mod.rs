//! RoCEv2: RDMA queue pairs over UDP/IP, as RDMA NICs run them over lossless (PFC) or lossy
//! Ethernet: line-rate start, a per-queue-pair rate limiter, packet sequence numbers, ACKs,
//! NAKs and go-back-N (or IRN's selective repeat), a retransmission timer, and the congestion
//! control the NIC runs ([`cc`]: none, DCQCN or HPCC).

pub mod cc;
pub mod dcqcn;
pub mod hpcc;
