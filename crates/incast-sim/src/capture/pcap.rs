//! The pcap file format (nanosecond timestamps, Ethernet link type) and the frames written
//! into it: Ethernet II, IPv4 and TCP headers as Linux would put them on the wire, UDP
//! carrying an NDP header, or RoCEv2 (UDP to port 4791 carrying InfiniBand's base transport
//! header) as an RDMA NIC sends it.
//!
//! Only headers are stored (the payload is synthetic: zeros); each record's original length
//! is the frame's full length, as a capture with a short snap length has. The checksums are
//! those of the frame with its zero payload, so tools that check them find them right.
//!
//! Read: the libpcap file format (draft-ietf-opsawg-pcap), RFC 791 (IPv4), RFC 9293 (TCP),
//! RFC 7323 (timestamps, window scale), RFC 2018 (SACK), RFC 3168 (ECN), RFC 768 (UDP);
//! InfiniBand Architecture Specification Vol. 1 (BTH, AETH, opcodes) and its Annex A17
//! "RoCEv2" (UDP port 4791, the CNP).

use std::io::{self, Write};

/// pcap's magic number for nanosecond timestamps.
const MAGIC_NS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_ETHERNET.
const LINKTYPE_ETHERNET: u32 = 1;
/// Bytes of each record kept: every header fits (14 + 20 + 60 < 128).
pub const SNAPLEN: u32 = 128;
/// The snap length of a capture of whole frames (RoCE's: Wireshark's InfiniBand dissector
/// calls a packet whose payload was cut short malformed), tcpdump's default: more than any
/// jumbo frame.
pub const WHOLE_SNAPLEN: u32 = 262_144;
/// Longest headers a frame carries: Ethernet, IPv4 without options, TCP with 40 bytes of
/// options.
pub const MAX_HEADERS: usize = 14 + 20 + 60;

/// The server side of every TCP connection (the port an `incast serve` listens on).
pub const SERVER_PORT: u16 = 9000;
/// First client port: Linux's ephemeral range is 32768..=60999.
const CLIENT_PORT_BASE: u32 = 32768;
/// Ports in Linux's ephemeral range.
const CLIENT_PORTS: u32 = 60999 - 32768 + 1;
/// The UDP port NDP packets are sent to and from (see [`ndp_frame`]).
pub const NDP_PORT: u16 = 7020;
/// Window scale Linux advertises for a 4 MB buffer (RFC 7323 2.3); the window field is the
/// receive window shifted right by it.
pub const WINDOW_SHIFT: u32 = 7;

/// TCP flags (RFC 9293 3.1, RFC 3168 6.1).
pub mod flags {
    /// Push.
    pub const PSH: u8 = 0x08;
    /// The acknowledgment field is significant.
    pub const ACK: u8 = 0x10;
    /// ECN echo.
    pub const ECE: u8 = 0x40;
    /// Congestion window reduced.
    pub const CWR: u8 = 0x80;
}

/// The IPv4 address of host `h`: 10.0.0.0/8, host 0 at 10.0.0.1.
#[inline]
pub fn host_ip(h: u32) -> [u8; 4] {
    (0x0A00_0000u32 + (h & 0x00FF_FFFF) + 1).to_be_bytes()
}

/// The MAC address of host `h`'s NIC: locally administered, 02:00:00 and the host number.
#[inline]
fn host_mac(h: u32) -> [u8; 6] {
    let b = (h + 1).to_be_bytes();
    [0x02, 0x00, 0x00, b[1], b[2], b[3]]
}

/// The client (receiver-side) port of connection `c`; wraps within the ephemeral range, so
/// two connections share one only if they also share a server and are 28232 apart.
#[inline]
pub fn client_port(c: u32) -> u16 {
    (CLIENT_PORT_BASE + c % CLIENT_PORTS) as u16
}

