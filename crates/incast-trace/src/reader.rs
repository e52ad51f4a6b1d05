//! Captures as a stream of frames: pcap (micro- or nanosecond) and pcapng, read through a
//! fixed buffer, never whole.
//!
//! Classic pcap, what tcpdump and the simulator write, is read by a loop of its own: a record
//! is a 16-byte header and the frame, so the loop reads both in place from the buffer (a
//! third of the analysis's time went to pcap-parser's per-record block enum before).
//! pcapng and anything else goes through pcap-parser.

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
    if let Some((swapped, tick_ns)) = legacy_format(&head) {
        return read_legacy(file, swapped, tick_ns, each, progress);
    }
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

/// A classic pcap file's byte order (swapped from little-endian or not) and timestamp tick
/// (1000 ns or 1 ns), from its magic number.
fn legacy_format(head: &[u8; 4]) -> Option<(bool, u64)> {
    match u32::from_le_bytes(*head) {
        0xa1b2_c3d4 => Some((false, 1000)),
        0xa1b2_3c4d => Some((false, 1)),
        0xd4c3_b2a1 => Some((true, 1000)),
        0x4d3c_b2a1 => Some((true, 1)),
        _ => None,
    }
}

/// The buffered bytes of a file read front to back: `buf[start..end]` are the next ones,
/// `done` bytes of the file came before them.
struct Window {
    file: File,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    done: u64,
}

impl Window {
    /// Make at least `want` bytes available (fewer only at the end of the file).
    fn fill(&mut self, want: usize) -> Result<usize, TraceError> {
        if self.end - self.start < want {
            self.buf.copy_within(self.start..self.end, 0);
            self.done += self.start as u64;
            self.end -= self.start;
            self.start = 0;
            while self.end < self.buf.len() {
                match self.file.read(&mut self.buf[self.end..]) {
                    Ok(0) => break,
                    Ok(n) => self.end += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(TraceError::Read(e.to_string())),
                }
            }
        }
        Ok(self.end - self.start)
    }

    /// Bytes of the file read so far.
    fn consumed(&self) -> u64 {
        self.done + self.start as u64
    }
}

