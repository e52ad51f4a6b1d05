//! The responder side of one RoCE queue pair (the receiver NIC's view of it): the PSN it
//! expects, ACKs coalesced every `roce.ack_every` packets (and at the end of every message),
//! NAKs for packets past a gap (go-back-N drops them; IRN's selective repeat keeps them and
//! SACKs each, up to its bitmap's reach, `roce.sack_bitmap` packets past the expected PSN),
//! and DCQCN's notification point: a CNP for a CE-marked packet, paced per queue pair.
//!
//! It never touches the clock or the network: [`Receiver::on_data`] takes a data packet and
//! returns what to send back.

use super::dcqcn::CnpPacer;
use crate::config::{RoceNack, RoceRecovery};
use crate::units::SimTime;

/// A control packet the receiver sends back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reply {
    /// Every PSN below this arrived.
    Ack(u32),
    /// The receiver expects `psn`; (selective repeat) it holds `sack`, or [`NO_SACK`].
    Nak { psn: u32, sack: u32 },
}

/// A NAK's `sack` when the packet that prompted it was dropped, past the bitmap.
pub(crate) const NO_SACK: u32 = u32::MAX;

/// What one data packet makes the receiver do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Answer {
    /// An ACK or a NAK to send.
    pub(crate) reply: Option<Reply>,
    /// Send a CNP.
    pub(crate) cnp: bool,
    /// Messages completed by this packet: indexes `from..to` of those posted.
    pub(crate) completed: (u32, u32),
}

/// Selective repeat's out-of-order PSNs, IRN's receive bitmap: a ring of `size` bits over the
/// PSNs `epsn..epsn + size`, PSN p at bit p mod size, so its memory is the bitmap's however
/// long the queue pair runs. A bit is set only for a PSN ahead of the expected one and cleared
/// as the expected PSN passes it, so a slot is free again before a PSN `size` later can use
/// it.
#[derive(Debug, Clone, Default)]
struct Ring {
    words: Vec<u64>,
    size: u32,
}

impl Ring {
    fn new(size: u32) -> Ring {
        Ring {
            words: vec![0; (size as usize).div_ceil(64)],
            size,
        }
    }

    #[inline]
    fn slot(&self, psn: u32) -> (usize, u32) {
        let i = psn % self.size;
        ((i / 64) as usize, i % 64)
    }

    #[inline]
    fn get(&self, psn: u32) -> bool {
        let (w, b) = self.slot(psn);
        self.words[w] >> b & 1 == 1
    }

    #[inline]
    fn set(&mut self, psn: u32, on: bool) {
        let (w, b) = self.slot(psn);
        if on {
            self.words[w] |= 1 << b;
        } else {
            self.words[w] &= !(1 << b);
        }
    }
}

/// One queue pair's receiving end.
#[derive(Debug, Clone)]
pub(crate) struct Receiver {
    /// The PSN expected next: every one below it arrived.
    epsn: u32,
    /// PSNs posted (one past the last).
    end: u32,
    /// One past the last PSN of each posted message, and how many messages have completed.
    ends: Vec<u32>,
    completed: u32,
    recovery: RoceRecovery,
    nack: RoceNack,
    /// Selective repeat: PSNs held out of order, within the bitmap's reach.
    got: Ring,
    /// In-order packets since the last ACK, and the ACK interval.
    since_ack: u32,
    ack_every: u32,
    /// Go-back-N with one NAK per gap: a NAK for `epsn` is outstanding.
    nak_sent: bool,
    pacer: CnpPacer,
    /// Counters: NAKs and CNPs sent, packets discarded (duplicates, or past a gap under
    /// go-back-N).
    naks: u32,
    cnps: u32,
    discarded: u32,
}

impl Receiver {
    /// A queue pair expecting PSN 0, with its ACK, NAK and CNP policies; under selective
    /// repeat a bitmap of `bitmap` packets (at least 1).
    pub(crate) fn new(
        recovery: RoceRecovery,
        nack: RoceNack,
        ack_every: u32,
        cnp_interval: SimTime,
        bitmap: u32,
    ) -> Receiver {
        Receiver {
            epsn: 0,
            end: 0,
            ends: Vec::new(),
            completed: 0,
            recovery,
            nack,
            got: match recovery {
                RoceRecovery::SelectiveRepeat => Ring::new(bitmap.max(1)),
                RoceRecovery::GoBackN => Ring::default(),
            },
            since_ack: 0,
            ack_every: ack_every.max(1),
            nak_sent: false,
            pacer: CnpPacer::new(cnp_interval),
            naks: 0,
            cnps: 0,
            discarded: 0,
        }
    }

    /// A message of `packets` packets was posted after the others.
    pub(crate) fn post(&mut self, packets: u32) {
        self.end += packets;
        self.ends.push(self.end);
    }

