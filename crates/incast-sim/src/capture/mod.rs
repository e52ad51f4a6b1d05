//! Packet captures of a run: the frames seen at chosen points of the network, written as a
//! pcap file that tcpdump, Wireshark and tshark read.
//!
//! A point is a link (a host's NIC or a switch port: the frames it finishes sending, stamped
//! when their last bit leaves) or a host (what tcpdump on that host sees: the frames its NIC
//! sends and the frames delivered to it, stamped on arrival). The receiver's host is the
//! default point. Records come in the order the engine processes events, so time never goes
//! back in the file.
//!
//! A run that captures nothing pays one `Option` test where a frame leaves a link and where
//! one is delivered; the capture's own work (encoding, writing) happens only when it is on.
//!
//! Addresses are made up and fixed: host `h` is 10.0.0.(h+1) (10.0.0.0/8 for larger numbers)
//! with MAC 02:00:00 and h+1; each connection's server side uses port 9000 and its client
//! side a port of Linux's ephemeral range. Sequence numbers start at 1 (an ISN of 0 and the
//! SYN, which the simulator does not send). TCP timestamps tick in milliseconds, like
//! Linux's. The window field is the receive window scaled by 2^7. RoCE's queue pair q has
//! the number 0x100 + q at both ends (numbers below are the special QPs 0 and 1).

pub mod pcap;
#[cfg(test)]
mod roce_tests;

use std::fs::File;
use std::io::{self, BufWriter};

use crate::topology::{LinkId, Network};
use crate::units::{SimTime, PS_PER_NS};

pub use pcap::{NdpKind, PcapWriter, RoceFrame, TcpFrame};

/// What the user asks to capture: a comma-separated list of points, e.g.
/// `receiver`, `senders`, `port-receiver`, `bottleneck`, `host3`, `nic3`, `port3`,
/// `fabric12`, `all`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Points(pub String);

impl Default for Points {
    fn default() -> Self {
        Points("receiver".into())
    }
}

/// The links and hosts a capture taps, resolved against a built network.
#[derive(Debug, Clone)]
pub struct Taps {
    /// Frames that finish transmission on each link are captured.
    pub links: Vec<bool>,
    /// Frames delivered to each host are captured.
    pub hosts: Vec<bool>,
}

/// What a point may be, for the error message.
const POINTS_HELP: &str = "receiver, senders, bottleneck (= port-receiver), hostN, nicN, \
                           portN, fabricN, nic-receiver, port-receiver or all (on a topology \
                           file also its host names and switch>switch), comma-separated";

impl Points {
    /// The links and hosts these points name in `net`, whose first `senders` logical hosts
    /// are the workload's servers; an error names the point and what is allowed.
    pub fn resolve(&self, net: &Network, senders: u32) -> Result<Taps, String> {
        let mut t = Taps {
            links: vec![false; net.links.len()],
            hosts: vec![false; net.hosts as usize],
        };
        for raw in self.0.split(',') {
            let p = raw.trim();
            let host = |h: u32, t: &mut Taps| {
                t.hosts[h as usize] = true;
                t.links[2 * h as usize] = true;
            };
            match p {
                "receiver" => host(net.receiver, &mut t),
                // Every server's NIC: each frame they send once, before any queue drops it.
                "senders" => (0..senders).for_each(|i| t.links[2 * net.host(i) as usize] = true),
                "bottleneck" => t.links[net.bottleneck.index()] = true,
                "all" => t.links.iter_mut().for_each(|x| *x = true),
                _ => {
                    if let Some(h) = p.strip_prefix("host").and_then(|n| n.parse::<u32>().ok()) {
                        if h >= net.hosts {
                            return Err(format!(
                                "--pcap-at: host{h} does not exist (hosts 0..{})",
                                net.hosts - 1
                            ));
                        }
                        host(h, &mut t);
                        continue;
                    }
                    if let Some(names) = net.names.as_deref() {
                        // A topology file's own names: a host, or the links from one switch
                        // to another (all of them, if there are parallel ones).
                        if let Some(h) = names.hosts.iter().position(|n| n == p) {
                            host(h as u32, &mut t);
                            continue;
                        }
                        if let Some((a, b)) = p.split_once('>') {
                            let mut found = false;
                            for (i, (x, y)) in names.trunks.iter().enumerate() {
                                let up = (names.first_trunk + 2 * i as u32) as usize;
                                if (x.as_str(), y.as_str()) == (a, b) {
                                    t.links[up] = true;
                                    found = true;
                                } else if (y.as_str(), x.as_str()) == (a, b) {
                                    t.links[up + 1] = true;
                                    found = true;
                                }
                            }
                            if found {
                                continue;
                            }
                        }
                    }
                    match net.link_ids().find(|&l| net.name(l) == p) {
                        Some(l) => t.links[l.index()] = true,
                        None => {
                            return Err(format!(
                                "--pcap-at: no point {p:?} in this topology; expected {POINTS_HELP}"
                            ))
                        }
                    }
                }
            }
        }
        Ok(t)
    }
}