/// A classic pcap file: a 24-byte header, then records of a 16-byte header (seconds,
/// fraction, captured and original length) and the frame.
fn read_legacy(
    file: File,
    swapped: bool,
    tick_ns: u64,
    mut each: impl FnMut(&Frame<'_>) -> bool,
    mut progress: impl FnMut(u64),
) -> Result<ReadSummary, TraceError> {
    let word = |b: &[u8]| {
        let w = [b[0], b[1], b[2], b[3]];
        if swapped {
            u32::from_be_bytes(w)
        } else {
            u32::from_le_bytes(w)
        }
    };
    let mut w = Window {
        file,
        buf: vec![0; BUFFER],
        start: 0,
        end: 0,
        done: 0,
    };
    if w.fill(24)? < 24 {
        return Err(TraceError::Truncated { frames: 0 });
    }
    // The link type is the low 16 bits; the FCS length and flags may sit above them.
    let link = Link::from_linktype(Linktype((word(&w.buf[20..24]) & 0xffff) as i32))?;
    w.start = 24;
    let mut summary = ReadSummary::default();
    loop {
        let have = w.fill(16)?;
        if have == 0 {
            break;
        }
        if have < 16 {
            summary.truncated = true;
            break;
        }
        let h = &w.buf[w.start..w.start + 16];
        let (sec, frac) = (word(&h[0..4]), word(&h[4..8]));
        let (caplen, orig_len) = (word(&h[8..12]) as usize, word(&h[12..16]));
        if caplen > BUFFER - 16 {
            return Err(TraceError::Corrupt {
                frames: summary.frames,
                what: "a record longer than 1 MiB".into(),
            });
        }
        if w.fill(16 + caplen)? < 16 + caplen {
            summary.truncated = true;
            break;
        }
        let at = w.start + 16;
        let f = Frame {
            t_ns: u64::from(sec) * 1_000_000_000 + u64::from(frac) * tick_ns,
            orig_len,
            data: &w.buf[at..at + caplen],
            link,
        };
        summary.frames += 1;
        let keep_going = each(&f);
        w.start = at + caplen;
        if summary.frames % 65_536 == 0 {
            progress(w.consumed());
        }
        if !keep_going {
            break;
        }
    }
    progress(w.consumed());
    Ok(summary)
}

/// Whether `head` starts like a pcap or pcapng file.
fn is_capture_magic(head: &[u8; 4]) -> bool {
    matches!(
        u32::from_le_bytes(*head),
        0xa1b2_c3d4 | 0xd4c3_b2a1 | 0xa1b2_3c4d | 0x4d3c_b2a1 | 0x0a0d_0d0a
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A classic pcap of `frames` (seconds, fraction, bytes) in either byte order.
    fn pcap(big_endian: bool, magic: u32, frames: &[(u32, u32, &[u8])]) -> Vec<u8> {
        let w = |v: u32| {
            if big_endian {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let mut out = Vec::new();
        out.extend(w(magic));
        out.extend(if big_endian {
            [0, 2, 0, 4]
        } else {
            [2, 0, 4, 0]
        });
        for v in [0, 0, 65_535, 1] {
            out.extend(w(v));
        }
        for (sec, frac, data) in frames {
            for v in [*sec, *frac, data.len() as u32, data.len() as u32 + 10] {
                out.extend(w(v));
            }
            out.extend(*data);
        }
        out
    }

    /// A frame as read: time, original length, bytes.
    type Got = (u64, u32, Vec<u8>);

    fn read(bytes: &[u8]) -> Result<(Vec<Got>, ReadSummary), TraceError> {
        static FILES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = FILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!(
            "incast-trace-reader-{}-{n}.pcap",
            std::process::id()
        ));
        std::fs::write(&p, bytes).unwrap();
        let mut got = Vec::new();
        let r = for_each_frame(
            p.to_str().unwrap(),
            |f| {
                got.push((f.t_ns, f.orig_len, f.data.to_vec()));
                true
            },
            |_| {},
        );
        std::fs::remove_file(&p).ok();
        r.map(|s| (got, s))
    }

    #[test]
    fn classic_pcap_in_either_byte_order_and_resolution_reads_the_same_frames() {
        let frames: [(u32, u32, &[u8]); 2] = [(1, 250, b"abc"), (2, 999, b"defgh")];
        for (big, magic, tick) in [
            (false, 0xa1b2_c3d4, 1000),
            (false, 0xa1b2_3c4d, 1),
            (true, 0xa1b2_c3d4, 1000),
            (true, 0xa1b2_3c4d, 1),
        ] {
            let (got, s) = read(&pcap(big, magic, &frames)).unwrap();
            assert!(!s.truncated);
            assert_eq!(s.frames, 2);
            assert_eq!(got[0], (1_000_000_000 + 250 * tick, 13, b"abc".to_vec()));
            assert_eq!(got[1], (2_000_000_000 + 999 * tick, 15, b"defgh".to_vec()));
        }
    }

    #[test]
    fn a_cut_header_or_record_and_an_oversized_record_are_told() {
        let whole = pcap(false, 0xa1b2_c3d4, &[(1, 0, b"abcdef"), (2, 0, b"ghijkl")]);
        assert_eq!(
            read(&whole[..20]).unwrap_err(),
            TraceError::Truncated { frames: 0 }
        );
        for cut in [whole.len() - 3, whole.len() - 18] {
            let (got, s) = read(&whole[..cut]).unwrap();
            assert!(s.truncated, "cut at {cut}");
            assert_eq!(got.len(), 1);
        }
        let mut huge = pcap(false, 0xa1b2_c3d4, &[(1, 0, b"abcdef")]);
        huge[32..36].copy_from_slice(&(2u32 << 20).to_le_bytes());
        assert!(matches!(
            read(&huge),
            Err(TraceError::Corrupt { frames: 0, .. })
        ));
    }
}
