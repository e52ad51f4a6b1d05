//! Topologies: links, and paths computed from a route's ends and a path index.
//!
//! A route is a (source host, destination host) pair plus the path a TCP connection was
//! hashed onto (per-flow ECMP); NDP picks a path per packet instead. On the built-in shapes
//! the links of a path are computed arithmetically, hop by hop, so no per-pair table exists
//! and memory grows with the hosts and links, not with their square; on a described topology
//! ([`crate::routing`]) they come from a walk over switch distances found at set-up. Either
//! way a TCP connection's route is worked out once and stored, so forwarding is an array read.
//!
//! `build.rs` builds a scenario's network in named steps; `paths.rs` computes its paths.
//!
//! Host `h`'s NIC is link `2h` and the switch port towards it `2h + 1` in every topology;
//! switch-to-switch links follow.

mod build;
#[cfg(test)]
mod described_tests;
mod paths;
#[cfg(test)]
mod pfc_file_tests;

use crate::config::{BackgroundDestination, BackgroundSource, QueueLimit, Scenario, TopologyKind};
use crate::net::{Link, SharedBuffer};
use crate::red::Red;
use paths::{Divisor, Packing, Route, Shape};

pub use crate::ids::LinkId;
pub use crate::net::pfc::Pfc;

impl std::ops::Index<LinkId> for Vec<Link> {
    type Output = Link;
    #[inline]
    fn index(&self, l: LinkId) -> &Link {
        &self[l.index()]
    }
}

impl std::ops::IndexMut<LinkId> for Vec<Link> {
    #[inline]
    fn index_mut(&mut self, l: LinkId) -> &mut Link {
        &mut self[l.index()]
    }
}

/// What a link is, for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkRole {
    /// A host's NIC queue towards its switch.
    Nic(u32),
    /// A switch egress port towards a host.
    Port(u32),
    /// A switch egress port towards another switch.
    Fabric,
}

/// A described topology's names, for naming capture points: host `h` is `hosts[h]`; the
/// i-th switch-to-switch link joins `trunks[i]`, from `.0` to `.1` as link `first_trunk + 2i`
/// and back as the next.
#[derive(Debug, Clone)]
pub struct Names {
    /// Host names, by host index.
    pub hosts: Vec<String>,
    /// The switches each switch-to-switch link joins, in file order.
    pub trunks: Vec<(String, String)>,
    /// The first switch-to-switch link.
    pub first_trunk: u32,
}

/// No shared buffer: a link's entry in [`Network::pool_of`].
const NO_POOL: u32 = u32::MAX;

/// Links and the routes over them.
#[derive(Debug)]
pub struct Network {
    /// Every link.
    pub links: Vec<Link>,
    /// What each link is.
    pub roles: Vec<LinkRole>,
    shape: Shape,
    routes: Vec<Route>,
    /// How routes are named when they are computed rather than stored in `routes`.
    packing: Option<Packing>,
    /// The links of every route, one after another.
    route_links: Vec<LinkId>,
    /// The switch port towards the receiver: the incast bottleneck.
    pub bottleneck: LinkId,
    /// Host index of the receiver.
    pub receiver: u32,
    /// The drop-tail limit reports give the switch ports towards the senders:
    /// `topology.buffer`, or on a described topology the first sender's port's.
    pub sender_port_limit: QueueLimit,
    /// Hosts built.
    pub hosts: u32,
    /// Spread placement: (switches, hosts per switch, pods) to interleave over.
    spread: Option<(u32, u32, u32)>,
    /// A described topology's or listed placement: logical host `i` is physical host `order[i]`.
    order: Vec<u32>,
    /// A described topology's names of hosts and switch-to-switch links.
    pub names: Option<Box<Names>>,
    /// The shared buffers of the switches whose ports share one.
    pub pools: Vec<SharedBuffer>,
    /// The pool each link draws on (an index into `pools`), or [`NO_POOL`].
    pool_of: Vec<u32>,
    /// RED state of each link that runs it (switch ports, when configured); empty when none.
    pub red: Vec<Option<Red>>,
    /// Host index of the background flows' sink, if they have one.
    pub sink: Option<u32>,
    /// PFC state, when the switches run it.
    pub pfc: Option<Pfc>,
    /// What runs as packets start to leave egresses (INT, egress ECN, paused time per flow),
    /// if any of it is on; the fabric takes it.
    pub egress: Option<Box<crate::net::egress::Egress>>,
}

