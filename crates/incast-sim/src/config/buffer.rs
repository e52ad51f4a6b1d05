//! The rules of the `topology` keys of switch buffers as RDMA fabrics build them: PFC over a
//! buffer per ingress or over each switch's shared buffer, its headroom, and ECN marking on
//! egress. The keys themselves are the `topology` section's (`topology.rs`).

use super::{bad, ConfigError, Scenario, TopologyKind, Transport};
use crate::units::{SimTime, PS_PER_S};

/// What still arrives over a link of `rate` bits per second and `delay` after its far end
/// decides to pause it: the pause frame waits for the frame on the wire towards the sender,
/// crosses the link, and meanwhile the sender keeps sending and finishes its frame in service
/// (`frame`: a full frame on the wire).
pub fn derived_headroom(rate: u64, delay: SimTime, frame: u64) -> u64 {
    let in_flight = (2 * delay as u128 * rate as u128 / 8 / PS_PER_S as u128) as u64;
    in_flight + 2 * frame
}

impl Scenario {
    /// A full frame on the wire (frame and physical overhead), bytes.
    fn wire_frame(&self) -> u64 {
        self.full_frame().saturating_add(self.tcp.phy_overhead)
    }

    /// PFC's headroom of an ingress over a link of `rate` and `delay`: `topology.pfc_headroom`
    /// or derived.
    pub fn pfc_headroom_of(&self, rate: u64, delay: SimTime) -> u64 {
        self.topology
            .pfc_headroom
            .unwrap_or_else(|| derived_headroom(rate, delay, self.wire_frame()))
    }

    /// PFC's (XOFF, XON) per ingress in bytes for switches with a buffer per ingress,
    /// defaults derived; `None` without PFC or without a byte limit per port.
    pub fn pfc_thresholds(&self) -> Option<(u64, u64)> {
        let t = &self.topology;
        if !t.pfc {
            return None;
        }
        let buffer = t.buffer.bytes?;
        let rate = t.link.max(t.receiver_link);
        // The longest one-way delay of a link (a star's is a quarter of the RTT, as before).
        let headroom = self.pfc_headroom_of(rate, self.link_delay().max(t.fabric_delay));
        Some(self.pfc_own_thresholds(buffer, headroom))
    }

    /// PFC's (XOFF, XON) of an ingress with a buffer of its own of `buffer` bytes and
    /// `headroom`: `topology.pfc_xoff` or what the headroom leaves, `topology.pfc_xon` or two
    /// full frames below XOFF.
    pub fn pfc_own_thresholds(&self, buffer: u64, headroom: u64) -> (u64, u64) {
        let t = &self.topology;
        let xoff = t.pfc_xoff.unwrap_or(buffer.saturating_sub(headroom));
        let xon = t
            .pfc_xon
            .unwrap_or(xoff.saturating_sub(2 * self.wire_frame()));
        (xoff, xon)
    }

    /// The XON offset below the dynamic threshold: `topology.pfc_xon_offset` or two full
    /// frames.
    pub fn pfc_xon_offset(&self) -> u64 {
        let t = &self.topology;
        t.pfc_xon_offset.unwrap_or(2 * self.wire_frame())
    }

    /// The most ingresses one switch of the shape has, and the largest headroom one of them
    /// takes: what a switch's shared buffer must hold beside its pool.
    fn most_headroom_of_a_switch(&self) -> (u64, u64) {
        let t = &self.topology;
        let hosts = crate::topology::host_count(self) as u64;
        let uplink = if t.uplink > 0 { t.uplink } else { t.link };
        let rate = t.link.max(t.receiver_link).max(uplink);
        let delay = if t.fabric_delay > 0 {
            t.fabric_delay.max(self.link_delay())
        } else {
            self.link_delay()
        };
        let ports = match t.kind {
            TopologyKind::Star | TopologyKind::File => hosts,
            TopologyKind::LeafSpine => {
                let per_leaf = t.hosts_per_leaf as u64;
                let spines = if t.spines == 0 {
                    per_leaf
                } else {
                    t.spines as u64
                };
                (per_leaf + spines).max(hosts.div_ceil(per_leaf))
            }
            TopologyKind::FatTree => self.fat_tree_k() as u64,
        };
        (ports, self.pfc_headroom_of(rate, delay))
    }

