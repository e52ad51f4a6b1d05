//! Topologies as links plus source routes. A packet carries its route's index and its hop;
//! forwarding is `route[hop + 1]`, never a table lookup, so new topologies (leaf-spine,
//! fat-tree) only need to build links and routes.

use crate::config::{BackgroundDestination, BackgroundSource, QueueLimit, Scenario, TopologyKind};
use crate::net::{Link, SharedBuffer};
use crate::red::Red;
use crate::rng::Rng;
use crate::units::{tx_time, SimTime};

/// Index of a link.
pub type LinkId = u32;

/// What a link is, for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkRole {
    /// A host's NIC queue towards its switch.
    Nic(u32),
    /// A switch egress port towards a host.
    Port(u32),
}

/// Links and the routes over them.
#[derive(Debug)]
pub struct Network {
    /// Every link.
    pub links: Vec<Link>,
    /// What each link is.
    pub roles: Vec<LinkRole>,
    route_links: Vec<LinkId>,
    /// (offset into `route_links`, length) of each route.
    routes: Vec<(u32, u16)>,
    /// The switch port towards the receiver: the incast bottleneck.
    pub bottleneck: LinkId,
    /// Host index of the receiver.
    pub receiver: u32,
    /// The switch's shared buffer, if its ports share one.
    pub pool: Option<SharedBuffer>,
    /// Whether each link draws on `pool`.
    pub pooled: Vec<bool>,
    /// RED state of each link that runs it (switch ports, when configured).
    pub red: Vec<Option<Red>>,
    /// Host index of the background flows' sink, if they have one.
    pub sink: Option<u32>,
    /// PFC state, when the switch runs it.
    pub pfc: Option<Pfc>,
}

/// PFC / 802.3x at the switch: bytes held per ingress (indexed by the upstream link), and the
/// pauses sent.
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

impl Network {
    /// Build the scenario's topology. Hosts `0..senders` are the servers, host `senders` the
    /// receiver, the hosts after it background senders.
    pub fn build(sc: &Scenario) -> Network {
        match sc.topology.kind {
            TopologyKind::Star => Self::star(sc),
        }
    }

    fn star(sc: &Scenario) -> Network {
        let t = &sc.topology;
        let receiver = t.senders;
        let bg = &sc.background;
        let own = if bg.source == BackgroundSource::OwnHosts {
            bg.flows
        } else {
            0
        };
        let sink = (bg.flows > 0 && bg.destination == BackgroundDestination::Sink)
            .then_some(t.senders + 1 + own);
        let hosts = t.senders + 1 + own + u32::from(sink.is_some());
        let pfc = sc.pfc_thresholds();
        // Under PFC an egress queue is bounded by the ingresses feeding it, not by a limit.
        let port_limit = if pfc.is_some() {
            QueueLimit::UNLIMITED
        } else {
            t.buffer
        };
        let delay = t.rtt / 4;
        let mut links = Vec::with_capacity(2 * hosts as usize);
        let mut roles = Vec::with_capacity(2 * hosts as usize);
        for h in 0..hosts {
            let rate = if h == receiver {
                t.receiver_link
            } else {
                t.link
            };
            links.push(Link::new(rate, delay, t.nic_buffer, sc.tcp.phy_overhead));
            roles.push(LinkRole::Nic(h));
            links.push(
                Link::new(rate, delay, port_limit, sc.tcp.phy_overhead)
                    .with_marking(t.ecn_threshold),
            );
            roles.push(LinkRole::Port(h));
        }
        let shared = t.shared_buffer.is_some();
        let pooled = roles
            .iter()
            .map(|r| shared && matches!(r, LinkRole::Port(_)))
            .collect();
        let red = roles
            .iter()
            .enumerate()
            .map(|(i, r)| match (t.red_min, r) {
                (Some(min), LinkRole::Port(_)) => Some(Red::new(
                    min,
                    t.red_max,
                    t.red_max_p,
                    t.red_weight,
                    t.red_ecn,
                    Rng::new(sc.seed, (4 << 32) + i as u64),
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
            pool: t
                .shared_buffer
                .map(|b| SharedBuffer::new(b, t.buffer_alpha)),
            pooled,
            links,
            roles,
            route_links: Vec::new(),
            routes: Vec::new(),
            bottleneck: 2 * receiver + 1,
            receiver,
        }
    }

    /// The host background flow `i` starts from and the host it goes to.
    pub fn background_ends(&self, sc: &Scenario, i: u32) -> (u32, u32) {
        let n = sc.topology.senders;
        let from = match sc.background.source {
            BackgroundSource::OwnHosts => n + 1 + i,
            BackgroundSource::Senders => i % n,
        };
        (from, self.sink.unwrap_or(self.receiver))
    }

    /// Whether link `l` is a switch egress port (its packets arrived over another link).
    #[inline]
    pub fn is_port(&self, l: LinkId) -> bool {
        matches!(self.roles[l as usize], LinkRole::Port(_))
    }

    /// Add a route from host `a` to host `b`, returning its index.
    pub fn add_route(&mut self, a: u32, b: u32) -> u32 {
        let off = self.route_links.len() as u32;
        // Star: a's NIC, then the switch port towards b.
        self.route_links.push(2 * a);
        self.route_links.push(2 * b + 1);
        self.routes.push((off, 2));
        (self.routes.len() - 1) as u32
    }

    /// The link at `hop` of `route`, or `None` past its end.
    #[inline]
    pub fn hop(&self, route: u32, hop: u16) -> Option<LinkId> {
        let (off, len) = self.routes[route as usize];
        (hop < len).then(|| self.route_links[(off + hop as u32) as usize])
    }

    /// Unloaded one-way latency of `route` for a packet of `frame` bytes.
    pub fn latency(&self, route: u32, frame: u64) -> SimTime {
        let (off, len) = self.routes[route as usize];
        (0..len as u32)
            .map(|h| {
                let l = &self.links[self.route_links[(off + h) as usize] as usize];
                l.delay + tx_time(frame + l.phy_overhead, l.rate)
            })
            .sum()
    }

    /// Queue limit of a link.
    pub fn limit(&self, l: LinkId) -> QueueLimit {
        self.links[l as usize].limit()
    }

    /// A short name for a link: `nic3`, `port3`, `port-receiver`.
    pub fn name(&self, l: LinkId) -> String {
        match self.roles[l as usize] {
            LinkRole::Nic(h) if h == self.receiver => "nic-receiver".into(),
            LinkRole::Port(h) if h == self.receiver => "port-receiver".into(),
            LinkRole::Port(h) if Some(h) == self.sink => "port-sink".into(),
            LinkRole::Nic(h) => format!("nic{h}"),
            LinkRole::Port(h) => format!("port{h}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn star_routes_go_nic_then_port() {
        let sc = Scenario::example(3);
        let mut n = Network::build(&sc);
        let r = n.add_route(1, 3);
        assert_eq!(n.hop(r, 0), Some(2));
        assert_eq!(n.hop(r, 1), Some(7));
        assert_eq!(n.hop(r, 2), None);
        assert_eq!(n.bottleneck, 7);
        assert_eq!(n.name(7), "port-receiver");
        // Two 25 us hops, each serializing 1538 bytes at 1 Gbps.
        assert_eq!(n.latency(r, 1518), 2 * (25_000_000 + 12_304_000));
    }
}