/// Where background flow `i` from logical host `from` goes with `destination = "peers"`:
/// another of the `n` servers (an own host's flow goes to server i mod n), spread so that the
/// flows from one server go to different peers.
fn peer_of(from: u32, i: u32, n: u32) -> u32 {
    if from >= n {
        return i % n;
    }
    (from + 1 + (i / n) % (n - 1).max(1)) % n
}

/// Hosts a scenario's topology holds: every switch full, so that placement is a bijection.
pub fn host_count(sc: &Scenario) -> u32 {
    let t = &sc.topology;
    match t.kind {
        TopologyKind::Star => sc.hosts_needed(),
        TopologyKind::LeafSpine => {
            t.hosts.max(sc.hosts_needed()).div_ceil(t.hosts_per_leaf) * t.hosts_per_leaf
        }
        TopologyKind::FatTree => {
            let k = sc.fat_tree_k() as u64;
            (k * k * k / 4) as u32
        }
        TopologyKind::File => t.file.as_ref().map_or(0, |g| g.hosts.len() as u32),
    }
}

/// Logical host `i` on the topology: with `spread = (switches, per_switch, pods)`, host i
/// goes to switch j = i mod switches (interleaved so consecutive j are in different pods),
/// slot i div switches.
#[inline]
fn place(spread: Option<(u32, u32, u32)>, i: u32) -> u32 {
    let Some((switches, per, pods)) = spread else {
        return i;
    };
    let j = i % switches;
    let per_pod = switches / pods;
    let switch = (j % pods) * per_pod + j / pods;
    switch * per + i / switches
}

impl Network {
    /// The physical host of logical host `i` (servers first, then the receiver, background
    /// hosts, the sink).
    #[inline]
    pub fn host(&self, i: u32) -> u32 {
        match self.order.get(i as usize) {
            Some(&h) => h,
            None => place(self.spread, i),
        }
    }

    /// The shared buffer link `l` draws on, if its switch has one.
    #[inline]
    pub fn pool_mut(&mut self, l: LinkId) -> Option<&mut SharedBuffer> {
        match self.pool_of[l.index()] {
            NO_POOL => None,
            p => self.pools.get_mut(p as usize),
        }
    }

    /// The index of the shared buffer link `l` draws on, if its switch has one.
    #[inline]
    pub fn pool_index(&self, l: LinkId) -> Option<usize> {
        match self.pool_of[l.index()] {
            NO_POOL => None,
            p => Some(p as usize),
        }
    }

