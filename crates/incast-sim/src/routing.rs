//! Routes over a described topology (`topology.kind = "file"`): shortest paths by hop count,
//! with ECMP over every next hop that lies on one, chosen per flow.
//!
//! Set-up does all the searching: a breadth-first search from every switch gives the hops
//! between any two switches, and each switch keeps its links to other switches in the order
//! the file lists them. A connection's route is then one walk, done once when it is set up: at
//! a switch whose links lead to `k` neighbours one hop closer to the destination's switch, the
//! flow's path number `p` takes the `p mod k`-th of them and walks on with `p div k` (mixed
//! radix, so flows spread at every tier and the choices of successive tiers are independent).
//! Packets then follow the route's stored links: no search, no allocation per packet.
//!
//! The path number is the one every connection draws from its own random stream (per-flow
//! ECMP, both directions alike), so routes are deterministic from the seed. A leaf that lists
//! its spines in order takes spine `p mod spines`, the built-in leaf-spine's choice; a fat
//! tree's ToR and aggregation switches listed in order take the built-in fat tree's.

use crate::config::{Graph, ResolvedGraph};
use crate::ids::LinkId;

/// Distance between two switches that no links join.
const FAR: u16 = u16::MAX;

/// Shortest-path routing over a described topology's switches.
#[derive(Debug, Clone)]
pub struct Routing {
    switches: u32,
    /// Switch of each host.
    host_switch: Vec<u32>,
    /// Hops from switch `s` to switch `t` at `s · switches + t`.
    dist: Vec<u16>,
    /// Each switch's links to other switches, (link, switch it leads to), in file order: the
    /// links of switch `s` are `out[out_start[s] .. out_start[s + 1]]`.
    out: Vec<(LinkId, u32)>,
    out_start: Vec<u32>,
}

impl Routing {
    /// Distances and neighbour lists of `g`'s switches; switch-to-switch link `i` (in file
    /// order) is the pair of links `first_trunk + 2i` (end a → end b) and `+ 1` (b → a).
    pub fn new(g: &Graph, r: &ResolvedGraph, first_trunk: u32) -> Routing {
        let s = g.switches.len();
        let mut per: Vec<Vec<(LinkId, u32)>> = vec![Vec::new(); s];
        for (i, &(_, a, b)) in r.trunks.iter().enumerate() {
            let up = first_trunk + 2 * i as u32;
            per[a as usize].push((LinkId(up), b));
            per[b as usize].push((LinkId(up + 1), a));
        }
        let mut out_start = Vec::with_capacity(s + 1);
        let mut out = Vec::new();
        for links in &per {
            out_start.push(out.len() as u32);
            out.extend_from_slice(links);
        }
        out_start.push(out.len() as u32);
        let mut routing = Routing {
            switches: s as u32,
            host_switch: r.host_switch.clone(),
            dist: vec![FAR; s * s],
            out,
            out_start,
        };
        let mut queue = Vec::with_capacity(s);
        for from in 0..s as u32 {
            routing.search(from, &mut queue);
        }
        routing
    }

    /// Breadth-first search from switch `from`, filling its row of `dist`.
    fn search(&mut self, from: u32, queue: &mut Vec<u32>) {
        let row = (from * self.switches) as usize;
        self.dist[row + from as usize] = 0;
        queue.clear();
        queue.push(from);
        let mut head = 0;
        while head < queue.len() {
            let x = queue[head];
            head += 1;
            let d = self.dist[row + x as usize];
            let (a, b) = (self.out_start[x as usize], self.out_start[x as usize + 1]);
            for &(_, y) in &self.out[a as usize..b as usize] {
                let slot = &mut self.dist[row + y as usize];
                if *slot == FAR {
                    *slot = d + 1;
                    queue.push(y);
                }
            }
        }
    }

    fn neighbours(&self, s: u32) -> &[(LinkId, u32)] {
        let (a, b) = (self.out_start[s as usize], self.out_start[s as usize + 1]);
        &self.out[a as usize..b as usize]
    }

    /// Hops between switches `s` and `t` (links between them are symmetric).
    #[inline]
    fn hops(&self, s: u32, t: u32) -> u16 {
        self.dist[(s * self.switches + t) as usize]
    }

