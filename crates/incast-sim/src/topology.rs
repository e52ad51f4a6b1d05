//! Topologies: links, and paths computed from a route's ends and a path index.
//!
//! A route is a (source host, destination host) pair plus the path a TCP connection was
//! hashed onto (per-flow ECMP); NDP picks a path per packet instead. On the built-in shapes
//! the links of a path are computed arithmetically, hop by hop, so no per-pair table exists
//! and memory grows with the hosts and links, not with their square; on a described topology
//! ([`crate::routing`]) they come from a walk over switch distances found at set-up. Either
//! way a TCP connection's route is worked out once and stored, so forwarding is an array read.
//!
//! Host `h`'s NIC is link `2h` and the switch port towards it `2h + 1` in every topology;
//! switch-to-switch links follow.

use crate::config::{
    BackgroundDestination, BackgroundSource, Graph, Placement, QueueLimit, Scenario, TopologyKind,
};
use crate::net::{Link, SharedBuffer};
use crate::red::Red;
use crate::rng::{Rng, Stream};
use crate::routing::Routing;
use crate::units::{tx_time, SimTime};

/// A link: a NIC or a switch port with the wire behind it, by its index in
/// [`Network::links`]. Its own type, so that a link cannot be taken for a host, a flow or an
/// endpoint (all bare integers once).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct LinkId(pub u32);

