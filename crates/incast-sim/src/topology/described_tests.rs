//! Networks built from described topologies (`topology.kind = "file"`): routes along
//! shortest paths with per-flow ECMP, the same routes and reports as the built-in shapes the
//! files describe, capture points named after the file, and each switch's shared buffer.

use std::collections::{HashMap, HashSet};

use super::{LinkId, Network};
use crate::config::{
    Graph, GraphLink, GraphSwitch, Placement, QueueLimit, Scenario, TopologyKind, WorkloadKind,
};
use crate::ids::ConnId;
use crate::rng::{Rng, Stream};
use crate::units::{from_us, SimTime};
use crate::Simulation;

fn link(a: &str, b: &str, rate: u64, delay: SimTime, buffer: u64) -> GraphLink {
    GraphLink {
        a: a.into(),
        b: b.into(),
        rate,
        delay,
        buffer: QueueLimit::bytes(buffer),
    }
}

fn switch(name: &str) -> GraphSwitch {
    GraphSwitch {
        name: name.into(),
        shared_buffer: None,
        buffer_alpha: None,
    }
}

/// Hosts `h0..` under `leaves` leaves of `per_leaf`, each leaf joined to every spine (in
/// order): the built-in leaf-spine with 1 Gbps links, 12.5 us per host link and 5 us per
/// uplink, 64 KB per host port and 256 KB per uplink port.
pub(super) fn leaf_spine(leaves: u32, per_leaf: u32, spines: u32) -> Graph {
    let hosts: Vec<String> = (0..leaves * per_leaf).map(|h| format!("h{h}")).collect();
    let mut links: Vec<GraphLink> = hosts
        .iter()
        .enumerate()
        .map(|(h, name)| {
            let leaf = format!("leaf{}", h as u32 / per_leaf);
            link(name, &leaf, 1_000_000_000, 12_500_000, 64_000)
        })
        .collect();
    for l in 0..leaves {
        for s in 0..spines {
            let (leaf, spine) = (format!("leaf{l}"), format!("spine{s}"));
            links.push(link(&leaf, &spine, 1_000_000_000, from_us(5), 256_000));
        }
    }
    let names = (0..leaves)
        .map(|l| format!("leaf{l}"))
        .chain((0..spines).map(|s| format!("spine{s}")));
    Graph {
        switches: names.map(|n| switch(&n)).collect(),
        receiver: hosts.last().cloned().unwrap(),
        senders: hosts[..hosts.len() - 1].to_vec(),
        hosts,
        links,
    }
}

pub(super) fn described(g: Graph, senders: u32) -> Scenario {
    let mut sc = Scenario::example(senders);
    sc.topology.kind = TopologyKind::File;
    sc.topology.file = Some(g);
    sc
}

fn built_in(leaves: u32, per_leaf: u32, spines: u32, senders: u32) -> Scenario {
    let mut sc = Scenario::example(senders);
    let t = &mut sc.topology;
    t.kind = TopologyKind::LeafSpine;
    t.hosts = leaves * per_leaf;
    t.hosts_per_leaf = per_leaf;
    t.spines = spines;
    t.placement = Placement::Packed;
    t.rtt = from_us(100); // 12.5 us per link over the 8 links of a cross-spine round trip
    t.fabric_delay = from_us(5);
    t.fabric_buffer = Some(QueueLimit::bytes(256_000));
    sc
}

fn route(n: &mut Network, a: u32, b: u32, path: u32) -> Vec<LinkId> {
    let r = n.add_route(a, b, path);
    (0..).map_while(|hop| n.hop(r, hop)).collect()
}

#[test]
fn a_described_leaf_spine_routes_as_the_built_in_one() {
    let sc = described(leaf_spine(3, 4, 3), 11);
    sc.validate().unwrap();
    let mut file = Network::build(&sc);
    let mut shape = Network::build(&built_in(3, 4, 3, 11));
    assert_eq!(file.links.len(), shape.links.len());
    for a in 0..12 {
        for b in (0..12).filter(|&b| b != a) {
            for path in [0, 1, 2, 5, 7, 1_000_003, u32::MAX] {
                let got = route(&mut file, a, b, path);
                assert_eq!(got, route(&mut shape, a, b, path), "{a}->{b} path {path}");
                assert_eq!(got.len() as u16, file.path_len(a, b));
            }
            assert_eq!(file.paths_between(a, b), shape.paths_between(a, b));
        }
    }
}

