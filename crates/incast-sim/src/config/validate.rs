//! Every rule a valid scenario follows, each error naming its field.

use super::*;
use crate::units::*;

/// The longest time a timing key (a wait, a stagger, a run's duration) may hold: an hour.
const AN_HOUR: SimTime = 3600 * PS_PER_S;

impl Scenario {
    fn validate_shape(&self) -> Result<(), ConfigError> {
        let t = &self.topology;
        let need = self.hosts_needed();
        if t.hosts > 0 && t.hosts < need {
            return Err(bad(
                "topology.hosts",
                format!(
                    "{} hosts cannot hold {need} (senders, receiver and background hosts)",
                    t.hosts
                ),
            ));
        }
        if t.hosts > MAX_SENDERS {
            return Err(bad(
                "topology.hosts",
                format!("must be at most {MAX_SENDERS}"),
            ));
        }
        if t.link_delay > PS_PER_S {
            return Err(bad("topology.link_delay", "must be at most 1s"));
        }
        if t.kind != TopologyKind::File && t.file.is_some() {
            return Err(bad(
                "topology.file",
                "describes a topology of its own; set topology.kind = \"file\" to use it",
            ));
        }
        match t.kind {
            TopologyKind::Star => {}
            TopologyKind::File => return self.validate_file(),
            TopologyKind::LeafSpine => {
                if t.hosts_per_leaf == 0 || t.hosts_per_leaf > 4096 {
                    return Err(bad("topology.hosts_per_leaf", "must be 1..4096"));
                }
                if t.spines > 4096 {
                    return Err(bad("topology.spines", "must be at most 4096"));
                }
                let leaves = t.hosts.max(need).div_ceil(t.hosts_per_leaf) as u64;
                let spines = if t.spines == 0 {
                    t.hosts_per_leaf
                } else {
                    t.spines
                } as u64;
                if leaves * spines > 4_000_000 {
                    return Err(bad(
                        "topology.spines",
                        format!("{leaves} leaves × {spines} spines is too many links"),
                    ));
                }
            }
            TopologyKind::FatTree => {
                let k = t.fat_tree_k;
                if k > 0 && (k % 2 == 1 || k > 128) {
                    return Err(bad(
                        "topology.fat_tree_k",
                        format!("must be even and at most 128 (k³/4 hosts), got {k}"),
                    ));
                }
                let k = self.fat_tree_k() as u64;
                let cap = k * k * k / 4;
                if k > 128 {
                    return Err(bad(
                        "topology.senders",
                        format!("{need} hosts need a fat tree with k > 128"),
                    ));
                }
                if (need as u64) > cap || (t.hosts as u64) > cap {
                    return Err(bad(
                        "topology.hosts",
                        format!(
                            "a k = {k} fat tree holds {cap} hosts, but {} are asked for",
                            need.max(t.hosts)
                        ),
                    ));
                }
            }
        }
        if t.kind == TopologyKind::Star {
            for (field, set) in [
                ("topology.uplink", t.uplink > 0),
                ("topology.fabric_buffer", t.fabric_buffer.is_some()),
                ("topology.fabric_delay", t.fabric_delay > 0),
            ] {
                if set {
                    return Err(bad(
                        field,
                        "applies to switch-to-switch links, and a star has none; set topology.kind = \"leaf_spine\" or \"fat_tree\"",
                    ));
                }
            }
        }
        if t.fabric_delay > PS_PER_S {
            return Err(bad("topology.fabric_delay", "must be at most 1s"));
        }
        if t.kind != TopologyKind::Star && t.shared_buffer.is_some() {
            return Err(bad(
                "topology.shared_buffer",
                "a shared buffer is modelled for the star's single switch only",
            ));
        }
        Ok(())
    }

