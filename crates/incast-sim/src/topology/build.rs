//! Building a scenario's network, in named steps: which host is which, the hosts' links, the
//! switch-to-switch links of the shape, then what rides on the links (shapers, jitter, shared
//! buffers, RED).

use super::{
    host_count, place, Divisor, LinkId, LinkRole, Names, Network, Packing, Pfc, Shape, NO_POOL,
};
use crate::config::{
    BackgroundDestination, BackgroundSource, Graph, Placement, QueueLimit, ResolvedGraph, Scenario,
    TopologyKind,
};
use crate::net::egress::{EcnMarking, Egress, PauseTrack};
use crate::net::pfc::{Xoff, Xon};
use crate::net::{Link, SharedBuffer};
use crate::red::Red;
use crate::rng::{Rng, Stream};
use crate::routing::Routing;

/// A described topology with its names resolved.
type Described<'a> = Option<(&'a Graph, ResolvedGraph)>;

/// Where the scenario's logical hosts sit: the physical host of each, the receiver and the
/// background flows' sink.
struct Places {
    /// Spread placement: (switches, hosts per switch, pods) to interleave over.
    spread: Option<(u32, u32, u32)>,
    /// A described topology's or listed placement: logical host `i` is physical host `order[i]`.
    order: Vec<u32>,
    receiver: u32,
    sink: Option<u32>,
}

impl Places {
    fn of(sc: &Scenario, graph: &Described, hosts: u32) -> Places {
        let t = &sc.topology;
        let bg = &sc.background;
        let own = if bg.source == BackgroundSource::OwnHosts {
            bg.flows
        } else {
            0
        };
        let sink = (bg.flows > 0 && bg.destination == BackgroundDestination::Sink)
            .then_some(t.senders + 1 + own);
        let order = match (graph, t.placement) {
            (Some((_, r)), _) => Graph::placement(r, t.senders),
            (None, Placement::Listed) => listed_order(&t.listed_hosts, t.senders),
            (None, _) => Vec::new(),
        };
        let spread = match (t.kind, t.placement) {
            (TopologyKind::Star | TopologyKind::File, _)
            | (_, Placement::Packed | Placement::Listed) => None,
            (TopologyKind::LeafSpine, Placement::Spread) => {
                Some((hosts / t.hosts_per_leaf, t.hosts_per_leaf, 1))
            }
            (TopologyKind::FatTree, Placement::Spread) => {
                let k = sc.fat_tree_k();
                Some((k * k / 2, k / 2, k))
            }
        };
        let mut places = Places {
            spread,
            order,
            receiver: 0,
            sink: None,
        };
        // The key-value store and the shuffle have no receiver of their own: host 0 stands
        // for one in reports.
        places.receiver = places.at(if sc.all_to_all() { 0 } else { t.senders });
        places.sink = sink.map(|s| places.at(s));
        places
    }

    /// The physical host of logical host `i`.
    fn at(&self, i: u32) -> u32 {
        self.order
            .get(i as usize)
            .copied()
            .unwrap_or(place(self.spread, i))
    }
}

/// Listed placement's order of physical hosts: the senders (`listed[1..=senders]`), then the
/// receiver (`listed[0]`), as logical hosts are numbered.
fn listed_order(listed: &[u32], senders: u32) -> Vec<u32> {
    let senders = &listed[1..=senders as usize];
    senders.iter().copied().chain([listed[0]]).collect()
}

/// The links built so far and what each is.
#[derive(Default)]
struct Links {
    links: Vec<Link>,
    roles: Vec<LinkRole>,
}

impl Links {
    fn push(&mut self, link: Link, role: LinkRole) {
        self.links.push(link);
        self.roles.push(role);
    }

    /// The next link's index.
    fn next(&self) -> u32 {
        self.links.len() as u32
    }
}