/// A pcap file being filled from the taps of one run, whatever its transport.
#[derive(Debug)]
pub struct Capture {
    writer: PcapWriter<BufWriter<File>>,
    taps: Taps,
    buf: [u8; pcap::MAX_HEADERS],
    /// Store each frame whole (its payload as zeros), not its headers alone.
    whole: bool,
    frames: u64,
    /// The first write error; the capture stops there and the run reports it at the end.
    error: Option<io::Error>,
}

impl Capture {
    /// Capture `taps` into a new file at `path`: headers only, or with `whole` every frame
    /// whole (RoCE's, which Wireshark's InfiniBand dissector reads only whole).
    pub fn create(path: &str, taps: Taps, whole: bool) -> io::Result<Capture> {
        let file = File::create(path)?;
        let out = BufWriter::with_capacity(1 << 16, file);
        let snaplen = if whole {
            pcap::WHOLE_SNAPLEN
        } else {
            pcap::SNAPLEN
        };
        let writer = PcapWriter::with_snaplen(out, snaplen)?;
        Ok(Capture {
            writer,
            taps,
            buf: [0; pcap::MAX_HEADERS],
            whole,
            frames: 0,
            error: None,
        })
    }

    /// Whether frames leaving link `l` are captured.
    #[inline]
    pub fn taps_link(&self, l: LinkId) -> bool {
        self.taps.links[l.index()]
    }

    /// Whether frames delivered to host `h` are captured.
    #[inline]
    pub fn taps_host(&self, h: u32) -> bool {
        self.taps.hosts[h as usize]
    }

    /// Write one frame at `now`, its headers encoded by `encode` (which returns the bytes it
    /// wrote and the frame's full length).
    #[inline]
    pub fn write(
        &mut self,
        now: SimTime,
        encode: impl FnOnce(&mut [u8; pcap::MAX_HEADERS]) -> (usize, u32),
    ) {
        if self.error.is_some() {
            return;
        }
        let (n, full) = encode(&mut self.buf);
        self.frames += 1;
        let t = now / PS_PER_NS;
        let written = match self.whole {
            true => self.writer.record_whole(t, &self.buf[..n], full),
            false => self.writer.record(t, &self.buf[..n], full),
        };
        if let Err(e) = written {
            self.error = Some(e);
        }
    }

    /// Flush the file; the frames written, or the first error met.
    pub fn finish(self) -> io::Result<u64> {
        if let Some(e) = self.error {
            return Err(e);
        }
        self.writer.finish()?;
        Ok(self.frames)
    }
}

/// Open a capture of `points` in `net` at `path` (of whole frames with `whole`); the error
/// is one line naming the flag.
pub fn open(
    path: &str,
    points: &Points,
    net: &Network,
    senders: u32,
    whole: bool,
) -> Result<Capture, String> {
    let taps = points.resolve(net, senders)?;
    Capture::create(path, taps, whole).map_err(|e| format!("--pcap: cannot write {path}: {e}"))
}