    /// PFC: lossless (RED may only mark), with a buffer per ingress (no receiver buffer of
    /// its own) or each switch's shared buffer, thresholds within what the buffer holds.
    pub(super) fn validate_pfc(&self) -> Result<(), ConfigError> {
        let t = &self.topology;
        if t.receiver_buffer.is_some() {
            return Err(bad(
                "topology.receiver_buffer",
                "under PFC a port is bounded by the ingresses feeding it; leave it unset",
            ));
        }
        if t.red_min.is_some() && !t.red_ecn {
            return Err(bad(
                "topology.red_ecn",
                "PFC is lossless, so RED may only mark: set topology.red_ecn = true",
            ));
        }
        let frame = self.full_frame();
        if t.pfc_headroom.is_some_and(|h| h < frame) {
            return Err(bad(
                "topology.pfc_headroom",
                format!("must hold at least one full frame ({frame} bytes)"),
            ));
        }
        match t.shared_buffer {
            _ if t.kind == TopologyKind::File => self.validate_pfc_file(),
            Some(total) => self.validate_pfc_shared(total),
            None => self.validate_pfc_own(),
        }
    }

    /// PFC over a buffer per ingress: XOFF and XON within `topology.buffer`.
    fn validate_pfc_own(&self) -> Result<(), ConfigError> {
        let t = &self.topology;
        let frame = self.full_frame();
        let Some(buffer) = t.buffer.bytes else {
            return Err(bad(
                "topology.buffer",
                "PFC needs a byte limit per port (e.g. \"64KB\"): it is the buffer of each ingress (or give topology.shared_buffer)",
            ));
        };
        for (field, set) in [
            ("topology.pfc_xon_offset", t.pfc_xon_offset.is_some()),
            ("topology.pfc_alpha", t.pfc_alpha != 0.125),
        ] {
            if set {
                return Err(bad(
                    field,
                    "applies to PFC over a shared buffer (topology.shared_buffer); with a buffer per ingress give topology.pfc_xoff and topology.pfc_xon",
                ));
            }
        }
        if let Some(h) = t.pfc_headroom.filter(|&h| h >= buffer) {
            return Err(bad(
                "topology.pfc_headroom",
                format!("{h} bytes leave nothing of topology.buffer ({buffer} bytes) below XOFF"),
            ));
        }
        let (xoff, xon) = self.pfc_thresholds().expect("pfc with a byte buffer");
        if t.pfc_xoff.is_none() && xoff < frame {
            return Err(bad(
                "topology.buffer",
                format!(
                    "{buffer} bytes leave no room for PFC's headroom (two one-way delays at the link rate plus two frames); raise it or set topology.pfc_xoff"
                ),
            ));
        }
        if xoff < frame || xoff > buffer {
            return Err(bad(
                "topology.pfc_xoff",
                format!("must be between one full frame ({frame} bytes) and topology.buffer ({buffer} bytes), got {xoff}"),
            ));
        }
        if xon > xoff {
            return Err(bad(
                "topology.pfc_xon",
                format!("XON ({xon} bytes) must be at or below XOFF ({xoff} bytes)"),
            ));
        }
        Ok(())
    }

    /// PFC over each switch's shared buffer of `total` bytes: the headrooms leave a pool of
    /// at least a full frame, a static XOFF fits in it, α is sensible.
    fn validate_pfc_shared(&self, total: u64) -> Result<(), ConfigError> {
        let frame = self.full_frame();
        let (ports, headroom) = self.most_headroom_of_a_switch();
        let carved = ports.saturating_mul(headroom);
        if carved.saturating_add(frame) > total {
            return Err(bad(
                "topology.pfc_headroom",
                format!(
                    "{ports} ingresses × {headroom} bytes of headroom leave no pool in topology.shared_buffer ({total} bytes); lower the headroom or raise the buffer"
                ),
            ));
        }
        self.validate_pfc_pool(total - carved)
    }

    /// PFC over a shared pool of `pool` bytes (what the headrooms leave of the switch's
    /// buffer): a static XOFF fits in it, XON with it, α is sensible.
    pub(super) fn validate_pfc_pool(&self, pool: u64) -> Result<(), ConfigError> {
        let t = &self.topology;
        let frame = self.full_frame();
        if let Some(xoff) = t.pfc_xoff {
            if xoff < frame || xoff > pool {
                return Err(bad(
                    "topology.pfc_xoff",
                    format!("must be between one full frame ({frame} bytes) and the pool the headrooms leave of topology.shared_buffer ({pool} bytes), got {xoff}"),
                ));
            }
            if t.pfc_xon.is_some_and(|xon| xon > xoff) {
                return Err(bad(
                    "topology.pfc_xon",
                    format!("XON must be at or below XOFF ({xoff} bytes)"),
                ));
            }
        } else if t.pfc_xon.is_some() {
            return Err(bad(
                "topology.pfc_xon",
                "with the dynamic threshold (no topology.pfc_xoff) XON follows it: set topology.pfc_xon_offset",
            ));
        }
        if !(t.pfc_alpha > 0.0 && t.pfc_alpha <= 64.0) {
            return Err(bad(
                "topology.pfc_alpha",
                format!("must be in (0, 64], got {}", t.pfc_alpha),
            ));
        }
        Ok(())
    }

