//! One direction of a TCP connection as a capture shows it, and why each of its
//! retransmissions happened.
//!
//! The capture may sit anywhere on the path, so a segment lost before it is never seen: a
//! retransmission of it looks new. The rules, in order, for a data segment:
//!
//! 1. **RTO**: it comes after an idle gap of at least RTOmin in its direction, and either
//!    resends bytes already seen or (when the tail that was lost never reached the capture)
//!    the peer sent nothing since the previous segment, so it cannot be the answer to a new
//!    request. Segments resent below the highest byte sent at that moment follow the same
//!    timeout (go-back-N or SACK repair after it) and count as RTO retransmissions too.
//!    Or, where the capture sees the peer's ACKs: it resends the first unacknowledged
//!    segment at least that gap after the sender's timer last restarted (the ACK advanced,
//!    or that segment was sent), and no packet from the peer came just before to trigger
//!    it (an eighth of the gap): a timeout that fired while recovery kept sending.
//! 2. **Fast retransmit**: it resends seen bytes and the peer's last ACK was a duplicate or
//!    carried SACK blocks (RFC 5681, RFC 6675 loss recovery, RACK).
//! 3. **Tail-loss probe**: it resends the highest segment after a pause of at least
//!    [`TLP_MIN_NS`] with no duplicate ACK or SACK from the peer (RFC 8985 7).
//! 4. Any other resend counts as fast retransmit (recovery continuing).
//!
//! Linux numbers each connection's IP packets (the IPv4 identification steps by one per
//! packet sent), so where a direction's identifications step by one the capture also knows
//! how many packets the sender sent that it never saw. That tells three things the silence
//! alone cannot (each measured against the senders' own per-socket RTO counts):
//!
//! - an answer lost whole: the sender sent after the request (the counter moved) but the
//!   first the capture sees of the answer comes a timeout after the request: an RTO;
//! - a lone lost tail: Linux probes a single unacknowledged segment after 2·SRTT + RTOmin,
//!   no later than its RTO would fire, so when the one packet missed was the tail and the
//!   peer had acknowledged everything else without SACK, the resend is a tail-loss probe;
//! - backed-off timeouts: a silence holding k timeouts, the RTO doubling after each, where
//!   the sender lost at least k packets meanwhile ([`DataVerdict::unseen`]; counted by the
//!   analysis once the capture's own timeouts have given the RTO).

use serde::Serialize;

use crate::flight::FirstFlight;

/// Shortest probe timeout of Linux's TLP (two 1 ms jiffies), nanoseconds.
pub const TLP_MIN_NS: u64 = 2_000_000;
/// Largest step of a sender's IP identification read as packets the capture missed; a larger
/// one (a reordered packet, the SYN-ACK's zero) says nothing.
const MAX_ID_STEP: u16 = 4096;
/// Payload above this in one frame: a TSO/GRO aggregate of segments that took an IP
/// identification each, so the counter no longer counts frames (Ethernet's 1500-byte MTU).
const MAX_SEGMENT_PAYLOAD: u32 = 1460;

/// Why a segment was sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// A retransmission timeout.
    Rto,
    /// Fast retransmit / SACK recovery.
    Fast,
    /// A tail-loss probe.
    Tlp,
}

/// What a data segment was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataVerdict {
    /// Sequence number of its first byte, from the first byte the capture saw (64-bit;
    /// negative for bytes sent before it, when what came first was lost before the capture).
    pub rel_seq: i64,
    /// Bytes beyond everything seen before (what the receiver gets for the first time).
    pub new_bytes: u64,
    /// Why it was resent, if it was; a timeout of an unseen tail has `Some(Rto)` too.
    pub retx: Option<Cause>,
    /// It started a timeout episode (counted once per timeout).
    pub rto_event: bool,
    /// With a timeout: the silence it ended, nanoseconds (from the previous data segment,
    /// or from the request when a whole answer was lost).
    pub silence_ns: u64,
    /// Packets the sender sent since the previous data segment that the capture did not see
    /// (0 when its IP identifications do not count packets).
    pub unseen: u32,
    /// It is the first data after the peer sent data: a response to a request.
    pub response_start: bool,
}

