//! A MapReduce shuffle's layout and copier rule, as Hadoop 0.18 and 0.20 run them.
//!
//! Of H hosts, the last M hold map outputs (map host j is host H − M + j); reducer i runs on
//! host i mod `reducer_hosts`. Slot `r·M + j` is reducer r's keep-alive connection to map
//! host j; the slot to a reducer's own host is never used (it reads those outputs locally).
//! Each reducer's copiers ask one map host for one output at a time, at most `window` hosts at
//! once (mapred.reduce.parallel.copies), going round the hosts in an order of its own (Hadoop
//! shuffles the list so that the reducers do not all hit one host first), and ask the next
//! host as soon as a fetch completes: there is no barrier between rounds.

/// Where a shuffle's reducers and map outputs are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Hosts in all, H.
    pub hosts: u32,
    /// Hosts holding map outputs, M: the last M hosts.
    pub map_hosts: u32,
    /// Reducers in all.
    pub reducers: u32,
    /// Reducer i runs on host i mod this (at least 1).
    pub reducer_hosts: u32,
}

impl Layout {
    /// The layout of `reducers` reducers on the first `reducer_hosts` of `hosts` hosts, whose
    /// last `map_hosts` hold the outputs (`reducer_hosts` of 0 is taken as 1).
    pub fn new(hosts: u32, map_hosts: u32, reducers: u32, reducer_hosts: u32) -> Layout {
        Layout {
            hosts,
            map_hosts,
            reducers,
            reducer_hosts: reducer_hosts.max(1),
        }
    }

    /// Slots, one per (reducer, map host), `r·M + j`; a reducer's own host's slot is unused.
    pub fn slots(&self) -> u32 {
        self.reducers * self.map_hosts
    }

    /// The host reducer `r` runs on.
    #[inline]
    pub fn host_of(&self, r: u32) -> u32 {
        r % self.reducer_hosts
    }

    /// The first map host, H − M.
    #[inline]
    pub fn first_map_host(&self) -> u32 {
        self.hosts.saturating_sub(self.map_hosts)
    }

    /// The index j of the map host reducer `r` runs on, if it runs on one.
    #[inline]
    pub fn own_map_host(&self, r: u32) -> Option<u32> {
        self.host_of(r).checked_sub(self.first_map_host())
    }

    /// Whether slot `s` joins its reducer to another host (so carries fetches).
    #[inline]
    pub fn used(&self, s: u32) -> bool {
        let m = self.map_hosts;
        self.own_map_host(s / m) != Some(s % m)
    }

    /// (map host, reducer's host) of slot `s`: the host of its server and of its client. The
    /// unused slot to a reducer's own host runs to the next host (it never carries data).
    #[inline]
    pub fn ends(&self, s: u32) -> (u32, u32) {
        let r = s / self.map_hosts;
        let j = s % self.map_hosts;
        let own = self.host_of(r);
        let server = self.first_map_host() + j;
        if server == own {
            ((own + 1) % self.hosts, own)
        } else {
            (server, own)
        }
    }

    /// Connections the shuffle opens (one per used slot), and the most that wait at one map
    /// host.
    pub fn connections(&self) -> (u32, u32) {
        let per_map_host =
            |b: u32| (0..self.reducers).filter(|&r| self.host_of(r) != b).count() as u32;
        let hosts = self.first_map_host()..self.hosts;
        let all = hosts.clone().map(per_map_host).sum();
        let most = hosts.map(per_map_host).max().unwrap_or(0);
        (all, most)
    }
}

/// The order in which each reducer goes round the map hosts (indices 0..M), reducer after
/// reducer, flattened: a Fisher-Yates shuffle drawn from the reducer's own stream.
/// `stream(r)` gives reducer r's draw, `draw(n)` uniform in 0..=n; so the simulator and the
/// emulator ask the hosts in the same order for the same scenario and seed.
pub fn fetch_orders<D: FnMut(u64) -> u64>(
    map_hosts: u32,
    reducers: u32,
    mut stream: impl FnMut(u32) -> D,
) -> Vec<u32> {
    let m = map_hosts;
    let mut order = Vec::with_capacity((reducers * m) as usize);
    for r in 0..reducers {
        let mut draw = stream(r);
        let from = order.len();
        order.extend(0..m);
        for i in (1..m as usize).rev() {
            let k = draw(i as u64) as usize;
            order.swap(from + i, from + k);
        }
    }
    order
}

/// Whether `order` names, for each of `reducers` reducers, each of the `map_hosts` map hosts
/// exactly once.
pub fn orders_valid(order: &[u32], map_hosts: u32, reducers: u32) -> bool {
    let m = map_hosts as usize;
    m > 0
        && order.len() == reducers as usize * m
        && order.chunks(m).all(|o| {
            let mut seen = vec![false; m];
            o.iter()
                .all(|&j| (j as usize) < m && !std::mem::replace(&mut seen[j as usize], true))
        })
}