    /// Egress ECN marking: Kmin below Kmax, a probability in (0, 1], not beside RED; it and
    /// INT act at drop-tail egresses, which NDP's trimming switches do not have.
    pub(super) fn validate_ecn_marking(&self) -> Result<(), ConfigError> {
        let t = &self.topology;
        let trims = self.transport == Transport::Eqds && self.eqds.trimming;
        if self.transport == Transport::Ndp || trims {
            for (field, set) in [
                ("topology.int", t.int),
                ("topology.ecn_kmin", t.ecn_kmin.is_some()),
                ("topology.fabric_report", t.fabric_report),
            ] {
                if set {
                    return Err(bad(
                        field,
                        "acts at drop-tail switch egresses (and reports them), and NDP's switches trim instead; unset it with transport = \"ndp\"",
                    ));
                }
            }
        }
        if t.int_qlen_with_packet && !t.int {
            return Err(bad(
                "topology.int_qlen_with_packet",
                "says how INT counts the queue: set topology.int = true, or leave it unset",
            ));
        }
        let Some(kmin) = t.ecn_kmin else {
            return Ok(());
        };
        if kmin >= t.ecn_kmax {
            return Err(bad(
                "topology.ecn_kmin",
                format!(
                    "{kmin} bytes must be below topology.ecn_kmax ({} bytes)",
                    t.ecn_kmax
                ),
            ));
        }
        if !(t.ecn_pmax > 0.0 && t.ecn_pmax <= 1.0) {
            return Err(bad("topology.ecn_pmax", "must be in (0, 1]"));
        }
        if t.red_min.is_some() || t.ecn_threshold != crate::config::QueueLimit::UNLIMITED {
            return Err(bad(
                "topology.ecn_kmin",
                "a port marks on egress (ecn_kmin), or on arrival by RED (red_min) or DCTCP's threshold (ecn_threshold), not two of them",
            ));
        }
        Ok(())
    }