impl LinkId {
    /// Its index in [`Network::links`].
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

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

/// The shape of the switches, for computing paths.
#[derive(Debug, Clone)]
enum Shape {
    Star,
    /// `per_leaf` hosts per leaf, `spines` spines; leaf→spine links from `up`.
    LeafSpine {
        per_leaf: u32,
        spines: u32,
        up: u32,
    },
    /// k-ary fat tree; ToR→agg links from `tor_up`, agg→core links from `agg_up`.
    FatTree {
        k: u32,
        tor_up: u32,
        agg_up: u32,
    },
    /// A described topology: shortest paths over its switches.
    Graph(Box<Routing>),
}

/// One route: where the links of the path TCP hashed it onto start in
/// [`Network::route_links`], and how many there are. Worked out once when the connection is
/// set up, so forwarding a packet is an array read.
#[derive(Debug, Clone, Copy)]
struct Route {
    start: u32,
    len: u16,
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
    /// A described topology's placement: logical host `i` is physical host `order[i]`.
    order: Vec<u32>,
    /// A described topology's names of hosts and switch-to-switch links.
    pub names: Option<Box<Names>>,
    /// The shared buffers of the switches whose ports share one.
    pub pools: Vec<SharedBuffer>,
    /// The pool each link draws on (an index into `pools`), or [`NO_POOL`].
    pool_of: Vec<u32>,
    /// RED state of each link that runs it (switch ports, when configured).
    pub red: Vec<Option<Red>>,
    /// Host index of the background flows' sink, if they have one.
    pub sink: Option<u32>,
    /// PFC state, when the switches run it.
    pub pfc: Option<Pfc>,
}

/// PFC / 802.3x at the switches: bytes held per ingress (indexed by the upstream link), and
/// the pauses sent.
#[derive(Debug)]
pub struct Pfc {
    /// Pause the upstream link when its ingress holds this many bytes.
    pub xoff: u64,
    /// Resume it when they fall to this.
    pub xon: u64,
    /// Bytes an ingress may hold at all (XOFF plus headroom); beyond it a frame is dropped.
    pub limit: u64,
    /// Bytes in the switch that arrived over each link.
    pub ingress: Vec<u64>,
    /// Whether the switch has paused each link (and not yet resumed it).
    pub paused: Vec<bool>,
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
    /// Build the scenario's topology. Hosts `0..senders` are the servers, host `senders` the
    /// receiver, the hosts after it background senders and their sink.
    pub fn build(sc: &Scenario) -> Network {
        let t = &sc.topology;
        let bg = &sc.background;
        let own = if bg.source == BackgroundSource::OwnHosts {
            bg.flows
        } else {
            0
        };
        let sink = (bg.flows > 0 && bg.destination == BackgroundDestination::Sink)
            .then_some(t.senders + 1 + own);
        let hosts = host_count(sc);
        let graph = match (t.kind, t.file.as_ref()) {
            (TopologyKind::File, Some(g)) => Some((
                g,
                g.resolve().expect("validated: the topology file resolves"),
            )),
            _ => None,
        };
        let order = graph
            .as_ref()
            .map_or_else(Vec::new, |(_, r)| Graph::placement(r, t.senders));
        let spread = match (t.kind, t.placement) {
            (TopologyKind::Star | TopologyKind::File, _) | (_, Placement::Packed) => None,
            (TopologyKind::LeafSpine, Placement::Spread) => {
                Some((hosts / t.hosts_per_leaf, t.hosts_per_leaf, 1))
            }
            (TopologyKind::FatTree, Placement::Spread) => {
                let k = sc.fat_tree_k();
                Some((k * k / 2, k / 2, k))
            }
        };
        // The key-value store and the shuffle have no receiver of their own: host 0 stands for
        // one in reports.
        let at = |i: u32| order.get(i as usize).copied().unwrap_or(place(spread, i));
        let receiver = if sc.all_to_all() {
            at(0)
        } else {
            at(t.senders)
        };
        let sink = sink.map(at);
        let sender_port_limit = match &graph {
            Some((g, r)) => {
                let first = (0..hosts).map(at).find(|&h| h != receiver);
                g.links[r.host_link[first.unwrap_or(receiver) as usize] as usize].buffer
            }
            None => t.buffer,
        };
        let delay = sc.link_delay();
        let pfc = sc.pfc_thresholds();
        // Under PFC an egress queue is bounded by the ingresses feeding it, not by a limit.
        let port_limit = if pfc.is_some() {
            QueueLimit::UNLIMITED
        } else {
            t.buffer
        };
        let mut links = Vec::with_capacity(2 * hosts as usize);
        let mut roles = Vec::with_capacity(2 * hosts as usize);
        let phy = sc.tcp.phy_overhead;
        // A host's egress cap lets one full frame through at the line rate at least.
        let burst = t.host_rate_burst.max(sc.full_frame() + phy);
        for h in 0..hosts {
            let (rate, delay, limit) = match &graph {
                Some((g, r)) => {
                    let l = &g.links[r.host_link[h as usize] as usize];
                    (l.rate, l.delay, l.buffer)
                }
                None if h == receiver => (
                    t.receiver_link,
                    delay,
                    match t.receiver_buffer {
                        Some(own) if pfc.is_none() => own,
                        _ => port_limit,
                    },
                ),
                None => (t.link, delay, port_limit),
            };
            let nic = Link::new(rate, delay, t.nic_buffer, phy);
            links.push(match t.host_rate_cap {
                Some(cap) => nic.with_shaper(cap.of(rate), burst),
                None => nic,
            });
            roles.push(LinkRole::Nic(h));
            links.push(Link::new(rate, delay, limit, phy).with_marking(t.ecn_threshold));
            roles.push(LinkRole::Port(h));
        }
        // Switch-to-switch links: their own rate, buffer and delay where the scenario says.
        let uplink = if t.uplink > 0 { t.uplink } else { t.link };
        let fabric_limit = match t.fabric_buffer {
            Some(own) if pfc.is_none() => own,
            _ => port_limit,
        };
        let fabric_delay = if t.fabric_delay > 0 {
            t.fabric_delay
        } else {
            delay
        };
        let mut fabric = |n: u32, links: &mut Vec<Link>| {
            for _ in 0..n {
                links.push(
                    Link::new(uplink, fabric_delay, fabric_limit, phy)
                        .with_marking(t.ecn_threshold),
                );
                roles.push(LinkRole::Fabric);
            }
        };
        let shape = match t.kind {
            TopologyKind::Star => Shape::Star,
            TopologyKind::LeafSpine => {
                let per_leaf = t.hosts_per_leaf;
                let spines = if t.spines == 0 { per_leaf } else { t.spines };
                let leaves = hosts.div_ceil(per_leaf);
                let up = links.len() as u32;
                fabric(2 * leaves * spines, &mut links);
                Shape::LeafSpine {
                    per_leaf,
                    spines,
                    up,
                }
            }
            TopologyKind::FatTree => {
                let k = sc.fat_tree_k();
                let half = k / 2;
                let tors = k * half;
                let tor_up = links.len() as u32;
                fabric(2 * tors * half, &mut links);
                let agg_up = links.len() as u32;
                fabric(2 * tors * half, &mut links);
                Shape::FatTree { k, tor_up, agg_up }
            }
            TopologyKind::File => {
                let (g, r) = graph.as_ref().expect("validated: kind file has a file");
                let first = links.len() as u32;
                for &(i, _, _) in &r.trunks {
                    let l = &g.links[i as usize];
                    for _ in 0..2 {
                        links.push(
                            Link::new(l.rate, l.delay, l.buffer, phy).with_marking(t.ecn_threshold),
                        );
                        roles.push(LinkRole::Fabric);
                    }
                }
                Shape::Graph(Box::new(Routing::new(g, r, first)))
            }
        };
        for (l, r) in links.iter_mut().zip(&roles) {
            match r {
                LinkRole::Nic(_) => l.set_burst(t.nic_burst),
                LinkRole::Port(_) => l.set_burst(t.port_burst),
                LinkRole::Fabric => {}
            }
        }
        if t.link_jitter > 0 {
            for (i, l) in links.iter_mut().enumerate() {
                l.set_jitter(
                    t.link_jitter,
                    Rng::stream(sc.seed, Stream::LinkJitter(i as u32)),
                );
            }
        }
        // Shared buffers: the star's one switch, or each described switch that has one.
        let mut pools = Vec::new();
        let mut pool_of = vec![NO_POOL; links.len()];
        if let Some(total) = t.shared_buffer {
            pools.push(SharedBuffer::new(total, t.buffer_alpha));
            for (p, r) in pool_of.iter_mut().zip(&roles) {
                if matches!(r, LinkRole::Port(_)) {
                    *p = 0;
                }
            }
        }
        let names = graph.as_ref().map(|(g, r)| {
            let trunk = |i: u32| &g.links[i as usize];
            Box::new(Names {
                hosts: g.hosts.clone(),
                trunks: r
                    .trunks
                    .iter()
                    .map(|&(i, _, _)| (trunk(i).a.clone(), trunk(i).b.clone()))
                    .collect(),
                first_trunk: 2 * hosts,
            })
        });
        if let (Some((g, r)), Shape::Graph(_)) = (&graph, &shape) {
            let first = 2 * hosts;
            for (s, sw) in g.switches.iter().enumerate() {
                let Some(total) = sw.shared_buffer else {
                    continue;
                };
                let id = pools.len() as u32;
                pools.push(SharedBuffer::new(
                    total,
                    sw.buffer_alpha.unwrap_or(t.buffer_alpha),
                ));
                // Its egress ports: towards its hosts, and its ends of switch-to-switch links.
                for (h, &on) in r.host_switch.iter().enumerate() {
                    if on as usize == s {
                        pool_of[2 * h + 1] = id;
                    }
                }
                for (i, &(_, a, b)) in r.trunks.iter().enumerate() {
                    let up = first as usize + 2 * i;
                    if a as usize == s {
                        pool_of[up] = id;
                    }
                    if b as usize == s {
                        pool_of[up + 1] = id;
                    }
                }
            }
        }
        let red = roles
            .iter()
            .enumerate()
            .map(|(i, r)| match (t.red_min, r) {
                (Some(min), LinkRole::Port(_) | LinkRole::Fabric) => Some(Red::new(
                    min,
                    t.red_max,
                    t.red_max_p,
                    t.red_weight,
                    t.red_ecn,
                    Rng::stream(sc.seed, Stream::Red(i as u32)),
                )),
                _ => None,
            })
            .collect();
        let n_links = links.len();
        Network {
            sink,
            pfc: pfc.map(|(xoff, xon)| Pfc {
                xoff,
                xon,
                limit: t.buffer.bytes.expect("validated: PFC has a byte buffer"),
                ingress: vec![0; n_links],
                paused: vec![false; n_links],
            }),
            red,
            pools,
            pool_of,
            links,
            roles,
            shape,
            routes: Vec::new(),
            route_links: Vec::new(),
            bottleneck: LinkId(2 * receiver + 1),
            receiver,
            sender_port_limit,
            hosts,
            spread,
            order,
            names,
        }
    }

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