/// A fetch that completed: its reducer, and whether that reducer now has every output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completed {
    /// The reducer.
    pub reducer: u32,
    /// It has every output it needs.
    pub finished: bool,
}

/// The reducers' copiers: what each slot and each reducer has left to fetch. Allocates
/// nothing after [`Copiers::new`].
#[derive(Debug, Clone)]
pub struct Copiers {
    map_hosts: u32,
    window: u32,
    /// Per slot: fetches still to ask.
    left: Vec<u32>,
    /// Per slot: a fetch is in flight.
    busy: Vec<bool>,
    /// Per reducer: the map hosts in the order it asks them, flattened.
    order: Vec<u32>,
    /// Per reducer: where in its order it looks next.
    cursor: Vec<u32>,
    /// Per reducer: fetches in flight.
    in_flight: Vec<u32>,
    /// Per reducer: fetches still to complete.
    remaining: Vec<u32>,
}

impl Copiers {
    /// Copiers fetching `outputs` outputs from every map host but its own for each reducer of
    /// `layout`, `window` hosts at once, in `order` (see [`fetch_orders`]).
    pub fn new(layout: &Layout, outputs: u32, window: u32, order: Vec<u32>) -> Copiers {
        let m = layout.map_hosts;
        let slots = layout.slots() as usize;
        let mut left = vec![outputs; slots];
        let mut remaining = vec![outputs * m; layout.reducers as usize];
        for r in 0..layout.reducers {
            if let Some(j) = layout.own_map_host(r) {
                // Its own host's outputs are read locally.
                left[(r * m + j) as usize] = 0;
                remaining[r as usize] -= outputs;
            }
        }
        Copiers {
            map_hosts: m,
            window,
            left,
            busy: vec![false; slots],
            order,
            cursor: vec![0; layout.reducers as usize],
            in_flight: vec![0; layout.reducers as usize],
            remaining,
        }
    }

    /// Fetches reducer `r` has still to complete.
    #[inline]
    pub fn remaining(&self, r: u32) -> u32 {
        self.remaining[r as usize]
    }

    /// Fetches every reducer has still to complete.
    pub fn outstanding(&self) -> u64 {
        self.remaining.iter().map(|&n| u64::from(n)).sum()
    }

    /// Fetches slot `s` has still to ask.
    #[inline]
    pub fn left(&self, s: u32) -> u32 {
        self.left[s as usize]
    }

    /// Whether slot `s` has a fetch in flight.
    #[inline]
    pub fn busy(&self, s: u32) -> bool {
        self.busy[s as usize]
    }

    /// Reducer `r` asks map hosts, in its order, for outputs until `window` fetches are in
    /// flight or no host free of one has outputs left; `ask(slot)` for each fetch asked.
    pub fn fill(&mut self, r: u32, mut ask: impl FnMut(u32)) {
        let m = self.map_hosts;
        let ri = r as usize;
        let mut looked = 0;
        while self.in_flight[ri] < self.window && looked < m {
            let pos = self.cursor[ri];
            self.cursor[ri] = (pos + 1) % m;
            looked += 1;
            let j = self.order[ri * m as usize + pos as usize];
            let s = r * m + j;
            let c = s as usize;
            if self.busy[c] || self.left[c] == 0 {
                continue;
            }
            self.busy[c] = true;
            self.left[c] -= 1;
            self.in_flight[ri] += 1;
            ask(s);
        }
    }

