//! A captured frame's IPv4 and TCP headers (etherparse's zero-copy header slices), as the
//! few fields the analysis reads. Frames of other protocols are skipped, not errors.

use etherparse::{Ethernet2Slice, Ipv4HeaderSlice, TcpHeaderSlice};

use crate::reader::{Frame, Link};

/// The TCP segment a frame carries, in wire terms.
#[derive(Debug, Clone, Copy, Default)]
pub struct Segment {
    /// Addresses and ports.
    pub src: u32,
    /// Destination address.
    pub dst: u32,
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number (meaningful with the ACK flag).
    pub ack: u32,
    /// Payload bytes (from the IP total length: the capture may have cut the payload).
    pub len: u32,
    /// The IPv4 identification field: Linux numbers each connection's packets with it, so
    /// its gaps count what the sender sent that the capture never saw.
    pub ip_id: u16,
    /// SYN, FIN or RST set.
    pub syn: bool,
    /// FIN set.
    pub fin: bool,
    /// RST set.
    pub rst: bool,
    /// The ACK flag.
    pub has_ack: bool,
    /// Carries SACK blocks.
    pub sack: bool,
    /// The IP header says congestion experienced.
    pub ce: bool,
    /// The IP header's ECN field is set (ECT(0), ECT(1) or CE): an ECN-capable packet.
    pub ect: bool,
    /// The ECE flag.
    pub ece: bool,
    /// The CWR flag.
    pub cwr: bool,
}

/// The IPv4 packet inside a frame, if it is one.
#[inline]
fn ip_of<'a>(f: &Frame<'a>) -> Option<&'a [u8]> {
    match f.link {
        Link::Ethernet => {
            let eth = Ethernet2Slice::from_slice_without_fcs(f.data).ok()?;
            let mut ty = eth.ether_type().0;
            let mut rest = eth.payload_slice();
            // 802.1Q / 802.1ad tags, up to two.
            for _ in 0..2 {
                if ty != 0x8100 && ty != 0x88a8 {
                    break;
                }
                if rest.len() < 4 {
                    return None;
                }
                ty = u16::from_be_bytes([rest[2], rest[3]]);
                rest = &rest[4..];
            }
            (ty == 0x0800).then_some(rest)
        }
        Link::RawIp => Some(f.data),
        Link::LinuxSll => {
            let d = f.data;
            (d.len() >= 16 && d[14..16] == [0x08, 0x00]).then(|| &d[16..])
        }
        Link::LinuxSll2 => {
            let d = f.data;
            (d.len() >= 20 && d[0..2] == [0x08, 0x00]).then(|| &d[20..])
        }
    }
}

/// The TCP segment in `f`, or `None` for anything else (or headers cut short).
#[inline]
pub fn tcp_segment(f: &Frame<'_>) -> Option<Segment> {
    let packet = ip_of(f)?;
    let ip = Ipv4HeaderSlice::from_slice(packet).ok()?;
    if ip.protocol().0 != 6 || ip.is_fragmenting_payload() {
        return None;
    }
    let hl = ip.slice().len();
    let tcp_bytes = packet.get(hl..)?;
    let tcp = TcpHeaderSlice::from_slice(tcp_bytes).ok()?;
    let th = tcp.slice().len();
    let len = (ip.total_len() as usize).saturating_sub(hl + th) as u32;
    let sack = tcp.data_offset() > 5 && has_sack(tcp.options());
    Some(Segment {
        src: u32::from_be_bytes(ip.source()),
        dst: u32::from_be_bytes(ip.destination()),
        sport: tcp.source_port(),
        dport: tcp.destination_port(),
        seq: tcp.sequence_number(),
        ack: tcp.acknowledgment_number(),
        len,
        ip_id: ip.identification(),
        syn: tcp.syn(),
        fin: tcp.fin(),
        rst: tcp.rst(),
        has_ack: tcp.ack(),
        sack,
        ce: ip.ecn().value() == 3,
        ect: ip.ecn().value() != 0,
        ece: tcp.ece(),
        cwr: tcp.cwr(),
    })
}

/// Whether TCP options carry SACK blocks (kind 5, RFC 2018). A walk over the kinds and
/// lengths, nothing decoded: etherparse's option iterator decodes every option, a sixth of
/// the analysis's time when only this bit is wanted.
#[inline]
fn has_sack(mut opts: &[u8]) -> bool {
    while let [kind, rest @ ..] = opts {
        match kind {
            0 => return false,
            1 => opts = rest,
            5 => return true,
            _ => match rest.first() {
                Some(&len) if len >= 2 && len as usize <= opts.len() => {
                    opts = &opts[len as usize..]
                }
                _ => return false,
            },
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sack_is_found_among_other_options_and_a_bad_length_stops_the_walk() {
        assert!(has_sack(&[
            1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2, 1, 1, 5, 10, 0, 0, 0, 1, 0, 0, 0, 9
        ]));
        assert!(!has_sack(&[1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2]));
        assert!(!has_sack(&[2, 4, 5, 180, 0, 5, 10]), "EOL ends the options");
        assert!(!has_sack(&[8, 1, 5]), "a length below 2 is malformed");
        assert!(!has_sack(&[8, 40, 5]), "a length past the end is malformed");
    }
}