/// One TCP segment as it goes on the wire, in wire terms (32-bit sequence numbers).
#[derive(Debug, Clone, Copy, Default)]
pub struct TcpFrame<'a> {
    /// Sending and receiving hosts.
    pub src_host: u32,
    /// Receiving host.
    pub dst_host: u32,
    /// Ports.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number of the first payload byte.
    pub seq: u32,
    /// Acknowledgment number.
    pub ack: u32,
    /// TCP flags ([`flags`]).
    pub flags: u8,
    /// The IP header's ECN field: 0 not ECT, 2 ECT(0), 3 CE.
    pub ecn: u8,
    /// Window field (already scaled down).
    pub window: u16,
    /// Timestamps option (RFC 7323): the sender's clock and the echo.
    pub tsval: u32,
    /// Timestamp echo reply.
    pub tsecr: u32,
    /// SACK blocks, wire sequence numbers `[left, right)`.
    pub sack: &'a [(u32, u32)],
    /// Payload bytes (not stored, only counted).
    pub payload: u32,
    /// The IPv4 identification: Linux numbers a connected socket's packets one by one, so a
    /// capture shows how many a sender sent that never arrived.
    pub ip_id: u16,
}

/// The Internet checksum's one's-complement sum of `data` added to `sum`.
fn ones_sum(mut sum: u32, data: &[u8]) -> u32 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [last] = chunks.remainder() {
        sum += (*last as u32) << 8;
    }
    sum
}

fn fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Write the Ethernet and IPv4 headers of a packet whose IP payload is `ip_payload` bytes,
/// `tos` its DSCP and ECN byte, `id` its identification; returns the IPv4 pseudo-header's sum
/// for the transport checksum.
fn eth_ip(
    buf: &mut [u8],
    (src, dst): (u32, u32),
    proto: u8,
    tos: u8,
    id: u16,
    ip_payload: u32,
) -> u32 {
    buf[0..6].copy_from_slice(&host_mac(dst));
    buf[6..12].copy_from_slice(&host_mac(src));
    buf[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip = &mut buf[14..34];
    let total = 20 + ip_payload;
    ip[0] = 0x45; // version 4, 5 words
    ip[1] = tos;
    ip[2..4].copy_from_slice(&(total.min(0xffff) as u16).to_be_bytes());
    ip[4..6].copy_from_slice(&id.to_be_bytes()); // with DF set, any ID is allowed (RFC 6864)
    ip[6..8].copy_from_slice(&0x4000u16.to_be_bytes());
    ip[8] = 64; // TTL
    ip[9] = proto;
    ip[10..12].copy_from_slice(&[0, 0]);
    ip[12..16].copy_from_slice(&host_ip(src));
    ip[16..20].copy_from_slice(&host_ip(dst));
    let sum = fold(ones_sum(0, ip));
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    ones_sum(0, &ip[12..20]) + proto as u32 + ip_payload
}

/// Encode `f` into `buf`; returns (bytes written: the headers, the frame's full length).
pub fn tcp_frame(buf: &mut [u8; MAX_HEADERS], f: &TcpFrame<'_>) -> (usize, u32) {
    debug_assert!(f.sack.len() <= 4);
    // Linux's layout: NOP NOP TS, then NOP NOP SACK (RFC 7323 appendix A).
    let opts = 12
        + if f.sack.is_empty() {
            0
        } else {
            4 + 8 * f.sack.len()
        };
    let tcp_len = 20 + opts;
    let pseudo = eth_ip(
        buf,
        (f.src_host, f.dst_host),
        6,
        f.ecn & 3, // DSCP 0
        f.ip_id,
        (tcp_len as u32) + f.payload,
    );
    let t = &mut buf[34..34 + tcp_len];
    t[0..2].copy_from_slice(&f.src_port.to_be_bytes());
    t[2..4].copy_from_slice(&f.dst_port.to_be_bytes());
    t[4..8].copy_from_slice(&f.seq.to_be_bytes());
    t[8..12].copy_from_slice(&f.ack.to_be_bytes());
    t[12] = ((tcp_len / 4) as u8) << 4;
    t[13] = f.flags;
    t[14..16].copy_from_slice(&f.window.to_be_bytes());
    t[16..20].copy_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
    t[20..24].copy_from_slice(&[1, 1, 8, 10]);
    t[24..28].copy_from_slice(&f.tsval.to_be_bytes());
    t[28..32].copy_from_slice(&f.tsecr.to_be_bytes());
    if !f.sack.is_empty() {
        t[32..36].copy_from_slice(&[1, 1, 5, (2 + 8 * f.sack.len()) as u8]);
        for (i, &(l, r)) in f.sack.iter().enumerate() {
            t[36 + 8 * i..40 + 8 * i].copy_from_slice(&l.to_be_bytes());
            t[40 + 8 * i..44 + 8 * i].copy_from_slice(&r.to_be_bytes());
        }
    }
    // The payload is zeros: it adds nothing to the sum but its length (in the pseudo-header).
    let sum = fold(ones_sum(pseudo, t));
    t[16..18].copy_from_slice(&sum.to_be_bytes());
    let written = 34 + tcp_len;
    (written, written as u32 + f.payload)
}

/// NDP packet kinds as carried in the NDP header's first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum NdpKind {
    /// Data with its payload.
    Data = 1,
    /// A data packet trimmed to its header by a switch.
    Header = 2,
    /// A trimmed header returned to its sender.
    Bounce = 3,
    /// Acknowledgment of a data packet.
    Ack = 4,
    /// Negative acknowledgment of a trimmed header.
    Nack = 5,
    /// The receiver lets the sender send one packet.
    Pull = 6,
}

