//! The analysis of one capture, one frame at a time: flows, the receiver's ingress per
//! interval, blocks, timeouts, and the incast signature.

use rustc_hash::FxHashMap;

use crate::decode::Segment;
use crate::flows::{Direction, FlowCounts};
pub use crate::report::{BlockRow, Episode, FlowRow, Intervals, RateRow, Report, WorstBlock};
use crate::verdict::{ends_stall, fmt_rate, fmt_time, stall_clause};

/// What the analysis needs to know.
#[derive(Debug, Clone)]
pub struct Options {
    /// The receiver's IPv4 address; `None`: the address that receives the most payload in
    /// the capture's first [`AUTO_RECEIVER_NS`].
    pub receiver: Option<u32>,
    /// The senders' minimum RTO.
    pub rto_min_ns: u64,
    /// An idle gap of this share of RTOmin before a resend marks a timeout. Below 1: the
    /// sender's timer runs from the last ACK that advanced, and segments above a hole keep
    /// arriving after it, so the silence a capture sees is shorter than the RTO by up to
    /// that tail (a fifth of RTOmin in the simulator's 16-sender collapse).
    pub rto_gap: f64,
    /// Width of the per-interval rows, nanoseconds.
    pub interval_ns: u64,
    /// Fewest flows timing out within one RTOmin that make a synchronized-timeout episode.
    pub min_flows: u32,
    /// Share of the RTOmin before an episode the receiver's link must have idled.
    pub min_idle: f64,
    /// Most points kept for the worst block's sequence plot.
    pub max_plot_points: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            receiver: None,
            rto_min_ns: 200_000_000,
            rto_gap: 0.8,
            interval_ns: 1_000_000,
            min_flows: 3,
            min_idle: 0.5,
            max_plot_points: 1_000_000,
        }
    }
}

/// The receiver is chosen after this much capture time, unless given.
pub const AUTO_RECEIVER_NS: u64 = 1_000_000_000;
/// Bits of the recent-directions cache's index (256 slots).
const RECENT_BITS: u32 = 8;
/// Most timer-driven resends kept for reading the senders' timer tick.
const MAX_TIMER_FIRES: usize = 10_000;
/// Silence into the receiver after which the port's queue is empty at any rate of 10 Mbps
/// or more (a frame takes 1.2 ms at 10 Mbps), nanoseconds.
const TIMER_IDLE_NS: u64 = 1_500_000;
/// An interval whose ingress is below this share of the busiest interval counts as idle.
pub const IDLE_SHARE: f64 = 0.05;

/// The receiver's ingress during one interval.
#[derive(Debug, Clone, Copy, Default)]
struct Bin {
    /// Frame bytes into the receiver (headers included).
    wire: u64,
    /// Payload bytes it got for the first time.
    goodput: u64,
    /// Segments resent towards it.
    retx: u32,
    /// Timeouts of flows into it.
    rtos: u32,
}

/// A block (one round of requests and their responses) while it is read.
#[derive(Debug, Clone, Default)]
struct OpenBlock {
    id: u32,
    start_ns: u64,
    /// Its first data segment.
    first_data_ns: Option<u64>,
    last_data_ns: u64,
    bytes: u64,
    rtos: u32,
    retx: u64,
    flows: u32,
    samples: Vec<Sample>,
    /// [`BlockRow::probe_stalls`].
    stalls: u32,
    /// The earliest and the latest request of its flows (when seen).
    requests: Option<(u64, u64)>,
    /// [`BlockRow::answer_delays_ns`], in arrival order.
    answers: Vec<u64>,
}

/// A timeout of a flow into the receiver, as the capture shows it.
#[derive(Debug, Clone, Copy)]
struct RtoEvent {
    t_ns: u64,
    dir: u32,
    /// The block it fell in.
    block: u32,
    /// The silence it ended, and the packets the sender lost meanwhile (see
    /// [`crate::flows::DataVerdict`]).
    silence_ns: u64,
    unseen: u32,
    /// Backed-off timeouts the silence held before this one (found by `finish`).
    backed_off: u32,
}

/// One data segment of the worst block's plot.
#[derive(Debug, Clone, Copy, Default)]
struct Sample {
    t_ns: u64,
    flow: u32,
    seq: i64,
    retx: bool,
}