    /// Number of distinct paths from host `a` to host `b`.
    pub fn paths_between(&self, a: u32, b: u32) -> u32 {
        match self.shape {
            Shape::Star => 1,
            Shape::Graph(ref g) => g.paths_between(a, b).min(u32::MAX as u64) as u32,
            Shape::LeafSpine {
                per_leaf, spines, ..
            } => {
                if a / per_leaf == b / per_leaf {
                    1
                } else {
                    spines
                }
            }
            Shape::FatTree { k, .. } => {
                let half = k / 2;
                let pod = half * half;
                if a / half == b / half {
                    1
                } else if a / pod == b / pod {
                    half
                } else {
                    half * half
                }
            }
        }
    }

    /// Add a route from host `a` to host `b` on path `path` (reduced modulo the number of
    /// paths), returning its index.
    pub fn add_route(&mut self, a: u32, b: u32, path: u32) -> u32 {
        let start = self.route_links.len();
        if let Shape::Graph(g) = &self.shape {
            // Each switch on the way reduces the path number by its own fan-out.
            g.walk(a, b, path, |l| self.route_links.push(l));
        } else {
            let path = path % self.paths_between(a, b);
            while let Some(l) = self.hop_via(a, b, path, (self.route_links.len() - start) as u16) {
                self.route_links.push(l);
            }
        }
        self.routes.push(Route {
            start: start as u32,
            len: (self.route_links.len() - start) as u16,
        });
        (self.routes.len() - 1) as u32
    }