/// Bytes of the NDP header inside the UDP datagram.
pub const NDP_HEADER: usize = 12;

/// An NDP packet, encapsulated as IPv4/UDP from and to port [`NDP_PORT`], the UDP payload
/// starting with a 12-byte NDP header:
///
/// | bytes | field |
/// |---|---|
/// | 0 | kind: 1 data, 2 trimmed header, 3 bounced header, 4 ACK, 5 NACK, 6 PULL |
/// | 1..4 | zero |
/// | 4..8 | flow number (big-endian) |
/// | 8..12 | packet number within the flow (data, headers, ACKs, NACKs); 0 for a PULL |
///
/// A data packet's payload follows (counted in the lengths, not stored). Returns (bytes
/// written, the frame's full length); `frame` is the frame's length in the simulator.
pub fn ndp_frame(
    buf: &mut [u8; MAX_HEADERS],
    src: u32,
    dst: u32,
    kind: NdpKind,
    flow: u32,
    seq: u32,
    frame: u32,
) -> (usize, u32) {
    let written = 14 + 20 + 8 + NDP_HEADER;
    let full = frame.max(written as u32);
    let udp_len = full - 34;
    let pseudo = eth_ip(buf, (src, dst), 17, 0, 0, udp_len);
    let u = &mut buf[34..written];
    u[0..2].copy_from_slice(&NDP_PORT.to_be_bytes());
    u[2..4].copy_from_slice(&NDP_PORT.to_be_bytes());
    u[4..6].copy_from_slice(&(udp_len.min(0xffff) as u16).to_be_bytes());
    u[6..8].copy_from_slice(&[0, 0]);
    u[8..12].copy_from_slice(&[kind as u8, 0, 0, 0]);
    u[12..16].copy_from_slice(&flow.to_be_bytes());
    u[16..20].copy_from_slice(&seq.to_be_bytes());
    let mut sum = fold(ones_sum(pseudo, u));
    if sum == 0 {
        sum = 0xffff; // zero means "no checksum" in UDP
    }
    u[6..8].copy_from_slice(&sum.to_be_bytes());
    (written, full)
}

/// RoCEv2's UDP destination port (IANA), which Wireshark dissects as InfiniBand.
pub const ROCE_PORT: u16 = 4791;