/// The analysis in progress.
#[derive(Debug)]
pub struct Analyzer {
    opts: Options,
    /// The idle gap that marks a timeout: `rto_gap` of RTOmin.
    rto_gap_ns: u64,
    index: FxHashMap<(u32, u32, u16, u16), u32>,
    /// The directions seen lately, by a hash of their addresses and ports: most segments
    /// find theirs here, without the map's hashing and probing.
    recent: Box<[(u128, u32); 1 << RECENT_BITS]>,
    dirs: Vec<Direction>,
    /// Flow numbers (for the report) of directions into the receiver.
    flow_no: Vec<u32>,
    t0: Option<u64>,
    frames: u64,
    tcp: u64,
    copies: u64,
    receiver: Option<u32>,
    /// Inferred rather than given.
    inferred: bool,
    bins: Vec<Bin>,
    /// Timeouts of flows into the receiver.
    rto_events: Vec<RtoEvent>,
    first_data: Option<u64>,
    last_data: u64,
    block: Option<OpenBlock>,
    blocks: Vec<BlockRow>,
    worst: Option<(u64, OpenBlock)>,
    next_flow: u32,
    /// When a timeout's resend arrived, for the senders' timer tick.
    timer_fires: Vec<u64>,
}

impl Analyzer {
    /// Start an analysis of the flows into `receiver` (`inferred`: not given by the user).
    pub fn new(opts: Options, receiver: Option<u32>, inferred: bool) -> Analyzer {
        Analyzer {
            receiver,
            inferred,
            rto_gap_ns: (opts.rto_min_ns as f64 * opts.rto_gap) as u64,
            opts,
            index: FxHashMap::default(),
            recent: Box::new([(0, u32::MAX); 1 << RECENT_BITS]),
            dirs: Vec::new(),
            flow_no: Vec::new(),
            t0: None,
            frames: 0,
            tcp: 0,
            copies: 0,
            bins: Vec::new(),
            rto_events: Vec::new(),
            first_data: None,
            last_data: 0,
            block: None,
            blocks: Vec::new(),
            worst: None,
            next_flow: 0,
            timer_fires: Vec::new(),
        }
    }

    /// A frame that is not a TCP segment.
    #[inline]
    pub fn other_frame(&mut self, t: u64) {
        self.frames += 1;
        self.t0.get_or_insert(t);
    }

    fn direction(&mut self, s: &Segment, t: u64) -> u32 {
        let key = (s.src, s.dst, s.sport, s.dport);
        let packed = u128::from(s.src) << 64
            | u128::from(s.dst) << 32
            | u128::from(s.sport) << 16
            | u128::from(s.dport);
        let slot = (s.src ^ s.dst.rotate_left(16) ^ u32::from(s.sport) << 16 ^ u32::from(s.dport))
            .wrapping_mul(0x9e37_79b9)
            >> (32 - RECENT_BITS);
        let recent = &mut self.recent[slot as usize];
        if recent.0 == packed && recent.1 != u32::MAX {
            return recent.1;
        }
        if let Some(&d) = self.index.get(&key) {
            *recent = (packed, d);
            return d;
        }
        let d = self.dirs.len() as u32;
        let mut dir = Direction::new(s.src, s.dst, s.sport, s.dport, t);
        if let Some(&r) = self.index.get(&(s.dst, s.src, s.dport, s.sport)) {
            dir.reverse = Some(r);
            self.dirs[r as usize].reverse = Some(d);
        }
        self.dirs.push(dir);
        self.flow_no.push(u32::MAX);
        self.index.insert(key, d);
        self.recent[slot as usize] = (packed, d);
        d
    }

    /// The receiver's interval at `t`.
    #[inline]
    fn bin_at(&mut self, t: u64) -> &mut Bin {
        let i = ((t - self.t0.unwrap_or(t)) / self.opts.interval_ns) as usize;
        if self.bins.len() <= i {
            self.bins.resize(i + 1, Bin::default());
        }
        &mut self.bins[i]
    }

    /// A TCP segment captured at `t` in a frame of `wire` bytes.
    #[inline]
    pub fn segment(&mut self, t: u64, wire: u32, s: &Segment) {
        self.frames += 1;
        self.tcp += 1;
        self.t0.get_or_insert(t);
        let d = self.direction(s, t);
        if self.dirs[d as usize].is_copy(s) {
            self.copies += 1;
            return;
        }
        if let Some(r) = self.dirs[d as usize].reverse {
            self.dirs[r as usize].on_peer(t, s.has_ack, s.ack, s.sack, s.len);
        }
        let gap = self.rto_gap_ns;
        let dir = &mut self.dirs[d as usize];
        dir.on_packet(t, s.ce, s.ece, s.ip_id, s.len);
        dir.remember(s.seq, s.ack, s.len);
        let into_receiver = self.receiver == Some(s.dst);
        if s.syn {
            dir.syn_ns.get_or_insert(t);
        }
        if s.len == 0 || s.syn || s.rst {
            if into_receiver {
                self.bin_at(t).wire += wire as u64;
            }
            return;
        }
        let v = dir.on_data(t, s.seq, s.len, gap);
        dir.counts.ect += u64::from(s.ect);
        dir.counts.cwr += u64::from(s.cwr);
        if !into_receiver {
            return;
        }
        let b = self.bin_at(t);
        b.wire += wire as u64;
        b.goodput += v.new_bytes;
        b.retx += u32::from(v.retx.is_some());
        b.rtos += u32::from(v.rto_event);
        // A timeout's resend into a port that had been idle arrives a fixed delay after its
        // timer fired; one behind other flows' data (or a probe's) queues for a while.
        let idle = self.first_data.is_some() && t.saturating_sub(self.last_data) >= TIMER_IDLE_NS;
        if v.rto_event && idle && self.timer_fires.len() < MAX_TIMER_FIRES {
            self.timer_fires.push(t);
        }
        self.first_data.get_or_insert(t);
        self.last_data = t;
        self.track_block(t, d, &v);
        if v.rto_event {
            self.rto_events.push(RtoEvent {
                t_ns: t,
                dir: d,
                block: self.block.as_ref().map_or(0, |b| b.id),
                silence_ns: v.silence_ns,
                unseen: v.unseen,
                backed_off: 0,
            });
        }
    }