    /// Data packet `psn` arrived at `now`, CE-marked or not.
    pub(crate) fn on_data(&mut self, now: SimTime, psn: u32, ce: bool) -> Answer {
        let mut a = Answer::default();
        if ce && self.pacer.on_ce(now) {
            self.cnps += 1;
            a.cnp = true;
        }
        let before = self.completed;
        if psn == self.epsn {
            self.epsn += 1;
            self.nak_sent = false;
            if self.recovery == RoceRecovery::SelectiveRepeat {
                while self.epsn < self.end && self.got.get(self.epsn) {
                    self.got.set(self.epsn, false);
                    self.epsn += 1;
                }
            }
            self.since_ack += 1;
            while self
                .ends
                .get(self.completed as usize)
                .is_some_and(|&e| e <= self.epsn)
            {
                self.completed += 1;
            }
            // Coalesced, but the end of a message is always acknowledged.
            if self.since_ack >= self.ack_every || self.completed > before {
                self.since_ack = 0;
                a.reply = Some(Reply::Ack(self.epsn));
            }
        } else if psn < self.epsn {
            // A duplicate (its ACK may have been lost): acknowledge again.
            self.discarded += 1;
            a.reply = Some(Reply::Ack(self.epsn));
        } else {
            a.reply = self.out_of_order(psn);
        }
        a.completed = (before, self.completed);
        a
    }

    /// Packet `psn` past the expected one.
    fn out_of_order(&mut self, psn: u32) -> Option<Reply> {
        let nak = Reply::Nak {
            psn: self.epsn,
            sack: psn,
        };
        match self.recovery {
            // IRN: keep it and SACK it, every time; past the bitmap's reach there is nowhere
            // to keep it: dropped, and NAKed with the expected PSN and no SACK ([`NO_SACK`],
            // past every PSN posted, which a sender ignores), so the sender learns of the
            // hole without taking the dropped packet for delivered.
            RoceRecovery::SelectiveRepeat => {
                self.naks += 1;
                if psn - self.epsn >= self.got.size {
                    self.discarded += 1;
                    return Some(Reply::Nak {
                        psn: self.epsn,
                        sack: NO_SACK,
                    });
                }
                if psn < self.end {
                    self.got.set(psn, true);
                }
                Some(nak)
            }
            RoceRecovery::GoBackN => {
                self.discarded += 1;
                let send = match self.nack {
                    RoceNack::Off => false,
                    RoceNack::Every => true,
                    RoceNack::Once => !self.nak_sent,
                };
                self.nak_sent |= send;
                self.naks += u32::from(send);
                send.then_some(nak)
            }
        }
    }

    /// Whether PSN `psn` is the first and whether the last packet of its message (of those
    /// posted; past them, a message of its own).
    pub(crate) fn edges(&self, psn: u32) -> (bool, bool) {
        let i = self.ends.partition_point(|&e| e <= psn);
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        (psn == start, self.ends.get(i).is_none_or(|&e| psn + 1 == e))
    }

    /// Every PSN below this arrived.
    pub(crate) fn epsn(&self) -> u32 {
        self.epsn
    }