/// The queue limit of switch ports: `topology.buffer`, or under PFC none (an egress queue is
/// bounded by the ingresses feeding it, not by a limit).
fn port_limit(sc: &Scenario) -> QueueLimit {
    if sc.topology.pfc {
        QueueLimit::UNLIMITED
    } else {
        sc.topology.buffer
    }
}

impl Network {
    /// Build the scenario's topology. Hosts `0..senders` are the servers, host `senders` the
    /// receiver, the hosts after it background senders and their sink.
    pub fn build(sc: &Scenario) -> Network {
        let t = &sc.topology;
        let hosts = host_count(sc);
        let graph: Described = match (t.kind, t.file.as_ref()) {
            (TopologyKind::File, Some(g)) => Some((
                g,
                g.resolve().expect("validated: the topology file resolves"),
            )),
            _ => None,
        };
        let places = Places::of(sc, &graph, hosts);
        let sender_port_limit = match &graph {
            Some((g, r)) => {
                let first = (0..hosts)
                    .map(|i| places.at(i))
                    .find(|&h| h != places.receiver);
                g.links[r.host_link[first.unwrap_or(places.receiver) as usize] as usize].buffer
            }
            None => t.buffer,
        };
        let mut links = Links {
            links: Vec::with_capacity(2 * hosts as usize),
            roles: Vec::with_capacity(2 * hosts as usize),
        };
        host_links(sc, &graph, hosts, places.receiver, &mut links);
        let shape = fabric_links(sc, &graph, hosts, &mut links);
        let Links { mut links, roles } = links;
        shape_and_jitter(sc, &mut links, &roles);
        let (pools, pool_of, headroom) = shared_buffers(sc, &graph, hosts, &roles, &shape, &links);
        Network {
            sink: places.sink,
            pfc: t.pfc.then(|| pfc_of(sc, &graph, &links, headroom)),
            red: red_of(sc, &roles),
            egress: egress_of(sc, &graph, &shape, hosts, &roles),
            pools,
            pool_of,
            names: names_of(&graph, hosts),
            links,
            roles,
            packing: Packing::of(&shape, hosts),
            shape,
            routes: Vec::new(),
            route_links: Vec::new(),
            bottleneck: LinkId(2 * places.receiver + 1),
            receiver: places.receiver,
            sender_port_limit,
            hosts,
            spread: places.spread,
            order: places.order,
        }
    }
}

/// Every host's NIC (link `2h`) and the switch port towards it (`2h + 1`): the file's link
/// of the host, or the scenario's access link (the receiver's own rate and buffer).
fn host_links(sc: &Scenario, graph: &Described, hosts: u32, receiver: u32, links: &mut Links) {
    let t = &sc.topology;
    let delay = sc.link_delay();
    let port_limit = port_limit(sc);
    let phy = sc.tcp.phy_overhead;
    // A host's egress cap lets one full frame through at the line rate at least.
    let burst = t.host_rate_burst.max(sc.full_frame() + phy);
    for h in 0..hosts {
        let (rate, delay, limit) = match graph {
            Some((g, r)) => {
                let l = &g.links[r.host_link[h as usize] as usize];
                (l.rate, l.delay, if t.pfc { port_limit } else { l.buffer })
            }
            None if h == receiver => (
                t.receiver_link,
                delay,
                match t.receiver_buffer {
                    Some(own) if !t.pfc => own,
                    _ => port_limit,
                },
            ),
            None => (t.link, delay, port_limit),
        };
        let nic = Link::new(rate, delay, t.nic_buffer, phy);
        let nic = match t.host_rate_cap {
            Some(cap) => nic.with_shaper(cap.of(rate), burst),
            None => nic,
        };
        links.push(nic, LinkRole::Nic(h));
        let port = Link::new(rate, delay, limit, phy).with_marking(t.ecn_threshold);
        links.push(port, LinkRole::Port(h));
    }
}