    /// Whether the report carries the fabric's section: when asked, and always on an RDMA
    /// fabric's terms (PFC over a shared buffer, egress marking, INT, or RoCE over PFC: its
    /// pauses and victim flows are what a lossless run is about).
    pub fn reports_fabric(&self) -> bool {
        let t = &self.topology;
        t.fabric_report
            || (t.pfc && (t.shared_buffer.is_some() || self.transport == Transport::Roce))
            || t.ecn_kmin.is_some()
            || t.int
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::QueueLimit;
    use crate::units::from_us;

    fn shared_pfc(kind: TopologyKind) -> Scenario {
        let mut s = Scenario::example(8);
        s.topology.kind = kind;
        s.topology.hosts_per_leaf = 4;
        s.topology.pfc = true;
        s.topology.shared_buffer = Some(1_000_000);
        s
    }

    #[test]
    fn the_derived_headroom_is_two_one_way_delays_at_the_rate_plus_two_frames() {
        // 25 us at 1 Gbps: 3125 bytes each way.
        assert_eq!(
            derived_headroom(1_000_000_000, from_us(25), 1538),
            6250 + 3076
        );
        let mut s = Scenario::example(8);
        assert_eq!(s.pfc_headroom_of(1_000_000_000, from_us(25)), 6250 + 3076);
        s.topology.pfc_headroom = Some(20_000);
        assert_eq!(s.pfc_headroom_of(1_000_000_000, from_us(25)), 20_000);
    }

    #[test]
    fn pfc_over_a_shared_buffer_is_valid_on_every_built_in_shape() {
        for kind in [
            TopologyKind::Star,
            TopologyKind::LeafSpine,
            TopologyKind::FatTree,
        ] {
            shared_pfc(kind).validate().unwrap();
        }
    }

    #[test]
    fn headrooms_that_leave_no_pool_name_the_headroom() {
        let mut s = shared_pfc(TopologyKind::Star);
        s.topology.pfc_headroom = Some(200_000);
        // Nine hosts × 200 KB is more than the 1 MB buffer.
        let e = s.validate().unwrap_err();
        assert_eq!(e.field, "topology.pfc_headroom");
        s.topology.pfc_headroom = Some(100_000);
        s.validate().unwrap();
        s.topology.pfc_headroom = Some(1_000);
        assert_eq!(
            s.validate().unwrap_err().field,
            "topology.pfc_headroom",
            "below a frame"
        );
    }

    #[test]
    fn xoff_above_the_pool_or_xon_without_a_static_xoff_is_refused() {
        let mut s = shared_pfc(TopologyKind::LeafSpine);
        s.topology.pfc_headroom = Some(100_000);
        // A leaf: 4 hosts + 4 spines = 8 ingresses, 800 KB of headroom, a 200 KB pool.
        s.topology.pfc_xoff = Some(200_001);
        assert_eq!(s.validate().unwrap_err().field, "topology.pfc_xoff");
        s.topology.pfc_xoff = Some(200_000);
        s.validate().unwrap();
        s.topology.pfc_xon = Some(200_001);
        assert_eq!(s.validate().unwrap_err().field, "topology.pfc_xon");
        s.topology.pfc_xoff = None;
        s.topology.pfc_xon = Some(1_000);
        assert_eq!(s.validate().unwrap_err().field, "topology.pfc_xon");
        s.topology.pfc_xon = None;
        s.topology.pfc_alpha = 0.0;
        assert_eq!(s.validate().unwrap_err().field, "topology.pfc_alpha");
    }

    #[test]
    fn shared_buffer_keys_without_a_shared_buffer_are_refused() {
        let mut s = Scenario::example(8);
        s.topology.pfc = true;
        s.topology.pfc_xon_offset = Some(3_000);
        assert_eq!(s.validate().unwrap_err().field, "topology.pfc_xon_offset");
        s.topology.pfc_xon_offset = None;
        s.topology.pfc_headroom = Some(64_000);
        assert_eq!(s.validate().unwrap_err().field, "topology.pfc_headroom");
        s.topology.pfc_headroom = Some(10_000);
        assert_eq!(s.pfc_thresholds(), Some((54_000, 54_000 - 2 * 1538)));
        // Derived, from the delay of a link (not a quarter of the RTT where a path is longer).
        s.topology.pfc_headroom = None;
        s.topology.link_delay = from_us(1);
        assert_eq!(
            s.pfc_thresholds(),
            Some((64_000 - 250 - 2 * 1538, 64_000 - 250 - 4 * 1538))
        );
        s.topology.link_delay = 0;
        s.validate().unwrap();
        // PFC with RED that drops is refused, as before.
        s.topology.red_min = Some(10_000);
        s.topology.red_max = 30_000;
        assert_eq!(s.validate().unwrap_err().field, "topology.red_ecn");
        s.topology.buffer = QueueLimit::UNLIMITED;
        s.topology.red_min = None;
        assert_eq!(s.validate().unwrap_err().field, "topology.buffer");
    }

    #[test]
    fn egress_marking_needs_kmin_below_kmax_a_probability_and_no_red() {
        let mut s = Scenario::example(8);
        s.topology.ecn_kmin = Some(5_000);
        s.validate().unwrap();
        assert!(s.reports_fabric());
        s.topology.ecn_kmax = 5_000;
        assert_eq!(s.validate().unwrap_err().field, "topology.ecn_kmin");
        s.topology.ecn_kmax = 200_000;
        s.topology.ecn_pmax = 0.0;
        assert_eq!(s.validate().unwrap_err().field, "topology.ecn_pmax");
        s.topology.ecn_pmax = 0.01;
        s.topology.red_min = Some(10_000);
        s.topology.red_max = 30_000;
        assert_eq!(s.validate().unwrap_err().field, "topology.ecn_kmin");
        s.topology.red_min = None;
        s.topology.ecn_threshold = QueueLimit::bytes(30_000);
        assert_eq!(s.validate().unwrap_err().field, "topology.ecn_kmin");
        // Egress marking is marking enough for DCTCP.
        s.topology.ecn_threshold = QueueLimit::UNLIMITED;
        s.tcp.congestion_control = crate::config::CongestionControl::Dctcp;
        s.tcp.ecn = true;
        s.validate().unwrap();
    }

    #[test]
    fn int_and_egress_marking_are_refused_over_trimming_switches() {
        let mut s = Scenario::example(8);
        s.transport = Transport::Ndp;
        s.workload.kind = crate::config::WorkloadKind::Incast;
        s.workload.flow_size = Some(270_000);
        s.validate().unwrap();
        s.topology.int = true;
        assert_eq!(s.validate().unwrap_err().field, "topology.int");
        s.topology.int = false;
        s.topology.ecn_kmin = Some(5_000);
        assert_eq!(s.validate().unwrap_err().field, "topology.ecn_kmin");
        s.topology.ecn_kmin = None;
        s.topology.fabric_report = true;
        assert_eq!(s.validate().unwrap_err().field, "topology.fabric_report");
        let mut s = Scenario::example(8);
        s.topology.int_qlen_with_packet = true;
        assert_eq!(
            s.validate().unwrap_err().field,
            "topology.int_qlen_with_packet"
        );
        s.topology.int = true;
        s.validate().unwrap();
    }
}
