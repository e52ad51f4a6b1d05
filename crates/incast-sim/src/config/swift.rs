//! The `swift` section: Swift's delay-based congestion control (Kumar et al., "Swift: Delay is
//! Simple and Effective for Congestion Control in the Datacenter", SIGCOMM 2020) and the
//! reliable byte stream it drives, and the rules they follow (run in the order `validate.rs`
//! lists).
//!
//! Where the paper names a constant without its value (its Algorithm 1 and §3.5 give the
//! roles of ai, β, max_mdf, the base target, h, fs_range, fs_min_cwnd, fs_max_cwnd and
//! RETX_RESET_THRESHOLD; the values Google runs are not published), the default is the one
//! Broadcom's public htsim gives its Swift (`sim/swift.cpp`, SwiftSrc's constructor), so the
//! two simulators start from the same numbers; each key says which.

use super::section::section;
use super::{bad, ConfigError, Scenario, TopologyKind, WorkloadKind, AN_HOUR};
use crate::units::*;

section! {
    /// Swift parameters (transport = "swift").
    pub struct Swift {
        /// Payload bytes per data packet. The paper fixes none; 4000 B as htsim's Swift.
        pub mtu: u64 [Size] = 4000,
        /// Bytes of a data frame beyond its payload (Ethernet, IP and the transport's
        /// header; preamble and gap are `tcp.phy_overhead`). 64 B; htsim's Swift sends none.
        pub header_bytes: u64 [Size] = 64,
        /// Bytes of an ACK frame (40 B as htsim's `SwiftAck::ACKSIZE`, 64 B here: the
        /// headers and the echoed timestamps).
        pub ack_bytes: u64 [Size] = 64,
        /// Packets a connection may send before its first ACK (htsim's default, 15).
        pub initial_window: f64 [Plain] = 15.0,
        /// Additive increment, packets per RTT while the delay is below target (Algorithm
        /// 1's `ai`; 1 packet, htsim's).
        pub ai: f64 [Plain] = 1.0,
        /// Multiplicative decrease constant: cwnd × (1 − β·(delay − target)/delay) (Algorithm
        /// 1's `β`; 0.8, htsim's).
        pub beta: f64 [Plain] = 0.8,
        /// Largest fraction of the window one decrease removes (Algorithm 1's `max_mdf`;
        /// 0.5, htsim's); also the cut on a timeout and on fast recovery.
        pub max_mdf: f64 [Plain] = 0.5,
        /// Fabric base target delay, before hop and flow scaling (§3.5; 20 µs, htsim's, who
        /// chose it to reproduce the paper's Fig. 17).
        pub base_target: SimTime [Time] = from_us(20),
        /// Topology-based scaling: target added per link of the forward path (§3.5's `h`
        /// per hop; htsim's 20 µs / 6.55 = 3.053 µs per link, which counts links as hops).
        pub per_hop: SimTime [Time] = 3_053_435,
        /// Flow-based scaling's range: the most the target grows as cwnd shrinks (§3.5's
        /// `fs_range`; 5 × base_target = 100 µs, htsim's).
        pub fs_range: SimTime [Time] = from_us(100),
        /// At or below this cwnd (packets) the flow-based term is the whole fs_range (§3.5's
        /// `fs_min_cwnd`; 0.1, htsim's).
        pub fs_min_cwnd: f64 [Plain] = 0.1,
        /// At or above this cwnd (packets) the flow-based term is 0 (§3.5's `fs_max_cwnd`;
        /// 100, htsim's).
        pub fs_max_cwnd: f64 [Plain] = 100.0,
        /// Endpoint target delay: the receiving host's processing delay (`host_delay`)
        /// above it cuts the endpoint window (§3.2's fabric/endpoint split; the paper gives
        /// no value; 20 µs here).
        pub endpoint_target: SimTime [Time] = from_us(20),
        /// The receiving host's processing delay before it sends an ACK (NIC receive to
        /// ACK transmit, as the paper's NIC timestamps measure it): the only endpoint
        /// delay the simulator has. 0 (hosts answer at once, as htsim's).
        pub host_delay: SimTime [Time] = 0,
        /// Below one packet, pace by the clock alone (true): the next packet leaves
        /// RTT/cwnd after the previous one, the gap fixed when that one left, whether or not
        /// it was acknowledged (htsim's SwiftPacer). False (the default, kept so far): the
        /// window still holds one packet in flight, so the next waits for the previous one's
        /// ACK, and the gap follows the latest window and RTT. The paper (§3.4) shifts from
        /// ACK clocking to pacing below one packet, with a timing wheel: true is its reading.
        pub timed_pacing: bool [Plain] = false,
        /// Smallest congestion window, packets (the paper's 0.001: one packet every 1000
        /// RTTs at most; htsim uses 10 bytes).
        pub min_cwnd: f64 [Plain] = 0.001,
        /// Largest congestion window, packets (htsim's 1000).
        pub max_cwnd: f64 [Plain] = 1000.0,
        /// Duplicate ACKs that trigger fast retransmit (3, as TCP's and htsim's Swift).
        pub dupthresh: u32 [Plain] = 3,
        /// Successive timeouts after which cwnd drops to min_cwnd (Algorithm 1's
        /// RETX_RESET_THRESHOLD; 5, htsim's).
        pub retx_reset_threshold: u32 [Plain] = 5,
        /// Retransmission timeout before the first RTT sample (htsim's 1 ms).
        pub rto_initial: SimTime [Time] = from_ms(1),
        /// Smallest retransmission timeout: srtt + 4·rttvar, at least this (htsim's 100 µs).
        pub rto_min: SimTime [Time] = from_us(100),
        /// Largest retransmission timeout, after backing off (doubling per timeout).
        pub rto_max: SimTime [Time] = from_ms(100),
        /// Retransmission timer randomization: each timer is armed for its timeout × (1 +
        /// rto_jitter × u), u uniform in [0, 1) drawn per arming from the endpoint's own
        /// stream. The paper (§3.6: an RTO from an EWMA of the RTT) and htsim arm exact
        /// timers: 0, the default. A simulator's timers have no noise, so flows that lose
        /// their first windows together (no RTT sample: `rto_initial` doubled alike) time
        /// out at the same picosecond ever after and their resends meet again in the same
        /// ports (the phase effect; the remedy as in Hafeez et al., "Mitigating Datacenter
        /// Incast Congestion Using RTO Randomization", IEEE GLOBECOM 2015). 0.5: each timer
        /// runs 1 to 1.5 timeouts.
        pub rto_jitter: f64 [Plain] = 0.0,
    }
}