    fn track_block(&mut self, t: u64, d: u32, v: &crate::flows::DataVerdict) {
        // The open block is worked on in place: moving it out and back per segment cost a
        // twentieth of the analysis.
        let dir = &self.dirs[d as usize];
        let request = dir.request_ns.unwrap_or(t);
        let open = self.block.get_or_insert_with(|| OpenBlock {
            start_ns: request,
            ..OpenBlock::default()
        });
        if v.response_start && dir.block == Some(open.id) {
            // This flow answers again: the previous block is over.
            let next = OpenBlock {
                id: open.id + 1,
                start_ns: request,
                ..OpenBlock::default()
            };
            let done = std::mem::replace(open, next);
            self.close_block(done);
        }
        let Some(block) = self.block.as_mut() else {
            return;
        };
        let dir = &mut self.dirs[d as usize];
        if dir.block != Some(block.id) {
            dir.block = Some(block.id);
            block.flows += 1;
            let asked = if dir.request_ns.is_some() {
                request
            } else {
                block.start_ns
            };
            block.answers.push(t.saturating_sub(asked));
            if dir.request_ns.is_some() {
                let (lo, hi) = block.requests.get_or_insert((request, request));
                *lo = (*lo).min(request);
                *hi = (*hi).max(request);
            }
        }
        block.first_data_ns.get_or_insert(t);
        let since = block.last_data_ns.max(block.start_ns);
        block.stalls += u32::from(ends_stall(since, t, self.opts.rto_min_ns, v.rto_event));
        block.last_data_ns = t;
        block.bytes += v.new_bytes;
        block.rtos += u32::from(v.rto_event);
        block.retx += u64::from(v.retx.is_some());
        if block.samples.len() < self.opts.max_plot_points {
            if self.flow_no[d as usize] == u32::MAX {
                self.flow_no[d as usize] = self.next_flow;
                self.next_flow += 1;
            }
            block.samples.push(Sample {
                t_ns: t,
                flow: self.flow_no[d as usize],
                seq: v.rel_seq,
                retx: v.retx.is_some(),
            });
        }
    }

    fn close_block(&mut self, mut b: OpenBlock) {
        let dur = b.last_data_ns.saturating_sub(b.start_ns);
        self.blocks.push(BlockRow {
            block: b.id,
            start_ns: b.start_ns - self.t0.unwrap_or(0),
            duration_ns: dur,
            first_answer_ns: b.first_data_ns.map_or(0, |f| f.saturating_sub(b.start_ns)),
            bytes: b.bytes,
            goodput_bps: if dur > 0 {
                b.bytes as f64 * 8e9 / dur as f64
            } else {
                0.0
            },
            flows: b.flows,
            rtos: b.rtos,
            retx: b.retx,
            probe_stalls: b.stalls,
            request_spread_ns: b.requests.map_or(0, |(lo, hi)| hi - lo),
            answer_delays_ns: {
                let mut a = std::mem::take(&mut b.answers);
                a.sort_unstable();
                a
            },
        });
        if self.worst.as_ref().is_none_or(|(w, _)| dur > *w) {
            // Keep its points; hand the old worst's buffer back for reuse.
            let old = self.worst.replace((dur, std::mem::take(&mut b)));
            drop(old);
        }
    }