/// What one direction of a flow carried: counted while the capture is read and reported per
/// flow as is (`analysis::FlowRow` flattens it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FlowCounts {
    /// Packets carrying payload.
    pub data_packets: u64,
    /// Payload bytes, resends included.
    pub bytes: u64,
    /// Payload bytes seen for the first time.
    pub unique_bytes: u64,
    /// Fast retransmissions.
    pub retx_fast: u64,
    /// Segments resent after a timeout.
    pub retx_rto: u64,
    /// Tail-loss probes.
    pub retx_tlp: u64,
    /// Timeouts.
    pub rtos: u64,
    /// Of them, backed-off timeouts inside a longer silence (see [`DataVerdict::unseen`]).
    pub rtos_backed_off: u64,
    /// Longest gap between two data segments, nanoseconds.
    pub max_gap_ns: u64,
    /// Packets marked CE.
    pub ce: u64,
    /// Data packets ECN-capable (ECT or CE).
    pub ect: u64,
    /// Data packets with the CWR flag: the sender says it reduced its window on an echo
    /// (RFC 3168).
    pub cwr: u64,
    /// The peer's packets with the ECE flag: echoes of congestion experienced.
    pub echoes: u64,
}

/// One direction of a connection.
#[derive(Debug, Clone)]
pub struct Direction {
    /// IPv4 source, destination, ports.
    pub src: u32,
    /// Destination address.
    pub dst: u32,
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// The other direction, if seen.
    pub reverse: Option<u32>,
    base: Option<u32>,
    /// Highest sequence sent plus one, from the first byte seen.
    pub snd_max: i64,
    last_data_ns: Option<u64>,
    /// Its first data segment's time.
    pub first_data_ns: Option<u64>,
    /// First and last packet times.
    pub first_ns: u64,
    /// Last packet time.
    pub last_ns: u64,
    /// Packets, and those with payload.
    pub packets: u64,
    /// What it carried, reported per flow as is.
    pub counts: FlowCounts,
    /// Packets with the ECE flag.
    pub ece: u64,
    /// What the peer last said: its ACK number, whether it was a duplicate or carried SACK,
    /// whether it sent data since our last data segment (and when it started to).
    peer_ack: Option<u32>,
    peer_dup: bool,
    peer_sack: bool,
    peer_data_since: bool,
    /// When the peer's latest request started.
    pub request_ns: Option<u64>,
    /// Resends below this follow a timeout.
    recover_until: i64,
    /// When the sender's retransmission timer last restarted, as far as the capture shows:
    /// the peer's cumulative ACK advanced, or the first unacknowledged segment was (re)sent.
    timer_from_ns: u64,
    /// When the peer's last packet came.
    peer_last_ns: u64,
    /// The block this direction's current response belongs to (analysis bookkeeping).
    pub block: Option<u32>,
    /// The IP identification of this direction's last packet, and its steps between nonzero
    /// identifications: how many, how many by exactly one (a per-connection counter steps by
    /// one per packet sent) and how many small enough to count missed packets.
    ip_id: Option<u16>,
    id_steps: u32,
    id_unit_steps: u32,
    id_small_steps: u32,
    /// A frame carried more than one segment: the identifications no longer count frames.
    aggregated: bool,
    /// Packets sent since the last data segment seen that the capture did not see.
    unseen: u32,
    /// The last packet's sequence and acknowledgment numbers and payload length.
    last_sig: (u32, u32, u32),
    /// When its SYN was seen (the handshake's round trip, with the peer's).
    pub syn_ns: Option<u64>,
    /// The first flight of its first response.
    pub flight: FirstFlight,
}

impl Direction {
    /// A direction first seen at `t`.
    pub fn new(src: u32, dst: u32, sport: u16, dport: u16, t: u64) -> Direction {
        Direction {
            src,
            dst,
            sport,
            dport,
            reverse: None,
            base: None,
            snd_max: 0,
            last_data_ns: None,
            first_data_ns: None,
            first_ns: t,
            last_ns: t,
            packets: 0,
            counts: FlowCounts::default(),
            ece: 0,
            peer_ack: None,
            peer_dup: false,
            peer_sack: false,
            peer_data_since: false,
            request_ns: None,
            recover_until: 0,
            timer_from_ns: t,
            peer_last_ns: 0,
            block: None,
            ip_id: None,
            id_steps: 0,
            id_unit_steps: 0,
            id_small_steps: 0,
            aggregated: false,
            unseen: 0,
            last_sig: (0, 0, 0),
            syn_ns: None,
            flight: FirstFlight::default(),
        }
    }

