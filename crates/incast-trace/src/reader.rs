//! Captures as a stream of frames: pcap (micro- or nanosecond) and pcapng, read through a
//! fixed buffer (pcap-parser), never whole.

use std::fs::File;
use std::io::Read;

use pcap_parser::pcapng::Block;
use pcap_parser::{create_reader, Linktype, PcapBlockOwned, PcapError};

use crate::TraceError;

/// The link layer of a capture's frames, as far as the reader understands it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// Ethernet II (LINKTYPE_ETHERNET).
    Ethernet,
    /// An IP packet with no link header (LINKTYPE_RAW, LINKTYPE_IPV4).
    RawIp,
    /// Linux cooked capture v1 (`tcpdump -i any`), 16-byte header.
    LinuxSll,
    /// Linux cooked capture v2, 20-byte header.
    LinuxSll2,
}

impl Link {
    fn from_linktype(l: Linktype) -> Result<Link, TraceError> {
        Ok(match l.0 {
            1 => Link::Ethernet,
            101 | 228 => Link::RawIp,
            113 => Link::LinuxSll,
            276 => Link::LinuxSll2,
            other => return Err(TraceError::LinkType(other)),
        })
    }
}

/// One frame of a capture.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    /// Capture time, nanoseconds since the epoch (or the capture's own origin).
    pub t_ns: u64,
    /// The frame's length on the wire.
    pub orig_len: u32,
    /// The bytes captured of it (the snap length may cut it short).
    pub data: &'a [u8],
    /// Its link layer.
    pub link: Link,
}

/// How a read ended.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadSummary {
    /// Frames read.
    pub frames: u64,
    /// The file ended inside a record: the frames before it were read.
    pub truncated: bool,
}

/// Bytes of the reading buffer: large enough for any jumbo frame's record.
const BUFFER: usize = 1 << 20;

/// Call `each` for every frame of the capture `path`, in file order; `each` returns false to
/// stop early. `progress(bytes read)` is called every 64k frames.
pub fn for_each_frame(
    path: &str,
    mut each: impl FnMut(&Frame<'_>) -> bool,
    mut progress: impl FnMut(u64),
) -> Result<ReadSummary, TraceError> {
    let file = File::open(path).map_err(|e| TraceError::Open(e.to_string()))?;
    let mut head = [0u8; 4];
    let n = (&file)
        .take(4)
        .read(&mut head)
        .map_err(|e| TraceError::Open(e.to_string()))?;
    drop(file);
    if n == 0 {
        return Err(TraceError::Empty);
    }
    let file = File::open(path).map_err(|e| TraceError::Open(e.to_string()))?;
    let mut reader = match create_reader(BUFFER, file) {
        Ok(r) => r,
        Err(PcapError::Incomplete(_)) if is_capture_magic(&head) => {
            return Err(TraceError::Truncated { frames: 0 })
        }
        Err(_) => return Err(TraceError::NotPcap(head)),
    };
    let mut summary = ReadSummary::default();
    // pcap: one link type and resolution for the file; pcapng: per interface.
    let mut legacy: Option<(Link, u64)> = None;
    let mut interfaces: Vec<Result<(Link, u64, u64), i32>> = Vec::new();
    loop {
        match reader.next() {
            Ok((offset, block)) => {
                let mut keep_going = true;
                match block {
                    PcapBlockOwned::LegacyHeader(h) => {
                        let ns = if h.is_nanosecond_precision() { 1 } else { 1000 };
                        legacy = Some((Link::from_linktype(h.network)?, ns));
                    }
                    PcapBlockOwned::Legacy(b) => {
                        let (link, mul) = legacy.expect("the header comes first");
                        let f = Frame {
                            t_ns: b.ts_sec as u64 * 1_000_000_000 + b.ts_usec as u64 * mul,
                            orig_len: b.origlen,
                            data: b.data,
                            link,
                        };
                        summary.frames += 1;
                        keep_going = each(&f);
                    }
                    PcapBlockOwned::NG(Block::SectionHeader(_)) => interfaces.clear(),
                    PcapBlockOwned::NG(Block::InterfaceDescription(idb)) => {
                        // An interface of a link type we cannot read only matters if it has
                        // packets: keep its type for the message.
                        let res = pcap_parser::pcapng::build_ts_resolution(idb.if_tsresol)
                            .unwrap_or(1_000_000);
                        interfaces.push(
                            Link::from_linktype(idb.linktype)
                                .map(|l| (l, res, idb.if_tsoffset as u64))
                                .map_err(|_| idb.linktype.0),
                        );
                    }
                    PcapBlockOwned::NG(Block::EnhancedPacket(epb)) => {
                        let (link, res, off) = match interfaces.get(epb.if_id as usize) {
                            Some(Ok(i)) => *i,
                            Some(Err(lt)) => return Err(TraceError::LinkType(*lt)),
                            None => {
                                return Err(TraceError::Corrupt {
                                    frames: summary.frames,
                                    what: format!("a packet of undeclared interface {}", epb.if_id),
                                })
                            }
                        };
                        let (s, frac) = epb.decode_ts(off, res);
                        let f = Frame {
                            t_ns: s as u64 * 1_000_000_000 + frac as u64 * 1_000_000_000 / res,
                            orig_len: epb.origlen,
                            data: epb.data,
                            link,
                        };
                        summary.frames += 1;
                        keep_going = each(&f);
                    }
                    PcapBlockOwned::NG(_) => {}
                }
                reader.consume(offset);
                if summary.frames % 65_536 == 0 {
                    progress(reader.consumed() as u64);
                }
                if !keep_going {
                    break;
                }
            }
            Err(PcapError::Eof) => break,
            Err(PcapError::Incomplete(_)) => reader
                .refill()
                .map_err(|e| TraceError::Read(e.to_string()))?,
            Err(PcapError::UnexpectedEof) => {
                summary.truncated = true;
                break;
            }
            Err(PcapError::BufferTooSmall) => {
                return Err(TraceError::Corrupt {
                    frames: summary.frames,
                    what: "a record longer than 1 MiB".into(),
                })
            }
            Err(e) => {
                return Err(TraceError::Corrupt {
                    frames: summary.frames,
                    what: e.to_string(),
                })
            }
        }
    }
    progress(reader.consumed() as u64);
    Ok(summary)
}

/// Whether `head` starts like a pcap or pcapng file.
fn is_capture_magic(head: &[u8; 4]) -> bool {
    matches!(
        u32::from_le_bytes(*head),
        0xa1b2_c3d4 | 0xd4c3_b2a1 | 0xa1b2_3c4d | 0x4d3c_b2a1 | 0x0a0d_0d0a
    )
}