    /// The report, once every frame has been read.
    pub fn finish(mut self, truncated: bool) -> Report {
        if let Some(b) = self.block.take() {
            self.close_block(b);
        }
        let t0 = self.t0.unwrap_or(0);
        let rto_estimate = self.count_backoffs(t0);
        let receiver = self.receiver;
        let mut r = Report {
            frames: self.frames,
            tcp_segments: self.tcp,
            copies: self.copies,
            truncated,
            receiver: receiver.map(|ip| std::net::Ipv4Addr::from(ip).to_string()),
            receiver_inferred: self.inferred,
            rto_min_ns: self.opts.rto_min_ns,
            interval_ns: self.opts.interval_ns,
            t0_ns: t0,
            rto_estimate_ns: rto_estimate,
            rto_silences_ns: self.silences(),
            timer_fires_ns: self.timer_fires.iter().map(|&t| t - t0).collect(),
            ..Report::default()
        };
        r.handshake_ns = self.handshake_ns();
        // The shortest loop from the receiver back to itself: no packet sent in answer to
        // one of its ACKs arrives sooner (a request's first answer adds the server's time).
        let loop_ns = self
            .blocks
            .iter()
            .map(|b| b.first_answer_ns)
            .chain([r.handshake_ns])
            .filter(|&l| l > 0)
            .min()
            .unwrap_or(0);
        // Flows into the receiver, numbered as first seen (those in blocks keep theirs).
        let mut rows = Vec::new();
        for (i, d) in self.dirs.iter().enumerate() {
            if Some(d.dst) != receiver || d.counts.data_packets == 0 {
                continue;
            }
            if self.flow_no[i] == u32::MAX {
                self.flow_no[i] = self.next_flow;
                self.next_flow += 1;
            }
            r.goodput_bytes += d.counts.unique_bytes;
            r.rtos += d.counts.rtos;
            r.rtos_backed_off += d.counts.rtos_backed_off;
            r.retx_fast += d.counts.retx_fast;
            r.retx_rto += d.counts.retx_rto;
            r.retx_tlp += d.counts.retx_tlp;
            rows.push(FlowRow {
                flow: self.flow_no[i],
                src: std::net::Ipv4Addr::from(d.src).to_string(),
                sport: d.sport,
                dst: std::net::Ipv4Addr::from(d.dst).to_string(),
                dport: d.dport,
                counts: FlowCounts {
                    echoes: d.reverse.map_or(0, |r| self.dirs[r as usize].ece),
                    ..d.counts
                },
                first_ns: d.first_ns - t0,
                last_ns: d.last_ns - t0,
                first_data_ns: d.first_data_ns.map_or(0, |t| t - t0),
                last_data_ns: d.last_data_ns().map_or(0, |t| t - t0),
                flight: d.flight.read(loop_ns, d.ids_count_packets()),
            });
        }
        rows.sort_by_key(|f| f.flow);
        r.flows = rows;
        let span = match self.first_data {
            Some(f) => self.last_data - f,
            None => 0,
        };
        r.span_ns = span;
        r.goodput_bps = if span > 0 {
            r.goodput_bytes as f64 * 8e9 / span as f64
        } else {
            0.0
        };
        r.rates = self.rates();
        r.episodes = self.episodes(t0);
        r.intervals = Intervals {
            wire_bytes: self.bins.iter().map(|b| b.wire).collect(),
            goodput_bytes: self.bins.iter().map(|b| b.goodput).collect(),
            retx: self.bins.iter().map(|b| b.retx).collect(),
            rtos: self.bins.iter().map(|b| b.rtos).collect(),
        };
        r.blocks = std::mem::take(&mut self.blocks);
        r.probe_stalls = r.blocks.iter().map(|b| u64::from(b.probe_stalls)).sum();
        r.worst_block = self.worst.take().map(|(_, b)| {
            // Each flow's sequence from its first byte in the block.
            let mut first: FxHashMap<u32, i64> = FxHashMap::default();
            for x in &b.samples {
                let f = first.entry(x.flow).or_insert(x.seq);
                *f = (*f).min(x.seq);
            }
            WorstBlock {
                block: b.id,
                start_ns: b.start_ns - t0,
                t_ns: b.samples.iter().map(|s| s.t_ns - b.start_ns).collect(),
                flow: b.samples.iter().map(|s| s.flow).collect(),
                seq: b.samples.iter().map(|s| s.seq - first[&s.flow]).collect(),
                retx: b.samples.iter().map(|s| s.retx).collect(),
                cut: b.samples.len() >= self.opts.max_plot_points,
            }
        });
        r.incast = r.episodes.iter().any(|e| e.synchronized);
        r.verdict = verdict(&r, &self.opts);
        r
    }

    /// The shortest handshake into the receiver's flows: its SYN to the SYN-ACK, as the
    /// receiver's side of the path sees it (0: no handshake in the capture).
    fn handshake_ns(&self) -> u64 {
        self.dirs
            .iter()
            .filter(|d| Some(d.dst) == self.receiver)
            .filter_map(|d| {
                let syn = self.dirs[d.reverse? as usize].syn_ns?;
                d.syn_ns?.checked_sub(syn)
            })
            .min()
            .unwrap_or(0)
    }