    /// Links on every shortest path from host `a` to host `b`: the NIC, the switch-to-switch
    /// hops, the port towards `b`.
    pub fn path_len(&self, a: u32, b: u32) -> u16 {
        2 + self.hops(self.host_switch[a as usize], self.host_switch[b as usize])
    }

    /// Call `each` with every link of the route from host `a` to host `b` on path number
    /// `path`, in order.
    pub fn walk(&self, a: u32, b: u32, mut path: u32, mut each: impl FnMut(LinkId)) {
        each(LinkId(2 * a));
        let target = self.host_switch[b as usize];
        let mut at = self.host_switch[a as usize];
        while at != target {
            let closer = self.hops(at, target) - 1;
            let next = || {
                self.neighbours(at)
                    .iter()
                    .filter(|&&(_, y)| self.hops(y, target) == closer)
            };
            let k = next().count() as u32;
            let (link, y) = *next()
                .nth((path % k) as usize)
                .expect("validated: every host reaches every other");
            path /= k;
            each(link);
            at = y;
        }
        each(LinkId(2 * b + 1));
    }

    /// Distinct routes from host `a` to host `b` (shortest paths through distinct links).
    pub fn paths_between(&self, a: u32, b: u32) -> u64 {
        let target = self.host_switch[b as usize];
        // Paths from each switch, filled in order of distance to the target.
        let mut order: Vec<u32> = (0..self.switches)
            .filter(|&s| self.hops(s, target) != FAR)
            .collect();
        order.sort_by_key(|&s| self.hops(s, target));
        let mut count = vec![0u64; self.switches as usize];
        count[target as usize] = 1;
        for &s in &order[1..] {
            let d = self.hops(s, target);
            count[s as usize] = self
                .neighbours(s)
                .iter()
                .filter(|&&(_, y)| self.hops(y, target) == d - 1)
                .fold(0u64, |n, &(_, y)| n.saturating_add(count[y as usize]));
        }
        count[self.host_switch[a as usize] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{GraphLink, GraphSwitch, QueueLimit};

    /// Hosts h0, h1 on switch s and h2 on switch t, joined by two parallel trunks (links
    /// `first`..`first + 3`, each a pair). Networks built from described topologies are tested
    /// in `topology/described_tests.rs`.
    #[test]
    fn a_flow_takes_the_trunk_its_path_number_picks_and_counts_every_parallel_one() {
        let link = |a: &str, b: &str| GraphLink {
            a: a.into(),
            b: b.into(),
            rate: 1_000_000_000,
            delay: 1_000_000,
            buffer: QueueLimit::bytes(64_000),
        };
        let switch = |name: &str| GraphSwitch {
            name: name.into(),
            shared_buffer: None,
            buffer_alpha: None,
        };
        let g = Graph {
            switches: vec![switch("s"), switch("t")],
            hosts: vec!["h0".into(), "h1".into(), "h2".into()],
            links: vec![
                link("h0", "s"),
                link("h1", "s"),
                link("h2", "t"),
                link("s", "t"),
                link("t", "s"),
            ],
            receiver: "h2".into(),
            senders: vec!["h0".into(), "h1".into()],
        };
        let r = g.resolve().unwrap();
        let first = 2 * 3;
        let routing = Routing::new(&g, &r, first);
        let walk = |a: u32, b: u32, path: u32| {
            let mut links = Vec::new();
            routing.walk(a, b, path, |l| links.push(l));
            links
        };
        assert_eq!(
            (routing.path_len(0, 1), routing.paths_between(0, 1)),
            (2, 1)
        );
        assert_eq!(walk(0, 1, 5), [LinkId(0), LinkId(3)]);
        assert_eq!(
            (routing.path_len(0, 2), routing.paths_between(0, 2)),
            (3, 2)
        );
        // Trunk 0 is s → t as link 6; trunk 1, listed t → s, is s → t as its link 9.
        assert_eq!(walk(0, 2, 0), [LinkId(0), LinkId(6), LinkId(5)]);
        assert_eq!(walk(0, 2, 1), [LinkId(0), LinkId(9), LinkId(5)]);
        assert_eq!(walk(2, 0, 1), [LinkId(4), LinkId(8), LinkId(1)]);
    }
}
