//! Paths over the topology's shapes. On the built-in shapes a path's links are computed
//! arithmetically, hop by hop, from the links' layout (NICs and host ports interleaved, then
//! each tier's up/down pairs), so no per-pair table exists; on a described topology they come
//! from [`Routing`]'s walk. A TCP connection's route is worked out once and stored, or on a
//! built-in shape whose hosts and paths fit in 32 bits named by its ends and path
//! ([`Packing`]) and worked out as its packets walk it.

use super::{LinkId, Network};
use crate::routing::Routing;
use crate::units::{tx_time, SimTime};

/// The shape of the switches, for computing paths.
#[derive(Debug, Clone)]
pub(super) enum Shape {
    Star,
    /// `per_leaf` hosts per leaf, `spines` spines; leaf→spine links from `up`; `by_leaf` and
    /// `by_spines` divide by `per_leaf` and `spines` for [`Network::hop_via`].
    LeafSpine {
        per_leaf: u32,
        spines: u32,
        up: u32,
        by_leaf: Divisor,
        by_spines: Divisor,
    },
    /// k-ary fat tree; ToR→agg links from `tor_up`, agg→core links from `agg_up`; `half`
    /// divides by k / 2 for [`Network::hop_via`].
    FatTree {
        k: u32,
        tor_up: u32,
        agg_up: u32,
        half: Divisor,
    },
    /// A described topology: shortest paths over its switches.
    Graph(Box<Routing>),
}

/// Division of 32-bit numbers by a divisor fixed when the topology is built, as a multiply
/// and a shift: with M = ⌈2^64 / d⌉, n / d = ⌊M·n / 2^64⌋ for every 32-bit n (Lemire, Kaser
/// and Kurz, "Faster remainder by direct computation", 2019). A hardware division takes tens
/// of cycles, and a fat tree's hop computed six: ~6% of the 8000-sender NDP incast's samples.
#[derive(Debug, Clone, Copy)]
pub(super) struct Divisor {
    d: u32,
    /// ⌈2^64 / d⌉; 0 for d = 1 (2^64 does not fit), whose quotient is n.
    m: u64,
}

impl Divisor {
    /// Division by `d` (> 0).
    pub(super) fn new(d: u32) -> Divisor {
        assert!(d > 0, "a divisor of 0");
        let m = if d == 1 { 0 } else { u64::MAX / d as u64 + 1 };
        Divisor { d, m }
    }

    /// `n / d`.
    #[inline]
    pub(super) fn div(self, n: u32) -> u32 {
        if self.m == 0 {
            return n;
        }
        ((self.m as u128 * n as u128) >> 64) as u32
    }

    /// `n % d`.
    #[inline]
    pub(super) fn rem(self, n: u32) -> u32 {
        n - self.div(n) * self.d
    }
}

/// The link at `hop` from host `a` to host `b` on path `path` of a described topology: the
/// walk to the hop. Set-up and reports only (NDP, which forwards by this per packet, is
/// refused on described topologies).
#[inline(never)]
fn graph_hop(g: &Routing, a: u32, b: u32, path: u32, hop: u16) -> Option<u32> {
    let (mut i, mut found) = (0, None);
    g.walk(a, b, path, |l| {
        if i == hop {
            found = Some(l.0);
        }
        i += 1;
    });
    found
}

/// One route: where the links of the path TCP hashed it onto start in
/// [`Network::route_links`], and how many there are. Worked out once when the connection is
/// set up, so forwarding a packet is an array read.
#[derive(Debug, Clone, Copy)]
pub(super) struct Route {
    start: u32,
    len: u16,
}

/// A route named by its ends and its path, packed in the route number: `a` in the high bits,
/// then `b`, then the path. A stored route costs a packet two reads of tables of two entries
/// per connection (a million connections: 33 MB, a cache miss each at every hop), where the
/// built-in shapes' arithmetic costs a few instructions.
#[derive(Debug, Clone, Copy)]
pub(super) struct Packing {
    /// Bits of the path.
    path_bits: u32,
    /// Bits of a host (`b`; `a` above it).
    host_bits: u32,
}

/// Bits that hold every number below `n`.
fn bits_below(n: u32) -> u32 {
    u32::BITS - n.saturating_sub(1).leading_zeros()
}

