//! A connection's first flight as the receiver sees it: the packets its sender sent before
//! any acknowledgment of the response could have reached it, which is the sender's initial
//! window (Chu et al., "Increasing TCP's Initial Window", RFC 6928, 2013) when the capture
//! shows the flight whole.
//!
//! A packet sent in answer to the receiver's first acknowledgment of the response cannot
//! arrive before that acknowledgment's time plus one round trip (the loop the request's
//! first answer, or the handshake, took; half of it is taken, as a first answer also waits
//! for the server). Every packet of the response that arrives earlier was in the first
//! flight. The count is the initial window only where the flight (two packets at least)
//! took less than half a round trip and a pause of at least half a round trip, and four
//! times the flight's own spacing, followed it (so nothing of a second flight was about to
//! join it), the response went on past it (else the response, not the window, ended the
//! flight), and, where the sender's IP identifications count its packets, none of its
//! packets is missing just after the flight (a lost tail would make the count short).
//! Elsewhere it is a lower bound: behind a slow NIC or a shared port, flights stretch past a
//! round trip.

use serde::Serialize;

/// Packets of a first flight kept to read it: more than any initial window in use (a
/// capture of 100,000 flows keeps at most 38 MB of them).
pub const MAX_FLIGHT_SEEN: usize = 48;

/// The first flight of a connection's first response, while the capture is read.
#[derive(Debug, Clone, Default)]
pub struct FirstFlight {
    /// When the response's first new segment arrived.
    start_ns: u64,
    /// Arrival times (from `start_ns`, saturating at 4.3 s) and IP identifications of the
    /// response's new segments, in order.
    seen: Vec<(u32, u16)>,
    /// When the receiver first acknowledged any of the response (cumulatively or by SACK).
    ack_ns: Option<u64>,
    /// A second response began, or enough was kept.
    closed: bool,
}

/// What a capture shows of one flow's first flight.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Flight {
    /// Packets of the first flight (counted by their IP identifications where those count
    /// packets, so packets lost inside it count too); 0: the capture does not show it.
    pub first_flight: u32,
    /// The flight was seen whole, so `first_flight` is the sender's initial window; else it
    /// is at most that.
    pub first_flight_whole: bool,
}

impl FirstFlight {
    /// A data segment at `t` with IP identification `ip_id`: `new` when it carries bytes
    /// never seen before, `response_start` when it begins an answer to a request.
    #[inline]
    pub fn on_data(&mut self, t: u64, ip_id: u16, new: bool, response_start: bool) {
        if self.closed {
            return;
        }
        if response_start && !self.seen.is_empty() {
            self.closed = true;
            return;
        }
        if new {
            if self.seen.is_empty() {
                self.start_ns = t;
            }
            let at = u32::try_from(t.saturating_sub(self.start_ns)).unwrap_or(u32::MAX);
            self.seen.push((at, ip_id));
            self.closed = self.seen.len() >= MAX_FLIGHT_SEEN;
        }
    }

    /// The receiver acknowledged some of the response at `t`.
    #[inline]
    pub fn on_ack(&mut self, t: u64) {
        if !self.seen.is_empty() {
            self.ack_ns.get_or_insert(t);
        }
    }