    /// The links drawing on shared buffer `p`.
    pub fn pooled(&self, p: usize) -> impl Iterator<Item = LinkId> + '_ {
        self.link_ids()
            .filter(move |l| self.pool_of[l.index()] == p as u32)
    }

    /// The host background flow `i` starts from and the host it goes to.
    pub fn background_ends(&self, sc: &Scenario, i: u32) -> (u32, u32) {
        let n = sc.topology.senders;
        let from = match sc.background.source {
            BackgroundSource::OwnHosts => n + 1 + i,
            BackgroundSource::Senders => i % n,
        };
        let to = match sc.background.destination {
            BackgroundDestination::Peers => peer_of(from, i, n),
            _ => return (self.host(from), self.sink.unwrap_or(self.receiver)),
        };
        (self.host(from), self.host(to))
    }

    /// Every link, in index order.
    pub fn link_ids(&self) -> impl Iterator<Item = LinkId> {
        (0..self.links.len() as u32).map(LinkId)
    }

    /// Whether link `l` is a switch egress port (its packets arrived over another link).
    #[inline]
    pub fn is_port(&self, l: LinkId) -> bool {
        !matches!(self.roles[l.index()], LinkRole::Nic(_))
    }

    /// Queue limit of a link.
    pub fn limit(&self, l: LinkId) -> QueueLimit {
        self.links[l].limit()
    }

    /// A short name for a link: `nic3`, `port3`, `port-receiver`, `fabric12`.
    pub fn name(&self, l: LinkId) -> String {
        match self.roles[l.index()] {
            LinkRole::Nic(h) if h == self.receiver => "nic-receiver".into(),
            LinkRole::Port(h) if h == self.receiver => "port-receiver".into(),
            LinkRole::Port(h) if Some(h) == self.sink => "port-sink".into(),
            LinkRole::Nic(h) => format!("nic{h}"),
            LinkRole::Port(h) => format!("port{h}"),
            LinkRole::Fabric => format!("fabric{}", l.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Placement;
    use crate::units::from_us;

    #[test]
    fn shaped_ports_deliver_a_burst_at_once_where_wires_serialize_it() {
        // One server answers two full segments after an idle spell long enough for every
        // bucket to refill; its NIC is a tbf with a two-frame bucket, so both leave at once.
        // A wire port serializes the request (towards the server) and both frames (towards
        // the client); a port shaped the same way, as tc tbf on a veth, delivers them at once,
        // so the block takes the pause and the RTT alone.
        let block_time = |port_burst: u64| {
            let mut sc = Scenario::example(1);
            sc.topology.link = 100_000_000;
            sc.topology.receiver_link = 100_000_000;
            sc.tcp.phy_overhead = 0;
            let frame = sc.full_frame();
            sc.topology.nic_burst = 2 * frame;
            sc.topology.port_burst = port_burst * frame;
            sc.topology.host_jitter = 0;
            sc.workload.sru = Some(2 * sc.tcp.mss);
            sc.workload.blocks = 3;
            sc.workload.think_times = vec![from_us(1000)];
            let request = sc.workload.request_size + sc.tcp.header_bytes;
            let rtt = sc.topology.rtt;
            let r = crate::Simulation::new(sc).unwrap().run().unwrap();
            (r.block_times[2], frame, request, rtt)
        };
        let ps_at_100mbps = |bytes: u64| bytes * 8 * 1_000_000_000_000 / 100_000_000;
        let (wire, frame, request, rtt) = block_time(0);
        let (shaped, ..) = block_time(2);
        assert_eq!(shaped, from_us(1000) + rtt);
        assert_eq!(wire - shaped, ps_at_100mbps(2 * frame + request));
    }

    #[test]
    fn peers_are_other_servers_and_one_servers_flows_spread_over_them() {
        let n = 5;
        for i in 0..4 * n {
            let from = i % n;
            assert_ne!(peer_of(from, i, n), from, "flow {i}");
        }
        let from_0: std::collections::HashSet<u32> = (0..4).map(|k| peer_of(0, k * n, n)).collect();
        assert_eq!(from_0.len(), 4, "four flows of server 0 go to four peers");
        // An own host's flow goes to a server.
        assert_eq!(peer_of(n + 1 + 7, 7, n), 2);
    }

    #[test]
    fn star_routes_go_nic_then_port() {
        let sc = Scenario::example(3);
        let mut n = Network::build(&sc);
        let r = n.add_route(1, 3, 0);
        assert_eq!(n.hop(r, 0), Some(LinkId(2)));
        assert_eq!(n.hop(r, 1), Some(LinkId(7)));
        assert_eq!(n.hop(r, 2), None);
        assert_eq!(n.bottleneck, LinkId(7));
        assert_eq!(n.name(LinkId(7)), "port-receiver");
        // Two 25 us hops, each serializing 1538 bytes at 1 Gbps.
        assert_eq!(n.latency(r, 1518), 2 * (25_000_000 + 12_304_000));
    }

    #[test]
    fn packed_routes_are_the_stored_ones() {
        let mut star = Scenario::example(5);
        star.topology.kind = TopologyKind::Star;
        let mut leaf_spine = Scenario::example(20);
        leaf_spine.topology.kind = TopologyKind::LeafSpine;
        leaf_spine.topology.hosts = 24;
        leaf_spine.topology.hosts_per_leaf = 4;
        leaf_spine.topology.spines = 3;
        let mut fat_tree = Scenario::example(15);
        fat_tree.topology.kind = TopologyKind::FatTree;
        fat_tree.topology.fat_tree_k = 4;
        for sc in [star, leaf_spine, fat_tree] {
            let mut packed = Network::build(&sc);
            assert!(packed.packing.is_some(), "{:?}", sc.topology.kind);
            let mut stored = Network::build(&sc);
            stored.packing = None;
            let hosts = packed.hosts;
            for (a, b) in (0..hosts).flat_map(|a| (0..hosts).map(move |b| (a, b))) {
                for path in [0, 1, 2, 5, 17, 1 << 20] {
                    let (p, s) = (packed.add_route(a, b, path), stored.add_route(a, b, path));
                    let links = |n: &Network, r| (0..8).map(|h| n.hop(r, h)).collect::<Vec<_>>();
                    assert_eq!(links(&packed, p), links(&stored, s), "{a}->{b} path {path}");
                    assert_eq!(packed.latency(p, 1518), stored.latency(s, 1518));
                }
            }
            assert!(packed.routes.is_empty() && packed.route_links.is_empty());
        }
    }

    #[test]
    fn the_receivers_port_alone_takes_receiver_buffer() {
        let run = |buffer: u64, receiver: Option<u64>| {
            let mut sc = Scenario::example(16);
            sc.workload.blocks = 3;
            sc.topology.buffer = QueueLimit::bytes(buffer);
            sc.topology.receiver_buffer = receiver.map(QueueLimit::bytes);
            crate::Simulation::new(sc).unwrap().run().unwrap().timeouts
        };
        // 16 × 256 KB answers overflow a 32 KB bottleneck, not an 8 MB one; the other ports
        // carry one sender's window each and never fill.
        assert!(run(32_000, None) > 0);
        assert_eq!(run(32_000, Some(8_000_000)), 0);
        assert!(run(8_000_000, Some(32_000)) > 0);
        assert_eq!(run(8_000_000, None), 0);
    }

    #[test]
    fn spread_placement_is_a_bijection_across_pods() {
        let mut sc = Scenario::example(3);
        sc.topology.kind = TopologyKind::FatTree;
        sc.topology.fat_tree_k = 8;
        let n = Network::build(&sc);
        let placed: std::collections::HashSet<u32> = (0..n.hosts).map(|i| n.host(i)).collect();
        assert_eq!(placed.len() as u32, n.hosts);
        assert!(placed.iter().all(|&h| h < n.hosts));
        // The first k hosts land in k different pods (16 hosts per pod).
        let pods: std::collections::HashSet<u32> = (0..8).map(|i| n.host(i) / 16).collect();
        assert_eq!(pods.len(), 8);
        assert_eq!(n.receiver, n.host(3));
    }

    fn fat_tree(k: u32) -> Network {
        let mut sc = Scenario::example(3);
        sc.topology.kind = TopologyKind::FatTree;
        sc.topology.fat_tree_k = k;
        sc.topology.placement = Placement::Packed;
        Network::build(&sc)
    }

    /// Walk every path between every pair: each path is connected (a link's far end is the
    /// next link's near end, checked through a map of link → (from, to) nodes), starts at
    /// the source's NIC and ends at the destination's port; distinct paths are distinct.
    #[test]
    fn fat_tree_paths_are_connected_and_distinct() {
        let k = 4;
        let n = fat_tree(k);
        let half = k / 2;
        assert_eq!(n.hosts, 16);
        // 16 hosts × 2 + ToR↔agg 8 × 2 × 2 + agg↔core 8 × 2 × 2.
        assert_eq!(n.links.len(), 32 + 32 + 32);
        // Nodes: host h = h; ToR t = 100 + t; agg (p, j) = 200 + p·half + j; core (j, c) =
        // 300 + j·half + c.
        let mut ends = std::collections::HashMap::new();
        for h in 0..n.hosts {
            ends.insert(2 * h, (h, 100 + h / half));
            ends.insert(2 * h + 1, (100 + h / half, h));
        }
        let Shape::FatTree { tor_up, agg_up, .. } = n.shape else {
            unreachable!()
        };
        for t in 0..k * half {
            for j in 0..half {
                let l = tor_up + 2 * (t * half + j);
                let agg = 200 + (t / half) * half + j;
                ends.insert(l, (100 + t, agg));
                ends.insert(l + 1, (agg, 100 + t));
            }
        }
        for p in 0..k {
            for j in 0..half {
                for c in 0..half {
                    let l = agg_up + 2 * ((p * half + j) * half + c);
                    ends.insert(l, (200 + p * half + j, 300 + j * half + c));
                    ends.insert(l + 1, (300 + j * half + c, 200 + p * half + j));
                }
            }
        }
        for a in 0..n.hosts {
            for b in 0..n.hosts {
                if a == b {
                    continue;
                }
                let paths = n.paths_between(a, b);
                let mut seen = std::collections::HashSet::new();
                for path in 0..paths {
                    let mut hops = Vec::new();
                    while let Some(l) = n.hop_via(a, b, path, hops.len() as u16) {
                        hops.push(l.0);
                    }
                    assert_eq!(hops.len() as u16, n.path_len(a, b));
                    assert_eq!(ends[&hops[0]].0, a);
                    assert_eq!(ends[hops.last().unwrap()].1, b);
                    for w in hops.windows(2) {
                        assert_eq!(ends[&w[0]].1, ends[&w[1]].0, "{a}->{b} path {path}");
                    }
                    assert!(seen.insert(hops), "paths differ");
                }
            }
        }
    }

    #[test]
    fn k_is_the_smallest_that_holds_the_hosts() {
        let mut sc = Scenario::example(8000);
        sc.topology.kind = TopologyKind::FatTree;
        assert_eq!(sc.fat_tree_k(), 32);
        assert_eq!(host_count(&sc), 8192);
        sc.topology.senders = 15;
        assert_eq!(sc.fat_tree_k(), 4);
    }

    #[test]
    fn an_oversubscribed_leaf_spine_has_its_own_uplink_rate_buffer_and_delay() {
        let mut sc = Scenario::example(15);
        sc.topology.kind = TopologyKind::LeafSpine;
        sc.topology.hosts_per_leaf = 8;
        sc.topology.spines = 2;
        sc.topology.uplink = 2_000_000_000; // 8 × 1 Gbps over 2 × 2 Gbps: 2:1
        sc.topology.fabric_buffer = Some(QueueLimit::bytes(256_000));
        sc.topology.fabric_delay = from_us(5);
        let n = Network::build(&sc);
        let fabric: Vec<&Link> = n
            .link_ids()
            .filter(|&l| n.roles[l.index()] == LinkRole::Fabric)
            .map(|l| &n.links[l])
            .collect();
        assert_eq!(fabric.len(), 2 * 2 * 2, "2 leaves × 2 spines, both ways");
        for l in fabric {
            assert_eq!((l.rate, l.delay), (2_000_000_000, from_us(5)));
            assert_eq!(l.limit(), QueueLimit::bytes(256_000));
        }
        // Host links keep the scenario's own.
        assert_eq!(n.links[0].rate, 1_000_000_000);
        assert_eq!(n.limit(LinkId(1)), QueueLimit::bytes(64_000));
        sc.topology.kind = TopologyKind::Star;
        assert_eq!(sc.validate().unwrap_err().field, "topology.uplink");
    }

    #[test]
    fn leaf_spine_crosses_one_spine() {
        let mut sc = Scenario::example(20);
        sc.topology.kind = TopologyKind::LeafSpine;
        sc.topology.hosts_per_leaf = 8;
        sc.topology.spines = 4;
        sc.topology.placement = Placement::Packed;
        let n = Network::build(&sc);
        assert_eq!(n.hosts, 24);
        assert_eq!(n.paths_between(0, 20), 4);
        assert_eq!(n.paths_between(0, 7), 1);
        // Host 0 (leaf 0) to host 20 (leaf 2) through spine 3.
        let up = 2 * 24;
        assert_eq!(n.hop_via(0, 20, 3, 1), Some(LinkId(up + 2 * 3)));
        assert_eq!(
            n.hop_via(0, 20, 3, 2),
            Some(LinkId(up + 2 * (2 * 4 + 3) + 1))
        );
        assert_eq!(n.hop_via(0, 20, 3, 3), Some(LinkId(41)));
    }
}