    /// A described topology: the graph's own rules, then what the scenario asks of it.
    fn validate_file(&self) -> Result<(), ConfigError> {
        let t = &self.topology;
        let Some(g) = t.file.as_ref() else {
            return Err(bad(
                "topology.file",
                "topology.kind = \"file\" needs a topology: the name of a TOML file of switches, hosts and links, or its tables inline",
            ));
        };
        let r = g.resolve()?;
        // The file sets every link's rate, delay and buffer, and the hosts' places: the keys
        // that shape a built-in topology would be ignored, so they are refused.
        let d = Topology::default();
        for (field, set) in [
            ("topology.hosts", t.hosts != d.hosts),
            ("topology.fat_tree_k", t.fat_tree_k != d.fat_tree_k),
            (
                "topology.hosts_per_leaf",
                t.hosts_per_leaf != d.hosts_per_leaf,
            ),
            ("topology.spines", t.spines != d.spines),
            ("topology.link_delay", t.link_delay != d.link_delay),
            ("topology.uplink", t.uplink != d.uplink),
            ("topology.fabric_buffer", t.fabric_buffer != d.fabric_buffer),
            ("topology.fabric_delay", t.fabric_delay != d.fabric_delay),
            ("topology.placement", t.placement != d.placement),
            ("topology.rtt", t.rtt != d.rtt),
            ("topology.buffer", t.buffer != d.buffer),
            (
                "topology.receiver_buffer",
                t.receiver_buffer != d.receiver_buffer,
            ),
            ("topology.shared_buffer", t.shared_buffer != d.shared_buffer),
        ] {
            if set {
                return Err(bad(
                    field,
                    "the topology file sets this (links give rate, delay and buffer; switches their shared_buffer; receiver and senders name the hosts); leave it unset with topology.kind = \"file\"",
                ));
            }
        }
        let order = Graph::placement(&r, t.senders);
        for (field, rate, whose) in [
            ("topology.link", g.host_rate(&r, order[0]), "first sender's"),
            (
                "topology.receiver_link",
                g.host_rate(&r, r.receiver),
                "receiver's",
            ),
        ] {
            let given = if field == "topology.link" {
                t.link
            } else {
                t.receiver_link
            };
            if given != rate {
                return Err(bad(
                    field,
                    format!(
                        "the topology file sets each link's rate (the {whose} is {}); leave it unset with topology.kind = \"file\"",
                        graph::shown_rate(rate)
                    ),
                ));
            }
        }
        let hosts = g.hosts.len() as u32;
        if self.all_to_all() {
            if t.senders > hosts {
                let what = if self.workload.kind == WorkloadKind::KvGets {
                    "key-value cluster"
                } else {
                    "shuffle"
                };
                return Err(bad(
                    "topology.senders",
                    format!(
                        "the {what} takes {} hosts, and the topology file has {hosts}",
                        t.senders
                    ),
                ));
            }
            let first = g.host_rate(&r, order[0]);
            let odd = order[..t.senders as usize]
                .iter()
                .find(|&&h| g.host_rate(&r, h) != first);
            let kv = self.workload.kind == WorkloadKind::KvGets;
            if let (Some(&h), 0.0, true) = (odd, self.workload.kv_rate, kv) {
                return Err(bad(
                    "workload.kv_utilization",
                    format!(
                        "is a share of one link rate, but host {} has {} and host {} {}; give workload.kv_rate (gets/s per host) instead",
                        g.hosts[h as usize],
                        graph::shown_rate(g.host_rate(&r, h)),
                        g.hosts[order[0] as usize],
                        graph::shown_rate(first)
                    ),
                ));
            }
        } else {
            let named = r.senders.len() as u32;
            if t.senders > named {
                return Err(bad(
                    "topology.senders",
                    format!(
                        "{} senders asked for, and the topology file names {named} (its senders, or every host but the receiver)",
                        t.senders
                    ),
                ));
            }
            let need = self.hosts_needed();
            if need > hosts {
                return Err(bad(
                    "background.flows",
                    format!("the scenario places {need} hosts (senders, receiver, background hosts and sink), and the topology file has {hosts}"),
                ));
            }
        }
        if self.transport == Transport::Ndp {
            return Err(bad(
                "transport",
                "NDP sprays packets over a built-in topology's paths; a topology file runs TCP",
            ));
        }
        if t.pfc {
            return Err(bad(
                "topology.pfc",
                "PFC is modelled on the built-in topologies only (one buffer per ingress); not with a topology file",
            ));
        }
        let frame = self.full_frame();
        for (i, l) in g.links.iter().enumerate() {
            if l.buffer.bytes.is_some_and(|b| b < frame) {
                return Err(bad(
                    "topology.file",
                    format!(
                        "link {i} ({}–{}): a buffer of {} bytes is smaller than one full packet ({frame} bytes)",
                        l.a,
                        l.b,
                        l.buffer.bytes.unwrap_or(0)
                    ),
                ));
            }
        }
        if let Some(s) = g
            .switches
            .iter()
            .find(|s| s.shared_buffer.is_some_and(|b| b < frame))
        {
            return Err(bad(
                "topology.file",
                format!(
                    "switch {}: shared_buffer must hold at least one full packet ({frame} bytes)",
                    s.name
                ),
            ));
        }
        Ok(())
    }

    /// A shaper's bucket (`topology.nic_burst`, `topology.port_burst`) holds at least one
    /// full frame (tbf refuses a burst below the MTU) and at most a second of the slowest
    /// link's rate.
    fn validate_bursts(&self) -> Result<(), ConfigError> {
        let t = &self.topology;
        for (field, burst) in [
            ("topology.nic_burst", t.nic_burst),
            ("topology.port_burst", t.port_burst),
        ] {
            if burst == 0 {
                continue;
            }
            if self.transport == Transport::Ndp {
                return Err(bad(
                    field,
                    "NDP's switches trim and its hosts pace by pulls, not by a shaper; shaped \
                     links are for TCP (set 0)",
                ));
            }
            let frame = self.full_frame().saturating_add(self.tcp.phy_overhead);
            if burst < frame {
                return Err(bad(
                    field,
                    format!(
                        "{burst} bytes is smaller than one full frame on the wire ({frame} bytes)"
                    ),
                ));
            }
            let slowest = t.link.min(t.receiver_link) as u128;
            if burst as u128 * 8 > slowest {
                return Err(bad(
                    field,
                    format!(
                        "{burst} bytes is more than one second of the slowest link ({slowest} bps)"
                    ),
                ));
            }
        }
        Ok(())
    }

    fn validate_ndp(&self) -> Result<(), ConfigError> {
        let n = &self.ndp;
        if self.workload.kind != WorkloadKind::Incast {
            return Err(bad(
                "workload.kind",
                "NDP runs the incast workload (N flows into one receiver); set workload.kind = \"incast\"",
            ));
        }
        if self.background.flows > 0 {
            return Err(bad(
                "background.flows",
                "background flows are TCP; NDP runs without them",
            ));
        }
        if n.mtu == 0 || n.mtu > 65_000 {
            return Err(bad(
                "ndp.mtu",
                format!("must be 1..65000 bytes, got {}", n.mtu),
            ));
        }
        if n.header_bytes == 0 || n.header_bytes > 1000 {
            return Err(bad("ndp.header_bytes", "must be 1..1000 bytes"));
        }
        if n.initial_window == 0 || n.initial_window > 100_000 {
            return Err(bad("ndp.initial_window", "must be 1..100000 packets"));
        }
        if n.data_queue == 0 {
            return Err(bad("ndp.data_queue", "must hold at least one packet"));
        }
        if n.header_queue < n.header_bytes {
            return Err(bad("ndp.header_queue", "must hold at least one header"));
        }
        if n.header_weight == 0 || n.header_weight > 1000 {
            return Err(bad("ndp.header_weight", "must be 1..1000"));
        }
        if n.rto == 0 {
            return Err(bad("ndp.rto", "must be positive"));
        }
        Ok(())
    }