impl Packing {
    /// The packing of `hosts` hosts on `shape`, if its routes are computed and fit.
    pub(super) fn of(shape: &Shape, hosts: u32) -> Option<Packing> {
        let paths = match *shape {
            Shape::Graph(_) => return None,
            Shape::Star => 1,
            Shape::LeafSpine { spines, .. } => spines,
            Shape::FatTree { k, .. } => (k / 2) * (k / 2),
        };
        let (path_bits, host_bits) = (bits_below(paths), bits_below(hosts));
        (2 * host_bits + path_bits <= u32::BITS).then_some(Packing {
            path_bits,
            host_bits,
        })
    }

    #[inline]
    fn pack(self, a: u32, b: u32, path: u32) -> u32 {
        debug_assert!(a.max(b) as u64 >> self.host_bits == 0 && path as u64 >> self.path_bits == 0);
        ((((a as u64) << self.host_bits | b as u64) << self.path_bits) | path as u64) as u32
    }

    #[inline]
    fn unpack(self, route: u32) -> (u32, u32, u32) {
        let path = route & ((1u64 << self.path_bits) - 1) as u32;
        let ends = (route as u64) >> self.path_bits;
        let b = (ends & ((1u64 << self.host_bits) - 1)) as u32;
        ((ends >> self.host_bits) as u32, b, path)
    }
}

impl Network {
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
        if let Some(p) = self.packing {
            return p.pack(a, b, path % self.paths_between(a, b));
        }
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
        if let Some(p) = self.packing {
            let (a, b, path) = p.unpack(route);
            return self.hop_via(a, b, path, hop);
        }
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
    /// The described topologies' walk is out of line so that the shapes' arithmetic inlines
    /// into the per-packet path, which asks twice per hop (the packet's link, and the next
    /// one's to warm): 2.5% fewer instructions in the 8000-sender NDP incast than the call.
    #[inline(always)]
    fn hop_index(&self, a: u32, b: u32, path: u32, hop: u16) -> Option<u32> {
        let nic = 2 * a;
        let down = 2 * b + 1;
        match self.shape {
            Shape::Graph(ref g) => graph_hop(g, a, b, path, hop),
            Shape::Star => match hop {
                0 => Some(nic),
                1 => Some(down),
                _ => None,
            },
            Shape::LeafSpine {
                spines,
                up,
                by_leaf,
                by_spines,
                ..
            } => {
                let (la, lb) = (by_leaf.div(a), by_leaf.div(b));
                if la == lb {
                    return [nic, down].get(hop as usize).copied();
                }
                let s = by_spines.rem(path);
                match hop {
                    0 => Some(nic),
                    1 => Some(up + 2 * (la * spines + s)), // leaf a → spine s
                    2 => Some(up + 2 * (lb * spines + s) + 1), // spine s → leaf b
                    3 => Some(down),
                    _ => None,
                }
            }
            Shape::FatTree {
                tor_up,
                agg_up,
                half: by_half,
                ..
            } => {
                let half = by_half.d;
                let (ta, tb) = (by_half.div(a), by_half.div(b)); // ToR indices
                if ta == tb {
                    return [nic, down].get(hop as usize).copied();
                }
                let (pa, pb) = (by_half.div(ta), by_half.div(tb)); // pods
                let agg = by_half.rem(path); // aggregation switch within the pod

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
                let core = by_half.rem(by_half.div(path)); // core j of agg's group

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
        if let Some(p) = self.packing {
            let (a, b, path) = p.unpack(route);
            let links: Vec<LinkId> = (0..self.path_len(a, b))
                .filter_map(|h| self.hop_via(a, b, path, h))
                .collect();
            return self.unloaded(&links, frame);
        }
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
}

#[cfg(test)]
mod tests {
    use super::Divisor;

    #[test]
    fn a_divisor_divides_as_the_hardware_does() {
        let mut x: u64 = 20191106;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 32) as u32
        };
        let mut divisors = vec![
            1,
            2,
            3,
            5,
            6,
            7,
            16,
            24,
            1000,
            65_537,
            u32::MAX - 1,
            u32::MAX,
        ];
        divisors.extend((0..200).map(|_| next().max(1)));
        divisors.extend((0..200).map(|_| next() % 100 + 1));
        for d in divisors {
            let by = Divisor::new(d);
            let mut ns = vec![0, 1, 2, 3, 15, 16, 17, u32::MAX - 1, u32::MAX];
            ns.extend([d - 1, d, d.saturating_add(1), d.saturating_mul(2) - 1]);
            ns.extend((0..500).map(|_| next()));
            for n in ns {
                assert_eq!((by.div(n), by.rem(n)), (n / d, n % d), "{n} / {d}");
            }
        }
    }
}