/// The switch-to-switch links of the shape, after the hosts' links: their own rate, buffer
/// and delay where the scenario says, or the file's.
fn fabric_links(sc: &Scenario, graph: &Described, hosts: u32, links: &mut Links) -> Shape {
    let t = &sc.topology;
    let phy = sc.tcp.phy_overhead;
    let uplink = if t.uplink > 0 { t.uplink } else { t.link };
    let fabric_limit = match t.fabric_buffer {
        Some(own) if !t.pfc => own,
        _ => port_limit(sc),
    };
    let fabric_delay = if t.fabric_delay > 0 {
        t.fabric_delay
    } else {
        sc.link_delay()
    };
    let fabric = |n: u32, links: &mut Links| {
        for _ in 0..n {
            let link =
                Link::new(uplink, fabric_delay, fabric_limit, phy).with_marking(t.ecn_threshold);
            links.push(link, LinkRole::Fabric);
        }
    };
    match t.kind {
        TopologyKind::Star => Shape::Star,
        TopologyKind::LeafSpine => {
            let per_leaf = t.hosts_per_leaf;
            let spines = if t.spines == 0 { per_leaf } else { t.spines };
            let leaves = hosts.div_ceil(per_leaf);
            let up = links.next();
            fabric(2 * leaves * spines, links);
            Shape::LeafSpine {
                per_leaf,
                spines,
                up,
                by_leaf: Divisor::new(per_leaf),
                by_spines: Divisor::new(spines),
            }
        }
        TopologyKind::FatTree => {
            let k = sc.fat_tree_k();
            let half = k / 2;
            let tors = k * half;
            let tor_up = links.next();
            fabric(2 * tors * half, links);
            let agg_up = links.next();
            fabric(2 * tors * half, links);
            Shape::FatTree {
                k,
                tor_up,
                agg_up,
                half: Divisor::new(half),
            }
        }
        TopologyKind::File => {
            let (g, r) = graph.as_ref().expect("validated: kind file has a file");
            let first = links.next();
            for &(i, _, _) in &r.trunks {
                let l = &g.links[i as usize];
                // Under PFC an egress is bounded by the ingresses feeding it, as on the
                // built-in shapes.
                let limit = if t.pfc { port_limit(sc) } else { l.buffer };
                for _ in 0..2 {
                    let link = Link::new(l.rate, l.delay, limit, phy).with_marking(t.ecn_threshold);
                    links.push(link, LinkRole::Fabric);
                }
            }
            Shape::Graph(Box::new(Routing::new(g, r, first)))
        }
    }
}

