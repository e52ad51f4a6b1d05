//! A replicated key-value store's gets: the connections between its hosts and what finishes
//! a get.
//!
//! Every one of the H hosts is a coordinator and a replica. Connection (a, b) carries the gets
//! coordinator a asks replica b (a ≠ b): H·(H − 1) connections, numbered coordinator after
//! coordinator. A get asks its R replicas (distinct hosts) at once and completes when
//! `quorum` replies have arrived; a replica on the coordinator itself answers locally, at once.

/// Connections of a store of `hosts` hosts: one per ordered pair (coordinator, replica).
#[inline]
pub fn connections(hosts: u32) -> u32 {
    hosts * hosts.saturating_sub(1)
}

/// The connection on which coordinator `a` asks replica `b` (a ≠ b) in a store of `hosts`.
#[inline]
pub fn conn(hosts: u32, a: u32, b: u32) -> u32 {
    debug_assert_ne!(a, b);
    a * (hosts - 1) + b - u32::from(b > a)
}

/// (replica, coordinator) of connection `c` in a store of `hosts`: the host of its server
/// and of its client.
#[inline]
pub fn ends(hosts: u32, c: u32) -> (u32, u32) {
    let a = c / (hosts - 1);
    let j = c % (hosts - 1);
    (j + u32::from(j >= a), a)
}

/// One get's replies: how many have arrived and how many it still waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replies {
    /// Replies arrived (a replica on the coordinator counts at once).
    pub arrived: u32,
    /// Remote replies still to arrive.
    pub left: u32,
}

/// What one reply did to its get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reply {
    /// This reply made the quorum: the get completes now.
    pub quorum: bool,
    /// This was the last reply: the get is closed.
    pub closed: bool,
}

impl Replies {
    /// A get by coordinator `host` of `replicas`: the local replica's reply is in at once;
    /// `ask(b)` for every remote replica b, in order.
    pub fn issue(host: u32, replicas: &[u32], mut ask: impl FnMut(u32)) -> Replies {
        let mut r = Replies {
            arrived: 0,
            left: 0,
        };
        for &b in replicas {
            if b == host {
                r.arrived += 1;
            } else {
                ask(b);
                r.left += 1;
            }
        }
        r
    }

    /// Whether the get had its quorum as soon as it was issued (from its local replica).
    pub fn complete_at_once(&self, quorum: u32) -> bool {
        self.arrived >= quorum
    }

    /// A remote reply arrived.
    pub fn arrive(&mut self, quorum: u32) -> Reply {
        self.arrived += 1;
        self.left -= 1;
        Reply {
            quorum: self.arrived == quorum,
            closed: self.left == 0,
        }
    }
}

/// The `q`-quantile of sorted `v` by nearest rank, 0 if empty: the rule every latency figure
/// of the store is reported by, simulated or real.
pub fn nearest_rank(v: &[u64], q: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    let rank = (q * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_number_every_ordered_pair_once() {
        for hosts in 2..7 {
            let mut seen = vec![false; connections(hosts) as usize];
            for a in 0..hosts {
                for b in (0..hosts).filter(|&b| b != a) {
                    let c = conn(hosts, a, b);
                    assert!(!std::mem::replace(&mut seen[c as usize], true));
                    assert_eq!(ends(hosts, c), (b, a));
                }
            }
            assert!(seen.iter().all(|&s| s));
        }
    }

    #[test]
    fn a_get_completes_at_its_quorum_and_closes_with_its_last_reply() {
        let mut asked = Vec::new();
        let mut r = Replies::issue(1, &[1, 2, 0], |b| asked.push(b));
        assert_eq!(asked, [2, 0]);
        assert!(!r.complete_at_once(2) && r.complete_at_once(1));
        assert_eq!(
            r.arrive(2),
            Reply {
                quorum: true,
                closed: false
            }
        );
        assert_eq!(
            r.arrive(2),
            Reply {
                quorum: false,
                closed: true
            }
        );
    }

    #[test]
    fn nearest_rank_takes_the_value_at_the_rank_rounded_up() {
        let v = [10, 20, 30, 40];
        assert_eq!(nearest_rank(&v, 0.5), 20);
        assert_eq!(nearest_rank(&v, 0.51), 30);
        assert_eq!(nearest_rank(&v, 0.0), 10);
        assert_eq!(nearest_rank(&v, 1.0), 40);
        assert_eq!(nearest_rank(&[], 0.5), 0);
    }
}
