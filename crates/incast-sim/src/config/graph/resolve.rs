//! Resolving a described topology's names to indices, checking every rule of the topology
//! alone on the way. The steps run in a fixed order, so a file with several faults always
//! gets the same one-line error.

use std::collections::{HashMap, VecDeque};

use serde_json::Value;

use super::{err, Graph, ResolvedGraph, MAX_ROUTING_STEPS};
use crate::config::{shown, ConfigError};
use crate::units::PS_PER_S;

/// A node of the graph while resolving names.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Node {
    Switch(u32),
    Host(u32),
}

/// Every node by its name.
type Nodes<'a> = HashMap<&'a str, Node>;

/// What the links say: each host's link and switch, and the switch-to-switch links as
/// (index into [`Graph::links`], switch at end `a`, switch at end `b`).
struct Wiring {
    host_link: Vec<u32>,
    host_switch: Vec<u32>,
    trunks: Vec<(u32, u32, u32)>,
}

impl Graph {
    /// Resolve names and check every rule of the topology alone: names unique, links joining
    /// known nodes with a rate, each host on exactly one link to a switch, every host able to
    /// reach every other, receiver and senders among the hosts.
    pub fn resolve(&self) -> Result<ResolvedGraph, ConfigError> {
        if self.switches.is_empty() {
            return Err(err("lists no switches; hosts meet at switches"));
        }
        if self.hosts.len() < 2 {
            return Err(err(format!(
                "lists {} host(s); a topology needs at least two",
                self.hosts.len()
            )));
        }
        let nodes = self.nodes()?;
        let Wiring {
            host_link,
            host_switch,
            trunks,
        } = self.wiring(&nodes)?;
        self.check_routable(&trunks, &host_switch)?;
        let (receiver, senders) = self.ends(&nodes)?;
        self.check_buffer_alphas()?;
        Ok(ResolvedGraph {
            host_switch,
            host_link,
            trunks,
            receiver,
            senders,
        })
    }

