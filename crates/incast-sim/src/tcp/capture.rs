//! Captures of a TCP run: what turns the simulator's segments into the wire headers a pcap
//! file holds.

use std::io;

use crate::capture::pcap::{self, TcpFrame};
use crate::capture::Capture;
use crate::ids::EndpointId;
use crate::net::PktId;
use crate::net::{CE, CWR, ECE, ECT};
use crate::tcp::Packet;
use crate::topology::LinkId;
use crate::units::{SimTime, PS_PER_MS};

/// A capture of a TCP run: the file, and what turns the simulator's segments into wire
/// headers (addresses, 32-bit sequence numbers, the timestamps each endpoint echoes).
#[derive(Debug)]
pub struct TcpCapture {
    cap: Capture,
    /// Host of each endpoint.
    ep_host: Vec<u32>,
    /// The last timestamp value each endpoint received (what it echoes, RFC 7323 4.3).
    ts_recent: Vec<u32>,
    /// The window field every segment carries.
    window: u16,
    /// The last IPv4 identification of each endpoint's packets.
    ip_next: Vec<u16>,
    /// The identification of the packet in each slot of the packet pool (a capture's own
    /// side table: the packet every hop copies stays 88 bytes).
    ip_of: Vec<u16>,
}

impl TcpCapture {
    /// A TCP capture into `cap`; `ep_host[e]` is endpoint e's host.
    pub fn new(cap: Capture, ep_host: Vec<u32>, receive_window: u64) -> TcpCapture {
        TcpCapture {
            cap,
            ts_recent: vec![0; ep_host.len()],
            ip_next: vec![0; ep_host.len()],
            ip_of: Vec::new(),
            ep_host,
            window: (receive_window >> pcap::WINDOW_SHIFT).min(0xffff) as u16,
        }
    }

    /// Endpoint `ep` sent the packet in pool slot `id`: give it the endpoint's next IPv4
    /// identification, as Linux numbers a connected socket's packets, whether or not it
    /// arrives (the gaps are what a capture counts losses by).
    pub fn tag(&mut self, id: PktId, ep: EndpointId) {
        let next = &mut self.ip_next[ep.index()];
        *next = next.wrapping_add(1);
        let slot = id as usize;
        if slot >= self.ip_of.len() {
            self.ip_of.resize(slot + 1, 0);
        }
        self.ip_of[slot] = *next;
    }

    /// A frame finished transmission on link `l` at `now`. Out of line, so that a run
    /// without a capture carries only the test for one in its hot loop.
    #[cold]
    #[inline(never)]
    pub fn on_link(&mut self, l: LinkId, now: SimTime, id: PktId, p: &Packet) {
        if self.cap.taps_link(l) {
            self.write(now, id, p);
        }
    }

    /// A frame reached its destination endpoint at `now` (out of line too).
    #[cold]
    #[inline(never)]
    pub fn on_deliver(&mut self, now: SimTime, id: PktId, p: &Packet) {
        self.ts_recent[p.dst as usize] = p.tsval;
        if self.cap.taps_host(self.ep_host[p.dst as usize]) {
            self.write(now, id, p);
        }
    }

    fn write(&mut self, now: SimTime, id: PktId, p: &Packet) {
        let dst = EndpointId(p.dst);
        let src = dst.peer();
        let conn = src.conn().0;
        let (src_port, dst_port) = if src.is_sender() {
            (pcap::SERVER_PORT, pcap::client_port(conn))
        } else {
            (pcap::client_port(conn), pcap::SERVER_PORT)
        };
        let wire = |s: u64| (s as u32).wrapping_add(1);
        let mut blocks = [(0, 0); crate::net::MAX_SACK_BLOCKS];
        let mut sack = [(0u32, 0u32); crate::net::MAX_SACK_BLOCKS];
        for (w, &(l, r)) in sack.iter_mut().zip(p.sack(&mut blocks)) {
            *w = (wire(l), wire(r));
        }
        let mut flags = pcap::flags::ACK;
        if p.len > 0 {
            flags |= pcap::flags::PSH;
        }
        if p.ecn & ECE != 0 {
            flags |= pcap::flags::ECE;
        }
        if p.ecn & CWR != 0 {
            flags |= pcap::flags::CWR;
        }
        let ecn = match (p.ecn & ECT != 0, p.ecn & CE != 0) {
            (_, true) => 3,
            (true, false) => 2,
            _ => 0,
        };
        let f = TcpFrame {
            src_host: self.ep_host[src.index()],
            dst_host: self.ep_host[dst.index()],
            src_port,
            dst_port,
            seq: wire(p.seq),
            ack: wire(p.ack),
            flags,
            ecn,
            window: self.window,
            tsval: p.tsval,
            tsecr: self.ts_recent[src.index()],
            sack: &sack[..p.nsack as usize],
            payload: p.len,
            ip_id: self.ip_of.get(id as usize).copied().unwrap_or(0),
        };
        self.cap.write(now, |buf| pcap::tcp_frame(buf, &f));
    }

    /// Flush the file; the frames written, or the first error met.
    pub fn finish(self) -> io::Result<u64> {
        self.cap.finish()
    }
}

/// A TCP timestamp value at `now`: Linux's millisecond clock.
#[inline]
pub fn tsval(now: SimTime) -> u32 {
    (now / PS_PER_MS) as u32
}