    /// Links on every path from host `a` to host `b`.
    pub fn path_len(&self, a: u32, b: u32) -> u16 {
        match self.shape {
            Shape::Star => 2,
            Shape::Graph(ref g) => g.path_len(a, b),
            Shape::LeafSpine { per_leaf, .. } => {
                if a / per_leaf == b / per_leaf {
                    2
                } else {
                    4
                }
            }
            Shape::FatTree { k, .. } => {
                let half = k / 2;
                if a / half == b / half {
                    2
                } else if a / (half * half) == b / (half * half) {
                    4
                } else {
                    6
                }
            }
        }
    }

    /// The link at `hop` of `route`, or `None` past its end.
    #[inline]
    pub fn hop(&self, route: u32, hop: u16) -> Option<LinkId> {
        let r = self.routes[route as usize];
        (hop < r.len).then(|| self.route_links[(r.start + hop as u32) as usize])
    }

    /// The link at `hop` from host `a` to host `b` on path `path`, or `None` past its end.
    #[inline]
    pub fn hop_via(&self, a: u32, b: u32, path: u32, hop: u16) -> Option<LinkId> {
        self.hop_index(a, b, path, hop).map(LinkId)
    }

    /// [`Network::hop_via`]'s arithmetic: links are laid out by role (NICs and host ports
    /// interleaved, then each tier's up/down pairs), so a hop's index is computed, not looked up.
    #[inline]
    fn hop_index(&self, a: u32, b: u32, path: u32, hop: u16) -> Option<u32> {
        let nic = 2 * a;
        let down = 2 * b + 1;
        match self.shape {
            // Set-up and reports only (NDP, which forwards by this per packet, is refused on
            // described topologies): walk to the hop.
            Shape::Graph(ref g) => {
                let (mut i, mut found) = (0, None);
                g.walk(a, b, path, |l| {
                    if i == hop {
                        found = Some(l.0);
                    }
                    i += 1;
                });
                found
            }
            Shape::Star => match hop {
                0 => Some(nic),
                1 => Some(down),
                _ => None,
            },
            Shape::LeafSpine {
                per_leaf,
                spines,
                up,
            } => {
                let (la, lb) = (a / per_leaf, b / per_leaf);
                if la == lb {
                    return [nic, down].get(hop as usize).copied();
                }
                let s = path % spines;
                match hop {
                    0 => Some(nic),
                    1 => Some(up + 2 * (la * spines + s)), // leaf a → spine s
                    2 => Some(up + 2 * (lb * spines + s) + 1), // spine s → leaf b
                    3 => Some(down),
                    _ => None,
                }
            }
            Shape::FatTree { k, tor_up, agg_up } => {
                let half = k / 2;
                let (ta, tb) = (a / half, b / half); // ToR indices
                if ta == tb {
                    return [nic, down].get(hop as usize).copied();
                }
                let (pa, pb) = (ta / half, tb / half); // pods
                let agg = path % half; // aggregation switch within the pod

                // Link ToR t ↔ its pod's agg j: 2·(t·half + j) (+1 downwards).
                let tor_link = |t: u32, j: u32| tor_up + 2 * (t * half + j);
                if pa == pb {
                    return match hop {
                        0 => Some(nic),
                        1 => Some(tor_link(ta, agg)),
                        2 => Some(tor_link(tb, agg) + 1),
                        3 => Some(down),
                        _ => None,
                    };
                }
                let core = (path / half) % half; // core j of agg's group

                // Link agg (pod p, j) ↔ core (j, c): 2·((p·half + j)·half + c) (+1 downwards).
                let agg_link = |p: u32, j: u32, c: u32| agg_up + 2 * ((p * half + j) * half + c);
                match hop {
                    0 => Some(nic),
                    1 => Some(tor_link(ta, agg)),
                    2 => Some(agg_link(pa, agg, core)),
                    3 => Some(agg_link(pb, agg, core) + 1),
                    4 => Some(tor_link(tb, agg) + 1),
                    5 => Some(down),
                    _ => None,
                }
            }
        }
    }

    /// Unloaded one-way latency of `route` for a packet of `frame` bytes.
    pub fn latency(&self, route: u32, frame: u64) -> SimTime {
        let r = self.routes[route as usize];
        let start = r.start as usize;
        self.unloaded(&self.route_links[start..start + r.len as usize], frame)
    }

    /// Unloaded one-way latency from host `a` to host `b` for a packet of `frame` bytes.
    pub fn latency_between(&self, a: u32, b: u32, frame: u64) -> SimTime {
        let links: Vec<LinkId> = (0..self.path_len(a, b))
            .filter_map(|h| self.hop_via(a, b, 0, h))
            .collect();
        self.unloaded(&links, frame)
    }

    fn unloaded(&self, links: &[LinkId], frame: u64) -> SimTime {
        links
            .iter()
            .map(|&l| {
                let l = &self.links[l];
                l.delay + tx_time(frame + l.phy_overhead, l.rate)
            })
            .sum()
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