    /// Timeouts a silence held before the one that ended it: the RTO doubles after each, so
    /// k timeouts take (2^k - 1) RTOs of silence (k is rounded), and each lost a packet (the original, then
    /// k - 1 retransmissions), which the sender's IP identifications show. The RTO is the
    /// lower quartile of the silences the capture's timeouts ended, at least RTOmin (the
    /// kernel's is RTOmin plus the smoothed RTT, which the capture cannot see whole). Adds
    /// them to their flows, intervals and blocks; returns the RTO used.
    fn silences(&self) -> Vec<u64> {
        let mut s: Vec<u64> = self.rto_events.iter().map(|e| e.silence_ns).collect();
        s.sort_unstable();
        s
    }

    fn count_backoffs(&mut self, t0: u64) -> u64 {
        let mut silences: Vec<u64> = self.rto_events.iter().map(|e| e.silence_ns).collect();
        if silences.is_empty() {
            return self.opts.rto_min_ns;
        }
        silences.sort_unstable();
        let rto = silences[silences.len() / 4]
            .max(self.opts.rto_min_ns)
            .max(1);
        for e in &mut self.rto_events {
            if e.unseen < 2 {
                continue;
            }
            // Nearest, not floor: one timeout's silence is 0.8 to 1.3 RTOs (log2 0.85 to 1.2),
            // two's about 3 (log2 2), and a silence may fall a hair short of 3 estimated RTOs.
            let k = (e.silence_ns as f64 / rto as f64 + 1.0).log2().round() as u32;
            e.backed_off = k.min(e.unseen).saturating_sub(1);
            if e.backed_off == 0 {
                continue;
            }
            let extra = e.backed_off;
            let c = &mut self.dirs[e.dir as usize].counts;
            c.rtos += u64::from(extra);
            c.rtos_backed_off += u64::from(extra);
            if let Some(b) = self
                .bins
                .get_mut(((e.t_ns - t0) / self.opts.interval_ns) as usize)
            {
                b.rtos += extra;
            }
            if let Ok(i) = self.blocks.binary_search_by_key(&e.block, |b| b.block) {
                self.blocks[i].rtos += extra;
            }
        }
        rto
    }

    /// Average and peak over aligned windows of 1 ms, 10 ms and 1 s (and the interval if
    /// finer), over the bins from the first to the last data segment.
    fn rates(&self) -> Vec<RateRow> {
        let (Some(first), t0) = (self.first_data, self.t0.unwrap_or(0)) else {
            return Vec::new();
        };
        let iv = self.opts.interval_ns;
        let lo = ((first - t0) / iv) as usize;
        let hi = (((self.last_data - t0) / iv) as usize + 1).min(self.bins.len());
        let bins = &self.bins[lo.min(hi)..hi];
        let total: u64 = bins.iter().map(|b| b.wire).sum();
        let span = (bins.len() as u64 * iv).max(1);
        let avg = total as f64 * 8e9 / span as f64;
        let mut widths = vec![1_000_000u64, 10_000_000, 1_000_000_000];
        if iv < 1_000_000 {
            widths.insert(0, iv);
        }
        widths
            .into_iter()
            .filter(|w| w % iv == 0)
            .map(|w| {
                let k = (w / iv) as usize;
                let peak = bins
                    .chunks(k)
                    .map(|c| c.iter().map(|b| b.wire).sum::<u64>())
                    .max()
                    .unwrap_or(0);
                // A window longer than the span: its peak is the span's average.
                let peak_bps = if bins.len() < k {
                    avg
                } else {
                    peak as f64 * 8e9 / w as f64
                };
                RateRow {
                    window_ns: w,
                    avg_bps: avg,
                    peak_bps,
                    peak_to_avg: if avg > 0.0 { peak_bps / avg } else { 0.0 },
                }
            })
            .collect()
    }

