//! What a scenario asks of a described topology: the keys the file sets stay unset, the
//! hosts the workload places fit in it, and its buffers hold a full packet.

use super::{shown_rate, Graph, ResolvedGraph};
use crate::config::{bad, ConfigError, Scenario, Topology, Transport, WorkloadKind};

/// What a scenario asks of a described topology, checked against the file.
impl Scenario {
    /// A described topology: the graph's own rules, then what the scenario asks of it.
    pub(in crate::config) fn validate_file(&self) -> Result<(), ConfigError> {
        let t = &self.topology;
        let Some(g) = t.file.as_ref() else {
            return Err(bad(
                "topology.file",
                "topology.kind = \"file\" needs a topology: the name of a TOML file of switches, hosts and links, or its tables inline",
            ));
        };
        let r = g.resolve()?;
        t.refuse_shape_keys()?;
        let order = Graph::placement(&r, t.senders);
        self.validate_file_rates(g, &r, &order)?;
        if self.all_to_all() {
            self.validate_file_mesh(g, &r, &order)?;
        } else {
            self.validate_file_hosts(g, &r)?;
        }
        if self.transport == Transport::Ndp {
            return Err(bad(
                "transport",
                "NDP sprays its packets over a built-in topology's paths; a topology file runs TCP or RoCE",
            ));
        }
        g.validate_buffers(self.full_frame())
    }

    /// PFC on a described topology: each ingress into a switch without a shared buffer has
    /// its own link's buffer, XOFF what PFC's headroom leaves of it (or `topology.pfc_xoff`);
    /// a switch with a shared buffer carves each ingress's headroom out of it and keeps a
    /// pool of at least a full frame.
    pub(in crate::config) fn validate_pfc_file(&self) -> Result<(), ConfigError> {
        let t = &self.topology;
        let Some(g) = t.file.as_ref() else {
            return Ok(()); // validate_file refuses it first
        };
        let r = g.resolve()?;
        let frame = self.full_frame();
        let mut carved = vec![0u64; g.switches.len()];
        for (_, s, i) in r.ingresses() {
            let l = &g.links[i as usize];
            let headroom = self.pfc_headroom_of(l.rate, l.delay);
            let switch = &g.switches[s as usize];
            if switch.shared_buffer.is_some() {
                carved[s as usize] = carved[s as usize].saturating_add(headroom);
                continue;
            }
            let at = format!("link {i} ({}–{}) into switch {}", l.a, l.b, switch.name);
            let Some(buffer) = l.buffer.bytes else {
                return Err(bad(
                    "topology.file",
                    format!("{at}: PFC needs a byte buffer (each ingress's own), or a shared_buffer for the switch"),
                ));
            };
            let (xoff, xon) = self.pfc_own_thresholds(buffer, headroom);
            if t.pfc_xoff.is_none() && xoff < frame {
                return Err(bad(
                    "topology.file",
                    format!("{at}: a buffer of {buffer} bytes leaves no room below PFC's headroom ({headroom} bytes: two one-way delays at the link rate plus two frames); raise it or set topology.pfc_xoff"),
                ));
            }
            if xoff < frame || xoff > buffer {
                return Err(bad(
                    "topology.pfc_xoff",
                    format!("must be between one full frame ({frame} bytes) and the buffer of {at} ({buffer} bytes), got {xoff}"),
                ));
            }
            if xon > xoff {
                return Err(bad(
                    "topology.pfc_xon",
                    format!("XON ({xon} bytes) must be at or below XOFF ({xoff} bytes)"),
                ));
            }
        }
        let mut shared = false;
        for (sw, &carved) in g.switches.iter().zip(&carved) {
            let Some(total) = sw.shared_buffer else {
                continue;
            };
            shared = true;
            if carved.saturating_add(frame) > total {
                return Err(bad(
                    "topology.pfc_headroom",
                    format!(
                        "switch {}: its ingresses' headrooms ({carved} bytes) leave no pool in its shared_buffer ({total} bytes); lower the headroom or raise the buffer",
                        sw.name
                    ),
                ));
            }
            self.validate_pfc_pool(total - carved)?;
        }
        let own_only = [
            ("topology.pfc_xon_offset", t.pfc_xon_offset.is_some()),
            ("topology.pfc_alpha", t.pfc_alpha != 0.125),
        ];
        match own_only.iter().find(|(_, set)| *set) {
            Some((field, _)) if !shared => Err(bad(
                field,
                "applies to PFC over a shared buffer, and no switch of the topology file has a shared_buffer; give topology.pfc_xoff and topology.pfc_xon",
            )),
            _ => Ok(()),
        }
    }

