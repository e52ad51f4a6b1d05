//! RoCE runs captured: the frames at the receiver read back by hand (each data packet, ACK
//! and CNP the report counts, with its BTH, stored whole), and, where tshark is installed,
//! dissected by Wireshark as InfiniBand over UDP 4791 without a malformed frame.

use super::pcap::{aeth, roce_op};
use super::Points;
use crate::config::{QueueLimit, RoceCc, RoceRecovery, Scenario, Transport, WorkloadKind};
use crate::report::Report;

/// A 4:1 incast of 50 KB per sender over RoCE on a star, captured at the receiver into a
/// file named `name`; its report and the file's frames.
fn captured(sc: Scenario, name: &str) -> (Report, Vec<Vec<u8>>, std::path::PathBuf) {
    let path = std::env::temp_dir().join(format!("incast-{}-{name}", std::process::id()));
    let mut sim = crate::Simulation::new(sc).unwrap();
    sim.capture(path.to_str().unwrap(), &Points::default())
        .unwrap();
    while !sim.step(10_000).unwrap() {}
    let written = sim.finish_capture().unwrap().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    // pcap: a 24-byte file header, then per record 16 bytes (times, kept and full lengths).
    let mut frames = Vec::new();
    let mut at = 24;
    while at < bytes.len() {
        let kept = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        let full = u32::from_le_bytes(bytes[at + 12..at + 16].try_into().unwrap()) as usize;
        assert_eq!(kept, full, "RoCE frames are stored whole");
        frames.push(bytes[at + 16..at + 16 + kept].to_vec());
        at += 16 + kept;
    }
    assert_eq!(frames.len() as u64, written);
    (sim.report(), frames, path)
}

fn incast(cc: RoceCc) -> Scenario {
    let mut sc = Scenario::example(4);
    sc.transport = Transport::Roce;
    sc.topology.pfc = true;
    sc.topology.buffer = QueueLimit::bytes(100_000);
    sc.roce.cc = cc;
    if cc == RoceCc::Dcqcn {
        sc.topology.ecn_kmin = Some(5_000);
        sc.topology.ecn_kmax = 40_000;
        sc.topology.ecn_pmax = 0.2;
    }
    sc.workload.kind = WorkloadKind::Incast;
    sc.workload.flow_size = Some(50_000);
    sc
}

/// (BTH opcode, AETH syndrome if an acknowledgment) of each RoCEv2 frame.
fn opcodes(frames: &[Vec<u8>]) -> Vec<(u8, Option<u8>)> {
    frames
        .iter()
        .map(|f| {
            assert_eq!(&f[36..38], &4791u16.to_be_bytes(), "UDP to RoCEv2's port");
            let op = f[42];
            (op, (op == roce_op::ACKNOWLEDGE).then(|| f[54]))
        })
        .collect()
}

#[test]
fn a_roce_capture_holds_every_data_packet_ack_and_cnp_the_receiver_saw() {
    let (r, frames, path) = captured(incast(RoceCc::Dcqcn), "dcqcn.pcap");
    let s = r.roce.as_ref().unwrap();
    let ops = opcodes(&frames);
    let count = |want: &[u8]| ops.iter().filter(|(o, _)| want.contains(o)).count() as u64;
    use roce_op::*;
    // 50 packets of 1000 B per message, each delivered once (lossless), one message each.
    assert_eq!(count(&[SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_ONLY]), 200);
    assert_eq!(count(&[SEND_FIRST]), 4);
    assert_eq!(count(&[SEND_LAST]), 4);
    assert_eq!(count(&[ACKNOWLEDGE]), s.acks);
    assert!(ops
        .iter()
        .all(|&(o, a)| o != ACKNOWLEDGE || a == Some(aeth::ACK)));
    assert!(s.cnps_sent > 0);
    assert_eq!(count(&[CNP]), s.cnps_sent);
    // Data ask for an ACK at each message's end; CE marks show in the IP header.
    let last = frames.iter().filter(|f| f[42] == SEND_LAST);
    assert!(last.clone().all(|f| f[50] & 0x80 != 0));
    assert!(frames.iter().any(|f| f[42] <= SEND_ONLY && f[15] & 3 == 3));
    tshark_dissects(&path, true);
    std::fs::remove_file(path).unwrap();
}

#[test]
fn a_lossy_go_back_n_capture_shows_its_naks() {
    let mut sc = incast(RoceCc::None);
    sc.topology.pfc = false;
    sc.roce.lossless = false;
    sc.roce.recovery = RoceRecovery::GoBackN;
    sc.topology.buffer = QueueLimit::bytes(20_000);
    sc.topology.link_jitter = 200_000;
    let (r, frames, path) = captured(sc, "gbn.pcap");
    let s = r.roce.as_ref().unwrap();
    let naks = opcodes(&frames)
        .iter()
        .filter(|&&x| x == (roce_op::ACKNOWLEDGE, Some(aeth::NAK_SEQUENCE)))
        .count() as u64;
    assert!(s.naks > 0);
    assert_eq!(naks, s.naks, "every NAK leaves the receiver's NIC");
    tshark_dissects(&path, false);
    std::fs::remove_file(path).unwrap();
}

/// Where tshark is installed: every frame dissects as InfiniBand (RoCEv2) with a BTH
/// opcode, a CNP among them if `cnp`, and nothing is malformed. Without it, the frames'
/// fields were checked by hand above.
fn tshark_dissects(path: &std::path::Path, cnp: bool) {
    let run = |args: &[&str]| std::process::Command::new("tshark").args(args).output();
    let p = path.to_str().unwrap();
    let Ok(out) = run(&["-r", p, "-T", "fields", "-e", "infiniband.bth.opcode"]) else {
        eprintln!("no tshark: the capture was checked by hand only");
        return;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = String::from_utf8(out.stdout).unwrap();
    assert!(lines.lines().count() > 100);
    assert!(
        lines.lines().all(|l| !l.is_empty()),
        "every frame has a BTH"
    );
    assert_eq!(lines.lines().any(|l| l == "129"), cnp, "a CNP (0x81)");
    // Neither the summary lines (where a payload cut short shows as "[Malformed Packet]")
    // nor the expert's errors find anything wrong.
    for args in [&["-r", p][..], &["-r", p, "-q", "-z", "expert,error"]] {
        let text = String::from_utf8(run(args).unwrap().stdout).unwrap();
        assert!(!text.contains("Malformed"), "{text}");
    }
    let summary = String::from_utf8(run(&["-r", p]).unwrap().stdout).unwrap();
    assert!(summary.lines().all(|l| l.contains("RRoCE")), "{summary}");
    assert!(summary.contains("RC Send First") && summary.contains("RC Acknowledge"));
}