    /// The flight, given the shortest round trip the capture shows (`loop_ns`) and whether
    /// the sender's identifications count its packets.
    pub fn read(&self, loop_ns: u64, ids_count: bool) -> Flight {
        let (Some(ack_ns), Some(&(_, first_id))) = (self.ack_ns, self.seen.first()) else {
            return Flight::default();
        };
        if loop_ns == 0 {
            return Flight::default();
        }
        // Times are from the first segment's arrival. Half the loop: a round trip read from
        // a request's first answer includes the server's time, so an answer to an ACK may
        // come sooner than the whole loop.
        let boundary = ack_ns.saturating_sub(self.start_ns) + loop_ns / 2;
        let n = self
            .seen
            .iter()
            .take_while(|&&(t, _)| u64::from(t) < boundary)
            .count();
        let Some(&(last_t, last_id)) = n.checked_sub(1).and_then(|i| self.seen.get(i)) else {
            return Flight::default();
        };
        let last_t = u64::from(last_t);
        let after = self.seen.get(n);
        let packets = if ids_count {
            u32::from(last_id.wrapping_sub(first_id)) + 1
        } else {
            n as u32
        };
        // The flight's own pace (the widest spacing in it or in the next flight's first
        // two packets): a slow NIC spaces one flight wider than a round trip, and a pause that
        // is only one more such space is no end of a flight.
        let widest = |w: &[(u32, u16)]| {
            w.windows(2)
                .map(|p| u64::from(p[1].0.saturating_sub(p[0].0)))
                .max()
        };
        let pace = widest(&self.seen[..n])
            .into_iter()
            .chain(self.seen.get(n..n + 2).and_then(widest))
            .max()
            .unwrap_or(0)
            .max(1);
        let pause = after.map_or(0, |&(t, _)| u64::from(t).saturating_sub(last_t));
        // One packet alone says too little: a short header admitted into a port too full
        // for the data behind it looks like a flight of one.
        let quiet = n >= 2 && last_t <= loop_ns / 2 && pause >= (loop_ns / 2).max(4 * pace);
        let went_on = after.is_some_and(|&(_, id)| !ids_count || id == last_id.wrapping_add(1));
        Flight {
            first_flight: packets,
            first_flight_whole: quiet && went_on,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000;

    /// A response of `iw` packets 1 us apart at t = 0, its first ACK at 2 us, the next
    /// flight 100 us after that ACK; identifications from 100.
    fn flight(iw: u16, lost: &[u16]) -> FirstFlight {
        let mut f = FirstFlight::default();
        for i in 0..iw {
            if !lost.contains(&i) {
                f.on_data(u64::from(i) * US, 100 + i, true, i == 0);
            }
            if i == 0 {
                f.on_ack(2 * US);
            }
        }
        for i in 0..4 {
            f.on_data(102 * US + u64::from(i) * US, 100 + iw + i, true, false);
        }
        f
    }

    #[test]
    fn a_flight_ended_well_before_the_first_ack_returns_is_the_initial_window() {
        let f = flight(10, &[]).read(100 * US, true);
        assert_eq!(
            f,
            Flight {
                first_flight: 10,
                first_flight_whole: true
            }
        );
        let f = flight(4, &[]).read(100 * US, false);
        assert_eq!(
            f,
            Flight {
                first_flight: 4,
                first_flight_whole: true
            }
        );
    }

    #[test]
    fn packets_lost_inside_the_flight_count_where_identifications_count_packets() {
        let f = flight(10, &[3, 4]).read(100 * US, true);
        assert_eq!(
            f,
            Flight {
                first_flight: 10,
                first_flight_whole: true
            }
        );
        // Without identifications the count is what arrived.
        assert_eq!(flight(10, &[3, 4]).read(100 * US, false).first_flight, 8);
    }

    #[test]
    fn a_lost_tail_or_a_flight_as_long_as_the_round_trip_is_only_a_bound() {
        let f = flight(10, &[9]).read(100 * US, true);
        assert_eq!(
            f,
            Flight {
                first_flight: 9,
                first_flight_whole: false
            }
        );
        // Spread over most of the round trip: the second flight may already be in it.
        let f = flight(10, &[]).read(12 * US, true);
        assert!(!f.first_flight_whole);
    }

    #[test]
    fn a_response_that_ends_inside_its_flight_is_only_a_bound() {
        let mut f = FirstFlight::default();
        for i in 0..3 {
            f.on_data(i * US, 7 + i as u16, true, i == 0);
        }
        f.on_ack(2 * US);
        // The next response starts: the first is over.
        f.on_data(500 * US, 10, true, true);
        let r = f.read(100 * US, true);
        assert_eq!(
            r,
            Flight {
                first_flight: 3,
                first_flight_whole: false
            }
        );
    }

    #[test]
    fn a_flight_paced_wider_than_the_round_trip_is_only_a_bound() {
        // A 100 Mbps NIC: 120 us between packets, a 16 us round trip; the first packet is
        // acknowledged before the second leaves.
        let mut f = FirstFlight::default();
        for i in 0..10u16 {
            f.on_data(u64::from(i) * 120 * US, 40 + i, true, i == 0);
            if i == 0 {
                f.on_ack(2 * US);
            }
        }
        let r = f.read(16 * US, true);
        assert_eq!(
            r,
            Flight {
                first_flight: 1,
                first_flight_whole: false
            }
        );
    }

    #[test]
    fn nothing_acknowledged_or_no_round_trip_shows_nothing() {
        let mut f = FirstFlight::default();
        f.on_data(0, 1, true, true);
        assert_eq!(f.read(100 * US, true), Flight::default());
        f.on_ack(US);
        assert_eq!(f.read(0, true), Flight::default());
        // An ACK at the first segment's instant and a 1 ns loop leave no packet before the
        // boundary.
        let mut g = FirstFlight::default();
        g.on_data(5, 1, true, true);
        g.on_ack(5);
        assert_eq!(g.read(1, true), Flight::default());
    }
}