    /// `topology.link` and `topology.receiver_link` as the file gives them, or unset.
    fn validate_file_rates(
        &self,
        g: &Graph,
        r: &ResolvedGraph,
        order: &[u32],
    ) -> Result<(), ConfigError> {
        let t = &self.topology;
        for (field, rate, whose) in [
            ("topology.link", g.host_rate(r, order[0]), "first sender's"),
            (
                "topology.receiver_link",
                g.host_rate(r, r.receiver),
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
                        shown_rate(rate)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A key-value store or a shuffle takes hosts of the file; a share of one link rate is
    /// one rate only if their links agree.
    fn validate_file_mesh(
        &self,
        g: &Graph,
        r: &ResolvedGraph,
        order: &[u32],
    ) -> Result<(), ConfigError> {
        let t = &self.topology;
        let hosts = g.hosts.len() as u32;
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
        let first = g.host_rate(r, order[0]);
        let odd = order[..t.senders as usize]
            .iter()
            .find(|&&h| g.host_rate(r, h) != first);
        let kv = self.workload.kind == WorkloadKind::KvGets;
        if let (Some(&h), 0.0, true) = (odd, self.workload.kv_rate, kv) {
            return Err(bad(
                "workload.kv_utilization",
                format!(
                    "is a share of one link rate, but host {} has {} and host {} {}; give workload.kv_rate (gets/s per host) instead",
                    g.hosts[h as usize],
                    shown_rate(g.host_rate(r, h)),
                    g.hosts[order[0] as usize],
                    shown_rate(first)
                ),
            ));
        }
        Ok(())
    }

    /// The senders the file names, and room for every host the scenario places.
    fn validate_file_hosts(&self, g: &Graph, r: &ResolvedGraph) -> Result<(), ConfigError> {
        let t = &self.topology;
        let hosts = g.hosts.len() as u32;
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
        Ok(())
    }
}

impl Topology {
    /// The file sets every link's rate, delay and buffer, and the hosts' places: the keys
    /// that shape a built-in topology would be ignored, so they are refused.
    fn refuse_shape_keys(&self) -> Result<(), ConfigError> {
        let d = Topology::default();
        for (field, set) in [
            ("topology.hosts", self.hosts != d.hosts),
            ("topology.fat_tree_k", self.fat_tree_k != d.fat_tree_k),
            (
                "topology.hosts_per_leaf",
                self.hosts_per_leaf != d.hosts_per_leaf,
            ),
            ("topology.spines", self.spines != d.spines),
            ("topology.link_delay", self.link_delay != d.link_delay),
            ("topology.uplink", self.uplink != d.uplink),
            (
                "topology.fabric_buffer",
                self.fabric_buffer != d.fabric_buffer,
            ),
            ("topology.fabric_delay", self.fabric_delay != d.fabric_delay),
            ("topology.placement", self.placement != d.placement),
            ("topology.listed_hosts", self.listed_hosts != d.listed_hosts),
            ("topology.rtt", self.rtt != d.rtt),
            ("topology.buffer", self.buffer != d.buffer),
            (
                "topology.receiver_buffer",
                self.receiver_buffer != d.receiver_buffer,
            ),
            (
                "topology.shared_buffer",
                self.shared_buffer != d.shared_buffer,
            ),
        ] {
            if set {
                return Err(bad(
                    field,
                    "the topology file sets this (links give rate, delay and buffer; switches their shared_buffer; receiver and senders name the hosts); leave it unset with topology.kind = \"file\"",
                ));
            }
        }
        Ok(())
    }
}

impl Graph {
    /// Every buffer of the file (a link's, a switch's shared one) holds one full packet of
    /// `frame` bytes.
    fn validate_buffers(&self, frame: u64) -> Result<(), ConfigError> {
        for (i, l) in self.links.iter().enumerate() {
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
        if let Some(s) = self
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
}