/// A k = 4 fat tree listed link by link (ToR–aggregation links by ToR, then
/// aggregation–core links by pod and aggregation switch) takes the built-in fat tree's
/// paths: two tiers of ECMP, the mixed-radix choice matching its agg = p mod k/2, core =
/// (p div k/2) mod k/2.
#[test]
fn a_described_fat_tree_routes_as_the_built_in_one() {
    let (k, half) = (4u32, 2u32);
    let hosts: Vec<String> = (0..16).map(|h| format!("h{h}")).collect();
    let agg = |p: u32, j: u32| format!("agg{p}.{j}");
    let core = |j: u32, c: u32| format!("core{j}.{c}");
    let mut links: Vec<GraphLink> = (0..16)
        .map(|h| link(&hosts[h], &format!("tor{}", h as u32 / half), 1, 0, 64_000))
        .collect();
    for t in 0..k * half {
        for j in 0..half {
            links.push(link(&format!("tor{t}"), &agg(t / half, j), 1, 0, 64_000));
        }
    }
    for p in 0..k {
        for j in 0..half {
            for c in 0..half {
                links.push(link(&agg(p, j), &core(j, c), 1, 0, 64_000));
            }
        }
    }
    let mut switches: Vec<GraphSwitch> =
        (0..k * half).map(|t| switch(&format!("tor{t}"))).collect();
    switches.extend((0..k * half).map(|i| switch(&agg(i / half, i % half))));
    switches.extend((0..half * half).map(|i| switch(&core(i / half, i % half))));
    let g = Graph {
        switches,
        receiver: "h15".into(),
        senders: hosts[..15].to_vec(),
        hosts,
        links,
    };
    let mut file = Network::build(&described(g, 15));
    let mut sc = Scenario::example(15);
    sc.topology.kind = TopologyKind::FatTree;
    sc.topology.fat_tree_k = k;
    sc.topology.placement = Placement::Packed;
    let mut shape = Network::build(&sc);
    assert_eq!(file.links.len(), shape.links.len());
    for a in 0..16 {
        for b in (0..16).filter(|&b| b != a) {
            assert_eq!(file.paths_between(a, b), shape.paths_between(a, b));
            for path in 0..9 {
                let got = route(&mut file, a, b, path);
                assert_eq!(got, route(&mut shape, a, b, path), "{a}->{b} path {path}");
            }
        }
    }
}

#[test]
fn a_described_leaf_spine_gives_the_built_in_ones_report() {
    let mut sc = described(leaf_spine(3, 4, 2), 11);
    sc.workload.blocks = 3;
    let file = Simulation::new(sc).unwrap().run().unwrap();
    let mut sc = built_in(3, 4, 2, 11);
    sc.workload.blocks = 3;
    let shape = Simulation::new(sc).unwrap().run().unwrap();
    assert!(file.timeouts > 0, "11 senders overflow a 64 KB port");
    assert_eq!(crate::report_json(&file), crate::report_json(&shape));
}

/// Hosts h0, h1 on switch s and h2, h3 on switch t, joined by `trunks` parallel links;
/// h3 receives.
fn two_switches(trunks: usize) -> Graph {
    let hosts: Vec<String> = (0..4).map(|h| format!("h{h}")).collect();
    let mut links: Vec<GraphLink> = (0..4)
        .map(|h| {
            link(
                &hosts[h],
                ["s", "t"][h / 2],
                1_000_000_000,
                from_us(1),
                64_000,
            )
        })
        .collect();
    links.extend((0..trunks).map(|_| link("s", "t", 1_000_000_000, from_us(1), 64_000)));
    Graph {
        switches: vec![switch("s"), switch("t")],
        receiver: "h3".into(),
        senders: hosts[..3].to_vec(),
        hosts,
        links,
    }
}

/// Two switches joined by four parallel trunks: 400 connections, each hashed by its own
/// random stream, spread over all four, and both directions of a connection take the same.
#[test]
fn ecmp_spreads_flows_over_parallel_trunks() {
    let g = two_switches(4);
    let sc = described(g, 3);
    sc.validate().unwrap();
    let mut n = Network::build(&sc);
    assert_eq!(n.paths_between(0, 3), 4);
    assert_eq!(n.paths_between(0, 1), 1);
    let mut per_trunk: HashMap<LinkId, u32> = HashMap::new();
    for c in 0..400 {
        let path = Rng::stream(sc.seed, Stream::EcmpPath(ConnId(c))).next_u64() as u32;
        let there = route(&mut n, 0, 3, path);
        let back = route(&mut n, 3, 0, path);
        assert_eq!(there.len(), 3);
        // Trunk i is links 8 + 2i (s → t) and 9 + 2i (t → s).
        assert_eq!(back[1].0, there[1].0 + 1, "both directions on one trunk");
        *per_trunk.entry(there[1]).or_default() += 1;
    }
    assert_eq!(per_trunk.len(), 4);
    // 100 expected per trunk, binomial sd 8.7: within 3.5 sd.
    assert!(
        per_trunk.values().all(|&k| (70..=130).contains(&k)),
        "{per_trunk:?}"
    );
}