    /// The frame's parts, checked first: the checks of buffers and bursts measure in frames.
    fn validate_frame(&self) -> Result<(), ConfigError> {
        let c = &self.tcp;
        if c.mss == 0 || c.mss > 65_000 {
            return Err(bad(
                "tcp.mss",
                format!("must be 1..65000 bytes, got {}", c.mss),
            ));
        }
        if c.header_bytes > 1000 {
            return Err(bad(
                "tcp.header_bytes",
                "headers must be at most 1000 bytes",
            ));
        }
        if c.phy_overhead > 1000 {
            return Err(bad("tcp.phy_overhead", "must be at most 1000 bytes"));
        }
        Ok(())
    }

    /// Check every invariant the engine relies on.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_frame()?;
        let t = &self.topology;
        if t.senders == 0 || t.senders > MAX_SENDERS {
            return Err(bad(
                "topology.senders",
                format!("must be between 1 and {MAX_SENDERS}, got {}", t.senders),
            ));
        }
        if t.link == 0 {
            return Err(bad("topology.link", "rate must be positive"));
        }
        if t.receiver_link == 0 {
            return Err(bad("topology.receiver_link", "rate must be positive"));
        }
        if t.host_jitter > PS_PER_S {
            return Err(bad("topology.host_jitter", "must be at most 1s"));
        }
        if t.rtt > 10 * PS_PER_S {
            return Err(bad("topology.rtt", "must be at most 10s"));
        }
        // The shape bounds the per-link delay, so the jitter test below cannot overflow.
        self.validate_shape()?;
        if t.link_jitter > self.link_delay().saturating_mul(2) {
            return Err(bad(
                "topology.link_jitter",
                format!(
                    "must be at most twice the per-link delay ({:.3}us), so no delay is negative",
                    self.link_delay() as f64 / PS_PER_US as f64
                ),
            ));
        }
        if self.transport == Transport::Ndp {
            self.validate_ndp()?;
        }
        self.validate_bursts()?;
        let frame = self.full_frame();
        for (name, lim) in [
            ("topology.buffer", t.buffer),
            (
                "topology.receiver_buffer",
                t.receiver_buffer.unwrap_or(t.buffer),
            ),
            ("topology.nic_buffer", t.nic_buffer),
            (
                "topology.fabric_buffer",
                t.fabric_buffer.unwrap_or(t.buffer),
            ),
        ] {
            if let Some(b) = lim.bytes {
                if b < frame {
                    return Err(bad(
                        name,
                        format!("{b} bytes is smaller than one full packet ({frame} bytes)"),
                    ));
                }
            }
            if lim.packets == Some(0) {
                return Err(bad(name, "must hold at least one packet"));
            }
        }
        let c = &self.tcp;
        if c.initial_window == 0 || c.initial_window > 10_000 {
            return Err(bad(
                "tcp.initial_window",
                format!("must be 1..10000 segments, got {}", c.initial_window),
            ));
        }
        if c.clock_granularity == 0 {
            return Err(bad(
                "tcp.clock_granularity",
                "must be positive (e.g. 1us, 1ms, 4ms)",
            ));
        }
        if c.rto_min == 0 {
            return Err(bad("tcp.rto_min", "must be positive"));
        }
        // The wheel's buckets are counted in jiffies: on a µs tick it would model nothing real.
        let tick = c.timer_tick();
        if c.timer_wheel && !(from_ms(1)..=from_ms(10)).contains(&tick) {
            return Err(bad(
                "tcp.timer_wheel",
                format!(
                    "Linux's timer wheel counts jiffies: it needs a timer tick of 1ms..10ms \
                     (tcp.timer_granularity, HZ = 1000..100), got {tick} ps; or set it false"
                ),
            ));
        }
        if c.rto_max < c.rto_min {
            return Err(bad("tcp.rto_max", "must be at least tcp.rto_min"));
        }
        if c.rto_max > AN_HOUR {
            return Err(bad("tcp.rto_max", "must be at most 3600s"));
        }
        if c.rto_initial == 0 || c.rto_initial > AN_HOUR {
            return Err(bad("tcp.rto_initial", "must be between 1ps and 3600s"));
        }
        if c.rto_randomization != RtoRandomization::None {
            if c.rto_delta == 0 {
                return Err(bad(
                    "tcp.rto_delta",
                    "randomization needs a positive interval Δ",
                ));
            }
            if c.rto_randomization != RtoRandomization::Maa && c.rto_delta > 2 * c.rto_min {
                return Err(bad(
                    "tcp.rto_delta",
                    format!(
                        "must be at most 2·tcp.rto_min ({} ps) so every RTO stays positive, got {} ps",
                        2 * c.rto_min,
                        c.rto_delta
                    ),
                ));
            }
        }
        for (name, v) in [
            ("tcp.rto_omega", c.rto_omega),
            ("tcp.rto_omega_long", c.rto_omega_long),
        ] {
            if !(1.0..=100.0).contains(&v) {
                return Err(bad(name, format!("must be between 1 and 100, got {v}")));
            }
        }
        if !(c.rto_sigma > 0.0 && c.rto_sigma <= 1000.0) {
            return Err(bad(
                "tcp.rto_sigma",
                format!("must be in (0, 1000], got {}", c.rto_sigma),
            ));
        }
        if t.shared_buffer.is_some_and(|b| b < frame) {
            return Err(bad(
                "topology.shared_buffer",
                "must hold at least one full packet",
            ));
        }
        if let Some(min) = t.red_min {
            if min >= t.red_max {
                return Err(bad(
                    "topology.red_min",
                    format!(
                        "{min} bytes must be below topology.red_max ({} bytes)",
                        t.red_max
                    ),
                ));
            }
            if t.buffer.bytes.is_some_and(|b| t.red_max > b) {
                return Err(bad("topology.red_max", "must be at most topology.buffer"));
            }
            if !(t.red_max_p > 0.0 && t.red_max_p <= 1.0) {
                return Err(bad("topology.red_max_p", "must be in (0, 1]"));
            }
            if !(t.red_weight > 0.0 && t.red_weight <= 1.0) {
                return Err(bad("topology.red_weight", "must be in (0, 1]"));
            }
        }
        if !(t.buffer_alpha > 0.0 && t.buffer_alpha <= 64.0) {
            return Err(bad(
                "topology.buffer_alpha",
                format!("must be in (0, 64], got {}", t.buffer_alpha),
            ));
        }
        let marks = t.ecn_threshold != QueueLimit::UNLIMITED || (t.red_min.is_some() && t.red_ecn);
        if c.congestion_control == CongestionControl::Dctcp && !marks {
            return Err(bad(
                "tcp.congestion_control",
                "dctcp needs ECN marking at the switch: set topology.ecn_threshold (e.g. \"30KB\") or RED with topology.red_ecn",
            ));
        }
        if let (Some(k), Some(b)) = (t.ecn_threshold.bytes, t.buffer.bytes) {
            if k >= b {
                return Err(bad(
                    "topology.ecn_threshold",
                    format!("{k} bytes must be below topology.buffer ({b} bytes)"),
                ));
            }
        }
        if let (Some(k), Some(b)) = (t.ecn_threshold.packets, t.buffer.packets) {
            if k >= b {
                return Err(bad(
                    "topology.ecn_threshold",
                    format!("{k} packets must be below topology.buffer ({b} packets)"),
                ));
            }
        }
        if c.congestion_control == CongestionControl::Dctcp && !c.ecn {
            return Err(bad(
                "tcp.ecn",
                "dctcp needs ECN: set tcp.ecn = true (or leave it unset)",
            ));
        }
        if t.pfc {
            self.validate_pfc()?;
        }
        if !(c.dctcp_g > 0.0 && c.dctcp_g <= 1.0) {
            return Err(bad(
                "tcp.dctcp_g",
                format!("must be in (0, 1], got {}", c.dctcp_g),
            ));
        }
        if c.receive_window < c.mss {
            return Err(bad("tcp.receive_window", "must be at least one MSS"));
        }
        if c.dupthresh == 0 || c.dupthresh > 1000 {
            return Err(bad("tcp.dupthresh", "must be 1..1000"));
        }
        let w = &self.workload;
        match w.kind {
            WorkloadKind::SyncRead => {
                match (w.sru, w.block) {
                    (Some(_), Some(_)) => {
                        return Err(bad("workload.sru", "give either sru or block, not both"))
                    }
                    (None, None) => {
                        return Err(bad("workload.sru", "sync_read needs sru or block"))
                    }
                    (Some(0), _) => return Err(bad("workload.sru", "must be positive")),
                    (_, Some(b)) if b < t.senders as u64 => {
                        return Err(bad(
                            "workload.block",
                            format!("{b} bytes cannot be striped over {} senders", t.senders),
                        ))
                    }
                    _ => {}
                }
                if w.blocks == 0 {
                    return Err(bad("workload.blocks", "must be at least 1"));
                }
                if w.request_size == 0 {
                    return Err(bad("workload.request_size", "must be positive"));
                }
                let per_server = self.sru_of(0) as u128 * w.blocks as u128;
                if per_server > (1u128 << 50) {
                    return Err(bad("workload.blocks", "total bytes per server exceed 2^50"));
                }
            }
            WorkloadKind::Queries => {
                if w.queries == 0 || w.queries > 10_000_000 {
                    return Err(bad("workload.queries", "must be 1..10000000"));
                }
                if !(w.query_load > 0.0 && w.query_load <= 1.0) {
                    return Err(bad(
                        "workload.query_load",
                        format!("must be in (0, 1], got {}", w.query_load),
                    ));
                }
                if w.query_size_min == 0 || w.query_size_min > w.query_size_max {
                    return Err(bad(
                        "workload.query_size_min",
                        "must be positive and at most workload.query_size_max",
                    ));
                }
                if w.query_size_max > (1 << 40) {
                    return Err(bad("workload.query_size_max", "must be at most 2^40 bytes"));
                }
                validate_cdf(&w.query_size_cdf)?;
            }
            WorkloadKind::KvGets => self.validate_kv()?,
            WorkloadKind::Shuffle => self.validate_shuffle()?,
            WorkloadKind::Incast => match w.flow_size {
                None | Some(0) => {
                    return Err(bad(
                        "workload.flow_size",
                        "incast needs a positive flow_size",
                    ))
                }
                Some(f) if f > (1u64 << 50) => {
                    return Err(bad("workload.flow_size", "must be at most 2^50 bytes"))
                }
                _ => {}
            },
        }
        if w.tasks == 0 || w.tasks > 1000 {
            return Err(bad(
                "workload.tasks",
                format!("must be 1..1000, got {}", w.tasks),
            ));
        }
        if let Some(cap) = t.host_rate_cap {
            let ok = match (cap.share, cap.bps) {
                (Some(s), None) => s > 0.0 && s <= 1.0,
                (None, Some(b)) => b > 0,
                _ => false,
            };
            if !ok {
                return Err(bad(
                    "topology.host_rate_cap",
                    "expected a share of the link in (0%, 100%] (e.g. \"80%\") or a positive rate (e.g. \"800Mbps\")",
                ));
            }
        }
        if t.host_rate_cap.is_some() && t.nic_burst > 0 {
            return Err(bad(
                "topology.host_rate_cap",
                "a NIC has one token bucket: give host_rate_cap (a cap below the line rate) or topology.nic_burst (a tbf at the line rate), not both",
            ));
        }
        if t.host_rate_burst > (1 << 30) {
            return Err(bad("topology.host_rate_burst", "must be at most 1 GiB"));
        }
        if w.tasks > 1 && w.kind == WorkloadKind::Queries {
            return Err(bad(
                "workload.tasks",
                "concurrent tasks apply to sync_read and incast; queries are concurrent already",
            ));
        }
        if t.senders as u64 * w.tasks as u64 > MAX_SENDERS as u64 {
            return Err(bad(
                "workload.tasks",
                format!("senders × tasks must be at most {MAX_SENDERS}"),
            ));
        }
        if w.request_stagger.saturating_mul(t.senders as u64) > AN_HOUR {
            return Err(bad(
                "workload.request_stagger",
                "senders × stagger must be at most 3600s",
            ));
        }
        if w.jitter > AN_HOUR {
            return Err(bad("workload.jitter", "must be at most 3600s"));
        }
        if !w.think_times.is_empty() && w.kind != WorkloadKind::SyncRead {
            return Err(bad(
                "workload.think_times",
                "pauses between blocks apply to sync_read only (leave it empty)",
            ));
        }
        if w.think_times.len() > MAX_THINK_TIMES {
            return Err(bad(
                "workload.think_times",
                format!(
                    "at most {MAX_THINK_TIMES} pauses (they are used in turn), got {}",
                    w.think_times.len()
                ),
            ));
        }
        if let Some(i) = w.think_times.iter().position(|&p| p > AN_HOUR) {
            return Err(bad(
                "workload.think_times",
                format!("item {i}: each pause must be at most 3600s"),
            ));
        }
        if self.background.flows > 10_000 {
            return Err(bad("background.flows", "must be at most 10000"));
        }
        if self.background.flows > 0
            && self.background.destination == BackgroundDestination::Peers
            && self.background.source == BackgroundSource::Senders
            && self.topology.senders < 2
        {
            return Err(bad(
                "background.destination",
                "\"peers\" sends each flow to another sender: it needs at least 2 senders",
            ));
        }
        if self.run.max_events == 0 {
            return Err(bad("run.max_events", "must be positive"));
        }
        if self.run.max_time == 0 {
            return Err(bad("run.max_time", "must be positive"));
        }
        Ok(())
    }

    fn validate_shuffle(&self) -> Result<(), ConfigError> {
        let w = &self.workload;
        let h = self.topology.senders;
        if !(2..=1000).contains(&h) {
            return Err(bad(
                "topology.senders",
                format!("a shuffle runs on 2..1000 hosts (each serves map outputs to the others' reducers), got {h}"),
            ));
        }
        if w.reducer_hosts > h {
            return Err(bad(
                "workload.reducer_hosts",
                format!(
                    "must be 0..{h} (the hosts, topology.senders), got {}",
                    w.reducer_hosts
                ),
            ));
        }
        if w.map_hosts > h {
            return Err(bad(
                "workload.map_hosts",
                format!(
                    "must be 0..{h} (the hosts, topology.senders), got {}",
                    w.map_hosts
                ),
            ));
        }
        let conns = self.shuffle_reducers() as u64 * self.shuffle_map_hosts() as u64;
        if conns > MAX_SENDERS as u64 {
            return Err(bad(
                "workload.reducers",
                format!(
                    "each reducer has a connection to every map host: reducers × map hosts must be at most {MAX_SENDERS}, got {conns}"
                ),
            ));
        }
        match (w.sru, w.block) {
            (Some(s), None) if s > 0 && s <= (1 << 40) => {}
            _ => return Err(bad(
                "workload.sru",
                "a shuffle fetches map outputs of sru bytes (1 byte to 2^40; not workload.block)",
            )),
        }
        if w.blocks == 0 {
            return Err(bad("workload.blocks", "must be at least 1"));
        }
        if w.request_size == 0 {
            return Err(bad("workload.request_size", "must be positive"));
        }
        if w.tasks != 1 {
            return Err(bad(
                "workload.tasks",
                "a shuffle has no tasks: place its reducers with workload.reducers",
            ));
        }
        if w.request_stagger > 0 || w.jitter > 0 {
            return Err(bad(
                "workload.jitter",
                "a shuffle asks and answers at once (leave jitter and request_stagger at 0)",
            ));
        }
        if self.background.flows > 0 {
            return Err(bad(
                "background.flows",
                "a shuffle's traffic is all to all already; it runs without background flows",
            ));
        }
        if self.transport != Transport::Tcp {
            return Err(bad("transport", "a shuffle runs over TCP"));
        }
        Ok(())
    }

    fn validate_kv(&self) -> Result<(), ConfigError> {
        let w = &self.workload;
        let h = self.topology.senders;
        if h < 2 {
            return Err(bad(
                "topology.senders",
                format!("kv_gets needs at least 2 hosts (each is a client and a replica), got {h}"),
            ));
        }
        if h > 1000 {
            return Err(bad(
                "topology.senders",
                format!("kv_gets runs a connection per pair of hosts: at most 1000 hosts, got {h}"),
            ));
        }
        if w.kv_replicas == 0 || w.kv_replicas > h {
            return Err(bad(
                "workload.kv_replicas",
                format!(
                    "{} replicas need as many distinct hosts, and the cluster has {h} (topology.senders); allowed 1..{h}",
                    w.kv_replicas
                ),
            ));
        }
        if !(0.0..=1.0).contains(&w.kv_put_fraction) {
            return Err(bad(
                "workload.kv_put_fraction",
                format!(
                    "a share of the operations, from 0 to 1, got {}",
                    w.kv_put_fraction
                ),
            ));
        }
        if w.kv_quorum > w.kv_replicas {
            return Err(bad(
                "workload.kv_quorum",
                format!(
                    "a get cannot wait for {} replies from {} replicas; allowed 0 (all) ..{}",
                    w.kv_quorum, w.kv_replicas, w.kv_replicas
                ),
            ));
        }
        if w.value_size == 0 || w.value_size > (1 << 40) {
            return Err(bad("workload.value_size", "must be 1..2^40 bytes"));
        }
        validate_cdf(&w.query_size_cdf)?;
        if w.request_size == 0 {
            return Err(bad("workload.request_size", "must be positive"));
        }
        if !(w.kv_rate >= 0.0 && w.kv_rate.is_finite()) {
            return Err(bad(
                "workload.kv_rate",
                format!("must be ≥ 0 gets/s, got {}", w.kv_rate),
            ));
        }
        if w.kv_rate == 0.0 && (w.kv_utilization.is_nan() || w.kv_utilization <= 0.0) {
            return Err(bad(
                "workload.kv_utilization",
                format!(
                    "must be above 0 (a share of the link, e.g. 0.5), got {}",
                    w.kv_utilization
                ),
            ));
        }
        let load =
            self.kv_gets_per_s() * 8.0 * self.kv_reply_bytes_per_get() / self.topology.link as f64;
        if load >= 1.0 {
            let (field, what) = if w.kv_rate > 0.0 {
                ("workload.kv_rate", format!("{} gets/s per host", w.kv_rate))
            } else {
                ("workload.kv_utilization", format!("{}", w.kv_utilization))
            };
            return Err(bad(
                field,
                format!(
                    "{what} offers {:.0}% of each host's link in replies; a load of 100% or more can never be carried (allowed: below 100%)",
                    100.0 * load
                ),
            ));
        }
        let gets = self.kv_gets_per_s() * h as f64 * w.kv_duration as f64 / PS_PER_S as f64;
        if gets > 1e8 {
            return Err(bad(
                "workload.kv_duration",
                format!("{gets:.3e} gets in all; at most 1e8 per run"),
            ));
        }
        if w.kv_duration == 0 || w.kv_duration > AN_HOUR {
            return Err(bad("workload.kv_duration", "must be between 1ps and 3600s"));
        }
        if w.kv_warmup >= w.kv_duration {
            return Err(bad(
                "workload.kv_warmup",
                "must be shorter than workload.kv_duration (the gets measured come after it)",
            ));
        }
        if w.kv_send_buffer == 0 {
            return Err(bad("workload.kv_send_buffer", "must be positive"));
        }
        let bg = &self.background;
        if bg.flows > 0
            && (bg.source != BackgroundSource::Senders
                || bg.destination != BackgroundDestination::Peers)
        {
            return Err(bad(
                "background",
                "a key-value store's background flows (hand-off, anti-entropy) run between its \
                 members: set source = \"senders\" and destination = \"peers\"",
            ));
        }
        if self.transport != Transport::Tcp {
            return Err(bad("transport", "kv_gets runs over TCP"));
        }
        if w.tasks != 1 {
            return Err(bad(
                "workload.tasks",
                "kv_gets has no tasks: every host is a client already",
            ));
        }
        Ok(())
    }

    /// PFC's (XOFF, XON) per ingress in bytes, defaults derived; `None` without PFC or
    /// without a byte limit per port.
    pub fn pfc_thresholds(&self) -> Option<(u64, u64)> {
        let t = &self.topology;
        if !t.pfc {
            return None;
        }
        let buffer = t.buffer.bytes?;
        let frame = self.full_frame().saturating_add(self.tcp.phy_overhead);
        let rate = t.link.max(t.receiver_link) as u128;
        // What still arrives after the switch decides to pause: the pause frame waits for the
        // frame on the wire towards the sender, crosses the link, and meanwhile the sender
        // keeps sending, and finishes its frame in service.
        let in_flight = (2 * (t.rtt / 4) as u128 * rate / 8 / PS_PER_S as u128) as u64;
        let headroom = in_flight + 2 * frame;
        let xoff = t.pfc_xoff.unwrap_or(buffer.saturating_sub(headroom));
        let xon = t.pfc_xon.unwrap_or(xoff.saturating_sub(2 * frame));
        Some((xoff, xon))
    }

    fn validate_pfc(&self) -> Result<(), ConfigError> {
        let t = &self.topology;
        let frame = self.full_frame();
        if t.receiver_buffer.is_some() {
            return Err(bad(
                "topology.receiver_buffer",
                "under PFC a port is bounded by the ingresses feeding it; leave it unset",
            ));
        }
        if t.shared_buffer.is_some() {
            return Err(bad(
                "topology.pfc",
                "PFC with a shared buffer is not modelled; use per-port buffers",
            ));
        }
        let Some(buffer) = t.buffer.bytes else {
            return Err(bad(
                "topology.buffer",
                "PFC needs a byte limit per port (e.g. \"64KB\"): it is the buffer of each ingress",
            ));
        };
        if t.red_min.is_some() && !t.red_ecn {
            return Err(bad(
                "topology.red_ecn",
                "PFC is lossless, so RED may only mark: set topology.red_ecn = true",
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
}

/// Check an empirical CDF of sizes.
fn validate_cdf(cdf: &[(u64, f64)]) -> Result<(), ConfigError> {
    let field = "workload.query_size_cdf";
    let Some(&(_, last)) = cdf.last() else {
        return Ok(());
    };
    if cdf.len() > 100_000 {
        return Err(bad(field, "at most 100000 points"));
    }
    let mut prev: Option<(u64, f64)> = None;
    for (i, &(size, p)) in cdf.iter().enumerate() {
        if size == 0 || size > (1 << 40) {
            return Err(bad(
                field,
                format!("point {i}: size must be 1..2^40 bytes, got {size}"),
            ));
        }
        if !(0.0..=1.0).contains(&p) {
            return Err(bad(
                field,
                format!("point {i}: probability must be in [0, 1], got {p}"),
            ));
        }
        if let Some((ps, pp)) = prev {
            if size <= ps || p < pp {
                return Err(bad(
                    field,
                    format!("point {i}: sizes must increase and probabilities not decrease ({ps}, {pp}) -> ({size}, {p})"),
                ));
            }
        }
        prev = Some((size, p));
    }
    if last != 1.0 {
        return Err(bad(
            field,
            format!("the last probability must be 1, got {last}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_is_valid_and_round_trips_through_json() {
        let s = Scenario::example(8);
        s.validate().unwrap();
        let j = serde_json::to_string(&s).unwrap();
        assert_eq!(Scenario::from_json(&j).unwrap(), s);
    }

    #[test]
    fn buffer_smaller_than_a_packet_is_rejected_by_name() {
        let mut s = Scenario::example(4);
        s.topology.buffer.bytes = Some(1000);
        let e = s.validate().unwrap_err();
        assert_eq!(e.field, "topology.buffer");
        s.topology.buffer.bytes = Some(64_000);
        s.topology.receiver_buffer = Some(QueueLimit::bytes(1000));
        assert_eq!(s.validate().unwrap_err().field, "topology.receiver_buffer");
    }

    #[test]
    fn zero_senders_and_zero_rate_are_rejected() {
        let mut s = Scenario::example(0);
        assert_eq!(s.validate().unwrap_err().field, "topology.senders");
        s.topology.senders = 2;
        s.topology.link = 0;
        assert_eq!(s.validate().unwrap_err().field, "topology.link");
    }

    #[test]
    fn striped_block_spreads_the_remainder() {
        let mut s = Scenario::example(3);
        s.workload.sru = None;
        s.workload.block = Some(10);
        assert_eq!((s.sru_of(0), s.sru_of(1), s.sru_of(2)), (4, 3, 3));
    }

    #[test]
    fn pfc_thresholds_default_below_the_buffer_and_xon_above_xoff_is_rejected() {
        let mut s = Scenario::example(4);
        s.topology.pfc = true;
        // 64 KB less 2 × 25 us at 1 Gbps (6250 B) and two 1538-byte frames.
        assert_eq!(s.pfc_thresholds(), Some((54_674, 51_598)));
        s.validate().unwrap();
        s.topology.pfc_xoff = Some(40_000);
        s.topology.pfc_xon = Some(50_000);
        assert_eq!(s.validate().unwrap_err().field, "topology.pfc_xon");
        s.topology.pfc_xoff = Some(70_000);
        assert_eq!(s.validate().unwrap_err().field, "topology.pfc_xoff");
        s.topology.pfc_xoff = None;
        s.topology.receiver_buffer = Some(QueueLimit::bytes(200_000));
        assert_eq!(s.validate().unwrap_err().field, "topology.receiver_buffer");
        s.topology.receiver_buffer = None;
        s.topology.pfc_xon = None;
        s.topology.buffer.bytes = Some(8_000);
        assert_eq!(s.validate().unwrap_err().field, "topology.buffer");
    }

    #[test]
    fn bad_cdfs_are_rejected_by_name() {
        let mut s = Scenario::example(4);
        s.workload.kind = WorkloadKind::Queries;
        for cdf in [
            vec![(100, 0.5)],
            vec![(100, 0.5), (50, 1.0)],
            vec![(100, 0.7), (200, 0.5), (300, 1.0)],
            vec![(0, 1.0)],
        ] {
            s.workload.query_size_cdf = cdf;
            assert_eq!(s.validate().unwrap_err().field, "workload.query_size_cdf");
        }
        s.workload.query_size_cdf = vec![(100, 0.0), (1000, 1.0)];
        s.validate().unwrap();
    }

    #[test]
    fn a_shapers_bucket_holds_a_full_frame_and_at_most_a_second_of_the_link() {
        type Burst = fn(&mut Scenario) -> &mut u64;
        let keys: [(&str, Burst); 2] = [
            ("topology.nic_burst", |s| &mut s.topology.nic_burst),
            ("topology.port_burst", |s| &mut s.topology.port_burst),
        ];
        for (field, burst) in keys {
            let mut s = Scenario::example(4);
            *burst(&mut s) = s.full_frame() + s.tcp.phy_overhead;
            assert!(s.validate().is_ok());
            *burst(&mut s) -= 1;
            let e = s.validate().unwrap_err();
            assert_eq!(e.field, field);
            assert!(e.to_string().contains("one full frame"), "{e}");
            s.topology.link = 1_000_000;
            *burst(&mut s) = 125_000;
            assert!(s.validate().is_ok());
            *burst(&mut s) = 125_001;
            let e = s.validate().unwrap_err();
            assert_eq!(e.field, field);
            assert!(e.to_string().contains("one second"), "{e}");
        }
    }

    #[test]
    fn the_timer_wheel_needs_a_jiffy_tick() {
        let mut s = Scenario::example(4);
        s.tcp.timer_wheel = true;
        s.tcp.clock_granularity = from_us(1);
        let e = s.validate().unwrap_err();
        assert_eq!(e.field, "tcp.timer_wheel");
        s.tcp.timer_granularity = Some(from_ms(4));
        assert!(s.validate().is_ok());
        s.tcp.timer_granularity = Some(from_ms(11));
        assert_eq!(s.validate().unwrap_err().field, "tcp.timer_wheel");
    }

    #[test]
    fn think_times_are_for_sync_read_and_bounded() {
        let mut s = Scenario::example(4);
        s.workload.think_times = vec![from_us(100), AN_HOUR];
        assert!(s.validate().is_ok());
        s.workload.think_times.push(AN_HOUR + 1);
        let e = s.validate().unwrap_err();
        assert_eq!(e.field, "workload.think_times");
        assert!(
            e.message.contains("item 2") && e.message.contains("3600s"),
            "{}",
            e.message
        );
        s.workload.think_times = vec![0; MAX_THINK_TIMES + 1];
        assert_eq!(s.validate().unwrap_err().field, "workload.think_times");
        s.workload.think_times = vec![from_us(100)];
        s.workload.kind = WorkloadKind::Incast;
        s.workload.flow_size = Some(1000);
        let e = s.validate().unwrap_err();
        assert_eq!(e.field, "workload.think_times");
        assert!(e.message.contains("sync_read"), "{}", e.message);
    }

    #[test]
    fn link_jitter_is_at_most_twice_the_per_link_delay() {
        let mut s = Scenario::example(4);
        s.topology.rtt = from_us(100); // a star: 25 us per link
        s.topology.link_jitter = from_us(50);
        s.validate().unwrap();
        s.topology.link_jitter = from_us(50) + 1;
        let e = s.validate().unwrap_err();
        assert_eq!(e.field, "topology.link_jitter");
        assert!(e.message.contains("25.000us"), "{}", e.message);
    }

    #[test]
    fn unknown_json_key_is_an_error_not_a_panic() {
        let e = Scenario::from_json(r#"{"seed": 1, "bogus": 2}"#).unwrap_err();
        assert_eq!(e.field, "bogus");
        let e = Scenario::from_json(r#"{"tcp": {"sack": "yes"}}"#).unwrap_err();
        assert_eq!(e.field, "tcp.sack");
        let e = Scenario::from_json(r#"{"topology": 5}"#).unwrap_err();
        assert_eq!(e.field, "topology");
        let e = Scenario::from_json("[1]").unwrap_err();
        assert_eq!(e.field, "scenario");
    }

    #[test]
    fn a_partial_scenario_gets_every_default() {
        let s = Scenario::from_json(r#"{"topology": {"senders": 4}}"#).unwrap();
        assert_eq!(s, Scenario::example(4));
        let s = Scenario::from_json("{}").unwrap();
        assert_eq!(s, Scenario::default());
    }

    #[test]
    fn derived_defaults_follow_the_keys_they_derive_from() {
        let s = Scenario::from_json(
            r#"{"topology": {"link": 10000000000, "ecn_threshold": {"bytes": 30000, "packets": null}},
                "tcp": {"congestion_control": "dctcp"}}"#,
        )
        .unwrap();
        assert_eq!(s.topology.receiver_link, 10_000_000_000);
        assert!(s.tcp.ecn);
        assert_eq!(s.background.ecn, None);
        let s =
            Scenario::from_json(r#"{"topology": {"receiver_link": null}, "tcp": {"ecn": null}}"#)
                .unwrap();
        assert_eq!(s, Scenario::default());
        let s = Scenario::from_json(r#"{"workload": {"block": 1000000}}"#).unwrap();
        assert_eq!((s.workload.sru, s.workload.block), (None, Some(1_000_000)));
        // Given explicitly, a derived key keeps its value.
        let s = Scenario::from_json(r#"{"topology": {"link": 10, "receiver_link": 5}}"#).unwrap();
        assert_eq!(s.topology.receiver_link, 5);
    }

    #[test]
    fn the_normalized_form_is_complete_and_loads_back_unchanged() {
        let mut s = Scenario::example(8);
        s.workload.query_size_cdf = vec![(100, 0.5), (200, 1.0)];
        let v: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
        let described: serde_json::Value = serde_json::from_str(&Scenario::describe()).unwrap();
        for (section, keys) in v.as_object().unwrap() {
            if let Some(table) = keys.as_object() {
                assert_eq!(
                    table.len(),
                    described[section]["keys"].as_object().unwrap().len()
                );
            }
        }
        assert_eq!(Scenario::from_json(&s.to_json()).unwrap(), s);
    }

    #[test]
    fn block_shares_add_up_and_differ_by_at_most_one() {
        for (block, n) in [(10u64, 3u32), (1_000_000, 7), (5, 5), (6, 4)] {
            let shares: Vec<u64> = (0..n).map(|i| block_share(block, n, i)).collect();
            assert_eq!(shares.iter().sum::<u64>(), block);
            assert!(shares.iter().max().unwrap() - shares.iter().min().unwrap() <= 1);
            assert!(shares.windows(2).all(|w| w[0] >= w[1]));
        }
    }
}