    /// Every switch and host by its name, each name used once.
    fn nodes(&self) -> Result<Nodes<'_>, ConfigError> {
        let mut nodes: Nodes = HashMap::new();
        let named = self
            .switches
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.as_str(), Node::Switch(i as u32)))
            .chain(
                self.hosts
                    .iter()
                    .enumerate()
                    .map(|(i, h)| (h.as_str(), Node::Host(i as u32))),
            );
        for (name, node) in named {
            if nodes.insert(name, node).is_some() {
                return Err(err(format!(
                    "the name {} is used twice; every switch and host needs its own",
                    shown(&Value::from(name))
                )));
            }
        }
        Ok(nodes)
    }

    /// The links between known nodes, each with a rate, a delay and a buffer in range: every
    /// host on exactly one link, to a switch; switches joined to other switches.
    fn wiring(&self, nodes: &Nodes) -> Result<Wiring, ConfigError> {
        let node = |what: &str, name: &str| -> Result<Node, ConfigError> {
            nodes.get(name).copied().ok_or_else(|| {
                err(format!(
                    "{what}: unknown node {}; the ends of a link are switches and hosts the file lists",
                    shown(&Value::from(name))
                ))
            })
        };
        let n_hosts = self.hosts.len();
        let mut host_link: Vec<Option<u32>> = vec![None; n_hosts];
        let mut host_switch = vec![0u32; n_hosts];
        let mut trunks = Vec::new();
        for (i, l) in self.links.iter().enumerate() {
            let what = format!("link {i} ({}–{})", l.a, l.b);
            let (a, b) = (node(&what, &l.a)?, node(&what, &l.b)?);
            if l.rate == 0 {
                return Err(err(format!("{what}: rate must be positive")));
            }
            if l.delay > PS_PER_S {
                return Err(err(format!("{what}: delay must be at most 1s")));
            }
            if l.buffer.packets == Some(0) {
                return Err(err(format!("{what}: buffer must hold at least one packet")));
            }
            match (a, b) {
                (Node::Switch(x), Node::Switch(y)) if x == y => {
                    return Err(err(format!("{what} joins {} to itself", l.a)));
                }
                (Node::Switch(x), Node::Switch(y)) => trunks.push((i as u32, x, y)),
                (Node::Host(_), Node::Host(_)) => {
                    return Err(err(format!(
                        "{what} joins two hosts; a host links to a switch"
                    )));
                }
                (Node::Host(h), Node::Switch(s)) | (Node::Switch(s), Node::Host(h)) => {
                    if let Some(first) = host_link[h as usize] {
                        return Err(err(format!(
                            "host {} has two links (links {first} and {i}); a host has exactly one, to a switch (multi-homed hosts are not modelled)",
                            self.hosts[h as usize]
                        )));
                    }
                    host_link[h as usize] = Some(i as u32);
                    host_switch[h as usize] = s;
                }
            }
        }
        let host_link = host_link
            .iter()
            .enumerate()
            .map(|(h, l)| {
                l.ok_or_else(|| {
                    err(format!(
                        "host {} has no link; every host links to one switch",
                        self.hosts[h]
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Wiring {
            host_link,
            host_switch,
            trunks,
        })
    }

    /// Routes can be set up within [`MAX_ROUTING_STEPS`], and every host reaches every other:
    /// all hosts' switches in one component.
    fn check_routable(
        &self,
        trunks: &[(u32, u32, u32)],
        host_switch: &[u32],
    ) -> Result<(), ConfigError> {
        let (s, l) = (self.switches.len() as u64, trunks.len() as u64);
        if s * (s + 2 * l) > MAX_ROUTING_STEPS {
            return Err(err(format!(
                "{s} switches and {l} switch-to-switch links are too many to route (switches × (switches + 2·links) must be at most {MAX_ROUTING_STEPS})"
            )));
        }
        let reach = self.reachable(trunks, host_switch[0]);
        if let Some(h) = (0..self.hosts.len()).find(|&h| !reach[host_switch[h] as usize]) {
            return Err(err(format!(
                "host {} (on switch {}) cannot reach host {} (on switch {}): no links join their switches",
                self.hosts[h],
                self.switches[host_switch[h] as usize].name,
                self.hosts[0],
                self.switches[host_switch[0] as usize].name
            )));
        }
        Ok(())
    }

    /// The receiver and the senders: hosts of the file, no sender twice or the receiver.
    fn ends(&self, nodes: &Nodes) -> Result<(u32, Vec<u32>), ConfigError> {
        let host = |what: &str, name: &str| -> Result<u32, ConfigError> {
            match nodes.get(name) {
                Some(Node::Host(h)) => Ok(*h),
                Some(Node::Switch(_)) => Err(err(format!(
                    "{what} {} is a switch; it must be a host",
                    shown(&Value::from(name))
                ))),
                None => Err(err(format!(
                    "{what} {} is not a host of the file",
                    shown(&Value::from(name))
                ))),
            }
        };
        let receiver = host("receiver", &self.receiver)?;
        let mut seen = vec![false; self.hosts.len()];
        let mut senders = Vec::with_capacity(self.senders.len());
        for s in &self.senders {
            let h = host("sender", s)?;
            if h == receiver {
                return Err(err(format!(
                    "sender {} is the receiver; a host cannot send to itself",
                    shown(&Value::from(s.as_str()))
                )));
            }
            if std::mem::replace(&mut seen[h as usize], true) {
                return Err(err(format!(
                    "sender {} is listed twice",
                    shown(&Value::from(s.as_str()))
                )));
            }
            senders.push(h);
        }
        Ok((receiver, senders))
    }

    /// A switch's own α for its shared buffer, where it gives one, is in range.
    fn check_buffer_alphas(&self) -> Result<(), ConfigError> {
        for (i, s) in self.switches.iter().enumerate() {
            if let Some(a) = s.buffer_alpha {
                if !(a > 0.0 && a <= 64.0) {
                    return Err(err(format!(
                        "switch {} (switch {i}): buffer_alpha must be in (0, 64], got {a}",
                        s.name
                    )));
                }
            }
        }
        Ok(())
    }

    /// Switches reachable from switch `from` over switch-to-switch links.
    fn reachable(&self, trunks: &[(u32, u32, u32)], from: u32) -> Vec<bool> {
        let s = self.switches.len();
        let mut adj = vec![Vec::new(); s];
        for &(_, a, b) in trunks {
            adj[a as usize].push(b);
            adj[b as usize].push(a);
        }
        let mut seen = vec![false; s];
        seen[from as usize] = true;
        let mut q = VecDeque::from([from]);
        while let Some(x) = q.pop_front() {
            for &y in &adj[x as usize] {
                if !std::mem::replace(&mut seen[y as usize], true) {
                    q.push_back(y);
                }
            }
        }
        seen
    }
}