/// Capture points by the file's names: a host, and a switch-to-switch direction (all
/// parallel links of it).
#[test]
fn capture_points_take_the_files_names() {
    use crate::capture::Points;
    let g = two_switches(2);
    let n = Network::build(&described(g, 3));
    let taps = Points("h2,t>s".into()).resolve(&n, 3).unwrap();
    let tapped: Vec<usize> = (0..n.links.len()).filter(|&l| taps.links[l]).collect();
    assert_eq!(tapped, [4, 9, 11], "h2's NIC and both t → s links");
    assert!(taps.hosts[2] && !taps.hosts[0]);
    let e = Points("s>u".into()).resolve(&n, 3).unwrap_err();
    assert!(e.contains("switch>switch"), "{e}");
}

/// A ring of four switches with a host each: the neighbours' hosts are one trunk away,
/// the opposite one two, over either side of the ring (two equal-cost paths); a chord
/// makes one way shorter and then it alone is taken.
#[test]
fn routes_take_the_fewest_hops_and_split_only_between_equals() {
    let hosts: Vec<String> = (0..4).map(|h| format!("h{h}")).collect();
    let mut links: Vec<GraphLink> = (0..4)
        .map(|h| {
            link(
                &hosts[h],
                &format!("s{h}"),
                1_000_000_000,
                from_us(1),
                64_000,
            )
        })
        .collect();
    for s in 0..4 {
        let (a, b) = (format!("s{s}"), format!("s{}", (s + 1) % 4));
        links.push(link(&a, &b, 1_000_000_000, from_us(1), 64_000));
    }
    let g = Graph {
        switches: (0..4).map(|s| switch(&format!("s{s}"))).collect(),
        receiver: "h3".into(),
        senders: hosts[..3].to_vec(),
        hosts,
        links,
    };
    let mut n = Network::build(&described(g.clone(), 3));
    assert_eq!(n.path_len(0, 1), 3);
    assert_eq!(n.path_len(0, 2), 4);
    assert_eq!(n.paths_between(0, 2), 2);
    let ways: HashSet<Vec<LinkId>> = (0..8).map(|p| route(&mut n, 0, 2, p)).collect();
    assert_eq!(ways.len(), 2, "s0→s1→s2 and s0→s3→s2");
    let mut g = g;
    g.links
        .push(link("s0", "s2", 1_000_000_000, from_us(1), 64_000));
    let mut n = Network::build(&described(g, 3));
    assert_eq!(n.path_len(0, 2), 3);
    let chord = LinkId(2 * 4 + 2 * 4); // the fifth trunk, s0 → s2
    for p in 0..8 {
        assert_eq!(route(&mut n, 0, 2, p), [LinkId(0), chord, LinkId(5)]);
    }
}

/// Two switches, each sharing its own buffer among its ports (the trunk's ends too): a
/// key-value cluster across them keeps each pool's books (checked by the engine's
/// invariants), and the report carries the fuller switch's peak.
#[test]
fn each_switch_keeps_its_own_shared_buffer() {
    let hosts: Vec<String> = (0..6).map(|h| format!("h{h}")).collect();
    let mut links: Vec<GraphLink> = (0..6)
        .map(|h| {
            let mut l = link(&hosts[h], ["s", "t"][h / 3], 1_000_000_000, from_us(25), 0);
            l.buffer = QueueLimit::UNLIMITED;
            l
        })
        .collect();
    let mut trunk = link("s", "t", 1_000_000_000, from_us(5), 0);
    trunk.buffer = QueueLimit::UNLIMITED;
    links.push(trunk);
    let pooled = |name: &str| GraphSwitch {
        shared_buffer: Some(200_000),
        ..switch(name)
    };
    let g = Graph {
        switches: vec![pooled("s"), pooled("t")],
        receiver: "h5".into(),
        senders: hosts[..5].to_vec(),
        hosts,
        links,
    };
    let mut sc = described(g, 6);
    sc.workload.kind = WorkloadKind::KvGets;
    sc.workload.kv_utilization = 0.4;
    sc.workload.kv_duration = crate::units::from_ms(200);
    sc.workload.kv_warmup = crate::units::from_ms(50);
    sc.validate().unwrap();
    let n = Network::build(&sc);
    assert_eq!(n.pools.len(), 2);
    // s's pool: its three host ports and the trunk's s → t end.
    let s_ports: Vec<LinkId> = n.pooled(0).collect();
    assert_eq!(s_ports, [LinkId(1), LinkId(3), LinkId(5), LinkId(12)]);
    let t_ports: Vec<LinkId> = n.pooled(1).collect();
    assert_eq!(t_ports, [LinkId(7), LinkId(9), LinkId(11), LinkId(13)]);
    let mut sim = Simulation::new(sc).unwrap();
    while !sim.step(10_000).unwrap() {
        sim.check_invariants().unwrap();
    }
    let r = sim.report();
    let kv = r.kv.as_ref().unwrap();
    assert!(kv.gets > 100);
    assert!(r.shared_buffer_max_bytes.unwrap() <= 200_000);
    assert!(r.shared_buffer_max_bytes.unwrap() > 0);
}