    /// The fetch in flight on slot `s` completed (call [`Copiers::fill`] for its reducer next,
    /// unless it finished).
    pub fn completed(&mut self, s: u32) -> Completed {
        let r = s / self.map_hosts;
        let ri = r as usize;
        self.busy[s as usize] = false;
        self.in_flight[ri] -= 1;
        self.remaining[ri] -= 1;
        Completed {
            reducer: r,
            finished: self.remaining[ri] == 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reducer r asks map hosts in the order r, r+1, ... (mod M).
    fn rotating(m: u32, reducers: u32) -> Vec<u32> {
        (0..reducers)
            .flat_map(|r| (0..m).map(move |j| (j + r) % m))
            .collect()
    }

    #[test]
    fn reducers_run_round_the_reducer_hosts_and_skip_their_own_map_host() {
        // 4 hosts, the last 3 map hosts, 6 reducers on hosts 0,1,2,3,0,1.
        let l = Layout::new(4, 3, 6, 4);
        assert_eq!(l.slots(), 18);
        assert_eq!(
            (0..6).map(|r| l.host_of(r)).collect::<Vec<_>>(),
            [0, 1, 2, 3, 0, 1]
        );
        assert_eq!(l.own_map_host(0), None);
        assert_eq!(l.own_map_host(1), Some(0));
        assert_eq!(l.own_map_host(3), Some(2));
        assert!(!l.used(3) && l.used(4) && l.used(0));
        // Reducer 1 on host 1: its slot 3 to itself runs to host 2 and is never used.
        assert_eq!([3, 4, 5].map(|s| l.ends(s)), [(2, 1), (2, 1), (3, 1)]);
        // Host 1 serves the 4 reducers off it, hosts 2 and 3 the 5 each.
        assert_eq!(l.connections(), (14, 5));
        assert_eq!(Layout::new(2, 1, 130, 1).connections(), (130, 130));
        // A reducer_hosts of 0 is taken as 1, so nothing divides by zero.
        assert_eq!(Layout::new(3, 1, 2, 0).host_of(1), 0);
    }

    #[test]
    fn a_reducer_on_its_only_map_host_has_nothing_to_fetch() {
        let l = Layout::new(3, 1, 3, 3);
        let c = Copiers::new(&l, 2, 1, rotating(1, 3));
        assert_eq!([0, 1, 2].map(|r| c.remaining(r)), [2, 2, 0]);
        assert_eq!((c.left(2), c.outstanding()), (0, 4));
    }

    #[test]
    fn the_window_holds_distinct_hosts_and_a_completion_frees_a_slot_for_the_next_host() {
        let l = Layout::new(5, 4, 1, 1);
        let mut c = Copiers::new(&l, 2, 2, vec![2, 0, 3, 1]);
        let mut asked = Vec::new();
        c.fill(0, |s| asked.push(s));
        assert_eq!(asked, [2, 0], "the first two hosts of its order");
        assert!(c.busy(2) && c.busy(0) && !c.busy(3));
        // Filling again asks nothing: the window is full.
        c.fill(0, |s| asked.push(s));
        assert_eq!(asked.len(), 2);
        let done = c.completed(0);
        assert_eq!(
            done,
            Completed {
                reducer: 0,
                finished: false
            }
        );
        c.fill(0, |s| asked.push(s));
        // It goes on round its order: host 3, not host 0 again.
        assert_eq!(asked, [2, 0, 3]);
    }

    #[test]
    fn fetch_orders_are_permutations_drawn_per_reducer() {
        // A draw of 0 swaps each host to the front in turn; a draw of n leaves it in place.
        let o = fetch_orders(4, 2, |r| move |n: u64| if r == 0 { 0 } else { n });
        assert_eq!(&o[4..], &[0, 1, 2, 3], "draw n keeps every host in place");
        assert_eq!(&o[..4], &[1, 2, 3, 0]);
        assert!(orders_valid(&o, 4, 2));
        assert!(!orders_valid(&[0, 0, 1, 0, 1, 2], 3, 2));
        assert!(!orders_valid(&[], 0, 0));
    }

    proptest! {
        /// Copiers always finish: every reducer gets every output from every other host,
        /// never more than `window` at once and never two at once from one host.
        #[test]
        fn every_reducer_fetches_every_output_once_within_its_window(
            hosts in 2u32..8, m_pick in 1u32..8, reducers in 1u32..10, rh in 1u32..8,
            outputs in 1u32..4, window in 1u32..5, seed in any::<u64>(),
        ) {
            let m = 1 + m_pick % hosts;
            let l = Layout::new(hosts, m, reducers, 1 + rh % hosts);
            let mut x = seed | 1;
            let order = fetch_orders(m, reducers, |_| {
                move |n: u64| { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x % (n + 1) }
            });
            prop_assert!(orders_valid(&order, m, reducers));
            let mut c = Copiers::new(&l, outputs, window, order);
            let mut flight: Vec<u32> = Vec::new();
            let mut got = vec![0u32; l.slots() as usize];
            for r in 0..reducers {
                c.fill(r, |s| flight.push(s));
            }
            while let Some(s) = flight.pop() {
                prop_assert!(l.used(s));
                let r = s / m;
                prop_assert!(flight.iter().filter(|&&f| f / m == r).count() < window as usize);
                prop_assert!(!flight.contains(&s));
                got[s as usize] += 1;
                let done = c.completed(s);
                if !done.finished {
                    c.fill(done.reducer, |s| flight.insert(0, s));
                }
            }
            prop_assert_eq!(c.outstanding(), 0);
            for s in 0..l.slots() {
                prop_assert_eq!(got[s as usize], if l.used(s) { outputs } else { 0 });
            }
        }
    }
}