    /// Timeouts of flows into the receiver, clustered: each episode holds the timeouts
    /// within one RTOmin of its first.
    fn episodes(&self, t0: u64) -> Vec<Episode> {
        let rto = self.opts.rto_min_ns;
        let iv = self.opts.interval_ns;
        let peak = self.bins.iter().map(|b| b.wire).max().unwrap_or(0);
        let idle_below = (peak as f64 * IDLE_SHARE) as u64;
        let mut out = Vec::new();
        let ev = &self.rto_events;
        let mut i = 0;
        let mut seen: Vec<u32> = Vec::new();
        while i < ev.len() {
            let start = ev[i].t_ns;
            let mut j = i;
            let mut rtos = 0;
            seen.clear();
            while j < ev.len() && ev[j].t_ns < start + rto {
                seen.push(ev[j].dir);
                rtos += 1 + ev[j].backed_off;
                j += 1;
            }
            seen.sort_unstable();
            seen.dedup();
            // The receiver's link over the RTOmin before the first timeout.
            let a = (start.saturating_sub(rto).max(t0) - t0) / iv;
            let b = (start - t0) / iv;
            let idle = (a..b)
                .filter(|&k| {
                    self.bins
                        .get(k as usize)
                        .is_none_or(|x| x.wire <= idle_below)
                })
                .count();
            let idle_before = if b > a {
                idle as f64 / (b - a) as f64
            } else {
                0.0
            };
            let flows = seen.len() as u32;
            out.push(Episode {
                start_ns: start - t0,
                rtos,
                flows,
                idle_before,
                synchronized: flows >= self.opts.min_flows && idle_before >= self.opts.min_idle,
            });
            i = j;
        }
        out
    }
}