impl Scenario {
    /// Swift's constants: each in the range the algorithm needs.
    fn validate_swift_constants(&self) -> Result<(), ConfigError> {
        let s = &self.swift;
        let fractions = [
            ("swift.beta", s.beta, 0.0, 1.0),
            ("swift.max_mdf", s.max_mdf, 0.0, 1.0),
        ];
        for (k, v, lo, hi) in fractions {
            if !(v > lo && v <= hi) {
                return Err(bad(k, format!("must be in (0, 1], got {v}")));
            }
        }
        if !(s.ai > 0.0 && s.ai <= 1000.0) {
            return Err(bad("swift.ai", "must be in (0, 1000] packets per RTT"));
        }
        if !(s.min_cwnd >= 1e-6 && s.min_cwnd <= s.max_cwnd) {
            return Err(bad(
                "swift.min_cwnd",
                "must be at least 0.000001 packets and at most swift.max_cwnd",
            ));
        }
        if !(s.max_cwnd >= 1.0 && s.max_cwnd <= 1e6) {
            return Err(bad("swift.max_cwnd", "must be 1..1000000 packets"));
        }
        if !(s.initial_window >= s.min_cwnd && s.initial_window <= s.max_cwnd) {
            return Err(bad(
                "swift.initial_window",
                "must be within swift.min_cwnd..swift.max_cwnd packets",
            ));
        }
        if !(s.fs_min_cwnd > 0.0 && s.fs_min_cwnd < s.fs_max_cwnd) {
            return Err(bad(
                "swift.fs_min_cwnd",
                "must be positive and below swift.fs_max_cwnd",
            ));
        }
        if !(0.0..=1.0).contains(&s.rto_jitter) {
            return Err(bad(
                "swift.rto_jitter",
                format!(
                    "must be in [0, 1] (a fraction of the timeout), got {}",
                    s.rto_jitter
                ),
            ));
        }
        if s.fs_max_cwnd > 1e6 {
            return Err(bad("swift.fs_max_cwnd", "must be at most 1000000 packets"));
        }
        Ok(())
    }