    /// NAKs and CNPs sent, packets discarded.
    pub(crate) fn counts(&self) -> (u32, u32, u32) {
        (self.naks, self.cnps, self.discarded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rx(recovery: RoceRecovery, nack: RoceNack, ack_every: u32) -> Receiver {
        let mut r = Receiver::new(recovery, nack, ack_every, 50, 128);
        r.post(4);
        r.post(3);
        r
    }

    #[test]
    fn acks_are_coalesced_and_the_last_packet_of_a_message_is_always_acked() {
        let mut r = rx(RoceRecovery::GoBackN, RoceNack::Once, 3);
        let replies: Vec<_> = (0..7).map(|p| r.on_data(0, p, false).reply).collect();
        use Reply::Ack;
        // Every third in order, and PSN 3 (end of the first message) and 6 (of the second).
        assert_eq!(
            replies,
            [
                None,
                None,
                Some(Ack(3)),
                Some(Ack(4)),
                None,
                None,
                Some(Ack(7))
            ]
        );
    }

    #[test]
    fn go_back_n_drops_past_a_gap_and_naks_once_until_the_gap_fills() {
        let mut r = rx(RoceRecovery::GoBackN, RoceNack::Once, 1);
        r.on_data(0, 0, false);
        let nak = Reply::Nak { psn: 1, sack: 2 };
        assert_eq!(r.on_data(1, 2, false).reply, Some(nak));
        assert_eq!(r.on_data(2, 3, false).reply, None);
        assert_eq!(r.on_data(3, 1, false).reply, Some(Reply::Ack(2)));
        // 2 and 3 were dropped: expected again, and a new gap NAKs again.
        assert_eq!(r.epsn(), 2);
        assert_eq!(
            r.on_data(4, 3, false).reply,
            Some(Reply::Nak { psn: 2, sack: 3 })
        );
        assert_eq!(r.counts(), (2, 0, 3));
        let mut every = rx(RoceRecovery::GoBackN, RoceNack::Every, 1);
        every.on_data(0, 1, false);
        assert!(every.on_data(0, 2, false).reply.is_some());
        let mut off = rx(RoceRecovery::GoBackN, RoceNack::Off, 1);
        assert_eq!(off.on_data(0, 1, false).reply, None);
    }

    #[test]
    fn selective_repeat_keeps_out_of_order_packets_and_completes_messages_on_the_fill() {
        let mut r = rx(RoceRecovery::SelectiveRepeat, RoceNack::Once, 1);
        for p in [0, 2, 3, 4, 5] {
            r.on_data(0, p, false);
        }
        assert_eq!(r.epsn(), 1);
        let a = r.on_data(1, 1, false);
        assert_eq!(a.reply, Some(Reply::Ack(6)));
        assert_eq!(a.completed, (0, 1));
        assert_eq!(r.on_data(2, 6, false).completed, (1, 2));
        // A duplicate is acknowledged again.
        assert_eq!(r.on_data(3, 2, false).reply, Some(Reply::Ack(7)));
    }

    #[test]
    fn each_psn_knows_whether_it_starts_or_ends_its_message() {
        // Messages of 4, 1 and 3 packets: PSNs 0..4, 4, 5..8.
        let mut r = rx(RoceRecovery::GoBackN, RoceNack::Once, 1);
        r.post(1);
        r.ends.swap(1, 2);
        r.ends[1] = 5;
        r.ends[2] = 8;
        let edges: Vec<_> = (0..9).map(|p| r.edges(p)).collect();
        let (t, f) = (true, false);
        assert_eq!(
            edges,
            [
                (t, f),
                (f, f),
                (f, f),
                (f, t),
                (t, t),
                (t, f),
                (f, f),
                (f, t),
                (t, t)
            ]
        );
    }

    #[test]
    fn cnps_are_paced_one_per_interval_per_queue_pair() {
        let mut r = rx(RoceRecovery::GoBackN, RoceNack::Once, 1);
        assert!(r.on_data(1000, 0, true).cnp);
        assert!(!r.on_data(1049, 1, true).cnp, "interval − 1");
        assert!(!r.on_data(1049, 2, false).cnp, "unmarked");
        assert!(r.on_data(1050, 3, true).cnp, "interval");
        assert_eq!(r.counts().1, 2);
    }

    #[test]
    fn selective_repeat_keeps_up_to_its_bitmap_and_drops_and_naks_past_it() {
        // A bitmap of 4: with PSN 0 expected, PSNs 1..=3 are within reach (0 + 4 − 1 = 3),
        // PSN 4 (0 + 4) is not.
        let mut r = Receiver::new(RoceRecovery::SelectiveRepeat, RoceNack::Once, 1, 50, 4);
        r.post(100);
        let sack = |p| Some(Reply::Nak { psn: 0, sack: p });
        assert_eq!(r.on_data(0, 3, false).reply, sack(3), "end − 1: kept");
        assert_eq!(
            r.on_data(0, 4, false).reply,
            sack(NO_SACK),
            "end: dropped, NAKed without a SACK"
        );
        assert_eq!(r.counts(), (2, 0, 1));
        // The hole fills: 0 delivers up to 1, then 1 and 2 carry it past the kept 3.
        assert_eq!(r.on_data(1, 0, false).reply, Some(Reply::Ack(1)));
        r.on_data(1, 1, false);
        assert_eq!(r.on_data(2, 2, false).reply, Some(Reply::Ack(4)));
        // PSN 4 was dropped: it is expected now, and the window moved to 4..=7.
        assert_eq!(r.epsn(), 4);
        assert_eq!(
            r.on_data(3, 7, false).reply,
            Some(Reply::Nak { psn: 4, sack: 7 })
        );
        assert_eq!(
            r.on_data(3, 8, false).reply,
            Some(Reply::Nak {
                psn: 4,
                sack: NO_SACK
            })
        );
        // PSN 7 shares its ring slot with the earlier 3, cleared when the expected PSN passed
        // it: 4, 5, 6 carry the delivery through 7 and stop at 8.
        for p in 4..7 {
            r.on_data(4, p, false);
        }
        assert_eq!(r.epsn(), 8);
        // Whatever the queue pair's length, the bitmap is its one word.
        assert_eq!(r.got.words.len(), 1);
    }

    #[test]
    fn the_bitmap_reaches_over_several_words_and_its_last_bit() {
        let mut r = Receiver::new(RoceRecovery::SelectiveRepeat, RoceNack::Once, 1, 50, 128);
        r.post(1_000);
        assert_eq!(r.got.words.len(), 2);
        for p in [64, 127] {
            assert_eq!(
                r.on_data(0, p, false).reply,
                Some(Reply::Nak { psn: 0, sack: p })
            );
        }
        assert_eq!(
            r.on_data(0, 128, false).reply,
            Some(Reply::Nak {
                psn: 0,
                sack: NO_SACK
            })
        );
        for p in 0..127 {
            r.on_data(1, p, false);
        }
        assert_eq!(r.epsn(), 128, "127 was kept");
        // Go-back-N keeps no bitmap at all.
        let g = Receiver::new(RoceRecovery::GoBackN, RoceNack::Once, 1, 50, 128);
        assert!(g.got.words.is_empty());
    }
}