/// The verdict line.
fn verdict(r: &Report, o: &Options) -> String {
    let rto = fmt_time(o.rto_min_ns);
    let peak1 = r
        .rates
        .iter()
        .find(|x| x.window_ns == 1_000_000)
        .map_or(0.0, |x| x.peak_bps);
    let share = if peak1 > 0.0 {
        format!(
            "goodput {} = {:.0}% of the peak 1 ms ingress {}",
            fmt_rate(r.goodput_bps),
            100.0 * r.goodput_bps / peak1,
            fmt_rate(peak1)
        )
    } else {
        format!("goodput {}", fmt_rate(r.goodput_bps))
    };
    let sync: Vec<&Episode> = r.episodes.iter().filter(|e| e.synchronized).collect();
    let line = if let Some(big) = sync.iter().max_by_key(|e| e.flows) {
        format!(
            "incast: {} synchronized-timeout episode{} (up to {} of {} flows timed out within \
             one RTOmin of {rto} while the receiver's link idled {:.0}% of the RTOmin before); {share}",
            sync.len(),
            if sync.len() == 1 { "" } else { "s" },
            big.flows,
            r.flows.len(),
            100.0 * big.idle_before,
        )
    } else if r.rtos > 0 {
        format!(
            "no incast signature: {} timeout{} but never {} or more flows within one RTOmin \
             of {rto} over an idle link; {share}",
            r.rtos,
            if r.rtos == 1 { "" } else { "s" },
            o.min_flows
        )
    } else {
        format!("no incast signature: no timeouts (idle gaps >= RTOmin of {rto}); {share}")
    };
    let stalled = r.blocks.iter().filter(|b| b.probe_stalls > 0).count();
    line + &stall_clause(stalled, r.blocks.len(), o.rto_min_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(src: u32, dst: u32, seq: u32, len: u32) -> Segment {
        Segment {
            src,
            dst,
            sport: if src == 100 { 40000 + dst as u16 } else { 9000 },
            dport: if src == 100 { 9000 } else { 40000 + src as u16 },
            seq,
            ack: 1,
            len,
            has_ack: true,
            ..Segment::default()
        }
    }

    const MS: u64 = 1_000_000;

    /// `n` senders each answer a request from host 100 with 10 segments; in block 1 every
    /// sender's last 3 segments are lost and resent after 200 ms of silence.
    fn run(n: u32) -> Report {
        let mut a = Analyzer::new(Options::default(), Some(100), false);
        let mut t = 0;
        let mut req_seq = vec![1u32; n as usize];
        let mut data_seq = vec![1u32; n as usize];
        for block in 0..3 {
            for s in 0..n {
                a.segment(t, 166, &seg(100, s, req_seq[s as usize], 100));
                req_seq[s as usize] += 100;
                t += 1000;
            }
            let lossy = block == 1;
            for k in 0..10 {
                for s in 0..n {
                    let q = &mut data_seq[s as usize];
                    if !(lossy && k >= 7) {
                        a.segment(t, 1514, &seg(s, 100, *q, 1448));
                    }
                    *q += 1448;
                    t += 12_000;
                }
            }
            if lossy {
                t += 200 * MS;
                for s in 0..n {
                    let base = data_seq[s as usize] - 3 * 1448;
                    for k in 0..3 {
                        a.segment(t, 1514, &seg(s, 100, base + k * 1448, 1448));
                        t += 12_000;
                    }
                }
            }
            t += MS;
        }
        a.finish(false)
    }

    #[test]
    fn a_timeout_into_an_idle_port_marks_the_tick_and_the_ones_queued_behind_it_do_not() {
        // Block 1's 16 resends come 200 ms after the link went quiet, 12 us apart: only the
        // first found the port idle.
        let r = run(16);
        assert_eq!(r.timer_fires_ns.len(), 1, "{:?}", r.timer_fires_ns);
    }

    #[test]
    fn the_shortest_syn_to_syn_ack_is_the_handshake() {
        let mut a = Analyzer::new(Options::default(), Some(100), false);
        for (s, rtt) in [(1u32, 80_000u64), (2, 50_000)] {
            let t = u64::from(s) * MS;
            a.segment(
                t,
                74,
                &Segment {
                    syn: true,
                    has_ack: false,
                    ..seg(100, s, 0, 0)
                },
            );
            a.segment(
                t + rtt,
                74,
                &Segment {
                    syn: true,
                    ..seg(s, 100, 0, 0)
                },
            );
            a.segment(t + 2 * rtt, 1514, &seg(s, 100, 1, 1448));
        }
        assert_eq!(a.finish(false).handshake_ns, 50_000);
    }

    #[test]
    fn sixteen_senders_timing_out_together_is_incast_and_one_sender_is_not() {
        let r = run(16);
        assert_eq!(r.rtos, 16);
        assert_eq!(r.blocks.len(), 3);
        assert_eq!(r.blocks[1].rtos, 16);
        assert_eq!(r.episodes.len(), 1);
        assert_eq!(r.episodes[0].flows, 16);
        assert!(r.episodes[0].idle_before > 0.9, "{:?}", r.episodes);
        assert!(r.incast, "{}", r.verdict);
        assert!(
            r.verdict.starts_with("incast: 1 synchronized"),
            "{}",
            r.verdict
        );
        assert_eq!(r.goodput_bytes, 3 * 16 * 10 * 1448);
        // A later block starts at its first request; 16 requests 1 us apart precede the first
        // answer. The first block's requests open their connections' first exchange, before
        // the analysis knows which side requests: its start is its first answer.
        let answers: Vec<u64> = r.blocks.iter().map(|b| b.first_answer_ns).collect();
        assert_eq!(answers, [0, 16 * 1000, 16 * 1000]);
        // Each flow's silence: from its last segment before the loss (12 us apart, up to
        // 1.1 ms before the 200 ms pause ends) to its resend.
        assert_eq!(r.rto_silences_ns.len(), 16);
        assert!(r.rto_silences_ns.windows(2).all(|w| w[0] <= w[1]));
        assert!(r
            .rto_silences_ns
            .iter()
            .all(|&s| (200 * MS..202 * MS).contains(&s)));
        let w = r.worst_block.as_ref().unwrap();
        assert_eq!(w.block, 1);
        assert_eq!(w.t_ns.len(), 16 * 10);

        let r = run(1);
        assert_eq!(r.rtos, 1);
        assert!(!r.incast, "{}", r.verdict);
        assert!(
            r.verdict.starts_with("no incast signature: 1 timeout"),
            "{}",
            r.verdict
        );
    }

    /// One sender answers host 100's request with 5 segments, falls silent for `silence_ns`
    /// and sends 5 more (new data: no loss, no timeout; a paced or delayed-ACK stall).
    fn stalled_answer(silence_ns: u64) -> Report {
        let mut a = Analyzer::new(Options::default(), Some(100), false);
        a.segment(0, 166, &seg(100, 1, 1, 100));
        let mut t = 0;
        let mut q = 1;
        for k in 0..10 {
            t += if k == 5 { silence_ns } else { 12_000 };
            a.segment(t, 1514, &seg(1, 100, q, 1448));
            q += 1448;
        }
        a.finish(false)
    }

    #[test]
    fn a_block_silent_for_half_the_rto_min_without_a_timeout_is_a_probe_stall() {
        let half = Options::default().rto_min_ns / 2;
        let r = stalled_answer(half - 1);
        assert_eq!(
            (r.rtos, r.probe_stalls, r.blocks[0].probe_stalls),
            (0, 0, 0)
        );
        let r = stalled_answer(half);
        assert_eq!(
            (r.rtos, r.probe_stalls, r.blocks[0].probe_stalls),
            (0, 1, 1)
        );
        let said = "; 1 of 1 blocks waited 100 ms or more without a timeout (probe stalls)";
        assert!(r.verdict.ends_with(said), "{}", r.verdict);
        // Timeouts are not probe stalls: sixteen senders' 200 ms silence ended by RTOs.
        let r = run(16);
        assert_eq!((r.rtos, r.probe_stalls), (16, 0));
    }

    #[test]
    fn a_block_shows_when_its_requests_left_and_how_long_each_server_took_to_answer() {
        // The client asks four servers 50 us apart; server s answers 100 us + s ms after its
        // own request (a server that waits, as servers sharing a CPU do).
        let mut a = Analyzer::new(Options::default(), Some(100), false);
        let mut frames = Vec::new();
        for s in 0..4u32 {
            // The server's end of the handshake, then the request.
            frames.push((u64::from(s), 66, seg(s, 100, 0, 0)));
            let asked = MS + u64::from(s) * 50_000;
            frames.push((asked, 166, seg(100, s, 1, 100)));
            let answer = asked + 100_000 + u64::from(s) * MS;
            for k in 0..3u32 {
                frames.push((
                    answer + u64::from(k) * 12_000,
                    1514,
                    seg(s, 100, 1 + k * 1448, 1448),
                ));
            }
        }
        frames.sort_by_key(|f| f.0);
        for (t, wire, s) in &frames {
            a.segment(*t, *wire, s);
        }
        let r = a.finish(false);
        assert_eq!(r.blocks.len(), 1);
        assert_eq!(r.blocks[0].request_spread_ns, 150_000);
        assert_eq!(
            r.blocks[0].answer_delays_ns,
            vec![100_000, 1_100_000, 2_100_000, 3_100_000]
        );
    }

    #[test]
    fn a_silence_of_three_rtos_where_the_sender_lost_a_retransmission_holds_two_timeouts() {
        // Five senders answer with 6 segments, numbered by their IP identification; each loses
        // its last 2. Four resend them 210 ms later; the fifth's first resend is lost too
        // (one more identification missing) and it resends 3 RTOs (630 ms) later.
        let mut a = Analyzer::new(Options::default(), Some(100), false);
        for s in 0..5u32 {
            let mut t = u64::from(s) * 10 * MS;
            a.segment(t, 166, &seg(100, s, 1, 100));
            let mut id = 1000u16;
            for k in 0..6u32 {
                t += 12_000;
                if k < 4 {
                    a.segment(
                        t,
                        1514,
                        &Segment {
                            ip_id: id,
                            ..seg(s, 100, 1 + k * 1448, 1448)
                        },
                    );
                    a.segment(
                        t + 1000,
                        66,
                        &Segment {
                            ack: 1 + (k + 1) * 1448,
                            ..seg(100, s, 101, 0)
                        },
                    );
                }
                id += 1;
            }
            let (silence, lost) = if s == 4 { (630 * MS, 1) } else { (210 * MS, 0) };
            a.segment(
                t + silence,
                1514,
                &Segment {
                    ip_id: id + lost,
                    ..seg(s, 100, 1 + 4 * 1448, 1448)
                },
            );
        }
        let r = a.finish(false);
        assert_eq!(r.rtos, 6, "{:?}", r.flows);
        assert_eq!(r.rtos_backed_off, 1);
        assert_eq!(r.flows[4].counts.rtos, 2);
        assert_eq!(
            r.rto_estimate_ns,
            210 * MS + 24_000,
            "from the last segment seen"
        );
        assert_eq!(r.intervals.rtos.iter().sum::<u32>(), 6);
        assert_eq!(r.blocks.iter().map(|b| b.rtos).sum::<u32>(), 6);
    }

    #[test]
    fn a_packet_captured_on_two_interfaces_is_analysed_once() {
        let mut a = Analyzer::new(Options::default(), Some(100), false);
        let mut t = 0;
        for k in 0..4u32 {
            let data = Segment {
                ip_id: 500 + k as u16,
                ..seg(1, 100, 1 + k * 1448, 1448)
            };
            // Seen on the bridge port, then on the bridge: the same packet.
            a.segment(t, 1514, &data);
            a.segment(t + 2000, 1514, &data);
            t += 12_000;
        }
        // A retransmission carries a new identification: not a copy.
        let resend = Segment {
            ip_id: 504,
            ..seg(1, 100, 1 + 3 * 1448, 1448)
        };
        a.segment(t, 1514, &resend);
        let r = a.finish(false);
        // The first copy comes before the identifications have shown that they count
        // packets (one step), so it is analysed: a resend.
        assert_eq!((r.frames, r.tcp_segments, r.copies), (9, 9, 3));
        assert_eq!(r.flows[0].counts.data_packets, 6);
        assert_eq!(r.goodput_bytes, 4 * 1448);
        assert_eq!(r.retx_fast + r.retx_tlp + r.retx_rto, 2);
    }

    #[test]
    fn peak_to_average_grows_as_the_window_shrinks_on_a_bursty_trace() {
        let r = run(16);
        let p: Vec<f64> = r.rates.iter().map(|x| x.peak_to_avg).collect();
        assert_eq!(r.rates[0].window_ns, MS);
        assert!(p[0] > p[1] && p[1] >= p[2], "{p:?}");
        assert!(p[0] > 5.0, "{p:?}");
    }
}