    /// The fabric target reaches the longest path's unloaded round trip (a full packet out,
    /// its ACK back, propagation and store-and-forward at the slower of `link` and
    /// `receiver_link`): below it, every delay sample is over target and the window only
    /// shrinks, to min_cwnd. The paper's targets assume µs-scale datacenter paths; a 2009-style
    /// 100 µs cluster needs a larger base target. (A described topology's links vary: not
    /// checked.)
    fn validate_swift_target(&self) -> Result<(), ConfigError> {
        let (s, t) = (&self.swift, &self.topology);
        let hops: u64 = match t.kind {
            TopologyKind::Star => 2,
            TopologyKind::LeafSpine => 4,
            TopologyKind::FatTree => 6,
            TopologyKind::File => return Ok(()),
        };
        let rate = t.link.min(t.receiver_link).max(1);
        let frame = s.mtu + s.header_bytes + self.tcp.phy_overhead;
        let ack = s.ack_bytes + self.tcp.phy_overhead;
        let rtt = 2 * hops * self.link_delay() + hops * (tx_time(frame, rate) + tx_time(ack, rate));
        let most = s.base_target + hops * s.per_hop + s.fs_range;
        if rtt >= most {
            let us = |v: SimTime| v as f64 / PS_PER_US as f64;
            return Err(bad(
                "swift.base_target",
                format!(
                    "the fabric target reaches at most {:.1} µs (base_target + {hops} hops × per_hop + fs_range) but a full packet's unloaded round trip here is {:.1} µs, so Swift's window would only shrink: raise swift.base_target above {:.1} µs ({:.1} µs for windows of fs_max_cwnd packets too), or use datacenter links (e.g. --link 100Gbps --rtt 10us)",
                    us(most),
                    us(rtt),
                    us(rtt.saturating_sub(hops * s.per_hop + s.fs_range)),
                    us(rtt.saturating_sub(hops * s.per_hop)),
                ),
            ));
        }
        Ok(())
    }

    /// Swift runs the incast and synchronized-read workloads over drop-tail ports, with
    /// sizes, constants and timers in range.
    pub(super) fn validate_swift(&self) -> Result<(), ConfigError> {
        let s = &self.swift;
        if !matches!(
            self.workload.kind,
            WorkloadKind::Incast | WorkloadKind::SyncRead
        ) {
            return Err(bad(
                "workload.kind",
                "Swift runs the incast and sync_read workloads; set workload.kind = \"incast\" or \"sync_read\"",
            ));
        }
        if self.background.flows > 0 {
            return Err(bad(
                "background.flows",
                "background flows are TCP; Swift runs without them",
            ));
        }
        if self.topology.pfc {
            return Err(bad(
                "topology.pfc",
                "Swift runs over lossy drop-tail ports; set topology.pfc = false",
            ));
        }
        if s.mtu < 64 || s.mtu > 65_000 {
            return Err(bad(
                "swift.mtu",
                format!("must be 64..65000 bytes, got {}", s.mtu),
            ));
        }
        if s.header_bytes > 1000 {
            return Err(bad("swift.header_bytes", "must be at most 1000 bytes"));
        }
        if s.ack_bytes == 0 || s.ack_bytes > 1000 {
            return Err(bad("swift.ack_bytes", "must be 1..1000 bytes"));
        }
        self.validate_swift_constants()?;
        for (k, v) in [
            ("swift.base_target", s.base_target),
            ("swift.endpoint_target", s.endpoint_target),
            ("swift.rto_initial", s.rto_initial),
            ("swift.rto_min", s.rto_min),
            ("swift.rto_max", s.rto_max),
        ] {
            if v == 0 || v > AN_HOUR {
                return Err(bad(k, "must be positive and at most an hour"));
            }
        }
        for (k, v) in [
            ("swift.per_hop", s.per_hop),
            ("swift.fs_range", s.fs_range),
            ("swift.host_delay", s.host_delay),
        ] {
            if v > AN_HOUR {
                return Err(bad(k, "must be at most an hour"));
            }
        }
        self.validate_swift_target()?;
        if s.rto_min > s.rto_max {
            return Err(bad("swift.rto_min", "must be at most swift.rto_max"));
        }
        if s.dupthresh == 0 || s.dupthresh > 1000 {
            return Err(bad("swift.dupthresh", "must be 1..1000 duplicate ACKs"));
        }
        if s.retx_reset_threshold == 0 || s.retx_reset_threshold > 1000 {
            return Err(bad(
                "swift.retx_reset_threshold",
                "must be 1..1000 timeouts",
            ));
        }
        Ok(())
    }
}