/// BTH opcodes of a reliable connection (InfiniBand Vol. 1, table 38), and RoCEv2's CNP.
pub mod roce_op {
    /// SEND First: the first packet of a message of several.
    pub const SEND_FIRST: u8 = 0x00;
    /// SEND Middle.
    pub const SEND_MIDDLE: u8 = 0x01;
    /// SEND Last.
    pub const SEND_LAST: u8 = 0x02;
    /// SEND Only: a message of one packet.
    pub const SEND_ONLY: u8 = 0x04;
    /// Acknowledge (an ACK or a NAK, told apart by its AETH's syndrome).
    pub const ACKNOWLEDGE: u8 = 0x11;
    /// Congestion notification packet (RoCEv2, Annex A17).
    pub const CNP: u8 = 0x81;
}

/// AETH syndromes: an ACK with no credit count (0x1F: "invalid", end-to-end credits
/// unused, as RoCE NICs send them), and a NAK for a PSN sequence error.
pub mod aeth {
    /// ACK, credits unused.
    pub const ACK: u8 = 0x1F;
    /// NAK: PSN sequence error (NAK code 0).
    pub const NAK_SEQUENCE: u8 = 0x60;
}

/// DSCP of RoCE traffic and of CNPs, as RDMA NICs mark them by default (26 and 48).
const ROCE_DSCP: u8 = 26;
const CNP_DSCP: u8 = 48;

/// Bytes of InfiniBand's base transport header.
const BTH: usize = 12;
/// Bytes of the invariant CRC that ends every RoCEv2 packet (counted, not stored).
const ICRC: u32 = 4;
/// Bytes of the Ethernet frame check sequence, in the simulator's frame sizes but not in a
/// capture's (NICs strip it).
const FCS: u32 = 4;

/// One RoCEv2 packet as it goes on the wire.
#[derive(Debug, Clone, Copy, Default)]
pub struct RoceFrame {
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// BTH opcode ([`roce_op`]).
    pub opcode: u8,
    /// The destination queue pair's number (24 bits).
    pub dest_qp: u32,
    /// Packet sequence number (24 bits on the wire).
    pub psn: u32,
    /// The requester asks for an acknowledgment.
    pub ack_req: bool,
    /// An ACK's or NAK's AETH syndrome ([`aeth`]); `None` for data and CNPs.
    pub aeth: Option<u8>,
    /// The IP header's ECN field: 0 not ECT, 2 ECT(0), 3 CE.
    pub ecn: u8,
    /// The frame's length in the simulator (with its FCS).
    pub frame: u32,
}

/// A RoCEv2 packet: Ethernet, IPv4 (DSCP 26, or 48 for a CNP), UDP from a per-queue-pair
/// source port (the entropy ECMP hashes) to [`ROCE_PORT`] with no checksum (as RoCEv2 sends
/// it), the 12-byte BTH, then an ACK's or NAK's 4-byte AETH or a CNP's 16 reserved bytes;
/// the payload and the ICRC are counted in the lengths, not stored. Data go as SEND
/// operations, whose only transport header is the BTH: the 62 bytes a RoCE frame carries in
/// the simulator beyond its payload (an RDMA WRITE's first packet would add a 16-byte RETH).
/// Returns (bytes written, the frame's full length: the simulator's less its FCS). A capture
/// stores RoCE frames whole ([`PcapWriter::record_whole`]), the payload and ICRC as zeros.
pub fn roce_frame(buf: &mut [u8; MAX_HEADERS], f: &RoceFrame) -> (usize, u32) {
    let extra = match (f.opcode, f.aeth) {
        (roce_op::CNP, _) => 16,
        (_, Some(_)) => 4,
        _ => 0,
    };
    let written = 14 + 20 + 8 + BTH + extra;
    let full = f.frame.saturating_sub(FCS).max(written as u32 + ICRC);
    let udp_len = full - 34;
    let dscp = if f.opcode == roce_op::CNP {
        CNP_DSCP
    } else {
        ROCE_DSCP
    };
    eth_ip(buf, (f.src, f.dst), 17, dscp << 2 | (f.ecn & 3), 0, udp_len);
    let u = &mut buf[34..written];
    u[0..2].copy_from_slice(&(0xC000 | (f.dest_qp & 0x3FFF) as u16).to_be_bytes());
    u[2..4].copy_from_slice(&ROCE_PORT.to_be_bytes());
    u[4..6].copy_from_slice(&(udp_len.min(0xffff) as u16).to_be_bytes());
    u[6..8].copy_from_slice(&[0, 0]);
    let b = &mut u[8..8 + BTH];
    let payload = full - written as u32 - ICRC;
    b[0] = f.opcode;
    // SE 0, MigReq 0, PadCnt (the payload padded to whole words), transport version 0.
    b[1] = (((4 - payload % 4) % 4) as u8) << 4;
    b[2..4].copy_from_slice(&0xFFFFu16.to_be_bytes()); // the default partition key
    b[4] = 0;
    b[5..8].copy_from_slice(&f.dest_qp.to_be_bytes()[1..]);
    b[8] = u8::from(f.ack_req) << 7;
    b[9..12].copy_from_slice(&f.psn.to_be_bytes()[1..]);
    let rest = &mut u[8 + BTH..];
    rest.fill(0);
    if let Some(syndrome) = f.aeth {
        // Syndrome, then the message sequence number (not modelled: 0).
        rest[0] = syndrome;
    }
    (written, full)
}