    /// The peer sent a segment at `t` acknowledging `ack` (with SACK blocks or not) and
    /// carrying `len` bytes.
    #[inline]
    pub fn on_peer(&mut self, t: u64, has_ack: bool, ack: u32, sack: bool, len: u32) {
        self.peer_last_ns = t;
        if has_ack {
            if self
                .peer_ack
                .is_none_or(|prev| (ack.wrapping_sub(prev) as i32) > 0)
            {
                self.timer_from_ns = t;
            }
            let dup = self.peer_ack == Some(ack) && len == 0;
            self.peer_dup = dup || sack;
            self.peer_sack = sack;
            self.peer_ack = Some(ack);
            if sack || self.base.is_some_and(|b| self.unwrap(b, ack) > 0) {
                self.flight.on_ack(t);
            }
        }
        if len > 0 && !self.peer_data_since {
            self.peer_data_since = true;
            self.request_ns = Some(t);
        }
    }

    /// Sequence number `seq` as a 64-bit offset from the first byte seen: the one nearest
    /// the highest byte sent (within 2^31 either way), so it unwraps past 2^32 and may be
    /// negative.
    /// Its last data segment's time.
    pub fn last_data_ns(&self) -> Option<u64> {
        self.last_data_ns
    }

    #[inline]
    fn unwrap(&self, base: u32, seq: u32) -> i64 {
        let snd_max_wire = base.wrapping_add(self.snd_max as u32);
        self.snd_max + seq.wrapping_sub(snd_max_wire) as i32 as i64
    }

    /// Count a packet of this direction at `t` (any packet: flags, ECN, its IP
    /// identification `ip_id`, its payload `len`).
    #[inline]
    pub fn on_packet(&mut self, t: u64, ce: bool, ece: bool, ip_id: u16, len: u32) {
        self.packets += 1;
        self.last_ns = t;
        self.counts.ce += u64::from(ce);
        self.ece += u64::from(ece);
        // Zero is no number: what a sender writes when it does not number its packets (RFC
        // 6864), and Linux's SYN-ACK, sent before the connection's counter exists.
        // A step of zero is a second copy of the same packet or a constant identification:
        // evidence neither way.
        match self.ip_id {
            Some(prev) if prev != 0 && ip_id != 0 && ip_id != prev => {
                let step = ip_id.wrapping_sub(prev);
                let small = (1..=MAX_ID_STEP).contains(&step);
                self.id_steps += 1;
                self.id_unit_steps += u32::from(step == 1);
                self.id_small_steps += u32::from(small);
                if small {
                    self.unseen += u32::from(step - 1);
                }
            }
            _ => {}
        }
        self.ip_id = Some(ip_id);
        self.aggregated |= len > MAX_SEGMENT_PAYLOAD;
    }

    /// Remember the sequence `seq`, acknowledgment `ack` and length `len` of the packet
    /// just counted, to know a second copy of it.
    #[inline]
    pub fn remember(&mut self, seq: u32, ack: u32, len: u32) {
        self.last_sig = (seq, ack, len);
    }

    /// Whether `s` is a second copy of this direction's last packet: the same IP
    /// identification, where they count packets (a sender that numbers its packets never
    /// reuses a number at once, not even for a retransmission; a constant one would make
    /// every duplicate ACK a copy), and the same sequence, acknowledgment and length.
    #[inline]
    pub fn is_copy(&self, s: &crate::decode::Segment) -> bool {
        self.ip_id == Some(s.ip_id)
            && self.last_sig == (s.seq, s.ack, s.len)
            && self.ids_count_packets()
    }