/// Token-bucket shapers on NICs and host ports, and per-link delay jitter (each link its own
/// random stream).
fn shape_and_jitter(sc: &Scenario, links: &mut [Link], roles: &[LinkRole]) {
    let t = &sc.topology;
    for (l, r) in links.iter_mut().zip(roles) {
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
}

/// PFC at every switch ingress: a buffer per ingress (`topology.buffer`, XOFF and XON as
/// given or derived) where the switch has no shared buffer, the pool's thresholds and each
/// ingress's `headroom` where it has one.
fn pfc_of(sc: &Scenario, graph: &Described, links: &[Link], headroom: Vec<u64>) -> Pfc {
    let t = &sc.topology;
    let own = match (sc.pfc_thresholds(), t.buffer.bytes) {
        (Some((xoff, xon)), Some(limit)) => (xoff, xon, limit),
        // Every switch has a shared buffer: no ingress has a buffer of its own.
        _ => (u64::MAX, 0, u64::MAX),
    };
    let xoff = t.pfc_xoff.map_or(Xoff::Dynamic(t.pfc_alpha), Xoff::Static);
    let xon = t
        .pfc_xon
        .map_or(Xon::Offset(sc.pfc_xon_offset()), Xon::Static);
    let pfc = Pfc::new(links.len(), own, (xoff, xon), headroom);
    let Some((g, r)) = graph else {
        return pfc;
    };
    // A described topology's ingress into a switch without a shared buffer has its own
    // link's buffer, and the headroom of its own rate and delay.
    let mut per = vec![(u64::MAX, 0, u64::MAX); links.len()];
    for (up, s, i) in r.ingresses() {
        let buffer = g.links[i as usize].buffer.bytes;
        if let (None, Some(buffer)) = (g.switches[s as usize].shared_buffer, buffer) {
            let link = &links[up as usize];
            let headroom = sc.pfc_headroom_of(link.rate, link.delay);
            let (xoff, xon) = sc.pfc_own_thresholds(buffer, headroom);
            per[up as usize] = (xoff, xon, buffer);
        }
    }
    pfc.with_own(per)
}

/// The hooks of packets starting to leave an egress, when any is on: INT, egress ECN marking
/// (a random stream per link), and under PFC with the fabric reported, paused time per flow.
fn egress_of(
    sc: &Scenario,
    graph: &Described,
    shape: &Shape,
    hosts: u32,
    roles: &[LinkRole],
) -> Option<Box<Egress>> {
    let t = &sc.topology;
    let links = roles.len();
    let ecn = t.ecn_kmin.map(|kmin| {
        let rngs = (0..links as u32)
            .map(|l| Rng::stream(sc.seed, Stream::EcnMark(l)))
            .collect();
        EcnMarking::new(kmin, t.ecn_kmax, t.ecn_pmax, rngs)
    });
    let track = (t.pfc && sc.reports_fabric()).then(|| {
        PauseTrack::new(match graph {
            Some((_, r)) => described_switch_of(r, hosts, links),
            None => switch_of(shape, hosts, roles),
        })
    });
    (t.int || ecn.is_some() || track.is_some()).then(|| {
        Box::new(Egress {
            int: t.int,
            int_with_packet: t.int_qlen_with_packet,
            ecn,
            track,
        })
    })
}

/// The switch each link leaves from on a built-in shape ([`NO_POOL`] for the hosts' NICs):
/// a star's one switch; leaves then spines; ToRs, aggregation switches (pod by pod), cores.
/// Links come in pairs (`2i` one way, `2i + 1` back), laid out as [`Shape`] says.
fn switch_of(shape: &Shape, hosts: u32, roles: &[LinkRole]) -> Vec<u32> {
    let mut of = vec![NO_POOL; roles.len()];
    let host_ports = |of: &mut Vec<u32>, per: u32| {
        for h in 0..hosts {
            of[2 * h as usize + 1] = h / per;
        }
    };
    match *shape {
        Shape::Star => host_ports(&mut of, hosts.max(1)),
        Shape::LeafSpine {
            per_leaf,
            spines,
            up,
            ..
        } => {
            host_ports(&mut of, per_leaf);
            let leaves = hosts.div_ceil(per_leaf);
            for p in 0..leaves * spines {
                let l = (up + 2 * p) as usize;
                of[l] = p / spines;
                of[l + 1] = leaves + p % spines;
            }
        }
        Shape::FatTree {
            k, tor_up, agg_up, ..
        } => {
            let half = k / 2;
            let (tors, aggs) = (k * half, k * half);
            host_ports(&mut of, half);
            // ToR t ↔ its pod's agg j: pair t·half + j.
            for p in 0..tors * half {
                let (t, j) = (p / half, p % half);
                let l = (tor_up + 2 * p) as usize;
                of[l] = t;
                of[l + 1] = tors + (t / half) * half + j;
            }
            // Agg (pod, j) ↔ core (j, c): pair (pod·half + j)·half + c.
            for p in 0..aggs * half {
                let (agg, c) = (p / half, p % half);
                let l = (agg_up + 2 * p) as usize;
                of[l] = tors + agg;
                of[l + 1] = tors + aggs + (agg % half) * half + c;
            }
        }
        Shape::Graph(_) => unreachable!("a described topology's switches are the file's"),
    }
    of
}

/// The switch each link of a described topology leaves from ([`NO_POOL`] for the hosts'
/// NICs): the host's switch for its port, each end of a switch-to-switch link for the
/// direction leaving it.
fn described_switch_of(r: &ResolvedGraph, hosts: u32, links: usize) -> Vec<u32> {
    let mut of = vec![NO_POOL; links];
    for (h, &s) in r.host_switch.iter().enumerate() {
        of[2 * h + 1] = s;
    }
    let first = 2 * hosts as usize;
    for (i, &(_, a, b)) in r.trunks.iter().enumerate() {
        of[first + 2 * i] = a;
        of[first + 2 * i + 1] = b;
    }
    of
}

/// Shared buffers, one per switch: of `topology.shared_buffer` bytes on a built-in shape, or
/// each described switch's own; the pool each link draws on ([`NO_POOL`] for none); and under
/// PFC each ingress's headroom, carved out of its switch's buffer (empty without PFC).
fn shared_buffers(
    sc: &Scenario,
    graph: &Described,
    hosts: u32,
    roles: &[LinkRole],
    shape: &Shape,
    links: &[Link],
) -> (Vec<SharedBuffer>, Vec<u32>, Vec<u64>) {
    let t = &sc.topology;
    let Some((g, r)) = graph else {
        let Some(total) = t.shared_buffer else {
            return (Vec::new(), vec![NO_POOL; roles.len()], Vec::new());
        };
        let pool_of = switch_of(shape, hosts, roles);
        let switches = pool_of
            .iter()
            .filter(|&&p| p != NO_POOL)
            .max()
            .map_or(0, |&m| m + 1);
        let mut carved = vec![0u64; switches as usize];
        let mut headroom = Vec::new();
        if t.pfc {
            // Link `up` enters the switch its reverse (`up ^ 1`) leaves from.
            headroom = (0..links.len())
                .map(|up| match pool_of[up ^ 1] {
                    NO_POOL => 0,
                    s => {
                        let h = sc.pfc_headroom_of(links[up].rate, links[up].delay);
                        carved[s as usize] += h;
                        h
                    }
                })
                .collect();
        }
        let pools = carved
            .iter()
            .map(|&c| SharedBuffer::new(total.saturating_sub(c), t.buffer_alpha))
            .collect();
        return (pools, pool_of, headroom);
    };
    let mut pools = Vec::new();
    let mut pool_of = vec![NO_POOL; roles.len()];
    let first = 2 * hosts;
    // Under PFC each ingress into a switch with a shared buffer has a headroom of its own
    // link's rate and delay, carved out of the switch's buffer.
    let mut carved = vec![0u64; g.switches.len()];
    let mut headroom = Vec::new();
    if t.pfc {
        headroom = vec![0; links.len()];
        for (up, s, _) in r.ingresses() {
            if g.switches[s as usize].shared_buffer.is_some() {
                let link = &links[up as usize];
                let h = sc.pfc_headroom_of(link.rate, link.delay);
                headroom[up as usize] = h;
                carved[s as usize] += h;
            }
        }
    }
    for (s, sw) in g.switches.iter().enumerate() {
        let Some(total) = sw.shared_buffer else {
            continue;
        };
        let id = pools.len() as u32;
        pools.push(SharedBuffer::new(
            total.saturating_sub(carved[s]),
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
    (pools, pool_of, headroom)
}

/// A described topology's names of hosts and switch-to-switch links, for capture points.
fn names_of(graph: &Described, hosts: u32) -> Option<Box<Names>> {
    graph.as_ref().map(|(g, r)| {
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
    })
}

/// RED on every switch port (towards hosts and towards switches) when configured, each with
/// its own random stream.
fn red_of(sc: &Scenario, roles: &[LinkRole]) -> Vec<Option<Red>> {
    let t = &sc.topology;
    if t.red_min.is_none() {
        // No link runs RED: no table, so a packet's arrival reads no cold entry of one (on
        // an 8192-host fat tree, 49,000 links' worth).
        return Vec::new();
    }
    roles
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
        .collect()
}
