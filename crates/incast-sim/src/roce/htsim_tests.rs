//! What the side-by-side with Broadcom's htsim (benchmarks/htsim_peer.py) established, pinned
//! cheaply: htsim's 32:1 RoCE incast of 1 MB on its 128-host fat tree, on the same hosts, with
//! its packets, PFC thresholds and links, drains at the line rate to the microsecond htsim
//! reports (2611.04 µs), holds at the receiver's ToR port what four paused ingresses let in,
//! and pauses about as often (htsim: 1422–1538 XOFF frames over its clock-drawn path ids).
//! And the listed placement's rules.

use crate::config::{Placement, QueueLimit, Scenario, TopologyKind, Transport, WorkloadKind};
use crate::topology::Network;
use crate::units::{from_us, tx_time};

const G100: u64 = 100_000_000_000;

/// The senders htsim's gen_incast.py (seed 13) draws for 32 flows among 128 hosts, the
/// receiver (host 0) first: none shares the receiver's ToR (hosts 0–3), five its pod (0–15).
const HOSTS_128_32: [u32; 33] = [
    0, 122, 35, 60, 105, 20, 75, 98, 27, 6, 50, 22, 52, 40, 54, 44, 99, 51, 8, 66, 65, 59, 21, 67,
    7, 12, 43, 120, 61, 31, 14, 64, 95,
];

/// htsim's payload per packet; its header and ACK bytes.
const MTU: u64 = 9000;
const HEADER: u64 = 64;

/// htsim's main_roce set-up: k = 8, 100 Gbps, 1 µs links, MTU 9000 + 64 B, 64 B ACKs, PFC per
/// ingress above 135,000 B / below 108,000 B, no retransmission timer; flows of whole packets
/// (htsim sends the last one full: 1 MB is 112 packets).
fn htsim_roce() -> Scenario {
    let mut sc = Scenario::example(32);
    sc.transport = Transport::Roce;
    let t = &mut sc.topology;
    t.kind = TopologyKind::FatTree;
    t.fat_tree_k = 8;
    t.placement = Placement::Listed;
    t.listed_hosts = HOSTS_128_32.to_vec();
    t.link = G100;
    t.receiver_link = G100;
    t.link_delay = from_us(1);
    t.pfc = true;
    t.pfc_xoff = Some(135_001);
    t.pfc_xon = Some(107_999);
    t.buffer = QueueLimit::bytes(10_000_000);
    sc.tcp.phy_overhead = 0;
    sc.roce.mtu = MTU;
    sc.roce.header_bytes = HEADER;
    sc.roce.control_bytes = HEADER;
    sc.roce.rto = 0;
    sc.workload.kind = WorkloadKind::Incast;
    sc.workload.flow_size = Some(112 * MTU);
    sc
}

#[test]
fn htsim_s_32_to_1_roce_incast_drains_at_line_rate_and_pauses_as_in_htsim() {
    let r = crate::Simulation::new(htsim_roce()).unwrap().run().unwrap();
    let s = r.roce.as_ref().unwrap();
    assert_eq!((r.drops, s.retransmitted), (0, 0));
    // Every frame through the receiver's port back to back: 32 × 112 × 9064 B at 100 Gbps
    // (2598.70 µs), plus the last packet's way there and its ACK's back.
    let drain = tx_time(32 * 112 * (MTU + HEADER), G100);
    let last = r.flows.iter().map(|f| f.fct.unwrap()).max().unwrap();
    assert!(last > drain && last < drain + from_us(15), "last {last} ps");
    // htsim: 2611.04 µs.
    let htsim: u64 = 2_611_040_000;
    assert!(
        last.abs_diff(htsim) < from_us(2),
        "last {last} ps, htsim {htsim} ps"
    );
    // The receiver's ToR port is fed by its four uplinks, each paused once it holds 15 frames
    // and still receiving what was on its way during the 1 µs the pause takes (htsim: 67
    // frames; spread placement, with a sender under the same ToR, held 86).
    let frames = r.bottleneck.stats.max_bytes / (MTU + HEADER);
    assert!((4 * 15..=4 * 18).contains(&frames), "{frames} frames");
    // htsim sends 1422–1538 XOFF frames (five pinned path ids), 1494 with its id 1.
    assert!(
        (1300..=1700).contains(&r.pfc_pauses),
        "{} pauses",
        r.pfc_pauses
    );
}

#[test]
fn listed_placement_puts_the_receiver_and_each_sender_on_its_listed_host() {
    let mut sc = htsim_roce();
    sc.topology.senders = 3;
    let net = Network::build(&sc);
    assert_eq!(net.receiver, 0);
    assert_eq!([net.host(0), net.host(1), net.host(2)], [122, 35, 60]);
    assert_eq!(net.host(3), 0);
}

#[test]
fn listed_placement_is_refused_where_it_cannot_place_every_host() {
    let refused = |f: &dyn Fn(&mut Scenario), key: &str, why: &str| {
        let mut sc = htsim_roce();
        f(&mut sc);
        let e = sc.validate().unwrap_err().to_string();
        assert!(e.contains(key) && e.contains(why), "{e}");
    };
    refused(
        &|sc| sc.topology.listed_hosts.clear(),
        "topology.placement",
        "needs topology.listed_hosts",
    );
    refused(
        &|sc| sc.topology.placement = Placement::Spread,
        "topology.listed_hosts",
        "placement = \"listed\"",
    );
    refused(
        &|sc| sc.topology.listed_hosts.truncate(20),
        "topology.listed_hosts",
        "names 20 hosts, but the receiver and 32 senders need 33",
    );
    refused(
        &|sc| sc.topology.listed_hosts[5] = 128,
        "topology.listed_hosts",
        "host 128 is not on the topology (hosts 0..127)",
    );
    refused(
        &|sc| sc.topology.listed_hosts[5] = 122,
        "topology.listed_hosts",
        "host 122 is named twice",
    );
    refused(
        &|sc| sc.topology.kind = TopologyKind::Star,
        "topology.placement",
        "leaf_spine or fat_tree",
    );
    let mut sc = htsim_roce();
    sc.transport = Transport::Tcp;
    sc.background.flows = 1;
    let e = sc.validate().unwrap_err().to_string();
    assert!(e.contains("no background flows"), "{e}");
    // Fewer senders than listed use the first ones.
    let mut sc = htsim_roce();
    sc.topology.senders = 8;
    sc.validate().unwrap();
}