/// A pcap file being written: the global header once, then one record per frame.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    out: W,
}

impl<W: Write> PcapWriter<W> {
    /// Start a file on `out`, of records of headers only ([`SNAPLEN`]).
    pub fn new(out: W) -> io::Result<PcapWriter<W>> {
        PcapWriter::with_snaplen(out, SNAPLEN)
    }

    /// Start a file on `out` whose records keep up to `snaplen` bytes.
    pub fn with_snaplen(mut out: W, snaplen: u32) -> io::Result<PcapWriter<W>> {
        let mut h = [0u8; 24];
        h[0..4].copy_from_slice(&MAGIC_NS.to_le_bytes());
        h[4..6].copy_from_slice(&2u16.to_le_bytes());
        h[6..8].copy_from_slice(&4u16.to_le_bytes());
        // thiszone, sigfigs: 0
        h[16..20].copy_from_slice(&snaplen.to_le_bytes());
        h[20..24].copy_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter { out })
    }

    /// Write one record at `t_ns` nanoseconds: `data` captured of a frame of `orig` bytes.
    #[inline]
    pub fn record(&mut self, t_ns: u64, data: &[u8], orig: u32) -> io::Result<()> {
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&((t_ns / 1_000_000_000) as u32).to_le_bytes());
        h[4..8].copy_from_slice(&((t_ns % 1_000_000_000) as u32).to_le_bytes());
        h[8..12].copy_from_slice(&(data.len() as u32).to_le_bytes());
        h[12..16].copy_from_slice(&orig.to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(data)
    }

    /// Write one whole frame of `orig` bytes at `t_ns`: its `headers`, then zeros (the
    /// synthetic payload, and trailers such as RoCE's ICRC) up to its full length.
    pub fn record_whole(&mut self, t_ns: u64, headers: &[u8], orig: u32) -> io::Result<()> {
        const ZEROS: [u8; 512] = [0; 512];
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&((t_ns / 1_000_000_000) as u32).to_le_bytes());
        h[4..8].copy_from_slice(&((t_ns % 1_000_000_000) as u32).to_le_bytes());
        h[8..12].copy_from_slice(&orig.to_le_bytes());
        h[12..16].copy_from_slice(&orig.to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(headers)?;
        let mut left = (orig as usize).saturating_sub(headers.len());
        while left > 0 {
            let n = left.min(ZEROS.len());
            self.out.write_all(&ZEROS[..n])?;
            left -= n;
        }
        Ok(())
    }

    /// Flush and hand back the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verify(data: &[u8]) -> u16 {
        fold(ones_sum(0, data))
    }

    #[test]
    fn ip_and_tcp_checksums_verify_to_zero() {
        let mut buf = [0u8; MAX_HEADERS];
        let sack = [(1000, 2448), (5000, 6448)];
        let f = TcpFrame {
            src_host: 3,
            dst_host: 16,
            src_port: SERVER_PORT,
            dst_port: client_port(3),
            seq: 1,
            ack: 1,
            flags: flags::ACK | flags::ECE,
            ecn: 3,
            window: 1000,
            tsval: 7,
            tsecr: 5,
            sack: &sack,
            payload: 0,
            ip_id: 0x1234,
        };
        let (n, full) = tcp_frame(&mut buf, &f);
        assert_eq!(n, 14 + 20 + 20 + 12 + 4 + 16);
        assert_eq!(full, n as u32);
        assert_eq!(verify(&buf[14..34]), 0, "IPv4 header checksum");
        let mut pseudo = Vec::new();
        pseudo.extend_from_slice(&buf[26..34]);
        pseudo.extend_from_slice(&[0, 6]);
        pseudo.extend_from_slice(&((n - 34) as u16).to_be_bytes());
        pseudo.extend_from_slice(&buf[34..n]);
        assert_eq!(verify(&pseudo), 0, "TCP checksum over the pseudo-header");
        assert_eq!(buf[15] & 3, 3, "CE in the IP header");
        assert_eq!(&buf[18..20], &[0x12, 0x34], "the identification");
        assert_eq!(&buf[26..30], &[10, 0, 0, 4]);
    }

    #[test]
    fn a_payload_of_zeros_counts_only_in_the_lengths() {
        let mut buf = [0u8; MAX_HEADERS];
        let f = TcpFrame {
            payload: 1448,
            flags: flags::ACK,
            ..TcpFrame::default()
        };
        let (n, full) = tcp_frame(&mut buf, &f);
        assert_eq!(n, 66);
        assert_eq!(full, 66 + 1448);
        assert_eq!(u16::from_be_bytes([buf[16], buf[17]]), 20 + 32 + 1448);
        // The checksum of the full frame (zeros appended) still verifies.
        let mut pseudo = buf[26..34].to_vec();
        pseudo.extend_from_slice(&[0, 6]);
        pseudo.extend_from_slice(&(32u16 + 1448).to_be_bytes());
        pseudo.extend_from_slice(&buf[34..n]);
        pseudo.extend(std::iter::repeat_n(0, 1448));
        assert_eq!(verify(&pseudo), 0);
    }

    #[test]
    fn the_file_header_says_nanoseconds_and_ethernet() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        w.record(1_500_000_123, &[1, 2, 3], 60).unwrap();
        let v = w.finish().unwrap();
        assert_eq!(&v[0..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!(u32::from_le_bytes(v[20..24].try_into().unwrap()), 1);
        assert_eq!(u32::from_le_bytes(v[24..28].try_into().unwrap()), 1);
        assert_eq!(
            u32::from_le_bytes(v[28..32].try_into().unwrap()),
            500_000_123
        );
        assert_eq!(u32::from_le_bytes(v[32..36].try_into().unwrap()), 3);
        assert_eq!(u32::from_le_bytes(v[36..40].try_into().unwrap()), 60);
        assert_eq!(v.len(), 24 + 16 + 3);
    }

    #[test]
    fn ndp_header_carries_kind_flow_and_packet_number() {
        let mut buf = [0u8; MAX_HEADERS];
        let (n, full) = ndp_frame(&mut buf, 1, 2, NdpKind::Nack, 7, 42, 64);
        assert_eq!(n, 54);
        assert_eq!(full, 64);
        assert_eq!(buf[23], 17, "UDP");
        assert_eq!(buf[42], NdpKind::Nack as u8);
        assert_eq!(u32::from_be_bytes(buf[46..50].try_into().unwrap()), 7);
        assert_eq!(u32::from_be_bytes(buf[50..54].try_into().unwrap()), 42);
        assert_eq!(verify(&buf[14..34]), 0);
    }

    /// The fields of a RoCEv2 frame, read back by hand: (UDP destination port, BTH opcode,
    /// PadCnt, destination QP, AckReq, PSN).
    fn bth(buf: &[u8]) -> (u16, u8, u8, u32, bool, u32) {
        let u = &buf[34..];
        let b = &u[8..20];
        (
            u16::from_be_bytes([u[2], u[3]]),
            b[0],
            b[1] >> 4 & 3,
            u32::from_be_bytes([0, b[5], b[6], b[7]]),
            b[8] & 0x80 != 0,
            u32::from_be_bytes([0, b[9], b[10], b[11]]),
        )
    }

    #[test]
    fn roce_frames_carry_bth_aeth_and_the_cnp_as_rocev2_lays_them_out() {
        let mut buf = [0u8; MAX_HEADERS];
        // The last data packet of a message: 998 B of payload (padded by 2), CE-marked.
        let data = RoceFrame {
            src: 1,
            dst: 4,
            opcode: roce_op::SEND_LAST,
            dest_qp: 0x101,
            psn: 0x00AB_CDEF,
            ack_req: true,
            aeth: None,
            ecn: 3,
            frame: 998 + 62,
        };
        let (n, full) = roce_frame(&mut buf, &data);
        assert_eq!((n, full), (54, 998 + 58), "headers; no FCS in a capture");
        assert_eq!(bth(&buf), (4791, 0x02, 2, 0x101, true, 0x00AB_CDEF));
        assert_eq!(&buf[12..14], &[0x08, 0x00], "IPv4");
        assert_eq!(buf[14 + 9], 17, "UDP");
        assert_eq!(buf[15], 26 << 2 | 3, "DSCP 26, CE");
        assert_eq!(verify(&buf[14..34]), 0, "IP checksum");
        assert_eq!(u16::from_be_bytes([buf[16], buf[17]]) as u32, full - 14);
        assert_eq!(u16::from_be_bytes([buf[38], buf[39]]) as u32, full - 34);
        assert_eq!(&buf[40..42], &[0, 0], "RoCEv2 sends no UDP checksum");
        assert_eq!(
            &buf[34..36],
            &(0xC000u16 | 0x101).to_be_bytes(),
            "per-QP port"
        );
        assert_eq!(&buf[44..46], &[0xFF, 0xFF], "default partition key");
        // An ACK and a NAK: the BTH, then the AETH's syndrome and a zero MSN.
        let ack = RoceFrame {
            opcode: roce_op::ACKNOWLEDGE,
            aeth: Some(aeth::ACK),
            ack_req: false,
            ecn: 0,
            frame: 66,
            ..data
        };
        let (n, full) = roce_frame(&mut buf, &ack);
        assert_eq!((n, full), (58, 62));
        assert_eq!(bth(&buf).1, 0x11);
        assert_eq!(&buf[54..58], &[0x1F, 0, 0, 0]);
        let nak = RoceFrame {
            aeth: Some(aeth::NAK_SEQUENCE),
            ..ack
        };
        roce_frame(&mut buf, &nak);
        assert_eq!(buf[54], 0x60);
        // A CNP: opcode 0x81, DSCP 48, 16 reserved bytes, at least its headers and ICRC long.
        let cnp = RoceFrame {
            opcode: roce_op::CNP,
            psn: 0,
            aeth: None,
            frame: 66,
            ..ack
        };
        buf.fill(0xEE);
        let (n, full) = roce_frame(&mut buf, &cnp);
        assert_eq!((n, full), (70, 74));
        assert_eq!(bth(&buf), (4791, 0x81, 0, 0x101, false, 0));
        assert_eq!(buf[15], 48 << 2);
        assert!(buf[54..70].iter().all(|&b| b == 0));
    }
}