    /// Whether this direction's IP identifications count its packets: no frame was an
    /// aggregate, and most steps are by one (a capture that misses packets sees some larger;
    /// random identifications rarely step by one), or, over the first few steps, every step
    /// is small.
    #[inline]
    pub fn ids_count_packets(&self) -> bool {
        !self.aggregated
            && self.id_steps > 0
            && if self.id_steps >= 4 {
                2 * self.id_unit_steps >= self.id_steps
            } else {
                self.id_small_steps == self.id_steps
            }
    }

    /// A segment of `len > 0` payload bytes starting at `seq` at time `t`; `rto_gap_ns` is
    /// the idle gap that marks a timeout.
    #[inline]
    pub fn on_data(&mut self, t: u64, seq: u32, len: u32, rto_gap_ns: u64) -> DataVerdict {
        let base = *self.base.get_or_insert(seq);
        let rel_seq = self.unwrap(base, seq);
        let end = rel_seq + len as i64;
        let resent = rel_seq < self.snd_max;
        let gap = self.last_data_ns.map(|l| t.saturating_sub(l));
        let response_start = self.peer_data_since;
        let unseen = self.ids_count_packets().then_some(self.unseen);
        // The silence a timeout ended, if this segment ends one.
        // New bytes after a silence are a timeout's resend of what the capture missed, so
        // where the identifications count packets something must have been missed.
        let missed_some = unseen.is_none_or(|u| u > 0);
        // The first unacknowledged segment, resent a timeout after the timer last restarted,
        // even if other segments kept going meanwhile (recovery sending new data).
        let head = self
            .peer_ack
            .is_some_and(|a| self.unwrap(base, a) == rel_seq);
        let since_timer = t.saturating_sub(self.timer_from_ns);
        let timeout = match gap {
            Some(g) if g >= rto_gap_ns && (resent || (!self.peer_data_since && missed_some)) => {
                Some(g)
            }
            _ if resent
                && head
                && since_timer >= rto_gap_ns
                && t.saturating_sub(self.peer_last_ns) >= rto_gap_ns / 8 =>
            {
                Some(since_timer)
            }
            _ if response_start && unseen.is_some_and(|u| u > 0) => self
                .request_ns
                .map(|r| t.saturating_sub(r))
                .filter(|&s| s >= rto_gap_ns),
            _ => None,
        };
        let lone_tail_probe = timeout.is_some()
            && unseen == Some(1)
            && !resent
            && !self.peer_sack
            && self
                .peer_ack
                .is_some_and(|a| self.unwrap(base, a) >= self.snd_max);
        let mut rto_event = false;
        let retx = match (timeout, gap) {
            (Some(_), _) if lone_tail_probe => Some(Cause::Tlp),
            (Some(_), _) => {
                rto_event = true;
                self.counts.rtos += 1;
                self.recover_until = self.snd_max;
                Some(Cause::Rto)
            }
            _ if !resent => None,
            _ if rel_seq < self.recover_until => Some(Cause::Rto),
            _ if self.peer_dup => Some(Cause::Fast),
            (_, Some(g)) if end >= self.snd_max && g >= TLP_MIN_NS => Some(Cause::Tlp),
            _ => Some(Cause::Fast),
        };
        match retx {
            Some(Cause::Rto) => self.counts.retx_rto += 1,
            Some(Cause::Fast) => self.counts.retx_fast += 1,
            Some(Cause::Tlp) => self.counts.retx_tlp += 1,
            None => {}
        }
        if let Some(g) = gap {
            self.counts.max_gap_ns = self.counts.max_gap_ns.max(g);
        }
        let new_bytes = (end - self.snd_max).max(0) as u64;
        let ip_id = self.ip_id.unwrap_or(0);
        self.flight
            .on_data(t, ip_id, new_bytes > 0 && retx.is_none(), response_start);
        self.snd_max = self.snd_max.max(end);
        self.counts.unique_bytes += new_bytes;
        self.counts.bytes += len as u64;
        self.counts.data_packets += 1;
        self.last_data_ns = Some(t);
        self.first_data_ns.get_or_insert(t);
        self.peer_data_since = false;
        self.unseen = 0;
        if head {
            self.timer_from_ns = t;
        }
        DataVerdict {
            rel_seq,
            new_bytes,
            retx,
            rto_event,
            silence_ns: if rto_event { timeout.unwrap_or(0) } else { 0 },
            unseen: unseen.unwrap_or(0),
            response_start,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const RTO: u64 = 200 * MS;

    fn dir() -> Direction {
        Direction::new(1, 2, 9000, 40000, 0)
    }

    #[test]
    fn a_resend_after_an_idle_rtomin_is_a_timeout_and_one_just_short_is_not() {
        let mut d = dir();
        d.on_data(0, 1000, 1448, RTO);
        d.on_data(MS / 10, 2448, 1448, RTO);
        let v = d.on_data(MS / 10 + RTO - 1, 2448, 1448, RTO);
        assert_eq!(
            v.retx,
            Some(Cause::Tlp),
            "no dup ACK: a probe, not a timeout"
        );
        assert!(!v.rto_event);
        let v = d.on_data(MS / 10 + RTO - 1 + RTO, 2448, 1448, RTO);
        assert_eq!(v.retx, Some(Cause::Rto));
        assert!(v.rto_event);
        assert_eq!(
            (d.counts.rtos, d.counts.retx_rto, d.counts.retx_tlp),
            (1, 1, 1)
        );
    }

    #[test]
    fn an_unseen_tail_resent_after_a_timeout_counts_but_a_new_response_does_not() {
        let mut d = dir();
        d.on_data(0, 1, 1448, RTO);
        // The rest of the window was lost before the capture: the resend looks new.
        let v = d.on_data(RTO + MS, 1449, 1448, RTO);
        assert!(v.rto_event);
        assert_eq!(
            v.new_bytes, 1448,
            "the receiver gets these bytes for the first time"
        );
        // Next block: the peer asks, the answer comes after a long think time.
        d.on_peer(2 * RTO, true, 101, false, 100);
        let v = d.on_data(3 * RTO, 2897, 1448, RTO);
        assert!(!v.rto_event);
        assert!(v.response_start);
        assert_eq!(v.retx, None);
    }

    #[test]
    fn the_head_resent_an_rto_after_the_ack_last_advanced_is_a_timeout_amid_other_sends() {
        let mut d = dir();
        for i in 0..4u32 {
            d.on_data(u64::from(i) * 1000, 1 + 1448 * i, 1448, RTO);
        }
        d.on_peer(5000, true, 1449, false, 0);
        // Recovery keeps sending new segments every 50 ms: no silence of 160 ms.
        for k in 0..4u32 {
            let t = 5000 + u64::from(k + 1) * 50 * MS;
            let v = d.on_data(t, 1 + 1448 * (4 + k), 1448, RTO);
            assert_eq!(v.retx, None);
        }
        // A duplicate ACK, then the head at once: a fast retransmit, whatever the timer.
        d.on_peer(205 * MS, true, 1449, true, 0);
        let v = d.on_data(205 * MS + 10_000, 1449, 1448, RTO);
        assert_eq!(v.retx, Some(Cause::Fast));
        // The head again, 201 ms after that resend restarted the timer, no ACK since: an RTO.
        d.on_data(300 * MS, 1 + 1448 * 8, 1448, RTO);
        let v = d.on_data(406 * MS + 10_000, 1449, 1448, RTO);
        assert_eq!(v.retx, Some(Cause::Rto));
        assert!(v.rto_event);
        assert_eq!(v.silence_ns, 201 * MS);
    }

    #[test]
    fn a_resend_after_duplicate_acks_is_a_fast_retransmit() {
        let mut d = dir();
        for i in 0..5u32 {
            d.on_data(u64::from(i) * 1000, 1 + 1448 * i, 1448, RTO);
        }
        d.on_peer(6000, true, 1449, false, 0);
        d.on_peer(6100, true, 1449, true, 0);
        let v = d.on_data(7000, 1449, 1448, RTO);
        assert_eq!(v.retx, Some(Cause::Fast));
        assert_eq!(v.new_bytes, 0);
        assert_eq!(d.counts.unique_bytes, 5 * 1448);
    }

    #[test]
    fn a_segment_sent_before_the_first_one_seen_is_a_resend_not_4_gb() {
        let mut d = dir();
        d.on_data(0, 10_000, 1448, RTO);
        d.on_data(1000, 11_448, 1448, RTO);
        let v = d.on_data(2000, 10_000 - 1448, 1448, RTO);
        assert_eq!(v.rel_seq, -1448);
        assert_eq!(v.new_bytes, 0);
        assert!(v.retx.is_some());
        assert_eq!(d.counts.unique_bytes, 2 * 1448);
    }

    /// A direction whose packets are numbered by a per-connection IP identification: five
    /// segments of 1448 bytes from sequence 1, identifications 100 to 104, each acknowledged.
    fn numbered() -> Direction {
        let mut d = dir();
        for i in 0..5u32 {
            let t = u64::from(i) * 1000;
            d.on_packet(t, false, false, 100 + i as u16, 1448);
            d.on_data(t, 1 + 1448 * i, 1448, RTO);
            d.on_peer(t + 500, true, 1 + 1448 * (i + 1), false, 0);
        }
        d
    }

    #[test]
    fn an_answer_lost_whole_is_a_timeout_once_the_ip_identification_shows_it_was_sent() {
        let end = 1 + 5 * 1448;
        for (id, timeout) in [(110u16, true), (105, false)] {
            let mut d = numbered();
            d.on_peer(10 * MS, true, end, false, 24);
            // The first the capture sees of the answer comes a timeout after the request;
            // with 5 packets missing from the count it was sent and lost, without it the
            // server was slow.
            let t = 10 * MS + 220 * MS;
            d.on_packet(t, false, false, id, 24);
            let v = d.on_data(t, end, 24, RTO);
            assert!(v.response_start);
            assert_eq!(v.rto_event, timeout, "id {id}");
            if timeout {
                assert_eq!((v.silence_ns, v.unseen), (220 * MS, 5));
                assert_eq!(v.retx, Some(Cause::Rto));
            } else {
                assert_eq!(v.retx, None);
            }
        }
    }

    #[test]
    fn a_lone_lost_tail_resent_at_the_rto_is_a_probe_and_two_lost_are_a_timeout() {
        let end = 1 + 5 * 1448;
        for (id, sack, cause) in [
            (106u16, false, Cause::Tlp),
            (107, false, Cause::Rto),
            (106, true, Cause::Rto),
        ] {
            let mut d = numbered();
            if sack {
                d.on_peer(6000, true, end, true, 0);
            }
            // The tail (id 105) was lost; its resend comes after a silence of 208 ms.
            let t = 4000 + 208 * MS;
            d.on_packet(t, false, false, id, 288);
            let v = d.on_data(t, end, 288, RTO);
            assert_eq!(v.retx, Some(cause), "id {id}, sack {sack}");
            assert_eq!(v.rto_event, cause == Cause::Rto);
            assert_eq!(v.new_bytes, 288);
        }
    }

    #[test]
    fn identifications_that_do_not_count_packets_are_not_read() {
        // Zero throughout (the simulator, RFC 6864): nothing is known of what was missed.
        let mut d = dir();
        for i in 0..6u32 {
            d.on_packet(u64::from(i), false, false, 0, 1448);
        }
        assert!(!d.ids_count_packets());
        // Random identifications: steps seldom by one.
        let mut d = dir();
        for (i, id) in [1000u16, 40_000, 7, 22_222, 9_999, 31_000]
            .into_iter()
            .enumerate()
        {
            d.on_packet(i as u64, false, false, id, 1448);
        }
        assert!(!d.ids_count_packets());
        // Aggregates (GRO/TSO) take one identification per segment.
        let mut d = numbered();
        assert!(d.ids_count_packets());
        d.on_packet(9000, false, false, 105, 2896);
        assert!(!d.ids_count_packets());
    }

    #[test]
    fn sequence_numbers_unwrap_across_two_to_the_32() {
        let mut d = dir();
        let start = u32::MAX - 1000;
        d.on_data(0, start, 1448, RTO);
        let v = d.on_data(1, start.wrapping_add(1448), 1448, RTO);
        assert_eq!(v.rel_seq, 1448);
        assert_eq!(v.retx, None);
        assert_eq!(d.snd_max, 2896);
    }
}