/// Hop distances between switches by Floyd–Warshall, to check the BFS against.
fn floyd(switches: usize, trunks: &[(usize, usize)]) -> Vec<Vec<u32>> {
    let far = u32::MAX / 4;
    let mut d = vec![vec![far; switches]; switches];
    for (s, row) in d.iter_mut().enumerate() {
        row[s] = 0;
    }
    for &(a, b) in trunks {
        d[a][b] = d[a][b].min(1);
        d[b][a] = d[b][a].min(1);
    }
    for k in 0..switches {
        for i in 0..switches {
            for j in 0..switches {
                d[i][j] = d[i][j].min(d[i][k] + d[k][j]);
            }
        }
    }
    d
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Any graph is either refused with a named error (here: a host on an island) or
    /// routed: every route starts at the source's NIC, ends at the destination's port, is
    /// connected link to link, and crosses as many trunks as the shortest path (checked
    /// against Floyd–Warshall); and a synchronized read over it completes with the
    /// engine's invariants holding. About 45 of the 64 cases are routed.
    #[test]
    fn random_graphs_are_refused_or_routed_along_shortest_paths(
        switches in 1usize..7,
        on in proptest::collection::vec(0usize..7, 2..7),
        trunks in proptest::collection::vec((0usize..7, 0usize..7), 0..16),
        path in proptest::prelude::any::<u32>(),
    ) {
        let hosts: Vec<String> = (0..on.len()).map(|h| format!("h{h}")).collect();
        // Self-loops are refused (a test of graph.rs); leave them out to route more graphs.
        let trunks: Vec<(usize, usize)> = trunks
            .iter()
            .map(|&(a, b)| (a % switches, b % switches))
            .filter(|&(a, b)| a != b)
            .collect();
        let mut links: Vec<GraphLink> = on
            .iter()
            .enumerate()
            .map(|(h, &s)| link(&hosts[h], &format!("s{}", s % switches), 1_000_000_000, from_us(5), 64_000))
            .collect();
        links.extend(trunks.iter().map(|&(a, b)| {
            link(&format!("s{a}"), &format!("s{b}"), 1_000_000_000, from_us(5), 64_000)
        }));
        let g = Graph {
            switches: (0..switches).map(|s| switch(&format!("s{s}"))).collect(),
            receiver: hosts.last().cloned().unwrap(),
            senders: hosts[..hosts.len() - 1].to_vec(),
            hosts: hosts.clone(),
            links,
        };
        let mut sc = described(g, hosts.len() as u32 - 1);
        sc.workload.sru = Some(8_000);
        sc.workload.blocks = 1;
        if let Err(e) = sc.validate() {
            proptest::prop_assert_eq!(e.field.as_str(), "topology.file");
            // A self-loop or an island is why.
            let island = {
                let d = floyd(switches, &trunks);
                on.iter().any(|&s| d[on[0] % switches][s % switches] > switches as u32)
            };
            proptest::prop_assert!(island, "{}", e);
            return Ok(());
        }
        let d = floyd(switches, &trunks);
        let h = hosts.len() as u32;
        // Each link's (from, to) node: host h is h, switch s is 100 + s.
        let mut ends = Vec::new();
        for &s in &on {
            let s = 100 + (s % switches) as u32;
            let host = ends.len() as u32 / 2;
            ends.push((host, s));
            ends.push((s, host));
        }
        for &(a, b) in &trunks {
            ends.push((100 + a as u32, 100 + b as u32));
            ends.push((100 + b as u32, 100 + a as u32));
        }
        let mut n = Network::build(&sc);
        proptest::prop_assert_eq!(n.links.len(), ends.len());
        for a in 0..h {
            for b in (0..h).filter(|&b| b != a) {
                let r = route(&mut n, a, b, path);
                proptest::prop_assert_eq!(r[0], LinkId(2 * a));
                proptest::prop_assert_eq!(*r.last().unwrap(), LinkId(2 * b + 1));
                for w in r.windows(2) {
                    proptest::prop_assert_eq!(ends[w[0].index()].1, ends[w[1].index()].0);
                }
                let hops = d[on[a as usize] % switches][on[b as usize] % switches];
                proptest::prop_assert_eq!(r.len() as u32, 2 + hops);
                proptest::prop_assert_eq!(r.len() as u16, n.path_len(a, b));
            }
        }
        let mut sim = Simulation::new(sc).unwrap();
        while !sim.step(200).unwrap() {
            proptest::prop_assert!(sim.check_invariants().is_ok());
        }
        proptest::prop_assert_eq!(sim.report().block_times.len(), 1);
    }
}
